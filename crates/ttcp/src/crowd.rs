//! The client side of the connections suite: many TCP connections to one
//! server, each speaking GIOP 1.2 with a prebuilt twoway
//! `sendNoParams_2way` request to the server's object 0 (for Peregrine
//! the object key from its IOR, for the raw server the raw key), so the
//! client costs the same for every server and what is measured is the
//! server.
//!
//! * [`Caller`]: one connection making blocking calls, timed by the
//!   caller (the "fresh client").
//! * [`Crowd`]: N connections, opened in batches, each making one call
//!   so the server has accepted and set it up, then left idle; or all
//!   calling at once ([`Crowd::drive`]) from a few threads that multiplex
//!   them with epoll, one call in flight per connection.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use peregrine_giop::{Ior, TaggedProfile, HEADER_LEN};

use crate::epoll::{Epoll, Events, Interest};
use crate::frame::{check_reply, frame_len, invalid, FrameReader};
use crate::transport::OrbKind;
use crate::wire_size::{self, Args};

/// Connections opened at a time: below the listen backlog of the
/// servers, so no connection attempt waits for a SYN retransmission.
const BATCH: usize = 100;
/// How long a reply may take before the server is declared stuck.
const REPLY_TIMEOUT: Duration = Duration::from_secs(30);
/// Largest reply a crowd connection accepts (a null call's is 24 bytes).
const MAX_REPLY: usize = 4096;

/// A server and the twoway null request its object 0 understands.
#[derive(Debug, Clone)]
pub struct Target {
    /// Where the server listens.
    pub addr: SocketAddr,
    /// `sendNoParams_2way` on object 0, request id 0.
    request: Vec<u8>,
}

impl Target {
    /// The target of a server of `kind` announced as `endpoint` (raw:
    /// `host:port`; Peregrine: the IOR of object 0).
    pub fn new(kind: OrbKind, endpoint: &str) -> io::Result<Target> {
        let (host, port, key) = match kind {
            OrbKind::Raw => {
                let addr = resolve(endpoint)?;
                return Ok(Target {
                    addr,
                    request: null_request(&wire_size::object_key(0)),
                });
            }
            OrbKind::Peregrine => {
                let ior = Ior::from_stringified(endpoint)
                    .map_err(|e| invalid(&format!("server endpoint: {e}")))?;
                ior.profiles
                    .into_iter()
                    .find_map(|p| match p {
                        TaggedProfile::Iiop(p) => Some((p.host, p.port, p.object_key)),
                        _ => None,
                    })
                    .ok_or_else(|| invalid("the server's IOR has no IIOP profile"))?
            }
        };
        let addr = resolve(&format!("{host}:{port}"))?;
        Ok(Target {
            addr,
            request: null_request(&key),
        })
    }

    /// The request with id `id`.
    fn request(&self, id: u32) -> Vec<u8> {
        let mut m = self.request.clone();
        set_id(&mut m, id);
        m
    }

    /// A new connection (blocking, no Nagle).
    fn connect(&self) -> io::Result<TcpStream> {
        let s = TcpStream::connect_timeout(&self.addr, REPLY_TIMEOUT)?;
        s.set_nodelay(true)?;
        Ok(s)
    }
}

fn resolve(host_port: &str) -> io::Result<SocketAddr> {
    host_port
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| invalid(&format!("{host_port}: no address")))
}

fn null_request(key: &[u8]) -> Vec<u8> {
    wire_size::request_to(key, 0, wire_size::NO_PARAMS_2WAY, true, Args::None)
}

fn set_id(m: &mut [u8], id: u32) {
    let at = wire_size::REQUEST_ID_AT;
    m[at..at + 4].copy_from_slice(&id.to_ne_bytes());
}

/// One connection making blocking twoway calls.
pub struct Caller {
    out: TcpStream,
    frames: FrameReader<TcpStream>,
    request: Vec<u8>,
    next_id: u32,
}

impl Caller {
    /// Opens a new connection to `target`.
    pub fn connect(target: &Target) -> io::Result<Caller> {
        let out = target.connect()?;
        let input = out.try_clone()?;
        input.set_read_timeout(Some(REPLY_TIMEOUT))?;
        Ok(Caller {
            out,
            frames: FrameReader::new(input, MAX_REPLY),
            request: target.request(0),
            next_id: 1,
        })
    }

    /// One twoway call, checked.
    pub fn call(&mut self) -> io::Result<()> {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        set_id(&mut self.request, id);
        self.out.write_all(&self.request)?;
        let m = self
            .frames
            .next_frame()?
            .ok_or_else(|| invalid("server closed the connection"))?;
        check_reply(m, id)
    }
}

