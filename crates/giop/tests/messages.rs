//! Property tests of the GIOP message layer: random headers, service
//! contexts, ids, keys, operations and bodies round-trip in every version
//! and both byte orders; fragmenting then reassembling gives the message
//! back; and no input, however mangled, makes a decoder panic.

use peregrine_cdr::{ByteOrder, GiopVersion, Writer};
use peregrine_giop::{
    decode_message, encode_reply, encode_request, fragment, Assembled, Limits, Message,
    MessageHeader, MsgType, Reassembler, ReplyHeader, ReplyStatus, RequestHeader, ResponseFlags,
    ServiceContext, ServiceContexts, TargetAddress,
};
use proptest::prelude::*;

fn version() -> impl Strategy<Value = GiopVersion> {
    prop_oneof![
        Just(GiopVersion::V1_0),
        Just(GiopVersion::V1_1),
        Just(GiopVersion::V1_2)
    ]
}

fn order() -> impl Strategy<Value = ByteOrder> {
    prop_oneof![Just(ByteOrder::Big), Just(ByteOrder::Little)]
}

fn contexts() -> impl Strategy<Value = Vec<(u32, Vec<u8>)>> {
    prop::collection::vec(
        (any::<u32>(), prop::collection::vec(any::<u8>(), 0..24)),
        0..5,
    )
}

