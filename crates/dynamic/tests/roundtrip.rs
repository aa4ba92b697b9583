//! Property tests over random TypeCodes and random values of them:
//! TypeCode marshal round trip, value round trip in both byte orders,
//! skip consistency, and Any round trip.

use peregrine_cdr::{ByteOrder, Reader, Writer};
use peregrine_dynamic::{
    decode_value, encode_value, read_typecode, skip_value, write_typecode, Any, DynValue, Packed,
    TcKind, TypeCode, UnionMember,
};
use proptest::prelude::*;

fn leaf_tc() -> impl Strategy<Value = TypeCode> {
    prop_oneof![
        Just(TypeCode::short()),
        Just(TypeCode::long()),
        Just(TypeCode::ushort()),
        Just(TypeCode::ulong()),
        Just(TypeCode::longlong()),
        Just(TypeCode::ulonglong()),
        Just(TypeCode::float()),
        Just(TypeCode::double()),
        Just(TypeCode::boolean()),
        Just(TypeCode::char()),
        Just(TypeCode::octet()),
        Just(TypeCode::wchar()),
        Just(TypeCode::longdouble()),
        Just(TypeCode::any()),
        Just(TypeCode::tc_typecode()),
        (0u32..3).prop_map(|b| TypeCode::string_tc(b * 8)),
        Just(TypeCode::wstring_tc(0)),
        (1usize..4, any::<u16>()).prop_map(|(n, id)| TypeCode::enum_tc(
            format!("IDL:E{id}:1.0"),
            "E",
            (0..n).map(|i| format!("e{i}"))
        )),
        (1u16..12)
            .prop_flat_map(|d| (Just(d), 0..=d as i16))
            .prop_map(|(d, s)| TypeCode::fixed_tc(d, s)),
    ]
}

fn tc_strategy() -> impl Strategy<Value = TypeCode> {
    leaf_tc().prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            (prop::collection::vec(inner.clone(), 1..4), any::<u16>()).prop_map(|(ms, id)| {
                TypeCode::struct_tc(
                    format!("IDL:S{id}:1.0"),
                    format!("S{id}"),
                    ms.into_iter()
                        .enumerate()
                        .map(|(i, t)| (format!("m{i}"), t)),
                )
            }),
            (0u32..3, inner.clone()).prop_map(|(b, t)| TypeCode::sequence_tc(b * 3, t)),
            (1u32..4, inner.clone()).prop_map(|(n, t)| TypeCode::array_tc(n, t)),
            (inner.clone(), any::<u16>()).prop_map(|(t, id)| TypeCode::alias_tc(
                format!("IDL:A{id}:1.0"),
                "A",
                t
            )),
            (prop::collection::vec(inner, 1..4), any::<bool>(), 0..3u8).prop_map(
                |(ms, default, d)| {
                    let n = ms.len();
                    let disc = match d {
                        0 => TypeCode::long(),
                        1 => TypeCode::short(),
                        _ => TypeCode::ulonglong(),
                    };
                    let members = ms
                        .into_iter()
                        .enumerate()
                        .map(|(i, tc)| UnionMember {
                            label: if default && i == n - 1 {
                                None
                            } else {
                                Some(label(d, i as i64))
                            },
                            name: format!("b{i}"),
                            tc,
                        })
                        .collect();
                    TypeCode::union_tc("IDL:U:1.0", "U", disc, members).unwrap()
                }
            ),
        ]
    })
}

fn label(d: u8, i: i64) -> DynValue {
    match d {
        0 => DynValue::Long(i as i32),
        1 => DynValue::Short(i as i16),
        _ => DynValue::ULongLong(i as u64),
    }
}

fn vec_of(tc: &TypeCode, n: std::ops::Range<usize>) -> BoxedStrategy<Vec<DynValue>> {
    prop::collection::vec(value_of(tc), n).boxed()
}

