//! `CORBA::Any`: a TypeCode and a value of that type.

use peregrine_cdr::{CdrError, Decode, Encode, Reader, Writer};

use crate::error::{DynError, Result};
use crate::interp::{decode_value, encode_value};
use crate::tc_cdr::{read_typecode, write_typecode};
use crate::typecode::TypeCode;
use crate::value::DynValue;

/// A self-describing value (`CORBA::Any`).
#[derive(Debug, Clone)]
pub struct Any {
    /// The type of `value`.
    pub tc: TypeCode,
    /// The value.
    pub value: DynValue,
}

/// An IDL type with a TypeCode known at compile time (generated types
/// implement it with a `static` TypeCode).
pub trait IdlType {
    /// The TypeCode of the type.
    fn type_code() -> TypeCode;
}

/// Insertion into an `Any` (`operator<<=` of the C++ mapping).
pub trait ToAny: IdlType {
    /// The value as a value tree.
    fn to_dyn(&self) -> DynValue;
}

/// Extraction from an `Any` (`operator>>=` of the C++ mapping).
pub trait FromAny: IdlType + Sized {
    /// The value, if `v` has the right shape.
    fn from_dyn(v: &DynValue) -> Option<Self>;
}

impl Any {
    /// An any holding `value` of type `tc` (not checked until encoded).
    pub fn new(tc: TypeCode, value: DynValue) -> Self {
        Self { tc, value }
    }

    /// An any holding `v`.
    pub fn insert<T: ToAny + ?Sized>(v: &T) -> Self {
        Self::new(T::type_code(), v.to_dyn())
    }

    /// The value as a `T`, if the any holds a `T` (TypeCodes compared
    /// with `equivalent`, so aliases of `T` extract too).
    pub fn get<T: FromAny>(&self) -> Option<T> {
        let want = T::type_code();
        if !(self.tc.ptr_eq(&want) || self.tc.equivalent(&want)) {
            return None;
        }
        T::from_dyn(&self.value)
    }

    /// Writes the TypeCode, then the value through the interpreter.
    pub fn encode_into(&self, w: &mut Writer) -> Result<()> {
        write_typecode(&self.tc, w)?;
        encode_value(&self.tc, &self.value, w)
    }

    /// Reads a TypeCode, then a value of that type.
    pub fn decode_from(r: &mut Reader<'_>) -> Result<Self> {
        let tc = read_typecode(r)?;
        let value = decode_value(&tc, r)?;
        Ok(Self { tc, value })
    }

    /// The value's CDR encoding in native order (what equality compares).
    fn value_bytes(&self) -> Option<Vec<u8>> {
        let mut w = Writer::new(peregrine_cdr::ByteOrder::NATIVE);
        encode_value(&self.tc, &self.value, &mut w).ok()?;
        Some(w.into_vec())
    }
}

/// Two anys are equal when their TypeCodes are `equal` and their values
/// encode to the same octets (so a packed image equals the same elements
/// given one by one); values that cannot be encoded compare structurally.
impl PartialEq for Any {
    fn eq(&self, other: &Self) -> bool {
        if !self.tc.equal(&other.tc) {
            return false;
        }
        match (self.value_bytes(), other.value_bytes()) {
            (Some(a), Some(b)) => a == b,
            _ => self.value == other.value,
        }
    }
}

/// CDR trait form for generated code; errors that are not CDR errors
/// (a malformed TypeCode, a value that does not fit) are reported as
/// `BadEncapsulation`; use [`Any::encode_into`] for the precise error.
impl Encode for Any {
    fn encode(&self, w: &mut Writer) -> peregrine_cdr::Result<()> {
        self.encode_into(w).map_err(to_cdr)
    }
}

impl<'de> Decode<'de> for Any {
    fn decode(r: &mut Reader<'de>) -> peregrine_cdr::Result<Self> {
        Self::decode_from(r).map_err(to_cdr)
    }
}

impl Encode for TypeCode {
    fn encode(&self, w: &mut Writer) -> peregrine_cdr::Result<()> {
        write_typecode(self, w).map_err(to_cdr)
    }
}

impl<'de> Decode<'de> for TypeCode {
    fn decode(r: &mut Reader<'de>) -> peregrine_cdr::Result<Self> {
        read_typecode(r).map_err(to_cdr)
    }
}

#[cold]
fn to_cdr(e: DynError) -> CdrError {
    match e {
        DynError::Cdr(e) => e,
        // A value the receiver has no type for keeps its OMG minor code
        // (MARSHAL minor 1) through the CDR error.
        DynError::Marshal { minor, .. }
            if minor == crate::error::minor::MARSHAL_NO_VALUE_FACTORY =>
        {
            CdrError::NoValueFactory
        }
        _ => CdrError::BadEncapsulation,
    }
}