fn operation() -> impl Strategy<Value = String> {
    "[A-Za-z_][A-Za-z0-9_]{0,30}"
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn header_round_trips(
        v in version(),
        o in order(),
        t in 0u8..8,
        more in any::<bool>(),
        size in 0u32..(64 << 20),
    ) {
        let msg_type = MsgType::from_u8(t).unwrap();
        prop_assume!(!(msg_type == MsgType::Fragment && v == GiopVersion::V1_0));
        let h = MessageHeader {
            version: v,
            order: o,
            more_fragments: more && msg_type.may_fragment(v),
            msg_type,
            size,
        };
        prop_assert_eq!(MessageHeader::decode(&h.encode(), &Limits::default()), Ok(h));
    }

    #[test]
    fn request_round_trips(
        v in version(),
        o in order(),
        id in any::<u32>(),
        flags in prop_oneof![
            Just(ResponseFlags::None),
            Just(ResponseFlags::SyncWithServer),
            Just(ResponseFlags::SyncWithTarget)
        ],
        key in prop::collection::vec(any::<u8>(), 0..40),
        op in operation(),
        ctx in contexts(),
        principal in prop::collection::vec(any::<u8>(), 0..8),
        args in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        let list: Vec<ServiceContext<'_>> =
            ctx.iter().map(|(id, d)| ServiceContext { id: *id, data: d }).collect();
        // 1.0/1.1 carry only response_expected; 1.2 carries no principal.
        let flags = if v < GiopVersion::V1_2 && flags == ResponseFlags::SyncWithServer {
            ResponseFlags::SyncWithTarget
        } else {
            flags
        };
        let h = RequestHeader {
            request_id: id,
            response_flags: flags,
            target: TargetAddress::Key(&key),
            operation: &op,
            service_contexts: ServiceContexts::from_slice(&list),
            requesting_principal: if v < GiopVersion::V1_2 { &principal } else { &[] },
        };
        let mut w = Writer::new(o);
        let p = encode_request(&mut w, v, &h).unwrap();
        w.write_u32(args.len() as u32);
        w.write_bytes(&args);
        p.finish(&mut w).unwrap();
        let bytes = w.into_vec();
        let (mh, m) = decode_message(&bytes, &Limits::default()).unwrap();
        prop_assert_eq!(mh.order, o);
        let Message::Request { header, body } = m else {
            return Err(TestCaseError::fail("not a request"));
        };
        prop_assert_eq!(&header, &h);
        let mut r = body.reader();
        prop_assert_eq!(r.read_octet_seq().unwrap(), &args[..]);
        prop_assert!(r.is_empty());
    }

    #[test]
    fn reply_round_trips(
        v in version(),
        o in order(),
        id in any::<u32>(),
        status in 0u32..6,
        ctx in contexts(),
        results in prop::collection::vec(any::<u64>(), 0..8),
    ) {
        let status = match ReplyStatus::from_u32(status, v) {
            Ok(s) => s,
            Err(_) => ReplyStatus::NoException,
        };
        let list: Vec<ServiceContext<'_>> =
            ctx.iter().map(|(id, d)| ServiceContext { id: *id, data: d }).collect();
        let h = ReplyHeader {
            request_id: id,
            status,
            service_contexts: ServiceContexts::from_slice(&list),
        };
        let mut w = Writer::new(o);
        let p = encode_reply(&mut w, v, &h).unwrap();
        w.write_primitives(&results);
        p.finish(&mut w).unwrap();
        let bytes = w.into_vec();
        let (_, m) = decode_message(&bytes, &Limits::default()).unwrap();
        let Message::Reply { header, body } = m else {
            return Err(TestCaseError::fail("not a reply"));
        };
        prop_assert_eq!(&header, &h);
        let mut r = body.reader();
        prop_assert_eq!(r.read_primitives::<u64>(results.len()).unwrap(), results);
    }

    #[test]
    fn fragment_reassemble_round_trips(
        v in prop_oneof![Just(GiopVersion::V1_1), Just(GiopVersion::V1_2)],
        o in order(),
        id in any::<u32>(),
        payload in prop::collection::vec(any::<u8>(), 0..2000),
        max in 32usize..600,
    ) {
        let h = RequestHeader {
            request_id: id,
            response_flags: ResponseFlags::SyncWithTarget,
            target: TargetAddress::Key(b"k"),
            operation: "op",
            service_contexts: ServiceContexts::EMPTY,
            requesting_principal: &[],
        };
        let mut w = Writer::new(o);
        let p = encode_request(&mut w, v, &h).unwrap();
        w.write_octet_seq(&payload).unwrap();
        w.write_f64(1.25);
        p.finish(&mut w).unwrap();
        let msg = w.into_vec();
        let mut ra = Reassembler::default();
        let mut out = None;
        for piece in fragment(&msg, max).unwrap() {
            prop_assert!(piece.len() <= max.max(32));
            let bytes = piece.to_vec();
            match ra.push(&bytes).unwrap() {
                Assembled::Incomplete => {}
                Assembled::Reassembled(v) => out = Some(v),
                Assembled::Whole(w) => out = Some(w.to_vec()),
            }
        }
        prop_assert_eq!(out, Some(msg));
    }

    #[test]
    fn mangled_messages_never_panic(
        v in version(),
        o in order(),
        ctx in contexts(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
    ) {
        let list: Vec<ServiceContext<'_>> =
            ctx.iter().map(|(id, d)| ServiceContext { id: *id, data: d }).collect();
        let h = RequestHeader {
            request_id: 1,
            response_flags: ResponseFlags::SyncWithTarget,
            target: TargetAddress::Key(b"key"),
            operation: "operation",
            service_contexts: ServiceContexts::from_slice(&list),
            requesting_principal: &[],
        };
        let mut w = Writer::new(o);
        let p = encode_request(&mut w, v, &h).unwrap();
        w.write_u64(7);
        p.finish(&mut w).unwrap();
        let mut bytes = w.into_vec();
        for (i, b) in flips {
            let i = i.index(bytes.len());
            bytes[i] = b;
        }
        let n = cut.index(bytes.len() + 1);
        let _ = decode_message(&bytes[..n], &Limits::default());
        let _ = decode_message(&bytes, &Limits::default());
        let mut ra = Reassembler::default();
        let _ = ra.push(&bytes);
        let _ = ra.push(&bytes[..n]);
        let _ = fragment(&bytes, 40).map(|f| f.count());
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let mut b = bytes;
        if b.len() >= 12 {
            b[..4].copy_from_slice(b"GIOP");
            b[4] = 1;
            b[5] %= 4;
            let size = (b.len() - 12) as u32;
            let le = b[6] & 1 == 1;
            b[8..12].copy_from_slice(&if le { size.to_le_bytes() } else { size.to_be_bytes() });
        }
        let _ = decode_message(&b, &Limits::default());
        let _ = Reassembler::default().push(&b);
    }
}
