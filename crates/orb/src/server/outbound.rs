//! Reply writing: several threads answer requests of one connection at
//! once, so their messages are serialized here, on a non-blocking socket
//! with a bounded queue.
//!
//! A message goes straight to the socket while nothing is queued (the
//! common case: one `send`, no copy). Writers take a lock biased to the
//! connection's first writer (`crate::biased_lock`): a thread that
//! answers all of a connection's requests, as a dwelling one does,
//! enters and leaves it with plain stores, and the queue's own mutex is
//! taken only once something is queued or the connection failed. Whatever the kernel does not take
//! is copied to the queue, and the connection's write registration is
//! armed; the thread that gets the writability event flushes. A peer
//! that stops reading its replies makes the queue grow: beyond the
//! limit the connection is closed rather than buffering without bound.

use std::collections::VecDeque;
use std::io;
use std::net::{Shutdown, TcpStream};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use super::poller::{Kind, Poller, Token};
use crate::biased_lock::BiasedLock;
use crate::client::lock;

/// Why a message could not be written.
#[derive(Debug)]
pub(super) enum WriteError {
    /// The connection failed or was closed earlier.
    Closed,
    /// The peer does not read: the queue would exceed its limit. The
    /// connection is now shut down.
    QueueFull,
    /// The socket failed.
    Io,
}

/// The replies of one connection not yet taken by the kernel.
pub(super) struct Outbound {
    /// Serializes the connection's writers (and everything that changes
    /// the queue): taken before `q`, and alone on the common path.
    writers: BiasedLock,
    /// Nothing is queued and the connection has not failed, so a holder
    /// of `writers` may send without `q`. Read and written only by
    /// holders of `writers` (which orders them: relaxed is enough).
    clear: AtomicBool,
    q: Mutex<Queue>,
    /// The most bytes queued (a single message larger than this is still
    /// accepted into an empty queue: its size is bounded by the limits).
    limit: usize,
}

#[derive(Default)]
struct Queue {
    pending: VecDeque<Vec<u8>>,
    /// Bytes of `pending[0]` already sent.
    head_sent: usize,
    /// Bytes in `pending` not yet sent.
    bytes: usize,
    /// The write registration is armed (a flush will come).
    armed: bool,
    /// The duplicate descriptor the write registration uses (made on the
    /// first blocked write).
    dup: Option<OwnedFd>,
    /// Shut the sending direction once the queue is empty
    /// (CloseConnection, MessageError).
    shutdown_when_empty: bool,
    failed: bool,
}

/// Sends as much of `buf` as the kernel takes now; `Ok(n)` bytes taken.
fn send_some(sock: &TcpStream, buf: &[u8]) -> io::Result<usize> {
    let mut at = 0;
    while at < buf.len() {
        match crate::sock_io::send_nowait(sock, &buf[at..]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => at += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) => return Err(e),
        }
    }
    Ok(at)
}

impl Outbound {
    pub(super) fn new(limit: usize) -> Outbound {
        Outbound {
            writers: BiasedLock::new(),
            clear: AtomicBool::new(true),
            q: Mutex::new(Queue::default()),
            limit,
        }
    }

    /// Writes one message made of `bufs` (in order, contiguous on the
    /// wire with respect to other threads' messages).
    pub(super) fn write(
        &self,
        sock: &TcpStream,
        poller: &Poller,
        id: u64,
        bufs: &[&[u8]],
    ) -> Result<(), WriteError> {
        let (_w, _) = self.writers.lock();
        if self.clear.load(Ordering::Relaxed) {
            // Nothing queued: straight to the socket while it takes all.
            for (i, b) in bufs.iter().enumerate() {
                match send_some(sock, b) {
                    Ok(n) if n == b.len() => {}
                    sent => return self.write_queued(sock, poller, id, &bufs[i..], sent),
                }
            }
            return Ok(());
        }
        self.write_queued(sock, poller, id, bufs, Ok(0))
    }

    /// Writes one whole message: [`Outbound::write`] for the common
    /// reply, small enough to sit inline in the thread that made it (one
    /// `send` that takes it all; anything else is the cold path's).
    #[inline(always)]
    pub(super) fn write_one(
        &self,
        sock: &TcpStream,
        poller: &Poller,
        id: u64,
        msg: &[u8],
    ) -> Result<(), WriteError> {
        let (_w, _) = self.writers.lock();
        if self.clear.load(Ordering::Relaxed) {
            match crate::sock_io::send_nowait(sock, msg) {
                Ok(n) if n == msg.len() => return Ok(()),
                sent => return self.write_rest(sock, poller, id, msg, sent),
            }
        }
        self.write_queued(sock, poller, id, &[msg], Ok(0))
    }

