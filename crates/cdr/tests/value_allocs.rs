//! Value marshaling allocates nothing per node beyond the node itself:
//! encoding an N-node graph with sharing allocates a number of times that
//! grows with log N (buffer and table growth); decoding makes the nodes in
//! chunks shared by the message's values, so it allocates the chunks
//! (growing from 1 KiB to 64 KiB) and the tables, nothing per node.
//! Counted by a global allocator, per thread.

use peregrine_cdr::ValueRef;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use peregrine_cdr::{
    read_value, ByteOrder, Decode, Encode, Reader, Result, ValueInfo, ValueSlot, ValueType,
    ValueWalk, Writer,
};

struct Counting;

thread_local! {
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is forwarded to the system allocator unchanged; the
// counter is a thread-local `Cell` that allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocs_in(f: impl FnOnce()) -> usize {
    let before = ALLOCS.with(Cell::get);
    f();
    ALLOCS.with(Cell::get) - before
}

/// `valuetype Link { public long id; public Link prev; public Link self_; };`
/// (no strings: their allocations would be the state's, not the codec's).
struct Link {
    id: i32,
    prev: ValueSlot<Link>,
    me: ValueSlot<Link>,
}

impl ValueType for Link {
    const REPO_ID: &'static str = "IDL:Test/Link:1.0";
    const IDS: &'static [&'static str] = &["IDL:Test/Link:1.0"];
    const CHUNKED: bool = false;
    fn write_state(&self, w: &mut Writer) -> Result<()> {
        self.id.encode(w)?;
        self.prev.encode(w)?;
        self.me.encode(w)
    }
    fn read_state(r: &mut Reader<'_>, _: &ValueInfo<'_>) -> Result<ValueRef<Self>> {
        let id = i32::decode(r)?;
        let mut prev = read_value::<Link>(r)?;
        let mut me = read_value::<Link>(r)?;
        let v = r.new_value(Link {
            id,
            prev: prev.take_slot(),
            me: me.take_slot(),
        });
        prev.fixup(r, &v, |s| &s.prev);
        me.fixup(r, &v, |s| &s.me);
        Ok(v)
    }
}

/// N nodes, each pointing to the one before (sharing: every node but the
/// last is written once and referred to once more). Dropping such a
/// chain recurses once per node, which bounds N in a debug build.
fn chain(n: usize) -> Vec<ValueSlot<Link>> {
    let mut out: Vec<ValueSlot<Link>> = Vec::with_capacity(n);
    for i in 0..n {
        let prev = out.last().cloned().unwrap_or_default();
        out.push(
            ValueRef::new(Link {
                id: i as i32,
                prev,
                me: ValueSlot::null(),
            })
            .into(),
        );
    }
    out
}

/// Allocations growing the writer's buffer, the tables and the decoded
/// vector: a few per doubling.
fn growth(n: usize) -> usize {
    8 * (usize::BITS - n.leading_zeros()) as usize + 8
}

/// The most chunks `n` decoded `Link`s take: seven while chunks grow
/// from 1 KiB to 64 KiB, then one per 64 KiB (a node is the `Link` and
/// three words of bookkeeping).
fn chunks(n: usize) -> usize {
    8 + n * (std::mem::size_of::<Link>() + 24) / (64 * 1024)
}

#[test]
fn encoding_a_graph_allocates_nothing_per_node() {
    for n in [500, 2_000] {
        let graph = chain(n);
        let mut bytes = Vec::new();
        let count = allocs_in(|| {
            let mut w = Writer::new(ByteOrder::Little);
            graph.encode(&mut w).unwrap();
            bytes = w.into_vec();
        });
        assert!(count <= growth(n), "{n} nodes: {count} allocations");
        // Sharing was kept: node i's `prev` is an indirection (so the
        // encoding is much shorter than N whole headers for `prev`).
        assert!(bytes.len() < n * 40, "{} bytes", bytes.len());
    }
}

#[test]
fn decoding_a_graph_allocates_no_block_per_node() {
    for n in [500, 2_000] {
        let mut w = Writer::new(ByteOrder::Big);
        chain(n).encode(&mut w).unwrap();
        let bytes = w.into_vec();
        let mut back = Vec::new();
        let count = allocs_in(|| {
            let mut r = Reader::new(&bytes, ByteOrder::Big);
            back = Vec::<ValueSlot<Link>>::decode(&mut r).unwrap();
        });
        assert!(
            count <= chunks(n) + growth(n),
            "{n} nodes: {count} allocations"
        );
        assert_eq!(back.len(), n);
        let last = back[n - 1].get().unwrap();
        assert_eq!(last.id, n as i32 - 1);
        assert!(ValueRef::ptr_eq(
            last.prev.get().unwrap(),
            back[n - 2].get().unwrap()
        ));
    }
}

