//! Valuetypes in the dynamic layer against the generated code of
//! `idl/values.idl`: the interpreter writes the octets the compiled code
//! writes (a list with sharing and a cycle, a value box of string, a
//! truncatable derived value) and each reads the other's; and over real
//! sockets, a DII request with value arguments reaches a DSI servant,
//! and the generated stub calls the DSI servant too, with sharing across
//! parameters and a cycle intact both ways.

use std::sync::Arc;

use peregrine_cdr::{read_value, write_value, ByteOrder, Reader, ValueRef, ValueSlot, Writer};
use peregrine_dynamic::valuetype::{VM_NONE, VM_TRUNCATABLE};
use peregrine_dynamic::{
    decode_value, encode_value, Any, DynValue, TypeCode, ValueLink, ValueMember, ValueNode,
};
use peregrine_orb::{
    CompletionStatus, DynServerRequest, DynamicImplementation, DynamicServant, NVList, Servant,
    SystemException, SystemExceptionKind as K,
};
use peregrine_orb_tests::idl::dyn_values as v;
use peregrine_orb_tests::*;

// ---- the TypeCodes an interface repository would give ----

fn member(name: &str, tc: TypeCode, public: bool) -> ValueMember {
    ValueMember {
        name: name.into(),
        tc,
        visibility: i16::from(public),
    }
}

fn node_tc() -> TypeCode {
    TypeCode::value_tc(
        "IDL:DynValues/Node:1.0",
        "Node",
        VM_NONE,
        None,
        vec![
            member("id", TypeCode::long(), true),
            member("label", TypeCode::string_tc(0), true),
            member("next", TypeCode::recursive("IDL:DynValues/Node:1.0"), true),
            member("secret", TypeCode::long(), false),
        ],
    )
}

fn box_tc() -> TypeCode {
    TypeCode::value_box_tc(
        "IDL:DynValues/StringBox:1.0",
        "StringBox",
        TypeCode::string_tc(0),
    )
}

fn base_tc() -> TypeCode {
    TypeCode::value_tc(
        "IDL:DynValues/Base:1.0",
        "Base",
        VM_NONE,
        None,
        vec![member("a", TypeCode::long(), true)],
    )
}

fn derived_tc() -> TypeCode {
    TypeCode::value_tc(
        "IDL:DynValues/Derived:1.0",
        "Derived",
        VM_TRUNCATABLE,
        Some(base_tc()),
        vec![
            member("extra", TypeCode::string_tc(0), true),
            member("link", node_tc(), true),
        ],
    )
}

#[test]
fn generated_typecodes_equal_the_hand_built_ones() {
    // What an interface repository would give, and what the IDL compiler
    // generates, are one type: `equal`, not only `equivalent` (ids).
    for (generated, built) in [
        (v::tc_node(), node_tc()),
        (v::tc_string_box(), box_tc()),
        (v::tc_base(), base_tc()),
        (v::tc_derived(), derived_tc()),
    ] {
        assert!(generated.equal(&built), "{generated:?} vs {built:?}");
    }
    // One changed visibility is another type.
    let mut members: Vec<ValueMember> = (0..4)
        .map(|i| {
            let tc = v::tc_node();
            member(
                tc.member_name(i).unwrap(),
                tc.member_type(i).unwrap(),
                tc.member_visibility(i).unwrap() == 1,
            )
        })
        .collect();
    members[3].visibility = 1;
    let public_secret =
        TypeCode::value_tc("IDL:DynValues/Node:1.0", "Node", VM_NONE, None, members);
    assert!(!v::tc_node().equal(&public_secret));
}

// ---- the same graphs both ways ----

fn dyn_node(tc: &TypeCode, id: i32, label: &str, next: Option<ValueLink>) -> Arc<ValueNode> {
    ValueNode::new(tc.clone(), dyn_state(id, label, next)).unwrap()
}

fn dyn_state(id: i32, label: &str, next: Option<ValueLink>) -> Vec<DynValue> {
    vec![
        DynValue::Long(id),
        DynValue::String(label.into()),
        DynValue::Value(next),
        DynValue::Long(id * 10),
    ]
}

