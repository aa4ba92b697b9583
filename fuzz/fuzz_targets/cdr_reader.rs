//! Drives the CDR reader over arbitrary bytes with an operation script
//! taken from the input itself, so every read path meets every byte
//! layout: errors are fine, panics and oversized allocations are not.
//!
//! The script runs twice, on a shared reader and on an exclusive one over
//! a copy of the bytes (the server's kind, which may rewrite a sequence of
//! plain structs in place to lend it): both must give the same values
//! and the same errors, op for op.
#![no_main]

use std::borrow::Cow;

use libfuzzer_sys::fuzz_target;
use peregrine_cdr::{
    ByteOrder, CharCodeSet, CodeSets, Decode, GiopVersion, PlainData, Reader, WcharCodeSet,
};

/// A plain struct with interior padding (CDR `u16 a` at 0, `u64 b` at 8),
/// laid out like the generated ones.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct P {
    a: u16,
    b: u64,
}

// SAFETY: integers only (any bits valid); size 16 == CDR_SIZE, align 8 ==
// CDR_ALIGN; members at their CDR offsets 0 and 8; bytes 2..8 are the
// only padding.
unsafe impl PlainData for P {
    const CDR_SIZE: usize = 16;
    const CDR_ALIGN: usize = 8;
    const PADDING: &'static [(usize, usize)] = &[(2, 8)];
    fn swap_members(&mut self) {
        self.a = self.a.swap_bytes();
        self.b = self.b.swap_bytes();
    }
}

fn decode_p(r: &mut Reader<'_>) -> peregrine_cdr::Result<P> {
    Ok(P {
        a: r.read_u16()?,
        b: r.read_u64()?,
    })
}

/// What one operation gave: a summary of the value, or `None` (an
/// error, which ends the script).
fn step(r: &mut Reader<'_>, op: u8) -> Option<u64> {
    let before = r.remaining();
    let h = |v: &[u8]| v.iter().fold(0u64, |a, &b| a.rotate_left(5) ^ u64::from(b));
    match op % 18 {
        0 => r.read_u8().ok().map(u64::from),
        1 => r.read_bool().ok().map(u64::from),
        2 => r.read_i16().ok().map(|v| v as u64),
        3 => r.read_u32().ok().map(u64::from),
        4 => r.read_u64().ok(),
        5 => r.read_f64().ok().map(f64::to_bits),
        6 => r.read_long_double().ok().map(|v| h(&v)),
        7 => r.read_str().ok().map(|s| h(s.as_bytes())),
        8 => r.read_wstring().ok().map(|s| s.len() as u64),
        9 => r.read_wchar().ok().map(u64::from),
        10 => Vec::<i32>::decode(r).ok().map(|v| {
            assert!(v.len() * 4 <= before);
            v.len() as u64
        }),
        11 => Vec::<String>::decode(r).ok().map(|v| {
            assert!(v.len() <= before);
            v.len() as u64
        }),
        12 => <&[u8]>::decode(r).ok().map(h),
        13 => r.read_encapsulation().ok().map(|mut e| {
            let mut n = 0;
            while e.read_u32().is_ok() {
                n += 1;
            }
            n
        }),
        14 => Vec::<Vec<u16>>::decode(r).ok().map(|v| v.len() as u64),
        15 => <[f32; 3]>::decode(r)
            .ok()
            .map(|v| u64::from(v[0].to_bits())),
        16 => r
            .read_plain_slice::<P>(decode_p)
            .ok()
            .map(|v: Cow<'_, [P]>| {
                assert!(v.len() * 12 <= before);
                v.iter().fold(v.len() as u64, |a, p| {
                    a.rotate_left(7) ^ u64::from(p.a) ^ p.b
                })
            }),
        _ => r.read_primitive_slice::<u64>().ok().map(|v| {
            assert!(v.len() * 8 <= before);
            v.iter().fold(0u64, |a, &x| a.rotate_left(3) ^ x)
        }),
    }
}

fn setup(r: &mut Reader<'_>, ctl: u8) {
    r.set_version(GiopVersion::from_minor((ctl >> 4) & 3));
    r.set_codesets(CodeSets {
        char: if ctl & 0x40 != 0 {
            CharCodeSet::Latin1
        } else {
            CharCodeSet::Utf8
        },
        wchar: if ctl & 0x80 != 0 {
            Some(WcharCodeSet::Ucs2)
        } else {
            Some(WcharCodeSet::Utf16)
        },
    });
}

fuzz_target!(|data: &[u8]| {
    let Some((&ctl, rest)) = data.split_first() else {
        return;
    };
    let Some((&script_len, rest)) = rest.split_first() else {
        return;
    };
    let n = (script_len as usize).min(rest.len());
    let (script, input) = rest.split_at(n);
    let order = ByteOrder::from_flag(ctl & 1 != 0);
    let offset = (ctl >> 1) as usize & 7;

    let mut shared = Reader::with_offset(input, order, offset);
    setup(&mut shared, ctl);
    // Eight-aligned storage, as the ORB's receive buffer: the in-place
    // path needs the struct run memory-aligned.
    let mut store = vec![0u8; input.len() + 8];
    let pad = store.as_ptr().align_offset(8).min(8);
    let copy = &mut store[pad..pad + input.len()];
    copy.copy_from_slice(input);
    let mut exclusive = Reader::with_offset_mut(copy, order, offset);
    setup(&mut exclusive, ctl);

    for &op in script {
        let a = step(&mut shared, op);
        let b = step(&mut exclusive, op);
        assert_eq!(a, b, "op {op}: shared and exclusive readers disagree");
        if a.is_none() {
            break;
        }
    }
});
