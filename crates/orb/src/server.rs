//! Server side: acceptors and the thread-per-connection loop that reads a
//! request, demultiplexes it and calls the servant inline (no thread hop),
//! then writes the reply from one reusable buffer.

use std::collections::HashMap;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use peregrine_cdr::{ByteOrder, CharCodeSet, CodeSets, GiopVersion, Reader, WcharCodeSet, Writer};
use peregrine_giop::{
    decode_message, encode_close_connection, encode_locate_reply, encode_message_error,
    encode_system_exception_reply, service_context::ids, Assembled, CodeSetContext,
    LocateReplyHeader, LocateStatus, Message, MessageHeader, MsgType, Reassembler, ServiceContexts,
    TaggedProfile, TargetAddress, HEADER_LEN,
};

use crate::client::lock;
use crate::error::raise;
use crate::orb::{Orb, OrbInner};
use crate::poa;
use crate::runtime::{Cause, Phase};
use crate::runtime::{
    CompletionStatus, ReplyStart, ReplyState, ServerRequest, SystemException,
    SystemExceptionKind as K,
};
use crate::transport::{FrameError, RxBuf, TcpTransport, Transport};

/// How often an idle connection thread looks at the shutdown flag.
const TICK: Duration = Duration::from_millis(100);
/// How long a connection lingers after CloseConnection for the client to
/// close first (so its last request is not answered by a reset).
const LINGER: Duration = Duration::from_millis(300);
/// Longest a request waits while its POA manager holds.
const HOLD_MAX: Duration = Duration::from_secs(30);

struct ConnSlot {
    t: Arc<dyn Transport>,
    /// Requests being dispatched (several at once in the thread pool) in
    /// the low bits, and [`CLOSE_SENT`]. One atomic instead of a lock per
    /// request: CloseConnection goes out only on a transition from 0 (no
    /// request in progress) to `CLOSE_SENT`, and a request that finds the
    /// bit set after counting itself backs out unprocessed. So no reply
    /// is ever written while or after CloseConnection is.
    state: AtomicUsize,
    /// The GIOP minor version + 1 of the first message (0: none yet), for
    /// CloseConnection.
    version: AtomicU8,
    /// Serializes writes to the socket that may overlap: CloseConnection,
    /// MessageError, LocateReply, and the thread pool's replies (a
    /// connection thread's own replies cannot overlap any of them: it
    /// writes them while counted in `state`, and alone).
    gate: Mutex<Gate>,
}

/// Set in [`ConnSlot::state`] once CloseConnection was sent.
const CLOSE_SENT: usize = 1 << (usize::BITS - 1);

#[derive(Default)]
struct Gate {
    /// The code sets the client chose (thread pool: shared by workers).
    codesets: Option<CodeSets>,
}

impl ConnSlot {
    /// Counts a request in progress; false (and not counted) once
    /// CloseConnection was sent.
    #[inline]
    fn begin_request(&self) -> bool {
        if self.state.fetch_add(1, Ordering::SeqCst) & CLOSE_SENT != 0 {
            self.state.fetch_sub(1, Ordering::SeqCst);
            return false;
        }
        true
    }

    #[inline]
    fn end_request(&self) {
        self.state.fetch_sub(1, Ordering::SeqCst);
    }

    fn close_sent(&self) -> bool {
        self.state.load(Ordering::SeqCst) & CLOSE_SENT != 0
    }

    /// Remembers the first message's GIOP version.
    #[inline]
    fn note_version(&self, v: GiopVersion) {
        if self.version.load(Ordering::Relaxed) == 0 {
            let _ = self.version.compare_exchange(
                0,
                v.minor() + 1,
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
        }
    }

    fn version(&self) -> GiopVersion {
        match self.version.load(Ordering::Relaxed) {
            0 => GiopVersion::V1_0,
            n => GiopVersion::from_minor(n - 1),
        }
    }
}

/// How a server dispatches requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ThreadModel {
    /// A thread per connection reads each request and calls the servant
    /// inline (no thread hop; the default). Requests on one connection
    /// run one after the other.
    #[default]
    PerConnection,
    /// A reader thread per connection hands each complete request to one
    /// of `n` worker threads: requests on one connection run concurrently
    /// (up to `n` at once in the ORB), at the cost of a hand-off.
    ThreadPool(usize),
}

/// One request handed to a worker: its connection and its bytes.
struct Job {
    slot: Arc<ConnSlot>,
    msg: Vec<u8>,
}

/// The workers' queue.
struct Pool {
    tx: Mutex<std::sync::mpsc::Sender<Job>>,
}

/// The acceptors and connections of one ORB.
#[derive(Default)]
pub(crate) struct Server {
    pool: std::sync::OnceLock<Pool>,
    listeners: Mutex<Vec<SocketAddr>>,
    conns: Mutex<HashMap<u64, Arc<ConnSlot>>>,
    next: AtomicU64,
    threads: Mutex<Vec<JoinHandle<()>>>,
    live: Mutex<usize>,
    live_cv: Condvar,
    stopping: AtomicBool,
}

impl Server {
    /// The local addresses listened on.
    pub(crate) fn local_addrs(&self) -> Vec<SocketAddr> {
        lock(&self.listeners).clone()
    }

    /// Starts the worker threads of the thread-pool model (once).
    fn start_pool(orb: &Arc<OrbInner>, n: usize) -> std::io::Result<()> {
        if orb.server.pool.get().is_some() {
            return Ok(());
        }
        let (tx, rx) = std::sync::mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..n.max(1) {
            let weak = Arc::downgrade(orb);
            let rx = rx.clone();
            *lock(&orb.server.live) += 1;
            let h = std::thread::Builder::new()
                .name(format!("orb-worker-{i}"))
                .spawn(move || {
                    worker(&weak, &rx);
                    if let Some(o) = weak.upgrade() {
                        o.server.thread_done();
                    }
                });
            match h {
                Ok(h) => lock(&orb.server.threads).push(h),
                Err(e) => {
                    orb.server.thread_done();
                    return Err(e);
                }
            }
        }
        let _ = orb.server.pool.set(Pool { tx: Mutex::new(tx) });
        Ok(())
    }

    /// Starts accepting on `l`.
    pub(crate) fn start(orb: &Arc<OrbInner>, l: TcpListener) -> std::io::Result<SocketAddr> {
        if let ThreadModel::ThreadPool(n) = orb.config.thread_model {
            Self::start_pool(orb, n)?;
        }
        let addr = l.local_addr()?;
        lock(&orb.server.listeners).push(addr);
        let weak = Arc::downgrade(orb);
        *lock(&orb.server.live) += 1;
        let h = std::thread::Builder::new()
            .name(format!("orb-accept-{addr}"))
            .spawn(move || {
                accept_loop(weak.clone(), l);
                if let Some(o) = weak.upgrade() {
                    o.server.thread_done();
                }
            })?;
        lock(&orb.server.threads).push(h);
        Ok(addr)
    }

