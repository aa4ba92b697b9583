//! `ValueBase` through generated stubs and skeletons over real TCP
//! (`idl/value_base.idl`): values of two valuetypes, a value box and nil
//! in one kind of slot, both ways; one value passed twice in a request
//! arriving as one value (and going back as one); sequences, struct
//! members and cycles through a `ValueBase` state member and through
//! `sequence<ValueBase>` and `ValueBase[2]` ones; the table-driven interface (whose
//! `ValueBase` operations are table-driven); a chunked value of an unknown type cut down to
//! a known base listed in its header; an unknown type refused with
//! `MARSHAL` minor 1 (no value factory); a DSI servant, which reads the
//! values through registered TypeCodes, called by the generated stub; and
//! `ValueBase` holders into and out of an `Any`.

use std::sync::Arc;

use peregrine_cdr::{Reader, ValueObject, ValueRef, ValueSlot, Writer};
use peregrine_dynamic::valuetype::lookup_value_type;
use peregrine_dynamic::{Any, DynValue, TypeCode, ValueNode};
use peregrine_giop::system_exception::minor::MARSHAL_NO_VALUE_FACTORY;
use peregrine_orb::{
    CompletionStatus, DynServerRequest, DynamicImplementation, DynamicServant, NVList, Orb,
    Servant, SystemException, SystemExceptionKind as K,
};
use peregrine_orb_tests::idl::any_values::{
    keeper_table, tc_name, tc_point, tc_text, values_from_any, values_to_any, Bag, Keeper,
    KeeperRef, KeeperSkeleton, KeeperTable, KeeperTableRef, KeeperTableSkeleton, Name, Point,
    Tagged, Text,
};
use peregrine_orb_tests::{bounded, client};

type R<T> = Result<T, SystemException>;
type Vb = ValueSlot<dyn ValueObject>;

fn slot<T: ValueObject>(v: &ValueRef<T>) -> Vb {
    ValueSlot::new(ValueRef::map(v.clone(), |v| v as &dyn ValueObject))
}

/// "Point(x,y)", "Text(s)", "Name(s)", "nil" or "other".
fn describe(v: &Vb) -> String {
    let Some(v) = v.get() else {
        return "nil".into();
    };
    let v = v.clone().into_any_value();
    let v = match v.downcast::<Point>() {
        Ok(p) => return format!("Point({},{})", p.x, p.y),
        Err(v) => v,
    };
    let v = match v.downcast::<Text>() {
        Ok(t) => return format!("Text({})", t.s),
        Err(v) => v,
    };
    match v.downcast::<Name>() {
        Ok(n) => format!("Name({})", n.0),
        Err(_) => "other".into(),
    }
}

fn same(a: &Vb, b: &Vb) -> bool {
    match (a.get(), b.get()) {
        (Some(a), Some(b)) => ValueRef::ptr_eq(a, b),
        _ => false,
    }
}

struct KeeperImpl;

impl Keeper for KeeperImpl {
    fn describe(&self, v: &Vb) -> R<String> {
        Ok(describe(v))
    }

    fn echo(&self, v: &Vb, io: &mut Vb) -> R<(Vb, Vb)> {
        *io = v.clone();
        Ok((v.clone(), v.clone()))
    }

    fn same(&self, a: &Vb, b: &Vb) -> R<(bool, Vb, Vb)> {
        Ok((same(a, b), a.clone(), b.clone()))
    }

    fn describe_all(&self, vs: &[Vb]) -> R<(String, Vec<Vb>)> {
        let text: Vec<String> = vs.iter().map(describe).collect();
        Ok((text.join(","), vs.to_vec()))
    }

    fn echo_tagged(&self, t: &Tagged) -> R<Tagged> {
        Ok(Tagged {
            tag: format!("{}:{}", t.tag, describe(&t.v)),
            v: t.v.clone(),
        })
    }
}

impl KeeperTable for KeeperImpl {
    fn describe(&self, v: &Vb) -> R<String> {
        Keeper::describe(self, v)
    }

    fn echo(&self, v: &Vb, io: &mut Vb) -> R<(Vb, Vb)> {
        Keeper::echo(self, v, io)
    }

