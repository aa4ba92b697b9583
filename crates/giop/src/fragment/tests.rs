use super::*;
use crate::message::{decode_message, encode_reply, encode_request, Message, ReplyHeader};
use crate::message::{ReplyStatus, RequestHeader, ResponseFlags};
use crate::target::TargetAddress;
use peregrine_cdr::Writer;

fn big_request(version: GiopVersion, order: ByteOrder, id: u32, n: usize) -> Vec<u8> {
    let h = RequestHeader {
        request_id: id,
        response_flags: ResponseFlags::SyncWithTarget,
        target: TargetAddress::Key(b"object key"),
        operation: "put",
        service_contexts: ServiceContexts::EMPTY,
        requesting_principal: &[],
    };
    let mut w = Writer::new(order);
    let p = encode_request(&mut w, version, &h).unwrap();
    // Mixed alignments so misplaced cuts would show.
    for i in 0..n {
        w.write_u8(i as u8);
        w.write_u64(i as u64 * 0x0101_0101_0101);
        w.write_u16(i as u16);
    }
    p.finish(&mut w).unwrap();
    w.into_vec()
}

fn check_args(msg: &[u8], n: usize) {
    let (_, m) = decode_message(msg, &Limits::default()).unwrap();
    let Message::Request { body, .. } = m else {
        panic!()
    };
    let mut r = body.reader();
    for i in 0..n {
        assert_eq!(r.read_u8().unwrap(), i as u8);
        assert_eq!(r.read_u64().unwrap(), i as u64 * 0x0101_0101_0101);
        assert_eq!(r.read_u16().unwrap(), i as u16);
    }
    assert!(r.is_empty());
}

#[test]
fn fragment_and_reassemble_round_trip() {
    for version in [GiopVersion::V1_1, GiopVersion::V1_2] {
        for order in [ByteOrder::Big, ByteOrder::Little] {
            for max in [0, 33, 40, 64, 100, 257, 4096] {
                let msg = big_request(version, order, 31, 50);
                let pieces: Vec<_> = fragment(&msg, max).unwrap().collect();
                let mut ra = Reassembler::new(Limits::default());
                let mut out = None;
                for (i, p) in pieces.iter().enumerate() {
                    assert!(p.len() <= max.max(MIN_FRAGMENT_LEN));
                    let last = i + 1 == pieces.len();
                    if !last {
                        assert_eq!(p.len() % 8, 0, "piece {i} of {max}");
                    }
                    let bytes = p.to_vec();
                    let h = MessageHeader::decode(&bytes, &Limits::default()).unwrap();
                    assert_eq!(h.more_fragments, !last);
                    assert_eq!(h.message_len(), bytes.len());
                    match ra.push(&bytes).unwrap() {
                        Assembled::Incomplete => assert!(!last),
                        Assembled::Reassembled(v) => {
                            assert!(last);
                            out = Some(v);
                        }
                        Assembled::Whole(w) => {
                            assert_eq!(pieces.len(), 1);
                            out = Some(w.to_vec());
                        }
                    }
                }
                assert_eq!(out.as_deref(), Some(&msg[..]));
                assert_eq!(ra.pending(), 0);
                assert_eq!(ra.held_bytes(), 0);
                check_args(&msg, 50);
            }
        }
    }
}

#[test]
fn interleaved_giop12_reassembly() {
    let a = big_request(GiopVersion::V1_2, ByteOrder::Little, 1, 20);
    let b = big_request(GiopVersion::V1_2, ByteOrder::Little, 2, 30);
    let pa: Vec<_> = fragment(&a, 64).unwrap().map(|p| p.to_vec()).collect();
    let pb: Vec<_> = fragment(&b, 64).unwrap().map(|p| p.to_vec()).collect();
    let mut ra = Reassembler::new(Limits::default());
    let mut done = Vec::new();
    for i in 0..pa.len().max(pb.len()) {
        for ps in [&pa, &pb] {
            if let Some(p) = ps.get(i) {
                if let Assembled::Reassembled(v) = ra.push(p).unwrap() {
                    done.push(v);
                }
            }
        }
    }
    assert_eq!(done.len(), 2);
    assert!(done.contains(&a) && done.contains(&b));
}

#[test]
fn unfragmented_passes_through() {
    let msg = big_request(GiopVersion::V1_0, ByteOrder::Big, 1, 1);
    let mut ra = Reassembler::default();
    assert_eq!(ra.push(&msg).unwrap(), Assembled::Whole(&msg[..]));
    // GIOP 1.0 cannot be fragmented.
    assert!(matches!(
        fragment(&msg, 32),
        Err(GiopError::NotFragmentable { .. })
    ));
    // But a message that fits is one piece in any version.
    let pieces: Vec<_> = fragment(&msg, 1 << 20).unwrap().collect();
    assert_eq!(pieces.len(), 1);
    assert_eq!(pieces[0].to_vec(), msg);
}

