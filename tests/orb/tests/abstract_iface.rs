//! Abstract interfaces and abstract valuetypes through generated stubs
//! and skeletons over real TCP (`idl/abstract.idl`): a `Described` slot
//! holding an object reference, a value and nil, in both directions,
//! with its operations called on each (remotely on the reference, locally
//! on the value), through compiled (`Hub`) and table-driven (`Relay`)
//! stubs and skeletons; sequences and struct members of them;
//! polymorphic `Shape` values (one derived through the concrete
//! `Square`); a cycle through an abstract-typed member;
//! and input that a peer must refuse with `MARSHAL`.

use std::sync::{Arc, Mutex};

use peregrine_cdr::{ByteOrder, Reader, ValueRef, ValueSlot};
use peregrine_orb::{CompletionStatus, Orb, SystemException, SystemExceptionKind as K};
use peregrine_orb_tests::idl::abs::{
    cube, square, Circle, Cube, CubeOperations, Described, DescribedAbstract, Hub, HubRef,
    HubSkeleton, Knot, Label, Marker, Named, Pair, Relay, RelayRef, RelaySkeleton, Service,
    ServiceRef, ServiceSkeleton, Shape, Square, Tag,
};
use peregrine_orb_tests::{bounded, client};

type R<T> = Result<T, SystemException>;

// ---- the application's side ----

struct ServiceImpl;

impl Named for ServiceImpl {
    fn name(&self) -> R<String> {
        Ok("service".into())
    }
}

impl Described for ServiceImpl {
    fn describe(&self, depth: i32) -> R<String> {
        Ok(format!("service@{depth}"))
    }
}

impl Service for ServiceImpl {
    fn ping(&self, v: i32) -> R<i32> {
        Ok(v + 1)
    }
}

// `Label`, `Square` and `Circle` implement their operations in the
// crate that generates them (src/lib.rs).

/// Records what the last `inspect` saw.
#[derive(Default)]
struct HubImpl {
    seen: Mutex<Vec<String>>,
}

/// "ref:", "value:" or "nil", with `describe(1)` called on the instance
/// through the holder's `Described` implementation.
fn inspect(d: Option<&DescribedAbstract>) -> R<String> {
    Ok(match d {
        None => "nil".into(),
        Some(h) => {
            let kind = if h.object().is_some() { "ref" } else { "value" };
            format!("{kind}:{}", h.describe(1)?)
        }
    })
}

impl Hub for HubImpl {
    fn inspect(&self, d: Option<&DescribedAbstract>) -> R<String> {
        let s = inspect(d)?;
        self.seen.lock().unwrap().push(s.clone());
        Ok(s)
    }

    fn echo(
        &self,
        d: Option<&DescribedAbstract>,
    ) -> R<(Option<DescribedAbstract>, Option<DescribedAbstract>)> {
        Ok((d.cloned(), d.cloned()))
    }

    fn inspect_all(
        &self,
        ds: &[Option<DescribedAbstract>],
    ) -> R<(String, Vec<Option<DescribedAbstract>>)> {
        let parts: R<Vec<String>> = ds.iter().map(|d| inspect(d.as_ref())).collect();
        Ok((parts?.join(","), ds.to_vec()))
    }

    fn total_area(&self, shapes: &[ValueSlot<dyn Shape>]) -> R<(f64, Vec<ValueSlot<dyn Shape>>)> {
        let mut sum = 0.0;
        for s in shapes {
            if let Some(s) = s.get() {
                sum += s.area()?;
            }
        }
        Ok((sum, shapes.iter().rev().cloned().collect()))
    }

    fn echo_pair(&self, p: &Pair) -> R<Pair> {
        Ok(p.clone())
    }

    fn chain(&self, m: &ValueSlot<dyn Marker>) -> R<ValueSlot<dyn Marker>> {
        Ok(m.clone())
    }

    fn pick(&self, a: &ValueSlot<dyn Shape>, b: &mut ValueSlot<dyn Shape>) -> R<Picked> {
        let same = match (a.get(), b.get()) {
            (Some(a), Some(b)) => ValueRef::ptr_eq(a, b),
            _ => false,
        };
        let old = std::mem::replace(b, a.clone());
        Ok((a.clone(), a.clone(), old, same))
    }
}

