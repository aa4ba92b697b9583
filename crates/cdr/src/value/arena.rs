//! One block for the values a reader decodes: counted once for the whole
//! message, the references between them not counted at all.
//!
//! A decoded graph is many values pointing at each other. Counted one by
//! one, each edge costs an atomic operation when the graph is dropped,
//! each value another when the reader lets go of it and another when its
//! memory is given back, and a cycle is never freed. So the values of
//! types that can tell which value references they hold
//! ([`ValueType::EDGES`], which generated code provides) are made in one
//! arena per reader: their memory is carved out of chunks, and they share
//! one count, that of the arena's block, which counts only the references
//! held *outside* the arena. While the reader decodes, its stake keeps
//! the arena and the references it hands out are counted locally; when
//! it ends, it walks the arena's values once, counts the references
//! between them, and gives back its stake less the references it handed
//! out plus those found inside. The arena is freed, values and chunks,
//! when the last reference from outside goes, cycles included.
//!
//! What this costs users: a value kept alive keeps every value its
//! message decoded into the arena. Values of types without
//! [`ValueType::EDGES`] (written by hand) are made on their own, counted
//! one by one (see `slab.rs`).

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::marker::PhantomData;
use core::ptr::NonNull;
use core::sync::atomic::AtomicUsize;

use super::graph::ValueType;
use super::slab::{chunk_alloc, chunk_free, next_chunk_size, CHUNK_ALIGN, FIRST_CHUNK, MAX_CHUNK};
use super::slot::ValueSlot;
use super::vref::{Block, ValueRef, STAKE};

/// How to find the value references a value of type `T` holds: what a
/// type needs to be decoded into its message's arena (see
/// [`ValueType::EDGES`]).
pub struct Edges<T>(fn(&T, &mut ValueEdges<'_>));

impl<T> Clone for Edges<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Edges<T> {}

impl<T> Edges<T> {
    /// The edges of a `T` as `visit` reports them.
    ///
    /// # Safety
    /// `visit(v, e)` passes to `e` ([`ValueEdges::slot`],
    /// [`ValueEdges::value`]) every value reference `v` holds, in its
    /// fields and in the fields, elements and branches of what it holds,
    /// each once, and nothing else: a slot or reference `v` does not own
    /// reported as its own would make the arena free values still in use.
    /// Missing one only keeps the arena in memory. Generated code
    /// provides it for every valuetype and value box.
    pub const unsafe fn new(visit: fn(&T, &mut ValueEdges<'_>)) -> Self {
        Self(visit)
    }
}

/// What a walk of a value's references reports to (see [`Edges`]): it
/// counts those that lead into the arena being sealed.
pub struct ValueEdges<'a> {
    arena: NonNull<Block>,
    found: usize,
    _arena: PhantomData<&'a Block>,
}

impl core::fmt::Debug for ValueEdges<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ValueEdges")
            .field("found", &self.found)
            .finish_non_exhaustive()
    }
}

impl ValueEdges<'_> {
    /// A value slot held.
    #[inline]
    pub fn slot<T: ?Sized>(&mut self, s: &ValueSlot<T>) {
        if let Some(v) = s.get() {
            self.value(v);
        }
    }

    /// A value reference held outside a slot (an abstract interface's
    /// value).
    #[inline]
    pub fn value<T: ?Sized>(&mut self, v: &ValueRef<T>) {
        if ValueRef::block(v) == self.arena {
            self.found += 1;
        }
    }
}

