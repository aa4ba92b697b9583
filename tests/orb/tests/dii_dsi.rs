//! Dynamic invocation (DII `Request`) and dynamic skeletons (DSI
//! `DynamicImplementation`) over real sockets, against each other and
//! against the generated stub and skeleton of `DynTest::Shapes` and
//! `Test::Echo`: primitives, strings, sequences, structs, a recursive
//! struct, inout/out arguments, user and system exceptions, oneway,
//! deferred calls, a request reused 1000 times, context clauses and
//! misuse (typed errors, no panics).

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

use peregrine_dynamic::{Any, DynValue, TcKind, TypeCode};
use peregrine_orb::dii::minor;
use peregrine_orb::{
    ArgFlags, CompletionStatus, DynServerRequest, DynamicImplementation, DynamicServant, NVList,
    ObjectRef, Orb, Request, RequestError, Servant, SystemException, SystemExceptionKind as K,
};
use peregrine_orb_tests::idl::dyn_test::{
    shapes, Bad, Node, Point, PointSeq, Shapes, ShapesRef, ShapesSkeleton,
};
use peregrine_orb_tests::*;

// ---- TypeCodes built by hand (what an interface repository would give) ----

fn point_tc() -> TypeCode {
    TypeCode::struct_tc(
        "IDL:DynTest/Point:1.0",
        "Point",
        [
            ("x", TypeCode::long()),
            ("y", TypeCode::double()),
            ("label", TypeCode::string_tc(0)),
        ],
    )
}

fn point_seq_tc() -> TypeCode {
    TypeCode::alias_tc(
        "IDL:DynTest/PointSeq:1.0",
        "PointSeq",
        TypeCode::sequence_tc(0, point_tc()),
    )
}

/// `struct Node { long v; sequence<Node> kids; }`: recursive.
fn node_tc() -> TypeCode {
    TypeCode::struct_tc(
        "IDL:DynTest/Node:1.0",
        "Node",
        [
            ("v", TypeCode::long()),
            (
                "kids",
                TypeCode::sequence_tc(0, TypeCode::recursive("IDL:DynTest/Node:1.0")),
            ),
        ],
    )
}

fn bad_tc() -> TypeCode {
    TypeCode::exception_tc(
        "IDL:DynTest/Bad:1.0",
        "Bad",
        [("code", TypeCode::long()), ("why", TypeCode::string_tc(0))],
    )
}

fn oops_tc() -> TypeCode {
    TypeCode::exception_tc(
        "IDL:Test/Echo/Oops:1.0",
        "Oops",
        [("code", TypeCode::long()), ("why", TypeCode::string_tc(0))],
    )
}

fn empty(tc: TypeCode) -> Any {
    Any::new(tc, DynValue::Null)
}

// ---- values <-> value trees ----

fn point_dyn(p: &Point) -> DynValue {
    DynValue::Struct(vec![
        DynValue::Long(p.x),
        DynValue::Double(p.y),
        DynValue::String(p.label.clone()),
    ])
}

fn point_from(v: &DynValue) -> Option<Point> {
    match v {
        DynValue::Struct(m) => match m.as_slice() {
            [DynValue::Long(x), DynValue::Double(y), DynValue::String(l)] => Some(Point {
                x: *x,
                y: *y,
                label: l.clone(),
            }),
            _ => None,
        },
        _ => None,
    }
}

fn points_dyn(s: &[Point]) -> DynValue {
    DynValue::Sequence(s.iter().map(point_dyn).collect())
}

fn points_from(v: &DynValue) -> Option<Vec<Point>> {
    match v {
        DynValue::Sequence(s) => s.iter().map(point_from).collect(),
        _ => None,
    }
}

fn node_dyn(n: &Node) -> DynValue {
    DynValue::Struct(vec![
        DynValue::Long(n.v),
        DynValue::Sequence(n.kids.iter().map(node_dyn).collect()),
    ])
}

