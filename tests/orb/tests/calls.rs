//! Invocations over real TCP on 127.0.0.1: echo, exceptions, oneway,
//! multiplexing, deadlines, dropped connections, garbage, stale keys.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use peregrine_orb::{CompletionStatus, Servant, SystemExceptionKind as K};
use peregrine_orb_tests::*;

#[test]
fn echo_strings_sequences_and_exceptions() {
    bounded(30, || {
        let (server, imp, obj) = server();
        let client = client();
        let e = through(&client, &obj);
        assert_eq!(e.echo_string("hello").unwrap(), "hello");
        assert_eq!(e.echo_string("").unwrap(), "");
        assert_eq!(e.echo_string("héllo wörld €").unwrap(), "héllo wörld €");
        assert_eq!(
            e.echo_wstring("wide \u{1F600} ü").unwrap(),
            "wide \u{1F600} ü"
        );
        let v: Vec<i32> = (0..10_000).collect();
        assert_eq!(e.echo_seq(&v).unwrap(), v);
        assert_eq!(e.echo_seq(&[]).unwrap(), Vec::<i32>::new());
        assert_eq!(e.fail(5).unwrap(), 5);
        match e.fail(0) {
            Err(FailError::Oops(o)) => assert_eq!(
                o,
                Oops {
                    code: 42,
                    why: "on purpose".into()
                }
            ),
            other => panic!("{other:?}"),
        }
        match e.fail(1) {
            Err(FailError::System(s)) => {
                assert_eq!(
                    (s.kind, s.minor, s.completed),
                    (K::BadParam, 7, CompletionStatus::Yes)
                )
            }
            other => panic!("{other:?}"),
        }
        // A user exception the stub does not know: UNKNOWN minor 1. The
        // servant is a `Test::Evolved`, whose `fail` can raise
        // `Test::Unknown`, called through the `Echo` stub.
        let evolved: Arc<dyn Servant> = Arc::new(EvolvedSkeleton::new(EvolvedImpl));
        let evolved = server.root_poa().servant_to_object(&evolved).unwrap();
        let old = through(&client, &EchoRef::unchecked_narrow(evolved));
        assert_eq!(old.fail(5).unwrap(), 5);
        match old.fail(3) {
            Err(FailError::System(s)) => {
                assert_eq!((s.kind, s.minor), (K::Unknown, 0x4f4d_0001));
                assert_eq!(s.completed, CompletionStatus::Yes);
            }
            other => panic!("{other:?}"),
        }
        // A panicking servant: UNKNOWN, and the connection keeps working.
        match e.fail(2) {
            Err(FailError::System(s)) => assert_eq!(
                (s.kind, s.minor),
                (
                    K::Unknown,
                    peregrine_giop::system_exception::minor::UNKNOWN_PANIC
                )
            ),
            other => panic!("{other:?}"),
        }
        assert_eq!(e.echo_string("still here").unwrap(), "still here");
        // Unknown operation (`Test::Stranger::no_such_op` on an Echo).
        let r = StrangerRef::unchecked_narrow(e.object().clone()).no_such_op();
        let x = r.unwrap_err();
        assert_eq!(
            (x.kind, x.minor, x.completed),
            (
                K::BadOperation,
                peregrine_orb::minor::BAD_OPERATION_UNKNOWN_OPERATION,
                peregrine_orb::CompletionStatus::No
            )
        );
        assert_eq!(x.minor, 0x4f4d_0002);
        // _is_a, _non_existent handled by the ORB.
        assert!(e.object().is_a(EchoRef::REPOSITORY_ID).unwrap());
        let anon = peregrine_orb::ObjectRef::from_ior(&client, {
            let mut i = e.object().ior().clone();
            i.type_id.clear();
            i
        });
        assert!(anon.is_a(EchoRef::REPOSITORY_ID).unwrap());
        assert!(!anon.is_a("IDL:Other:1.0").unwrap());
        assert!(!e.object().non_existent().unwrap());
        // Object references as results.
        let me = e.me().unwrap().unwrap();
        assert!(me.object().is_equivalent(e.object()));
        assert_eq!(me.echo_string("via me").unwrap(), "via me");
        assert!(imp.servant.calls.load(std::sync::atomic::Ordering::Relaxed) > 5);
        assert_eq!(client.client_connections(), 1);
        server.shutdown(true);
        client.shutdown(true);
    });
}

