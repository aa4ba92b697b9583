//! The raw baseline of the connections suite: an epoll server that holds
//! thousands of connections with one thread per CPU and answers every
//! twoway GIOP 1.2 request with a prebuilt `NO_EXCEPTION` reply of the
//! size Peregrine sends for `sendNoParams_2way` (its request id patched
//! in); oneway requests get nothing. It looks at the header and the
//! request id only, so it is the least a server can do per call: what a
//! connection costs the kernel and one small slab entry, no thread.
//!
//! Every thread has its own epoll instance; the listening socket is in
//! all of them with `EPOLLEXCLUSIVE`, so each accept wakes one thread.
//! Accepted connections are dealt out to the threads in turn (a thread
//! that is handed one is woken through a socket pair), so the load is
//! spread evenly whichever thread accepted. Anything that is not a GIOP
//! 1.2 request closes the connection.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use peregrine_giop::HEADER_LEN;

use crate::epoll::{Epoll, Events, Interest};
use crate::frame::{frame_len, invalid, u32_at};
use crate::wire_size;

/// The listener's token (connections use their slab index).
const LISTENER: u64 = u64::MAX;
/// The token of a thread's wake-up socket.
const WAKER: u64 = u64::MAX - 1;
/// Bytes read per `read` call, shared by a thread's connections.
const SCRATCH: usize = 64 << 10;
/// Readiness reports handled per wait.
const EVENTS: usize = 1024;

/// How connections reach a thread that did not accept them.
struct Inbox {
    queue: Mutex<Vec<TcpStream>>,
    /// Written to after queueing, so the thread's epoll wakes.
    waker: UnixStream,
}

/// What the threads of a server share.
struct Shared {
    listener: TcpListener,
    inboxes: Vec<Inbox>,
    /// Accepted connections so far (dealt out in turn).
    accepted: AtomicUsize,
}

/// Starts the server on `bind` with `threads` threads (at least one);
/// returns the `host:port` it listens on.
pub fn serve(bind: SocketAddr, threads: usize) -> io::Result<String> {
    let listener = TcpListener::bind(bind)?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let mut inboxes = Vec::new();
    let mut wakeups = Vec::new();
    for _ in 0..threads.max(1) {
        let (waker, woken) = UnixStream::pair()?;
        waker.set_nonblocking(true)?;
        woken.set_nonblocking(true)?;
        inboxes.push(Inbox {
            queue: Mutex::new(Vec::new()),
            waker,
        });
        wakeups.push(woken);
    }
    let shared = Arc::new(Shared {
        listener,
        inboxes,
        accepted: AtomicUsize::new(0),
    });
    for (index, woken) in wakeups.into_iter().enumerate() {
        let ep = Epoll::new()?;
        ep.add(
            shared.listener.as_raw_fd(),
            LISTENER,
            Interest::READ_EXCLUSIVE,
        )?;
        ep.add(woken.as_raw_fd(), WAKER, Interest::READ)?;
        let mut w = Worker {
            shared: shared.clone(),
            index,
            woken,
            ep,
            conns: Vec::new(),
            free: Vec::new(),
            scratch: vec![0; SCRATCH],
            reply: wire_size::reply(0, None),
        };
        thread::Builder::new()
            .name(format!("echo-{index}"))
            .spawn(move || w.run())?;
    }
    Ok(addr.to_string())
}

/// One client connection.
struct Conn {
    stream: TcpStream,
    /// The start of a message whose end has not arrived (usually empty,
    /// so without an allocation).
    partial: Vec<u8>,
    /// Replies the socket had no room for.
    out: Vec<u8>,
}

/// A thread of the server and the connections it accepted.
struct Worker {
    shared: Arc<Shared>,
    /// This thread's place in `shared.inboxes`.
    index: usize,
    /// The read end of this thread's wake-up socket.
    woken: UnixStream,
    ep: Epoll,
    /// Slab of connections, indexed by token.
    conns: Vec<Option<Conn>>,
    free: Vec<usize>,
    scratch: Vec<u8>,
    reply: Vec<u8>,
}