/// `a` (id 1) -> `b` (id 2) -> `a`, the edge back weak: `b` is made
/// first, its state set once `a` exists.
fn dyn_cycle(tc: &TypeCode) -> (Arc<ValueNode>, Arc<ValueNode>) {
    let b = ValueNode::pending(tc.clone()).unwrap();
    let a = dyn_node(tc, 1, "a", Some(b.clone().into()));
    b.set_state(dyn_state(2, "b", Some(ValueLink::weak(&a))))
        .unwrap();
    (a, b)
}

fn node(id: i32, label: &str, next: Option<ValueRef<v::Node>>) -> ValueRef<v::Node> {
    ValueRef::new(v::Node::new(id, label.into(), next.into(), id * 10))
}

fn value(n: &Arc<ValueNode>) -> DynValue {
    DynValue::Value(Some(n.clone().into()))
}

fn node_of(v: &DynValue) -> Arc<ValueNode> {
    match v {
        DynValue::Value(Some(r)) => r.node().expect("alive"),
        other => panic!("expected a value, got {other:?}"),
    }
}

/// Compiled: `[a, b, a]` with a -> b -> a, then a box, then a Derived
/// (linking to b) in a Base slot.
fn compiled_bytes(order: ByteOrder) -> Vec<u8> {
    let a = ValueRef::new(v::Node::new(1, "a".into(), ValueSlot::null(), 10));
    let b = node(2, "b", Some(a.clone()));
    a.next.set(b.clone()).unwrap();
    let sbox = ValueRef::new(v::StringBox("boxed".into()));
    let d = ValueRef::new(v::Derived {
        a: 42,
        extra: "derived only".into(),
        link: b.clone().into(),
    });
    let mut w = Writer::new(order);
    for n in [&a, &b, &a] {
        write_value(&mut w, Some(n)).unwrap();
    }
    write_value(&mut w, Some(&sbox)).unwrap();
    write_value::<v::StringBox>(&mut w, None).unwrap();
    write_value(&mut w, Some(&d)).unwrap();
    w.into_vec()
}

fn interpreted_bytes(order: ByteOrder) -> Vec<u8> {
    let nt = node_tc();
    let (a, b) = dyn_cycle(&nt);
    let sbox = ValueNode::boxed(box_tc(), DynValue::String("boxed".into())).unwrap();
    let d = ValueNode::new(
        derived_tc(),
        vec![
            DynValue::Long(42),
            DynValue::String("derived only".into()),
            value(&b),
        ],
    )
    .unwrap();
    let mut w = Writer::new(order);
    for n in [&a, &b, &a] {
        encode_value(&nt, &value(n), &mut w).unwrap();
    }
    encode_value(&box_tc(), &value(&sbox), &mut w).unwrap();
    encode_value(&box_tc(), &DynValue::Value(None), &mut w).unwrap();
    encode_value(&base_tc(), &value(&d), &mut w).unwrap();
    w.into_vec()
}

