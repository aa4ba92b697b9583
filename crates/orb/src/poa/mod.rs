//! The Portable Object Adapter: RootPOA, child POAs with the standard
//! policies (lifespan, id assignment, id uniqueness, implicit activation,
//! servant retention, request processing with an active object map or a
//! default servant), POA managers, and object keys built for O(1)
//! demultiplexing (DESIGN.md rule 6).
//!
//! # Object keys
//!
//! ```text
//! "PGR1" kind:u8
//!   kind 0 (TRANSIENT):  orb_instance:u32le poa_index:u32le object_id...
//!   kind 1 (PERSISTENT): path_len:u16le poa_path object_id...
//! SYSTEM_ID object ids: slot:u32le generation:u32le
//! ```
//!
//! A transient key finds its POA by index in a vector and, for system ids,
//! its servant by slot in another, checking the generation (a deactivated
//! and reused slot makes old references `OBJECT_NOT_EXIST`, as does a key
//! from an earlier run of the ORB, whose instance number differs).
//! Persistent keys name the POA by its path, so they survive a restart on
//! the same endpoint; user ids go through a hash map.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard, Weak};
use std::time::Duration;

use peregrine_giop::system_exception::minor;

use crate::client::lock;
use crate::error::raise;
use crate::orb::{Orb, OrbInner};
use crate::runtime::{
    CompletionStatus, ObjectRef, Servant, SystemException, SystemExceptionKind as K,
};

/// An object id: opaque octets within one POA.
pub type ObjectId = Vec<u8>;

const MAGIC: &[u8; 4] = b"PGR1";

/// `LifespanPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifespan {
    /// References die with the POA (and with the ORB process).
    Transient,
    /// References stay valid across restarts on the same endpoint.
    Persistent,
}

/// `IdAssignmentPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdAssignment {
    /// The POA assigns ids (slot + generation: O(1) lookup).
    System,
    /// The application assigns ids (hash map lookup).
    User,
}

/// `IdUniquenessPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdUniqueness {
    /// A servant incarnates at most one object.
    Unique,
    /// A servant may incarnate several objects.
    Multiple,
}

/// `ImplicitActivationPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImplicitActivation {
    /// `servant_to_reference` activates an inactive servant.
    Implicit,
    /// It does not.
    NoImplicit,
}

/// `ServantRetentionPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServantRetention {
    /// An active object map holds the servants.
    Retain,
    /// No map: every request goes to the default servant.
    NonRetain,
}

/// `RequestProcessingPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestProcessing {
    /// Only objects in the active object map.
    ActiveObjectMapOnly,
    /// Objects not in the map go to the default servant.
    DefaultServant,
    /// Servant managers (activators/locators): not implemented yet.
    ServantManager,
}

/// The policies of a POA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policies {
    /// Lifespan.
    pub lifespan: Lifespan,
    /// Id assignment.
    pub id_assignment: IdAssignment,
    /// Id uniqueness.
    pub id_uniqueness: IdUniqueness,
    /// Implicit activation.
    pub implicit_activation: ImplicitActivation,
    /// Servant retention.
    pub servant_retention: ServantRetention,
    /// Request processing.
    pub request_processing: RequestProcessing,
}

impl Policies {
    /// The RootPOA's policies (CORBA 3 §11.3.8.2).
    pub const ROOT: Policies = Policies {
        lifespan: Lifespan::Transient,
        id_assignment: IdAssignment::System,
        id_uniqueness: IdUniqueness::Unique,
        implicit_activation: ImplicitActivation::Implicit,
        servant_retention: ServantRetention::Retain,
        request_processing: RequestProcessing::ActiveObjectMapOnly,
    };
}

/// The defaults for `create_POA` with no policies: as the RootPOA but
/// without implicit activation.
impl Default for Policies {
    fn default() -> Self {
        Policies {
            implicit_activation: ImplicitActivation::NoImplicit,
            ..Policies::ROOT
        }
    }
}

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
    fn wait_while_holding(&self, max: Duration) -> PoaManagerState {
        let mut g = lock(&self.inner.lock);
        let end = std::time::Instant::now() + max;
        while self.state() == PoaManagerState::Holding {
            let now = std::time::Instant::now();
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

struct Slot {
    generation: u32,
    /// Allocated (by activation or `create_reference`).
    used: bool,
    servant: Option<Arc<dyn Servant>>,
}

#[derive(Default)]
struct Aom {
    slots: Vec<Slot>,
    free: Vec<u32>,
    by_user_id: HashMap<Box<[u8]>, Arc<dyn Servant>>,
    /// Servant address -> id, for UNIQUE_ID.
    by_servant: HashMap<usize, ObjectId>,
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
    children: Mutex<HashMap<String, Poa>>,
    destroyed: AtomicBool,
    key_prefix: Vec<u8>,
}

/// `PortableServer::POA` (cheap to clone).
#[derive(Clone)]
pub struct Poa {
    inner: Arc<PoaInner>,
}

/// Every POA of one ORB, for demultiplexing.
#[derive(Default)]
pub(crate) struct PoaRegistry {
    by_index: RwLock<Vec<Option<Arc<PoaInner>>>>,
    persistent: RwLock<HashMap<String, u32>>,
}

fn rlock<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|e| e.into_inner())
}