/// Random values of `tc`, in the canonical (decoded) representation.
fn value_of(tc: &TypeCode) -> BoxedStrategy<DynValue> {
    let t = tc.unalias().unwrap();
    match t.kind() {
        TcKind::Short => any::<i16>().prop_map(DynValue::Short).boxed(),
        TcKind::Long => any::<i32>().prop_map(DynValue::Long).boxed(),
        TcKind::UShort => any::<u16>().prop_map(DynValue::UShort).boxed(),
        TcKind::ULong => any::<u32>().prop_map(DynValue::ULong).boxed(),
        TcKind::LongLong => any::<i64>().prop_map(DynValue::LongLong).boxed(),
        TcKind::ULongLong => any::<u64>().prop_map(DynValue::ULongLong).boxed(),
        TcKind::Float => (-1e6..1e6f32).prop_map(DynValue::Float).boxed(),
        TcKind::Double => (-1e9..1e9f64).prop_map(DynValue::Double).boxed(),
        TcKind::Boolean => any::<bool>().prop_map(DynValue::Boolean).boxed(),
        TcKind::Char => any::<u8>().prop_map(DynValue::Char).boxed(),
        TcKind::Octet => any::<u8>().prop_map(DynValue::Octet).boxed(),
        TcKind::WChar => prop::char::range('a', 'ž')
            .prop_map(DynValue::WChar)
            .boxed(),
        TcKind::LongDouble => any::<[u8; 16]>().prop_map(DynValue::LongDouble).boxed(),
        TcKind::Any => (any::<i32>(), "[a-z]{0,5}")
            .prop_map(|(x, s)| {
                let inner = if x % 2 == 0 {
                    Any::from(x)
                } else {
                    Any::from(s)
                };
                DynValue::Any(Box::new(inner))
            })
            .boxed(),
        TcKind::TypeCode => Just(DynValue::TypeCode(TypeCode::sequence_tc(
            0,
            TypeCode::long(),
        )))
        .boxed(),
        TcKind::String => {
            let b = t.length().unwrap();
            let max = if b == 0 { 12 } else { b };
            prop::string::string_regex(&format!("[a-z0-9]{{0,{max}}}"))
                .unwrap()
                .prop_map(DynValue::String)
                .boxed()
        }
        TcKind::WString => "[a-zA-Zäß€ ]{0,10}".prop_map(DynValue::WString).boxed(),
        TcKind::Enum => (0..t.member_count().unwrap())
            .prop_map(DynValue::Enum)
            .boxed(),
        TcKind::Fixed => {
            let d = t.fixed_digits().unwrap();
            let s = t.fixed_scale().unwrap() as u16;
            let lim = 10i128.pow(u32::from(d));
            (-(lim - 1)..lim)
                .prop_map(move |v| DynValue::Fixed(peregrine_cdr::Fixed::new(v, d, s).unwrap()))
                .boxed()
        }
        TcKind::Struct => {
            let ms: Vec<_> = (0..t.member_count().unwrap())
                .map(|i| value_of(&t.member_type(i).unwrap()))
                .collect();
            ms.prop_map(DynValue::Struct).boxed()
        }
        TcKind::Union => {
            let n = t.member_count().unwrap();
            let def = t.default_index().unwrap();
            let disc_kind = t.discriminator_type().unwrap().kind();
            let d = match disc_kind {
                TcKind::Long => 0,
                TcKind::Short => 1,
                _ => 2,
            };
            let branches: Vec<BoxedStrategy<DynValue>> = (0..n)
                .map(|i| {
                    let lbl = if i as i32 == def {
                        label(d, 100)
                    } else {
                        t.member_label(i).unwrap()
                    };
                    value_of(&t.member_type(i).unwrap())
                        .prop_map(move |v| DynValue::Union {
                            disc: Box::new(lbl.clone()),
                            value: Box::new(v),
                        })
                        .boxed()
                })
                .collect();
            let mut all = branches;
            if def < 0 {
                // A discriminator no label selects: no value.
                all.push(
                    Just(DynValue::Union {
                        disc: Box::new(label(d, 77)),
                        value: Box::new(DynValue::Null),
                    })
                    .boxed(),
                );
            }
            prop::strategy::Union::new(all).boxed()
        }
        TcKind::Sequence | TcKind::Array => {
            let seq = t.kind() == TcKind::Sequence;
            let len = t.length().unwrap() as usize;
            let range = if seq {
                0..if len == 0 { 5 } else { len + 1 }
            } else {
                len..len + 1
            };
            let elem = t.content_type().unwrap();
            let e2 = elem.clone();
            vec_of(&elem, range)
                .prop_map(move |xs| canonical_elems(&e2, xs, seq))
                .boxed()
        }
        k => panic!("no generator for {k}"),
    }
}

