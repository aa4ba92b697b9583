//! Timers as values: per-request deadlines and the idle timer. The driver
//! asks for the earliest ([`crate::conn::ClientConnection::poll_timeout`])
//! and reports the time when it passes; nothing here reads a clock.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// Request deadlines, ordered by time then request id (so expiry order
/// is deterministic).
#[derive(Debug, Default)]
pub(crate) struct Deadlines {
    set: BTreeSet<(Instant, u32)>,
}

impl Deadlines {
    pub(crate) fn insert(&mut self, at: Instant, id: u32) {
        self.set.insert((at, id));
    }

    pub(crate) fn remove(&mut self, at: Instant, id: u32) {
        self.set.remove(&(at, id));
    }

    /// The earliest deadline.
    pub(crate) fn next(&self) -> Option<Instant> {
        self.set.first().map(|&(at, _)| at)
    }

    /// Removes and returns the id of one deadline at or before `now`.
    pub(crate) fn pop_expired(&mut self, now: Instant) -> Option<u32> {
        let &(at, id) = self.set.first()?;
        (at <= now).then(|| {
            self.set.pop_first();
            id
        })
    }

    pub(crate) fn clear(&mut self) {
        self.set.clear();
    }
}

/// The idle timer: it runs only while nothing is outstanding, from the
/// last time bytes moved.
#[derive(Debug)]
pub(crate) struct Idle {
    timeout: Option<Duration>,
    last_activity: Instant,
}

impl Idle {
    pub(crate) fn new(timeout: Option<Duration>, now: Instant) -> Self {
        Self {
            timeout,
            last_activity: now,
        }
    }

    /// Bytes moved at `now`.
    #[inline]
    pub(crate) fn touch(&mut self, now: Instant) {
        // Without a timeout nothing reads it (and an `Instant` comparison
        // is a dozen instructions, paid per message).
        if self.timeout.is_some() {
            self.last_activity = self.last_activity.max(now);
        }
    }

    /// When the connection counts as idle, if it has nothing outstanding.
    pub(crate) fn deadline(&self, outstanding: bool) -> Option<Instant> {
        if outstanding {
            return None;
        }
        self.timeout.and_then(|t| self.last_activity.checked_add(t))
    }

    /// True when the connection, with nothing outstanding, is idle at
    /// `now`.
    pub(crate) fn expired(&self, outstanding: bool, now: Instant) -> bool {
        self.deadline(outstanding).is_some_and(|d| d <= now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_expire_in_order() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut d = Deadlines::default();
        d.insert(t0 + s(5), 2);
        d.insert(t0 + s(1), 9);
        d.insert(t0 + s(5), 1);
        assert_eq!(d.next(), Some(t0 + s(1)));
        assert_eq!(d.pop_expired(t0), None);
        assert_eq!(d.pop_expired(t0 + s(5)), Some(9));
        assert_eq!(d.pop_expired(t0 + s(5)), Some(1));
        d.remove(t0 + s(5), 2);
        assert_eq!(d.next(), None);
    }

    #[test]
    fn idle_runs_only_when_nothing_is_outstanding() {
        let t0 = Instant::now();
        let mut i = Idle::new(Some(Duration::from_secs(10)), t0);
        assert_eq!(i.deadline(true), None);
        i.touch(t0 + Duration::from_secs(3));
        // Time never runs backwards for the timer.
        i.touch(t0);
        assert_eq!(i.deadline(false), Some(t0 + Duration::from_secs(13)));
        assert!(!i.expired(false, t0 + Duration::from_secs(12)));
        assert!(i.expired(false, t0 + Duration::from_secs(13)));
        assert!(!i.expired(true, t0 + Duration::from_secs(100)));
        assert_eq!(Idle::new(None, t0).deadline(false), None);
    }
}
