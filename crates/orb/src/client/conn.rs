//! A client connection: request ids, the pending table, the
//! leader/followers protocol by which waiting callers share one socket,
//! and the connection's GIOP machine for every message but the common
//! reply.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use peregrine_cdr::{ByteOrder, CodeSets, GiopVersion};
use peregrine_giop::conn::{ClientConnection, ClientEvent, CloseReason, Config};
use peregrine_giop::{Endpoint, GiopError, Limits};

use super::{lock, Deadline, IDLE_CHECK, IDLE_CHECK_NS, POLL_READ};
use super::{reply::*, route::*};
use crate::biased_lock::BiasedLock;
use crate::coarse_clock;
use crate::trace;
use crate::transport::{FrameError, RxBuf, Transport};

// ---------------------------------------------------------------------
// Client connection

#[derive(Clone, Debug)]
pub(super) enum Closed {
    /// The server sent CloseConnection: unanswered requests were not
    /// processed and may be re-sent.
    Orderly,
    /// The connection broke: unanswered requests may have executed.
    Broken(String),
    /// This end closed it after it carried nothing for the outgoing idle
    /// timeout (nothing was unanswered).
    Idle,
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
pub(super) struct Arrived {
    pub(super) own: Option<Box<Own>>,
    pub(super) len: usize,
    /// The reply header, when the leader parsed it at fixed offsets as it
    /// matched the reply to its call (see [`fast_reply`]).
    pub(super) head: Option<FastHead>,
}

/// The buffer of a received message that is not in the leader's
/// receive buffer.
pub(super) enum Own {
    /// A copy of a message framed in a receive buffer (a common reply to
    /// another caller, or one kept for a deferred call).
    Copied(RxBuf),
    /// The buffer of a message the connection's machine reported, as the
    /// machine filled it; handed back to the machine (`recycle`) when the
    /// caller is done with it ([`ClientConn::release`]).
    Machine(Vec<u8>),
}

impl Own {
    /// The message, `len` bytes.
    #[inline]
    pub(super) fn message(&self, len: usize) -> &[u8] {
        match self {
            Own::Copied(b) => b.message(len),
            Own::Machine(v) => &v[..len],
        }
    }
}

/// How a leader's own reply came in.
pub(super) enum Got {
    /// At the start of the leader's receive buffer (with its header when
    /// it has the common form).
    InPlace(usize, Option<FastHead>),
    /// Reported by the connection's machine (any answer but the common
    /// reply: reassembled, of another version, with service contexts, a
    /// LocateReply), in the machine's buffer.
    Whole(Vec<u8>),
}

pub(super) struct ConnState {
    /// Calls waiting for a reply: `None` until it arrives.
    pub(super) pending: HashMap<u32, Option<Arrived>, BuildHasherDefault<IdHasher>>,
    /// A thread reads the connection (and alone locks `ClientConn::rx`).
    pub(super) leader: bool,
    /// Set together with `ClientConn::closed_hint`.
    pub(super) closed: Option<Closed>,
    /// The connection's GIOP machine, for every message but the common
    /// reply (see [`ClientConn::incoming`]): it reassembles fragments,
    /// decodes the other messages, and decides on CloseConnection,
    /// MessageError and malformed input. The pending table stays here
    /// (the machine reports answers by id for it).
    machine: ClientConnection,
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
    /// `ClientConn::next_id` at the last idle scan: a different value now
    /// means requests went out since (see [`ClientConn::close_if_idle`]).
    ids_at_scan: u32,
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
pub(super) struct LeaderBuf(std::cell::UnsafeCell<RxBuf>);

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
    pub(super) unsafe fn get(&self) -> &mut RxBuf {
        // SAFETY: exclusive by the caller's contract.
        unsafe { &mut *self.0.get() }
    }
}

/// One client connection, shared by every reference to its endpoint.
pub(crate) struct ClientConn {
    pub(super) t: Box<dyn Transport>,
    pub(super) ep: Endpoint,
    pub(super) limits: Limits,
    pub(super) fragment_size: usize,
    /// Serializes writes (and the idle probe, which switches the socket
    /// to non-blocking for a moment). Biased: the connection's first
    /// writer takes it without atomic read-modify-writes until another
    /// thread writes (see [`crate::biased_lock`]).
    write_lock: BiasedLock,
    pub(super) st: Mutex<ConnState>,
    pub(super) cv: Condvar,
    /// The receive buffer, the leader's alone.
    pub(super) rx: LeaderBuf,
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
    pub(super) codesets: std::sync::OnceLock<CodeSets>,
    /// A Reply arrived: the CodeSets context was answered and is no
    /// longer sent. Set under the state lock, never cleared.
    codesets_acked: AtomicBool,
    /// `ConnState::idle_check_at` on the coarse clock
    /// ([`crate::coarse_clock`] nanoseconds), for oneways, which read no
    /// precise clock: written under the state lock, read without it (a
    /// oneway takes the locked path when the check is due).
    idle_check_ns: AtomicU64,
    /// The idle scan is deciding whether to close the connection (set
    /// and cleared under the state lock; read by
    /// [`ClientConn::begin_oneway`] without it).
    pub(super) retiring: AtomicBool,
}

/// A call's clock reading for the idle check: a twoway has a precise one
/// anyway (its deadline counts from it), a oneway reads the coarse clock.
#[derive(Clone, Copy)]
pub(super) enum Now {
    Precise(Instant),
    Coarse(u64),
}

/// What [`ClientConn::begin`] gives a call.
pub(super) struct Begun {
    pub(super) id: u32,
    pub(super) cs: CodeSets,
    /// Send the CodeSets service context.
    pub(super) ctx: bool,
    /// The call leads the connection from the start.
    pub(super) led: bool,
}

/// Gives up a call's claim on `conn` after `begin`: its leadership (if it
/// led) or its pending entry.
pub(super) fn give_up(conn: &ClientConn, id: u32, led: bool) {
    if led {
        drop(conn.unlead(false));
    } else {
        conn.forget(id);
    }
}

pub(super) enum WaitError {
    TimedOut,
    Closed(Closed),
}

pub(super) enum Lead {
    Mine(Got),
    TimedOut,
    Closed(Closed),
}

impl ClientConn {
    pub(super) fn new(
        t: Box<dyn Transport>,
        ep: Endpoint,
        limits: Limits,
        fragment_size: usize,
        idle_timeout: Option<Duration>,
    ) -> Self {
        let mut config = Config::default()
            .with_version(GiopVersion::V1_2)
            .with_byte_order(ByteOrder::NATIVE)
            .with_limits(limits);
        if let Some(t) = idle_timeout {
            config = config.with_idle_timeout(t);
        }
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
                machine: ClientConnection::matched_by_driver(config, Instant::now()),
                idle_check_at: Instant::now() + IDLE_CHECK,
                waiters: 0,
                ids_at_scan: 1,
            }),
            cv: Condvar::new(),
            rx: LeaderBuf::default(),
            read_timeout: std::sync::atomic::AtomicU64::new(u64::MAX),
            next_id: AtomicU32::new(1),
            closed_hint: AtomicBool::new(false),
            codesets: std::sync::OnceLock::new(),
            codesets_acked: AtomicBool::new(false),
            idle_check_ns: AtomicU64::new(coarse_clock::now_ns().saturating_add(IDLE_CHECK_NS)),
            retiring: AtomicBool::new(false),
        }
    }

    /// The idle scan's look at the connection at `now`: requests sent
    /// since the last look (the id counter moved), a call waiting or a
    /// thread reading count as use, reported to the connection's machine,
    /// whose idle timer decides; an idle connection is closed as a client
    /// closes one (the socket, no message) and true returned, as for one
    /// closed already. A call that then finds it closed opens another.
    pub(crate) fn close_if_idle(&self, now: Instant) -> bool {
        let mut st = lock(&self.st);
        if st.closed.is_some() {
            return true;
        }
        let ids = self.next_id.load(Ordering::SeqCst);
        if ids != st.ids_at_scan || st.leader || !st.pending.is_empty() {
            st.ids_at_scan = ids;
            st.machine.note_activity(now);
            return false;
        }
        if !st.machine.poll_timeout().is_some_and(|at| at <= now) {
            return false;
        }
        // See `begin_oneway`: a oneway that took an id before this flag
        // was set shows in the counter below; one after it sees the flag.
        self.retiring.store(true, Ordering::SeqCst);
        if self.next_id.load(Ordering::SeqCst) != ids {
            self.retiring.store(false, Ordering::SeqCst);
            return false;
        }
        st.machine.handle_timeout(now);
        let mut idle = false;
        while let Some(e) = st.machine.poll_event() {
            idle |= matches!(
                e,
                ClientEvent::Closed {
                    reason: CloseReason::Idle
                }
            );
        }
        if idle {
            self.set_closed(&mut st, Closed::Idle);
        }
        self.retiring.store(false, Ordering::SeqCst);
        drop(st);
        if idle {
            trace::closed(&self.ep, &Closed::Idle);
            self.t.shutdown();
        }
        idle
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
    pub(super) fn fail(&self, why: Closed) {
        trace::closed(&self.ep, &why);
        {
            let mut st = lock(&self.st);
            self.set_closed(&mut st, why);
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
    pub(super) fn begin(
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
    ///
    /// The id is taken before the flags are read, and the idle scan sets
    /// `retiring` before it reads the id counter (both sequentially
    /// consistent): either the scan sees this call's id and keeps the
    /// connection, or this call sees `retiring` and goes to `begin`,
    /// which waits for the scan's verdict under the lock. A oneway is
    /// never written to a connection the scan closed under it.
    #[inline(always)]
    pub(super) fn begin_oneway(&self, target: &Target, now: u64) -> Option<(u32, CodeSets)> {
        if now > self.idle_check_ns.load(Ordering::Relaxed) {
            return None;
        }
        let cs = *self.codesets.get()?;
        if target.negotiate && !self.codesets_acked.load(Ordering::Relaxed) {
            return None;
        }
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        if self.is_closed() || self.retiring.load(Ordering::SeqCst) {
            // The id is not used: ids need not be contiguous.
            return None;
        }
        Some((id, cs))
    }

    pub(super) fn forget(&self, id: u32) {
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
    pub(super) fn fragment_limit(&self) -> usize {
        self.fragment_size
            .max(peregrine_giop::fragment::MIN_FRAGMENT_LEN)
    }

    /// Writes the message `bytes` followed by `tail` (a gathered last
    /// argument, empty for most calls; see [`Call::tail`]). `Ok(true)`
    /// when the write may have waited (the write lock was contended): the
    /// caller's clock reading is stale.
    #[inline(always)]
    pub(super) fn send(&self, bytes: &[u8], tail: &[u8]) -> std::io::Result<bool> {
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
    pub(super) fn wait(
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
    pub(super) fn lead_with(
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
    pub(super) fn after_lead(
        &self,
        got: Lead,
    ) -> Result<Arrived, (MutexGuard<'_, ConnState>, WaitError)> {
        match got {
            Lead::Mine(Got::InPlace(len, head)) => Ok(Arrived {
                own: None,
                len,
                head,
            }),
            Lead::Mine(Got::Whole(msg)) => {
                drop(self.unlead(is_reply(&msg)));
                Ok(Arrived {
                    len: msg.len(),
                    own: Some(Box::new(Own::Machine(msg))),
                    head: None,
                })
            }
            Lead::TimedOut => Err((self.unlead(false), WaitError::TimedOut)),
            Lead::Closed(c) => {
                let mut st = self.unlead(false);
                self.set_closed(&mut st, c.clone());
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
    pub(super) fn unlead(&self, acked: bool) -> MutexGuard<'_, ConnState> {
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
    /// receive buffer and leadership handed back; the machine's buffer
    /// goes back to it.
    pub(super) fn release(&self, a: &mut Arrived) {
        if let Some(own) = a.own.take() {
            if let Own::Machine(buf) = *own {
                lock(&self.st).machine.recycle(buf);
            }
        } else {
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
    pub(super) fn poll(&self, id: u32) -> bool {
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
                            own: Some(Box::new(Own::Copied(RxBuf::from_message(
                                unsafe { self.rx.get() }.message(a.len),
                            )))),
                            len: a.len,
                            head: a.head,
                        };
                        let mut a = a;
                        self.release(&mut a);
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
    pub(super) fn lead(
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
                    // The machine answers it (MessageError) and closes.
                    return Lead::Closed(match self.through_machine(rx.unread(), mine) {
                        Err(c) => c,
                        Ok(_) => {
                            Closed::Broken(format!("{} sent a malformed message: {e}", self.ep))
                        }
                    });
                }
            };
            match self.incoming(rx, len, mine) {
                Ok(Some(a)) => return Lead::Mine(a),
                Ok(None) => now = Instant::now(),
                Err(c) => return Lead::Closed(c),
            }
        }
    }

    /// Handles one framed message at the start of `rx`.
    ///
    /// The common reply (a whole GIOP 1.2 Reply without service contexts,
    /// [`fast_reply`]) is the prefix of the connection's machine: read at
    /// fixed offsets, left in place for the leader when it is its own,
    /// else copied to its caller. The machine would report every such
    /// message as the same reply (a unit test checks it). Everything else
    /// goes through the machine ([`ClientConn::through_machine`]).
    #[inline(always)]
    fn incoming(&self, rx: &mut RxBuf, len: usize, mine: u32) -> Result<Option<Got>, Closed> {
        let Some(h) = fast_reply(rx.message(len), &self.limits) else {
            let got = self.through_machine(rx.message(len), mine);
            rx.consume(len);
            return got;
        };
        if h.id == mine {
            return Ok(Some(Got::InPlace(len, Some(h))));
        }
        let filed = {
            let mut st = lock(&self.st);
            self.file(&mut st, h.id, rx.message(len))
        };
        if filed {
            self.cv.notify_all();
        }
        rx.consume(len);
        Ok(None)
    }

    /// Gives the waiting call `id` its answer `msg` (a copy); false (the
    /// answer dropped) if no call waits for it: a late reply to a call
    /// that timed out.
    fn file(&self, st: &mut ConnState, id: u32, msg: &[u8]) -> bool {
        let Some(slot @ None) = st.pending.get_mut(&id) else {
            return false;
        };
        *slot = Some(Arrived {
            own: Some(Box::new(Own::Copied(RxBuf::from_message(msg)))),
            len: msg.len(),
            head: None,
        });
        if is_reply(msg) {
            self.codesets_acked.store(true, Ordering::Relaxed);
        }
        true
    }

    /// [`ClientConn::file`] for a message in the machine's buffer `msg`,
    /// filed as it is; a late answer's buffer goes back to the machine.
    fn file_machine(&self, st: &mut ConnState, id: u32, msg: Vec<u8>) -> bool {
        let Some(slot @ None) = st.pending.get_mut(&id) else {
            st.machine.recycle(msg);
            return false;
        };
        let acked = is_reply(&msg);
        *slot = Some(Arrived {
            len: msg.len(),
            own: Some(Box::new(Own::Machine(msg))),
            head: None,
        });
        if acked {
            self.codesets_acked.store(true, Ordering::Relaxed);
        }
        true
    }

    /// Passes `bytes` (a framed message, or bytes that do not frame) to
    /// the connection's machine, files the answers it reports for their
    /// callers (`mine`'s is returned), writes what it sends (MessageError)
    /// and reports the close it decides.
    #[cold]
    #[inline(never)]
    fn through_machine(&self, bytes: &[u8], mine: u32) -> Result<Option<Got>, Closed> {
        let now = Instant::now();
        let mut st = lock(&self.st);
        st.machine.handle_input(bytes, now);
        let mut got = Ok(None);
        let mut filed = false;
        while let Some(e) = st.machine.poll_event() {
            let (id, msg) = match e {
                ClientEvent::Reply(r) => (r.id.0, r.message.into_message()),
                ClientEvent::LocateReply { id, message, .. } => (id.0, message.into_message()),
                // An answer whose header does not decode: its caller's
                // decode of no message raises MARSHAL.
                ClientEvent::Failed { id, .. } => (id.0, Vec::new()),
                // Forwards are replies when the driver matches: the call
                // path follows them (`follow_forward`).
                ClientEvent::Forward { .. } => continue,
                ClientEvent::Closed { reason } => {
                    got = Err(self.closed_by(reason));
                    continue;
                }
            };
            if id != mine {
                filed |= self.file_machine(&mut st, id, msg);
            } else if got.is_ok() {
                got = Ok(Some(Got::Whole(msg)));
            } else {
                st.machine.recycle(msg);
            }
        }
        let out: Vec<_> = std::iter::from_fn(|| st.machine.poll_transmit(now)).collect();
        drop(st);
        if filed {
            self.cv.notify_all();
        }
        if !out.is_empty() {
            let _w = self.write_lock.lock();
            for t in &out {
                // The connection is ending: a failed write changes nothing.
                let _ = self.t.write_all_vectored(&[t.head(), t.payload()]);
            }
        }
        got
    }

    /// Why the connection closed, from the machine's reason.
    fn closed_by(&self, reason: CloseReason) -> Closed {
        match reason {
            // The server did not process what it has not answered.
            CloseReason::PeerClosed => Closed::Orderly,
            CloseReason::PeerMessageError => Closed::Broken(format!(
                "{} answered MessageError (it could not parse our message)",
                self.ep
            )),
            CloseReason::ProtocolError(GiopError::UnexpectedMessage(t)) => Closed::Broken(format!(
                "{} sent an unexpected {t:?} on a client connection",
                self.ep
            )),
            CloseReason::ProtocolError(e) => {
                Closed::Broken(format!("{} sent a malformed message: {e}", self.ep))
            }
            other => Closed::Broken(format!("connection to {} closed: {other:?}", self.ep)),
        }
    }
}

/// A hasher for request ids: they are ours (sequential), not the
/// network's, so a multiply-shift mix is enough (SipHash cost more than
/// the rest of the pending-table work).
#[derive(Default)]
pub(super) struct IdHasher(u64);

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
pub(super) const READ_TIMEOUT_GRANULE: Duration = Duration::from_millis(10);

/// The socket read timeout for a leader with `left` until its deadline.
#[inline(always)]
pub(super) fn socket_timeout(left: Duration) -> Duration {
    if left <= READ_TIMEOUT_GRANULE {
        return left;
    }
    // Whole granules (10 ms) without 128-bit arithmetic.
    let g = READ_TIMEOUT_GRANULE.subsec_nanos();
    Duration::new(left.as_secs(), left.subsec_nanos() / g * g)
}
