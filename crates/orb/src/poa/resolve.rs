//! Resolving a request's object key to its servant: the per-thread
//! resolve cache (a repeated key costs a compare, not a lookup), the
//! lookup through the POA registry and the active object map, servant
//! managers, default servants and the POA manager's state, and the
//! upcall guard that keeps the servant and its POA alive while it runs.

use super::*;
/// What a request's object key resolved to.
pub(crate) enum Resolution<'a> {
    /// Call this servant.
    Upcall(Upcall<'a>),
    /// Answer LOCATION_FORWARD to this IOR (`ForwardRequest` from a
    /// servant manager, or a key bound with `Orb::bind_object_key`).
    Forward(Ior),
}

/// An `Arc` an upcall either owns (resolved the slow way) or borrows
/// from the thread's [`ResolveCache`] (no reference count change).
pub(crate) enum Held<'a, T: ?Sized> {
    /// Counted for this request.
    Owned(Arc<T>),
    /// Lent by the cache, which outlives the upcall.
    Lent(&'a Arc<T>),
}

impl<T: ?Sized> std::ops::Deref for Held<'_, T> {
    type Target = Arc<T>;

    #[inline]
    fn deref(&self) -> &Arc<T> {
        match self {
            Held::Owned(a) => a,
            Held::Lent(a) => a,
        }
    }
}

/// One request's hold on its POA and servant: keeps the request counted
/// while the servant runs ([`Upcall::run`] makes it the POA Current), and
/// on drop runs any etherealization that was waiting for the request to
/// finish (activators).
pub(crate) struct Upcall<'a> {
    /// Counted unless `lent`.
    pub(crate) servant: ManuallyDrop<Arc<dyn Servant>>,
    /// The servant is the active object map's, not counted: this
    /// thread's hazard slot names it until the upcall ends ([`lend`]).
    lent: Option<&'a lend::Slot>,
    pub(crate) object_id: &'a [u8],
    operation: &'a str,
    poa: Held<'a, PoaInner>,
    /// Boxed: rare, and an empty `Option<Box>` drops with one test.
    locator: Option<Box<(Arc<dyn ServantLocator>, Cookie)>>,
    /// Counted in `activations.busy`.
    busy: bool,
}

impl Upcall<'_> {
    /// Runs the upcall `f` with this request as the POA Current, then
    /// `postinvoke` (servant locators) still inside it, whatever `f`
    /// returned; `postinvoke`'s error replaces `f`'s result.
    #[inline]
    pub(crate) fn run(
        &mut self,
        f: impl FnOnce(&Arc<dyn Servant>) -> Result<(), SystemException>,
    ) -> Result<(), SystemException> {
        let locator = self.locator.take();
        let this = &*self;
        current::enter(&this.poa, &this.servant, this.object_id, || {
            let r = f(&this.servant);
            match locator {
                None => r,
                Some(l) => {
                    let (loc, cookie) = *l;
                    this.locator_postinvoke(loc, cookie).and(r)
                }
            }
        })
    }

    #[inline(never)]
    fn locator_postinvoke(
        &self,
        loc: Arc<dyn ServantLocator>,
        cookie: Cookie,
    ) -> Result<(), SystemException> {
        let poa = Poa {
            inner: Arc::clone(&self.poa),
        };
        let servant = Arc::clone(&self.servant);
        match catch_unwind(AssertUnwindSafe(|| {
            loc.postinvoke(self.object_id, &poa, self.operation, cookie, servant)
        })) {
            Ok(r) => r,
            Err(_) => Err(panicked("ServantLocator::postinvoke")),
        }
    }
}

impl Upcall<'_> {
    /// `run` was never called: the servant did not run, but a locator's
    /// preinvoke is always paired with its postinvoke.
    #[cold]
    fn postinvoke_unrun(&mut self) {
        if let Some(l) = self.locator.take() {
            let (loc, cookie) = *l;
            let (poa, servant) = (Arc::clone(&self.poa), Arc::clone(&self.servant));
            current::enter(&poa, &servant, self.object_id, || {
                let _ = self.locator_postinvoke(loc, cookie);
            });
        }
    }
}

