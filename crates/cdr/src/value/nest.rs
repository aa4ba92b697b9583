//! Cycles that close inside plain members of a value's state: a value
//! slot in a struct, a union's branch, a value box's content, an element
//! of a multi-dimensional array or of a sequence nested in another.
//!
//! Those members are plain Rust values, built whole and then moved into
//! the value that holds them, so no slot in them has a stable address
//! before the owner's `ValueRef` exists, and nothing can be told where to
//! write later. What the decoder knows instead is the order: the slots
//! of plain members are read one after another, and a walk of the
//! finished owner (generated, in the same order) meets them again. So
//! while a value's state is read, the reader counts the slots read for
//! its plain members ([`ReadValue::nested`]) and notes the ordinals of
//! those that closed a cycle; once the owner exists
//! ([`Reader::close_value_scope`]), one fixup per value pointed to walks
//! the owner and fills the slots with those ordinals.
//!
//! Nothing is allocated while no cycle closes that way: the count and
//! the notes live in the reader's value tables (the notes in a vector
//! kept for the whole message). A value pointed to by back edges from
//! one owner costs one allocation (the fixup), and one more when there
//! are several such edges (their ordinals).
//!
//! [`ReadValue::nested`]: super::ReadValue::nested

use alloc::vec::Vec;

/// The slots of plain members being counted (see the module doc): two
/// words, saved and restored around each value that opens a scope.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(feature = "std"), allow(dead_code))]
struct Scope {
    /// Slots of plain members read so far in this scope.
    count: u32,
    /// Where this scope's notes start in `Nested::found`, or `CLOSED`
    /// where no walk follows (a cycle through a plain member is refused).
    start: u32,
}

/// `Scope::start` outside a scope that walks its slots.
#[cfg_attr(not(feature = "std"), allow(dead_code))]
const CLOSED: u32 = u32::MAX;

/// What the reader keeps for cycles through plain members.
#[derive(Debug)]
#[cfg_attr(not(feature = "std"), allow(dead_code))]
pub(crate) struct Nested {
    scope: Scope,
    /// Ordinal of the slot and input index of the value it points to,
    /// innermost scope last.
    found: Vec<(u32, usize)>,
}

impl Default for Nested {
    fn default() -> Self {
        Self {
            scope: Scope {
                count: 0,
                start: CLOSED,
            },
            found: Vec::new(),
        }
    }
}

#[cfg(feature = "std")]
pub use typed::{ValueScope, ValueWalk};

#[cfg(feature = "std")]
mod typed {
    use crate::value::ValueRef;
    use alloc::boxed::Box;
    use alloc::vec::Vec;

    use super::{Scope, CLOSED};
    use crate::value::{AnyValue, Polymorphic, ReadValue, ValueSlot, ValueType};
    use crate::{CdrError, Reader, Result};

    /// The scope that was current before [`Reader::open_value_scope`] (or
    /// [`Reader::without_value_scope`]), given back to
    /// [`Reader::close_value_scope`].
    #[derive(Debug)]
    #[must_use = "give it back to `Reader::close_value_scope`"]
    pub struct ValueScope(Scope);

    impl<T: ?Sized> ReadValue<T> {
        /// The slot to store for a value read in a plain member of a
        /// value's state (a struct member, a union branch, a value box's
        /// content, an element of a nested sequence or array): a cycle is
        /// noted, and completed once the owner exists, when the owner
        /// opened a scope ([`Reader::open_value_scope`]); elsewhere it
        /// fails with [`CdrError::UnsupportedCycle`].
        #[inline]
        pub fn nested(self, r: &mut Reader<'_>) -> Result<ValueSlot<T>> {
            match self {
                ReadValue::Ready(v) => {
                    if let Some(st) = r.values.as_deref_mut() {
                        st.nested.scope.count = st.nested.scope.count.wrapping_add(1);
                    }
                    Ok(v.into())
                }
                ReadValue::Cycle(at) => {
                    r.note_cycle(at)?;
                    Ok(ValueSlot::null())
                }
            }
        }
    }

    impl Reader<'_> {
        /// Notes a slot of a plain member that points back to the value
        /// at input index `at`.
        #[cold]
        fn note_cycle(&mut self, at: usize) -> Result<()> {
            let n = &mut self.vstate().nested;
            if n.scope.start == CLOSED {
                return Err(CdrError::UnsupportedCycle);
            }
            n.found.push((n.scope.count, at));
            n.scope.count = n.scope.count.wrapping_add(1);
            Ok(())
        }

