//! The Portable Object Adapter: RootPOA, child POAs with the standard
//! policies ([`policies`]), POA managers ([`manager`]), the active object
//! map, default servants, servant managers (activators and locators,
//! [`servant_manager`]), `POACurrent` ([`current`]), and object keys built
//! for O(1) demultiplexing (DESIGN.md rule 6; layout in `key.rs`).
//!
//! A transient key finds its POA by index in a vector and, for system ids,
//! its servant by slot in another, checking the generation (a deactivated
//! and reused slot makes old references `OBJECT_NOT_EXIST`, as does a key
//! from an earlier run of the ORB, whose instance number differs).
//! Persistent keys name the POA by its path, so they survive a restart on
//! the same endpoint; user ids go through a hash map.
//!
//! No POA lock is held while a servant, servant manager or etherealize
//! runs: they may call back into the POA freely.

mod aom;
pub mod current;
mod key;
mod lend;
pub mod manager;
pub mod policies;
mod resolve;
pub mod servant_manager;
mod user_ids;

use std::collections::HashMap;

use crate::fasthash::FastMap;
use std::fmt;
use std::mem::ManuallyDrop;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard, Weak};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use peregrine_giop::system_exception::minor;
use peregrine_giop::Ior;

use crate::client::lock;
use crate::error::raise;
use crate::orb::{Orb, OrbInner};
use crate::runtime::{Cause, Phase};
use crate::runtime::{
    CompletionStatus, ObjectRef, Reference, Servant, Skeleton, SystemException,
    SystemExceptionKind as K,
};
use aom::Aom;
pub use current::{NoContext, PoaCurrent};
use key::PoaAddr;
pub use manager::{PoaManager, PoaManagerState};
pub use policies::{
    IdAssignment, IdUniqueness, ImplicitActivation, Lifespan, Policies, RequestProcessing,
    ServantRetention,
};
pub(crate) use resolve::*;
pub use servant_manager::{
    Cookie, ServantActivator, ServantLocator, ServantManager, ServantManagerError,
};

/// An object id: opaque octets within one POA.
pub type ObjectId = Vec<u8>;

/// The POA's exceptions (`PortableServer::POA::*`) plus system exceptions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PoaError {
    /// `AdapterAlreadyExists`.
    AdapterAlreadyExists,
    /// `AdapterNonExistent`.
    AdapterNonExistent,
    /// `InvalidPolicy`: the combination is not allowed or not implemented.
    InvalidPolicy(&'static str),
    /// `ServantAlreadyActive`.
    ServantAlreadyActive,
    /// `ObjectAlreadyActive`.
    ObjectAlreadyActive,
    /// `ObjectNotActive`.
    ObjectNotActive,
    /// `ServantNotActive`.
    ServantNotActive,
    /// `WrongPolicy`.
    WrongPolicy,
    /// `WrongAdapter`.
    WrongAdapter,
    /// `NoServant`.
    NoServant,
    /// `POAManager::AdapterInactive`.
    AdapterInactive,
    /// A system exception (e.g. `OBJECT_NOT_EXIST` after `destroy`).
    System(SystemException),
}

impl fmt::Display for PoaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PoaError::InvalidPolicy(why) => write!(f, "PortableServer::POA::InvalidPolicy: {why}"),
            PoaError::System(e) => write!(f, "{e}"),
            other => write!(f, "PortableServer::POA::{other:?}"),
        }
    }
}

impl std::error::Error for PoaError {}

impl From<SystemException> for PoaError {
    fn from(e: SystemException) -> Self {
        PoaError::System(e)
    }
}

/// Requests in progress on one object of a POA with a servant activator,
/// and the etherealization waiting for them to finish.
#[derive(Default)]
struct Busy {
    count: usize,
    /// (servant, cleanup_in_progress, remaining_activations)
    etherealize: Vec<(Arc<dyn Servant>, bool, bool)>,
}

/// Incarnations in progress and busy objects (servant activator POAs).
#[derive(Default)]
struct Activations {
    incarnating: FastMap<Box<[u8]>, ThreadId>,
    busy: FastMap<Box<[u8]>, Busy>,
}

pub(crate) struct PoaInner {
    orb: Weak<OrbInner>,
    name: String,
    path: String,
    index: u32,
    policies: Policies,
    manager: PoaManager,
    aom: RwLock<Aom>,
    default_servant: RwLock<Option<Arc<dyn Servant>>>,
    servant_manager: OnceLock<ServantManager>,
    children: Mutex<HashMap<String, Poa>>,
    destroyed: AtomicBool,
    key_prefix: Vec<u8>,
    /// Requests in progress (for `destroy(_, wait_for_completion)`).
    inflight: AtomicUsize,
    quiet: Mutex<()>,
    quiet_cv: Condvar,
    activations: Mutex<Activations>,
    activations_cv: Condvar,
    /// Next system id under NON_RETAIN (no slot is kept).
    next_id: AtomicU32,
    /// The registry's epoch (see [`PoaRegistry::epoch`]).
    epoch: Arc<AtomicU64>,
    /// The registry's hazard slots (see [`lend`]).
    hazards: Arc<lend::Hazards>,
}

