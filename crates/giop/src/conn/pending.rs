//! The client's table of requests awaiting an answer, and the request
//! ids it hands out.

use std::time::Instant;

use super::idmap::IdMap;
use super::timers::Deadlines;
use crate::system_exception::CompletionStatus;

/// What kind of answer a pending entry waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A Reply to a Request.
    Request,
    /// A LocateReply to a LocateRequest.
    Locate,
}

/// One request awaiting its answer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PendingCall {
    pub(crate) kind: Kind,
    /// Some of its bytes were handed to the driver: the server may have
    /// the request.
    pub(crate) sent: bool,
    pub(crate) deadline: Option<Instant>,
    /// Forwards followed to get here.
    pub(crate) hops: u32,
}

impl PendingCall {
    /// How far a request that ends without an answer got: not at all if
    /// it never left, maybe if it did.
    pub(crate) fn completion(&self) -> CompletionStatus {
        if self.sent {
            CompletionStatus::Maybe
        } else {
            CompletionStatus::No
        }
    }
}

/// Pending requests by id, with their deadlines.
#[derive(Debug, Default)]
pub(crate) struct PendingTable {
    calls: IdMap<PendingCall>,
    deadlines: Deadlines,
    next_id: u32,
}

impl PendingTable {
    /// A fresh request id: sequential, skipping ids still pending after
    /// the counter wraps.
    pub(crate) fn next_id(&mut self) -> u32 {
        loop {
            let id = self.next_id;
            self.next_id = self.next_id.wrapping_add(1);
            if !self.calls.contains(id) {
                return id;
            }
        }
    }

    #[inline]
    pub(crate) fn insert(&mut self, id: u32, call: PendingCall) {
        if let Some(at) = call.deadline {
            self.deadlines.insert(at, id);
        }
        self.calls.insert(id, call);
    }

    #[inline]
    pub(crate) fn remove(&mut self, id: u32) -> Option<PendingCall> {
        let call = self.calls.remove(id)?;
        if let Some(at) = call.deadline {
            self.deadlines.remove(at, id);
        }
        Some(call)
    }

    #[inline]
    pub(crate) fn mark_sent(&mut self, id: u32) {
        if let Some(c) = self.calls.get_mut(id) {
            c.sent = true;
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.calls.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.deadlines.next()
    }

    /// Removes one call whose deadline is at or before `now`.
    pub(crate) fn pop_expired(&mut self, now: Instant) -> Option<(u32, PendingCall)> {
        let id = self.deadlines.pop_expired(now)?;
        let call = self.calls.remove(id)?;
        Some((id, call))
    }

    /// Removes every call, in id order.
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = (u32, PendingCall)> + '_ {
        self.deadlines.clear();
        self.calls.drain()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn call(deadline: Option<Instant>) -> PendingCall {
        PendingCall {
            kind: Kind::Request,
            sent: false,
            deadline,
            hops: 0,
        }
    }

    #[test]
    fn ids_skip_pending_ones_after_wrapping() {
        let mut t = PendingTable {
            next_id: u32::MAX,
            ..Default::default()
        };
        t.insert(0, call(None));
        assert_eq!(t.next_id(), u32::MAX);
        assert_eq!(t.next_id(), 1);
    }

    #[test]
    fn deadlines_follow_the_calls() {
        let t0 = Instant::now();
        let mut t = PendingTable::default();
        t.insert(1, call(Some(t0 + Duration::from_secs(1))));
        t.insert(2, call(Some(t0 + Duration::from_secs(2))));
        t.remove(1);
        assert_eq!(t.next_deadline(), Some(t0 + Duration::from_secs(2)));
        assert!(t.pop_expired(t0 + Duration::from_secs(1)).is_none());
        assert_eq!(t.pop_expired(t0 + Duration::from_secs(2)).unwrap().0, 2);
        assert!(t.is_empty());
    }

    #[test]
    fn completion_says_whether_it_left() {
        let mut c = call(None);
        assert_eq!(c.completion(), CompletionStatus::No);
        c.sent = true;
        assert_eq!(c.completion(), CompletionStatus::Maybe);
    }
}
