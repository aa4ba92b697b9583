//! Peregrine client -> omniORB server, over GIOP 1.0, 1.1 and 1.2.
//!
//! The omniORB server (`cxx/server.cc`) runs with `-ORBmaxGIOPVersion
//! 1.x`, so its IORs carry an IIOP 1.x profile and Peregrine speaks the
//! version the profile asks for. Every operation is called with value
//! checks on both sides; the server calls back a Peregrine `Callback`
//! servant passed as an argument; 1 MB arguments are fragmented by
//! Peregrine (`fragment_size` 64 KiB) and the 1 MB results by omniORB;
//! LocateRequests are sent with [`ObjectRef::locate`]; a reference in the
//! server's forwarding POA answers LOCATION_FORWARD, which Peregrine
//! follows.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use peregrine_interop_tests::bounded;
use peregrine_interop_tests::expected as x;
use peregrine_interop_tests::interop::{
    echo, CallbackRef, CallbackSkeleton, Choice, Color, EchoRef, Oops,
};
use peregrine_interop_tests::peers::OmniServer;
use peregrine_interop_tests::servants::CallbackImpl;
use peregrine_orb::{CompletionStatus, ObjectRef, Orb, SystemExceptionKind as K};

/// A Peregrine ORB that also serves the callback object.
fn client_orb() -> Orb {
    Orb::builder()
        .listen("127.0.0.1", 0)
        .call_timeout(Duration::from_secs(20))
        .fragment_size(64 * 1024)
        .build()
        .expect("client ORB")
}

fn obj(orb: &Orb, ior: &str) -> ObjectRef {
    orb.string_to_object(ior)
        .expect("string_to_object")
        .non_nil()
        .expect("non-nil")
}

