//! The client's lean call path (`fast_call` in peregrine-orb's client/fast.rs)
//! hands a call over to the general one when something unusual arrives
//! after the arguments were encoded. These tests make that happen on a
//! connection that is already up with a cached request header, which is
//! when the lean path runs.

use std::io::{Read, Write};
use std::net::TcpListener;

use peregrine_cdr::{ByteOrder, GiopVersion, Writer};
use peregrine_giop::{
    decode_message, encode_reply, Message, ReplyHeader, ReplyStatus, ServiceContexts,
};
use peregrine_orb_tests::*;

/// A fake server that answers every request on every connection it
/// accepts with LOCATION_FORWARD to `target`, until the client closes.
fn forwarder(target: peregrine_giop::Ior) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    forward_from(l, target);
    port
}

/// Answers every request of every connection `l` accepts with
/// LOCATION_FORWARD to `target`.
fn forward_from(l: TcpListener, target: peregrine_giop::Ior) {
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            let target = target.clone();
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    let k = match s.read(&mut chunk) {
                        Ok(0) | Err(_) => return,
                        Ok(k) => k,
                    };
                    buf.extend_from_slice(&chunk[..k]);
                    while buf.len() >= 12 {
                        let b: [u8; 4] = buf[8..12].try_into().unwrap();
                        let size = if buf[6] & 1 == 1 {
                            u32::from_le_bytes(b)
                        } else {
                            u32::from_be_bytes(b)
                        } as usize;
                        if buf.len() < 12 + size {
                            break;
                        }
                        let msg: Vec<u8> = buf.drain(..12 + size).collect();
                        let (_, m) = decode_message(&msg, &Default::default()).unwrap();
                        let Message::Request { header, .. } = m else {
                            continue;
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
                        if s.write_all(w.as_slice()).is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
}

/// A reference's first call after another reference to the same server
/// brought the connection up and cached the operation's header: a
/// LOCATION_FORWARD then arrives on the lean path, which must re-send the
/// already-encoded arguments (or none: a request without arguments is cut
/// to its header fields, here 4 bytes short of its 8-aligned body) to the
/// forward target.
#[test]
fn location_forward_on_a_bound_connection_is_followed() {
    bounded(30, || {
        let (server, _imp, obj) = server();
        let port = forwarder(obj.object().ior().clone());
        let client = client();
        // A 5-byte key: the header fields of `notes` end at 52, its body
        // would start at 56.
        let url = format!("corbaloc:iiop:1.2@127.0.0.1:{port}/Echo5");
        let fresh = || EchoRef::unchecked_narrow(client.string_to_object(&url).unwrap());
        // Brings the connection up and caches the headers (general path).
        assert_eq!(fresh().echo_string("first").unwrap(), "first");
        assert_eq!(fresh().notes().unwrap(), 0);
        // The same calls on new references take the lean path.
        assert_eq!(fresh().echo_string("second").unwrap(), "second");
        assert_eq!(fresh().notes().unwrap(), 0);
        assert_eq!(client.client_connections(), 2);
        client.shutdown(true);
        server.shutdown(true);
    });
}

/// A server that forwards every request back to itself: the call gives
/// up after its eighth forward with a TRANSIENT that says so, rather
/// than loop.
#[test]
fn a_forward_loop_ends_in_transient_too_many_forwards() {
    bounded(30, || {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let me = peregrine_giop::IorBuilder::new("IDL:Test/Echo:1.0")
            .endpoint("127.0.0.1", port)
            .object_key(b"loop")
            .build();
        forward_from(l, me.clone());
        let client = client();
        let e = EchoRef::unchecked_narrow(peregrine_orb::ObjectRef::from_ior(&client, me));
        let x = e.echo_string("x").unwrap_err();
        assert_eq!(
            (x.kind, x.minor, x.completed),
            (
                peregrine_orb::SystemExceptionKind::Transient,
                peregrine_orb::minor::TRANSIENT_TOO_MANY_FORWARDS,
                peregrine_orb::CompletionStatus::No
            )
        );
        assert!(x.to_string().contains("forwards"), "{x}");
    });
}

/// System and user exceptions, and a oneway, on a connection in steady
/// use (the lean path's hand-over to the general one for replies other
/// than NO_EXCEPTION, and its own USER_EXCEPTION decode).
#[test]
fn exceptions_and_oneways_on_a_bound_connection() {
    bounded(30, || {
        let (server, _imp, obj) = server();
        let client = client();
        let e = through(&client, &obj);
        assert_eq!(e.echo_string("warm").unwrap(), "warm");
        for _ in 0..3 {
            assert_eq!(e.fail(7).unwrap(), 7);
            let Err(FailError::Oops(o)) = e.fail(0) else {
                panic!("expected Oops")
            };
            assert_eq!(o.code, 42);
            let Err(FailError::System(s)) = e.fail(1) else {
                panic!("expected BAD_PARAM")
            };
            assert_eq!(s.kind, peregrine_orb::SystemExceptionKind::BadParam);
            e.note("x").unwrap();
        }
        assert_eq!(e.notes().unwrap(), 3);
        assert_eq!(client.client_connections(), 1);
        server.shutdown(true);
    });
}