    fn thread_done(&self) {
        let mut n = lock(&self.live);
        *n = n.saturating_sub(1);
        self.live_cv.notify_all();
    }

    /// Number of server connections open.
    pub(crate) fn connections(&self) -> usize {
        lock(&self.conns).len()
    }

    /// Orderly shutdown: stop accepting, send CloseConnection on idle
    /// connections (busy ones send it after their reply), and if `wait`,
    /// wait for every server thread to finish.
    pub(crate) fn shutdown(&self, wait: bool) {
        self.stopping.store(true, Ordering::Release);
        for a in self.local_addrs() {
            // Wake the acceptor.
            let mut a = a;
            if a.ip().is_unspecified() {
                a.set_ip(if a.is_ipv4() {
                    std::net::Ipv4Addr::LOCALHOST.into()
                } else {
                    std::net::Ipv6Addr::LOCALHOST.into()
                });
            }
            let _ = TcpStream::connect_timeout(&a, Duration::from_millis(200));
        }
        let conns: Vec<_> = lock(&self.conns).values().cloned().collect();
        for c in conns {
            send_close(&c);
        }
        if wait {
            let mut n = lock(&self.live);
            while *n > 0 {
                n = self
                    .live_cv
                    .wait_timeout(n, TICK)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            drop(n);
            let hs: Vec<_> = lock(&self.threads).drain(..).collect();
            for h in hs {
                let _ = h.join();
            }
        }
    }

    fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::Acquire)
    }
}

fn send_close(c: &ConnSlot) {
    let _g = lock(&c.gate);
    // Only with no request in progress (a busy one's thread calls this
    // again after its reply), and once.
    if c.state
        .compare_exchange(0, CLOSE_SENT, Ordering::SeqCst, Ordering::SeqCst)
        .is_err()
    {
        return;
    }
    let mut w = Writer::new(ByteOrder::NATIVE);
    if encode_close_connection(&mut w, c.version()).is_ok() {
        let _ = c.t.write_all_vectored(&[w.as_slice()]);
    }
    c.t.shutdown_write();
}

fn accept_loop(orb: std::sync::Weak<OrbInner>, l: TcpListener) {
    loop {
        let res = l.accept();
        let Some(o) = orb.upgrade() else { return };
        if o.server.is_stopping() {
            return;
        }
        let stream = match res {
            Ok((s, peer)) => {
                crate::trace::accepted(&peer);
                s
            }
            Err(e) => {
                crate::trace::accept_failed(&e);
                // EMFILE and friends: back off instead of spinning.
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        let t: Arc<dyn Transport> = Arc::new(TcpTransport::new(stream));
        let id = o.server.next.fetch_add(1, Ordering::Relaxed);
        let slot = Arc::new(ConnSlot {
            t,
            state: AtomicUsize::new(0),
            version: AtomicU8::new(0),
            gate: Mutex::new(Gate::default()),
        });
        lock(&o.server.conns).insert(id, slot.clone());
        *lock(&o.server.live) += 1;
        let weak = orb.clone();
        let spawned = std::thread::Builder::new()
            .name("orb-conn".into())
            .spawn(move || {
                if let Some(o) = weak.upgrade() {
                    let orb = Orb::from_inner(o);
                    let span = crate::trace::server_connection(slot.t.peer());
                    let entered = span.enter();
                    serve(&orb, &slot);
                    crate::trace::served(slot.t.peer());
                    drop(entered);
                    slot.t.shutdown();
                    let o = orb.inner();
                    lock(&o.server.conns).remove(&id);
                    o.server.thread_done();
                }
            });
        match spawned {
            Ok(h) => {
                let mut ts = lock(&o.server.threads);
                ts.retain(|h| !h.is_finished());
                ts.push(h);
            }
            Err(_) => {
                lock(&o.server.conns).remove(&id);
                o.server.thread_done();
            }
        }
    }
}

/// A worker of the thread-pool model: takes requests off the queue and
/// handles them with the same code as the inline model.
fn worker(orb: &std::sync::Weak<OrbInner>, rx: &Mutex<std::sync::mpsc::Receiver<Job>>) {
    let mut tx = Writer::new(ByteOrder::NATIVE);
    // The worker's last target, whatever connection its request came on.
    let mut cache = poa::ResolveCache::default();
    loop {
        let job = lock(rx).recv_timeout(TICK);
        let Some(o) = orb.upgrade() else { return };
        let mut job = match job {
            Ok(j) => j,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if o.server.is_stopping() && lock(&o.server.conns).is_empty() {
                    return;
                }
                continue;
            }
            Err(_) => return,
        };
        let orb = Orb::from_inner(o);
        let limits = orb.inner().config.limits;
        let codesets = lock(&job.slot.gate).codesets.unwrap_or(CodeSets {
            char: CharCodeSet::Latin1,
            wchar: None,
        });
        let mut cx = ConnCtx {
            orb: &orb,
            slot: &job.slot,
            tx: std::mem::replace(&mut tx, Writer::new(ByteOrder::NATIVE)),
            codesets,
            reasm: Reassembler::new(limits),
            cache: std::mem::take(&mut cache),
            pooled: true,
        };
        if let Next::Close = cx.handle(&mut job.msg) {
            job.slot.t.shutdown();
        }
        tx = cx.tx;
        cache = cx.cache;
    }
}

enum Next {
    Continue,
    Close,
}

struct ConnCtx<'o> {
    orb: &'o Orb,
    slot: &'o ConnSlot,
    tx: Writer,
    codesets: CodeSets,
    reasm: Reassembler,
    /// This thread's last resolved target.
    cache: poa::ResolveCache,
    /// A thread-pool worker (replies share the socket with other workers).
    pooled: bool,
}

/// A GIOP 1.2 Request with no more fragments to follow (its header
/// already checked by `RxBuf::read_message`).
fn is_unfragmented_request_1_2(m: &[u8]) -> bool {
    m.len() >= peregrine_giop::HEADER_LEN
        && m[4] == 1
        && m[5] == 2
        && m[6] & 0x02 == 0
        && m[7] == MsgType::Request as u8
}

fn is_request(m: &[u8]) -> bool {
    m.len() > 7 && m[7] == MsgType::Request as u8
}

