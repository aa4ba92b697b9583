//! A fast keyed hash for the server's lookup tables (persistent POA
//! paths, user object ids): the keys come from the network, so the table
//! must not be predictable from outside, but SipHash-1-3 costs ~170
//! instructions for a 15-byte key where this costs ~20.
//!
//! The mixing is the folded multiply of foldhash/ahash's fallback (the
//! 128-bit product of the state and a word, high half xor low half),
//! keyed by a random seed drawn per table from the standard library's
//! per-process random keys. It is not cryptographic: it makes collisions
//! depend on a secret seed (as foldhash does), which is what the tables
//! need against keys chosen to collide.

use std::hash::{BuildHasher, Hasher};

const MUL0: u64 = 0x243f_6a88_85a3_08d3;
const MUL1: u64 = 0x1319_8a2e_0370_7344;

#[inline(always)]
fn folded_multiply(x: u64, y: u64) -> u64 {
    let full = u128::from(x) * u128::from(y);
    (full as u64) ^ ((full >> 64) as u64)
}

/// The 1..=7 bytes of `rest` as a little-endian word, zero-padded (as
/// copying them into a zeroed `[u8; 8]` gives), from overlapping loads:
/// a variable-length copy calls `memcpy` (~15 instructions for a 4-byte
/// user id).
#[inline(always)]
fn tail_word(rest: &[u8]) -> u64 {
    let n = rest.len();
    let byte = |at: usize| u64::from(rest[at]);
    if n >= 4 {
        let half =
            |at: usize| u64::from(u32::from_le_bytes(rest[at..at + 4].try_into().expect("4")));
        half(0) | half(n - 4) << ((n - 4) * 8)
    } else if n > 0 {
        byte(0) | byte(n / 2) << (n / 2 * 8) | byte(n - 1) << ((n - 1) * 8)
    } else {
        0
    }
}

/// Builds [`SeededHasher`]s sharing one random seed (one per table).
#[derive(Clone, Copy, Debug)]
pub(crate) struct SeededState {
    seed: u64,
}

impl SeededState {
    /// A state with a fresh random seed.
    pub(crate) fn new() -> Self {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(0x5eed);
        Self {
            seed: h.finish() | 1,
        }
    }
}

impl Default for SeededState {
    fn default() -> Self {
        Self::new()
    }
}

impl BuildHasher for SeededState {
    type Hasher = SeededHasher;

    #[inline]
    fn build_hasher(&self) -> SeededHasher {
        SeededHasher {
            seed: self.seed,
            acc: self.seed,
        }
    }
}

/// The hasher of [`SeededState`].
#[derive(Clone, Debug)]
pub(crate) struct SeededHasher {
    seed: u64,
    acc: u64,
}

impl SeededHasher {
    #[inline(always)]
    fn mix(&mut self, w: u64) {
        self.acc = folded_multiply(self.acc ^ w, MUL0 ^ self.seed);
    }
}

impl Hasher for SeededHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.mix(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            // The length in the top byte keeps "a" and "a\0" apart.
            self.mix(tail_word(rest) ^ ((rest.len() as u64) << 59));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.mix(u64::from(i) | 0x100);
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.mix(u64::from(i) | (1 << 40));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.mix(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.mix(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        folded_multiply(self.acc, MUL1 ^ self.seed)
    }
}

/// A `HashMap` keyed with [`SeededState`].
pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, SeededState>;

#[cfg(test)]
mod tests {
    use super::*;

    fn h(s: &SeededState, b: &[u8]) -> u64 {
        s.hash_one(b)
    }

    /// The tail loads give the zero-padded little-endian word of every
    /// length 0..8 (so hashes are those of the copying version).
    #[test]
    fn tail_word_is_the_zero_padded_word() {
        let bytes = [0x81u8, 0x02, 0xf3, 0x04, 0x95, 0x06, 0xa7, 0x08];
        for n in 0..8 {
            let mut padded = [0u8; 8];
            padded[..n].copy_from_slice(&bytes[..n]);
            assert_eq!(tail_word(&bytes[..n]), u64::from_le_bytes(padded), "{n}");
        }
    }

    #[test]
    fn distinguishes_lengths_and_seeds() {
        let s = SeededState::new();
        let keys: [&[u8]; 6] = [b"", b"\0", b"a", b"a\0", b"abcdefgh", b"abcdefgh\0"];
        let hashes: Vec<u64> = keys.iter().map(|k| h(&s, k)).collect();
        for i in 0..keys.len() {
            for j in i + 1..keys.len() {
                assert_ne!(hashes[i], hashes[j], "{:?} vs {:?}", keys[i], keys[j]);
            }
        }
        // Two tables hash the same key differently.
        let t = SeededState::new();
        assert_ne!(h(&s, b"object-1"), h(&t, b"object-1"));
    }

    #[test]
    fn spreads_sequential_ids_over_buckets() {
        let s = SeededState::new();
        let mut buckets = [0u32; 64];
        for i in 0u32..64_000 {
            buckets[(h(&s, &i.to_be_bytes()) >> 58) as usize] += 1;
        }
        // 1,000 expected per bucket.
        assert!(
            buckets.iter().all(|&n| (700..1300).contains(&n)),
            "{buckets:?}"
        );
    }
}
