//! POA policies and manager states, ORB lifecycle, initial references,
//! LOCATION_FORWARD, CloseConnection on shutdown.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use peregrine_cdr::{ByteOrder, GiopVersion, Writer};
use peregrine_giop::system_exception::minor;
use peregrine_giop::{
    decode_message, encode_reply, Message, ReplyHeader, ReplyStatus, ServiceContexts,
};
use peregrine_orb::{
    CompletionStatus, IdAssignment, InitialReference, Lifespan, Orb, PoaError, Policies,
    ServantRetention, SystemExceptionKind as K,
};
use peregrine_orb_tests::*;

#[test]
fn manager_states() {
    bounded(30, || {
        let (server, _imp, obj) = server();
        let client = client();
        let e = through(&client, &obj);
        let m = server.root_poa().manager();
        m.discard_requests().unwrap();
        let err = e.echo_string("x").unwrap_err();
        assert_eq!(
            (err.kind, err.minor),
            (K::Transient, minor::TRANSIENT_POA_NO_RESOURCE)
        );
        m.hold_requests().unwrap();
        let e2 = e.clone();
        let h = std::thread::spawn(move || e2.echo_string("held"));
        std::thread::sleep(Duration::from_millis(200));
        assert!(!h.is_finished(), "held request must wait");
        m.activate().unwrap();
        assert_eq!(h.join().unwrap().unwrap(), "held");
        m.deactivate().unwrap();
        let err = e.echo_string("x").unwrap_err();
        assert_eq!(
            (err.kind, err.minor),
            (K::ObjAdapter, minor::OBJ_ADAPTER_POA_MANAGER_INACTIVE)
        );
        assert_eq!(m.activate(), Err(PoaError::AdapterInactive));
        server.shutdown(true);
    });
}

#[test]
fn child_poas_user_ids_persistent_and_default_servant() {
    bounded(30, || {
        let (server, _imp, _obj) = server();
        let root = server.root_poa();
        let pol = Policies::persistent_user_ids();
        assert_eq!(pol.lifespan, Lifespan::Persistent);
        let child = root
            .create_poa("Persist", Some(&root.manager()), pol)
            .unwrap();
        assert!(matches!(
            root.create_poa("Persist", None, pol),
            Err(PoaError::AdapterAlreadyExists)
        ));
        let s = echo_servant();
        child.activate_object_with_id(b"alice", s.clone()).unwrap();
        assert_eq!(
            child.activate_object_with_id(b"alice", echo_servant()),
            Err(PoaError::ObjectAlreadyActive)
        );
        let r = child.id_to_reference(b"alice").unwrap();
        assert_eq!(child.reference_to_id(&r).unwrap(), b"alice");
        let client = client();
        let a = EchoRef::unchecked_narrow(client.string_to_object(&r.to_string()).unwrap());
        assert_eq!(a.echo_string("persistent").unwrap(), "persistent");
        // The key is reachable by corbaloc too (its escaped form).
        let key = &r.ior().iiop_profiles().unwrap()[0].object_key;
        let url = format!(
            "corbaloc:iiop:1.2@127.0.0.1:{}/{}",
            server.listen_addrs()[0].port(),
            peregrine_giop::corbaloc::escape_key(key)
        );
        let c = EchoRef::unchecked_narrow(client.string_to_object(&url).unwrap());
        assert_eq!(c.echo_string("via corbaloc").unwrap(), "via corbaloc");
        child.deactivate_object(b"alice").unwrap();
        assert_eq!(a.echo_string("x").unwrap_err().kind, K::ObjectNotExist);

        // Default servant, NON_RETAIN: every id reaches it.
        let pol = Policies::default_servant();
        let dflt = root
            .create_poa("Default", Some(&root.manager()), pol)
            .unwrap();
        dflt.set_servant(echo_servant()).unwrap();
        for id in [&b"one"[..], b"two"] {
            let r = dflt.create_reference_with_id::<EchoRef>(id).unwrap();
            let d = EchoRef::unchecked_narrow(
                client.object_from_ior(r.object().ior().clone()).unwrap(),
            );
            assert_eq!(d.echo_string("dflt").unwrap(), "dflt");
        }
        // Destroying a POA kills its references.
        let r = dflt.create_reference_with_id::<EchoRef>(b"x").unwrap();
        dflt.destroy(false, false).unwrap();
        let d =
            EchoRef::unchecked_narrow(client.object_from_ior(r.object().ior().clone()).unwrap());
        assert_eq!(d.echo_string("x").unwrap_err().kind, K::ObjectNotExist);
        // The `..Policies::ROOT` trap: refused, naming the clash and the fix.
        match root.create_poa(
            "Trap",
            None,
            Policies {
                id_assignment: IdAssignment::User,
                ..Policies::ROOT
            },
        ) {
            Err(e @ PoaError::InvalidPolicy(_)) => {
                let m = e.to_string();
                assert!(m.contains("IMPLICIT_ACTIVATION with USER_ID"), "{m}");
                assert!(m.contains("Policies::persistent_user_ids()"), "{m}");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            root.create_poa(
                "Bad",
                None,
                Policies {
                    servant_retention: ServantRetention::NonRetain,
                    ..Policies::default()
                }
            ),
            Err(PoaError::InvalidPolicy(_))
        ));
        server.shutdown(true);
    });
}