/// `pick`'s result, `c`, `old` and `same`.
type Picked = (
    ValueSlot<dyn Shape>,
    ValueSlot<dyn Shape>,
    ValueSlot<dyn Shape>,
    bool,
);

/// `Relay` (interpreted) is `Hub`.
impl Relay for HubImpl {
    fn inspect(&self, d: Option<&DescribedAbstract>) -> R<String> {
        Hub::inspect(self, d)
    }
    fn echo(
        &self,
        d: Option<&DescribedAbstract>,
    ) -> R<(Option<DescribedAbstract>, Option<DescribedAbstract>)> {
        Hub::echo(self, d)
    }
    fn inspect_all(
        &self,
        ds: &[Option<DescribedAbstract>],
    ) -> R<(String, Vec<Option<DescribedAbstract>>)> {
        Hub::inspect_all(self, ds)
    }
    fn total_area(&self, shapes: &[ValueSlot<dyn Shape>]) -> R<(f64, Vec<ValueSlot<dyn Shape>>)> {
        Hub::total_area(self, shapes)
    }
    fn echo_pair(&self, p: &Pair) -> R<Pair> {
        Hub::echo_pair(self, p)
    }
    fn chain(&self, m: &ValueSlot<dyn Marker>) -> R<ValueSlot<dyn Marker>> {
        Hub::chain(self, m)
    }
    fn pick(&self, a: &ValueSlot<dyn Shape>, b: &mut ValueSlot<dyn Shape>) -> R<Picked> {
        Hub::pick(self, a, b)
    }
}

type Echoed = (Option<DescribedAbstract>, Option<DescribedAbstract>);

/// The operations `Hub` and `Relay` share, through either stub.
trait Calls {
    fn inspect(&self, d: Option<&DescribedAbstract>) -> R<String>;
    fn echo(&self, d: Option<&DescribedAbstract>) -> R<Echoed>;
    fn inspect_all(
        &self,
        ds: &[Option<DescribedAbstract>],
    ) -> R<(String, Vec<Option<DescribedAbstract>>)>;
    fn total_area(&self, shapes: &[ValueSlot<dyn Shape>]) -> R<(f64, Vec<ValueSlot<dyn Shape>>)>;
    fn echo_pair(&self, p: &Pair) -> R<Pair>;
    fn chain(&self, m: &ValueSlot<dyn Marker>) -> R<ValueSlot<dyn Marker>>;
    fn pick(&self, a: &ValueSlot<dyn Shape>, b: &mut ValueSlot<dyn Shape>) -> R<Picked>;
}

macro_rules! calls {
    ($t:ty) => {
        impl Calls for $t {
            fn inspect(&self, d: Option<&DescribedAbstract>) -> R<String> {
                <$t>::inspect(self, d)
            }
            fn echo(&self, d: Option<&DescribedAbstract>) -> R<Echoed> {
                <$t>::echo(self, d)
            }
            fn inspect_all(
                &self,
                ds: &[Option<DescribedAbstract>],
            ) -> R<(String, Vec<Option<DescribedAbstract>>)> {
                <$t>::inspect_all(self, ds)
            }
            fn total_area(
                &self,
                shapes: &[ValueSlot<dyn Shape>],
            ) -> R<(f64, Vec<ValueSlot<dyn Shape>>)> {
                <$t>::total_area(self, shapes)
            }
            fn echo_pair(&self, p: &Pair) -> R<Pair> {
                <$t>::echo_pair(self, p)
            }
            fn chain(&self, m: &ValueSlot<dyn Marker>) -> R<ValueSlot<dyn Marker>> {
                <$t>::chain(self, m)
            }
            fn pick(&self, a: &ValueSlot<dyn Shape>, b: &mut ValueSlot<dyn Shape>) -> R<Picked> {
                <$t>::pick(self, a, b)
            }
        }
    };
}
calls!(HubRef);
calls!(RelayRef);

struct Setup {
    _server: Orb,
    client: Orb,
    hub: HubRef,
    /// The same operations, table-driven.
    relay: RelayRef,
    /// A table-driven stub calling the compiled skeleton (`hub`'s object).
    relay_to_hub: RelayRef,
    /// A compiled stub calling the table-driven skeleton (`relay`'s
    /// object).
    hub_to_relay: HubRef,
    /// The server's `Service`, as the client sees it.
    service: ServiceRef,
}

