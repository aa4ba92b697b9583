//! Valuetypes (CORBA 3.x Part 2, "Value Types" in the CDR chapter):
//! value headers, null values, indirections to values and repository ids
//! already in the stream, and the chunked encoding that truncatable and
//! custom values use.
//!
//! The codec is type-agnostic: generated code writes a value's state
//! between [`Writer::write_value`]'s header and end, and reads it between
//! [`Reader::read_value_start`] and [`Reader::finish_value`]. The
//! bookkeeping (which values and ids were written where, the open chunk,
//! the nesting level) lives in a box that the first value allocates, so
//! messages without values carry one null pointer and nothing else.
//!
//! [`Writer::write_value`]: crate::Writer::write_value

#[cfg(feature = "std")]
mod arena;
mod chunk;
mod context;
#[cfg(feature = "std")]
mod graph;
mod nest;
#[cfg(feature = "std")]
mod poly;
mod read;
mod slab;
#[cfg(feature = "std")]
mod slot;
mod vref;
mod write;

#[cfg(feature = "std")]
pub use arena::{Edges, ValueEdges};
#[cfg(feature = "std")]
pub use graph::{
    lookup_value_factory, read_value, read_value_array, read_values, register_value_factory,
    unregister_value_factory, write_value, CustomMarshal, ReadValue, ReadValues, ValueFactory,
    ValueType,
};
#[cfg(feature = "std")]
pub use nest::{ValueScope, ValueWalk};
#[cfg(feature = "std")]
pub use poly::{write_value_object, Polymorphic, ValueObject};
#[cfg(feature = "std")]
pub use slot::ValueSlot;

use alloc::sync::Arc;
use core::any::Any;

pub use context::ValueContext;
pub(crate) use read::ReadState;
pub use vref::{Upcast, ValueRef};
pub(crate) use write::WriteState;

/// A decoded value, type-erased so that an indirection can hand out the
/// value it points to whatever its Rust type (downcast with
/// [`ValueRef::downcast`]).
pub type AnyValue = ValueRef<dyn Any + Send + Sync>;

/// Deferred completion of a cycle (see [`Reader::defer_value`]).
///
/// [`Reader::defer_value`]: crate::Reader::defer_value
pub type Fixup = alloc::boxed::Box<dyn FnOnce(&AnyValue) -> crate::Result<()> + Send + Sync>;

/// The null value.
pub(crate) const NULL_TAG: u32 = 0;
/// An indirection: the next long is an offset back to what is meant.
pub(crate) const INDIRECTION_TAG: u32 = 0xffff_ffff;
/// Lowest value tag; the low byte carries the flags below.
pub(crate) const VALUE_TAG_MIN: u32 = 0x7fff_ff00;
/// Flag: a codebase URL follows the tag.
pub(crate) const CODEBASE_FLAG: u32 = 0x01;
/// Mask of the type-information bits.
pub(crate) const TYPE_INFO_MASK: u32 = 0x06;
/// Type information: one repository id.
pub(crate) const SINGLE_ID: u32 = 0x02;
/// Type information: a list of repository ids, most derived first.
pub(crate) const ID_LIST: u32 = 0x06;
/// Flag: the state is chunked.
pub(crate) const CHUNKED_FLAG: u32 = 0x08;

/// The repository ids of a value header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RepoIds<'a> {
    /// None: the value is of the formal type of the slot it fills.
    None,
    /// The value's own repository id.
    One(&'a str),
    /// The value's id and then those of the truncatable bases it may be
    /// cut down to, most derived first.
    List(Arc<[&'a str]>),
}

impl<'a> RepoIds<'a> {
    /// The ids, most derived first.
    pub fn as_slice(&self) -> &[&'a str] {
        match self {
            RepoIds::None => &[],
            RepoIds::One(id) => core::slice::from_ref(id),
            RepoIds::List(ids) => ids,
        }
    }
}

/// The header of a value being read (see [`Reader::read_value_start`]).
///
/// [`Reader::read_value_start`]: crate::Reader::read_value_start
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueInfo<'a> {
    /// Index in the input of the value tag: the key later indirections
    /// to this value use.
    pub pos: usize,
    /// The repository ids the header carries.
    pub ids: RepoIds<'a>,
    /// True when the state is chunked (truncatable and custom values):
    /// only then can the state be truncated to a base.
    pub chunked: bool,
}

impl ValueInfo<'_> {
    /// The id of the most derived type, if the header names one.
    pub fn repo_id(&self) -> Option<&str> {
        self.ids.as_slice().first().copied()
    }

    /// Whether the state may be read as that of `base`: `base` is in the
    /// id list and the state is chunked (so the rest can be skipped), or
    /// is the only id.
    pub fn may_read_as(&self, base: &str) -> bool {
        let ids = self.ids.as_slice();
        match ids.iter().position(|id| *id == base) {
            Some(0) => true,
            Some(_) => self.chunked,
            None => false,
        }
    }
}

/// What [`Reader::read_value_start`] found where a value was expected.
///
/// [`Reader::read_value_start`]: crate::Reader::read_value_start
#[derive(Debug)]
pub enum ValueStart<'a> {
    /// The null value.
    Null,
    /// An indirection to a value decoded earlier in this stream.
    Shared(AnyValue),
    /// An indirection to a value whose state is still being decoded (the
    /// graph has a cycle); the value will be complete when the value at
    /// this index finishes: register a [`Reader::defer_value`] fixup.
    ///
    /// [`Reader::defer_value`]: crate::Reader::defer_value
    Cycle(usize),
    /// A new value: decode its state, then call
    /// [`Reader::finish_value`](crate::Reader::finish_value).
    New(ValueInfo<'a>),
}

#[cfg(test)]
mod tests;