    fn describe_all(&self, vs: &[Vb]) -> R<(String, Vec<Vb>)> {
        Keeper::describe_all(self, vs)
    }
}

/// The operations `Keeper` and `KeeperTable` share, through either stub.
trait Calls {
    fn describe(&self, v: &Vb) -> R<String>;
    fn echo(&self, v: &Vb, io: &mut Vb) -> R<(Vb, Vb)>;
    fn describe_all(&self, vs: &[Vb]) -> R<(String, Vec<Vb>)>;
}

macro_rules! calls {
    ($t:ty) => {
        impl Calls for $t {
            fn describe(&self, v: &Vb) -> R<String> {
                <$t>::describe(self, v)
            }
            fn echo(&self, v: &Vb, io: &mut Vb) -> R<(Vb, Vb)> {
                <$t>::echo(self, v, io)
            }
            fn describe_all(&self, vs: &[Vb]) -> R<(String, Vec<Vb>)> {
                <$t>::describe_all(self, vs)
            }
        }
    };
}
calls!(KeeperRef);
calls!(KeeperTableRef);

struct Setup {
    _server: Orb,
    client: Orb,
    keeper: KeeperRef,
    table: KeeperTableRef,
}

fn setup() -> Setup {
    let server = Orb::builder().listen("127.0.0.1", 0).build().unwrap();
    let root = server.root_poa();
    root.manager().activate().unwrap();
    let keeper: KeeperRef = root
        .servant_to_reference(&Arc::new(KeeperSkeleton::new(KeeperImpl)))
        .unwrap();
    let table: KeeperTableRef = root
        .servant_to_reference(&Arc::new(KeeperTableSkeleton::new(KeeperImpl)))
        .unwrap();
    let client = client();
    let keeper = KeeperRef::unchecked_narrow(
        client
            .string_to_object(&keeper.object().to_string())
            .unwrap(),
    );
    let table = KeeperTableRef::unchecked_narrow(
        client
            .string_to_object(&table.object().to_string())
            .unwrap(),
    );
    Setup {
        _server: server,
        client,
        keeper,
        table,
    }
}

fn point(x: i32, y: i32) -> ValueRef<Point> {
    ValueRef::new(Point::new(x, y))
}

fn text(s: &str) -> ValueRef<Text> {
    ValueRef::new(Text::new(s.into(), ValueSlot::null()))
}

#[test]
fn values_of_any_type_and_nil_go_and_come_back() {
    bounded(30, || {
        let s = setup();
        for k in [&s.keeper as &dyn Calls, &s.table] {
            let cases = [
                (slot(&point(1, 2)), "Point(1,2)"),
                (slot(&text("hi")), "Text(hi)"),
                (slot(&ValueRef::new(Name("box".into()))), "Name(box)"),
                (ValueSlot::null(), "nil"),
            ];
            for (v, want) in &cases {
                assert_eq!(k.describe(v).unwrap(), *want);
                let mut io = slot(&point(9, 9));
                let (ret, again) = k.echo(v, &mut io).unwrap();
                // Each comes back as its own type; written once in the
                // reply, read once: the result, `again` and `io` are one
                // value.
                assert_eq!(describe(&ret), *want);
                assert_eq!(describe(&io), *want);
                assert_eq!(ret, again);
                assert_eq!(ret, io);
                assert_eq!(ret.is_null(), v.is_null());
            }
        }
    });
}

#[test]
fn one_value_passed_twice_arrives_shared() {
    bounded(30, || {
        let s = setup();
        let p = slot(&point(3, 4));
        let (shared, a2, b2) = s.keeper.same(&p, &p.clone()).unwrap();
        assert!(shared, "the servant saw one value");
        assert!(same(&a2, &b2), "one value in the reply");
        assert_eq!(describe(&a2), "Point(3,4)");
        // Two equal values stay two.
        let (shared, a2, b2) = s.keeper.same(&p, &slot(&point(3, 4))).unwrap();
        assert!(!shared);
        assert!(!same(&a2, &b2));
        // A sequence with one value twice, of different types, and nil.
        let t = slot(&text("t"));
        let vs = vec![t.clone(), p.clone(), ValueSlot::null(), t];
        let (desc, back) = s.keeper.describe_all(&vs).unwrap();
        assert_eq!(desc, "Text(t),Point(3,4),nil,Text(t)");
        assert_eq!(back.len(), 4);
        assert!(same(&back[0], &back[3]));
        assert!(!same(&back[0], &back[1]));
        assert!(back[2].is_null());
        // A struct member.
        let got = s
            .keeper
            .echo_tagged(&Tagged {
                tag: "m".into(),
                v: slot(&ValueRef::new(Name("n".into()))),
            })
            .unwrap();
        assert_eq!(got.tag, "m:Name(n)");
        assert_eq!(describe(&got.v), "Name(n)");
    });
}