        /// Starts reading the state of a value whose plain members hold
        /// value slots (generated code): a cycle closing in them is
        /// completed by [`Reader::close_value_scope`].
        #[inline]
        pub fn open_value_scope(&mut self) -> ValueScope {
            self.set_scope(true)
        }

        /// Runs `read` (a state the generated code does not walk: a
        /// custom value's, one a factory reads) with cycles through plain
        /// members refused, as outside any value.
        pub fn without_value_scope<T>(
            &mut self,
            read: impl FnOnce(&mut Self) -> Result<T>,
        ) -> Result<T> {
            let scope = self.set_scope(false);
            let v = read(self);
            self.restore_scope(scope);
            v
        }

        #[inline]
        fn set_scope(&mut self, open: bool) -> ValueScope {
            let n = &mut self.vstate().nested;
            // The notes are at most one per four octets of input.
            let start = if open { n.found.len() as u32 } else { CLOSED };
            ValueScope(core::mem::replace(&mut n.scope, Scope { count: 0, start }))
        }

        /// Ends the scope; where its notes start.
        #[inline]
        fn restore_scope(&mut self, scope: ValueScope) -> usize {
            let n = &mut self.vstate().nested;
            let start = n.scope.start;
            n.scope = scope.0;
            start as usize
        }

        /// Ends the scope opened with [`Reader::open_value_scope`] for
        /// `owner` (the value built, or the error reading it), and has the
        /// reader complete the slots that closed a cycle once the values
        /// they point to are complete: `walk` visits the owner's slots of
        /// plain members in the order they were read.
        #[inline]
        pub fn close_value_scope<S: Send + Sync + 'static>(
            &mut self,
            scope: ValueScope,
            owner: Result<ValueRef<S>>,
            walk: fn(&S, &mut ValueWalk<'_>),
        ) -> Result<ValueRef<S>> {
            let n = &mut self.vstate().nested;
            let start = n.scope.start as usize;
            n.scope = scope.0;
            // `start` is `CLOSED` (past any note) only if the scope was
            // not opened here: nothing to do then.
            let noted = n.found.len() > start;
            match owner {
                Ok(owner) => {
                    if noted {
                        self.defer_walks(start, &owner, walk);
                    }
                    Ok(owner)
                }
                Err(e) => {
                    n.found.truncate(start);
                    Err(e)
                }
            }
        }