#[test]
fn orb_args_initial_references_and_published_addresses() {
    bounded(30, || {
        let (server, _imp, obj) = server();
        let mut args: Vec<String> = [
            "prog",
            "-ORBInitRef",
            &format!("Echo={}", obj.object()),
            "-ORBCallTimeout=5000",
            "-ORBListenEndpoint",
            "127.0.0.1:0",
            "-ORBPublishAddress",
            "example.invalid:0",
            "-ORBPublishAddress",
            "[::1]:4321",
            "rest",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let orb = Orb::init(&mut args).unwrap();
        assert_eq!(args, ["prog", "rest"]);
        let eps = orb.published_endpoints().unwrap();
        let port = orb.listen_addrs()[0].port();
        assert_eq!(eps[0].host, "example.invalid");
        assert_eq!(eps[0].port, port);
        assert_eq!((eps[1].host.as_str(), eps[1].port), ("::1", 4321));
        // Published addresses go into IORs (the second as an alternate).
        let r = orb.root_poa().create_reference::<EchoRef>().unwrap();
        let ior_eps = r.object().ior().endpoints().unwrap();
        assert_eq!(ior_eps, eps);
        match orb.resolve_initial_references("Echo").unwrap() {
            InitialReference::Object(o) => {
                assert_eq!(
                    EchoRef::unchecked_narrow(o)
                        .echo_string("init ref")
                        .unwrap(),
                    "init ref"
                )
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            orb.resolve_initial_references("RootPOA").unwrap(),
            InitialReference::RootPoa(_)
        ));
        assert!(orb.resolve_initial_references("Nope").is_err());
        let e = EchoRef::unchecked_narrow(orb.string_to_object("corbaloc:rir:/Echo").unwrap());
        assert_eq!(e.echo_string("rir").unwrap(), "rir");
        assert_eq!(
            orb.string_to_object("bogus:x").unwrap_err().kind,
            K::BadParam
        );
        assert!(Orb::init(&mut vec!["-ORBNoSuchOption".into(), "1".into()]).is_err());
        // A wildcard listener never publishes 0.0.0.0.
        let any = Orb::builder().listen("0.0.0.0", 0).build().unwrap();
        for e in any.published_endpoints().unwrap() {
            assert_ne!(e.host, "0.0.0.0");
        }
        any.shutdown(true);
        orb.shutdown(true);
        server.shutdown(true);
    });
}

#[test]
fn location_forward_is_followed() {
    bounded(30, || {
        let (server, _imp, obj) = server();
        // A fake server that answers every request with LOCATION_FORWARD.
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let target = obj.object().ior().clone();
        let h = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut buf = vec![0u8; 65536];
            let mut n = 0;
            loop {
                let k = s.read(&mut buf[n..]).unwrap();
                if k == 0 {
                    return;
                }
                n += k;
                if n >= 12 {
                    let size = u32::from_be_bytes(buf[8..12].try_into().unwrap()) as usize;
                    let size = if buf[6] & 1 == 1 {
                        u32::from_le_bytes(buf[8..12].try_into().unwrap()) as usize
                    } else {
                        size
                    };
                    if n >= 12 + size {
                        break;
                    }
                }
            }
            let (_, m) = decode_message(&buf[..n], &Default::default()).unwrap();
            let Message::Request { header, .. } = m else {
                panic!()
            };
            let mut w = Writer::new(ByteOrder::Big);
            let p = encode_reply(
                &mut w,
                GiopVersion::V1_2,
                &ReplyHeader {
                    request_id: header.request_id,
                    status: ReplyStatus::LocationForward,
                    service_contexts: ServiceContexts::EMPTY,
                },
            )
            .unwrap();
            peregrine_cdr::Encode::encode(&target, &mut w).unwrap();
            p.finish(&mut w).unwrap();
            s.write_all(w.as_slice()).unwrap();
            let _ = s.read(&mut buf);
        });
        let client = client();
        let url = format!("corbaloc:iiop:1.2@127.0.0.1:{port}/Echo");
        let e = EchoRef::unchecked_narrow(client.string_to_object(&url).unwrap());
        assert_eq!(e.echo_string("forwarded").unwrap(), "forwarded");
        // The forward sticks for later calls.
        assert_eq!(e.echo_string("again").unwrap(), "again");
        drop(e);
        client.shutdown(true);
        h.join().unwrap();
        server.shutdown(true);
    });
}