/// `PortableServer::POA` (cheap to clone): activates servants, makes
/// references, and routes each request to its servant. The RootPOA
/// ([`Orb::root_poa`]) has the policies of [`Policies::ROOT`]; children
/// ([`Poa::create_poa`]) take any valid set, best one of the named ones
/// ([`Policies::persistent_user_ids`], [`Policies::transient`],
/// [`Policies::default_servant`]).
///
/// Requests wait (up to 30 s) until the POA's manager is activated.
///
/// ```
/// # use std::sync::Arc;
/// # use peregrine_orb::{CompletionStatus, ObjectRef, Servant, ServerRequest, Skeleton, SystemException, SystemExceptionKind};
/// # struct Greeter;
/// # impl Servant for Greeter {
/// #     fn repository_id(&self) -> &'static str { "IDL:Demo/Greeter:1.0" }
/// #     fn is_a(&self, id: &str) -> bool { id == self.repository_id() }
/// #     fn dispatch(&self, req: &mut ServerRequest<'_>) -> Result<(), SystemException> {
/// #         match req.operation() {
/// #             "greet" => {
/// #                 let name = req.args().read_string()?;
/// #                 req.reply().write_string(&format!("hello, {name}"))?;
/// #                 Ok(())
/// #             }
/// #             _ => Err(SystemException::new(SystemExceptionKind::BadOperation, peregrine_orb::minor::BAD_OPERATION_UNKNOWN_OPERATION, CompletionStatus::No)),
/// #         }
/// #     }
/// # }
/// # impl Skeleton for Greeter { type Reference = ObjectRef; }
/// use peregrine_orb::{Orb, PoaError, Policies};
///
/// let orb = Orb::builder().listen("127.0.0.1", 0).build()?;
/// let root = orb.root_poa();
/// root.manager().activate()?;
///
/// // Named objects that survive a restart on the same port.
/// let people = root.create_poa("People", Some(&root.manager()), Policies::persistent_user_ids())?;
/// people.activate_object_with_id(b"ada", Arc::new(Greeter))?;
/// let ada = people.id_to_reference(b"ada")?;
/// assert_eq!(people.reference_to_id(&ada)?, b"ada");
///
/// // A call arrives: the servant answers.
/// let client = Orb::builder().build()?;
/// let remote = client.string_to_object(&ada.to_string())?;
/// assert!(!remote.non_existent()?);
///
/// // Deactivated: its references are OBJECT_NOT_EXIST.
/// people.deactivate_object(b"ada")?;
/// assert!(remote.non_existent()?);
/// assert_eq!(people.deactivate_object(b"ada"), Err(PoaError::ObjectNotActive));
/// # client.shutdown(true);
/// # orb.shutdown(true);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Poa {
    inner: Arc<PoaInner>,
}

/// Every POA of one ORB, for demultiplexing.
#[derive(Default)]
pub(crate) struct PoaRegistry {
    by_index: RwLock<Vec<Option<Arc<PoaInner>>>>,
    /// Persistent POAs by path (the same `Arc`s as `by_index`: one lookup
    /// and one lock per request).
    persistent: RwLock<FastMap<Box<[u8]>, Arc<PoaInner>>>,
    /// Bumped by every change that can make a [`ResolveCache`] entry
    /// wrong: an object deactivated, a POA created or destroyed. One
    /// counter for the whole ORB (these are rare next to requests), read
    /// once per request.
    pub(crate) epoch: Arc<AtomicU64>,
    /// Servants lent to upcalls without a count ([`lend`]).
    hazards: Arc<lend::Hazards>,
}

#[inline]
fn rlock<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|e| e.into_inner())
}

fn wlock<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}

impl PoaRegistry {
    pub(crate) fn create(
        &self,
        orb: &Arc<OrbInner>,
        name: &str,
        path: String,
        policies: Policies,
        manager: PoaManager,
    ) -> Poa {
        let mut v = wlock(&self.by_index);
        let index = v.len() as u32;
        let key_prefix = key::prefix(policies.lifespan, orb.instance, index, &path);
        let persistent = policies.lifespan == Lifespan::Persistent;
        let servant_manager = policies.request_processing == RequestProcessing::ServantManager;
        let inner = Arc::new(PoaInner {
            orb: Arc::downgrade(orb),
            name: name.to_string(),
            path,
            index,
            policies,
            manager,
            aom: RwLock::new(Aom::new(&policies, servant_manager)),
            default_servant: RwLock::new(None),
            servant_manager: OnceLock::new(),
            children: Mutex::new(HashMap::new()),
            destroyed: AtomicBool::new(false),
            key_prefix,
            inflight: AtomicUsize::new(0),
            quiet: Mutex::new(()),
            quiet_cv: Condvar::new(),
            activations: Mutex::new(Activations::default()),
            activations_cv: Condvar::new(),
            next_id: AtomicU32::new(0),
            epoch: self.epoch.clone(),
            hazards: self.hazards.clone(),
        });
        if persistent {
            wlock(&self.persistent).insert(inner.path.as_bytes().into(), inner.clone());
        }
        v.push(Some(inner.clone()));
        inner.bump_epoch();
        Poa { inner }
    }

