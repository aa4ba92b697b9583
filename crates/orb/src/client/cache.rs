//! The connection cache shared by every reference of an ORB: one
//! connection per route (endpoints, GIOP version, code sets), never one
//! per object reference.

use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::time::Instant;

use peregrine_giop::Endpoint;

use super::idle::IdleScan;
use super::lock;
use super::{call::*, conn::*, route::*};
use crate::error::raise;
use crate::fasthash::SeededState;
use crate::orb::Orb;
use crate::runtime::{Cause, Phase};
use crate::runtime::{CompletionStatus, SystemException, SystemExceptionKind as K};
use crate::trace;

// ---------------------------------------------------------------------
// Connection cache

pub(super) struct EpState {
    pub(super) conn: Option<Arc<ClientConn>>,
    pub(super) connecting: bool,
    pub(super) failures: u32,
    retry_at: Option<Instant>,
    last_error: Option<Arc<std::io::Error>>,
}

/// Connections by endpoint, shared by every reference of one ORB. At most
/// one connect attempt per endpoint is in flight; after a failure the
/// endpoint is in backoff and calls fail fast with `TRANSIENT` instead of
/// storming it.
#[derive(Default)]
pub(crate) struct ConnCache {
    pub(super) map: Mutex<HashMap<Endpoint, EpState>>,
    pub(super) cv: Condvar,
    routes: Mutex<Routes>,
    /// The thread closing idle connections, started with the first
    /// connection when an outgoing idle timeout is set.
    idle_scan: OnceLock<IdleScan>,
}

/// Live routes by the hash of what they are made of ([`RouteParts`]);
/// routes with equal hashes are told apart in full. Dead entries are
/// swept when the table has doubled since the last sweep.
///
/// Keyed by the hash, not by the parts: a lookup then needs no copy of
/// the endpoints and code sets to build a key, and a reference whose
/// route exists makes none (the common case: many objects, one server).
#[derive(Default)]
struct Routes {
    seed: SeededState,
    map: HashMap<u64, Vec<Weak<Route>>, BuildHasherDefault<IdHasher>>,
    sweep_at: usize,
}

impl ConnCache {
    /// The live route made of `parts`, else a new one (then remembered).
    pub(super) fn intern(&self, parts: RouteParts) -> Arc<Route> {
        let mut t = lock(&self.routes);
        let h = t.seed.hash_one(&parts);
        let found = t.map.get(&h).and_then(|same_hash| {
            same_hash
                .iter()
                .filter_map(Weak::upgrade)
                .find(|r| r.is_made_of(&parts))
        });
        if let Some(old) = found {
            return old;
        }
        if t.map.len() >= t.sweep_at {
            t.map.retain(|_, rs| {
                rs.retain(|w| w.strong_count() > 0);
                !rs.is_empty()
            });
            t.sweep_at = (t.map.len() * 2).max(64);
        }
        let r = Arc::new(Route::new(parts));
        t.map.entry(h).or_default().push(Arc::downgrade(&r));
        r
    }

