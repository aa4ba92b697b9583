//! IORs from bytes (encapsulation) and from text (`IOR:` hex): decoding
//! never panics; what decodes re-encodes in its own byte order to a value
//! that decodes identically, and in the other byte order to the same
//! addresses (components kept raw in one order may become typed in the
//! other, where their bytes are canonical).
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_cdr::ByteOrder;
use peregrine_giop::Ior;

fuzz_target!(|data: &[u8]| {
    if let Ok(ior) = Ior::from_encapsulation(data) {
        let profiles = ior.iiop_profiles();
        let _ = ior.endpoints();
        let _ = ior.code_sets();
        let own = ByteOrder::from_flag(data[0] == 1);
        let same = ior.to_encapsulation(own).expect("re-encode");
        assert_eq!(Ior::from_encapsulation(&same).expect("decode again"), ior);
        let other = if own == ByteOrder::Big {
            ByteOrder::Little
        } else {
            ByteOrder::Big
        };
        let swapped = ior.to_encapsulation(other).expect("re-encode swapped");
        let back = Ior::from_encapsulation(&swapped).expect("decode swapped");
        assert_eq!(back.type_id, ior.type_id);
        if let (Ok(a), Ok(b)) = (&profiles, back.iiop_profiles()) {
            assert_eq!(a.len(), b.len());
            for (x, y) in a.iter().zip(&b) {
                assert_eq!(
                    (&x.host, x.port, &x.object_key),
                    (&y.host, y.port, &y.object_key)
                );
            }
        }
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = Ior::from_stringified(text);
    }
});