impl Worker {
    fn run(&mut self) {
        let mut events = Events::with_capacity(EVENTS);
        loop {
            if self.ep.wait(&mut events, None).is_err() {
                return;
            }
            for e in events.iter() {
                if e.token == LISTENER {
                    self.accept();
                    continue;
                }
                if e.token == WAKER {
                    self.take_handed();
                    continue;
                }
                let slot = e.token as usize;
                let done = match self.conns.get_mut(slot) {
                    Some(Some(_)) => self
                        .serve(slot, e.readable || e.closed, e.writable)
                        .is_err(),
                    _ => false,
                };
                if done {
                    self.close(slot);
                }
            }
        }
    }

    /// Accepts every pending connection, dealing them out to the threads
    /// in turn.
    fn accept(&mut self) {
        loop {
            let stream = match self.shared.listener.accept() {
                Ok((s, _)) => s,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    // Out of descriptors or memory: the listener stays
                    // readable, so back off instead of spinning.
                    thread::sleep(Duration::from_millis(10));
                    return;
                }
            };
            let n = self.shared.inboxes.len();
            let to = self.shared.accepted.fetch_add(1, Ordering::Relaxed) % n;
            if to == self.index {
                self.register(stream);
            } else {
                let inbox = &self.shared.inboxes[to];
                inbox
                    .queue
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(stream);
                // A full socket already holds a wake-up.
                let _ = (&inbox.waker).write(&[1]);
            }
        }
    }

    /// Registers the connections other threads handed to this one.
    fn take_handed(&mut self) {
        let mut sink = [0u8; 64];
        while matches!((&self.woken).read(&mut sink), Ok(n) if n > 0) {}
        let handed = std::mem::take(
            &mut *self.shared.inboxes[self.index]
                .queue
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        );
        for stream in handed {
            self.register(stream);
        }
    }

    /// Serves `stream` from this thread.
    fn register(&mut self, stream: TcpStream) {
        if stream.set_nonblocking(true).is_err() || stream.set_nodelay(true).is_err() {
            return;
        }
        let slot = self.free.pop().unwrap_or(self.conns.len());
        if self
            .ep
            .add(stream.as_raw_fd(), slot as u64, Interest::READ)
            .is_err()
        {
            self.free.push(slot);
            return;
        }
        let conn = Conn {
            stream,
            partial: Vec::new(),
            out: Vec::new(),
        };
        if slot == self.conns.len() {
            self.conns.push(Some(conn));
        } else {
            self.conns[slot] = Some(conn);
        }
    }

    fn close(&mut self, slot: usize) {
        if let Some(c) = self.conns.get_mut(slot).and_then(Option::take) {
            let _ = self.ep.delete(c.stream.as_raw_fd());
            self.free.push(slot);
        }
    }

    /// Reads what arrived and answers; an error ends the connection.
    fn serve(&mut self, slot: usize, readable: bool, writable: bool) -> io::Result<()> {
        let Some(conn) = self.conns[slot].as_mut() else {
            return Ok(());
        };
        let had_out = !conn.out.is_empty();
        if readable {
            loop {
                let n = match conn.stream.read(&mut self.scratch) {
                    Ok(0) => return Err(invalid("closed")),
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                };
                if conn.partial.is_empty() {
                    let used = answer(&self.scratch[..n], &self.reply, &mut conn.out)?;
                    conn.partial.extend_from_slice(&self.scratch[used..n]);
                } else {
                    conn.partial.extend_from_slice(&self.scratch[..n]);
                    let used = answer(&conn.partial, &self.reply, &mut conn.out)?;
                    conn.partial.drain(..used);
                }
                if n < self.scratch.len() {
                    break;
                }
            }
        }
        if (writable || !had_out) && !conn.out.is_empty() {
            let n = match conn.stream.write(&conn.out) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => 0,
                Err(e) => return Err(e),
            };
            conn.out.drain(..n);
        }
        let fd = conn.stream.as_raw_fd();
        match (had_out, conn.out.is_empty()) {
            (false, false) => self.ep.modify(fd, slot as u64, Interest::READ_WRITE)?,
            (true, true) => self.ep.modify(fd, slot as u64, Interest::READ)?,
            _ => {}
        }
        Ok(())
    }
}

