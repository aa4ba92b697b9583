//! Errors that keep their cause: the system exception a failing call or
//! ORB set-up returns names the phase, the peer, the operation and the
//! I/O error underneath, in the value itself (it crosses threads and
//! `?`), not in a thread-local.

use std::error::Error;
use std::io::{self, Write};
use std::net::TcpListener;
use std::time::Duration;

use peregrine_orb::{CompletionStatus, Orb, Phase, SystemException, SystemExceptionKind as K};
use peregrine_orb_tests::*;

/// `Orb::builder().listen(..)` on a port already taken: `INITIALIZE`
/// whose message names the address and the OS's reason, whose source is
/// the `io::Error`, and which another thread can receive and read.
#[test]
fn listen_on_a_port_in_use_says_where_and_why() {
    bounded(30, || {
        let taken = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = taken.local_addr().unwrap().port();
        let err = Orb::builder()
            .listen("127.0.0.1", port)
            .build()
            .expect_err("the port is taken");
        assert_eq!(err.kind, K::Initialize);
        // Crosses a thread with its cause.
        let (tx, rx) = std::sync::mpsc::channel::<SystemException>();
        std::thread::spawn(move || tx.send(err).unwrap())
            .join()
            .unwrap();
        let err = rx.recv().unwrap();
        let text = err.to_string();
        assert!(
            text.contains(&format!("listen on 127.0.0.1:{port}"))
                && text.contains("Address already in use"),
            "{text}"
        );
        let cause = err.cause().expect("a cause");
        assert_eq!(cause.phase(), Some(Phase::Listen));
        let io = err
            .source()
            .and_then(|s| s.downcast_ref::<io::Error>())
            .expect("the io::Error is the source");
        assert_eq!(io.kind(), io::ErrorKind::AddrInUse);
        // Through `?` into a `Box<dyn Error>`, the text stays.
        let boxed = (|| -> Result<(), Box<dyn Error + Send + Sync>> {
            Err(err.clone())?;
            Ok(())
        })()
        .unwrap_err();
        assert_eq!(boxed.to_string(), text);
        drop(taken);
    });
}

/// A port nobody listens on.
fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// A call to a closed port: `TRANSIENT` `COMPLETED_NO`, its cause the
/// connect phase, the peer, the operation and "connection refused"; a
/// second call, in backoff, keeps that I/O error as its source.
#[test]
fn a_call_to_a_closed_port_names_the_peer_the_operation_and_the_phase() {
    bounded(30, || {
        let port = closed_port();
        let client = client();
        let url = format!("corbaloc:iiop:1.2@127.0.0.1:{port}/Echo");
        let e = EchoRef::unchecked_narrow(client.string_to_object(&url).unwrap());
        for _ in 0..2 {
            let err = e.echo_string("hi").unwrap_err();
            assert_eq!(
                (err.kind, err.completed),
                (K::Transient, CompletionStatus::No)
            );
            let cause = err.cause().expect("a cause");
            assert_eq!(cause.phase(), Some(Phase::Connect));
            assert_eq!(cause.peer(), Some(format!("127.0.0.1:{port}").as_str()));
            assert_eq!(cause.operation(), Some("echo_string"));
            let io = err.source().and_then(|s| s.downcast_ref::<io::Error>());
            assert_eq!(
                io.map(io::Error::kind),
                Some(io::ErrorKind::ConnectionRefused),
                "{err}"
            );
            let text = err.to_string();
            assert!(
                text.starts_with(
                    "CORBA::TRANSIENT (minor 0x4f4d0002 TRANSIENT_NoUsableProfile, COMPLETED_NO): "
                ) && text.contains(&format!("connect to 127.0.0.1:{port} for 'echo_string'")),
                "{text}"
            );
        }
    });
}

