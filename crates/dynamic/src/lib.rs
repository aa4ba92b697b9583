//! # peregrine-dynamic
//!
//! Dynamic CORBA's codec layer: [`TypeCode`] (every `TCKind`, built with
//! constructors, shared by `Arc`, recursive types included), its CDR form
//! with indirections ([`tc_cdr`]), [`Any`], the [`DynValue`] value tree,
//! and the interpretive engine ([`interp`]) that encodes, decodes, skips
//! and copies values as their TypeCode describes, producing the same
//! octets as compiled `Encode`/`Decode` code.
//!
//! The crate does no I/O and knows nothing of the ORB, so it can be
//! tested and fuzzed on bytes alone; DII, DSI and interpreted stubs live
//! in `peregrine-orb` on top of it.

pub mod any;
pub mod compiled;
pub mod custom;
pub mod error;
pub mod interp;
pub mod kind;
pub mod layout;
pub mod tc_cdr;
pub mod typecode;
pub mod value;
pub mod valuetype;

pub use any::{Any, FromAny, IdlType, ToAny};
pub use custom::register_custom_value;
pub use error::{DynError, Result};
pub use interp::{copy_value, decode_value, encode_value, skip_value};
pub use kind::TcKind;
pub use layout::Layout;
pub use tc_cdr::{read_typecode, write_typecode};
pub use typecode::{Member, TypeCode, UnionMember, ValueMember};
pub use value::{DynValue, Packed};
pub use valuetype::{register_value_type, ValueLink, ValueNode};
