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

use std::cell::Cell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use peregrine_cdr::{ByteOrder, CodeSets, GiopVersion, Reader, Writer};
use peregrine_giop::{
    decode_message, encode_message_error, encode_request, Assembled, CodeSetComponentInfo,
    CodeSetContext, Endpoint, Ior, Limits, Message, Pending, Reassembler, ReplyStatus,
    RequestHeader, ResponseFlags, ServiceContext, ServiceContexts, TargetAddress,
};
use tracing::Level;

use crate::biased_lock::BiasedLock;
use crate::coarse_clock;
use crate::error::raise;
use crate::orb::Orb;
use crate::runtime::{Cause, Phase};
use crate::runtime::{
    CompletionStatus, DecodeResult, DecodeUserException, EncodeArgs, ObjectRef, SyncScope,
    SystemException, SystemExceptionKind as K,
};
use crate::short_bytes::ShortBytes;
use crate::thread_conns;
use crate::trace;
use crate::transport::{FrameError, RxBuf, Transport};

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

/// The state behind an [`ObjectRef`].
pub(crate) struct RefInner {
    pub(crate) orb: Orb,
    pub(crate) ior: Ior,
    pub(crate) timeout: Option<Duration>,
    /// How far a oneway goes before `invoke_oneway` returns.
    pub(crate) sync: SyncScope,
    /// The target bound from the IOR's profile (on first use; read
    /// without a lock, kept inline so a call touches one allocation less).
    bound: std::sync::OnceLock<Target>,
    /// A LOCATION_FORWARD's target, used instead while `forwarded`.
    forward: Mutex<Option<Arc<Target>>>,
    forwarded: std::sync::atomic::AtomicBool,
}

impl RefInner {
    pub(crate) fn new(orb: Orb, ior: Ior, timeout: Option<Duration>) -> Self {
        Self {
            orb,
            ior,
            timeout,
            sync: SyncScope::Transport,
            bound: std::sync::OnceLock::new(),
            forward: Mutex::new(None),
            forwarded: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Where calls go now: the forwarded target, else the IOR's (bound
    /// on first use, then borrowed without a lock or a reference count).
    #[inline]
    fn target(&self) -> Result<TargetRef<'_>, SystemException> {
        match self.bound.get() {
            Some(t) if !self.forwarded.load(Ordering::Acquire) => Ok(TargetRef::Bound(t)),
            _ => self.target_slow(),
        }
    }

    /// `target` when forwarded or not bound yet.
    #[cold]
    fn target_slow(&self) -> Result<TargetRef<'_>, SystemException> {
        if self.forwarded.load(Ordering::Acquire) {
            if let Some(t) = &*lock(&self.forward) {
                return Ok(TargetRef::Forwarded(t.clone()));
            }
        }
        if let Some(t) = self.bound.get() {
            return Ok(TargetRef::Bound(t));
        }
        let mut new = Target::from_ior(&self.ior, false, self.orb.inner().config.max_giop)?;
        // References to an endpoint already known share its route.
        new.route = self.orb.inner().cache.intern(new.route);
        Ok(TargetRef::Bound(self.bound.get_or_init(|| new)))
    }

    /// Sends calls to `t` (a forward), or back to the IOR's target.
    fn set_target(&self, t: Option<Arc<Target>>) {
        let mut f = lock(&self.forward);
        self.forwarded.store(t.is_some(), Ordering::Release);
        *f = t;
    }
}

/// One addressable target: a route (shared by every reference with the
/// same endpoints, version and code sets) and an object key.
pub(crate) struct Target {
    route: Arc<Route>,
    key: ShortBytes,
    forwarded: bool,
}

/// A reference's current target: its own, borrowed, or a forward's.
enum TargetRef<'a> {
    Bound(&'a Target),
    Forwarded(Arc<Target>),
}

impl std::ops::Deref for TargetRef<'_> {
    type Target = Target;
    fn deref(&self) -> &Target {
        match self {
            TargetRef::Bound(t) => t,
            TargetRef::Forwarded(t) => t,
        }
    }
}

impl std::ops::Deref for Target {
    type Target = Route;
    fn deref(&self) -> &Route {
        &self.route
    }
}

/// How to reach a server: endpoints, GIOP version, code sets and the
/// connection in use. One per distinct (endpoints, version, code sets)
/// in the ORB (`ConnCache::intern`), so a million references to one
/// server cost one route, not a million.
pub(crate) struct Route {
    endpoints: Vec<Endpoint>,
    version: GiopVersion,
    codesets: CodeSets,
    /// The server's CODE_SETS component, if any.
    info: Option<CodeSetComponentInfo>,
    /// The IOR had a CODE_SETS component: send a CodeSets context.
    negotiate: bool,
    conn: Mutex<Option<Arc<ClientConn>>>,
    /// Request headers encoded for this route (`Target::write_header`),
    /// shared by every object reached through it: a reference's first
    /// call costs no header encoding, and calls spread over many objects
    /// touch one set of headers.
    headers: HeaderSlots,
}

impl Target {
    fn from_ior(ior: &Ior, forwarded: bool, max: GiopVersion) -> Result<Target, SystemException> {
        let profiles = ior.iiop_profiles().map_err(|e| {
            raise(K::InvObjref, 0, CompletionStatus::No, || {
                Cause::new(Phase::Resolve)
                    .with_detail(format_args!("malformed IIOP profile in the reference: {e}"))
            })
        })?;
        let Some(first) = profiles.first() else {
            return Err(raise(K::InvObjref, 0, CompletionStatus::No, || {
                Cause::new(Phase::Resolve)
                    .with_detail("the reference has no IIOP profile (nil or foreign)")
            }));
        };
        let mut endpoints = Vec::new();
        for p in profiles.iter().filter(|p| p.object_key == first.object_key) {
            for e in p.endpoints() {
                if !endpoints.contains(&e) {
                    endpoints.push(e);
                }
            }
        }
        let version = match (first.version.major, first.version.minor) {
            (1, 0) => GiopVersion::V1_0,
            (1, 1) => GiopVersion::V1_1,
            _ => GiopVersion::V1_2,
        }
        .min(max);
        let info = ior.code_sets();
        let negotiate = info.is_some() && version >= GiopVersion::V1_1;
        Ok(Target {
            route: Arc::new(Route {
                endpoints,
                version,
                codesets: choose_codesets(info.as_ref()),
                info,
                negotiate,
                conn: Mutex::new(None),
                headers: Default::default(),
            }),
            key: ShortBytes::from(first.object_key.as_slice()),
            forwarded,
        })
    }
}

impl Route {
    /// The code sets for a new connection, preferring `prefer` (what
    /// already-encoded arguments use) when the server accepts them.
    fn codesets_preferring(&self, prefer: Option<CodeSets>) -> CodeSets {
        let Some(p) = prefer else {
            return self.codesets;
        };
        let accepts = p.char == peregrine_cdr::CharCodeSet::Latin1
            || self.info.as_ref().is_some_and(|i| {
                i.for_char_data.native_code_set == p.char.id()
                    || i.for_char_data.conversion_code_sets.contains(&p.char.id())
            });
        if accepts {
            CodeSets {
                char: p.char,
                wchar: self.codesets.wchar,
            }
        } else {
            self.codesets
        }
    }

    /// The connection in use (closed or not: `ClientConn::begin` tells,
    /// and the caller then `drop_conn`s it), else a connection from the
    /// ORB's cache.
    #[inline]
    fn conn(&self, orb: &Orb, deadline: Deadline) -> Result<Arc<ClientConn>, SystemException> {
        if let Some(c) = &*lock(&self.conn) {
            return Ok(c.clone());
        }
        self.connect(orb, deadline.instant())
    }

    /// `conn` when the route has no connection yet.
    #[cold]
    fn connect(&self, orb: &Orb, deadline: Instant) -> Result<Arc<ClientConn>, SystemException> {
        let mut last = None;
        for ep in &self.endpoints {
            match orb.inner().cache.get(orb, ep, deadline) {
                Ok(c) => {
                    *lock(&self.conn) = Some(c.clone());
                    return Ok(c);
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| {
            raise(
                K::Transient,
                peregrine_giop::system_exception::minor::TRANSIENT_NO_USABLE_PROFILE,
                CompletionStatus::No,
                || Cause::new(Phase::Connect).with_detail("no endpoint in the reference"),
            )
        }))
    }

    /// Forgets `c` (found closed) so that the next `conn` takes another.
    fn drop_conn(&self, c: &Arc<ClientConn>) {
        let mut g = lock(&self.conn);
        if g.as_ref().is_some_and(|x| Arc::ptr_eq(x, c)) {
            *g = None;
        }
    }
}

/// The code sets a client uses with a server whose IOR says `info`:
/// UTF-8/UTF-16 when the server can take them, else its native ones;
/// without the component, ISO 8859-1 and no wide characters (CORBA's
/// fallback).
pub(crate) fn choose_codesets(info: Option<&CodeSetComponentInfo>) -> CodeSets {
    use peregrine_cdr::{CharCodeSet, CodeSetId, WcharCodeSet};
    let Some(info) = info else {
        return CodeSets {
            char: CharCodeSet::Latin1,
            wchar: None,
        };
    };
    let c = &info.for_char_data;
    let has = |comp: &peregrine_giop::CodeSetComponent, id: CodeSetId| {
        comp.native_code_set == id || comp.conversion_code_sets.contains(&id)
    };
    let char = if has(c, CodeSetId::UTF_8) {
        CharCodeSet::Utf8
    } else {
        CharCodeSet::Latin1
    };
    let wc = &info.for_wchar_data;
    let wchar = if has(wc, CodeSetId::UTF_16) {
        Some(WcharCodeSet::Utf16)
    } else if has(wc, CodeSetId::UCS_2) {
        Some(WcharCodeSet::Ucs2)
    } else {
        None
    };
    CodeSets { char, wchar }
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

// ---------------------------------------------------------------------
// Connection cache

struct EpState {
    conn: Option<Arc<ClientConn>>,
    connecting: bool,
    failures: u32,
    retry_at: Option<Instant>,
    last_error: Option<Arc<std::io::Error>>,
}

/// Connections by endpoint, shared by every reference of one ORB. At most
/// one connect attempt per endpoint is in flight; after a failure the
/// endpoint is in backoff and calls fail fast with `TRANSIENT` instead of
/// storming it.
#[derive(Default)]
pub(crate) struct ConnCache {
    map: Mutex<HashMap<Endpoint, EpState>>,
    cv: Condvar,
    routes: Mutex<Routes>,
}

type RouteKey = (Vec<Endpoint>, GiopVersion, Option<CodeSetComponentInfo>);

/// Live routes by what they are made of; dead entries are swept when
/// the table has doubled since the last sweep.
#[derive(Default)]
struct Routes {
    map: HashMap<RouteKey, std::sync::Weak<Route>>,
    sweep_at: usize,
}

impl ConnCache {
    /// The live route equal to `r`, or `r` itself (then remembered).
    fn intern(&self, r: Arc<Route>) -> Arc<Route> {
        let key: RouteKey = (r.endpoints.clone(), r.version, r.info.clone());
        let mut t = lock(&self.routes);
        if let Some(old) = t.map.get(&key).and_then(std::sync::Weak::upgrade) {
            return old;
        }
        if t.map.len() >= t.sweep_at {
            t.map.retain(|_, w| w.strong_count() > 0);
            t.sweep_at = (t.map.len() * 2).max(64);
        }
        t.map.insert(key, Arc::downgrade(&r));
        r
    }

    fn get(
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
                    return Err(raise(K::Timeout, 0, CompletionStatus::No, || {
                        Cause::new(Phase::Connect)
                            .with_peer(ep)
                            .with_detail("deadline expired waiting for another caller's connect")
                    }));
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
                    ));
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
                    let kind = if e.kind() == std::io::ErrorKind::TimedOut {
                        K::Timeout
                    } else {
                        K::Transient
                    };
                    return Err(raise(
                        kind,
                        peregrine_giop::system_exception::minor::TRANSIENT_NO_USABLE_PROFILE,
                        CompletionStatus::No,
                        || Cause::new(Phase::Connect).with_peer(ep).with_shared_io(e),
                    ));
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

    /// Closes every connection (ORB shutdown).
    pub(crate) fn close_all(&self) {
        let conns: Vec<_> = lock(&self.map)
            .values_mut()
            .filter_map(|s| s.conn.take())
            .collect();
        for c in conns {
            c.fail(Closed::Broken("ORB shut down".into()));
        }
    }
}

// ---------------------------------------------------------------------
// Client connection

#[derive(Clone, Debug)]
enum Closed {
    /// The server sent CloseConnection: unanswered requests were not
    /// processed and may be re-sent.
    Orderly,
    /// The connection broke: unanswered requests may have executed.
    Broken(String),
}

/// A received message of `len` bytes.
///
/// Without a buffer of its own (`own` is `None`) it is at the start of
/// the connection's receive buffer and the receiving thread is still the
/// connection's leader: the reply is decoded in place, and
/// [`Held::finish`] (or [`ClientConn::release`], from `Held`'s drop)
/// consumes it and hands leadership back. The receive buffer never moves
/// between threads or structures (it is 48 bytes; passing it along cost
/// ~40 instructions a call): only leadership changes hands.
struct Arrived {
    own: Option<Box<RxBuf>>,
    len: usize,
    /// The reply header, when the leader parsed it at fixed offsets as it
    /// matched the reply to its call (see [`fast_reply`]).
    head: Option<FastHead>,
}

/// How a leader's own reply came in.
enum Got {
    /// At the start of the leader's receive buffer (with its header when
    /// it has the common form).
    InPlace(usize, Option<FastHead>),
    /// Reassembled from fragments into a buffer of its own.
    Whole(RxBuf, usize),
}

struct ConnState {
    /// Calls waiting for a reply: `None` until it arrives.
    pending: HashMap<u32, Option<Arrived>, BuildHasherDefault<IdHasher>>,
    /// A thread reads the connection (and alone locks `ClientConn::rx`).
    leader: bool,
    /// Set together with `ClientConn::closed_hint`.
    closed: Option<Closed>,
    reasm: Reassembler,
    /// When the connection, if idle then, is next checked for a server
    /// close: the last check + `IDLE_CHECK`. Not moved on each reply (that
    /// cost a clock addition per call): a connection in steady use is
    /// probed once per `IDLE_CHECK` instead, three system calls. Kept on
    /// both clocks (this and `ClientConn::idle_check_ns`), so neither
    /// kind of call reads a second clock; a check moves both.
    idle_check_at: Instant,
    /// Callers blocked on `cv` (followers): the leader only wakes them
    /// when there are some (a condition variable notify is a syscall even
    /// with nobody waiting).
    waiters: u32,
}

/// A connection's receive buffer, used only by the connection's leader.
///
/// The thread that sets `ConnState::leader` (under the state lock) has
/// the buffer to itself until it clears the flag (under the lock again),
/// so the lock orders one leader's accesses before the next one's. A
/// `Mutex` here cost two uncontended lock/unlock pairs per call (~100
/// instructions, the locks not inlined) for an exclusion the leader flag
/// already provides.
#[derive(Default)]
struct LeaderBuf(std::cell::UnsafeCell<RxBuf>);

// SAFETY: the `RxBuf` is only reached through `LeaderBuf::get`, whose
// callers must lead the connection: one thread at a time, each hand-over
// ordered by the state mutex. `RxBuf` itself is `Send`.
unsafe impl Sync for LeaderBuf {}

impl LeaderBuf {
    /// The buffer.
    ///
    /// # Safety
    ///
    /// The calling thread leads the connection (it set
    /// `ConnState::leader` under the state lock and has not cleared it),
    /// and no other reference obtained from `get` is alive.
    #[allow(clippy::mut_from_ref)]
    #[inline(always)]
    unsafe fn get(&self) -> &mut RxBuf {
        // SAFETY: exclusive by the caller's contract.
        unsafe { &mut *self.0.get() }
    }
}

/// One client connection, shared by every reference to its endpoint.
pub(crate) struct ClientConn {
    t: Box<dyn Transport>,
    ep: Endpoint,
    limits: Limits,
    fragment_size: usize,
    /// Serializes writes (and the idle probe, which switches the socket
    /// to non-blocking for a moment). Biased: the connection's first
    /// writer takes it without atomic read-modify-writes until another
    /// thread writes (see [`crate::biased_lock`]).
    write_lock: BiasedLock,
    st: Mutex<ConnState>,
    cv: Condvar,
    /// The receive buffer, the leader's alone.
    rx: LeaderBuf,
    /// The socket read timeout last set by a leader, in nanoseconds
    /// (`u64::MAX`: none yet): consecutive calls ask for the same one,
    /// and comparing here costs less than the transport's dynamic call
    /// that finds it unchanged. Only leaders set it.
    read_timeout: std::sync::atomic::AtomicU64,
    /// The next request id. An atomic (not in `st`) so that a oneway
    /// takes one without the state lock ([`ClientConn::begin_oneway`]).
    next_id: AtomicU32,
    /// `st.closed.is_some()`, readable without the lock: set (under the
    /// lock) whenever `closed` is, never cleared.
    closed_hint: AtomicBool,
    /// The code sets of the connection, chosen by its first call (under
    /// the state lock) and fixed from then on.
    codesets: std::sync::OnceLock<CodeSets>,
    /// A Reply arrived: the CodeSets context was answered and is no
    /// longer sent. Set under the state lock, never cleared.
    codesets_acked: AtomicBool,
    /// `ConnState::idle_check_at` on the coarse clock
    /// ([`crate::coarse_clock`] nanoseconds), for oneways, which read no
    /// precise clock: written under the state lock, read without it (a
    /// oneway takes the locked path when the check is due).
    idle_check_ns: AtomicU64,
}

/// A call's clock reading for the idle check: a twoway has a precise one
/// anyway (its deadline counts from it), a oneway reads the coarse clock.
#[derive(Clone, Copy)]
enum Now {
    Precise(Instant),
    Coarse(u64),
}

/// What [`ClientConn::begin`] gives a call.
struct Begun {
    id: u32,
    cs: CodeSets,
    /// Send the CodeSets service context.
    ctx: bool,
    /// The call leads the connection from the start.
    led: bool,
}

/// Gives up a call's claim on `conn` after `begin`: its leadership (if it
/// led) or its pending entry.
fn give_up(conn: &ClientConn, id: u32, led: bool) {
    if led {
        drop(conn.unlead(false));
    } else {
        conn.forget(id);
    }
}

enum WaitError {
    TimedOut,
    Closed(Closed),
}

enum Lead {
    Mine(Got),
    TimedOut,
    Closed(Closed),
}

impl ClientConn {
    fn new(t: Box<dyn Transport>, ep: Endpoint, limits: Limits, fragment_size: usize) -> Self {
        Self {
            t,
            ep,
            limits,
            fragment_size,
            write_lock: BiasedLock::new(),
            st: Mutex::new(ConnState {
                pending: HashMap::default(),
                leader: false,
                closed: None,
                reasm: Reassembler::new(limits),
                idle_check_at: Instant::now() + IDLE_CHECK,
                waiters: 0,
            }),
            cv: Condvar::new(),
            rx: LeaderBuf::default(),
            read_timeout: std::sync::atomic::AtomicU64::new(u64::MAX),
            next_id: AtomicU32::new(1),
            closed_hint: AtomicBool::new(false),
            codesets: std::sync::OnceLock::new(),
            codesets_acked: AtomicBool::new(false),
            idle_check_ns: AtomicU64::new(coarse_clock::now_ns().saturating_add(IDLE_CHECK_NS)),
        }
    }

