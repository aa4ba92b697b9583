//! The server's threads: a leader/followers pool over one epoll instance.
//!
//! Idle threads wait in `epoll_wait` on the same instance, at most one
//! per CPU (the others wait on a bench and one is promoted when none is
//! left polling: see `pollers`); the kernel hands each one-shot event to
//! one of them (the leader of the moment), so there is no separate
//! follower to wake per request. The only thread polling takes a batch
//! of events instead and queues all but the first for the busy threads
//! ([`Pool::take_events`]). The
//! thread that reads a complete request gives the connection's read turn
//! back first (re-arms it, or queues the connection if more requests are
//! already buffered) and then runs the upcall inline: no thread hop on
//! the common path, and the connection's next request can be taken by
//! another thread meanwhile. The pool grows when the last waiting thread
//! takes an event (up to the most threads allowed) and shrinks back to
//! the kept threads when idle.
//!
//! A thread that drained a connection may dwell on it: it waits for the
//! connection's next request with a blocking `recv` (up to
//! [`DWELL`]), its read events muted, instead of going back to
//! `epoll_wait`. A client that calls again soon is then read by the
//! thread already there, with the system calls of a thread per
//! connection (one `recv`, one `send` per call) and no other thread
//! woken. A few threads dwell at most (`max_dwellers`), always leaving
//! one to wait for events, so 10,000 connections still cost a handful
//! of threads. While a dwelling thread runs a request the connection's
//! read turn stays with it; the sweep (every [`SWEEP`], by a waiting
//! thread) lets the turn go when that request takes longer, so the
//! connection's next requests still run concurrently.

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use peregrine_cdr::{ByteOrder, Writer};
use peregrine_giop::fast::request_layout;
use peregrine_giop::Limits;

use super::connection::{Conn, NoRead};
use super::dispatch::{ConnCtx, Next};
use super::kick;
use super::machine;
use super::poller::{Events, Kind, Poller, Token};
use super::pollers::{Pollers, Seat};
use super::TICK;
use crate::client::lock;
use crate::orb::{Orb, OrbInner};
use crate::poa;
use crate::transport::{FrameError, RxBuf};

/// How often an idle thread beyond the kept ones wakes to see whether
/// it is still needed.
const IDLE_POLL: Duration = Duration::from_secs(1);
/// How long a thread dwells on a quiet connection.
pub(super) const DWELL: Duration = Duration::from_millis(50);

/// How long a dwelling thread's request may run before the connection's
/// read turn goes to the pool (between one and two sweeps).
const SWEEP: Duration = Duration::from_millis(5);

/// A connection a thread dwells on, as the sweeps see it.
struct Dwelt {
    conn: Arc<Conn>,
    /// The dwell state at the last sweep.
    seen: u32,
    /// The dwelling thread's wait in `recv` at the last sweep, and when
    /// the sweeps first saw it (coarse clock, ns).
    quiet: Option<(u32, u64)>,
}

thread_local! {
    /// Set on the pool's threads (so `shutdown(true)` from an upcall does
    /// not wait for its own thread).
    static IN_POOL: Cell<bool> = const { Cell::new(false) };
}

/// True on a server thread.
pub(super) fn in_pool() -> bool {
    IN_POOL.with(Cell::get)
}

/// The pool's shared state.
pub(super) struct Pool {
    pub(super) poller: Arc<Poller>,
    /// Work waiting for a thread: connections with complete messages
    /// buffered, whose read turn was handed on, and events a waiting
    /// thread received beyond the one it runs.
    queue: Mutex<VecDeque<Work>>,
    /// Threads waiting for an event.
    idle: AtomicUsize,
    /// Threads alive.
    total: AtomicUsize,
    core: usize,
    max: usize,
    per_conn: usize,
    idle_timeout: Duration,
    /// When the current shrink period began (coarse clock, ns).
    period_start: AtomicU64,
    /// Threads running a request, those dwelling on a connection aside
    /// (`dwellers` counts them, running one or not).
    in_upcall: AtomicUsize,
    /// Most threads running requests or dwelling at once in the current
    /// period.
    peak_busy: AtomicUsize,
    /// Threads the last period needed (its peak and a waiting one).
    needed: AtomicUsize,
    limits: Limits,
    /// Most threads dwelling on a connection at once.
    max_dwellers: usize,
    /// Threads dwelling on a connection.
    dwellers: AtomicUsize,
    /// Whether the sweep ends a quiet dwell with a signal (see `kick`):
    /// asked for, and the signal's handler installed.
    kicks: bool,
    /// The connections dwelt on, with their dwell state as the last sweep
    /// saw it.
    dwelt: Mutex<Vec<Dwelt>>,
    /// When the last sweep ran (coarse clock, ns).
    last_sweep: AtomicU64,
    /// How often idle connections are looked for, if they are closed.
    idle_scan: Option<Duration>,
    /// When the last idle scan ran (coarse clock, ns).
    last_idle_scan: AtomicU64,
    pub(super) stopping: AtomicBool,
    /// Every thread ends.
    pub(super) done: AtomicBool,
    /// Which idle threads wait on the poller (see `pollers`).
    pollers: Pollers,
}

