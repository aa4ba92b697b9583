//! Interrupting a thread that waits in `recv` on the connection it
//! dwells on.
//!
//! Why: a dwelling thread waits for its connection's next request in a
//! blocking `recv`. A receive timeout (`SO_RCVTIMEO`) would bound the
//! wait, but then the kernel arms and cancels a timer for every `recv`
//! that blocks: about 0.01 of a raw TCP round trip on each twoway call
//! (docs/PERFORMANCE.md, step 62). So the wait has no timeout, and the
//! pool's sweep ends a dwell that has been quiet for the dwell time by
//! sending the thread a signal, as the JDK interrupts threads blocked in
//! I/O: the `recv` returns `EINTR` and the thread goes back to the pool.
//!
//! The signal is a real-time one ([`SIGNAL_FROM_MAX`] below `SIGRTMAX`),
//! so that kicks queue instead of merging, and its handler only counts
//! them; it is installed without `SA_RESTART`, and only if the process
//! left the signal at its default action. Otherwise (or off Linux)
//! [`available`] is false and dwelling falls back to the receive
//! timeout, as it does when the ORB is built with
//! `OrbBuilder::dwell_kick(false)` (then the handler is never installed).
//!
//! A kick reaches a thread only inside its wait: the sweep kicks only
//! while the connection's [`WaitState`] says the thread is in `recv`,
//! and a thread that finds itself kicked when the `recv` returns first
//! takes every signal sent to it ([`WaitState::leave`]), so that no other
//! code of the thread, servants included, ever sees the signal.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use crate::client::lock;

/// The signal used is `SIGRTMAX - SIGNAL_FROM_MAX` (the JDK uses
/// `SIGRTMAX - 2` for the same purpose).
pub(super) const SIGNAL_FROM_MAX: i32 = 3;

/// Whether kicks can be sent: the signal's handler is installed (once,
/// by the first caller).
pub(super) fn available() -> bool {
    imp::signal().is_some()
}

/// Lets the calling thread receive kicks (a thread inherits its creator's
/// signal mask, which an application may have set to block everything).
pub(super) fn unblock_here() {
    if let Some(sig) = imp::signal() {
        imp::unblock(sig);
    }
}

/// A thread that may be kicked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Thread(imp::Id);

impl Thread {
    /// The calling thread.
    pub(super) fn current() -> Thread {
        Thread(imp::current())
    }
}

/// Whether the thread dwelling on a connection waits in `recv`, and the
/// kicks it was sent: one word that the waiting thread and the sweep
/// change atomically.
#[derive(Debug, Default)]
pub(super) struct WaitState {
    /// [`WaitState::WAITING`] and [`WaitState::KICKED`], and the wait's
    /// number (in steps of [`WaitState::SEQ`]), so the sweep can tell
    /// one long wait from many short ones.
    word: AtomicU32,
    /// The thread dwelling on the connection (set when it starts).
    thread: Mutex<Option<Thread>>,
    /// Kicks sent, and kicks the waiting thread has accounted for:
    /// changed only with this lock held, by the sweep while the thread
    /// waits and by the thread after its wait.
    kicks: Mutex<(u64, u64)>,
}

impl WaitState {
    const WAITING: u32 = 1;
    const KICKED: u32 = 2;
    const SEQ: u32 = 4;

    /// The calling thread is the one that dwells on the connection now.
    pub(super) fn set_thread(&self) {
        let me = Thread::current();
        let mut t = lock(&self.thread);
        if *t != Some(me) {
            *t = Some(me);
        }
    }

    /// The dwelling thread is about to wait in `recv`.
    #[inline]
    pub(super) fn enter(&self) {
        let w = self.word.load(Ordering::Relaxed);
        self.word.store(
            (w & !(Self::WAITING | Self::KICKED)).wrapping_add(Self::SEQ) | Self::WAITING,
            // A plain store (not a locked exchange): a sweep that does not
            // see it yet kicks at a later sweep; `leave`'s swap and the
            // sweep's compare-exchange order everything else.
            Ordering::Release,
        );
    }

    /// Its `recv` returned: true if it was kicked meanwhile. Every kick
    /// sent to it has then been taken (its handler ran) before this
    /// returns, so none can interrupt what the thread does next.
    #[inline]
    pub(super) fn leave(&self) -> bool {
        // The wait's number stays (only this thread changes it; the
        // sweep only adds `KICKED`), so the next wait gets a new one.
        let seq = self.word.load(Ordering::Relaxed) & !(Self::WAITING | Self::KICKED);
        let was = self.word.swap(seq, Ordering::SeqCst);
        if was & Self::KICKED == 0 {
            return false;
        }
        self.take_kicks();
        true
    }

