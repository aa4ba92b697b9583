//! Dynamic CORBA against omniORB, `idl/dynamic.idl`:
//!
//! * a Peregrine DII client (`Request`, TypeCodes built at run time)
//!   against the static omniORB server `cxx/dyn_server.cc`;
//! * the omniORB DII client `cxx/dyn_client.cc` (`CORBA::Request` with
//!   Any arguments, a recursive TypeCode from `create_recursive_tc`)
//!   against a Peregrine DSI servant.
//!
//! Both carry `any` and `TypeCode` values, the recursive struct
//! `Node { long v; sequence<Node> kids; }` (as an argument, inside an
//! any, and as a TypeCode with an indirection), inout/out arguments, a
//! user exception and a deferred call.

use std::sync::Arc;
use std::time::Duration;

use peregrine_dynamic::{Any, DynValue, TypeCode};
use peregrine_interop_tests::peers::{extra_args, peers, Peer};
use peregrine_interop_tests::{bounded, serving_orb};
use peregrine_orb::{
    CompletionStatus, DynServerRequest, DynamicImplementation, DynamicServant, NVList, ObjectRef,
    Orb, RequestError, SystemException, SystemExceptionKind as K,
};

const NODE_ID: &str = "IDL:DynInterop/Node:1.0";

/// `struct Node { long v; sequence<Node> kids; }`.
fn node_tc() -> TypeCode {
    TypeCode::struct_tc(
        NODE_ID,
        "Node",
        [
            ("v", TypeCode::long()),
            (
                "kids",
                TypeCode::sequence_tc(0, TypeCode::recursive(NODE_ID)),
            ),
        ],
    )
}

fn bad_tc() -> TypeCode {
    TypeCode::exception_tc(
        "IDL:DynInterop/Bad:1.0",
        "Bad",
        [("code", TypeCode::long()), ("why", TypeCode::string_tc(0))],
    )
}

/// A tree as a value tree: `depth` levels, `width` children, values
/// numbered depth-first from 1 (as `cxx/dyn_client.cc` builds it).
fn tree(depth: u32, width: u32, next: &mut i32) -> DynValue {
    *next += 1;
    let v = *next;
    let kids = if depth == 0 {
        Vec::new()
    } else {
        (0..width).map(|_| tree(depth - 1, width, next)).collect()
    };
    DynValue::Struct(vec![DynValue::Long(v), DynValue::Sequence(kids)])
}

/// The members of a Node value, `None` if it is not one.
fn parts(n: &DynValue) -> Option<(i32, &[DynValue])> {
    match n {
        DynValue::Struct(m) => match m.as_slice() {
            [DynValue::Long(v), DynValue::Sequence(kids)] => Some((*v, kids)),
            _ => None,
        },
        _ => None,
    }
}

fn sum(n: &DynValue) -> Option<i32> {
    let (v, kids) = parts(n)?;
    kids.iter().try_fold(v, |acc, k| Some(acc + sum(k)?))
}

fn mirror(n: &DynValue) -> Option<DynValue> {
    let (v, kids) = parts(n)?;
    let kids = kids.iter().rev().map(mirror).collect::<Option<Vec<_>>>()?;
    Some(DynValue::Struct(vec![
        DynValue::Long(v),
        DynValue::Sequence(kids),
    ]))
}

fn any_in_any(a: Any) -> Any {
    Any::new(TypeCode::any(), DynValue::Any(Box::new(a)))
}

fn sys(e: &RequestError) -> &SystemException {
    e.system()
        .unwrap_or_else(|| panic!("expected a system exception, got {e}"))
}