/// Most events one `epoll_wait` takes (see [`Pool::take_events`]).
const BATCH: usize = 16;

/// A thread's own state, reused request after request.
struct Worker {
    tx: Writer,
    /// This thread's last resolved target.
    cache: poa::ResolveCache,
    /// An empty receive buffer, lent to the connection this thread reads.
    spare: RxBuf,
    /// Room for one wait's events.
    events: Events,
}

impl Pool {
    pub(super) fn new(poller: Arc<Poller>, opts: &super::ServerOptions, limits: Limits) -> Pool {
        Pool {
            poller,
            queue: Mutex::new(VecDeque::new()),
            idle: AtomicUsize::new(0),
            total: AtomicUsize::new(0),
            core: opts.core_threads(),
            max: opts.max_threads(),
            per_conn: opts.per_connection(),
            idle_timeout: opts.idle_timeout,
            period_start: AtomicU64::new(crate::coarse_clock::now_ns()),
            in_upcall: AtomicUsize::new(0),
            peak_busy: AtomicUsize::new(0),
            needed: AtomicUsize::new(opts.core_threads()),
            limits,
            max_dwellers: opts.max_dwellers(),
            dwellers: AtomicUsize::new(0),
            // Asked first: turned off, the ORB installs no handler.
            kicks: opts.dwell_kick && kick::available(),
            dwelt: Mutex::new(Vec::new()),
            last_sweep: AtomicU64::new(0),
            idle_scan: opts.idle_scan_period(),
            last_idle_scan: AtomicU64::new(crate::coarse_clock::now_ns()),
            stopping: AtomicBool::new(false),
            done: AtomicBool::new(false),
            pollers: Pollers::new(opts.max_pollers()),
        }
    }

    /// The pool stops: every thread must see it, benched ones too.
    pub(super) fn stop(&self, done: bool) {
        if done {
            self.done.store(true, Ordering::Release);
        } else {
            self.stopping.store(true, Ordering::Release);
        }
        self.pollers.wake_all();
    }

    /// Threads kept when idle.
    pub(super) fn core(&self) -> usize {
        self.core
    }

    /// Threads dwelling on a connection.
    pub(super) fn dwelling(&self) -> usize {
        self.dwellers.load(Ordering::SeqCst)
    }

    /// Threads alive.
    pub(super) fn threads(&self) -> usize {
        self.total.load(Ordering::SeqCst)
    }

    /// Starts a thread if fewer than the most allowed run (true if it
    /// did).
    pub(super) fn grow(&self, orb: &Arc<OrbInner>) -> bool {
        let mut n = self.total.load(Ordering::SeqCst);
        loop {
            if n >= self.max {
                return false;
            }
            match self
                .total
                .compare_exchange(n, n + 1, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => break,
                Err(now) => n = now,
            }
        }
        if spawn(orb).is_err() {
            self.total.fetch_sub(1, Ordering::SeqCst);
            return false;
        }
        true
    }

    /// A thread starts running a request. If every thread now runs one
    /// or dwells, nobody would take the next event (a nested call back
    /// into this server would wait forever): start another, up to the
    /// most. Returns the count to end once the upcall is over
    /// ([`ConnCtx::upcall`]).
    ///
    /// A `dwelling` caller neither counts itself nor checks: `dwellers`
    /// counts it away from the poller already, running a request or
    /// waiting for one, so its request changes nothing this check reads.
    /// Each move away from the poller checks for itself: a thread that
    /// starts an upcall here, one that starts dwelling in
    /// [`Pool::reserve_dwell`] (which also counts it in the peak that
    /// [`Pool::retire`] keeps threads for), and `retire` keeps one more
    /// thread than the dwellers.
    #[inline]
    fn upcall_begin(&self, orb: &Arc<OrbInner>, dwelling: bool) -> Option<&AtomicUsize> {
        if dwelling {
            return None;
        }
        let busy = self.in_upcall.fetch_add(1, Ordering::SeqCst) + 1;
        let away = busy + self.dwellers.load(Ordering::SeqCst);
        self.note_away(orb, away);
        Some(&self.in_upcall)
    }

    /// `away` threads are away from the poller: recorded as this
    /// period's peak, and a thread started if none would be left.
    fn note_away(&self, orb: &Arc<OrbInner>, away: usize) {
        self.note_peak(away);
        if away >= self.total.load(Ordering::SeqCst) {
            self.grow(orb);
        }
    }

