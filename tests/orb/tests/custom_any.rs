//! `custom` valuetypes in `any` arguments over real sockets
//! (`idl/custom_any.idl`): the dynamic layer carries a custom value as
//! its compiled type and writes and reads its state with the custom
//! code, so a generated stub, a DII request, a generated skeleton and a
//! DSI servant all exchange one, and a value held twice in one `any`
//! arrives as one value. A custom value of a type the receiver never
//! registered is refused with `NO_IMPLEMENT` minor 1 (DSI) or `MARSHAL`
//! (a generated skeleton, whose `Any` decoding reports CDR errors).

use std::sync::Arc;

use peregrine_cdr::{ValueInfo, ValueRef, ValueSlot, ValueType};
use peregrine_dynamic::error::minor;
use peregrine_dynamic::valuetype::VM_CUSTOM;
use peregrine_dynamic::{Any, DynValue, TypeCode, ValueNode};
use peregrine_orb::{
    CompletionStatus, DynServerRequest, DynamicImplementation, DynamicServant, NVList, ObjectRef,
    RequestError, Servant, SystemException, SystemExceptionKind as K,
};
use peregrine_orb_tests::idl::custom_any::{
    Counter, CounterRef, CounterSkeleton, Loose, Pair, Tally,
};
use peregrine_orb_tests::*;

fn tally(count: i32, label: &str) -> ValueRef<Tally> {
    ValueRef::new(Tally {
        count,
        label: label.into(),
    })
}

fn bad_param() -> SystemException {
    SystemException::new(K::BadParam, 0, CompletionStatus::No)
}

/// What both servants do: a `Tally` one more, and whether a `Pair`'s
/// members arrived as one value.
fn bump(a: &Any) -> Result<(Any, bool), SystemException> {
    let (t, same) = if let Some(slot) = a.get::<ValueSlot<Tally>>() {
        (slot.get().cloned().ok_or_else(bad_param)?, false)
    } else if let Some(p) = a.get::<Pair>() {
        let first = p.first.get().cloned().ok_or_else(bad_param)?;
        let same = p.second.get().is_some_and(|s| ValueRef::ptr_eq(s, &first));
        (first, same)
    } else if let Some(l) = a.get::<Loose>() {
        let v = l.v.get().cloned().ok_or_else(bad_param)?;
        let t = v.into_any_value().downcast::<Tally>();
        (t.map_err(|_| bad_param())?, false)
    } else {
        return Err(bad_param());
    };
    Ok((Any::insert(&tally(t.count + 1, &t.label)), same))
}

struct CounterImpl;

impl Counter for CounterImpl {
    fn bump(&self, a: &Any) -> Result<(Any, bool), SystemException> {
        bump(a)
    }
}

struct DynCounter;

impl DynamicImplementation for DynCounter {
    fn invoke(&self, req: &mut DynServerRequest<'_>) -> Result<(), SystemException> {
        let mut nv = NVList::new();
        nv.add_in("a", Any::new(TypeCode::any(), DynValue::Null))
            .add_out("same", TypeCode::boolean());
        let args = req.arguments(nv)?;
        let DynValue::Any(inner) = &args[0].value.value else {
            return Err(bad_param());
        };
        let (ret, same) = bump(inner)?;
        args[1].value.value = DynValue::Boolean(same);
        req.set_result(Any::new(TypeCode::any(), DynValue::Any(Box::new(ret))))
    }

    fn primary_interface(&self, _object_id: &[u8]) -> String {
        "IDL:CustomAny/Counter:1.0".into()
    }
}

/// A server with a generated skeleton and a DSI servant, and the
/// client's references to both.
fn setup() -> (peregrine_orb::Orb, peregrine_orb::Orb, ObjectRef, ObjectRef) {
    let server = peregrine_orb::Orb::builder()
        .listen("127.0.0.1", 0)
        .build()
        .unwrap();
    let root = server.root_poa();
    root.manager().activate().unwrap();
    let compiled: CounterRef = root
        .servant_to_reference(&Arc::new(CounterSkeleton::new(CounterImpl)))
        .unwrap();
    let dy: Arc<dyn Servant> = Arc::new(DynamicServant::new(DynCounter));
    let dynamic = root.servant_to_object(&dy).unwrap();
    let client = client();
    let compiled = client
        .string_to_object(&compiled.object().to_string())
        .unwrap();
    let dynamic = client.string_to_object(&dynamic.to_string()).unwrap();
    (server, client, compiled, dynamic)
}

fn returned_tally(any: &Any) -> ValueRef<Tally> {
    let slot: ValueSlot<Tally> = any.get().expect("a Tally");
    slot.get().expect("not null").clone()
}

