use super::*;
use crate::service_context::ServiceContext;
use crate::system_exception::{CompletionStatus, SystemExceptionKind};
use crate::target::IorAddressingInfo;
use crate::TaggedProfile;

const VERSIONS: [GiopVersion; 3] = [GiopVersion::V1_0, GiopVersion::V1_1, GiopVersion::V1_2];
const ORDERS: [ByteOrder; 2] = [ByteOrder::Big, ByteOrder::Little];
const CTX: [ServiceContext<'static>; 2] = [
    ServiceContext {
        id: 1,
        data: &[0, 0, 0, 0, 5, 1, 0, 1, 0, 1, 1, 9],
    },
    ServiceContext {
        id: 0x4154_0001,
        data: b"opaque",
    },
];

fn limits() -> Limits {
    Limits::default()
}

fn decode(bytes: &[u8]) -> (MessageHeader, Message<'_>) {
    decode_message(bytes, &limits()).unwrap()
}

/// Every strict prefix of a message fails to decode (as a message with
/// the original header, and with the size patched to the prefix), and
/// never panics.
fn assert_truncations_fail(bytes: &[u8]) {
    for n in 0..bytes.len() {
        assert!(
            decode_message(&bytes[..n], &limits()).is_err(),
            "prefix {n}"
        );
    }
    let (h, _) = decode(bytes);
    for n in HEADER_LEN..bytes.len() {
        let mut h2 = h;
        h2.size = (n - HEADER_LEN) as u32;
        let mut v = h2.encode().to_vec();
        v.extend_from_slice(&bytes[HEADER_LEN..n]);
        // Must not panic; a shorter body may still decode (e.g. without
        // its arguments), which is fine.
        let _ = decode_message(&v, &limits());
    }
}

fn request<'a>(version: GiopVersion, key: &'a [u8], with_ctx: bool) -> RequestHeader<'a> {
    RequestHeader {
        request_id: 0xDEAD_BEEF,
        response_flags: ResponseFlags::SyncWithTarget,
        target: TargetAddress::Key(key),
        operation: "echo_long",
        service_contexts: if with_ctx {
            ServiceContexts::from_slice(&CTX)
        } else {
            ServiceContexts::EMPTY
        },
        requesting_principal: if version < GiopVersion::V1_2 {
            b"pr"
        } else {
            &[]
        },
    }
}

#[test]
fn request_round_trip_all_versions_orders() {
    for version in VERSIONS {
        for order in ORDERS {
            for with_ctx in [false, true] {
                for oneway in [false, true] {
                    let mut h = request(version, b"key\x00\x01", with_ctx);
                    if oneway {
                        h.response_flags = ResponseFlags::None;
                    }
                    let mut w = Writer::new(order);
                    let p = encode_request(&mut w, version, &h).unwrap();
                    w.write_i32(-7);
                    w.write_f64(2.5);
                    p.finish(&mut w).unwrap();
                    let bytes = w.into_vec();
                    let (mh, m) = decode(&bytes);
                    assert_eq!(mh.version, version);
                    assert_eq!(mh.order, order);
                    assert_eq!(mh.msg_type, MsgType::Request);
                    let Message::Request { header, body } = m else {
                        panic!("not a request")
                    };
                    assert_eq!(header, h);
                    if version == GiopVersion::V1_2 {
                        assert_eq!(body.offset % 8, 0);
                    }
                    let mut r = body.reader();
                    assert_eq!(r.read_i32().unwrap(), -7);
                    assert_eq!(r.read_f64().unwrap(), 2.5);
                    assert!(r.is_empty());
                    assert_truncations_fail(&bytes);
                }
            }
        }
    }
}

#[test]
fn giop12_request_addressing_modes() {
    let ior = Ior {
        type_id: "IDL:Test:1.0".into(),
        profiles: vec![TaggedProfile::Other {
            tag: 9,
            data: vec![1, 2, 3],
        }],
    };
    let targets = [
        TargetAddress::Profile(TaggedProfile::Other {
            tag: 9,
            data: vec![1, 2, 3],
        }),
        TargetAddress::Reference(Box::new(IorAddressingInfo {
            selected_profile_index: 0,
            ior,
        })),
    ];
    for order in ORDERS {
        for target in &targets {
            let mut h = request(GiopVersion::V1_2, b"", true);
            h.target = target.clone();
            h.response_flags = ResponseFlags::SyncWithServer;
            let mut w = Writer::new(order);
            encode_request(&mut w, GiopVersion::V1_2, &h)
                .unwrap()
                .finish(&mut w)
                .unwrap();
            let bytes = w.into_vec();
            let (_, m) = decode(&bytes);
            assert_eq!(
                m,
                Message::Request {
                    header: h.clone(),
                    body: Body {
                        bytes: &[],
                        offset: bytes.len(),
                        order,
                        version: GiopVersion::V1_2
                    }
                }
            );
            // Older versions cannot express it.
            let mut w = Writer::new(order);
            assert_eq!(
                encode_request(&mut w, GiopVersion::V1_1, &h),
                Err(GiopError::TargetNotKey)
            );
        }
    }
}

