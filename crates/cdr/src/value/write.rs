//! Writing value headers, indirections and chunks.

use alloc::boxed::Box;
use alloc::vec::Vec;

use super::{CHUNKED_FLAG, ID_LIST, INDIRECTION_TAG, NULL_TAG, SINGLE_ID, VALUE_TAG_MIN};
use crate::{ByteOrder, CdrError, Result, Writer};

#[cfg(not(feature = "std"))]
use alloc::collections::btree_map::Entry;
/// Buffer index of each value's tag, by the value's address: a hash map
/// with std (a search tree cost half the encoding time of a graph), a
/// tree without.
#[cfg(feature = "std")]
use std::collections::hash_map::Entry;

#[cfg(feature = "std")]
type Shared = std::collections::HashMap<usize, usize, core::hash::BuildHasherDefault<AddrHasher>>;
#[cfg(not(feature = "std"))]
type Shared = alloc::collections::BTreeMap<usize, usize>;

/// Hashes an address (Fibonacci hashing: one multiply spreads distinct
/// addresses over the table).
#[cfg(feature = "std")]
#[derive(Default)]
struct AddrHasher(u64);

#[cfg(feature = "std")]
impl core::hash::Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_usize(&mut self, v: usize) {
        // Folded so that the low bits, which pick the bucket, depend on
        // every bit of the (aligned) address.
        let h = (v as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 32);
    }
}

/// What a writer remembers of the values it has written.
#[derive(Debug, Clone, Default)]
pub(crate) struct WriteState {
    /// Buffer index of each value's tag, by the value's address.
    shared: Shared,
    /// The repository ids written, in order.
    ids: Vec<WrittenId>,
    /// Chunked values open.
    level: u32,
    /// The open chunk: buffer length before its length's padding, and
    /// the index of its length.
    chunk: Option<(usize, usize)>,
}

/// A repository id in the buffer. The id is found again by comparing
/// with the octets written (so the caller's string need not outlive the
/// writer), or, for an id the caller promised to be `'static`, by its
/// address first.
#[derive(Debug, Clone)]
struct WrittenId {
    /// Address of a `'static` id (0 for others): equal addresses of
    /// `'static` strings mean equal ids, without reading the buffer.
    addr: usize,
    /// The id's length in bytes.
    len: usize,
    /// Buffer index of the string's length.
    at: usize,
}

impl WriteState {
    pub(crate) fn clear(&mut self) {
        self.shared.clear();
        self.ids.clear();
        self.level = 0;
        self.chunk = None;
    }
}

/// Whether `a` and `b`, of one length, hold the same bytes: compared a
/// word at a time in place, as repository ids are short and the library
/// call `==` makes cost more than the comparison (5 % of an interpreted
/// graph's encoding).
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n < 8 {
        return a == b;
    }
    let word = |s: &[u8], i: usize| u64::from_ne_bytes(s[i..i + 8].try_into().expect("8 bytes"));
    // Whole words, then the last word (overlapping the one before).
    let mut i = 0;
    while i + 8 <= n {
        if word(a, i) != word(b, i) {
            return false;
        }
        i += 8;
    }
    word(a, n - 8) == word(b, n - 8)
}

impl Writer {
    #[inline]
    fn vstate(&mut self) -> &mut WriteState {
        self.values.get_or_insert_with(Box::default)
    }

    /// Writes the null value.
    pub fn write_null_value(&mut self) {
        self.write_u32(NULL_TAG);
    }

