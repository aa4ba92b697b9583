//! Property tests: every value decodes to what was encoded, in both byte
//! orders, at every starting alignment, for every GIOP version that can
//! carry it; and no byte string makes the reader panic.

use peregrine_cdr::{
    ByteOrder, CharCodeSet, CodeSets, Decode, Encode, GiopVersion, Reader, WcharCodeSet, Writer,
};
use proptest::prelude::*;

#[derive(Debug, Clone, PartialEq)]
enum Value {
    U8(u8),
    Bool(bool),
    I16(i16),
    U16(u16),
    I32(i32),
    U32(u32),
    I64(i64),
    U64(u64),
    F32(u32),
    F64(u64),
    LongDouble([u8; 16]),
    Str(String),
    WStr(String),
    WChar(char),
    ShortSeq(Vec<i16>),
    LongSeq(Vec<i32>),
    DoubleSeq(Vec<u64>),
    OctetSeq(Vec<u8>),
    StrSeq(Vec<String>),
    Encaps(bool, Vec<Value>),
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<u8>().prop_map(Value::U8),
        any::<bool>().prop_map(Value::Bool),
        any::<i16>().prop_map(Value::I16),
        any::<u16>().prop_map(Value::U16),
        any::<i32>().prop_map(Value::I32),
        any::<u32>().prop_map(Value::U32),
        any::<i64>().prop_map(Value::I64),
        any::<u64>().prop_map(Value::U64),
        any::<u32>().prop_map(Value::F32),
        any::<u64>().prop_map(Value::F64),
        any::<[u8; 16]>().prop_map(Value::LongDouble),
        "[^\u{0}]{0,20}".prop_map(Value::Str),
        "[^\u{0}]{0,20}".prop_map(Value::WStr),
        any::<char>()
            .prop_filter("BMP", |c| (*c as u32) < 0x10000)
            .prop_map(Value::WChar),
        prop::collection::vec(any::<i16>(), 0..40).prop_map(Value::ShortSeq),
        prop::collection::vec(any::<i32>(), 0..40).prop_map(Value::LongSeq),
        prop::collection::vec(any::<u64>(), 0..40).prop_map(Value::DoubleSeq),
        prop::collection::vec(any::<u8>(), 0..40).prop_map(Value::OctetSeq),
        prop::collection::vec("[a-z]{0,8}", 0..5).prop_map(Value::StrSeq),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 32, 6, |inner| {
        (any::<bool>(), prop::collection::vec(inner, 0..6))
            .prop_map(|(little, vs)| Value::Encaps(little, vs))
    })
}

fn write(w: &mut Writer, v: &Value) {
    match v {
        Value::U8(x) => w.write_u8(*x),
        Value::Bool(x) => w.write_bool(*x),
        Value::I16(x) => w.write_i16(*x),
        Value::U16(x) => w.write_u16(*x),
        Value::I32(x) => w.write_i32(*x),
        Value::U32(x) => w.write_u32(*x),
        Value::I64(x) => w.write_i64(*x),
        Value::U64(x) => w.write_u64(*x),
        Value::F32(x) => w.write_f32(f32::from_bits(*x)),
        Value::F64(x) => w.write_f64(f64::from_bits(*x)),
        Value::LongDouble(x) => w.write_long_double(*x),
        Value::Str(s) => w.write_string(s).unwrap(),
        Value::WStr(s) => w.write_wstring(s).unwrap(),
        Value::WChar(c) => w.write_wchar(*c).unwrap(),
        Value::ShortSeq(s) => s.encode(w).unwrap(),
        Value::LongSeq(s) => s.encode(w).unwrap(),
        Value::DoubleSeq(s) => {
            let d: Vec<f64> = s.iter().map(|b| f64::from_bits(*b)).collect();
            d.encode(w).unwrap()
        }
        Value::OctetSeq(s) => s.encode(w).unwrap(),
        Value::StrSeq(s) => s.encode(w).unwrap(),
        Value::Encaps(little, vs) => w
            .write_encapsulation_in(ByteOrder::from_flag(*little), |e| {
                vs.iter().for_each(|v| write(e, v));
                Ok(())
            })
            .unwrap(),
    }
}