    /// Whether the connection is closed (without the state lock: the flag
    /// is set under it, so a caller that then locks sees `closed` too).
    #[inline(always)]
    pub(crate) fn is_closed(&self) -> bool {
        self.closed_hint.load(Ordering::Acquire)
    }

    /// Records why the connection closed (the first reason stays).
    fn set_closed(&self, st: &mut ConnState, why: Closed) {
        if st.closed.is_none() {
            st.closed = Some(why);
        }
        self.closed_hint.store(true, Ordering::Release);
    }

    /// Marks the connection closed, fails every pending call, closes the
    /// socket.
    fn fail(&self, why: Closed) {
        trace::closed(&self.ep, &why);
        {
            let mut st = lock(&self.st);
            self.set_closed(&mut st, why);
            st.reasm.clear();
        }
        self.cv.notify_all();
        self.t.shutdown();
    }

    /// Before reusing an idle connection (the state lock released): has
    /// the server closed it?
    #[cold]
    fn probe_idle(&self) {
        // A thread holding the write lock is writing (perhaps blocked on a
        // full socket): the connection is not idle, and waiting for the
        // lock here would make a SYNC_NONE caller block on the network.
        if let Some(_w) = self.write_lock.try_lock() {
            if self.t.peer_closed_or_readable() {
                // Unsolicited bytes or EOF on an idle client connection:
                // the server is closing it (CloseConnection) or is gone.
                self.fail(Closed::Orderly);
            }
        }
    }

    /// Allocates a request id and returns the code sets, whether to send
    /// the CodeSets context and, when `lead` is asked for and nobody reads
    /// the connection, whether the caller is then the leader from the
    /// start (it will read its own reply, so the id is not registered as
    /// pending, and it must hand leadership back with
    /// [`ClientConn::unlead`]). Otherwise a twoway's id is registered as
    /// pending. A connection without calls in flight whose check is due
    /// at `now` (the call's start) is first checked for a server close.
    #[inline(always)]
    fn begin(
        &self,
        target: &Target,
        prefer: Option<CodeSets>,
        twoway: bool,
        lead: bool,
        now: Now,
    ) -> Result<Begun, Closed> {
        let mut st = lock(&self.st);
        if let Some(c) = &st.closed {
            return Err(c.clone());
        }
        let due = match now {
            Now::Precise(t) => t > st.idle_check_at,
            Now::Coarse(t) => t > self.idle_check_ns.load(Ordering::Relaxed),
        };
        if !st.leader && st.pending.is_empty() && due {
            drop(st);
            self.probe_idle();
            st = lock(&self.st);
            if let Some(c) = &st.closed {
                return Err(c.clone());
            }
            // Open as of `now`: the next check is `IDLE_CHECK` later (a
            // stream of oneways reads nothing, and would otherwise peek
            // at the socket, a syscall, before every call).
            self.checked_idle(&mut st, now);
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut led = false;
        if twoway {
            if lead && !st.leader {
                st.leader = true;
                led = true;
            } else {
                st.pending.insert(id, None);
            }
        }
        // Chosen under the state lock, so the first caller's preference
        // wins as before.
        let cs = *self
            .codesets
            .get_or_init(|| target.codesets_preferring(prefer));
        let ctx = target.negotiate && !self.codesets_acked.load(Ordering::Relaxed);
        Ok(Begun { id, cs, ctx, led })
    }

    /// Moves the next idle check (on both clocks) to `IDLE_CHECK` after
    /// `now`, when the connection was found open; the other clock is read
    /// here (once per check, not per call).
    #[cold]
    fn checked_idle(&self, st: &mut ConnState, now: Now) {
        let (precise, coarse) = match now {
            Now::Precise(t) => (t, coarse_clock::now_ns()),
            Now::Coarse(t) => (Instant::now(), t),
        };
        st.idle_check_at = st.idle_check_at.max(precise + IDLE_CHECK);
        let at = self.idle_check_ns.load(Ordering::Relaxed);
        self.idle_check_ns.store(
            at.max(coarse.saturating_add(IDLE_CHECK_NS)),
            Ordering::Relaxed,
        );
    }

    /// [`ClientConn::begin`] for a oneway in the common case, without the
    /// state lock: the connection is open (as far as the flag tells: one
    /// that closes meanwhile fails the write, as it could after `begin`),
    /// its code sets are settled, no CodeSets context is due and the idle
    /// check is not due at `now`. The id and the code sets, else `None`
    /// (then `begin` decides, under the lock).
    #[inline(always)]
    fn begin_oneway(&self, target: &Target, now: u64) -> Option<(u32, CodeSets)> {
        if self.is_closed() || now > self.idle_check_ns.load(Ordering::Relaxed) {
            return None;
        }
        let cs = *self.codesets.get()?;
        if target.negotiate && !self.codesets_acked.load(Ordering::Relaxed) {
            return None;
        }
        Some((self.next_id.fetch_add(1, Ordering::Relaxed), cs))
    }

    fn forget(&self, id: u32) {
        lock(&self.st).pending.remove(&id);
    }

    /// Sets the socket read timeout to `t` unless the last leader did.
    #[inline(always)]
    fn read_timeout_at_most(&self, t: Duration) -> std::io::Result<()> {
        use std::sync::atomic::Ordering::Relaxed;
        // Whole granules below ~584 years: distinct durations, distinct
        // keys (a larger one saturates and is set every time).
        let key = t
            .as_secs()
            .saturating_mul(1_000_000_000)
            .saturating_add(u64::from(t.subsec_nanos()));
        if key != u64::MAX && self.read_timeout.load(Relaxed) == key {
            return Ok(());
        }
        self.t.set_read_timeout(Some(t))?;
        self.read_timeout.store(key, Relaxed);
        Ok(())
    }

    /// The largest message written unfragmented.
    #[inline(always)]
    fn fragment_limit(&self) -> usize {
        self.fragment_size
            .max(peregrine_giop::fragment::MIN_FRAGMENT_LEN)
    }

    /// Writes the message `bytes` followed by `tail` (a gathered last
    /// argument, empty for most calls; see [`Call::tail`]). `Ok(true)`
    /// when the write may have waited (the write lock was contended): the
    /// caller's clock reading is stale.
    #[inline(always)]
    fn send(&self, bytes: &[u8], tail: &[u8]) -> std::io::Result<bool> {
        let r = {
            let (_w, contended) = self.write_lock.lock();
            if tail.is_empty() && bytes.len() <= self.fragment_limit() {
                // What `write_message_gather` does for a message that needs
                // no fragments, without the call (~15 instructions).
                self.t.write_all_vectored(&[bytes])
            } else {
                crate::transport::write_message_gather(&*self.t, bytes, tail, self.fragment_size)
            }
            .map(|()| contended)
        };
        if let Err(e) = &r {
            self.fail(Closed::Broken(format!("write failed: {e}")));
        }
        r
    }

    /// Waits for the reply to `id` (registered as pending), reading the
    /// socket as leader when no one else is. `now` is a clock reading
    /// taken just before, if the caller has one.
    fn wait(
        &self,
        id: u32,
        deadline: Instant,
        mut now: Option<Instant>,
    ) -> Result<Arrived, WaitError> {
        let mut st = lock(&self.st);
        loop {
            if let Some(slot) = st.pending.get_mut(&id) {
                if let Some(a) = slot.take() {
                    st.pending.remove(&id);
                    return Ok(a);
                }
            }
            if let Some(c) = &st.closed {
                let c = c.clone();
                st.pending.remove(&id);
                return Err(WaitError::Closed(c));
            }
            let now = now.take().unwrap_or_else(Instant::now);
            if now >= deadline {
                st.pending.remove(&id);
                return Err(WaitError::TimedOut);
            }
            if !st.leader {
                // The leader reads its own reply: no need for the entry
                // (`poll` puts it back if it stops before the reply).
                st.pending.remove(&id);
                st.leader = true;
                drop(st);
                match self.lead_with(id, Deadline::at(deadline), now, None) {
                    Ok(a) => return Ok(a),
                    Err((g, WaitError::TimedOut)) => {
                        st = g;
                        st.pending.remove(&id);
                        return Err(WaitError::TimedOut);
                    }
                    Err((g, WaitError::Closed(c))) => {
                        st = g;
                        st.pending.remove(&id);
                        return Err(WaitError::Closed(c));
                    }
                }
            }
            st.waiters += 1;
            st = self
                .cv
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
            st.waiters -= 1;
        }
    }

    /// Reads as the leader (the caller set `leader`) until `id`'s reply
    /// arrives or `deadline` passes. The reply comes back still led (see
    /// [`Arrived`]); otherwise leadership is handed back (a broken
    /// connection marked closed for everyone) and the state's guard
    /// returned with why.
    #[inline(always)]
    fn lead_with(
        &self,
        id: u32,
        deadline: Deadline,
        now: Instant,
        left: Option<Duration>,
    ) -> Result<Arrived, (MutexGuard<'_, ConnState>, WaitError)> {
        // SAFETY: the caller leads the connection (see `lead_with`'s
        // callers: `wait` and `poll` set `leader` just before, a call
        // led from `begin` holds it); the borrow ends with `lead`.
        let got = self.lead(unsafe { self.rx.get() }, id, deadline, now, left);
        self.after_lead(got)
    }

    /// The end of [`ClientConn::lead_with`], once `lead` returned `got`
    /// (the receive buffer unlocked).
    fn after_lead(&self, got: Lead) -> Result<Arrived, (MutexGuard<'_, ConnState>, WaitError)> {
        match got {
            Lead::Mine(Got::InPlace(len, head)) => Ok(Arrived {
                own: None,
                len,
                head,
            }),
            Lead::Mine(Got::Whole(buf, len)) => {
                drop(self.unlead(is_reply(buf.message(len))));
                Ok(Arrived {
                    own: Some(Box::new(buf)),
                    len,
                    head: None,
                })
            }
            Lead::TimedOut => Err((self.unlead(false), WaitError::TimedOut)),
            Lead::Closed(c) => {
                let mut st = self.unlead(false);
                self.set_closed(&mut st, c.clone());
                st.reasm.clear();
                drop(st);
                self.cv.notify_all();
                self.t.shutdown();
                Err((lock(&self.st), WaitError::Closed(c)))
            }
        }
    }

    /// Hands leadership back (the receive buffer unlocked), wakes
    /// followers. `acked` says a Reply arrived (which answers the CodeSets
    /// context; a LocateReply does not).
    fn unlead(&self, acked: bool) -> MutexGuard<'_, ConnState> {
        let mut st = lock(&self.st);
        st.leader = false;
        if acked && !self.codesets_acked.load(Ordering::Relaxed) {
            self.codesets_acked.store(true, Ordering::Relaxed);
        }
        if st.waiters > 0 {
            self.cv.notify_all();
        }
        st
    }