impl Drop for Upcall<'_> {
    #[inline]
    fn drop(&mut self) {
        match self.lent {
            // First: nothing below uses the servant of a lent upcall (no
            // locator, not busy), and a `destroy` waiting for this
            // request then finds the servant unnamed and drops it itself.
            Some(slot) => self.poa.hazards.release(slot),
            // SAFETY: dropped once, here; not lent, so counted.
            None => unsafe { ManuallyDrop::drop(&mut self.servant) },
        }
        if self.locator.is_some() {
            self.postinvoke_unrun();
        }
        if self.busy {
            self.poa.unbusy(self.object_id);
        }
        self.poa.request_done();
    }
}

/// Counts a request in its POA until dropped (before the upcall exists).
pub(super) struct Inflight(pub(super) Option<Arc<PoaInner>>);

impl Inflight {
    /// Counts a request in `poa` (already counted by the caller's `Arc`).
    fn new(poa: Arc<PoaInner>) -> Self {
        poa.inflight.fetch_add(1, Ordering::SeqCst);
        Inflight(Some(poa))
    }

    fn poa(&self) -> &Arc<PoaInner> {
        self.0.as_ref().expect("until taken")
    }

    /// The POA, still counted: the caller's `Upcall` ends the count.
    fn into_poa(mut self) -> Arc<PoaInner> {
        self.0.take().expect("taken once")
    }

    pub(super) fn upcall<'a>(
        self,
        servant: Arc<dyn Servant>,
        object_id: &'a [u8],
        operation: &'a str,
        locator: Option<(Arc<dyn ServantLocator>, Cookie)>,
        busy: bool,
    ) -> Upcall<'a> {
        Upcall {
            servant: ManuallyDrop::new(servant),
            lent: None,
            object_id,
            operation,
            poa: Held::Owned(self.into_poa()),
            locator: locator.map(Box::new),
            busy,
        }
    }
}

impl Drop for Inflight {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            p.request_done();
        }
    }
}

/// The last object a connection's thread (or a pool worker) resolved to
/// a servant in an active object map: its key, POA and servant, valid
/// while the ORB's POA epoch ([`PoaRegistry::epoch`]) is the one it was
/// resolved under. Every activation change that could make the entry
/// wrong (deactivation, POA creation and destruction) bumps the epoch;
/// a hit checks the key bytes, the epoch and the POA manager's state (the
/// state is read per request, so holding, discarding and inactive
/// managers act at once). Clients mostly call one object many times in a
/// row (request trains, single-object clients): a hit skips the key
/// parse, the registry and map locks and the hash.
///
/// The servant is not counted (neither strongly nor weakly: either
/// touches its `ArcInner`, a cache line and page of its own when many
/// objects are called in turn): it is used only after this thread's
/// hazard slot names it and the epoch is still the entry's, and a
/// servant removed from its map meanwhile waits for the slot to clear
/// ([`lend`]). A deactivated servant is dropped when the POA lets go of
/// it and its requests finish, as without the cache, not when this
/// thread next resolves something. (The POA is held strongly: after
/// `destroy` it owns nothing a user can observe.)
#[derive(Default)]
pub(crate) struct ResolveCache {
    key: Vec<u8>,
    entry: Option<Cached>,
    /// This thread's hazard slot, registered on first use.
    hazard: Option<(Arc<lend::Hazards>, Arc<lend::Slot>)>,
}

impl Drop for ResolveCache {
    fn drop(&mut self) {
        if let Some((h, slot)) = &self.hazard {
            h.unregister(slot);
        }
    }
}

struct Cached {
    /// Where the object id starts in `key`.
    id_at: usize,
    epoch: u64,
    poa: Arc<PoaInner>,
    /// Not counted (see [`ResolveCache`]); may dangle once the epoch
    /// moved on, and is never dropped.
    servant: ManuallyDrop<Arc<dyn Servant>>,
    /// `lend::addr(&servant)`, for the hazard slot.
    addr: usize,
}

/// `s` again, without a count: valid while the map holds `s` or a
/// hazard slot names it.
#[inline]
pub(super) fn alias(s: &Arc<dyn Servant>) -> ManuallyDrop<Arc<dyn Servant>> {
    // SAFETY: a bitwise copy of a live `Arc`; the alias is never
    // dropped, so the count is never decremented for it.
    ManuallyDrop::new(unsafe { std::ptr::read(s) })
}