/// The connection loop: reads messages and handles them inline, or hands
/// requests to the workers (thread-pool model).
fn serve(orb: &Orb, slot_arc: &Arc<ConnSlot>) {
    let slot: &ConnSlot = slot_arc;
    let limits = orb.inner().config.limits;
    let mut rx = RxBuf::default();
    let mut cx = ConnCtx {
        orb,
        slot,
        tx: Writer::new(ByteOrder::NATIVE),
        // Until the client says otherwise (CORBA's defaults).
        codesets: CodeSets {
            char: CharCodeSet::Latin1,
            wchar: None,
        },
        reasm: Reassembler::new(limits),
        cache: poa::ResolveCache::default(),
        pooled: false,
    };
    let _ = slot.t.set_read_timeout(Some(TICK));
    let mut close_at: Option<Instant> = None;
    // Set (thread-pool model) before the first connection is accepted.
    let pool = orb.inner().server.pool.get();
    loop {
        if orb.inner().server.is_stopping() {
            send_close(slot);
        }
        if slot.close_sent() {
            let at = *close_at.get_or_insert_with(Instant::now);
            if at.elapsed() > LINGER {
                return;
            }
        }
        let len = match rx.read_message(&*slot.t, &limits) {
            Ok(n) => n,
            Err(FrameError::TimedOut) => continue,
            Err(FrameError::Eof { .. }) | Err(FrameError::Io(_)) => return,
            Err(FrameError::Garbage(_)) => {
                message_error(slot, rx.unread());
                return;
            }
        };
        let msg = rx.message_mut(len);
        // The common message first: a whole GIOP 1.2 request handled
        // inline, read at fixed offsets (`read_message` checked the
        // header; the reassembler would decode it again only to hand the
        // message back whole).
        if let (None, Some(at)) = (pool, fast_layout(msg)) {
            let next = cx.fast(msg, &at);
            rx.consume(len);
            if let Next::Close = next {
                return;
            }
            // The buffer grows past 1 MiB only to hold a message nearly
            // that large, and reads stop at the end of a large message
            // (`RxBuf::fill`): right after one is the time to shrink.
            if len >= 1 << 16 {
                rx.shrink_if_idle(1 << 20);
            }
            continue;
        }
        let mut whole;
        // Requests are handled with the message lent exclusively, so the
        // argument reader may decode in place.
        let m: &mut [u8] = if is_unfragmented_request_1_2(msg) {
            // `read_message` checked the header; the reassembler would
            // decode it again only to hand the message back whole.
            msg
        } else {
            let whole_msg = match cx.reasm.push(msg) {
                Ok(Assembled::Whole(_)) => None,
                Ok(Assembled::Reassembled(v)) => Some(v),
                Ok(Assembled::Incomplete) => {
                    rx.consume(len);
                    continue;
                }
                Err(_) => {
                    message_error(slot, msg);
                    return;
                }
            };
            match whole_msg {
                // Passed through unchanged.
                None => msg,
                Some(v) => {
                    whole = v;
                    &mut whole
                }
            }
        };
        let next = match pool {
            Some(pool) if is_request(m) => {
                let job = Job {
                    slot: slot_arc.clone(),
                    msg: m.to_vec(),
                };
                match lock(&pool.tx).send(job) {
                    Ok(()) => Next::Continue,
                    Err(_) => Next::Close,
                }
            }
            _ => cx.handle(m),
        };
        rx.consume(len);
        if let Next::Close = next {
            return;
        }
        // Do not keep a huge buffer after a one-off large message.
        rx.shrink_if_idle(1 << 20);
    }
}

/// The parts of a Request the server uses.
struct Incoming<'a> {
    request_id: u32,
    expected: bool,
    key: &'a [u8],
    operation: &'a str,
    /// The arguments: over the body borrowed exclusively on the fast path
    /// (so skeletons may decode sequences of plain structs in place, see
    /// `Reader::read_plain_slice`), shared after the full decode.
    args: Reader<'a>,
    /// Already looked up in the thread's resolve cache, in vain.
    missed: bool,
}

fn u32_at(m: &[u8], at: usize, little: bool) -> Option<u32> {
    let b: [u8; 4] = m.get(at..at + 4)?.try_into().ok()?;
    Some(if little {
        u32::from_le_bytes(b)
    } else {
        u32::from_be_bytes(b)
    })
}

/// Where the parts of a request read at fixed offsets sit: a whole GIOP
/// 1.2 Request addressed by object key with no service contexts (every
/// request of a connection after the first, which carries the code
/// sets). Anything else, and anything malformed, is `None`: the full
/// decode handles it (and reports the error). Offsets only, so the caller
/// can then split the message into the shared header and the body it
/// lends exclusively to the argument reader.
#[derive(Debug, Clone, Copy)]
struct FastLayout {
    request_id: u32,
    expected: bool,
    little: bool,
    /// The key is `28..key_end`.
    key_end: usize,
    /// The operation (without its NUL) is `op.0..op.1`.
    op: (usize, usize),
    /// Where the body starts (8-aligned unless empty).
    body: usize,
}

#[inline(always)]
fn fast_layout(m: &[u8]) -> Option<FastLayout> {
    // The fixed part as an array: one length check for its fields.
    let h: &[u8; 28] = m.first_chunk()?;
    let field = |at: usize, little: bool| {
        let b = [h[at], h[at + 1], h[at + 2], h[at + 3]];
        if little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        }
    };
    // Magic, version 1.2 and type Request in one comparison (the flags
    // byte masked out).
    let head = u64::from_le_bytes(*m.first_chunk()?);
    if head & !(0xff << 48) != u64::from_le_bytes(*b"GIOP\x01\x02\x00\x00") {
        return None;
    }
    let flags = h[6];
    let little = flags & 1 != 0;
    if flags & 2 != 0 || field(8, little) as usize != m.len() - HEADER_LEN {
        return None;
    }
    let request_id = field(12, little);
    let expected = match h[16] {
        0 => false,
        1 | 3 => true,
        _ => return None,
    };
    // TargetAddress: KeyAddr (discriminator 0, two bytes of padding).
    if h[20] != 0 || h[21] != 0 {
        return None;
    }
    let key_len = field(24, little) as usize;
    let key_end = 28usize.checked_add(key_len)?;
    m.get(28..key_end)?;
    let at = (key_end + 3) & !3;
    let op_len = u32_at(m, at, little)? as usize;
    let op_at = at + 4;
    let op_end = op_at.checked_add(op_len)?;
    let [.., 0] = m.get(op_at..op_end)? else {
        return None;
    };
    let at = (op_end + 3) & !3;
    if u32_at(m, at, little)? != 0 {
        return None;
    }
    let mut body = at + 4;
    if body < m.len() {
        body = (body + 7) & !7;
    }
    if body > m.len() {
        return None;
    }
    Some(FastLayout {
        request_id,
        expected,
        little,
        key_end,
        op: (op_at, op_end - 1),
        body,
    })
}

