//! Reading value headers, indirections and the ends of chunked values.

use alloc::boxed::Box;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::any::Any;
use core::ptr::NonNull;

#[cfg(feature = "std")]
use super::arena::Builder;
use super::slab::Slab;
use super::vref::{Block, STAKE};
use super::ValueRef;
#[cfg(feature = "std")]
use super::ValueType;
use super::{
    AnyValue, Fixup, RepoIds, ValueInfo, ValueStart, CHUNKED_FLAG, CODEBASE_FLAG, ID_LIST,
    INDIRECTION_TAG, NULL_TAG, SINGLE_ID, TYPE_INFO_MASK, VALUE_TAG_MIN,
};
use crate::{ByteOrder, CdrError, Reader, Result};

/// A value in the reader's position table.
#[derive(Clone)]
enum Entry {
    /// Its state is being decoded (an indirection to it closes a cycle).
    Pending,
    /// Decoded, made by the application (a factory, a custom value): the
    /// table holds a counted reference.
    Done(AnyValue),
    /// Decoded, made by [`Reader::new_value`]: the reader's stake (at this
    /// index of `ReadState::stakes`) keeps it.
    Staked(u32),
    /// Decoded into the reader's arena, which keeps it.
    #[cfg_attr(not(feature = "std"), allow(dead_code))]
    Arena(ArenaValue),
    /// Skipped with the truncated part of another value; its tag was
    /// read with this many chunked values open around it. An indirection
    /// to it goes back and decodes it then (see `Resume`).
    Skipped(u32),
}

/// The value [`Reader::new_value`] (or a stake) made last, until it is
/// recorded in the table (see `Reader::take_fresh`).
#[derive(Clone, Copy)]
enum Fresh {
    None,
    /// A staked value: its index in the stakes.
    Staked(u32),
    /// A value of the arena, by address alone: the table's entry is made
    /// from the caller's typed reference. (A wide pointer kept here was
    /// stored as two words and loaded back as one 16-octet move, which
    /// x86 cannot forward from the store buffer: a stall per value.)
    #[cfg_attr(not(feature = "std"), allow(dead_code))]
    Arena(usize),
}

/// The address of the value at `p` (a value's identity).
#[inline(always)]
fn address<T: ?Sized>(p: *const T) -> usize {
    p.cast::<()>() as usize
}

/// Where to go on once a skipped value, reached by an indirection, has
/// been decoded where it stands: the reader's place at the indirection.
#[derive(Clone, Copy)]
struct Resume {
    /// Input index of the skipped value's tag.
    value: usize,
    pos: usize,
    len: usize,
    level: u32,
    pending_end: Option<u32>,
}

/// A value of the reader's arena (see `arena.rs`).
#[derive(Clone, Copy)]
#[cfg_attr(not(feature = "std"), allow(dead_code))]
struct ArenaValue(NonNull<dyn Any + Send + Sync>);

// SAFETY: it stands for a reference to a `Send + Sync` value, kept by the
// reader's stake in the arena.
unsafe impl Send for ArenaValue {}
// SAFETY: as above.
unsafe impl Sync for ArenaValue {}

/// A value made by [`Reader::new_value`], kept by the reader's stake in
/// its count until the reader ends (see `vref.rs`): the position table
/// refers to it and indirections hand out references to it without an
/// atomic operation each.
struct Stake {
    value: NonNull<dyn Any + Send + Sync>,
    block: NonNull<Block>,
    /// References handed out of the stake so far.
    handed: usize,
}

// SAFETY: a stake stands for counted references to a `Send + Sync` value
// (`ValueRef<dyn Any + Send + Sync>` is `Send` and `Sync`).
unsafe impl Send for Stake {}
// SAFETY: as above.
unsafe impl Sync for Stake {}

impl Stake {
    /// A reference handed out of the stake.
    fn hand_out(&mut self) -> AnyValue {
        self.handed += 1;
        // SAFETY: the stake keeps the value; the reference is counted in
        // it (`handed`), given back when the reader ends.
        unsafe { ValueRef::from_parts(self.value, self.block) }
    }
}

