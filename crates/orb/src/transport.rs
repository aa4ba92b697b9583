//! Transports: the one small trait every byte stream (TCP today; TLS and
//! Unix-domain sockets later) implements, TCP's implementation, and
//! message framing over it into one reusable contiguous buffer.

use std::io::{self, IoSlice, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use peregrine_giop::{Endpoint, GiopError, Limits, MessageHeader, HEADER_LEN};

/// A connected byte stream carrying GIOP messages.
///
/// Methods take `&self` so one thread can read while another writes (a
/// client connection's leader reads while callers write requests). A
/// transport never interprets the bytes.
pub trait Transport: Send + Sync + 'static {
    /// Reads some bytes (0 means the peer closed). Honours the read
    /// timeout (`WouldBlock`/`TimedOut` when it expires).
    fn read(&self, buf: &mut [u8]) -> io::Result<usize>;
    /// Writes all of `bufs` in order (vectored where the stream can).
    fn write_all_vectored(&self, bufs: &[&[u8]]) -> io::Result<()>;
    /// Sets the timeout of subsequent reads (`None`: block).
    fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()>;
    /// True if the peer has closed or sent something while we expected
    /// silence; must not block and must not consume bytes.
    fn peer_closed_or_readable(&self) -> bool;
    /// Closes the sending direction (the peer reads end-of-stream).
    fn shutdown_write(&self);
    /// Closes both directions, waking any thread blocked in `read`.
    fn shutdown(&self);
    /// The peer's address, for error messages.
    fn peer(&self) -> &str;
}

/// Opens transports to endpoints (one per transport kind).
pub trait Connector: Send + Sync + 'static {
    /// Connects to `ep`, giving up after `timeout`.
    fn connect(&self, ep: &Endpoint, timeout: Duration) -> io::Result<Box<dyn Transport>>;
}

/// Pieces of a vectored write passed without allocating.
const VEC_INLINE: usize = 4;

/// TCP (IIOP).
pub struct TcpTransport {
    stream: TcpStream,
    peer: String,
    /// The read timeout in force, in microseconds (0: none), so it is
    /// only changed (a syscall) when it must be.
    read_timeout_us: AtomicU64,
}

impl TcpTransport {
    /// Wraps a connected stream (sets `TCP_NODELAY`).
    pub fn new(stream: TcpStream) -> Self {
        let _ = stream.set_nodelay(true);
        // A peer that stops reading must not block a writer forever.
        let _ = stream.set_write_timeout(Some(Duration::from_secs(30)));
        let peer = stream
            .peer_addr()
            .map(|a| a.to_string())
            .unwrap_or_else(|_| "?".into());
        Self {
            stream,
            peer,
            read_timeout_us: AtomicU64::new(0),
        }
    }
}

impl TcpTransport {
    /// `write_all_vectored` of several buffers (fragmented messages): out
    /// of line, so the one-buffer write of every reply stays small.
    #[inline(never)]
    fn write_pieces(&self, bufs: &[&[u8]]) -> io::Result<()> {
        let (mut idx, mut off) = (0, 0);
        while idx < bufs.len() {
            let first = &bufs[idx][off..];
            let rest = &bufs[idx + 1..];
            // A few pieces (a message and its gathered tail) need no
            // allocation; fragment lists do.
            let mut n = if rest.len() < VEC_INLINE {
                let mut arr = [IoSlice::new(&[]); VEC_INLINE];
                arr[0] = IoSlice::new(first);
                for (d, s) in arr[1..].iter_mut().zip(rest) {
                    *d = IoSlice::new(s);
                }
                (&self.stream).write_vectored(&arr[..1 + rest.len()])?
            } else {
                let slices: Vec<IoSlice<'_>> = std::iter::once(first)
                    .chain(rest.iter().copied())
                    .map(IoSlice::new)
                    .collect();
                (&self.stream).write_vectored(&slices)?
            };
            if n == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            while idx < bufs.len() {
                let left = bufs[idx].len() - off;
                if n < left {
                    off += n;
                    break;
                }
                n -= left;
                idx += 1;
                off = 0;
            }
        }
        Ok(())
    }
}