    /// [`Outbound::write_one`] after a `send` that did not take the whole
    /// message (`sent`: its result).
    #[cold]
    #[inline(never)]
    fn write_rest(
        &self,
        sock: &TcpStream,
        poller: &Poller,
        id: u64,
        msg: &[u8],
        sent: io::Result<usize>,
    ) -> Result<(), WriteError> {
        let first = match sent {
            Ok(n) => send_some(sock, &msg[n..]).map(|more| n + more),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => send_some(sock, msg),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(0),
            Err(e) => Err(e),
        };
        self.write_queued(sock, poller, id, &[msg], first)
    }

    /// The rest of [`Outbound::write`] under the queue's lock: `bufs`
    /// are the buffers not yet sent whole, of which `first` (the result
    /// of sending the first) tells how much went out.
    #[cold]
    fn write_queued(
        &self,
        sock: &TcpStream,
        poller: &Poller,
        id: u64,
        bufs: &[&[u8]],
        first: io::Result<usize>,
    ) -> Result<(), WriteError> {
        let mut q = lock(&self.q);
        let r = (|| {
            if q.failed {
                return Err(WriteError::Closed);
            }
            let was_empty = q.pending.is_empty();
            let mut first = Some(first);
            for b in bufs {
                let sent = match first.take() {
                    Some(sent) => sent,
                    None if q.pending.is_empty() => send_some(sock, b),
                    None => Ok(0),
                };
                let Ok(taken) = sent else {
                    q.failed = true;
                    return Err(WriteError::Io);
                };
                if taken < b.len() {
                    q.pending.push_back(b[taken..].to_vec());
                    q.bytes += b.len() - taken;
                }
            }
            if q.pending.is_empty() {
                return Ok(());
            }
            if !was_empty && q.bytes > self.limit {
                q.failed = true;
                q.pending.clear();
                q.bytes = 0;
                let _ = sock.shutdown(Shutdown::Both);
                return Err(WriteError::QueueFull);
            }
            self.arm(&mut q, sock, poller, id).map_err(|_| {
                q.failed = true;
                WriteError::Io
            })
        })();
        self.settle(&q);
        r
    }

    /// Whether writers may send without the queue again (called with
    /// `writers` and `q` held, after any change to the queue).
    fn settle(&self, q: &Queue) {
        self.clear
            .store(q.pending.is_empty() && !q.failed, Ordering::Relaxed);
    }

    /// Arms the write registration (once per blocked period).
    fn arm(&self, q: &mut Queue, sock: &TcpStream, poller: &Poller, id: u64) -> io::Result<()> {
        if q.armed {
            return Ok(());
        }
        let token = Token {
            id,
            kind: Kind::Write,
        };
        match &q.dup {
            Some(fd) => poller.rearm(fd.as_raw_fd(), token)?,
            None => {
                let fd = sock.as_fd().try_clone_to_owned()?;
                poller.add(fd.as_raw_fd(), token)?;
                q.dup = Some(fd);
            }
        }
        q.armed = true;
        Ok(())
    }

    /// The socket is writable: sends what is queued; re-arms if the
    /// kernel still cannot take it all.
    pub(super) fn flush(&self, sock: &TcpStream, poller: &Poller, id: u64) {
        let (_w, _) = self.writers.lock();
        let mut q = lock(&self.q);
        self.flush_queue(&mut q, sock, poller, id);
        self.settle(&q);
    }

    fn flush_queue(&self, q: &mut Queue, sock: &TcpStream, poller: &Poller, id: u64) {
        q.armed = false;
        while let Some(front) = q.pending.front() {
            let from = q.head_sent;
            match send_some(sock, &front[from..]) {
                Ok(n) => {
                    let done = from + n == front.len();
                    q.bytes -= n;
                    if done {
                        q.pending.pop_front();
                        q.head_sent = 0;
                    } else {
                        q.head_sent += n;
                        if self.arm(q, sock, poller, id).is_err() {
                            q.failed = true;
                            let _ = sock.shutdown(Shutdown::Both);
                        }
                        return;
                    }
                }
                Err(_) => {
                    q.failed = true;
                    q.pending.clear();
                    let _ = sock.shutdown(Shutdown::Both);
                    return;
                }
            }
        }
        if q.shutdown_when_empty {
            let _ = sock.shutdown(Shutdown::Write);
        }
    }

    /// Closes the sending direction once every queued byte is sent.
    pub(super) fn shutdown_write(&self, sock: &TcpStream) {
        let (_w, _) = self.writers.lock();
        let mut q = lock(&self.q);
        if q.pending.is_empty() {
            let _ = sock.shutdown(Shutdown::Write);
        } else {
            q.shutdown_when_empty = true;
        }
    }

    /// Forgets the write registration (the connection is closing).
    pub(super) fn deregister(&self, poller: &Poller) {
        let (_w, _) = self.writers.lock();
        let mut q = lock(&self.q);
        q.failed = true;
        q.pending.clear();
        self.settle(&q);
        if let Some(fd) = q.dup.take() {
            poller.delete(fd.as_raw_fd());
        }
    }