/// N open connections to one server.
pub struct Crowd {
    conns: Vec<TcpStream>,
}

impl Crowd {
    /// Opens `n` connections to `target`, [`BATCH`] at a time, each making
    /// one call before the next batch; then they stay open and quiet.
    pub fn open(target: &Target, n: usize) -> io::Result<Crowd> {
        let mut conns = Vec::with_capacity(n);
        while conns.len() < n {
            let start = conns.len();
            let batch = BATCH.min(n - start);
            for _ in 0..batch {
                let s = target.connect()?;
                s.set_nonblocking(true)?;
                conns.push(s);
            }
            let mut d = Driver::new(&conns[start..], target)?;
            d.run(None)?;
        }
        Ok(Crowd { conns })
    }

    /// Every connection calls, one call in flight each, from `threads`
    /// threads, for `duration`; returns the replies received within it.
    /// `beside` runs on its own thread meanwhile, started with the
    /// drivers and given the end of the period.
    pub fn drive<T: Send>(
        &self,
        target: &Target,
        threads: usize,
        duration: Duration,
        beside: impl FnOnce(Instant) -> io::Result<T> + Send,
    ) -> io::Result<(u64, T)> {
        let threads = threads.clamp(1, self.conns.len().max(1));
        let per = self.conns.len().div_ceil(threads).max(1);
        let mut drivers = self
            .conns
            .chunks(per)
            .map(|c| Driver::new(c, target))
            .collect::<io::Result<Vec<_>>>()?;
        // Every thread is started before the period begins.
        let barrier = std::sync::Barrier::new(drivers.len() + 2);
        let end = std::sync::OnceLock::new();
        std::thread::scope(|s| {
            let (b, e) = (&barrier, &end);
            let until = move || {
                b.wait();
                *e.get().expect("set before the barrier opens")
            };
            let handles: Vec<_> = drivers
                .iter_mut()
                .map(|d| s.spawn(move || d.run(Some(until()))))
                .collect();
            let side = s.spawn(move || beside(until()));
            let _ = end.set(Instant::now() + duration);
            barrier.wait();
            let mut total = 0;
            let mut first_err = None;
            for h in handles {
                match h.join() {
                    Ok(Ok(n)) => total += n,
                    Ok(Err(e)) => {
                        first_err.get_or_insert(e);
                    }
                    Err(_) => {
                        first_err.get_or_insert(io::Error::other("a driver thread panicked"));
                    }
                }
            }
            let side = side
                .join()
                .map_err(|_| io::Error::other("the fresh client panicked"))?;
            match first_err {
                Some(e) => Err(e),
                None => Ok((total, side?)),
            }
        })
    }
}

/// The state of one crowd connection in a driver.
#[derive(Default)]
struct Slot {
    /// The start of a reply whose end has not arrived.
    partial: Vec<u8>,
    /// A call is in flight.
    busy: bool,
}

/// Drives a share of a crowd's connections from one thread.
struct Driver<'a> {
    conns: &'a [TcpStream],
    slots: Vec<Slot>,
    ep: Epoll,
    request: Vec<u8>,
    buf: Vec<u8>,
}

