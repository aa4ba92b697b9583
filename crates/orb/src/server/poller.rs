//! The readiness source of the server: one epoll instance shared by every
//! thread of the pool, and an eventfd to wake a waiting thread.
//!
//! Listeners, the wake-up and blocked writes are one-shot
//! (`EPOLLONESHOT`): the kernel hands an event to exactly one waiting
//! thread and then disables the registration until it is re-armed, so
//! the thread that got it owns the descriptor's turn (accepting,
//! flushing). A connection's reading is edge-triggered instead: one
//! event per arrival of bytes, to one waiting thread, and no re-arming
//! system call per request; the read turn is owned through the
//! connection's `Turn` (see `connection.rs`).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// What a registration stands for (the low two bits of its token).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A connection's socket, readable (requests).
    Read,
    /// A connection's socket, writable (queued replies); registered
    /// through a duplicate descriptor so that it is armed independently
    /// of the read turn.
    Write,
    /// A listening socket.
    Listener,
    /// The wake-up eventfd.
    Wake,
}

/// A registration's token: an id and its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Token {
    pub(super) id: u64,
    pub(super) kind: Kind,
}

impl Token {
    fn encode(self) -> u64 {
        let k = match self.kind {
            Kind::Read => 0,
            Kind::Write => 1,
            Kind::Listener => 2,
            Kind::Wake => 3,
        };
        (self.id << 2) | k
    }

    fn decode(v: u64) -> Token {
        let kind = match v & 3 {
            0 => Kind::Read,
            1 => Kind::Write,
            2 => Kind::Listener,
            _ => Kind::Wake,
        };
        Token { id: v >> 2, kind }
    }
}

/// Room for the events of one wait, reused wait after wait.
pub(super) struct Events {
    buf: Vec<libc::epoll_event>,
    /// Events the last wait reported.
    len: usize,
    /// Most events the next wait takes.
    limit: usize,
}

impl Events {
    /// Room for `capacity` events (at least one).
    pub(super) fn with_capacity(capacity: usize) -> Events {
        Events {
            buf: vec![libc::epoll_event { events: 0, u64: 0 }; capacity.max(1)],
            len: 0,
            limit: capacity.max(1),
        }
    }

    /// This room, limited to `n` events for the next wait (at most its
    /// capacity).
    pub(super) fn with_room(&mut self, n: usize) -> &mut Events {
        self.limit = n.clamp(1, self.buf.len());
        self
    }

    /// The tokens of the last wait, in the order the kernel gave them.
    pub(super) fn tokens(&self) -> impl Iterator<Item = Token> + '_ {
        self.buf[..self.len].iter().map(|e| Token::decode(e.u64))
    }
}

/// One epoll instance and its wake-up eventfd.
pub(super) struct Poller {
    epoll: OwnedFd,
    wake: OwnedFd,
    /// A wake-up was sent and not yet taken: another would only write
    /// the eventfd again (its registration is disarmed until taken).
    wake_pending: AtomicBool,
}