fn node_from(v: &DynValue) -> Option<Node> {
    match v {
        DynValue::Struct(m) => match m.as_slice() {
            [DynValue::Long(v), DynValue::Sequence(kids)] => Some(Node {
                v: *v,
                kids: kids.iter().map(node_from).collect::<Option<_>>()?,
            }),
            _ => None,
        },
        _ => None,
    }
}

fn long(a: &Any) -> i32 {
    match a.value {
        DynValue::Long(v) => v,
        ref v => panic!("expected a long, got {v:?}"),
    }
}

// ---- the semantics both servants implement ----

fn moved(p: &Point, dx: i32) -> (Point, String) {
    (
        Point {
            x: p.x + dx,
            y: p.y,
            label: p.label.clone(),
        },
        format!("{} moved by {dx}", p.label),
    )
}

fn sum(n: &Node) -> i32 {
    n.v + n.kids.iter().map(sum).sum::<i32>()
}

fn mirror(n: &Node) -> Node {
    Node {
        v: n.v,
        kids: n.kids.iter().rev().map(mirror).collect(),
    }
}

fn mix(s: i16, u: u64, b: bool, c: u8, o: u8, f: f32, d: f64) -> f64 {
    f64::from(s)
        + u as f64
        + f64::from(u8::from(b))
        + f64::from(c)
        + f64::from(o)
        + f64::from(f)
        + d
}

/// A tree of `depth` levels, `width` children per node.
fn tree(depth: u32, width: i32, v: &mut i32) -> Node {
    *v += 1;
    let me = *v;
    Node {
        v: me,
        kids: if depth == 0 {
            Vec::new()
        } else {
            (0..width).map(|_| tree(depth - 1, width, v)).collect()
        },
    }
}

/// The generated-skeleton servant.
#[derive(Default)]
struct StaticShapes {
    pings: AtomicI32,
}

impl Shapes for StaticShapes {
    fn move_point(&self, p: &Point, dx: &mut i32) -> Result<(Point, String), SystemException> {
        let r = moved(p, *dx);
        *dx *= 2;
        Ok(r)
    }

    fn reverse(&self, s: &[Point]) -> Result<PointSeq, SystemException> {
        Ok(s.iter().rev().cloned().collect())
    }

    fn sum_tree(&self, n: &Node) -> Result<(i32, Node), SystemException> {
        Ok((sum(n), mirror(n)))
    }

    #[allow(clippy::too_many_arguments)]
    fn mix(
        &self,
        s: i16,
        u: u64,
        b: bool,
        c: u8,
        o: u8,
        f: f32,
        d: &mut f64,
    ) -> Result<f64, SystemException> {
        let r = mix(s, u, b, c, o, f, *d);
        *d = -*d;
        Ok(r)
    }

    fn check(&self, code: i32) -> Result<i32, shapes::CheckError> {
        if code != 0 {
            return Err(shapes::CheckError::Bad(Bad {
                code,
                why: "bad".into(),
            }));
        }
        Ok(1)
    }

    fn ping(&self, n: i32) -> Result<(), SystemException> {
        self.pings.fetch_add(n, Ordering::SeqCst);
        Ok(())
    }

    fn pings(&self) -> Result<i32, SystemException> {
        Ok(self.pings.load(Ordering::SeqCst))
    }
}

/// The same interface as a dynamic servant, plus DSI-only operations
/// (`context_values`, `bad_result`, `arguments_twice`, `not_an_exception`).
#[derive(Default)]
struct DynShapes {
    pings: AtomicI32,
}

fn marshal() -> SystemException {
    SystemException::new(K::Marshal, 0, CompletionStatus::No)
}