    /// `away` threads are away from the poller: this period's peak.
    fn note_peak(&self, away: usize) {
        if away > self.peak_busy.load(Ordering::Relaxed) {
            self.peak_busy.fetch_max(away, Ordering::Relaxed);
        }
    }

    /// A thread may start dwelling on a connection: true (and counted)
    /// if a place among the dwellers is free and another thread waits
    /// for events, or could be started.
    fn reserve_dwell(&self, orb: &Arc<OrbInner>) -> bool {
        if self.max_dwellers == 0 || self.stopping.load(Ordering::Relaxed) {
            return false;
        }
        let mut n = self.dwellers.load(Ordering::SeqCst);
        loop {
            if n >= self.max_dwellers {
                return false;
            }
            match self
                .dwellers
                .compare_exchange(n, n + 1, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => break,
                Err(now) => n = now,
            }
        }
        if self.idle.load(Ordering::SeqCst) == 0 && !self.grow(orb) {
            self.dwellers.fetch_sub(1, Ordering::SeqCst);
            return false;
        }
        self.note_peak(self.in_upcall.load(Ordering::SeqCst) + n + 1);
        true
    }

    /// `conn`'s holder drained it: true if it now dwells on it (see
    /// [`Pool::reserve_dwell`]).
    fn try_dwell(&self, orb: &Arc<OrbInner>, conn: &Arc<Conn>) -> bool {
        if !conn.dwell.is_idle() || !self.reserve_dwell(orb) {
            return false;
        }
        conn.mute(&mut lock(&conn.turn));
        self.enter_dwell(conn);
        true
    }

    /// The turn's holder, counted by [`Pool::reserve_dwell`], with the
    /// connection's read events muted, dwells on `conn` from now on.
    /// (Called without `conn.turn` locked: the sweep locks the list
    /// first, then each turn.)
    fn enter_dwell(&self, conn: &Arc<Conn>) {
        conn.sock.wait.set_thread();
        conn.sock.set_waiting(true);
        let first = {
            let mut d = lock(&self.dwelt);
            d.push(Dwelt {
                conn: conn.clone(),
                seen: 0,
                quiet: None,
            });
            d.len() == 1
        };
        if first {
            // The waiting threads sleep without a timeout: one of them
            // must now wake for the sweeps.
            self.poller.wake();
        }
    }

    /// The thread dwelling on `conn` leaves it.
    fn end_dwell(&self, conn: &Arc<Conn>) {
        let mut d = lock(&self.dwelt);
        if let Some(i) = d.iter().position(|e| Arc::ptr_eq(&e.conn, conn)) {
            d.swap_remove(i);
        }
        self.dwellers.fetch_sub(1, Ordering::SeqCst);
    }

    /// Lets go of the read turn of a connection whose dwelling thread has
    /// been running the same request since the last sweep (so requests
    /// that arrive behind it are read and run by other threads), once
    /// every [`SWEEP`].
    /// The receive timeout of a server socket: none if the sweep kicks
    /// a dwelling thread out of its `recv`, else [`DWELL`].
    pub(super) fn dwell_timeout(&self) -> Option<Duration> {
        (!self.kicks).then_some(DWELL)
    }

    fn sweep_if_due(&self) {
        if self.dwellers.load(Ordering::Relaxed) == 0 {
            return;
        }
        let now = crate::coarse_clock::now_ns();
        let last = self.last_sweep.load(Ordering::Relaxed);
        if now.saturating_sub(last) < SWEEP.as_nanos() as u64
            || self
                .last_sweep
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        let stopping = self.stopping.load(Ordering::Relaxed) || self.done.load(Ordering::Relaxed);
        for Dwelt { conn, seen, quiet } in lock(&self.dwelt).iter_mut() {
            if let Some(w) = conn.sock.wait.waiting() {
                // Waiting for bytes: kicked out of its `recv` once quiet
                // for the dwell time (at once when the ORB stops); without
                // kicks its receive timeout ends the wait.
                if !self.kicks {
                    continue;
                }
                let since = match *quiet {
                    Some((q, since)) if q == w => since,
                    _ => {
                        *quiet = Some((w, now));
                        now
                    }
                };
                if stopping || now.saturating_sub(since) >= DWELL.as_nanos() as u64 {
                    if let Some(w) = conn.sock.wait.kick(w) {
                        *quiet = Some((w, since));
                        crate::trace::dwell_kicked(conn.peer());
                    }
                }
                continue;
            }
            *quiet = None;
            let Some(now) = conn.dwell.running() else {
                continue;
            };
            if now != *seen {
                *seen = now;
                continue;
            }
            let mut t = lock(&conn.turn);
            // At the limit nobody may read the connection anyway.
            if t.running + 1 < self.per_conn && conn.dwell.release(now) {
                // The request is counted from now on, like any other.
                t.running += 1;
                conn.sock.set_waiting(false);
                conn.let_go(&mut t);
                crate::trace::dwell_released(conn.peer());
            }
        }
    }

