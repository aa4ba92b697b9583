//! One accepted connection: its socket, the bytes received but not yet
//! handled, how many of its requests run, its negotiated code sets, its
//! GIOP state machine and its reply queue.

use std::io;
use std::net::{Shutdown, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use peregrine_cdr::{CharCodeSet, CodeSets, GiopVersion, WcharCodeSet};
use peregrine_giop::conn::{Config, ServerConnection};
use peregrine_giop::{CodeSetContext, Limits};

use super::kick::WaitState;
use super::outbound::{Outbound, WriteError};
use super::poller::{Kind, Poller, Token};
use crate::client::lock;
use crate::transport::{RxBuf, Transport};

/// Set in [`Conn::state`] once CloseConnection was sent.
const CLOSE_SENT: u64 = 1 << 63;
/// Set in [`Conn::state`] when the ORB shuts down: no new request starts.
const CLOSING: u64 = 1 << 62;
/// [`Conn::state`]'s count of requests in progress.
const IN_PROGRESS: u64 = (1 << 32) - 1;
/// [`Conn::state`]'s count of requests begun since the last idle scan
/// (kept only when idle connections are closed; the scan takes it back
/// to 0, so it stays far below its 30 bits).
const SINCE_SCAN: u64 = ((1 << 62) - 1) & !IN_PROGRESS;
const ONE_SINCE_SCAN: u64 = 1 << 32;

/// What an idle scan did with a connection ([`Conn::close_if_idle`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum IdleCheck {
    /// Used since the last scan, busy, or not idle for long enough.
    Open,
    /// Idle: CloseConnection went out.
    CloseSent,
    /// CloseConnection went out before and the client has not closed:
    /// the server closes now.
    Lingered,
}

/// A TCP socket as the framing code reads it: without waiting (the
/// socket is left blocking, and every call passes `MSG_DONTWAIT`),
/// except while [`Sock::set_waiting`] says so.
pub(super) struct Sock {
    pub(super) stream: TcpStream,
    peer: String,
    /// The last read returned less than asked (or nothing): the socket
    /// had no more bytes then, so with edge-triggered events a new
    /// arrival will be reported.
    drained: AtomicBool,
    /// See [`Sock::set_waiting`].
    waiting: AtomicBool,
    /// Whether the dwelling thread waits in `recv`, for the sweep that
    /// ends a quiet dwell (see `kick`).
    pub(super) wait: WaitState,
}

impl Sock {
    /// `dwell`: how long a dwelling read waits for bytes (`None`: until
    /// bytes come or the sweep kicks the thread).
    pub(super) fn new(stream: TcpStream, dwell: Option<Duration>) -> io::Result<Sock> {
        stream.set_nonblocking(false)?;
        stream.set_read_timeout(dwell)?;
        let _ = stream.set_nodelay(true);
        let peer = stream
            .peer_addr()
            .map(|a| a.to_string())
            .unwrap_or_else(|_| "?".into());
        Ok(Sock {
            stream,
            peer,
            drained: AtomicBool::new(true),
            waiting: AtomicBool::new(false),
            wait: WaitState::default(),
        })
    }

    /// See [`Sock::drained`]'s field.
    pub(super) fn drained(&self) -> bool {
        self.drained.load(Ordering::Relaxed)
    }

    /// Whether reads wait for bytes, up to the dwell time (then
    /// `WouldBlock`): set by the turn's holder while it dwells on the
    /// connection.
    pub(super) fn set_waiting(&self, on: bool) {
        self.waiting.store(on, Ordering::Relaxed);
    }
}

impl Transport for Sock {
    fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        let r = if self.waiting.load(Ordering::Relaxed) {
            self.wait.enter();
            let r = crate::sock_io::recv(&self.stream, buf);
            self.wait.leave();
            match r {
                // Kicked (or another signal): the dwell ends as if it
                // had timed out.
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                    Err(io::ErrorKind::WouldBlock.into())
                }
                r => r,
            }
        } else {
            crate::sock_io::recv_nowait(&self.stream, buf)
        };
        let drained = match &r {
            Ok(n) => *n < buf.len(),
            Err(e) => matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            ),
        };
        self.drained.store(drained, Ordering::Relaxed);
        r
    }
    fn write_all_vectored(&self, bufs: &[&[u8]]) -> io::Result<()> {
        // Not used: replies go through `Outbound`.
        for b in bufs {
            crate::sock_io::send_all(&self.stream, b)?;
        }
        Ok(())
    }
    fn set_read_timeout(&self, _: Option<Duration>) -> io::Result<()> {
        Ok(())
    }
    fn peer_closed_or_readable(&self) -> bool {
        false
    }
    fn shutdown_write(&self) {
        let _ = self.stream.shutdown(Shutdown::Write);
    }
    fn shutdown(&self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }
    fn peer(&self) -> &str {
        &self.peer
    }
}

