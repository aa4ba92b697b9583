//! How many of the pool's idle threads wait in `epoll_wait` at once.
//!
//! Every thread waiting on the poller is a thread the kernel may wake for
//! one event. With more of them than CPUs, a burst of requests wakes one
//! thread per request, and each takes the CPU from whoever runs (on a
//! CPU shared with a busy client: one preemption per request), where one
//! thread per CPU would have taken the burst in a batch. So at most
//! `cap` idle threads poll; the others wait here, on the bench, and one
//! of them is promoted to poll as soon as a polling thread takes an event
//! and none is left polling. While a request runs another thread still
//! waits for the next event (nested calls back into the server and slow
//! requests never wait for a free thread), but the threads beyond the
//! CPUs cost a wake-up only when they are needed.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use crate::client::lock;

/// The polling threads and the bench of the other idle ones.
pub(super) struct Pollers {
    /// Most threads polling at once.
    cap: usize,
    /// `Seats::polling`, readable without the lock.
    polling: AtomicUsize,
    seats: Mutex<Seats>,
    bench: Condvar,
}

#[derive(Default)]
struct Seats {
    /// Threads polling, or promoted to poll.
    polling: usize,
    /// Threads on the bench.
    benched: usize,
    /// Promotions sent to the bench and not yet taken.
    promoted: usize,
}

/// Why a thread came back from [`Pollers::begin`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Seat {
    /// It polls now (counted until [`Pollers::end`]).
    Poll,
    /// It waited on the bench and was promoted: it polls now (counted
    /// until [`Pollers::end`]).
    Promoted,
    /// It waited on the bench for the whole timeout without being needed.
    TimedOut,
}

impl Pollers {
    /// At most `cap` (at least one) threads polling at once.
    pub(super) fn new(cap: usize) -> Pollers {
        Pollers {
            cap: cap.max(1),
            polling: AtomicUsize::new(0),
            seats: Mutex::new(Seats::default()),
            bench: Condvar::new(),
        }
    }

    /// Threads polling now.
    pub(super) fn polling(&self) -> usize {
        self.polling.load(Ordering::SeqCst)
    }

    /// An idle thread about to poll: polls at once if a seat is free (or
    /// `unlimited()`: the pool stops, and every thread must see it), else
    /// waits on the bench until promoted, until `unlimited()` holds after
    /// [`Pollers::wake_all`], or for `timeout`.
    pub(super) fn begin(&self, timeout: Option<Duration>, unlimited: impl Fn() -> bool) -> Seat {
        let mut s = lock(&self.seats);
        if s.polling < self.cap || unlimited() {
            return self.seat(s);
        }
        s.benched += 1;
        loop {
            if s.promoted > 0 {
                // Counted polling by the promoter.
                s.promoted -= 1;
                s.benched -= 1;
                return Seat::Promoted;
            }
            if unlimited() {
                s.benched -= 1;
                return self.seat(s);
            }
            s = match timeout {
                None => self.bench.wait(s).unwrap_or_else(|e| e.into_inner()),
                Some(t) => {
                    let (s, r) = self
                        .bench
                        .wait_timeout(s, t)
                        .unwrap_or_else(|e| e.into_inner());
                    if r.timed_out() && s.promoted == 0 {
                        let mut s = s;
                        s.benched -= 1;
                        return Seat::TimedOut;
                    }
                    s
                }
            };
        }
    }

    fn seat(&self, mut s: std::sync::MutexGuard<'_, Seats>) -> Seat {
        s.polling += 1;
        self.polling.store(s.polling, Ordering::SeqCst);
        Seat::Poll
    }

    /// A polling thread stopped polling (it took an event, or its wait
    /// timed out): if it was the last one, a thread from the bench takes
    /// its place.
    pub(super) fn end(&self) {
        let mut s = lock(&self.seats);
        s.polling -= 1;
        if s.polling == 0 && s.benched > s.promoted {
            s.promoted += 1;
            s.polling += 1;
            self.bench.notify_one();
        }
        self.polling.store(s.polling, Ordering::SeqCst);
    }

    /// Threads on the bench.
    #[cfg(test)]
    fn benched(&self) -> usize {
        lock(&self.seats).benched
    }

    /// Wakes the whole bench (the pool stops: see [`Pollers::begin`]).
    pub(super) fn wake_all(&self) {
        let _s = lock(&self.seats);
        self.bench.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::mpsc;
    use std::sync::Arc;

    #[test]
    fn threads_beyond_the_cap_wait_until_no_one_polls() {
        let p = Arc::new(Pollers::new(1));
        assert_eq!(p.begin(None, || false), Seat::Poll);
        assert_eq!(p.polling(), 1);
        let (tx, rx) = mpsc::channel();
        let benched = {
            let p = p.clone();
            std::thread::spawn(move || {
                let seat = p.begin(None, || false);
                tx.send(seat).unwrap();
            })
        };
        // The seat is taken: the second thread waits on the bench.
        assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
        // The polling thread takes an event: the benched one polls.
        p.end();
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok(Seat::Promoted));
        benched.join().unwrap();
        assert_eq!(p.polling(), 1);
        p.end();
        assert_eq!(p.polling(), 0);
        // With nobody polling, a thread takes a seat at once.
        assert_eq!(p.begin(None, || false), Seat::Poll);
    }

    #[test]
    fn a_benched_thread_times_out_when_not_needed() {
        let p = Pollers::new(1);
        assert_eq!(p.begin(None, || false), Seat::Poll);
        assert_eq!(
            p.begin(Some(Duration::from_millis(20)), || false),
            Seat::TimedOut
        );
        // Not counted on the bench any more: the last poller's end
        // promotes nobody.
        p.end();
        assert_eq!(p.polling(), 0);
    }

    #[test]
    fn stopping_lets_the_whole_bench_poll() {
        let p = Arc::new(Pollers::new(1));
        let stop = Arc::new(AtomicBool::new(false));
        assert_eq!(p.begin(None, || false), Seat::Poll);
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let (p, stop) = (p.clone(), stop.clone());
                std::thread::spawn(move || p.begin(None, || stop.load(Ordering::SeqCst)))
            })
            .collect();
        std::thread::sleep(Duration::from_millis(50));
        stop.store(true, Ordering::SeqCst);
        p.wake_all();
        for w in waiters {
            assert_eq!(w.join().unwrap(), Seat::Poll);
        }
        assert_eq!(p.polling(), 4);
    }

    #[test]
    fn only_the_last_poller_to_leave_promotes() {
        let p = Arc::new(Pollers::new(2));
        assert_eq!(p.begin(None, || false), Seat::Poll);
        assert_eq!(p.begin(None, || false), Seat::Poll);
        let (tx, rx) = mpsc::channel();
        let benched = {
            let p = p.clone();
            std::thread::spawn(move || tx.send(p.begin(None, || false)).unwrap())
        };
        while p.benched() == 0 {
            std::thread::yield_now();
        }
        // One of two leaves: one still polls, nobody is promoted.
        p.end();
        assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
        p.end();
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok(Seat::Promoted));
        benched.join().unwrap();
    }
}