#[test]
fn oneway_then_twoway_in_order() {
    bounded(30, || {
        let (server, imp, obj) = server();
        let client = client();
        let e = through(&client, &obj);
        for i in 0..100 {
            e.note(&format!("note {i}")).unwrap();
        }
        // Same connection, processed in order: all notes are in.
        assert_eq!(e.notes().unwrap(), 100);
        assert_eq!(
            imp.servant.notes.load(std::sync::atomic::Ordering::SeqCst),
            100
        );
        server.shutdown(true);
    });
}

#[test]
fn many_threads_share_one_connection() {
    bounded(60, || {
        let (server, _imp, obj) = server();
        let client = client();
        let e = through(&client, &obj);
        // Many references to the same endpoint.
        let refs: Vec<EchoRef> = (0..8).map(|_| through(&client, &obj)).collect();
        let hs: Vec<_> = refs
            .into_iter()
            .enumerate()
            .map(|(t, r)| {
                std::thread::spawn(move || {
                    for i in 0..200 {
                        let s = format!("t{t} call {i}");
                        assert_eq!(r.echo_string(&s).unwrap(), s);
                        if i % 50 == 0 {
                            // A slow call does not block the others' replies.
                            r.sleep_ms(20).unwrap();
                        }
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(e.echo_string("done").unwrap(), "done");
        assert_eq!(
            client.client_connections(),
            1,
            "one connection per endpoint"
        );
        assert_eq!(server.server_connections(), 1);
        server.shutdown(true);
    });
}

/// A synchronous caller reads its own reply as the connection's leader
/// and decodes it in place before handing the connection back; a panic
/// while it leads (in the argument encoder or the result decoder) must
/// still hand it back, or every later caller would wait for a reader that
/// never comes.
#[test]
fn panicking_caller_does_not_keep_the_connection() {
    bounded(60, || {
        let (server, _imp, obj) = server();
        let client = client();
        let e = through(&client, &obj);
        assert_eq!(e.echo_string("warm").unwrap(), "warm");
        let o = e.object().clone();
        let in_encode = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _: Result<(), peregrine_orb::SystemException> = o.invoke(
                "echo_string",
                |_w| panic!("encoder fails"),
                |_r| Ok(()),
                |_id, _r| None,
            );
        }));
        assert!(in_encode.is_err());
        let in_decode = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _: Result<(), peregrine_orb::SystemException> = o.invoke(
                "echo_string",
                |w| w.write_string("x"),
                |_r| panic!("decoder fails"),
                |_id, _r| None,
            );
        }));
        assert!(in_decode.is_err());
        // Another thread, then this one, on the same connection.
        let r = through(&client, &obj);
        let h = std::thread::spawn(move || r.echo_string("other thread").unwrap());
        assert_eq!(h.join().unwrap(), "other thread");
        assert_eq!(e.echo_string("after").unwrap(), "after");
        assert_eq!(client.client_connections(), 1);
        server.shutdown(true);
    });
}

#[test]
fn deadline_expires_with_timeout_and_connection_survives() {
    bounded(30, || {
        let (server, _imp, obj) = server();
        let client = client();
        let e = through(&client, &obj);
        let quick = EchoRef::unchecked_narrow(e.object().with_timeout(Duration::from_millis(200)));
        let t0 = Instant::now();
        let err = quick.sleep_ms(1500).unwrap_err();
        let took = t0.elapsed();
        assert_eq!(err.kind, K::Timeout);
        assert_eq!(err.completed, CompletionStatus::Maybe);
        assert!(took < Duration::from_millis(1200), "took {took:?}");
        // The cause names the operation, the peer, the phase and the
        // deadline.
        let cause = err.cause().expect("a cause");
        assert_eq!(cause.operation(), Some("sleep_ms"));
        assert_eq!(cause.phase(), Some(peregrine_orb::Phase::Receive));
        assert!(cause.peer().unwrap().starts_with("127.0.0.1:"), "{err}");
        let text = err.to_string();
        assert!(
            text.contains("receive from 127.0.0.1:")
                && text.contains("for 'sleep_ms'")
                && text.contains("deadline of 200ms expired"),
            "{text}"
        );
        // The late reply is discarded; the connection still works.
        assert_eq!(e.echo_string("after").unwrap(), "after");
        assert_eq!(client.client_connections(), 1);
        server.shutdown(true);
    });
}

/// A fake server that accepts, reads what comes, and closes after `after`.
fn dropping_server(after: Duration) -> (std::net::SocketAddr, std::thread::JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let h = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        let end = Instant::now() + after;
        let mut buf = [0u8; 4096];
        while Instant::now() < end {
            let _ = s.read(&mut buf);
        }
        drop(s);
    });
    (addr, h)
}

