//! Raising system exceptions with their cause.
//!
//! Every exception the ORB raises is built through [`raise`], which puts
//! the [`Cause`] (phase, peer, operation, a sentence, the `io::Error`) in
//! the exception itself, so it survives `?`, threads and `Box<dyn Error>`
//! (`SystemException::cause`, `std::error::Error::source`).

use peregrine_cdr::CdrError;
use peregrine_giop::GiopError;

use crate::runtime::{Cause, CompletionStatus, SystemException, SystemExceptionKind};

/// Builds an exception with the cause that `cause` makes.
///
/// The cause comes as a closure so that building it (strings, the `Arc`)
/// happens here, out of line, and not in the caller: the hot functions
/// that can fail (the call path, the upcall) keep only a call with a few
/// pointers in their error branches, not a ~90-byte cause built on their
/// stack (docs/PERFORMANCE.md, step 37).
#[cold]
#[inline(never)]
pub(crate) fn raise(
    kind: SystemExceptionKind,
    minor: u32,
    completed: CompletionStatus,
    cause: impl FnOnce() -> Cause,
) -> SystemException {
    SystemException::new(kind, minor, completed).with_cause(cause())
}

/// [`raise`] for malformed CDR a peer sent: the exception and minor code
/// that [`SystemException::from_cdr`] gives the error.
#[cold]
#[inline(never)]
pub(crate) fn raise_cdr(
    e: &CdrError,
    completed: CompletionStatus,
    cause: impl FnOnce() -> Cause,
) -> SystemException {
    SystemException::from_cdr(e, completed).with_cause(cause())
}

/// [`raise`] for a malformed GIOP message a peer sent: the exception and
/// minor code that [`GiopError::to_system_exception`] gives the error.
#[cold]
#[inline(never)]
pub(crate) fn raise_giop(
    e: &GiopError,
    completed: CompletionStatus,
    cause: impl FnOnce() -> Cause,
) -> SystemException {
    e.to_system_exception(completed).with_cause(cause())
}