impl DynamicImplementation for DynShapes {
    fn invoke(&self, req: &mut DynServerRequest<'_>) -> Result<(), SystemException> {
        match req.operation() {
            "move_point" => {
                let mut nv = NVList::new();
                nv.add_in("p", empty(point_tc()))
                    .add_inout("dx", empty(TypeCode::long()))
                    .add_out("note", TypeCode::string_tc(0));
                let args = req.arguments(nv)?;
                let p = point_from(&args[0].value.value).ok_or_else(marshal)?;
                let dx = long(&args[1].value);
                let (r, note) = moved(&p, dx);
                args[1].value.value = DynValue::Long(dx * 2);
                args[2].value.value = DynValue::String(note);
                req.set_result(Any::new(point_tc(), point_dyn(&r)))
            }
            "reverse" => {
                let mut nv = NVList::new();
                nv.add_in("s", empty(point_seq_tc()));
                let args = req.arguments(nv)?;
                let mut s = points_from(&args[0].value.value).ok_or_else(marshal)?;
                s.reverse();
                req.set_result(Any::new(point_seq_tc(), points_dyn(&s)))
            }
            "sum_tree" => {
                let mut nv = NVList::new();
                nv.add_in("n", empty(node_tc()))
                    .add_out("mirrored", node_tc());
                let args = req.arguments(nv)?;
                let n = node_from(&args[0].value.value).ok_or_else(marshal)?;
                args[1].value.value = node_dyn(&mirror(&n));
                req.set_result(Any::from(sum(&n)))
            }
            "mix" => {
                let mut nv = NVList::new();
                for (name, tc) in [
                    ("s", TypeCode::short()),
                    ("u", TypeCode::ulonglong()),
                    ("b", TypeCode::boolean()),
                    ("c", TypeCode::char()),
                    ("o", TypeCode::octet()),
                    ("f", TypeCode::float()),
                ] {
                    nv.add_in(name, empty(tc));
                }
                nv.add_inout("d", empty(TypeCode::double()));
                let a = req.arguments(nv)?;
                let v: Vec<&DynValue> = a.iter().map(|nv| &nv.value.value).collect();
                let (
                    &DynValue::Short(s),
                    &DynValue::ULongLong(u),
                    &DynValue::Boolean(b),
                    &DynValue::Char(c),
                    &DynValue::Octet(o),
                    &DynValue::Float(f),
                    &DynValue::Double(d),
                ) = (v[0], v[1], v[2], v[3], v[4], v[5], v[6])
                else {
                    return Err(marshal());
                };
                a[6].value.value = DynValue::Double(-d);
                req.set_result(Any::from(mix(s, u, b, c, o, f, d)))
            }
            "check" => {
                let mut nv = NVList::new();
                nv.add_in("code", empty(TypeCode::long()));
                let code = long(&req.arguments(nv)?[0].value);
                if code != 0 {
                    return req.set_exception(Any::new(
                        bad_tc(),
                        DynValue::Struct(vec![
                            DynValue::Long(code),
                            DynValue::String("bad".into()),
                        ]),
                    ));
                }
                req.set_result(Any::from(1i32))
            }
            "ping" => {
                let mut nv = NVList::new();
                nv.add_in("n", empty(TypeCode::long()));
                let n = long(&req.arguments(nv)?[0].value);
                self.pings.fetch_add(n, Ordering::SeqCst);
                Ok(())
            }
            "pings" => {
                req.arguments(NVList::new())?;
                req.set_result(Any::from(self.pings.load(Ordering::SeqCst)))
            }
            // The context clause, flattened: name, value, name, value...
            "context_values" => {
                req.arguments(NVList::new())?;
                let ctx = req.ctx()?;
                let flat: Vec<DynValue> = ctx
                    .iter()
                    .flat_map(|(n, v)| [DynValue::String(n.into()), DynValue::String(v.into())])
                    .collect();
                req.set_result(Any::new(
                    TypeCode::sequence_tc(0, TypeCode::string_tc(0)),
                    DynValue::Sequence(flat),
                ))
            }
            // A result that does not match its TypeCode: the adapter
            // reports BAD_PARAM instead of sending garbage.
            "bad_result" => {
                req.arguments(NVList::new())?;
                req.set_result(Any::new(TypeCode::long(), DynValue::String("x".into())))
            }
            // Misuse inside the servant: the second `arguments`, the
            // ordering errors and a non-exception `set_exception` are
            // typed errors; the minors come back as the result.
            "misuse" => {
                let early = req.set_result(Any::from(0i32)).unwrap_err();
                let early_ctx = req.ctx().unwrap_err();
                req.arguments(NVList::new())?;
                let twice = req.arguments(NVList::new()).unwrap_err();
                let not_exc = req.set_exception(Any::from(1i32)).unwrap_err();
                req.set_result(Any::new(
                    TypeCode::sequence_tc(0, TypeCode::ulong()),
                    DynValue::ULongs(vec![
                        early.minor,
                        early_ctx.minor,
                        twice.minor,
                        not_exc.minor,
                    ]),
                ))?;
                let again = req.set_result(Any::from(0i32)).unwrap_err();
                assert_eq!(again.kind, K::BadInvOrder);
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
        "IDL:DynTest/Shapes:1.0".into()
    }
}

/// A server with a static and a dynamic Shapes and an Echo; references as
/// the client ORB sees them.
struct Setup {
    _server: Orb,
    client: Orb,
    static_shapes: ObjectRef,
    dyn_shapes: ObjectRef,
    echo: ObjectRef,
}

fn setup() -> Setup {
    let (server, _imp, echo) = server();
    let root = server.root_poa();
    let st: Arc<dyn Servant> = Arc::new(ShapesSkeleton::new(StaticShapes::default()));
    let dy: Arc<dyn Servant> = Arc::new(DynamicServant::new(DynShapes::default()));
    let st = root.servant_to_object(&st).unwrap();
    let dy = root.servant_to_object(&dy).unwrap();
    let client = client();
    let via = |o: &ObjectRef| client.string_to_object(&o.to_string()).unwrap();
    Setup {
        static_shapes: via(&st),
        dyn_shapes: via(&dy),
        echo: via(echo.object()),
        client,
        _server: server,
    }
}

fn sys(e: &RequestError) -> &SystemException {
    e.system()
        .unwrap_or_else(|| panic!("expected a system exception, got {e}"))
}

// ---- DII requests for Shapes, used against both servants ----

fn move_point_request(obj: &ObjectRef, p: &Point, dx: i32) -> Request {
    let mut req = obj.request("move_point");
    req.add_in_arg("p", Any::new(point_tc(), point_dyn(p)))
        .add_inout_arg("dx", Any::from(dx))
        .add_out_arg("note", TypeCode::string_tc(0))
        .set_return_type(point_tc());
    req
}

fn check_move_point(req: &Request, p: &Point, dx: i32) {
    let (want, note) = moved(p, dx);
    assert_eq!(point_from(&req.return_value().value), Some(want));
    let args = req.arguments();
    assert_eq!(args.len(), 3);
    assert_eq!(args[1].flags, ArgFlags::InOut);
    assert_eq!(args[1].value.get::<i32>(), Some(dx * 2));
    assert_eq!(
        args.by_name("note").unwrap().value.get::<String>(),
        Some(note)
    );
    // The in argument is untouched.
    assert_eq!(point_from(&args[0].value.value).as_ref(), Some(p));
}

fn dii_shapes(obj: &ObjectRef) {
    // Struct in, inout long, out string, struct result.
    let p = Point {
        x: 3,
        y: 1.5,
        label: "pt".into(),
    };
    let mut req = move_point_request(obj, &p, 4);
    req.invoke().unwrap();
    check_move_point(&req, &p, 4);

    // Sequence of structs (through an alias TypeCode).
    let pts: Vec<Point> = (0..50)
        .map(|i| Point {
            x: i,
            y: f64::from(i) / 4.0,
            label: format!("p{i}"),
        })
        .collect();
    let mut req = obj.request("reverse");
    req.add_in_arg("s", Any::new(point_seq_tc(), points_dyn(&pts)))
        .set_return_type(point_seq_tc());
    req.invoke().unwrap();
    let mut rev = pts.clone();
    rev.reverse();
    assert_eq!(points_from(&req.return_value().value), Some(rev));

    // Recursive struct in and out.
    let t = tree(3, 3, &mut 0);
    let mut req = obj.request("sum_tree");
    req.add_in_arg("n", Any::new(node_tc(), node_dyn(&t)))
        .add_out_arg("mirrored", node_tc())
        .set_return_type(TypeCode::long());
    req.invoke().unwrap();
    assert_eq!(req.return_value().get::<i32>(), Some(sum(&t)));
    assert_eq!(node_from(&req.arguments()[1].value.value), Some(mirror(&t)));

    // Every primitive.
    let mut req = obj.request("mix");
    req.add_in_arg("s", Any::from(-3i16))
        .add_in_arg("u", Any::from(1u64 << 40))
        .add_in_arg("b", Any::from(true))
        .add_in_arg("c", Any::new(TypeCode::char(), DynValue::Char(b'A')))
        .add_in_arg("o", Any::from(200u8))
        .add_in_arg("f", Any::from(0.5f32))
        .add_inout_arg("d", Any::from(2.25f64))
        .set_return_type(TypeCode::double());
    req.invoke().unwrap();
    assert_eq!(
        req.return_value().get::<f64>(),
        Some(mix(-3, 1 << 40, true, b'A', 200, 0.5, 2.25))
    );
    assert_eq!(req.arguments()[6].value.get::<f64>(), Some(-2.25));

    // A user exception, listed: decoded by its TypeCode.
    let mut req = obj.request("check");
    req.add_in_arg("code", Any::from(9i32))
        .set_return_type(TypeCode::long())
        .exceptions(vec![bad_tc()]);
    let e = req.invoke().unwrap_err();
    let RequestError::User(a) = &e else {
        panic!("expected Bad, got {e}")
    };
    assert_eq!(a.tc.id(), Ok("IDL:DynTest/Bad:1.0"));
    assert_eq!(
        a.value,
        DynValue::Struct(vec![DynValue::Long(9), DynValue::String("bad".into())])
    );
    assert_eq!(req.exception(), Some(&e));
    // Reused with another argument: success clears the exception.
    req.set_arg(0, Any::from(0i32)).unwrap();
    req.invoke().unwrap();
    assert!(req.exception().is_none());
    assert_eq!(req.return_value().get::<i32>(), Some(1));
    // Not listed: UNKNOWN minor 1.
    req.exceptions(Vec::new());
    req.set_arg(0, Any::from(5i32)).unwrap();
    let e = req.invoke().unwrap_err();
    assert_eq!(sys(&e).kind, K::Unknown);
    assert_eq!(sys(&e).minor, minor::UNKNOWN_USER_EXCEPTION);

    // Oneway, then a twoway on the same connection sees its effect.
    let before = {
        let mut q = obj.request("pings");
        q.set_return_type(TypeCode::long());
        q.invoke().unwrap();
        q.return_value().get::<i32>().unwrap()
    };
    let mut ping = obj.request("ping");
    ping.add_in_arg("n", Any::from(5i32));
    for _ in 0..3 {
        ping.send_oneway().unwrap();
    }
    let mut q = obj.request("pings");
    q.set_return_type(TypeCode::long());
    assert!(eventually(5, || {
        q.invoke().unwrap();
        q.return_value().get::<i32>() == Some(before + 15)
    }));
}

#[test]
fn dii_client_against_the_generated_skeleton() {
    bounded(60, || {
        let s = setup();
        dii_shapes(&s.static_shapes);
    });
}

#[test]
fn dii_client_against_a_dsi_servant() {
    bounded(60, || {
        let s = setup();
        dii_shapes(&s.dyn_shapes);
    });
}

#[test]
fn generated_stub_against_a_dsi_servant() {
    bounded(60, || {
        let s = setup();
        let sh = ShapesRef::unchecked_narrow(s.dyn_shapes.clone());
        assert!(s.dyn_shapes.is_a("IDL:DynTest/Shapes:1.0").unwrap());
        let p = Point {
            x: -1,
            y: 2.0,
            label: "q".into(),
        };
        let mut dx = 10;
        let (r, note) = sh.move_point(&p, &mut dx).unwrap();
        assert_eq!((r, note), moved(&p, 10));
        assert_eq!(dx, 20);
        let pts = vec![p.clone(), Point::default_with(7)];
        assert_eq!(
            sh.reverse(&pts).unwrap(),
            pts.iter().rev().cloned().collect::<Vec<_>>()
        );
        let t = tree(4, 2, &mut 0);
        assert_eq!(sh.sum_tree(&t).unwrap(), (sum(&t), mirror(&t)));
        let mut d = 1.5;
        assert_eq!(
            sh.mix(1, 2, false, b'a', 3, 4.0, &mut d).unwrap(),
            mix(1, 2, false, b'a', 3, 4.0, 1.5)
        );
        assert_eq!(d, -1.5);
        match sh.check(3) {
            Err(shapes::CheckError::Bad(b)) => assert_eq!((b.code, b.why.as_str()), (3, "bad")),
            other => panic!("expected Bad, got {other:?}"),
        }
        assert_eq!(sh.check(0).unwrap(), 1);
        sh.ping(2).unwrap();
        sh.ping(3).unwrap();
        assert!(eventually(5, || sh.pings().unwrap() == 5));
        // The adapter answers _repository_id from primary_interface.
        let mut req = s.dyn_shapes.request("_repository_id");
        req.set_return_type(TypeCode::string_tc(0));
        req.invoke().unwrap();
        assert_eq!(
            req.return_value().get::<String>().as_deref(),
            Some("IDL:DynTest/Shapes:1.0")
        );
        // An operation the dynamic servant does not know.
        let e = s.dyn_shapes.request("nope").invoke().unwrap_err();
        assert_eq!(sys(&e).kind, K::BadOperation);
    });
}

trait DefaultWith {
    fn default_with(i: i32) -> Self;
}

impl DefaultWith for Point {
    fn default_with(i: i32) -> Self {
        Point {
            x: i,
            y: 0.0,
            label: String::new(),
        }
    }
}

#[test]
fn dii_client_against_the_generated_echo() {
    bounded(60, || {
        let s = setup();
        // Strings.
        let mut req = s.echo.request("echo_string");
        req.add_in_arg("s", Any::from("héllo"))
            .set_return_type(TypeCode::string_tc(0));
        req.invoke().unwrap();
        assert_eq!(req.return_value().get::<String>().as_deref(), Some("héllo"));
        // Sequences of primitives (typed vectors both ways).
        let seq = TypeCode::sequence_tc(0, TypeCode::long());
        let mut req = s.echo.request("echo_seq");
        req.add_in_arg(
            "s",
            Any::new(seq.clone(), DynValue::Longs((0..1000).collect())),
        )
        .set_return_type(seq.clone());
        req.invoke().unwrap();
        assert_eq!(
            req.return_value().value,
            DynValue::Longs((0..1000).collect())
        );
        // The element-by-element form encodes the same.
        req.set_arg(
            0,
            Any::new(
                seq,
                DynValue::Sequence(vec![DynValue::Long(4), DynValue::Long(5)]),
            ),
        )
        .unwrap();
        req.invoke().unwrap();
        assert_eq!(req.return_value().value, DynValue::Longs(vec![4, 5]));
        // fail(0): Oops, listed; fail(1): BAD_PARAM minor 7 from the servant.
        let mut req = s.echo.request("fail");
        req.add_in_arg("how", Any::from(0i32))
            .set_return_type(TypeCode::long())
            .exceptions(vec![oops_tc()]);
        let e = req.invoke().unwrap_err();
        assert_eq!(e.repository_id(), "IDL:Test/Echo/Oops:1.0");
        assert_eq!(
            e.user().unwrap().value,
            DynValue::Struct(vec![
                DynValue::Long(42),
                DynValue::String("on purpose".into())
            ])
        );
        req.set_arg(0, Any::from(1i32)).unwrap();
        let e = req.invoke().unwrap_err();
        assert_eq!(
            (sys(&e).kind, sys(&e).minor, sys(&e).completed),
            (K::BadParam, 7, CompletionStatus::Yes)
        );
        req.set_arg(0, Any::from(77i32)).unwrap();
        req.invoke().unwrap();
        assert_eq!(req.return_value().get::<i32>(), Some(77));
    });
}

#[test]
fn deferred_requests_and_their_ordering_errors() {
    bounded(60, || {
        let s = setup();
        for obj in [&s.static_shapes, &s.dyn_shapes] {
            let p = Point {
                x: 1,
                y: 0.0,
                label: "d".into(),
            };
            let mut req = move_point_request(obj, &p, 1);
            let e = req.poll_response().unwrap_err();
            assert_eq!(
                (e.kind, e.minor),
                (K::BadInvOrder, minor::BAD_INV_ORDER_REQUEST_NOT_SENT_YET)
            );
            req.send_deferred().unwrap();
            // Sending again before collecting is refused.
            let e = req.invoke().unwrap_err();
            assert_eq!(sys(&e).minor, minor::BAD_INV_ORDER_REQUEST_ALREADY_SENT);
            assert!(eventually(5, || req.poll_response().unwrap()));
            req.get_response().unwrap();
            check_move_point(&req, &p, 1);
            let e = req.get_response().unwrap_err();
            assert_eq!(sys(&e).minor, minor::BAD_INV_ORDER_RESULT_ALREADY_RECEIVED);
            // Several outstanding at once, collected in reverse order.
            let mut reqs: Vec<Request> = (0..5)
                .map(|i| {
                    let mut r = move_point_request(obj, &p, i);
                    r.send_deferred().unwrap();
                    r
                })
                .collect();
            for (i, r) in reqs.iter_mut().enumerate().rev() {
                r.get_response().unwrap();
                check_move_point(r, &p, i as i32);
            }
            // A deferred user exception.
            let mut chk = obj.request("check");
            chk.add_in_arg("code", Any::from(2i32))
                .set_return_type(TypeCode::long())
                .exceptions(vec![bad_tc()]);
            chk.send_deferred().unwrap();
            assert!(chk.get_response().unwrap_err().user().is_some());
            // A synchronous request cannot be polled.
            chk.invoke().unwrap_err();
            assert_eq!(
                chk.poll_response().unwrap_err().minor,
                minor::BAD_INV_ORDER_REQUEST_IS_SYNCHRONOUS
            );
        }
    });
}

#[test]
fn one_request_reused_a_thousand_times() {
    bounded(120, || {
        let s = setup();
        for obj in [&s.static_shapes, &s.dyn_shapes] {
            let mut p = Point {
                x: 0,
                y: 0.25,
                label: "r".into(),
            };
            let mut req = move_point_request(obj, &p, 0);
            for i in 0..1000 {
                p.x = i * 3;
                p.label = format!("r{i}");
                let args = req.arguments_mut();
                args[0].value.value = point_dyn(&p);
                args[1].value.value = DynValue::Long(i);
                req.invoke().unwrap();
                check_move_point(&req, &p, i);
            }
        }
    });
}

#[test]
fn context_clause_reaches_the_dsi_servant() {
    bounded(30, || {
        let s = setup();
        let mut req = s.dyn_shapes.request("context_values");
        req.contexts([("user", "ann"), ("lang", "rust")])
            .set_return_type(TypeCode::sequence_tc(0, TypeCode::string_tc(0)));
        req.invoke().unwrap();
        let strs = |v: &DynValue| match v {
            DynValue::Sequence(s) => s
                .iter()
                .map(|x| match x {
                    DynValue::String(s) => s.clone(),
                    _ => panic!("not a string"),
                })
                .collect::<Vec<_>>(),
            other => panic!("not a sequence: {other:?}"),
        };
        assert_eq!(
            strs(&req.return_value().value),
            ["user", "ann", "lang", "rust"]
        );
        // From a `Context`, only what the clause selects, in the
        // context's order.
        let ctx = peregrine_orb::Context::new()
            .with("lang", "rust")
            .with("user", "ann")
            .with("X_1", "a")
            .with("X", "b")
            .with("X_2", "c");
        req.context(&ctx, &["user", "X_*", "lang"]);
        req.invoke().unwrap();
        assert_eq!(
            strs(&req.return_value().value),
            ["lang", "rust", "user", "ann", "X_1", "a", "X_2", "c"]
        );
        // An empty clause is still a (empty) sequence.
        req.contexts(Vec::<(String, String)>::new());
        req.invoke().unwrap();
        assert!(strs(&req.return_value().value).is_empty());
        // Without a clause the servant finds nothing to read: MARSHAL.
        req.clear_contexts();
        let e = req.invoke().unwrap_err();
        assert_eq!(sys(&e).kind, K::Marshal);
    });
}

#[test]
fn misuse_is_a_typed_error_and_the_request_survives() {
    bounded(60, || {
        let s = setup();
        let obj = &s.dyn_shapes;
        // A value that does not match its TypeCode: BAD_PARAM, not sent.
        let mut req = obj.request("check");
        req.add_in_arg(
            "code",
            Any::new(TypeCode::long(), DynValue::String("x".into())),
        )
        .set_return_type(TypeCode::long());
        let e = req.invoke().unwrap_err();
        assert_eq!(
            (sys(&e).kind, sys(&e).completed),
            (K::BadParam, CompletionStatus::No)
        );
        let cause = sys(&e).cause().expect("a cause");
        assert_eq!(cause.phase(), Some(peregrine_orb::Phase::Encode));
        assert_eq!(cause.operation(), Some("check"));
        // Fixed, the same request works.
        req.set_arg(0, Any::from(0i32)).unwrap();
        req.invoke().unwrap();
        assert_eq!(req.return_value().get::<i32>(), Some(1));
        // An exception list entry that is not an exception: BAD_PARAM 21.
        req.exceptions(vec![TypeCode::long()]);
        let e = req.invoke().unwrap_err();
        assert_eq!(
            (sys(&e).kind, sys(&e).minor),
            (K::BadParam, minor::BAD_PARAM_NOT_AN_EXCEPTION)
        );
        req.exceptions(vec![bad_tc()]);
        // A reply that does not match the expected result type: MARSHAL,
        // COMPLETED_YES (the string's length reads as a long, then the
        // rest does not fit a struct of three longs and a sequence).
        req.set_return_type(TypeCode::struct_tc(
            "IDL:X:1.0",
            "X",
            [
                ("a", TypeCode::double()),
                ("b", TypeCode::sequence_tc(0, TypeCode::double())),
            ],
        ));
        let e = req.invoke().unwrap_err();
        assert_eq!(
            (sys(&e).kind, sys(&e).completed),
            (K::Marshal, CompletionStatus::Yes)
        );
        // An argument list that does not match the servant's: MARSHAL.
        let mut req = obj.request("move_point");
        req.add_in_arg("p", Any::from(1i32));
        let e = req.invoke().unwrap_err();
        assert_eq!(sys(&e).kind, K::Marshal);
        // A DSI result that does not match its TypeCode: BAD_PARAM,
        // COMPLETED_YES, from the adapter.
        let mut req = obj.request("bad_result");
        req.set_return_type(TypeCode::long());
        let e = req.invoke().unwrap_err();
        assert_eq!(
            (sys(&e).kind, sys(&e).completed),
            (K::BadParam, CompletionStatus::Yes)
        );
        // Ordering errors inside the servant.
        let mut req = obj.request("misuse");
        req.set_return_type(TypeCode::sequence_tc(0, TypeCode::ulong()));
        req.invoke().unwrap();
        assert_eq!(
            req.return_value().value,
            DynValue::ULongs(vec![
                minor::BAD_INV_ORDER_SET_RESULT_CALLED_OUT_OF_ORDER,
                minor::BAD_INV_ORDER_CTX_CALLED_OUT_OF_ORDER,
                minor::BAD_INV_ORDER_ARGUMENTS_CALLED_OUT_OF_ORDER,
                minor::BAD_PARAM_NOT_AN_EXCEPTION,
            ])
        );
        // Recursive TypeCodes survive reuse: the request's TypeCode is
        // still usable after many calls.
        assert_eq!(node_tc().member_type(1).unwrap().kind(), TcKind::Sequence);
        let _ = &s.client;
    });
}
