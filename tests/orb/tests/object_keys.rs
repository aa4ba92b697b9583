//! Readable object keys (`Orb::bind_object_key`): `corbaloc::host:port/Name`
//! reaches the bound object through a forward, for calls, `_non_existent`
//! and LocateRequests; unbinding makes the name `OBJECT_NOT_EXIST` again.
//! Also the omniORB-style endpoint arguments that fix the port and the
//! published address such URLs need.

use peregrine_orb::{CompletionStatus, ObjectRef, Orb, SystemExceptionKind as K};
use peregrine_orb_tests::*;

fn by_name(client: &Orb, server: &Orb, name: &str) -> EchoRef {
    let port = server.listen_addrs()[0].port();
    EchoRef::unchecked_narrow(
        client
            .string_to_object(&format!("corbaloc::127.0.0.1:{port}/{name}"))
            .unwrap(),
    )
}

#[test]
fn a_bound_name_reaches_its_object() {
    bounded(30, || {
        let (server, imp, echo) = server();
        let client = client();
        server.bind_object_key("Bank", &echo).unwrap();

        // A call: LOCATION_FORWARD, followed by the client. `corbaloc::`
        // is GIOP 1.0 and the IOR 1.2: the already-encoded request is
        // re-sent in 1.0 (it failed with TRANSIENT before).
        let bank = by_name(&client, &server, "Bank");
        assert_eq!(bank.echo_string("by name").unwrap(), "by name");
        // `_non_existent` on a fresh reference (forwarded too).
        assert!(!by_name(&client, &server, "Bank")
            .object()
            .non_existent()
            .unwrap());
        // A LocateRequest on a fresh reference: OBJECT_FORWARD, followed.
        let located = by_name(&client, &server, "Bank");
        assert!(located.object().locate().unwrap());
        assert_eq!(located.echo_string("after locate").unwrap(), "after locate");
        assert_eq!(
            imp.servant.calls.load(std::sync::atomic::Ordering::SeqCst),
            2
        );

        // Rebinding replaces; another name is independent.
        let other: EchoRef = server
            .root_poa()
            .servant_to_reference(&std::sync::Arc::new(EchoSkeleton::new(EchoImpl::default())))
            .unwrap();
        server.bind_object_key("Bank", &other).unwrap();
        server.bind_object_key("Echo", &echo).unwrap();
        let fresh = by_name(&client, &server, "Bank");
        assert_eq!(fresh.echo_string("x").unwrap(), "x");
        assert_eq!(
            imp.servant.calls.load(std::sync::atomic::Ordering::SeqCst),
            2
        );

        // Unbound: OBJECT_NOT_EXIST for calls, true for `_non_existent`,
        // UNKNOWN_OBJECT for LocateRequests. A name never bound alike.
        assert!(server.unbind_object_key("Bank"));
        assert!(!server.unbind_object_key("Bank"));
        for name in ["Bank", "Nobody"] {
            let gone = by_name(&client, &server, name);
            let e = gone.echo_string("x").unwrap_err();
            assert_eq!(
                (e.kind, e.completed),
                (K::ObjectNotExist, CompletionStatus::No)
            );
            assert!(by_name(&client, &server, name)
                .object()
                .non_existent()
                .unwrap());
            assert!(!by_name(&client, &server, name).object().locate().unwrap());
        }
        // Still bound.
        assert_eq!(
            by_name(&client, &server, "Echo").echo_string("y").unwrap(),
            "y"
        );
        client.shutdown(true);
        server.shutdown(true);
    });
}

#[test]
fn bad_bindings_are_refused() {
    bounded(30, || {
        let (server, _imp, echo) = server();
        let nil = server
            .string_to_object(
                &peregrine_giop::Ior::nil()
                    .to_stringified(peregrine_cdr::ByteOrder::NATIVE)
                    .unwrap(),
            )
            .unwrap();
        // The form of a POA key could never be reached by name.
        let poa_key = String::from_utf8(b"PGR1\x01\x00\x00".to_vec()).unwrap();
        for (name, obj) in [
            ("", echo.object()),
            ("Nil", &nil),
            (poa_key.as_str(), echo.object()),
        ] {
            let e = server.bind_object_key(name, obj).unwrap_err();
            assert_eq!(e.kind, K::BadParam, "{name:?}");
        }
        server.shutdown(true);
    });
}

/// omniORB's spelling of the listen and publish endpoints (and TAO's
/// `-ORBListenEndpoints`), so a server can promise a fixed
/// `corbaloc::host:port/Name`.
#[test]
fn omniorb_endpoint_arguments() {
    bounded(30, || {
        let mut args: Vec<String> = [
            "prog",
            "-ORBendPoint",
            "giop:tcp:127.0.0.1:0",
            "-ORBendPointPublish",
            "giop:tcp:bank.example:2809,giop:tcp:10.0.0.7:2810",
            "rest",
        ]
        .map(String::from)
        .to_vec();
        let orb = Orb::init(&mut args).unwrap();
        assert_eq!(args, ["prog", "rest"]);
        assert!(orb.listen_addrs()[0].ip().is_loopback());
        let eps = orb.published_endpoints().unwrap();
        let eps: Vec<(&str, u16)> = eps.iter().map(|e| (e.host.as_str(), e.port)).collect();
        assert_eq!(eps, [("bank.example", 2809), ("10.0.0.7", 2810)]);
        let r: ObjectRef = orb.root_poa().create_reference().unwrap();
        assert_eq!(r.ior().endpoints().unwrap()[0].host, "bank.example");
        orb.shutdown(true);

        // `giop:tcp::port`: every interface; TAO's iiop:// form.
        for ep in ["giop:tcp::0", "iiop://127.0.0.1:0"] {
            let orb = Orb::init(&mut vec!["-ORBListenEndpoints".into(), ep.into()]).unwrap();
            let a = orb.listen_addrs()[0];
            assert!(a.ip().is_unspecified() || a.ip().is_loopback(), "{ep}: {a}");
            assert_ne!(a.port(), 0);
            orb.shutdown(true);
        }
        let bad = Orb::init(&mut vec![
            "-ORBendPoint".into(),
            "giop:tcp:host:notaport".into(),
        ]);
        assert_eq!(bad.unwrap_err().kind, K::BadParam);
    });
}
