//! TypeCodes and Anys from arbitrary bytes (the first byte picks the byte
//! order): decoding never panics, hangs or over-allocates; what decodes
//! re-encodes, in both byte orders, to something that decodes equal.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_cdr::{ByteOrder, Reader, Writer};
use peregrine_dynamic::{read_typecode, write_typecode, Any};

fuzz_target!(|data: &[u8]| {
    let Some((&flag, body)) = data.split_first() else {
        return;
    };
    let order = ByteOrder::from_flag(flag & 1 == 1);
    if let Ok(tc) = read_typecode(&mut Reader::new(body, order)) {
        for out in [ByteOrder::Big, ByteOrder::Little] {
            let mut w = Writer::new(out);
            write_typecode(&tc, &mut w).expect("re-encode TypeCode");
            let bytes = w.into_vec();
            let back = read_typecode(&mut Reader::new(&bytes, out)).expect("decode TypeCode again");
            assert!(back.equal(&tc));
            assert!(back.equivalent(&tc));
            let _ = tc.get_compact_typecode();
        }
    }
    if let Ok(any) = Any::decode_from(&mut Reader::new(body, order)) {
        for out in [ByteOrder::Big, ByteOrder::Little] {
            let mut w = Writer::new(out);
            any.encode_into(&mut w).expect("re-encode Any");
            let bytes = w.into_vec();
            let back = Any::decode_from(&mut Reader::new(&bytes, out)).expect("decode Any again");
            assert!(back == any);
        }
    }
});
