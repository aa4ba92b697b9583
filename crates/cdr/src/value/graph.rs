//! Typed values over the codec: the trait generated valuetypes and value
//! boxes implement, the member slot that lets a graph close cycles after
//! its nodes exist, and the process-wide registry of value factories.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use super::ValueRef;

use super::slot::ValueSlot;
use super::{AnyValue, ValueInfo, ValueStart};
use crate::{CdrError, Decode, Encode, Reader, Result, Writer};

/// A Rust type that is an IDL valuetype or value box (implemented by
/// generated code).
pub trait ValueType: core::any::Any + Send + Sync + Sized {
    /// The repository id of the type.
    const REPO_ID: &'static str;
    /// The ids a header carries, most derived first: the type's own id,
    /// followed by those of its truncatable bases.
    const IDS: &'static [&'static str];
    /// True when the state is chunked (truncatable or custom values).
    const CHUNKED: bool;
    /// True when the state holds object references (at any depth): it is
    /// read in a reader's value context (see
    /// [`Reader::set_value_context`]), which table-driven decoders then
    /// set; a constant, so values without references pay nothing.
    const NEEDS_CONTEXT: bool = false;
    /// How to find the value references a value of this type holds (its
    /// slots, at any depth): with it, the values a reader decodes share
    /// one arena per message, counted once for the whole graph, and a
    /// decoded graph with cycles is freed with its last outside reference
    /// (see [`Edges`]). Generated code provides it; a type without it
    /// (`None`) is decoded as a value of its own, counted on its own.
    ///
    /// [`Edges`]: crate::Edges
    const EDGES: Option<super::Edges<Self>> = None;
    /// Writes the state (base members first).
    fn write_state(&self, w: &mut Writer) -> Result<()>;
    /// Reads the state of a value whose header `info` was read, and
    /// builds the value with [`Reader::new_value`] (which makes it in the
    /// reader's arena when the type has [`ValueType::EDGES`]). Members that point back to a value still being
    /// read are completed through [`ReadValue::fixup`]; slots in plain
    /// members (structs, unions, nested sequences) decoded with
    /// [`Decode`] are completed through [`Reader::open_value_scope`] and
    /// [`Reader::close_value_scope`]. A state that decodes slots with
    /// [`Decode`] and does not walk them must be read inside
    /// [`Reader::without_value_scope`].
    fn read_state(r: &mut Reader<'_>, info: &ValueInfo<'_>) -> Result<ValueRef<Self>>;
}

/// Custom marshaling of a `custom` valuetype: the application writes and
/// reads the state (inside the chunks the codec manages).
pub trait CustomMarshal: Sized {
    /// Writes the state.
    fn marshal(&self, w: &mut Writer) -> Result<()>;
    /// Reads the state.
    fn unmarshal(r: &mut Reader<'_>) -> Result<Self>;
}

/// Makes values of a repository id the reader does not know itself
/// (a derived type, an `RMI:` id), registered with
/// [`register_value_factory`].
pub trait ValueFactory: Send + Sync {
    /// Reads the state of the value whose header is `info`.
    fn read_state(&self, r: &mut Reader<'_>, info: &ValueInfo<'_>) -> Result<AnyValue>;
}

type Registry = RwLock<HashMap<String, Arc<dyn ValueFactory>>>;

fn registry() -> &'static Registry {
    static R: OnceLock<Registry> = OnceLock::new();
    R.get_or_init(Default::default)
}

/// Registers `factory` for values whose most derived repository id is
/// `repo_id`, returning the one it replaces. Generated types need no
/// registration: a value of the expected type (or truncatable to it)
/// is read by the type itself.
pub fn register_value_factory(
    repo_id: &str,
    factory: Arc<dyn ValueFactory>,
) -> Option<Arc<dyn ValueFactory>> {
    registry()
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .insert(repo_id.to_owned(), factory)
}

/// Removes the factory registered for `repo_id`.
pub fn unregister_value_factory(repo_id: &str) -> Option<Arc<dyn ValueFactory>> {
    registry()
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .remove(repo_id)
}

/// The factory registered for `repo_id`.
pub fn lookup_value_factory(repo_id: &str) -> Option<Arc<dyn ValueFactory>> {
    registry()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(repo_id)
        .cloned()
}

/// Writes `v` (null, an indirection when already written, or header and
/// state).
#[inline]
pub fn write_value<T: ValueType>(w: &mut Writer, v: Option<&ValueRef<T>>) -> Result<()> {
    match v {
        None => {
            w.write_null_value();
            Ok(())
        }
        Some(v) => w.write_value(ValueRef::as_ptr(v).cast(), T::IDS, T::CHUNKED, |w| {
            v.write_state(w)
        }),
    }
}

/// A value read for a member: complete, or pointing back to a value whose
/// state is still being read.
#[derive(Debug)]
pub enum ReadValue<T: ?Sized> {
    /// Null or a value.
    Ready(Option<ValueRef<T>>),
    /// Refers to the value at this input index, completed later.
    Cycle(usize),
}

