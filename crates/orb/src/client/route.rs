//! What an object reference points at: its target (object key, GIOP
//! version, code sets) and the route (endpoints) whose connection it uses.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use peregrine_cdr::{CodeSets, GiopVersion};
use peregrine_giop::{CodeSetComponentInfo, Endpoint, Ior};

use super::{conn::*, header::*};
use super::{lock, Deadline};
use crate::error::raise;
use crate::orb::Orb;
use crate::runtime::{Cause, Phase};
use crate::runtime::{CompletionStatus, SyncScope, SystemException, SystemExceptionKind as K};
use crate::short_bytes::ShortBytes;

/// The state behind an [`ObjectRef`].
pub(crate) struct RefInner {
    pub(crate) orb: Orb,
    pub(crate) ior: Ior,
    pub(crate) timeout: Option<Duration>,
    /// How far a oneway goes before `invoke_oneway` returns.
    pub(crate) sync: SyncScope,
    /// The target bound from the IOR's profile (on first use; read
    /// without a lock, kept inline so a call touches one allocation less).
    pub(super) bound: std::sync::OnceLock<Target>,
    /// A LOCATION_FORWARD's target, used instead while `forwarded`.
    pub(super) forward: Mutex<Option<Arc<Target>>>,
    pub(super) forwarded: std::sync::atomic::AtomicBool,
}

impl RefInner {
    pub(crate) fn new(orb: Orb, ior: Ior, timeout: Option<Duration>) -> Self {
        Self {
            orb,
            ior,
            timeout,
            sync: SyncScope::Transport,
            bound: std::sync::OnceLock::new(),
            forward: Mutex::new(None),
            forwarded: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Where calls go now: the forwarded target, else the IOR's (bound
    /// on first use, then borrowed without a lock or a reference count).
    #[inline]
    pub(super) fn target(&self) -> Result<TargetRef<'_>, SystemException> {
        match self.bound.get() {
            Some(t) if !self.forwarded.load(Ordering::Acquire) => Ok(TargetRef::Bound(t)),
            _ => self.target_slow(),
        }
    }

    /// `target` when forwarded or not bound yet.
    #[cold]
    fn target_slow(&self) -> Result<TargetRef<'_>, SystemException> {
        if self.forwarded.load(Ordering::Acquire) {
            if let Some(t) = &*lock(&self.forward) {
                return Ok(TargetRef::Forwarded(t.clone()));
            }
        }
        if let Some(t) = self.bound.get() {
            return Ok(TargetRef::Bound(t));
        }
        let orb = self.orb.inner();
        // References to an endpoint already known share its route.
        let new = Target::from_ior(&self.ior, false, orb.config.max_giop, |p| {
            orb.cache.intern(p)
        })?;
        Ok(TargetRef::Bound(self.bound.get_or_init(|| new)))
    }

    /// Sends calls to `t` (a forward), or back to the IOR's target.
    pub(super) fn set_target(&self, t: Option<Arc<Target>>) {
        let mut f = lock(&self.forward);
        self.forwarded.store(t.is_some(), Ordering::Release);
        *f = t;
    }
}

/// One addressable target: a route (shared by every reference with the
/// same endpoints, version and code sets) and an object key.
pub(crate) struct Target {
    pub(super) route: Arc<Route>,
    pub(super) key: ShortBytes,
    pub(super) forwarded: bool,
}

/// A reference's current target: its own, borrowed, or a forward's.
pub(super) enum TargetRef<'a> {
    Bound(&'a Target),
    Forwarded(Arc<Target>),
}

impl std::ops::Deref for TargetRef<'_> {
    type Target = Target;
    fn deref(&self) -> &Target {
        match self {
            TargetRef::Bound(t) => t,
            TargetRef::Forwarded(t) => t,
        }
    }
}

impl std::ops::Deref for Target {
    type Target = Route;
    fn deref(&self) -> &Route {
        &self.route
    }
}

/// How to reach a server: endpoints, GIOP version, code sets and the
/// connection in use. One per distinct (endpoints, version, code sets)
/// in the ORB (`ConnCache::intern`), so a million references to one
/// server cost one route, not a million.
pub(crate) struct Route {
    pub(super) endpoints: Vec<Endpoint>,
    pub(super) version: GiopVersion,
    pub(super) codesets: CodeSets,
    /// The server's CODE_SETS component, if any.
    pub(super) info: Option<CodeSetComponentInfo>,
    /// The IOR had a CODE_SETS component: send a CodeSets context.
    pub(super) negotiate: bool,
    pub(super) conn: Mutex<Option<Arc<ClientConn>>>,
    /// Request headers encoded for this route (`Target::write_header`),
    /// shared by every object reached through it: a reference's first
    /// call costs no header encoding, and calls spread over many objects
    /// touch one set of headers.
    pub(super) headers: HeaderSlots,
}

/// What a route is made of. References whose parts are equal share one
/// route ([`super::cache::ConnCache::intern`]).
#[derive(Hash, PartialEq, Eq)]
pub(super) struct RouteParts {
    pub(super) endpoints: Vec<Endpoint>,
    pub(super) version: GiopVersion,
    pub(super) info: Option<CodeSetComponentInfo>,
}