    /// True (for one thread) when idle connections are closed and the
    /// last scan for them is a period old.
    fn idle_scan_due(&self) -> bool {
        let Some(period) = self.idle_scan else {
            return false;
        };
        let now = crate::coarse_clock::now_ns();
        let last = self.last_idle_scan.load(Ordering::Relaxed);
        now.saturating_sub(last) >= period.as_nanos() as u64
            && self
                .last_idle_scan
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }

    /// Ends this thread if more run than the last period and this one
    /// need: the most busy at once, one waiting, at least the kept ones.
    /// (Per-thread idle times would not do: the kernel spreads events
    /// over the waiting threads, so under light steady load none of a
    /// large pool ever waits long.)
    fn retire(&self) -> bool {
        let now = crate::coarse_clock::now_ns();
        let start = self.period_start.load(Ordering::Relaxed);
        if now.saturating_sub(start) >= self.idle_timeout.as_nanos() as u64
            && self
                .period_start
                .compare_exchange(start, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            let peak = self.peak_busy.swap(0, Ordering::Relaxed);
            self.needed
                .store((peak + 1).max(self.core), Ordering::Relaxed);
        }
        // This period's peak so far counts too.
        let needed = self
            .needed
            .load(Ordering::Relaxed)
            .max(self.peak_busy.load(Ordering::Relaxed) + 1)
            .max(self.dwellers.load(Ordering::Relaxed) + 1);
        let mut n = self.total.load(Ordering::SeqCst);
        while n > needed {
            match self
                .total
                .compare_exchange(n, n - 1, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => return true,
                Err(now) => n = now,
            }
        }
        false
    }

    /// Wakes a waiting thread for queued work, or starts one if none
    /// waits. (A thread that starts waiting meanwhile counted itself
    /// idle before it looked at the queue: it finds the work.)
    fn wake_one(&self, orb: &Arc<OrbInner>) {
        if self.idle.load(Ordering::SeqCst) > 0 {
            self.poller.wake();
        } else {
            self.grow(orb);
        }
    }

    /// The next queued work, for a thread counted idle.
    fn pop_ready(&self) -> Option<Work> {
        let mut q = lock(&self.queue);
        let c = q.pop_front()?;
        let more = !q.is_empty();
        drop(q);
        if more && self.idle.load(Ordering::SeqCst) > 1 {
            // Pass the wake-up on for the rest, to another waiting thread.
            self.poller.wake();
        }
        Some(c)
    }

    /// A wake-up was taken: the next one may go out, and goes out now if
    /// work is queued and a thread waits for it.
    fn wake_taken(&self) {
        self.poller.wake_taken();
        let queued = !lock(&self.queue).is_empty();
        if queued && self.idle.load(Ordering::SeqCst) > 0 {
            self.poller.wake();
        }
    }

    /// How many events a thread about to wait may take: one while other
    /// threads poll too (each gets its own event from the kernel, with
    /// no hand-off), a batch when it is the only one (the rest queue for
    /// the busy threads, and one system call serves several requests).
    /// On one CPU only one thread polls (see `pollers`), so it always
    /// takes a batch.
    fn batch(&self) -> usize {
        if self.pollers.polling() > 1 {
            1
        } else {
            BATCH
        }
    }

    /// The event of a wait this thread runs (the first that is not a
    /// wake-up); the others are queued ([`Pool::take_events`]). A
    /// wake-up is taken at once, not queued: until it is, no other can be
    /// sent.
    fn take_batch(&self, events: &Events) -> Option<Token> {
        let mut tokens = events.tokens();
        let mut woken = false;
        let mut first = None;
        for t in tokens.by_ref() {
            if t.kind == Kind::Wake {
                woken = true;
            } else {
                first = Some(t);
                break;
            }
        }
        woken |= self.take_events(tokens);
        if woken {
            self.wake_taken();
        }
        first
    }

    /// Queues the events of a wait beyond the first, for whichever thread
    /// is free first; wakes a waiting one if there is any. (A thread
    /// counts itself idle before it looks at the queue, so one that saw
    /// the queue empty is counted here and woken.)
    ///
    /// A wake-up among them is not queued: true if there was one (the
    /// caller takes it).
    fn take_events(&self, rest: impl Iterator<Item = Token>) -> bool {
        let mut woken = false;
        let mut q = lock(&self.queue);
        let before = q.len();
        q.extend(
            rest.filter(|t| {
                woken |= t.kind == Kind::Wake;
                t.kind != Kind::Wake
            })
            .map(Work::Event),
        );
        let added = q.len() > before;
        drop(q);
        if added && self.idle.load(Ordering::SeqCst) > 0 {
            self.poller.wake();
        }
        woken
    }