    pub(super) fn get(
        &self,
        orb: &Orb,
        ep: &Endpoint,
        deadline: Instant,
    ) -> Result<Arc<ClientConn>, SystemException> {
        let cfg = &orb.inner().config;
        let mut map = lock(&self.map);
        loop {
            let st = map.entry(ep.clone()).or_insert_with(|| EpState {
                conn: None,
                connecting: false,
                failures: 0,
                retry_at: None,
                last_error: None,
            });
            if let Some(c) = &st.conn {
                if !c.is_closed() {
                    return Ok(c.clone());
                }
                st.conn = None;
            }
            let now = Instant::now();
            if st.connecting {
                if now >= deadline {
                    return Err(raise(
                        K::Timeout,
                        peregrine_giop::system_exception::minor::TIMEOUT_CONNECT_TIMED_OUT,
                        CompletionStatus::No,
                        || {
                            Cause::new(Phase::Connect).with_peer(ep).with_detail(
                                "deadline expired waiting for another caller's connect",
                            )
                        },
                    ));
                }
                map = self
                    .cv
                    .wait_timeout(map, deadline - now)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
                continue;
            }
            if let Some(at) = st.retry_at {
                if now < at {
                    return Err(raise(
                        K::Transient,
                        peregrine_giop::system_exception::minor::TRANSIENT_NO_USABLE_PROFILE,
                        CompletionStatus::No,
                        || backoff_cause(ep, at - now, st.failures, st.last_error.clone()),
                    ));
                }
            }
            st.connecting = true;
            drop(map);
            let timeout = cfg
                .connect_timeout
                .min(deadline.saturating_duration_since(now));
            let res = if orb.is_shut_down() {
                Err(std::io::Error::other("ORB shut down"))
            } else if timeout.is_zero() {
                Err(std::io::ErrorKind::TimedOut.into())
            } else {
                orb.inner().connector.connect(ep, timeout)
            };
            map = lock(&self.map);
            let st = map.get_mut(ep).expect("entry inserted above");
            st.connecting = false;
            self.cv.notify_all();
            match res {
                Ok(t) => {
                    let c = Arc::new(ClientConn::new(
                        t,
                        ep.clone(),
                        cfg.limits,
                        cfg.fragment_size,
                        cfg.out_idle_timeout,
                    ));
                    if let Some(timeout) = cfg.out_idle_timeout {
                        self.idle_scan
                            .get_or_init(|| IdleScan::start(orb.downgrade(), timeout));
                    }
                    st.conn = Some(c.clone());
                    st.failures = 0;
                    st.retry_at = None;
                    // Reported outside the cache's lock, as below.
                    drop(map);
                    trace::connected(ep);
                    return Ok(c);
                }
                Err(e) => {
                    st.failures = st.failures.saturating_add(1);
                    let shift = st.failures.min(16) - 1;
                    let backoff = cfg
                        .backoff_min
                        .saturating_mul(1 << shift.min(10))
                        .min(cfg.backoff_max);
                    st.retry_at = Some(Instant::now() + backoff);
                    let e = Arc::new(e);
                    st.last_error = Some(e.clone());
                    // Reported outside the cache's lock: a subscriber may
                    // write to a slow stderr.
                    drop(map);
                    trace::connect_failed(ep, &e);
                    use peregrine_giop::system_exception::minor;
                    let (kind, code) = if e.kind() == std::io::ErrorKind::TimedOut {
                        (K::Timeout, minor::TIMEOUT_CONNECT_TIMED_OUT)
                    } else {
                        (K::Transient, minor::TRANSIENT_NO_USABLE_PROFILE)
                    };
                    return Err(raise(kind, code, CompletionStatus::No, || {
                        Cause::new(Phase::Connect).with_peer(ep).with_shared_io(e)
                    }));
                }
            }
        }
    }

    /// Number of open connections (for tests and diagnostics).
    pub(crate) fn open_connections(&self) -> usize {
        lock(&self.map)
            .values()
            .filter(|s| s.conn.as_ref().is_some_and(|c| !c.is_closed()))
            .count()
    }

    /// Closes the connections idle at `now` (see
    /// [`ClientConn::close_if_idle`]) and forgets them. The connections
    /// are looked at outside the cache's lock: a call finds its
    /// connection without waiting for the scan.
    pub(crate) fn close_idle(&self, now: Instant) -> usize {
        let conns: Vec<Arc<ClientConn>> = lock(&self.map)
            .values()
            .filter_map(|s| s.conn.clone())
            .collect();
        let mut closed = 0;
        for c in conns {
            if c.close_if_idle(now) {
                closed += 1;
                let mut map = lock(&self.map);
                if let Some(st) = map.get_mut(&c.ep) {
                    if st.conn.as_ref().is_some_and(|k| Arc::ptr_eq(k, &c)) {
                        st.conn = None;
                    }
                }
            }
        }
        if closed > 0 {
            self.release_closed();
        }
        closed
    }

    /// Drops the closed connections that live routes still hold, so that
    /// their descriptors close now rather than at each route's next call
    /// (a program holding references to many servers it called once).
    /// A thread's own cache may still hold a few ([`crate::thread_conns`],
    /// at most its slots) until that thread calls again or ends.
    fn release_closed(&self) {
        let routes: Vec<Arc<Route>> = lock(&self.routes)
            .map
            .values()
            .flatten()
            .filter_map(Weak::upgrade)
            .collect();
        for r in &routes {
            let mut conn = lock(&r.conn);
            if conn.as_ref().is_some_and(|c| c.is_closed()) {
                *conn = None;
            }
        }
    }

    /// Closes every connection (ORB shutdown).
    pub(crate) fn close_all(&self) {
        if let Some(scan) = self.idle_scan.get() {
            scan.stop();
        }
        let conns: Vec<_> = lock(&self.map)
            .values_mut()
            .filter_map(|s| s.conn.take())
            .collect();
        for c in conns {
            c.fail(Closed::Broken("ORB shut down".into()));
        }
    }
}

/// Number of open client connections of `orb` (tests, diagnostics).
pub(crate) fn open_connections(orb: &Orb) -> usize {
    orb.inner().cache.open_connections()
}