fn wlock<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}

fn servant_addr(s: &Arc<dyn Servant>) -> usize {
    Arc::as_ptr(s) as *const () as usize
}

fn system_id(slot: u32, generation: u32) -> ObjectId {
    let mut v = Vec::with_capacity(8);
    v.extend_from_slice(&slot.to_le_bytes());
    v.extend_from_slice(&generation.to_le_bytes());
    v
}

fn parse_system_id(id: &[u8]) -> Option<(u32, u32)> {
    if id.len() != 8 {
        return None;
    }
    let slot = u32::from_le_bytes(id[..4].try_into().ok()?);
    let generation = u32::from_le_bytes(id[4..].try_into().ok()?);
    Some((slot, generation))
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
        let mut key_prefix = MAGIC.to_vec();
        match policies.lifespan {
            Lifespan::Transient => {
                key_prefix.push(0);
                key_prefix.extend_from_slice(&orb.instance.to_le_bytes());
                key_prefix.extend_from_slice(&index.to_le_bytes());
            }
            Lifespan::Persistent => {
                key_prefix.push(1);
                key_prefix.extend_from_slice(&(path.len() as u16).to_le_bytes());
                key_prefix.extend_from_slice(path.as_bytes());
                wlock(&self.persistent).insert(path.clone(), index);
            }
        }
        let inner = Arc::new(PoaInner {
            orb: Arc::downgrade(orb),
            name: name.to_string(),
            path,
            index,
            policies,
            manager,
            aom: RwLock::new(Aom::default()),
            default_servant: RwLock::new(None),
            children: Mutex::new(HashMap::new()),
            destroyed: AtomicBool::new(false),
            key_prefix,
        });
        v.push(Some(inner.clone()));
        Poa { inner }
    }

    fn remove(&self, p: &PoaInner) {
        if let Some(e) = wlock(&self.by_index).get_mut(p.index as usize) {
            *e = None;
        }
        if p.policies.lifespan == Lifespan::Persistent {
            wlock(&self.persistent).remove(&p.path);
        }
    }

    /// The POA and object id a key names.
    fn find<'k>(&self, orb: &OrbInner, key: &'k [u8]) -> Option<(Arc<PoaInner>, &'k [u8])> {
        let rest = key.strip_prefix(MAGIC)?;
        let (&kind, rest) = rest.split_first()?;
        match kind {
            0 => {
                let inst = u32::from_le_bytes(rest.get(..4)?.try_into().ok()?);
                let index = u32::from_le_bytes(rest.get(4..8)?.try_into().ok()?);
                if inst != orb.instance {
                    return None;
                }
                let poa = rlock(&self.by_index).get(index as usize)?.clone()?;
                Some((poa, &rest[8..]))
            }
            1 => {
                let n = u16::from_le_bytes(rest.get(..2)?.try_into().ok()?) as usize;
                let path = std::str::from_utf8(rest.get(2..2 + n)?).ok()?;
                let index = *rlock(&self.persistent).get(path)?;
                let poa = rlock(&self.by_index).get(index as usize)?.clone()?;
                Some((poa, &rest[2 + n..]))
            }
            _ => None,
        }
    }
}

/// What a request's object key resolved to.
pub(crate) struct Resolved<'k> {
    pub(crate) servant: Arc<dyn Servant>,
    pub(crate) object_id: &'k [u8],
}

fn not_exist(detail: fmt::Arguments<'_>) -> SystemException {
    raise(
        K::ObjectNotExist,
        minor::OBJECT_NOT_EXIST_NO_MATCH,
        CompletionStatus::No,
        detail,
    )
}