/// A transport that never has bytes: framing over it tells whether a
/// buffer already holds a complete message, without reading.
pub(super) struct NoRead;

impl Transport for NoRead {
    fn read(&self, _: &mut [u8]) -> io::Result<usize> {
        Err(io::ErrorKind::WouldBlock.into())
    }
    fn write_all_vectored(&self, _: &[&[u8]]) -> io::Result<()> {
        Ok(())
    }
    fn set_read_timeout(&self, _: Option<Duration>) -> io::Result<()> {
        Ok(())
    }
    fn peer_closed_or_readable(&self) -> bool {
        false
    }
    fn shutdown_write(&self) {}
    fn shutdown(&self) {}
    fn peer(&self) -> &str {
        ""
    }
}

/// Who may read the connection next. One thread at a time holds the
/// read turn; a read event for a connection whose turn is held (or
/// parked) only sets `notified`, and the holder looks at the socket
/// again before letting go.
#[derive(Debug, Default)]
pub(super) struct Turn {
    /// A thread (or the pool's ready queue) holds the read turn.
    pub(super) owned: bool,
    /// Bytes arrived while the turn was held or parked.
    pub(super) notified: bool,
    /// Requests of this connection being dispatched.
    pub(super) running: usize,
    /// The connection's concurrency limit was reached: nobody reads it
    /// until a request finishes, and the thread that finishes it takes
    /// the turn.
    pub(super) parked: bool,
    /// Read events are off: bytes kept arriving while the turn was held
    /// (a stream of oneways, pipelined calls), and each would wake a
    /// follower only to be told to go back to sleep. Back on when the
    /// turn is let go.
    pub(super) muted: bool,
}

/// What the thread dwelling on a connection is doing, as one word the
/// pool's sweep can read without the turn's lock: whether it runs a
/// request while keeping the read turn, that request's number, and
/// whether the sweep took the turn from it meanwhile.
///
/// A request run this way is not counted in [`Turn::running`] (the
/// common case takes no lock at all); the sweep counts it when it takes
/// the turn, and the thread uncounts it after.
#[derive(Debug, Default)]
pub(super) struct DwellState(AtomicU32);

impl DwellState {
    const RUNNING: u32 = 1;
    const RELEASED: u32 = 2;
    const SEQ: u32 = 4;

    /// The holder starts a request, keeping the turn.
    pub(super) fn start(&self) {
        let seq = self.0.load(Ordering::Relaxed) & !(Self::RUNNING | Self::RELEASED);
        self.0.store(
            seq.wrapping_add(Self::SEQ) | Self::RUNNING,
            Ordering::Release,
        );
    }

    /// The holder's request is over: true if the turn is still its own
    /// (false: the sweep took it).
    pub(super) fn finish(&self) -> bool {
        let was = self
            .0
            .fetch_and(!(Self::RUNNING | Self::RELEASED), Ordering::AcqRel);
        was & Self::RELEASED == 0
    }

    /// No request runs with the turn kept, nor one whose turn the sweep
    /// took (a thread may start dwelling: one at a time per connection).
    pub(super) fn is_idle(&self) -> bool {
        self.0.load(Ordering::Acquire) & Self::RUNNING == 0
    }

    /// A snapshot for the sweep: `Some(word)` while a request runs with
    /// the turn kept.
    pub(super) fn running(&self) -> Option<u32> {
        let w = self.0.load(Ordering::Acquire);
        (w & (Self::RUNNING | Self::RELEASED) == Self::RUNNING).then_some(w)
    }