impl<T: ?Sized> ReadValue<T> {
    /// The member to store now (null for a cycle, filled by
    /// [`ReadValue::fixup`]).
    pub fn slot(&self) -> ValueSlot<T> {
        match self {
            ReadValue::Ready(v) => v.clone().into(),
            ReadValue::Cycle(_) => ValueSlot::null(),
        }
    }

    /// The member to store now, moved out (null for a cycle, filled by
    /// [`ReadValue::fixup`]): unlike [`ReadValue::slot`], no reference
    /// count changes hands.
    pub fn take_slot(&mut self) -> ValueSlot<T> {
        match self {
            ReadValue::Ready(v) => v.take().into(),
            ReadValue::Cycle(_) => ValueSlot::null(),
        }
    }

    /// The value, failing for a cycle (outside a value's members there is
    /// no slot to complete later).
    pub fn ready(self) -> Result<Option<ValueRef<T>>> {
        match self {
            ReadValue::Ready(v) => Ok(v),
            ReadValue::Cycle(_) => Err(CdrError::UnsupportedCycle),
        }
    }
}

impl<T: ValueType> ReadValue<T> {
    /// For a cycle, has the reader fill `field(owner)` once the value it
    /// points to is complete.
    #[inline]
    pub fn fixup<S: Send + Sync + 'static>(
        self,
        r: &mut Reader<'_>,
        owner: &ValueRef<S>,
        field: fn(&S) -> &ValueSlot<T>,
    ) {
        if let ReadValue::Cycle(at) = self {
            let owner = owner.clone();
            r.defer_value(
                at,
                Box::new(move |v| {
                    let v = v
                        .clone()
                        .downcast::<T>()
                        .map_err(|_| CdrError::NoValueFactory)?;
                    // Already filled only if the same index completed twice.
                    let _ = field(&owner).set(v);
                    Ok(())
                }),
            );
        }
    }
}

/// The values read for a `sequence` state member of a valuetype
/// ([`read_values`], or [`Polymorphic::read_values`] for a sequence of
/// an abstract valuetype or `ValueBase`): the members, and which of them
/// point back to a value whose state is still being read (a cycle
/// through the sequence, such as a child's `children` holding its
/// parent), completed through [`ReadValues::fixup`] (or
/// [`Polymorphic::fixup_values`]) once the owner exists.
///
/// [`Polymorphic::read_values`]: super::Polymorphic::read_values
/// [`Polymorphic::fixup_values`]: super::Polymorphic::fixup_values
pub struct ReadValues<T: ?Sized> {
    slots: Vec<ValueSlot<T>>,
    /// Index in `slots` and input index of the value pointed to.
    cycles: Vec<(usize, usize)>,
}

impl<T: ?Sized> core::fmt::Debug for ReadValues<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ReadValues")
            .field("slots", &self.slots)
            .field("cycles", &self.cycles)
            .finish()
    }
}

/// Reads a `sequence` of values of type `T` with at most `bound`
/// elements, for a valuetype's state member (see [`ReadValues`]).
pub fn read_values<T: ValueType>(r: &mut Reader<'_>, bound: u32) -> Result<ReadValues<T>> {
    ReadValues::read_with(r, bound, T::EDGES.is_some(), read_value::<T>)
}

/// Reads an array of `n` values of type `T` (no length on the wire), for
/// a valuetype's state member: as [`read_values`], an element may close a
/// cycle ([`ReadValues::take_array`], [`ReadValues::fixup`]).
pub fn read_value_array<T: ValueType>(r: &mut Reader<'_>, n: usize) -> Result<ReadValues<T>> {
    ReadValues::read_n(r, n, T::EDGES.is_some(), read_value::<T>)
}

impl<T: ?Sized> ReadValues<T> {
    /// Reads a sequence of at most `bound` elements, each with `read`;
    /// `arena` when they are decoded into the reader's arena (see
    /// [`Reader::reserve_values`]).
    pub(super) fn read_with<'de>(
        r: &mut Reader<'de>,
        bound: u32,
        arena: bool,
        read: impl FnMut(&mut Reader<'de>) -> Result<ReadValue<T>>,
    ) -> Result<Self> {
        let n = r.read_u32()?;
        if n > bound {
            return Err(CdrError::BoundExceeded {
                bound,
                len: u64::from(n),
            });
        }
        // Each element takes at least a long (a null, a tag, an indirection).
        let n = r.check_len(n, 4)?;
        Self::read_n(r, n, arena, read)
    }