    /// Done with a received message: a led one is consumed from the
    /// receive buffer and leadership handed back.
    fn release(&self, a: &Arrived) {
        if a.own.is_none() {
            let acked = {
                // SAFETY: a message without its own buffer is the
                // leader's, and this thread leads until `unlead` below;
                // the borrow ends in this block.
                let rx = unsafe { self.rx.get() };
                let acked = is_reply(rx.message(a.len));
                rx.consume(a.len);
                acked
            };
            drop(self.unlead(acked));
        }
    }

    /// Whether the reply to `id` (a deferred call) can be collected
    /// without blocking: it arrived, or the connection ended. Reads what
    /// the socket already holds when no other thread is reading it.
    fn poll(&self, id: u32) -> bool {
        let mut st = lock(&self.st);
        if st.closed.is_some() || !matches!(st.pending.get(&id), Some(None)) {
            return true;
        }
        if st.leader {
            // The reading thread files our reply when it comes.
            return false;
        }
        st.leader = true;
        drop(st);
        // No thread reads the socket now, so toggling it non-blocking to
        // peek is safe.
        let readable = self.t.peer_closed_or_readable();
        st = lock(&self.st);
        st.leader = false;
        if !readable {
            return false;
        }
        let now = Instant::now();
        st.leader = true;
        drop(st);
        match self.lead_with(id, Deadline::at(now + POLL_READ), now, Some(POLL_READ)) {
            Ok(a) => {
                // Filed for `get_response`: a copy, so that leadership is
                // not held until then.
                let copy = match a.own {
                    Some(_) => a,
                    None => {
                        let copy = Arrived {
                            // SAFETY: `a` came back led: this thread leads
                            // until `release` below.
                            own: Some(Box::new(RxBuf::from_message(
                                unsafe { self.rx.get() }.message(a.len),
                            ))),
                            len: a.len,
                            head: a.head,
                        };
                        self.release(&a);
                        copy
                    }
                };
                lock(&self.st).pending.insert(id, Some(copy));
                true
            }
            Err((_, WaitError::Closed(_))) => true,
            Err((mut st, WaitError::TimedOut)) => {
                st.pending.insert(id, None);
                false
            }
        }
    }

    /// Reads messages until the reply to `mine` arrives, the deadline
    /// passes or the connection ends. Replies to others are handed over.
    /// `now` is the caller's latest clock reading and `left`, if the
    /// caller knows it, the time from `now` to `deadline` (a call that has
    /// not waited yet knows it is its timeout: no clock arithmetic).
    #[inline(always)]
    fn lead(
        &self,
        rx: &mut RxBuf,
        mine: u32,
        deadline: Deadline,
        mut now: Instant,
        mut left: Option<Duration>,
    ) -> Lead {
        loop {
            let left = match left.take() {
                Some(l) => l,
                None => deadline.instant().saturating_duration_since(now),
            };
            if left.is_zero() {
                return Lead::TimedOut;
            }
            if self.read_timeout_at_most(socket_timeout(left)).is_err() {
                return Lead::Closed(Closed::Broken("cannot set read timeout".into()));
            }
            let len = match rx.read_message(&*self.t, &self.limits) {
                Ok(len) => len,
                Err(FrameError::TimedOut) => {
                    now = Instant::now();
                    continue;
                }
                Err(FrameError::Eof { clean }) => {
                    return Lead::Closed(Closed::Broken(format!(
                        "connection to {} closed by the server{}",
                        self.ep,
                        if clean {
                            ""
                        } else {
                            " in the middle of a message"
                        }
                    )))
                }
                Err(FrameError::Io(e)) => {
                    return Lead::Closed(Closed::Broken(format!("reading from {}: {e}", self.ep)))
                }
                Err(FrameError::Garbage(e)) => {
                    self.send_message_error(rx);
                    return Lead::Closed(Closed::Broken(format!(
                        "{} sent a malformed message: {e}",
                        self.ep
                    )));
                }
            };
            match self.incoming(rx, len, mine) {
                Ok(Some(a)) => return Lead::Mine(a),
                Ok(None) => now = Instant::now(),
                Err(c) => return Lead::Closed(c),
            }
        }
    }

    fn send_message_error(&self, rx: &RxBuf) {
        let version = GiopVersion::from_minor(rx.unread().get(5).copied().unwrap_or(2).min(2));
        let mut w = Writer::new(ByteOrder::NATIVE);
        if encode_message_error(&mut w, version).is_ok() {
            let _w = self.write_lock.lock();
            let _ = self.t.write_all_vectored(&[w.as_slice()]);
        }
    }

    /// Handles one framed message at the start of `rx`.
    #[inline(always)]
    fn incoming(&self, rx: &mut RxBuf, len: usize, mine: u32) -> Result<Option<Got>, Closed> {
        // Fragments (and messages with more to come) go through the
        // reassembler; everything else is decoded in place.
        let m = rx.message(len);
        let (minor, flags, msg_type) = (m[5], m[6], m[7]);
        if msg_type == 7 || (minor > 0 && flags & 2 != 0) {
            let out = {
                let mut st = lock(&self.st);
                match st.reasm.push(rx.message(len)) {
                    Ok(Assembled::Reassembled(v)) => Some(v),
                    Ok(_) => None,
                    Err(e) => {
                        drop(st);
                        self.send_message_error(rx);
                        return Err(Closed::Broken(format!(
                            "bad fragment from {}: {e}",
                            self.ep
                        )));
                    }
                }
            };
            rx.consume(len);
            return match out {
                Some(v) => {
                    let n = v.len();
                    let mut whole = RxBuf::from_message(&v);
                    Ok(self
                        .dispatch_reply(&mut whole, n, mine)?
                        .map(|_| Got::Whole(whole, n)))
                }
                None => Ok(None),
            };
        }
        self.dispatch_reply(rx, len, mine)
    }

    /// Files the reply at the start of `rx` for its caller, or (`mine`'s)
    /// leaves it there for the leader: `Some(InPlace(len))`.
    #[inline(always)]
    fn dispatch_reply(&self, rx: &mut RxBuf, len: usize, mine: u32) -> Result<Option<Got>, Closed> {
        // The common reply is parsed once, here, at fixed offsets.
        let fast = fast_reply(rx.message(len));
        if let Some(h) = fast {
            if h.id == mine {
                return Ok(Some(Got::InPlace(len, Some(h))));
            }
        }
        // Any other whole GIOP 1.2 Reply has its request id at a fixed
        // offset: no need to decode it twice (the caller decodes it in
        // `ReplyMsg::new`, where a malformed reply is a MARSHAL error).
        let id = match fast
            .map(|h| h.id)
            .or_else(|| fast_reply_id(rx.message(len)))
        {
            Some(id) => Some(id),
            None => self.slow_reply_id(rx, len)?,
        };
        let Some(id) = id else {
            rx.consume(len);
            return Ok(None);
        };
        if id == mine {
            return Ok(Some(Got::InPlace(len, None)));
        }
        {
            let mut st = lock(&self.st);
            if let Some(slot @ None) = st.pending.get_mut(&id) {
                let copy = RxBuf::from_message(rx.message(len));
                *slot = Some(Arrived {
                    own: Some(Box::new(copy)),
                    len,
                    head: None,
                });
                if is_reply(rx.message(len)) {
                    self.codesets_acked.store(true, Ordering::Relaxed);
                }
                drop(st);
                self.cv.notify_all();
            }
            // Else: a late reply to a call that timed out; dropped.
        }
        rx.consume(len);
        Ok(None)
    }

    /// The request id of any other message a server may send a client:
    /// `Ok(None)` for one to skip (CancelRequest), `Err` for one that
    /// ends the connection.
    fn slow_reply_id(&self, rx: &mut RxBuf, len: usize) -> Result<Option<u32>, Closed> {
        Ok(Some(match decode_message(rx.message(len), &self.limits) {
            Ok((_, Message::Reply { header, .. })) => header.request_id,
            Ok((_, Message::LocateReply { header, .. })) => header.request_id,
            Ok((_, Message::CloseConnection)) => return Err(Closed::Orderly),
            Ok((_, Message::MessageError)) => {
                return Err(Closed::Broken(format!(
                    "{} answered MessageError (it could not parse our message)",
                    self.ep
                )))
            }
            Ok((_, Message::CancelRequest { .. })) => return Ok(None),
            Ok((h, _)) => {
                self.send_message_error(rx);
                return Err(Closed::Broken(format!(
                    "{} sent an unexpected {:?} on a client connection",
                    self.ep, h.msg_type
                )));
            }
            Err(e) => {
                self.send_message_error(rx);
                return Err(Closed::Broken(format!(
                    "{} sent a malformed message: {e}",
                    self.ep
                )));
            }
        }))
    }
}

/// The request id of `msg` if it is a complete (unfragmented) GIOP 1.2
/// Reply: the `u32` right after the 12-byte header, in the message's byte
/// order.
#[inline(always)]
fn fast_reply_id(msg: &[u8]) -> Option<u32> {
    let [b'G', b'I', b'O', b'P', 1, 2, flags, 1, _, _, _, _, a, b, c, d, ..] = *msg else {
        return None;
    };
    if flags & 2 != 0 {
        return None;
    }
    let bytes = [a, b, c, d];
    Some(if flags & 1 == 1 {
        u32::from_le_bytes(bytes)
    } else {
        u32::from_be_bytes(bytes)
    })
}

/// The header of the common reply: a whole GIOP 1.2 Reply with no
/// service contexts, its body at offset 24 (8-aligned).
#[derive(Clone, Copy, Debug)]
struct FastHead {
    id: u32,
    status: ReplyStatus,
    order: ByteOrder,
}

/// Where the body of a [`FastHead`] reply starts.
const FAST_BODY_AT: usize = 24;

/// The common reply read at fixed offsets. Anything else (and anything
/// malformed) is `None` and takes the full decode.
#[inline(always)]
fn fast_reply(m: &[u8]) -> Option<FastHead> {
    // The magic, version and message type in one word compare (the flags
    // byte masked out).
    const WANT: u64 = u64::from_le_bytes(*b"GIOP\x01\x02\x00\x01");
    let head: [u8; 8] = m.get(..8)?.try_into().ok()?;
    if u64::from_le_bytes(head) & !(0xff << 48) != WANT {
        return None;
    }
    let flags = head[6];
    let little = flags & 1 != 0;
    let u32_at = |at: usize| -> Option<u32> {
        let b: [u8; 4] = m.get(at..at + 4)?.try_into().ok()?;
        Some(if little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        })
    };
    if flags & 2 != 0 || u32_at(8)? as usize != m.len() - peregrine_giop::HEADER_LEN {
        return None;
    }
    let status = match u32_at(16)? {
        0 => ReplyStatus::NoException,
        1 => ReplyStatus::UserException,
        s => ReplyStatus::from_u32(s, GiopVersion::V1_2).ok()?,
    };
    if u32_at(20)? != 0 {
        return None;
    }
    Some(FastHead {
        id: u32_at(12)?,
        status,
        order: if little {
            ByteOrder::Little
        } else {
            ByteOrder::Big
        },
    })
}

/// A hasher for request ids: they are ours (sequential), not the
/// network's, so a multiply-shift mix is enough (SipHash cost more than
/// the rest of the pending-table work).
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0.wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = u64::from(n);
    }
}

/// Granularity of the socket read timeout: the leader's remaining time is
/// rounded down to it, so consecutive calls with the same call timeout
/// ask for the same socket timeout, which the transport then leaves alone
/// (no `setsockopt` per call). A read gives up at most one granule early;
/// the leader then reads again with the rest.
const READ_TIMEOUT_GRANULE: Duration = Duration::from_millis(10);

/// The socket read timeout for a leader with `left` until its deadline.
#[inline(always)]
fn socket_timeout(left: Duration) -> Duration {
    if left <= READ_TIMEOUT_GRANULE {
        return left;
    }
    // Whole granules (10 ms) without 128-bit arithmetic.
    let g = READ_TIMEOUT_GRANULE.subsec_nanos();
    Duration::new(left.as_secs(), left.subsec_nanos() / g * g)
}

