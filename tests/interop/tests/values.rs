//! Valuetypes between Peregrine and omniORB, both directions, over GIOP
//! 1.2: a node graph with a cycle and with sharing (omniORB keeps it and
//! sends it back with indirections), a string box and null, and a
//! truncatable derived value sent to a peer that knows only its base (each
//! side knows a derived type the other does not, see `idl/values.idl`).

use std::sync::Arc;
use std::time::Duration;

use peregrine_cdr::{Upcast, ValueObject, ValueRef, ValueSlot};
use peregrine_dynamic::Any;
use peregrine_interop_tests::peers::{extra_args, peers, Peer};
use peregrine_interop_tests::values_idl::val_interop as v;
use peregrine_interop_tests::{bounded, serving_orb};
use peregrine_orb::{Orb, SystemException, SystemExceptionKind};

fn node(id: i32, label: &str, next: Option<ValueRef<v::Node>>) -> ValueRef<v::Node> {
    ValueRef::new(v::Node::new(id, label.into(), next.into()))
}

/// omniORB's values server (kept running while the `Peer` lives), a
/// client ORB, and the object the server printed after `tag`.
fn omniorb_values_server(tag: &str) -> (Peer, Orb, peregrine_orb::ObjectRef) {
    let p = peers();
    let mut args = extra_args();
    args.extend([
        "-ORBendPoint".to_string(),
        "giop:tcp:127.0.0.1:".to_string(),
    ]);
    let mut server = Peer::spawn("omniORB values_server", &p.values_server, &args);
    let ior = server.wait_for(&format!("{tag} "), Duration::from_secs(30));
    server.wait_for("READY", Duration::from_secs(30));
    let orb = Orb::builder()
        .call_timeout(Duration::from_secs(20))
        .build()
        .unwrap();
    let obj = orb.string_to_object(&ior).unwrap();
    (server, orb, obj)
}

#[test]
fn peregrine_client_omniorb_server() {
    bounded(120, || {
        let (_server, _orb, obj) = omniorb_values_server("VALUES");
        let vals = v::ValuesRef::narrow(obj).unwrap().expect("a Values");

        // a -> b -> a, through omniORB and back.
        let a = node(1, "a", None);
        let b = node(2, "b", Some(a.clone()));
        a.next.set(b).unwrap();
        let back = vals.echo_node(&a.into()).unwrap();
        let a2 = back.get().expect("non-null").clone();
        let b2 = a2.next.get().expect("b").clone();
        assert_eq!(
            (a2.id, a2.label.as_str(), b2.id, b2.label.as_str()),
            (1, "a", 2, "b")
        );
        assert!(ValueRef::ptr_eq(b2.next.get().expect("cycle kept"), &a2));

        // [x, y, x, null] with y -> x: one x comes back.
        let x = node(3, "x", None);
        let y = node(4, "y", Some(x.clone()));
        let seq: Vec<ValueSlot<v::Node>> =
            vec![x.clone().into(), y.into(), x.into(), ValueSlot::null()];
        let r = vals.echo_seq(&seq).unwrap();
        assert_eq!(r.len(), 4);
        let x0 = r[0].get().unwrap();
        assert_eq!(x0.label, "x");
        assert!(ValueRef::ptr_eq(x0, r[2].get().unwrap()));
        assert!(ValueRef::ptr_eq(
            x0,
            r[1].get().unwrap().next.get().unwrap()
        ));
        assert!(r[3].is_null());

        let boxed: ValueSlot<v::StrBox> = ValueRef::new(v::StrBox("boxed".into())).into();
        assert_eq!(vals.echo_box(&boxed).unwrap().get().unwrap().0, "boxed");
        assert!(vals.echo_box(&ValueSlot::null()).unwrap().is_null());

        // omniORB has no type (and no factory) for RustDerived: it cuts it
        // to its Base, skipping the derived chunks with their nested Node.
        let d = ValueRef::new(v::RustDerived::new(
            41,
            "rust only".into(),
            node(5, "link", None).into(),
        ));
        assert_eq!(vals.derived_a(&d.into()).unwrap(), 41);
        assert_eq!(vals.derived_a(&ValueSlot::null()).unwrap(), -1);
        let base: ValueSlot<v::Base> = ValueRef::new(v::Base::new(9)).into();
        assert_eq!(vals.base_a(&base).unwrap(), 9);
        assert_eq!(vals.make_base(7).unwrap().get().unwrap().a, 7);
    });
}