/// The decoder's representation of elements: typed vectors for
/// primitives, packed images for plain structs.
fn canonical_elems(elem: &TypeCode, xs: Vec<DynValue>, seq: bool) -> DynValue {
    macro_rules! typed {
        ($v:ident, $variant:ident) => {
            DynValue::$variant(
                xs.iter()
                    .map(|x| match x {
                        DynValue::$v(y) => *y,
                        _ => unreachable!(),
                    })
                    .collect(),
            )
        };
    }
    let e = elem.unalias().unwrap();
    match e.kind() {
        TcKind::Short => typed!(Short, Shorts),
        TcKind::Long => typed!(Long, Longs),
        TcKind::UShort => typed!(UShort, UShorts),
        TcKind::ULong => typed!(ULong, ULongs),
        TcKind::LongLong => typed!(LongLong, LongLongs),
        TcKind::ULongLong => typed!(ULongLong, ULongLongs),
        TcKind::Float => typed!(Float, Floats),
        TcKind::Double => typed!(Double, Doubles),
        TcKind::Boolean => typed!(Boolean, Booleans),
        TcKind::Char => typed!(Char, Chars),
        TcKind::Octet => typed!(Octet, Octets),
        _ => {
            if let Some(plain) = &e.layout().plain {
                let mut bytes = Vec::new();
                for x in &xs {
                    let mut leaves = Vec::new();
                    flatten(x, &e, &mut leaves);
                    let mut elem = vec![0u8; plain.stride as usize];
                    let mut it = leaves.into_iter();
                    for f in &plain.fields {
                        for j in 0..f.count as usize {
                            let b = it.next().unwrap();
                            assert_eq!(b.len(), f.size as usize);
                            let at = f.offset as usize + j * b.len();
                            elem[at..at + b.len()].copy_from_slice(&b);
                        }
                    }
                    assert!(it.next().is_none());
                    bytes.extend_from_slice(&elem);
                }
                return DynValue::Packed(Packed {
                    count: xs.len() as u32,
                    bytes,
                });
            }
            if seq {
                DynValue::Sequence(xs)
            } else {
                DynValue::Array(xs)
            }
        }
    }
}