/// The operation name as text: IDL identifiers are ASCII, checked a word
/// at a time (~15 instructions for a 17-byte name where `str::from_utf8`
/// takes ~50); anything else gets the full UTF-8 check.
#[inline]
fn op_str(op: &[u8]) -> Option<&str> {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let n = op.len();
    let word = |at: usize| u64::from_ne_bytes(op[at..at + 8].try_into().expect("8 bytes"));
    let ascii = if n >= 8 {
        // Whole words, the last one overlapping the one before; names of
        // up to 24 bytes (most) without a loop.
        let mut acc = word(0) | word(n - 8);
        if n > 16 {
            acc |= word(8);
            let mut at = 16;
            while at + 8 < n {
                acc |= word(at);
                at += 8;
            }
        }
        acc & HIGH == 0
    } else {
        op.iter().all(|&b| b < 0x80)
    };
    if ascii {
        // SAFETY: every byte is below 0x80, and ASCII is valid UTF-8.
        Some(unsafe { std::str::from_utf8_unchecked(op) })
    } else {
        std::str::from_utf8(op).ok()
    }
}

impl FastLayout {
    /// The object key and the operation (`None` if the operation is not
    /// UTF-8: checked here, once, rather than in `fast_layout`).
    #[inline]
    fn key_and_operation<'a>(&self, head: &'a [u8]) -> Option<(&'a [u8], &'a str)> {
        Some((
            head.get(28..self.key_end)?,
            op_str(head.get(self.op.0..self.op.1)?)?,
        ))
    }

    /// The argument reader over `body` (the message after the header,
    /// lent exclusively so skeletons may decode in place).
    #[inline]
    fn args<'a>(&self, body: &'a mut [u8]) -> Reader<'a> {
        let order = if self.little {
            ByteOrder::Little
        } else {
            ByteOrder::Big
        };
        let mut args = Reader::with_offset_mut(body, order, self.body);
        args.set_version(GiopVersion::V1_2);
        args
    }
}

/// Starts a GIOP 1.2 NO_EXCEPTION reply to `request_id` in `tx`: the same
/// 24 bytes as `runtime::reply_header` (which a skeleton's
/// `ServerRequest::reply` would call), written as three words where that
/// assembles them byte by byte; the size is patched by
/// `ReplyStart::finish`.
#[inline]
fn start_reply_1_2(tx: &mut Writer, request_id: u32) {
    let little = tx.order() == ByteOrder::Little;
    let (head, id) = if little {
        (*b"GIOP\x01\x02\x01\x01", request_id.to_le_bytes())
    } else {
        (*b"GIOP\x01\x02\x00\x01", request_id.to_be_bytes())
    };
    // Size (patched later), request id; status NO_EXCEPTION (0) and an
    // empty service context list.
    let mut words = [0u8; 24];
    words[..8].copy_from_slice(&head);
    words[12..16].copy_from_slice(&id);
    tx.clear();
    tx.set_version(GiopVersion::V1_2);
    tx.write_bytes(&words);
}

fn message_error(slot: &ConnSlot, msg: &[u8]) {
    let minor = msg.get(5).copied().unwrap_or(0).min(2);
    let mut w = Writer::new(ByteOrder::NATIVE);
    if encode_message_error(&mut w, GiopVersion::from_minor(minor)).is_ok() {
        let _g = lock(&slot.gate);
        let _ = slot.t.write_all_vectored(&[w.as_slice()]);
    }
    slot.t.shutdown_write();
}