    /// The sweep takes the turn from the request `seen` (still running):
    /// true if it did.
    pub(super) fn release(&self, seen: u32) -> bool {
        self.0
            .compare_exchange(
                seen,
                seen | Self::RELEASED,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
    }
}

/// One accepted connection.
pub(crate) struct Conn {
    pub(super) id: u64,
    pub(super) sock: Sock,
    poller: Arc<Poller>,
    /// Requests being dispatched in the low bits ([`IN_PROGRESS`]),
    /// requests begun since the last idle scan ([`SINCE_SCAN`]),
    /// [`CLOSING`] and [`CLOSE_SENT`]. CloseConnection goes out only on a transition
    /// from 0 (no request in progress) to `CLOSE_SENT`, and a request
    /// that finds either high bit set after counting itself backs out
    /// unprocessed. So no reply is ever written after CloseConnection.
    state: AtomicU64,
    /// What [`Conn::begin_request`] adds to `state`: one in progress, and
    /// one since the last scan if idle connections are closed.
    request_unit: u64,
    /// The fast path took a request (for the version of CloseConnection;
    /// see [`Conn::note_fast_request`]).
    fast_seen: AtomicBool,
    /// The code sets the client chose.
    pub(super) codesets: ConnCodeSets,
    /// Bytes received and not handled while no thread holds the turn (a
    /// partial message, or messages that arrived behind one being
    /// handled). Empty connections hold no buffer.
    pub(super) rx: Mutex<Option<RxBuf>>,
    /// The connection's GIOP state: every message but the fast path's
    /// goes in (by the turn's holder), and what it answers goes out from
    /// whichever thread holds it (see [`Conn::flush_machine`]).
    pub(super) machine: Mutex<ServerConnection>,
    pub(super) turn: Mutex<Turn>,
    /// The request a thread dwelling on the connection runs while it
    /// keeps the read turn (see [`DwellState`]).
    pub(super) dwell: DwellState,
    out: Outbound,
    closed: AtomicBool,
    /// The span of the connection's events (names the peer).
    pub(super) span: tracing::Span,
}

/// A connection's code sets, read by every request: one byte, so that
/// the read takes no lock (a lock and its release are two atomic
/// operations and their code on the request path; docs/PERFORMANCE.md,
/// step 57). Written once, when the client's first request says which.
pub(super) struct ConnCodeSets(AtomicU8);

impl ConnCodeSets {
    const LATIN1: u8 = 1;
    const WCHAR_UTF16: u8 = 2;
    const WCHAR_UCS2: u8 = 4;

    fn new(c: CodeSets) -> ConnCodeSets {
        ConnCodeSets(AtomicU8::new(Self::pack(c)))
    }

    fn pack(c: CodeSets) -> u8 {
        let char = match c.char {
            CharCodeSet::Utf8 => 0,
            CharCodeSet::Latin1 => Self::LATIN1,
        };
        let wchar = match c.wchar {
            None => 0,
            Some(WcharCodeSet::Utf16) => Self::WCHAR_UTF16,
            Some(WcharCodeSet::Ucs2) => Self::WCHAR_UCS2,
        };
        char | wchar
    }

    /// The code sets now.
    #[inline]
    pub(super) fn load(&self) -> CodeSets {
        let b = self.0.load(Ordering::Acquire);
        CodeSets {
            char: if b & Self::LATIN1 != 0 {
                CharCodeSet::Latin1
            } else {
                CharCodeSet::Utf8
            },
            wchar: if b & Self::WCHAR_UTF16 != 0 {
                Some(WcharCodeSet::Utf16)
            } else if b & Self::WCHAR_UCS2 != 0 {
                Some(WcharCodeSet::Ucs2)
            } else {
                None
            },
        }
    }

    fn store(&self, c: CodeSets) {
        self.0.store(Self::pack(c), Ordering::Release);
    }
}

impl Conn {
    pub(super) fn new(
        id: u64,
        sock: Sock,
        poller: Arc<Poller>,
        limits: Limits,
        fragment_size: usize,
        queue_limit: usize,
        idle_timeout: Option<Duration>,
    ) -> Conn {
        let span = crate::trace::server_connection(sock.peer());
        // GIOP 1.0 for what the server starts before the client spoke:
        // every peer reads it.
        let config = Config::default()
            .with_version(GiopVersion::V1_0)
            .with_limits(limits)
            .with_max_fragment_size(fragment_size.max(peregrine_giop::fragment::MIN_FRAGMENT_LEN));
        let config = match idle_timeout {
            Some(t) => config.with_idle_timeout(t),
            None => config,
        };
        Conn {
            id,
            sock,
            poller,
            state: AtomicU64::new(0),
            request_unit: if idle_timeout.is_some() {
                1 | ONE_SINCE_SCAN
            } else {
                1
            },
            fast_seen: AtomicBool::new(false),
            // Until the client says otherwise (CORBA's defaults).
            codesets: ConnCodeSets::new(CodeSets {
                char: CharCodeSet::Latin1,
                wchar: None,
            }),
            rx: Mutex::new(None),
            machine: Mutex::new(ServerConnection::new(config, Instant::now())),
            turn: Mutex::new(Turn::default()),
            dwell: DwellState::default(),
            out: Outbound::new(queue_limit),
            closed: AtomicBool::new(false),
            span,
        }
    }