impl ResolveCache {
    /// The cached resolution of `key` (the request then counted in the
    /// POA and the servant named in this thread's hazard slot, until the
    /// `Hit` drops) if `key` is the cached object and nothing changed
    /// since it was resolved; `None` leaves nothing counted, and the
    /// caller goes through [`resolve`].
    #[inline(always)]
    pub(crate) fn lookup<'a>(&'a self, orb: &OrbInner, key: &'a [u8]) -> Option<Hit<'a>> {
        if !same_key(&self.key, key) {
            return None;
        }
        self.claim(orb, key)
    }

    /// [`ResolveCache::lookup`], and on a miss the cache refilled with
    /// `key` ([`refill`]) and looked up again.
    #[inline(always)]
    pub(crate) fn lookup_or_refill<'a>(
        &'a mut self,
        orb: &OrbInner,
        key: &'a [u8],
    ) -> Option<Hit<'a>> {
        if !same_key(&self.key, key) && !refill(orb, self, key) {
            return None;
        }
        self.claim(orb, key)
    }

    /// `lookup` once `key` is known to be the cached one.
    #[inline(always)]
    fn claim<'a>(&'a self, orb: &OrbInner, key: &'a [u8]) -> Option<Hit<'a>> {
        let (Some(c), Some((_, slot))) = (&self.entry, &self.hazard) else {
            return None;
        };
        let object_id = key.get(c.id_at..)?;
        // Counted before the epoch is read (both sequentially consistent,
        // as `destroy` bumps the epoch before it waits for the count): a
        // destroy either sees this request or this request sees it. The
        // slot likewise: a deactivation bumps the epoch, then reads the
        // slots, so it either sees this one or this request sees the bump.
        c.poa.inflight.fetch_add(1, Ordering::SeqCst);
        slot.store(c.addr, Ordering::SeqCst);
        if c.epoch == orb.poas.epoch.load(Ordering::SeqCst)
            && c.poa.manager.state() == PoaManagerState::Active
        {
            // Unchanged epoch: the map still holds the servant (it is
            // only let go of after a deactivation, which bumps it).
            return Some(Hit {
                poa: &c.poa,
                servant: &c.servant,
                slot,
                object_id,
            });
        }
        c.poa.hazards.release(slot);
        c.poa.request_done();
        None
    }
}

impl ResolveCache {
    /// The cached entry's POA and `key`'s object id, if `key` has the
    /// entry's POA prefix and no POA was created or removed since the
    /// entry was made (`epoch`, read before): another object of the same
    /// POA (round robin over many objects) needs no registry lookup. Key
    /// prefixes are self-delimiting (`key::parse`), so equal prefix bytes
    /// name the same POA and split the key at the same place.
    #[inline]
    fn same_poa<'k>(&self, key: &'k [u8], epoch: u64) -> Option<(Arc<PoaInner>, &'k [u8])> {
        let c = self.entry.as_ref()?;
        if c.epoch != epoch || !same_key(self.key.get(..c.id_at)?, key.get(..c.id_at)?) {
            return None;
        }
        Some((c.poa.clone(), key.get(c.id_at..)?))
    }
}

/// A request resolved by this thread's [`ResolveCache`]: counted in its
/// POA, its servant named in the thread's hazard slot, both lent by the
/// cache. The common case, so it carries none of [`Upcall`]'s rarer
/// parts (locator, activator accounting, an owned servant): building,
/// running and dropping it is a few loads and the two releases.
pub(crate) struct Hit<'a> {
    poa: &'a Arc<PoaInner>,
    servant: &'a Arc<dyn Servant>,
    slot: &'a lend::Slot,
    /// The object id within the request's key.
    pub(crate) object_id: &'a [u8],
}

impl Hit<'_> {
    /// Runs the upcall `f` with this request as the POA Current.
    #[inline]
    pub(crate) fn run<R>(&self, f: impl FnOnce(&Arc<dyn Servant>) -> R) -> R {
        current::enter(self.poa, self.servant, self.object_id, || f(self.servant))
    }
}

impl Drop for Hit<'_> {
    #[inline]
    fn drop(&mut self) {
        // As a lent `Upcall`: the slot first, then the count (a `destroy`
        // waiting for the count then finds the servant unnamed).
        self.poa.hazards.release(self.slot);
        self.poa.request_done();
    }
}