impl Setup {
    /// Every pairing of stub and skeleton forms: compiled, table-driven,
    /// table-driven stub to compiled skeleton, and the reverse.
    fn stubs(&self) -> [&dyn Calls; 4] {
        [
            &self.hub,
            &self.relay,
            &self.relay_to_hub,
            &self.hub_to_relay,
        ]
    }
}

fn setup() -> Setup {
    let server = Orb::builder().listen("127.0.0.1", 0).build().unwrap();
    let root = server.root_poa();
    root.manager().activate().unwrap();
    let hub: HubRef = root
        .servant_to_reference(&Arc::new(HubSkeleton::new(HubImpl::default())))
        .unwrap();
    let relay: RelayRef = root
        .servant_to_reference(&Arc::new(RelaySkeleton::new(HubImpl::default())))
        .unwrap();
    let service: ServiceRef = root
        .servant_to_reference(&Arc::new(ServiceSkeleton::new(ServiceImpl)))
        .unwrap();
    let client = client();
    let hub = HubRef::unchecked_narrow(client.string_to_object(&hub.object().to_string()).unwrap());
    let relay = RelayRef::unchecked_narrow(
        client
            .string_to_object(&relay.object().to_string())
            .unwrap(),
    );
    let service = ServiceRef::unchecked_narrow(
        client
            .string_to_object(&service.object().to_string())
            .unwrap(),
    );
    let relay_to_hub = RelayRef::unchecked_narrow(hub.object().clone());
    let hub_to_relay = HubRef::unchecked_narrow(relay.object().clone());
    Setup {
        _server: server,
        client,
        hub,
        relay,
        relay_to_hub,
        hub_to_relay,
        service,
    }
}

fn label(text: &str) -> ValueRef<Label> {
    ValueRef::new(Label::new(text.into()))
}

/// The `Label` a holder's value is.
fn as_label(h: &DescribedAbstract) -> ValueRef<Label> {
    h.value()
        .expect("a value")
        .clone()
        .into_any_value()
        .downcast::<Label>()
        .expect("a Label")
}

#[test]
fn reference_value_and_nil_reach_the_servant() {
    bounded(30, || {
        let s = setup();
        for hub in [&s.hub as &dyn Calls, &s.relay] {
            reach_the_servant(&s, hub);
        }
    });
}

fn reach_the_servant(s: &Setup, hub: &dyn Calls) {
    let by_ref = DescribedAbstract::from(s.service.clone());
    let by_value = DescribedAbstract::from(label("hello"));
    // The servant calls `describe` remotely on the reference and locally
    // on the value it received.
    assert_eq!(hub.inspect(Some(&by_ref)).unwrap(), "ref:service@1");
    assert_eq!(hub.inspect(Some(&by_value)).unwrap(), "value:label hello@1");
    assert_eq!(hub.inspect(None).unwrap(), "nil");
    // A concrete interface's reference converts to the holder of each
    // abstract base.
    assert_eq!(
        hub.inspect(Some(&s.service.clone().into())).unwrap(),
        "ref:service@1"
    );
}

#[test]
fn reference_value_and_nil_come_back() {
    bounded(30, || {
        let s = setup();
        for hub in [&s.hub as &dyn Calls, &s.relay] {
            come_back(&s, hub);
        }
    });
}

fn come_back(s: &Setup, hub: &dyn Calls) {
    {
        // A reference comes back as a reference: `describe` is a remote
        // call, `name` (inherited from `Named`) too.
        let (ret, again) = hub
            .echo(Some(&DescribedAbstract::from(s.service.clone())))
            .unwrap();
        let ret = ret.expect("not nil");
        assert!(ret.object().is_some());
        assert_eq!(ret.describe(2).unwrap(), "service@2");
        assert_eq!(ret.name().unwrap(), "service");
        assert_eq!(Some(&ret), again.as_ref());
        let obj = ret.object().unwrap().clone();
        assert_eq!(
            ServiceRef::unchecked_narrow(obj.object().clone())
                .ping(41)
                .unwrap(),
            42
        );

        // A value comes back as a copy, its operations local.
        let (ret, again) = hub
            .echo(Some(&DescribedAbstract::from(label("there"))))
            .unwrap();
        let ret = ret.expect("not nil");
        assert!(ret.value().is_some());
        assert_eq!(ret.describe(3).unwrap(), "label there@3");
        assert_eq!(as_label(&ret).text, "there");
        // Written once in the reply, read once: the same value twice.
        assert_eq!(Some(&ret), again.as_ref());

        let (ret, again) = hub.echo(None).unwrap();
        assert!(ret.is_none() && again.is_none());
    }
}

