//! Shutting ORBs down on SIGINT (Ctrl-C) and SIGTERM without a
//! signal-handling dependency ([`Orb::shutdown_on_signals`]).
//!
//! A signal handler may only call async-signal-safe functions, and
//! `Orb::shutdown` takes locks and wakes threads; so the handler only
//! writes one byte to a socket pair (`write(2)` is async-signal-safe) and
//! a watcher thread, blocked reading the other end, does the shutdown.
//! Unlike a `sigwait` thread this needs no signal mask set before the
//! first thread starts: a process-directed signal runs the handler on
//! whichever thread the kernel picks, and all it does there is write the
//! byte. After the first signal the default dispositions come back, so a
//! second Ctrl-C ends a process whose shutdown hangs.

use std::io::{self, Read};
use std::os::unix::io::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use crate::client::lock;
use crate::orb::{Orb, OrbInner};

/// The signals that shut the registered ORBs down.
const SIGNALS: [libc::c_int; 2] = [libc::SIGINT, libc::SIGTERM];

/// ORBs to shut down on the first signal (weak: registering does not
/// keep an ORB alive).
static ORBS: Mutex<Vec<Weak<OrbInner>>> = Mutex::new(Vec::new());
/// The socket the handler writes to (-1 until installed).
static WAKE_FD: AtomicI32 = AtomicI32::new(-1);
/// The handlers and the watcher, installed once per process.
static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();

/// Adds `orb` to the ORBs the first SIGINT or SIGTERM shuts down,
/// installing the handlers and the watcher thread on first use.
pub(crate) fn register(orb: &Arc<OrbInner>) -> io::Result<()> {
    INSTALLED
        .get_or_init(|| install().map_err(|e| e.to_string()))
        .clone()
        .map_err(io::Error::other)?;
    let mut orbs = lock(&ORBS);
    orbs.retain(|w| w.strong_count() > 0);
    orbs.push(Arc::downgrade(orb));
    Ok(())
}

fn install() -> io::Result<()> {
    let (wake, watch) = UnixStream::pair()?;
    // A full socket buffer means a shutdown is already pending: the
    // handler must never block on it.
    wake.set_nonblocking(true)?;
    WAKE_FD.store(wake.as_raw_fd(), Ordering::Release);
    // The write end lives as long as the process (the handler may run at
    // any time).
    std::mem::forget(wake);
    std::thread::Builder::new()
        .name("peregrine-signals".into())
        .spawn(move || watch_signals(watch))?;
    for sig in SIGNALS {
        set_disposition(
            sig,
            on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
        )?;
    }
    Ok(())
}

/// The watcher: waits for the handler's byte, restores the default
/// dispositions and shuts every registered ORB down (without waiting, so
/// a servant that is still running does not delay the others).
fn watch_signals(mut watch: UnixStream) {
    let mut byte = [0u8; 1];
    loop {
        match watch.read(&mut byte) {
            Ok(1) => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            // The write end is never closed; any other outcome means the
            // watcher cannot work: leave the handlers in place, harmless.
            _ => return,
        }
    }
    for sig in SIGNALS {
        let _ = set_disposition(sig, libc::SIG_DFL);
    }
    let orbs: Vec<Weak<OrbInner>> = std::mem::take(&mut *lock(&ORBS));
    for orb in orbs.iter().filter_map(Weak::upgrade) {
        Orb::from_inner(orb).shutdown(false);
    }
}

/// The signal handler: one async-signal-safe `write(2)`, `errno` kept.
extern "C" fn on_signal(_sig: libc::c_int) {
    let fd = WAKE_FD.load(Ordering::Acquire);
    if fd < 0 {
        return;
    }
    let errno = io::Error::last_os_error().raw_os_error();
    let byte = 1u8;
    // SAFETY: `write(2)` is async-signal-safe; `byte` outlives the call
    // and is one byte long; `fd` is the non-blocking write end, never
    // closed. A failed write (full buffer) means a byte is already there.
    unsafe {
        libc::write(fd, (&byte as *const u8).cast::<libc::c_void>(), 1);
    }
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if let Some(e) = errno {
        // SAFETY: `__errno_location` returns the calling thread's errno
        // slot, valid for the thread's lifetime; the interrupted code
        // must see its own errno again.
        unsafe { *libc::__errno_location() = e };
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let _ = errno;
}

fn set_disposition(sig: libc::c_int, handler: libc::sighandler_t) -> io::Result<()> {
    // SAFETY: a zeroed `sigaction` is a valid value (empty mask, no
    // flags) that is then filled in; `sigaction(2)` reads it and writes
    // nothing back (null old action). The handler only does
    // async-signal-safe work (`on_signal`).
    let r = unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(sig, &sa, std::ptr::null_mut())
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
