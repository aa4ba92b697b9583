//! Valuetypes, value boxes and abstract interfaces through the
//! interpretive engine: sharing and cycles both ways, truncation, value
//! boxes, custom values refused, Any with values, values holding object
//! references, and hostile input.

use std::sync::Arc;

use peregrine_cdr::{ByteOrder, CdrError, Reader, Writer};
use peregrine_dynamic::error::minor;
use peregrine_dynamic::valuetype::{
    lookup_value_type, register_value_type, VM_CUSTOM, VM_NONE, VM_TRUNCATABLE,
};
use peregrine_dynamic::{
    copy_value, decode_value, encode_value, read_typecode, skip_value, write_typecode, Any,
    DynError, DynValue, TcKind, TypeCode, ValueLink, ValueMember, ValueNode,
};
use peregrine_giop::SystemExceptionKind;

fn member(name: &str, tc: TypeCode, public: bool) -> ValueMember {
    ValueMember {
        name: name.into(),
        tc,
        visibility: i16::from(public),
    }
}

/// `valuetype Node { public long id; public string label; public Node
/// next; private long secret; }`
fn node_tc() -> TypeCode {
    TypeCode::value_tc(
        "IDL:Values/Node:1.0",
        "Node",
        VM_NONE,
        None,
        vec![
            member("id", TypeCode::long(), true),
            member("label", TypeCode::string_tc(0), true),
            member("next", TypeCode::recursive("IDL:Values/Node:1.0"), true),
            member("secret", TypeCode::long(), false),
        ],
    )
}

fn base_tc() -> TypeCode {
    TypeCode::value_tc(
        "IDL:Values/Base:1.0",
        "Base",
        VM_NONE,
        None,
        vec![member("a", TypeCode::long(), true)],
    )
}

/// `valuetype Derived : truncatable Base { public string extra; }`
fn derived_tc(base: &TypeCode) -> TypeCode {
    TypeCode::value_tc(
        "IDL:Values/Derived:1.0",
        "Derived",
        VM_TRUNCATABLE,
        Some(base.clone()),
        vec![member("extra", TypeCode::string_tc(0), true)],
    )
}

fn node(tc: &TypeCode, id: i32, label: &str, next: Option<ValueLink>) -> Arc<ValueNode> {
    ValueNode::new(tc.clone(), node_state(id, label, next)).unwrap()
}

fn node_state(id: i32, label: &str, next: Option<ValueLink>) -> Vec<DynValue> {
    vec![
        DynValue::Long(id),
        DynValue::String(label.into()),
        DynValue::Value(next),
        DynValue::Long(id * 10),
    ]
}

/// `a` (id 1) -> `b` (id 2) -> `a`, the edge back weak: `b` is made
/// first, its state set once `a` exists.
fn a_b_cycle(tc: &TypeCode) -> (Arc<ValueNode>, Arc<ValueNode>) {
    let b = ValueNode::pending(tc.clone()).unwrap();
    let a = node(tc, 1, "a", Some(b.clone().into()));
    b.set_state(node_state(2, "b", Some(ValueLink::weak(&a))))
        .unwrap();
    (a, b)
}

fn encode(tc: &TypeCode, v: &DynValue) -> Vec<u8> {
    let mut w = Writer::new(ByteOrder::Big);
    encode_value(tc, v, &mut w).unwrap();
    w.into_vec()
}

fn decode(tc: &TypeCode, bytes: &[u8]) -> peregrine_dynamic::Result<DynValue> {
    let mut r = Reader::new(bytes, ByteOrder::Big);
    let v = decode_value(tc, &mut r)?;
    assert_eq!(r.remaining(), 0, "value not read to its end");
    Ok(v)
}

fn node_of(v: &DynValue) -> Arc<ValueNode> {
    match v {
        DynValue::Value(Some(r)) => r.node().expect("alive"),
        other => panic!("expected a value, got {other:?}"),
    }
}

fn next_of(n: &ValueNode) -> DynValue {
    n.member("next").unwrap()
}

#[test]
fn cycle_and_sharing_survive_a_round_trip() {
    let tc = node_tc();
    // a -> b -> a, and a sequence holding a twice then b.
    let (a, b) = a_b_cycle(&tc);
    let seq_tc = TypeCode::sequence_tc(0, tc.clone());
    let v = DynValue::Sequence(vec![
        DynValue::Value(Some(a.clone().into())),
        DynValue::Value(Some(a.clone().into())),
        DynValue::Value(Some(b.clone().into())),
    ]);
    let bytes = encode(&seq_tc, &v);
    // Two values, each written once with its id: the second occurrence
    // of the id is an indirection, so the id text appears once.
    let id = b"IDL:Values/Node:1.0";
    assert_eq!(bytes.windows(id.len()).filter(|w| w == id).count(), 1);

    let back = decode(&seq_tc, &bytes).unwrap();
    let DynValue::Sequence(items) = &back else {
        panic!("{back:?}")
    };
    let (a2, a3, b2) = (node_of(&items[0]), node_of(&items[1]), node_of(&items[2]));
    assert!(Arc::ptr_eq(&a2, &a3), "sharing lost");
    assert!(Arc::ptr_eq(&node_of(&next_of(&a2)), &b2));
    let back_edge = match next_of(&b2) {
        DynValue::Value(Some(r)) => r,
        other => panic!("{other:?}"),
    };
    assert!(back_edge.is_weak(), "the edge closing the cycle is weak");
    assert!(Arc::ptr_eq(&back_edge.node().unwrap(), &a2), "cycle lost");
    assert_eq!(b2.member("secret"), Some(DynValue::Long(20)));
    assert_eq!(a2.member_names()[3], ("secret".to_string(), 0));
    // And the decoded graph encodes to the same octets.
    assert_eq!(encode(&seq_tc, &back), bytes);

    // The decoded graph is freed with its root: no strong cycle.
    let weak_a = Arc::downgrade(&a2);
    drop((a2, a3, b2, back_edge, items));
    drop(back);
    assert!(weak_a.upgrade().is_none(), "decoded cycle leaked");
}