/// A value in the arena: where it is, how to drop it and walk it.
struct Node {
    at: NonNull<u8>,
    drop: unsafe fn(NonNull<u8>),
    edges: unsafe fn(NonNull<u8>, &mut ValueEdges<'_>),
}

/// # Safety
/// `at` holds a live `T`, dropped once, here.
unsafe fn drop_node<T>(at: NonNull<u8>) {
    // SAFETY: the contract.
    unsafe { core::ptr::drop_in_place(at.cast::<T>().as_ptr()) }
}

/// # Safety
/// `at` holds a live `T` whose type has `EDGES`.
unsafe fn walk_node<T: ValueType>(at: NonNull<u8>, e: &mut ValueEdges<'_>) {
    if let Some(Edges(visit)) = T::EDGES {
        // SAFETY: the contract; shared access, as everyone else has.
        visit(unsafe { at.cast::<T>().as_ref() }, e);
    }
}

/// The arena's memory: chunks, and allocations of their own for values
/// too large or too aligned for a chunk.
struct Memory {
    at: NonNull<u8>,
    size: usize,
    /// `None` for a chunk (`chunk_alloc`), the layout otherwise.
    own: Option<core::alloc::Layout>,
}

/// The arena: its block (first, so that a reference's block pointer is
/// the arena's), and once sealed its values and memory.
#[repr(C)]
struct Arena {
    block: Block,
    nodes: Vec<Node>,
    memory: Vec<Memory>,
}

/// `Block::free` of an arena: drops its values, then gives its memory
/// back.
///
/// # Safety
/// `block` heads an `Arena` made by [`Builder`] and sealed, with no
/// reference left.
unsafe fn free_arena(block: NonNull<Block>) {
    let a = block.as_ptr().cast::<Arena>();
    // SAFETY: nobody else refers to the arena (the count reached zero);
    // its fields other than the block are taken out first (references
    // between its values, dropped below, read the block and see it
    // freeing), then the allocation itself is freed.
    let (nodes, memory) = unsafe {
        (
            core::mem::take(&mut (*a).nodes),
            core::mem::take(&mut (*a).memory),
        )
    };
    for n in nodes.iter().rev() {
        // SAFETY: each value is live until here and dropped once.
        unsafe { (n.drop)(n.at) }
    }
    for m in &memory {
        // SAFETY: made as recorded; its values are gone.
        unsafe {
            match m.own {
                None => chunk_free(m.at, m.size),
                Some(layout) => alloc::alloc::dealloc(m.at.as_ptr(), layout),
            }
        }
    }
    // SAFETY: made by `Box::new` in `Builder::new`; nothing refers to it.
    drop(unsafe { Box::from_raw(a) });
}

/// A reader's arena while it decodes: the values and memory it made,
/// moved into the arena when it is sealed.
pub(crate) struct Builder {
    arena: NonNull<Arena>,
    nodes: Vec<Node>,
    memory: Vec<Memory>,
    /// The chunk values are made in (dangling before the first).
    chunk: NonNull<u8>,
    /// Offset of its first free octet.
    used: usize,
    /// Its size (0 before the first).
    size: usize,
    next_size: usize,
    /// References to the arena's values handed out.
    handed: usize,
}

// SAFETY: the builder stands for the reader's stake in an arena of `Send +
// Sync` values (`ValueType` requires both); the count is atomic, and the
// rest is the builder's alone until it is moved into the arena.
unsafe impl Send for Builder {}
// SAFETY: as above.
unsafe impl Sync for Builder {}

impl Builder {
    pub(crate) fn new() -> Self {
        let arena = Box::new(Arena {
            block: Block {
                count: AtomicUsize::new(STAKE),
                free: free_arena,
            },
            nodes: Vec::new(),
            memory: Vec::new(),
        });
        Self {
            arena: NonNull::from(Box::leak(arena)),
            nodes: Vec::new(),
            memory: Vec::new(),
            chunk: NonNull::dangling(),
            used: 0,
            size: 0,
            next_size: FIRST_CHUNK,
            handed: 0,
        }
    }

    /// Makes room to record `n` more values.
    pub(crate) fn reserve(&mut self, n: usize) {
        self.nodes.reserve(n);
    }

    fn block(&self) -> NonNull<Block> {
        self.arena.cast()
    }

    /// `value` made in the arena: a reference handed out.
    #[inline]
    pub(crate) fn make<T: ValueType>(&mut self, value: T) -> ValueRef<T> {
        let layout = core::alloc::Layout::new::<T>();
        // A value of no size takes an octet all the same: each value has
        // an address of its own, which is its identity on the wire.
        let size = layout.size().max(1);
        let at = if layout.align() <= CHUNK_ALIGN && size <= MAX_CHUNK / 4 {
            let start = self.used.next_multiple_of(layout.align());
            let start = if start + size <= self.size {
                start
            } else {
                self.grow(size);
                0
            };
            self.used = start + size;
            // SAFETY: `start .. start + size` lies inside the current
            // chunk (checked, or a chunk of at least `size` made), aligned
            // (the chunk to `CHUNK_ALIGN`, at least the value's), unused.
            unsafe { NonNull::new_unchecked(self.chunk.as_ptr().add(start)) }
        } else {
            self.alone(layout)
        };
        // SAFETY: fresh memory for a `T`.
        unsafe { at.cast::<T>().as_ptr().write(value) };
        self.nodes.push(Node {
            at,
            drop: drop_node::<T>,
            edges: walk_node::<T>,
        });
        self.handed += 1;
        // SAFETY: the value lives as long as the arena; the reference is
        // counted in `handed`.
        unsafe { ValueRef::from_parts(at.cast::<T>(), self.block()) }
    }