#[test]
fn interpreter_writes_the_compiled_octets_and_each_reads_the_other() {
    for order in [ByteOrder::Big, ByteOrder::Little] {
        let compiled = compiled_bytes(order);
        let interpreted = interpreted_bytes(order);
        assert_eq!(interpreted, compiled, "{order:?}");

        // The interpreter reads the compiled octets (the Derived, not
        // registered, truncated to its Base).
        let nt = node_tc();
        let mut r = Reader::new(&compiled, order);
        let ns: Vec<_> = (0..3)
            .map(|_| node_of(&decode_value(&nt, &mut r).unwrap()))
            .collect();
        assert!(Arc::ptr_eq(&ns[0], &ns[2]));
        assert!(Arc::ptr_eq(
            &node_of(&ns[0].member("next").unwrap()),
            &ns[1]
        ));
        assert!(Arc::ptr_eq(
            &node_of(&ns[1].member("next").unwrap()),
            &ns[0]
        ));
        assert_eq!(ns[0].member("secret"), Some(DynValue::Long(10)));
        let sbox = node_of(&decode_value(&box_tc(), &mut r).unwrap());
        assert_eq!(*sbox.state(), [DynValue::String("boxed".into())]);
        assert_eq!(
            decode_value(&box_tc(), &mut r).unwrap(),
            DynValue::Value(None)
        );
        let base = node_of(&decode_value(&base_tc(), &mut r).unwrap());
        assert_eq!(base.type_code().id().unwrap(), "IDL:DynValues/Base:1.0");
        assert_eq!(*base.state(), [DynValue::Long(42)]);
        assert!(r.is_empty());

        // The compiled code reads the interpreter's octets.
        let mut r = Reader::new(&interpreted, order);
        let read = |r: &mut Reader<'_>| read_value::<v::Node>(r).unwrap().ready().unwrap();
        let (a, b, a2) = (read(&mut r), read(&mut r), read(&mut r));
        let (a, b, a2) = (a.unwrap(), b.unwrap(), a2.unwrap());
        assert!(ValueRef::ptr_eq(&a, &a2));
        assert!(ValueRef::ptr_eq(a.next.get().unwrap(), &b));
        assert!(ValueRef::ptr_eq(b.next.get().unwrap(), &a));
        assert_eq!((a.id, a.label.as_str()), (1, "a"));
        let s = read_value::<v::StringBox>(&mut r).unwrap().ready().unwrap();
        assert_eq!(s.unwrap().0, "boxed");
        let none = read_value::<v::StringBox>(&mut r).unwrap().ready().unwrap();
        assert!(none.is_none());
        let d = read_value::<v::Derived>(&mut r).unwrap().ready().unwrap();
        let d = d.unwrap();
        assert_eq!((d.a, d.extra.as_str()), (42, "derived only"));
        assert!(ValueRef::ptr_eq(d.link.get().unwrap(), &b));
        assert!(r.is_empty());
    }
}

// ---- DII and DSI over TCP ----

/// What `check` reports about its arguments (see the IDL).
fn describe(
    a: &Arc<ValueNode>,
    b: Option<&Arc<ValueNode>>,
    s: &DynValue,
    base: &DynValue,
) -> String {
    let mut ids = Vec::new();
    let mut cur = Some(a.clone());
    while let Some(n) = cur {
        if ids.len() > 8 {
            break;
        }
        let Some(DynValue::Long(id)) = n.member("id") else {
            break;
        };
        if ids.contains(&id) {
            ids.push(id);
            break;
        }
        ids.push(id);
        cur = match n.member("next") {
            Some(DynValue::Value(Some(r))) => r.node(),
            _ => None,
        };
    }
    let shared = match (a.member("next"), b) {
        (Some(DynValue::Value(Some(r))), Some(b)) => core::ptr::eq(r.as_ptr(), Arc::as_ptr(b)),
        _ => false,
    };
    let text = match s {
        DynValue::Value(Some(r)) => match r.node().map(|n| n.state()[0].clone()) {
            Some(DynValue::String(t)) => t,
            _ => "?".into(),
        },
        _ => "null".into(),
    };
    let base_a = match base {
        DynValue::Value(Some(r)) => format!("{:?}", r.node().and_then(|n| n.member("a"))),
        _ => "null".into(),
    };
    format!("ids={ids:?} shared={shared} box={text} base={base_a}")
}

struct DynGraph;

fn marshal() -> SystemException {
    SystemException::new(K::Marshal, 0, CompletionStatus::No)
}

