//! What the ORB reports through `tracing`, and `-ORBtraceLevel`.
//!
//! The events live here, each in a function of its own that is cold and
//! never inlined, so that a call site on a hot path keeps only the
//! level check (one relaxed load and a compare, see [`on`]) and a call
//! it skips while nobody listens: the formatting, the callsite's
//! registration and the dispatch stay out of the callers' code.
//!
//! Levels follow how often an event happens: a call's request and reply
//! are DEBUG and TRACE, connections opened and accepted DEBUG and INFO,
//! failures (a connect refused, a call that ends in an exception the ORB
//! raised, a timeout) WARN.

use peregrine_giop::iiop::Endpoint;
use tracing::level_filters::{LevelFilter, STATIC_MAX_LEVEL};
use tracing::Level;

use crate::runtime::SystemException;

/// The events' targets: the side of the ORB they come from, what a
/// subscriber's filter can select (`peregrine_orb::client=debug`).
pub(crate) const CLIENT: &str = "peregrine_orb::client";
const SERVER: &str = "peregrine_orb::server";

/// Whether events at `level` may be wanted by some subscriber: what a
/// `tracing` macro checks first, alone, so that a hot caller can test it
/// and call the cold event function only when it holds. `false` while no
/// subscriber is installed (tracing's maximum level starts at OFF).
#[inline(always)]
pub(crate) fn on(level: Level) -> bool {
    level <= STATIC_MAX_LEVEL && level <= LevelFilter::current()
}

/// The `tracing` level for omniORB's `-ORBtraceLevel n`: 0 nothing, 1-4
/// errors and connection failures, 5-9 connections, 10-24 requests and
/// replies, 25 and up everything.
pub(crate) fn level_filter(n: u32) -> LevelFilter {
    match n {
        0 => LevelFilter::OFF,
        1..=4 => LevelFilter::WARN,
        5..=9 => LevelFilter::INFO,
        10..=24 => LevelFilter::DEBUG,
        _ => LevelFilter::TRACE,
    }
}

/// Installs the default subscriber for `-ORBtraceLevel n` (stderr, plain
/// text) unless the application installed a global one first: that one
/// stays and the level is then its business. `false` when none was
/// installed by this call.
#[cfg(feature = "trace-subscriber")]
pub(crate) fn install(n: u32) -> bool {
    if n == 0 {
        return false;
    }
    tracing_subscriber::fmt()
        .with_max_level(level_filter(n))
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init()
        .is_ok()
}

/// Without the `trace-subscriber` feature the application installs the
/// subscriber of its choice; the level asked for is not used.
#[cfg(not(feature = "trace-subscriber"))]
pub(crate) fn install(_n: u32) -> bool {
    false
}

/// A connection to `peer` is up.
#[cold]
#[inline(never)]
pub(crate) fn connected(peer: &Endpoint) {
    tracing::info!(target: CLIENT, peer = %peer, "connected");
}

/// A connect to `peer` failed (the endpoint is now in backoff).
#[cold]
#[inline(never)]
pub(crate) fn connect_failed(peer: &Endpoint, error: &std::io::Error) {
    tracing::warn!(target: CLIENT, peer = %peer, error = %error, "connect failed");
}

/// A request for `operation` goes to `peer` with `id`.
#[cold]
#[inline(never)]
pub(crate) fn request(peer: &Endpoint, operation: &str, id: u32, twoway: bool) {
    tracing::debug!(target: CLIENT, peer = %peer, operation, id, twoway, "request");
}

/// The reply to `operation`'s request `id` arrived from `peer`.
#[cold]
#[inline(never)]
pub(crate) fn reply(peer: &Endpoint, operation: &str, id: u32) {
    tracing::trace!(target: CLIENT, peer = %peer, operation, id, "reply");
}

/// A call ends in `e`, raised by the ORB (connect, send, receive,
/// timeout) or by the peer.
#[cold]
#[inline(never)]
pub(crate) fn call_failed(peer: Option<&Endpoint>, operation: &str, e: &SystemException) {
    let peer = peer
        .map(ToString::to_string)
        .or_else(|| e.cause().and_then(|c| c.peer()).map(str::to_string))
        .unwrap_or_default();
    tracing::warn!(target: CLIENT, peer, operation, exception = %e, "call failed");
}

/// The peer raised `e` for `operation`: an answer, not a failure of the
/// ORB or the network, hence DEBUG.
#[cold]
#[inline(never)]
pub(crate) fn exception(peer: &Endpoint, operation: &str, e: &SystemException) {
    tracing::debug!(target: CLIENT, peer = %peer, operation, exception = %e, "system exception reply");
}

/// `operation` is forwarded (LOCATION_FORWARD) away from `peer`.
#[cold]
#[inline(never)]
pub(crate) fn forward(peer: &Endpoint, operation: &str) {
    tracing::debug!(target: CLIENT, peer = %peer, operation, "location forward");
}

