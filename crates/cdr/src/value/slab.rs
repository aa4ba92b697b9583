//! The memory a reader makes its values in: chunks shared by many
//! values, each value still counted on its own.
//!
//! A decoded graph is many small values made one after another, and
//! released together most of the time. Allocating each with the global
//! allocator cost more than anything else in a graph's decode (about two
//! fifths of its instructions went to `malloc` and `free`, node and label
//! together). So a reader carves the values it makes out of chunks: a
//! value's memory is a bump of a pointer, and a chunk is freed when the
//! last value in it is. A value's own count works as for a value made
//! alone ([`ValueRef::new`](super::ValueRef::new)): it is dropped when its
//! last reference goes, whatever else in its chunk still lives; only its
//! memory waits for the chunk.
//!
//! The cost of that: a value kept alive keeps its chunk's memory (at most
//! [`MAX_CHUNK`] octets) until it goes.
//!
//! Chunks whose values are all gone are kept for the next reader, a few of
//! each size (with `std`): handed back to the allocator, a chunk as large
//! as these merges with the free top of the heap, which the C library then
//! gives back to the kernel and takes again for the next message, two
//! system calls and the page faults of the memory every time (measured:
//! a third of a 1,000-value graph's decode time went to the kernel).

use alloc::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use core::ptr::NonNull;
use core::sync::atomic::{fence, AtomicUsize, Ordering};

use super::vref::{Block, ValueRef, STAKE};

/// The first chunk a reader makes: small, for messages with a value or
/// two.
pub(crate) const FIRST_CHUNK: usize = 1024;

/// Chunks double up to this size.
pub(crate) const MAX_CHUNK: usize = 64 * 1024;

/// Alignment of a chunk, and the largest a value made in one may need
/// (larger ones are made alone).
pub(crate) const CHUNK_ALIGN: usize = 16;

/// The head of a chunk.
#[repr(C)]
struct Chunk {
    /// Values in the chunk not yet dropped, plus the reader's stake while
    /// it still makes values in it.
    live: AtomicUsize,
    /// The chunk's size in octets (for its release).
    size: usize,
}

impl Chunk {
    /// Gives up `n` of the chunk's count; frees it when it was the last.
    ///
    /// # Safety
    /// `chunk` is live and the caller holds `n` of its count.
    unsafe fn release(chunk: NonNull<Chunk>, n: usize) {
        // SAFETY: live while counted (the contract).
        let c = unsafe { chunk.as_ref() };
        if c.live.fetch_sub(n, Ordering::Release) != n {
            return;
        }
        fence(Ordering::Acquire);
        let size = c.size;
        // SAFETY: made by `chunk_alloc(size)`; nothing in it is live any
        // more.
        unsafe { chunk_free(chunk.cast(), size) }
    }
}

/// A chunk of `size` octets (a power of two from `FIRST_CHUNK` to
/// `MAX_CHUNK`, or any size up to `MAX_CHUNK`), aligned to
/// `CHUNK_ALIGN`: an idle one if one is kept.
pub(crate) fn chunk_alloc(size: usize) -> NonNull<u8> {
    if let Some(c) = idle::take(size) {
        return c.cast();
    }
    let layout = match Layout::from_size_align(size, CHUNK_ALIGN) {
        Ok(l) => l,
        Err(_) => unreachable!("a bounded size and a constant alignment"),
    };
    // SAFETY: a non-zero size.
    let p = unsafe { alloc(layout) };
    match NonNull::new(p) {
        Some(p) => p,
        None => handle_alloc_error(layout),
    }
}

/// Gives back a chunk made by [`chunk_alloc`], kept for reuse if there is
/// room.
///
/// # Safety
/// `chunk` was made by `chunk_alloc(size)` and nothing in it is used
/// after.
pub(crate) unsafe fn chunk_free(chunk: NonNull<u8>, size: usize) {
    if !idle::keep(chunk.cast(), size) {
        // SAFETY: allocated by `chunk_alloc` with this layout (the
        // contract).
        unsafe {
            dealloc(
                chunk.as_ptr(),
                Layout::from_size_align_unchecked(size, CHUNK_ALIGN),
            )
        }
    }
}

/// The size of a reader's next chunk after one of `size`.
pub(crate) fn next_chunk_size(size: usize) -> usize {
    (size.max(FIRST_CHUNK / 2) * 2).min(MAX_CHUNK)
}

/// Chunks kept for reuse, by size (see the module doc). Not under Miri,
/// which then checks that every chunk is freed.
#[cfg(all(feature = "std", not(miri)))]
mod idle {
    use core::ptr::NonNull;
    use std::sync::Mutex;

    use super::{Chunk, FIRST_CHUNK, MAX_CHUNK};

    /// Sizes from `FIRST_CHUNK` to `MAX_CHUNK`, doubling.
    const CLASSES: usize = (MAX_CHUNK / FIRST_CHUNK).trailing_zeros() as usize + 1;

    /// Chunks kept of each size: what a few readers at once use.
    const PER_CLASS: usize = 4;