impl Transport for TcpTransport {
    fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        crate::sock_io::recv(&self.stream, buf)
    }

    fn write_all_vectored(&self, bufs: &[&[u8]]) -> io::Result<()> {
        if let [one] = bufs {
            return crate::sock_io::send_all(&self.stream, one);
        }
        self.write_pieces(bufs)
    }

    fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        let us = timeout.map_or(0, |d| (d.as_micros() as u64).max(1));
        if self.read_timeout_us.load(Ordering::Relaxed) == us {
            return Ok(());
        }
        self.stream.set_read_timeout(timeout)?;
        self.read_timeout_us.store(us, Ordering::Relaxed);
        Ok(())
    }

    fn peer_closed_or_readable(&self) -> bool {
        if self.stream.set_nonblocking(true).is_err() {
            return true;
        }
        let mut b = [0u8; 1];
        let r = self.stream.peek(&mut b);
        let _ = self.stream.set_nonblocking(false);
        !matches!(r, Err(ref e) if e.kind() == io::ErrorKind::WouldBlock)
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

/// Connects IIOP endpoints over TCP, trying every address a host name
/// resolves to.
#[derive(Debug, Default, Clone, Copy)]
pub struct TcpConnector;

impl Connector for TcpConnector {
    fn connect(&self, ep: &Endpoint, timeout: Duration) -> io::Result<Box<dyn Transport>> {
        let addrs: Vec<SocketAddr> = (ep.host.as_str(), ep.port).to_socket_addrs()?.collect();
        let deadline = Instant::now() + timeout;
        let mut last = io::Error::new(io::ErrorKind::NotFound, "host resolves to no address");
        for a in addrs {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(io::ErrorKind::TimedOut.into());
            }
            match TcpStream::connect_timeout(&a, left) {
                Ok(s) => return Ok(Box::new(TcpTransport::new(s))),
                Err(e) => last = e,
            }
        }
        Err(last)
    }
}

/// Default size above which outgoing GIOP 1.1/1.2 messages are sent as
/// fragments (`OrbBuilder::fragment_size`).
pub const DEFAULT_FRAGMENT_SIZE: usize = 1 << 20;

/// Writes one complete GIOP message. A GIOP 1.1/1.2 Request or Reply
/// longer than `fragment_size` goes out as a first message with the
/// more-fragments bit and Fragment messages (none longer than
/// `fragment_size`), in one vectored write without copying the data;
/// anything else (GIOP 1.0 has no fragments) is written whole. The caller
/// holds the connection's write lock, so the pieces stay contiguous.
#[inline]
pub(crate) fn write_message(t: &dyn Transport, msg: &[u8], fragment_size: usize) -> io::Result<()> {
    if msg.len() <= fragment_size.max(peregrine_giop::fragment::MIN_FRAGMENT_LEN) {
        return t.write_all_vectored(&[msg]);
    }
    write_fragmented(t, msg, fragment_size)
}

/// `write_message` of a message longer than `fragment_size`.
#[inline(never)]
fn write_fragmented(t: &dyn Transport, msg: &[u8], fragment_size: usize) -> io::Result<()> {
    let pieces: Vec<peregrine_giop::Piece<'_>> = match peregrine_giop::fragment(msg, fragment_size)
    {
        Ok(f) => f.collect(),
        // Not fragmentable (GIOP 1.0, LocateRequest, ...): send it whole.
        Err(_) => return t.write_all_vectored(&[msg]),
    };
    let mut bufs: Vec<&[u8]> = Vec::with_capacity(pieces.len() * 2);
    for p in &pieces {
        bufs.push(p.header());
        bufs.push(p.payload);
    }
    t.write_all_vectored(&bufs)
}

/// [`write_message`] for a message whose last `tail` bytes are elsewhere
/// (a gathered last argument): one vectored write of both. The caller
/// keeps such messages within one fragment (it appends the tail to `msg`
/// otherwise), so only an empty tail reaches the fragmenting path.
pub(crate) fn write_message_gather(
    t: &dyn Transport,
    msg: &[u8],
    tail: &[u8],
    fragment_size: usize,
) -> io::Result<()> {
    if tail.is_empty() {
        return write_message(t, msg, fragment_size);
    }
    debug_assert!(
        msg.len() + tail.len() <= fragment_size.max(peregrine_giop::fragment::MIN_FRAGMENT_LEN)
    );
    t.write_all_vectored(&[msg, tail])
}

/// Binds a listener; an IPv6 wildcard is dual-stack where the OS allows.
pub(crate) fn bind(host: &str, port: u16) -> io::Result<TcpListener> {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    TcpListener::bind((host, port))
}