#[test]
fn cycle_through_a_value_base_member() {
    bounded(30, || {
        let s = setup();
        // a -> b -> a, through `next` (a `ValueBase`).
        let a = text("a");
        let b = ValueRef::new(Text::new("b".into(), slot(&a)));
        a.next.set(b.upcast()).map_err(|_| ()).unwrap();
        let mut io = ValueSlot::null();
        let (back, _) = s.keeper.echo(&slot(&a), &mut io).unwrap();
        let as_text = |v: &Vb| {
            v.get()
                .expect("a value")
                .clone()
                .into_any_value()
                .downcast::<Text>()
                .expect("a Text")
        };
        let a2 = as_text(&back);
        let b2 = as_text(&a2.next);
        let a3 = as_text(&b2.next);
        assert_eq!((a2.s.as_str(), b2.s.as_str()), ("a", "b"));
        assert!(ValueRef::ptr_eq(&a2, &a3), "the cycle is closed");
    });
}

/// The data address of a value (the identity the wire keeps), whatever
/// the pointer's type.
fn addr<T: ?Sized>(v: &ValueRef<T>) -> *const () {
    ValueRef::as_ptr(v).cast()
}

fn as_bag(v: &Vb) -> ValueRef<Bag> {
    v.get()
        .expect("a value")
        .clone()
        .into_any_value()
        .downcast::<Bag>()
        .expect("a Bag")
}

fn as_text(v: &Vb) -> ValueRef<Text> {
    v.get()
        .expect("a value")
        .clone()
        .into_any_value()
        .downcast::<Text>()
        .expect("a Text")
}

#[test]
fn cycle_through_a_value_base_sequence() {
    bounded(30, || {
        let s = setup();
        // `child.next` is the bag, whose items are the child, the bag
        // itself and a point. Sent from the child: the child's and the
        // bag's indirections close cycles inside `items`, read while
        // both values are still being decoded.
        let bag = ValueRef::new(Bag::new(
            "bag".into(),
            vec![ValueSlot::null(), ValueSlot::null(), slot(&point(7, 8))],
            [ValueSlot::null(), ValueSlot::null()],
        ));
        let child = ValueRef::new(Text::new("child".into(), slot(&bag)));
        // `ends`, an array, holds the child and the bag as well.
        for slots in [&bag.items[..2], &bag.ends[..]] {
            slots[0]
                .set(child.clone().upcast())
                .map_err(|_| ())
                .unwrap();
            slots[1].set(bag.clone().upcast()).map_err(|_| ()).unwrap();
        }
        let check = |v: &Vb| {
            let child2 = as_text(v);
            let bag2 = as_bag(&child2.next);
            assert_eq!((child2.s.as_str(), bag2.name.as_str()), ("child", "bag"));
            assert_eq!(bag2.items.len(), 3);
            assert_eq!(addr(bag2.items[0].get().unwrap()), addr(&child2));
            assert_eq!(addr(bag2.items[1].get().unwrap()), addr(&bag2));
            assert_eq!(describe(&bag2.items[2]), "Point(7,8)");
            assert_eq!(addr(bag2.ends[0].get().unwrap()), addr(&child2));
            assert_eq!(addr(bag2.ends[1].get().unwrap()), addr(&bag2));
        };
        // Through the compiled and the table-driven interface.
        for k in [&s.keeper as &dyn Calls, &s.table] {
            let mut io = ValueSlot::null();
            let (back, again) = k.echo(&slot(&child), &mut io).unwrap();
            check(&back);
            assert_eq!(back, again);
            assert_eq!(back, io);
            // The bag first, in a sequence: the cycle closes within it.
            let (desc, all) = k.describe_all(&[slot(&bag), slot(&child)]).unwrap();
            assert_eq!(desc, "other,Text(child)");
            check(&all[1]);
            assert_eq!(
                addr(all[0].get().unwrap()),
                addr(&as_bag(&as_text(&all[1]).next))
            );
        }
    });
}