/// Answers the complete messages at the start of `data` into `out`;
/// returns the bytes they take.
fn answer(data: &[u8], reply: &[u8], out: &mut Vec<u8>) -> io::Result<usize> {
    let mut at = 0;
    while data.len() - at >= HEADER_LEN {
        let total = frame_len(&data[at..])?;
        let Some(m) = data.get(at..at + total) else {
            break;
        };
        if m[4..6] != [1, 2] || m[7] != 0 {
            return Err(invalid("not a GIOP 1.2 request"));
        }
        let little = m[6] & 1 == 1;
        let id = u32_at(m, wire_size::REQUEST_ID_AT, little)?;
        let flags = *m
            .get(wire_size::RESPONSE_FLAGS_AT)
            .ok_or_else(|| invalid("truncated request"))?;
        if flags != 0 {
            let start = out.len();
            out.extend_from_slice(reply);
            let id_at = start + wire_size::REQUEST_ID_AT;
            out[id_at..id_at + 4].copy_from_slice(&id.to_ne_bytes());
        }
        at += total;
    }
    Ok(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{check_reply, FrameReader};
    use crate::wire_size::Args;

    #[test]
    fn answers_twoways_only_and_splits_messages() {
        let two = wire_size::request(5, 0, wire_size::NO_PARAMS_2WAY, true, Args::None);
        let one = wire_size::request(6, 0, wire_size::NO_PARAMS_1WAY, false, Args::None);
        let reply = wire_size::reply(0, None);
        let all = [two.clone(), one.clone(), two.clone()].concat();
        let mut out = Vec::new();
        assert_eq!(answer(&all, &reply, &mut out).unwrap(), all.len());
        assert_eq!(out.len(), 2 * reply.len());
        check_reply(&out[..reply.len()], 5).unwrap();
        // A message cut anywhere: the complete ones are answered, the
        // rest waits for more bytes.
        for cut in 0..two.len() {
            let mut out = Vec::new();
            let data = [&two[..], &two[..cut]].concat();
            assert_eq!(answer(&data, &reply, &mut out).unwrap(), two.len());
            assert_eq!(out.len(), reply.len());
        }
        assert!(answer(b"HTTP/1.1 200 OK\r\n\r\n", &reply, &mut out).is_err());
        assert!(answer(&reply, &reply, &mut out).is_err(), "a reply");
    }

    #[test]
    fn serves_many_connections_from_few_threads() {
        // Three threads: most connections are handed to a thread that did
        // not accept them.
        let addr = serve("127.0.0.1:0".parse().unwrap(), 3).unwrap();
        let req = wire_size::request(0, 0, wire_size::NO_PARAMS_2WAY, true, Args::None);
        let mut clients: Vec<(TcpStream, FrameReader<TcpStream>)> = (0..50)
            .map(|_| {
                let s = TcpStream::connect(&addr).unwrap();
                // A connection no thread serves fails instead of hanging.
                s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                let r = FrameReader::new(s.try_clone().unwrap(), 256);
                (s, r)
            })
            .collect();
        for round in 0..3u32 {
            for (i, (s, _)) in clients.iter_mut().enumerate() {
                let mut m = req.clone();
                let id = round * 1000 + i as u32;
                m[12..16].copy_from_slice(&id.to_ne_bytes());
                // Byte by byte on one connection: reassembly.
                if i == 7 {
                    for b in &m {
                        s.write_all(std::slice::from_ref(b)).unwrap();
                    }
                } else {
                    s.write_all(&m).unwrap();
                }
            }
            for (i, (_, r)) in clients.iter_mut().enumerate() {
                let m = r.next_frame().unwrap().unwrap();
                check_reply(m, round * 1000 + i as u32).unwrap();
            }
        }
        // Garbage closes that connection only.
        clients[3].0.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
        assert!(clients[3].1.next_frame().unwrap().is_none());
        clients[4].0.write_all(&req).unwrap();
        check_reply(clients[4].1.next_frame().unwrap().unwrap(), 0).unwrap();
    }
}