#[test]
fn peregrine_dii_client_against_omniorb_server() {
    bounded(120, || {
        let p = peers();
        let args: Vec<String> = ["-ORBendPoint", "giop:tcp:127.0.0.1:"]
            .iter()
            .map(|s| s.to_string())
            .chain(extra_args())
            .collect();
        let mut server = Peer::spawn("omniORB dyn_server", &p.dyn_server, &args);
        let ior = server.wait_for("DYN ", Duration::from_secs(30));
        server.wait_for("READY", Duration::from_secs(30));
        let orb = Orb::builder()
            .call_timeout(Duration::from_secs(20))
            .build()
            .expect("client ORB");
        let obj: ObjectRef = orb.string_to_object(&ior).unwrap();
        let t = tree(3, 3, &mut 0);

        // An any holding a long, then a recursive struct.
        let mut req = obj.request("echo_any");
        req.add_in_arg("a", any_in_any(Any::from(42i32)))
            .set_return_type(TypeCode::any());
        req.invoke().unwrap();
        assert_eq!(
            req.return_value().value,
            DynValue::Any(Box::new(Any::from(42i32)))
        );
        let node_any = Any::new(node_tc(), t.clone());
        req.set_arg(0, any_in_any(node_any.clone())).unwrap();
        req.invoke().unwrap();
        let DynValue::Any(back) = &req.return_value().value else {
            panic!("not an any: {:?}", req.return_value())
        };
        assert!(back.tc.equal(&node_tc()), "TypeCode changed: {:?}", back.tc);
        assert_eq!(**back, node_any);

        // The recursive TypeCode itself, there and back (indirection).
        let mut req = obj.request("echo_tc");
        req.add_in_arg("t", Any::from(node_tc()))
            .set_return_type(TypeCode::tc_typecode());
        req.invoke().unwrap();
        let tc = req.return_value().get::<TypeCode>().unwrap();
        assert!(tc.equal(&node_tc()));
        assert!(tc
            .member_type(1)
            .unwrap()
            .content_type()
            .unwrap()
            .equal(&tc));

        // Recursive struct in and out.
        let mut req = obj.request("sum_tree");
        req.add_in_arg("n", Any::new(node_tc(), t.clone()))
            .add_out_arg("mirrored", node_tc())
            .set_return_type(TypeCode::long());
        req.invoke().unwrap();
        assert_eq!(req.return_value().get::<i32>(), sum(&t));
        assert_eq!(Some(&req.arguments()[1].value.value), mirror(&t).as_ref());

        // any + inout.
        let mut req = obj.request("describe");
        req.add_in_arg("a", any_in_any(node_any))
            .add_inout_arg("n", Any::from(5i32))
            .set_return_type(TypeCode::string_tc(0));
        req.invoke().unwrap();
        assert_eq!(
            req.return_value().get::<String>().unwrap(),
            format!("{NODE_ID} sum={}", sum(&t).unwrap())
        );
        assert_eq!(req.arguments()[1].value.get::<i32>(), Some(6));

        // A user exception, decoded by its TypeCode; unlisted: UNKNOWN.
        let mut req = obj.request("check");
        req.add_in_arg("code", Any::from(3i32))
            .exceptions(vec![bad_tc()]);
        let e = req.invoke().unwrap_err();
        assert_eq!(
            e.user().unwrap().value,
            DynValue::Struct(vec![DynValue::Long(3), DynValue::String("bad".into())])
        );
        req.exceptions(Vec::new());
        let e = req.invoke().unwrap_err();
        assert_eq!(sys(&e).kind, K::Unknown);

        // Deferred, with the TypeCode inside an any.
        let mut req = obj.request("echo_any");
        req.add_in_arg("a", any_in_any(Any::from(node_tc())))
            .set_return_type(TypeCode::any());
        req.send_deferred().unwrap();
        req.get_response().unwrap();
        let DynValue::Any(back) = &req.return_value().value else {
            panic!("not an any")
        };
        assert!(back.get::<TypeCode>().unwrap().equal(&node_tc()));

        // An operation the server does not have.
        let e = obj.request("no_such_op").invoke().unwrap_err();
        assert_eq!(sys(&e).kind, K::BadOperation);
        assert_eq!(sys(&e).completed, CompletionStatus::No);
    });
}

/// `DynInterop::Dyn` as a Peregrine DSI servant.
struct DynServant;

fn marshal() -> SystemException {
    SystemException::new(K::Marshal, 0, CompletionStatus::No)
}