/// Values inside an `any`, typed with the generated TypeCodes: omniORB
/// extracts them with its own (`AnyEcho` in `idl/values.idl`), checks the
/// cycle or the sharing, changes them and sends them back.
#[test]
fn any_holding_values_to_omniorb_and_back() {
    bounded(120, || {
        let (_server, _orb, obj) = omniorb_values_server("ANYECHO");
        let echo = v::AnyEchoRef::narrow(obj).unwrap().expect("an AnyEcho");

        // a -> b -> a: omniORB checks the cycle and adds 1000 to a's id.
        let a = node(1, "a", None);
        let b = node(2, "b", Some(a.clone()));
        a.next.set(b).unwrap();
        let any = Any::insert(&ValueSlot::from(a.clone()));
        assert!(any.tc.ptr_eq(&v::tc_node()));
        let back = echo.echo_any(&any).unwrap();
        assert!(back.tc.equivalent(&v::tc_node()), "{:?}", back.tc);
        let a2 = back.get::<ValueSlot<v::Node>>().expect("a Node");
        let a2 = a2.get().expect("non-null");
        let b2 = a2.next.get().expect("b");
        assert_eq!(
            (a2.id, a2.label.as_str(), b2.id, b2.label.as_str()),
            (1001, "a", 2, "b")
        );
        assert!(ValueRef::ptr_eq(b2.next.get().expect("cycle kept"), a2));
        assert_eq!(a.id, 1, "the sender's graph is untouched");

        // [x, y, x] with y -> x, as a NodeSeq typedef.
        let x = node(3, "x", None);
        let y = node(4, "y", Some(x.clone()));
        let seq: v::NodeSeq = vec![x.clone().into(), y.into(), x.into()];
        let back = echo.echo_any(&v::node_seq_to_any(&seq)).unwrap();
        let r = v::node_seq_from_any(&back).expect("a NodeSeq");
        let x0 = r[0].get().unwrap();
        assert_eq!((x0.id, x0.label.as_str()), (1003, "x"));
        assert!(ValueRef::ptr_eq(x0, r[2].get().unwrap()));
        assert!(ValueRef::ptr_eq(
            x0,
            r[1].get().unwrap().next.get().unwrap()
        ));

        // A value box.
        let boxed = ValueSlot::from(ValueRef::new(v::StrBox("boxed".into())));
        let back = echo.echo_any(&Any::insert(&boxed)).unwrap();
        let back = back.get::<ValueSlot<v::StrBox>>().expect("a StrBox");
        assert_eq!(back.get().unwrap().0, "boxed!");

        // A broken cycle (a -> b, b -> null) is refused by omniORB's check
        // after extracting: the value arrived as sent.
        let lone = node(5, "lone", Some(node(6, "end", None)));
        let e = echo
            .echo_any(&Any::insert(&ValueSlot::from(lone)))
            .unwrap_err();
        assert_eq!(
            (e.kind, e.minor),
            (SystemExceptionKind::BadParam, 1),
            "{e:?}"
        );
        // A null Node extracts as null.
        let e = echo
            .echo_any(&Any::insert(&ValueSlot::<v::Node>::null()))
            .unwrap_err();
        assert_eq!(
            (e.kind, e.minor),
            (SystemExceptionKind::BadParam, 1),
            "{e:?}"
        );
    });
}