    /// Another reference to `at`, a value of the arena (an indirection to
    /// it).
    #[inline]
    pub(crate) fn hand_out<T: ?Sized>(&mut self, at: NonNull<T>) -> ValueRef<T> {
        self.handed += 1;
        // SAFETY: `at` is one of the arena's values, live as long as it
        // is; the reference is counted in `handed`.
        unsafe { ValueRef::from_parts(at, self.block()) }
    }

    /// A counted reference to `at`, a value of the arena, for a holder
    /// that may outlive the reader (a cloned reader's table).
    pub(crate) fn counted<T: ?Sized>(&self, at: NonNull<T>) -> ValueRef<T> {
        // SAFETY: as `hand_out`, but the clone takes a count of its own
        // (the borrowed reference is not dropped).
        let borrowed =
            core::mem::ManuallyDrop::new(unsafe { ValueRef::from_parts(at, self.block()) });
        (*borrowed).clone()
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, needed: usize) {
        let size = self.next_size.max(needed);
        self.next_size = next_chunk_size(size);
        let at = chunk_alloc(size);
        self.memory.push(Memory {
            at,
            size,
            own: None,
        });
        self.chunk = at;
        self.size = size;
        self.used = 0;
    }

    /// Memory of its own for a value too large or too aligned for a chunk.
    #[cold]
    #[inline(never)]
    fn alone(&mut self, layout: core::alloc::Layout) -> NonNull<u8> {
        // An octet at least, as in a chunk.
        let layout = match layout.align_to(1) {
            Ok(l) if l.size() > 0 => l,
            _ => core::alloc::Layout::from_size_align(1, layout.align())
                .expect("an alignment a type has"),
        };
        // SAFETY: a non-zero size.
        let p = unsafe { alloc::alloc::alloc(layout) };
        let at = match NonNull::new(p) {
            Some(p) => p,
            None => alloc::alloc::handle_alloc_error(layout),
        };
        self.memory.push(Memory {
            at,
            size: layout.size(),
            own: Some(layout),
        });
        at
    }
}

impl Builder {
    /// Seals the arena: counts the references between its values, moves
    /// them and the memory into it, and gives back the reader's stake
    /// less the references handed out, which stay outside (or are among
    /// those found inside).
    pub(crate) fn seal(mut self) {
        let mut e = ValueEdges {
            arena: self.block(),
            found: 0,
            _arena: PhantomData,
        };
        for n in &self.nodes {
            // SAFETY: each node is a live value of the type it was made
            // with.
            unsafe { (n.edges)(n.at, &mut e) };
        }
        let a = self.arena.as_ptr();
        // SAFETY: nobody but the builder touches these fields before the
        // arena is freed, which the stake prevents until the release
        // below; the block's count is not touched here.
        unsafe {
            core::ptr::addr_of_mut!((*a).nodes).write(core::mem::take(&mut self.nodes));
            core::ptr::addr_of_mut!((*a).memory).write(core::mem::take(&mut self.memory));
        }
        // Every reference inside the arena was handed out (or cloned from
        // one) and stays there until the arena is freed: what remains
        // counted is what is held outside.
        // SAFETY: the stake is the builder's, less the references it
        // handed out, which their holders release.
        unsafe { Block::release(self.block(), STAKE - self.handed + e.found) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{read_value, ByteOrder, Decode, Encode, Reader, Result, ValueInfo, Writer};
    use std::cell::Cell;

    std::thread_local! {
        static DROPS: Cell<usize> = const { Cell::new(0) };
    }

    fn drops() -> usize {
        DROPS.with(Cell::get)
    }

    /// `valuetype Ring { public long id; public Ring next; };`, its
    /// drops counted.
    struct Ring {
        id: i32,
        next: ValueSlot<Ring>,
    }

    impl Drop for Ring {
        fn drop(&mut self) {
            DROPS.with(|d| d.set(d.get() + 1));
        }
    }

    impl ValueType for Ring {
        const REPO_ID: &'static str = "IDL:t/Ring:1.0";
        const IDS: &'static [&'static str] = &["IDL:t/Ring:1.0"];
        const CHUNKED: bool = false;
        // SAFETY: a `Ring` holds one value reference, `next`.
        const EDGES: Option<Edges<Self>> = Some(unsafe { Edges::new(|r, e| e.slot(&r.next)) });
        fn write_state(&self, w: &mut Writer) -> Result<()> {
            self.id.encode(w)?;
            self.next.encode(w)
        }
        fn read_state(r: &mut Reader<'_>, _: &ValueInfo<'_>) -> Result<ValueRef<Self>> {
            let id = i32::decode(r)?;
            let mut next = read_value::<Ring>(r)?;
            let v = r.new_value(Ring {
                id,
                next: next.take_slot(),
            });
            next.fixup(r, &v, |s| &s.next);
            Ok(v)
        }
    }

    /// The encoding of `n` rings, each one's `next` the one after, the
    /// last's the first: one cycle through all of them (written by hand,
    /// keyed by the addresses of `keys`, so that the sender holds no
    /// cycle of its own).
    fn ring_bytes(n: usize) -> Vec<u8> {
        fn ring(w: &mut Writer, keys: &[u8], i: usize) -> Result<()> {
            let key = &keys[i % keys.len()] as *const u8 as *const ();
            w.write_value(key, Ring::IDS, false, |w| {
                (i as i32).encode(w)?;
                ring(w, keys, i + 1)
            })
        }
        let keys = vec![0u8; n];
        let mut w = Writer::new(ByteOrder::Little);
        ring(&mut w, &keys, 0).unwrap();
        w.into_vec()
    }

    #[test]
    fn a_decoded_cycle_is_freed_with_its_last_outside_reference() {
        let bytes = ring_bytes(50);
        let before = drops();
        let mut r = Reader::new(&bytes, ByteOrder::Little);
        let first = ValueSlot::<Ring>::decode(&mut r).unwrap();
        drop(r);
        // Follow the ring around: all 50, back to the first.
        let head = first.get().unwrap().clone();
        let mut at = head.next.get().unwrap().clone();
        let mut n = 1;
        while !ValueRef::ptr_eq(&at, &head) {
            at = at.next.get().unwrap().clone();
            n += 1;
        }
        assert_eq!(n, 50);
        assert_eq!(head.id, 0);
        drop((first, head));
        assert_eq!(drops() - before, 0, "`at` still holds the arena");
        drop(at);
        assert_eq!(drops() - before, 50, "the whole cycle, freed");
    }

    #[test]
    fn a_reference_kept_from_the_middle_keeps_the_message() {
        let bytes = ring_bytes(10);
        let before = drops();
        let kept = {
            let mut r = Reader::new(&bytes, ByteOrder::Little);
            let first = ValueSlot::<Ring>::decode(&mut r).unwrap();
            let third = first
                .get()
                .unwrap()
                .next
                .get()
                .unwrap()
                .next
                .get()
                .unwrap()
                .clone();
            third
        };
        assert_eq!(kept.id, 2);
        assert_eq!(drops() - before, 0);
        let other = kept.clone();
        drop(kept);
        assert_eq!(drops() - before, 0, "a clone still holds it");
        drop(other);
        assert_eq!(drops() - before, 10);
    }

    #[test]
    fn a_failed_decode_frees_what_it_made() {
        // Rings one after another in a sequence, each its own cycle of
        // three: those read before the input ends are made, then dropped
        // with the reader.
        let one = ring_bytes(3);
        let mut w = Writer::new(ByteOrder::Little);
        w.write_u32(20);
        for _ in 0..20 {
            // Each element in a stream of its own: no indirection between
            // them.
            let mut r = Reader::new(&one, ByteOrder::Little);
            ValueSlot::<Ring>::decode(&mut r)
                .unwrap()
                .encode(&mut w)
                .unwrap();
        }
        let bytes = w.into_vec();
        let before = drops();
        let mut r = Reader::new(&bytes[..bytes.len() / 2], ByteOrder::Little);
        assert!(Vec::<ValueSlot<Ring>>::decode(&mut r).is_err());
        let made = drops() - before;
        assert_eq!(made, 0, "the reader still holds them");
        drop(r);
        let made = drops() - before;
        assert!(made >= 3 && made % 3 == 0, "{made}");
    }

    /// `valuetype Wide { public long id; };` with a large Rust state
    /// (past a chunk's quarter, so made in memory of its own).
    struct Wide {
        id: i32,
        pad: [u64; 2100],
    }

    impl ValueType for Wide {
        const REPO_ID: &'static str = "IDL:t/Wide:1.0";
        const IDS: &'static [&'static str] = &["IDL:t/Wide:1.0"];
        const CHUNKED: bool = false;
        // SAFETY: a `Wide` holds no value reference.
        const EDGES: Option<Edges<Self>> = Some(unsafe { Edges::new(|_, _| {}) });
        fn write_state(&self, w: &mut Writer) -> Result<()> {
            self.id.encode(w)
        }
        fn read_state(r: &mut Reader<'_>, _: &ValueInfo<'_>) -> Result<ValueRef<Self>> {
            let id = i32::decode(r)?;
            Ok(r.new_value(Wide {
                id,
                pad: [id as u64; 2100],
            }))
        }
    }