#[test]
fn sequences_and_struct_members_of_abstract_types() {
    bounded(30, || {
        let s = setup();
        for hub in [&s.hub as &dyn Calls, &s.relay] {
            sequence_of_described(&s, hub);
        }
        for hub in s.stubs() {
            sequence_of_shapes(hub);
            derived_from_a_concrete_base(hub);
            struct_member(&s, hub);
        }
    });
}

/// A `sequence<Shape>`: a square twice (shared), a circle, null.
fn sequence_of_shapes(hub: &dyn Calls) {
    let sq: ValueRef<dyn Shape> = ValueRef::new(Square::new(2.0)).upcast();
    let shapes = vec![
        ValueSlot::new(sq.clone()),
        ValueSlot::new(ValueRef::new(Circle::new(1.0)).upcast()),
        ValueSlot::null(),
        ValueSlot::new(sq),
    ];
    let (total, reversed) = hub.total_area(&shapes).unwrap();
    assert_eq!(total, 8.0 + std::f64::consts::PI);
    assert!(reversed[1].is_null());
    assert_eq!(reversed[0], reversed[3]);
    // Each element came back as its own concrete type.
    let any = |v: &ValueSlot<dyn Shape>| v.get().unwrap().clone().into_any_value();
    assert!(any(&reversed[0]).downcast::<Square>().is_ok());
    assert!(any(&reversed[2]).downcast::<Circle>().is_ok());
}

/// A `Cube` (derived from the concrete `Square`, itself a `Shape`) where
/// a `Shape` is expected: the servant's `area()` runs the cube's own
/// operation, and it comes back a `Cube`, usable as a `Square`.
fn derived_from_a_concrete_base(hub: &dyn Calls) {
    let shapes = vec![
        ValueSlot::new(ValueRef::new(Cube::new(1.0, 2.0)).upcast()),
        ValueSlot::new(ValueRef::new(Square::new(2.0)).upcast()),
    ];
    let (total, reversed) = hub.total_area(&shapes).unwrap();
    // The cube's surface (10), not a 1x1 square's area, plus 4.
    assert_eq!(total, 14.0);
    let cube = reversed[1].get().unwrap().clone().into_any_value();
    let as_square = square::as_operations(cube.clone()).expect("a Cube is a Square");
    assert_eq!(as_square.area().unwrap(), 10.0);
    let cube = cube.downcast::<Cube>().expect("a Cube");
    assert_eq!(cube.volume().unwrap(), 2.0);
    // A square is no cube.
    let sq = reversed[0].get().unwrap().clone().into_any_value();
    assert!(cube::as_operations(sq).is_none());
}

/// A struct holding an abstract interface and an abstract valuetype.
fn struct_member(s: &Setup, hub: &dyn Calls) {
    let p = Pair {
        first: Some(s.service.clone().into()),
        second: ValueSlot::new(ValueRef::new(Circle::new(2.0)).upcast()),
    };
    let back = hub.echo_pair(&p).unwrap();
    assert_eq!(back.first.unwrap().describe(5).unwrap(), "service@5");
    assert_eq!(
        back.second.get().unwrap().area().unwrap(),
        4.0 * std::f64::consts::PI
    );
}

#[test]
fn abstract_values_as_in_inout_out_and_result() {
    bounded(30, || {
        let s = setup();
        for hub in s.stubs() {
            in_inout_out_and_result(hub);
        }
    });
}