/// `to.copy_from_slice(from)` for slices of the same length, inline for
/// 4 to 16 bytes (two overlapping words, as `same_key` reads them).
#[inline(always)]
pub(super) fn copy_short(to: &mut [u8], from: &[u8]) {
    let n = from.len();
    if n != to.len() {
        return;
    }
    if (8..=16).contains(&n) {
        let word = |s: &[u8], at: usize| u64::from_ne_bytes(s[at..at + 8].try_into().expect("8"));
        let (a, b) = (word(from, 0), word(from, n - 8));
        to[..8].copy_from_slice(&a.to_ne_bytes());
        to[n - 8..].copy_from_slice(&b.to_ne_bytes());
    } else if (4..8).contains(&n) {
        let half = |s: &[u8], at: usize| u32::from_ne_bytes(s[at..at + 4].try_into().expect("4"));
        let (a, b) = (half(from, 0), half(from, n - 4));
        to[..4].copy_from_slice(&a.to_ne_bytes());
        to[n - 4..].copy_from_slice(&b.to_ne_bytes());
    } else {
        to.copy_from_slice(from);
    }
}

/// `a == b` for object keys and user ids, inline: a word at a time, the
/// last word overlapping (Peregrine's keys are 15-30 bytes, user ids often
/// 4-8; a `memcmp` call costs more than the comparison).
#[inline]
pub(super) fn same_key(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n < 4 {
        return a.iter().zip(b).all(|(x, y)| x == y);
    }
    if n < 8 {
        let half = |s: &[u8], at: usize| u32::from_ne_bytes(s[at..at + 4].try_into().expect("4"));
        return half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4);
    }
    let word = |s: &[u8], at: usize| u64::from_ne_bytes(s[at..at + 8].try_into().expect("8"));
    // Keys of up to 16 bytes without a loop, longer ones from the end
    // (where keys differ: the object id follows the shared POA prefix).
    if word(a, n - 8) != word(b, n - 8) || word(a, 0) != word(b, 0) {
        return false;
    }
    let mut at = 8;
    while at + 8 < n {
        if word(a, at) != word(b, at) {
            return false;
        }
        at += 8;
    }
    true
}

/// Makes `key` the cache's entry if it names a servant in the active
/// object map of a POA whose manager is active, running nothing (no
/// servant manager, no wait); the caller then takes the request through
/// [`ResolveCache::lookup`] like any hit, without building an [`Upcall`]
/// (round robin over many objects: every request a miss). False for
/// anything else, which [`resolve`] then handles (a POA with a servant
/// manager or default servant pays the registry lookup twice).
#[inline(never)]
pub(crate) fn refill(orb: &OrbInner, cache: &mut ResolveCache, key: &[u8]) -> bool {
    // Read before the lookup, as in `resolve`.
    let epoch = orb.poas.epoch.load(Ordering::SeqCst);
    if cache.hazard.is_none() {
        let h = orb.poas.hazards.clone();
        let slot = h.register();
        cache.hazard = Some((h, slot));
    }
    let ResolveCache { key: k, entry, .. } = cache;
    // Not counted: `lookup` names the servant in the hazard slot and
    // finds it still there by the unchanged epoch before the upcall uses
    // it.
    if let Some(c) = entry.as_mut() {
        if c.epoch == epoch && k.len() >= c.id_at && key.len() >= c.id_at {
            let (prefix, id) = key.split_at(c.id_at);
            if same_key(&k[..c.id_at], prefix) {
                // Another object of the entry's POA (`same_poa`): the
                // entry keeps its POA, epoch and prefix.
                let Some(servant) = servable(&c.poa, id) else {
                    return false;
                };
                if k.len() == key.len() {
                    // The same id length (system ids, ttcp's user ids):
                    // a word at a time where `extend_from_slice` would
                    // call `memcpy`.
                    copy_short(&mut k[c.id_at..], id);
                } else {
                    k.truncate(c.id_at);
                    k.extend_from_slice(id);
                }
                c.addr = lend::addr(&servant);
                c.servant = servant;
                return true;
            }
        }
    }
    let Some((poa, id)) = orb.poas.find(orb, key) else {
        return false;
    };
    let Some(servant) = servable(&poa, id) else {
        return false;
    };
    k.clear();
    k.extend_from_slice(key);
    *entry = Some(Cached {
        id_at: key.len() - id.len(),
        epoch,
        poa,
        addr: lend::addr(&servant),
        servant,
    });
    true
}