impl ConnCtx<'_> {
    fn handle(&mut self, m: &mut [u8]) -> Next {
        if let Some(at) = fast_layout(m) {
            return self.fast(m, &at);
        }
        let m: &[u8] = m;
        let limits = self.orb.inner().config.limits;
        let (h, msg) = match decode_message(m, &limits) {
            Ok(x) => x,
            Err(e) => return self.undecodable(m, &e),
        };
        match msg {
            Message::Request { header, body } => {
                let key: &[u8] = match &header.target {
                    TargetAddress::Key(k) => k,
                    TargetAddress::Profile(TaggedProfile::Iiop(p)) => &p.object_key,
                    TargetAddress::Reference(info) => {
                        match info.ior.profiles.get(info.selected_profile_index as usize) {
                            Some(TaggedProfile::Iiop(p)) => &p.object_key,
                            _ => &[],
                        }
                    }
                    _ => &[],
                };
                let req = Incoming {
                    request_id: header.request_id,
                    expected: header.response_flags.response_expected(),
                    key,
                    operation: header.operation,
                    args: body.reader(),
                    missed: false,
                };
                self.request(h.version, req, header.service_contexts)
            }
            msg => {
                self.slot.note_version(h.version);
                self.other(m, h.version, msg)
            }
        }
    }

    /// `handle` for a message `fast_layout` read as `at`.
    #[inline(always)]
    fn fast(&mut self, m: &mut [u8], at: &FastLayout) -> Next {
        let (head, body) = m.split_at_mut(at.body);
        self.fast_request(at, head, body)
    }

    /// Dispatches one request and sends its reply (if one is expected).
    fn request(
        &mut self,
        version: GiopVersion,
        req: Incoming<'_>,
        contexts: ServiceContexts<'_>,
    ) -> Next {
        // Refuse new work once CloseConnection went out: the client
        // re-sends it elsewhere (it was provably not processed).
        self.slot.note_version(version);
        if !self.slot.begin_request() {
            return Next::Continue;
        }
        if crate::trace::on(tracing::Level::DEBUG) {
            crate::trace::server_request(self.slot.t.peer(), req.operation, req.request_id);
        }
        self.counted_request(version, req, contexts)
    }

    /// The common request whole, without intermediate values: a GIOP 1.2
    /// request read at fixed offsets (`fast_layout`) for an object of an
    /// active object map, found in (or refilled into) this thread's
    /// resolve cache ([`poa::ResolveCache::lookup_or_refill`]). The
    /// `ServerRequest` is built once, in place, with the NO_EXCEPTION
    /// reply header already written; anything else goes the general way.
    #[inline(always)]
    fn fast_request(&mut self, at: &FastLayout, head: &mut [u8], body: &mut [u8]) -> Next {
        let head: &[u8] = head;
        let Some((key, operation)) = at.key_and_operation(head) else {
            // What the full decode reports for such an operation.
            return self.undecodable(
                head,
                &peregrine_giop::GiopError::Cdr(peregrine_cdr::CdrError::InvalidText),
            );
        };
        self.slot.note_version(GiopVersion::V1_2);
        if !self.slot.begin_request() {
            return Next::Continue;
        }
        // The level check alone while nobody listens (docs/PERFORMANCE.md,
        // step 38).
        if crate::trace::on(tracing::Level::DEBUG) {
            crate::trace::server_request(self.slot.t.peer(), operation, at.request_id);
        }
        let mut args = at.args(body);
        // Another object than last time (round robin) takes the fast way
        // too if its servant is in an active object map.
        let Some(hit) = self.cache.lookup_or_refill(self.orb.inner(), key) else {
            let req = Incoming {
                request_id: at.request_id,
                expected: at.expected,
                key,
                operation,
                args,
                missed: true,
            };
            return self.counted_request(GiopVersion::V1_2, req, ServiceContexts::EMPTY);
        };
        args.set_codesets(self.codesets);
        self.tx.set_codesets(self.codesets);
        let (state, pending) = if at.expected {
            start_reply_1_2(&mut self.tx, at.request_id);
            (ReplyState::NoException, Some(ReplyStart::Fixed))
        } else {
            (ReplyState::Empty, None)
        };
        let mut req = ServerRequest {
            operation,
            args,
            reply: &mut self.tx,
            state,
            pending,
            version: GiopVersion::V1_2,
            request_id: at.request_id,
            response_expected: at.expected,
            object_id: hit.object_id,
            orb: self.orb,
        };
        // CORBA::Object's operations (rare) apart: the upcall closure
        // then holds only the servant call.
        let ran = if operation.starts_with('_') {
            hit.run(|servant| upcall(servant, &mut req))
        } else {
            // The panic is turned into UNKNOWN out here, where the
            // operation is at hand anyway: inside the closure its cause
            // kept registers alive across the servant call
            // (docs/PERFORMANCE.md, step 37).
            let caught =
                hit.run(|servant| catch_unwind(AssertUnwindSafe(|| servant.dispatch(&mut req))));
            match caught {
                Ok(r) => r,
                Err(_) => Err(servant_panicked(operation)),
            }
        };
        let res = match ran {
            Ok(()) => finish_fixed(&mut req),
            e => e,
        };
        // The upcall is over: release the servant and the POA count
        // before the reply goes out (`req`'s borrows end here too).
        drop(hit);
        self.respond(GiopVersion::V1_2, at.request_id, at.expected, res)
    }

    /// `request` once counted in the connection's busy count.
    fn counted_request(
        &mut self,
        version: GiopVersion,
        req: Incoming<'_>,
        contexts: ServiceContexts<'_>,
    ) -> Next {
        if !contexts.is_empty() {
            if let Some(data) = contexts.get(ids::CODE_SETS) {
                if let Ok(ctx) = CodeSetContext::decode(data) {
                    self.set_codesets(ctx);
                    // For the thread pool's other workers.
                    lock(&self.slot.gate).codesets = Some(self.codesets);
                }
            }
        }
        let mut args = req.args;
        args.set_codesets(self.codesets);
        self.tx.set_codesets(self.codesets);
        let res = dispatch(
            self.orb,
            &mut self.cache,
            &mut self.tx,
            version,
            req.request_id,
            req.expected,
            req.operation,
            req.key,
            args,
            req.missed,
        );
        self.respond(version, req.request_id, req.expected, res)
    }

    /// Sends the reply in `tx` (or `res`'s exception), if one is
    /// expected, and ends the request's busy count.
    #[inline(always)]
    fn respond(
        &mut self,
        version: GiopVersion,
        request_id: u32,
        expected: bool,
        res: Result<(), SystemException>,
    ) -> Next {
        if let Err(e) = res {
            crate::trace::server_exception(self.slot.t.peer(), request_id, &e);
            let _ = encode_system_exception_reply(
                &mut self.tx,
                version,
                request_id,
                ServiceContexts::EMPTY,
                &e,
            );
        }
        let stopping = self.orb.inner().server.is_stopping();
        // The reply goes out while the request still counts as busy (so
        // CloseConnection cannot overtake it). A connection thread is the
        // only writer of its replies; pool workers share the socket.
        let out = if !expected {
            Next::Continue
        } else if self.pooled {
            let slot = self.slot;
            let _g = lock(&slot.gate);
            self.write_tx_locked()
        } else {
            self.write_tx_locked()
        };
        self.slot.end_request();
        if stopping {
            send_close(self.slot);
        }
        out
    }

    /// Handles a message other than a Request.
    fn other(&mut self, m: &[u8], version: GiopVersion, msg: Message<'_>) -> Next {
        match msg {
            Message::Request { .. } => Next::Continue,
            Message::LocateRequest(lh) => {
                let key: &[u8] = match &lh.target {
                    TargetAddress::Key(k) => k,
                    TargetAddress::Profile(TaggedProfile::Iiop(p)) => &p.object_key,
                    _ => &[],
                };
                let (status, forward) = match poa::locate(self.orb.inner(), key) {
                    poa::Located::Here => (LocateStatus::ObjectHere, None),
                    poa::Located::Unknown => (LocateStatus::UnknownObject, None),
                    poa::Located::Forward(ior) => (LocateStatus::ObjectForward, Some(ior)),
                };
                let rh = LocateReplyHeader {
                    request_id: lh.request_id,
                    status,
                };
                let Ok(p) = encode_locate_reply(&mut self.tx, version, &rh) else {
                    return Next::Close;
                };
                if let Some(ior) = forward {
                    if peregrine_cdr::Encode::encode(&ior, &mut self.tx).is_err() {
                        return Next::Close;
                    }
                }
                match p.finish(&mut self.tx) {
                    Ok(()) => self.send_tx(),
                    Err(_) => Next::Close,
                }
            }
            Message::CancelRequest { .. } => Next::Continue,
            Message::CloseConnection | Message::MessageError => Next::Close,
            Message::Reply { .. } | Message::LocateReply { .. } | Message::Fragment { .. } => {
                message_error(self.slot, m);
                Next::Close
            }
        }
    }

    fn set_codesets(&mut self, ctx: CodeSetContext) {
        if let Some(c) = CharCodeSet::from_id(ctx.char_data) {
            self.codesets.char = c;
        }
        self.codesets.wchar = WcharCodeSet::from_id(ctx.wchar_data);
    }

    fn send_tx(&mut self) -> Next {
        let slot = self.slot;
        let _g = lock(&slot.gate);
        self.write_tx_locked()
    }

    /// Writes the message in `tx`; the caller holds the gate, or is a
    /// connection thread writing a reply (see `request`).
    #[inline(always)]
    fn write_tx_locked(&mut self) -> Next {
        let r = crate::transport::write_message(
            &*self.slot.t,
            self.tx.as_slice(),
            self.orb.inner().config.fragment_size,
        );
        if r.is_err() {
            return Next::Close;
        }
        if self.tx.len() > (1 << 20) {
            self.tx = Writer::new(ByteOrder::NATIVE);
        }
        Next::Continue
    }

    /// A message whose header decoded but whose body did not: a Request
    /// whose id we can read gets a MARSHAL reply; anything else a
    /// MessageError and the connection closes.
    fn undecodable(&mut self, m: &[u8], e: &peregrine_giop::GiopError) -> Next {
        let limits = self.orb.inner().config.limits;
        if let Ok(h) = MessageHeader::decode(m, &limits) {
            if h.msg_type == MsgType::Request && h.version == GiopVersion::V1_2 && m.len() >= 16 {
                let raw: [u8; 4] = m[12..16].try_into().unwrap_or_default();
                let id = match h.order {
                    ByteOrder::Big => u32::from_be_bytes(raw),
                    ByteOrder::Little => u32::from_le_bytes(raw),
                };
                let ex = e.to_system_exception(CompletionStatus::No);
                if encode_system_exception_reply(
                    &mut self.tx,
                    h.version,
                    id,
                    ServiceContexts::EMPTY,
                    &ex,
                )
                .is_ok()
                {
                    return self.send_tx();
                }
            }
        }
        message_error(self.slot, m);
        Next::Close
    }
}

