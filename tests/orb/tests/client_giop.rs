//! The client's connection against a raw server over TCP: the messages
//! other than the common reply — fragmented replies, replies with
//! service contexts, LocateReply, CloseConnection, garbage and messages a
//! server must not send — handled by the connection's GIOP machine.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::time::Instant;

use peregrine_cdr::{ByteOrder, GiopVersion, Writer};
use peregrine_giop::conn::{Config, ServerConnection, ServerEvent};
use peregrine_giop::{
    decode_message, encode_cancel_request, encode_close_connection, encode_request, LocateStatus,
    Message, MsgType, ReplyStatus, RequestHeader, ResponseFlags, ServiceContext, ServiceContexts,
    TargetAddress,
};
use peregrine_orb::{CompletionStatus, SystemExceptionKind as K};
use peregrine_orb_tests::*;

/// A raw server on a loopback port: each accepted connection goes to
/// `serve`, in order, on one thread.
fn raw_server(serve: Vec<Box<dyn FnOnce(TcpStream) + Send>>) -> (u16, std::thread::JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let h = std::thread::spawn(move || {
        for f in serve {
            let (s, _) = l.accept().unwrap();
            f(s);
        }
    });
    (port, h)
}

/// The server's machine fed one message read from `s` (answers in the
/// request's byte order, fragments of at most `fragment` bytes).
fn machine_with_request(s: &mut TcpStream, fragment: usize) -> (ServerConnection, ServerEvent) {
    let m = read_giop_message(s).expect("a message");
    let order = ByteOrder::from_flag(m[6] & 1 != 0);
    let config = Config::default()
        .with_byte_order(order)
        .with_max_fragment_size(fragment);
    let now = Instant::now();
    let mut machine = ServerConnection::new(config, now);
    machine.handle_input(&m, now);
    let e = machine.poll_event().expect("an event");
    (machine, e)
}

fn send_all(machine: &mut ServerConnection, s: &mut TcpStream) -> usize {
    let mut n = 0;
    while let Some(t) = machine.poll_transmit(Instant::now()) {
        s.write_all(&t.into_vec()).unwrap();
        n += 1;
    }
    n
}

/// Answers one `echo_string` with its argument, in fragments of at most
/// `fragment` bytes and with `contexts`.
fn echo_once(
    fragment: usize,
    contexts: &'static [ServiceContext<'static>],
) -> impl FnOnce(TcpStream) {
    move |mut s| {
        let (mut machine, e) = machine_with_request(&mut s, fragment);
        let ServerEvent::Request(r) = e else {
            panic!("not a request")
        };
        assert_eq!(r.operation(), "echo_string");
        let arg = r.body().bytes.to_vec();
        machine
            .send_reply_with(r.id, ReplyStatus::NoException, contexts, |w| {
                w.write_bytes(&arg);
                Ok(())
            })
            .unwrap();
        let pieces = send_all(&mut machine, &mut s);
        assert!(
            fragment > 1024 || pieces > 3,
            "the reply went in {pieces} fragments"
        );
        // Stay until the client is done.
        let _ = read_giop_message(&mut s);
    }
}

fn echo_ref(port: u16, orb: &peregrine_orb::Orb) -> EchoRef {
    let url = format!("corbaloc:iiop:1.2@127.0.0.1:{port}/Echo");
    EchoRef::unchecked_narrow(orb.string_to_object(&url).unwrap())
}

#[test]
fn fragmented_reply_is_reassembled() {
    bounded(30, || {
        let (port, h) = raw_server(vec![Box::new(echo_once(40, &[]))]);
        let orb = client();
        let text = "a reply long enough to need several fragments of forty bytes";
        assert_eq!(echo_ref(port, &orb).echo_string(text).unwrap(), text);
        drop(orb);
        h.join().unwrap();
    });
}

#[test]
fn reply_with_service_contexts_is_read() {
    static CTX: [ServiceContext<'static>; 1] = [ServiceContext {
        id: 0x5045_0001,
        data: &[0, 1, 2, 3, 4],
    }];
    bounded(30, || {
        let (port, h) = raw_server(vec![Box::new(echo_once(usize::MAX, &CTX))]);
        let orb = client();
        assert_eq!(echo_ref(port, &orb).echo_string("ctx").unwrap(), "ctx");
        drop(orb);
        h.join().unwrap();
    });
}