/// Native bytes of each primitive leaf, in member order.
fn flatten(v: &DynValue, tc: &TypeCode, out: &mut Vec<Vec<u8>>) {
    let tc = tc.unalias().unwrap();
    match v {
        DynValue::Struct(xs) => xs
            .iter()
            .enumerate()
            .for_each(|(i, x)| flatten(x, &tc.member_type(i as u32).unwrap(), out)),
        DynValue::Array(xs) | DynValue::Sequence(xs) => {
            let e = tc.content_type().unwrap();
            xs.iter().for_each(|x| flatten(x, &e, out))
        }
        DynValue::Short(x) => out.push(x.to_ne_bytes().to_vec()),
        DynValue::Long(x) => out.push(x.to_ne_bytes().to_vec()),
        DynValue::UShort(x) => out.push(x.to_ne_bytes().to_vec()),
        DynValue::ULong(x) => out.push(x.to_ne_bytes().to_vec()),
        DynValue::LongLong(x) => out.push(x.to_ne_bytes().to_vec()),
        DynValue::ULongLong(x) => out.push(x.to_ne_bytes().to_vec()),
        DynValue::Float(x) => out.push(x.to_ne_bytes().to_vec()),
        DynValue::Double(x) => out.push(x.to_ne_bytes().to_vec()),
        DynValue::Char(x) | DynValue::Octet(x) => out.push(vec![*x]),
        DynValue::Shorts(x) => x.iter().for_each(|y| out.push(y.to_ne_bytes().to_vec())),
        DynValue::Longs(x) => x.iter().for_each(|y| out.push(y.to_ne_bytes().to_vec())),
        DynValue::UShorts(x) => x.iter().for_each(|y| out.push(y.to_ne_bytes().to_vec())),
        DynValue::ULongs(x) => x.iter().for_each(|y| out.push(y.to_ne_bytes().to_vec())),
        DynValue::LongLongs(x) => x.iter().for_each(|y| out.push(y.to_ne_bytes().to_vec())),
        DynValue::ULongLongs(x) => x.iter().for_each(|y| out.push(y.to_ne_bytes().to_vec())),
        DynValue::Floats(x) => x.iter().for_each(|y| out.push(y.to_ne_bytes().to_vec())),
        DynValue::Doubles(x) => x.iter().for_each(|y| out.push(y.to_ne_bytes().to_vec())),
        DynValue::Chars(x) | DynValue::Octets(x) => x.iter().for_each(|y| out.push(vec![*y])),
        DynValue::Packed(p) => {
            let e = tc.content_type().unwrap().unalias().unwrap();
            let plain = e.layout().plain.clone().unwrap();
            for el in p.bytes.chunks_exact(plain.stride as usize) {
                for f in &plain.fields {
                    for j in 0..f.count as usize {
                        let at = f.offset as usize + j * f.size as usize;
                        out.push(el[at..at + f.size as usize].to_vec());
                    }
                }
            }
        }
        other => panic!("non-plain leaf {other:?}"),
    }
}

fn tc_and_value() -> impl Strategy<Value = (TypeCode, DynValue)> {
    tc_strategy().prop_flat_map(|tc| {
        let v = value_of(&tc);
        (Just(tc), v)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn value_round_trip_both_orders((tc, v) in tc_and_value(), prefix in 0usize..8) {
        for order in [ByteOrder::Big, ByteOrder::Little] {
            let mut w = Writer::new(order);
            w.write_bytes(&vec![0; prefix]);
            encode_value(&tc, &v, &mut w).unwrap();
            let bytes = w.into_vec();
            let mut r = Reader::new(&bytes, order);
            r.read_bytes(prefix).unwrap();
            let back = decode_value(&tc, &mut r).unwrap();
            prop_assert!(r.is_empty());
            prop_assert_eq!(&back, &v);
            let mut r = Reader::new(&bytes, order);
            r.read_bytes(prefix).unwrap();
            skip_value(&tc, &mut r).unwrap();
            prop_assert!(r.is_empty());
        }
    }

    #[test]
    fn typecode_round_trip(tc in tc_strategy()) {
        for order in [ByteOrder::Big, ByteOrder::Little] {
            let mut w = Writer::new(order);
            write_typecode(&tc, &mut w).unwrap();
            let bytes = w.into_vec();
            let back = read_typecode(&mut Reader::new(&bytes, order)).unwrap();
            prop_assert!(back.equal(&tc), "{:?} vs {:?}", back, tc);
            prop_assert!(back.equivalent(&tc));
            prop_assert!(back.get_compact_typecode().equivalent(&tc));
        }
    }

    #[test]
    fn any_round_trip((tc, v) in tc_and_value()) {
        let a = Any::new(tc, v);
        for order in [ByteOrder::Big, ByteOrder::Little] {
            let mut w = Writer::new(order);
            a.encode_into(&mut w).unwrap();
            let bytes = w.into_vec();
            let back = Any::decode_from(&mut Reader::new(&bytes, order)).unwrap();
            prop_assert_eq!(&back, &a);
            prop_assert_eq!(&back.value, &a.value);
        }
    }
}