/// Finds the servant for `key`, honouring the POA manager's state
/// (waiting while it holds, up to `hold_max`).
pub(crate) fn resolve<'k>(
    orb: &OrbInner,
    key: &'k [u8],
    hold_max: Duration,
) -> Result<Resolved<'k>, SystemException> {
    let Some((poa, id)) = orb.poas.find(orb, key) else {
        return Err(not_exist(format_args!(
            "no POA for object key {}",
            peregrine_giop::corbaloc::escape_key(key)
        )));
    };
    if poa.destroyed.load(Ordering::Acquire) {
        return Err(not_exist(format_args!("POA {:?} was destroyed", poa.path)));
    }
    match poa.manager.state() {
        PoaManagerState::Active => {}
        PoaManagerState::Holding => match poa.manager.wait_while_holding(hold_max) {
            PoaManagerState::Active => {}
            PoaManagerState::Holding => {
                return Err(raise(
                    K::Transient,
                    minor::TRANSIENT_POA_NO_RESOURCE,
                    CompletionStatus::No,
                    format_args!("POA {:?} held requests for too long", poa.path),
                ))
            }
            s => return Err(refused(&poa, s)),
        },
        s => return Err(refused(&poa, s)),
    }
    let servant = poa.lookup(id);
    match servant {
        Some(s) => Ok(Resolved {
            servant: s,
            object_id: id,
        }),
        None => Err(not_exist(format_args!(
            "no object {} in POA {:?}",
            peregrine_giop::corbaloc::escape_key(id),
            poa.path
        ))),
    }
}

/// True if `key` names an object that exists now (LocateRequest).
pub(crate) fn exists(orb: &OrbInner, key: &[u8]) -> bool {
    match orb.poas.find(orb, key) {
        Some((poa, id)) => !poa.destroyed.load(Ordering::Acquire) && poa.lookup(id).is_some(),
        None => false,
    }
}

fn refused(poa: &PoaInner, s: PoaManagerState) -> SystemException {
    match s {
        PoaManagerState::Discarding => raise(
            K::Transient,
            minor::TRANSIENT_POA_NO_RESOURCE,
            CompletionStatus::No,
            format_args!("the manager of POA {:?} is discarding requests", poa.path),
        ),
        _ => raise(
            K::ObjAdapter,
            0,
            CompletionStatus::No,
            format_args!("the manager of POA {:?} is inactive", poa.path),
        ),
    }
}