    pub(super) fn peer(&self) -> &str {
        self.sock.peer()
    }

    fn read_token(&self) -> Token {
        Token {
            id: self.id,
            kind: Kind::Read,
        }
    }

    /// Registers the socket for reading.
    pub(super) fn register(&self) -> io::Result<()> {
        self.poller
            .add(self.sock.stream.as_raw_fd(), self.read_token())
    }

    /// A read event arrived: true if the caller now holds the read turn;
    /// false if another thread holds it (told to look again) or the
    /// connection waits for a request to finish.
    pub(super) fn take_turn(&self) -> bool {
        let mut t = lock(&self.turn);
        if t.owned || t.parked {
            t.notified = true;
            self.mute(&mut t);
            return false;
        }
        t.owned = true;
        true
    }

    /// Turns read events off (the caller holds `turn`'s lock) until the
    /// turn is let go.
    pub(super) fn mute(&self, t: &mut Turn) {
        if !t.muted {
            t.muted = true;
            let _ = self
                .poller
                .read_interest(self.sock.stream.as_raw_fd(), self.id, false);
        }
    }

    /// Lets go of the turn (the caller holds `turn`'s lock), turning read
    /// events back on if they were off.
    pub(super) fn let_go(&self, t: &mut Turn) {
        t.owned = false;
        if std::mem::take(&mut t.muted)
            && self
                .poller
                .read_interest(self.sock.stream.as_raw_fd(), self.id, true)
                .is_err()
        {
            self.sock.shutdown();
        }
    }

    /// The holder of the turn drained the socket without completing a
    /// message: lets go of the turn, keeping what `buf` holds with the
    /// connection (an empty buffer goes back to `spare`), unless bytes
    /// arrived meanwhile (true: `buf` is still the holder's, read again).
    pub(super) fn release_turn_keeping(&self, buf: &mut RxBuf, spare: &mut RxBuf) -> bool {
        let mut t = lock(&self.turn);
        if std::mem::take(&mut t.notified) {
            return true;
        }
        self.let_go(&mut t);
        let b = std::mem::take(buf);
        if b.unread().is_empty() {
            let mut b = b;
            b.shrink_if_idle(1 << 20);
            *spare = b;
        } else {
            *lock(&self.rx) = Some(b);
        }
        false
    }

    /// Writes one message (a reply, LocateReply, ...), in GIOP fragments
    /// if it is longer than `fragment_size`.
    #[inline(always)]
    pub(super) fn write_message(&self, msg: &[u8], fragment_size: usize) -> Result<(), WriteError> {
        if msg.len() > fragment_size.max(peregrine_giop::fragment::MIN_FRAGMENT_LEN) {
            return self.write_fragmented(msg, fragment_size);
        }
        let r = self
            .out
            .write_one(&self.sock.stream, &self.poller, self.id, msg);
        if let Err(WriteError::QueueFull) = &r {
            self.queue_full();
        }
        r
    }

    #[cold]
    #[inline(never)]
    fn queue_full(&self) {
        crate::trace::reply_queue_full(self.peer());
    }

    #[inline(never)]
    fn write_fragmented(&self, msg: &[u8], fragment_size: usize) -> Result<(), WriteError> {
        let pieces: Vec<peregrine_giop::Piece<'_>> =
            match peregrine_giop::fragment(msg, fragment_size) {
                Ok(f) => f.collect(),
                // Not fragmentable (GIOP 1.0, ...): whole.
                Err(_) => return self.write_bufs(&[msg]),
            };
        let mut bufs: Vec<&[u8]> = Vec::with_capacity(pieces.len() * 2);
        for p in &pieces {
            bufs.push(p.header());
            bufs.push(p.payload);
        }
        self.write_bufs(&bufs)
    }