/// The length of the message whose header is `h` if it is the common
/// case: GIOP 1.2, any message type, no more fragments, within the size
/// limit (what `MessageHeader::decode` accepts for it, in a few
/// instructions). `None`: let `MessageHeader::decode` judge.
#[inline]
fn whole_1_2_len(h: &[u8], limits: &Limits) -> Option<usize> {
    let [b'G', b'I', b'O', b'P', 1, 2, flags, ty, s0, s1, s2, s3] = *h else {
        return None;
    };
    // Types 0..=7 (Request .. Fragment) all exist in GIOP 1.2.
    if flags & 2 != 0 || ty > 7 {
        return None;
    }
    let size = if flags & 1 != 0 {
        u32::from_le_bytes([s0, s1, s2, s3])
    } else {
        u32::from_be_bytes([s0, s1, s2, s3])
    };
    (size <= limits.max_message_size).then_some(HEADER_LEN + size as usize)
}

/// A receive buffer: bytes `[start, filled)` of `buf` are valid; a
/// complete message, once framed, begins at `start`.
///
/// Handling a message only advances `start` (no bytes move), so a stream
/// of back-to-back messages read in one `read` is dispatched without
/// copying; the unread rest moves to the front only when the space left
/// after it cannot hold the message being framed (at most one partial
/// message per buffer's worth of data).
///
/// A stream of messages is usually more of the same size, so a read asks
/// for whole messages of the last length framed, as many as fit in a
/// buffer of [`BATCH`] such messages (see [`RxBuf::fill`]): while the
/// guess holds, reads end on message boundaries, no partial message is
/// ever moved, and a stream of 8 KiB messages costs one `read` per
/// ~64 KiB as a plain byte-stream receiver does.
///
/// The storage is 8-byte aligned and a message is framed at an offset
/// that is a multiple of 8 whenever more bytes must be read for it (a
/// partial message moves to the front first), so CDR data aligned in its
/// message is aligned in memory too and a skeleton can borrow native-order
/// sequences in place (`Reader::read_primitive_slice`). Messages that
/// arrive whole behind another one in the same read keep their offset
/// (aligned if the ones before are multiples of 8 long); readers copy
/// the sequences of unaligned ones instead.
#[derive(Debug, Default)]
pub(crate) struct RxBuf {
    buf: RxStorage,
    start: usize,
    filled: usize,
    /// Length of the last message framed (0: none yet).
    expect: usize,
}

/// 8-byte aligned byte storage for [`RxBuf`].
#[derive(Debug, Default)]
pub(crate) struct RxStorage(Vec<u64>);

impl RxStorage {
    /// Length in bytes.
    #[inline]
    fn len(&self) -> usize {
        self.0.len() * 8
    }

    /// Grows or shrinks to `n` bytes rounded up to a multiple of 8.
    fn resize(&mut self, n: usize) {
        self.0.resize(n.div_ceil(8), 0);
    }

    #[inline]
    fn bytes(&self) -> &[u8] {
        // SAFETY: the `u64`s are initialized and every byte of an integer
        // is a valid `u8`; the length covers exactly the vector's elements
        // and `u8` needs no alignment.
        unsafe { std::slice::from_raw_parts(self.0.as_ptr().cast::<u8>(), self.len()) }
    }

    #[inline]
    fn bytes_mut(&mut self) -> &mut [u8] {
        let len = self.len();
        // SAFETY: as in `bytes`; any byte written is a valid part of a
        // `u64`, and the exclusive borrow of `self` is held for the
        // slice's lifetime.
        unsafe { std::slice::from_raw_parts_mut(self.0.as_mut_ptr().cast::<u8>(), len) }
    }
}

/// Why framing a message failed.
#[derive(Debug)]
pub(crate) enum FrameError {
    /// End of stream (cleanly between messages if `clean`).
    Eof { clean: bool },
    /// The read timed out; bytes read so far stay in the buffer.
    TimedOut,
    /// An I/O error.
    Io(io::Error),
    /// The header is not GIOP or breaks a limit: answer MessageError.
    Garbage(GiopError),
}

/// The smallest buffer (and read) of a connection.
const READ_CHUNK: usize = 16 * 1024;

/// Messages a read may bring at once when they are all the same size:
/// at 8 KiB that is one `read` per 64 KiB, the raw baseline's reads.
const BATCH: usize = 8;

/// The most a buffer grows to for batched reads (a larger message still
/// gets a buffer of its own size).
const BATCH_MAX: usize = 256 * 1024;

