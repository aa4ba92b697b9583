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