/// A call whose reply does not come in time: `TIMEOUT` naming the
/// operation and the deadline.
#[test]
fn a_call_that_times_out_names_the_operation_and_the_deadline() {
    bounded(30, || {
        let (server, _imp, obj) = server();
        let client = client();
        let e = through(&client, &obj);
        let quick = EchoRef::unchecked_narrow(e.object().with_timeout(Duration::from_millis(150)));
        let err = quick.sleep_ms(1000).unwrap_err();
        assert_eq!(
            (err.kind, err.minor, err.completed),
            (
                K::Timeout,
                peregrine_giop::system_exception::minor::TIMEOUT_CALL_TIMED_OUT,
                CompletionStatus::Maybe
            )
        );
        let cause = err.cause().expect("a cause");
        assert_eq!(cause.phase(), Some(Phase::Receive));
        assert_eq!(cause.operation(), Some("sleep_ms"));
        let text = err.to_string();
        assert!(text.contains("deadline of 150ms expired"), "{text}");
        server.shutdown(true);
    });
}

/// A server that answers the first request with a GIOP 1.2 NO_EXCEPTION
/// Reply without the result (its body is empty).
fn truncated_reply_server() -> (u16, std::thread::JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let h = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let req = read_giop_message(&mut s).expect("a request");
        let little = req[6] & 1 != 0;
        let id: [u8; 4] = req[12..16].try_into().unwrap();
        let u32b = |v: u32| {
            if little {
                v.to_le_bytes()
            } else {
                v.to_be_bytes()
            }
        };
        // Header, then request id, NO_EXCEPTION, no service contexts.
        let mut m = vec![b'G', b'I', b'O', b'P', 1, 2, req[6] & 1, 1];
        m.extend_from_slice(&u32b(12));
        m.extend_from_slice(&id);
        m.extend_from_slice(&u32b(0));
        m.extend_from_slice(&u32b(0));
        s.write_all(&m).unwrap();
        // Keep the connection open a while: the client's error must come
        // from the reply, not from a closed connection.
        std::thread::sleep(Duration::from_millis(500));
    });
    (port, h)
}

/// A reply that does not decode: `MARSHAL` `COMPLETED_YES` whose cause
/// is the decode phase, with the peer and the operation.
#[test]
fn a_reply_that_does_not_decode_names_the_phase() {
    bounded(30, || {
        let (port, h) = truncated_reply_server();
        let client = client();
        let url = format!("corbaloc:iiop:1.2@127.0.0.1:{port}/Echo");
        let e = EchoRef::unchecked_narrow(client.string_to_object(&url).unwrap());
        let err = e.echo_string("hi").unwrap_err();
        assert_eq!(
            (err.kind, err.completed),
            (K::Marshal, CompletionStatus::Yes)
        );
        let cause = err.cause().expect("a cause");
        assert_eq!(cause.phase(), Some(Phase::Decode));
        assert_eq!(cause.operation(), Some("echo_string"));
        assert_eq!(cause.peer(), Some(format!("127.0.0.1:{port}").as_str()));
        let text = err.to_string();
        assert!(
            text.contains(&format!(
                "decode reply from 127.0.0.1:{port} for 'echo_string'"
            )),
            "{text}"
        );
        drop(client);
        h.join().unwrap();
    });
}

/// An exception raised by the servant arrives without a cause on the
/// wire; the client adds the phase (the reply), the peer and the
/// operation, and equality still looks only at what was sent.
#[test]
fn a_servant_exception_is_told_apart_from_the_orbs_own() {
    bounded(30, || {
        let (server, _imp, obj) = server();
        let client = client();
        let e = through(&client, &obj);
        match e.fail(1) {
            Err(FailError::System(s)) => {
                assert_eq!(
                    s,
                    SystemException::new(K::BadParam, 7, CompletionStatus::Yes)
                );
                let cause = s.cause().expect("a cause");
                assert_eq!(cause.phase(), Some(Phase::Reply));
                assert_eq!(cause.operation(), Some("fail"));
                assert!(s.source().is_none());
                assert!(s.to_string().contains("reply from 127.0.0.1:"), "{s}");
            }
            other => panic!("{other:?}"),
        }
        server.shutdown(true);
    });
}