impl DynamicImplementation for DynGraph {
    fn invoke(&self, req: &mut DynServerRequest<'_>) -> Result<(), SystemException> {
        if req.operation() != "check" {
            return Err(SystemException::new(
                K::BadOperation,
                0,
                CompletionStatus::No,
            ));
        }
        let mut nv = NVList::new();
        nv.add_in("a", Any::new(node_tc(), DynValue::Null))
            .add_in("b", Any::new(node_tc(), DynValue::Null))
            .add_in("s", Any::new(box_tc(), DynValue::Null))
            .add_in("root", Any::new(base_tc(), DynValue::Null))
            .add_out("c", node_tc());
        let args = req.arguments(nv)?;
        let a = match &args[0].value.value {
            DynValue::Value(Some(r)) => r.node().ok_or_else(marshal)?,
            _ => return Err(marshal()),
        };
        let b = match &args[1].value.value {
            DynValue::Value(Some(r)) => r.node(),
            _ => None,
        };
        let text = describe(&a, b.as_ref(), &args[2].value.value, &args[3].value.value);
        args[4].value.value = DynValue::Value(Some(a.into()));
        req.set_result(Any::from(text.as_str()))
    }

    fn primary_interface(&self, _object_id: &[u8]) -> String {
        "IDL:DynValues/Graph:1.0".into()
    }
}

#[test]
fn dii_request_with_values_reaches_a_dsi_servant() {
    let (server, _imp, _echo) = server();
    let root = server.root_poa();
    let dy: Arc<dyn Servant> = Arc::new(DynamicServant::new(DynGraph));
    let obj = root.servant_to_object(&dy).unwrap();
    let client = client();
    let obj = client.string_to_object(&obj.to_string()).unwrap();

    // a -> b -> a; b also passed as its own argument; a truncatable
    // Derived where a Base is expected (the servant only knows Base).
    let nt = node_tc();
    let (a, b) = dyn_cycle(&nt);
    let sbox = ValueNode::boxed(box_tc(), DynValue::String("hi".into())).unwrap();
    let d = ValueNode::new(
        derived_tc(),
        vec![DynValue::Long(7), DynValue::String("x".into()), value(&b)],
    )
    .unwrap();
    let mut req = obj.request("check");
    req.add_in_arg("a", Any::new(nt.clone(), value(&a)))
        .add_in_arg("b", Any::new(nt.clone(), value(&b)))
        .add_in_arg("s", Any::new(box_tc(), value(&sbox)))
        .add_in_arg("root", Any::new(base_tc(), value(&d)))
        .add_out_arg("c", nt.clone())
        .set_return_type(TypeCode::string_tc(0));
    req.invoke().unwrap();
    assert_eq!(
        req.return_value().get::<String>().as_deref(),
        Some("ids=[1, 2, 1] shared=true box=hi base=Some(Long(7))")
    );
    // `c` comes back as a graph with its cycle.
    let c = node_of(&req.arguments()[4].value.value);
    let c_next = node_of(&c.member("next").unwrap());
    assert_eq!(c_next.member("label"), Some(DynValue::String("b".into())));
    assert!(Arc::ptr_eq(&node_of(&c_next.member("next").unwrap()), &c));

    // The generated stub against the same DSI servant.
    let g = v::GraphRef::narrow(obj).unwrap().expect("a Graph");
    let x = ValueRef::new(v::Node::new(1, "x".into(), ValueSlot::null(), 0));
    let y = node(2, "y", Some(x.clone()));
    x.next.set(y.clone()).unwrap();
    let s: ValueSlot<v::StringBox> = ValueRef::new(v::StringBox("gen".into())).into();
    let base: ValueSlot<v::Base> = ValueRef::new(v::Base { a: 3 }).into();
    let (text, c) = g
        .check(&x.clone().into(), &y.clone().into(), &s, &base)
        .unwrap();
    assert_eq!(text, "ids=[1, 2, 1] shared=true box=gen base=Some(Long(3))");
    let c = c.get().expect("c").clone();
    assert_eq!(c.id, 1);
    assert!(ValueRef::ptr_eq(
        c.next.get().unwrap().next.get().unwrap(),
        &c
    ));
    // Not shared this time: `b` is a different node with the same id.
    let (text, _) = g
        .check(
            &x.into(),
            &node(2, "y", None).into(),
            &ValueSlot::null(),
            &ValueSlot::null(),
        )
        .unwrap();
    assert_eq!(text, "ids=[1, 2, 1] shared=false box=null base=null");
}