/// True if `msg` (starting with its GIOP header) is a Reply.
fn is_reply(msg: &[u8]) -> bool {
    msg.get(7) == Some(&(peregrine_giop::MsgType::Reply as u8))
}

// ---------------------------------------------------------------------
// Invocation

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

/// A received message held until its receiver is done with it (then
/// released: see [`Arrived`]).
struct Held {
    conn: Arc<ClientConn>,
    arrived: Arrived,
    /// Already consumed and released ([`Held::finish`]).
    released: bool,
}

impl Held {
    #[inline(always)]
    fn new(conn: Arc<ClientConn>, arrived: Arrived) -> Held {
        Held {
            conn,
            arrived,
            released: false,
        }
    }

    /// Runs `f` on the message's bytes.
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        let len = self.arrived.len;
        match &self.arrived.own {
            Some(b) => f(b.message(len)),
            // SAFETY: a held message without its own buffer keeps its
            // receiver the leader until it is released (`finish` or drop,
            // which need `&mut self`, so this borrow has ended by then).
            None => f(unsafe { self.conn.rx.get() }.message(len)),
        }
    }

    /// Runs `f` on the message's bytes, then releases it: for a led
    /// message one lock of the receive buffer for both.
    fn finish<R>(mut self, f: impl FnOnce(&[u8], &ClientConn) -> R) -> R {
        let len = self.arrived.len;
        if let Some(b) = &self.arrived.own {
            return f(b.message(len), &self.conn);
        }
        let (out, acked) = {
            // SAFETY: as in `with_bytes`; leadership is handed back only
            // after this block.
            let rx = unsafe { self.conn.rx.get() };
            let out = f(rx.message(len), &self.conn);
            let acked = is_reply(rx.message(len));
            rx.consume(len);
            (out, acked)
        };
        self.released = true;
        drop(self.conn.unlead(acked));
        out
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if !self.released {
            self.conn.release(&self.arrived);
        }
    }
}

/// A received Reply, its header parsed once, decoded in place.
pub(crate) struct ReplyMsg {
    held: Held,
    codesets: CodeSets,
    status: ReplyStatus,
    /// Index of the body in the message, its stream offset (alignment
    /// origin), byte order and GIOP version.
    body_at: usize,
    body_offset: usize,
    order: ByteOrder,
    version: GiopVersion,
}

impl ReplyMsg {
    /// Parses the reply header of `held` (fixed offsets for the common
    /// GIOP 1.2 reply, else the full decode); `MARSHAL` if it is not a
    /// well-formed Reply.
    #[inline(always)]
    fn new(held: Held, codesets: CodeSets) -> Result<ReplyMsg, SystemException> {
        if let Some(h) = held.arrived.head {
            return Ok(Self::fast(held, codesets, h));
        }
        Self::parse(held, codesets)
    }

    /// A reply whose header `h` the leader parsed.
    #[inline(always)]
    fn fast(held: Held, codesets: CodeSets, h: FastHead) -> ReplyMsg {
        ReplyMsg {
            held,
            codesets,
            status: h.status,
            body_at: FAST_BODY_AT,
            body_offset: FAST_BODY_AT,
            order: h.order,
            version: GiopVersion::V1_2,
        }
    }

    /// `new` for a reply whose header the leader did not parse.
    #[cold]
    #[inline(never)]
    fn parse(held: Held, codesets: CodeSets) -> Result<ReplyMsg, SystemException> {
        let parsed = held.with_bytes(|bytes| {
            let found = match decode_message(bytes, &held.conn.limits) {
                Ok((_, Message::Reply { header, body })) => Some((header.status, body)),
                _ => None,
            };
            found.map(|(status, b)| {
                (
                    status,
                    bytes.len() - b.bytes.len(),
                    b.offset,
                    b.order,
                    b.version,
                )
            })
        });
        let Some((status, body_at, body_offset, order, version)) = parsed else {
            return Err(raise(K::Marshal, 0, CompletionStatus::Maybe, || {
                Cause::new(Phase::Decode)
                    .with_peer(&held.conn.ep)
                    .with_detail("not a well-formed Reply")
            }));
        };
        Ok(ReplyMsg {
            held,
            codesets,
            status,
            body_at,
            body_offset,
            order,
            version,
        })
    }

    /// A reader over the body of `bytes` (this reply's message), with
    /// the call's code sets.
    fn reader<'b>(&self, bytes: &'b [u8]) -> Reader<'b> {
        let body = &bytes[self.body_at..];
        let mut r = Reader::with_offset(body, self.order, self.body_offset);
        r.set_version(self.version);
        r.set_codesets(self.codesets);
        r
    }

    /// Runs `f` on a reader over the body.
    fn with_reader<R>(&self, f: impl FnOnce(&mut Reader<'_>) -> R) -> R {
        self.held.with_bytes(|b| f(&mut self.reader(b)))
    }

    /// Runs `f` on a reader over the body and the connection, then
    /// releases the reply (see [`Held::finish`]).
    fn finish<R>(self, f: impl FnOnce(&mut Reader<'_>, &ClientConn) -> R) -> R {
        let ReplyMsg {
            held,
            codesets,
            status: _,
            body_at,
            body_offset,
            order,
            version,
        } = self;
        held.finish(|b, conn| {
            let mut r = Reader::with_offset(&b[body_at..], order, body_offset);
            r.set_version(version);
            r.set_codesets(codesets);
            f(&mut r, conn)
        })
    }
}

/// Where a request's header fields end and its body starts in the
/// writer (what giop's `Pending` knows, kept here so that a cached header
/// can carry it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Framing {
    header_end: usize,
    body_start: usize,
}

/// `Writer::patch_u32`, inlined (the call cost as much as the store);
/// a position outside the writer is left alone.
#[inline(always)]
fn patch_u32(w: &mut Writer, at: usize, v: u32) {
    let bytes = match w.order() {
        ByteOrder::Big => v.to_be_bytes(),
        ByteOrder::Little => v.to_le_bytes(),
    };
    if let Some(d) = w.as_mut_slice().get_mut(at..at + 4) {
        d.copy_from_slice(&bytes);
    }
}

/// Index of the message size in the GIOP header.
const SIZE_AT: usize = 8;
/// Index of the request id in a GIOP 1.2 Request.
const REQUEST_ID_AT: usize = peregrine_giop::HEADER_LEN;

impl Framing {
    /// The framing of the header `encode_request` just wrote into `w`
    /// (nothing after it yet).
    fn of(p: Pending, w: &mut Writer) -> Result<Framing, peregrine_giop::GiopError> {
        let body_start = p.body_start();
        debug_assert_eq!(w.len(), body_start);
        // With no body, `finish` drops the body's alignment padding:
        // what is left is the end of the header fields.
        p.finish(w)?;
        let header_end = w.len();
        w.write_bytes(&[0; 8][..body_start - header_end]);
        Ok(Framing {
            header_end,
            body_start,
        })
    }

    /// As `Pending::finish`: patches the message size, counting `tail`
    /// bytes sent after the writer's; drops the body alignment padding if
    /// no body was written.
    fn finish(self, w: &mut Writer, tail: usize) -> Result<(), peregrine_cdr::CdrError> {
        if w.len() == self.body_start && tail == 0 {
            w.truncate(self.header_end);
        }
        let body = (w.len() + tail).saturating_sub(peregrine_giop::HEADER_LEN);
        let size = u32::try_from(body).map_err(|_| peregrine_cdr::CdrError::TooLong(body))?;
        patch_u32(w, SIZE_AT, size);
        Ok(())
    }
}

/// A GIOP 1.2 request header (no service contexts) as encoded for one
/// route, operation, response flags, byte order and object key length:
/// a later call to any object of the route copies it and patches the
/// request id and the object key (and, when finished, the size).
struct CachedHeader {
    op: Box<str>,
    twoway: bool,
    order: ByteOrder,
    key_len: usize,
    bytes: Box<[u8]>,
    framing: Framing,
}

/// `a == b` for short byte strings (operation names) in word compares,
/// without the `memcmp` call (~30 instructions per call for its setup).
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (mut ca, mut cb) = (a.chunks_exact(8), b.chunks_exact(8));
    for (x, y) in (&mut ca).zip(&mut cb) {
        let x = u64::from_ne_bytes(x.try_into().unwrap_or_default());
        let y = u64::from_ne_bytes(y.try_into().unwrap_or_default());
        if x != y {
            return false;
        }
    }
    ca.remainder()
        .iter()
        .zip(cb.remainder())
        .all(|(x, y)| x == y)
}

/// Where the object key starts in a GIOP 1.2 Request: the 12-byte
/// header, request id, response flags and 3 reserved bytes, the
/// TargetAddress discriminant (KeyAddr, a short padded to 4), the key's
/// length.
const KEY_AT: usize = 28;

/// Request headers cached per route: the first operations called through
/// it (set once each, so a lookup takes no lock); others encode each time.
const HEADER_SLOTS: usize = 16;

type HeaderSlots = [std::sync::OnceLock<CachedHeader>; HEADER_SLOTS];

impl Target {
    /// Writes the cached header of (`op`, `twoway`) with request id `id`
    /// and this target's key into `w` (cleared first), if there is one.
    #[inline(always)]
    fn write_header(&self, op: &str, twoway: bool, id: u32, w: &mut Writer) -> Option<Framing> {
        let order = w.order();
        let key_len = self.key.len();
        for slot in &self.route.headers {
            let e = slot.get()?;
            if e.twoway == twoway
                && e.order == order
                && e.key_len == key_len
                && same_bytes(e.op.as_bytes(), op.as_bytes())
            {
                w.clear();
                w.set_version(GiopVersion::V1_2);
                w.write_bytes(&e.bytes);
                patch_u32(w, REQUEST_ID_AT, id);
                w.as_mut_slice()[KEY_AT..KEY_AT + key_len].copy_from_slice(&self.key);
                return Some(e.framing);
            }
        }
        None
    }

    /// Remembers the header just written into `w` for the route, if a
    /// slot is free and the key sits where `write_header` patches it.
    fn store_header(&self, op: &str, twoway: bool, w: &Writer, framing: Framing) {
        let bytes = &w.as_slice()[..framing.body_start];
        let key_len = self.key.len();
        let len_bytes = match w.order() {
            ByteOrder::Big => (key_len as u32).to_be_bytes(),
            ByteOrder::Little => (key_len as u32).to_le_bytes(),
        };
        if bytes.get(KEY_AT - 4..KEY_AT) != Some(&len_bytes[..])
            || bytes.get(KEY_AT..KEY_AT + key_len) != Some(&self.key[..])
        {
            return;
        }
        let order = w.order();
        for slot in &self.route.headers {
            match slot.get() {
                // Another thread stored it meanwhile.
                Some(e)
                    if e.twoway == twoway
                        && e.order == order
                        && e.key_len == key_len
                        && *e.op == *op =>
                {
                    return
                }
                Some(_) => continue,
                None => {
                    if slot
                        .set(CachedHeader {
                            op: op.into(),
                            twoway,
                            order,
                            key_len,
                            bytes: bytes.into(),
                            framing,
                        })
                        .is_ok()
                    {
                        return;
                    }
                }
            }
        }
    }
}

/// One call in progress.
struct Call<'o> {
    obj: &'o ObjectRef,
    op: &'o str,
    st: CallState,
    /// The end of the request body, sent from the caller's memory after
    /// the writer's bytes (a large last `in` sequence, see
    /// [`invoke_with_tail`]); empty for most calls. It stays with the
    /// call, so a re-send after a failed write, a forward or an orderly
    /// close sends it again.
    tail: &'o [u8],
}

/// Everything about a call in flight but the reference and the operation
/// name, so a deferred call can keep it while its caller goes on.
struct CallState {
    twoway: bool,
    /// Read its own reply as the connection's leader from the start when
    /// nobody else reads it (synchronous twoways; a deferred call must not
    /// hold the connection while its caller goes on).
    lead: bool,
    /// When the call started (the idle-connection check's clock).
    started: Instant,
    /// The latest clock reading (`started`, or after a send that may have
    /// waited): where the leader's read timeout is counted from.
    clock: Instant,
    /// The call's timeout, counted from `started`.
    timeout: Duration,
    /// This call leads the connection (and will read its reply).
    led: bool,
    conn: Option<Arc<ClientConn>>,
    request_id: u32,
    codesets: CodeSets,
    version: GiopVersion,
    args_start: usize,
    pending: Option<Framing>,
    /// The `pending` marker of the message last sent (a re-send rewrites
    /// the header in front of the same arguments).
    sent_pending: Option<Framing>,
    forwards: usize,
    resends: usize,
}

impl CallState {
    /// When the call times out.
    fn deadline(&self) -> Deadline {
        Deadline {
            from: self.started,
            after: self.timeout,
        }
    }

    /// Gives up the connection's leadership or the pending entry (the
    /// request will not be waited for on this connection).
    fn abandon(&mut self) {
        if let Some(c) = &self.conn {
            give_up(c, self.request_id, std::mem::take(&mut self.led));
        }
    }
}

impl Drop for CallState {
    fn drop(&mut self) {
        // A call unwound while leading (e.g. a panicking argument
        // encoder) must not leave the connection without a reader.
        if self.led {
            self.abandon();
        }
    }
}

impl<'o> Call<'o> {
    /// A call not yet bound to a connection (infallible, so that the
    /// sizeable `Call` is built in place rather than moved out of a
    /// `Result`).
    #[inline(always)]
    fn new(obj: &'o ObjectRef, op: &'o str, twoway: bool, lead: bool) -> Self {
        let orb = &obj.inner.orb;
        let timeout = obj.inner.timeout.unwrap_or(orb.inner().config.call_timeout);
        let started = Instant::now();
        Call {
            obj,
            op,
            tail: &[],
            st: CallState {
                twoway,
                lead,
                started,
                clock: started,
                timeout,
                led: false,
                conn: None,
                request_id: 0,
                codesets: CodeSets::default(),
                version: GiopVersion::V1_2,
                args_start: 0,
                pending: None,
                sent_pending: None,
                forwards: 0,
                resends: 0,
            },
        }
    }

