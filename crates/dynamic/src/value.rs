//! `DynValue`: a value of a type known only at run time, as a tree.
//!
//! Sequences and arrays of primitives have typed representations
//! (`Doubles(Vec<f64>)`...) so the interpreter moves them in one bulk copy
//! with no per-element dispatch, and sequences/arrays of plain-data
//! structs travel as a native-order byte image ([`Packed`]). Decoding
//! always produces these fast forms; encoding accepts them and the
//! generic element-by-element form alike.

use crate::any::Any;
use crate::typecode::TypeCode;

/// A value described by a TypeCode.
#[derive(Debug, Clone, PartialEq)]
pub enum DynValue {
    /// A value of `null` or `void`.
    Null,
    /// `short`
    Short(i16),
    /// `long`
    Long(i32),
    /// `unsigned short`
    UShort(u16),
    /// `unsigned long`
    ULong(u32),
    /// `long long`
    LongLong(i64),
    /// `unsigned long long`
    ULongLong(u64),
    /// `float`
    Float(f32),
    /// `double`
    Double(f64),
    /// `long double`, as its 16 IEEE quad bytes, most significant first.
    LongDouble([u8; 16]),
    /// `boolean`
    Boolean(bool),
    /// `char` (one octet of the transmission code set)
    Char(u8),
    /// `wchar`
    WChar(char),
    /// `octet`
    Octet(u8),
    /// `string`
    String(String),
    /// `wstring`
    WString(String),
    /// `struct` or `exception`: the members in order.
    Struct(Vec<DynValue>),
    /// `union`: the discriminator and the selected branch's value
    /// ([`DynValue::Null`] when no branch is selected).
    Union {
        /// Discriminator value.
        disc: Box<DynValue>,
        /// Branch value.
        value: Box<DynValue>,
    },
    /// `enum`: the enumerator's index.
    Enum(u32),
    /// A sequence, element by element.
    Sequence(Vec<DynValue>),
    /// An array, element by element.
    Array(Vec<DynValue>),
    /// Sequence or array of `short`.
    Shorts(Vec<i16>),
    /// Sequence or array of `long`.
    Longs(Vec<i32>),
    /// Sequence or array of `unsigned short`.
    UShorts(Vec<u16>),
    /// Sequence or array of `unsigned long`.
    ULongs(Vec<u32>),
    /// Sequence or array of `long long`.
    LongLongs(Vec<i64>),
    /// Sequence or array of `unsigned long long`.
    ULongLongs(Vec<u64>),
    /// Sequence or array of `float`.
    Floats(Vec<f32>),
    /// Sequence or array of `double`.
    Doubles(Vec<f64>),
    /// Sequence or array of `boolean`.
    Booleans(Vec<bool>),
    /// Sequence or array of `char`.
    Chars(Vec<u8>),
    /// Sequence or array of `octet` (and a `Principal`).
    Octets(Vec<u8>),
    /// Sequence or array of plain-data structs as one byte image.
    Packed(Packed),
    /// `any`.
    Any(Box<Any>),
    /// `TypeCode`.
    TypeCode(TypeCode),
    /// Object reference (the nil reference is an IOR with no profiles).
    ObjRef(Box<peregrine_giop::Ior>),
    /// `fixed`: an exact decimal value. Decoding gives it the
    /// TypeCode's digits and scale; encoding converts it exactly to them
    /// (`1.5` encodes as `fixed<5,2>` `00 15 0C`) and fails with
    /// `BAD_PARAM` when it does not fit.
    Fixed(peregrine_cdr::Fixed),
    /// A valuetype or value box: null (`None`) or a reference to a
    /// shared node (see [`crate::valuetype`]). In an abstract interface
    /// slot, a value is this variant and an object reference is
    /// [`DynValue::ObjRef`].
    Value(Option<crate::valuetype::ValueLink>),
}

/// Elements of a plain-data struct type stored as their CDR image from
/// an aligned start, in native byte order, `stride` bytes apart, padding
/// zeroed (see [`crate::layout::Plain`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Packed {
    /// Number of elements.
    pub count: u32,
    /// `count * stride` bytes.
    pub bytes: Vec<u8>,
}

impl DynValue {
    /// The number of elements of a sequence or array value in any of its
    /// representations (`None` for other values).
    pub fn element_count(&self) -> Option<usize> {
        Some(match self {
            DynValue::Sequence(v) | DynValue::Array(v) => v.len(),
            DynValue::Shorts(v) => v.len(),
            DynValue::Longs(v) => v.len(),
            DynValue::UShorts(v) => v.len(),
            DynValue::ULongs(v) => v.len(),
            DynValue::LongLongs(v) => v.len(),
            DynValue::ULongLongs(v) => v.len(),
            DynValue::Floats(v) => v.len(),
            DynValue::Doubles(v) => v.len(),
            DynValue::Booleans(v) => v.len(),
            DynValue::Chars(v) | DynValue::Octets(v) => v.len(),
            DynValue::Packed(p) => p.count as usize,
            _ => return None,
        })
    }
}