fn check(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

impl Poller {
    /// A new epoll instance with its eventfd registered.
    pub(super) fn new() -> io::Result<Poller> {
        // SAFETY: plain system calls without pointers; a non-negative
        // result is a fresh descriptor that we own from here on.
        let epoll =
            unsafe { OwnedFd::from_raw_fd(check(libc::epoll_create1(libc::EPOLL_CLOEXEC))?) };
        // SAFETY: as above.
        let wake = unsafe {
            OwnedFd::from_raw_fd(check(libc::eventfd(
                0,
                libc::EFD_CLOEXEC | libc::EFD_NONBLOCK,
            ))?)
        };
        let p = Poller {
            epoll,
            wake,
            wake_pending: AtomicBool::new(false),
        };
        p.ctl(
            libc::EPOLL_CTL_ADD,
            p.wake.as_raw_fd(),
            interest(Kind::Wake),
            Token {
                id: 0,
                kind: Kind::Wake,
            },
        )?;
        Ok(p)
    }

    fn ctl(&self, op: libc::c_int, fd: RawFd, events: libc::c_int, token: Token) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: events as u32,
            u64: token.encode(),
        };
        // SAFETY: `ev` is a valid event for the duration of the call; the
        // kernel copies it. `fd` is open (borrowed by the caller).
        check(unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), op, fd, &mut ev) })?;
        Ok(())
    }

    /// Registers `fd` for readability (or writability for
    /// [`Kind::Write`]), armed.
    pub(super) fn add(&self, fd: RawFd, token: Token) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_ADD, fd, interest(token.kind), token)
    }

    /// Re-arms a registration whose event was taken.
    pub(super) fn rearm(&self, fd: RawFd, token: Token) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_MOD, fd, interest(token.kind), token)
    }

    /// Turns a connection's read events off (`false`) or back on; on,
    /// bytes already waiting are reported at once.
    ///
    /// Off removes the registration rather than clearing its interest:
    /// a registered socket runs epoll's callback on every arriving
    /// packet even when nothing is wanted, and a thread dwelling on the
    /// connection receives a stream of them.
    pub(super) fn read_interest(&self, fd: RawFd, id: u64, on: bool) -> io::Result<()> {
        let token = Token {
            id,
            kind: Kind::Read,
        };
        if on {
            self.ctl(libc::EPOLL_CTL_ADD, fd, interest(Kind::Read), token)
        } else {
            self.ctl(libc::EPOLL_CTL_DEL, fd, 0, token)
        }
    }

    /// Removes a registration.
    pub(super) fn delete(&self, fd: RawFd) {
        let mut ev = libc::epoll_event { events: 0, u64: 0 };
        // SAFETY: as in `ctl` (the event is ignored for DEL but must be
        // non-null on old kernels).
        unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_DEL, fd, &mut ev) };
    }

    /// Waits for events and fills `events` with up to its capacity of
    /// them; `None` on timeout or interruption, else how many came.
    ///
    /// The caller runs the first inline and passes the rest on (see the
    /// pool's queue): under load one `epoll_wait` then serves several
    /// requests, and no event waits behind a long upcall.
    pub(super) fn wait(&self, events: &mut Events, timeout: Option<Duration>) -> Option<usize> {
        let ms = timeout.map_or(-1, |d| d.as_millis().min(i32::MAX as u128) as libc::c_int);
        let cap = events.limit.min(events.buf.len()).min(i32::MAX as usize) as libc::c_int;
        // SAFETY: `buf` holds `cap` initialized events, which the kernel
        // may overwrite; it writes at most `cap`.
        let n =
            unsafe { libc::epoll_wait(self.epoll.as_raw_fd(), events.buf.as_mut_ptr(), cap, ms) };
        events.len = usize::try_from(n).unwrap_or(0);
        (events.len > 0).then_some(events.len)
    }

    /// Waits for one event (tests).
    #[cfg(test)]
    pub(super) fn wait_one(&self, timeout: Duration) -> Option<Token> {
        let mut ev = Events::with_capacity(1);
        self.wait(&mut ev, Some(timeout))?;
        let first = ev.tokens().next();
        first
    }

    /// Wakes one waiting thread; while a wake-up is on its way (not yet
    /// taken with [`Poller::wake_taken`]), does nothing: the thread that
    /// takes it looks for work after re-arming, and passes the wake-up on
    /// if there is more.
    pub(super) fn wake(&self) {
        if self.wake_pending.swap(true, Ordering::SeqCst) {
            return;
        }
        let one = 1u64.to_ne_bytes();
        // SAFETY: writes 8 bytes from a live array to our eventfd. A full
        // counter (EAGAIN) already means "wake".
        unsafe { libc::write(self.wake.as_raw_fd(), one.as_ptr().cast(), 8) };
    }

    /// Resets the eventfd after a wake-up was taken and re-arms it; the
    /// next [`Poller::wake`] sends one again.
    pub(super) fn wake_taken(&self) {
        let mut buf = [0u8; 8];
        // SAFETY: reads at most 8 bytes into a live array.
        unsafe { libc::read(self.wake.as_raw_fd(), buf.as_mut_ptr().cast(), 8) };
        let _ = self.rearm(
            self.wake.as_raw_fd(),
            Token {
                id: 0,
                kind: Kind::Wake,
            },
        );
        // Only now: a wake-up sent between the read and the re-arm would
        // be lost.
        self.wake_pending.store(false, Ordering::SeqCst);
    }
}

