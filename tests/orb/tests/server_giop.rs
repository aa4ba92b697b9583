//! The server's GIOP connection state over real TCP, with a raw client:
//! what goes through the connection's machine (fragments, code sets,
//! LocateRequest, CancelRequest, CloseConnection, protocol errors,
//! malformed requests) and how it meets the fast path.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use peregrine_cdr::{ByteOrder, CodeSetId, GiopVersion, Writer};
use peregrine_giop::{
    decode_message, encode_cancel_request, encode_close_connection, encode_locate_request,
    encode_request, fragment, service_context::ids, CodeSetContext, LocateRequestHeader,
    LocateStatus, Message, MsgType, ReplyStatus, RequestHeader, ResponseFlags, ServiceContext,
    ServiceContexts, TargetAddress,
};
use peregrine_orb_tests::*;

fn connect(addr: std::net::SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

/// An `echo_string` request whose argument is `text` as raw bytes (so a
/// test chooses its encoding), with `contexts`.
fn echo_raw(
    version: GiopVersion,
    key: &[u8],
    id: u32,
    contexts: &[ServiceContext<'_>],
    text: &[u8],
) -> Vec<u8> {
    echo_request_with(version, key, id, contexts, |w| {
        w.write_u32(text.len() as u32 + 1);
        w.write_bytes(text);
        w.write_u8(0);
    })
}

/// A reply's body: its bytes and byte order.
struct ReplyBody(Vec<u8>, ByteOrder);

/// The next message as a Reply: its version, id, status and body.
fn reply(s: &mut TcpStream) -> (GiopVersion, u32, ReplyStatus, ReplyBody) {
    let m = read_giop_message(s).expect("a reply");
    let (h, msg) = decode_message(&m, &Default::default()).unwrap();
    match msg {
        Message::Reply { header, body } => (
            h.version,
            header.request_id,
            header.status,
            ReplyBody(body.bytes.to_vec(), body.order),
        ),
        other => panic!("not a reply: {other:?}"),
    }
}

/// The string an `echo_string` reply body holds, as raw bytes.
fn string_bytes(body: &ReplyBody) -> &[u8] {
    let raw: [u8; 4] = body.0[..4].try_into().unwrap();
    let n = match body.1 {
        ByteOrder::Big => u32::from_be_bytes(raw),
        ByteOrder::Little => u32::from_le_bytes(raw),
    } as usize;
    &body.0[4..4 + n - 1]
}

#[test]
fn fragmented_requests_are_reassembled_and_answered() {
    bounded(30, || {
        let (server, imp, obj) = server();
        let (addr, key) = address_and_key(&obj);
        let text = "fragmented ".repeat(40);
        for (id, version) in [(1, GiopVersion::V1_1), (2, GiopVersion::V1_2)] {
            let msg = echo_raw(version, &key, id, &[], text.as_bytes());
            let mut wire = Vec::new();
            let mut pieces = 0;
            for p in fragment(&msg, 64).unwrap() {
                wire.extend_from_slice(p.header());
                wire.extend_from_slice(p.payload);
                pieces += 1;
            }
            assert!(pieces > 5, "{pieces}");
            let mut s = connect(addr);
            // In two writes, cut inside a fragment.
            let (a, b) = wire.split_at(wire.len() / 2 + 3);
            s.write_all(a).unwrap();
            s.write_all(b).unwrap();
            let (v, got_id, status, body) = reply(&mut s);
            assert_eq!((v, got_id, status), (version, id, ReplyStatus::NoException));
            assert_eq!(string_bytes(&body), text.as_bytes());
        }
        assert_eq!(
            imp.servant.calls.load(std::sync::atomic::Ordering::SeqCst),
            2
        );
        drop(server);
    });
}

#[test]
fn code_sets_of_the_first_request_hold_for_the_fast_path_after_it() {
    bounded(30, || {
        let (server, _imp, obj) = server();
        let (addr, key) = address_and_key(&obj);
        let utf8 = "é".as_bytes();
        // Negotiated: UTF-8 for char data. The first request carries the
        // context (the machine's way); the second is a plain one (the
        // fast path's) and is decoded and answered in UTF-8 too.
        let cs = CodeSetContext {
            char_data: CodeSetId::UTF_8,
            wchar_data: CodeSetId::UTF_16,
        }
        .encode_data(ByteOrder::Big);
        let ctx = [ServiceContext {
            id: ids::CODE_SETS,
            data: &cs,
        }];
        let mut s = connect(addr);
        s.write_all(&echo_raw(GiopVersion::V1_2, &key, 1, &ctx, utf8))
            .unwrap();
        assert_eq!(string_bytes(&reply(&mut s).3), utf8);
        s.write_all(&echo_raw(GiopVersion::V1_2, &key, 2, &[], utf8))
            .unwrap();
        assert_eq!(string_bytes(&reply(&mut s).3), utf8);
        // Without negotiation the same character is ISO 8859-1's one byte.
        let mut s = connect(addr);
        s.write_all(&echo_raw(GiopVersion::V1_2, &key, 1, &[], &[0xE9]))
            .unwrap();
        assert_eq!(string_bytes(&reply(&mut s).3), [0xE9]);
        drop(server);
    });
}

#[test]
fn locate_requests_are_answered_in_their_version() {
    bounded(30, || {
        let (server, _imp, obj) = server();
        let (addr, key) = address_and_key(&obj);
        let mut s = connect(addr);
        let mut id = 10;
        for version in [GiopVersion::V1_0, GiopVersion::V1_2] {
            for (k, want) in [
                (&key[..], LocateStatus::ObjectHere),
                (&b"no such key"[..], LocateStatus::UnknownObject),
            ] {
                id += 1;
                let mut w = Writer::new(ByteOrder::Little);
                let h = LocateRequestHeader {
                    request_id: id,
                    target: TargetAddress::Key(k),
                };
                encode_locate_request(&mut w, version, &h).unwrap();
                s.write_all(w.as_slice()).unwrap();
                let m = read_giop_message(&mut s).unwrap();
                let (h, msg) = decode_message(&m, &Default::default()).unwrap();
                assert_eq!(h.version, version);
                let Message::LocateReply { header, .. } = msg else {
                    panic!("not a LocateReply: {msg:?}");
                };
                assert_eq!((header.request_id, header.status), (id, want));
            }
        }
        drop(server);
    });
}

#[test]
fn cancel_changes_nothing_and_close_connection_closes() {
    bounded(30, || {
        let (server, _imp, obj) = server();
        let (addr, key) = address_and_key(&obj);
        let mut s = connect(addr);
        let mut w = Writer::new(ByteOrder::Big);
        encode_cancel_request(&mut w, GiopVersion::V1_2, 77).unwrap();
        s.write_all(w.as_slice()).unwrap();
        s.write_all(&echo_request(&key, 78, "after cancel"))
            .unwrap();
        let (_, id, status, _) = reply(&mut s);
        assert_eq!((id, status), (78, ReplyStatus::NoException));
        assert!(eventually(5, || server.server_connections() == 1));
        let mut w = Writer::new(ByteOrder::Big);
        encode_close_connection(&mut w, GiopVersion::V1_2).unwrap();
        s.write_all(w.as_slice()).unwrap();
        let mut rest = Vec::new();
        let _ = s.read_to_end(&mut rest);
        assert!(
            rest.is_empty(),
            "nothing after the client's close: {rest:?}"
        );
        assert!(eventually(5, || server.server_connections() == 0));
        drop(server);
    });
}

#[test]
fn a_reply_from_the_client_is_a_message_error() {
    bounded(30, || {
        let (server, _imp, obj) = server();
        let (addr, _key) = address_and_key(&obj);
        let mut s = connect(addr);
        // A GIOP 1.1 Reply (id 1, NO_EXCEPTION, no contexts): servers
        // receive no replies.
        let mut m = b"GIOP\x01\x01\x00\x01".to_vec();
        m.extend_from_slice(&12u32.to_be_bytes());
        m.extend_from_slice(&[0; 12]);
        s.write_all(&m).unwrap();
        let e = read_giop_message(&mut s).expect("MessageError");
        assert_eq!(e[7], MsgType::MessageError as u8);
        assert!(read_giop_message(&mut s).is_none(), "then the end");
        drop(server);
    });
}

#[test]
fn a_malformed_request_gets_marshal_and_the_connection_lives() {
    bounded(30, || {
        let (server, _imp, obj) = server();
        let (addr, key) = address_and_key(&obj);
        for (id, version) in [(5, GiopVersion::V1_0), (6, GiopVersion::V1_2)] {
            let mut s = connect(addr);
            // A request whose operation name runs past the message end.
            let mut m = echo_raw(version, &key, id, &[], b"x");
            let at = m.windows(12).position(|w| w == b"echo_string\0").unwrap();
            m[at - 4..at].copy_from_slice(&1000u32.to_be_bytes());
            s.write_all(&m).unwrap();
            let (v, got_id, status, body) = reply(&mut s);
            assert_eq!(
                (v, got_id, status),
                (version, id, ReplyStatus::SystemException)
            );
            assert!(
                body.0.windows(5).any(|w| w == b"MARSH"),
                "MARSHAL: {:?}",
                body.0
            );
            s.write_all(&echo_raw(version, &key, id + 10, &[], b"fine"))
                .unwrap();
            let (_, got_id, status, body) = reply(&mut s);
            assert_eq!((got_id, status), (id + 10, ReplyStatus::NoException));
            assert_eq!(string_bytes(&body), b"fine");
        }
        drop(server);
    });
}

/// The system exception a SYSTEM_EXCEPTION reply `m` carries.
fn system_exception_of(m: &[u8]) -> peregrine_giop::SystemException {
    match decode_message(m, &Default::default()).unwrap().1 {
        Message::Reply { header, body } => {
            assert_eq!(header.status, ReplyStatus::SystemException);
            peregrine_cdr::Decode::decode(&mut body.reader()).unwrap()
        }
        other => panic!("not a reply: {other:?}"),
    }
}

/// An `echo_string` request whose argument `arg` writes.
fn echo_with_argument(
    version: GiopVersion,
    key: &[u8],
    id: u32,
    arg: impl FnOnce(&mut Writer),
) -> Vec<u8> {
    echo_request_with(version, key, id, &[], arg)
}

/// An `echo_string` request with `contexts`, whose argument `arg` writes.
fn echo_request_with(
    version: GiopVersion,
    key: &[u8],
    id: u32,
    contexts: &[ServiceContext<'_>],
    arg: impl FnOnce(&mut Writer),
) -> Vec<u8> {
    let mut w = Writer::new(ByteOrder::Big);
    let p = encode_request(
        &mut w,
        version,
        &RequestHeader {
            request_id: id,
            response_flags: ResponseFlags::SyncWithTarget,
            target: TargetAddress::Key(key),
            operation: "echo_string",
            service_contexts: ServiceContexts::from_slice(contexts),
            requesting_principal: &[],
        },
    )
    .unwrap();
    arg(&mut w);
    p.finish(&mut w).unwrap();
    w.into_vec()
}

/// Truncated and overlong arguments come back as MARSHAL with the minor
/// code that says which (not minor 0), in every GIOP version, and the
/// connection keeps serving.
#[test]
fn a_truncated_argument_gets_marshal_with_its_minor_code() {
    use peregrine_giop::system_exception::minor;
    use peregrine_giop::{CompletionStatus, SystemExceptionKind as K};
    bounded(30, || {
        let (server, _imp, obj) = server();
        let (addr, key) = address_and_key(&obj);
        type Arg = fn(&mut Writer);
        let cases: [(&str, Arg, u32); 3] = [
            (
                "two bytes where the string's length belongs",
                |w| w.write_bytes(&[0, 0]),
                minor::MARSHAL_PASS_END_OF_MESSAGE,
            ),
            (
                "a length of 100 with three bytes behind it",
                |w| {
                    w.write_u32(100);
                    w.write_bytes(b"ab\0");
                },
                minor::MARSHAL_LENGTH_EXCEEDS_INPUT,
            ),
            (
                "two characters and no NUL",
                |w| {
                    w.write_u32(2);
                    w.write_bytes(b"ab");
                },
                minor::MARSHAL_STRING_NOT_END_WITH_NULL,
            ),
        ];
        for version in [GiopVersion::V1_0, GiopVersion::V1_1, GiopVersion::V1_2] {
            let mut s = connect(addr);
            for (id, &(what, arg, want)) in (1..).zip(cases.iter()) {
                s.write_all(&echo_with_argument(version, &key, id, arg))
                    .unwrap();
                let m = read_giop_message(&mut s).expect("a reply");
                let e = system_exception_of(&m);
                assert_eq!(
                    (e.kind, e.minor, e.completed),
                    (K::Marshal, want, CompletionStatus::No),
                    "{version:?}, {what}: {e}"
                );
            }
            s.write_all(&echo_raw(version, &key, 99, &[], b"fine"))
                .unwrap();
            let (_, got_id, status, body) = reply(&mut s);
            assert_eq!((got_id, status), (99, ReplyStatus::NoException));
            assert_eq!(string_bytes(&body), b"fine");
        }
        drop(server);
    });
}
