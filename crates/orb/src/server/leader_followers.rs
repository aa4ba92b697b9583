//! The server's threads: a leader/followers pool over one epoll instance.
//!
//! Every idle thread waits in `epoll_wait` on the same instance; the
//! kernel hands each one-shot event to one of them (the leader of the
//! moment), so there is no separate follower to wake per request. The
//! thread that reads a complete request gives the connection's read turn
//! back first (re-arms it, or queues the connection if more requests are
//! already buffered) and then runs the upcall inline: no thread hop on
//! the common path, and the connection's next request can be taken by
//! another thread meanwhile. The pool grows when the last waiting thread
//! takes an event (up to the most threads allowed) and shrinks back to
//! the kept threads when idle.

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use peregrine_cdr::{ByteOrder, Writer};
use peregrine_giop::{decode_message, Assembled, Limits, Message};

use super::connection::{Conn, NoRead};
use super::dispatch::{ConnCtx, Next};
use super::fast_path::{fast_layout, is_request, is_unfragmented_request_1_2};
use super::poller::{Kind, Poller, Token};
use super::TICK;
use crate::client::lock;
use crate::orb::{Orb, OrbInner};
use crate::poa;
use crate::transport::{FrameError, RxBuf};

/// How often an idle thread beyond the kept ones wakes to see whether
/// it is still needed.
const IDLE_POLL: Duration = Duration::from_secs(1);

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
    /// Connections with complete messages buffered, whose read turn
    /// waits for a thread.
    ready: Mutex<VecDeque<Arc<Conn>>>,
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
    /// Threads running a request.
    in_upcall: AtomicUsize,
    /// Most threads running requests at once in the current period.
    peak_busy: AtomicUsize,
    /// Threads the last period needed (its peak and a waiting one).
    needed: AtomicUsize,
    limits: Limits,
    pub(super) stopping: AtomicBool,
    /// Every thread ends.
    pub(super) done: AtomicBool,
}

/// A thread's own state, reused request after request.
#[derive(Default)]
struct Worker {
    tx: Writer,
    /// This thread's last resolved target.
    cache: poa::ResolveCache,
    /// An empty receive buffer, lent to the connection this thread reads.
    spare: RxBuf,
}

impl Pool {
    pub(super) fn new(poller: Arc<Poller>, opts: &super::ServerOptions, limits: Limits) -> Pool {
        Pool {
            poller,
            ready: Mutex::new(VecDeque::new()),
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
            stopping: AtomicBool::new(false),
            done: AtomicBool::new(false),
        }
    }

    /// Threads kept when idle.
    pub(super) fn core(&self) -> usize {
        self.core
    }

    /// Threads alive.
    pub(super) fn threads(&self) -> usize {
        self.total.load(Ordering::SeqCst)
    }