/// The servant of `id` in `poa`'s active object map (uncounted, see
/// [`alias`]) if `poa` serves requests from it right now: not destroyed,
/// its manager active, no servant manager in the way.
#[inline(always)]
fn servable(poa: &PoaInner, id: &[u8]) -> Option<ManuallyDrop<Arc<dyn Servant>>> {
    if poa.destroyed.load(Ordering::SeqCst)
        || poa.manager.state() != PoaManagerState::Active
        || poa.policies.servant_retention != ServantRetention::Retain
        || poa.policies.request_processing == RequestProcessing::ServantManager
    {
        return None;
    }
    rlock(&poa.aom).get(id).map(alias)
}

/// Finds the servant for `key`, honouring the POA manager's state
/// (waiting while it holds, up to `hold_max`) and the POA's request
/// processing policy (active object map, default servant, servant
/// activator or locator). `cache` is the calling thread's: callers try
/// [`ResolveCache::lookup`] first (the common case, without building an
/// [`Upcall`]); an active object map hit here becomes its entry.
///
/// Out of line: the hot path is the caller's cache hit.
#[inline(never)]
pub(crate) fn resolve<'a>(
    orb: &OrbInner,
    cache: &'a mut ResolveCache,
    key: &'a [u8],
    operation: &'a str,
    hold_max: Duration,
) -> Result<Resolution<'a>, SystemException> {
    // Read before the lookup: an entry made from it is at worst older
    // than the map it came from (and missed next time), never newer.
    let epoch = orb.poas.epoch.load(Ordering::SeqCst);
    let (poa, id) = match cache.same_poa(key, epoch) {
        Some(found) => found,
        None => {
            let Some(found) = orb.poas.find(orb, key) else {
                // Not a key of a live POA: perhaps a readable name bound
                // with `Orb::bind_object_key` (looked up only here, off
                // the path of every POA key).
                if let Some(ior) = orb.bound_key(key) {
                    return Ok(Resolution::Forward(ior));
                }
                return Err(not_exist(format_args!(
                    "no POA for object key {}",
                    peregrine_giop::corbaloc::escape_key(key)
                )));
            };
            found
        }
    };
    let inflight = Inflight::new(poa);
    let poa = inflight.poa();
    if poa.destroyed.load(Ordering::SeqCst) {
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
                    || {
                        Cause::new(Phase::Dispatch).with_detail(format_args!(
                            "POA {:?} held requests for too long",
                            poa.path
                        ))
                    },
                ))
            }
            s => return Err(refused(poa, s)),
        },
        s => return Err(refused(poa, s)),
    }
    if cache.hazard.is_none() {
        let h = orb.poas.hazards.clone();
        let slot = h.register();
        cache.hazard = Some((h, slot));
    }
    let p = poa.policies;
    match (p.servant_retention, p.request_processing) {
        (ServantRetention::Retain, RequestProcessing::ServantManager) => {
            let poa = poa.clone();
            poa.activator_upcall(inflight, id, operation)
        }
        (ServantRetention::NonRetain, RequestProcessing::ServantManager) => {
            let Some(ServantManager::Locator(loc)) = poa.servant_manager.get().cloned() else {
                return Err(no_manager(poa));
            };
            let adapter = Poa { inner: poa.clone() };
            match catch_unwind(AssertUnwindSafe(|| loc.preinvoke(id, &adapter, operation))) {
                Ok(Ok((servant, cookie))) => Ok(Resolution::Upcall(inflight.upcall(
                    servant,
                    id,
                    operation,
                    Some((loc, cookie)),
                    false,
                ))),
                Ok(Err(ServantManagerError::ForwardRequest(r))) => {
                    Ok(Resolution::Forward(r.ior().clone()))
                }
                Ok(Err(ServantManagerError::System(e))) => Err(e),
                Err(_) => Err(panicked("ServantLocator::preinvoke")),
            }
        }
        (retention, rp) => {
            let found = if retention == ServantRetention::Retain {
                let aom = rlock(&poa.aom);
                match aom.get(id) {
                    Some(s) => {
                        // Named before the read lock is released: whoever
                        // removes `s` takes the write lock after, then
                        // reads the slots.
                        let (_, slot) = cache.hazard.as_ref().expect("registered above");
                        slot.store(lend::addr(s), Ordering::SeqCst);
                        Ok(alias(s))
                    }
                    None => Err(aom.valid(id)),
                }
            } else {
                Err(true)
            };
            let servant = match found {
                Ok(s) => {
                    // An active object map entry changes only with an
                    // epoch bump: remember it.
                    let ResolveCache {
                        key: k,
                        entry,
                        hazard,
                    } = cache;
                    k.clear();
                    k.extend_from_slice(key);
                    let c = entry.insert(Cached {
                        id_at: key.len() - id.len(),
                        epoch,
                        poa: inflight.into_poa(),
                        addr: lend::addr(&s),
                        servant: alias(&s),
                    });
                    return Ok(Resolution::Upcall(Upcall {
                        servant: s,
                        lent: Some(&hazard.as_ref().expect("registered above").1),
                        object_id: id,
                        operation,
                        poa: Held::Lent(&c.poa),
                        locator: None,
                        busy: false,
                    }));
                }
                Err(valid) if valid && rp == RequestProcessing::DefaultServant => {
                    match rlock(&poa.default_servant).clone() {
                        Some(s) => s,
                        None => {
                            return Err(raise(
                                K::ObjAdapter,
                                minor::OBJ_ADAPTER_NO_DEFAULT_SERVANT,
                                CompletionStatus::No,
                                || {
                                    Cause::new(Phase::Dispatch).with_detail(format_args!(
                                        "POA {:?} has no default servant",
                                        poa.path
                                    ))
                                },
                            ))
                        }
                    }
                }
                Err(_) => return Err(no_such_object(poa, id)),
            };
            Ok(Resolution::Upcall(
                inflight.upcall(servant, id, operation, None, false),
            ))
        }
    }
}

