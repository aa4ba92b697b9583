//! Error helpers: system exceptions with the context (peer, operation,
//! phase) that CORBA's exception type has no room for.
//!
//! [`SystemException`] is the wire type and carries only kind, minor code
//! and completion status. Every exception the ORB raises is built through
//! [`raise`], which also records a human-readable account of it for the
//! calling thread, available from [`last_error_detail`].

use std::cell::RefCell;
use std::fmt;

use crate::runtime::{CompletionStatus, SystemException, SystemExceptionKind};

thread_local! {
    static LAST: RefCell<String> = const { RefCell::new(String::new()) };
}

/// The account of the last system exception the ORB raised on this thread,
/// naming the peer, the operation and the phase, e.g.
/// `CORBA::TIMEOUT (minor 0x00000000, COMPLETED_MAYBE): calling "echo" on
/// 127.0.0.1:4000: waiting for the reply: deadline of 2s expired`.
pub fn last_error_detail() -> Option<String> {
    LAST.with(|l| {
        let l = l.borrow();
        if l.is_empty() {
            None
        } else {
            Some(l.clone())
        }
    })
}

/// Builds an exception and records its detail for this thread.
#[cold]
#[inline(never)]
pub(crate) fn raise(
    kind: SystemExceptionKind,
    minor: u32,
    completed: CompletionStatus,
    detail: fmt::Arguments<'_>,
) -> SystemException {
    let e = SystemException::new(kind, minor, completed);
    record(&e, detail);
    e
}

/// Records the detail of an exception received or passed on.
#[cold]
#[inline(never)]
pub(crate) fn record(e: &SystemException, detail: fmt::Arguments<'_>) {
    LAST.with(|l| {
        let mut l = l.borrow_mut();
        l.clear();
        use fmt::Write;
        let _ = write!(l, "{e}: {detail}");
    });
}
