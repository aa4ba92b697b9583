//! TypeCode accessors, equality, recursive types, and hostile CDR input.

use peregrine_cdr::{ByteOrder, Reader, Writer};
use peregrine_dynamic::error::DynError;
use peregrine_dynamic::{
    decode_value, encode_value, read_typecode, write_typecode, Any, DynValue, TcKind, TypeCode,
    UnionMember,
};
use peregrine_giop::SystemExceptionKind;

/// `struct Node { long v; sequence<Node> kids; }`
fn node_tc() -> TypeCode {
    TypeCode::struct_tc(
        "IDL:Node:1.0",
        "Node",
        [
            ("v", TypeCode::long()),
            (
                "kids",
                TypeCode::sequence_tc(0, TypeCode::recursive("IDL:Node:1.0")),
            ),
        ],
    )
}

fn enc_tc(tc: &TypeCode, order: ByteOrder) -> Vec<u8> {
    let mut w = Writer::new(order);
    write_typecode(tc, &mut w).unwrap();
    w.into_vec()
}

#[test]
fn accessors_and_errors() {
    let tc = node_tc();
    assert_eq!(tc.kind(), TcKind::Struct);
    assert_eq!(tc.id().unwrap(), "IDL:Node:1.0");
    assert_eq!(tc.name().unwrap(), "Node");
    assert_eq!(tc.member_count().unwrap(), 2);
    assert_eq!(tc.member_name(1).unwrap(), "kids");
    assert_eq!(tc.member_name(2), Err(DynError::Bounds));
    let kids = tc.member_type(1).unwrap();
    assert_eq!(kids.kind(), TcKind::Sequence);
    assert_eq!(kids.length().unwrap(), 0);
    // The recursive element comes back as the enclosing type itself.
    assert!(kids.content_type().unwrap().ptr_eq(&tc));
    assert_eq!(TypeCode::long().member_count(), Err(DynError::BadKind));
    assert_eq!(TypeCode::long().id(), Err(DynError::BadKind));
    let f = TypeCode::fixed_tc(9, 2);
    assert_eq!(
        (f.fixed_digits().unwrap(), f.fixed_scale().unwrap()),
        (9, 2)
    );
    let e = DynError::Bounds.system_exception(peregrine_giop::CompletionStatus::No);
    assert_eq!(e.kind, SystemExceptionKind::BadParam);
}

#[test]
fn union_accessors_and_bad_labels() {
    let u = TypeCode::union_tc(
        "IDL:U:1.0",
        "U",
        TypeCode::long(),
        vec![
            UnionMember {
                label: Some(DynValue::Long(1)),
                name: "a".into(),
                tc: TypeCode::short(),
            },
            UnionMember {
                label: None,
                name: "d".into(),
                tc: TypeCode::string_tc(0),
            },
        ],
    )
    .unwrap();
    assert_eq!(u.default_index().unwrap(), 1);
    assert_eq!(u.member_label(0).unwrap(), DynValue::Long(1));
    assert_eq!(u.member_label(1).unwrap(), DynValue::Octet(0));
    assert_eq!(u.discriminator_type().unwrap().kind(), TcKind::Long);
    let bad = TypeCode::union_tc(
        "IDL:U:1.0",
        "U",
        TypeCode::long(),
        vec![UnionMember {
            label: Some(DynValue::Short(1)),
            name: "a".into(),
            tc: TypeCode::short(),
        }],
    );
    assert!(matches!(bad, Err(DynError::BadParam { .. })));
    assert!(TypeCode::union_tc("IDL:U:1.0", "U", TypeCode::double(), vec![]).is_err());
}