    fn remove(&self, p: &PoaInner) {
        if let Some(e) = wlock(&self.by_index).get_mut(p.index as usize) {
            *e = None;
        }
        if p.policies.lifespan == Lifespan::Persistent {
            let mut m = wlock(&self.persistent);
            if m.get(p.path.as_bytes())
                .is_some_and(|q| std::ptr::eq(&**q, p))
            {
                m.remove(p.path.as_bytes());
            }
        }
        // After the POA is unreachable: a lookup that read the new epoch
        // cannot find it any more.
        p.bump_epoch();
    }

    /// The POA and object id a key names.
    fn find<'k>(&self, orb: &OrbInner, key: &'k [u8]) -> Option<(Arc<PoaInner>, &'k [u8])> {
        let (addr, id) = key::parse(key)?;
        let poa = match addr {
            PoaAddr::Transient { instance, index } => {
                if instance != orb.instance {
                    return None;
                }
                rlock(&self.by_index).get(index as usize)?.clone()?
            }
            PoaAddr::Persistent { path } => rlock(&self.persistent).get(path)?.clone(),
        };
        Some((poa, id))
    }
}

fn not_exist(detail: fmt::Arguments<'_>) -> SystemException {
    raise(
        K::ObjectNotExist,
        minor::OBJECT_NOT_EXIST_NO_MATCH,
        CompletionStatus::No,
        || Cause::new(Phase::Dispatch).with_detail(detail),
    )
}

/// `TRANSIENT` minor 1: the POA cannot serve the request now (its
/// manager discards requests, or an incarnation it waits for takes too
/// long); the client may try again.
fn no_resource(detail: fmt::Arguments<'_>) -> SystemException {
    raise(
        K::Transient,
        minor::TRANSIENT_POA_NO_RESOURCE,
        CompletionStatus::No,
        || Cause::new(Phase::Dispatch).with_detail(detail),
    )
}

fn no_such_object(poa: &PoaInner, id: &[u8]) -> SystemException {
    not_exist(format_args!(
        "no object {} in POA {:?}",
        peregrine_giop::corbaloc::escape_key(id),
        poa.path
    ))
}

fn panicked(what: &str) -> SystemException {
    raise(
        K::Unknown,
        minor::UNKNOWN_PANIC,
        CompletionStatus::Maybe,
        || Cause::new(Phase::Dispatch).with_detail(format_args!("{what} panicked")),
    )
}

impl PoaInner {
    /// Invalidates every [`ResolveCache`] entry of the ORB.
    fn bump_epoch(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
    }

    #[inline]
    fn request_done(&self) {
        if self.inflight.fetch_sub(1, Ordering::AcqRel) == 1
            && self.destroyed.load(Ordering::Acquire)
        {
            self.quiet_now();
        }
    }

    /// Wakes a `destroy(_, true)` waiting for the last request.
    #[cold]
    fn quiet_now(&self) {
        let _g = lock(&self.quiet);
        self.quiet_cv.notify_all();
    }

    fn activator(&self) -> Option<Arc<dyn ServantActivator>> {
        match self.servant_manager.get() {
            Some(ServantManager::Activator(a)) => Some(a.clone()),
            _ => None,
        }
    }