    /// Bytes waiting for the peer to read.
    #[cfg(test)]
    pub(super) fn queued(&self) -> usize {
        lock(&self.q).bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::TcpListener;
    use std::time::Duration;

    fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        b.set_nonblocking(true).unwrap();
        (a, b)
    }

    /// A peer that does not read: writes queue up to the limit, the one
    /// beyond closes the connection; what was queued before arrives in
    /// order once the peer reads (and the queue flushes).
    #[test]
    fn a_peer_that_does_not_read_fills_the_queue_and_is_cut_off() {
        let (mut peer, sock) = pair();
        let poller = Poller::new().unwrap();
        let out = Outbound::new(256 * 1024);
        let chunk = vec![7u8; 64 * 1024];
        let mut written = 0;
        let err = loop {
            match out.write(&sock, &poller, 1, &[&chunk]) {
                Ok(()) => written += 1,
                Err(e) => break e,
            }
            assert!(written < 10_000, "the queue never filled");
        };
        assert!(matches!(err, WriteError::QueueFull), "{err:?}");
        assert!(matches!(
            out.write(&sock, &poller, 1, &[b"x"]),
            Err(WriteError::Closed)
        ));
        // The peer sees end of stream or a reset after at most what was
        // accepted.
        peer.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut got = Vec::new();
        let _ = peer.read_to_end(&mut got);
        assert!(got.len() <= written * chunk.len());
    }

    /// Writers on several threads (the first one's bias revoked by the
    /// others; whole messages and messages in pieces) never interleave their messages, through the direct path
    /// and the queue alike, and every message arrives.
    #[test]
    fn concurrent_writers_keep_their_messages_whole() {
        const THREADS: u8 = 4;
        const EACH: usize = 300;
        const LEN: usize = 7_000;
        let (mut peer, sock) = pair();
        let poller = Poller::new().unwrap();
        let out = Outbound::new(64 << 20);
        let total = THREADS as usize * EACH * LEN;
        let reader = std::thread::spawn(move || {
            let mut got = vec![0u8; total];
            peer.read_exact(&mut got).unwrap();
            got
        });
        std::thread::scope(|s| {
            for t in 0..THREADS {
                let (out, sock, poller) = (&out, &sock, &poller);
                s.spawn(move || {
                    for i in 0..EACH {
                        let byte = t * 64 + (i % 64) as u8;
                        let msg = vec![byte; LEN];
                        if t % 2 == 0 {
                            out.write_one(sock, poller, 9, &msg).unwrap();
                        } else {
                            // Header and payload as two pieces of one message.
                            out.write(sock, poller, 9, &[&msg[..10], &msg[10..]])
                                .unwrap();
                        }
                    }
                });
            }
        });
        while out.queued() > 0 {
            poller.wait_one(Duration::from_secs(10)).expect("writable");
            out.flush(&sock, &poller, 9);
        }
        let got = reader.join().unwrap();
        let mut per_thread = [0usize; THREADS as usize];
        for m in got.chunks(LEN) {
            assert!(m.iter().all(|b| *b == m[0]), "a message was interleaved");
            let t = (m[0] / 64) as usize;
            assert_eq!(m[0] % 64, (per_thread[t] % 64) as u8, "out of order");
            per_thread[t] += 1;
        }
        assert_eq!(per_thread, [EACH; THREADS as usize]);
    }

    /// Blocked bytes go out in order when the socket becomes writable.
    #[test]
    fn queued_bytes_flush_in_order() {
        let (mut peer, sock) = pair();
        let poller = Poller::new().unwrap();
        let out = Outbound::new(64 << 20);
        let msgs: Vec<Vec<u8>> = (0..64u8).map(|i| vec![i; 100_000]).collect();
        // Both writers: the one for whole messages and the one for pieces.
        for (i, m) in msgs.iter().enumerate() {
            if i % 2 == 0 {
                out.write_one(&sock, &poller, 3, m).unwrap();
            } else {
                out.write(&sock, &poller, 3, &[m]).unwrap();
            }
        }
        assert!(out.queued() > 0, "the kernel took 6.4 MB at once");
        let reader = std::thread::spawn(move || {
            let mut got = vec![0u8; 64 * 100_000];
            peer.read_exact(&mut got).unwrap();
            got
        });
        while out.queued() > 0 {
            let t = poller.wait_one(Duration::from_secs(10)).expect("writable");
            assert_eq!(
                t,
                Token {
                    id: 3,
                    kind: Kind::Write
                }
            );
            out.flush(&sock, &poller, 3);
        }
        let got = reader.join().unwrap();
        assert_eq!(got, msgs.concat());
    }
}