#[test]
fn giop10_request_ping_exact_bytes() {
    // GIOP 1.0 big-endian Request: no service contexts, id 5, response
    // expected, key "abc", operation "ping", empty principal, no arguments.
    let h = RequestHeader {
        request_id: 5,
        response_flags: ResponseFlags::SyncWithTarget,
        target: TargetAddress::Key(b"abc"),
        operation: "ping",
        service_contexts: ServiceContexts::EMPTY,
        requesting_principal: &[],
    };
    let mut w = Writer::new(ByteOrder::Big);
    encode_request(&mut w, GiopVersion::V1_0, &h)
        .unwrap()
        .finish(&mut w)
        .unwrap();
    #[rustfmt::skip]
    let expect: &[u8] = &[
        b'G', b'I', b'O', b'P', 1, 0, 0, 0, 0, 0, 0, 36,
        0, 0, 0, 0,             // service_context: empty
        0, 0, 0, 5,             // request_id
        1, 0, 0, 0,             // response_expected + padding
        0, 0, 0, 3, b'a', b'b', b'c', 0, // object_key + padding
        0, 0, 0, 5, b'p', b'i', b'n', b'g', 0, 0, 0, 0, // operation + padding
        0, 0, 0, 0,             // requesting_principal: empty
    ];
    assert_eq!(w.as_slice(), expect);
    assert_eq!(decode(expect).1.request_id(), Some(5));
}

#[test]
fn giop12_request_exact_bytes_little_endian_with_body() {
    let h = RequestHeader {
        request_id: 5,
        response_flags: ResponseFlags::SyncWithTarget,
        target: TargetAddress::Key(b"abc"),
        operation: "ping",
        service_contexts: ServiceContexts::EMPTY,
        requesting_principal: &[],
    };
    let mut w = Writer::new(ByteOrder::Little);
    let p = encode_request(&mut w, GiopVersion::V1_2, &h).unwrap();
    w.write_u32(0x1122_3344);
    p.finish(&mut w).unwrap();
    #[rustfmt::skip]
    let expect: &[u8] = &[
        b'G', b'I', b'O', b'P', 1, 2, 1, 0, 40, 0, 0, 0,
        5, 0, 0, 0,             // request_id
        3, 0, 0, 0,             // response_flags + reserved
        0, 0, 0, 0,             // KeyAddr + padding
        3, 0, 0, 0, b'a', b'b', b'c', 0, // object_key + padding
        5, 0, 0, 0, b'p', b'i', b'n', b'g', 0, 0, 0, 0, // operation + padding
        0, 0, 0, 0,             // service_context: empty (ends at 48)
        0x44, 0x33, 0x22, 0x11, // body, already 8-aligned
    ];
    assert_eq!(w.as_slice(), expect);
}

#[test]
fn giop12_no_padding_without_body() {
    // Header fields end at 4 mod 8; with no body, no padding follows.
    let h = RequestHeader {
        request_id: 1,
        response_flags: ResponseFlags::None,
        target: TargetAddress::Key(b"k"),
        operation: "op",
        service_contexts: ServiceContexts::EMPTY,
        requesting_principal: &[],
    };
    let mut w = Writer::new(ByteOrder::Big);
    encode_request(&mut w, GiopVersion::V1_2, &h)
        .unwrap()
        .finish(&mut w)
        .unwrap();
    // 12 + 4 + 4 + 2 + 2 pad + 4 + 1 + 3 pad + 4 + 3 + 1 pad + 4 = 44
    assert_eq!(w.len(), 44);
    let (mh, m) = decode(w.as_slice());
    assert_eq!(mh.size, 32);
    let Message::Request { body, .. } = m else {
        panic!()
    };
    assert!(body.is_empty());
    // A peer that pads anyway is accepted too.
    let mut padded = w.as_slice().to_vec();
    padded.extend_from_slice(&[0; 4]);
    padded[11] = 36;
    let (_, m) = decode(&padded);
    let Message::Request { body, .. } = m else {
        panic!()
    };
    assert!(body.is_empty());
    assert_eq!(body.offset, 48);
}