    /// `valuetype Empty {};`: a value of no size.
    struct Empty;

    impl ValueType for Empty {
        const REPO_ID: &'static str = "IDL:t/Empty:1.0";
        const IDS: &'static [&'static str] = &["IDL:t/Empty:1.0"];
        const CHUNKED: bool = false;
        // SAFETY: an `Empty` holds nothing.
        const EDGES: Option<Edges<Self>> = Some(unsafe { Edges::new(|_, _| {}) });
        fn write_state(&self, _: &mut Writer) -> Result<()> {
            Ok(())
        }
        fn read_state(r: &mut Reader<'_>, _: &ValueInfo<'_>) -> Result<ValueRef<Self>> {
            Ok(r.new_value(Empty))
        }
    }

    /// Values made in memory of their own (too large for a chunk) and
    /// values made in chunks, one after another, keep their own memory:
    /// a small value after a large one goes into the chunk, not into the
    /// large value's memory.
    #[test]
    fn large_values_and_small_ones_do_not_overlap() {
        // Kept while the message is written: the writer knows a value by
        // its address.
        let wides: Vec<ValueSlot<Wide>> = (0..4)
            .map(|id| ValueRef::new(Wide { id, pad: [0; 2100] }).into())
            .collect();
        let mut w = Writer::new(ByteOrder::Little);
        for wide in &wides {
            wide.encode(&mut w).unwrap();
            w.write_bytes(&ring_bytes(3)[..]);
        }
        let bytes = w.into_vec();
        let before = drops();
        let mut r = Reader::new(&bytes, ByteOrder::Little);
        let mut kept = Vec::new();
        for i in 0..4 {
            let wide = ValueSlot::<Wide>::decode(&mut r).unwrap();
            let ring = ValueSlot::<Ring>::decode(&mut r).unwrap();
            kept.push((i, wide, ring));
        }
        drop(r);
        for (i, wide, ring) in &kept {
            let wide = wide.get().unwrap();
            assert_eq!(wide.id, *i);
            assert!(wide.pad.iter().all(|p| *p == *i as u64), "{i}: overwritten");
            let ring = ring.get().unwrap();
            let second = ring.next.get().unwrap();
            assert_eq!(
                [ring.id, second.id, second.next.get().unwrap().id],
                [0, 1, 2]
            );
        }
        drop(kept);
        assert_eq!(drops() - before, 12, "four rings of three");
    }

    /// Two values of no size are two values: each has an address of its
    /// own, so they are written again as two, not as one shared.
    #[test]
    fn values_of_no_size_keep_their_identity() {
        let mut w = Writer::new(ByteOrder::Little);
        let two = vec![
            ValueSlot::from(ValueRef::new(Empty)),
            ValueSlot::from(ValueRef::new(Empty)),
        ];
        two.encode(&mut w).unwrap();
        let bytes = w.into_vec();
        let mut r = Reader::new(&bytes, ByteOrder::Little);
        let back = Vec::<ValueSlot<Empty>>::decode(&mut r).unwrap();
        drop(r);
        assert!(!ValueRef::ptr_eq(
            back[0].get().unwrap(),
            back[1].get().unwrap()
        ));
        let mut w = Writer::new(ByteOrder::Little);
        back.encode(&mut w).unwrap();
        assert_eq!(w.into_vec(), bytes, "two values again, no indirection");
    }
}