    /// Waits until the handler has run for every kick sent (the sweep
    /// sends them with `kicks` locked, so once it is taken here none is
    /// on its way, and none follows: the word no longer says `WAITING`).
    #[cold]
    fn take_kicks(&self) {
        let owed = {
            let mut k = lock(&self.kicks);
            let owed = k.0 - k.1;
            k.1 = k.0;
            owed
        };
        handled::expect(owed);
        // A pending signal is delivered when the thread next returns
        // from the kernel: a `sched_yield` is enough. Bounded, in case
        // code running on this thread blocked the signal.
        for _ in 0..10_000 {
            if handled::caught_up() {
                return;
            }
            std::thread::yield_now();
        }
        tracing::warn!("a dwelling thread's kick was never delivered (signal blocked?)");
        handled::forgive();
    }

    /// The word as the sweep sees it: `Some` while the thread waits in
    /// `recv`.
    pub(super) fn waiting(&self) -> Option<u32> {
        let w = self.word.load(Ordering::SeqCst);
        (w & Self::WAITING != 0).then_some(w)
    }

    /// The sweep interrupts the wait it saw as `seen` (from
    /// [`WaitState::waiting`]) if the thread is still in it: the word
    /// the wait has now if a signal went out. Kicks again if an earlier
    /// kick found the thread just before its `recv` (and so did not end
    /// it).
    pub(super) fn kick(&self, seen: u32) -> Option<u32> {
        let sig = imp::signal()?;
        let mut k = lock(&self.kicks);
        let marked = if seen & Self::KICKED != 0 {
            self.word.load(Ordering::SeqCst) == seen
        } else {
            self.word
                .compare_exchange(
                    seen,
                    seen | Self::KICKED,
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                )
                .is_ok()
        };
        // Read after the word: the thread that set `WAITING` had set
        // itself here before.
        let thread = *lock(&self.thread);
        let thread = thread.filter(|_| marked)?;
        if !imp::send(thread.0, sig) {
            return None;
        }
        k.0 += 1;
        Some(seen | Self::KICKED)
    }
}

thread_local! {
    /// Kicks the thread has received, counted by the signal handler (an
    /// atomic, so the handler interrupting a read of it is harmless).
    static HANDLED: AtomicU64 = const { AtomicU64::new(0) };
    /// Kicks the thread knows were sent to it.
    static EXPECTED: AtomicU64 = const { AtomicU64::new(0) };
}

/// The per-thread counts of kicks handled and expected.
mod handled {
    use super::*;

    pub(super) fn expect(n: u64) {
        EXPECTED.with(|e| e.fetch_add(n, Ordering::Relaxed));
    }

    pub(super) fn caught_up() -> bool {
        let h = HANDLED.with(|h| h.load(Ordering::SeqCst));
        EXPECTED.with(|e| e.load(Ordering::Relaxed)) <= h
    }

    /// Gives up on kicks never delivered.
    pub(super) fn forgive() {
        let h = HANDLED.with(|h| h.load(Ordering::SeqCst));
        EXPECTED.with(|e| e.store(h, Ordering::Relaxed));
    }

    /// The signal handler's work.
    #[cfg_attr(not(all(target_os = "linux", not(miri))), allow(dead_code))]
    pub(super) fn one() {
        HANDLED.with(|h| h.fetch_add(1, Ordering::SeqCst));
    }
}

#[cfg(all(target_os = "linux", not(miri)))]
mod imp {
    use super::*;

    pub(super) type Id = libc::pthread_t;

    pub(super) fn current() -> Id {
        // SAFETY: no preconditions; returns the calling thread's id.
        unsafe { libc::pthread_self() }
    }

    extern "C" fn on_kick(_: libc::c_int) {
        handled::one();
    }