        /// One fixup per value pointed to by the notes from `start` on,
        /// which it takes.
        #[cold]
        #[inline(never)]
        fn defer_walks<S: Send + Sync + 'static>(
            &mut self,
            start: usize,
            owner: &ValueRef<S>,
            walk: fn(&S, &mut ValueWalk<'_>),
        ) {
            // The values pointed to are those still being read around
            // this one (at most one per nesting level): few passes.
            loop {
                let found = &mut self.vstate().nested.found;
                let Some(&(_, at)) = found.get(start) else {
                    break;
                };
                let mut ordinals = Ordinals::None;
                let mut keep = start;
                for i in start..found.len() {
                    let (k, a) = found[i];
                    if a == at {
                        ordinals.push(k);
                    } else {
                        found[keep] = found[i];
                        keep += 1;
                    }
                }
                found.truncate(keep);
                let owner = owner.clone();
                self.defer_value(
                    at,
                    Box::new(move |v| {
                        let mut w = ValueWalk {
                            next: 0,
                            want: ordinals.as_slice(),
                            value: v,
                            wrong_type: false,
                        };
                        walk(&owner, &mut w);
                        w.finish()
                    }),
                );
            }
        }
    }

    /// The ordinals of the slots one fixup fills, ascending: one without
    /// an allocation of its own.
    enum Ordinals {
        None,
        One(u32),
        Many(Vec<u32>),
    }

    impl Ordinals {
        fn push(&mut self, k: u32) {
            *self = match core::mem::replace(self, Ordinals::None) {
                Ordinals::None => Ordinals::One(k),
                Ordinals::One(j) => Ordinals::Many(alloc::vec![j, k]),
                Ordinals::Many(mut v) => {
                    v.push(k);
                    Ordinals::Many(v)
                }
            };
        }

        fn as_slice(&self) -> &[u32] {
            match self {
                Ordinals::None => &[],
                Ordinals::One(k) => core::slice::from_ref(k),
                Ordinals::Many(v) => v,
            }
        }
    }

    /// A walk of a value's slots of plain members, in the order they were
    /// read, filling those that closed a cycle (see
    /// [`Reader::close_value_scope`]). Generated code calls
    /// [`ValueWalk::value`] or [`ValueWalk::poly`] for each slot.
    pub struct ValueWalk<'a> {
        /// Ordinal of the next slot met.
        next: u32,
        /// Ordinals still to fill, ascending.
        want: &'a [u32],
        /// The value they point to, now complete.
        value: &'a AnyValue,
        /// The value is not of a slot's type.
        wrong_type: bool,
    }

    impl core::fmt::Debug for ValueWalk<'_> {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            f.debug_struct("ValueWalk")
                .field("next", &self.next)
                .field("want", &self.want)
                .finish_non_exhaustive()
        }
    }

    impl ValueWalk<'_> {
        /// Whether the slot met now is one to fill.
        #[inline]
        fn hit(&mut self) -> bool {
            let k = self.next;
            self.next = self.next.wrapping_add(1);
            match self.want.split_first() {
                Some((&w, rest)) if w == k => {
                    self.want = rest;
                    true
                }
                _ => false,
            }
        }

        fn fill<T: ?Sized>(
            &mut self,
            slot: &ValueSlot<T>,
            cast: impl FnOnce(AnyValue) -> core::result::Result<ValueRef<T>, AnyValue>,
        ) {
            match cast(self.value.clone()) {
                // Already filled only if the same slot were met twice.
                Ok(v) => {
                    let _ = slot.set(v);
                }
                Err(_) => self.wrong_type = true,
            }
        }

        /// Meets a slot of a concrete valuetype or value box.
        #[inline]
        pub fn value<T: ValueType>(&mut self, slot: &ValueSlot<T>) {
            if self.hit() {
                self.fill(slot, |v| v.downcast::<T>());
            }
        }

        /// Meets a slot of an abstract valuetype or `ValueBase`, whose
        /// values `p` casts.
        #[inline]
        pub fn poly<T: ?Sized>(&mut self, slot: &ValueSlot<T>, p: &Polymorphic<T>) {
            if self.hit() {
                self.fill(slot, p.cast);
            }
        }

        /// Whether every slot to fill was met: the walk may stop.
        #[inline]
        pub fn done(&self) -> bool {
            self.want.is_empty()
        }

        /// The outcome: a back edge to a value of another type than its
        /// slot's is `NoValueFactory` (as for a direct member).
        fn finish(self) -> Result<()> {
            if self.wrong_type {
                return Err(CdrError::NoValueFactory);
            }
            if !self.want.is_empty() {
                // The walk did not meet a slot the decoder counted: the
                // state was read by code that does not match the walk.
                return Err(CdrError::UnsupportedCycle);
            }
            Ok(())
        }
    }
}

#[cfg(all(test, feature = "std"))]
mod tests {
    //! The shapes the generated code reads, written by hand as it writes
    //! them: a graph whose edges are structs in a sequence
    //! (`struct Edge { long weight; Node target; }`), and a value whose
    //! slots stand in a sequence of sequences.

    use crate::value::ValueRef;
    use alloc::string::String;
    use alloc::vec::Vec;

    use super::ValueWalk;
    use crate::value::{read_value, ValueInfo, ValueSlot, ValueType};
    use crate::{ByteOrder, CdrError, Decode, Encode, Reader, Result, Writer};

    const NODE: &str = "IDL:t/Node:1.0";
    const GRID: &str = "IDL:t/Grid:1.0";

    #[derive(Debug)]
    struct Edge {
        weight: i32,
        target: ValueSlot<Node>,
    }

    impl Encode for Edge {
        fn encode(&self, w: &mut Writer) -> Result<()> {
            w.write_i32(self.weight);
            self.target.encode(w)
        }
    }

    impl<'de> Decode<'de> for Edge {
        fn decode(r: &mut Reader<'de>) -> Result<Self> {
            Ok(Edge {
                weight: r.read_i32()?,
                target: ValueSlot::decode(r)?,
            })
        }
    }

    #[derive(Debug)]
    struct Node {
        name: String,
        out: Vec<Edge>,
    }