    /// Checks the ORB is up, binds to a connection, writes the request
    /// header and the arguments into `w` (not yet finished or sent).
    fn start(
        &mut self,
        w: &mut Writer,
        encode_args: impl EncodeArgs,
    ) -> Result<(), SystemException> {
        if self.obj.inner.orb.is_shut_down() {
            return Err(raise(
                K::BadInvOrder,
                peregrine_giop::system_exception::minor::BAD_INV_ORDER_ORB_HAS_SHUTDOWN,
                CompletionStatus::No,
                || {
                    Cause::new(Phase::Local)
                        .with_operation(self.op)
                        .with_detail("the ORB has shut down")
                },
            ));
        }
        self.prepare(w, None)?;
        if let Err(e) = encode_args(w) {
            self.st.abandon();
            return Err(cdr_to_sys(&e, CompletionStatus::No, || {
                self.cause(Phase::Encode)
            }));
        }
        Ok(())
    }

    /// `e`, the exception this call ends in, reported (WARN) with the
    /// call's operation and peer.
    #[cold]
    #[inline(never)]
    fn failed(&self, e: SystemException) -> SystemException {
        trace::call_failed(self.st.conn.as_ref().map(|c| &c.ep), self.op, &e);
        e
    }

    /// A cause in `phase` naming this call's operation and, once it has
    /// a connection, its peer.
    #[cold]
    #[inline(never)]
    fn cause(&self, phase: Phase) -> Cause {
        let c = Cause::new(phase).with_operation(self.op);
        match &self.st.conn {
            Some(conn) => c.with_peer(&conn.ep),
            None => c,
        }
    }

    /// Binds to a connection and writes the request header into `w`. When
    /// `align` is given (re-sending), the body is made to start at that
    /// position modulo 8, so already-encoded arguments stay aligned.
    fn prepare(&mut self, w: &mut Writer, align: Option<usize>) -> Result<(), SystemException> {
        let inner = &self.obj.inner;
        let mut tries = 0;
        let (target, conn, Begun { id, cs, ctx, led }) = loop {
            let target = inner.target()?;
            let conn = match target.conn(&inner.orb, self.st.deadline()) {
                Ok(c) => c,
                Err(e) if target.forwarded => {
                    // A forwarded target that fails: back to the original.
                    inner.set_target(None);
                    tries += 1;
                    if tries > 2 {
                        return Err(self.failed(e.with_operation(self.op)));
                    }
                    continue;
                }
                // Raised below the call (connecting), which did not know
                // the operation.
                Err(e) => return Err(self.failed(e.with_operation(self.op))),
            };
            let prefer = align.map(|_| self.st.codesets);
            let lead = self.st.lead;
            let now = Now::Precise(self.st.started);
            match conn.begin(&target, prefer, self.st.twoway, lead, now) {
                Ok(b) => break (target, conn, b),
                Err(_) if tries < 2 => {
                    target.drop_conn(&conn);
                    tries += 1;
                    continue;
                }
                Err(c) => {
                    target.drop_conn(&conn);
                    return Err(
                        self.failed(raise(K::Transient, 0, CompletionStatus::No, || {
                            Cause::new(Phase::Connect)
                                .with_peer(&conn.ep)
                                .with_operation(self.op)
                                .with_detail(format_args!("connection closed: {c:?}"))
                        })),
                    );
                }
            }
        };
        if trace::on(Level::DEBUG) {
            trace::request(&conn.ep, self.op, id, self.st.twoway);
        }
        let mut version = target.version;
        if let Some(old) = &self.st.conn {
            if let Some(p) = &self.st.pending {
                // Re-sending already-encoded arguments is only sound when
                // they would encode the same way.
                let has_args = w.len() > p.body_start;
                let same_cs = self.st.codesets.char == cs.char
                    && (self.st.codesets.wchar.is_none() || self.st.codesets.wchar == cs.wchar);
                if has_args && self.st.version < version {
                    // Forwarded to a profile of a higher GIOP version
                    // (e.g. `corbaloc::` is 1.0, the object's IOR 1.2):
                    // the target speaks every lower version too, so the
                    // arguments go as encoded, in the request's version.
                    version = self.st.version;
                }
                if has_args && (!same_cs || self.st.version != version) {
                    give_up(&conn, id, led);
                    return Err(raise(K::Transient, 0, CompletionStatus::No, || {
                        Cause::new(Phase::Forward)
                            .with_peer(&conn.ep)
                            .with_operation(self.op)
                            .with_detail(format_args!(
                                "re-sending needs other code sets or GIOP version than {} (not re-marshaled)",
                                old.ep
                            ))
                    }));
                }
            }
        }
        w.set_codesets(cs);
        // The common case (GIOP 1.2, no CodeSets context, not a re-send)
        // copies the header encoded for the last such call.
        let cacheable = !ctx && align.is_none() && target.version == GiopVersion::V1_2;
        if cacheable {
            if let Some(f) = target.write_header(self.op, self.st.twoway, id, w) {
                self.finish_prepare(w, f, id, cs, target.version, conn, led);
                return Ok(());
            }
        }
        let ctx_data;
        let contexts_arr;
        let contexts = if ctx {
            ctx_data = CodeSetContext {
                char_data: cs.char.id(),
                wchar_data: cs.wchar.unwrap_or(peregrine_cdr::WcharCodeSet::Utf16).id(),
            }
            .encode_data(w.order());
            contexts_arr = [ServiceContext {
                id: peregrine_giop::service_context::ids::CODE_SETS,
                data: &ctx_data,
            }];
            ServiceContexts::from_slice(&contexts_arr)
        } else {
            ServiceContexts::EMPTY
        };
        let flags = if self.st.twoway {
            ResponseFlags::SyncWithTarget
        } else {
            ResponseFlags::None
        };
        let pad = [0u8; 8];
        let mut principal: &[u8] = &[];
        let mut led = led;
        let pending = loop {
            let h = RequestHeader {
                request_id: id,
                response_flags: flags,
                target: TargetAddress::Key(&target.key),
                operation: self.op,
                service_contexts: contexts,
                requesting_principal: principal,
            };
            let p = encode_request(w, version, &h)
                .and_then(|p| Framing::of(p, w))
                .map_err(|e| {
                    give_up(&conn, id, std::mem::take(&mut led));
                    raise(K::Marshal, 0, CompletionStatus::No, || {
                        Cause::new(Phase::Encode)
                            .with_peer(&conn.ep)
                            .with_operation(self.op)
                            .with_detail(format_args!("request header: {e}"))
                    })
                })?;
            match align {
                Some(a) if version < GiopVersion::V1_2 && w.len() % 8 != a % 8 => {
                    // Pad with the (ignored) requesting principal.
                    let n = (a % 8 + 8 - w.len() % 8) % 8;
                    principal = &pad[..n];
                }
                _ => break p,
            }
        };
        if cacheable {
            target.store_header(self.op, self.st.twoway, w, pending);
        }
        self.finish_prepare(w, pending, id, cs, version, conn, led);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn finish_prepare(
        &mut self,
        w: &Writer,
        pending: Framing,
        id: u32,
        cs: CodeSets,
        version: GiopVersion,
        conn: Arc<ClientConn>,
        led: bool,
    ) {
        self.st.led = led;
        self.st.args_start = w.len();
        self.st.pending = Some(pending);
        self.st.request_id = id;
        self.st.codesets = cs;
        self.st.version = version;
        self.st.conn = Some(conn);
    }

    /// Re-binds (after a forward or a CloseConnection) and rewrites the
    /// header in front of the already-encoded arguments.
    fn relocate(&mut self, w: &mut Writer) -> Result<(), SystemException> {
        // A request without arguments was truncated to its header fields
        // (`Framing::finish`): nothing to keep then.
        let args = w
            .as_slice()
            .get(self.st.args_start..)
            .unwrap_or_default()
            .to_vec();
        let align = self.st.args_start % 8;
        self.prepare(w, Some(align))?;
        w.write_bytes(&args);
        Ok(())
    }

    #[inline(always)]
    fn finish_message(&mut self, w: &mut Writer) -> Result<(), SystemException> {
        if let Some(p) = self.st.pending.take() {
            p.finish(w, self.tail.len()).map_err(|e| {
                raise(K::Marshal, 0, CompletionStatus::No, || {
                    self.cause(Phase::Encode).with_detail(e)
                })
            })?;
        }
        Ok(())
    }

    /// Sends and (for twoway) waits, following forwards and re-sending
    /// when the server provably did not process the request.
    fn run(&mut self, w: &mut Writer) -> Result<Option<ReplyMsg>, SystemException> {
        loop {
            self.send(w)?;
            if !self.st.twoway {
                return Ok(None);
            }
            if let Some(reply) = self.await_reply(w)? {
                return Ok(Some(reply));
            }
        }
    }

    /// Sends the prepared request (`w` holds it), re-sending on a fresh
    /// connection when the write fails.
    #[inline(always)]
    fn send(&mut self, w: &mut Writer) -> Result<(), SystemException> {
        loop {
            let pending = self.st.pending;
            self.st.sent_pending = pending;
            if !self.tail.is_empty() {
                let limit = self.st.conn.as_ref().expect("prepared").fragment_limit();
                if w.len() + self.tail.len() > limit {
                    // Fragmenting needs the message in one piece: the tail
                    // joins the arguments (and is re-sent with them).
                    w.write_bytes(self.tail);
                    self.tail = &[];
                }
            }
            self.finish_message(w)?;
            let conn = self.st.conn.as_ref().expect("prepared");
            match conn.send(w.as_slice(), self.tail) {
                // The write may have blocked (a contended lock, or a
                // message large enough to fill the socket buffer): the
                // reply wait counts from now, not from the call's start.
                Ok(waited) if waited || w.len() + self.tail.len() > LONG_WRITE => {
                    self.st.clock = Instant::now()
                }
                Ok(_) => {}
                Err(e) => {
                    if self.st.resends < MAX_RESENDS {
                        trace::resend(&conn.ep, self.op, "the write failed");
                        self.restore_pending(pending);
                        self.resend(w)?;
                        continue;
                    }
                    let e = raise(K::CommFailure, 0, CompletionStatus::No, || {
                        self.cause(Phase::Send).with_io(e)
                    });
                    let e = self.failed(e);
                    self.st.abandon();
                    return Err(e);
                }
            }
            return Ok(());
        }
    }

    /// After a failed write (the connection marked failed): gives the
    /// connection up and rewrites the request for another, ready for
    /// [`Call::send`].
    fn resend(&mut self, w: &mut Writer) -> Result<(), SystemException> {
        self.st.abandon();
        self.st.resends += 1;
        self.relocate(w)
    }

    /// Waits for the reply to the request just sent. `Ok(None)` means the
    /// request was re-targeted (forward, orderly close) and `w` holds it
    /// again, ready for [`Call::send`].
    #[inline(always)]
    fn await_reply(&mut self, w: &mut Writer) -> Result<Option<ReplyMsg>, SystemException> {
        // The reply keeps the connection (one count, moved into it).
        let conn = self.st.conn.clone().expect("sent");
        let (id, deadline) = (self.st.request_id, self.st.deadline());
        // Nothing waited since the call started: its whole timeout is left.
        let left = (self.st.clock == self.st.started).then_some(self.st.timeout);
        let got = if std::mem::take(&mut self.st.led) {
            conn.lead_with(id, deadline, self.st.clock, left)
                .map_err(|(_, e)| e)
        } else {
            conn.wait(id, deadline.instant(), None)
        };
        self.on_arrival(w, conn, got)
    }

    /// What [`Call::await_reply`] makes of what arrived on `conn` (or
    /// why nothing did).
    #[inline(always)]
    fn on_arrival(
        &mut self,
        w: &mut Writer,
        conn: Arc<ClientConn>,
        got: Result<Arrived, WaitError>,
    ) -> Result<Option<ReplyMsg>, SystemException> {
        let pending = self.st.sent_pending;
        let arrived = match got {
            Ok(a) => a,
            Err(WaitError::TimedOut) => {
                return Err(
                    self.failed(raise(K::Timeout, 0, CompletionStatus::Maybe, || {
                        Cause::new(Phase::Receive)
                            .with_peer(&conn.ep)
                            .with_operation(self.op)
                            .with_detail(format_args!(
                                "deadline of {:?} expired waiting for the reply",
                                self.st.timeout
                            ))
                    })),
                )
            }
            Err(WaitError::Closed(Closed::Orderly)) if self.st.resends < MAX_RESENDS => {
                trace::resend(&conn.ep, self.op, "the server closed the connection");
                self.st.resends += 1;
                self.restore_pending(pending);
                self.relocate(w)?;
                return Ok(None);
            }
            Err(WaitError::Closed(c)) => {
                let why = match c {
                    Closed::Orderly => "the server closed the connection".to_string(),
                    Closed::Broken(s) => s,
                };
                return Err(
                    self.failed(raise(K::CommFailure, 0, CompletionStatus::Maybe, || {
                        Cause::new(Phase::Receive)
                            .with_peer(&conn.ep)
                            .with_operation(self.op)
                            .with_detail(why)
                    })),
                );
            }
        };
        let reply = ReplyMsg::new(Held::new(conn, arrived), self.st.codesets)
            .map_err(|e| e.with_operation(self.op))?;
        let conn = &reply.held.conn;
        if trace::on(Level::TRACE) {
            trace::reply(&conn.ep, self.op, self.st.request_id);
        }
        match reply.status {
            ReplyStatus::NoException | ReplyStatus::UserException => Ok(Some(reply)),
            ReplyStatus::SystemException => {
                // The closure is not redundant: `decode` alone is not
                // general over the reader's lifetime.
                #[allow(clippy::redundant_closure)]
                let e = reply
                    .with_reader(|r| <SystemException as peregrine_cdr::Decode>::decode(r))
                    .map_err(|e| {
                        raise(K::Marshal, 0, CompletionStatus::Maybe, || {
                            Cause::new(Phase::Decode)
                                .with_peer(&conn.ep)
                                .with_operation(self.op)
                                .with_detail(format_args!("malformed system exception: {e}"))
                        })
                    })?;
                trace::exception(&conn.ep, self.op, &e);
                Err(raised_by_peer(e, &conn.ep, self.op))
            }
            ReplyStatus::LocationForward | ReplyStatus::LocationForwardPerm => {
                #[allow(clippy::redundant_closure)] // As above.
                let ior = reply.with_reader(|r| <Ior as peregrine_cdr::Decode>::decode(r));
                let ior = ior.map_err(|e| {
                    raise(K::Marshal, 0, CompletionStatus::No, || {
                        Cause::new(Phase::Decode)
                            .with_peer(&conn.ep)
                            .with_operation(self.op)
                            .with_detail(format_args!("malformed LOCATION_FORWARD: {e}"))
                    })
                });
                trace::forward(&conn.ep, self.op);
                drop(reply);
                let ior = ior?;
                self.st.forwards += 1;
                if self.st.forwards > MAX_FORWARDS {
                    return Err(raise(K::Transient, 0, CompletionStatus::No, || {
                        Cause::new(Phase::Forward)
                            .with_operation(self.op)
                            .with_detail(format_args!("more than {MAX_FORWARDS} LOCATION_FORWARDs"))
                    }));
                }
                let t = Target::from_ior(&ior, true, self.obj.inner.orb.inner().config.max_giop)?;
                self.obj.inner.set_target(Some(Arc::new(t)));
                self.restore_pending(pending);
                self.relocate(w)?;
                Ok(None)
            }
            ReplyStatus::NeedsAddressingMode => {
                Err(raise(K::NoImplement, 0, CompletionStatus::No, || {
                    Cause::new(Phase::Reply)
                        .with_peer(&conn.ep)
                        .with_operation(self.op)
                        .with_detail("needs an addressing mode other than KeyAddr")
                }))
            }
        }
    }

    /// `finish` consumed the pending marker; a re-send writes a new header,
    /// so only the body start matters (kept for the re-marshal check).
    fn restore_pending(&mut self, p: Option<Framing>) {
        self.st.pending = p;
    }
}

/// The exception for CDR error `e` (see `SystemException::from_cdr`),
/// with `cause` and `e` as its detail.
#[cold]
#[inline(never)]
fn cdr_to_sys(
    e: &peregrine_cdr::CdrError,
    completed: CompletionStatus,
    cause: impl FnOnce() -> Cause,
) -> SystemException {
    SystemException::from_cdr(e, completed).with_cause(cause().with_detail(e))
}

/// `e`, raised by the peer, with the client's side of the story: the
/// reply phase, the peer and the operation (the wire carries none).
#[cold]
#[inline(never)]
fn raised_by_peer(e: SystemException, peer: &Endpoint, op: &str) -> SystemException {
    e.with_cause(Cause::new(Phase::Reply).with_peer(peer).with_operation(op))
}

/// Why a connect was not even tried: the endpoint failed recently. The
/// cause carries the last attempt's I/O error.
#[cold]
#[inline(never)]
fn backoff_cause(
    ep: &Endpoint,
    left: Duration,
    failures: u32,
    last: Option<Arc<std::io::Error>>,
) -> Cause {
    let c = Cause::new(Phase::Connect)
        .with_peer(ep)
        .with_detail(format_args!(
            "endpoint in backoff for {left:?} after {failures} failure(s)"
        ));
    match last {
        Some(io) => c.with_shared_io(io),
        None => c,
    }
}

pub(crate) fn invoke<T, E: From<SystemException>>(
    obj: &ObjectRef,
    op: &str,
    encode_args: impl EncodeArgs,
    decode_result: impl DecodeResult<T>,
    decode_user_exception: impl DecodeUserException<E>,
) -> Result<T, E> {
    invoke_with_tail(
        obj,
        op,
        encode_args,
        None,
        decode_result,
        decode_user_exception,
    )
}

/// The results or user exception of a NO_EXCEPTION / USER_EXCEPTION reply.
fn decode_reply<T, E: From<SystemException>>(
    reply: ReplyMsg,
    op: &str,
    decode_result: impl DecodeResult<T>,
    decode_user_exception: impl DecodeUserException<E>,
) -> Result<T, E> {
    let no_exception = reply.status == ReplyStatus::NoException;
    reply.finish(|r, conn| {
        decode_body(
            r,
            &conn.ep,
            no_exception,
            op,
            decode_result,
            decode_user_exception,
        )
    })
}

/// [`decode_reply`] on the body's reader `r`.
fn decode_body<T, E: From<SystemException>>(
    r: &mut Reader<'_>,
    peer: &Endpoint,
    no_exception: bool,
    op: &str,
    decode_result: impl DecodeResult<T>,
    decode_user_exception: impl DecodeUserException<E>,
) -> Result<T, E> {
    if no_exception {
        return decode_result(r).map_err(|e| {
            E::from(cdr_to_sys(&e, CompletionStatus::Yes, || {
                Cause::new(Phase::Decode).with_peer(peer).with_operation(op)
            }))
        });
    }
    // USER_EXCEPTION: repository id, then members.
    let id = match r.read_string_bytes().map(std::str::from_utf8) {
        Ok(Ok(id)) => id,
        _ => {
            return Err(E::from(raise(K::Marshal, 0, CompletionStatus::Yes, || {
                Cause::new(Phase::Decode)
                    .with_peer(peer)
                    .with_operation(op)
                    .with_detail("user exception id")
            })))
        }
    };
    match decode_user_exception(id, r) {
        Some(Ok(e)) => Err(e),
        Some(Err(e)) => Err(E::from(cdr_to_sys(&e, CompletionStatus::Yes, || {
            Cause::new(Phase::Decode)
                .with_peer(peer)
                .with_operation(op)
                .with_detail(format_args!("user exception {id}"))
        }))),
        None => Err(E::from(raise(
            K::Unknown,
            peregrine_giop::system_exception::minor::UNKNOWN_USER_EXCEPTION,
            CompletionStatus::Yes,
            || {
                Cause::new(Phase::Reply)
                    .with_peer(peer)
                    .with_operation(op)
                    .with_detail(format_args!("user exception {id}, unknown to the stub"))
            },
        ))),
    }
}

/// Sends a request (`w` is the thread's writer): the arguments, then
/// `tail` if any (see [`encode_tail`]); a twoway waits for its reply,
/// leading its connection (see [`ClientConn::begin`]).
///
/// The common case takes the lean path ([`fast_call`]: [`fast_begin`],
/// the arguments, [`fast_finish`], in one function that is not generic:
/// the encoder is called through a `dyn` reference), so stubs share it
/// and only build the encoder; anything else goes through `Call`.
#[inline(always)]
fn send_request<'a>(
    obj: &'a ObjectRef,
    op: &'a str,
    twoway: bool,
    w: &mut Writer,
    encode_args: impl EncodeArgs,
    tail: Option<&'a dyn peregrine_cdr::TailSeq>,
) -> Result<Option<ReplyMsg>, SystemException> {
    let mut args = Some(encode_args);
    let mut encode = |w: &mut Writer| -> peregrine_cdr::Result<&'a [u8]> {
        // Called at most once, and only when the lean path takes the
        // call (then `args` is not needed again).
        let Some(encode_args) = args.take() else {
            unreachable!("the lean path encodes once")
        };
        encode_args(w)?;
        match tail {
            Some(t) => encode_tail(w, t),
            None => Ok(&[][..]),
        }
    };
    // Written by `fast_call` only when the outcome is not `Ok(None)` (a
    // oneway sent): see there.
    let mut done = Ok(None);
    // `twoway` is a constant here once this is inlined into a stub.
    let taken = if twoway {
        fast_twoway(obj, op, w, &mut encode, &mut done)
    } else {
        fast_oneway(obj, op, w, &mut encode, &mut done)
    };
    if taken {
        return done;
    }
    // Declined before encoding: the arguments are still here.
    let Some(encode_args) = args else {
        unreachable!("the lean path declined after encoding")
    };
    general_request(obj, op, twoway, w, encode_args, tail)
}