#[test]
fn self_cycle_and_null() {
    let tc = node_tc();
    let a = ValueNode::pending(tc.clone()).unwrap();
    a.set_state(node_state(7, "self", Some(ValueLink::weak(&a))))
        .unwrap();
    let v = DynValue::Value(Some(a.into()));
    let bytes = encode(&tc, &v);
    let back = decode(&tc, &bytes).unwrap();
    let n = node_of(&back);
    assert!(Arc::ptr_eq(&node_of(&next_of(&n)), &n));
    assert_eq!(encode(&tc, &back), bytes);

    let null = encode(&tc, &DynValue::Value(None));
    assert_eq!(null, [0, 0, 0, 0]);
    assert_eq!(decode(&tc, &null).unwrap(), DynValue::Value(None));
}

#[test]
fn value_box_of_string() {
    let tc = TypeCode::value_box_tc(
        "IDL:Values/StringBox:1.0",
        "StringBox",
        TypeCode::string_tc(0),
    );
    let b = ValueNode::boxed(tc.clone(), DynValue::String("hi".into())).unwrap();
    let bytes = encode(&tc, &DynValue::Value(Some(b.into())));
    let mut want = vec![0x7f, 0xff, 0xff, 0x02, 0, 0, 0, 25];
    want.extend_from_slice(b"IDL:Values/StringBox:1.0\0");
    want.extend_from_slice(&[0, 0, 0, 0, 0, 0, 3]);
    want.extend_from_slice(b"hi\0");
    assert_eq!(bytes, want);
    let back = decode(&tc, &bytes).unwrap();
    assert_eq!(*node_of(&back).state(), vec![DynValue::String("hi".into())]);
    // A value of another type is refused for the box.
    let other = node(&node_tc(), 1, "x", None);
    let mut w = Writer::new(ByteOrder::Big);
    assert!(encode_value(&tc, &DynValue::Value(Some(other.into())), &mut w).is_err());
}

#[test]
fn truncatable_derived_value_is_chunked_and_truncated_when_unknown() {
    let base = base_tc();
    let derived = derived_tc(&base);
    let d = ValueNode::new(
        derived.clone(),
        vec![DynValue::Long(5), DynValue::String("more".into())],
    )
    .unwrap();
    let bytes = encode(&base, &DynValue::Value(Some(d.into())));
    // Tag: chunked, a list of ids.
    assert_eq!(&bytes[..4], &[0x7f, 0xff, 0xff, 0x0e]);
    assert_eq!(&bytes[4..8], &[0, 0, 0, 2]);
    assert_eq!(&bytes[bytes.len() - 4..], &(-1i32).to_be_bytes());

    // Not registered: read as Base, the rest skipped.
    assert!(lookup_value_type("IDL:Values/Derived:1.0").is_none());
    let back = decode(&base, &bytes).unwrap();
    let n = node_of(&back);
    assert_eq!(n.type_code().id().unwrap(), "IDL:Values/Base:1.0");
    assert_eq!(*n.state(), vec![DynValue::Long(5)]);
    // skip_value moves past all of it too.
    let mut r = Reader::new(&bytes, ByteOrder::Big);
    skip_value(&base, &mut r).unwrap();
    assert_eq!(r.remaining(), 0);
}

#[test]
fn registered_derived_type_is_read_whole() {
    // A type of its own (another id) so the registry does not leak into
    // the truncation test.
    let base = base_tc();
    let derived = TypeCode::value_tc(
        "IDL:Values/Known:1.0",
        "Known",
        VM_TRUNCATABLE,
        Some(base.clone()),
        vec![member("extra", TypeCode::string_tc(0), true)],
    );
    register_value_type(derived.clone()).unwrap();
    let d = ValueNode::new(
        derived.clone(),
        vec![DynValue::Long(5), DynValue::String("more".into())],
    )
    .unwrap();
    let bytes = encode(&base, &DynValue::Value(Some(d.into())));
    let n = node_of(&decode(&base, &bytes).unwrap());
    assert_eq!(n.type_code().id().unwrap(), "IDL:Values/Known:1.0");
    assert_eq!(n.member("extra"), Some(DynValue::String("more".into())));
}

#[test]
fn unknown_non_truncatable_derived_value_is_marshal_minor_1() {
    let base = base_tc();
    let plain = TypeCode::value_tc(
        "IDL:Values/Plain:1.0",
        "Plain",
        VM_NONE,
        Some(base.clone()),
        vec![member("b", TypeCode::long(), true)],
    );
    let p = ValueNode::new(plain, vec![DynValue::Long(1), DynValue::Long(2)]).unwrap();
    let bytes = encode(&base, &DynValue::Value(Some(p.into())));
    let e = decode(&base, &bytes).unwrap_err();
    let ex = e.system_exception(peregrine_giop::CompletionStatus::No);
    assert_eq!(ex.kind, SystemExceptionKind::Marshal);
    assert_eq!(ex.minor, minor::MARSHAL_NO_VALUE_FACTORY);
}