fn interest(kind: Kind) -> libc::c_int {
    match kind {
        // Edge-triggered, not one-shot: no re-arming system call per
        // request. Whoever holds the connection's read turn reads until
        // the socket is drained; an edge that arrives meanwhile only
        // tells it to look again (see `Turn`).
        Kind::Read => libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLET,
        Kind::Write => libc::EPOLLOUT | libc::EPOLLONESHOT,
        Kind::Listener | Kind::Wake => libc::EPOLLIN | libc::EPOLLONESHOT,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn tokens_round_trip() {
        for kind in [Kind::Read, Kind::Write, Kind::Listener, Kind::Wake] {
            for id in [0, 1, 77, u64::MAX >> 2] {
                let t = Token { id, kind };
                assert_eq!(Token::decode(t.encode()), t);
            }
        }
    }

    /// Edge-triggered reads: an event per arrival, not per readable
    /// state; one-shot wake-ups: once until re-armed.
    #[test]
    fn read_events_are_edges_and_wakeups_one_shot() {
        let p = Poller::new().unwrap();
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        let t = Token {
            id: 5,
            kind: Kind::Read,
        };
        p.add(s.as_raw_fd(), t).unwrap();
        c.write_all(b"x").unwrap();
        assert_eq!(p.wait_one(Duration::from_secs(5)), Some(t));
        // Still readable, but no new bytes: no new event.
        assert_eq!(p.wait_one(Duration::from_millis(20)), None);
        c.write_all(b"y").unwrap();
        assert_eq!(p.wait_one(Duration::from_secs(5)), Some(t));
        p.delete(s.as_raw_fd());
        p.wake();
        p.wake();
        let w = p.wait_one(Duration::from_secs(5)).unwrap();
        assert_eq!(w.kind, Kind::Wake);
        // Disarmed until taken.
        assert_eq!(p.wait_one(Duration::from_millis(20)), None);
        p.wake_taken();
        assert_eq!(p.wait_one(Duration::from_millis(20)), None);
        p.wake();
        assert_eq!(
            p.wait_one(Duration::from_secs(5)).map(|t| t.kind),
            Some(Kind::Wake)
        );
    }

    /// One wait reports every connection with new bytes, each once.
    #[test]
    fn one_wait_reports_several_connections() {
        let p = Poller::new().unwrap();
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut pairs = Vec::new();
        for id in 0..5u64 {
            let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
            let (s, _) = l.accept().unwrap();
            p.add(
                s.as_raw_fd(),
                Token {
                    id,
                    kind: Kind::Read,
                },
            )
            .unwrap();
            pairs.push((c, s));
        }
        for (c, _) in &mut pairs {
            c.write_all(b"x").unwrap();
        }
        let mut ev = Events::with_capacity(16);
        let mut seen = Vec::new();
        while seen.len() < 5 {
            let n = p.wait(&mut ev, Some(Duration::from_secs(5))).unwrap();
            assert!(n >= 1);
            seen.extend(ev.tokens().map(|t| t.id));
        }
        seen.sort_unstable();
        assert_eq!(seen, vec![0, 1, 2, 3, 4]);
        // Edges: nothing new, nothing reported.
        assert_eq!(p.wait(&mut ev, Some(Duration::from_millis(20))), None);
        // A capacity of one still gets them, one per wait.
        for (c, _) in &mut pairs {
            c.write_all(b"y").unwrap();
        }
        let mut one = Events::with_capacity(1);
        for _ in 0..5 {
            assert_eq!(p.wait(&mut one, Some(Duration::from_secs(5))), Some(1));
        }
    }
}