impl Target {
    /// The target of `ior`'s first IIOP profile, through the route that
    /// `route` makes of its parts (a shared one, or a new one).
    pub(super) fn from_ior(
        ior: &Ior,
        forwarded: bool,
        max: GiopVersion,
        route: impl FnOnce(RouteParts) -> Arc<Route>,
    ) -> Result<Target, SystemException> {
        // Borrowed, not copied: binding reads a few fields of each
        // profile (copying them was half of a reference's first call).
        let profiles = ior.iiop_profiles_borrowed().map_err(|e| {
            raise(
                K::InvObjref,
                peregrine_giop::system_exception::minor::INV_OBJREF_CORRUPTED_PROFILE,
                CompletionStatus::No,
                || {
                    Cause::new(Phase::Resolve)
                        .with_detail(format_args!("malformed IIOP profile in the reference: {e}"))
                },
            )
        })?;
        let Some(first) = profiles.first() else {
            return Err(raise(
                K::InvObjref,
                peregrine_giop::system_exception::minor::INV_OBJREF_NO_IIOP_PROFILE,
                CompletionStatus::No,
                || {
                    Cause::new(Phase::Resolve)
                        .with_detail("the reference has no IIOP profile (nil or foreign)")
                },
            ));
        };
        let mut endpoints = Vec::new();
        for p in profiles.iter().filter(|p| p.object_key == first.object_key) {
            for e in p.endpoints() {
                if !endpoints.contains(&e) {
                    endpoints.push(e);
                }
            }
        }
        let version = match (first.version.major, first.version.minor) {
            (1, 0) => GiopVersion::V1_0,
            (1, 1) => GiopVersion::V1_1,
            _ => GiopVersion::V1_2,
        }
        .min(max);
        let info = ior.code_sets_of(&profiles);
        Ok(Target {
            key: ShortBytes::from(first.object_key.as_slice()),
            route: route(RouteParts {
                endpoints,
                version,
                info,
            }),
            forwarded,
        })
    }
}

impl Route {
    /// A route of its own (not shared through the cache).
    pub(super) fn new(p: RouteParts) -> Route {
        Route {
            negotiate: p.info.is_some() && p.version >= GiopVersion::V1_1,
            codesets: choose_codesets(p.info.as_ref()),
            endpoints: p.endpoints,
            version: p.version,
            info: p.info,
            conn: Mutex::new(None),
            headers: Default::default(),
        }
    }

    /// Whether the route is made of `p`.
    pub(super) fn is_made_of(&self, p: &RouteParts) -> bool {
        self.version == p.version && self.endpoints == p.endpoints && self.info == p.info
    }

    /// The code sets for a new connection, preferring `prefer` (what
    /// already-encoded arguments use) when the server accepts them.
    pub(super) fn codesets_preferring(&self, prefer: Option<CodeSets>) -> CodeSets {
        let Some(p) = prefer else {
            return self.codesets;
        };
        let accepts = p.char == peregrine_cdr::CharCodeSet::Latin1
            || self.info.as_ref().is_some_and(|i| {
                i.for_char_data.native_code_set == p.char.id()
                    || i.for_char_data.conversion_code_sets.contains(&p.char.id())
            });
        if accepts {
            CodeSets {
                char: p.char,
                wchar: self.codesets.wchar,
            }
        } else {
            self.codesets
        }
    }

    /// The connection in use (closed or not: `ClientConn::begin` tells,
    /// and the caller then `drop_conn`s it), else a connection from the
    /// ORB's cache.
    #[inline]
    pub(super) fn conn(
        &self,
        orb: &Orb,
        deadline: Deadline,
    ) -> Result<Arc<ClientConn>, SystemException> {
        if let Some(c) = &*lock(&self.conn) {
            return Ok(c.clone());
        }
        self.connect(orb, deadline.instant())
    }

    /// `conn` when the route has no connection yet.
    #[cold]
    pub(super) fn connect(
        &self,
        orb: &Orb,
        deadline: Instant,
    ) -> Result<Arc<ClientConn>, SystemException> {
        let mut last = None;
        for ep in &self.endpoints {
            match orb.inner().cache.get(orb, ep, deadline) {
                Ok(c) => {
                    *lock(&self.conn) = Some(c.clone());
                    return Ok(c);
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| {
            raise(
                K::Transient,
                peregrine_giop::system_exception::minor::TRANSIENT_NO_USABLE_PROFILE,
                CompletionStatus::No,
                || Cause::new(Phase::Connect).with_detail("no endpoint in the reference"),
            )
        }))
    }

    /// Forgets `c` (found closed) so that the next `conn` takes another.
    pub(super) fn drop_conn(&self, c: &Arc<ClientConn>) {
        let mut g = lock(&self.conn);
        if g.as_ref().is_some_and(|x| Arc::ptr_eq(x, c)) {
            *g = None;
        }
    }
}

/// The code sets a client uses with a server whose IOR says `info`:
/// UTF-8/UTF-16 when the server can take them, else its native ones;
/// without the component, ISO 8859-1 and no wide characters (CORBA's
/// fallback).
pub(crate) fn choose_codesets(info: Option<&CodeSetComponentInfo>) -> CodeSets {
    use peregrine_cdr::{CharCodeSet, CodeSetId, WcharCodeSet};
    let Some(info) = info else {
        return CodeSets {
            char: CharCodeSet::Latin1,
            wchar: None,
        };
    };
    let c = &info.for_char_data;
    let has = |comp: &peregrine_giop::CodeSetComponent, id: CodeSetId| {
        comp.native_code_set == id || comp.conversion_code_sets.contains(&id)
    };
    let char = if has(c, CodeSetId::UTF_8) {
        CharCodeSet::Utf8
    } else {
        CharCodeSet::Latin1
    };
    let wc = &info.for_wchar_data;
    let wchar = if has(wc, CodeSetId::UTF_16) {
        Some(WcharCodeSet::Utf16)
    } else if has(wc, CodeSetId::UCS_2) {
        Some(WcharCodeSet::Ucs2)
    } else {
        None
    };
    CodeSets { char, wchar }
}