impl<'a> Driver<'a> {
    fn new(conns: &'a [TcpStream], target: &Target) -> io::Result<Driver<'a>> {
        let ep = Epoll::new()?;
        for (i, c) in conns.iter().enumerate() {
            ep.add(c.as_raw_fd(), i as u64, Interest::READ)?;
        }
        Ok(Driver {
            conns,
            slots: conns.iter().map(|_| Slot::default()).collect(),
            ep,
            request: target.request(0),
            buf: vec![0; MAX_REPLY],
        })
    }

    /// Sends a call on connection `i` (its request id is `i + 1`).
    fn send(&mut self, i: usize) -> io::Result<()> {
        set_id(&mut self.request, i as u32 + 1);
        // One small request on a socket with nothing else in flight: the
        // send buffer always has room for all of it.
        let n = (&self.conns[i]).write(&self.request)?;
        if n != self.request.len() {
            return Err(io::Error::new(
                io::ErrorKind::WriteZero,
                "short write of a request",
            ));
        }
        self.slots[i].busy = true;
        Ok(())
    }

    /// Reads what connection `i` has; returns whether its reply is
    /// complete (and checked).
    fn receive(&mut self, i: usize) -> io::Result<bool> {
        let n = match (&self.conns[i]).read(&mut self.buf) {
            Ok(0) => return Err(invalid("the server closed a connection")),
            Ok(n) => n,
            Err(e)
                if e.kind() == io::ErrorKind::WouldBlock
                    || e.kind() == io::ErrorKind::Interrupted =>
            {
                return Ok(false)
            }
            Err(e) => return Err(e),
        };
        let slot = &mut self.slots[i];
        if !slot.busy {
            return Err(invalid("a reply nobody asked for"));
        }
        slot.partial.extend_from_slice(&self.buf[..n]);
        if slot.partial.len() < HEADER_LEN {
            return Ok(false);
        }
        let total = frame_len(&slot.partial)?;
        if total > MAX_REPLY || slot.partial.len() > total {
            return Err(invalid("unexpected reply size"));
        }
        if slot.partial.len() < total {
            return Ok(false);
        }
        check_reply(&slot.partial, i as u32 + 1)?;
        slot.partial.clear();
        slot.busy = false;
        Ok(true)
    }

    /// Calls on every connection. With `until`, every reply is followed
    /// by the next call until then, and the replies before `until` are
    /// counted; without, each connection makes one call. Either way it
    /// returns once no call is in flight.
    fn run(&mut self, until: Option<Instant>) -> io::Result<u64> {
        for i in 0..self.conns.len() {
            self.send(i)?;
        }
        let mut in_flight = self.conns.len();
        let mut counted = 0u64;
        let mut events = Events::with_capacity(1024);
        let mut stuck_at = Instant::now() + REPLY_TIMEOUT;
        while in_flight > 0 {
            let now = Instant::now();
            let calling = until.is_some_and(|u| now < u);
            let wake = match until {
                Some(u) if calling => u.min(stuck_at),
                _ => stuck_at,
            };
            if now >= stuck_at {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("{in_flight} replies missing after {REPLY_TIMEOUT:?}"),
                ));
            }
            if self.ep.wait(&mut events, Some(wake - now))? == 0 {
                continue;
            }
            let now = Instant::now();
            let calling = until.is_some_and(|u| now < u);
            for e in events.iter() {
                let i = e.token as usize;
                if !self.receive(i)? {
                    if e.closed {
                        return Err(invalid("a connection failed"));
                    }
                    continue;
                }
                in_flight -= 1;
                stuck_at = now + REPLY_TIMEOUT;
                if calling {
                    counted += 1;
                    self.send(i)?;
                    in_flight += 1;
                }
            }
        }
        Ok(counted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crowd_calls_an_epoll_server() {
        let ep = crate::echo::serve("127.0.0.1:0".parse().unwrap(), 2).unwrap();
        let t = Target::new(OrbKind::Raw, &ep).unwrap();
        let mut alone = Caller::connect(&t).unwrap();
        for _ in 0..10 {
            alone.call().unwrap();
        }
        let crowd = Crowd::open(&t, 250).unwrap();
        assert_eq!(crowd.conns.len(), 250);
        let (calls, fresh) = crowd
            .drive(&t, 3, Duration::from_millis(100), |end| {
                let mut c = Caller::connect(&t)?;
                let mut n = 0u32;
                while n == 0 || Instant::now() < end {
                    c.call()?;
                    n += 1;
                }
                Ok(n)
            })
            .unwrap();
        assert!(calls > 0 && fresh > 0, "{calls} {fresh}");
        // The connections are idle and usable again.
        crowd
            .drive(&t, 1, Duration::from_millis(10), |_| Ok(()))
            .unwrap();
    }

    #[test]
    fn a_server_that_closes_is_an_error() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap().to_string();
        std::thread::spawn(move || {
            for s in l.incoming().flatten() {
                drop(s);
            }
        });
        let t = Target::new(OrbKind::Raw, &addr).unwrap();
        assert!(Crowd::open(&t, 3).is_err());
        assert!(Caller::connect(&t).and_then(|mut c| c.call()).is_err());
    }

    #[test]
    fn peregrine_targets_use_the_ior_key() {
        let key = b"PGR1\x01\x04\x00ttcp\x00\x00\x00\x00".to_vec();
        let ior = peregrine_giop::IorBuilder::new("IDL:ttcp_sequence:1.0")
            .endpoint("127.0.0.1", 4321)
            .object_key(key.clone())
            .build()
            .to_stringified(peregrine_cdr::ByteOrder::NATIVE)
            .unwrap();
        let t = Target::new(OrbKind::Peregrine, &ior).unwrap();
        assert_eq!(t.addr, "127.0.0.1:4321".parse().unwrap());
        let at = wire_size::KEY_AT;
        assert_eq!(&t.request[at..at + key.len()], &key[..]);
        assert_eq!(
            t.request.len(),
            wire_size::request_size(wire_size::NO_PARAMS_2WAY, Args::None)
        );
        assert!(Target::new(OrbKind::Peregrine, "127.0.0.1:1").is_err());
        assert!(Target::new(OrbKind::Raw, "no-port").is_err());
    }
}