#[test]
fn reply_round_trip_all_statuses() {
    let statuses = [
        ReplyStatus::NoException,
        ReplyStatus::UserException,
        ReplyStatus::SystemException,
        ReplyStatus::LocationForward,
        ReplyStatus::LocationForwardPerm,
        ReplyStatus::NeedsAddressingMode,
    ];
    for version in VERSIONS {
        for order in ORDERS {
            for status in statuses {
                let h = ReplyHeader {
                    request_id: 42,
                    status,
                    service_contexts: ServiceContexts::from_slice(&CTX),
                };
                let mut w = Writer::new(order);
                let legacy = version < GiopVersion::V1_2;
                if legacy && (status as u32) > 3 {
                    assert_eq!(
                        encode_reply(&mut w, version, &h),
                        Err(GiopError::BadReplyStatus(status as u32))
                    );
                    continue;
                }
                let p = encode_reply(&mut w, version, &h).unwrap();
                w.write_u64(u64::MAX - 1);
                p.finish(&mut w).unwrap();
                let bytes = w.into_vec();
                let (_, m) = decode(&bytes);
                let Message::Reply { header, body } = m else {
                    panic!()
                };
                assert_eq!(header, h);
                assert_eq!(body.reader().read_u64().unwrap(), u64::MAX - 1);
                assert_truncations_fail(&bytes);
            }
        }
    }
}

#[test]
fn reply_bodies_exception_forward_addressing() {
    for version in VERSIONS {
        for order in ORDERS {
            let ex = SystemException::new(
                SystemExceptionKind::BadOperation,
                crate::system_exception::minor::omg(2),
                CompletionStatus::No,
            );
            let mut w = Writer::new(order);
            encode_system_exception_reply(&mut w, version, 9, ServiceContexts::EMPTY, &ex).unwrap();
            let bytes = w.into_vec();
            let (_, m) = decode(&bytes);
            let Message::Reply { header, body } = m else {
                panic!()
            };
            assert_eq!(header.status, ReplyStatus::SystemException);
            assert_eq!(body.system_exception().unwrap(), ex);

            let ior = Ior {
                type_id: "IDL:X:1.0".into(),
                profiles: vec![],
            };
            let h = ReplyHeader {
                request_id: 3,
                status: ReplyStatus::LocationForward,
                service_contexts: ServiceContexts::EMPTY,
            };
            let mut w = Writer::new(order);
            let p = encode_reply(&mut w, version, &h).unwrap();
            ior.encode(&mut w).unwrap();
            p.finish(&mut w).unwrap();
            let bytes = w.into_vec();
            let (_, m) = decode(&bytes);
            let Message::Reply { body, .. } = m else {
                panic!()
            };
            assert_eq!(body.forward_ior().unwrap(), ior);

            let mut w = Writer::new(order);
            let h = ReplyHeader {
                request_id: 3,
                status: ReplyStatus::UserException,
                service_contexts: ServiceContexts::EMPTY,
            };
            let p = encode_reply(&mut w, version, &h).unwrap();
            w.write_string("IDL:Echo/Failed:1.0").unwrap();
            w.write_i32(3);
            p.finish(&mut w).unwrap();
            let bytes = w.into_vec();
            let (_, m) = decode(&bytes);
            let Message::Reply { body, .. } = m else {
                panic!()
            };
            assert_eq!(body.user_exception_id().unwrap(), "IDL:Echo/Failed:1.0");

            if version == GiopVersion::V1_2 {
                let h = ReplyHeader {
                    request_id: 4,
                    status: ReplyStatus::NeedsAddressingMode,
                    service_contexts: ServiceContexts::EMPTY,
                };
                let mut w = Writer::new(order);
                let p = encode_reply(&mut w, version, &h).unwrap();
                AddressingDisposition::Reference.encode(&mut w);
                p.finish(&mut w).unwrap();
                let bytes = w.into_vec();
                let (_, m) = decode(&bytes);
                let Message::Reply { body, .. } = m else {
                    panic!()
                };
                assert_eq!(
                    body.addressing_disposition().unwrap(),
                    AddressingDisposition::Reference
                );
            }
        }
    }
}