/// Messages from this size on whose length is not a multiple of 4 are
/// read one per `read` (step 26 of docs/PERFORMANCE.md): a second one in
/// the same read would start off even 4-byte alignment, so the skeleton
/// would copy its sequences of shorts, longs and floats, which for a
/// large message costs more than the `read` saved. Below it the copy is
/// cheaper than the `read`. A length that is 4 mod 8 (a `long` or
/// `short` sequence alone: 4 length bytes + a multiple of 8) is batched
/// (step 30b): its later messages start 4-aligned, so only their
/// 8-byte-aligned data (doubles, long longs, plain structs) is copied.
const LARGE_MESSAGE: usize = READ_CHUNK;

impl RxBuf {
    /// A buffer holding exactly the bytes `v` (a message, e.g.
    /// reassembled), copied into aligned storage.
    pub(crate) fn from_message(v: &[u8]) -> Self {
        let mut buf = RxStorage::default();
        buf.resize(v.len());
        buf.bytes_mut()[..v.len()].copy_from_slice(v);
        Self {
            buf,
            start: 0,
            filled: v.len(),
            expect: 0,
        }
    }

    /// Frees the memory of an empty buffer that grew beyond `max` bytes
    /// (after a one-off large message).
    #[inline]
    pub(crate) fn shrink_if_idle(&mut self, max: usize) {
        if self.filled == self.start && self.buf.len() > max {
            *self = Self::default();
        }
    }

    /// The first `len` unread bytes: the message framed by
    /// [`RxBuf::read_message`].
    #[inline]
    pub(crate) fn message(&self, len: usize) -> &[u8] {
        &self.buf.bytes()[self.start..self.start + len]
    }

    /// [`RxBuf::message`], lent exclusively: the server's argument reader
    /// may rewrite bytes it has decoded (the message is consumed after).
    #[inline]
    pub(crate) fn message_mut(&mut self, len: usize) -> &mut [u8] {
        let start = self.start;
        &mut self.buf.bytes_mut()[start..start + len]
    }

    /// Every unread byte (possibly a partial message).
    #[inline]
    pub(crate) fn unread(&self) -> &[u8] {
        &self.buf.bytes()[self.start..self.filled]
    }

    /// Reads until one complete message is at the start of the unread
    /// bytes and returns its length. Memory grows only as bytes actually
    /// arrive (a header announcing a huge size does not reserve it up
    /// front).
    pub(crate) fn read_message(
        &mut self,
        t: &dyn Transport,
        limits: &Limits,
    ) -> Result<usize, FrameError> {
        loop {
            let have = self.filled - self.start;
            if have >= HEADER_LEN {
                let head = &self.buf.bytes()[self.start..self.start + HEADER_LEN];
                let len = match whole_1_2_len(head, limits) {
                    Some(len) => len,
                    None => MessageHeader::decode(head, limits)
                        .map_err(FrameError::Garbage)?
                        .message_len(),
                };
                if have >= len {
                    self.expect = len;
                    return Ok(len);
                }
                self.fill(t, len, len)?;
            } else {
                // A stream of messages is usually more of the same size.
                self.fill(t, HEADER_LEN, self.expect.max(HEADER_LEN))?;
            }
        }
    }