    /// RETAIN + servant activator: the map, else incarnate (one at a time
    /// per id; requests for an id being incarnated wait for it).
    fn activator_upcall<'a>(
        self: &Arc<Self>,
        inflight: Inflight,
        id: &'a [u8],
        operation: &'a str,
    ) -> Result<Resolution<'a>, SystemException> {
        // Counted busy before the lookup, so a concurrent deactivation
        // leaves etherealization to whoever finishes last.
        lock(&self.activations)
            .busy
            .entry(id.into())
            .or_default()
            .count += 1;
        let mut guard = BusyGuard {
            poa: self,
            id,
            armed: true,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        let servant = loop {
            {
                let aom = rlock(&self.aom);
                if let Some(s) = aom.get(id) {
                    break s.clone();
                }
                if !aom.valid(id) {
                    return Err(no_such_object(self, id));
                }
            }
            let Some(act) = self.activator() else {
                return Err(no_manager(self));
            };
            {
                let mut a = lock(&self.activations);
                if let Some(&who) = a.incarnating.get(id) {
                    if who == std::thread::current().id() {
                        return Err(raise(
                            K::ObjAdapter,
                            minor::OBJ_ADAPTER_RECURSIVE_INCARNATE,
                            CompletionStatus::No,
                            || {
                                Cause::new(Phase::Dispatch).with_detail(format_args!(
                                    "incarnate of POA {:?} recursed on its own id",
                                    self.path
                                ))
                            },
                        ));
                    }
                    let now = Instant::now();
                    if now >= deadline {
                        return Err(no_resource(format_args!(
                            "incarnate in POA {:?} takes too long",
                            self.path
                        )));
                    }
                    let _ = self
                        .activations_cv
                        .wait_timeout(a, deadline - now)
                        .unwrap_or_else(|e| e.into_inner());
                    continue;
                }
                a.incarnating.insert(id.into(), std::thread::current().id());
            }
            let _inc = Incarnating { poa: self, id };
            let adapter = Poa {
                inner: self.clone(),
            };
            let servant = match catch_unwind(AssertUnwindSafe(|| act.incarnate(id, &adapter))) {
                Ok(Ok(s)) => s,
                Ok(Err(ServantManagerError::ForwardRequest(r))) => {
                    return Ok(Resolution::Forward(r.ior().clone()))
                }
                Ok(Err(ServantManagerError::System(e))) => return Err(e),
                Err(_) => return Err(panicked("ServantActivator::incarnate")),
            };
            let mut aom = wlock(&self.aom);
            if let Some(s) = aom.get(id) {
                // Activated meanwhile (activate_object_with_id).
                break s.clone();
            }
            match aom.activate_with_id(id, servant.clone()) {
                Ok(()) => break servant,
                Err(PoaError::ServantAlreadyActive) => {
                    return Err(raise(
                        K::ObjAdapter,
                        minor::OBJ_ADAPTER_WRONG_INCARNATE_POLICY,
                        CompletionStatus::No,
                        || {
                            Cause::new(Phase::Dispatch).with_detail(format_args!(
                                "incarnate returned a servant already active in POA {:?} (UNIQUE_ID)",
                                self.path
                            ))
                        },
                    ))
                }
                Err(_) => return Err(no_such_object(self, id)),
            }
        };
        guard.armed = false;
        Ok(Resolution::Upcall(
            inflight.upcall(servant, id, operation, None, true),
        ))
    }

    /// One request on `id` finished: run etherealizations it delayed.
    fn unbusy(self: &Arc<Self>, id: &[u8]) {
        let due = {
            let mut a = lock(&self.activations);
            match a.busy.get_mut(id) {
                Some(b) if b.count > 1 => {
                    b.count -= 1;
                    return;
                }
                Some(_) => a.busy.remove(id).map(|b| b.etherealize).unwrap_or_default(),
                None => return,
            }
        };
        for (servant, cleanup, remaining) in due {
            self.etherealize(id, servant, cleanup, remaining);
        }
    }

    /// Etherealizes now, or once the requests in progress on `id` finish.
    fn etherealize_when_idle(
        self: &Arc<Self>,
        id: &[u8],
        servant: Arc<dyn Servant>,
        cleanup: bool,
        remaining: bool,
    ) {
        {
            let mut a = lock(&self.activations);
            if let Some(b) = a.busy.get_mut(id) {
                b.etherealize.push((servant, cleanup, remaining));
                return;
            }
        }
        self.etherealize(id, servant, cleanup, remaining);
    }

    fn etherealize(
        self: &Arc<Self>,
        id: &[u8],
        servant: Arc<dyn Servant>,
        cleanup: bool,
        remaining: bool,
    ) {
        let Some(act) = self.activator() else {
            return;
        };
        let adapter = Poa {
            inner: self.clone(),
        };
        let _ = catch_unwind(AssertUnwindSafe(|| {
            act.etherealize(id, &adapter, servant, cleanup, remaining)
        }));
    }
}

/// Undoes the busy count of an activator request that never reached
/// its upcall.
struct BusyGuard<'p> {
    poa: &'p Arc<PoaInner>,
    id: &'p [u8],
    armed: bool,
}

impl Drop for BusyGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.poa.unbusy(self.id);
        }
    }
}

impl Poa {
    fn orb(&self) -> Result<Orb, PoaError> {
        self.inner
            .orb
            .upgrade()
            .map(Orb::from_inner)
            .ok_or_else(|| {
                PoaError::System(raise(
                    K::BadInvOrder,
                    minor::BAD_INV_ORDER_ORB_HAS_SHUTDOWN,
                    CompletionStatus::No,
                    || {
                        Cause::new(Phase::Local).with_detail(format_args!(
                            "the ORB of POA {:?} was destroyed",
                            self.inner.path
                        ))
                    },
                ))
            })
    }

    fn check_alive(&self) -> Result<(), PoaError> {
        if self.inner.destroyed.load(Ordering::Acquire) {
            return Err(PoaError::System(raise(
                K::ObjectNotExist,
                minor::OBJECT_NOT_EXIST_POA_DESTROYED,
                CompletionStatus::No,
                || {
                    Cause::new(Phase::Local)
                        .with_detail(format_args!("POA {:?} was destroyed", self.inner.path))
                },
            )));
        }
        Ok(())
    }