#[test]
fn custom_values_are_no_implement() {
    let tc = TypeCode::value_tc(
        "IDL:Values/Blob:1.0",
        "Blob",
        VM_CUSTOM,
        None,
        vec![member(
            "data",
            TypeCode::sequence_tc(0, TypeCode::octet()),
            true,
        )],
    );
    let v = ValueNode::new(tc.clone(), vec![DynValue::Octets(vec![1])]).unwrap();
    let mut w = Writer::new(ByteOrder::Big);
    let e = encode_value(&tc, &DynValue::Value(Some(v.into())), &mut w).unwrap_err();
    assert!(matches!(
        e,
        DynError::NoImplement {
            minor: minor::NO_IMPLEMENT_NO_VALUE_IMPL,
            ..
        }
    ));
    // A custom value on the wire (chunked, its id) is refused as well.
    let mut w = Writer::new(ByteOrder::Big);
    w.write_u32(0x7fff_ff0a);
    w.write_string("IDL:Values/Blob:1.0").unwrap();
    w.write_u32(4);
    w.write_u32(0);
    w.write_i32(-1);
    let e = decode(&tc, &w.into_vec()).unwrap_err();
    assert!(matches!(e, DynError::NoImplement { .. }), "{e:?}");
}

#[test]
fn abstract_interface_carries_a_value_or_a_reference() {
    let tc = TypeCode::abstract_interface_tc("IDL:Values/Shape:1.0", "Shape");
    let nt = node_tc();
    register_value_type(nt.clone()).unwrap();
    let n = node(&nt, 3, "n", None);
    let bytes = encode(&tc, &DynValue::Value(Some(n.into())));
    assert_eq!(bytes[0], 0, "FALSE: a value follows");
    let back = decode(&tc, &bytes).unwrap();
    assert_eq!(node_of(&back).member("id"), Some(DynValue::Long(3)));

    let nil = DynValue::ObjRef(Box::new(peregrine_giop::Ior::nil()));
    let bytes = encode(&tc, &nil);
    assert_eq!(bytes[0], 1, "TRUE: an object reference follows");
    assert_eq!(decode(&tc, &bytes).unwrap(), nil);

    let null = encode(&tc, &DynValue::Value(None));
    assert_eq!(decode(&tc, &null).unwrap(), DynValue::Value(None));
}

#[test]
fn value_and_abstract_interface_minor_codes() {
    use peregrine_giop::system_exception::minor::MARSHAL_INVALID_BOOLEAN;
    let tc = TypeCode::abstract_interface_tc("IDL:Values/Shape:1.0", "Shape");
    let kind_minor = |e: &DynError| {
        let s = e.system_exception(peregrine_giop::CompletionStatus::No);
        (s.kind, s.minor)
    };
    // A discriminator neither FALSE (value) nor TRUE (reference).
    for d in [2u8, 0xff] {
        let mut bytes = encode(&tc, &DynValue::Value(None));
        bytes[0] = d;
        let e = decode(&tc, &bytes).unwrap_err();
        assert_eq!(e, DynError::Cdr(CdrError::InvalidBoolean(d)));
        assert_eq!(
            kind_minor(&e),
            (SystemExceptionKind::Marshal, MARSHAL_INVALID_BOOLEAN)
        );
    }
    // Neither a reference nor a value to send.
    let mut w = Writer::new(ByteOrder::Big);
    let e = encode_value(&tc, &DynValue::Long(1), &mut w).unwrap_err();
    assert_eq!(
        kind_minor(&e),
        (
            SystemExceptionKind::BadParam,
            minor::BAD_PARAM_INCORRECT_ABSTRACT_INTF_TYPE
        )
    );
    // Not a value where a valuetype goes, or a value of another type.
    let e = encode_value(&node_tc(), &DynValue::Long(1), &mut w).unwrap_err();
    let mismatch = (
        SystemExceptionKind::BadParam,
        minor::BAD_PARAM_TYPE_MISMATCH,
    );
    assert_eq!(kind_minor(&e), mismatch);
    let base = base_tc();
    let b = ValueNode::new(base.clone(), vec![DynValue::Long(1)]).unwrap();
    let e = encode_value(&node_tc(), &DynValue::Value(Some(b.into())), &mut w).unwrap_err();
    assert_eq!(kind_minor(&e), mismatch, "{e}");
}

#[test]
fn any_holds_a_value_graph() {
    let tc = node_tc();
    let (a, _b) = a_b_cycle(&tc);
    let any = Any::new(tc.clone(), DynValue::Value(Some(a.into())));
    let mut w = Writer::new(ByteOrder::Little);
    any.encode_into(&mut w).unwrap();
    let bytes = w.into_vec();
    let mut r = Reader::new(&bytes, ByteOrder::Little);
    let back = Any::decode_from(&mut r).unwrap();
    assert_eq!(back.tc.kind(), TcKind::Value);
    assert!(back.tc.equal(&tc));
    assert_eq!(back, any);
    let a2 = node_of(&back.value);
    let b2 = node_of(&next_of(&a2));
    assert!(Arc::ptr_eq(&node_of(&next_of(&b2)), &a2));
}