    /// Reads `n` elements (no length on the wire), each with `read`.
    pub(super) fn read_n<'de>(
        r: &mut Reader<'de>,
        n: usize,
        arena: bool,
        mut read: impl FnMut(&mut Reader<'de>) -> Result<ReadValue<T>>,
    ) -> Result<Self> {
        r.reserve_values(n, arena);
        let mut slots = Vec::with_capacity(n);
        let mut cycles = Vec::new();
        for i in 0..n {
            match read(r)? {
                ReadValue::Ready(v) => slots.push(v.into()),
                ReadValue::Cycle(at) => {
                    cycles.push((i, at));
                    slots.push(ValueSlot::null());
                }
            }
        }
        Ok(ReadValues { slots, cycles })
    }

    /// The members to store now (those closing a cycle null until
    /// [`ReadValues::fixup`] fills them).
    pub fn take(&mut self) -> Vec<ValueSlot<T>> {
        core::mem::take(&mut self.slots)
    }

    /// The members of an array to store now ([`read_value_array`]), as
    /// [`ReadValues::take`]; fails if `N` is not the number read.
    pub fn take_array<const N: usize>(&mut self) -> Result<[ValueSlot<T>; N]> {
        let n = self.slots.len();
        core::mem::take(&mut self.slots)
            .try_into()
            .map_err(|_| CdrError::Truncated {
                needed: N,
                remaining: n,
            })
    }

    /// Has the reader fill the members that close a cycle, in
    /// `field(owner)`, once the values they point to are complete and
    /// turned into a `T` by `cast`.
    pub(super) fn defer<S: Send + Sync + 'static>(
        self,
        r: &mut Reader<'_>,
        owner: &ValueRef<S>,
        field: fn(&S) -> &[ValueSlot<T>],
        cast: fn(AnyValue) -> core::result::Result<ValueRef<T>, AnyValue>,
    ) where
        T: Send + Sync + 'static,
    {
        for (i, at) in self.cycles {
            let owner = owner.clone();
            r.defer_value(
                at,
                Box::new(move |v| {
                    let v = cast(v.clone()).map_err(|_| CdrError::NoValueFactory)?;
                    if let Some(slot) = field(&owner).get(i) {
                        let _ = slot.set(v);
                    }
                    Ok(())
                }),
            );
        }
    }
}

/// The cast of a concrete value type (for [`ReadValues::defer`]).
fn downcast<T: ValueType>(v: AnyValue) -> core::result::Result<ValueRef<T>, AnyValue> {
    v.downcast::<T>()
}

impl<T: ValueType> ReadValues<T> {
    /// Has the reader fill the members that close a cycle, in
    /// `field(owner)`, once the values they point to are complete.
    pub fn fixup<S: Send + Sync + 'static>(
        self,
        r: &mut Reader<'_>,
        owner: &ValueRef<S>,
        field: fn(&S) -> &[ValueSlot<T>],
    ) {
        self.defer(r, owner, field, downcast::<T>);
    }
}

/// Reads a value of type `T` (or of a type truncatable to `T`, or one a
/// registered factory turns into a `T`).
#[inline]
pub fn read_value<T: ValueType>(r: &mut Reader<'_>) -> Result<ReadValue<T>> {
    let info = match r.read_value_start()? {
        ValueStart::Null => return Ok(ReadValue::Ready(None)),
        ValueStart::Shared(v) => {
            return v
                .downcast::<T>()
                .map(|v| ReadValue::Ready(Some(v)))
                .map_err(|_| CdrError::NoValueFactory)
        }
        ValueStart::Cycle(at) => return Ok(ReadValue::Cycle(at)),
        ValueStart::New(info) => info,
    };
    let v = match info.repo_id() {
        None => T::read_state(r, &info)?,
        Some(id) if id == T::REPO_ID => T::read_state(r, &info)?,
        Some(id) => match lookup_value_factory(id) {
            Some(f) => r
                .without_value_scope(|r| f.read_state(r, &info))?
                .downcast::<T>()
                .map_err(|_| CdrError::NoValueFactory)?,
            None if info.may_read_as(T::REPO_ID) => T::read_state(r, &info)?,
            None => return Err(CdrError::NoValueFactory),
        },
    };
    r.finish_typed(&info, &v)?;
    Ok(ReadValue::Ready(Some(v)))
}

impl<T: ValueType> Encode for ValueSlot<T> {
    #[inline]
    fn encode(&self, w: &mut Writer) -> Result<()> {
        write_value(w, self.get())
    }
}

impl<'de, T: ValueType> Decode<'de> for ValueSlot<T> {
    /// A slot outside a value's direct members: an argument, or a plain
    /// member of a value's state (see [`ReadValue::nested`]).
    #[inline]
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        read_value::<T>(r)?.nested(r)
    }

    /// A sequence of values: the reader's position table is sized for
    /// them first (no growing it value by value).
    fn decode_vec(r: &mut Reader<'de>, n: usize) -> Result<Vec<Self>> {
        let cap = n.min(r.remaining() / core::mem::size_of::<Self>());
        r.reserve_values(n, T::EDGES.is_some());
        let mut v = Vec::with_capacity(cap);
        for _ in 0..n {
            v.push(Self::decode(r)?);
        }
        Ok(v)
    }
}