    /// The holder of `conn`'s read turn took a request and puts `rest`
    /// (the bytes after it) back. Below the connection's concurrency
    /// limit the turn goes on: to a waiting thread (through the ready
    /// queue) if there is more to read now, else to whoever gets the
    /// next read event. At the limit the connection is parked.
    ///
    /// A `dwelling` holder keeps the turn when nothing more is there to
    /// read (and at the limit); another starts dwelling then if it may.
    /// A request run with the turn kept is not counted in `running`
    /// (see `DwellState`).
    fn hand_on(
        &self,
        orb: &Arc<OrbInner>,
        conn: &Arc<Conn>,
        rest: Option<RxBuf>,
        dwelling: bool,
    ) -> Turned {
        let mut rest = rest;
        // Complete messages already behind this one: someone must read
        // them now (no edge will come for them).
        let buffered = rest.as_mut().is_some_and(|b| {
            !matches!(
                b.read_message(&NoRead, &self.limits),
                Err(FrameError::TimedOut)
            )
        });
        let mut t = lock(&conn.turn);
        if rest.is_some() {
            // (Else the connection holds none: the holder took it.)
            *lock(&conn.rx) = rest;
        }
        let at_limit = t.running + 1 >= self.per_conn;
        // An undrained socket, or bytes that arrived meanwhile, need a
        // reader now too.
        let more = buffered || !conn.sock.drained() || std::mem::take(&mut t.notified);
        if dwelling && (at_limit || !more) {
            return Turned::Kept;
        }
        // (Not while the thread that dwelt here before still runs the
        // request the sweep took the turn from.)
        if !at_limit && !more && conn.dwell.is_idle() && self.reserve_dwell(orb) {
            conn.mute(&mut t);
            return Turned::Dwell;
        }
        t.running += 1;
        if at_limit {
            t.parked = true;
            conn.let_go(&mut t);
            return Turned::Away;
        }
        if !more {
            conn.let_go(&mut t);
            return Turned::Away;
        }
        if dwelling {
            // The next reader must not wait.
            conn.sock.set_waiting(false);
        }
        drop(t);
        lock(&self.queue).push_back(Work::Turn(conn.clone()));
        self.wake_one(orb);
        Turned::Away
    }
}

/// What became of a connection's read turn when its holder took a
/// request ([`Pool::hand_on`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Turned {
    /// Handed on (or parked): the holder leaves the connection.
    Away,
    /// The dwelling holder keeps it, to read again after the request.
    Kept,
    /// The holder keeps it and starts dwelling.
    Dwell,
}

/// Starts one pool thread (counted in `total` by the caller).
pub(super) fn spawn(orb: &Arc<OrbInner>) -> std::io::Result<()> {
    let server = &orb.server;
    let Some(pool) = server.pool() else {
        return Ok(());
    };
    *lock(&server.live) += 1;
    let weak = Arc::downgrade(orb);
    let spawned = std::thread::Builder::new()
        .name("orb-server".into())
        .spawn(move || {
            IN_POOL.with(|f| f.set(true));
            if pool.kicks {
                kick::unblock_here();
            }
            run(&weak, &pool);
            if let Some(o) = weak.upgrade() {
                o.server.thread_done();
            }
        });
    match spawned {
        Ok(h) => {
            let mut ts = lock(&server.threads);
            ts.retain(|h| !h.is_finished());
            ts.push(h);
            Ok(())
        }
        Err(e) => {
            server.thread_done();
            Err(e)
        }
    }
}

/// What a pool thread takes up next.
enum Work {
    /// An event from the poller.
    Event(Token),
    /// A connection's read turn, handed on with messages buffered.
    Turn(Arc<Conn>),
}

