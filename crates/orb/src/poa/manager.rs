//! `PortableServer::POAManager`: the request gate of one or more POAs.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::PoaError;
use crate::client::lock;

/// The state of a [`PoaManager`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum PoaManagerState {
    /// Requests wait (the initial state).
    Holding = 0,
    /// Requests are dispatched.
    Active = 1,
    /// Requests are refused with `TRANSIENT` (minor 1).
    Discarding = 2,
    /// Requests are refused with `OBJ_ADAPTER`; final.
    Inactive = 3,
}

struct PmInner {
    state: AtomicU8,
    lock: Mutex<()>,
    cv: Condvar,
}

/// `PortableServer::POAManager`: the request gate of one or more POAs.
/// The state is one atomic load per request.
#[derive(Clone)]
pub struct PoaManager {
    inner: Arc<PmInner>,
}

impl Default for PoaManager {
    fn default() -> Self {
        Self::new()
    }
}

impl PoaManager {
    /// A manager in the holding state.
    pub fn new() -> Self {
        PoaManager {
            inner: Arc::new(PmInner {
                state: AtomicU8::new(PoaManagerState::Holding as u8),
                lock: Mutex::new(()),
                cv: Condvar::new(),
            }),
        }
    }

    /// The current state.
    pub fn state(&self) -> PoaManagerState {
        match self.inner.state.load(Ordering::Acquire) {
            0 => PoaManagerState::Holding,
            1 => PoaManagerState::Active,
            2 => PoaManagerState::Discarding,
            _ => PoaManagerState::Inactive,
        }
    }

    fn set(&self, s: PoaManagerState) -> Result<(), PoaError> {
        let _g = lock(&self.inner.lock);
        if self.state() == PoaManagerState::Inactive {
            return Err(PoaError::AdapterInactive);
        }
        self.inner.state.store(s as u8, Ordering::Release);
        self.inner.cv.notify_all();
        Ok(())
    }

    /// Starts dispatching requests (held ones too).
    pub fn activate(&self) -> Result<(), PoaError> {
        self.set(PoaManagerState::Active)
    }

    /// Makes requests wait.
    pub fn hold_requests(&self) -> Result<(), PoaError> {
        self.set(PoaManagerState::Holding)
    }

    /// Refuses requests with `TRANSIENT`.
    pub fn discard_requests(&self) -> Result<(), PoaError> {
        self.set(PoaManagerState::Discarding)
    }

    /// Refuses requests for good (`OBJ_ADAPTER`).
    pub fn deactivate(&self) -> Result<(), PoaError> {
        self.set(PoaManagerState::Inactive)
    }

    /// Waits (up to `max`) while holding; returns the state.
    pub(crate) fn wait_while_holding(&self, max: Duration) -> PoaManagerState {
        let mut g = lock(&self.inner.lock);
        let end = Instant::now() + max;
        while self.state() == PoaManagerState::Holding {
            let now = Instant::now();
            if now >= end {
                break;
            }
            g = self
                .inner
                .cv
                .wait_timeout(g, end - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        self.state()
    }
}
