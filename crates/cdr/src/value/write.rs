//! Writing value headers, indirections and chunks.

use alloc::boxed::Box;
use alloc::vec::Vec;

use super::{CHUNKED_FLAG, ID_LIST, INDIRECTION_TAG, NULL_TAG, SINGLE_ID, VALUE_TAG_MIN};
use crate::{CdrError, Result, Writer};

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
    /// Buffer index of the length of each repository id written.
    ids: Vec<(&'static str, usize)>,
    /// Chunked values open.
    level: u32,
    /// The open chunk: buffer length before its length's padding, and
    /// the index of its length.
    chunk: Option<(usize, usize)>,
}

impl WriteState {
    pub(crate) fn clear(&mut self) {
        self.shared.clear();
        self.ids.clear();
        self.level = 0;
        self.chunk = None;
    }
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
    /// address, e.g. `Arc::as_ptr`) was already written in this stream;
    /// otherwise its header and then its state through `state`.
    ///
    /// `ids` are the repository ids to send, most derived first: none (the
    /// value is of its slot's formal type), one, or the id followed by the
    /// truncatable bases. `chunked` is needed by truncatable and custom
    /// values; every value nested in a chunked one is chunked too.
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
        let in_chunk = st.chunk.is_some();
        let chunked = chunked || st.level > 0;
        let at = if in_chunk {
            if let Some(&at) = st.shared.get(&key) {
                // Shared values are chunk data, like nulls.
                self.write_u32(INDIRECTION_TAG);
                return self.write_back_offset(at);
            }
            // A nested value's header starts outside its parent's chunks.
            self.end_chunk()?;
            self.align(4);
            let at = self.len();
            self.vstate().shared.insert(key, at);
            at
        } else {
            // One probe of the table: an indirection or a new entry.
            match st.shared.entry(key) {
                Entry::Occupied(e) => {
                    let at = *e.get();
                    self.write_u32(INDIRECTION_TAG);
                    return self.write_back_offset(at);
                }
                Entry::Vacant(e) => {
                    e.insert(here);
                }
            }
            here
        };
        debug_assert_eq!(at, self.len());
        let info = match ids.len() {
            0 => 0,
            1 => SINGLE_ID,
            _ => ID_LIST,
        };
        self.write_u32(VALUE_TAG_MIN | info | if chunked { CHUNKED_FLAG } else { 0 });
        if ids.len() > 1 {
            self.write_len(ids.len())?;
        }
        for id in ids {
            self.write_repo_id(id)?;
        }
        if !chunked {
            return state(self);
        }
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

    /// An offset from here back to buffer index `at`.
    fn write_back_offset(&mut self, at: usize) -> Result<()> {
        self.align(4);
        let offset = i32::try_from(at as i64 - self.len() as i64)
            .map_err(|_| CdrError::TooLong(self.len() - at))?;
        self.write_i32(offset);
        Ok(())
    }

    /// A repository id, as an indirection when already in the stream.
    fn write_repo_id(&mut self, id: &'static str) -> Result<()> {
        let found = self
            .vstate()
            .ids
            .iter()
            .find(|(s, _)| core::ptr::eq(*s, id) || *s == id)
            .map(|(_, at)| *at);
        if let Some(at) = found {
            self.write_u32(INDIRECTION_TAG);
            return self.write_back_offset(at);
        }
        self.align(4);
        let at = self.len();
        self.write_string(id)?;
        self.vstate().ids.push((id, at));
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
