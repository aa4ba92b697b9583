//! A lock biased towards the first thread that takes it: that thread (the
//! owner) enters and leaves with plain stores and a compiler fence, no
//! atomic read-modify-write; the first other thread that wants the lock
//! revokes the bias once (an asymmetric fence, Linux `membarrier`), waits
//! until the owner is outside, and from then on every thread, the owner
//! included, takes an ordinary mutex.
//!
//! Why: a client connection's write lock (`ClientConn::send`) is taken
//! and released by every call, and in the common case by one thread only
//! (one thread per connection, or a single-threaded client). Its
//! uncontended `cmpxchg` and `xchg` were ~47 % of the oneway's
//! `fast_finish` samples (docs/PERFORMANCE.md, step 36). A connection
//! shared by several threads pays one `membarrier` (a few microseconds)
//! once in its life, then the mutex as before.
//!
//! # The protocol and its memory ordering
//!
//! `bias` holds the owner's thread id ([`thread_id`]), [`UNCLAIMED`] or
//! [`REVOKED`] (absorbing: also "never biased"). `busy` is written by the
//! owner alone.
//!
//! Owner, entering: `bias == me`; store `busy = true`; compiler fence;
//! load `bias` again: still `me`, it is inside; else it stores
//! `busy = false` and takes the mutex. Leaving: store `busy = false`
//! (release).
//!
//! Revoker (under the mutex): store `bias = REVOKED`; `membarrier`; load
//! `busy` (acquire) until it reads `false`.
//!
//! `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)` returns only after every
//! thread of the process that was running has executed a full memory
//! barrier (an IPI at an instruction boundary), and a thread that was not
//! running passes a full barrier when it is scheduled again. So it is as
//! if the owner executed a sequentially consistent fence `F` at some
//! point of its program, after the revoker's store of `REVOKED` (the
//! syscall starts with a full barrier) and before the revoker's load of
//! `busy` (and ends with one). The compiler fence keeps the owner's store
//! of `busy` before its second load of `bias` in program order (the CPU
//! may still reorder them, but `F` is at one point of that order). Then:
//!
//! * `F` before the owner's store of `busy = true`: the owner's second
//!   load comes after `F`, which comes after the store of `REVOKED`: it
//!   reads `REVOKED` and the owner takes the mutex.
//! * `F` after that store: `busy = true` is visible to the revoker's
//!   load (drained by `F`), which therefore reads `true` or the owner's
//!   later `busy = false`, written when it left. Reading `false`
//!   (acquire) synchronizes with that release: the owner's writes
//!   happen before the revoker's.
//!
//! Either way the owner is never inside while the revoker (and everyone
//! after it, ordered by the mutex) is. The owner's later attempts all
//! come after `F` and read `REVOKED`. Revocation and the wait happen
//! under the mutex, and the mutex's payload records that they are done,
//! so a thread that finds the owner busy and does not want to wait
//! ([`BiasedLock::try_lock`]) leaves the wait to the next locker.
//!
//! Only the first taker claims the bias (one `compare_exchange` per
//! lock's life). Without `membarrier` (other systems, Miri, a kernel
//! without it or a sandbox that forbids it) no thread ever claims it and
//! the lock is the mutex.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};

/// `bias` before any thread took the lock.
const UNCLAIMED: u64 = u64::MAX - 1;
/// `bias` once revoked, or when biasing is not available: the mutex.
const REVOKED: u64 = u64::MAX;

/// How often a revoker re-reads the owner's `busy` before it yields its
/// time slice (the owner is usually inside one `send`, a few
/// microseconds).
const SPINS: u32 = 64;

thread_local! {
    /// This thread's id for biasing, 0 until it first claims a bias (0
    /// matches no `bias` value).
    static ME: Cell<u64> = const { Cell::new(0) };
}