#[test]
fn recursive_value_typecode_round_trips_through_cdr() {
    let base = base_tc();
    let tcs = [node_tc(), derived_tc(&base)];
    for tc in tcs {
        let mut w = Writer::new(ByteOrder::Big);
        write_typecode(&tc, &mut w).unwrap();
        let bytes = w.into_vec();
        let back = read_typecode(&mut Reader::new(&bytes, ByteOrder::Big)).unwrap();
        assert!(back.equal(&tc));
        assert_eq!(back.type_modifier().unwrap(), tc.type_modifier().unwrap());
        assert_eq!(back.member_visibility(0).unwrap(), 1);
        let mut w2 = Writer::new(ByteOrder::Big);
        write_typecode(&back, &mut w2).unwrap();
        assert_eq!(w2.into_vec(), bytes);
    }
    // The Node's `next` member is an indirection back to the Node itself.
    let t = node_tc();
    let mut w = Writer::new(ByteOrder::Big);
    write_typecode(&t, &mut w).unwrap();
    let back = read_typecode(&mut Reader::new(&w.into_vec(), ByteOrder::Big)).unwrap();
    assert!(back.member_type(2).unwrap().ptr_eq(&back));
    assert_eq!(
        back.member_visibility(3).unwrap(),
        0,
        "private member visibility"
    );
}

#[test]
fn copy_value_keeps_sharing() {
    let tc = node_tc();
    let a = node(&tc, 1, "a", None);
    let pair = TypeCode::struct_tc("IDL:P:1.0", "P", [("x", tc.clone()), ("y", tc.clone())]);
    let v = DynValue::Struct(vec![
        DynValue::Value(Some(a.clone().into())),
        DynValue::Value(Some(a.into())),
    ]);
    let bytes = encode(&pair, &v);
    let mut r = Reader::new(&bytes, ByteOrder::Big);
    let mut w = Writer::new(ByteOrder::Little);
    copy_value(&pair, &mut r, &mut w).unwrap();
    let out = w.into_vec();
    let DynValue::Struct(m) =
        decode_value(&pair, &mut Reader::new(&out, ByteOrder::Little)).unwrap()
    else {
        panic!()
    };
    assert!(Arc::ptr_eq(&node_of(&m[0]), &node_of(&m[1])));
}

// ---- hostile input -------------------------------------------------------

fn cdr_err(e: DynError) -> CdrError {
    match e {
        DynError::Cdr(c) => c,
        other => panic!("expected a CDR error, got {other:?}"),
    }
}

#[test]
fn indirection_to_itself_is_refused() {
    // 0xffffffff then -4: back to the indirection's own tag.
    let bytes = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfc];
    let e = cdr_err(decode(&node_tc(), &bytes).unwrap_err());
    assert!(matches!(e, CdrError::BadIndirection(-4)), "{e:?}");
}

#[test]
fn out_of_range_and_forward_indirections_are_refused() {
    for off in [-8i32, -1_000_000, i32::MIN, 0, 4, 100] {
        let mut bytes = vec![0xff; 4];
        bytes.extend_from_slice(&off.to_be_bytes());
        let e = cdr_err(decode(&node_tc(), &bytes).unwrap_err());
        assert!(matches!(e, CdrError::BadIndirection(_)), "{off}: {e:?}");
    }
}

#[test]
fn indirection_into_the_middle_of_a_value_is_refused() {
    // Node(id, label, next = indirection to the label's position).
    let mut w = Writer::new(ByteOrder::Big);
    w.write_u32(0x7fff_ff00);
    w.write_i32(1);
    w.write_string("x").unwrap();
    w.write_u32(0xffff_ffff);
    w.write_i32(-10);
    w.write_i32(0);
    let e = cdr_err(decode(&node_tc(), &w.into_vec()).unwrap_err());
    assert!(matches!(e, CdrError::BadIndirection(_)), "{e:?}");
}

#[test]
fn deep_nesting_stops_at_the_depth_limit() {
    // 10,000 nodes each nested in the previous one's `next`.
    let mut w = Writer::new(ByteOrder::Big);
    for i in 0..10_000 {
        w.write_u32(0x7fff_ff00);
        w.write_i32(i);
        w.write_string("").unwrap();
    }
    let e = cdr_err(decode(&node_tc(), &w.into_vec()).unwrap_err());
    assert!(matches!(e, CdrError::TooDeep), "{e:?}");
}

#[test]
fn huge_repository_id_list_count_is_refused_before_allocating() {
    let mut w = Writer::new(ByteOrder::Big);
    w.write_u32(0x7fff_ff06);
    w.write_u32(0x7fff_fff0);
    w.write_string("IDL:x:1.0").unwrap();
    let e = cdr_err(decode(&node_tc(), &w.into_vec()).unwrap_err());
    assert!(matches!(e, CdrError::LengthExceedsInput { .. }), "{e:?}");
}

#[test]
fn truncated_and_garbage_tags_are_errors() {
    let tc = node_tc();
    for bytes in [
        &[0x7f, 0xff, 0xff][..],
        &[0x12, 0x34, 0x56, 0x78],
        &[0x7f, 0xff, 0xff, 0x04, 0, 0, 0, 0],
        &[0x7f, 0xff, 0xff, 0x08, 0, 0, 0, 0],
    ] {
        assert!(decode(&tc, bytes).is_err(), "{bytes:?}");
    }
}