fn empty(tc: TypeCode) -> Any {
    Any::new(tc, DynValue::Null)
}

impl DynamicImplementation for DynServant {
    fn invoke(&self, req: &mut DynServerRequest<'_>) -> Result<(), SystemException> {
        match req.operation() {
            "echo_any" => {
                let mut nv = NVList::new();
                nv.add_in("a", empty(TypeCode::any()));
                let a = req.arguments(nv)?[0].value.clone();
                req.set_result(a)
            }
            "echo_tc" => {
                let mut nv = NVList::new();
                nv.add_in("t", empty(TypeCode::tc_typecode()));
                let t = req.arguments(nv)?[0].value.clone();
                req.set_result(t)
            }
            "sum_tree" => {
                let mut nv = NVList::new();
                nv.add_in("n", empty(node_tc()))
                    .add_out("mirrored", node_tc());
                let args = req.arguments(nv)?;
                let n = args[0].value.value.clone();
                args[1].value.value = mirror(&n).ok_or_else(marshal)?;
                req.set_result(Any::from(sum(&n).ok_or_else(marshal)?))
            }
            "describe" => {
                let mut nv = NVList::new();
                nv.add_in("a", empty(TypeCode::any()))
                    .add_inout("n", empty(TypeCode::long()));
                let args = req.arguments(nv)?;
                let DynValue::Any(a) = &args[0].value.value else {
                    return Err(marshal());
                };
                let mut s = match a.tc.id() {
                    Ok(id) => id.to_owned(),
                    Err(_) => format!("kind {}", a.tc.kind() as u32),
                };
                if a.tc.equivalent(&node_tc()) {
                    s += &format!(" sum={}", sum(&a.value).ok_or_else(marshal)?);
                }
                let n = args[1].value.get::<i32>().ok_or_else(marshal)?;
                args[1].value = Any::from(n + 1);
                req.set_result(Any::from(s))
            }
            "check" => {
                let mut nv = NVList::new();
                nv.add_in("code", empty(TypeCode::long()));
                let code = req.arguments(nv)?[0]
                    .value
                    .get::<i32>()
                    .ok_or_else(marshal)?;
                if code != 0 {
                    return req.set_exception(Any::new(
                        bad_tc(),
                        DynValue::Struct(vec![
                            DynValue::Long(code),
                            DynValue::String("bad".into()),
                        ]),
                    ));
                }
                Ok(())
            }
            _ => Err(SystemException::new(
                K::BadOperation,
                0,
                CompletionStatus::No,
            )),
        }
    }

    fn primary_interface(&self, _object_id: &[u8]) -> String {
        "IDL:DynInterop/Dyn:1.0".into()
    }
}

#[test]
fn omniorb_dii_client_against_peregrine_dsi_server() {
    bounded(120, || {
        let p = peers();
        let orb = serving_orb();
        let servant = Arc::new(DynamicServant::new(DynServant));
        let obj = orb
            .root_poa()
            .servant_to_reference(&servant)
            .expect("activate Dyn");
        let args: Vec<String> = [
            orb.object_to_string(&obj),
            "-ORBclientCallTimeOutPeriod".into(),
            "20000".into(),
        ]
        .into_iter()
        .chain(extra_args())
        .collect();
        let mut client = Peer::spawn("omniORB dyn_client", &p.dyn_client, &args);
        let status = client.finish(Duration::from_secs(90));
        let lines = client.lines().to_vec();
        for l in &lines {
            println!("omniORB DII client -> Peregrine DSI server: {l}");
        }
        let failed: Vec<&String> = lines.iter().filter(|l| l.starts_with("FAIL")).collect();
        assert!(
            failed.is_empty()
                && status.success()
                && lines.last().map(String::as_str) == Some("DONE 0"),
            "omniORB DII client: {failed:?} (exit {status}); stderr: {}",
            client.stderr()
        );
        assert_eq!(lines.iter().filter(|l| l.starts_with("OK ")).count(), 8);
    });
}