impl PoaInner {
    fn lookup(&self, id: &[u8]) -> Option<Arc<dyn Servant>> {
        if self.policies.servant_retention == ServantRetention::Retain {
            let aom = rlock(&self.aom);
            let found = match self.policies.id_assignment {
                IdAssignment::System => parse_system_id(id).and_then(|(slot, generation)| {
                    let s = aom.slots.get(slot as usize)?;
                    if s.used && s.generation == generation {
                        Some(s.servant.clone())
                    } else {
                        None
                    }
                }),
                IdAssignment::User => Some(aom.by_user_id.get(id).cloned()),
            };
            match found {
                Some(Some(s)) => return Some(s),
                // A stale system id never reaches the default servant.
                None if self.policies.id_assignment == IdAssignment::System => return None,
                _ => {}
            }
        }
        if self.policies.request_processing == RequestProcessing::DefaultServant {
            return rlock(&self.default_servant).clone();
        }
        None
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
                    format_args!("the ORB of POA {:?} was destroyed", self.inner.path),
                ))
            })
    }

    fn check_alive(&self) -> Result<(), PoaError> {
        if self.inner.destroyed.load(Ordering::Acquire) {
            return Err(PoaError::System(raise(
                K::ObjectNotExist,
                0,
                CompletionStatus::No,
                format_args!("POA {:?} was destroyed", self.inner.path),
            )));
        }
        Ok(())
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

    /// Creates a child POA; `manager` `None` makes a new one (holding).
    pub fn create_poa(
        &self,
        name: &str,
        manager: Option<&PoaManager>,
        policies: Policies,
    ) -> Result<Poa, PoaError> {
        self.check_alive()?;
        if policies.request_processing == RequestProcessing::ServantManager {
            return Err(PoaError::InvalidPolicy(
                "USE_SERVANT_MANAGER is not implemented yet",
            ));
        }
        if policies.servant_retention == ServantRetention::NonRetain
            && policies.request_processing == RequestProcessing::ActiveObjectMapOnly
        {
            return Err(PoaError::InvalidPolicy(
                "NON_RETAIN requires USE_DEFAULT_SERVANT or USE_SERVANT_MANAGER",
            ));
        }
        if policies.implicit_activation == ImplicitActivation::Implicit
            && (policies.id_assignment != IdAssignment::System
                || policies.servant_retention != ServantRetention::Retain)
        {
            return Err(PoaError::InvalidPolicy(
                "IMPLICIT_ACTIVATION requires SYSTEM_ID and RETAIN",
            ));
        }
        if name.is_empty() || name.contains('/') {
            return Err(PoaError::InvalidPolicy(
                "POA names must be non-empty, without '/'",
            ));
        }
        let orb = self.orb()?;
        let mut children = lock(&self.inner.children);
        if children.contains_key(name) {
            return Err(PoaError::AdapterAlreadyExists);
        }
        let path = if self.inner.path.is_empty() {
            name.to_string()
        } else {
            format!("{}/{}", self.inner.path, name)
        };
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
            .cloned()
            .ok_or(PoaError::AdapterNonExistent)
    }

    /// Destroys this POA and its children: their references become
    /// `OBJECT_NOT_EXIST`.
    pub fn destroy(&self) {
        if self.inner.destroyed.swap(true, Ordering::AcqRel) {
            return;
        }
        let children: Vec<Poa> = lock(&self.inner.children).drain().map(|(_, c)| c).collect();
        for c in children {
            c.destroy();
        }
        if let Ok(orb) = self.orb() {
            orb.inner().poas.remove(&self.inner);
        }
        let mut aom = wlock(&self.inner.aom);
        *aom = Aom::default();
    }

    fn require_retain(&self) -> Result<(), PoaError> {
        if self.inner.policies.servant_retention != ServantRetention::Retain {
            return Err(PoaError::WrongPolicy);
        }
        Ok(())
    }

    /// Activates `servant` under a new system id.
    pub fn activate_object(&self, servant: Arc<dyn Servant>) -> Result<ObjectId, PoaError> {
        self.check_alive()?;
        self.require_retain()?;
        if self.inner.policies.id_assignment != IdAssignment::System {
            return Err(PoaError::WrongPolicy);
        }
        let unique = self.inner.policies.id_uniqueness == IdUniqueness::Unique;
        let mut aom = wlock(&self.inner.aom);
        if unique && aom.by_servant.contains_key(&servant_addr(&servant)) {
            return Err(PoaError::ServantAlreadyActive);
        }
        let id = alloc_slot(&mut aom, Some(servant.clone()));
        if unique {
            aom.by_servant.insert(servant_addr(&servant), id.clone());
        }
        Ok(id)
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
        let unique = self.inner.policies.id_uniqueness == IdUniqueness::Unique;
        let mut aom = wlock(&self.inner.aom);
        if unique && aom.by_servant.contains_key(&servant_addr(&servant)) {
            return Err(PoaError::ServantAlreadyActive);
        }
        match self.inner.policies.id_assignment {
            IdAssignment::User => {
                if aom.by_user_id.contains_key(id) {
                    return Err(PoaError::ObjectAlreadyActive);
                }
                aom.by_user_id.insert(id.into(), servant.clone());
            }
            IdAssignment::System => {
                let (slot, generation) = parse_system_id(id).ok_or_else(|| {
                    PoaError::System(raise(
                        K::BadParam,
                        minor::BAD_PARAM_INVALID_OBJECT_ID,
                        CompletionStatus::No,
                        format_args!("not a system id of this POA"),
                    ))
                })?;
                let s = aom
                    .slots
                    .get_mut(slot as usize)
                    .filter(|s| s.used && s.generation == generation)
                    .ok_or(PoaError::ObjectNotActive)?;
                if s.servant.is_some() {
                    return Err(PoaError::ObjectAlreadyActive);
                }
                s.servant = Some(servant.clone());
            }
        }
        if unique {
            aom.by_servant.insert(servant_addr(&servant), id.to_vec());
        }
        Ok(())
    }

    /// Deactivates the object `id`; its references become
    /// `OBJECT_NOT_EXIST` (a system id's slot gets a new generation).
    pub fn deactivate_object(&self, id: &[u8]) -> Result<(), PoaError> {
        self.check_alive()?;
        self.require_retain()?;
        let mut aom = wlock(&self.inner.aom);
        let servant = match self.inner.policies.id_assignment {
            IdAssignment::User => aom.by_user_id.remove(id),
            IdAssignment::System => {
                let (slot, generation) = parse_system_id(id).ok_or(PoaError::ObjectNotActive)?;
                let s = aom
                    .slots
                    .get_mut(slot as usize)
                    .filter(|s| s.used && s.generation == generation)
                    .ok_or(PoaError::ObjectNotActive)?;
                let servant = s.servant.take();
                s.used = false;
                s.generation = s.generation.wrapping_add(1);
                aom.free.push(slot);
                servant
            }
        };
        let servant = servant.ok_or(PoaError::ObjectNotActive)?;
        if self.inner.policies.id_uniqueness == IdUniqueness::Unique {
            aom.by_servant.remove(&servant_addr(&servant));
        }
        Ok(())
    }

    /// A reference for `id` with interface `type_id` (no servant needed).
    pub fn create_reference_with_id(
        &self,
        id: &[u8],
        type_id: &str,
    ) -> Result<ObjectRef, PoaError> {
        self.check_alive()?;
        let mut key = Vec::with_capacity(self.inner.key_prefix.len() + id.len());
        key.extend_from_slice(&self.inner.key_prefix);
        key.extend_from_slice(id);
        let orb = self.orb()?;
        Ok(orb.make_reference(type_id, key)?)
    }

    /// A reference with a new system id, not yet activated.
    pub fn create_reference(&self, type_id: &str) -> Result<ObjectRef, PoaError> {
        self.check_alive()?;
        if self.inner.policies.id_assignment != IdAssignment::System {
            return Err(PoaError::WrongPolicy);
        }
        let id = {
            let mut aom = wlock(&self.inner.aom);
            alloc_slot(&mut aom, None)
        };
        self.create_reference_with_id(&id, type_id)
    }

    /// The reference of the active object `id`.
    pub fn id_to_reference(&self, id: &[u8]) -> Result<ObjectRef, PoaError> {
        self.require_retain()?;
        let servant = self.id_to_servant(id)?;
        self.create_reference_with_id(id, servant.repository_id())
    }

    /// The servant of the active object `id` (or the default servant).
    pub fn id_to_servant(&self, id: &[u8]) -> Result<Arc<dyn Servant>, PoaError> {
        self.check_alive()?;
        self.inner.lookup(id).ok_or(PoaError::ObjectNotActive)
    }

    /// The id of an active servant (UNIQUE_ID, RETAIN).
    pub fn servant_to_id(&self, servant: &Arc<dyn Servant>) -> Result<ObjectId, PoaError> {
        self.require_retain()?;
        if self.inner.policies.id_uniqueness != IdUniqueness::Unique
            && self.inner.policies.implicit_activation != ImplicitActivation::Implicit
        {
            return Err(PoaError::WrongPolicy);
        }
        let found = rlock(&self.inner.aom)
            .by_servant
            .get(&servant_addr(servant))
            .cloned();
        match found {
            Some(id) => Ok(id),
            None if self.inner.policies.implicit_activation == ImplicitActivation::Implicit => {
                self.activate_object(servant.clone())
            }
            None => Err(PoaError::ServantNotActive),
        }
    }

    /// The reference of a servant, activating it implicitly if the
    /// policies say so.
    pub fn servant_to_reference(&self, servant: &Arc<dyn Servant>) -> Result<ObjectRef, PoaError> {
        let id = self.servant_to_id(servant)?;
        self.create_reference_with_id(&id, servant.repository_id())
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
        if self.inner.policies.request_processing != RequestProcessing::DefaultServant {
            return Err(PoaError::WrongPolicy);
        }
        *wlock(&self.inner.default_servant) = Some(servant);
        Ok(())
    }

    /// The default servant.
    pub fn get_servant(&self) -> Result<Arc<dyn Servant>, PoaError> {
        if self.inner.policies.request_processing != RequestProcessing::DefaultServant {
            return Err(PoaError::WrongPolicy);
        }
        rlock(&self.inner.default_servant)
            .clone()
            .ok_or(PoaError::NoServant)
    }

    /// Number of objects in the active object map.
    pub fn active_objects(&self) -> usize {
        let aom = rlock(&self.inner.aom);
        aom.slots.iter().filter(|s| s.servant.is_some()).count() + aom.by_user_id.len()
    }
}

fn alloc_slot(aom: &mut Aom, servant: Option<Arc<dyn Servant>>) -> ObjectId {
    if let Some(slot) = aom.free.pop() {
        let s = &mut aom.slots[slot as usize];
        s.used = true;
        s.servant = servant;
        system_id(slot, s.generation)
    } else {
        let slot = aom.slots.len() as u32;
        aom.slots.push(Slot {
            generation: 0,
            used: true,
            servant,
        });
        system_id(slot, 0)
    }
}