#[test]
fn every_prefix_and_byte_flip_of_a_graph_is_handled() {
    let tc = node_tc();
    let base = base_tc();
    let (a, _b) = a_b_cycle(&tc);
    let d = ValueNode::new(
        derived_tc(&base),
        vec![DynValue::Long(5), DynValue::String("more".into())],
    )
    .unwrap();
    let cases = [
        (tc.clone(), encode(&tc, &DynValue::Value(Some(a.into())))),
        (
            base.clone(),
            encode(&base, &DynValue::Value(Some(d.into()))),
        ),
    ];
    for (tc, bytes) in cases {
        for n in 0..bytes.len() {
            let _ = decode_value(&tc, &mut Reader::new(&bytes[..n], ByteOrder::Big));
        }
        for i in 0..bytes.len() {
            for x in [0x01, 0x80, 0xff] {
                let mut b = bytes.clone();
                b[i] ^= x;
                let _ = decode_value(&tc, &mut Reader::new(&b, ByteOrder::Big));
                let _ = skip_value(&tc, &mut Reader::new(&b, ByteOrder::Big));
            }
        }
    }
}

#[test]
fn recursive_value_box_typecode_and_value() {
    // valuetype RBox sequence<RBox>;
    let tc = TypeCode::value_box_tc(
        "IDL:RBox:1.0",
        "RBox",
        TypeCode::sequence_tc(0, TypeCode::recursive("IDL:RBox:1.0")),
    );
    let mut w = Writer::new(ByteOrder::Little);
    write_typecode(&tc, &mut w).unwrap();
    let bytes = w.into_vec();
    let back = read_typecode(&mut Reader::new(&bytes, ByteOrder::Little)).unwrap();
    assert_eq!(back.kind(), TcKind::ValueBox);
    assert!(back
        .content_type()
        .unwrap()
        .content_type()
        .unwrap()
        .ptr_eq(&back));

    let leaf = ValueNode::boxed(tc.clone(), DynValue::Sequence(vec![])).unwrap();
    let root = ValueNode::boxed(
        tc.clone(),
        DynValue::Sequence(vec![
            DynValue::Value(Some(leaf.clone().into())),
            DynValue::Value(None),
            DynValue::Value(Some(leaf.into())),
        ]),
    )
    .unwrap();
    let bytes = encode(&back, &DynValue::Value(Some(root.into())));
    let v = decode(&back, &bytes).unwrap();
    let DynValue::Sequence(items) = node_of(&v).state()[0].clone() else {
        panic!()
    };
    assert!(Arc::ptr_eq(&node_of(&items[0]), &node_of(&items[2])));
    assert_eq!(items[1], DynValue::Value(None));
}

#[test]
fn valuetype_that_is_its_own_base_is_bad_typecode() {
    let mut w = Writer::new(ByteOrder::Big);
    w.write_u32(TcKind::Value as u32);
    w.write_encapsulation(|w| {
        w.write_string("IDL:Self:1.0")?;
        w.write_string("Self")?;
        w.write_i16(VM_NONE);
        w.align(4);
        w.write_u32(0xffff_ffff);
        // Back to the TCKind at index 0.
        let off = -(w.len() as i32);
        w.write_i32(off);
        w.write_u32(0);
        Ok(())
    })
    .unwrap();
    let bytes = w.into_vec();
    let e = read_typecode(&mut Reader::new(&bytes, ByteOrder::Big)).unwrap_err();
    assert!(matches!(e, DynError::BadTypeCode { .. }), "{e:?}");
}

#[test]
fn repository_id_indirections_must_lead_back_to_an_id() {
    // The id's length is an indirection to itself, then to the tag.
    for off in [-4i32, -8, -12] {
        let mut w = Writer::new(ByteOrder::Big);
        w.write_u32(0x7fff_ff02);
        w.write_u32(0xffff_ffff);
        w.write_i32(off);
        let e = cdr_err(decode(&base_tc(), &w.into_vec()).unwrap_err());
        assert!(matches!(e, CdrError::BadIndirection(_)), "{off}: {e:?}");
    }
}

#[test]
fn bad_chunks_and_end_tags_are_errors() {
    let base = base_tc();
    let chunked = |chunk_len: u32, end: i32| {
        let mut w = Writer::new(ByteOrder::Big);
        w.write_u32(0x7fff_ff0a);
        w.write_string("IDL:Values/Base:1.0").unwrap();
        w.write_u32(chunk_len);
        w.write_i32(5);
        w.write_i32(end);
        w.into_vec()
    };
    assert!(decode(&base, &chunked(4, -1)).is_ok());
    for (len, end) in [(400, -1), (2, -1), (4, -2), (4, 0), (0x7fff_fff0, -1)] {
        assert!(decode(&base, &chunked(len, end)).is_err(), "{len} {end}");
    }
}

/// `valuetype Tree { public long id; public sequence<Tree> children;
/// public Tree parent; }`
fn tree_tc() -> TypeCode {
    let id = "IDL:Values/Tree:1.0";
    TypeCode::value_tc(
        id,
        "Tree",
        VM_NONE,
        None,
        vec![
            member("id", TypeCode::long(), true),
            member(
                "children",
                TypeCode::sequence_tc(0, TypeCode::recursive(id)),
                true,
            ),
            member("parent", TypeCode::recursive(id), true),
        ],
    )
}