/// Replies that go through the client's machine one after another on
/// one connection (service contexts on each): every call gets its own
/// answer whole, however long the one before it was (the machine's
/// buffers are handed back and reused between them).
#[test]
fn replies_through_the_machine_in_a_row_are_each_read_whole() {
    static CTX: [ServiceContext<'static>; 1] = [ServiceContext {
        id: 0x5045_0001,
        data: &[9; 7],
    }];
    let texts: Vec<String> = [40, 3, 0, 17, 200, 1, 64]
        .iter()
        .enumerate()
        .map(|(i, &n)| char::from(b'a' + i as u8).to_string().repeat(n))
        .collect();
    let calls = texts.len();
    bounded(30, move || {
        let serve = move |mut s: TcpStream| {
            let now = Instant::now();
            let mut machine = ServerConnection::new(Config::default(), now);
            let mut answered = 0;
            while answered < calls {
                let m = read_giop_message(&mut s).expect("a request");
                machine.handle_input(&m, now);
                while let Some(e) = machine.poll_event() {
                    let ServerEvent::Request(r) = e else {
                        panic!("not a request: {e:?}")
                    };
                    let arg = r.body().bytes.to_vec();
                    machine
                        .send_reply_with(r.id, ReplyStatus::NoException, &CTX, |w| {
                            w.write_bytes(&arg);
                            Ok(())
                        })
                        .unwrap();
                    answered += 1;
                }
                send_all(&mut machine, &mut s);
            }
        };
        let (port, h) = raw_server(vec![Box::new(serve)]);
        let orb = client();
        let echo = echo_ref(port, &orb);
        for t in &texts {
            assert_eq!(&echo.echo_string(t).unwrap(), t);
        }
        h.join().unwrap();
    });
}

#[test]
fn locate_reply_is_read() {
    bounded(30, || {
        let (port, h) = raw_server(vec![Box::new(|mut s: TcpStream| {
            let (mut machine, e) = machine_with_request(&mut s, 40);
            let ServerEvent::LocateRequest(l) = e else {
                panic!("not a locate request")
            };
            machine
                .send_locate_reply(l.id, LocateStatus::ObjectHere, &[])
                .unwrap();
            send_all(&mut machine, &mut s);
            let _ = read_giop_message(&mut s);
        })]);
        let orb = client();
        assert!(echo_ref(port, &orb).object().locate().unwrap());
        drop(orb);
        h.join().unwrap();
    });
}

/// CloseConnection before the reply: the request was not processed, so
/// the client sends it again on a new connection, which answers.
#[test]
fn close_connection_then_the_call_goes_again() {
    bounded(30, || {
        let (port, h) = raw_server(vec![
            Box::new(|mut s: TcpStream| {
                let m = read_giop_message(&mut s).expect("a request");
                assert_eq!(m[7], MsgType::Request as u8);
                let mut w = Writer::new(ByteOrder::Big);
                encode_close_connection(&mut w, GiopVersion::V1_2).unwrap();
                s.write_all(w.as_slice()).unwrap();
                // The client closes its end: nothing more comes.
                assert!(read_giop_message(&mut s).is_none());
            }),
            Box::new(echo_once(usize::MAX, &[])),
        ]);
        let orb = client();
        assert_eq!(echo_ref(port, &orb).echo_string("again").unwrap(), "again");
        drop(orb);
        h.join().unwrap();
    });
}

/// What a server sends that the client cannot take — bytes that are not
/// GIOP, a Request, a CancelRequest (only clients cancel) — is answered
/// with MessageError and fails the call (it may have run).
#[test]
fn garbage_and_requests_from_the_server_get_message_error() {
    let mut request = Writer::new(ByteOrder::Big);
    let h = RequestHeader {
        request_id: 1,
        response_flags: ResponseFlags::SyncWithTarget,
        target: TargetAddress::Key(b"k"),
        operation: "op",
        service_contexts: ServiceContexts::from_slice(&[]),
        requesting_principal: &[],
    };
    encode_request(&mut request, GiopVersion::V1_2, &h)
        .unwrap()
        .finish(&mut request)
        .unwrap();
    let mut cancel = Writer::new(ByteOrder::Big);
    encode_cancel_request(&mut cancel, GiopVersion::V1_2, 1).unwrap();
    for bad in [
        b"HTTP/1.1 400 Bad Request\r\n\r\n".to_vec(),
        request.into_vec(),
        cancel.into_vec(),
    ] {
        bounded(30, move || {
            let (port, h) = raw_server(vec![Box::new(move |mut s: TcpStream| {
                read_giop_message(&mut s).expect("a request");
                s.write_all(&bad).unwrap();
                let back = read_giop_message(&mut s).expect("MessageError");
                let (_, m) = decode_message(&back, &Default::default()).unwrap();
                assert_eq!(m, Message::MessageError);
            })]);
            let orb = client();
            let err = echo_ref(port, &orb).echo_string("x").unwrap_err();
            assert_eq!(
                (err.kind, err.completed),
                (K::CommFailure, CompletionStatus::Maybe)
            );
            drop(orb);
            h.join().unwrap();
        });
    }
}
