//! Byte strings stored inline when short: object keys and object ids.
//!
//! A reference's object key (15 bytes for Peregrine's persistent POAs, 12
//! for omniORB's) is read on every call. Kept in a `Box<[u8]>` it is one
//! more pointer to chase, and with calls spread over many objects one
//! more cache miss per call; inline it shares the cache line of the
//! structure holding it.

use std::borrow::Borrow;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

/// Longest byte string stored inline.
pub(crate) const INLINE: usize = 22;

/// An immutable byte string, inline up to [`INLINE`] bytes (24 bytes in
/// all), boxed beyond.
#[derive(Clone)]
pub(crate) enum ShortBytes {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<[u8]>),
}

impl From<&[u8]> for ShortBytes {
    fn from(v: &[u8]) -> Self {
        if v.len() <= INLINE {
            let mut bytes = [0; INLINE];
            bytes[..v.len()].copy_from_slice(v);
            ShortBytes::Inline {
                len: v.len() as u8,
                bytes,
            }
        } else {
            ShortBytes::Heap(v.into())
        }
    }
}

impl Deref for ShortBytes {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        match self {
            ShortBytes::Inline { len, bytes } => &bytes[..*len as usize],
            ShortBytes::Heap(b) => b,
        }
    }
}

impl Borrow<[u8]> for ShortBytes {
    fn borrow(&self) -> &[u8] {
        self
    }
}

// Hash and equality are the slice's, as `Borrow` requires (maps keyed by
// `ShortBytes` are searched with `&[u8]`).
impl Hash for ShortBytes {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (**self).hash(state);
    }
}

impl PartialEq for ShortBytes {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for ShortBytes {}

impl std::fmt::Debug for ShortBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::hash_map::DefaultHasher;

    fn hash_of<T: Hash + ?Sized>(v: &T) -> u64 {
        let mut h = DefaultHasher::new();
        v.hash(&mut h);
        h.finish()
    }

    #[test]
    fn round_trips_inline_and_boxed_with_slice_hash_and_eq() {
        assert_eq!(std::mem::size_of::<ShortBytes>(), 24);
        for n in [0, 1, 15, INLINE, INLINE + 1, 300] {
            let v: Vec<u8> = (0..n).map(|i| (i * 7 + 1) as u8).collect();
            let s = ShortBytes::from(&v[..]);
            assert_eq!(&*s, &v[..]);
            assert_eq!(matches!(s, ShortBytes::Inline { .. }), n <= INLINE);
            assert_eq!(hash_of(&s), hash_of(&v[..]));
            assert_eq!(s, ShortBytes::from(&v[..]));
            let mut w = v.clone();
            w.push(0);
            assert_ne!(s, ShortBytes::from(&w[..]), "a longer key differs");
            let mut m = std::collections::HashMap::new();
            m.insert(s.clone(), n);
            assert_eq!(m.get(&v[..]), Some(&n));
        }
    }
}