/// The lean call: `false` when it does not apply (see [`fast_begin`];
/// `encode` was not called then), else `true` with the call's outcome in
/// `done`, which the caller set to `Ok(None)` (what a oneway gives) and
/// which is only written when the outcome is something else.
///
/// One function for the whole call (`fast_begin` and `fast_finish`
/// inlined), and its outcome left where the caller has it: a value
/// returned through memory and copied right away, with wide loads of
/// what narrower stores had just written, stalls (store forwarding
/// fails): a `Fast` returned by `fast_begin` and passed to `fast_finish`
/// cost ~27 % of the oneway stub's samples, an outcome returned by value
/// as much. The encoder's indirect call costs less.
#[inline(always)]
fn fast_call<'a>(
    obj: &'a ObjectRef,
    op: &'a str,
    twoway: bool,
    w: &mut Writer,
    encode: &mut dyn FnMut(&mut Writer) -> peregrine_cdr::Result<&'a [u8]>,
    done: &mut Result<Option<ReplyMsg>, SystemException>,
) -> bool {
    let Some(fast) = fast_begin(obj, op, twoway, w) else {
        return false;
    };
    // The one event on the lean path: its cost while nobody listens is
    // the level check (docs/PERFORMANCE.md, step 38).
    if trace::on(Level::DEBUG) {
        trace::request(&fast.conn.ep, op, fast.id, twoway);
    }
    // A panicking encoder must not leave the connection's claim.
    let guard = EncodeGuard(&fast);
    let encoded = encode(w);
    // It did not panic (the guard owns nothing: forgetting it leaks
    // nothing).
    std::mem::forget(guard);
    match fast_finish(fast, obj, op, w, encoded) {
        Ok(None) => {}
        other => *done = other,
    }
    true
}

/// [`fast_call`] for a oneway: a function of its own, so that the
/// twoway's paths (leading, waiting, the reply) cost it neither code nor
/// stack spills.
#[inline(never)]
fn fast_oneway<'a>(
    obj: &'a ObjectRef,
    op: &'a str,
    w: &mut Writer,
    encode: &mut dyn FnMut(&mut Writer) -> peregrine_cdr::Result<&'a [u8]>,
    done: &mut Result<Option<ReplyMsg>, SystemException>,
) -> bool {
    fast_call(obj, op, false, w, encode, done)
}

/// [`fast_call`] for a twoway.
#[inline(never)]
fn fast_twoway<'a>(
    obj: &'a ObjectRef,
    op: &'a str,
    w: &mut Writer,
    encode: &mut dyn FnMut(&mut Writer) -> peregrine_cdr::Result<&'a [u8]>,
    done: &mut Result<Option<ReplyMsg>, SystemException>,
) -> bool {
    fast_call(obj, op, true, w, encode, done)
}

/// [`send_request`] through `Call`: binds and connects as needed, encodes
/// headers that are not cached.
#[inline(never)]
fn general_request<'a>(
    obj: &'a ObjectRef,
    op: &'a str,
    twoway: bool,
    w: &mut Writer,
    encode_args: impl EncodeArgs,
    tail: Option<&'a dyn peregrine_cdr::TailSeq>,
) -> Result<Option<ReplyMsg>, SystemException> {
    let mut call = Call::new(obj, op, twoway, twoway);
    let mut gathered: &[u8] = &[];
    call.start(w, |w| {
        encode_args(w)?;
        if let Some(t) = tail {
            gathered = encode_tail(w, t)?;
        }
        Ok(())
    })?;
    call.tail = gathered;
    call.run(w)
}

/// Hands a fast-path call's claim on its connection back if the call
/// ends (an error, a panicking encoder) before it is done with it.
struct GiveUp<'c> {
    conn: &'c ClientConn,
    id: u32,
    led: bool,
    /// A twoway (a oneway holds no claim).
    twoway: bool,
    armed: bool,
}

impl Drop for GiveUp<'_> {
    fn drop(&mut self) {
        if self.armed && self.twoway {
            give_up(self.conn, self.id, self.led);
        }
    }
}

/// A call on the lean path (see [`fast_begin`]) between its header and
/// its arguments.
struct Fast {
    conn: Arc<ClientConn>,
    /// A oneway's connection was taken from the thread's cache: where it
    /// goes back to when the call is done with it.
    home: Option<thread_conns::Home>,
    id: u32,
    /// The call leads the connection.
    led: bool,
    twoway: bool,
    cs: CodeSets,
    framing: Framing,
    /// When a twoway started (its deadline counts from it). A oneway
    /// reads no precise clock: only its idle check needs the time, and
    /// that takes the coarse one.
    started: Option<Instant>,
}

/// Gives a lean call's claim on its connection up if the stub's encoder
/// panics (forgotten when it returns): one pointer to set up, where a
/// `GiveUp` copied five fields (~30 instructions a call).
struct EncodeGuard<'f>(&'f Fast);

impl Drop for EncodeGuard<'_> {
    fn drop(&mut self) {
        let f = self.0;
        give_up_if(f.twoway, &f.conn, f.id, f.led);
    }
}

/// The route's connection when the thread's cache has none for it (a
/// miss: first use, a call made from inside another's encoder, a route
/// evicted or a connection that closed), remembered in the cache.
#[cold]
#[inline(never)]
fn route_conn(route: &Arc<Route>) -> Option<Arc<ClientConn>> {
    let conn = lock(&route.conn).clone()?;
    thread_conns::remember(route, &conn);
    Some(conn)
}

/// Hands a oneway's connection back to the thread's cache (a twoway's
/// count is dropped).
#[inline(always)]
fn put_back(conn: Arc<ClientConn>, home: Option<thread_conns::Home>) {
    if let Some(home) = home {
        thread_conns::put(conn, home);
    }
}

