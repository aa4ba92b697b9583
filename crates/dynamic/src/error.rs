//! Errors of TypeCode operations, TypeCode marshaling and the interpreter,
//! and the CORBA system exceptions they map to.

use core::fmt;

use peregrine_cdr::CdrError;
use peregrine_giop::{CompletionStatus, SystemException, SystemExceptionKind};

/// Minor codes used by this crate, the OMG's and Peregrine's (declared,
/// with their names, in `peregrine_giop`'s one table).
pub mod minor {
    pub use peregrine_giop::system_exception::minor::{
        BAD_PARAM_DISCRIMINATOR_TYPE, BAD_PARAM_INCORRECT_ABSTRACT_INTF_TYPE, BAD_PARAM_LABEL_TYPE,
        BAD_PARAM_TYPE_MISMATCH, BAD_TYPECODE_ILLEGAL_MEMBER, BAD_TYPECODE_ILLEGAL_PARAM,
        BAD_TYPECODE_INCOMPLETE, MARSHAL_LOCAL_OBJECT, MARSHAL_NO_VALUE_FACTORY,
        MARSHAL_UNSUPPORTED_KIND, NO_IMPLEMENT_NO_VALUE_IMPL,
    };
}

/// What went wrong in a TypeCode, Any or interpreter operation.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DynError {
    /// `TypeCode::BadKind`: the operation does not apply to this kind.
    BadKind,
    /// `TypeCode::Bounds`: a member index past the member count.
    Bounds,
    /// The CDR layer failed (truncated input, bad boolean, bound...).
    Cdr(CdrError),
    /// A TypeCode that is malformed or not usable here (`BAD_TYPECODE`).
    BadTypeCode {
        /// OMG minor code (see [`minor`]).
        minor: u32,
        /// What was wrong, for humans.
        what: &'static str,
    },
    /// A value that does not match its TypeCode on encode, or a bad
    /// argument to a TypeCode constructor (`BAD_PARAM`).
    BadParam {
        /// Minor code (see [`minor`]; 0 when none is named).
        minor: u32,
        /// What was wrong, for humans.
        what: &'static str,
    },
    /// Input or a value that breaks the valuetype rules, e.g. a value of
    /// a type neither known nor truncatable to the formal type
    /// (`MARSHAL`).
    Marshal {
        /// OMG minor code (see [`minor`]).
        minor: u32,
        /// What was wrong, for humans.
        what: &'static str,
    },
    /// A value that needs code this process does not have, e.g. the
    /// state of a `custom` valuetype, which only the application's own
    /// marshaling code can read or write (`NO_IMPLEMENT`).
    NoImplement {
        /// OMG minor code (see [`minor`]).
        minor: u32,
        /// What was missing, for humans.
        what: &'static str,
    },
    /// Well-formed input this implementation cannot marshal from a
    /// TypeCode alone (native types, a negative `fixed` scale):
    /// `MARSHAL` minor [`minor::MARSHAL_UNSUPPORTED_KIND`].
    Unsupported(&'static str),
}

impl DynError {
    /// The CORBA system exception that reports this error.
    pub fn system_exception(&self, completed: CompletionStatus) -> SystemException {
        use SystemExceptionKind as K;
        match self {
            DynError::BadKind | DynError::Bounds => SystemException::new(K::BadParam, 0, completed),
            DynError::Cdr(e) => SystemException::from_cdr(e, completed),
            DynError::BadTypeCode { minor, .. } => {
                SystemException::new(K::BadTypecode, *minor, completed)
            }
            DynError::BadParam { minor, .. } => {
                SystemException::new(K::BadParam, *minor, completed)
            }
            DynError::Marshal { minor, .. } => SystemException::new(K::Marshal, *minor, completed),
            DynError::NoImplement { minor, .. } => {
                SystemException::new(K::NoImplement, *minor, completed)
            }
            DynError::Unsupported(_) => {
                SystemException::new(K::Marshal, minor::MARSHAL_UNSUPPORTED_KIND, completed)
            }
        }
    }
}

impl From<CdrError> for DynError {
    #[cold]
    fn from(e: CdrError) -> Self {
        DynError::Cdr(e)
    }
}

impl From<DynError> for SystemException {
    fn from(e: DynError) -> Self {
        e.system_exception(CompletionStatus::No)
    }
}

impl fmt::Display for DynError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DynError::BadKind => f.write_str("TypeCode::BadKind"),
            DynError::Bounds => f.write_str("TypeCode::Bounds"),
            DynError::Cdr(e) => write!(f, "{e}"),
            DynError::BadTypeCode { minor, what } => {
                write!(f, "BAD_TYPECODE (minor {minor:#010x}): {what}")
            }
            DynError::BadParam { minor, what } => {
                write!(f, "BAD_PARAM (minor {minor:#010x}): {what}")
            }
            DynError::Marshal { minor, what } => {
                write!(f, "MARSHAL (minor {minor:#010x}): {what}")
            }
            DynError::NoImplement { minor, what } => {
                write!(f, "NO_IMPLEMENT (minor {minor:#010x}): {what}")
            }
            DynError::Unsupported(what) => write!(f, "not supported: {what}"),
        }
    }
}

impl std::error::Error for DynError {}

/// Result type of this crate.
pub type Result<T> = core::result::Result<T, DynError>;

/// A malformed TypeCode (out of line: the common path never builds one).
#[cold]
#[inline(never)]
pub(crate) fn bad_tc(what: &'static str) -> DynError {
    DynError::BadTypeCode {
        minor: minor::BAD_TYPECODE_ILLEGAL_PARAM,
        what,
    }
}

/// A value that does not fit its TypeCode (out of line).
#[cold]
#[inline(never)]
pub(crate) fn mismatch(what: &'static str) -> DynError {
    DynError::BadParam {
        minor: minor::BAD_PARAM_TYPE_MISMATCH,
        what,
    }
}