/// The calling thread's id, assigned on first use (ids are never
/// reused: a thread that ends cannot pass its bias on to a new thread
/// that happens to get the same thread-local storage).
fn thread_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    ME.with(|me| {
        if me.get() == 0 {
            me.set(NEXT.fetch_add(1, Ordering::Relaxed));
        }
        me.get()
    })
}

/// A mutual-exclusion lock without data, biased towards its first taker
/// (see the module documentation).
pub(crate) struct BiasedLock {
    /// The owner's thread id, [`UNCLAIMED`] or [`REVOKED`].
    bias: AtomicU64,
    /// The owner is inside (written by the owner only).
    busy: AtomicBool,
    /// The lock after revocation. `true` once the bias is revoked and its
    /// owner was seen outside (or there never was an owner).
    mutex: Mutex<bool>,
}

impl Default for BiasedLock {
    fn default() -> Self {
        Self::new()
    }
}

/// Proof of holding a [`BiasedLock`]; released when dropped.
#[must_use = "the lock is released when the guard is dropped"]
pub(crate) struct BiasedGuard<'a>(Held<'a>);

enum Held<'a> {
    /// The owner, inside: its `busy` flag to clear.
    Biased(&'a AtomicBool),
    Locked(#[allow(dead_code)] MutexGuard<'a, bool>),
}

impl Drop for BiasedGuard<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        if let Held::Biased(busy) = &self.0 {
            // Release: a revoker that reads `false` sees everything the
            // owner did inside.
            busy.store(false, Ordering::Release);
        }
        // A `Locked` guard unlocks the mutex when dropped after this.
    }
}

impl BiasedLock {
    /// An unlocked lock, not yet biased.
    pub(crate) const fn new() -> Self {
        Self {
            bias: AtomicU64::new(UNCLAIMED),
            busy: AtomicBool::new(false),
            mutex: Mutex::new(false),
        }
    }

    /// Takes the lock, waiting as long as it takes. The flag is `true`
    /// when the caller may have waited (another thread held the lock, or
    /// this call revoked the bias).
    #[inline(always)]
    pub(crate) fn lock(&self) -> (BiasedGuard<'_>, bool) {
        if let Some(g) = self.enter_biased() {
            return (g, false);
        }
        match self.acquire(true) {
            Some(got) => got,
            // `acquire(true)` always returns the lock.
            None => unreachable!("a blocking acquire returned nothing"),
        }
    }