    fn write_bufs(&self, bufs: &[&[u8]]) -> Result<(), WriteError> {
        let r = self
            .out
            .write(&self.sock.stream, &self.poller, self.id, bufs);
        if let Err(WriteError::QueueFull) = &r {
            self.queue_full();
        }
        r
    }

    /// The socket is writable: flush the queued replies.
    pub(super) fn flush(&self) {
        self.out.flush(&self.sock.stream, &self.poller, self.id);
    }

    /// Counts a request in progress; false (and not counted) once the
    /// connection is closing.
    #[inline]
    pub(super) fn begin_request(&self) -> bool {
        if self.state.fetch_add(self.request_unit, Ordering::SeqCst) & (CLOSE_SENT | CLOSING) != 0 {
            self.state.fetch_sub(self.request_unit, Ordering::SeqCst);
            return false;
        }
        true
    }

    #[inline]
    pub(super) fn end_request(&self) {
        self.state.fetch_sub(1, Ordering::SeqCst);
    }

    /// Requests in progress.
    pub(super) fn busy(&self) -> usize {
        (self.state.load(Ordering::SeqCst) & IN_PROGRESS) as usize
    }

    /// Refuses new requests from now on (the ORB shuts down).
    pub(super) fn set_closing(&self) {
        self.state.fetch_or(CLOSING, Ordering::SeqCst);
    }

    /// The fast path took a request: the machine learns of it (once,
    /// and only when it sends CloseConnection) from this flag, so the
    /// fast path pays a load and a branch, not a lock.
    #[inline]
    pub(super) fn note_fast_request(&self) {
        if !self.fast_seen.load(Ordering::Relaxed) {
            self.fast_seen.store(true, Ordering::Relaxed);
        }
    }

    /// Writes what the machine has to send (replies it encoded,
    /// MessageError, CloseConnection), in order; once it sent its last
    /// message, stops sending. The caller holds the machine's lock, so
    /// its messages go out in the order it queued them. The buffers go
    /// back to the machine, for its next message.
    pub(super) fn flush_machine(&self, m: &mut ServerConnection) {
        let mut pieces = Vec::new();
        while let Some(t) = m.poll_transmit(Instant::now()) {
            pieces.push(t);
        }
        if !pieces.is_empty() {
            // One write: a fragmented message's pieces are not interleaved
            // with replies other threads write (GIOP 1.1 forbids it).
            let bufs: Vec<&[u8]> = pieces
                .iter()
                .flat_map(|t| [t.head(), t.payload()])
                .filter(|b| !b.is_empty())
                .collect();
            let _ = self.write_bufs(&bufs);
        }
        for t in pieces {
            if let Some(buf) = t.into_buffer() {
                m.recycle(buf);
            }
        }
        if m.is_closed() {
            self.out.shutdown_write(&self.sock.stream);
        }
    }

    /// The code sets the machine found in the client's first request
    /// that carried them, for this and every later request.
    /// (Called with the machine locked: one at a time.)
    pub(super) fn adopt_codesets(&self, ctx: CodeSetContext) {
        let mut c = self.codesets.load();
        if let Some(ch) = CharCodeSet::from_id(ctx.char_data) {
            c.char = ch;
        }
        c.wchar = WcharCodeSet::from_id(ctx.wchar_data);
        self.codesets.store(c);
    }

    /// Sends CloseConnection if no request is in progress (a busy
    /// connection's last request calls this again after its reply), once.
    pub(super) fn send_close(&self) {
        let cur = self.state.load(Ordering::SeqCst);
        // Busy, or sent already.
        if cur & (IN_PROGRESS | CLOSE_SENT) != 0
            || self
                .state
                .compare_exchange(cur, cur | CLOSE_SENT, Ordering::SeqCst, Ordering::SeqCst)
                .is_err()
        {
            return;
        }
        let mut m = lock(&self.machine);
        if self.fast_seen.load(Ordering::Relaxed) {
            m.note_fast_request(GiopVersion::V1_2);
        }
        // Nothing is in progress: every request the machine passed on was
        // answered or dropped (`forget_request`), so CloseConnection goes
        // out now.
        m.shutdown();
        while m.poll_event().is_some() {}
        self.flush_machine(&mut m);
        self.out.shutdown_write(&self.sock.stream);
    }

