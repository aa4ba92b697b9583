//! A stream of GIOP messages (split by their own size fields) through the
//! reassembler with tight limits: it must never panic nor hold more than
//! its limits allow.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_giop::{decode_message, Assembled, Limits, Reassembler, HEADER_LEN};

fuzz_target!(|data: &[u8]| {
    // Tight limits so the fuzzer reaches them.
    let mut limits = Limits::default().with_max_message_size(4096);
    limits.max_fragments_bytes = 8192;
    limits.max_partial_messages = 4;
    let mut re = Reassembler::new(limits);
    let mut rest = data;
    while rest.len() >= HEADER_LEN {
        // Size in either byte order, as the flags octet says; clamp to input.
        let size_bytes = [rest[8], rest[9], rest[10], rest[11]];
        let size = if rest[6] & 1 != 0 {
            u32::from_le_bytes(size_bytes)
        } else {
            u32::from_be_bytes(size_bytes)
        } as usize;
        let len = (HEADER_LEN + size).min(rest.len());
        let (msg, tail) = rest.split_at(len);
        rest = tail;
        match re.push(msg) {
            Ok(Assembled::Whole(m)) => {
                let _ = decode_message(m, &limits);
            }
            Ok(Assembled::Reassembled(m)) => {
                let _ = decode_message(&m, &limits);
            }
            Ok(Assembled::Incomplete) | Err(_) => {}
        }
        assert!(re.held_bytes() <= limits.max_fragments_bytes);
        assert!(re.pending() <= limits.max_partial_messages);
    }
});