    /// Takes the lock if nobody holds it (the owner inside counts as
    /// holding it, even when this call revokes its bias).
    pub(crate) fn try_lock(&self) -> Option<BiasedGuard<'_>> {
        if let Some(g) = self.enter_biased() {
            return Some(g);
        }
        self.acquire(false).map(|(g, _)| g)
    }

    /// Whether the calling thread owns the (unrevoked) bias.
    #[cfg(test)]
    fn owned_by_me(&self) -> bool {
        self.bias.load(Ordering::Relaxed) == ME.with(Cell::get)
    }

    /// The owner's way in: no read-modify-write, no CPU fence (see the
    /// module documentation for why the compiler fence is enough).
    #[inline(always)]
    fn enter_biased(&self) -> Option<BiasedGuard<'_>> {
        let me = ME.with(Cell::get);
        // Relaxed: only this thread ever stores its own id into `bias`.
        if self.bias.load(Ordering::Relaxed) != me {
            return None;
        }
        self.busy.store(true, Ordering::Relaxed);
        // The store above must precede the load below in program order
        // (a revoker's membarrier is the CPU fence between them).
        std::sync::atomic::compiler_fence(Ordering::SeqCst);
        if self.bias.load(Ordering::Relaxed) != me {
            // Revoked meanwhile: the mutex from now on.
            self.busy.store(false, Ordering::Release);
            return None;
        }
        Some(BiasedGuard(Held::Biased(&self.busy)))
    }

    /// Claims the bias if nobody has, else takes the mutex (revoking the
    /// bias first if that was not done yet). `block`: wait for the lock;
    /// otherwise `None` if it is held.
    #[cold]
    #[inline(never)]
    fn acquire(&self, block: bool) -> Option<(BiasedGuard<'_>, bool)> {
        if self.bias.load(Ordering::Relaxed) == UNCLAIMED {
            let claim = if asym::available() {
                thread_id()
            } else {
                REVOKED
            };
            // Relaxed: the owner's own accesses need no ordering with the
            // claim; a revoker orders itself by `membarrier`.
            let _ =
                self.bias
                    .compare_exchange(UNCLAIMED, claim, Ordering::Relaxed, Ordering::Relaxed);
            if let Some(g) = self.enter_biased() {
                return Some((g, false));
            }
        }
        let (mut settled, mut waited) = match self.mutex.try_lock() {
            Ok(g) => (g, false),
            Err(TryLockError::Poisoned(p)) => (p.into_inner(), false),
            Err(TryLockError::WouldBlock) if block => {
                (self.mutex.lock().unwrap_or_else(|e| e.into_inner()), true)
            }
            Err(TryLockError::WouldBlock) => return None,
        };
        if !*settled {
            // Every revocation happens here, under the mutex: one
            // membarrier per lock, by the first thread to get here.
            let was = self.bias.swap(REVOKED, Ordering::Relaxed);
            if was != UNCLAIMED && was != REVOKED {
                asym::heavy_barrier();
            }
            // The owner may be inside since before the revocation (a
            // previous revoker that did not wait left `settled` false;
            // its membarrier is ordered before us by the mutex).
            let mut spins = 0u32;
            while self.busy.load(Ordering::Acquire) {
                if !block {
                    return None;
                }
                waited = true;
                spins += 1;
                if spins < SPINS {
                    std::hint::spin_loop();
                } else if spins < 2 * SPINS {
                    std::thread::yield_now();
                } else {
                    // The owner may be blocked on a full socket for long.
                    std::thread::sleep(std::time::Duration::from_micros(100));
                }
            }
            *settled = true;
        }
        Some((BiasedGuard(Held::Locked(settled)), waited))
    }
}

/// The asymmetric fence: `membarrier` on Linux, nothing elsewhere (then
/// no lock is ever biased).
#[cfg(all(target_os = "linux", not(miri)))]
mod asym {
    use std::sync::OnceLock;

    // From <linux/membarrier.h> (not in the `libc` crate).
    const CMD_QUERY: libc::c_long = 0;
    const CMD_GLOBAL: libc::c_long = 1 << 0;
    const CMD_PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
    const CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

    fn membarrier(cmd: libc::c_long) -> libc::c_long {
        // SAFETY: `membarrier(cmd, flags = 0, cpu_id = 0)` reads and
        // writes no user memory; an unknown command or a kernel without
        // the call returns -1 (ENOSYS, EINVAL, EPERM), which the callers
        // handle.
        unsafe {
            libc::syscall(
                libc::SYS_membarrier,
                cmd,
                0 as libc::c_long,
                0 as libc::c_long,
            )
        }
    }

    /// Whether the private expedited membarrier works in this process
    /// (queried and registered once).
    pub(super) fn available() -> bool {
        static OK: OnceLock<bool> = OnceLock::new();
        *OK.get_or_init(|| {
            let cmds = membarrier(CMD_QUERY);
            let want = CMD_PRIVATE_EXPEDITED | CMD_REGISTER_PRIVATE_EXPEDITED | CMD_GLOBAL;
            cmds >= 0 && cmds & want == want && membarrier(CMD_REGISTER_PRIVATE_EXPEDITED) == 0
        })
    }