    /// Whether a request began since the last call (the count goes back
    /// to 0).
    fn take_activity(&self) -> bool {
        let since = self.state.load(Ordering::SeqCst) & SINCE_SCAN;
        if since == 0 {
            return false;
        }
        // Only requests add to the count meanwhile: taking away what was
        // seen cannot go below 0.
        self.state.fetch_sub(since, Ordering::SeqCst);
        true
    }

    /// The idle scan at `now`: tells the machine whether the connection
    /// was used since the last scan (the fast path does not tell it per
    /// request), and if the machine's idle timer ran out and no request
    /// is in progress, sends CloseConnection through it. A request that
    /// starts meanwhile backs out unprocessed (the client sends it again
    /// on a new connection, as it does at shutdown).
    pub(super) fn close_if_idle(&self, now: Instant) -> IdleCheck {
        if self.state.load(Ordering::SeqCst) & CLOSE_SENT != 0 {
            return IdleCheck::Lingered;
        }
        let used = self.take_activity();
        let mut m = lock(&self.machine);
        if used {
            m.note_activity(now);
        }
        if !m.poll_timeout().is_some_and(|t| t <= now) {
            return IdleCheck::Open;
        }
        let cur = self.state.load(Ordering::SeqCst);
        if cur & (IN_PROGRESS | SINCE_SCAN | CLOSE_SENT | CLOSING) != 0
            || self
                .state
                .compare_exchange(cur, cur | CLOSE_SENT, Ordering::SeqCst, Ordering::SeqCst)
                .is_err()
        {
            return IdleCheck::Open;
        }
        if self.fast_seen.load(Ordering::Relaxed) {
            m.note_fast_request(GiopVersion::V1_2);
        }
        m.handle_timeout(now);
        while m.poll_event().is_some() {}
        self.flush_machine(&mut m);
        self.out.shutdown_write(&self.sock.stream);
        IdleCheck::CloseSent
    }

    /// True once CloseConnection was sent.
    #[cfg(test)]
    pub(super) fn close_sent(&self) -> bool {
        self.state.load(Ordering::SeqCst) & CLOSE_SENT != 0
    }