    /// One read towards having `need` unread bytes, `first` being the
    /// (expected) length of the message at `start`. The partial message
    /// moves to the front first if it does not start 8-aligned (at most
    /// the bytes of one message read so far) or the space after it cannot
    /// hold `need` bytes.
    ///
    /// The read ends where the message at `start` and as many whole
    /// messages of the last framed length as fit would end, so while that
    /// guess holds no read stops inside a message (which would be moved
    /// before the read that completes it: with 8 KiB messages and reads
    /// of whatever fits, most of every message was moved). Large messages
    /// of a length that is not a multiple of 4 come one per read, so each
    /// starts at the front, aligned.
    fn fill(&mut self, t: &dyn Transport, need: usize, first: usize) -> Result<(), FrameError> {
        if self.start % 8 != 0 || self.start + need > self.buf.len() {
            self.compact();
        }
        let per_read = if self.expect % 4 != 0 && self.expect >= LARGE_MESSAGE {
            1
        } else {
            BATCH
        };
        // Room for a batch is sized from a message that arrived whole, so
        // memory follows the bytes received; `need` (announced, not yet
        // received) is approached geometrically.
        let want = need
            .max(READ_CHUNK)
            .max(self.expect.saturating_mul(per_read).min(BATCH_MAX));
        if self.buf.len() < want {
            let target = want.min((self.buf.len() * 2).max(READ_CHUNK));
            self.buf.resize(target);
        }
        let mut want_end = self.buf.len();
        let first_end = self.start.saturating_add(first.max(need));
        if self.expect > 0 && first_end <= want_end {
            // Never below `start + need` (> `filled`), so the read asks
            // for at least one byte.
            let more = (want_end - first_end) / self.expect;
            let more = if per_read == 1 { 0 } else { more };
            want_end = first_end + more * self.expect;
        }
        match t.read(&mut self.buf.bytes_mut()[self.filled..want_end]) {
            Ok(0) => Err(FrameError::Eof {
                clean: self.filled == self.start,
            }),
            Ok(n) => {
                self.filled += n;
                Ok(())
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                Err(FrameError::TimedOut)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
            Err(e) => Err(FrameError::Io(e)),
        }
    }

    /// Moves the unread bytes to the front of the buffer.
    #[cold]
    fn compact(&mut self) {
        if self.start > 0 {
            self.buf.bytes_mut().copy_within(self.start..self.filled, 0);
            self.filled -= self.start;
            self.start = 0;
        }
    }

    /// Drops the first `len` unread bytes (a handled message), keeping
    /// any that follow where they are.
    #[inline]
    pub(crate) fn consume(&mut self, len: usize) {
        self.start = (self.start + len).min(self.filled);
        if self.start == self.filled {
            self.start = 0;
            self.filled = 0;
        }
    }
}

/// An in-memory transport for the framing tests and the fuzz targets in
/// `fuzz/` (built for tests and under `cargo fuzz`, which sets
/// `cfg(fuzzing)`).
#[cfg(any(test, fuzzing))]
#[doc(hidden)]
pub mod fuzzing {
    use super::*;
    use std::collections::VecDeque;
    use std::sync::Mutex;

    /// A transport over scripted reads: each read returns at most the
    /// rest of the current chunk (and never more than asked for); end of
    /// stream after the last.
    pub(crate) struct Script(Mutex<VecDeque<Vec<u8>>>);

    impl Script {
        pub(crate) fn new(chunks: Vec<Vec<u8>>) -> Script {
            Script(Mutex::new(chunks.into()))
        }
    }

    impl Transport for Script {
        fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
            let mut v = self.0.lock().unwrap_or_else(|e| e.into_inner());
            let Some(chunk) = v.front_mut() else {
                return Ok(0);
            };
            let n = chunk.len().min(buf.len());
            buf[..n].copy_from_slice(&chunk[..n]);
            chunk.drain(..n);
            if chunk.is_empty() {
                v.pop_front();
            }
            Ok(n)
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
            "script"
        }
    }