    /// Addresses of idle chunks (no value in them, nobody's count).
    static IDLE: [Mutex<Vec<usize>>; CLASSES] = [const { Mutex::new(Vec::new()) }; CLASSES];

    fn class(size: usize) -> Option<usize> {
        if !size.is_power_of_two() || !(FIRST_CHUNK..=MAX_CHUNK).contains(&size) {
            return None;
        }
        Some((size / FIRST_CHUNK).trailing_zeros() as usize)
    }

    /// Keeps `chunk` of `size` octets, now idle, if there is room.
    pub(super) fn keep(chunk: NonNull<Chunk>, size: usize) -> bool {
        let Some(c) = class(size) else { return false };
        let mut idle = IDLE[c].lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() >= PER_CLASS {
            return false;
        }
        idle.push(chunk.as_ptr() as usize);
        true
    }

    /// An idle chunk of `size` octets, if one is kept.
    pub(super) fn take(size: usize) -> Option<NonNull<Chunk>> {
        let c = class(size)?;
        let p = IDLE[c].lock().unwrap_or_else(|e| e.into_inner()).pop()?;
        NonNull::new(p as *mut Chunk)
    }
}

/// Without `std`, no chunk is kept.
#[cfg(any(not(feature = "std"), miri))]
mod idle {
    use core::ptr::NonNull;

    use super::Chunk;

    pub(super) fn keep(_: NonNull<Chunk>, _: usize) -> bool {
        false
    }

    pub(super) fn take(_: usize) -> Option<NonNull<Chunk>> {
        None
    }
}

/// A value in a chunk: its block, the chunk, the value.
#[repr(C)]
struct InChunk<T> {
    block: Block,
    chunk: NonNull<Chunk>,
    value: T,
}

/// `Block::free` of a value in a chunk: drops the value in place and
/// gives its place in the chunk back.
///
/// # Safety
/// `block` heads an `InChunk<T>` made by [`Slab::make`], with no
/// reference left.
unsafe fn free_in_chunk<T>(block: NonNull<Block>) {
    let node = block.as_ptr().cast::<InChunk<T>>();
    // SAFETY: `InChunk` is `repr(C)` with the block first; the value was
    // written by `make` and is dropped once, here.
    unsafe {
        let chunk = (*node).chunk;
        core::ptr::drop_in_place(core::ptr::addr_of_mut!((*node).value));
        Chunk::release(chunk, 1);
    }
}

/// Where a reader makes its values: the chunk it is filling.
#[derive(Default)]
pub(crate) struct Slab {
    current: Option<Current>,
    /// Size of the next chunk.
    next_size: usize,
}

struct Current {
    chunk: NonNull<Chunk>,
    /// Offset of the first free octet.
    used: usize,
    /// Values made in it (what the stake is given back less).
    made: usize,
}

// SAFETY: the slab stands for a count of a chunk whose values are `Send +
// Sync` (only such values are made in it) and whose count is atomic.
unsafe impl Send for Slab {}
// SAFETY: as above.
unsafe impl Sync for Slab {}

impl Slab {
    /// `value` made in the current chunk (or a new one), its block's
    /// count starting at `count`; a value too large or too aligned for a
    /// chunk is made alone.
    #[inline]
    pub(crate) fn make<T: Send + Sync>(&mut self, value: T, count: usize) -> ValueRef<T> {
        let layout = Layout::new::<InChunk<T>>();
        if layout.align() > CHUNK_ALIGN || layout.size() > MAX_CHUNK / 4 {
            return ValueRef::with_count(value, count);
        }
        let at = match &self.current {
            Some(c) if fits(c.used, layout, self.size_of_current()) => {
                c.used.next_multiple_of(layout.align())
            }
            _ => {
                let at = core::mem::size_of::<Chunk>().next_multiple_of(layout.align());
                self.grow(at + layout.size());
                at
            }
        };
        let Some(cur) = self.current.as_mut() else {
            unreachable!("made above")
        };
        cur.used = at + layout.size();
        cur.made += 1;
        // SAFETY: `at .. at + size` lies inside the chunk (checked by
        // `fits`, or a new chunk made at least that large), aligned for
        // `InChunk<T>` (the chunk is aligned to `CHUNK_ALIGN`, at least
        // the value's), and used by nothing else.
        unsafe {
            let node = cur.chunk.as_ptr().cast::<u8>().add(at).cast::<InChunk<T>>();
            node.write(InChunk {
                block: Block {
                    count: AtomicUsize::new(count),
                    free: free_in_chunk::<T>,
                },
                chunk: cur.chunk,
                value,
            });
            ValueRef::from_parts(
                NonNull::new_unchecked(core::ptr::addr_of_mut!((*node).value)),
                NonNull::new_unchecked(node.cast::<Block>()),
            )
        }
    }

    fn size_of_current(&self) -> usize {
        match &self.current {
            // SAFETY: the current chunk is live (the reader's stake).
            Some(c) => unsafe { c.chunk.as_ref() }.size,
            None => 0,
        }
    }