    pub(super) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Stops watching the socket and shuts it down (once); true for the
    /// caller that did it. The descriptor closes when the last thread
    /// running one of its requests lets go.
    pub(super) fn close(&self) -> bool {
        if self.closed.swap(true, Ordering::AcqRel) {
            return false;
        }
        self.poller.delete(self.sock.stream.as_raw_fd());
        self.out.deregister(&self.poller);
        self.sock.shutdown();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_giop::MsgType;
    use std::io::Read;
    use std::net::TcpListener;

    #[test]
    fn code_sets_survive_their_byte() {
        let all = [CharCodeSet::Utf8, CharCodeSet::Latin1];
        let wide = [None, Some(WcharCodeSet::Utf16), Some(WcharCodeSet::Ucs2)];
        let c = ConnCodeSets::new(CodeSets::default());
        for char in all {
            for wchar in wide {
                c.store(CodeSets { char, wchar });
                let back = c.load();
                assert_eq!((back.char, back.wchar), (char, wchar));
            }
        }
    }

    fn conn() -> (Conn, TcpStream) {
        conn_with(None)
    }

    fn conn_with(idle: Option<Duration>) -> (Conn, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let peer = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        let poller = Arc::new(Poller::new().unwrap());
        let c = Conn::new(
            1,
            Sock::new(s, Some(Duration::from_millis(50))).unwrap(),
            poller,
            Limits::default(),
            usize::MAX,
            1 << 20,
            idle,
        );
        (c, peer)
    }

    /// The idle scan closes a connection only once a whole timeout passed
    /// since the last scan that saw it used, never with a request in
    /// progress, with CloseConnection once; the next scan closes it.
    #[test]
    fn idle_scan_closes_only_unused_idle_connections() {
        let t = Duration::from_secs(10);
        let (c, mut peer) = conn_with(Some(t));
        let start = Instant::now();
        assert_eq!(c.close_if_idle(start), IdleCheck::Open);
        // Used since: the timer starts again at this scan.
        assert!(c.begin_request());
        c.end_request();
        let used_seen = start + t;
        assert_eq!(c.close_if_idle(used_seen), IdleCheck::Open);
        assert_eq!(c.close_if_idle(used_seen + t / 2), IdleCheck::Open);
        // A request in progress (the fast path's: the machine does not
        // know of it) holds the connection open however long it runs.
        assert!(c.begin_request());
        assert_eq!(c.close_if_idle(used_seen + t * 3), IdleCheck::Open);
        assert_eq!(c.close_if_idle(used_seen + t * 6), IdleCheck::Open);
        c.end_request();
        c.note_fast_request();
        assert_eq!(c.close_if_idle(used_seen + t * 7), IdleCheck::CloseSent);
        assert!(c.close_sent());
        assert!(!c.begin_request(), "no request after CloseConnection");
        assert_eq!(c.busy(), 0);
        assert_eq!(c.close_if_idle(used_seen + t * 8), IdleCheck::Lingered);
        let mut sent = Vec::new();
        peer.read_to_end(&mut sent).unwrap();
        assert_eq!(sent.len(), peregrine_giop::HEADER_LEN, "once");
        assert_eq!(&sent[..6], b"GIOP\x01\x02");
        assert_eq!(sent[7], MsgType::CloseConnection as u8);
    }

    /// Without an idle timeout nothing is counted for the scan, so a
    /// connection that lives long cannot overflow the count.
    #[test]
    fn no_idle_timeout_counts_nothing_for_the_scan() {
        let (c, _peer) = conn();
        for _ in 0..3 {
            assert!(c.begin_request());
            c.end_request();
        }
        assert_eq!(c.state.load(Ordering::SeqCst), 0);
        assert_eq!(
            c.close_if_idle(Instant::now() + Duration::from_secs(1 << 20)),
            IdleCheck::Open
        );
    }

    /// CloseConnection waits for the requests in progress, goes out once,
    /// with the connection's GIOP version (here the fast path's), and
    /// refuses later requests.
    #[test]
    fn close_connection_only_when_idle_and_once() {
        let (c, mut peer) = conn();
        c.note_fast_request();
        assert!(c.begin_request());
        assert!(c.begin_request());
        c.set_closing();
        assert!(!c.begin_request(), "closing: no new request");
        c.send_close();
        assert!(!c.close_sent());
        c.end_request();
        c.send_close();
        assert!(!c.close_sent());
        c.end_request();
        c.send_close();
        c.send_close();
        assert!(c.close_sent());
        assert!(!c.begin_request());
        assert_eq!(c.busy(), 0, "backing out left no request counted");
        let mut sent = Vec::new();
        peer.read_to_end(&mut sent).unwrap();
        assert_eq!(sent.len(), peregrine_giop::HEADER_LEN, "once");
        assert_eq!(&sent[..6], b"GIOP\x01\x02");
        assert_eq!(sent[7], MsgType::CloseConnection as u8);
    }

    /// The sweep takes the turn only from the request it saw running, and
    /// the holder learns of it when that request is over; a later request
    /// starts from a clean state, and nobody else may dwell meanwhile.
    #[test]
    fn dwell_state_hands_the_turn_over_once() {
        let d = DwellState::default();
        assert!(d.is_idle() && d.running().is_none());
        d.start();
        let first = d.running().expect("running");
        assert!(!d.is_idle());
        assert!(d.finish(), "nobody took the turn");
        assert!(!d.release(first), "that request is over");
        d.start();
        let second = d.running().expect("running");
        assert_ne!(first, second, "a new request, a new number");
        assert!(d.release(second));
        assert!(d.running().is_none(), "taken: not offered again");
        assert!(!d.is_idle(), "still running: no other thread dwells yet");
        assert!(!d.release(second), "taken once");
        assert!(!d.finish(), "the holder learns the turn is gone");
        assert!(d.is_idle());
        d.start();
        assert!(d.finish(), "a clean start after a taken turn");
    }

    /// Without shutdown, CloseConnection goes out as soon as the
    /// connection is idle.
    #[test]
    fn close_connection_when_idle_without_closing() {
        let (c, mut peer) = conn();
        c.send_close();
        assert!(c.close_sent());
        let mut sent = Vec::new();
        peer.read_to_end(&mut sent).unwrap();
        assert_eq!(&sent[..6], b"GIOP\x01\x00");
    }
}