/// Demultiplexes and runs one request, leaving the reply in `tx` (or
/// returning the system exception to send). `missed`: the caller already
/// found the key not in `cache`.
#[allow(clippy::too_many_arguments)]
fn dispatch(
    orb: &Orb,
    cache: &mut poa::ResolveCache,
    tx: &mut Writer,
    version: GiopVersion,
    request_id: u32,
    response_expected: bool,
    operation: &str,
    key: &[u8],
    args: peregrine_cdr::Reader<'_>,
    missed: bool,
) -> Result<(), SystemException> {
    if !missed {
        if let Some(hit) = cache.lookup(orb.inner(), key) {
            // The thread's last object again. The request is built once,
            // here, and the hit released when it drops.
            let mut req = request(
                orb,
                tx,
                version,
                request_id,
                response_expected,
                operation,
                hit.object_id,
                args,
            );
            return hit.run(|servant| invoke(servant, &mut req));
        }
    }
    let mut up = match poa::resolve(orb.inner(), cache, key, operation, HOLD_MAX) {
        Ok(poa::Resolution::Upcall(u)) => u,
        Ok(poa::Resolution::Forward(to)) => {
            return location_forward(tx, version, request_id, operation, &to)
        }
        Err(e) if e.kind == K::ObjectNotExist && is_non_existent(operation) => {
            let mut req = request(
                orb,
                tx,
                version,
                request_id,
                response_expected,
                operation,
                key,
                args,
            );
            req.reply().write_bool(true);
            return finish(&mut req);
        }
        Err(e) => return Err(e),
    };
    let mut req = request(
        orb,
        tx,
        version,
        request_id,
        response_expected,
        operation,
        up.object_id,
        args,
    );
    // postinvoke (servant locators) runs after the upcall, whatever its
    // outcome; its exception replaces the reply.
    up.run(|servant| invoke(servant, &mut req))
}

/// Calls `servant` (or answers an operation of CORBA::Object for it) and
/// completes the reply.
#[inline]
fn invoke(
    servant: &Arc<dyn crate::runtime::Servant>,
    req: &mut ServerRequest<'_>,
) -> Result<(), SystemException> {
    upcall(servant, req)?;
    finish(req)
}

/// Calls `servant` (or answers an operation of CORBA::Object for it),
/// leaving the reply to be completed by `finish`.
#[inline(always)]
fn upcall(
    servant: &Arc<dyn crate::runtime::Servant>,
    req: &mut ServerRequest<'_>,
) -> Result<(), SystemException> {
    let operation = req.operation;
    if operation.starts_with('_') {
        match operation {
            "_is_a" => {
                let id = req.args().read_string_bytes()?;
                let id = std::str::from_utf8(id)
                    .map_err(|_| SystemException::from(peregrine_cdr::CdrError::InvalidText))?;
                let yes = id == "IDL:omg.org/CORBA/Object:1.0" || servant.is_a(id);
                req.reply().write_bool(yes);
                return Ok(());
            }
            op if is_non_existent(op) => {
                req.reply().write_bool(false);
                return Ok(());
            }
            "_repository_id" => {
                let id = servant.repository_id();
                req.reply().write_string(id)?;
                return Ok(());
            }
            "_interface" | "_get_interface" => {
                return Err(raise(K::NoImplement, 0, CompletionStatus::No, || {
                    Cause::new(Phase::Dispatch)
                        .with_operation("_interface")
                        .with_detail("no interface repository")
                }))
            }
            _ => {}
        }
    }
    call_servant(servant, req)
}

/// The servant's `dispatch`, a panic in it answered as UNKNOWN.
#[inline(always)]
fn call_servant(
    servant: &Arc<dyn crate::runtime::Servant>,
    req: &mut ServerRequest<'_>,
) -> Result<(), SystemException> {
    match catch_unwind(AssertUnwindSafe(|| servant.dispatch(req))) {
        Ok(r) => r,
        Err(_) => Err(servant_panicked(req.operation)),
    }
}

#[cold]
#[inline(never)]
fn servant_panicked(operation: &str) -> SystemException {
    raise(K::Unknown, 0, CompletionStatus::Maybe, || {
        Cause::new(Phase::Dispatch)
            .with_operation(operation)
            .with_detail("the servant panicked")
    })
}

/// A LOCATION_FORWARD reply to `to` (`ForwardRequest` from a servant
/// manager, or a bound object key).
#[cold]
fn location_forward(
    tx: &mut Writer,
    version: GiopVersion,
    request_id: u32,
    operation: &str,
    to: &peregrine_giop::Ior,
) -> Result<(), SystemException> {
    let h = peregrine_giop::ReplyHeader {
        request_id,
        status: peregrine_giop::ReplyStatus::LocationForward,
        service_contexts: ServiceContexts::EMPTY,
    };
    let fail = |e: &dyn std::fmt::Display| {
        raise(K::Marshal, 0, CompletionStatus::No, || {
            Cause::new(Phase::Forward)
                .with_operation(operation)
                .with_detail(e)
        })
    };
    let p = peregrine_giop::encode_reply(tx, version, &h).map_err(|e| fail(&e))?;
    peregrine_cdr::Encode::encode(to, tx).map_err(|e| fail(&e))?;
    p.finish(tx).map_err(|e| fail(&e))?;
    Ok(())
}

fn is_non_existent(op: &str) -> bool {
    op == "_non_existent" || op == "_not_existent"
}

#[allow(clippy::too_many_arguments)]
fn request<'a>(
    orb: &'a Orb,
    tx: &'a mut Writer,
    version: GiopVersion,
    request_id: u32,
    response_expected: bool,
    operation: &'a str,
    object_id: &'a [u8],
    args: peregrine_cdr::Reader<'a>,
) -> ServerRequest<'a> {
    ServerRequest {
        operation,
        args,
        reply: tx,
        state: ReplyState::Empty,
        pending: None,
        version,
        request_id,
        response_expected,
        object_id,
        orb,
    }
}