    /// The signal, once its handler is installed; `None` if the process
    /// uses it already.
    pub(super) fn signal() -> Option<libc::c_int> {
        static SIGNAL: OnceLock<Option<libc::c_int>> = OnceLock::new();
        *SIGNAL.get_or_init(|| {
            let sig = libc::SIGRTMAX() - SIGNAL_FROM_MAX;
            // SAFETY: `sigaction` with a null new action only reads the
            // current one into `old`, a zeroed `sigaction` it may write.
            let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
            if unsafe { libc::sigaction(sig, std::ptr::null(), &mut old) } != 0
                || old.sa_sigaction != libc::SIG_DFL
            {
                tracing::debug!(
                    signal = sig,
                    "signal in use: dwelling threads wait with a timeout"
                );
                return None;
            }
            // SAFETY: a zeroed `sigaction` with an empty mask is a valid
            // value to fill in; the handler only increments a
            // thread-local atomic, which is async-signal-safe; no
            // `SA_RESTART`, so a blocked `recv` returns `EINTR`.
            let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
            act.sa_sigaction = on_kick as extern "C" fn(libc::c_int) as libc::sighandler_t;
            act.sa_flags = 0;
            unsafe { libc::sigemptyset(&mut act.sa_mask) };
            if unsafe { libc::sigaction(sig, &act, std::ptr::null_mut()) } != 0 {
                return None;
            }
            Some(sig)
        })
    }

    pub(super) fn unblock(sig: libc::c_int) {
        // SAFETY: a zeroed `sigset_t` is initialized by `sigemptyset`;
        // `pthread_sigmask` only changes this thread's mask.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, sig);
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        }
    }

    /// True if the signal was queued for `thread`.
    pub(super) fn send(thread: Id, sig: libc::c_int) -> bool {
        // SAFETY: `thread` is alive: it is the dwelling thread, which
        // waits in `recv` (the word said so, under the kicks lock that
        // it takes before it can leave) and ends only after that.
        unsafe { libc::pthread_kill(thread, sig) == 0 }
    }
}

#[cfg(not(all(target_os = "linux", not(miri))))]
mod imp {
    pub(super) type Id = ();

    pub(super) fn current() -> Id {}

    pub(super) fn signal() -> Option<i32> {
        None
    }

    pub(super) fn unblock(_: i32) {}

    pub(super) fn send(_: Id, _: i32) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn a_wait_without_a_kick_leaves_unkicked() {
        let w = WaitState::default();
        w.set_thread();
        assert_eq!(w.waiting(), None);
        w.enter();
        let seen = w.waiting().expect("waiting after enter");
        assert!(!w.leave());
        assert_eq!(w.waiting(), None);
        // The next wait has another number, so a sweep can tell them apart.
        w.enter();
        assert_ne!(w.waiting(), Some(seen));
        assert!(!w.leave());
    }

    #[test]
    fn a_kick_for_a_wait_that_ended_is_not_sent() {
        let w = WaitState::default();
        w.set_thread();
        w.enter();
        let seen = w.waiting().unwrap();
        assert!(!w.leave());
        assert_eq!(w.kick(seen), None);
        // Nor for an earlier wait while a later one runs.
        w.enter();
        assert_eq!(w.kick(seen), None);
        assert!(!w.leave());
    }

    #[cfg(all(target_os = "linux", not(miri)))]
    #[test]
    fn a_kick_interrupts_a_blocked_recv_and_is_taken_before_leave_returns() {
        use std::io::Read;
        use std::net::{TcpListener, TcpStream};
        assert!(available(), "the kick signal is free in the test process");
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let _client = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (mut s, _) = l.accept().unwrap();
        let w = Arc::new(WaitState::default());
        let (tx, rx) = std::sync::mpsc::channel();
        let t = {
            let w = w.clone();
            std::thread::spawn(move || {
                unblock_here();
                w.set_thread();
                w.enter();
                tx.send(()).unwrap();
                let mut b = [0u8; 8];
                let r = s.read(&mut b);
                let kicked = w.leave();
                (r.map_err(|e| e.kind()), kicked, handled::caught_up())
            })
        };
        rx.recv().unwrap();
        // The thread may not be in `recv` yet: kick again while the word
        // still says the same wait, as the sweep does.
        let mut seen = w.waiting().unwrap();
        let mut kicks = 0;
        while let Some(now) = w
            .waiting()
            .filter(|&n| n & !WaitState::KICKED == seen & !WaitState::KICKED)
        {
            if let Some(k) = w.kick(now) {
                seen = k;
                kicks += 1;
            }
            std::thread::sleep(Duration::from_millis(20));
            assert!(kicks < 500, "recv never interrupted");
        }
        let (r, kicked, caught_up) = t.join().unwrap();
        assert_eq!(r, Err(std::io::ErrorKind::Interrupted));
        assert!(kicked);
        assert!(
            caught_up,
            "every kick sent was handled before leave returned"
        );
    }
}