/// The stakes of a reader, given back (latest first) when it ends, the
/// chunks it makes values of their own in (see `slab.rs`), and its arena
/// (see `arena.rs`), sealed last.
#[derive(Default)]
struct Stakes {
    list: Vec<Stake>,
    slab: Slab,
    #[cfg(feature = "std")]
    arena: Option<Builder>,
}

impl Stakes {
    /// A reference to `a`, a value of the arena, handed out.
    #[inline]
    fn arena_hand_out(&mut self, a: ArenaValue) -> AnyValue {
        #[cfg(feature = "std")]
        if let Some(arena) = &mut self.arena {
            return arena.hand_out(a.0);
        }
        let _ = a;
        unreachable!("an arena value without an arena")
    }
}

impl Drop for Stakes {
    fn drop(&mut self) {
        // Latest first, as the position table (see `Values`): a value
        // freed here holds only values made before it, still staked.
        for s in self.list.iter().rev() {
            // SAFETY: the stake's references, less those handed out, are
            // the reader's; none is used after.
            unsafe { Block::release(s.block, STAKE - s.handed) }
        }
        #[cfg(feature = "std")]
        if let Some(arena) = self.arena.take() {
            arena.seal();
        }
    }
}

/// What a reader remembers of the values it has read.
pub(crate) struct ReadState<'a> {
    /// The input's whole length (the reader's is narrowed to the chunk).
    pub(crate) real_len: usize,
    /// Chunked values open (the nesting level of the innermost).
    pub(crate) level: u32,
    /// An end tag that also closed enclosing values, down to this level.
    pub(crate) pending_end: Option<u32>,
    /// Input index of each value's tag, in increasing order: searched
    /// apart from the entries, so that a lookup touches a dense array.
    keys: Vec<usize>,
    /// The values, in the order of `keys`.
    values: Values,
    /// The values the reader made and keeps (declared after `values`,
    /// so that it is dropped after the table's counted values).
    stakes: Stakes,
    /// The stake of the value [`Reader::new_value`] made last, until
    /// [`Reader::finish_value`] records it.
    fresh: Fresh,
    /// Repository ids and codebase URLs by input index of their length.
    strings: Vec<(usize, &'a str)>,
    /// Repository id lists by input index of their count.
    lists: Vec<(usize, Arc<[&'a str]>)>,
    /// Fixups waiting for the value at an index to be complete.
    fixups: Vec<(usize, Fixup)>,
    /// Skipped values being decoded after all, innermost last.
    resume: Vec<Resume>,
    /// Cycles closing inside plain members (see `nest`).
    #[cfg_attr(not(feature = "std"), allow(dead_code))]
    pub(crate) nested: super::nest::Nested,
    /// What value states holding object references bind them to (see
    /// `context.rs`).
    pub(crate) context: Option<super::ValueContext>,
}

impl<'a> ReadState<'a> {
    fn new(real_len: usize) -> Self {
        Self {
            real_len,
            level: 0,
            pending_end: None,
            keys: Vec::new(),
            values: Values::default(),
            stakes: Stakes::default(),
            fresh: Fresh::None,
            strings: Vec::new(),
            lists: Vec::new(),
            fixups: Vec::new(),
            resume: Vec::new(),
            nested: super::nest::Nested::default(),
            context: None,
        }
    }

    /// A reference to the decoded value at index `i` of the table, handed
    /// out (an indirection to it), or `None` if it is not decoded yet.
    #[inline]
    fn shared(&mut self, i: usize) -> Option<AnyValue> {
        match &self.values[i] {
            Entry::Done(v) => Some(v.clone()),
            Entry::Staked(k) => Some(self.stakes.list[*k as usize].hand_out()),
            Entry::Arena(a) => Some(self.stakes.arena_hand_out(*a)),
            Entry::Pending | Entry::Skipped(_) => None,
        }
    }

    /// A copy for a cloned reader: the same tables, no fixups (those
    /// belong to the decoder that registered them), and counted
    /// references in place of the stakes (the original gives those back
    /// when it ends, which may be first).
    pub(crate) fn clone_for_reader(&self) -> Box<Self> {
        let values = self
            .values
            .iter()
            .map(|e| match e {
                Entry::Staked(k) => {
                    let s = &self.stakes.list[*k as usize];
                    // SAFETY: the stake keeps the value while `self` lives;
                    // the clone's count is its own.
                    let v = core::mem::ManuallyDrop::new(unsafe {
                        ValueRef::from_parts(s.value, s.block)
                    });
                    Entry::Done((*v).clone())
                }
                #[cfg(feature = "std")]
                Entry::Arena(a) => match &self.stakes.arena {
                    Some(arena) => Entry::Done(arena.counted(a.0)),
                    None => unreachable!("an arena value without an arena"),
                },
                e => e.clone(),
            })
            .collect();
        Box::new(Self {
            real_len: self.real_len,
            level: self.level,
            pending_end: self.pending_end,
            keys: self.keys.clone(),
            values: Values(values),
            stakes: Stakes::default(),
            fresh: Fresh::None,
            strings: self.strings.clone(),
            lists: self.lists.clone(),
            fixups: Vec::new(),
            resume: self.resume.clone(),
            nested: super::nest::Nested::default(),
            context: self.context.clone(),
        })
    }
}

/// The values of the position table, in the order of its keys: a vector
/// that releases them latest first. An indirection leads back, so a
/// value holds only values read before it (a cycle aside): released from
/// the end, the table lets go of each value after everything read later,
/// and where it holds the last references (a decode that failed part
/// way) each value is freed on its own. From the start, the last value's
/// release would free the values before it one inside the other,
/// recursing once per value of a chain: a long one overflows the stack.
/// (A type of its own, without the reader's lifetime, so that the
/// reader's drop does not need its input alive.)
#[derive(Clone, Default)]
struct Values(Vec<Entry>);

impl Drop for Values {
    fn drop(&mut self) {
        // The vector then drops its entries first to last.
        self.0.reverse();
    }
}

impl core::ops::Deref for Values {
    type Target = Vec<Entry>;
    fn deref(&self) -> &Vec<Entry> {
        &self.0
    }
}

impl core::ops::DerefMut for Values {
    fn deref_mut(&mut self) -> &mut Vec<Entry> {
        &mut self.0
    }
}

/// The index an indirection at `offset_at` with `offset` leads to, if it
/// leads back before `before` (which is not past `offset_at`).
#[inline(always)]
fn target(offset_at: usize, offset: i32, before: usize) -> Result<usize> {
    debug_assert!(before <= offset_at);
    let t = offset_at as i64 + i64::from(offset);
    // One comparison: a negative index is a huge one as `u64`, and an
    // index before `before` needs a negative offset.
    if t as u64 >= before as u64 {
        return Err(CdrError::BadIndirection(offset));
    }
    Ok(t as usize)
}

/// Appends `(at, v)` to a table sorted by index, unless `at` is not past
/// its last entry: a skipped value decoded after all is read a second
/// time, and what its header holds was recorded the first time.
fn record<T>(table: &mut Vec<(usize, T)>, at: usize, v: T) {
    if !matches!(table.last(), Some((p, _)) if *p >= at) {
        table.push((at, v));
    }
}

fn find<T>(table: &[(usize, T)], at: usize, offset: i32) -> Result<&T> {
    table
        .binary_search_by_key(&at, |(p, _)| *p)
        .map(|i| &table[i].1)
        .map_err(|_| CdrError::BadIndirection(offset))
}

/// The index in `keys` (sorted) of `at`, searched from the end in
/// doubling steps and then by bisection: a back edge most often leads
/// to a value read shortly before (the enclosing one, the previous node
/// of a list), found in a step or two, and a far one costs twice a
/// plain bisection at worst.
#[inline]
fn find_key(keys: &[usize], at: usize) -> Option<usize> {
    let n = keys.len();
    let mut hi = n;
    let mut step = 1;
    while step <= n {
        let i = n - step;
        if keys[i] <= at {
            if keys[i] == at {
                return Some(i);
            }
            return keys[i + 1..hi].binary_search(&at).ok().map(|j| i + 1 + j);
        }
        hi = i;
        step *= 2;
    }
    keys[..hi].binary_search(&at).ok()
}

impl<'a> Reader<'a> {
    /// An aligned long of the value header: read in place when the input
    /// holds it (the common case), through the general path otherwise
    /// (which moves on to the next chunk or reports the truncation).
    #[inline(always)]
    fn read_long(&mut self) -> Result<u32> {
        let start = self.pos + (self.position().wrapping_neg() & 3);
        self.read_long_from(start)
    }

    /// The long right after one [`Reader::read_long`] read (an
    /// indirection's offset after its tag): aligned already, so read in
    /// place without working out the padding.
    #[inline(always)]
    fn read_next_long(&mut self) -> Result<u32> {
        self.read_long_from(self.pos)
    }

    /// The long at `start` (aligned), read in place when the input holds
    /// it, through the general path otherwise.
    #[inline(always)]
    fn read_long_from(&mut self, start: usize) -> Result<u32> {
        if start + 4 > self.buf.len() {
            return self.read_u32();
        }
        let b = self.buf.slice(start, start + 4);
        self.pos = start + 4;
        let l = u32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
        Ok(if self.order() == ByteOrder::NATIVE {
            l
        } else {
            l.swap_bytes()
        })
    }

    #[inline]
    pub(super) fn vstate(&mut self) -> &mut ReadState<'a> {
        if self.values.is_none() {
            self.new_vstate();
        }
        match self.values.as_deref_mut() {
            Some(v) => v,
            None => unreachable!("made above"),
        }
    }

    #[cold]
    #[inline(never)]
    pub(super) fn new_vstate(&mut self) {
        self.values = Some(Box::new(ReadState::new(self.buf.len())));
    }

    /// Makes room in the position table for `n` more values, as many as
    /// a sequence of `n` values about to be read may start (at most one
    /// each, nested values aside): one allocation per table instead of
    /// one per doubling. Never more than the rest of the input could
    /// hold, at a long per value.
    /// `arena` when the values are of a type with [`ValueType::EDGES`],
    /// made in the arena: its record grows, not the list of stakes (a
    /// stake list reserved for arena values was a 32 KB allocation per
    /// 1,000-value message, never used).
    #[cfg(feature = "std")]
    pub(crate) fn reserve_values(&mut self, n: usize, arena: bool) {
        let fits = self.remaining() / 4;
        let st = self.vstate();
        let n = n.min(fits);
        st.keys.reserve(n);
        st.values.reserve(n);
        if arena {
            st.stakes.arena.get_or_insert_with(Builder::new).reserve(n);
        } else {
            st.stakes.list.reserve(n);
        }
    }

    /// Reads what stands where a value is expected: null, an indirection
    /// to a value read before, or a new value's header (tag, codebase URL
    /// skipped, repository ids). For a new value, decode its state next
    /// and then call [`Reader::finish_value`].
    #[inline]
    pub fn read_value_start(&mut self) -> Result<ValueStart<'a>> {
        if self.in_chunked_value() {
            return self.read_value_start_chunked();
        }
        // Outside chunked values (the common case) inline: a null, an
        // indirection, or a new value's header.
        let tag = self.read_long()?;
        let tag_at = self.pos - 4;
        match tag {
            NULL_TAG => Ok(ValueStart::Null),
            INDIRECTION_TAG => {
                let offset_at = self.pos;
                let offset = self.read_next_long()? as i32;
                self.indirection(target(offset_at, offset, tag_at)?, offset)
            }
            _ => self.read_header(tag, tag_at, false),
        }
    }

    /// What the indirection to input index `at` stands for.
    #[inline]
    fn indirection(&mut self, at: usize, offset: i32) -> Result<ValueStart<'a>> {
        let st = self.vstate();
        let i = find_key(&st.keys, at).ok_or(CdrError::BadIndirection(offset))?;
        if let Some(v) = st.shared(i) {
            return Ok(ValueStart::Shared(v));
        }
        match &st.values[i] {
            Entry::Skipped(level) => {
                let level = *level;
                self.reopen(at, level)
            }
            // Pending (decoded ones were handed out above).
            _ => Ok(ValueStart::Cycle(at)),
        }
    }

    /// A new value's header after its tag at input index `tag_at`
    /// (inline: 20 instructions a node less on a graph's decode).
    #[inline]
    fn read_header(&mut self, tag: u32, tag_at: usize, in_chunk: bool) -> Result<ValueStart<'a>> {
        if !(VALUE_TAG_MIN..=0x7fff_ffff).contains(&tag) {
            return Err(CdrError::BadValueTag(tag));
        }
        let level = self.values.as_ref().map_or(0, |v| v.level);
        let chunked = tag & CHUNKED_FLAG != 0;
        if in_chunk || (level > 0 && !chunked) {
            // Values nested in a chunked value are chunked, and
            // start outside the enclosing value's chunks.
            return Err(CdrError::BadChunk);
        }
        if tag & CODEBASE_FLAG != 0 {
            self.read_header_string()?;
        }
        let ids = match tag & TYPE_INFO_MASK {
            0 => RepoIds::None,
            SINGLE_ID => RepoIds::One(self.read_header_string()?),
            ID_LIST => RepoIds::List(self.read_id_list()?),
            _ => return Err(CdrError::BadValueTag(tag)),
        };
        self.enter()?;
        let pos = self.pos;
        let st = self.vstate();
        match st.keys.last() {
            Some(&p) if p >= tag_at => {
                // Read a second time (see `reopen`): recorded when it was
                // skipped.
                if let Ok(i) = st.keys.binary_search(&tag_at) {
                    if let Some(v) = chunked.then(|| st.shared(i)).flatten() {
                        // Decoded since, through an indirection: the same
                        // value again, its bytes skipped.
                        st.level += 1;
                        self.buf.set_len(pos);
                        self.skip_to_end_tag()?;
                        self.leave();
                        return Ok(ValueStart::Shared(v));
                    }
                    st.values[i] = Entry::Pending;
                }
            }
            _ => {
                st.keys.push(tag_at);
                st.values.push(Entry::Pending);
            }
        }
        if chunked {
            st.level += 1;
            // The first read of the state fetches the first chunk.
            self.buf.set_len(pos);
        }
        Ok(ValueStart::New(ValueInfo {
            pos: tag_at,
            ids,
            chunked,
        }))
    }

    /// [`Reader::read_value_start`] inside a chunked value's state.
    fn read_value_start_chunked(&mut self) -> Result<ValueStart<'a>> {
        let level = self.vstate().level;
        let tag_at;
        let tag;
        let mut in_chunk = false;
        if level > 0 && self.remaining() >= 4 + (self.position().wrapping_neg() & 3) {
            // Null and indirections are data of the enclosing chunk.
            self.align(4)?;
            tag_at = self.pos;
            tag = self.read_u32()?;
            in_chunk = true;
        } else if level > 0 {
            // The chunk is used up (what is left is padding).
            self.pos = self.buf.len();
            let long = self.read_outside_long()?;
            if long != NULL_TAG && long < VALUE_TAG_MIN {
                // A new chunk whose data is a null or an indirection.
                self.enter_chunk(long)?;
                self.align(4)?;
                tag_at = self.pos;
                tag = self.read_u32()?;
                in_chunk = true;
            } else {
                tag_at = self.pos - 4;
                tag = long;
            }
        } else {
            tag = self.read_long()?;
            tag_at = self.pos - 4;
        }
        let between_chunks = level > 0 && !in_chunk;
        match tag {
            NULL_TAG => {
                if between_chunks {
                    self.buf.set_len(self.pos);
                }
                Ok(ValueStart::Null)
            }
            INDIRECTION_TAG => {
                let offset_at = self.pos;
                let offset = self.read_long()? as i32;
                if between_chunks {
                    self.buf.set_len(self.pos);
                }
                self.indirection(target(offset_at, offset, tag_at)?, offset)
            }
            _ => self.read_header(tag, tag_at, in_chunk),
        }
    }

    /// A repository id or codebase URL: a string, or an indirection to
    /// one read before in this stream.
    #[inline(always)]
    fn read_header_string(&mut self) -> Result<&'a str> {
        let len = self.read_long()?;
        let at = self.pos - 4;
        if len == INDIRECTION_TAG {
            let offset_at = self.pos;
            let offset = self.read_next_long()? as i32;
            let t = target(offset_at, offset, at)?;
            let strings = &self.vstate().strings;
            // Mostly the one id of a graph's values: no search.
            if let [(p, s)] = strings.as_slice() {
                if *p == t {
                    return Ok(s);
                }
            }
            return find(strings, t, offset).copied();
        }
        self.read_new_header_string(at)
    }

    /// A repository id or codebase URL not read before, whose length is
    /// at input index `at`.
    fn read_new_header_string(&mut self, at: usize) -> Result<&'a str> {
        self.pos = at;
        let s =
            core::str::from_utf8(self.read_string_bytes()?).map_err(|_| CdrError::InvalidText)?;
        record(&mut self.vstate().strings, at, s);
        Ok(s)
    }

    /// A list of repository ids (or an indirection to one).
    fn read_id_list(&mut self) -> Result<Arc<[&'a str]>> {
        self.align(4)?;
        let at = self.pos;
        let count = self.read_u32()?;
        if count == INDIRECTION_TAG {
            let offset_at = self.pos;
            let offset = self.read_i32()?;
            let t = target(offset_at, offset, at)?;
            return find(&self.vstate().lists, t, offset).cloned();
        }
        // Each id takes at least a length and a NUL (or an indirection).
        let n = self.check_len(count, 5)?;
        if n == 0 {
            return Err(CdrError::BadValueTag(VALUE_TAG_MIN | ID_LIST));
        }
        let mut ids = Vec::with_capacity(n);
        for _ in 0..n {
            ids.push(self.read_header_string()?);
        }
        let ids: Arc<[&'a str]> = ids.into();
        record(&mut self.vstate().lists, at, ids.clone());
        Ok(ids)
    }

    /// Ends the value `info` (from [`Reader::read_value_start`]) once its
    /// state is decoded, and records `value` as what later indirections
    /// to it stand for.
    ///
    /// For a chunked value, whatever the decoder left unread (the state
    /// of a derived type that was truncated to a base, and values nested
    /// in it) is skipped up to the value's end tag. Fixups registered for
    /// this value ([`Reader::defer_value`]) run now.
    #[inline]
    pub fn finish_value(&mut self, info: &ValueInfo<'a>, value: AnyValue) -> Result<()> {
        let entry = match self.take_fresh(NonNull::from(&*value)) {
            Some(e) => e,
            None => Entry::Done(value),
        };
        self.finish_entry(info, entry)
    }

    /// [`Reader::finish_value`] for a value of a known type, which the
    /// caller keeps: made by [`Reader::new_value`] (the common case), it
    /// is recorded without a reference count changing.
    #[inline]
    #[cfg_attr(not(feature = "std"), allow(dead_code))]
    pub(crate) fn finish_typed<T: Any + Send + Sync>(
        &mut self,
        info: &ValueInfo<'a>,
        value: &ValueRef<T>,
    ) -> Result<()> {
        let any: &(dyn Any + Send + Sync) = &**value;
        self.finish_kept(info, NonNull::from(any), || {
            ValueRef::into_any(value.clone())
        })
    }

    /// [`Reader::finish_value`] for a type-erased value the caller keeps.
    #[inline]
    #[cfg_attr(not(feature = "std"), allow(dead_code))]
    pub(crate) fn finish_shared(&mut self, info: &ValueInfo<'a>, value: &AnyValue) -> Result<()> {
        self.finish_kept(info, NonNull::from(&**value), || value.clone())
    }

    /// Records the value at `value`, which the caller keeps: its stake
    /// or arena entry if the reader made it, else a counted reference
    /// (`counted`).
    #[inline]
    fn finish_kept(
        &mut self,
        info: &ValueInfo<'a>,
        value: NonNull<dyn Any + Send + Sync>,
        counted: impl FnOnce() -> AnyValue,
    ) -> Result<()> {
        let entry = match self.take_fresh(value) {
            Some(e) => e,
            None => Entry::Done(counted()),
        };
        self.finish_entry(info, entry)
    }

    /// [`Reader::finish_value`] for a value the caller does not keep: it
    /// is moved into the reader, which hands out references to it for
    /// later indirections (as a value made by [`Reader::new_value`]).
    pub fn finish_value_as<T: Any + Send + Sync>(
        &mut self,
        info: &ValueInfo<'a>,
        value: T,
    ) -> Result<()> {
        // The stake alone keeps it: no reference is counted for the caller.
        let (at, _) = ValueRef::forget(self.stake(value, STAKE));
        let e = self.take_fresh(at);
        self.finish_entry(info, e.unwrap_or(Entry::Pending))
    }

    /// Makes a value read from this reader's input (what
    /// [`ValueType::read_state`](crate::ValueType::read_state) returns):
    /// the reader keeps it for later indirections without an atomic
    /// operation per reference it hands out, until it ends. A value of a
    /// type with [`ValueType::EDGES`] is made in the message's arena,
    /// counted with the other values there (see
    /// [`Edges`](crate::Edges)); another one is counted on its own.
    #[cfg(feature = "std")]
    #[inline]
    pub fn new_value<T: ValueType>(&mut self, value: T) -> ValueRef<T> {
        if T::EDGES.is_none() {
            return self.stake(value, 1 + STAKE);
        }
        let st = self.vstate();
        let v = st.stakes.arena.get_or_insert_with(Builder::new).make(value);
        st.fresh = Fresh::Arena(address(ValueRef::as_ptr(&v)));
        v
    }

    /// `value` in a block whose count starts at `count`, the reader's
    /// stake included, which it records.
    #[inline]
    fn stake<T: Any + Send + Sync>(&mut self, value: T, count: usize) -> ValueRef<T> {
        let st = self.vstate();
        let v = st.stakes.slab.make(value, count);
        st.stakes.list.push(Stake {
            value: NonNull::from(&*v as &(dyn Any + Send + Sync)),
            block: ValueRef::block(&v),
            handed: 0,
        });
        st.fresh = Fresh::Staked(st.stakes.list.len() as u32 - 1);
        v
    }

    /// The table's entry for `value` if it is the value made last and
    /// not yet recorded (a stake is recorded once: the table's entries and
    /// the stakes stay one to one).
    #[inline]
    fn take_fresh(&mut self, value: NonNull<dyn Any + Send + Sync>) -> Option<Entry> {
        let st = self.vstate();
        let at = address(value.as_ptr());
        let entry = match st.fresh {
            Fresh::Staked(k) if address(st.stakes.list[k as usize].value.as_ptr()) == at => {
                Entry::Staked(k)
            }
            Fresh::Arena(a) if a == at => Entry::Arena(ArenaValue(value)),
            _ => return None,
        };
        st.fresh = Fresh::None;
        Some(entry)
    }

    /// Ends the value `info`, recording `entry` for it, and runs the
    /// fixups waiting for it.
    #[inline]
    fn finish_entry(&mut self, info: &ValueInfo<'a>, entry: Entry) -> Result<()> {
        let i = self.close_value(info, entry)?;
        let st = self.vstate();
        if !st.fixups.is_empty() && st.fixups.iter().any(|(at, _)| *at == info.pos) {
            let Some(value) = i.and_then(|i| st.shared(i)) else {
                return Ok(());
            };
            // Taken out in place (no new vectors): the order the fixups
            // run in does not matter, each fills a member of its own.
            let mut k = 0;
            while let Some((at, _)) = self.vstate().fixups.get(k) {
                if *at == info.pos {
                    let (_, fixup) = self.vstate().fixups.swap_remove(k);
                    fixup(&value)?;
                } else {
                    k += 1;
                }
            }
        }
        Ok(())
    }

    /// Registers `fixup` to run with the value at index `at` (a
    /// [`ValueStart::Cycle`]) once its state is complete.
    pub fn defer_value(&mut self, at: usize, fixup: Fixup) {
        self.vstate().fixups.push((at, fixup));
    }

    /// Closes the value `info` and stores `entry` for it, returning its
    /// index in the table.
    #[inline]
    fn close_value(&mut self, info: &ValueInfo<'a>, entry: Entry) -> Result<Option<usize>> {
        if info.chunked {
            self.skip_to_end_tag()?;
        }
        self.leave();
        let st = self.vstate();
        // Usually the last value read (its nested values are done): no
        // search then.
        let i = match st.keys.last() {
            Some(&p) if p == info.pos => Some(st.keys.len() - 1),
            _ => find_key(&st.keys, info.pos),
        };
        if let Some(i) = i {
            st.values[i] = entry;
        }
        if st.resume.last().is_some_and(|r| r.value == info.pos) {
            // A skipped value decoded after all: back to the indirection.
            let r = st.resume.pop().expect("checked");
            st.level = r.level;
            st.pending_end = r.pending_end;
            self.pos = r.pos;
            self.buf.set_len(r.len);
        }
        Ok(i)
    }

    /// An indirection led to the value at `at`, skipped with the
    /// truncated part of an enclosing value (the sender did not know the
    /// receiver would truncate): goes back and reads its header there,
    /// as chunk level `level` saw it. Its state is decoded as any new
    /// value's; [`Reader::finish_value`] then returns here.
    fn reopen(&mut self, at: usize, level: u32) -> Result<ValueStart<'a>> {
        let (pos, len) = (self.pos, self.buf.len());
        let st = self.vstate();
        st.resume.push(Resume {
            value: at,
            pos,
            len,
            level: st.level,
            pending_end: st.pending_end,
        });
        st.level = level;
        st.pending_end = None;
        // The tag stands between chunks: the input ends there, so that
        // the tag is read as one.
        self.pos = at;
        self.buf.set_len(at);
        match self.read_value_start()? {
            start @ ValueStart::New(_) => Ok(start),
            _ => Err(CdrError::BadChunk),
        }
    }

    /// Skips the rest of a chunked value's chunks (and values nested in
    /// them) and reads its end tag.
    fn skip_to_end_tag(&mut self) -> Result<()> {
        let level = self.vstate().level;
        loop {
            let st = self.vstate();
            if let Some(m) = st.pending_end {
                // An inner value's end tag closed this one too.
                if m == level {
                    st.pending_end = None;
                }
                break;
            }
            self.pos = self.buf.len();
            let long = self.read_outside_long()?;
            match long as i32 {
                end if end < 0 => {
                    let m = end.unsigned_abs();
                    if m > level {
                        return Err(CdrError::BadEndTag(end));
                    }
                    if m < level {
                        self.vstate().pending_end = Some(m);
                    }
                    break;
                }
                0 => return Err(CdrError::BadChunk),
                len if (len as u32) < VALUE_TAG_MIN => self.enter_chunk(len as u32)?,
                _ => {
                    // A value nested in the part being skipped.
                    self.pos -= 4;
                    self.buf.set_len(self.pos);
                    match self.read_value_start()? {
                        ValueStart::New(inner) => {
                            self.close_value(&inner, Entry::Skipped(level))?;
                        }
                        _ => return Err(CdrError::BadChunk),
                    }
                }
            }
        }
        let st = self.vstate();
        st.level -= 1;
        let end = if st.level > 0 { self.pos } else { st.real_len };
        // The enclosing chunked value goes on in a chunk of its own.
        self.buf.set_len(end);
        Ok(())
    }
}
