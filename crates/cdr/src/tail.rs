//! Sequences written last in a message, which a transport may send
//! straight from the caller's memory (a gathered write) instead of
//! copying them into the [`Writer`].
//!
//! A request whose last argument is a large sequence of primitives is,
//! in the sender's byte order, the writer's bytes followed by the
//! sequence's own memory: TAO's CDR "memcpy tradeoff" chains such a
//! sequence instead of copying it, and so does Peregrine's client (see
//! `ObjectRef::invoke_with_tail` in peregrine-orb). This module decides
//! what must still go into the writer: the length, the alignment
//! padding, and, for a plain struct whose first element is off its
//! alignment after the length, that element (encoded member by member);
//! everything after is returned as bytes to send as they are.

use crate::plain::{self, PlainData, Primitive};
use crate::{Encode, Result, Writer};

/// A sequence written as the last value of a message.
///
/// [`TailSeq::encode_split`] writes into the writer what has to be there
/// and returns the rest of the encoding as bytes borrowed from the
/// sequence: the writer's new content followed by those bytes is exactly
/// what [`TailSeq::encode_all`] would have written.
pub trait TailSeq {
    /// Encodes the whole sequence into `w` (the copying path): the same
    /// bytes as the `Encode` of the slice.
    fn encode_all(&self, w: &mut Writer) -> Result<()>;

    /// Size in bytes of the elements in memory (what a gathered write
    /// would avoid copying).
    fn byte_len(&self) -> usize;

    /// Writes the part of the encoding that must be in `w` and returns
    /// the rest, to be sent right after `w`'s content. Empty when nothing
    /// can be sent from the caller's memory (the other byte order, a
    /// struct with padding bytes): then everything was written into `w`.
    fn encode_split(&self, w: &mut Writer) -> Result<&[u8]>;
}

/// A sequence of primitives (integers, floats, `char`, `octet`) as a
/// [`TailSeq`]: gathered in native byte order (one-byte elements in
/// either order).
#[derive(Debug, Clone, Copy)]
pub struct PrimTail<'a, T>(pub &'a [T]);

impl<T: Primitive + Encode> TailSeq for PrimTail<'_, T> {
    fn encode_all(&self, w: &mut Writer) -> Result<()> {
        self.0.encode(w)
    }

    fn byte_len(&self) -> usize {
        core::mem::size_of_val(self.0)
    }

    fn encode_split(&self, w: &mut Writer) -> Result<&[u8]> {
        if !(w.order().is_native() || T::SIZE == 1) {
            self.encode_all(w)?;
            return Ok(&[]);
        }
        // As `write_primitive_seq`: the length, then (if any elements)
        // the alignment and the elements' bytes.
        w.write_len(self.0.len())?;
        if self.0.is_empty() {
            return Ok(&[]);
        }
        w.align(T::SIZE);
        Ok(plain::as_bytes(self.0))
    }
}

/// A sequence of plain-data structs as a [`TailSeq`]: gathered in native
/// byte order when the struct has no padding bytes (padding in the
/// caller's memory may be uninitialized, so a padded struct is always
/// copied, with its padding zeroed).
#[derive(Debug, Clone, Copy)]
pub struct PlainTail<'a, T>(pub &'a [T]);