fn run(orb: &Weak<OrbInner>, pool: &Pool) {
    let mut w = Worker {
        tx: Writer::new(ByteOrder::NATIVE),
        cache: poa::ResolveCache::default(),
        spare: RxBuf::default(),
        events: Events::with_capacity(BATCH),
    };
    loop {
        if pool.done.load(Ordering::Acquire) {
            if pool.kicks && pool.dwellers.load(Ordering::SeqCst) > 0 {
                // Dwelling threads wait in `recv` without a timeout: the
                // sweeps kick them out first.
                std::thread::sleep(SWEEP);
                pool.sweep_if_due();
                continue;
            }
            // Every thread ends: pass it on.
            pool.poller.wake();
            pool.total.fetch_sub(1, Ordering::SeqCst);
            return;
        }
        if pool.retire() {
            return;
        }
        // Counted idle before looking at the queue: see `take_events`.
        pool.idle.fetch_add(1, Ordering::SeqCst);
        let work = match pool.pop_ready() {
            Some(work) => {
                pool.idle.fetch_sub(1, Ordering::SeqCst);
                work
            }
            None => {
                let stopping =
                    || pool.stopping.load(Ordering::Acquire) || pool.done.load(Ordering::Acquire);
                // On the bench only a thread that may retire needs to
                // wake (the sweeps and scans are the polling threads').
                let benched = (pool.total.load(Ordering::Relaxed) > pool.core).then_some(IDLE_POLL);
                match pool.pollers.begin(benched, stopping) {
                    Seat::Poll => {}
                    Seat::TimedOut => {
                        pool.idle.fetch_sub(1, Ordering::SeqCst);
                        continue;
                    }
                    Seat::Promoted => {
                        // Work queued while this thread sat on the bench
                        // comes first (its wake-up may have gone to the
                        // thread it replaces).
                        if !lock(&pool.queue).is_empty() {
                            pool.pollers.end();
                            pool.idle.fetch_sub(1, Ordering::SeqCst);
                            continue;
                        }
                    }
                }
                // Worked out once seated: a thread that sat on the bench
                // must see the dwellers that started meanwhile (or nobody
                // would sweep). The kept threads sleep without a timeout
                // while the ORB runs: a timed `epoll_wait` arms a
                // high-resolution timer per wait, which in a virtual
                // machine reprograms the timer device. Threads that may
                // retire, and everyone during shutdown, wake now and then
                // to look.
                let timeout = if pool.dwellers.load(Ordering::Relaxed) > 0 {
                    Some(SWEEP)
                } else if pool.stopping.load(Ordering::Acquire) {
                    Some(TICK)
                } else if pool.total.load(Ordering::Relaxed) > pool.core {
                    Some(IDLE_POLL)
                } else {
                    // (`None` unless idle connections are closed.)
                    pool.idle_scan
                };
                let batch = pool.batch();
                let events = w.events.with_room(batch);
                let got = pool.poller.wait(events, timeout);
                pool.pollers.end();
                pool.idle.fetch_sub(1, Ordering::SeqCst);
                pool.sweep_if_due();
                let Some(_) = got else {
                    let Some(o) = orb.upgrade() else {
                        pool.total.fetch_sub(1, Ordering::SeqCst);
                        return;
                    };
                    if pool.idle_scan_due() {
                        o.server.close_idle();
                    }
                    o.server.housekeeping();
                    continue;
                };
                match pool.take_batch(events) {
                    Some(t) => Work::Event(t),
                    // Only a wake-up: for queued work.
                    None => continue,
                }
            }
        };
        let Some(o) = orb.upgrade() else {
            pool.total.fetch_sub(1, Ordering::SeqCst);
            return;
        };
        if pool.idle_scan_due() {
            o.server.close_idle();
        }
        let orb = Orb::from_inner(o);
        match work {
            Work::Turn(c) => serve_turn(&orb, pool, &c, &mut w),
            Work::Event(t) => match t.kind {
                // (Taken in `take_batch`, never run as work.)
                Kind::Wake => {}
                Kind::Listener => super::acceptor::accept_ready(&orb, t.id as usize),
                Kind::Write => {
                    if let Some(c) = orb.inner().server.conn(t.id) {
                        c.flush();
                    }
                }
                Kind::Read => {
                    if let Some(c) = orb.inner().server.conn(t.id) {
                        if c.take_turn() {
                            serve_turn(&orb, pool, &c, &mut w);
                        }
                    }
                }
            },
        }
    }
}

/// The read turn of `conn`: reads until a complete message is framed
/// (or the socket has no more), handles messages other than requests
/// inline, and for a request hands the turn on before dispatching it.
fn serve_turn(orb: &Orb, pool: &Pool, conn: &Arc<Conn>, w: &mut Worker) {
    let _entered = conn.span.enter();
    let mut dwelling = false;
    serve(orb, pool, conn, w, &mut dwelling);
    if dwelling {
        pool.end_dwell(conn);
    }
}