/// `ValueBase` parameters and results against omniORB: values of two
/// valuetypes, a value box and null, each recognized by omniORB and sent
/// back as its own type; one value passed twice arrives as one.
#[test]
fn value_base_to_omniorb_and_back() {
    bounded(120, || {
        let (_server, _orb, obj) = omniorb_values_server("ANYTHING");
        let any = v::AnythingRef::narrow(obj).unwrap().expect("an Anything");
        let cases = [
            (vb(node(7, "seven", None)), "Node 7"),
            (vb(ValueRef::new(v::Base::new(8))), "Base 8"),
            (vb(ValueRef::new(v::StrBox("nine".into()))), "StrBox nine"),
            (ValueSlot::null(), "null"),
        ];
        for (v, want) in &cases {
            assert_eq!(any.kind(v).unwrap(), *want);
        }
        // Back as its own type.
        let back = any.echo_value(&cases[0].0).unwrap();
        let n = back
            .get()
            .unwrap()
            .clone()
            .into_any_value()
            .downcast::<v::Node>()
            .expect("a Node");
        assert_eq!((n.id, n.label.as_str()), (7, "seven"));
        let back = any.echo_value(&cases[1].0).unwrap();
        let b = back.get().unwrap().clone().into_any_value();
        assert_eq!(b.downcast::<v::Base>().expect("a Base").a, 8);
        assert!(any.echo_value(&ValueSlot::null()).unwrap().is_null());
        // A cycle through a Node inside a ValueBase.
        let a = node(1, "a", None);
        let b = node(2, "b", Some(a.clone()));
        a.next.set(b).unwrap();
        let back = any.echo_value(&vb(a)).unwrap();
        let a2 = back.get().unwrap().clone().into_any_value();
        let a2 = a2.downcast::<v::Node>().expect("a Node");
        let b2 = a2.next.get().expect("b").clone();
        assert!(ValueRef::ptr_eq(b2.next.get().expect("cycle kept"), &a2));
        // A cycle through a `sequence<ValueBase>`: the bag lists itself
        // (after a node); omniORB sees the cycle closed and sends it
        // back, its indirection to the bag read while the bag is still
        // being decoded.
        let bag = ValueRef::new(v::Bag::new(
            "b".into(),
            vec![vb(node(4, "four", None)), ValueSlot::null()],
        ));
        bag.items[1]
            .set(bag.clone().upcast::<dyn ValueObject>())
            .map_err(|_| ())
            .unwrap();
        assert_eq!(any.kind(&vb(bag.clone())).unwrap(), "Bag b 2 self 1");
        let back = any.echo_value(&vb(bag)).unwrap();
        let bag2 = back.get().unwrap().clone().into_any_value();
        let bag2 = bag2.downcast::<v::Bag>().expect("a Bag");
        assert_eq!(bag2.items.len(), 2);
        assert_eq!(
            ValueRef::as_ptr(bag2.items[1].get().expect("cycle kept")).cast::<()>(),
            ValueRef::as_ptr(&bag2).cast::<()>()
        );
        let n = bag2.items[0].get().unwrap().clone().into_any_value();
        assert_eq!(n.downcast::<v::Node>().expect("a Node").id, 4);
        // A graph whose back edges close inside structs held in a
        // sequence member: omniORB closes them and sends them back.
        let g = gnode_graph();
        let want = "GNode a 1:b[root] 3:root";
        assert_eq!(describe_gnode(&g), want);
        assert_eq!(any.kind(&vb(g.clone())).unwrap(), want);
        let back = any.echo_value(&vb(g)).unwrap();
        let g2 = back.get().unwrap().clone().into_any_value();
        let g2 = g2.downcast::<v::GNode>().expect("a GNode");
        assert_eq!(describe_gnode(&g2), want);
        let b2 = g2.edges[0].target.get().expect("b");
        assert!(ValueRef::ptr_eq(
            g2.edges[1].target.get().expect("a -> a"),
            &g2
        ));
        assert!(ValueRef::ptr_eq(
            b2.edges[0].target.get().expect("b -> a"),
            &g2
        ));
        // Sharing across parameters.
        let x = vb(node(3, "x", None));
        let (shared, b2) = any.same(&x, &x.clone()).unwrap();
        assert!(shared, "omniORB saw one value");
        assert_eq!(
            b2.get()
                .unwrap()
                .clone()
                .into_any_value()
                .downcast::<v::Node>()
                .expect("a Node")
                .id,
            3
        );
        let (shared, _) = any.same(&x, &vb(node(3, "x", None))).unwrap();
        assert!(!shared);
    });
}

/// `v` as a `ValueBase` parameter.
fn vb<T>(v: ValueRef<T>) -> ValueSlot<dyn ValueObject>
where
    dyn ValueObject: Upcast<T>,
{
    ValueSlot::new(v.upcast())
}

/// What `Anything::kind` answers for a GNode (see `idl/values.idl`): by
/// identity, so a cycle shows as "root" or "self".
fn describe_gnode(r: &ValueRef<v::GNode>) -> String {
    let mut s = format!("GNode {}", r.name);
    for e in &r.edges {
        let to = match e.target.get() {
            Some(t) if ValueRef::ptr_eq(t, r) => "root".to_string(),
            None => "null".to_string(),
            Some(t) => {
                let inner: Vec<String> = t
                    .edges
                    .iter()
                    .map(|u| match u.target.get() {
                        Some(u) if ValueRef::ptr_eq(u, r) => "root".to_string(),
                        Some(u) if ValueRef::ptr_eq(u, t) => "self".to_string(),
                        Some(u) => u.name.clone(),
                        None => "null".to_string(),
                    })
                    .collect();
                format!("{}[{}]", t.name, inner.join(","))
            }
        };
        s += &format!(" {}:{to}", e.weight);
    }
    s
}

/// a -1-> b, b -2-> a, a -3-> a: back edges in structs of a sequence.
fn gnode_graph() -> ValueRef<v::GNode> {
    let node = |name: &str, weights: &[i32]| {
        let edges = weights
            .iter()
            .map(|&weight| v::GEdge {
                weight,
                target: ValueSlot::null(),
            })
            .collect();
        ValueRef::new(v::GNode::new(name.into(), edges))
    };
    let a = node("a", &[1, 3]);
    let b = node("b", &[2]);
    a.edges[0].target.set(b.clone()).unwrap();
    a.edges[1].target.set(a.clone()).unwrap();
    b.edges[0].target.set(a.clone()).unwrap();
    a
}

