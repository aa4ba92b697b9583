//! `PortableServer::Current`: which POA, object id and servant the
//! calling thread is serving. One frame per upcall, linked on the
//! thread's stack (nested upcalls on one thread stack up). A frame lends
//! what the request's `Upcall` holds (POA, servant, object id in the
//! request buffer) and lives in the stack frame of `enter`: entering
//! copies four pointers into a thread-local cell (no allocation, no
//! `RefCell`, no reference count); a reference is counted only when
//! `PoaCurrent` hands one out.

use std::cell::Cell;
use std::fmt;
use std::mem::ManuallyDrop;
use std::sync::Arc;

use super::{ObjectId, Poa, PoaInner};
use crate::runtime::{ObjectRef, Servant};

/// One upcall's POA, servant and object id, borrowed from its `Upcall`.
///
/// Invariant: a frame is only reachable from `TOP` while [`enter`] runs
/// the upcall, and `enter` borrows the POA, servant and object id for
/// longer than that; so every frame reachable from `TOP`, and every
/// pointer in it, is valid.
pub(crate) struct Frame {
    poa: *const PoaInner,
    servant: *const dyn Servant,
    oid: *const [u8],
    /// The frame of the enclosing upcall on this thread (null if none).
    prev: *const Frame,
}

impl Frame {
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

    fn prev(&self) -> Option<&Frame> {
        // SAFETY: `prev` is null or the frame of an enclosing `enter`,
        // which outlives this one (the type's invariant).
        unsafe { self.prev.as_ref() }
    }
}

thread_local! {
    /// The innermost frame of this thread (null outside upcalls). A `Cell`
    /// of a pointer needs no destructor, so access is a plain
    /// thread-local load.
    static TOP: Cell<*const Frame> = const { Cell::new(std::ptr::null()) };
}

/// Restores the enclosing frame, also when the upcall unwinds.
struct Leave(*const Frame);

impl Drop for Leave {
    fn drop(&mut self) {
        let _ = TOP.try_with(|t| t.set(self.0));
    }
}

/// Runs `f` as an upcall on `servant` of `poa` for object `oid`: inside
/// it `PoaCurrent` answers with these (and then the enclosing upcall's
/// again).
#[inline]
pub(crate) fn enter<R>(
    poa: &Arc<PoaInner>,
    servant: &Arc<dyn Servant>,
    oid: &[u8],
    f: impl FnOnce() -> R,
) -> R {
    let Ok(prev) = TOP.try_with(Cell::get) else {
        // The thread is exiting: no Current, but the upcall still runs.
        return f();
    };
    let frame = Frame {
        poa: Arc::as_ptr(poa),
        servant: Arc::as_ptr(servant),
        oid: oid as *const [u8],
        prev,
    };
    // `frame` and what it points to outlive `f`; `leave` unlinks it
    // before they go (the type's invariant).
    TOP.with(|t| t.set(&frame));
    let leave = Leave(prev);
    let r = f();
    drop(leave);
    r
}

/// Runs `f` on the innermost frame (`None` outside upcalls).
pub(crate) fn with_top<R>(f: impl FnOnce(Option<&Frame>) -> R) -> R {
    let top = TOP.try_with(Cell::get).unwrap_or(std::ptr::null());
    // SAFETY: null or a frame linked by a running `enter` (the type's
    // invariant).
    f(unsafe { top.as_ref() })
}

/// True if the thread is in an upcall on `poa` or one of its descendants.
pub(crate) fn in_upcall_of(poa: &PoaInner) -> bool {
    with_top(|mut f| {
        while let Some(fr) = f {
            let fp = fr.poa();
            if fp.orb.ptr_eq(&poa.orb)
                && (poa.path.is_empty()
                    || fp.path == poa.path
                    || fp
                        .path
                        .strip_prefix(poa.path.as_str())
                        .is_some_and(|r| r.starts_with('/')))
            {
                return true;
            }
            f = fr.prev();
        }
        false
    })
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
        poa.create_object_with_id(&oid, servant.repository_id())
            .map_err(|_| NoContext)
    }

    /// True if the thread is serving a request.
    pub fn in_upcall(&self) -> bool {
        with_top(|f| f.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::poa::TestServant as S;
    use crate::Orb;

    /// Nested upcalls see their own frame and then the enclosing one
    /// again; outside, none (also after a panic unwinds out of one).
    /// Runs under Miri (no sockets: the ORB does not listen).
    #[test]
    fn frames_nest_and_unlink() {
        let orb = Orb::builder().build().unwrap();
        let root = orb.root_poa();
        let poa = root.inner.clone();
        let (a, b): (Arc<dyn Servant>, Arc<dyn Servant>) =
            (Arc::new(S::default()), Arc::new(S::default()));
        let cur = PoaCurrent;
        assert!(!cur.in_upcall());
        enter(&poa, &a, b"outer", || {
            assert_eq!(cur.get_object_id().unwrap(), b"outer");
            assert!(Arc::ptr_eq(&cur.get_servant().unwrap(), &a));
            assert!(cur.get_poa().unwrap().same(&root));
            assert!(in_upcall_of(&poa));
            let oid = vec![1u8, 2, 3];
            let r = enter(&poa, &b, &oid, || {
                assert_eq!(cur.get_object_id().unwrap(), [1, 2, 3]);
                assert!(Arc::ptr_eq(&cur.get_servant().unwrap(), &b));
                7
            });
            assert_eq!(r, 7);
            assert_eq!(cur.get_object_id().unwrap(), b"outer");
            let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                enter(&poa, &b, b"inner", || panic!("servant failed"))
            }));
            assert!(unwound.is_err());
            assert_eq!(cur.get_object_id().unwrap(), b"outer");
        });
        assert!(!cur.in_upcall());
        assert_eq!(cur.get_poa().unwrap_err(), NoContext);
        assert!(!in_upcall_of(&poa));
    }
}