/// Every operation against an omniORB server speaking at most 1.`minor`.
fn run(minor: u8) {
    let server = OmniServer::start(minor);
    let orb = client_orb();
    let o = obj(&orb, &server.echo_ior);
    let version = o.ior().iiop_profiles().expect("profiles")[0].version;
    assert_eq!(
        (version.major, version.minor),
        (1, minor),
        "omniORB's profile"
    );
    let e = EchoRef::narrow(o.clone())
        .expect("narrow")
        .expect("is an Echo");

    // LocateRequest, _is_a, _non_existent.
    assert!(o.locate().expect("locate"), "OBJECT_HERE");
    assert!(o.is_a("IDL:Interop/Echo:1.0").unwrap());
    assert!(!o.is_a("IDL:Other:1.0").unwrap());
    assert!(!o.non_existent().unwrap());
    let ep = &o.ior().endpoints().unwrap()[0];
    let bad = obj(
        &orb,
        &format!("corbaloc:iiop:1.{minor}@{}:{}/NoSuchKey", ep.host, ep.port),
    );
    assert!(!bad.locate().expect("locate bad key"), "UNKNOWN_OBJECT");
    let err = EchoRef::unchecked_narrow(bad).echo_long(1).unwrap_err();
    assert_eq!(err.kind, K::ObjectNotExist, "{err:?}");
    assert_eq!(err.completed, CompletionStatus::No);

    // Primitives (extremes) and the fixed values checked by omniORB.
    assert_eq!(e.echo_short(i16::MIN).unwrap(), i16::MIN);
    assert_eq!(e.echo_ushort(u16::MAX).unwrap(), u16::MAX);
    assert_eq!(e.echo_long(i32::MIN).unwrap(), i32::MIN);
    assert_eq!(e.echo_ulong(u32::MAX).unwrap(), u32::MAX);
    assert_eq!(e.echo_longlong(i64::MIN).unwrap(), i64::MIN);
    assert_eq!(e.echo_ulonglong(u64::MAX).unwrap(), u64::MAX);
    assert_eq!(e.echo_float(-0.375).unwrap(), -0.375);
    assert_eq!(e.echo_double(1e-300).unwrap(), 1e-300);
    assert!(e.echo_double(f64::NAN).unwrap().is_nan());
    assert!(e.echo_boolean(true).unwrap());
    assert!(!e.echo_boolean(false).unwrap());
    assert_eq!(e.echo_char(b'q').unwrap(), b'q');
    assert_eq!(e.echo_octet(0xff).unwrap(), 0xff);
    assert_eq!(e.echo_string(x::STR).unwrap(), x::STR);
    assert_eq!(e.echo_string("").unwrap(), "");
    let mut io = 1.25;
    assert_eq!(
        e.mix(5, 10_000_000_000, &mut io).unwrap(),
        (10_000_000_005, -5)
    );
    assert_eq!(io, 2.5);
    e.check_prims(
        x::S,
        x::US,
        x::L,
        x::UL,
        x::LL,
        x::ULL,
        x::F,
        x::D,
        x::B,
        x::C,
        x::O,
        x::STR,
    )
    .unwrap_or_else(|err| panic!("omniORB says: {err}"));

    // Wide characters need a negotiated wchar code set: omniORB puts a
    // CODE_SETS component only in IIOP 1.2 profiles, so over 1.0 and 1.1
    // Peregrine refuses to marshal them (MARSHAL minor 5, COMPLETED_NO,
    // nothing sent), as CORBA says for a server without wchar code set.
    let has_code_sets = o.ior().code_sets().is_some();
    assert_eq!(has_code_sets, minor == 2, "omniORB's CODE_SETS component");
    if has_code_sets {
        check_wide(&e);
    } else {
        assert_no_wchar(&e);
    }

    // Sequences, structs, enums, unions, arrays.
    let octets: Vec<u8> = (0..300).map(|i| i as u8).collect();
    assert_eq!(e.echo_octets(&octets).unwrap(), octets);
    assert_eq!(e.echo_octets(&[]).unwrap(), Vec::<u8>::new());
    let longs: Vec<i32> = (0..5).map(|i| i * 1_000_003 - 7).collect();
    assert_eq!(e.echo_longs(&longs).unwrap(), longs);
    let strings = vec!["x".to_string(), String::new(), x::STR.to_string()];
    assert_eq!(e.echo_strings(&strings).unwrap(), strings);
    let doubles: Vec<f64> = (0..7).map(|i| f64::from(i) / 3.0).collect();
    assert_eq!(e.echo_doubles(&doubles).unwrap(), doubles);
    let plains = vec![x::plain1(), x::plain2()];
    assert_eq!(e.echo_plains(&plains).unwrap(), plains);
    assert_eq!(e.echo_plain(&x::plain1()).unwrap(), x::plain1());
    assert_eq!(e.echo_record(&x::record()).unwrap(), x::record());
    assert_eq!(e.echo_color(Color::Blue).unwrap(), Color::Blue);
    for c in [
        Choice::Num(-5),
        Choice::Text("union".into()),
        Choice::Pod(x::plain2()),
        Choice::Hue {
            disc: 42,
            value: Color::Red,
        },
    ] {
        assert_eq!(e.echo_choice(&c).unwrap(), c);
    }
    // Several labels and default: every discriminator Peregrine sends
    // arrives as sent at omniORB (check_labels) and comes back (echo);
    // omniORB's values arrive with each label (make_labels).
    for d in x::LABEL_DISCS {
        let v = x::labels(d);
        assert_eq!(v.discriminator(), d);
        let back = e.echo_labels(&v).unwrap();
        assert_eq!(back.discriminator(), d, "echo_labels {v:?}");
        assert_eq!(back, v);
        e.check_labels(&v, d)
            .unwrap_or_else(|err| panic!("omniORB says: {err}"));
        let made = e.make_labels(d).unwrap();
        assert_eq!(made.discriminator(), d, "make_labels {made:?}");
        assert_eq!(made, v);
    }
    let mut m = x::grid();
    m[1][2] = -9;
    assert_eq!(e.echo_matrix(&m).unwrap(), m);
    let b8 = [250, 251, 252, 253, 254, 255, 0, 1];
    assert_eq!(e.echo_bytes8(&b8).unwrap(), b8);
    e.check_record(&x::record())
        .unwrap_or_else(|err| panic!("omniORB says: {err}"));
    let strs: Vec<String> = x::STRINGS.iter().map(|s| s.to_string()).collect();
    e.check_seqs(
        &x::OCTETS,
        &x::LONGS,
        &strs,
        &x::choice(),
        &x::grid(),
        &plains,
    )
    .unwrap_or_else(|err| panic!("omniORB says: {err}"));
    assert_eq!(e.make_record().unwrap(), x::record());

    // Object references as arguments and results; callbacks.
    let me = e.echo_self(Some(&e)).unwrap().expect("non-nil");
    assert!(me.object().is_equivalent(&o));
    assert_eq!(me.echo_long(17).unwrap(), 17);
    assert!(e.echo_self(None).unwrap().is_none());
    let cb_impl = Arc::new(CallbackImpl::default());
    let servant = Arc::new(CallbackSkeleton::new(cb_impl.clone()));
    let root = orb.root_poa();
    root.manager().activate().unwrap();
    let cb: CallbackRef = root.servant_to_reference(&servant).unwrap();
    assert_eq!(e.call_back(Some(&cb), 41).unwrap(), 42);
    assert_eq!(cb_impl.pings.load(Ordering::SeqCst), 1);
    assert_eq!(*cb_impl.last.lock().unwrap(), "from omniORB");
    // omniORB sends 1 MB to the Peregrine callback (fragmented in 1.1/1.2).
    assert_eq!(e.call_back_big(Some(&cb), 1 << 20).unwrap(), 1 << 20);
    assert_eq!(cb_impl.took.load(Ordering::SeqCst), 1 << 20);

    // User and system exceptions, with members, minor codes, completion.
    match e.fail(0, 77) {
        Err(echo::FailError::Oops(o)) => assert_eq!(
            o,
            Oops {
                code: 77,
                why: "oops".into(),
                hue: Color::Blue,
                data: vec![1, 2, 3]
            }
        ),
        other => panic!("fail(0): {other:?}"),
    }
    match e.fail(1, 0x5047_0007) {
        Err(echo::FailError::System(s)) => {
            assert_eq!(
                (s.kind, s.minor, s.completed),
                (K::BadParam, 0x5047_0007, CompletionStatus::No)
            )
        }
        other => panic!("fail(1): {other:?}"),
    }
    match e.fail(2, 42) {
        Err(echo::FailError::System(s)) => {
            assert_eq!(
                (s.kind, s.minor, s.completed),
                (K::NoPermission, 42, CompletionStatus::Yes)
            )
        }
        other => panic!("fail(2): {other:?}"),
    }
    assert_eq!(e.fail(3, 9).unwrap(), 9);

    // Oneways, then a twoway on the same connection sees them all.
    for i in 1..=10 {
        e.notify(i).unwrap();
    }
    assert_eq!(e.notified().unwrap(), 55);

    // Large arguments: 1 MB each way (Peregrine fragments the request in
    // 1.1/1.2, omniORB the reply).
    let big: Vec<u8> = (0..1 << 20).map(x::big_octet).collect();
    let r = e
        .big_octets(&big, 1 << 20)
        .unwrap_or_else(|err| panic!("{err}; omniORB: {}", server.peer.stderr()));
    assert_eq!(r.len(), 1 << 20);
    assert!(r
        .iter()
        .enumerate()
        .all(|(i, b)| *b == x::big_octet_reply(i)));
    let bigd: Vec<f64> = (0..1u32 << 17).map(|i| f64::from(i) * 0.5).collect();
    let r = e
        .big_doubles(&bigd, 1 << 17)
        .unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(r.len(), 1 << 17);
    assert!(r.iter().enumerate().all(|(i, d)| *d == -(i as f64 * 0.25)));
    assert_eq!(e.echo_long(5).unwrap(), 5);

    // LOCATION_FORWARD from omniORB's servant locator, followed.
    let fwd = obj(&orb, &server.fwd_ior);
    // omniORB answers LocateRequests on the forwarding POA with
    // OBJECT_HERE (its servant locator is not consulted).
    assert!(fwd.locate().unwrap());
    let fe = EchoRef::unchecked_narrow(fwd);
    assert_eq!(fe.echo_long(99).unwrap(), 99);
    assert_eq!(fe.echo_string(x::STR).unwrap(), x::STR);
    assert_eq!(fe.big_octets(&big[..1000], 10).unwrap().len(), 10);

    // Orderly end: the server exits after the oneway shutdown.
    e.shutdown().unwrap();
    let mut server = server;
    let status = server.peer.finish(Duration::from_secs(20));
    assert!(
        status.success(),
        "omniORB server: {status}: {}",
        server.peer.stderr()
    );
    orb.shutdown(true);
}