/// A root (id 0) whose `children` are two leaves (ids 1 and 2), each
/// pointing back to it through a weak `parent`.
fn root_with_two_leaves(tc: &TypeCode) -> (Arc<ValueNode>, Arc<ValueNode>, Arc<ValueNode>) {
    let state = |id, children: Vec<DynValue>, parent| {
        vec![
            DynValue::Long(id),
            DynValue::Sequence(children),
            DynValue::Value(parent),
        ]
    };
    // The leaves are made first, their state set once the root exists.
    let (a, b) = (
        ValueNode::pending(tc.clone()).unwrap(),
        ValueNode::pending(tc.clone()).unwrap(),
    );
    let root = ValueNode::new(
        tc.clone(),
        state(
            0,
            vec![
                DynValue::Value(Some(a.clone().into())),
                DynValue::Value(Some(b.clone().into())),
            ],
            None,
        ),
    )
    .unwrap();
    for (id, leaf) in [(1, &a), (2, &b)] {
        leaf.set_state(state(id, vec![], Some(ValueLink::weak(&root))))
            .unwrap();
    }
    (root, a, b)
}

/// Written from a leaf, the parent's `children` (a sequence) closes the
/// cycle to the leaf still being read: a weak edge, so the decoded tree
/// is freed with the leaf that holds it.
#[test]
fn cycle_through_a_sequence_member() {
    let tc = tree_tc();
    let (_root, a, _) = root_with_two_leaves(&tc);
    let bytes = encode(&tc, &DynValue::Value(Some(a.clone().into())));
    let back = decode(&tc, &bytes).unwrap();
    let a2 = node_of(&back);
    let root2 = node_of(&a2.member("parent").unwrap());
    assert_eq!(root2.member("id"), Some(DynValue::Long(0)));
    let Some(DynValue::Sequence(kids)) = root2.member("children") else {
        panic!("children")
    };
    let DynValue::Value(Some(first)) = &kids[0] else {
        panic!("{kids:?}")
    };
    assert!(first.is_weak(), "the edge closing the cycle is weak");
    assert!(Arc::ptr_eq(&first.node().unwrap(), &a2), "cycle lost");
    let b2 = node_of(&kids[1]);
    assert!(Arc::ptr_eq(&node_of(&b2.member("parent").unwrap()), &root2));
    assert_eq!(encode(&tc, &back), bytes);

    let weak_root = Arc::downgrade(&root2);
    drop((a2, root2, b2, kids, back));
    assert!(weak_root.upgrade().is_none(), "decoded cycle leaked");
}

/// Two edges back to one value whose state is still being read (both
/// children of the root point to it): the decoder makes the root's node
/// at the first and hands the same node to the second, and the root's
/// state, read last, fills that node.
#[test]
fn two_edges_back_to_one_pending_value() {
    let tc = tree_tc();
    let (root, _, _) = root_with_two_leaves(&tc);
    let bytes = encode(&tc, &DynValue::Value(Some(root.clone().into())));
    let back = decode(&tc, &bytes).unwrap();
    let root2 = node_of(&back);
    assert_eq!(root2.member("id"), Some(DynValue::Long(0)));
    let Some(DynValue::Sequence(kids)) = root2.member("children") else {
        panic!("children")
    };
    assert_eq!(kids.len(), 2);
    for kid in &kids {
        let parent = match node_of(kid).member("parent") {
            Some(DynValue::Value(Some(r))) => r,
            other => panic!("{other:?}"),
        };
        assert!(parent.is_weak(), "the edge closing the cycle is weak");
        assert!(Arc::ptr_eq(&parent.node().unwrap(), &root2), "cycle lost");
    }
    assert_eq!(encode(&tc, &back), bytes);
    let weak_root = Arc::downgrade(&root2);
    drop((root2, kids, back));
    assert!(weak_root.upgrade().is_none(), "decoded cycle leaked");
}

/// `CORBA::_tc_ValueBase`: `tk_value`, its OMG id and name, `VM_NONE`, no
/// concrete base, no members; the same through CDR.
#[test]
fn value_base_typecode_is_the_omg_one() {
    let tc = TypeCode::value_base();
    assert_eq!(tc.kind(), TcKind::Value);
    assert_eq!(tc.id().unwrap(), "IDL:omg.org/CORBA/ValueBase:1.0");
    assert_eq!(
        tc.id().unwrap(),
        peregrine_dynamic::valuetype::VALUE_BASE_ID
    );
    assert_eq!(tc.name().unwrap(), "ValueBase");
    assert_eq!(tc.type_modifier().unwrap(), VM_NONE);
    assert!(tc.concrete_base_type().unwrap().is_none());
    assert_eq!(tc.member_count().unwrap(), 0);
    assert!(tc.is_value_base());
    let alias = TypeCode::alias_tc("IDL:Values/VB:1.0", "VB", tc.clone());
    assert!(alias.is_value_base());
    assert!(!base_tc().is_value_base());
    let mut w = Writer::new(ByteOrder::Big);
    write_typecode(&tc, &mut w).unwrap();
    let bytes = w.into_vec();
    let back = read_typecode(&mut Reader::new(&bytes, ByteOrder::Big)).unwrap();
    assert!(back.equal(&tc));
    assert!(back.is_value_base());
}