    /// Writes a value: an indirection if the value at `identity` (its
    /// address, e.g. `ValueRef::as_ptr`) was already written in this stream;
    /// otherwise its header and then its state through `state`.
    ///
    /// `ids` are the repository ids to send, most derived first: none (the
    /// value is of its slot's formal type), one, or the id followed by the
    /// truncatable bases. `chunked` is needed by truncatable and custom
    /// values; every value nested in a chunked one is chunked too.
    ///
    /// An id written before in this stream goes as an indirection; the
    /// `'static` ids are recognized by their address. For ids that live
    /// shorter, see [`Writer::write_value_with`].
    #[inline]
    pub fn write_value(
        &mut self,
        identity: *const (),
        ids: &[&'static str],
        chunked: bool,
        state: impl FnOnce(&mut Writer) -> Result<()>,
    ) -> Result<()> {
        let key = identity as usize;
        self.align(4);
        let here = self.len();
        let st = self.vstate();
        if chunked || st.level > 0 {
            return self.write_chunked_or_nested::<true, _>(key, ids, state);
        }
        match st.shared.entry(key) {
            Entry::Occupied(e) => {
                let at = *e.get();
                self.write_indirection(at)
            }
            Entry::Vacant(e) => {
                e.insert(here);
                self.write_header::<true, _>(ids, false)?;
                state(self)
            }
        }
    }

    /// [`Writer::write_value`] for repository ids of any lifetime (e.g.
    /// those of a TypeCode), given by `header` (the ids and whether the
    /// state is chunked), which runs only for a value not written before.
    /// An id is recognized as written before by comparing it with the
    /// octets already in the buffer.
    #[inline]
    pub fn write_value_with<'i, S: AsRef<str> + 'i>(
        &mut self,
        identity: *const (),
        header: impl FnOnce() -> Result<(&'i [S], bool)>,
        state: impl FnOnce(&mut Writer) -> Result<()>,
    ) -> Result<()> {
        self.write_value_inner::<false, S>(identity, header, state)
    }

    /// The common case inline (a value outside chunked ones: an
    /// indirection, or a header and the state); chunking apart.
    #[inline(always)]
    fn write_value_inner<'i, const STATIC: bool, S: AsRef<str> + 'i>(
        &mut self,
        identity: *const (),
        header: impl FnOnce() -> Result<(&'i [S], bool)>,
        state: impl FnOnce(&mut Writer) -> Result<()>,
    ) -> Result<()> {
        let key = identity as usize;
        self.align(4);
        let here = self.len();
        let st = self.vstate();
        if st.level > 0 {
            return self.write_nested_value::<STATIC, S>(key, header()?.0, state);
        }
        // One probe of the table: an indirection or a new entry.
        match st.shared.entry(key) {
            Entry::Occupied(e) => {
                let at = *e.get();
                return self.write_indirection(at);
            }
            Entry::Vacant(e) => {
                e.insert(here);
            }
        }
        let (ids, chunked) = header()?;
        if chunked {
            return self.write_chunked_value::<STATIC, S>(ids, state);
        }
        self.write_header::<STATIC, S>(ids, false)?;
        state(self)
    }

    /// A chunked value, or one nested in a chunked value.
    #[inline(never)]
    fn write_chunked_or_nested<const STATIC: bool, S: AsRef<str>>(
        &mut self,
        key: usize,
        ids: &[S],
        state: impl FnOnce(&mut Writer) -> Result<()>,
    ) -> Result<()> {
        if self.vstate().level > 0 {
            return self.write_nested_value::<STATIC, S>(key, ids, state);
        }
        let here = self.len();
        match self.vstate().shared.entry(key) {
            Entry::Occupied(e) => {
                let at = *e.get();
                self.write_indirection(at)
            }
            Entry::Vacant(e) => {
                e.insert(here);
                self.write_chunked_value::<STATIC, S>(ids, state)
            }
        }
    }

    /// A value nested in a chunked value (and so chunked too).
    #[inline(never)]
    fn write_nested_value<const STATIC: bool, S: AsRef<str>>(
        &mut self,
        key: usize,
        ids: &[S],
        state: impl FnOnce(&mut Writer) -> Result<()>,
    ) -> Result<()> {
        let here = self.len();
        let st = self.vstate();
        if st.chunk.is_some() {
            if let Some(&at) = st.shared.get(&key) {
                // Shared values are chunk data, like nulls.
                return self.write_indirection(at);
            }
            // A nested value's header starts outside its parent's chunks.
            self.end_chunk()?;
            self.align(4);
            let at = self.len();
            self.vstate().shared.insert(key, at);
        } else {
            match st.shared.entry(key) {
                Entry::Occupied(e) => {
                    let at = *e.get();
                    return self.write_indirection(at);
                }
                Entry::Vacant(e) => {
                    e.insert(here);
                }
            }
        }
        self.write_chunked_value::<STATIC, S>(ids, state)
    }

    /// A chunked value's header, state chunks and end tag (its entry in
    /// the table made).
    #[inline(never)]
    fn write_chunked_value<const STATIC: bool, S: AsRef<str>>(
        &mut self,
        ids: &[S],
        state: impl FnOnce(&mut Writer) -> Result<()>,
    ) -> Result<()> {
        self.write_header::<STATIC, S>(ids, true)?;
        let st = self.vstate();
        st.level += 1;
        let level = st.level;
        self.begin_chunk();
        state(self)?;
        self.end_chunk()?;
        self.write_i32(-(level as i32));
        self.vstate().level -= 1;
        if level > 1 {
            // The enclosing value's state goes on in a chunk of its own
            // (dropped again if nothing follows).
            self.begin_chunk();
        }
        Ok(())
    }

    /// The value tag and the repository ids.
    #[inline]
    fn write_header<const STATIC: bool, S: AsRef<str>>(
        &mut self,
        ids: &[S],
        chunked: bool,
    ) -> Result<()> {
        let info = match ids.len() {
            0 => 0,
            1 => SINGLE_ID,
            _ => ID_LIST,
        };
        let tag = VALUE_TAG_MIN | info | if chunked { CHUNKED_FLAG } else { 0 };
        match ids {
            [id] => self.write_tag_and_id::<STATIC>(tag, id.as_ref()),
            _ => {
                self.write_u32(tag);
                if ids.len() > 1 {
                    self.write_len(ids.len())?;
                }
                for id in ids {
                    self.write_repo_id::<STATIC>(id.as_ref())?;
                }
                Ok(())
            }
        }
    }

    /// `N` longs in one write (the position is 4-aligned).
    #[inline]
    fn write_longs<const N: usize, const B: usize>(&mut self, longs: [u32; N]) {
        debug_assert_eq!(B, 4 * N);
        debug_assert_eq!(self.position() & 3, 0);
        let mut bytes = [0u8; B];
        for (chunk, l) in bytes.chunks_exact_mut(4).zip(longs) {
            chunk.copy_from_slice(&match self.order() {
                ByteOrder::Big => l.to_be_bytes(),
                ByteOrder::Little => l.to_le_bytes(),
            });
        }
        self.write_bytes(&bytes);
    }

    /// The offset an indirection whose offset long is at buffer index
    /// `offset_at` has to buffer index `at`.
    #[inline]
    fn back_offset(at: usize, offset_at: usize) -> Result<u32> {
        i32::try_from(at as i64 - offset_at as i64)
            .map(|o| o as u32)
            .map_err(|_| CdrError::TooLong(offset_at - at))
    }

    /// An indirection to buffer index `at`: the tag and the offset.
    #[inline]
    fn write_indirection(&mut self, at: usize) -> Result<()> {
        self.align(4);
        let offset = Self::back_offset(at, self.len() + 4)?;
        self.write_longs::<2, 8>([INDIRECTION_TAG, offset]);
        Ok(())
    }

    /// A value tag with one repository id: tag, indirection tag and
    /// offset in one write when the id was written before.
    #[inline]
    fn write_tag_and_id<const STATIC: bool>(&mut self, tag: u32, id: &str) -> Result<()> {
        match self.find_id::<STATIC>(id) {
            Some(at) => {
                let offset = Self::back_offset(at, self.len() + 8)?;
                self.write_longs::<3, 12>([tag, INDIRECTION_TAG, offset]);
                Ok(())
            }
            None => {
                self.write_u32(tag);
                self.write_new_id::<STATIC>(id)
            }
        }
    }

    /// Buffer index of `id` written before, if it was.
    #[inline]
    fn find_id<const STATIC: bool>(&self, id: &str) -> Option<usize> {
        let st = self.values.as_deref()?;
        let addr = id.as_ptr() as usize;
        if STATIC {
            if let Some(w) = st.ids.iter().find(|w| w.addr == addr && w.len == id.len()) {
                return Some(w.at);
            }
        }
        let buf = self.as_slice();
        st.ids
            .iter()
            .find(|w| {
                w.len == id.len()
                    && buf
                        .get(w.at + 4..w.at + 4 + w.len)
                        .is_some_and(|b| same_bytes(b, id.as_bytes()))
                    // The length long counts the NUL: the octets are the
                    // id's own (not transcoded to another length).
                    && buf[w.at..w.at + 4] == self.long_bytes((w.len + 1) as u32)
            })
            .map(|w| w.at)
    }

    #[inline]
    fn long_bytes(&self, l: u32) -> [u8; 4] {
        match self.order() {
            ByteOrder::Big => l.to_be_bytes(),
            ByteOrder::Little => l.to_le_bytes(),
        }
    }

    /// A repository id, as an indirection when already in the stream.
    fn write_repo_id<const STATIC: bool>(&mut self, id: &str) -> Result<()> {
        match self.find_id::<STATIC>(id) {
            Some(at) => self.write_indirection(at),
            None => self.write_new_id::<STATIC>(id),
        }
    }

    /// A repository id not yet in the stream.
    fn write_new_id<const STATIC: bool>(&mut self, id: &str) -> Result<()> {
        self.align(4);
        let at = self.len();
        self.write_string(id)?;
        let addr = if STATIC { id.as_ptr() as usize } else { 0 };
        self.vstate().ids.push(WrittenId {
            addr,
            len: id.len(),
            at,
        });
        Ok(())
    }

    fn begin_chunk(&mut self) {
        let before = self.len();
        self.write_u32(0);
        let slot = self.len() - 4;
        self.vstate().chunk = Some((before, slot));
    }

    /// Closes the open chunk: its length is filled in, or it is removed
    /// when nothing was written in it.
    fn end_chunk(&mut self) -> Result<()> {
        let Some((before, slot)) = self.vstate().chunk.take() else {
            return Ok(());
        };
        let len = self.len() - slot - 4;
        if len == 0 {
            self.truncate(before);
            return Ok(());
        }
        let len = u32::try_from(len).map_err(|_| CdrError::TooLong(len))?;
        self.patch_u32(slot, len);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::same_bytes;

    #[test]
    fn same_bytes_compares_every_byte_of_every_length() {
        let a: alloc::vec::Vec<u8> = (0u8..40).collect();
        for n in 0..a.len() {
            assert!(same_bytes(&a[..n], &a[..n]), "{n}");
            assert!(!same_bytes(&a[..n], &a[..n + 1]), "lengths {n}");
            for i in 0..n {
                let mut b = a[..n].to_vec();
                b[i] ^= 0x80;
                assert!(!same_bytes(&a[..n], &b), "byte {i} of {n}");
            }
        }
    }
}
