//! The interpretive marshaling engine: values encoded, decoded, skipped
//! and copied as their TypeCode says (SunSoft IIOP's `TypeCode::traverse`
//! and TAO's `do_static_call` engine, with the seeds' optimizations built
//! in rather than retrofitted):
//!
//! * sizes, alignments, plain-data images and element types come from the
//!   [`crate::Layout`] cached in each TypeCode, never recomputed per value
//!   or per element (seed 000 step 2);
//! * sequences and arrays of primitives are typed vectors moved with one
//!   copy (plus a swap pass for the other byte order), and plain-data
//!   structs as one native-order image: no per-element dispatch and no
//!   per-element "free" calls, since dropping a `Vec<f64>` is one
//!   deallocation (seed 000 step 2's no-op frees);
//! * encode and decode are separate small functions per shape rather
//!   than one visitor-driven `traverse` (steps 3-4), and error
//!   construction is `#[cold]` and out of line.

pub mod decode;
pub mod encode;
pub(crate) mod value;

use peregrine_cdr::{Reader, Writer};

use crate::error::Result;
use crate::typecode::TypeCode;
use crate::value::DynValue;

pub use decode::{decode_value, skip_value};
pub use encode::encode_value;

/// Copies a value of type `tc` from `r` to `w` (re-marshaling it, e.g.
/// into another byte order or GIOP version, as a bridge or DSI forwarder
/// does).
pub fn copy_value(tc: &TypeCode, r: &mut Reader<'_>, w: &mut Writer) -> Result<()> {
    let v = decode_value(tc, r)?;
    encode_value(tc, &v, w)
}

/// The integer key of a union discriminator value (see
/// `typecode::label_key`, which also checks the value's type).
#[inline]
pub(crate) fn disc_key(v: &DynValue) -> Option<i64> {
    Some(match v {
        DynValue::Short(x) => i64::from(*x),
        DynValue::Long(x) => i64::from(*x),
        DynValue::UShort(x) => i64::from(*x),
        DynValue::ULong(x) => i64::from(*x),
        DynValue::LongLong(x) => *x,
        DynValue::ULongLong(x) => *x as i64,
        DynValue::Boolean(x) => i64::from(*x),
        DynValue::Char(x) => i64::from(*x),
        DynValue::WChar(x) => i64::from(u32::from(*x)),
        DynValue::Enum(x) => i64::from(*x),
        _ => return None,
    })
}