/// Wide characters with negotiated code sets (UTF-16) must round-trip.
fn check_wide(e: &EchoRef) {
    assert_eq!(e.echo_wchar(x::WC).unwrap(), x::WC);
    assert_eq!(e.echo_wstring(x::WSTR).unwrap(), x::WSTR);
    assert_eq!(e.echo_wstring("").unwrap(), "");
    assert_eq!(e.make_wstring().unwrap(), x::WSTR);
    e.check_wide(x::WC, x::WSTR)
        .unwrap_or_else(|err| panic!("omniORB says: {err}"));
    // Outside the basic multilingual plane: UTF-16 surrogate pairs.
    let astral = "smile \u{1F600}";
    assert_eq!(e.echo_wstring(astral).unwrap(), astral);
}

/// Without a negotiated wchar code set, wide arguments are refused
/// before anything is sent.
fn assert_no_wchar(e: &EchoRef) {
    let expect = (K::Marshal, 0x4f4d_0005, CompletionStatus::No);
    for (what, r) in [
        ("echo_wchar", e.echo_wchar(x::WC).map(|_| ())),
        ("echo_wstring", e.echo_wstring(x::WSTR).map(|_| ())),
    ] {
        let err = r.expect_err(what);
        assert_eq!(
            (err.kind, err.minor, err.completed),
            expect,
            "{what}: {err:?}"
        );
    }
    match e.check_wide(x::WC, x::WSTR) {
        Err(echo::CheckWideError::System(err)) => {
            assert_eq!((err.kind, err.minor, err.completed), expect)
        }
        other => panic!("check_wide: {other:?}"),
    }
    // The connection is still fine.
    assert_eq!(e.echo_long(3).unwrap(), 3);
}

