//! The key requirement: the interpreter produces exactly the
//! octets the compiled (generated-style) `Encode` produces, and decodes
//! compiled output back to the same value, in both byte orders and at
//! every starting alignment.

mod common;

use common::*;
use peregrine_cdr::{ByteOrder, Encode, Reader, Writer};
use peregrine_dynamic::{decode_value, encode_value, DynValue, TypeCode};
use proptest::prelude::*;

fn compiled<T: Encode + ?Sized>(v: &T, order: ByteOrder, prefix: usize) -> Vec<u8> {
    let mut w = Writer::new(order);
    w.write_bytes(&vec![0xAA; prefix]);
    v.encode(&mut w).unwrap();
    w.into_vec()
}

fn interpreted(tc: &TypeCode, v: &DynValue, order: ByteOrder, prefix: usize) -> Vec<u8> {
    let mut w = Writer::new(order);
    w.write_bytes(&vec![0xAA; prefix]);
    encode_value(tc, v, &mut w).unwrap();
    w.into_vec()
}

fn decoded(tc: &TypeCode, bytes: &[u8], order: ByteOrder, prefix: usize) -> DynValue {
    let mut r = Reader::new(bytes, order);
    r.read_bytes(prefix).unwrap();
    let v = decode_value(tc, &mut r).unwrap();
    assert!(r.is_empty());
    v
}

/// Checks both directions for one value at every prefix 0..8, both orders.
fn check<T: Encode + ?Sized>(
    tc: &TypeCode,
    compiled_v: &T,
    dyn_v: &DynValue,
    canonical: &DynValue,
) {
    for order in [ByteOrder::Big, ByteOrder::Little] {
        for prefix in 0..8 {
            let c = compiled(compiled_v, order, prefix);
            let i = interpreted(tc, dyn_v, order, prefix);
            assert_eq!(c, i, "{order:?} prefix {prefix}");
            assert_eq!(&decoded(tc, &c, order, prefix), canonical);
        }
    }
}

fn text() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 éß]{0,40}"
}

fn binstruct() -> impl Strategy<Value = BinStruct> {
    (
        any::<i16>(),
        any::<u8>(),
        any::<i32>(),
        any::<u8>(),
        -1e9..1e9f64,
        any::<[u8; 8]>(),
    )
        .prop_map(|(s, c, l, o, d, pad)| BinStruct { s, c, l, o, d, pad })
}

fn fixed_struct() -> impl Strategy<Value = FixedStruct> {
    (
        any::<i32>(),
        any::<u8>(),
        any::<i16>(),
        any::<u8>(),
        -1e6..1e6f32,
        any::<bool>(),
        -1e9..1e9f64,
    )
        .prop_map(|(l, c, s, o, f, b, d)| FixedStruct {
            l,
            c,
            s,
            o,
            f,
            b,
            d,
        })
}

fn var_struct() -> impl Strategy<Value = VarStruct> {
    (
        -1e9..1e9f64,
        text(),
        any::<bool>(),
        text(),
        any::<i16>(),
        prop::collection::vec(text(), 0..10),
    )
        .prop_map(|(dbl, dummy1, boole, dummy2, shrt, seq)| VarStruct {
            dbl,
            dummy1,
            boole,
            dummy2,
            shrt,
            seq,
        })
}

proptest! {
    #[test]
    fn short_and_string(s in any::<i16>(), t in text()) {
        check(&TypeCode::short(), &s, &DynValue::Short(s), &DynValue::Short(s));
        let d = DynValue::String(t.clone());
        check(&TypeCode::string_tc(0), &t, &d, &d);
    }

    #[test]
    fn fixed_struct_identical(v in fixed_struct()) {
        let d = fixed_dyn(&v);
        check(&fixed_struct_tc(), &v, &d, &d);
    }

    #[test]
    fn strseq_identical(v in prop::collection::vec(text(), 0..12)) {
        let d = strings_dyn(&v);
        check(&strseq_tc(), &v, &d, &d);
    }

    #[test]
    fn var_and_nested_struct_identical(v in var_struct()) {
        let d = var_dyn(&v);
        check(&var_struct_tc(), &v, &d, &d);
        let n = NestedStruct { vs: v };
        let d = nested_dyn(&n);
        check(&nested_struct_tc(), &n, &d, &d);
    }

    #[test]
    fn struct_seq_identical(v in prop::collection::vec(var_struct(), 0..10)) {
        let d = struct_seq_dyn(&v);
        check(&struct_seq_tc(), &v, &d, &d);
    }

    #[test]
    fn binstruct_seq_identical_packed_and_generic(v in prop::collection::vec(binstruct(), 0..20)) {
        let packed = binstructs_dyn(&v);
        check(&binstruct_seq_tc(), &v, &packed, &packed);
        check(&binstruct_seq_tc(), &v, &binstructs_generic(&v), &packed);
    }

    #[test]
    fn primitive_seqs_identical(d in prop::collection::vec(-1e9..1e9f64, 0..40),
                                l in prop::collection::vec(any::<i32>(), 0..40),
                                s in prop::collection::vec(any::<i16>(), 0..40),
                                o in prop::collection::vec(any::<u8>(), 0..40)) {
        check(&TypeCode::sequence_tc(0, TypeCode::double()), &d, &DynValue::Doubles(d.clone()), &DynValue::Doubles(d.clone()));
        check(&TypeCode::sequence_tc(0, TypeCode::long()), &l, &DynValue::Longs(l.clone()), &DynValue::Longs(l.clone()));
        check(&TypeCode::sequence_tc(0, TypeCode::short()), &s, &DynValue::Shorts(s.clone()), &DynValue::Shorts(s.clone()));
        check(&TypeCode::sequence_tc(0, TypeCode::octet()), &o, &DynValue::Octets(o.clone()), &DynValue::Octets(o.clone()));
        let generic = DynValue::Sequence(d.iter().map(|&x| DynValue::Double(x)).collect());
        check(&TypeCode::sequence_tc(0, TypeCode::double()), &d, &generic, &DynValue::Doubles(d.clone()));
    }
}

#[test]
fn binstruct_padding_is_zeroed_on_decode() {
    // A sender that leaves garbage in padding: the image must still
    // re-encode as compiled code does (zero padding).
    let v = vec![
        BinStruct {
            s: 1,
            c: 2,
            l: 3,
            o: 4,
            d: 5.0,
            pad: [6; 8]
        };
        3
    ];
    let mut bytes = compiled(&v, ByteOrder::Little, 0);
    // element 2 (aligned, at 8 + 32) byte 3 is padding
    bytes[8 + 32 + 3] = 0xEE;
    let tc = binstruct_seq_tc();
    let d = decoded(&tc, &bytes, ByteOrder::Little, 0);
    assert_eq!(d, binstructs_dyn(&v));
}