    /// Retires the current chunk and starts the next, of at least
    /// `needed` octets.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, needed: usize) {
        self.retire();
        let size = self.next_size.max(FIRST_CHUNK).max(needed);
        self.next_size = next_chunk_size(size);
        let chunk = chunk_alloc(size).cast::<Chunk>();
        // SAFETY: fresh or idle memory of `size` octets, aligned for the
        // head.
        unsafe {
            chunk.as_ptr().write(Chunk {
                live: AtomicUsize::new(STAKE),
                size,
            })
        };
        self.current = Some(Current {
            chunk,
            used: core::mem::size_of::<Chunk>(),
            made: 0,
        });
    }

    /// Gives back the stake in the current chunk, less its values.
    fn retire(&mut self) {
        if let Some(c) = self.current.take() {
            // SAFETY: the stake is the slab's; each value made holds one of
            // the count it leaves.
            unsafe { Chunk::release(c.chunk, STAKE - c.made) }
        }
    }
}

impl Drop for Slab {
    fn drop(&mut self) {
        self.retire();
    }
}

/// True when a value of `layout` fits in a chunk of `size` octets whose
/// first `used` are taken.
#[inline]
fn fits(used: usize, layout: Layout, size: usize) -> bool {
    used.next_multiple_of(layout.align()) + layout.size() <= size
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::String;
    use alloc::sync::Arc;
    use alloc::vec::Vec;

    struct Counted(Arc<AtomicUsize>, #[allow(dead_code)] [u64; 8]);

    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn values_outlive_the_slab_and_are_dropped_one_by_one() {
        let drops = Arc::new(AtomicUsize::new(0));
        let mut slab = Slab::default();
        // Enough values for several chunks.
        let vs: Vec<ValueRef<Counted>> = (0..500)
            .map(|_| slab.make(Counted(drops.clone(), [0; 8]), 1))
            .collect();
        let s = slab.make(String::from("kept"), 1);
        drop(slab);
        assert_eq!(drops.load(Ordering::Relaxed), 0);
        let mut vs = vs;
        vs.truncate(100);
        assert_eq!(drops.load(Ordering::Relaxed), 400);
        drop(vs);
        assert_eq!(drops.load(Ordering::Relaxed), 500);
        assert_eq!(&*s, "kept");
    }

    /// `valuetype Link { public long id; public Link prev; };`
    struct Link {
        id: i32,
        prev: crate::ValueSlot<Link>,
    }

    impl crate::ValueType for Link {
        const REPO_ID: &'static str = "IDL:t/Link:1.0";
        const IDS: &'static [&'static str] = &["IDL:t/Link:1.0"];
        const CHUNKED: bool = false;
        fn write_state(&self, w: &mut crate::Writer) -> crate::Result<()> {
            w.write_i32(self.id);
            crate::Encode::encode(&self.prev, w)
        }
        fn read_state(
            r: &mut crate::Reader<'_>,
            _: &crate::ValueInfo<'_>,
        ) -> crate::Result<ValueRef<Self>> {
            let id = r.read_i32()?;
            let prev = crate::read_value::<Link>(r)?.ready()?;
            Ok(r.new_value(Link {
                id,
                prev: prev.into(),
            }))
        }
    }

    /// A decoded chain (each value made in the reader's chunks, the
    /// reader's stakes, indirections handed out of them) is freed value by
    /// value as its references go, the reader's included: Miri checks that
    /// nothing is left and nothing is used after it is freed.
    #[test]
    fn a_decoded_graph_is_freed_with_its_last_reference() {
        use crate::{ByteOrder, Decode, Encode, Reader, ValueSlot, Writer};
        let mut chain: Vec<ValueSlot<Link>> = Vec::new();
        for id in 0..40 {
            let prev = chain.last().cloned().unwrap_or_default();
            chain.push(ValueRef::new(Link { id, prev }).into());
        }
        let mut w = Writer::new(ByteOrder::Little);
        chain.encode(&mut w).unwrap();
        let bytes = w.into_vec();
        let mut r = Reader::new(&bytes, ByteOrder::Little);
        let back = Vec::<ValueSlot<Link>>::decode(&mut r).unwrap();
        // Keep one value from the middle, the reader gone.
        drop(r);
        let kept = back[20].get().unwrap().clone();
        drop(back);
        assert_eq!(kept.id, 20);
        let mut n = 0;
        let mut at = Some(kept.clone());
        while let Some(v) = at {
            n += 1;
            at = v.prev.get().cloned();
        }
        assert_eq!(n, 21, "values 0..=20 are still reachable from it");
    }

    #[test]
    fn large_and_overaligned_values_are_made_alone() {
        #[repr(align(64))]
        struct Wide(u8);
        let mut slab = Slab::default();
        let w = slab.make(Wide(7), 1);
        let big = slab.make([1u8; MAX_CHUNK], 1);
        assert_eq!(w.0, 7);
        assert_eq!(big[MAX_CHUNK - 1], 1);
        assert!(slab.current.is_none(), "no chunk for either");
    }
}