/// The `ValueBase` operations of the table-driven interface are
/// table-driven: their operation tables exist (this does not build if
/// they fall back to compiled code), and their `ValueBase` descriptors
/// carry the generated reader.
#[test]
fn value_base_operations_of_the_table_driven_interface_are_tables() {
    use peregrine_orb::interp::{Kind, Mode};
    let echo = &keeper_table::OP_ECHO;
    assert_eq!(echo.name, "echo");
    let modes: Vec<Mode> = echo.params.iter().map(|p| p.mode).collect();
    assert_eq!(modes, [Mode::In, Mode::InOut, Mode::Out]);
    assert!(matches!(echo.result.unwrap().kind, Kind::ValueBase(_)));
    assert!(matches!(
        keeper_table::OP_DESCRIBE_ALL.params[0].ty.kind,
        Kind::Sequence(u32::MAX, e) if matches!(e.kind, Kind::ValueBase(_))
    ));
    assert_eq!(keeper_table::OP_DESCRIBE.params[0].ty.idl, "ValueBase");
}

/// `describe` called with raw argument bytes.
fn raw_describe(k: &KeeperRef, args: impl Fn(&mut Writer)) -> R<String> {
    k.object().invoke::<String, SystemException>(
        "describe",
        |w: &mut Writer| {
            args(w);
            Ok(())
        },
        |r: &mut Reader<'_>| r.read_string(),
        |_: &str, _: &mut Reader<'_>| None::<peregrine_cdr::Result<SystemException>>,
    )
}

#[test]
fn unknown_types_are_truncated_to_a_listed_base_or_refused() {
    bounded(30, || {
        let s = setup();
        // A chunked value of a type the server does not know, listing
        // `Point` among its bases: read as a `Point`, the rest skipped.
        let state = |w: &mut Writer| {
            w.write_i32(5);
            w.write_i32(6);
            w.write_string("more state")
        };
        let marker = 1u8;
        let got = raw_describe(&s.keeper, |w| {
            w.write_value(
                (&marker as *const u8).cast(),
                &["IDL:AnyValues/Point3:1.0", Point::REPOSITORY_ID],
                true,
                state,
            )
            .unwrap();
        })
        .unwrap();
        assert_eq!(got, "Point(5,6)");
        // Unchunked, the state cannot be cut down: no value factory.
        let e = raw_describe(&s.keeper, |w| {
            w.write_value(
                (&marker as *const u8).cast(),
                &["IDL:AnyValues/Point3:1.0", Point::REPOSITORY_ID],
                false,
                state,
            )
            .unwrap();
        })
        .unwrap_err();
        assert_eq!((e.kind, e.minor), (K::Marshal, MARSHAL_NO_VALUE_FACTORY));
        assert_eq!(e.completed, CompletionStatus::No);
        // A type nobody knows.
        let e = raw_describe(&s.keeper, |w| {
            w.write_value(
                (&marker as *const u8).cast(),
                &["IDL:Elsewhere/Thing:1.0"],
                false,
                |w| {
                    w.write_i32(1);
                    Ok(())
                },
            )
            .unwrap();
        })
        .unwrap_err();
        assert_eq!((e.kind, e.minor), (K::Marshal, MARSHAL_NO_VALUE_FACTORY));
        // The server still answers.
        assert_eq!(
            s.keeper.describe(&slot(&point(0, 1))).unwrap(),
            "Point(0,1)"
        );
    });
}

/// `Keeper::describe` and `echo` served through DSI: the values are read
/// with the interpreter, through the TypeCodes registered for them.
struct DynKeeper;