    /// How a framed stream ended.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum End {
        /// End of stream between messages.
        Clean,
        /// End of stream inside a message.
        Cut,
        /// A header that is not GIOP or breaks a limit.
        Garbage,
    }

    /// Frames `stream` with a connection's receive buffer, the stream
    /// arriving in pieces of `sizes[0]`, `sizes[1]`, ... bytes (cycling;
    /// none: one piece): the messages in order, and how the stream ended.
    pub fn frame(stream: &[u8], sizes: &[usize], limits: &Limits) -> (Vec<Vec<u8>>, End) {
        let mut chunks = Vec::new();
        let mut rest = stream;
        let mut i = 0;
        while !rest.is_empty() {
            let n = sizes
                .get(i % sizes.len().max(1))
                .map_or(rest.len(), |&s| s.max(1));
            let (piece, tail) = rest.split_at(n.min(rest.len()));
            chunks.push(piece.to_vec());
            rest = tail;
            i += 1;
        }
        let t = Script::new(chunks);
        let mut rx = RxBuf::default();
        let mut out = Vec::new();
        loop {
            match rx.read_message(&t, limits) {
                Ok(n) => {
                    out.push(rx.message(n).to_vec());
                    rx.consume(n);
                }
                Err(FrameError::Eof { clean: true }) => return (out, End::Clean),
                Err(FrameError::Eof { clean: false }) => return (out, End::Cut),
                Err(FrameError::Garbage(_)) => return (out, End::Garbage),
                Err(e) => panic!("an in-memory stream failed to read: {e:?}"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fuzzing::Script;
    use super::*;
    use std::sync::Mutex;

    /// Wherever the GIOP 1.2 shortcut answers, `MessageHeader::decode`
    /// accepts the header with the same length; it declines the rest.
    #[test]
    fn whole_1_2_len_agrees_with_decode() {
        let limits = Limits {
            max_message_size: 1 << 20,
            ..Limits::default()
        };
        for minor in 0..4u8 {
            for flags in 0..=255u8 {
                for ty in 0..10u8 {
                    for size in [0u32, 1, 24, 1 << 20, (1 << 20) + 1, u32::MAX] {
                        let mut h = [b'G', b'I', b'O', b'P', 1, minor, flags, ty, 0, 0, 0, 0];
                        if flags & 1 != 0 {
                            h[8..].copy_from_slice(&size.to_le_bytes());
                        } else {
                            h[8..].copy_from_slice(&size.to_be_bytes());
                        }
                        let full = MessageHeader::decode(&h, &limits).map(|h| h.message_len());
                        match whole_1_2_len(&h, &limits) {
                            Some(n) => assert_eq!(full.ok(), Some(n), "{h:?}"),
                            None => assert!(
                                minor != 2 || flags & 2 != 0 || full.is_err(),
                                "{h:?} declined"
                            ),
                        }
                    }
                }
            }
        }
        let mut h = *b"GIOQ\x01\x02\x00\x00\x00\x00\x00\x00";
        assert_eq!(whole_1_2_len(&h, &limits), None);
        h[3] = b'P';
        assert_eq!(whole_1_2_len(&h, &limits), Some(HEADER_LEN));
    }

    fn close_msg() -> Vec<u8> {
        let mut w = peregrine_cdr::Writer::new(peregrine_cdr::ByteOrder::Big);
        peregrine_giop::encode_close_connection(&mut w, peregrine_cdr::GiopVersion::V1_2).unwrap();
        w.into_vec()
    }

    #[test]
    fn frames_split_and_joined_messages() {
        let m = close_msg();
        let mut two = m.clone();
        two.extend_from_slice(&m);
        let t = Script::new(vec![m[..5].to_vec(), m[5..].to_vec(), two]);
        let mut rx = RxBuf::default();
        let l = Limits::default();
        for _ in 0..3 {
            let n = rx.read_message(&t, &l).unwrap();
            assert_eq!(rx.message(n), &m[..]);
            rx.consume(n);
        }
        assert!(matches!(
            rx.read_message(&t, &l),
            Err(FrameError::Eof { clean: true })
        ));
    }

    /// A transport recording what is written.
    #[derive(Default)]
    struct Sink(Mutex<Vec<u8>>);
    impl Transport for Sink {
        fn read(&self, _: &mut [u8]) -> io::Result<usize> {
            Ok(0)
        }
        fn write_all_vectored(&self, bufs: &[&[u8]]) -> io::Result<()> {
            let mut v = self.0.lock().unwrap();
            for b in bufs {
                v.extend_from_slice(b);
            }
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
            "sink"
        }
    }

    fn request(version: peregrine_cdr::GiopVersion, body: usize) -> Vec<u8> {
        use peregrine_giop::{RequestHeader, ResponseFlags, ServiceContexts, TargetAddress};
        let mut w = peregrine_cdr::Writer::new(peregrine_cdr::ByteOrder::Little);
        let h = RequestHeader {
            request_id: 9,
            response_flags: ResponseFlags::SyncWithTarget,
            target: TargetAddress::Key(b"key"),
            operation: "op",
            service_contexts: ServiceContexts::EMPTY,
            requesting_principal: &[],
        };
        let p = peregrine_giop::encode_request(&mut w, version, &h).unwrap();
        w.write_octet_seq(&vec![7u8; body]).unwrap();
        p.finish(&mut w).unwrap();
        w.into_vec()
    }

    #[test]
    fn large_messages_are_fragmented_and_reassemble() {
        use peregrine_cdr::GiopVersion as V;
        for v in [V::V1_1, V::V1_2] {
            let msg = request(v, 10_000);
            let t = Sink::default();
            write_message(&t, &msg, 1024).unwrap();
            let wire = t.0.into_inner().unwrap();
            assert!(wire.len() > msg.len(), "{v:?}: fragment headers added");
            let mut rx = RxBuf::default();
            let src = Script::new(vec![wire]);
            let mut ra = peregrine_giop::Reassembler::new(Limits::default());
            let whole = loop {
                let n = rx.read_message(&src, &Limits::default()).unwrap();
                assert!(n <= 1024 && (n % 8 == 0 || n < 1024), "{v:?}: piece of {n}");
                match ra.push(rx.message(n)).unwrap() {
                    peregrine_giop::Assembled::Reassembled(m) => break m,
                    peregrine_giop::Assembled::Incomplete => rx.consume(n),
                    peregrine_giop::Assembled::Whole(_) => panic!("{v:?}: not fragmented"),
                }
            };
            assert_eq!(whole, msg, "{v:?}");
        }
        // GIOP 1.0 has no fragments; small messages go whole.
        for (v, len) in [(V::V1_0, 10_000), (V::V1_2, 100)] {
            let msg = request(v, len);
            let t = Sink::default();
            write_message(&t, &msg, 1024).unwrap();
            assert_eq!(t.0.into_inner().unwrap(), msg);
        }
    }

    #[test]
    fn garbage_and_oversize_are_rejected() {
        let t = Script::new(vec![b"HTTP/1.1 200 OK\r\n".to_vec()]);
        let mut rx = RxBuf::default();
        assert!(matches!(
            rx.read_message(&t, &Limits::default()),
            Err(FrameError::Garbage(_))
        ));
        let mut big = close_msg();
        big[8..12].copy_from_slice(&(1u32 << 30).to_be_bytes());
        let t = Script::new(vec![big]);
        let mut rx = RxBuf::default();
        assert!(matches!(
            rx.read_message(&t, &Limits::default()),
            Err(FrameError::Garbage(_))
        ));
        assert!(rx.buf.len() <= READ_CHUNK);
    }

    #[test]
    fn a_message_read_in_pieces_starts_8_aligned() {
        // Requests of odd lengths back to back, delivered in reads that
        // cut them anywhere: every message that needed a further read
        // starts at an 8-aligned address, and all arrive intact.
        let msgs: Vec<Vec<u8>> = (0..40)
            .map(|i| request(peregrine_cdr::GiopVersion::V1_2, 3 * i + 1))
            .collect();
        let stream: Vec<u8> = msgs.concat();
        for cut in [5usize, 13, 61, 700] {
            let chunks: Vec<Vec<u8>> = stream.chunks(cut).map(<[u8]>::to_vec).collect();
            let t = Script::new(chunks);
            let mut rx = RxBuf::default();
            for m in &msgs {
                let before = rx.unread().len();
                let n = rx.read_message(&t, &Limits::default()).unwrap();
                assert_eq!(rx.message(n), &m[..], "cut {cut}");
                if before < n {
                    assert_eq!(rx.message(n).as_ptr() as usize % 8, 0, "cut {cut}");
                }
                rx.consume(n);
            }
        }
    }

    /// Random mixes of messages (GIOP 1.0-1.2, empty to 40 KiB bodies, so
    /// every length mod 8 and both sides of `LARGE_MESSAGE`) arriving in
    /// random pieces (a byte to more than a message): every message comes
    /// out whole and in order whatever the batching guessed, and the
    /// stream ends cleanly.
    #[test]
    fn any_mix_of_sizes_and_reads_frames_every_message() {
        use peregrine_cdr::GiopVersion as V;
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = |n: u64| {
            // xorshift64: the same cases on every run.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let l = Limits::default();
        for round in 0..30 {
            let count = 1 + next(24) as usize;
            let msgs: Vec<Vec<u8>> = (0..count)
                .map(|_| {
                    let version = [V::V1_0, V::V1_1, V::V1_2][next(3) as usize];
                    let body = match next(4) {
                        0 => next(16),
                        1 => next(2_000),
                        2 => 8_000 + next(40),
                        _ => 16_000 + next(24_000),
                    };
                    request(version, body as usize)
                })
                .collect();
            let stream = msgs.concat();
            let mut sizes = Vec::new();
            let mut at = 0;
            while at < stream.len() {
                let most = if next(2) == 0 { 64 } else { 50_000 };
                let size = 1 + next(most) as usize;
                sizes.push(size);
                at += size;
            }
            let (got, end) = super::fuzzing::frame(&stream, &sizes, &l);
            assert_eq!(got.len(), msgs.len(), "round {round}");
            for (i, (g, m)) in got.iter().zip(&msgs).enumerate() {
                assert!(g == m, "round {round}, message {i}");
            }
            assert_eq!(end, super::fuzzing::End::Clean, "round {round}");
        }
    }

    /// [`Script`], recording the size of every read asked for.
    struct Asks(Script, Mutex<Vec<usize>>);
    impl Transport for Asks {
        fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
            self.1.lock().unwrap().push(buf.len());
            self.0.read(buf)
        }
        fn write_all_vectored(&self, b: &[&[u8]]) -> io::Result<()> {
            self.0.write_all_vectored(b)
        }
        fn set_read_timeout(&self, d: Option<Duration>) -> io::Result<()> {
            self.0.set_read_timeout(d)
        }
        fn peer_closed_or_readable(&self) -> bool {
            false
        }
        fn shutdown_write(&self) {}
        fn shutdown(&self) {}
        fn peer(&self) -> &str {
            "asks"
        }
    }

    /// A stream of same-size messages with the sender far ahead: once a
    /// message has been framed every read asks for whole messages (the
    /// first read, blind, may cut one), so none is cut and moved after
    /// that, and there is one read per buffer of `BATCH` messages (or of
    /// `READ_CHUNK` for small ones). Messages whose length is a multiple
    /// of 8 are all 8-aligned, of a multiple of 4 all 4-aligned; others
    /// (below `LARGE_MESSAGE`) keep their offsets.
    #[test]
    fn same_size_messages_are_read_in_batches() {
        let base = request(peregrine_cdr::GiopVersion::V1_2, 0).len();
        for len in [1000, 1004, 1003, 8200, 8196, 16392, 16396, 32776, 32772] {
            let m = request(peregrine_cdr::GiopVersion::V1_2, len - base);
            assert_eq!(m.len(), len);
            let count = 40;
            let t = Asks(Script::new(vec![m.repeat(count)]), Mutex::new(Vec::new()));
            let mut rx = RxBuf::default();
            let mut cut = 0;
            for i in 0..count {
                let n = rx.read_message(&t, &Limits::default()).unwrap();
                assert_eq!(rx.message(n), &m[..], "len {len}, message {i}");
                cut += usize::from(rx.unread().len() % len != 0);
                let align = if len % 8 == 0 { 8 } else { 4 };
                if len % 4 == 0 {
                    let at = rx.message(n).as_ptr() as usize;
                    assert_eq!(at % align, 0, "len {len}");
                }
                rx.consume(n);
            }
            // Only messages of the first, blind read share a read with a
            // cut one.
            assert!(cut <= READ_CHUNK / len + 1, "len {len}: {cut} cut");
            let asks = t.1.into_inner().unwrap();
            let batch = (BATCH * len).clamp(READ_CHUNK, BATCH_MAX) / len;
            // + the blind first read and its completion, + the reads while
            // the buffer doubles from READ_CHUNK up to BATCH_MAX.
            assert!(
                asks.len() <= count.div_ceil(batch) + 2 + 4,
                "len {len}: {asks:?}"
            );
        }
    }

    /// A stream of large messages of odd length arriving in one piece:
    /// from the second message on, each read stops at a message's end,
    /// so every later message is framed at the buffer's start (aligned,
    /// nothing moved) and its reads never hold the next message's start.
    #[test]
    fn large_messages_are_read_one_per_read() {
        let msgs: Vec<Vec<u8>> = (0..6)
            .map(|i| request(peregrine_cdr::GiopVersion::V1_2, 17000 + 2 * i + 1))
            .collect();
        assert!(msgs.iter().all(|m| m.len() % 8 != 0));
        let t = Script::new(vec![msgs.concat()]);
        let mut rx = RxBuf::default();
        for (i, m) in msgs.iter().enumerate() {
            let n = rx.read_message(&t, &Limits::default()).unwrap();
            assert_eq!(rx.message(n), &m[..]);
            if i >= 2 {
                assert_eq!(rx.start, 0, "message {i}");
                // The read brought at most this message (the prediction
                // is the previous one's length, 2 bytes shorter).
                assert!(rx.unread().len() <= n, "message {i}");
            }
            assert_eq!(rx.message(n).as_ptr() as usize % 8, 0, "message {i}");
            rx.consume(n);
        }
        // Small messages after large ones still frame (the prediction
        // only bounds a read, it never asks for less than a header).
        let small = request(peregrine_cdr::GiopVersion::V1_2, 3);
        let t = Script::new(vec![
            [msgs[0].clone(), small.clone(), small.clone()].concat()
        ]);
        let mut rx = RxBuf::default();
        for m in [&msgs[0], &small, &small] {
            let n = rx.read_message(&t, &Limits::default()).unwrap();
            assert_eq!(rx.message(n), &m[..]);
            rx.consume(n);
        }
    }
}