/// A sequence of values sizes the decoder's position table once, from
/// its length: the nodes' chunks, and a constant number of allocations
/// besides (the reader's state, its three tables, the id, the vector: 8),
/// whatever N.
#[test]
fn decoding_a_sequence_of_values_sizes_the_table_once() {
    for n in [64, 500, 2_000] {
        let mut w = Writer::new(ByteOrder::Little);
        chain(n).encode(&mut w).unwrap();
        let bytes = w.into_vec();
        let mut back = Vec::new();
        let count = allocs_in(|| {
            let mut r = Reader::new(&bytes, ByteOrder::Little);
            back = Vec::<ValueSlot<Link>>::decode(&mut r).unwrap();
        });
        assert!(count <= chunks(n) + 8, "{n} nodes: {count} allocations");
        assert_eq!(back.len(), n);
        assert!(ValueRef::ptr_eq(
            back[n - 1].get().unwrap().prev.get().unwrap(),
            back[n - 2].get().unwrap()
        ));
    }
}

/// A cycle (each node's `me` points to itself) costs one deferred
/// completion per back edge: allocated only where the graph has cycles.
#[test]
fn a_cycle_costs_its_own_completion_only() {
    let n = 1_000;
    let graph = chain(n);
    for v in &graph {
        let node = v.get().unwrap();
        node.me.set(node.clone()).map_err(|_| ()).unwrap();
    }
    let mut w = Writer::new(ByteOrder::Big);
    graph.encode(&mut w).unwrap();
    let bytes = w.into_vec();
    let mut back = Vec::new();
    let count = allocs_in(|| {
        let mut r = Reader::new(&bytes, ByteOrder::Big);
        back = Vec::<ValueSlot<Link>>::decode(&mut r).unwrap();
    });
    assert!(count <= n + chunks(n) + growth(n), "{count} allocations");
    let first = back[0].get().unwrap();
    assert!(ValueRef::ptr_eq(first.me.get().unwrap(), first));
}

/// `struct Step { Hop prev; Hop me; };`
/// `valuetype Hop { public long id; public Step step; };`: the slots in a
/// struct member, read as the generated code reads them (a scope, and a
/// walk that completes back edges once the owner exists).
struct Hop {
    id: i32,
    step: Step,
}

struct Step {
    prev: ValueSlot<Hop>,
    me: ValueSlot<Hop>,
}

impl ValueType for Hop {
    const REPO_ID: &'static str = "IDL:Test/Hop:1.0";
    const IDS: &'static [&'static str] = &["IDL:Test/Hop:1.0"];
    const CHUNKED: bool = false;
    fn write_state(&self, w: &mut Writer) -> Result<()> {
        self.id.encode(w)?;
        self.step.prev.encode(w)?;
        self.step.me.encode(w)
    }
    fn read_state(r: &mut Reader<'_>, _: &ValueInfo<'_>) -> Result<ValueRef<Self>> {
        let scope = r.open_value_scope();
        let v = (|| {
            let id = i32::decode(r)?;
            let step = Step {
                prev: ValueSlot::decode(r)?,
                me: ValueSlot::decode(r)?,
            };
            Ok(r.new_value(Hop { id, step }))
        })();
        r.close_value_scope(scope, v, |s: &Hop, w: &mut ValueWalk<'_>| {
            w.value(&s.step.prev);
            w.value(&s.step.me);
        })
    }
}

/// N hops, each pointing to the one before, and to itself if `cyclic`.
fn hops(n: usize, cyclic: bool) -> Vec<u8> {
    let mut out: Vec<ValueSlot<Hop>> = Vec::with_capacity(n);
    for i in 0..n {
        let prev = out.last().cloned().unwrap_or_default();
        let hop = ValueRef::new(Hop {
            id: i as i32,
            step: Step {
                prev,
                me: ValueSlot::null(),
            },
        });
        if cyclic {
            hop.step.me.set(hop.clone()).map_err(|_| ()).unwrap();
        }
        out.push(hop.into());
    }
    let mut w = Writer::new(ByteOrder::Big);
    out.encode(&mut w).unwrap();
    w.into_vec()
}

/// Slots in a struct member cost nothing per node while no back edge
/// closes there, and one completion per back edge when one does.
#[test]
fn slots_in_a_struct_member_allocate_for_back_edges_only() {
    let n = 1_000;
    for cyclic in [false, true] {
        let bytes = hops(n, cyclic);
        let mut back = Vec::new();
        let count = allocs_in(|| {
            let mut r = Reader::new(&bytes, ByteOrder::Big);
            back = Vec::<ValueSlot<Hop>>::decode(&mut r).unwrap();
        });
        let nodes = if cyclic { 2 * n } else { n };
        assert!(count <= nodes + growth(n), "{cyclic}: {count} allocations");
        let last = back[n - 1].get().unwrap();
        assert_eq!(last.id, n as i32 - 1);
        assert!(ValueRef::ptr_eq(
            last.step.prev.get().unwrap(),
            back[n - 2].get().unwrap()
        ));
        assert_eq!(last.step.me.get().is_some(), cyclic);
        if cyclic {
            assert!(ValueRef::ptr_eq(last.step.me.get().unwrap(), last));
        }
    }
}
