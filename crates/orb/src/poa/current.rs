//! `PortableServer::Current`: which POA, object id and servant the
//! calling thread is serving. One frame per upcall on a thread-local
//! stack (nested upcalls on one thread stack up); the object id is kept
//! inline, so an upcall allocates nothing for it.

use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;

use super::key::InlineId;
use super::{ObjectId, Poa, PoaInner};
use crate::runtime::{ObjectRef, Servant};

pub(crate) struct Frame {
    pub(crate) poa: Arc<PoaInner>,
    pub(crate) oid: InlineId,
    pub(crate) servant: Arc<dyn Servant>,
}

thread_local! {
    static FRAMES: RefCell<Vec<Frame>> = const { RefCell::new(Vec::new()) };
}

pub(crate) fn push(f: Frame) {
    let _ = FRAMES.try_with(|v| v.borrow_mut().push(f));
}

pub(crate) fn pop() {
    let _ = FRAMES.try_with(|v| v.borrow_mut().pop());
}

/// Runs `f` on the innermost frame (`None` outside upcalls).
pub(crate) fn with_top<R>(f: impl FnOnce(Option<&Frame>) -> R) -> R {
    let mut f = Some(f);
    match FRAMES.try_with(|v| (f.take().expect("once"))(v.borrow().last())) {
        Ok(r) => r,
        Err(_) => (f.take().expect("not called"))(None),
    }
}

/// True if the thread is in an upcall on `poa` or one of its descendants.
pub(crate) fn in_upcall_of(poa: &PoaInner) -> bool {
    FRAMES
        .try_with(|v| {
            v.borrow().iter().any(|f| {
                f.poa.orb.ptr_eq(&poa.orb)
                    && (poa.path.is_empty()
                        || f.poa.path == poa.path
                        || f.poa
                            .path
                            .strip_prefix(poa.path.as_str())
                            .is_some_and(|r| r.starts_with('/')))
            })
        })
        .unwrap_or(false)
}

/// `PortableServer::Current::NoContext`: the thread is not serving a
/// request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoContext;

impl fmt::Display for NoContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PortableServer::Current::NoContext")
    }
}

impl std::error::Error for NoContext {}

/// `PortableServer::Current` (`resolve_initial_references("POACurrent")`
/// or [`crate::Orb::poa_current`]): inside an upcall (servant method,
/// `postinvoke`), the POA, object id, reference and servant of the
/// request this thread is serving; [`NoContext`] elsewhere.
#[derive(Debug, Clone, Copy, Default)]
pub struct PoaCurrent;

impl PoaCurrent {
    /// The POA serving the current request.
    pub fn get_poa(&self) -> Result<Poa, NoContext> {
        with_top(|f| {
            f.map(|f| Poa {
                inner: f.poa.clone(),
            })
            .ok_or(NoContext)
        })
    }

    /// The object id of the current request's target.
    pub fn get_object_id(&self) -> Result<ObjectId, NoContext> {
        with_top(|f| f.map(|f| f.oid.as_slice().to_vec()).ok_or(NoContext))
    }

    /// The servant serving the current request.
    pub fn get_servant(&self) -> Result<Arc<dyn Servant>, NoContext> {
        with_top(|f| f.map(|f| f.servant.clone()).ok_or(NoContext))
    }

    /// A reference to the current request's target (with the servant's
    /// repository id).
    pub fn get_reference(&self) -> Result<ObjectRef, NoContext> {
        let (poa, oid, servant) = with_top(|f| {
            f.map(|f| {
                (
                    Poa {
                        inner: f.poa.clone(),
                    },
                    f.oid.clone(),
                    f.servant.clone(),
                )
            })
            .ok_or(NoContext)
        })?;
        poa.create_reference_with_id(oid.as_slice(), servant.repository_id())
            .map_err(|_| NoContext)
    }

    /// True if the thread is serving a request.
    pub fn in_upcall(&self) -> bool {
        with_top(|f| f.is_some())
    }
}
