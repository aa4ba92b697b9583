//! The bridge between compiled (generated) marshaling code and the
//! dynamic layer, used by the `ToAny`/`FromAny` impls the IDL compiler
//! emits.
//!
//! Insertion encodes the value with its compiled `Encode` into a scratch
//! buffer and decodes that with the interpreter into a [`DynValue`];
//! extraction encodes the `DynValue` with the interpreter and decodes the
//! octets with the compiled `Decode`. Both directions therefore agree
//! with the compiled code on every rule it enforces (bounds, union
//! discriminators, wide strings, object references), the value tree gets
//! the interpreter's fast forms (typed vectors, packed plain-data
//! images), and the byte identity of compiled and interpreted marshaling
//! makes the round trip exact. The scratch streams use native
//! byte order, GIOP 1.2 and Peregrine's native code sets (UTF-8, UTF-16),
//! so no character is lost on the way.
//!
//! Generated valuetypes and value boxes `T` implement only `IdlType`;
//! the impls here make `ValueSlot<T>` and `ValueRef<T>` insertable and
//! `ValueSlot<T>` extractable. A whole graph goes through one stream each
//! way, so the indirections of the compiled writer become shared
//! [`crate::ValueNode`]s and those of the interpreter's writer shared
//! `ValueRef`s: sharing and cycles survive both directions.

use peregrine_cdr::{write_value, ByteOrder, Decode, Encode, Reader, ValueSlot, ValueType, Writer};

use crate::any::{Any, FromAny, IdlType, ToAny};
use crate::error::{mismatch, Result};
use crate::interp::{decode_value, encode_value};
use crate::typecode::TypeCode;
use crate::value::DynValue;

/// The value written by `enc` (compiled marshaling code), read back as a
/// value tree of type `tc`.
pub fn to_dyn_with(
    tc: &TypeCode,
    enc: impl FnOnce(&mut Writer) -> peregrine_cdr::Result<()>,
) -> Result<DynValue> {
    let mut w = Writer::new(ByteOrder::NATIVE);
    enc(&mut w)?;
    let bytes = w.into_vec();
    let mut r = Reader::new(&bytes, ByteOrder::NATIVE);
    let v = decode_value(tc, &mut r)?;
    if !r.is_empty() {
        return Err(mismatch(
            "compiled encoding longer than its TypeCode describes",
        ));
    }
    Ok(v)
}