#[test]
fn locate_request_and_reply_round_trip() {
    let statuses = [
        LocateStatus::UnknownObject,
        LocateStatus::ObjectHere,
        LocateStatus::ObjectForward,
        LocateStatus::ObjectForwardPerm,
        LocateStatus::LocSystemException,
        LocateStatus::LocNeedsAddressingMode,
    ];
    for version in VERSIONS {
        for order in ORDERS {
            let h = LocateRequestHeader {
                request_id: 77,
                target: TargetAddress::Key(b"the key"),
            };
            let mut w = Writer::new(order);
            encode_locate_request(&mut w, version, &h).unwrap();
            let bytes = w.into_vec();
            assert_eq!(decode(&bytes).1, Message::LocateRequest(h));
            assert_truncations_fail(&bytes);

            for status in statuses {
                let h = LocateReplyHeader {
                    request_id: 78,
                    status,
                };
                let mut w = Writer::new(order);
                if version < GiopVersion::V1_2 && (status as u32) > 2 {
                    assert!(encode_locate_reply(&mut w, version, &h).is_err());
                    continue;
                }
                let p = encode_locate_reply(&mut w, version, &h).unwrap();
                if status == LocateStatus::LocNeedsAddressingMode {
                    AddressingDisposition::Profile.encode(&mut w);
                }
                p.finish(&mut w).unwrap();
                let bytes = w.into_vec();
                let (_, m) = decode(&bytes);
                let Message::LocateReply { header, body } = m else {
                    panic!()
                };
                assert_eq!(header, h);
                // No 8-byte alignment before a LocateReply body.
                assert_eq!(body.offset, 20);
                if status == LocateStatus::LocNeedsAddressingMode {
                    assert_eq!(
                        body.addressing_disposition().unwrap(),
                        AddressingDisposition::Profile
                    );
                }
            }
        }
    }
}

#[test]
fn small_messages_round_trip() {
    for version in VERSIONS {
        for order in ORDERS {
            let mut w = Writer::new(order);
            encode_cancel_request(&mut w, version, 12).unwrap();
            let bytes = w.as_slice().to_vec();
            assert_eq!(bytes.len(), 16);
            assert_eq!(decode(&bytes).1, Message::CancelRequest { request_id: 12 });
            assert_truncations_fail(&bytes);

            encode_close_connection(&mut w, version).unwrap();
            assert_eq!(w.len(), 12);
            assert_eq!(decode(w.as_slice()).1, Message::CloseConnection);

            encode_message_error(&mut w, version).unwrap();
            assert_eq!(decode(w.as_slice()).1, Message::MessageError);
        }
    }
}

#[test]
fn fragment_messages_decode() {
    for order in ORDERS {
        // GIOP 1.2: request id then data at offset 16.
        let mut h = MessageHeader::new(GiopVersion::V1_2, order, MsgType::Fragment);
        h.size = 8;
        let mut v = h.encode().to_vec();
        let id = match order {
            ByteOrder::Big => 7u32.to_be_bytes(),
            ByteOrder::Little => 7u32.to_le_bytes(),
        };
        v.extend_from_slice(&id);
        v.extend_from_slice(&[1, 2, 3, 4]);
        let (_, m) = decode(&v);
        assert_eq!(
            m,
            Message::Fragment {
                request_id: Some(7),
                body: Body {
                    bytes: &[1, 2, 3, 4],
                    offset: 16,
                    order,
                    version: GiopVersion::V1_2
                }
            }
        );
        // GIOP 1.1: data right after the header.
        let mut h = MessageHeader::new(GiopVersion::V1_1, order, MsgType::Fragment);
        h.size = 2;
        let mut v = h.encode().to_vec();
        v.extend_from_slice(&[9, 9]);
        let (_, m) = decode(&v);
        assert_eq!(m.request_id(), None);
        assert_eq!(m.msg_type(), MsgType::Fragment);
    }
}

