//! Malformed replies from a raw server over TCP: the client's call fails
//! with `MARSHAL` and the minor code that says what was wrong, not minor
//! 0.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::time::Instant;

use peregrine_cdr::Writer;
use peregrine_giop::conn::{Config, ServerConnection, ServerEvent};
use peregrine_giop::system_exception::minor;
use peregrine_giop::ReplyStatus;
use peregrine_orb::{CompletionStatus, SystemExceptionKind as K};
use peregrine_orb_tests::*;

/// A raw server on a loopback port answering one request with a reply of
/// `status` whose body `body` writes.
fn answer_once(status: ReplyStatus, body: fn(&mut Writer)) -> (u16, std::thread::JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let h = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let m = read_giop_message(&mut s).expect("a request");
        let now = Instant::now();
        let mut machine = ServerConnection::new(Config::default(), now);
        machine.handle_input(&m, now);
        let Some(ServerEvent::Request(r)) = machine.poll_event() else {
            panic!("not a request")
        };
        machine
            .send_reply_with(r.id, status, &[], |w| {
                body(w);
                Ok(())
            })
            .unwrap();
        while let Some(t) = machine.poll_transmit(Instant::now()) {
            write_all(&mut s, &t.into_vec());
        }
        // Stay until the client is done.
        let _ = read_giop_message(&mut s);
    });
    (port, h)
}

fn write_all(s: &mut TcpStream, bytes: &[u8]) {
    s.write_all(bytes).unwrap();
}

#[test]
fn malformed_reply_bodies_fail_the_call_with_their_minor_code() {
    type Body = fn(&mut Writer);
    let cases: [(&str, ReplyStatus, Body, u32, CompletionStatus); 4] = [
        (
            "a system exception cut after two bytes",
            ReplyStatus::SystemException,
            |w| w.write_bytes(&[0, 0]),
            minor::MARSHAL_PASS_END_OF_MESSAGE,
            CompletionStatus::Maybe,
        ),
        (
            "a system exception whose id runs past the end",
            ReplyStatus::SystemException,
            |w| {
                w.write_u32(1000);
                w.write_bytes(b"IDL:");
            },
            minor::MARSHAL_LENGTH_EXCEEDS_INPUT,
            CompletionStatus::Maybe,
        ),
        (
            "a user exception id without its NUL",
            ReplyStatus::UserException,
            |w| {
                w.write_u32(4);
                w.write_bytes(b"IDL:");
            },
            minor::MARSHAL_STRING_NOT_END_WITH_NULL,
            CompletionStatus::Yes,
        ),
        (
            "a forward whose IOR is cut short",
            ReplyStatus::LocationForward,
            |w| w.write_bytes(&[0, 0]),
            minor::MARSHAL_PASS_END_OF_MESSAGE,
            CompletionStatus::No,
        ),
    ];
    for (what, status, body, want, completed) in cases {
        bounded(30, move || {
            let (port, h) = answer_once(status, body);
            let orb = client();
            let url = format!("corbaloc:iiop:1.2@127.0.0.1:{port}/Echo");
            let e = EchoRef::unchecked_narrow(orb.string_to_object(&url).unwrap());
            let err = e.echo_string("x").unwrap_err();
            assert_eq!(
                (err.kind, err.minor, err.completed),
                (K::Marshal, want, completed),
                "{what}: {err}"
            );
            // The reference holds the ORB: both go, the connection closes.
            drop(e);
            drop(orb);
            h.join().unwrap();
        });
    }
}

/// A LocateReply carrying a LOC_SYSTEM_EXCEPTION cut short: the locate
/// fails with `MARSHAL_PassEndOfMessage`.
#[test]
fn a_truncated_locate_system_exception_has_its_minor_code() {
    use peregrine_giop::LocateStatus;
    bounded(30, || {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let h = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let m = read_giop_message(&mut s).expect("a locate request");
            let now = Instant::now();
            let mut machine = ServerConnection::new(Config::default(), now);
            machine.handle_input(&m, now);
            let Some(ServerEvent::LocateRequest(r)) = machine.poll_event() else {
                panic!("not a locate request")
            };
            machine
                .send_locate_reply(r.id, LocateStatus::LocSystemException, &[0, 0])
                .unwrap();
            while let Some(t) = machine.poll_transmit(Instant::now()) {
                write_all(&mut s, &t.into_vec());
            }
            let _ = read_giop_message(&mut s);
        });
        let orb = client();
        let url = format!("corbaloc:iiop:1.2@127.0.0.1:{port}/Echo");
        let e = EchoRef::unchecked_narrow(orb.string_to_object(&url).unwrap());
        let err = e.object().locate().unwrap_err();
        assert_eq!(
            (err.kind, err.minor, err.completed),
            (
                K::Marshal,
                minor::MARSHAL_PASS_END_OF_MESSAGE,
                CompletionStatus::No
            ),
            "{err}"
        );
        drop(e);
        drop(orb);
        h.join().unwrap();
    });
}