macro_rules! prim_any {
    ($($t:ty, $tc:ident, $variant:ident;)*) => {$(
        impl IdlType for $t {
            fn type_code() -> TypeCode {
                TypeCode::$tc()
            }
        }
        impl ToAny for $t {
            fn to_dyn(&self) -> DynValue {
                DynValue::$variant(*self)
            }
        }
        impl FromAny for $t {
            fn from_dyn(v: &DynValue) -> Option<Self> {
                match v {
                    DynValue::$variant(x) => Some(*x),
                    _ => None,
                }
            }
        }
        impl From<$t> for Any {
            fn from(v: $t) -> Any {
                Any::insert(&v)
            }
        }
    )*};
}

prim_any! {
    i16, short, Short;
    i32, long, Long;
    u16, ushort, UShort;
    u32, ulong, ULong;
    i64, longlong, LongLong;
    u64, ulonglong, ULongLong;
    f32, float, Float;
    f64, double, Double;
    bool, boolean, Boolean;
    u8, octet, Octet;
    char, wchar, WChar;
}

impl IdlType for String {
    fn type_code() -> TypeCode {
        // One shared node for the unbounded string.
        static TC: std::sync::LazyLock<TypeCode> =
            std::sync::LazyLock::new(|| TypeCode::string_tc(0));
        TC.clone()
    }
}

impl ToAny for String {
    fn to_dyn(&self) -> DynValue {
        DynValue::String(self.clone())
    }
}

impl FromAny for String {
    fn from_dyn(v: &DynValue) -> Option<Self> {
        match v {
            DynValue::String(s) => Some(s.clone()),
            _ => None,
        }
    }
}

impl From<String> for Any {
    fn from(v: String) -> Any {
        Any::new(String::type_code(), DynValue::String(v))
    }
}

impl From<&str> for Any {
    fn from(v: &str) -> Any {
        Any::new(String::type_code(), DynValue::String(v.to_owned()))
    }
}

impl IdlType for TypeCode {
    fn type_code() -> TypeCode {
        TypeCode::tc_typecode()
    }
}

impl ToAny for TypeCode {
    fn to_dyn(&self) -> DynValue {
        DynValue::TypeCode(self.clone())
    }
}

impl FromAny for TypeCode {
    fn from_dyn(v: &DynValue) -> Option<Self> {
        match v {
            DynValue::TypeCode(t) => Some(t.clone()),
            _ => None,
        }
    }
}

impl From<TypeCode> for Any {
    fn from(v: TypeCode) -> Any {
        Any::insert(&v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_extract_primitives() {
        let a = Any::from(5i32);
        assert_eq!(a.get::<i32>(), Some(5));
        assert_eq!(a.get::<i16>(), None);
        let s = Any::from("hi");
        assert_eq!(s.get::<String>().as_deref(), Some("hi"));
        assert_eq!(Any::from(2.5f64).get::<f64>(), Some(2.5));
    }

    #[test]
    fn an_unknown_value_keeps_its_minor_code_through_the_cdr_trait() {
        use crate::typecode::ValueMember;
        use crate::valuetype::{ValueNode, VM_NONE};
        let vt = |id: &str| {
            TypeCode::value_tc(
                id,
                "V",
                VM_NONE,
                None,
                vec![ValueMember {
                    name: "x".into(),
                    tc: TypeCode::long(),
                    visibility: 1,
                }],
            )
        };
        // The TypeCode says one type, the value header another.
        let (said, sent) = (vt("IDL:Said:1.0"), vt("IDL:Sent:1.0"));
        let n = ValueNode::new(sent.clone(), vec![DynValue::Long(1)]).unwrap();
        let mut w = Writer::new(peregrine_cdr::ByteOrder::Big);
        write_typecode(&said, &mut w).unwrap();
        encode_value(&sent, &DynValue::Value(Some(n.into())), &mut w).unwrap();
        let bytes = w.into_vec();
        let mut r = Reader::new(&bytes, peregrine_cdr::ByteOrder::Big);
        assert_eq!(
            <Any as Decode>::decode(&mut r).unwrap_err(),
            CdrError::NoValueFactory
        );
    }

    #[test]
    fn alias_extracts_as_original() {
        let mut a = Any::from(7i32);
        a.tc = TypeCode::alias_tc("IDL:L:1.0", "L", TypeCode::long());
        assert_eq!(a.get::<i32>(), Some(7));
    }
}