    fn p(&self) -> &Policies {
        &self.inner.policies
    }

    /// The POA's name ("RootPOA" for the root).
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The POA's policies.
    pub fn policies(&self) -> Policies {
        self.inner.policies
    }

    /// The POA's manager.
    pub fn manager(&self) -> PoaManager {
        self.inner.manager.clone()
    }

    /// True if both handles are the same POA.
    pub fn same(&self, other: &Poa) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Creates a child POA; `manager` `None` makes a new one (holding).
    pub fn create_poa(
        &self,
        name: &str,
        manager: Option<&PoaManager>,
        policies: Policies,
    ) -> Result<Poa, PoaError> {
        self.check_alive()?;
        policies.validate()?;
        if name.is_empty() || name.contains('/') || name.len() > 1024 {
            return Err(PoaError::InvalidPolicy(
                "POA names must be non-empty, at most 1024 bytes, without '/'",
            ));
        }
        let orb = self.orb()?;
        let mut children = lock(&self.inner.children);
        // A destroyed child keeps its entry (it does not know its parent);
        // its name is free again.
        if children
            .get(name)
            .is_some_and(|c| !c.inner.destroyed.load(Ordering::Acquire))
        {
            return Err(PoaError::AdapterAlreadyExists);
        }
        let path = if self.inner.path.is_empty() {
            name.to_string()
        } else {
            format!("{}/{}", self.inner.path, name)
        };
        if path.len() > u16::MAX as usize {
            return Err(PoaError::InvalidPolicy("POA path too long for a key"));
        }
        let manager = manager.cloned().unwrap_or_default();
        let child = orb
            .inner()
            .poas
            .create(orb.inner_arc(), name, path, policies, manager);
        children.insert(name.to_string(), child.clone());
        Ok(child)
    }

    /// A child POA by name.
    pub fn find_poa(&self, name: &str) -> Result<Poa, PoaError> {
        lock(&self.inner.children)
            .get(name)
            .filter(|c| !c.inner.destroyed.load(Ordering::Acquire))
            .cloned()
            .ok_or(PoaError::AdapterNonExistent)
    }

    /// `POA::destroy`: destroys this POA and its children (their
    /// references become `OBJECT_NOT_EXIST`). With `etherealize_objects`
    /// a servant activator etherealizes every active object
    /// (`cleanup_in_progress` true), each after its requests in progress
    /// finish. With `wait_for_completion` it returns once no request is
    /// in progress in the POA; called so from an upcall in this POA (or
    /// a descendant) that would deadlock: `BAD_INV_ORDER` minor 3.
    pub fn destroy(
        &self,
        etherealize_objects: bool,
        wait_for_completion: bool,
    ) -> Result<(), PoaError> {
        if wait_for_completion && current::in_upcall_of(&self.inner) {
            return Err(PoaError::System(raise(
                K::BadInvOrder,
                minor::BAD_INV_ORDER_WOULD_DEADLOCK,
                CompletionStatus::No,
                || {
                    Cause::new(Phase::Local).with_detail(format_args!(
                        "destroy(wait_for_completion) of POA {:?} from one of its own upcalls",
                        self.inner.path
                    ))
                },
            )));
        }
        if self.inner.destroyed.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        // Before the wait for requests in progress: a cached request
        // counted after this sees the new epoch and takes the slow path.
        self.inner.bump_epoch();
        let children: Vec<Poa> = lock(&self.inner.children).drain().map(|(_, c)| c).collect();
        for c in children {
            c.destroy(etherealize_objects, wait_for_completion)?;
        }
        if let Ok(orb) = self.orb() {
            orb.inner().poas.remove(&self.inner);
        }
        if wait_for_completion {
            let mut g = lock(&self.inner.quiet);
            while self.inner.inflight.load(Ordering::SeqCst) > 0 {
                g = self
                    .inner
                    .quiet_cv
                    .wait_timeout(g, Duration::from_millis(50))
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
        }
        let drained = wlock(&self.inner.aom).drain();
        if etherealize_objects && self.inner.activator().is_some() {
            for (id, r) in drained {
                self.inner
                    .etherealize_when_idle(&id, r.servant, true, r.remaining);
            }
        } else {
            // The epoch was bumped above: upcalls still running (no
            // `wait_for_completion`) may hold them lent.
            self.inner
                .hazards
                .retire(drained.into_iter().map(|(_, r)| r.servant));
        }
        *wlock(&self.inner.default_servant) = None;
        Ok(())
    }

    fn require_retain(&self) -> Result<(), PoaError> {
        if !self.p().retain() {
            return Err(PoaError::WrongPolicy);
        }
        Ok(())
    }

    /// Activates `servant` under a new system id (SYSTEM_ID, RETAIN).
    pub fn activate_object(&self, servant: Arc<dyn Servant>) -> Result<ObjectId, PoaError> {
        self.check_alive()?;
        self.require_retain()?;
        if !self.p().system_id() {
            return Err(PoaError::WrongPolicy);
        }
        let id = wlock(&self.inner.aom).activate(servant)?;
        Ok(id.to_vec())
    }

    /// Activates `servant` under `id` (a user id, or a system id from
    /// `create_reference`).
    pub fn activate_object_with_id(
        &self,
        id: &[u8],
        servant: Arc<dyn Servant>,
    ) -> Result<(), PoaError> {
        self.check_alive()?;
        self.require_retain()?;
        wlock(&self.inner.aom).activate_with_id(id, servant)
    }

    /// Deactivates the object `id`. Without a servant activator its
    /// references become `OBJECT_NOT_EXIST` (a system id's slot gets a new
    /// generation); with one, the servant is etherealized once the
    /// requests in progress on it finish, and the next request on the id
    /// incarnates it again.
    pub fn deactivate_object(&self, id: &[u8]) -> Result<(), PoaError> {
        self.check_alive()?;
        self.require_retain()?;
        let activator = self.inner.activator().is_some();
        let keep_id = self.p().request_processing == RequestProcessing::ServantManager;
        let removed = wlock(&self.inner.aom)
            .deactivate(id, keep_id)
            .ok_or(PoaError::ObjectNotActive)?;
        // Cached resolutions of `id` must miss from now on.
        self.inner.bump_epoch();
        if activator {
            self.inner
                .etherealize_when_idle(id, removed.servant, false, removed.remaining);
        } else {
            // After the bump: an upcall may still run on it, lent.
            self.inner.hazards.retire([removed.servant]);
        }
        Ok(())
    }

    /// `POA::create_reference_with_id`: a typed reference `R` (a
    /// generated `IRef`, or [`ObjectRef`]) for object `id` of this POA,
    /// with `R`'s repository id as its type id. No servant is needed yet:
    /// a request on it finds whatever is active (or the default servant,
    /// or the servant manager) under `id` when it arrives.
    ///
    /// ```
    /// use peregrine_orb::{ObjectRef, Orb, Policies};
    ///
    /// let orb = Orb::builder().listen("127.0.0.1", 0).build()?;
    /// let root = orb.root_poa();
    /// let poa = root.create_poa("Accounts", Some(&root.manager()), Policies::persistent_user_ids())?;
    /// // With generated code: `let r: AccountRef = poa.create_reference_with_id(b"alice")?;`
    /// let r = poa.create_reference_with_id::<ObjectRef>(b"alice")?;
    /// assert_eq!(poa.reference_to_id(&r)?, b"alice");
    /// # orb.shutdown(true);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn create_reference_with_id<R: Reference>(&self, id: &[u8]) -> Result<R, PoaError> {
        self.create_object_with_id(id, R::REPOSITORY_ID)
            .map(R::from_object_ref)
    }