/// The start of the common call, lean (principle: optimize for the
/// common case): a reference bound to a GIOP 1.2 route with a connection
/// up, a request header cached for the operation and no CodeSets context
/// to send. Writes the header into `w` (arguments go after it); `None`
/// when that is not the case: the general path (`Call`) then binds,
/// connects and encodes headers.
///
/// The connection comes from the thread's cache (no route lock, no
/// reference count); a oneway whose connection needs nothing checked
/// takes its request id without the connection's state lock
/// ([`ClientConn::begin_oneway`]).
#[inline(always)]
fn fast_begin(obj: &ObjectRef, op: &str, twoway: bool, w: &mut Writer) -> Option<Fast> {
    let inner = &obj.inner;
    if inner.orb.is_shut_down() {
        return None;
    }
    let target = inner.target().ok()?;
    if target.version != GiopVersion::V1_2 {
        return None;
    }
    let (conn, home) = if twoway {
        // The reply keeps a count of the connection: a clone, the entry
        // stays in the cache.
        let conn = match thread_conns::cloned(&target.route) {
            Some(c) => c,
            None => route_conn(&target.route)?,
        };
        (conn, None)
    } else {
        match thread_conns::take(&target.route) {
            Some((conn, home)) => (conn, Some(home)),
            // A miss: the route's connection, with a count (rare).
            None => (route_conn(&target.route)?, None),
        }
    };
    let (id, cs, led, started) = if twoway {
        let started = Instant::now();
        match conn.begin(&target, None, true, true, Now::Precise(started)) {
            Ok(Begun {
                id,
                cs,
                ctx: false,
                led,
            }) => (id, cs, led, Some(started)),
            Ok(Begun { id, led, .. }) => {
                give_up(&conn, id, led);
                return None;
            }
            // Closed: the general path drops the connection and binds
            // anew.
            Err(_) => return None,
        }
    } else {
        let now = coarse_clock::now_ns();
        match conn.begin_oneway(&target, now) {
            Some((id, cs)) => (id, cs, false, None),
            None => match conn.begin(&target, None, false, false, Now::Coarse(now)) {
                Ok(Begun {
                    id, cs, ctx: false, ..
                }) => (id, cs, false, None),
                _ => {
                    put_back(conn, home);
                    return None;
                }
            },
        }
    };
    w.set_codesets(cs);
    let Some(framing) = target.write_header(op, twoway, id, w) else {
        give_up_if(twoway, &conn, id, led);
        put_back(conn, home);
        return None;
    };
    Some(Fast {
        conn,
        home,
        id,
        led,
        twoway,
        cs,
        framing,
        started,
    })
}

/// `give_up` for a twoway (a oneway holds no claim).
fn give_up_if(twoway: bool, conn: &ClientConn, id: u32, led: bool) {
    if twoway {
        give_up(conn, id, led);
    }
}

/// The rest of the lean call once the arguments are `encoded` (with the
/// tail to send after them): sends and, for a twoway, reads the reply.
///
/// A synchronous twoway that finds nobody reading the connection reads
/// its own reply and returns it still leading (decoded in place, as on
/// the general path). Anything unusual (a failed write, a reply other
/// than NO_EXCEPTION/USER_EXCEPTION with the fixed header, a timeout, a
/// closed connection, a follower's wait) continues on the general path
/// from where this one stands, so forwards, re-sends and errors behave
/// the same.
#[inline(always)]
fn fast_finish<'a>(
    fast: Fast,
    obj: &'a ObjectRef,
    op: &'a str,
    w: &mut Writer,
    encoded: peregrine_cdr::Result<&'a [u8]>,
) -> Result<Option<ReplyMsg>, SystemException> {
    let Fast {
        conn,
        home,
        id,
        led,
        twoway,
        cs,
        framing,
        started,
    } = fast;
    let inner = &obj.inner;
    let guard = GiveUp {
        conn: &conn,
        id,
        led,
        twoway,
        armed: true,
    };
    let mut tail = match encoded {
        Ok(t) => t,
        Err(e) => {
            let e = cdr_to_sys(&e, CompletionStatus::No, || {
                Cause::new(Phase::Encode)
                    .with_peer(&conn.ep)
                    .with_operation(op)
            });
            drop(guard);
            put_back(conn, home);
            return Err(e);
        }
    };
    if !tail.is_empty() && w.len() + tail.len() > conn.fragment_limit() {
        // Fragmenting needs the message in one piece (as `Call::send`).
        w.write_bytes(tail);
        tail = &[];
    }
    if let Err(e) = framing.finish(w, tail.len()) {
        let e = raise(K::Marshal, 0, CompletionStatus::No, || {
            Cause::new(Phase::Encode)
                .with_peer(&conn.ep)
                .with_operation(op)
                .with_detail(e)
        });
        drop(guard);
        put_back(conn, home);
        return Err(e);
    }
    let sent = conn.send(w.as_slice(), tail);
    std::mem::forget(guard);
    let general = |led, started: Option<Instant>, clock: Option<Instant>, conn| {
        // A oneway has no clock reading yet: its (re-)send's deadline
        // counts from here.
        let started = started.unwrap_or_else(Instant::now);
        Call {
            obj,
            op,
            tail,
            st: CallState {
                twoway,
                lead: twoway,
                started,
                clock: clock.unwrap_or(started),
                timeout: inner
                    .timeout
                    .unwrap_or(inner.orb.inner().config.call_timeout),
                led,
                conn: Some(conn),
                request_id: id,
                codesets: cs,
                version: GiopVersion::V1_2,
                args_start: framing.body_start,
                pending: Some(framing),
                sent_pending: Some(framing),
                forwards: 0,
                resends: 0,
            },
        }
    };
    let Some(started) = started else {
        // A oneway.
        if sent.is_err() {
            // The connection is marked failed: re-send on another.
            // (`put_back` drops the failed connection from the cache.)
            let mut call = general(false, None, None, conn.clone());
            put_back(conn, home);
            return call.resend(w).and_then(|()| call.run(w));
        }
        put_back(conn, home);
        return Ok(None);
    };
    let timeout = inner
        .timeout
        .unwrap_or(inner.orb.inner().config.call_timeout);
    let mut clock = started;
    match sent {
        Ok(waited) if waited || w.len() + tail.len() > LONG_WRITE => clock = Instant::now(),
        Ok(_) => {}
        Err(_) => {
            // The connection is marked failed: re-send on another.
            let mut call = general(led, Some(started), Some(clock), conn);
            return call.resend(w).and_then(|()| call.run(w));
        }
    }
    let deadline = Deadline {
        from: started,
        after: timeout,
    };
    let left = (clock == started).then_some(timeout);
    let got = if led {
        // SAFETY: `begin` made this call the leader (`led`); leadership
        // is handed back by `after_lead`, the reply's release or, if this
        // thread unwinds, the reply's drop; the borrow ends with `lead`.
        let got = conn.lead(unsafe { conn.rx.get() }, id, deadline, clock, left);
        if let Lead::Mine(Got::InPlace(len, Some(head))) = got {
            if matches!(
                head.status,
                ReplyStatus::NoException | ReplyStatus::UserException
            ) {
                let held = Held::new(
                    conn,
                    Arrived {
                        own: None,
                        len,
                        head: Some(head),
                    },
                );
                return Ok(Some(ReplyMsg::fast(held, cs, head)));
            }
        }
        conn.after_lead(got).map_err(|(_, e)| e)
    } else {
        conn.wait(id, deadline.instant(), None)
    };
    let mut call = general(false, Some(started), Some(clock), conn.clone());
    let arrival = call.on_arrival(w, conn, got);
    match arrival {
        Ok(None) => call.run(w),
        done => done,
    }
}

/// Tails shorter than this are copied into the writer: a gathered write
/// costs an extra I/O vector (and the kernel's walk of it), which only a
/// copy of this size outweighs (docs/PERFORMANCE.md, step 25).
pub(crate) const GATHER_MIN: usize = 8 * 1024;

/// Encodes `tail` after the other arguments: a large one is left in the
/// caller's memory and returned (to become [`Call::tail`]), a small one
/// copied into `w` (an empty result).
fn encode_tail<'t>(
    w: &mut Writer,
    tail: &'t dyn peregrine_cdr::TailSeq,
) -> peregrine_cdr::Result<&'t [u8]> {
    if tail.byte_len() >= GATHER_MIN {
        tail.encode_split(w)
    } else {
        tail.encode_all(w).map(|()| &[][..])
    }
}

/// [`invoke`] whose last `in` argument, `tail` (if any), is encoded after
/// what `encode_args` writes and, when large, sent from the caller's
/// memory.
#[inline(always)]
pub(crate) fn invoke_with_tail<T, E: From<SystemException>>(
    obj: &ObjectRef,
    op: &str,
    encode_args: impl EncodeArgs,
    tail: Option<&dyn peregrine_cdr::TailSeq>,
    decode_result: impl DecodeResult<T>,
    decode_user_exception: impl DecodeUserException<E>,
) -> Result<T, E> {
    let mut w = take_writer();
    let res = send_request(obj, op, true, &mut w, encode_args, tail);
    put_writer(w);
    let reply = res?.expect("twoway calls return a reply");
    decode_reply(reply, op, decode_result, decode_user_exception)
}

/// [`invoke_oneway`] with a last `in` argument as in
/// [`invoke_with_tail`]. `SYNC_NONE` copies it (the caller returns before
/// the message is written).
#[inline(always)]
pub(crate) fn invoke_oneway_with_tail(
    obj: &ObjectRef,
    op: &str,
    encode_args: impl EncodeArgs,
    tail: Option<&dyn peregrine_cdr::TailSeq>,
) -> Result<(), SystemException> {
    let mut w = take_writer();
    let res = match obj.inner.sync {
        SyncScope::Transport => send_request(obj, op, false, &mut w, encode_args, tail).map(|_| ()),
        SyncScope::None => queue_oneway(obj, op, &mut w, |w| {
            encode_args(w)?;
            tail.map_or(Ok(()), |t| t.encode_all(w))
        }),
    };
    put_writer(w);
    res
}

pub(crate) fn invoke_oneway(
    obj: &ObjectRef,
    op: &str,
    encode_args: impl EncodeArgs,
) -> Result<(), SystemException> {
    invoke_oneway_with_tail(obj, op, encode_args, None)
}

/// A `SYNC_NONE` oneway: encoded by the caller (so its arguments need not
/// outlive the call), then written by the process's oneway writer thread
/// while the caller goes on. Oneways queued by one thread to one
/// connection keep their order; the queue is bounded, so a caller that
/// outruns the network waits rather than growing memory. A message whose
/// connection fails before it is written is lost, which `SYNC_NONE`
/// allows (use `SyncScope::Transport` to learn of write failures).
fn queue_oneway(
    obj: &ObjectRef,
    op: &str,
    w: &mut Writer,
    encode_args: impl EncodeArgs,
) -> Result<(), SystemException> {
    let mut call = Call::new(obj, op, false, false);
    call.start(w, encode_args)?;
    call.finish_message(w)?;
    let conn = call.st.conn.clone().expect("prepared");
    let msg = Outgoing {
        conn,
        bytes: w.as_slice().to_vec(),
    };
    oneway_writer().send(msg).map_err(|_| {
        raise(K::Transient, 0, CompletionStatus::No, || {
            Cause::new(Phase::Send)
                .with_operation(op)
                .with_detail("the oneway writer thread is gone")
        })
    })
}

/// A message for the oneway writer thread.
struct Outgoing {
    conn: Arc<ClientConn>,
    bytes: Vec<u8>,
}

/// Messages the oneway writer may hold before `SYNC_NONE` callers wait.
const ONEWAY_QUEUE: usize = 1024;

/// The queue of the process's oneway writer thread, started on first use.
fn oneway_writer() -> &'static std::sync::mpsc::SyncSender<Outgoing> {
    static WRITER: std::sync::OnceLock<std::sync::mpsc::SyncSender<Outgoing>> =
        std::sync::OnceLock::new();
    WRITER.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Outgoing>(ONEWAY_QUEUE);
        std::thread::Builder::new()
            .name("peregrine-oneway".into())
            .spawn(move || {
                for m in rx {
                    // A failed write marks the connection failed; nobody
                    // waits for a SYNC_NONE oneway, so there is no one to
                    // tell.
                    let _ = m.conn.send(&m.bytes, &[]);
                }
            })
            .expect("spawn the oneway writer thread");
        tx
    })
}

/// A twoway request sent without waiting for its reply (CORBA's
/// deferred synchronous invocation, `send_deferred`).
///
/// The request is on the wire when [`ObjectRef::send_deferred`] returns;
/// [`DeferredCall::poll_response`] tells whether the reply can be had
/// without blocking and [`DeferredCall::get_response`] collects it (waiting
/// until the call's deadline if need be). A reply that arrives while
/// another thread reads the connection is kept for this call. Dropping a
/// `DeferredCall` abandons its reply.
pub struct DeferredCall {
    obj: ObjectRef,
    op: String,
    /// The encoded request, kept to re-send after a forward or an
    /// orderly close.
    w: Writer,
    st: Option<CallState>,
}

impl std::fmt::Debug for DeferredCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeferredCall")
            .field("op", &self.op)
            .field("request_id", &self.st.as_ref().map(|s| s.request_id))
            .finish()
    }
}

impl DeferredCall {
    /// The operation name.
    pub fn operation(&self) -> &str {
        &self.op
    }

    /// True when [`DeferredCall::get_response`] would not block: the reply
    /// has arrived or the call has failed (connection gone, deadline
    /// passed).
    pub fn poll_response(&self) -> bool {
        let Some(st) = &self.st else { return true };
        if Instant::now() >= st.deadline().instant() {
            return true;
        }
        st.conn.as_ref().map_or(true, |c| c.poll(st.request_id))
    }

    /// Waits for the reply (until the call's deadline) and decodes it as
    /// [`ObjectRef::invoke`] would. Forwards and orderly closes re-send
    /// the request as for a synchronous call.
    pub fn get_response<T, E: From<SystemException>>(
        mut self,
        decode_result: impl DecodeResult<T>,
        decode_user_exception: impl DecodeUserException<E>,
    ) -> Result<T, E> {
        let st = self.st.take().expect("a DeferredCall is consumed once");
        let mut w = std::mem::take(&mut self.w);
        let mut call = Call {
            obj: &self.obj,
            op: &self.op,
            st,
            tail: &[],
        };
        let reply = loop {
            match call.await_reply(&mut w)? {
                Some(reply) => break reply,
                None => call.send(&mut w)?,
            }
        };
        decode_reply(reply, &self.op, decode_result, decode_user_exception)
    }
}

