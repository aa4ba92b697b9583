//! Any bytes as a complete GIOP message: decode header and body, and for
//! requests and replies walk the body and its service contexts.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_giop::{decode_message, Limits, Message};

fuzz_target!(|data: &[u8]| {
    let limits = Limits::default();
    if let Ok((_header, msg)) = decode_message(data, &limits) {
        let _ = msg.request_id();
        if let Message::Reply { body, .. } | Message::LocateReply { body, .. } = &msg {
            let _ = body.system_exception();
            let _ = body.forward_ior();
            let _ = body.user_exception_id();
            let _ = body.addressing_disposition();
        }
        let _ = format!("{msg:?}");
    }
});