#[test]
fn size_mismatch_and_bad_enums() {
    let mut w = Writer::new(ByteOrder::Big);
    encode_cancel_request(&mut w, GiopVersion::V1_2, 1).unwrap();
    let mut long = w.as_slice().to_vec();
    long.push(0);
    assert_eq!(
        decode_message(&long, &limits()),
        Err(GiopError::SizeMismatch {
            declared: 4,
            actual: 5
        })
    );

    // Reply status 6, and 4 in GIOP 1.1.
    for (minor, status) in [(2u8, 6u32), (1, 4)] {
        let mut v = b"GIOP\x01\x00\x00\x01\x00\x00\x00\x0c".to_vec();
        v[5] = minor;
        if minor == 2 {
            v.extend_from_slice(&[0, 0, 0, 1]);
            v.extend_from_slice(&status.to_be_bytes());
            v.extend_from_slice(&[0, 0, 0, 0]);
        } else {
            v.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 1]);
            v.extend_from_slice(&status.to_be_bytes());
        }
        let e = decode_message(&v, &limits()).unwrap_err();
        assert_eq!(e, GiopError::BadReplyStatus(status));
        assert!(!e.is_message_error());
    }

    // Locate status 3 in GIOP 1.0.
    let mut v = b"GIOP\x01\x00\x00\x04\x00\x00\x00\x08".to_vec();
    v.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 3]);
    assert_eq!(
        decode_message(&v, &limits()),
        Err(GiopError::BadLocateStatus(3))
    );

    // Response flags 2 in GIOP 1.2.
    let h = request(GiopVersion::V1_2, b"k", false);
    let mut w = Writer::new(ByteOrder::Big);
    encode_request(&mut w, GiopVersion::V1_2, &h)
        .unwrap()
        .finish(&mut w)
        .unwrap();
    let mut v = w.into_vec();
    v[16] = 2;
    assert_eq!(
        decode_message(&v, &limits()),
        Err(GiopError::BadResponseFlags(2))
    );

    // response_expected octet 2 in GIOP 1.0.
    let h = request(GiopVersion::V1_0, b"k", false);
    let mut w = Writer::new(ByteOrder::Big);
    encode_request(&mut w, GiopVersion::V1_0, &h)
        .unwrap()
        .finish(&mut w)
        .unwrap();
    let mut v = w.into_vec();
    v[20] = 2;
    assert_eq!(
        decode_message(&v, &limits()),
        Err(GiopError::Cdr(CdrError::InvalidBoolean(2)))
    );
}

#[test]
fn hostile_counts_and_limits() {
    // GIOP 1.0 Request claiming 2^32-1 service contexts.
    let mut v = b"GIOP\x01\x00\x00\x00\x00\x00\x00\x04".to_vec();
    v.extend_from_slice(&[0xFF, 0xFF, 0xFF, 0xFF]);
    let e = decode_message(&v, &limits()).unwrap_err();
    assert!(matches!(e, GiopError::TooManyServiceContexts { .. }));
    let l = limits().with_max_service_contexts(u32::MAX);
    assert!(matches!(
        decode_message(&v, &l),
        Err(GiopError::Cdr(CdrError::LengthExceedsInput { .. }))
    ));

    // Object key length far beyond the message.
    let mut v = b"GIOP\x01\x02\x00\x03\x00\x00\x00\x0c".to_vec();
    v.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x7F, 0xFF, 0xFF, 0xFF]);
    assert!(matches!(
        decode_message(&v, &limits()),
        Err(GiopError::Cdr(CdrError::LengthExceedsInput { .. }))
    ));

    // Service context count limit applies to replies as well.
    let many = [ServiceContext { id: 1, data: &[] }; 3];
    let h = ReplyHeader {
        request_id: 1,
        status: ReplyStatus::NoException,
        service_contexts: ServiceContexts::from_slice(&many),
    };
    let mut w = Writer::new(ByteOrder::Little);
    encode_reply(&mut w, GiopVersion::V1_2, &h)
        .unwrap()
        .finish(&mut w)
        .unwrap();
    let l = limits().with_max_service_contexts(2);
    assert_eq!(
        decode_message(w.as_slice(), &l),
        Err(GiopError::TooManyServiceContexts { count: 3, limit: 2 })
    );
}

#[test]
fn operation_must_be_utf8_and_nul_free() {
    let mut h = request(GiopVersion::V1_2, b"k", false);
    h.operation = "a\0b";
    let mut w = Writer::new(ByteOrder::Big);
    assert!(encode_request(&mut w, GiopVersion::V1_2, &h).is_err());
}

#[test]
fn writer_is_reusable_and_allocation_stable() {
    let mut w = Writer::new(ByteOrder::Little);
    let h = request(GiopVersion::V1_2, b"key", true);
    for i in 0..3 {
        let p = encode_request(&mut w, GiopVersion::V1_2, &h).unwrap();
        w.write_u32(i);
        p.finish(&mut w).unwrap();
        let (_, m) = decode(w.as_slice());
        let Message::Request { body, .. } = m else {
            panic!()
        };
        assert_eq!(body.reader().read_u32().unwrap(), i);
    }
}
