//! Raising system exceptions with their cause.
//!
//! Every exception the ORB raises is built through [`raise`], which puts
//! the [`Cause`] (phase, peer, operation, a sentence, the `io::Error`) in
//! the exception itself, so it survives `?`, threads and `Box<dyn Error>`
//! (`SystemException::cause`, `std::error::Error::source`).

use crate::runtime::{Cause, CompletionStatus, SystemException, SystemExceptionKind};

/// Builds an exception with its cause. Out of line and cold: it runs only
/// when something failed, so its formatting and allocation stay off the
/// paths that succeed.
#[cold]
#[inline(never)]
pub(crate) fn raise(
    kind: SystemExceptionKind,
    minor: u32,
    completed: CompletionStatus,
    cause: Cause,
) -> SystemException {
    SystemException::new(kind, minor, completed).with_cause(cause)
}