    /// [`Poa::create_reference_with_id`] untyped, with the type id given
    /// at run time (dynamic servants, interfaces without generated code).
    pub fn create_object_with_id(&self, id: &[u8], type_id: &str) -> Result<ObjectRef, PoaError> {
        self.check_alive()?;
        let mut key = Vec::with_capacity(self.inner.key_prefix.len() + id.len());
        key.extend_from_slice(&self.inner.key_prefix);
        key.extend_from_slice(id);
        let orb = self.orb()?;
        Ok(orb.make_reference(type_id, key)?)
    }

    /// `POA::create_reference`: a typed reference `R` with a new system
    /// id, not yet activated (SYSTEM_ID).
    pub fn create_reference<R: Reference>(&self) -> Result<R, PoaError> {
        self.create_object(R::REPOSITORY_ID).map(R::from_object_ref)
    }

    /// [`Poa::create_reference`] untyped, with the type id given at run
    /// time.
    pub fn create_object(&self, type_id: &str) -> Result<ObjectRef, PoaError> {
        self.check_alive()?;
        if !self.p().system_id() {
            return Err(PoaError::WrongPolicy);
        }
        let id = if self.p().retain() {
            wlock(&self.inner.aom).reserve()
        } else {
            // No map to index: any fresh number will do.
            key::system_id(self.inner.next_id.fetch_add(1, Ordering::Relaxed), u32::MAX)
        };
        self.create_object_with_id(&id, type_id)
    }

    /// The reference of the active object `id` (RETAIN).
    pub fn id_to_reference(&self, id: &[u8]) -> Result<ObjectRef, PoaError> {
        self.check_alive()?;
        self.require_retain()?;
        let servant = rlock(&self.inner.aom)
            .get(id)
            .cloned()
            .ok_or(PoaError::ObjectNotActive)?;
        self.create_object_with_id(id, servant.repository_id())
    }

    /// The servant of the active object `id`, or the default servant
    /// (USE_DEFAULT_SERVANT).
    pub fn id_to_servant(&self, id: &[u8]) -> Result<Arc<dyn Servant>, PoaError> {
        self.check_alive()?;
        let p = *self.p();
        if p.retain() {
            if let Some(s) = rlock(&self.inner.aom).get(id) {
                return Ok(s.clone());
            }
        }
        match p.request_processing {
            RequestProcessing::DefaultServant => self.get_servant(),
            _ if p.retain() => Err(PoaError::ObjectNotActive),
            _ => Err(PoaError::WrongPolicy),
        }
    }