struct Server;

impl v::Values for Server {
    fn echo_node(&self, n: &ValueSlot<v::Node>) -> Result<ValueSlot<v::Node>, SystemException> {
        Ok(n.clone())
    }
    fn echo_seq(&self, s: &[ValueSlot<v::Node>]) -> Result<v::NodeSeq, SystemException> {
        Ok(s.to_vec())
    }
    fn echo_box(&self, b: &ValueSlot<v::StrBox>) -> Result<ValueSlot<v::StrBox>, SystemException> {
        Ok(b.clone())
    }
    fn base_a(&self, b: &ValueSlot<v::Base>) -> Result<i32, SystemException> {
        Ok(b.get().map_or(-1, |b| b.a))
    }
    fn derived_a(&self, d: &ValueSlot<v::RustDerived>) -> Result<i32, SystemException> {
        Ok(d.get().map_or(-1, |d| d.a))
    }
    fn make_base(&self, a: i32) -> Result<ValueSlot<v::Base>, SystemException> {
        Ok(ValueRef::new(v::Base::new(a)).into())
    }
}

/// `ValInterop::Anything` for the omniORB client: what arrived, by its
/// generated type.
struct AnythingServer;

impl v::Anything for AnythingServer {
    fn kind(&self, v: &ValueSlot<dyn ValueObject>) -> Result<String, SystemException> {
        let Some(x) = v.get() else {
            return Ok("null".into());
        };
        let x = x.clone().into_any_value();
        let x = match x.downcast::<v::Node>() {
            Ok(n) => return Ok(format!("Node {}", n.id)),
            Err(x) => x,
        };
        let x = match x.downcast::<v::Base>() {
            Ok(b) => return Ok(format!("Base {}", b.a)),
            Err(x) => x,
        };
        let x = match x.downcast::<v::StrBox>() {
            Ok(b) => return Ok(format!("StrBox {}", b.0)),
            Err(x) => x,
        };
        Ok(match x.downcast::<v::Bag>() {
            // Where the bag lists itself: the cycle the decoder closed.
            Ok(g) => {
                let me = ValueRef::as_ptr(&g).cast::<()>();
                let at = g.items.iter().position(|i| {
                    i.get()
                        .is_some_and(|i| ValueRef::as_ptr(i).cast::<()>() == me)
                });
                format!(
                    "Bag {} {} self {}",
                    g.name,
                    g.items.len(),
                    at.map_or(-1, |i| i as i64)
                )
            }
            Err(x) => match x.downcast::<v::GNode>() {
                Ok(g) => describe_gnode(&g),
                Err(_) => "other".into(),
            },
        })
    }
    fn echo_value(
        &self,
        v: &ValueSlot<dyn ValueObject>,
    ) -> Result<ValueSlot<dyn ValueObject>, SystemException> {
        Ok(v.clone())
    }
    fn same(
        &self,
        a: &ValueSlot<dyn ValueObject>,
        b: &ValueSlot<dyn ValueObject>,
    ) -> Result<(bool, ValueSlot<dyn ValueObject>), SystemException> {
        Ok((!a.is_null() && a == b, b.clone()))
    }
}

#[test]
fn omniorb_client_peregrine_server() {
    bounded(120, || {
        let p = peers();
        let orb = serving_orb();
        let s = Arc::new(v::ValuesSkeleton::new(Server));
        let root = orb.root_poa();
        let obj = root.servant_to_reference(&s).unwrap();
        let any: v::AnythingRef = root
            .servant_to_reference(&Arc::new(v::AnythingSkeleton::new(AnythingServer)))
            .unwrap();
        let mut args = vec![
            orb.object_to_string(obj.object()),
            orb.object_to_string(any.object()),
        ];
        args.extend(extra_args());
        let mut client = Peer::spawn("omniORB values_client", &p.values_client, &args);
        let status = client.finish(Duration::from_secs(90));
        let lines = client.lines().to_vec();
        let stderr = client.stderr();
        assert!(status.success(), "{status}: {lines:#?}\n{stderr}");
        let ok: Vec<&str> = lines.iter().filter_map(|l| l.strip_prefix("OK ")).collect();
        assert_eq!(
            ok,
            [
                "cycle",
                "sharing",
                "box",
                "null box",
                "truncated",
                "null base",
                "made",
                "valuebase kinds",
                "valuebase truncated",
                "valuebase echo",
                "valuebase shared",
                "valuebase bag cycle",
                "valuebase graph cycle"
            ],
            "{lines:#?}\n{stderr}"
        );
    });
}