/// `finish` for a reply begun with `start_reply_1_2` (or a skeleton's
/// USER_EXCEPTION, the same fixed header): the size patched in place.
#[inline(always)]
fn finish_fixed(req: &mut ServerRequest<'_>) -> Result<(), SystemException> {
    if !req.response_expected {
        // A oneway's reply is never sent: complete none.
        return Ok(());
    }
    if req.state != ReplyState::Empty
        && matches!(req.pending, Some(ReplyStart::Fixed))
        && patch_size(req.reply)
    {
        req.pending = None;
        return Ok(());
    }
    finish(req)
}

/// Writes the message size into the GIOP header at the start of `w`
/// (what `ReplyStart::Fixed.finish` does, inline); false if it does not
/// fit (left to `finish`, which reports it).
#[inline(always)]
fn patch_size(w: &mut Writer) -> bool {
    let body = w.len().wrapping_sub(HEADER_LEN);
    let little = w.order() == ByteOrder::Little;
    let (Ok(size), Some(at)) = (u32::try_from(body), w.as_mut_slice().get_mut(8..12)) else {
        return false;
    };
    at.copy_from_slice(&if little {
        size.to_le_bytes()
    } else {
        size.to_be_bytes()
    });
    true
}

/// Completes the reply in the request's writer.
#[inline]
fn finish(req: &mut ServerRequest<'_>) -> Result<(), SystemException> {
    if !req.response_expected {
        // A oneway's reply is never sent: complete none.
        return Ok(());
    }
    if req.state == ReplyState::Empty {
        req.reply();
    }
    match req.pending.take() {
        Some(p) => p.finish(&mut *req.reply).map_err(|e| {
            raise(K::Marshal, 0, CompletionStatus::Yes, || {
                Cause::new(Phase::Dispatch)
                    .with_operation(req.operation)
                    .with_detail(format_args!("finishing the reply: {e}"))
            })
        }),
        None => Err(raise(K::Internal, 0, CompletionStatus::Maybe, || {
            Cause::new(Phase::Dispatch)
                .with_operation(req.operation)
                .with_detail("no reply header")
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_giop::{RequestHeader, ResponseFlags, ServiceContext};

    fn request(
        order: ByteOrder,
        flags: ResponseFlags,
        key: &[u8],
        op: &str,
        body: &[u8],
    ) -> Vec<u8> {
        let mut w = Writer::new(order);
        let h = RequestHeader {
            request_id: 0x0102_0304,
            response_flags: flags,
            target: TargetAddress::Key(key),
            operation: op,
            service_contexts: ServiceContexts::EMPTY,
            requesting_principal: &[],
        };
        let p = peregrine_giop::encode_request(&mut w, GiopVersion::V1_2, &h).unwrap();
        w.write_bytes(body);
        p.finish(&mut w).unwrap();
        w.into_vec()
    }

    /// Records what is written to it.
    #[derive(Default)]
    struct Sink(Mutex<Vec<Vec<u8>>>);

    impl Transport for Sink {
        fn read(&self, _: &mut [u8]) -> std::io::Result<usize> {
            Ok(0)
        }
        fn write_all_vectored(&self, bufs: &[&[u8]]) -> std::io::Result<()> {
            lock(&self.0).push(bufs.concat());
            Ok(())
        }
        fn set_read_timeout(&self, _: Option<Duration>) -> std::io::Result<()> {
            Ok(())
        }
        fn peer_closed_or_readable(&self) -> bool {
            false
        }
        fn shutdown_write(&self) {}
        fn shutdown(&self) {}
        fn peer(&self) -> &str {
            "sink"
        }
    }

    /// CloseConnection waits for the requests in progress, goes out once,
    /// with the connection's GIOP version, and refuses later requests.
    #[test]
    fn close_connection_only_when_idle_and_once() {
        let sink = Arc::new(Sink::default());
        let slot = ConnSlot {
            t: sink.clone(),
            state: AtomicUsize::new(0),
            version: AtomicU8::new(0),
            gate: Mutex::new(Gate::default()),
        };
        slot.note_version(GiopVersion::V1_1);
        slot.note_version(GiopVersion::V1_2);
        assert!(slot.begin_request());
        assert!(slot.begin_request());
        send_close(&slot);
        assert!(lock(&sink.0).is_empty() && !slot.close_sent());
        slot.end_request();
        send_close(&slot);
        assert!(lock(&sink.0).is_empty());
        slot.end_request();
        send_close(&slot);
        send_close(&slot);
        let sent = lock(&sink.0).clone();
        assert_eq!(sent.len(), 1);
        assert_eq!(&sent[0][..6], b"GIOP\x01\x01");
        assert_eq!(sent[0][7], MsgType::CloseConnection as u8);
        assert!(slot.close_sent());
        assert!(!slot.begin_request());
        // Backing out left no request counted.
        assert_eq!(slot.state.load(Ordering::SeqCst), CLOSE_SENT);
    }

    /// The ASCII shortcut answers as `str::from_utf8` does, for every
    /// length around the word size and a high bit in every position
    /// (runs under Miri).
    #[test]
    fn op_str_agrees_with_from_utf8() {
        let base: Vec<u8> = (0..40u8).map(|i| b'a' + i % 26).collect();
        for n in 0..base.len() {
            let op = &base[..n];
            assert_eq!(op_str(op), std::str::from_utf8(op).ok());
            for at in 0..n {
                let mut bad = op.to_vec();
                bad[at] = 0xff;
                assert_eq!(op_str(&bad), None);
                let mut utf8 = op.to_vec();
                utf8.splice(at..at + 1, "é".bytes());
                assert_eq!(op_str(&utf8), std::str::from_utf8(&utf8).ok());
                assert!(op_str(&utf8).is_some());
            }
        }
    }

    /// The fast path as `handle` takes it: layout, split, request.
    fn fast_request(m: &mut [u8]) -> Option<Incoming<'_>> {
        let at = fast_layout(m)?;
        let (head, body) = m.split_at_mut(at.body);
        let head: &[u8] = head;
        let (key, operation) = at.key_and_operation(head)?;
        Some(Incoming {
            request_id: at.request_id,
            expected: at.expected,
            key,
            operation,
            args: at.args(body),
            missed: false,
        })
    }

    /// The reply header written by `start_reply_1_2` and sized by
    /// `patch_size` is byte for byte what `encode_reply` writes, in both
    /// byte orders, over a writer holding an earlier message.
    #[test]
    fn start_reply_matches_encode_reply() {
        for order in [ByteOrder::Little, ByteOrder::Big] {
            for body in [&[][..], &[1u8, 2, 3][..], &[7; 9][..]] {
                let mut a = Writer::new(order);
                a.write_bytes(b"an earlier, longer message");
                start_reply_1_2(&mut a, 0x0102_0304);
                assert_eq!(a.position(), 24);
                assert_eq!(a.version(), GiopVersion::V1_2);
                a.write_bytes(body);
                assert!(patch_size(&mut a));
                let mut b = Writer::new(order);
                let h = peregrine_giop::ReplyHeader {
                    request_id: 0x0102_0304,
                    status: peregrine_giop::ReplyStatus::NoException,
                    service_contexts: ServiceContexts::EMPTY,
                };
                let p = peregrine_giop::encode_reply(&mut b, GiopVersion::V1_2, &h).unwrap();
                b.write_bytes(body);
                p.finish(&mut b).unwrap();
                assert_eq!(a.as_slice(), b.as_slice());
            }
        }
    }

    /// The fixed-offset read agrees with the full decode wherever it
    /// answers, and leaves everything else to it.
    #[test]
    fn fast_request_matches_full_decode() {
        let limits = peregrine_giop::Limits::default();
        for order in [ByteOrder::Little, ByteOrder::Big] {
            for flags in [ResponseFlags::None, ResponseFlags::SyncWithTarget] {
                for (key, op, body) in [
                    (&b"PGR1\x01\x04\x00ttcpi"[..], "sendNoParams_2way", &[][..]),
                    (b"k", "a", &[1, 2, 3][..]),
                    (b"", "sync", &[9; 17][..]),
                    (b"1234567", "op_", &[7][..]),
                ] {
                    let m = request(order, flags, key, op, body);
                    let mut mc = m.clone();
                    let fast = fast_request(&mut mc).expect("fast path");
                    let Ok((_, Message::Request { header, body: b })) = decode_message(&m, &limits)
                    else {
                        panic!("full decode");
                    };
                    assert_eq!(fast.request_id, header.request_id);
                    assert_eq!(fast.expected, header.response_flags.response_expected());
                    assert!(matches!(header.target, TargetAddress::Key(k) if k == fast.key));
                    assert_eq!(fast.operation, header.operation);
                    assert_eq!(fast.args.rest(), b.bytes);
                    assert_eq!(fast.args.position(), b.offset);
                    assert_eq!(fast.args.order(), b.order);
                    // Every truncation is refused (the full decode reports it).
                    for n in 0..m.len() {
                        assert!(fast_layout(&m[..n]).is_none(), "{n}");
                    }
                }
            }
        }
        // Service contexts, other versions and fragments take the full decode.
        let mut w = Writer::new(ByteOrder::Little);
        let sc = [ServiceContext {
            id: 1,
            data: &[0, 0, 0, 0],
        }];
        let h = RequestHeader {
            request_id: 1,
            response_flags: ResponseFlags::SyncWithTarget,
            target: TargetAddress::Key(b"k"),
            operation: "op",
            service_contexts: ServiceContexts::from_slice(&sc),
            requesting_principal: &[],
        };
        let p = peregrine_giop::encode_request(&mut w, GiopVersion::V1_2, &h).unwrap();
        p.finish(&mut w).unwrap();
        assert!(fast_layout(w.as_slice()).is_none());
        let mut m = request(ByteOrder::Little, ResponseFlags::None, b"k", "op", &[]);
        m[6] |= 2;
        assert!(fast_layout(&m).is_none());
        let mut m = request(ByteOrder::Little, ResponseFlags::None, b"k", "op", &[]);
        m[5] = 1;
        assert!(fast_layout(&m).is_none());
    }

    /// `u16 a; u64 b;` (padding 2..8): its first element after a
    /// sequence length is off its alignment (12 wire bytes at offset 4).
    #[derive(Clone, Copy, Debug, PartialEq)]
    #[repr(C)]
    struct P {
        a: u16,
        b: u64,
    }
    // SAFETY: integers only (any bits valid); size 16 == CDR_SIZE, align
    // 8 == CDR_ALIGN; members at their CDR offsets 0 and 8; 2..8 is the
    // only padding.
    unsafe impl peregrine_cdr::PlainData for P {
        const CDR_SIZE: usize = 16;
        const CDR_ALIGN: usize = 8;
        const PADDING: &'static [(usize, usize)] = &[(2, 8)];
        fn swap_members(&mut self) {
            self.a = self.a.swap_bytes();
            self.b = self.b.swap_bytes();
        }
    }

    /// The fast path lends the body exclusively, so a sequence of plain
    /// structs as the first argument is borrowed in place (not copied)
    /// from an 8-aligned message in native order, copied otherwise.
    #[test]
    fn fast_request_args_lend_plain_structs_in_place() {
        let vals: Vec<P> = (0..5u16)
            .map(|i| P {
                a: i + 1,
                b: u64::from(i) << 40,
            })
            .collect();
        for order in [ByteOrder::Little, ByteOrder::Big] {
            let mut body = Writer::new(order);
            body.write_u32(vals.len() as u32);
            for v in &vals {
                body.write_u16(v.a);
                body.write_u64(v.b);
            }
            let m = request(
                order,
                ResponseFlags::SyncWithTarget,
                b"k",
                "op",
                body.as_slice(),
            );
            for misalign in [0, 4] {
                let mut store = vec![0u8; m.len() + 16];
                let off = store.as_ptr().align_offset(8) + misalign;
                store[off..off + m.len()].copy_from_slice(&m);
                let req = fast_request(&mut store[off..off + m.len()]).expect("fast path");
                let mut args = req.args;
                let got = args
                    .read_plain_slice::<P>(|r| {
                        Ok(P {
                            a: r.read_u16()?,
                            b: r.read_u64()?,
                        })
                    })
                    .unwrap();
                assert_eq!(&*got, &vals[..], "{order:?} misalign {misalign}");
                assert_eq!(
                    matches!(got, std::borrow::Cow::Borrowed(_)),
                    order.is_native() && misalign == 0,
                    "{order:?} misalign {misalign}"
                );
            }
        }
    }

    /// An operation that is not UTF-8 passes the layout check but not
    /// `incoming`, and the full decode reports exactly the error `handle`
    /// then answers with.
    #[test]
    fn fast_request_rejects_non_utf8_operation() {
        let limits = peregrine_giop::Limits::default();
        let mut m = request(
            ByteOrder::Big,
            ResponseFlags::SyncWithTarget,
            b"k",
            "op",
            &[1; 8],
        );
        let at = m.windows(3).position(|w| w == b"op\0").unwrap();
        m[at] = 0xFF;
        assert!(fast_layout(&m).is_some());
        assert!(fast_request(&mut m.clone()).is_none());
        assert!(matches!(
            decode_message(&m, &limits),
            Err(peregrine_giop::GiopError::Cdr(
                peregrine_cdr::CdrError::InvalidText
            ))
        ));
    }
}
