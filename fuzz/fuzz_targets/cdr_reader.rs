//! Drives the CDR reader over arbitrary bytes with an operation script
//! taken from the input itself, so every read path meets every byte
//! layout: errors are fine, panics and oversized allocations are not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_cdr::{ByteOrder, CharCodeSet, CodeSets, Decode, GiopVersion, Reader, WcharCodeSet};

fuzz_target!(|data: &[u8]| {
    let Some((&ctl, rest)) = data.split_first() else { return };
    let Some((&script_len, rest)) = rest.split_first() else { return };
    let n = (script_len as usize).min(rest.len());
    let (script, input) = rest.split_at(n);
    let mut r = Reader::with_offset(input, ByteOrder::from_flag(ctl & 1 != 0), (ctl >> 1) as usize & 7);
    r.set_version(GiopVersion::from_minor((ctl >> 4) & 3));
    r.set_codesets(CodeSets {
        char: if ctl & 0x40 != 0 { CharCodeSet::Latin1 } else { CharCodeSet::Utf8 },
        wchar: if ctl & 0x80 != 0 { Some(WcharCodeSet::Ucs2) } else { Some(WcharCodeSet::Utf16) },
    });
    for &op in script {
        let before = r.remaining();
        let ok = match op % 16 {
            0 => r.read_u8().is_ok(),
            1 => r.read_bool().is_ok(),
            2 => r.read_i16().is_ok(),
            3 => r.read_u32().is_ok(),
            4 => r.read_u64().is_ok(),
            5 => r.read_f64().is_ok(),
            6 => r.read_long_double().is_ok(),
            7 => r.read_str().is_ok(),
            8 => r.read_wstring().is_ok(),
            9 => r.read_wchar().is_ok(),
            10 => Vec::<i32>::decode(&mut r).map(|v| assert!(v.len() * 4 <= before)).is_ok(),
            11 => Vec::<String>::decode(&mut r).map(|v| assert!(v.len() <= before)).is_ok(),
            12 => <&[u8]>::decode(&mut r).is_ok(),
            13 => r.read_encapsulation().map(|mut e| while e.read_u32().is_ok() {}).is_ok(),
            14 => Vec::<Vec<u16>>::decode(&mut r).is_ok(),
            _ => <[f32; 3]>::decode(&mut r).is_ok(),
        };
        if !ok {
            break;
        }
    }
});