/// [`serve_turn`]'s loop; `dwelling` tells whether this thread dwells on
/// `conn` (see the module's comment) when it returns.
fn serve(orb: &Orb, pool: &Pool, conn: &Arc<Conn>, w: &mut Worker, dwelling: &mut bool) {
    let limits = orb.inner().config.limits;
    let mut buf = lock(&conn.rx)
        .take()
        .unwrap_or_else(|| std::mem::take(&mut w.spare));
    loop {
        if conn.is_closed() {
            return;
        }
        let len = match buf.read_message(&conn.sock, &limits) {
            Ok(n) => n,
            Err(FrameError::TimedOut) => {
                if *dwelling {
                    // Quiet for the whole dwell time: back to the pool.
                    conn.sock.set_waiting(false);
                    pool.end_dwell(conn);
                    *dwelling = false;
                } else if pool.try_dwell(orb.inner_arc(), conn) {
                    *dwelling = true;
                    continue;
                }
                // Drained and nothing complete: let go of the turn (the
                // next arrival is an event), unless bytes arrived since.
                if conn.release_turn_keeping(&mut buf, &mut w.spare) {
                    continue;
                }
                return;
            }
            Err(FrameError::Eof { .. }) | Err(FrameError::Io(_)) => {
                close(orb, conn);
                return;
            }
            Err(FrameError::Garbage(_)) => {
                // The machine answers it with MessageError.
                machine::feed(orb, conn, buf.unread());
                close(orb, conn);
                return;
            }
        };
        // The fast path: the common request, read at fixed offsets (the
        // machine's prefix; see `fast_path`). Everything else goes
        // through the connection's machine.
        match request_layout(buf.message(len)) {
            Some(at) if at.response_expected() => {
                // The rest of the buffer goes back to the connection (the
                // smaller part is copied); `buf` keeps the message where
                // it is in the common case (nothing else in the buffer).
                let rest = split(&mut buf, len);
                let go_on = twoway(orb, pool, conn, w, dwelling, &mut buf, rest, |cx, m| {
                    cx.fast(m.message_mut(len), &at)
                });
                if !go_on {
                    return;
                }
            }
            Some(at) => {
                // A oneway: run by the turn's holder, in the order it
                // arrived, before whatever follows it on the connection
                // (a twoway after a batch of oneways sees them all done),
                // and a stream of them costs no hand-off.
                let next = inline(orb, pool, conn, w, *dwelling, |cx| {
                    cx.fast(buf.message_mut(len), &at)
                });
                buf.consume(len);
                if let Next::Close = next {
                    close(orb, conn);
                    return;
                }
            }
            None => {
                let step = machine::feed(orb, conn, buf.message(len));
                buf.consume(len);
                match step {
                    machine::Step::Nothing => {}
                    machine::Step::Close => {
                        close(orb, conn);
                        return;
                    }
                    machine::Step::Request(req) if !req.response_flags.response_expected() => {
                        // A oneway, as above.
                        if let Next::Close =
                            inline(orb, pool, conn, w, *dwelling, |cx| cx.machine_request(req))
                        {
                            close(orb, conn);
                            return;
                        }
                    }
                    machine::Step::Request(req) => {
                        // The machine holds the message: the buffer is all
                        // rest.
                        let rest = (!buf.unread().is_empty())
                            .then(|| std::mem::replace(&mut buf, std::mem::take(&mut w.spare)));
                        let go_on =
                            twoway(orb, pool, conn, w, dwelling, &mut buf, rest, |cx, _| {
                                cx.machine_request(req)
                            });
                        if !go_on {
                            return;
                        }
                    }
                }
            }
        }
    }
}