fn read_check(r: &mut Reader<'_>, v: &Value) -> Result<(), TestCaseError> {
    match v {
        Value::U8(x) => prop_assert_eq!(r.read_u8().unwrap(), *x),
        Value::Bool(x) => prop_assert_eq!(r.read_bool().unwrap(), *x),
        Value::I16(x) => prop_assert_eq!(r.read_i16().unwrap(), *x),
        Value::U16(x) => prop_assert_eq!(r.read_u16().unwrap(), *x),
        Value::I32(x) => prop_assert_eq!(r.read_i32().unwrap(), *x),
        Value::U32(x) => prop_assert_eq!(r.read_u32().unwrap(), *x),
        Value::I64(x) => prop_assert_eq!(r.read_i64().unwrap(), *x),
        Value::U64(x) => prop_assert_eq!(r.read_u64().unwrap(), *x),
        Value::F32(x) => prop_assert_eq!(r.read_f32().unwrap().to_bits(), *x),
        Value::F64(x) => prop_assert_eq!(r.read_f64().unwrap().to_bits(), *x),
        Value::LongDouble(x) => prop_assert_eq!(r.read_long_double().unwrap(), *x),
        Value::Str(s) => prop_assert_eq!(&r.read_str().unwrap(), s),
        Value::WStr(s) => prop_assert_eq!(&r.read_wstring().unwrap(), s),
        Value::WChar(c) => prop_assert_eq!(r.read_wchar().unwrap(), *c),
        Value::ShortSeq(s) => prop_assert_eq!(&Vec::<i16>::decode(r).unwrap(), s),
        Value::LongSeq(s) => prop_assert_eq!(&Vec::<i32>::decode(r).unwrap(), s),
        Value::DoubleSeq(s) => {
            let d: Vec<u64> = Vec::<f64>::decode(r)
                .unwrap()
                .iter()
                .map(|x| x.to_bits())
                .collect();
            prop_assert_eq!(&d, s)
        }
        Value::OctetSeq(s) => prop_assert_eq!(<&[u8]>::decode(r).unwrap(), &s[..]),
        Value::StrSeq(s) => prop_assert_eq!(&Vec::<String>::decode(r).unwrap(), s),
        Value::Encaps(little, vs) => {
            let mut e = r.read_encapsulation().unwrap();
            prop_assert_eq!(e.order(), ByteOrder::from_flag(*little));
            for v in vs {
                read_check(&mut e, v)?;
            }
            prop_assert!(e.is_empty());
        }
    }
    Ok(())
}

fn codesets(latin1: bool) -> CodeSets {
    CodeSets {
        char: if latin1 {
            CharCodeSet::Latin1
        } else {
            CharCodeSet::Utf8
        },
        wchar: Some(WcharCodeSet::Utf16),
    }
}

fn latin1_safe(v: &Value) -> bool {
    match v {
        Value::Str(s) => s.chars().all(|c| (c as u32) < 256),
        Value::Encaps(_, vs) => vs.iter().all(latin1_safe),
        _ => true,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn round_trip(
        values in prop::collection::vec(value(), 0..12),
        little in any::<bool>(),
        offset in 0usize..16,
        v11 in any::<bool>(),
        latin1 in any::<bool>(),
    ) {
        let order = ByteOrder::from_flag(little);
        let version = if v11 { GiopVersion::V1_1 } else { GiopVersion::V1_2 };
        let latin1 = latin1 && values.iter().all(latin1_safe);
        let mut w = Writer::with_offset(order, offset);
        w.set_version(version);
        w.set_codesets(codesets(latin1));
        for v in &values {
            write(&mut w, v);
        }
        let bytes = w.into_vec();
        let mut r = Reader::with_offset(&bytes, order, offset);
        r.set_version(version);
        r.set_codesets(codesets(latin1));
        for v in &values {
            read_check(&mut r, v)?;
        }
        prop_assert!(r.is_empty());
    }

    /// Arbitrary bytes through every read: errors, never panics, and no
    /// sequence longer than the input.
    #[test]
    fn arbitrary_input_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..256), little in any::<bool>()) {
        let order = ByteOrder::from_flag(little);
        let mut r = Reader::new(&bytes, order);
        loop {
            let before = r.remaining();
            let ok = match bytes.len() % 7 {
                0 => r.read_str().map(|_| ()),
                1 => r.read_wstring().map(|_| ()),
                2 => Vec::<f64>::decode(&mut r).map(|v| assert!(v.len() * 8 <= before)),
                3 => Vec::<String>::decode(&mut r).map(|v| assert!(v.len() <= before)),
                4 => r.read_encapsulation().map(|_| ()),
                5 => r.read_wchar().map(|_| ()),
                _ => r.read_u64().map(|_| ()),
            };
            if ok.is_err() || r.remaining() == before { break; }
        }
    }
}

#[test]
fn truncation_at_every_byte_is_an_error() {
    let mut w = Writer::new(ByteOrder::Big);
    w.write_string("hello").unwrap();
    vec![1.0f64, 2.0].encode(&mut w).unwrap();
    w.write_wstring("wide").unwrap();
    let bytes = w.into_vec();
    for cut in 0..bytes.len() {
        let mut r = Reader::new(&bytes[..cut], ByteOrder::Big);
        let res = (|| {
            r.read_str()?;
            Vec::<f64>::decode(&mut r)?;
            r.read_wstring()
        })();
        assert!(res.is_err(), "cut at {cut} decoded");
    }
}
