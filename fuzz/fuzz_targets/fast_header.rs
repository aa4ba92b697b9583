//! The fixed-offset header readers against the full decoder: whenever a
//! fast reader accepts a message, the full decoder must accept it too and
//! agree on every field.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_giop::fast::{read_reply, read_request};
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