/// Runs a twoway request framed by the turn's holder: hands the turn on
/// (with the bytes after the request, `rest`) unless nothing follows it
/// on a dwelling thread, runs `run` on the request's buffer `buf`, and
/// takes the turn back if it is still this thread's or the connection
/// waited for this request. False: the thread leaves the connection.
///
/// Inlined at each of its two callers, so that the fast request's
/// layout stays where `request_layout` put it.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn twoway(
    orb: &Orb,
    pool: &Pool,
    conn: &Arc<Conn>,
    w: &mut Worker,
    dwelling: &mut bool,
    buf: &mut RxBuf,
    rest: Option<RxBuf>,
    run: impl FnOnce(&mut ConnCtx<'_>, &mut RxBuf) -> Next,
) -> bool {
    let left_rest = rest.is_some();
    let turned = if *dwelling && !left_rest && conn.sock.drained() {
        // The common case of a dwelling thread: nothing behind this
        // request, so the turn stays (no lock taken).
        Turned::Kept
    } else {
        pool.hand_on(orb.inner_arc(), conn, rest, *dwelling)
    };
    match turned {
        Turned::Away if *dwelling => {
            pool.end_dwell(conn);
            *dwelling = false;
        }
        Turned::Away => {}
        Turned::Kept => conn.dwell.start(),
        Turned::Dwell => {
            conn.dwell.start();
            pool.enter_dwell(conn);
            *dwelling = true;
        }
    }
    let upcall = pool.upcall_begin(orb.inner_arc(), *dwelling);
    let mut cx = context(orb, conn, w, upcall);
    let next = run(&mut cx, buf);
    cx.upcall_done();
    let unread = buf.unread().len();
    buf.consume(unread);
    buf.shrink_if_idle(1 << 20);
    if let Next::Close = next {
        close(orb, conn);
    }
    let still_dwelling = turned != Turned::Away && conn.dwell.finish();
    let resume = still_dwelling || {
        // The turn went away (here, or by the sweep, which then
        // counted this request): uncount it, and take the turn back
        // if the connection waited for it.
        let mut t = lock(&conn.turn);
        t.running -= 1;
        let resume = std::mem::take(&mut t.parked);
        if resume {
            t.owned = true;
            t.notified = false;
        }
        resume
    };
    if *dwelling && !still_dwelling {
        // The sweep gave the turn to the pool meanwhile.
        pool.end_dwell(conn);
        *dwelling = false;
    }
    if !resume {
        w.spare = std::mem::take(buf);
        return false;
    }
    // The turn stayed with this thread, or the connection waited for
    // this request to finish: its turn is this thread's now (the loop's
    // first check sees a close meanwhile). Unless nobody else held the
    // turn, the connection holds the bytes.
    if !still_dwelling || left_rest {
        w.spare = std::mem::take(buf);
        *buf = lock(&conn.rx)
            .take()
            .unwrap_or_else(|| std::mem::take(&mut w.spare));
    }
    true
}

/// Runs `f` on the turn's holder (a oneway), counted as an upcall.
fn inline(
    orb: &Orb,
    pool: &Pool,
    conn: &Conn,
    w: &mut Worker,
    dwelling: bool,
    f: impl FnOnce(&mut ConnCtx<'_>) -> Next,
) -> Next {
    let upcall = pool.upcall_begin(orb.inner_arc(), dwelling);
    let mut cx = context(orb, conn, w, upcall);
    let next = f(&mut cx);
    cx.upcall_done();
    next
}

/// Splits a buffer whose first `len` unread bytes are a message from the
/// bytes after it, copying whichever part is smaller: `buf` is left
/// holding the message (at its start), and the rest is returned, if any.
#[inline(always)]
fn split(buf: &mut RxBuf, len: usize) -> Option<RxBuf> {
    let rest = buf.unread().len() - len;
    if rest == 0 {
        None
    } else {
        Some(split_rest(buf, len, rest))
    }
}

/// [`split`] when bytes follow the message.
#[cold]
fn split_rest(buf: &mut RxBuf, len: usize, rest: usize) -> RxBuf {
    if rest <= len {
        RxBuf::from_message(&buf.unread()[len..])
    } else {
        let m = RxBuf::from_message(buf.message(len));
        buf.consume(len);
        std::mem::replace(buf, m)
    }
}

/// One request's context; `upcall`: the count it ends (see
/// [`Pool::upcall_begin`]).
fn context<'a>(
    orb: &'a Orb,
    conn: &'a Conn,
    w: &'a mut Worker,
    upcall: Option<&'a AtomicUsize>,
) -> ConnCtx<'a> {
    // Read per request, not once per turn: another thread may still be
    // running the request that negotiates them when this turn begins.
    let codesets = conn.codesets.load();
    ConnCtx {
        orb,
        slot: conn,
        tx: &mut w.tx,
        codesets,
        cache: &mut w.cache,
        upcall,
    }
}

/// Closes `conn` and forgets it (once).
pub(super) fn close(orb: &Orb, conn: &Conn) {
    orb.inner().server.close_conn(conn);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(n: usize, fill: u8) -> Vec<u8> {
        let mut w = Writer::new(ByteOrder::Big);
        peregrine_giop::encode_close_connection(&mut w, peregrine_cdr::GiopVersion::V1_2).unwrap();
        let mut v = w.into_vec();
        v[8..12].copy_from_slice(&(n as u32).to_be_bytes());
        v.resize(12 + n, fill);
        v
    }

    /// Either way of splitting keeps the message and the rest intact.
    #[test]
    fn split_keeps_both_parts() {
        for (a, b) in [(10, 0), (10, 4), (4, 100), (50, 50)] {
            let (m1, m2) = (msg(a, 1), msg(b, 2));
            let mut both = m1.clone();
            if b > 0 {
                both.extend_from_slice(&m2);
            }
            let mut mine = RxBuf::from_message(&both);
            let rest = split(&mut mine, m1.len());
            assert_eq!(&mine.unread()[..m1.len()], &m1[..]);
            match rest {
                Some(r) => assert_eq!(r.unread(), &m2[..]),
                None => assert_eq!(b, 0),
            }
        }
    }
}
