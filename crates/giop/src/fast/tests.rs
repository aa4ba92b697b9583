use super::*;
use crate::message::{
    decode_message, encode_reply, encode_request, Message, ReplyHeader, RequestHeader,
};
use crate::service_context::{ServiceContext, ServiceContexts};
use crate::target::TargetAddress;

const ORDERS: [ByteOrder; 2] = [ByteOrder::Big, ByteOrder::Little];
const FLAGS: [ResponseFlags; 3] = [
    ResponseFlags::None,
    ResponseFlags::SyncWithServer,
    ResponseFlags::SyncWithTarget,
];

fn full_request(
    order: ByteOrder,
    id: u32,
    flags: ResponseFlags,
    key: &[u8],
    op: &str,
    body: usize,
) -> Vec<u8> {
    let mut w = Writer::new(order);
    let h = RequestHeader {
        request_id: id,
        response_flags: flags,
        target: TargetAddress::Key(key),
        operation: op,
        service_contexts: ServiceContexts::EMPTY,
        requesting_principal: &[],
    };
    let p = encode_request(&mut w, GiopVersion::V1_2, &h).unwrap();
    for i in 0..body {
        w.write_u8(i as u8);
    }
    p.finish(&mut w).unwrap();
    w.into_vec()
}

#[test]
fn request_reader_and_writer_agree_with_the_full_codec() {
    let limits = Limits::DEFAULT;
    for order in ORDERS {
        for flags in FLAGS {
            for key_len in 0..10 {
                for op in ["a", "ping", "_get_value", "opera"] {
                    for body in [0, 1, 8, 13] {
                        let key: Vec<u8> = (0..key_len).map(|i| i as u8 + 1).collect();
                        let full = full_request(order, 0xA1B2_C3D4, flags, &key, op, body);
                        let mut w = Writer::new(order);
                        let p = write_request(&mut w, 0xA1B2_C3D4, flags, &key, op).unwrap();
                        for i in 0..body {
                            w.write_u8(i as u8);
                        }
                        p.finish(&mut w).unwrap();
                        assert_eq!(w.as_slice(), full, "{order:?} {key_len} {op} {body}");

                        let fast = read_request(&full, &limits).expect("fast path");
                        let (_, m) = decode_message(&full, &limits).unwrap();
                        let Message::Request { header, body: b } = m else {
                            panic!()
                        };
                        assert_eq!(fast.request_id, header.request_id);
                        assert_eq!(fast.response_flags, header.response_flags);
                        assert_eq!(Some(fast.object_key), header.target.object_key());
                        assert_eq!(fast.operation, header.operation);
                        assert_eq!(fast.body, b);
                        for n in 0..full.len() {
                            assert!(read_request(&full[..n], &limits).is_none());
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn reply_reader_and_writer_agree_with_the_full_codec() {
    let limits = Limits::DEFAULT;
    for order in ORDERS {
        for status in [
            ReplyStatus::NoException,
            ReplyStatus::UserException,
            ReplyStatus::LocationForwardPerm,
        ] {
            for body in [0, 3, 8] {
                let mut w = Writer::new(order);
                let h = ReplyHeader {
                    request_id: 99,
                    status,
                    service_contexts: ServiceContexts::EMPTY,
                };
                let p = encode_reply(&mut w, GiopVersion::V1_2, &h).unwrap();
                w.write_bytes(&vec![7; body]);
                p.finish(&mut w).unwrap();
                let full = w.into_vec();
                let mut w = Writer::new(order);
                let p = write_reply(&mut w, 99, status);
                w.write_bytes(&vec![7; body]);
                p.finish(&mut w).unwrap();
                assert_eq!(w.as_slice(), full);
                let fast = read_reply(&full, &limits).expect("fast path");
                let (_, Message::Reply { header, body: b }) =
                    decode_message(&full, &limits).unwrap()
                else {
                    panic!()
                };
                assert_eq!(
                    (fast.request_id, fast.status, fast.body),
                    (header.request_id, header.status, b)
                );
            }
        }
    }
}

#[test]
fn anything_else_takes_the_slow_path() {
    let limits = Limits::DEFAULT;
    let good = full_request(
        ByteOrder::Big,
        1,
        ResponseFlags::SyncWithTarget,
        b"key",
        "op",
        4,
    );
    assert!(read_request(&good, &limits).is_some());
    // Too large for the limits (the full decoder refuses it).
    assert!(read_request(&good, &limits.with_max_message_size(8)).is_none());
    // Fragmented, version 1.1, a Reply, a bad size.
    for (at, v) in [(6, 2u8), (5, 1), (7, 1), (11, 0)] {
        let mut m = good.clone();
        m[at] = v;
        assert!(read_request(&m, &limits).is_none(), "{at}");
    }
    // A NUL inside the operation: the full decoder refuses it too.
    let mut m = full_request(
        ByteOrder::Big,
        1,
        ResponseFlags::SyncWithTarget,
        b"key",
        "opx",
        0,
    );
    let op_at = m.len() - 8;
    m[op_at + 2] = 0;
    assert!(read_request(&m, &limits).is_none());
    assert!(decode_message(&m, &limits).is_err());
    // Service contexts.
    let ctx = [ServiceContext { id: 1, data: &[0] }];
    let mut w = Writer::new(ByteOrder::Big);
    let h = RequestHeader {
        request_id: 1,
        response_flags: ResponseFlags::SyncWithTarget,
        target: TargetAddress::Key(b"k"),
        operation: "op",
        service_contexts: ServiceContexts::from_slice(&ctx),
        requesting_principal: &[],
    };
    encode_request(&mut w, GiopVersion::V1_2, &h)
        .unwrap()
        .finish(&mut w)
        .unwrap();
    assert!(read_request(w.as_slice(), &limits).is_none());
    assert!(write_request(&mut w, 1, ResponseFlags::None, b"k", "a\0b").is_err());
}

/// The ASCII shortcut answers as `str::from_utf8` does, for every
/// length around the word size and a high bit in every position, and
/// refuses a NUL anywhere, as the full decoder does (runs under Miri).
#[test]
fn operation_text_agrees_with_from_utf8() {
    let base: Vec<u8> = (0..40u8).map(|i| b'a' + i % 26).collect();
    for n in 0..base.len() {
        let op = &base[..n];
        assert_eq!(operation_text(op), core::str::from_utf8(op).ok());
        for at in 0..n {
            let mut bad = op.to_vec();
            bad[at] = 0xff;
            assert_eq!(operation_text(&bad), None);
            let mut utf8 = op.to_vec();
            utf8.splice(at..at + 1, "é".bytes());
            assert_eq!(operation_text(&utf8), core::str::from_utf8(&utf8).ok());
            assert!(operation_text(&utf8).is_some());
            // A NUL anywhere inside, alone or beside a 0x01 (which a
            // borrow turns to 0xff).
            let mut nul = op.to_vec();
            nul[at] = 0;
            assert_eq!(operation_text(&nul), None, "{nul:?}");
            if at + 1 < n {
                nul[at + 1] = 1;
                assert_eq!(operation_text(&nul), None, "{nul:?}");
            }
            let mut one = op.to_vec();
            one[at] = 1;
            assert_eq!(operation_text(&one), core::str::from_utf8(&one).ok());
            utf8[at] = 0;
            assert_eq!(operation_text(&utf8), None, "{utf8:?}");
        }
    }
}

/// The layout is `read_request` in offsets: the same key, operation and
/// body, the body lent exclusively to a reader at the same stream
/// offset; it alone ignores the size limit, and it leaves the
/// operation's text to `key_and_operation`.
#[test]
fn layout_is_read_request_in_offsets() {
    let limits = Limits::DEFAULT;
    for order in ORDERS {
        for flags in FLAGS {
            for (key, op, body) in [
                (&b"key"[..], "ping", 13),
                (b"", "a", 0),
                (b"1234567", "op_", 8),
            ] {
                let mut m = full_request(order, 7, flags, key, op, body);
                let fast = read_request(&m, &limits).expect("fast path");
                let at = request_layout(&m).expect("layout");
                assert_eq!(at.request_id, fast.request_id);
                assert_eq!(at.response_flags, fast.response_flags);
                assert_eq!(at.response_expected(), flags.response_expected());
                assert_eq!(at.order, order);
                assert_eq!(at.key_and_operation(&m), Some((key, op)));
                assert_eq!(at.body_at, fast.body.offset);
                let expect = fast.body.bytes.to_vec();
                let (head, rest) = m.split_at_mut(at.body_at);
                assert_eq!(at.key_and_operation(head), Some((key, op)));
                let args = at.args(rest);
                assert_eq!(args.rest(), &expect[..]);
                assert_eq!(args.position(), at.body_at);
                assert_eq!(args.order(), order);
                let small = limits.with_max_message_size(8);
                assert!(read_request(&m, &small).is_none());
                assert_eq!(request_layout(&m), Some(at));
                for n in 0..m.len() {
                    assert!(request_layout(&m[..n]).is_none(), "{n}");
                }
            }
        }
    }
    // An operation that is not UTF-8: laid out, refused by its text.
    let mut m = full_request(ByteOrder::Big, 1, ResponseFlags::None, b"k", "op", 0);
    let at = m.windows(3).position(|w| w == b"op\0").unwrap();
    m[at] = 0xff;
    let layout = request_layout(&m).expect("layout");
    assert_eq!(layout.key_and_operation(&m), None);
    assert!(read_request(&m, &limits).is_none());
    assert!(decode_message(&m, &limits).is_err());
}
