//! The fixed-offset header readers against the full decoder: whenever a
//! fast reader accepts a message, the full decoder must accept it too and
//! agree on every field. The request's layout is checked as the server
//! uses it: the message split at the body, the key and operation read
//! from the head, the body lent to an argument reader.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_giop::fast::{read_reply, read_request, request_layout};
use peregrine_giop::{decode_message, Limits, Message};

fuzz_target!(|data: &[u8]| {
    // The first byte picks a size limit, so the limit check is reached.
    let Some((&pick, msg)) = data.split_first() else {
        return;
    };
    let limits = if pick & 1 == 0 {
        Limits::default()
    } else {
        Limits::default().with_max_message_size(u32::from(pick))
    };
    if let Some(fast) = read_request(msg, &limits) {
        let (h, m) = decode_message(msg, &limits).expect("fast request the full decoder refuses");
        let Message::Request { header, body } = m else {
            panic!("fast request decodes as {m:?}");
        };
        assert!(!h.more_fragments);
        assert_eq!(fast.request_id, header.request_id);
        assert_eq!(fast.response_flags, header.response_flags);
        assert_eq!(Some(fast.object_key), header.target.object_key());
        assert_eq!(fast.operation, header.operation);
        assert!(header.service_contexts.is_empty());
        assert_eq!(fast.body, body);
    }
    if let Some(at) = request_layout(msg) {
        let mut m = msg.to_vec();
        let (head, rest) = m.split_at_mut(at.body_at);
        if let Some((key, operation)) = at.key_and_operation(head) {
            // The server framed it under its limits: the default ones here.
            let (_, full) = decode_message(msg, &Limits::default())
                .expect("laid-out request the full decoder refuses");
            let Message::Request { header, body } = full else {
                panic!("laid-out request decodes as {full:?}");
            };
            assert_eq!(at.request_id, header.request_id);
            assert_eq!(at.response_flags, header.response_flags);
            assert_eq!(Some(key), header.target.object_key());
            assert_eq!(operation, header.operation);
            assert!(header.service_contexts.is_empty());
            let args = at.args(rest);
            assert_eq!(args.rest(), body.bytes);
            assert_eq!(args.position(), body.offset);
            assert_eq!(args.order(), body.order);
        }
    }
    if let Some(fast) = read_reply(msg, &limits) {
        let (h, m) = decode_message(msg, &limits).expect("fast reply the full decoder refuses");
        let Message::Reply { header, body } = m else {
            panic!("fast reply decodes as {m:?}");
        };
        assert!(!h.more_fragments);
        assert_eq!(fast.request_id, header.request_id);
        assert_eq!(fast.status, header.status);
        assert!(header.service_contexts.is_empty());
        assert_eq!(fast.body, body);
    }
});