impl<T: PlainData + Encode> TailSeq for PlainTail<'_, T> {
    fn encode_all(&self, w: &mut Writer) -> Result<()> {
        self.0.encode(w)
    }

    fn byte_len(&self) -> usize {
        core::mem::size_of_val(self.0)
    }

    fn encode_split(&self, w: &mut Writer) -> Result<&[u8]> {
        let bytes = match plain::plain_as_bytes(self.0) {
            Some(b) if w.order().is_native() => b,
            _ => {
                self.encode_all(w)?;
                return Ok(&[]);
            }
        };
        // As `write_plain` after the length: elements off the struct's
        // alignment member by member, the rest (native layout) as bytes.
        w.write_len(self.0.len())?;
        let mut rest = self.0;
        let mut at = 0;
        while let Some((first, others)) = rest.split_first() {
            if w.position() % T::CDR_ALIGN == 0 {
                return Ok(&bytes[at..]);
            }
            first.encode(w)?;
            rest = others;
            at += T::CDR_SIZE;
        }
        Ok(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ByteOrder, Reader};
    use alloc::vec::Vec;

    /// `encode_split` + the returned bytes == `encode_all`, after every
    /// lead length (alignment), in both byte orders.
    fn check(tail: &dyn TailSeq, gathers_natively: bool) {
        for order in [ByteOrder::Big, ByteOrder::Little] {
            for lead in 0..9 {
                let mut all = Writer::new(order);
                let mut split = Writer::new(order);
                for w in [&mut all, &mut split] {
                    for i in 0..lead {
                        w.write_u8(i as u8);
                    }
                }
                tail.encode_all(&mut all).unwrap();
                let rest = tail.encode_split(&mut split).unwrap();
                let mut joined: Vec<u8> = split.as_slice().to_vec();
                joined.extend_from_slice(rest);
                assert_eq!(joined, all.as_slice(), "{order:?} lead {lead}");
                // Gathered exactly when it should be (a single misaligned
                // plain element ends up in the writer whole).
                let expect = gathers_natively && order.is_native() && tail.byte_len() > 16;
                if expect || !gathers_natively || !order.is_native() {
                    assert_eq!(!rest.is_empty(), expect, "{order:?} lead {lead}");
                }
            }
        }
    }

    #[test]
    fn primitives_split_equals_copy() {
        let d: Vec<f64> = (0..33).map(|i| f64::from(i) * 1.5 - 3.0).collect();
        check(&PrimTail(&d[..]), true);
        let s: Vec<i16> = (0..7).map(|i| i * 1000 - 3).collect();
        check(&PrimTail(&s[..]), true);
        check(&PrimTail::<u32>(&[]), true);
        // Octets gather in either order.
        let o = [1u8, 2, 3, 4, 5];
        for order in [ByteOrder::Big, ByteOrder::Little] {
            let mut w = Writer::new(order);
            assert_eq!(PrimTail(&o[..]).encode_split(&mut w).unwrap(), &o);
            let len = match order {
                ByteOrder::Big => 5u32.to_be_bytes(),
                ByteOrder::Little => 5u32.to_le_bytes(),
            };
            assert_eq!(w.as_slice(), &len);
        }
    }

    /// `u32 a; u32 b; u64 c;`: no padding, 8-aligned.
    #[derive(Clone, Copy, Debug, PartialEq)]
    #[repr(C)]
    struct Np {
        a: u32,
        b: u32,
        c: u64,
    }
    // SAFETY: integers only; size 16 == CDR_SIZE, align 8; members at
    // their CDR offsets 0, 4, 8; no padding.
    unsafe impl PlainData for Np {
        const CDR_SIZE: usize = 16;
        const CDR_ALIGN: usize = 8;
        const PADDING: &'static [(usize, usize)] = &[];
        fn swap_members(&mut self) {
            self.a = self.a.swap_bytes();
            self.b = self.b.swap_bytes();
            self.c = self.c.swap_bytes();
        }
    }
    impl Encode for Np {
        fn encode(&self, w: &mut Writer) -> Result<()> {
            w.write_u32(self.a);
            w.write_u32(self.b);
            w.write_u64(self.c);
            Ok(())
        }
        fn encode_slice(items: &[Self], w: &mut Writer) -> Result<()> {
            w.write_plain(items, Self::encode)
        }
    }

    use crate::test_types::Padded as Pd;

    #[test]
    fn plain_structs_split_equals_copy() {
        let np: Vec<Np> = (0..9u32)
            .map(|i| Np {
                a: i,
                b: i * 77 + 1,
                c: u64::from(i) << 33 | 5,
            })
            .collect();
        check(&PlainTail(&np[..]), true);
        check(&PlainTail(&np[..1]), true);
        check(&PlainTail::<Np>(&[]), true);
        // Padded structs never gather (their padding may be uninit).
        let pd: Vec<Pd> = (0..9u16)
            .map(|i| Pd {
                a: i,
                b: u64::from(i) * 3,
            })
            .collect();
        check(&PlainTail(&pd[..]), false);
        // A gathered message decodes like a copied one.
        let mut w = Writer::new(ByteOrder::NATIVE);
        let tail = PlainTail(&np[..]);
        let rest = tail.encode_split(&mut w).unwrap();
        let mut msg = w.as_slice().to_vec();
        msg.extend_from_slice(rest);
        let mut r = Reader::new(&msg, ByteOrder::NATIVE);
        let n = r.read_len(1).unwrap();
        let got = r
            .read_plain(n, |r| {
                Ok(Np {
                    a: r.read_u32()?,
                    b: r.read_u32()?,
                    c: r.read_u64()?,
                })
            })
            .unwrap();
        assert_eq!(got, np);
    }
}
