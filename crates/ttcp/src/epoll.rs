//! A thin safe wrapper over Linux `epoll`, for the connections suite: its
//! raw baseline server ([`crate::echo`]) and its client drivers
//! ([`crate::crowd`]) each watch thousands of sockets from a few threads.
//! Level-triggered; a registration carries a `u64` token.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// What a registration waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interest(u32);

impl Interest {
    /// Readable, or the peer closed.
    pub const READ: Interest = Interest((libc::EPOLLIN | libc::EPOLLRDHUP) as u32);
    /// Readable or writable.
    pub const READ_WRITE: Interest =
        Interest((libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLOUT) as u32);
    /// Readable, waking one of the threads waiting on the same file (a
    /// listener shared by several epoll instances).
    pub const READ_EXCLUSIVE: Interest = Interest((libc::EPOLLIN | libc::EPOLLEXCLUSIVE) as u32);
}

/// One readiness report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// The token given at registration.
    pub token: u64,
    /// Data to read, or end of stream.
    pub readable: bool,
    /// Room to write.
    pub writable: bool,
    /// Error or hang-up: the socket is done.
    pub closed: bool,
}

/// Reusable room for the reports of one [`Epoll::wait`].
pub struct Events {
    buf: Vec<libc::epoll_event>,
    len: usize,
}

impl Events {
    /// Room for `capacity` reports per wait.
    pub fn with_capacity(capacity: usize) -> Events {
        Events {
            buf: vec![libc::epoll_event { events: 0, u64: 0 }; capacity.max(1)],
            len: 0,
        }
    }

    /// The reports of the last wait.
    pub fn iter(&self) -> impl Iterator<Item = Event> + '_ {
        self.buf[..self.len].iter().map(|e| {
            // Copies out of the (on x86-64 packed) struct.
            let (bits, token) = (e.events, e.u64);
            Event {
                token,
                readable: bits & (libc::EPOLLIN | libc::EPOLLRDHUP) as u32 != 0,
                writable: bits & libc::EPOLLOUT as u32 != 0,
                closed: bits & (libc::EPOLLERR | libc::EPOLLHUP) as u32 != 0,
            }
        })
    }
}

/// An epoll instance (closed on drop).
#[derive(Debug)]
pub struct Epoll {
    fd: OwnedFd,
}

fn check(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

impl Epoll {
    /// A new instance.
    pub fn new() -> io::Result<Epoll> {
        // SAFETY: epoll_create1 takes no pointers; a non-negative result
        // is a new descriptor that nothing else owns.
        let fd = check(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        // SAFETY: `fd` was just created and is owned by nobody else.
        Ok(Epoll {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    fn ctl(&self, op: libc::c_int, fd: RawFd, token: u64, interest: u32) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: interest,
            u64: token,
        };
        // SAFETY: `ev` is a valid epoll_event for the duration of the
        // call; the kernel checks both descriptors.
        check(unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), op, fd, &mut ev) })?;
        Ok(())
    }

    /// Watches `fd` for `interest`, reporting `token`.
    pub fn add(&self, fd: RawFd, token: u64, interest: Interest) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_ADD, fd, token, interest.0)
    }

    /// Changes what `fd` is watched for.
    pub fn modify(&self, fd: RawFd, token: u64, interest: Interest) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_MOD, fd, token, interest.0)
    }

    /// Stops watching `fd` (closing it does too).
    pub fn delete(&self, fd: RawFd) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_DEL, fd, 0, 0)
    }

    /// Waits for readiness at most `timeout` (`None`: forever); fills
    /// `events` and returns how many were reported (0 on timeout or on a
    /// signal).
    pub fn wait(&self, events: &mut Events, timeout: Option<Duration>) -> io::Result<usize> {
        let ms = match timeout {
            None => -1,
            // Rounded up, so a short remaining time does not spin.
            Some(d) => d.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128) as libc::c_int,
        };
        let cap = events.buf.len().min(i32::MAX as usize) as libc::c_int;
        // SAFETY: the buffer holds `cap` initialized epoll_events, which
        // the kernel overwrites (at most `cap` of them).
        let n = unsafe { libc::epoll_wait(self.fd.as_raw_fd(), events.buf.as_mut_ptr(), cap, ms) };
        match check(n) {
            Ok(n) => events.len = n as usize,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => events.len = 0,
            Err(e) => return Err(e),
        }
        Ok(events.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn reports_readable_writable_and_hangup() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        let ep = Epoll::new().unwrap();
        let mut ev = Events::with_capacity(8);
        ep.add(b.as_raw_fd(), 7, Interest::READ).unwrap();
        assert_eq!(
            ep.wait(&mut ev, Some(Duration::from_millis(10))).unwrap(),
            0
        );
        a.write_all(b"x").unwrap();
        assert_eq!(ep.wait(&mut ev, Some(Duration::from_secs(5))).unwrap(), 1);
        let e = ev.iter().next().unwrap();
        assert_eq!((e.token, e.readable, e.writable), (7, true, false));
        ep.modify(b.as_raw_fd(), 8, Interest::READ_WRITE).unwrap();
        ep.wait(&mut ev, Some(Duration::from_secs(5))).unwrap();
        let e = ev.iter().next().unwrap();
        assert_eq!((e.token, e.writable), (8, true));
        ep.delete(b.as_raw_fd()).unwrap();
        assert!(ep.delete(b.as_raw_fd()).is_err(), "not registered any more");
        drop(a);
        ep.add(b.as_raw_fd(), 9, Interest::READ).unwrap();
        ep.wait(&mut ev, Some(Duration::from_secs(5))).unwrap();
        assert!(ev.iter().next().unwrap().readable, "end of stream reads");
    }
}
