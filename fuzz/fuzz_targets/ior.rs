//! IORs from bytes (encapsulation) and from text (`IOR:` hex): decoding
//! never panics, and what decodes re-encodes and decodes to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_cdr::ByteOrder;
use peregrine_giop::Ior;

fuzz_target!(|data: &[u8]| {
    if let Ok(ior) = Ior::from_encapsulation(data) {
        let _ = ior.iiop_profiles();
        let _ = ior.endpoints();
        let _ = ior.code_sets();
        let again = ior.to_encapsulation(ByteOrder::Big).expect("re-encode");
        assert_eq!(Ior::from_encapsulation(&again).expect("decode again"), ior);
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = Ior::from_stringified(text);
    }
});