    /// The servant a reference made by this POA denotes.
    pub fn reference_to_servant(&self, obj: &ObjectRef) -> Result<Arc<dyn Servant>, PoaError> {
        let id = self.reference_to_id(obj)?;
        self.id_to_servant(&id)
    }

    /// The id of the request this thread serves on `servant` in this POA.
    fn current_id_for(&self, servant: &Arc<dyn Servant>) -> Option<ObjectId> {
        current::with_top(|f| {
            let f = f?;
            (std::ptr::eq(f.poa(), &*self.inner)
                && f.servant_ptr() as *const u8 == Arc::as_ptr(servant) as *const u8)
                .then(|| f.oid().to_vec())
        })
    }

    /// `POA::servant_to_id`: with RETAIN and UNIQUE_ID, the id of an
    /// active servant; with IMPLICIT_ACTIVATION, an inactive servant (or
    /// any servant, with MULTIPLE_ID) is activated under a new id; with
    /// USE_DEFAULT_SERVANT, the default servant inside one of its upcalls
    /// gives the current request's id. Otherwise `ServantNotActive`
    /// (`WrongPolicy` if none of these policies applies).
    pub fn servant_to_id(&self, servant: &Arc<dyn Servant>) -> Result<ObjectId, PoaError> {
        self.check_alive()?;
        let p = *self.p();
        let implicit = p.implicit_activation == ImplicitActivation::Implicit;
        let default = p.request_processing == RequestProcessing::DefaultServant;
        if !(default || (p.retain() && (p.unique() || implicit))) {
            return Err(PoaError::WrongPolicy);
        }
        if p.retain() && p.unique() {
            if let Some(id) = rlock(&self.inner.aom).id_of(servant) {
                return Ok(id);
            }
        }
        if p.retain() && implicit {
            return self.activate_object(servant.clone());
        }
        if default {
            let is_default = rlock(&self.inner.default_servant)
                .as_ref()
                .is_some_and(|d| aom::servant_addr(d) == aom::servant_addr(servant));
            if is_default {
                if let Some(id) = self.current_id_for(servant) {
                    return Ok(id);
                }
            }
        }
        Err(PoaError::ServantNotActive)
    }

