//! A byte stream through a connection's receive buffer (`RxBuf`), the
//! transport cutting its reads to fuzzed sizes: the messages framed must
//! be exactly those a plain walk over the stream's GIOP headers finds, in
//! order, and the stream must end as that walk ends (cleanly between
//! messages, cut inside one, or at a header that is not GIOP or breaks a
//! limit), whatever the reads and the buffer's batching guesses.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_giop::{Limits, MessageHeader, HEADER_LEN};
use peregrine_orb::transport::fuzzing::{frame, End};

/// The messages of `stream` by its own size fields, and how it ends.
fn walk(stream: &[u8], limits: &Limits) -> (Vec<Vec<u8>>, End) {
    let mut out = Vec::new();
    let mut rest = stream;
    loop {
        if rest.is_empty() {
            return (out, End::Clean);
        }
        if rest.len() < HEADER_LEN {
            return (out, End::Cut);
        }
        let len = match MessageHeader::decode(&rest[..HEADER_LEN], limits) {
            Ok(h) => h.message_len(),
            Err(_) => return (out, End::Garbage),
        };
        if rest.len() < len {
            return (out, End::Cut);
        }
        out.push(rest[..len].to_vec());
        rest = &rest[len..];
    }
}

fuzz_target!(|data: &[u8]| {
    // Byte 0: how many read sizes follow (two bytes each, 0 = 1 byte).
    let Some((&k, rest)) = data.split_first() else {
        return;
    };
    let k = usize::from(k % 16).min(rest.len() / 2);
    let (sizes, stream) = rest.split_at(2 * k);
    let sizes: Vec<usize> = sizes
        .chunks(2)
        .map(|c| usize::from(u16::from_le_bytes([c[0], c[1]])).max(1))
        .collect();
    // A limit the fuzzer can reach.
    let limits = Limits::default().with_max_message_size(1 << 15);
    let got = frame(stream, &sizes, &limits);
    let want = walk(stream, &limits);
    assert_eq!(got.0.len(), want.0.len(), "messages framed");
    assert!(got.0 == want.0, "message bytes");
    assert_eq!(got.1, want.1, "end of stream");
});