#[test]
fn generated_stub_sends_and_receives_custom_values_in_an_any() {
    bounded(30, || {
        let (_server, _client, compiled, dynamic) = setup();
        for obj in [compiled, dynamic] {
            let c = CounterRef::unchecked_narrow(obj);
            let (ret, same) = c.bump(&Any::insert(&tally(4, "four"))).unwrap();
            assert!(!same);
            let t = returned_tally(&ret);
            assert_eq!((t.count, t.label.as_str()), (5, "four"));
            // One value in both members of a struct arrives as one.
            let shared = tally(9, "nine");
            let pair = Pair {
                first: shared.clone().into(),
                second: shared.into(),
            };
            let (ret, same) = c.bump(&Any::insert(&pair)).unwrap();
            assert!(same, "sharing inside the any kept");
            assert_eq!(returned_tally(&ret).count, 10);
            // Two equal but distinct values stay two.
            let pair = Pair {
                first: tally(1, "a").into(),
                second: tally(1, "a").into(),
            };
            let (_, same) = c.bump(&Any::insert(&pair)).unwrap();
            assert!(!same);
            // In a `ValueBase` slot, found by its id.
            let loose = Loose {
                v: ValueSlot::from(tally(20, "loose").upcast::<dyn peregrine_cdr::ValueObject>()),
            };
            let (ret, _) = c.bump(&Any::insert(&loose)).unwrap();
            let t = returned_tally(&ret);
            assert_eq!((t.count, t.label.as_str()), (21, "loose"));
        }
    });
}

fn dii_bump(obj: &ObjectRef, a: Any) -> Result<(Any, bool), RequestError> {
    let mut req = obj.request("bump");
    req.add_in_arg("a", Any::new(TypeCode::any(), DynValue::Any(Box::new(a))))
        .add_out_arg("same", TypeCode::boolean())
        .set_return_type(TypeCode::any());
    req.invoke()?;
    let DynValue::Any(ret) = &req.return_value().value else {
        panic!("not an any: {:?}", req.return_value())
    };
    let same = req.arguments()[1].value.value == DynValue::Boolean(true);
    Ok((Any::clone(ret), same))
}

#[test]
fn dii_sends_and_receives_custom_values_in_an_any() {
    bounded(30, || {
        let (_server, _client, compiled, dynamic) = setup();
        for obj in [&compiled, &dynamic] {
            let (ret, same) = dii_bump(obj, Any::insert(&ValueSlot::from(tally(1, "x")))).unwrap();
            assert!(!same);
            assert_eq!(returned_tally(&ret).count, 2);
            // The value tree holds the compiled value.
            let DynValue::Value(Some(r)) = &ret.value else {
                panic!("{ret:?}")
            };
            assert!(r.node().unwrap().object().is_some());
            let shared = tally(3, "s");
            let pair = Pair {
                first: shared.clone().into(),
                second: shared.into(),
            };
            let (ret, same) = dii_bump(obj, Any::insert(&pair)).unwrap();
            assert!(same);
            assert_eq!(returned_tally(&ret).label, "s");
        }
    });
}

/// A custom value nobody registers on the receiving side: the sender
/// writes it with its own code, the receiver cannot read its state.
struct Unknown;

impl ValueType for Unknown {
    const REPO_ID: &'static str = "IDL:CustomAny/Unknown:1.0";
    const IDS: &'static [&'static str] = &[Self::REPO_ID];
    const CHUNKED: bool = true;
    fn write_state(&self, w: &mut peregrine_cdr::Writer) -> peregrine_cdr::Result<()> {
        w.write_u32(42);
        Ok(())
    }
    fn read_state(
        r: &mut peregrine_cdr::Reader<'_>,
        _: &ValueInfo<'_>,
    ) -> peregrine_cdr::Result<ValueRef<Self>> {
        r.read_u32()?;
        Ok(r.new_value(Unknown))
    }
}

#[test]
fn unregistered_custom_value_is_refused_by_the_receiver() {
    bounded(30, || {
        let (_server, _client, compiled, dynamic) = setup();
        let tc = TypeCode::value_tc(Unknown::REPO_ID, "Unknown", VM_CUSTOM, None, Vec::new());
        let node = ValueNode::compiled(tc.clone(), ValueRef::new(Unknown).upcast()).unwrap();
        let any = Any::new(tc, DynValue::Value(Some(node.into())));
        let system = |e: RequestError| match e {
            RequestError::System(e) => e,
            RequestError::User(a) => panic!("user exception {a:?}"),
        };
        let e = system(dii_bump(&dynamic, any.clone()).unwrap_err());
        assert_eq!(
            (e.kind, e.minor),
            (K::NoImplement, minor::NO_IMPLEMENT_NO_VALUE_IMPL)
        );
        let e = system(dii_bump(&compiled, any).unwrap_err());
        assert_eq!(e.kind, K::Marshal);
        // The connection is still good.
        let (ret, _) = dii_bump(&dynamic, Any::insert(&tally(0, "ok"))).unwrap();
        assert_eq!(returned_tally(&ret).count, 1);
    });
}