impl Drop for DeferredCall {
    fn drop(&mut self) {
        if let Some(st) = &self.st {
            if let Some(c) = &st.conn {
                c.forget(st.request_id);
            }
        }
    }
}

pub(crate) fn send_deferred(
    obj: &ObjectRef,
    op: &str,
    encode_args: impl EncodeArgs,
) -> Result<DeferredCall, SystemException> {
    // The writer travels with the call (a re-send needs the arguments), so
    // it is not the thread's reusable one.
    let mut w = Writer::new(ByteOrder::NATIVE);
    let mut call = Call::new(obj, op, true, false);
    call.start(&mut w, encode_args)?;
    call.send(&mut w)?;
    let st = call.st;
    Ok(DeferredCall {
        obj: obj.clone(),
        op: op.to_owned(),
        w,
        st: Some(st),
    })
}

/// Number of open client connections of `orb` (tests, diagnostics).
pub(crate) fn open_connections(orb: &Orb) -> usize {
    orb.inner().cache.open_connections()
}

/// Sends a LocateRequest for `obj` and waits for the LocateReply:
/// `OBJECT_HERE` is `true`, `UNKNOWN_OBJECT` `false`; `OBJECT_FORWARD`
/// re-targets the reference (as `LOCATION_FORWARD` does) and asks again.
pub(crate) fn locate(obj: &ObjectRef) -> Result<bool, SystemException> {
    /// A LocateRequest's cause: its "operation" is the message.
    #[cold]
    fn locate_cause(phase: Phase, peer: &Endpoint) -> Cause {
        Cause::new(phase)
            .with_peer(peer)
            .with_operation("LocateRequest")
    }
    let inner = &obj.inner;
    if inner.orb.is_shut_down() {
        return Err(raise(
            K::BadInvOrder,
            peregrine_giop::system_exception::minor::BAD_INV_ORDER_ORB_HAS_SHUTDOWN,
            CompletionStatus::No,
            || {
                Cause::new(Phase::Local)
                    .with_operation("LocateRequest")
                    .with_detail("the ORB has shut down")
            },
        ));
    }
    let timeout = inner
        .timeout
        .unwrap_or(inner.orb.inner().config.call_timeout);
    let deadline = Deadline {
        from: Instant::now(),
        after: timeout,
    }
    .instant();
    let mut forwards = 0;
    let mut resends = 0;
    loop {
        let target = inner.target()?;
        let conn = match target.conn(&inner.orb, Deadline::at(deadline)) {
            Ok(c) => c,
            Err(_) if target.forwarded && forwards <= MAX_FORWARDS => {
                inner.set_target(None);
                forwards += 1;
                continue;
            }
            Err(e) => return Err(e.with_operation("LocateRequest")),
        };
        let Ok(Begun { id, .. }) =
            conn.begin(&target, None, true, false, Now::Precise(Instant::now()))
        else {
            target.drop_conn(&conn);
            resends += 1;
            if resends > MAX_RESENDS {
                return Err(raise(K::Transient, 0, CompletionStatus::No, || {
                    locate_cause(Phase::Connect, &conn.ep).with_detail("connection closed")
                }));
            }
            continue;
        };
        let mut w = Writer::new(ByteOrder::NATIVE);
        let h = peregrine_giop::LocateRequestHeader {
            request_id: id,
            target: TargetAddress::Key(&target.key),
        };
        if let Err(e) = peregrine_giop::encode_locate_request(&mut w, target.version, &h) {
            conn.forget(id);
            return Err(raise(K::Marshal, 0, CompletionStatus::No, || {
                locate_cause(Phase::Encode, &conn.ep).with_detail(e)
            }));
        }
        if let Err(e) = conn.send(w.as_slice(), &[]) {
            conn.forget(id);
            resends += 1;
            if resends > MAX_RESENDS {
                return Err(raise(K::CommFailure, 0, CompletionStatus::No, || {
                    locate_cause(Phase::Send, &conn.ep).with_io(e)
                }));
            }
            continue;
        }
        let arrived = match conn.wait(id, deadline, None) {
            Ok(a) => a,
            Err(WaitError::TimedOut) => {
                return Err(raise(K::Timeout, 0, CompletionStatus::No, || {
                    locate_cause(Phase::Receive, &conn.ep)
                        .with_detail(format_args!("deadline of {timeout:?} expired"))
                }))
            }
            // A LocateRequest has no effect: asking again is always safe.
            Err(WaitError::Closed(c)) => {
                resends += 1;
                if resends > MAX_RESENDS {
                    return Err(raise(K::CommFailure, 0, CompletionStatus::No, || {
                        locate_cause(Phase::Receive, &conn.ep)
                            .with_detail(format_args!("connection closed: {c:?}"))
                    }));
                }
                continue;
            }
        };
        let held = Held::new(conn.clone(), arrived);
        let out = held.with_bytes(|bytes| {
            let (status, body) = match decode_message(bytes, &conn.limits) {
                Ok((_, Message::LocateReply { header, body })) => (header.status, body),
                _ => {
                    return Some(Err(raise(K::Marshal, 0, CompletionStatus::No, || {
                        locate_cause(Phase::Decode, &conn.ep).with_detail("not a LocateReply")
                    })))
                }
            };
            use peregrine_giop::LocateStatus as L;
            let mut r = body.reader();
            match status {
                L::UnknownObject => Some(Ok(false)),
                L::ObjectHere => Some(Ok(true)),
                L::ObjectForward | L::ObjectForwardPerm => {
                    match <Ior as peregrine_cdr::Decode>::decode(&mut r) {
                        Ok(ior) if forwards < MAX_FORWARDS => {
                            forwards += 1;
                            let max = inner.orb.inner().config.max_giop;
                            match Target::from_ior(&ior, true, max) {
                                Ok(t) => {
                                    inner.set_target(Some(Arc::new(t)));
                                    None
                                }
                                Err(e) => Some(Err(e)),
                            }
                        }
                        Ok(_) => Some(Err(raise(K::Transient, 0, CompletionStatus::No, || {
                            locate_cause(Phase::Forward, &conn.ep).with_detail(format_args!(
                                "more than {MAX_FORWARDS} OBJECT_FORWARDs"
                            ))
                        }))),
                        Err(e) => Some(Err(raise(K::Marshal, 0, CompletionStatus::No, || {
                            locate_cause(Phase::Decode, &conn.ep)
                                .with_detail(format_args!("malformed OBJECT_FORWARD: {e}"))
                        }))),
                    }
                }
                L::LocSystemException => Some(Err(
                    match <SystemException as peregrine_cdr::Decode>::decode(&mut r) {
                        Ok(e) => e.with_cause(locate_cause(Phase::Reply, &conn.ep)),
                        Err(e) => raise(K::Marshal, 0, CompletionStatus::No, || {
                            locate_cause(Phase::Decode, &conn.ep)
                                .with_detail(format_args!("malformed LOC_SYSTEM_EXCEPTION: {e}"))
                        }),
                    },
                )),
                L::LocNeedsAddressingMode => {
                    Some(Err(raise(K::NoImplement, 0, CompletionStatus::No, || {
                        locate_cause(Phase::Reply, &conn.ep)
                            .with_detail("needs an addressing mode other than KeyAddr")
                    })))
                }
            }
        });
        drop(held);
        if let Some(out) = out {
            return out;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `LeaderBuf` under the leader protocol: threads take turns leading
    /// through a flag under a mutex (as `begin` and `unlead` do) and use
    /// the buffer only while they lead. Under Miri (`cargo +nightly miri
    /// test -p peregrine-orb --lib leader_buf`) this checks that the
    /// accesses are ordered by the hand-over.
    #[test]
    fn leader_buf_is_handed_between_leaders() {
        let shared = Arc::new((Mutex::new(false), LeaderBuf::default()));
        let threads: Vec<_> = (0..3u8)
            .map(|i| {
                let shared = shared.clone();
                std::thread::spawn(move || {
                    let mut turns = 0;
                    while turns < 10 {
                        {
                            let mut leader = lock(&shared.0);
                            if *leader {
                                drop(leader);
                                std::thread::yield_now();
                                continue;
                            }
                            *leader = true;
                        }
                        // SAFETY: this thread set the flag and clears it
                        // only after its last use of `rx`.
                        let rx = unsafe { shared.1.get() };
                        assert!(rx.unread().is_empty());
                        *rx = RxBuf::from_message(&[i; 16]);
                        assert_eq!(rx.message(16), &[i; 16]);
                        rx.consume(16);
                        *lock(&shared.0) = false;
                        turns += 1;
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        // SAFETY: every leader is gone.
        assert!(unsafe { shared.1.get() }.unread().is_empty());
    }

    /// A request header encoded from scratch, as `Call::prepare` does
    /// when nothing is cached.
    fn encoded(
        t: &Target,
        op: &str,
        twoway: bool,
        id: u32,
        order: ByteOrder,
    ) -> (Vec<u8>, Framing) {
        let mut w = Writer::new(order);
        let h = RequestHeader {
            request_id: id,
            response_flags: if twoway {
                ResponseFlags::SyncWithTarget
            } else {
                ResponseFlags::None
            },
            target: TargetAddress::Key(&t.key),
            operation: op,
            service_contexts: ServiceContexts::EMPTY,
            requesting_principal: &[],
        };
        let f = encode_request(&mut w, GiopVersion::V1_2, &h)
            .and_then(|p| Framing::of(p, &mut w))
            .unwrap();
        (w.as_slice().to_vec(), f)
    }

    /// Headers cached per route serve every object of the route: the
    /// copy with the other object's key patched in is byte for byte what
    /// encoding it would give; another key length is not served.
    #[test]
    fn route_header_templates_patch_the_object_key() {
        let route = Arc::new(Route {
            endpoints: vec![],
            version: GiopVersion::V1_2,
            codesets: CodeSets::default(),
            info: None,
            negotiate: false,
            conn: Mutex::new(None),
            headers: Default::default(),
        });
        let target = |key: &[u8]| Target {
            route: route.clone(),
            key: key.into(),
            forwarded: false,
        };
        let a = target(b"PGR1\x01\x04ttcp\0\0\0\0\x07");
        let b = target(b"PGR1\x01\x04ttcp\0\0\x12\x34\x56");
        let short = target(b"omni");
        for order in [ByteOrder::Big, ByteOrder::Little] {
            for (op, twoway) in [("sendNoParams_2way", true), ("x", false), ("_is_a", true)] {
                let mut w = Writer::new(order);
                assert!(b.write_header(op, twoway, 9, &mut w).is_none());
                let (bytes, f) = encoded(&a, op, twoway, 1, order);
                let mut w = Writer::new(order);
                w.write_bytes(&bytes);
                a.store_header(op, twoway, &w, f);
                let mut w = Writer::new(order);
                let got = b
                    .write_header(op, twoway, 77, &mut w)
                    .expect("cached for the route");
                let (want, wf) = encoded(&b, op, twoway, 77, order);
                assert_eq!(w.as_slice(), &want[..], "{op} {order:?}");
                assert_eq!(got, wf);
                let mut w = Writer::new(order);
                assert!(short.write_header(op, twoway, 5, &mut w).is_none());
                // The other direction and byte order are other entries.
                let other = if order == ByteOrder::Big {
                    ByteOrder::Little
                } else {
                    ByteOrder::Big
                };
                let mut w = Writer::new(other);
                if b.write_header(op, twoway, 5, &mut w).is_some() {
                    let (want, _) = encoded(&b, op, twoway, 5, other);
                    assert_eq!(w.as_slice(), &want[..]);
                }
            }
        }
    }

    /// The fixed-offset reply read agrees with the full decode wherever
    /// it answers, and leaves everything else to it.
    #[test]
    fn fast_reply_matches_full_decode() {
        use peregrine_giop::{encode_reply, ReplyHeader};
        let limits = Limits::default();
        let sc = [ServiceContext {
            id: 1,
            data: &[0, 0, 0, 0],
        }];
        for order in [ByteOrder::Little, ByteOrder::Big] {
            for status in [ReplyStatus::NoException, ReplyStatus::SystemException] {
                for body in [&[][..], &[1, 2, 3][..]] {
                    for contexts in [ServiceContexts::EMPTY, ServiceContexts::from_slice(&sc)] {
                        let mut w = Writer::new(order);
                        let h = ReplyHeader {
                            request_id: 77,
                            status,
                            service_contexts: contexts,
                        };
                        let p = encode_reply(&mut w, GiopVersion::V1_2, &h).unwrap();
                        w.write_bytes(body);
                        p.finish(&mut w).unwrap();
                        let m = w.into_vec();
                        let Ok((_, Message::Reply { header, body: b })) =
                            decode_message(&m, &limits)
                        else {
                            panic!("full decode");
                        };
                        match fast_reply(&m) {
                            Some(h) => {
                                assert!(contexts.is_empty());
                                assert_eq!(h.id, 77);
                                assert_eq!(h.status, header.status);
                                assert_eq!(&m[FAST_BODY_AT..], b.bytes);
                                assert_eq!(FAST_BODY_AT, b.offset);
                                assert_eq!(h.order, b.order);
                            }
                            None => assert!(!contexts.is_empty()),
                        }
                        for n in 0..m.len() {
                            assert!(fast_reply(&m[..n]).is_none());
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn socket_timeouts_are_stable_across_calls_and_never_late() {
        let t = Duration::from_secs(30);
        // Calls a few microseconds apart ask for the same socket timeout.
        assert_eq!(
            socket_timeout(t - Duration::from_micros(3)),
            socket_timeout(t - Duration::from_micros(40))
        );
        for left in [
            Duration::ZERO,
            Duration::from_micros(1),
            READ_TIMEOUT_GRANULE,
            READ_TIMEOUT_GRANULE + Duration::from_nanos(1),
            Duration::from_millis(12_345),
            t,
        ] {
            let s = socket_timeout(left);
            assert!(s <= left, "{left:?} -> {s:?}");
            assert!(left - s < READ_TIMEOUT_GRANULE, "{left:?} -> {s:?}");
        }
    }
}
