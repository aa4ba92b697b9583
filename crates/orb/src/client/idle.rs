//! Closing outgoing connections nobody uses
//! ([`OrbBuilder::outgoing_idle_timeout`](crate::OrbBuilder::outgoing_idle_timeout),
//! omniORB's `-ORBoutConScanPeriod`).
//!
//! One thread per ORB, started with its first connection, looks at every
//! cached connection each half timeout. A call does no work for it (a
//! lock-free oneway reads one more flag, `retiring`): the scan tells a connection in use by its request-id counter having moved
//! since the last look (or a call waiting on it), reports that to the
//! connection's GIOP machine, and the machine's idle timer decides. An
//! idle connection is closed the way a GIOP client closes one, by closing
//! the socket (CloseConnection is the server's message); a later call
//! through it opens a new one. So a connection closes between one and one
//! and a half timeouts after its last request.
//!
//! The thread holds the ORB weakly and stops when the ORB shuts down or
//! is dropped.

use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

use super::lock;
use crate::orb::OrbInner;

/// The scan thread's handle: dropping it (with the ORB's connection
/// cache) or [`IdleScan::stop`] ends the thread.
pub(crate) struct IdleScan {
    stop: Arc<Stop>,
}

#[derive(Default)]
struct Stop {
    stopped: Mutex<bool>,
    cv: Condvar,
}

impl Stop {
    /// Waits `period`; true when stopped meanwhile (or before).
    fn wait(&self, period: Duration) -> bool {
        let until = Instant::now() + period;
        let mut stopped = lock(&self.stopped);
        while !*stopped {
            let now = Instant::now();
            if now >= until {
                return false;
            }
            stopped = self
                .cv
                .wait_timeout(stopped, until - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        true
    }
}

impl IdleScan {
    /// Starts scanning `orb`'s connections for ones idle for `timeout`.
    /// Without a thread (the system refused one) connections stay open,
    /// as with no timeout, and a warning says so.
    pub(crate) fn start(orb: Weak<OrbInner>, timeout: Duration) -> IdleScan {
        let stop = Arc::new(Stop::default());
        let theirs = stop.clone();
        // Half the timeout, but not so short a tiny timeout spins.
        let period = (timeout / 2).max(Duration::from_millis(10));
        let spawned = std::thread::Builder::new()
            .name("peregrine-idle-scan".into())
            .spawn(move || {
                while !theirs.wait(period) {
                    let Some(orb) = orb.upgrade() else { return };
                    let closed = orb.cache.close_idle(Instant::now());
                    if closed > 0 {
                        tracing::debug!(
                            target: crate::trace::CLIENT,
                            closed,
                            "idle outgoing connections closed"
                        );
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::warn!(
                target: crate::trace::CLIENT,
                error = %e,
                "cannot start the idle connection scan: outgoing connections stay open"
            );
        }
        IdleScan { stop }
    }

    /// Ends the thread (at its next wake-up, which this brings forward).
    pub(crate) fn stop(&self) {
        *lock(&self.stop.stopped) = true;
        self.stop.cv.notify_all();
    }
}

impl Drop for IdleScan {
    fn drop(&mut self) {
        self.stop();
    }
}