impl DynamicImplementation for DynKeeper {
    fn invoke(&self, req: &mut DynServerRequest<'_>) -> Result<(), SystemException> {
        let vb = TypeCode::value_base();
        match req.operation() {
            "describe" => {
                let mut nv = NVList::new();
                nv.add_in("v", Any::new(vb, DynValue::Null));
                let args = req.arguments(nv)?;
                let text = match &args[0].value.value {
                    DynValue::Value(Some(r)) => {
                        let n = r.node().expect("alive");
                        let id = n.type_code().id().unwrap_or("?").to_string();
                        format!("{id} {:?}", n.state()[0])
                    }
                    DynValue::Value(None) => "nil".into(),
                    other => format!("{other:?}"),
                };
                req.set_result(Any::from(text.as_str()))
            }
            "echo" => {
                let mut nv = NVList::new();
                nv.add_in("v", Any::new(vb.clone(), DynValue::Null))
                    .add_inout("io", Any::new(vb.clone(), DynValue::Null))
                    .add_out("again", vb.clone());
                let args = req.arguments(nv)?;
                let v = args[0].value.value.clone();
                args[1].value.value = v.clone();
                args[2].value.value = v.clone();
                req.set_result(Any::new(vb, v))
            }
            _ => Err(SystemException::new(
                K::BadOperation,
                0,
                CompletionStatus::No,
            )),
        }
    }

    fn primary_interface(&self, _object_id: &[u8]) -> String {
        "IDL:AnyValues/Keeper:1.0".into()
    }
}

#[test]
fn dsi_servant_reads_value_base_through_registered_typecodes() {
    bounded(30, || {
        // What generated `Any` support does before the interpreter reads
        // a `ValueBase`: the generated value TypeCodes, registered.
        peregrine_orb_tests::idl::idl_rt::register_value_types();
        for tc in [tc_point(), tc_text(), tc_name()] {
            let id = tc.id().unwrap();
            assert!(lookup_value_type(id).is_some_and(|t| t.equal(&tc)), "{id}");
        }
        let server = Orb::builder().listen("127.0.0.1", 0).build().unwrap();
        let root = server.root_poa();
        root.manager().activate().unwrap();
        let dy: Arc<dyn Servant> = Arc::new(DynamicServant::new(DynKeeper));
        let obj = root.servant_to_object(&dy).unwrap();
        let client = client();
        let k = KeeperRef::unchecked_narrow(client.string_to_object(&obj.to_string()).unwrap());
        assert_eq!(
            k.describe(&slot(&point(7, 8))).unwrap(),
            "IDL:AnyValues/Point:1.0 Long(7)"
        );
        assert_eq!(
            k.describe(&slot(&text("dyn"))).unwrap(),
            "IDL:AnyValues/Text:1.0 String(\"dyn\")"
        );
        assert_eq!(k.describe(&ValueSlot::null()).unwrap(), "nil");
        // Back through the interpreter's writer: the generated types
        // again, one value in three places.
        let mut io = ValueSlot::null();
        let (ret, again) = k.echo(&slot(&point(1, 1)), &mut io).unwrap();
        assert_eq!(describe(&ret), "Point(1,1)");
        assert!(same(&ret, &again) && same(&ret, &io));
        assert_eq!(
            k.describe(&slot(&ValueRef::new(Name("n".into())))).unwrap(),
            "IDL:AnyValues/Name:1.0 String(\"n\")"
        );
    });
}

#[test]
fn value_base_holders_go_into_an_any_and_out() {
    // A struct member: the value comes out as its generated type.
    let t = Tagged {
        tag: "a".into(),
        v: slot(&point(2, 3)),
    };
    let any = Any::insert(&t);
    assert!(any
        .tc
        .equal(&peregrine_orb_tests::idl::any_values::tc_tagged()));
    let back: Tagged = any.get().expect("a Tagged");
    assert_eq!(back.tag, "a");
    assert_eq!(describe(&back.v), "Point(2,3)");
    // A sequence (typedef) with one value twice, a box and nil: shared in
    // the `Any` and after extraction.
    let p = slot(&point(1, 1));
    let vs = vec![
        p.clone(),
        slot(&ValueRef::new(Name("b".into()))),
        ValueSlot::null(),
        p,
    ];
    let any = values_to_any(&vs);
    let DynValue::Sequence(items) = &any.value else {
        panic!("a sequence: {:?}", any.value);
    };
    let node = |v: &DynValue| match v {
        DynValue::Value(Some(r)) => r.node().expect("alive"),
        other => panic!("a value: {other:?}"),
    };
    assert!(Arc::ptr_eq(&node(&items[0]), &node(&items[3])));
    assert_eq!(
        node(&items[1]).type_code().id().unwrap(),
        "IDL:AnyValues/Name:1.0"
    );
    let back = values_from_any(&any).expect("Values");
    let got: Vec<String> = back.iter().map(describe).collect();
    assert_eq!(got, ["Point(1,1)", "Name(b)", "nil", "Point(1,1)"]);
    assert!(same(&back[0], &back[3]));
}

