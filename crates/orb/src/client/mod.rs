//! Client side: object reference state, the connection cache shared by
//! all references, client connections with request-id multiplexing and
//! leader/followers reading, and the invocation path.
//!
//! A call writes its request into a thread-local reusable buffer (header,
//! then the arguments straight after it), sends it with one write, and
//! waits for its reply. Whoever waits first on a connection becomes the
//! *leader* and reads the socket itself (no thread hop in the
//! single-caller case); replies for other callers are handed to them
//! through the pending table and a condition variable, and the leader's
//! own reply is decoded in place from the receive buffer.
//!
//! Where each part lives:
//!
//! | file | what it holds |
//! |---|---|
//! | `route.rs` | a reference's target (key, version, code sets) and its shared route |
//! | `cache.rs` | the ORB's connection cache: one connection per route |
//! | `conn.rs` | a connection: request ids, pending table, leader/followers |
//! | `header.rs` | request framing and per-route header templates |
//! | `reply.rs` | the fixed-offset reply reader, held and parsed replies |
//! | `call.rs` | the general call: forwards, re-sends, reply decoding; the framing and reply-wait steps every call shares |
//! | `fast.rs` | the lean prefix of the common call (those steps, without a `Call`) and the stubs' entry points |
//! | `oneway.rs` | oneway calls and the SYNC_NONE writer thread |
//! | `deferred.rs` | deferred synchronous calls |
//! | `locate.rs` | LocateRequest, made as a `Call` |
//! | `idle.rs` | the scan that closes idle outgoing connections |

mod cache;
mod call;
mod conn;
mod deferred;
mod fast;
mod header;
mod idle;
mod locate;
mod oneway;
mod reply;
mod route;
#[cfg(test)]
mod tests;

use std::cell::Cell;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use peregrine_cdr::{ByteOrder, Writer};

use crate::error::raise;
use crate::runtime::{Cause, CompletionStatus, Phase, SystemException, SystemExceptionKind};

/// How long a connection must have been idle before a call checks that
/// the server has not closed it meanwhile (one non-blocking peek).
const IDLE_CHECK: Duration = Duration::from_millis(100);
/// `IDLE_CHECK` in nanoseconds (the idle check runs on
/// [`crate::coarse_clock`]).
const IDLE_CHECK_NS: u64 = IDLE_CHECK.as_nanos() as u64;
/// Most LOCATION_FORWARD hops one call follows.
const MAX_FORWARDS: usize = 8;
/// Requests longer than this may block in their write (a full socket
/// buffer), so the reply wait takes a fresh clock reading after them.
const LONG_WRITE: usize = 64 << 10;
/// Most times one call is re-sent after the server provably did not
/// process it (CloseConnection, failed write).
const MAX_RESENDS: usize = 3;

/// How long `poll` may read once the socket has bytes: enough for the
/// rest of a message that is arriving, never a real wait.
const POLL_READ: Duration = Duration::from_millis(5);

/// The exception of a call made after the ORB shut down.
#[cold]
#[inline(never)]
pub(super) fn orb_shut_down(operation: &str) -> SystemException {
    raise(
        SystemExceptionKind::BadInvOrder,
        peregrine_giop::system_exception::minor::BAD_INV_ORDER_ORB_HAS_SHUTDOWN,
        CompletionStatus::No,
        || {
            Cause::new(Phase::Local)
                .with_operation(operation)
                .with_detail("the ORB has shut down")
        },
    )
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A call's deadline kept as its start and timeout, added up only when
/// needed: a reply that arrives in time never needs the sum (a checked
/// `Instant` addition, ~12 instructions).
#[derive(Clone, Copy, Debug)]
struct Deadline {
    from: Instant,
    after: Duration,
}

impl Deadline {
    /// The deadline `at`.
    fn at(at: Instant) -> Deadline {
        Deadline {
            from: at,
            after: Duration::ZERO,
        }
    }

    /// The instant; a timeout too large to represent is a century.
    fn instant(self) -> Instant {
        self.from
            .checked_add(self.after)
            .unwrap_or_else(|| self.from + Duration::from_secs(100 * 365 * 86_400))
    }
}

thread_local! {
    /// The thread's reusable request writer, boxed so that taking it and
    /// putting it back moves a pointer rather than the writer (~50
    /// instructions a call less).
    static SEND_BUF: Cell<Option<Box<Writer>>> = const { Cell::new(None) };
}

#[inline(always)]
fn take_writer() -> Box<Writer> {
    SEND_BUF
        .with(|c| c.take())
        .unwrap_or_else(|| Box::new(Writer::new(ByteOrder::NATIVE)))
}

#[inline(always)]
fn put_writer(w: Box<Writer>) {
    if w.len() <= (4 << 20) {
        SEND_BUF.with(|c| {
            // Empty unless a call made while this one held the writer
            // (from an argument encoder) put its own back.
            if let Some(other) = c.replace(Some(w)) {
                drop_writer(other);
            }
        });
    }
}

/// Drops a writer out of line, so that `put_writer` stays small enough
/// to inline (with the drop in it, its thread-local access was a call).
#[cold]
#[inline(never)]
fn drop_writer(w: Box<Writer>) {
    drop(w);
}

pub(crate) use cache::{open_connections, ConnCache};
pub(crate) use call::invoke;
pub(crate) use conn::ClientConn;
pub(crate) use deferred::send_deferred;
pub use deferred::DeferredCall;
pub(crate) use fast::invoke_with_tail;
pub(crate) use locate::locate;
pub(crate) use oneway::{invoke_oneway, invoke_oneway_with_tail};
pub(crate) use route::{RefInner, Route};