    impl ValueType for Node {
        const REPO_ID: &'static str = NODE;
        const IDS: &'static [&'static str] = &[NODE];
        const CHUNKED: bool = false;
        fn write_state(&self, w: &mut Writer) -> Result<()> {
            self.name.encode(w)?;
            self.out.encode(w)
        }
        fn read_state(r: &mut Reader<'_>, _: &ValueInfo<'_>) -> Result<ValueRef<Self>> {
            let scope = r.open_value_scope();
            let v = (|| {
                let name = String::decode(r)?;
                let out = Vec::<Edge>::decode(r)?;
                Ok(r.new_value(Node { name, out }))
            })();
            r.close_value_scope(scope, v, |s: &Node, w: &mut ValueWalk<'_>| {
                for e in &s.out {
                    w.value(&e.target);
                }
            })
        }
    }

    /// Slots in a sequence of sequences, and a `Node` member (a value of
    /// another type a back edge may wrongly lead to).
    #[derive(Debug)]
    struct Grid {
        rows: Vec<Vec<ValueSlot<Grid>>>,
        node: ValueSlot<Node>,
    }

    impl ValueType for Grid {
        const REPO_ID: &'static str = GRID;
        const IDS: &'static [&'static str] = &[GRID];
        const CHUNKED: bool = false;
        fn write_state(&self, w: &mut Writer) -> Result<()> {
            self.rows.encode(w)?;
            self.node.encode(w)
        }
        fn read_state(r: &mut Reader<'_>, _: &ValueInfo<'_>) -> Result<ValueRef<Self>> {
            let scope = r.open_value_scope();
            let v = (|| {
                let rows = Vec::<Vec<ValueSlot<Grid>>>::decode(r)?;
                let mut node = read_value::<Node>(r)?;
                let v = r.new_value(Grid {
                    rows,
                    node: node.take_slot(),
                });
                node.fixup(r, &v, |s| &s.node);
                Ok(v)
            })();
            r.close_value_scope(scope, v, |s: &Grid, w: &mut ValueWalk<'_>| {
                for row in &s.rows {
                    for e in row {
                        w.value(e);
                    }
                }
            })
        }
    }

    /// Big-endian longs and strings.
    #[derive(Default)]
    struct B(Vec<u8>);

    impl B {
        fn long(&mut self, v: u32) -> &mut Self {
            while self.0.len() % 4 != 0 {
                self.0.push(0);
            }
            self.0.extend_from_slice(&v.to_be_bytes());
            self
        }
        /// An indirection to input index `to`.
        fn back_to(&mut self, to: usize) -> &mut Self {
            self.long(0xffff_ffff);
            let at = self.0.len();
            self.long((to as i64 - at as i64) as i32 as u32)
        }
        fn string(&mut self, s: &str) -> &mut Self {
            self.long(s.len() as u32 + 1);
            self.0.extend_from_slice(s.as_bytes());
            self.0.push(0);
            self
        }
        fn at(&self) -> usize {
            self.0.len()
        }
    }

    fn decode<T: ValueType>(bytes: &[u8]) -> Result<ValueRef<T>> {
        let mut r = Reader::new(bytes, ByteOrder::Big);
        let v = read_value::<T>(&mut r)?
            .ready()?
            .ok_or(CdrError::NoValueFactory)?;
        assert!(r.is_empty());
        Ok(v)
    }

    fn target(e: &Edge) -> &ValueRef<Node> {
        e.target.get().expect("a target")
    }

    /// a -> (1) b -> (2) a, a -> (3) a: both back edges in an `Edge`.
    fn graph_bytes() -> Vec<u8> {
        let mut b = B::default();
        b.long(0x7fff_ff02).string(NODE).string("a").long(2);
        assert_eq!(b.at(), 36);
        b.long(1);
        let b_at = b.at();
        assert_eq!(b_at, 40);
        b.long(0x7fff_ff02).back_to(4).string("b").long(1);
        b.long(2).back_to(0);
        b.long(3).back_to(0);
        // Hand-checked: the id at 4 (-44 from 48), a at 0 (-72 from 72,
        // -84 from 84).
        assert_eq!(
            &b.0[44..52],
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xd4]
        );
        assert_eq!(
            &b.0[68..76],
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xb8]
        );
        assert_eq!(
            &b.0[80..88],
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xac]
        );
        b.0
    }

    #[test]
    fn back_edges_in_structs_in_a_sequence_close_on_the_ancestor() {
        let bytes = graph_bytes();
        let a = decode::<Node>(&bytes).unwrap();
        assert_eq!((a.name.as_str(), a.out.len()), ("a", 2));
        let b = target(&a.out[0]);
        assert_eq!((b.name.as_str(), a.out[0].weight), ("b", 1));
        assert!(ValueRef::ptr_eq(target(&b.out[0]), &a), "b -> a");
        assert_eq!(b.out[0].weight, 2);
        assert!(ValueRef::ptr_eq(target(&a.out[1]), &a), "a -> a");
        assert_eq!(a.out[1].weight, 3);
        // The same bytes back from the graph.
        let mut w = Writer::new(ByteOrder::Big);
        crate::value::write_value(&mut w, Some(&a)).unwrap();
        assert_eq!(w.as_slice(), &bytes[..]);
    }

    #[test]
    fn several_back_edges_to_several_pending_values() {
        // a -> b; b's edges: a, b, null, a, b (five slots of one
        // sequence closing on two values still being read).
        let mut b = B::default();
        b.long(0x7fff_ff02).string(NODE).string("a").long(1);
        b.long(0);
        let b_at = b.at();
        b.long(0x7fff_ff02).back_to(4).string("b").long(5);
        b.long(1).back_to(0);
        b.long(2).back_to(b_at);
        b.long(3).long(0);
        b.long(4).back_to(0);
        b.long(5).back_to(b_at);
        let a = decode::<Node>(&b.0).unwrap();
        let nb = target(&a.out[0]);
        let t: Vec<Option<&ValueRef<Node>>> = nb.out.iter().map(|e| e.target.get()).collect();
        assert!(ValueRef::ptr_eq(t[0].unwrap(), &a));
        assert!(ValueRef::ptr_eq(t[1].unwrap(), nb));
        assert!(t[2].is_none());
        assert!(ValueRef::ptr_eq(t[3].unwrap(), &a));
        assert!(ValueRef::ptr_eq(t[4].unwrap(), nb));
    }

    /// g: rows [[null, g], [g]], node null.
    fn grid_bytes() -> Vec<u8> {
        let mut b = B::default();
        b.long(0x7fff_ff02).string(GRID).long(2);
        b.long(2).long(0).back_to(0);
        b.long(1).back_to(0);
        b.long(0);
        b.0
    }

    #[test]
    fn back_edges_in_a_sequence_of_sequences() {
        let bytes = grid_bytes();
        let g = decode::<Grid>(&bytes).unwrap();
        assert!(g.rows[0][0].is_null());
        assert!(ValueRef::ptr_eq(g.rows[0][1].get().unwrap(), &g));
        assert!(ValueRef::ptr_eq(g.rows[1][0].get().unwrap(), &g));
        let mut w = Writer::new(ByteOrder::Big);
        crate::value::write_value(&mut w, Some(&g)).unwrap();
        assert_eq!(w.as_slice(), &bytes[..]);
    }

    #[test]
    fn hostile_back_edges_are_errors() {
        // Into the middle of a struct: a's first edge's weight (36).
        let mut bytes = graph_bytes();
        bytes[84..88].copy_from_slice(&(36i32 - 84).to_be_bytes());
        assert!(matches!(
            decode::<Node>(&bytes),
            Err(CdrError::BadIndirection(_))
        ));
        // To a value of another type still being read: g's node n has an
        // edge back to g.
        let mut b = B::default();
        b.long(0x7fff_ff02).string(GRID).long(0);
        b.long(0x7fff_ff02).string(NODE).string("n").long(1);
        b.long(7).back_to(0);
        assert!(matches!(
            decode::<Grid>(&b.0),
            Err(CdrError::NoValueFactory)
        ));
        // Outside any value (an edge read alone) a back edge cannot be
        // pending; inside a state read without a walk it is refused.
        let bytes = graph_bytes();
        let mut r = Reader::new(&bytes, ByteOrder::Big);
        let a = r.read_value_start().unwrap();
        let crate::value::ValueStart::New(info) = a else {
            panic!("{a:?}")
        };
        let e = r.without_value_scope(|r| {
            let _ = String::decode(r)?;
            Vec::<Edge>::decode(r)
        });
        assert!(matches!(e, Err(CdrError::UnsupportedCycle)), "{e:?}");
        assert_eq!(info.pos, 0);
    }

    #[test]
    fn a_failed_state_drops_its_notes() {
        // Cut short after the first row, whose back edge was noted.
        let bytes = grid_bytes();
        let mut r = Reader::new(&bytes[..44], ByteOrder::Big);
        assert!(matches!(
            read_value::<Grid>(&mut r),
            Err(CdrError::Truncated { .. })
        ));
        // The scope is closed and what it noted is gone.
        let n = &r.values.as_ref().unwrap().nested;
        assert!(n.found.is_empty());
        assert_eq!(n.scope.start, super::CLOSED);
    }
}