#[test]
fn fragment_errors() {
    let lim = Limits::default();
    let msg = big_request(GiopVersion::V1_2, ByteOrder::Big, 9, 20);
    let pieces: Vec<_> = fragment(&msg, 64).unwrap().map(|p| p.to_vec()).collect();
    assert!(pieces.len() > 2);

    // A fragment with no message in reassembly.
    let mut ra = Reassembler::new(lim);
    assert_eq!(
        ra.push(&pieces[1]),
        Err(GiopError::UnexpectedFragment {
            request_id: Some(9)
        })
    );

    // The same request id twice.
    let mut ra = Reassembler::new(lim);
    ra.push(&pieces[0]).unwrap();
    assert_eq!(
        ra.push(&pieces[0]),
        Err(GiopError::DuplicateFragmentedMessage {
            request_id: Some(9)
        })
    );

    // CancelRequest drops the partial message; later fragments are unexpected.
    let mut w = Writer::new(ByteOrder::Big);
    crate::message::encode_cancel_request(&mut w, GiopVersion::V1_2, 9).unwrap();
    assert!(matches!(ra.push(w.as_slice()), Ok(Assembled::Whole(_))));
    assert_eq!(ra.pending(), 0);
    assert!(ra.push(&pieces[1]).is_err());

    // Byte order changes between fragments.
    let mut ra = Reassembler::new(lim);
    ra.push(&pieces[0]).unwrap();
    let mut flipped = pieces[1].clone();
    flipped[6] ^= 1;
    flipped[8..12].reverse();
    flipped[12..16].reverse();
    assert_eq!(ra.push(&flipped), Err(GiopError::FragmentMismatch));
    assert_eq!(ra.pending(), 0, "a poisoned message is dropped");

    // A non-final 1.2 fragment whose length is not a multiple of 8.
    let mut ra = Reassembler::new(lim);
    let mut odd = pieces[0].clone();
    odd.push(0);
    odd[11] += 1;
    assert!(matches!(
        ra.push(&odd),
        Err(GiopError::MisalignedFragment { .. })
    ));

    // Too many partial messages.
    let mut ra = Reassembler::new(lim.with_max_partial_messages(1));
    ra.push(&pieces[0]).unwrap();
    let other = big_request(GiopVersion::V1_2, ByteOrder::Big, 10, 20);
    let first = fragment(&other, 64).unwrap().next().unwrap().to_vec();
    assert_eq!(
        ra.push(&first),
        Err(GiopError::TooManyPartialMessages { limit: 1 })
    );

    // Too many bytes held.
    let mut ra = Reassembler::new(lim.with_max_fragments_bytes(100));
    ra.push(&pieces[0]).unwrap();
    assert_eq!(
        ra.push(&pieces[1]),
        Err(GiopError::FragmentsTooLarge { limit: 100 })
    );
    assert_eq!(ra.held_bytes(), 0);

    // Too many fragments.
    let mut ra = Reassembler::new(lim.with_max_fragments_per_message(2));
    ra.push(&pieces[0]).unwrap();
    ra.push(&pieces[1]).unwrap();
    assert_eq!(
        ra.push(&pieces[2]),
        Err(GiopError::TooManyFragments { limit: 2 })
    );

    // Reassembled size over the message limit.
    let mut ra = Reassembler::new(lim.with_max_message_size(90));
    ra.push(&pieces[0]).unwrap();
    assert!(matches!(
        ra.push(&pieces[1]),
        Err(GiopError::MessageTooLarge { .. })
    ));

    // A 1.2 fragment too short to hold its request id.
    let mut ra = Reassembler::new(lim);
    let stub = b"GIOP\x01\x02\x00\x07\x00\x00\x00\x02\x00\x00";
    assert_eq!(ra.push(stub), Err(GiopError::FragmentWithoutRequestId));
    assert!(ra.push(stub).unwrap_err().is_message_error());
}

#[test]
fn giop11_single_partial_and_cancel_by_parsed_id() {
    let msg = big_request(GiopVersion::V1_1, ByteOrder::Little, 77, 20);
    let pieces: Vec<_> = fragment(&msg, 64).unwrap().map(|p| p.to_vec()).collect();
    let mut ra = Reassembler::default();
    ra.push(&pieces[0]).unwrap();
    assert_eq!(
        ra.push(&pieces[0]),
        Err(GiopError::DuplicateFragmentedMessage { request_id: None })
    );
    assert!(ra.cancel(77));
    assert_eq!(
        ra.push(&pieces[1]),
        Err(GiopError::UnexpectedFragment { request_id: None })
    );
}

#[test]
fn replies_fragment_too() {
    let h = ReplyHeader {
        request_id: 5,
        status: ReplyStatus::NoException,
        service_contexts: ServiceContexts::EMPTY,
    };
    let mut w = Writer::new(ByteOrder::Big);
    let p = encode_reply(&mut w, GiopVersion::V1_2, &h).unwrap();
    w.write_primitives(&[1.5f64; 100]);
    p.finish(&mut w).unwrap();
    let msg = w.into_vec();
    let mut ra = Reassembler::default();
    let mut got = None;
    for p in fragment(&msg, 128).unwrap() {
        if let Assembled::Reassembled(v) = ra.push(&p.to_vec()).unwrap() {
            got = Some(v);
        }
    }
    assert_eq!(got.unwrap(), msg);
}

#[test]
fn hostile_input_never_panics() {
    let msg = big_request(GiopVersion::V1_2, ByteOrder::Big, 3, 10);
    let pieces: Vec<_> = fragment(&msg, 48).unwrap().map(|p| p.to_vec()).collect();
    for p in &pieces {
        for n in 0..p.len() {
            let mut ra = Reassembler::default();
            let _ = ra.push(&pieces[0]);
            let _ = ra.push(&p[..n]);
        }
    }
}