/// The value tree `v` of type `tc` decoded by `dec` (compiled marshaling
/// code).
pub fn from_dyn_with<T>(
    tc: &TypeCode,
    v: &DynValue,
    dec: impl FnOnce(&mut Reader<'_>) -> peregrine_cdr::Result<T>,
) -> Result<T> {
    let mut w = Writer::new(ByteOrder::NATIVE);
    encode_value(tc, v, &mut w)?;
    let bytes = w.into_vec();
    let mut r = Reader::new(&bytes, ByteOrder::NATIVE);
    let out = dec(&mut r)?;
    if !r.is_empty() {
        return Err(mismatch("value longer than the compiled type reads"));
    }
    Ok(out)
}

/// `ToAny::to_dyn` for a generated type: its compiled encoding decoded
/// by the interpreter. A value the compiled code refuses to encode (a
/// bound exceeded, a union value whose discriminator would select another
/// branch) becomes [`DynValue::Null`], so the error surfaces when
/// the `Any` is marshaled.
pub fn to_dyn<T: Encode + IdlType + ?Sized>(v: &T) -> DynValue {
    to_dyn_with(&T::type_code(), |w| v.encode(w)).unwrap_or(DynValue::Null)
}

/// `FromAny::from_dyn` for a generated type: the value tree encoded by
/// the interpreter and decoded by the compiled `Decode`.
pub fn from_dyn<T: IdlType + for<'de> Decode<'de>>(v: &DynValue) -> Option<T> {
    from_dyn_with(&T::type_code(), v, |r| T::decode(r)).ok()
}

/// An `Any` of type `tc` holding the value `enc` writes (insertion of a
/// typedef'd or otherwise non-nominal type). A value the compiled code
/// refuses to encode gives a [`DynValue::Null`] value, as in [`to_dyn`].
pub fn any_with(tc: TypeCode, enc: impl FnOnce(&mut Writer) -> peregrine_cdr::Result<()>) -> Any {
    let value = to_dyn_with(&tc, enc).unwrap_or(DynValue::Null);
    Any::new(tc, value)
}

/// The value of `any` decoded by `dec`, if `any`'s TypeCode is
/// equivalent to `tc` (extraction of a typedef'd type, or of a type
/// whose decoding needs more than a reader, such as object references
/// bound to an ORB).
pub fn extract_with<T>(
    any: &Any,
    tc: &TypeCode,
    dec: impl FnOnce(&mut Reader<'_>) -> peregrine_cdr::Result<T>,
) -> Option<T> {
    if !(any.tc.ptr_eq(tc) || any.tc.equivalent(tc)) {
        return None;
    }
    from_dyn_with(&any.tc, &any.value, dec).ok()
}

/// Values of a generated valuetype or value box `T`: the slot's TypeCode
/// is `T`'s. The value graph goes through one compiled encoding, so
/// values shared inside it stay shared in the `Any` (one
/// [`crate::ValueNode`] each) and cycles stay cycles.
impl<T: ValueType + IdlType> IdlType for ValueSlot<T> {
    fn type_code() -> TypeCode {
        T::type_code()
    }
}

impl<T: ValueType + IdlType> ToAny for ValueSlot<T> {
    fn to_dyn(&self) -> DynValue {
        to_dyn(self)
    }
}

/// Extraction builds a new graph of `T`s with the sharing and cycles of
/// the `Any`'s value nodes (a value of a type derived from `T` comes out
/// as `T` when it is truncatable to it, otherwise not at all).
impl<T: ValueType + IdlType> FromAny for ValueSlot<T> {
    fn from_dyn(v: &DynValue) -> Option<Self> {
        from_dyn(v)
    }
}

impl<T: ValueType + IdlType> IdlType for peregrine_cdr::ValueRef<T> {
    fn type_code() -> TypeCode {
        T::type_code()
    }
}

impl<T: ValueType + IdlType> ToAny for peregrine_cdr::ValueRef<T> {
    fn to_dyn(&self) -> DynValue {
        to_dyn_with(&T::type_code(), |w| write_value(w, Some(self))).unwrap_or(DynValue::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Closures as blocks: a path such as `i32::decode` is not
    // higher-ranked over the reader's lifetime (clippy suggests it anyway).
    #[test]
    fn primitives_round_trip_through_cdr() {
        let v = to_dyn_with(&TypeCode::long(), |w| 7i32.encode(w)).unwrap();
        assert_eq!(v, DynValue::Long(7));
        let back: i32 = from_dyn_with(&TypeCode::long(), &v, |r| {
            let v = i32::decode(r)?;
            Ok(v)
        })
        .unwrap();
        assert_eq!(back, 7);
        let seq = TypeCode::sequence_tc(0, TypeCode::string_tc(0));
        let strings = vec!["a".to_string(), "bc".to_string()];
        let any = any_with(seq.clone(), |w| strings.encode(w));
        let back: Vec<String> = extract_with(&any, &seq, |r| {
            let v = Vec::<String>::decode(r)?;
            Ok(v)
        })
        .unwrap();
        assert_eq!(back, strings);
        assert!(extract_with(&any, &TypeCode::long(), |r| {
            let v = i32::decode(r)?;
            Ok(v)
        })
        .is_none());
    }

    #[test]
    fn length_mismatch_is_an_error() {
        let e = to_dyn_with(&TypeCode::short(), |w| 7i32.encode(w));
        assert!(e.is_err());
    }
}