fn in_inout_out_and_result(hub: &dyn Calls) {
    let any = |v: &ValueSlot<dyn Shape>| v.get().unwrap().clone().into_any_value();
    let addr = |v: &ValueSlot<dyn Shape>| ValueRef::as_ptr(v.get().unwrap()).cast::<()>();
    // One value as `a` and `b`: written once in the request, so the
    // servant sees one value.
    let sq: ValueRef<dyn Shape> = ValueRef::new(Square::new(3.0)).upcast();
    let mut b = ValueSlot::new(sq.clone());
    let (ret, c, old, same) = hub.pick(&ValueSlot::new(sq), &mut b).unwrap();
    assert!(same, "a and b arrived as one value");
    // `a` comes back three times (result, `b`, `c`), written once in
    // the reply: one value here, a `Square`.
    assert_eq!(addr(&ret), addr(&b));
    assert_eq!(addr(&ret), addr(&c));
    assert_eq!(any(&ret).downcast::<Square>().unwrap().side, 3.0);
    assert_eq!(ret.get().unwrap().area().unwrap(), 9.0);
    // The old `b` was the same value as `a` on the servant's side too.
    assert_eq!(addr(&old), addr(&ret));

    // Two values of different types: each keeps its own.
    let mut b = ValueSlot::new(ValueRef::new(Circle::new(1.0)).upcast());
    let a = ValueSlot::new(ValueRef::new(Square::new(2.0)).upcast());
    let (ret, c, old, same) = hub.pick(&a, &mut b).unwrap();
    assert!(!same);
    assert!(any(&ret).downcast::<Square>().is_ok());
    assert!(any(&b).downcast::<Square>().is_ok());
    assert_eq!(addr(&c), addr(&b));
    assert!(any(&old).downcast::<Circle>().is_ok());
    assert_ne!(addr(&old), addr(&ret));

    // Null in and out.
    let mut b = ValueSlot::null();
    let (ret, c, old, same) = hub.pick(&ValueSlot::null(), &mut b).unwrap();
    assert!(!same);
    assert!(ret.is_null() && b.is_null() && c.is_null() && old.is_null());
}

/// A sequence of `Described`: a reference, a value twice (shared), nil.
fn sequence_of_described(s: &Setup, hub: &dyn Calls) {
    let shared = DescribedAbstract::from(label("twice"));
    let ds = vec![
        Some(DescribedAbstract::from(s.service.clone())),
        Some(shared.clone()),
        None,
        Some(shared.clone()),
    ];
    let (text, back) = hub.inspect_all(&ds).unwrap();
    assert_eq!(
        text,
        "ref:service@1,value:label twice@1,nil,value:label twice@1"
    );
    assert_eq!(back.len(), 4);
    assert!(back[0].as_ref().unwrap().object().is_some());
    assert!(back[2].is_none());
    // Sharing survives both trips: one value, in two places.
    assert_eq!(back[1], back[3]);
    assert_eq!(as_label(back[1].as_ref().unwrap()).text, "twice");
}

#[test]
fn cycle_through_an_abstract_member() {
    bounded(30, || {
        let s = setup();
        // a -> b -> a, where `next` is of abstract type `Marker`.
        let a = ValueRef::new(Tag::new("a".into(), ValueSlot::null()));
        let b: ValueRef<dyn Marker> =
            ValueRef::new(Tag::new("b".into(), ValueSlot::new(a.clone().upcast()))).upcast();
        a.next.set(b).map_err(|_| ()).unwrap();
        let tag = |m: &ValueRef<dyn Marker>| m.clone().into_any_value().downcast::<Tag>().unwrap();
        for hub in s.stubs() {
            let back = hub.chain(&ValueSlot::new(a.clone().upcast())).unwrap();
            let a2 = tag(back.get().unwrap());
            let b2 = tag(a2.next.get().unwrap());
            let a3 = tag(b2.next.get().unwrap());
            assert_eq!((a2.text.as_str(), b2.text.as_str()), ("a", "b"));
            assert!(ValueRef::ptr_eq(&a2, &a3), "the cycle is closed");
            // The graph received, sent again: the cycle again.
            let again = hub.chain(&back).unwrap();
            let a4 = tag(again.get().unwrap());
            let b4 = tag(a4.next.get().unwrap());
            assert_eq!((a4.text.as_str(), b4.text.as_str()), ("a", "b"));
            assert!(ValueRef::ptr_eq(&a4, &tag(b4.next.get().unwrap())));
        }
    });
}