/// `union U switch (long) { case 1: short a; case 2: case 3: string b;
/// default: double d; }` and one with an implicit default: every
/// discriminator decodes into the value tree and re-encodes to the same
/// octets, also inside an `Any` sent as CDR.
#[test]
fn union_values_keep_their_discriminator() {
    let member = |label: Option<i32>, name: &str, tc: TypeCode| UnionMember {
        label: label.map(DynValue::Long),
        name: name.into(),
        tc,
    };
    let u = TypeCode::union_tc(
        "IDL:U:1.0",
        "U",
        TypeCode::long(),
        vec![
            member(Some(1), "a", TypeCode::short()),
            member(Some(2), "b", TypeCode::string_tc(0)),
            member(Some(3), "b", TypeCode::string_tc(0)),
            member(None, "d", TypeCode::double()),
        ],
    )
    .unwrap();
    let implicit = TypeCode::union_tc(
        "IDL:V:1.0",
        "V",
        TypeCode::long(),
        vec![
            member(Some(2), "b", TypeCode::string_tc(0)),
            member(Some(3), "b", TypeCode::string_tc(0)),
        ],
    )
    .unwrap();
    let cases = [
        (&u, 1, DynValue::Short(-4)),
        (&u, 2, DynValue::String("two".into())),
        (&u, 3, DynValue::String("three".into())),
        (&u, 0, DynValue::Double(0.5)),
        (&u, -9, DynValue::Double(1.5)),
        (&implicit, 3, DynValue::String("x".into())),
        (&implicit, 7, DynValue::Null),
    ];
    for (tc, disc, value) in cases {
        for order in [ByteOrder::Big, ByteOrder::Little] {
            let v = DynValue::Union {
                disc: Box::new(DynValue::Long(disc)),
                value: Box::new(value.clone()),
            };
            let mut w = Writer::new(order);
            encode_value(tc, &v, &mut w).unwrap();
            let bytes = w.into_vec();
            let mut expect = Writer::new(order);
            expect.write_i32(disc);
            assert_eq!(&bytes[..4], expect.as_slice(), "{disc}");
            let mut r = Reader::new(&bytes, order);
            assert_eq!(decode_value(tc, &mut r).unwrap(), v, "{disc}");
            assert!(r.is_empty());

            let any = Any::new(tc.clone(), v.clone());
            let mut w = Writer::new(order);
            peregrine_cdr::Encode::encode(&any, &mut w).unwrap();
            let bytes = w.into_vec();
            let back = Any::decode_from(&mut Reader::new(&bytes, order)).unwrap();
            assert_eq!(back.value, v, "{disc} in an Any");
        }
    }
}

#[test]
fn equal_equivalent_compact() {
    let a = TypeCode::struct_tc("IDL:P:1.0", "P", [("x", TypeCode::long())]);
    let b = TypeCode::struct_tc("IDL:P:1.0", "Other", [("y", TypeCode::long())]);
    assert!(!a.equal(&b));
    assert!(a.equivalent(&b));
    let al = TypeCode::alias_tc("IDL:AP:1.0", "AP", a.clone());
    assert!(!al.equal(&a));
    assert!(al.equivalent(&a));
    let c = a.get_compact_typecode();
    assert_eq!(c.name().unwrap(), "");
    assert_eq!(c.member_name(0).unwrap(), "");
    assert!(c.equivalent(&a) && !c.equal(&a));
    let n = node_tc();
    assert!(n.equal(&node_tc()));
    let nc = n.get_compact_typecode();
    assert!(nc.equivalent(&n));
    assert!(nc
        .member_type(1)
        .unwrap()
        .content_type()
        .unwrap()
        .ptr_eq(&nc));
}

#[test]
fn recursive_typecode_round_trip_with_indirection() {
    let tc = node_tc();
    for order in [ByteOrder::Big, ByteOrder::Little] {
        let bytes = enc_tc(&tc, order);
        // The inner occurrence is an indirection: 0xffffffff then a
        // negative offset.
        let marker = bytes
            .windows(4)
            .position(|w| w == [0xff; 4])
            .expect("indirection");
        let off = &bytes[marker + 4..marker + 8];
        let off = match order {
            ByteOrder::Big => i32::from_be_bytes(off.try_into().unwrap()),
            ByteOrder::Little => i32::from_le_bytes(off.try_into().unwrap()),
        };
        assert_eq!(
            marker as i32 + 4 + off,
            0,
            "points back at the struct's TCKind"
        );
        let back = read_typecode(&mut Reader::new(&bytes, order)).unwrap();
        assert!(back.equal(&tc));
        let kids = back.member_type(1).unwrap();
        assert!(kids.content_type().unwrap().ptr_eq(&back));
        // Values of the recursive type.
        let leaf = DynValue::Struct(vec![DynValue::Long(2), DynValue::Sequence(vec![])]);
        let v = DynValue::Struct(vec![
            DynValue::Long(1),
            DynValue::Sequence(vec![leaf.clone(), leaf]),
        ]);
        let mut w = Writer::new(order);
        encode_value(&back, &v, &mut w).unwrap();
        let bytes = w.into_vec();
        assert_eq!(
            decode_value(&back, &mut Reader::new(&bytes, order)).unwrap(),
            v
        );
        // And in an any.
        let a = Any::new(back.clone(), v);
        let mut w = Writer::new(order);
        a.encode_into(&mut w).unwrap();
        let bytes = w.into_vec();
        assert_eq!(
            Any::decode_from(&mut Reader::new(&bytes, order)).unwrap(),
            a
        );
    }
}