/// A `ValueBase` slot carries values of any type, boxes included, and
/// null; a value met twice is shared; a type nobody registered is
/// `MARSHAL` minor 1 (no value factory), and so is a header without ids.
#[test]
fn value_base_slot_carries_any_registered_value() {
    let vb = TypeCode::value_base();
    let nt = node_tc();
    register_value_type(nt.clone()).unwrap();
    let boxed = TypeCode::value_box_tc("IDL:Values/VbBox:1.0", "VbBox", TypeCode::long());
    register_value_type(boxed.clone()).unwrap();
    let n = node(&nt, 7, "n", None);
    let b = ValueNode::boxed(boxed.clone(), DynValue::Long(42)).unwrap();
    let seq = TypeCode::sequence_tc(0, vb.clone());
    let v = DynValue::Sequence(vec![
        DynValue::Value(Some(n.clone().into())),
        DynValue::Value(Some(b.into())),
        DynValue::Value(None),
        DynValue::Value(Some(n.into())),
    ]);
    let bytes = encode(&seq, &v);
    let DynValue::Sequence(back) = decode(&seq, &bytes).unwrap() else {
        panic!("a sequence");
    };
    let first = node_of(&back[0]);
    assert_eq!(first.type_code().id().unwrap(), "IDL:Values/Node:1.0");
    assert_eq!(first.member("id"), Some(DynValue::Long(7)));
    let b = node_of(&back[1]);
    assert_eq!(b.type_code().kind(), TcKind::ValueBox);
    assert_eq!(*b.state(), vec![DynValue::Long(42)]);
    assert_eq!(back[2], DynValue::Value(None));
    assert!(Arc::ptr_eq(&first, &node_of(&back[3])));

    // The same value in an `Any` typed `ValueBase`.
    let any = Any::new(vb.clone(), back[1].clone());
    let mut w = Writer::new(ByteOrder::Little);
    any.encode_into(&mut w).unwrap();
    let bytes = w.into_vec();
    let got = Any::decode_from(&mut Reader::new(&bytes, ByteOrder::Little)).unwrap();
    assert!(got.tc.is_value_base());
    assert_eq!(*node_of(&got.value).state(), vec![DynValue::Long(42)]);

    // Unregistered: no factory.
    let stranger = TypeCode::value_tc(
        "IDL:Values/Stranger:1.0",
        "Stranger",
        VM_NONE,
        None,
        vec![member("x", TypeCode::long(), true)],
    );
    let s = ValueNode::new(stranger, vec![DynValue::Long(1)]).unwrap();
    let bytes = encode(&vb, &DynValue::Value(Some(s.into())));
    for bad in [bytes, vec![0x7f, 0xff, 0xff, 0x00, 0, 0, 0, 1]] {
        let e = decode(&vb, &bad).unwrap_err();
        let ex = e.system_exception(peregrine_giop::CompletionStatus::No);
        assert_eq!(ex.kind, SystemExceptionKind::Marshal, "{e:?}");
        assert_eq!(ex.minor, minor::MARSHAL_NO_VALUE_FACTORY);
    }
}

/// `valuetype Bag : Mark { public long id; public sequence<ValueBase>
/// items; public sequence<Shape> shapes; public sequence<Mark> marks; }`
/// where `Mark` is an abstract valuetype and `Shape` an abstract
/// interface.
fn bag_tc() -> TypeCode {
    let mark = TypeCode::value_tc(
        "IDL:Values/Mark:1.0",
        "Mark",
        peregrine_dynamic::valuetype::VM_ABSTRACT,
        None,
        vec![],
    );
    let shape = TypeCode::abstract_interface_tc("IDL:Values/Shape:1.0", "Shape");
    TypeCode::value_tc(
        "IDL:Values/Bag:1.0",
        "Bag",
        VM_NONE,
        Some(mark.clone()),
        vec![
            member("id", TypeCode::long(), true),
            member(
                "items",
                TypeCode::sequence_tc(0, TypeCode::value_base()),
                true,
            ),
            member("shapes", TypeCode::sequence_tc(0, shape), true),
            member("marks", TypeCode::sequence_tc(0, mark), true),
        ],
    )
}

/// A bag whose `items`, `shapes` and `marks` each list the bag itself
/// (weak edges), after a node in `items`: each element closes a cycle to
/// the value still being read, and decodes as a weak edge to the one
/// decoded node.
#[test]
fn cycles_through_value_base_abstract_interface_and_abstract_value_sequences() {
    let tc = bag_tc();
    let nt = node_tc();
    register_value_type(nt.clone()).unwrap();
    // The node exists first (its state set once below), as a cycle needs.
    let bag = ValueNode::pending(tc.clone()).unwrap();
    let back_edge = || DynValue::Value(Some(ValueLink::weak(&bag)));
    bag.set_state(vec![
        DynValue::Long(5),
        DynValue::Sequence(vec![
            DynValue::Value(Some(node(&nt, 1, "n", None).into())),
            back_edge(),
        ]),
        DynValue::Sequence(vec![back_edge()]),
        DynValue::Sequence(vec![back_edge(), DynValue::Value(None)]),
    ])
    .unwrap();
    let bytes = encode(&tc, &DynValue::Value(Some(bag.clone().into())));
    let back = decode(&tc, &bytes).unwrap();
    let bag2 = node_of(&back);
    assert_eq!(bag2.member("id"), Some(DynValue::Long(5)));
    let elems = |name: &str| match bag2.member(name) {
        Some(DynValue::Sequence(v)) => v,
        other => panic!("{name}: {other:?}"),
    };
    let items = elems("items");
    assert_eq!(node_of(&items[0]).member("id"), Some(DynValue::Long(1)));
    let marks = elems("marks");
    assert_eq!(marks[1], DynValue::Value(None));
    for edge in [&items[1], &elems("shapes")[0], &marks[0]] {
        let DynValue::Value(Some(r)) = edge else {
            panic!("{edge:?}")
        };
        assert!(r.is_weak(), "the edge closing the cycle is weak");
        assert!(Arc::ptr_eq(&r.node().unwrap(), &bag2), "cycle lost");
    }
    // The same octets again (one value, three indirections to it).
    assert_eq!(encode(&tc, &back), bytes);
    let weak = Arc::downgrade(&bag2);
    drop((bag2, items, marks, back));
    assert!(weak.upgrade().is_none(), "decoded cycle leaked");
    drop(bag);
}