pub(super) fn no_manager(poa: &PoaInner) -> SystemException {
    raise(
        K::ObjAdapter,
        minor::OBJ_ADAPTER_NO_SERVANT_MANAGER,
        CompletionStatus::No,
        || {
            Cause::new(Phase::Dispatch)
                .with_detail(format_args!("POA {:?} has no servant manager", poa.path))
        },
    )
}

/// The answer to a LocateRequest.
pub(crate) enum Located {
    /// `OBJECT_HERE`: an object that exists now or that a default servant
    /// or servant manager may serve.
    Here,
    /// `UNKNOWN_OBJECT`.
    Unknown,
    /// `OBJECT_FORWARD`: a name bound with `Orb::bind_object_key`.
    Forward(Ior),
}

/// Where the object `key` names is (LocateRequest).
pub(crate) fn locate(orb: &OrbInner, key: &[u8]) -> Located {
    let Some((poa, id)) = orb.poas.find(orb, key) else {
        return orb
            .bound_key(key)
            .map_or(Located::Unknown, Located::Forward);
    };
    if poa.destroyed.load(Ordering::Acquire) {
        return Located::Unknown;
    }
    let p = poa.policies;
    if !p.retain() {
        return Located::Here;
    }
    let aom = rlock(&poa.aom);
    if aom.get(id).is_some()
        || (p.request_processing != RequestProcessing::ActiveObjectMapOnly && aom.valid(id))
    {
        Located::Here
    } else {
        Located::Unknown
    }
}

/// True if `key` has the form of a key made by a POA (whether or not the
/// POA exists): such a key can never reach a bound name.
pub(crate) fn is_poa_key(key: &[u8]) -> bool {
    key::parse(key).is_some()
}

fn refused(poa: &PoaInner, s: PoaManagerState) -> SystemException {
    match s {
        PoaManagerState::Discarding => no_resource(format_args!(
            "the manager of POA {:?} is discarding requests",
            poa.path
        )),
        _ => raise(
            K::ObjAdapter,
            minor::OBJ_ADAPTER_POA_MANAGER_INACTIVE,
            CompletionStatus::No,
            || {
                Cause::new(Phase::Dispatch).with_detail(format_args!(
                    "the manager of POA {:?} is inactive",
                    poa.path
                ))
            },
        ),
    }
}

/// Removes an id from the incarnations in progress (also on unwind).
pub(super) struct Incarnating<'p> {
    pub(super) poa: &'p PoaInner,
    pub(super) id: &'p [u8],
}

impl Drop for Incarnating<'_> {
    fn drop(&mut self) {
        lock(&self.poa.activations).incarnating.remove(self.id);
        self.poa.activations_cv.notify_all();
    }
}
