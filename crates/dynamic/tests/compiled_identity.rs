//! The key requirement: the interpreter produces exactly the
//! octets the compiled (generated-style) `Encode` produces, and decodes
//! compiled output back to the same value, in both byte orders and at
//! every starting alignment.

mod common;

use common::*;
use peregrine_cdr::{ByteOrder, Encode, FixedPoint, Reader, Writer};
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

/// `(compiled, value tree)` of a `fixed<D, S>` with unscaled value `v`.
fn fixed_pair<const D: u16, const S: u16>(v: i128) -> (FixedPoint<D, S>, DynValue) {
    let c = FixedPoint::<D, S>::from_unscaled(v).unwrap();
    (c, DynValue::Fixed(c.get()))
}

#[test]
fn fixed_errors() {
    use peregrine_cdr::{CdrError, Fixed};
    use peregrine_dynamic::DynError;
    let tc = TypeCode::fixed_tc(5, 2);
    // Bad sign half-octet: MARSHAL, like the compiled decoder.
    let mut r = Reader::new(&[0x12, 0x34, 0x5F], ByteOrder::Big);
    assert!(matches!(
        decode_value(&tc, &mut r),
        Err(DynError::Cdr(CdrError::InvalidFixed))
    ));
    // A value that does not fit fixed<5,2>: BAD_PARAM, nothing written.
    let mut w = Writer::new(ByteOrder::Big);
    for bad in ["1.234", "1000"] {
        let v = DynValue::Fixed(bad.parse::<Fixed>().unwrap());
        assert!(matches!(
            encode_value(&tc, &v, &mut w),
            Err(DynError::Cdr(CdrError::FixedOutOfRange {
                digits: 5,
                scale: 2
            }))
        ));
    }
    // A value with other digits/scale that fits is converted exactly.
    let v = DynValue::Fixed("1.5".parse::<Fixed>().unwrap());
    encode_value(&tc, &v, &mut w).unwrap();
    assert_eq!(w.into_vec(), [0x00, 0x15, 0x0C]);
}

proptest! {
    #[test]
    fn fixed_identical(
        a in -99_999i128..100_000,
        b in -(10i128.pow(31) - 1)..10i128.pow(31),
        c in prop::collection::vec(-9_999i128..10_000, 0..6),
        prefix_byte in any::<u8>(),
    ) {
        let (ca, da) = fixed_pair::<5, 2>(a);
        check(&TypeCode::fixed_tc(5, 2), &ca, &da, &da);
        let (cb, db) = fixed_pair::<31, 31>(b);
        check(&TypeCode::fixed_tc(31, 31), &cb, &db, &db);
        // A struct { octet; fixed<4,0>; sequence<fixed<4,1>> } (no
        // alignment around the fixed members).
        let (cc, dc) = fixed_pair::<4, 0>(c.first().copied().unwrap_or(0));
        let seq: Vec<(FixedPoint<4, 1>, DynValue)> = c.iter().map(|&v| fixed_pair(v)).collect();
        let compiled = (prefix_byte, cc, seq.iter().map(|p| p.0).collect::<Vec<_>>());
        let tc = TypeCode::struct_tc(
            "IDL:T/FixedHolder:1.0",
            "FixedHolder",
            [
                ("o", TypeCode::octet()),
                ("f", TypeCode::fixed_tc(4, 0)),
                ("s", TypeCode::sequence_tc(0, TypeCode::fixed_tc(4, 1))),
            ],
        );
        let d = DynValue::Struct(vec![
            DynValue::Octet(prefix_byte),
            dc,
            DynValue::Sequence(seq.into_iter().map(|p| p.1).collect()),
        ]);
        struct Holder(u8, FixedPoint<4, 0>, Vec<FixedPoint<4, 1>>);
        impl Encode for Holder {
            fn encode(&self, w: &mut Writer) -> peregrine_cdr::Result<()> {
                self.0.encode(w)?;
                self.1.encode(w)?;
                self.2.encode(w)
            }
        }
        check(&tc, &Holder(compiled.0, compiled.1, compiled.2), &d, &d);
    }

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