#[test]
fn repeated_typecodes_are_sent_once() {
    let p = TypeCode::struct_tc(
        "IDL:P:1.0",
        "P",
        [("x", TypeCode::long()), ("y", TypeCode::double())],
    );
    let pair = TypeCode::struct_tc("IDL:Pair:1.0", "Pair", [("a", p.clone()), ("b", p.clone())]);
    let bytes = enc_tc(&pair, ByteOrder::Big);
    assert_eq!(bytes.chunks(4).filter(|w| *w == [0xff; 4]).count(), 1);
    let back = read_typecode(&mut Reader::new(&bytes, ByteOrder::Big)).unwrap();
    assert!(back.equal(&pair));
    assert!(back
        .member_type(0)
        .unwrap()
        .ptr_eq(&back.member_type(1).unwrap()));
}

#[test]
fn dangling_placeholder_is_incomplete_not_a_panic() {
    let kids = node_tc().member_type(1).unwrap();
    // The enclosing Node is gone.
    let e = kids.content_type().unwrap_err();
    assert!(matches!(e, DynError::BadTypeCode { .. }));
    let mut w = Writer::new(ByteOrder::Big);
    assert!(write_typecode(&TypeCode::recursive("IDL:X:1.0"), &mut w).is_err());
    // A self-containing alias built by hand does not hang unalias.
    let a = TypeCode::alias_tc("IDL:A:1.0", "A", TypeCode::recursive("IDL:A:1.0"));
    assert!(a.unalias().is_err());
}

fn be(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_be_bytes()).collect()
}

fn hostile(bytes: &[u8]) -> DynError {
    read_typecode(&mut Reader::new(bytes, ByteOrder::Big)).unwrap_err()
}

#[test]
fn hostile_indirections() {
    // Top-level indirection: nothing to point at.
    assert!(matches!(
        hostile(&be(&[0xffff_ffff, (-4i32) as u32])),
        DynError::BadTypeCode { .. }
    ));
    // Forward and out of range.
    assert!(matches!(
        hostile(&be(&[0xffff_ffff, 8])),
        DynError::BadTypeCode { .. }
    ));
    assert!(matches!(
        hostile(&be(&[0xffff_ffff, 0x7fff_ffff])),
        DynError::BadTypeCode { .. }
    ));
    assert!(matches!(
        hostile(&be(&[0xffff_ffff, 0x8000_0000])),
        DynError::BadTypeCode { .. }
    ));
    // A sequence whose content points at the sequence itself (no id: no
    // finite type) and one that points into the middle of its params.
    let mut seq_self = be(&[19, 12, 0]);
    seq_self.extend(be(&[0xffff_ffff, (-16i32) as u32, 0]));
    assert!(matches!(
        hostile(&seq_self),
        DynError::BadTypeCode { .. } | DynError::Cdr(_)
    ));
    let mut seq_mid = be(&[19, 12, 0]);
    seq_mid.extend(be(&[0xffff_ffff, (-8i32) as u32, 0]));
    assert!(matches!(
        hostile(&seq_mid),
        DynError::BadTypeCode { .. } | DynError::Cdr(_)
    ));
}

#[test]
fn hostile_counts_and_depth() {
    // struct with 2^32-1 members in a tiny encapsulation.
    let mut b = be(&[15, 20, 0]);
    b.extend(be(&[1, 0, 1, 0, 0xffff_ffff]));
    assert!(matches!(hostile(&b), DynError::Cdr(_)));
    // 200 nested sequences.
    let mut tc = TypeCode::long();
    for _ in 0..200 {
        tc = TypeCode::sequence_tc(0, tc);
    }
    let bytes = enc_tc(&tc, ByteOrder::Big);
    assert!(matches!(
        hostile(&bytes),
        DynError::Cdr(peregrine_cdr::CdrError::TooDeep)
    ));
    // An unknown kind.
    assert!(matches!(hostile(&be(&[99])), DynError::BadTypeCode { .. }));
    // A sequence length far past the input, in a value.
    let mut r = Reader::new(&[0xff, 0xff, 0xff, 0xff, 1, 2], ByteOrder::Big);
    let seq = TypeCode::sequence_tc(0, TypeCode::string_tc(0));
    assert!(decode_value(&seq, &mut r).is_err());
}