    /// Starts a thread if fewer than the most allowed run.
    pub(super) fn grow(&self, orb: &Arc<OrbInner>) {
        let mut n = self.total.load(Ordering::SeqCst);
        loop {
            if n >= self.max {
                return;
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
        }
    }

    /// A thread starts running a request. If every thread now runs one,
    /// nobody would take the next event (a nested call back into this
    /// server would wait forever): start another, up to the most.
    fn upcall_begin(&self, orb: &Arc<OrbInner>) {
        let busy = self.in_upcall.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak_busy.fetch_max(busy, Ordering::Relaxed);
        if busy >= self.total.load(Ordering::SeqCst) {
            self.grow(orb);
        }
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
            .max(self.peak_busy.load(Ordering::Relaxed) + 1);
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

    /// Wakes a waiting thread, or starts one if none waits.
    fn wake_one(&self, orb: &Arc<OrbInner>) {
        if self.idle.load(Ordering::SeqCst) == 0 {
            self.grow(orb);
        }
        self.poller.wake();
    }

    fn pop_ready(&self) -> Option<Arc<Conn>> {
        let mut q = lock(&self.ready);
        let c = q.pop_front()?;
        if !q.is_empty() {
            // Pass the wake-up on for the rest.
            self.poller.wake();
        }
        Some(c)
    }

    /// The holder of `conn`'s read turn took a request and puts `rest`
    /// (the bytes after it) back. Below the connection's concurrency
    /// limit the turn goes on: to a waiting thread (through the ready
    /// queue) if there is more to read now, else to whoever gets the
    /// next read event. At the limit the connection is parked.
    fn hand_on(&self, orb: &Arc<OrbInner>, conn: &Arc<Conn>, rest: Option<RxBuf>) {
        let queue = {
            let mut t = lock(&conn.turn);
            t.running += 1;
            let mut rx = lock(&conn.rx);
            *rx = rest;
            if t.running >= self.per_conn {
                t.parked = true;
                conn.let_go(&mut t);
                false
            } else {
                let buffered = rx.as_mut().is_some_and(|b| {
                    !matches!(
                        b.read_message(&NoRead, &self.limits),
                        Err(FrameError::TimedOut)
                    )
                });
                // Undrained socket or bytes arrived meanwhile: no new
                // edge will come for them, so someone must read now.
                let more = buffered || !conn.sock.drained() || std::mem::take(&mut t.notified);
                if !more {
                    conn.let_go(&mut t);
                }
                more
            }
        };
        if queue {
            lock(&self.ready).push_back(conn.clone());
            self.wake_one(orb);
        }
    }
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

enum Work {
    Event(Token),
    Turn(Arc<Conn>),
}

fn run(orb: &Weak<OrbInner>, pool: &Pool) {
    let mut w = Worker {
        tx: Writer::new(ByteOrder::NATIVE),
        ..Worker::default()
    };
    loop {
        if pool.done.load(Ordering::Acquire) {
            // Every thread ends: pass it on.
            pool.poller.wake();
            pool.total.fetch_sub(1, Ordering::SeqCst);
            return;
        }
        if pool.retire() {
            return;
        }
        let work = match pool.pop_ready() {
            Some(c) => Work::Turn(c),
            None => {
                pool.idle.fetch_add(1, Ordering::SeqCst);
                // The kept threads sleep without a timeout while the ORB
                // runs: a timed `epoll_wait` arms a high-resolution timer
                // per wait, which in a virtual machine reprograms the
                // timer device. Threads that may retire, and everyone
                // during shutdown, wake now and then to look.
                let timeout = if pool.stopping.load(Ordering::Acquire) {
                    Some(TICK)
                } else if pool.total.load(Ordering::Relaxed) > pool.core {
                    Some(IDLE_POLL)
                } else {
                    None
                };
                let ev = pool.poller.wait(timeout);
                pool.idle.fetch_sub(1, Ordering::SeqCst);
                let Some(t) = ev else {
                    let Some(o) = orb.upgrade() else {
                        pool.total.fetch_sub(1, Ordering::SeqCst);
                        return;
                    };
                    o.server.housekeeping();
                    continue;
                };
                Work::Event(t)
            }
        };
        let Some(o) = orb.upgrade() else {
            pool.total.fetch_sub(1, Ordering::SeqCst);
            return;
        };
        let orb = Orb::from_inner(o);
        match work {
            Work::Turn(c) => serve_turn(&orb, pool, &c, &mut w),
            Work::Event(t) => match t.kind {
                Kind::Wake => pool.poller.wake_taken(),
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
                conn.message_error(buf.unread());
                close(orb, conn);
                return;
            }
        };
        let msg = buf.message_mut(len);
        let whole = if is_unfragmented_request_1_2(msg) {
            None
        } else {
            match lock(&conn.reasm).push(msg) {
                Ok(Assembled::Whole(_)) => None,
                Ok(Assembled::Reassembled(v)) => Some(v),
                Ok(Assembled::Incomplete) => {
                    buf.consume(len);
                    continue;
                }
                Err(_) => {
                    conn.message_error(msg);
                    close(orb, conn);
                    return;
                }
            }
        };
        let inline = match &whole {
            Some(v) => !is_request(v) || is_oneway(v, &limits),
            None => !is_request(msg) || is_oneway(msg, &limits),
        };
        if inline {
            // LocateRequest, CancelRequest, CloseConnection ...: quick,
            // answered by the turn's holder. Oneways too: they run in
            // the order they arrived, each before whatever follows it on
            // the connection (a twoway after a batch of oneways sees
            // them all done), and a stream of them costs no hand-off.
            let next = {
                let counted = is_request(match &whole {
                    Some(v) => v,
                    None => buf.message(len),
                });
                let mut cx = context(orb, conn, w);
                if counted {
                    pool.upcall_begin(orb.inner_arc());
                    cx.upcall = Some(&pool.in_upcall);
                }
                let next = match whole {
                    Some(mut v) => cx.handle(&mut v),
                    None => cx.handle(buf.message_mut(len)),
                };
                cx.upcall_done();
                next
            };
            buf.consume(len);
            if let Next::Close = next {
                close(orb, conn);
                return;
            }
            continue;
        }
        // A request: the rest of the buffer goes back to the connection
        // (the smaller part is copied) and the turn is handed on before
        // the upcall.
        let (mut mine, mlen, rest) = match whole {
            Some(v) => {
                buf.consume(len);
                let rest = (!buf.unread().is_empty()).then_some(buf);
                (RxBuf::from_message(&v), v.len(), rest)
            }
            None => {
                let (m, r) = split(buf, len);
                (m, len, r)
            }
        };
        pool.hand_on(orb.inner_arc(), conn, rest);
        pool.upcall_begin(orb.inner_arc());
        let mut cx = context(orb, conn, w);
        cx.upcall = Some(&pool.in_upcall);
        let next = cx.handle(mine.message_mut(mlen));
        cx.upcall_done();
        let unread = mine.unread().len();
        mine.consume(unread);
        mine.shrink_if_idle(1 << 20);
        w.spare = mine;
        if let Next::Close = next {
            close(orb, conn);
        }
        let resume = {
            let mut t = lock(&conn.turn);
            t.running -= 1;
            let resume = std::mem::take(&mut t.parked);
            if resume {
                t.owned = true;
                t.notified = false;
            }
            resume
        };
        if !resume || conn.is_closed() {
            return;
        }
        // The connection waited for this request to finish: its turn is
        // this thread's now.
        buf = lock(&conn.rx)
            .take()
            .unwrap_or_else(|| std::mem::take(&mut w.spare));
    }
}

/// True for a Request that expects no reply.
fn is_oneway(m: &[u8], limits: &Limits) -> bool {
    if let Some(at) = fast_layout(m) {
        return !at.expected;
    }
    matches!(
        decode_message(m, limits),
        Ok((_, Message::Request { header, .. })) if !header.response_flags.response_expected()
    )
}

/// Splits a buffer whose first `len` unread bytes are a message from the
/// bytes after it, copying whichever part is smaller: the buffer holding
/// the message (at its start), and the rest if any.
fn split(mut buf: RxBuf, len: usize) -> (RxBuf, Option<RxBuf>) {
    let rest = buf.unread().len() - len;
    if rest == 0 {
        (buf, None)
    } else if rest <= len {
        let r = RxBuf::from_message(&buf.unread()[len..]);
        (buf, Some(r))
    } else {
        let m = RxBuf::from_message(buf.message(len));
        buf.consume(len);
        (m, Some(buf))
    }
}

fn context<'a>(orb: &'a Orb, conn: &'a Conn, w: &'a mut Worker) -> ConnCtx<'a> {
    ConnCtx {
        orb,
        slot: conn,
        tx: &mut w.tx,
        codesets: *lock(&conn.codesets),
        cache: &mut w.cache,
        upcall: None,
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
            let buf = RxBuf::from_message(&both);
            let (mine, rest) = split(buf, m1.len());
            assert_eq!(&mine.unread()[..m1.len()], &m1[..]);
            match rest {
                Some(r) => assert_eq!(r.unread(), &m2[..]),
                None => assert_eq!(b, 0),
            }
        }
    }
}
