//! # peregrine-cdr
//!
//! The CORBA Common Data Representation (CDR, CORBA 3.x Part 2 chapter 9):
//! a [`Writer`] and a [`Reader`] for every IDL primitive in both byte orders,
//! alignment measured from the start of the message or encapsulation,
//! nested encapsulations with their own byte order, strings and wide strings
//! under the negotiated code sets, and bulk paths for sequences of
//! primitives and of plain-data structs (the seeds' `BinStruct`).
//!
//! The crate does no I/O and allocates only what the decoded value needs:
//! a length read from the wire is checked against the bytes that remain
//! before anything is allocated, so hostile input cannot make it reserve
//! memory that the input does not justify.
//!
//! Valuetypes (objects by value) are written with [`Writer::write_value`]
//! and read with [`Reader::read_value_start`] / [`Reader::finish_value`]:
//! sharing and cycles as indirections, chunked state for truncatable and
//! custom values, truncation to a known base; with `std`, generated types
//! implement `ValueType` and are held in `ValueSlot` members.
//!
//! Types that generated code marshals implement [`Encode`] and [`Decode`].
//! IDL `fixed` values are [`Fixed`] (any digits and scale) and
//! [`FixedPoint<D, S>`] (one `fixed<D, S>` type), encoded as packed BCD.
#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_op_in_unsafe_fn)]

extern crate alloc;

mod codeset;
mod encode;
mod error;
mod fixed;
mod order;
mod plain;
mod reader;
mod tail;
#[cfg(test)]
mod test_types;
mod value;
mod writer;

pub use codeset::{CharCodeSet, CodeSetId, CodeSets, WcharCodeSet};
pub use encode::{decode_bounded, encode_bounded, Decode, Encode};
pub use error::{CdrError, Result};
pub use fixed::{Fixed, FixedError, FixedPoint};
pub use order::ByteOrder;
pub use plain::{PlainData, Primitive};
pub use reader::Reader;
pub use tail::{PlainTail, PrimTail, TailSeq};
#[cfg(feature = "std")]
pub use value::{
    lookup_value_factory, read_value, read_value_array, read_values, register_value_factory,
    unregister_value_factory, write_value, write_value_object, CustomMarshal, Edges, Polymorphic,
    ReadValue, ReadValues, ValueEdges, ValueFactory, ValueObject, ValueScope, ValueSlot, ValueType,
    ValueWalk,
};
pub use value::{AnyValue, Fixup, RepoIds, Upcast, ValueContext, ValueInfo, ValueRef, ValueStart};
pub use writer::Writer;

/// The GIOP minor version that the CDR stream belongs to.
///
/// It changes the encoding of `wchar` and `wstring` (GIOP 1.0 has none,
/// GIOP 1.1 encodes them as fixed-width aligned code units, GIOP 1.2 and
/// later as octet-counted byte strings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GiopVersion {
    /// GIOP 1.0: no `wchar`/`wstring`.
    V1_0,
    /// GIOP 1.1.
    V1_1,
    /// GIOP 1.2 (and 1.3, which encodes data the same way).
    V1_2,
}

impl GiopVersion {
    /// The version for a GIOP `minor` number (1.3 and later encode as 1.2).
    pub fn from_minor(minor: u8) -> Self {
        match minor {
            0 => Self::V1_0,
            1 => Self::V1_1,
            _ => Self::V1_2,
        }
    }

    /// The GIOP minor number.
    pub fn minor(self) -> u8 {
        match self {
            Self::V1_0 => 0,
            Self::V1_1 => 1,
            Self::V1_2 => 2,
        }
    }
}