#[test]
fn nested_anys_are_depth_limited() {
    let mut a = Any::from(1i32);
    for _ in 0..100 {
        a = Any::new(TypeCode::any(), DynValue::Any(Box::new(a)));
    }
    let mut w = Writer::new(ByteOrder::Big);
    a.encode_into(&mut w).unwrap();
    let bytes = w.into_vec();
    let e = Any::decode_from(&mut Reader::new(&bytes, ByteOrder::Big)).unwrap_err();
    assert_eq!(e, DynError::Cdr(peregrine_cdr::CdrError::TooDeep));
}

/// `struct Tree; typedef sequence<Tree> Forest; struct Tree { Forest kids; };`
/// as omniORB marshals `_tc_Forest`: alias - sequence - struct - an
/// indirection back to the alias. An alias that contains itself with no
/// aggregate in between is still refused.
#[test]
fn recursion_to_an_alias_through_an_aggregate() {
    let forest = TypeCode::alias_tc(
        "IDL:Forest:1.0",
        "Forest",
        TypeCode::sequence_tc(
            0,
            TypeCode::struct_tc(
                "IDL:Tree:1.0",
                "Tree",
                [("kids", TypeCode::recursive("IDL:Forest:1.0"))],
            ),
        ),
    );
    for order in [ByteOrder::Big, ByteOrder::Little] {
        let bytes = enc_tc(&forest, order);
        let back = read_typecode(&mut Reader::new(&bytes, order)).unwrap();
        assert!(back.equal(&forest));
        let tree = back.content_type().unwrap().content_type().unwrap();
        assert!(tree.member_type(0).unwrap().ptr_eq(&back));
        assert_eq!(enc_tc(&back, order), bytes);
        // Values through the interpreter.
        let v = DynValue::Sequence(vec![DynValue::Struct(vec![DynValue::Sequence(vec![])])]);
        let mut w = Writer::new(order);
        encode_value(&back, &v, &mut w).unwrap();
        let vb = w.into_vec();
        assert_eq!(
            decode_value(&back, &mut Reader::new(&vb, order)).unwrap(),
            v
        );
    }
    // alias A = sequence<indirection to A>: no aggregate, no finite type.
    let mut w = Writer::new(ByteOrder::Big);
    w.write_u32(21); // tk_alias
    let len_at = w.len();
    w.write_u32(0);
    w.write_u8(0); // big-endian encapsulation
    w.write_string("IDL:A:1.0").unwrap();
    w.write_string("A").unwrap();
    w.write_u32(19); // tk_sequence
    let seq_len_at = w.len();
    w.write_u32(0);
    w.write_u8(0);
    w.write_u32(0xffff_ffff);
    let off = -(w.len() as i32); // relative to the offset itself
    w.write_i32(off);
    w.write_u32(0); // bound
    let end = w.len();
    w.patch_u32(seq_len_at, (end - seq_len_at - 4) as u32);
    w.patch_u32(len_at, (end - len_at - 4) as u32);
    assert!(matches!(
        hostile(&w.into_vec()),
        DynError::BadTypeCode { what, .. } if what.contains("non-aggregate")
    ));
}

/// omniORB 4.2 writes default index -2 for a union whose labels cover
/// every discriminator value; it decodes as "no default" (-1).
#[test]
fn negative_default_index_means_none() {
    let flag = TypeCode::union_tc(
        "IDL:Flag:1.0",
        "Flag",
        TypeCode::boolean(),
        vec![
            UnionMember {
                label: Some(DynValue::Boolean(true)),
                name: "yes".into(),
                tc: TypeCode::long(),
            },
            UnionMember {
                label: Some(DynValue::Boolean(false)),
                name: "no".into(),
                tc: TypeCode::long(),
            },
        ],
    )
    .unwrap();
    let mut bytes = enc_tc(&flag, ByteOrder::Big);
    let minus_one = (-1i32).to_be_bytes();
    let at = bytes
        .windows(4)
        .position(|w| w == minus_one)
        .expect("default index");
    bytes[at..at + 4].copy_from_slice(&(-2i32).to_be_bytes());
    let back = read_typecode(&mut Reader::new(&bytes, ByteOrder::Big)).unwrap();
    assert_eq!(back.default_index().unwrap(), -1);
    assert!(back.equal(&flag));
}