#[test]
fn dropped_connection_fails_all_pending_calls_at_once() {
    bounded(30, || {
        let (addr, h) = dropping_server(Duration::from_millis(500));
        let client = client();
        let url = format!("corbaloc:iiop:1.2@127.0.0.1:{}/Echo", addr.port());
        let e = EchoRef::unchecked_narrow(client.string_to_object(&url).unwrap());
        let t0 = Instant::now();
        let hs: Vec<_> = (0..4)
            .map(|_| {
                let e = e.clone();
                std::thread::spawn(move || e.echo_string("never answered").unwrap_err())
            })
            .collect();
        for h in hs {
            let err = h.join().unwrap();
            assert_eq!(err.kind, K::CommFailure, "{err}");
            assert_eq!(err.completed, CompletionStatus::Maybe);
        }
        assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
        h.join().unwrap();
        // Nothing listens any more: TRANSIENT, fast, and then backoff.
        let err = e.echo_string("x").unwrap_err();
        assert!(matches!(err.kind, K::Transient | K::CommFailure), "{err}");
        let t1 = Instant::now();
        let err = e.echo_string("x").unwrap_err();
        assert_eq!(err.kind, K::Transient);
        assert!(t1.elapsed() < Duration::from_millis(100));
    });
}

#[test]
fn garbage_is_answered_with_message_error() {
    bounded(30, || {
        let (server, _imp, obj) = server();
        let addr = server.listen_addrs()[0];
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut reply = Vec::new();
        let _ = s.read_to_end(&mut reply);
        assert!(reply.len() >= 12, "{reply:?}");
        assert_eq!(&reply[..4], b"GIOP");
        assert_eq!(reply[7], 6, "MessageError");
        // A header announcing more than the limit.
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.write_all(&[b'G', b'I', b'O', b'P', 1, 2, 0, 0, 0x7f, 0xff, 0xff, 0xff])
            .unwrap();
        let mut reply = Vec::new();
        let _ = s.read_to_end(&mut reply);
        assert_eq!(reply.get(7), Some(&6));
        // A truncated header then disconnect: no harm done.
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(b"GIO").unwrap();
        drop(s);
        // Everyone else is still served.
        let client = client();
        let e = through(&client, &obj);
        assert_eq!(e.echo_string("fine").unwrap(), "fine");
        server.shutdown(true);
    });
}

#[test]
fn stale_keys_are_object_not_exist() {
    bounded(30, || {
        let (server, _imp, _obj) = server();
        let root = server.root_poa();
        let s = echo_servant();
        let id = root.activate_object(s.clone()).unwrap();
        let r = root.id_to_reference(&id).unwrap();
        let client = client();
        let e = EchoRef::unchecked_narrow(client.string_to_object(&r.to_string()).unwrap());
        assert_eq!(e.echo_string("alive").unwrap(), "alive");
        root.deactivate_object(&id).unwrap();
        let err = e.echo_string("dead").unwrap_err();
        assert_eq!(err.kind, K::ObjectNotExist);
        assert!(e.object().non_existent().unwrap());
        // The slot is reused with a new generation: the old key stays dead.
        let id2 = root.activate_object(echo_servant()).unwrap();
        assert_ne!(id, id2);
        assert_eq!(e.echo_string("dead").unwrap_err().kind, K::ObjectNotExist);
        // A key from another ORB instance.
        let other = peregrine_orb::Orb::builder()
            .listen("127.0.0.1", 0)
            .build()
            .unwrap();
        let foreign = other.root_poa().create_reference::<EchoRef>().unwrap();
        let mut ior = foreign.object().ior().clone();
        if let peregrine_giop::TaggedProfile::Iiop(p) = &mut ior.profiles[0] {
            p.port = server.listen_addrs()[0].port();
        }
        let f = EchoRef::unchecked_narrow(client.object_from_ior(ior).unwrap());
        assert_eq!(f.echo_string("x").unwrap_err().kind, K::ObjectNotExist);
        // Garbage key.
        let url = format!(
            "corbaloc:iiop:1.2@127.0.0.1:{}/nonsense",
            server.listen_addrs()[0].port()
        );
        let g = EchoRef::unchecked_narrow(client.string_to_object(&url).unwrap());
        assert_eq!(g.echo_string("x").unwrap_err().kind, K::ObjectNotExist);
        other.shutdown(true);
        server.shutdown(true);
    });
}