#[test]
fn giop_1_0() {
    bounded(150, || run(0));
}

#[test]
fn giop_1_1() {
    bounded(150, || run(1));
}

#[test]
fn giop_1_2() {
    bounded(150, || run(2));
}

/// GIOP 1.1 *with* negotiated code sets: omniORB's IIOP 1.2 profile (with
/// CODE_SETS) called by a Peregrine ORB capped at 1.1
/// (`max_giop_version`, like omniORB's `-ORBmaxGIOPVersion`). Everything
/// but wide characters works; for those, omniORB 4.2.5 expects the GIOP
/// 1.2 encoding in 1.1 too (see docs/interop.md), so the outcome is
/// asserted as observed.
#[test]
fn giop_1_1_capped_client_with_code_sets() {
    bounded(60, || {
        let server = OmniServer::start(2);
        let orb = Orb::builder()
            .call_timeout(Duration::from_secs(20))
            .max_giop_version(peregrine_cdr::GiopVersion::V1_1)
            .fragment_size(64 * 1024)
            .build()
            .expect("client ORB");
        let e = EchoRef::unchecked_narrow(obj(&orb, &server.echo_ior));
        assert!(e.object().ior().code_sets().is_some());
        assert_eq!(e.echo_string(x::STR).unwrap(), x::STR);
        let bigd: Vec<f64> = (0..1u32 << 17).map(|i| f64::from(i) * 0.5).collect();
        assert_eq!(e.big_doubles(&bigd, 8).unwrap().len(), 8);
        let wc = e.echo_wchar(x::WC);
        let ws = e.echo_wstring(x::WSTR);
        let mk = e.make_wstring();
        println!(
            "GIOP 1.1 with code sets: echo_wchar {wc:?}, echo_wstring {ws:?}, make_wstring {mk:?}"
        );
        // omniORB's server refuses wide arguments in 1.1 whatever the
        // encoding (BAD_PARAM minor 23, "wchar code set not known"), as it
        // does for its own 1.1 client ...
        for r in [wc.map(|_| ()), ws.map(|_| ())] {
            let err = r.unwrap_err();
            assert_eq!(
                (err.kind, err.minor, err.completed),
                (K::BadParam, 0x4f4d_0017, CompletionStatus::No)
            );
        }
        // ... and drops the connection instead of replying with a wide
        // result: COMM_FAILURE, COMPLETED_MAYBE (never re-sent) ...
        let err = mk.unwrap_err();
        assert_eq!(
            (err.kind, err.completed),
            (K::CommFailure, CompletionStatus::Maybe)
        );
        // ... after which the next call reconnects.
        assert_eq!(e.echo_long(1).unwrap(), 1);
        orb.shutdown(true);
    });
}