/// `valuetype Wallet { public Account main; public Described about;
/// public Wallet next; }` and `valuetype Tagged : truncatable Wallet {
/// public Account extra; }`.
fn wallet_tcs() -> (TypeCode, TypeCode) {
    let acct = TypeCode::objref_tc("IDL:Values/Account:1.0", "Account");
    let wallet = TypeCode::value_tc(
        "IDL:Values/Wallet:1.0",
        "Wallet",
        VM_NONE,
        None,
        vec![
            member("main", acct.clone(), true),
            member(
                "about",
                TypeCode::abstract_interface_tc("IDL:Values/Described:1.0", "Described"),
                true,
            ),
            member("next", TypeCode::recursive("IDL:Values/Wallet:1.0"), true),
        ],
    );
    let tagged = TypeCode::value_tc(
        "IDL:Values/Tagged:1.0",
        "Tagged",
        VM_TRUNCATABLE,
        Some(wallet.clone()),
        vec![member("extra", acct, true)],
    );
    (wallet, tagged)
}

fn ior(id: &str) -> DynValue {
    DynValue::ObjRef(Box::new(peregrine_giop::Ior {
        type_id: id.into(),
        profiles: Vec::new(),
    }))
}

#[test]
fn values_hold_references_nil_and_abstract_ones_through_sharing_and_truncation() {
    let (wallet, tagged) = wallet_tcs();
    let nil = DynValue::ObjRef(Box::new(peregrine_giop::Ior::nil()));
    // A tagged wallet listing a plain one, which lists the tagged one
    // back (a cycle); references, a nil one, an abstract one.
    let t = ValueNode::pending(tagged.clone()).unwrap();
    let plain = ValueNode::new(
        wallet.clone(),
        vec![
            nil.clone(),
            ior("IDL:Values/Shop:1.0"),
            DynValue::Value(Some(ValueLink::new(t.clone()))),
        ],
    )
    .unwrap();
    t.set_state(vec![
        ior("IDL:Values/Account:1.0"),
        DynValue::Value(None),
        DynValue::Value(Some(ValueLink::new(plain.clone()))),
        ior("IDL:Values/Account:1.0#extra"),
    ])
    .unwrap();
    let v = DynValue::Value(Some(ValueLink::new(t)));
    let bytes = encode(&wallet, &v);

    // Whole (the receiver knows Tagged): every reference as sent.
    register_value_type(tagged.clone()).unwrap();
    let back = node_of(&decode(&wallet, &bytes).unwrap());
    assert_eq!(back.member("main"), Some(ior("IDL:Values/Account:1.0")));
    assert_eq!(
        back.member("extra"),
        Some(ior("IDL:Values/Account:1.0#extra"))
    );
    let p = node_of(&next_of(&back));
    assert_eq!(p.member("main"), Some(nil));
    assert_eq!(p.member("about"), Some(ior("IDL:Values/Shop:1.0")));
    assert!(
        Arc::ptr_eq(&node_of(&next_of(&p)), &back),
        "the cycle closes"
    );

    // Truncated (Tagged unknown): `extra`'s IOR is skipped with its
    // chunk, and the cycle still closes on the truncated value.
    assert!(peregrine_dynamic::valuetype::unregister_value_type("IDL:Values/Tagged:1.0").is_some());
    let cut = node_of(&decode(&wallet, &bytes).unwrap());
    assert!(cut.type_code().equivalent(&wallet), "truncated to Wallet");
    assert_eq!(cut.member("extra"), None);
    assert_eq!(cut.member("main"), Some(ior("IDL:Values/Account:1.0")));
    let p = node_of(&next_of(&cut));
    assert!(Arc::ptr_eq(&node_of(&next_of(&p)), &cut));

    // A malformed IOR inside: MARSHAL with the minor code of what is
    // wrong (a type id longer than the input), at every truncation an
    // error.
    let mut w = Writer::new(ByteOrder::Big);
    w.write_u32(0x7fff_ff02);
    w.write_string("IDL:Values/Wallet:1.0").unwrap();
    w.write_u32(0x00ff_ffff);
    let e = decode(&wallet, &w.into_vec()).unwrap_err();
    let s = e.system_exception(peregrine_giop::CompletionStatus::No);
    assert_eq!(
        (s.kind, s.minor),
        (
            SystemExceptionKind::Marshal,
            peregrine_giop::system_exception::minor::MARSHAL_LENGTH_EXCEEDS_INPUT
        ),
        "{e:?}"
    );
    for n in 0..bytes.len() {
        let mut r = Reader::new(&bytes[..n], ByteOrder::Big);
        assert!(decode_value(&wallet, &mut r).is_err(), "{n}");
    }
}
