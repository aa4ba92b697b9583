//! `send` and `recv` on a TCP socket without the C library's thread
//! cancellation wrappers.
//!
//! Why: glibc makes `send` and `recv` POSIX cancellation points; each
//! call switches the thread's cancellation type on and off around the
//! system call with two atomic compare-and-swaps on the thread
//! descriptor (`__pthread_enable_asynccancel` and
//! `__pthread_disable_asynccancel`). A stream of oneways spends ~3 % of
//! its time there (docs/PERFORMANCE.md, step 33). Peregrine never uses
//! `pthread_cancel`, and a Rust thread cannot be cancelled safely anyway,
//! so on Linux the system calls are made directly through `syscall(2)`,
//! which is not a cancellation point. Elsewhere (and under Miri, which
//! cannot run system calls) `std`'s socket methods are used.
//!
//! The semantics are `std`'s: `MSG_NOSIGNAL` on sends (a closed peer is
//! an `EPIPE` error, not a `SIGPIPE`), the socket's timeouts apply
//! (`WouldBlock`), `EINTR` comes back as `Interrupted` for the caller's
//! retry loop.

use std::io;
use std::net::TcpStream;

/// Sends some of `buf` (as `send(2)` with `MSG_NOSIGNAL`); the number of
/// bytes the kernel took.
#[inline]
pub(crate) fn send(stream: &TcpStream, buf: &[u8]) -> io::Result<usize> {
    imp::send(stream, buf, false)
}

/// Receives some bytes into `buf` (as `recv(2)`); 0 means the peer closed.
#[inline]
pub(crate) fn recv(stream: &TcpStream, buf: &mut [u8]) -> io::Result<usize> {
    imp::recv(stream, buf, false)
}

/// [`send`] that never waits, even on a blocking socket
/// (`MSG_DONTWAIT`): `WouldBlock` when the kernel takes nothing now.
///
/// The server keeps its sockets blocking so that a thread may wait on
/// one connection with a plain `recv`, and uses these for everything
/// else. (Off Linux, where the server does not run, it is [`send`].)
#[inline]
pub(crate) fn send_nowait(stream: &TcpStream, buf: &[u8]) -> io::Result<usize> {
    imp::send(stream, buf, true)
}

/// [`recv`] that never waits (`MSG_DONTWAIT`); see [`send_nowait`].
#[inline]
pub(crate) fn recv_nowait(stream: &TcpStream, buf: &mut [u8]) -> io::Result<usize> {
    imp::recv(stream, buf, true)
}

/// Sends all of `buf`, retrying after partial sends and `EINTR`.
#[inline]
pub(crate) fn send_all(stream: &TcpStream, mut buf: &[u8]) -> io::Result<()> {
    while !buf.is_empty() {
        match send(stream, buf) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => buf = &buf[n..],
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(all(target_os = "linux", not(miri)))]
mod imp {
    use std::io;
    use std::net::TcpStream;
    use std::os::fd::AsRawFd;

    /// A `syscall(2)` result: -1 and `errno`, else a byte count.
    fn result(r: libc::c_long) -> io::Result<usize> {
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(r as usize)
        }
    }

    #[inline]
    pub(super) fn send(stream: &TcpStream, buf: &[u8], nowait: bool) -> io::Result<usize> {
        let flags = libc::MSG_NOSIGNAL | if nowait { libc::MSG_DONTWAIT } else { 0 };
        // SAFETY: `sendto` reads at most `buf.len()` bytes from
        // `buf.as_ptr()`, which `buf` borrows for the call; a null
        // address of length 0 means "the connected peer". The descriptor
        // is borrowed from `stream`, so it stays open for the call.
        let r = unsafe {
            libc::syscall(
                libc::SYS_sendto,
                stream.as_raw_fd(),
                buf.as_ptr(),
                buf.len(),
                flags,
                std::ptr::null::<libc::sockaddr>(),
                0 as libc::socklen_t,
            )
        };
        result(r)
    }

    #[inline]
    pub(super) fn recv(stream: &TcpStream, buf: &mut [u8], nowait: bool) -> io::Result<usize> {
        let flags = if nowait { libc::MSG_DONTWAIT } else { 0 };
        // SAFETY: `recvfrom` writes at most `buf.len()` bytes to
        // `buf.as_mut_ptr()`, which `buf` borrows exclusively for the
        // call (any byte is a valid `u8`); null address pointers ask for
        // no peer address. The descriptor is borrowed from `stream`.
        let r = unsafe {
            libc::syscall(
                libc::SYS_recvfrom,
                stream.as_raw_fd(),
                buf.as_mut_ptr(),
                buf.len(),
                flags,
                std::ptr::null_mut::<libc::sockaddr>(),
                std::ptr::null_mut::<libc::socklen_t>(),
            )
        };
        result(r)
    }
}