#[test]
fn shutdown_sends_close_connection_and_clients_recover() {
    bounded(30, || {
        let (server, _imp, obj) = server();
        let client = client();
        let e = through(&client, &obj);
        assert_eq!(e.echo_string("before").unwrap(), "before");
        let t0 = Instant::now();
        server.shutdown(true);
        assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
        assert_eq!(server.server_connections(), 0);
        // The server is gone: a prompt failure, never a hang.
        let err = e.echo_string("after").unwrap_err();
        assert!(matches!(err.kind, K::Transient | K::CommFailure), "{err}");
        // Calls through a shut-down ORB: BAD_INV_ORDER.
        let own = through(&server, &obj);
        assert_eq!(own.echo_string("x").unwrap_err().kind, K::BadInvOrder);
    });
}

/// A stringified nil IOR is a nil reference, as in C++: no error from
/// `string_to_object`, `INV_OBJREF` from a call, `None` from a narrow; a
/// nil `-ORBInitRef` is no initial reference.
#[test]
fn string_to_object_of_nil_is_a_nil_reference() {
    bounded(30, || {
        let nil_ior = peregrine_giop::Ior::nil()
            .to_stringified(ByteOrder::NATIVE)
            .unwrap();
        let orb = Orb::builder()
            .init_ref("Nothing", &nil_ior)
            .build()
            .unwrap();
        let nil = orb.string_to_object(&nil_ior).unwrap();
        assert!(nil.is_nil());
        assert!(nil.clone().non_nil().is_none());
        assert!(!nil.is_a(EchoRef::REPOSITORY_ID).unwrap());
        assert!(EchoRef::narrow(nil.clone()).unwrap().is_none());
        let e = EchoRef::unchecked_narrow(nil);
        let err = e.echo_string("x").unwrap_err();
        assert_eq!(
            (err.kind, err.minor, err.completed),
            (
                K::InvObjref,
                minor::INV_OBJREF_NO_IIOP_PROFILE,
                CompletionStatus::No
            )
        );
        assert!(matches!(
            orb.resolve_initial_references("Nothing"),
            Err(peregrine_orb::ResolveError::InvalidName(_))
        ));
        // A real reference is not nil.
        let (server, _imp, obj) = server();
        let r = orb.string_to_object(&obj.object().to_string()).unwrap();
        assert!(!r.is_nil());
        assert!(r.non_nil().is_some());
        server.shutdown(true);
        orb.shutdown(true);
    });
}

/// The POA hands out the generated reference types: no narrow, the
/// interface's repository id in the IOR, and the untyped forms agree.
#[test]
fn typed_references_from_the_poa() {
    bounded(30, || {
        let (server, _imp, _obj) = server();
        let root = server.root_poa();
        let imp = std::sync::Arc::new(EchoSkeleton::new(EchoImpl::default()));
        let echo: EchoRef = root.servant_to_reference(&imp).unwrap();
        assert_eq!(echo.object().type_id(), EchoRef::REPOSITORY_ID);
        // The same servant (UNIQUE_ID) gives the same object untyped.
        let dyn_servant: std::sync::Arc<dyn peregrine_orb::Servant> = imp.clone();
        let untyped = root.servant_to_object(&dyn_servant).unwrap();
        assert!(untyped.is_equivalent(echo.object()));
        let client = client();
        assert_eq!(
            through(&client, &echo).echo_string("typed").unwrap(),
            "typed"
        );

        let users = root
            .create_poa(
                "Typed",
                Some(&root.manager()),
                Policies::persistent_user_ids(),
            )
            .unwrap();
        let c: EchoRef = users.create_reference_with_id(b"c1").unwrap();
        assert_eq!(c.object().type_id(), EchoRef::REPOSITORY_ID);
        assert_eq!(users.reference_to_id(c.object()).unwrap(), b"c1");
        // Nothing active under the id yet: the typed reference is real.
        let seen =
            EchoRef::unchecked_narrow(client.string_to_object(&c.object().to_string()).unwrap());
        assert!(seen.object().non_existent().unwrap());
        users
            .activate_object_with_id(b"c1", echo_servant())
            .unwrap();
        assert!(!seen.object().non_existent().unwrap());
        // The untyped form with a type id chosen at run time.
        let o = users.create_object_with_id(b"c2", "IDL:Other:1.0").unwrap();
        assert_eq!(o.type_id(), "IDL:Other:1.0");
        // A system id, typed.
        let fresh: EchoRef = root.create_reference().unwrap();
        assert_eq!(fresh.object().type_id(), EchoRef::REPOSITORY_ID);
        // `ObjectRef` is a `Reference` too: CORBA::Object.
        let any: peregrine_orb::ObjectRef = users.create_reference_with_id(b"c3").unwrap();
        assert_eq!(any.type_id(), "IDL:omg.org/CORBA/Object:1.0");
        client.shutdown(true);
        server.shutdown(true);
    });
}