    /// `POA::servant_to_reference`, typed: the reference of `servant`'s
    /// object as its interface's generated reference type (`EchoRef` for
    /// an `EchoSkeleton<_>`), no narrow needed. Which object: as
    /// [`Poa::servant_to_id`] (with IMPLICIT_ACTIVATION, as in the
    /// RootPOA, an inactive servant is activated), and inside an upcall
    /// on `servant` in this POA, the current request's target.
    ///
    /// For a servant known only as `Arc<dyn Servant>`, use
    /// [`Poa::servant_to_object`].
    ///
    /// ```
    /// use std::sync::Arc;
    /// use peregrine_orb::{DynServerRequest, DynamicImplementation, DynamicServant, Orb, SystemException};
    ///
    /// struct Hello;
    /// impl DynamicImplementation for Hello {
    ///     fn invoke(&self, _req: &mut DynServerRequest<'_>) -> Result<(), SystemException> {
    ///         Ok(())
    ///     }
    ///     fn primary_interface(&self, _oid: &[u8]) -> String {
    ///         "IDL:Demo/Hello:1.0".into()
    ///     }
    /// }
    ///
    /// let orb = Orb::builder().listen("127.0.0.1", 0).build()?;
    /// let root = orb.root_poa();
    /// let servant = Arc::new(DynamicServant::new(Hello));
    /// // Generated skeletons give their `IRef`; a dynamic servant, an `ObjectRef`.
    /// let obj = root.servant_to_reference(&servant)?;
    /// assert_eq!(obj.type_id(), "IDL:Demo/Hello:1.0");
    /// # orb.shutdown(true);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn servant_to_reference<K: Skeleton>(
        &self,
        servant: &Arc<K>,
    ) -> Result<K::Reference, PoaError> {
        let s: Arc<dyn Servant> = servant.clone();
        self.servant_to_object(&s)
            .map(K::Reference::from_object_ref)
    }

    /// [`Poa::servant_to_reference`] for any servant, untyped (the type id
    /// is the servant's `repository_id`).
    pub fn servant_to_object(&self, servant: &Arc<dyn Servant>) -> Result<ObjectRef, PoaError> {
        let id = match self.servant_to_id(servant) {
            Ok(id) => id,
            Err(e @ (PoaError::ServantNotActive | PoaError::WrongPolicy)) => {
                self.current_id_for(servant).ok_or(e)?
            }
            Err(e) => return Err(e),
        };
        self.create_object_with_id(&id, servant.repository_id())
    }

    /// The object id inside a reference made by this POA.
    pub fn reference_to_id(&self, obj: &ObjectRef) -> Result<ObjectId, PoaError> {
        let profiles = obj
            .ior()
            .iiop_profiles()
            .map_err(|_| PoaError::WrongAdapter)?;
        let key = &profiles.first().ok_or(PoaError::WrongAdapter)?.object_key;
        key.strip_prefix(&self.inner.key_prefix[..])
            .map(<[u8]>::to_vec)
            .ok_or(PoaError::WrongAdapter)
    }

    /// Sets the default servant (USE_DEFAULT_SERVANT).
    pub fn set_servant(&self, servant: Arc<dyn Servant>) -> Result<(), PoaError> {
        if self.p().request_processing != RequestProcessing::DefaultServant {
            return Err(PoaError::WrongPolicy);
        }
        *wlock(&self.inner.default_servant) = Some(servant);
        Ok(())
    }

    /// The default servant (USE_DEFAULT_SERVANT).
    pub fn get_servant(&self) -> Result<Arc<dyn Servant>, PoaError> {
        if self.p().request_processing != RequestProcessing::DefaultServant {
            return Err(PoaError::WrongPolicy);
        }
        rlock(&self.inner.default_servant)
            .clone()
            .ok_or(PoaError::NoServant)
    }

    /// Sets the servant manager (USE_SERVANT_MANAGER), once: an activator
    /// for RETAIN, a locator for NON_RETAIN (else `OBJ_ADAPTER` minor 4);
    /// a second call is `BAD_INV_ORDER` minor 6.
    pub fn set_servant_manager(&self, manager: ServantManager) -> Result<(), PoaError> {
        self.check_alive()?;
        if self.p().request_processing != RequestProcessing::ServantManager {
            return Err(PoaError::WrongPolicy);
        }
        let fits = matches!(
            (&manager, self.p().retain()),
            (ServantManager::Activator(_), true) | (ServantManager::Locator(_), false)
        );
        if !fits {
            return Err(PoaError::System(raise(
                K::ObjAdapter,
                minor::OBJ_ADAPTER_NO_SERVANT_MANAGER,
                CompletionStatus::No,
                || {
                    Cause::new(Phase::Local).with_detail(format_args!(
                        "RETAIN takes a ServantActivator, NON_RETAIN a ServantLocator"
                    ))
                },
            )));
        }
        self.inner.servant_manager.set(manager).map_err(|_| {
            PoaError::System(raise(
                K::BadInvOrder,
                minor::BAD_INV_ORDER_SERVANT_MANAGER_ALREADY_SET,
                CompletionStatus::No,
                || {
                    Cause::new(Phase::Local).with_detail(format_args!(
                        "POA {:?} already has a servant manager",
                        self.inner.path
                    ))
                },
            ))
        })
    }

    /// The servant manager, if set (USE_SERVANT_MANAGER).
    pub fn get_servant_manager(&self) -> Result<Option<ServantManager>, PoaError> {
        if self.p().request_processing != RequestProcessing::ServantManager {
            return Err(PoaError::WrongPolicy);
        }
        Ok(self.inner.servant_manager.get().cloned())
    }

    /// Number of objects in the active object map.
    pub fn active_objects(&self) -> usize {
        rlock(&self.inner.aom).len()
    }
}

/// A servant for the POA's unit tests: answers nothing, counts its drops
/// when given a counter.
#[cfg(test)]
#[derive(Default)]
pub(crate) struct TestServant(pub(crate) Option<Arc<AtomicUsize>>);

#[cfg(test)]
impl Drop for TestServant {
    fn drop(&mut self) {
        if let Some(c) = &self.0 {
            c.fetch_add(1, Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
impl Servant for TestServant {
    fn repository_id(&self) -> &'static str {
        "IDL:S:1.0"
    }
    fn is_a(&self, _: &str) -> bool {
        false
    }
    fn dispatch(&self, _: &mut crate::runtime::ServerRequest<'_>) -> Result<(), SystemException> {
        Ok(())
    }
}

#[cfg(test)]
mod key_tests {
    /// `same_key` is `==` for every length up to 40 and a difference in
    /// every position.
    #[test]
    fn same_key_is_slice_equality() {
        let a: Vec<u8> = (0..40u8).collect();
        for n in 0..a.len() {
            let k = &a[..n];
            assert!(super::same_key(k, k));
            assert!(!super::same_key(k, &a[..n + 1]));
            for at in 0..n {
                let mut b = k.to_vec();
                b[at] ^= 0x80;
                assert!(!super::same_key(k, &b), "{n} {at}");
            }
        }
    }

    /// `copy_short` copies every length up to 40 whole (word paths and
    /// the fallback).
    #[test]
    fn copy_short_copies() {
        let a: Vec<u8> = (1..=40u8).collect();
        for n in 0..a.len() {
            let mut to = vec![0u8; n];
            super::copy_short(&mut to, &a[..n]);
            assert_eq!(to, &a[..n], "{n}");
        }
    }
}