#[test]
fn cycle_through_an_abstract_sequence() {
    bounded(30, || {
        let s = setup();
        // a -> k (`Marker next`), k's ties (a `sequence<Marker>`) are a
        // and k itself: sent from a, both back edges are elements read
        // while their targets are still being decoded.
        let a = ValueRef::new(Tag::new("a".into(), ValueSlot::null()));
        let k = ValueRef::new(Knot::new(
            "k".into(),
            vec![ValueSlot::null(), ValueSlot::null(), ValueSlot::null()],
        ));
        a.next.set(k.clone().upcast()).map_err(|_| ()).unwrap();
        k.ties[0].set(a.clone().upcast()).map_err(|_| ()).unwrap();
        k.ties[1].set(k.clone().upcast()).map_err(|_| ()).unwrap();
        let tag = |m: &ValueRef<dyn Marker>| m.clone().into_any_value().downcast::<Tag>().unwrap();
        let knot =
            |m: &ValueRef<dyn Marker>| m.clone().into_any_value().downcast::<Knot>().unwrap();
        let addr = |m: &ValueRef<dyn Marker>| ValueRef::as_ptr(m).cast::<()>();
        for hub in s.stubs() {
            let back = hub.chain(&ValueSlot::new(a.clone().upcast())).unwrap();
            let a2 = tag(back.get().unwrap());
            let k2 = knot(a2.next.get().unwrap());
            assert_eq!((a2.text.as_str(), k2.text.as_str()), ("a", "k"));
            assert_eq!(
                addr(k2.ties[0].get().unwrap()),
                ValueRef::as_ptr(&a2).cast()
            );
            assert_eq!(
                addr(k2.ties[1].get().unwrap()),
                ValueRef::as_ptr(&k2).cast()
            );
            assert!(k2.ties[2].is_null());
        }
    });
}

/// The abstract valuetype operations of the table-driven interface are
/// table-driven: their operation tables exist (this does not build if
/// they fall back to compiled code), and their descriptors say so.
#[test]
fn abstract_value_operations_of_the_table_driven_interface_are_tables() {
    use peregrine_orb::interp::{Kind, Mode};
    use peregrine_orb_tests::idl::abs::relay;
    let pick = &relay::OP_PICK;
    assert_eq!(pick.name, "pick");
    let modes: Vec<Mode> = pick.params.iter().map(|p| p.mode).collect();
    assert_eq!(
        modes,
        [Mode::In, Mode::InOut, Mode::Out, Mode::Out, Mode::Out]
    );
    assert!(matches!(pick.result.unwrap().kind, Kind::AbstractValue));
    assert_eq!(pick.params[0].ty.idl, "::Abs::Shape");
    assert!(matches!(
        relay::OP_CHAIN.result.unwrap().kind,
        Kind::AbstractValue
    ));
    assert!(matches!(
        relay::OP_TOTAL_AREA.params[0].ty.kind,
        Kind::Sequence(u32::MAX, e) if matches!(e.kind, Kind::AbstractValue)
    ));
    assert_eq!(relay::OP_ECHO_PAIR.params[0].ty.idl, "::Abs::Pair");
}

/// The table-driven skeleton refuses a value of a type that is not a
/// `Shape` where one is expected: no factory (`MARSHAL`, OMG minor 1).
#[test]
fn table_driven_skeleton_refuses_a_foreign_value() {
    bounded(30, || {
        let s = setup();
        let e = s
            .relay
            .object()
            .invoke::<(), SystemException>(
                "chain",
                |w: &mut peregrine_cdr::Writer| {
                    // A `Square` (a `Shape`, not a `Marker`).
                    peregrine_cdr::write_value(w, Some(&ValueRef::new(Square::new(1.0))))
                },
                |_: &mut Reader<'_>| Ok(()),
                |_: &str, _: &mut Reader<'_>| None::<peregrine_cdr::Result<SystemException>>,
            )
            .unwrap_err();
        assert_eq!(e.kind, K::Marshal);
        assert_eq!(e.minor, peregrine_giop::system_exception::minor::omg(1));
    });
}

/// The hub's `inspect` called with raw argument bytes.
fn raw_inspect(s: &Setup, args: impl Fn(&mut peregrine_cdr::Writer)) -> SystemException {
    s.hub
        .object()
        .invoke::<String, SystemException>(
            "inspect",
            |w: &mut peregrine_cdr::Writer| {
                args(w);
                Ok(())
            },
            |r: &mut Reader<'_>| r.read_string(),
            |_: &str, _: &mut Reader<'_>| None::<peregrine_cdr::Result<SystemException>>,
        )
        .unwrap_err()
}