/// A DII client with hand-built values (`ValueNode`s typed with the
/// generated TypeCodes) calls the compiled skeleton: `same` sees one value
/// passed twice as one, `echo` gives it back shared three times.
#[test]
fn dii_request_with_value_base_arguments_reaches_the_compiled_servant() {
    bounded(30, || {
        let s = setup();
        peregrine_orb_tests::idl::idl_rt::register_value_types();
        let vb = TypeCode::value_base();
        let p = ValueNode::new(tc_point(), vec![DynValue::Long(4), DynValue::Long(5)]).unwrap();
        let pv = DynValue::Value(Some(p.into()));
        let obj = s.keeper.object();

        let mut req = obj.request("describe");
        req.add_in_arg("v", Any::new(vb.clone(), pv.clone()))
            .set_return_type(TypeCode::string_tc(0));
        req.invoke().unwrap();
        assert_eq!(
            req.return_value().get::<String>().as_deref(),
            Some("Point(4,5)")
        );

        let mut req = obj.request("same");
        req.add_in_arg("a", Any::new(vb.clone(), pv.clone()))
            .add_in_arg("b", Any::new(vb.clone(), pv.clone()))
            .add_out_arg("a2", vb.clone())
            .add_out_arg("b2", vb.clone())
            .set_return_type(TypeCode::boolean());
        req.invoke().unwrap();
        assert_eq!(req.return_value().get::<bool>(), Some(true));
        let node = |v: &DynValue| match v {
            DynValue::Value(Some(r)) => r.node().expect("alive"),
            other => panic!("a value: {other:?}"),
        };
        let args = req.arguments();
        let (a2, b2) = (node(&args[2].value.value), node(&args[3].value.value));
        assert!(Arc::ptr_eq(&a2, &b2), "one value in the reply");
        assert_eq!(a2.type_code().id().unwrap(), "IDL:AnyValues/Point:1.0");
        assert_eq!(a2.member("y"), Some(DynValue::Long(5)));
    });
}

/// Reads a value of a type no generated code knows as a `Point` (what a
/// factory for a type from a newer IDL, or an `RMI:` id, does).
struct LegacyPointFactory;

impl peregrine_cdr::ValueFactory for LegacyPointFactory {
    fn read_state(
        &self,
        r: &mut Reader<'_>,
        _info: &peregrine_cdr::ValueInfo<'_>,
    ) -> peregrine_cdr::Result<peregrine_cdr::AnyValue> {
        let (x, y) = (r.read_i32()?, r.read_i32()?);
        Ok(ValueRef::into_any(r.new_value(Point::new(x, y))))
    }
}

#[test]
fn a_registered_factory_fills_a_value_base_slot() {
    bounded(30, || {
        let s = setup();
        const LEGACY: &str = "IDL:AnyValues/LegacyPoint:1.0";
        let marker = 1u8;
        let call = |s: &Setup| {
            raw_describe(&s.keeper, |w| {
                w.write_value((&marker as *const u8).cast(), &[LEGACY], false, |w| {
                    w.write_i32(10);
                    w.write_i32(20);
                    Ok(())
                })
                .unwrap();
            })
        };
        let e = call(&s).unwrap_err();
        assert_eq!((e.kind, e.minor), (K::Marshal, MARSHAL_NO_VALUE_FACTORY));
        s.client
            .register_value_factory(LEGACY, Arc::new(LegacyPointFactory));
        let got = call(&s);
        s.client.unregister_value_factory(LEGACY);
        assert_eq!(got.unwrap(), "Point(10,20)");
    });
}