#[cfg(not(all(target_os = "linux", not(miri))))]
mod imp {
    use std::io::{self, Read, Write};
    use std::net::TcpStream;

    #[inline]
    pub(super) fn send(mut stream: &TcpStream, buf: &[u8], _nowait: bool) -> io::Result<usize> {
        stream.write(buf)
    }

    #[inline]
    pub(super) fn recv(mut stream: &TcpStream, buf: &mut [u8], _nowait: bool) -> io::Result<usize> {
        stream.read(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::{Shutdown, TcpListener};
    use std::time::Duration;

    fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        (a, b)
    }

    #[test]
    fn bytes_sent_arrive_in_order_and_eof_reads_zero() {
        let (a, b) = pair();
        let msg: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let m = msg.clone();
        let writer = std::thread::spawn(move || {
            send_all(&a, &m).unwrap();
            a.shutdown(Shutdown::Write).unwrap();
        });
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let n = recv(&b, &mut buf).unwrap();
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
        }
        writer.join().unwrap();
        assert_eq!(got, msg);
        assert_eq!(recv(&b, &mut buf).unwrap(), 0, "end of stream stays");
    }

    #[test]
    fn a_read_timeout_is_would_block_or_timed_out() {
        let (a, _b) = pair();
        a.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        let mut buf = [0u8; 8];
        let e = recv(&a, &mut buf).unwrap_err();
        assert!(
            matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            ),
            "{e:?}"
        );
    }

    /// On a blocking socket with a long read timeout, the `nowait` calls
    /// return at once: `WouldBlock` with nothing to read, and a send
    /// that stops where the kernel's buffers are full.
    #[test]
    fn nowait_calls_do_not_wait_on_a_blocking_socket() {
        let (a, b) = pair();
        a.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        b.set_write_timeout(Some(Duration::from_secs(60))).unwrap();
        let mut buf = [0u8; 8];
        let e = recv_nowait(&a, &mut buf).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock, "{e:?}");
        let chunk = [1u8; 64 * 1024];
        let mut sent = 0usize;
        let full = loop {
            match send_nowait(&b, &chunk) {
                Ok(n) => sent += n,
                Err(e) => break e,
            }
            assert!(sent < 1 << 30, "the kernel never pushed back");
        };
        assert_eq!(full.kind(), io::ErrorKind::WouldBlock, "{full:?}");
        assert_eq!(recv_nowait(&a, &mut buf).unwrap(), 8, "the bytes arrived");
    }

    #[test]
    fn sending_to_a_closed_peer_fails() {
        let (a, b) = pair();
        drop(b);
        // The first sends may still be accepted; a reset peer then fails
        // them with EPIPE/ECONNRESET.
        let chunk = [7u8; 64 * 1024];
        let failed = (0..200).any(|_| {
            std::thread::sleep(Duration::from_millis(1));
            send_all(&a, &chunk).is_err()
        });
        assert!(failed, "sends to a closed peer kept succeeding");
        let mut rest = Vec::new();
        let _ = (&a).read_to_end(&mut rest);
    }
}