#[test]
fn bad_discriminator_and_foreign_value_are_marshal() {
    bounded(30, || {
        let s = setup();
        // A discriminator other than 0 or 1: Peregrine's minor code for
        // it (the OMG's table has none).
        for d in [2, 0xff] {
            let e = raw_inspect(&s, |w| w.write_u8(d));
            assert_eq!(
                (e.kind, e.minor, e.completed),
                (
                    K::Marshal,
                    peregrine_giop::system_exception::minor::MARSHAL_INVALID_BOOLEAN,
                    CompletionStatus::No
                )
            );
        }
        // A value of a type that does not support `Described`: no factory
        // (OMG minor 1).
        let e = raw_inspect(&s, |w| {
            w.write_bool(false);
            peregrine_cdr::write_value(w, Some(&ValueRef::new(Square::new(1.0)))).unwrap();
        });
        assert_eq!(e.kind, K::Marshal);
        assert_eq!(e.minor, peregrine_giop::system_exception::minor::omg(1));
        // The same, decoded here.
        let orb = &s.client;
        let e = DescribedAbstract::decode_opt(&mut Reader::new(&[7], ByteOrder::Big), orb);
        assert_eq!(e.err(), Some(peregrine_cdr::CdrError::InvalidBoolean(7)));
    });
}

#[test]
fn holder_in_an_any_through_the_dynamic_layer() {
    bounded(30, || {
        let s = setup();
        // A reference inside: the Any's TypeCode is the abstract
        // interface's, and the instance comes back out as a reference.
        let held = DescribedAbstract::from(s.service.clone());
        let any = peregrine_dynamic::Any::insert(&held);
        assert_eq!(any.tc.kind(), peregrine_dynamic::TcKind::AbstractInterface);
        assert_eq!(any.tc.id().unwrap(), "IDL:Abs/Described:1.0");
        let back = DescribedAbstract::from_any_in(&any, &s.client)
            .expect("a Described")
            .expect("not nil");
        assert_eq!(back, held);
        assert_eq!(back.describe(4).unwrap(), "service@4");
        // Another type's Any is not a Described.
        let other = peregrine_dynamic::Any::insert(&7i32);
        assert!(DescribedAbstract::from_any_in(&other, &s.client).is_none());
    });
}

/// Reads a value of a type this program has no generated code for as a
/// `Square` (what a factory for a derived type from a newer IDL does).
struct FancySquareFactory;

impl peregrine_cdr::ValueFactory for FancySquareFactory {
    fn read_state(
        &self,
        r: &mut Reader<'_>,
        _info: &peregrine_cdr::ValueInfo<'_>,
    ) -> peregrine_cdr::Result<peregrine_cdr::AnyValue> {
        let side = r.read_f64()?;
        Ok(ValueRef::into_any(r.new_value(Square::new(side))))
    }
}

#[test]
fn a_registered_factory_fills_an_abstract_slot() {
    bounded(30, || {
        let s = setup();
        const FANCY: &str = "IDL:Abs/FancySquare:1.0";
        // `shapes` of `total_area`: one value whose header names a type
        // no generated code knows, with a Square's state.
        let call = |s: &Setup| {
            s.hub.object().invoke::<f64, SystemException>(
                "total_area",
                |w: &mut peregrine_cdr::Writer| {
                    w.write_u32(1);
                    let v = Arc::new(3.0f64);
                    w.write_value(Arc::as_ptr(&v).cast(), &[FANCY], false, |w| {
                        w.write_f64(*v);
                        Ok(())
                    })
                },
                |r: &mut Reader<'_>| r.read_f64(),
                |_: &str, _: &mut Reader<'_>| None::<peregrine_cdr::Result<SystemException>>,
            )
        };
        // Without a factory: MARSHAL, no value factory.
        let e = call(&s).unwrap_err();
        assert_eq!(
            (e.kind, e.minor),
            (K::Marshal, peregrine_giop::system_exception::minor::omg(1))
        );
        // With one, the value it makes (a Shape) fills the slot.
        s.client
            .register_value_factory(FANCY, Arc::new(FancySquareFactory));
        let area = call(&s);
        s.client.unregister_value_factory(FANCY);
        assert_eq!(area.unwrap(), 9.0);
    });
}
