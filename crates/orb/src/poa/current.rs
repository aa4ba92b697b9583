//! `PortableServer::Current`: which POA, object id and servant the
//! calling thread is serving. One frame per upcall on a thread-local
//! stack (nested upcalls on one thread stack up). A frame lends what
//! the request's `Upcall` owns (POA, servant, object id in the request
//! buffer): pushing one copies three pointers and changes no reference
//! count; a reference is counted only when `PoaCurrent` hands one out.

use std::cell::RefCell;
use std::fmt;
use std::mem::ManuallyDrop;
use std::sync::Arc;

use super::{ObjectId, Poa, PoaInner};
use crate::runtime::{ObjectRef, Servant};

/// One upcall's POA, servant and object id, borrowed from its `Upcall`.
///
/// Invariant: a frame is pushed by `Inflight::upcall` and popped by the
/// `Upcall`'s drop, which owns an `Arc` of the POA and of the servant and
/// borrows the object id for longer than it lives; so while a frame is
/// on the stack its pointers are valid.
pub(crate) struct Frame {
    poa: *const PoaInner,
    servant: *const dyn Servant,
    oid: *const [u8],
}

impl Frame {
    /// # Safety
    /// `poa`, `servant` and `oid` must stay alive and unmoved until the
    /// frame is popped.
    pub(crate) unsafe fn new(poa: &Arc<PoaInner>, servant: &Arc<dyn Servant>, oid: &[u8]) -> Self {
        Frame {
            poa: Arc::as_ptr(poa),
            servant: Arc::as_ptr(servant),
            oid: oid as *const [u8],
        }
    }

    pub(crate) fn poa(&self) -> &PoaInner {
        // SAFETY: see the type's invariant.
        unsafe { &*self.poa }
    }

    pub(crate) fn oid(&self) -> &[u8] {
        // SAFETY: see the type's invariant.
        unsafe { &*self.oid }
    }

    pub(crate) fn servant_ptr(&self) -> *const dyn Servant {
        self.servant
    }

    /// A counted reference to the POA.
    pub(crate) fn poa_arc(&self) -> Arc<PoaInner> {
        // SAFETY: the pointer came from `Arc::as_ptr` of an `Arc` that is
        // alive (the type's invariant); the `ManuallyDrop` keeps its count.
        let a = ManuallyDrop::new(unsafe { Arc::from_raw(self.poa) });
        Arc::clone(&a)
    }

    /// A counted reference to the servant.
    pub(crate) fn servant_arc(&self) -> Arc<dyn Servant> {
        // SAFETY: as in `poa_arc`.
        let a = ManuallyDrop::new(unsafe { Arc::from_raw(self.servant) });
        Arc::clone(&a)
    }
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
                let fp = f.poa();
                fp.orb.ptr_eq(&poa.orb)
                    && (poa.path.is_empty()
                        || fp.path == poa.path
                        || fp
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
        with_top(|f| f.map(|f| Poa { inner: f.poa_arc() }).ok_or(NoContext))
    }

    /// The object id of the current request's target.
    pub fn get_object_id(&self) -> Result<ObjectId, NoContext> {
        with_top(|f| f.map(|f| f.oid().to_vec()).ok_or(NoContext))
    }

    /// The servant serving the current request.
    pub fn get_servant(&self) -> Result<Arc<dyn Servant>, NoContext> {
        with_top(|f| f.map(|f| f.servant_arc()).ok_or(NoContext))
    }

    /// A reference to the current request's target (with the servant's
    /// repository id).
    pub fn get_reference(&self) -> Result<ObjectRef, NoContext> {
        let (poa, oid, servant) = with_top(|f| {
            f.map(|f| {
                (
                    Poa { inner: f.poa_arc() },
                    f.oid().to_vec(),
                    f.servant_arc(),
                )
            })
            .ok_or(NoContext)
        })?;
        poa.create_reference_with_id(&oid, servant.repository_id())
            .map_err(|_| NoContext)
    }

    /// True if the thread is serving a request.
    pub fn in_upcall(&self) -> bool {
        with_top(|f| f.is_some())
    }
}