    /// A full memory barrier on every running thread of the process.
    #[cold]
    pub(super) fn heavy_barrier() {
        if membarrier(CMD_PRIVATE_EXPEDITED) == 0 {
            return;
        }
        // A forked child's address space is not registered (the
        // registration is per memory map): register it, then try again;
        // then the global barrier (slower: it waits for every CPU).
        if membarrier(CMD_REGISTER_PRIVATE_EXPEDITED) == 0 && membarrier(CMD_PRIVATE_EXPEDITED) == 0
        {
            return;
        }
        if membarrier(CMD_GLOBAL) == 0 {
            return;
        }
        // Both worked when `available` checked: a biased owner can no
        // longer be excluded safely.
        panic!(
            "membarrier failed after it was registered: {}",
            std::io::Error::last_os_error()
        );
    }
}

#[cfg(not(all(target_os = "linux", not(miri))))]
mod asym {
    /// No asymmetric fence: never bias.
    pub(super) fn available() -> bool {
        false
    }

    pub(super) fn heavy_barrier() {
        unreachable!("no lock is biased without membarrier");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A counter only touched under the lock: torn updates show as a
    /// wrong total (and as a data race under Miri).
    struct Guarded {
        lock: BiasedLock,
        n: std::cell::UnsafeCell<u64>,
    }

    // SAFETY: `n` is only accessed while holding `lock`.
    unsafe impl Sync for Guarded {}

    impl Guarded {
        fn bump(&self) {
            let (_g, _) = self.lock.lock();
            // SAFETY: the lock is held.
            unsafe { *self.n.get() += 1 };
        }
    }

    #[test]
    fn single_thread_locks_and_relocks() {
        let l = BiasedLock::new();
        for _ in 0..3 {
            let (g, waited) = l.lock();
            assert!(!waited);
            drop(g);
        }
        assert!(l.try_lock().is_some());
        // Biased where membarrier is available (not under Miri).
        assert_eq!(l.owned_by_me(), asym::available());
    }

    #[test]
    fn owner_inside_blocks_try_lock_of_others() {
        let l = Arc::new(BiasedLock::new());
        let (g, _) = l.lock();
        let l2 = l.clone();
        assert!(std::thread::spawn(move || l2.try_lock().is_none())
            .join()
            .unwrap());
        drop(g);
        // Revoked (or never biased): the other thread now gets the mutex,
        // and so does the former owner.
        let l2 = l.clone();
        assert!(std::thread::spawn(move || l2.try_lock().is_some())
            .join()
            .unwrap());
        assert!(!l.owned_by_me());
        let (_g, _) = l.lock();
    }

    #[test]
    fn revocation_waits_for_the_owner() {
        let l = Arc::new(BiasedLock::new());
        let inside = Arc::new(AtomicBool::new(false));
        let (g, _) = l.lock();
        inside.store(true, Ordering::SeqCst);
        let (l2, in2) = (l.clone(), inside.clone());
        let other = std::thread::spawn(move || {
            let (_g, waited) = l2.lock();
            // The owner left before we got in.
            assert!(!in2.load(Ordering::SeqCst));
            waited
        });
        // No timing assumption: whether the other thread got to wait or
        // not, it must not get in before the store below.
        std::thread::yield_now();
        inside.store(false, Ordering::SeqCst);
        drop(g);
        other.join().unwrap();
    }

    #[test]
    fn threads_exclude_each_other() {
        let threads = if cfg!(miri) { 3 } else { 8 };
        let per = if cfg!(miri) { 50 } else { 20_000 };
        let g = Arc::new(Guarded {
            lock: BiasedLock::new(),
            n: std::cell::UnsafeCell::new(0),
        });
        // The main thread takes the bias and keeps locking while the
        // others revoke it.
        g.bump();
        let hs: Vec<_> = (0..threads)
            .map(|_| {
                let g = g.clone();
                std::thread::spawn(move || {
                    for _ in 0..per {
                        g.bump();
                    }
                })
            })
            .collect();
        for _ in 0..per {
            g.bump();
        }
        for h in hs {
            h.join().unwrap();
        }
        let (_l, _) = g.lock.lock();
        // SAFETY: the lock is held.
        assert_eq!(unsafe { *g.n.get() }, 1 + (threads as u64 + 1) * per);
    }
}