/// `operation` is sent again (a failed write or an orderly close by
/// `peer`: the server provably did not run it).
#[cold]
#[inline(never)]
pub(crate) fn resend(peer: &Endpoint, operation: &str, why: &str) {
    tracing::info!(target: CLIENT, peer = %peer, operation, why, "re-sending request");
}

/// The client's connection to `peer` closed.
#[cold]
#[inline(never)]
pub(crate) fn closed(peer: &Endpoint, why: &dyn std::fmt::Debug) {
    tracing::info!(target: CLIENT, peer = %peer, why = ?why, "connection closed");
}

/// The server is done with the connection from `peer` (the client
/// closed it, or it broke, or the ORB shut down).
#[cold]
#[inline(never)]
pub(crate) fn served(peer: &str) {
    tracing::info!(target: SERVER, peer = %peer, "connection closed");
}

/// The span of a server connection's thread: the events of the requests
/// it reads carry the client's address. Once per connection, so cheap
/// next to the accept and the thread (disabled: the level check).
#[cold]
#[inline(never)]
pub(crate) fn server_connection(peer: &str) -> tracing::Span {
    tracing::info_span!(target: SERVER, "connection", peer = %peer)
}

/// The server accepted a connection from `peer`.
#[cold]
#[inline(never)]
pub(crate) fn accepted(peer: &std::net::SocketAddr) {
    tracing::info!(target: SERVER, peer = %peer, "accepted connection");
}

/// Accepting failed.
#[cold]
#[inline(never)]
pub(crate) fn accept_failed(error: &std::io::Error) {
    tracing::warn!(target: SERVER, error = %error, "accept failed");
}

/// The server received a request for `operation` from `peer`.
#[cold]
#[inline(never)]
pub(crate) fn server_request(peer: &str, operation: &str, id: u32) {
    tracing::debug!(target: SERVER, peer = %peer, operation, id, "incoming request");
}

/// The server answers `operation` from `peer` with `e`.
#[cold]
#[inline(never)]
pub(crate) fn server_exception(peer: &str, request_id: u32, e: &SystemException) {
    tracing::debug!(target: SERVER, peer = %peer, id = request_id, exception = %e, "system exception reply sent");
}

/// The server refused a connection from `peer`: `max` were open.
#[cold]
#[inline(never)]
pub(crate) fn refused(peer: &std::net::SocketAddr, max: usize) {
    tracing::warn!(target: SERVER, peer = %peer, max, "connection refused: too many connections");
}

/// The server sent the reply to request `id` to `peer`.
#[cold]
#[inline(never)]
pub(crate) fn server_reply(peer: &str, id: u32) {
    tracing::debug!(target: SERVER, peer = %peer, id, "reply sent");
}

/// `peer` does not read its replies: its queue is full and the
/// connection is closed.
#[cold]
#[inline(never)]
pub(crate) fn reply_queue_full(peer: &str) {
    tracing::warn!(target: SERVER, peer = %peer, "reply queue full: closing the connection");
}

/// A request of `peer` ran long on the thread dwelling on its
/// connection: the connection's read turn went back to the pool.
#[cold]
#[inline(never)]
pub(crate) fn dwell_released(peer: &str) {
    tracing::trace!(target: SERVER, peer = %peer, "long request: connection handed back to the pool");
}

/// The thread dwelling on `peer`'s connection was kicked out of its
/// wait: the connection was quiet for the dwell time (or the ORB stops).
#[cold]
#[inline(never)]
pub(crate) fn dwell_kicked(peer: &str) {
    tracing::trace!(target: SERVER, peer = %peer, "quiet connection: dwelling thread back to the pool");
}

/// `peer`'s connection carried nothing for the idle timeout:
/// CloseConnection went out.
#[cold]
#[inline(never)]
pub(crate) fn idle_closed(peer: &str) {
    tracing::debug!(target: SERVER, peer = %peer, "idle connection: CloseConnection sent");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// omniORB's levels onto tracing's.
    #[test]
    fn trace_levels_map_as_omniorb() {
        assert_eq!(level_filter(0), LevelFilter::OFF);
        assert_eq!(level_filter(1), LevelFilter::WARN);
        assert_eq!(level_filter(4), LevelFilter::WARN);
        assert_eq!(level_filter(5), LevelFilter::INFO);
        assert_eq!(level_filter(9), LevelFilter::INFO);
        assert_eq!(level_filter(10), LevelFilter::DEBUG);
        assert_eq!(level_filter(24), LevelFilter::DEBUG);
        assert_eq!(level_filter(25), LevelFilter::TRACE);
        assert_eq!(level_filter(40), LevelFilter::TRACE);
    }
}
