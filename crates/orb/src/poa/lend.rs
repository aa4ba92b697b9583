//! Lending active object map servants to upcalls without touching their
//! reference counts.
//!
//! Why: with many objects, a request for an object not called recently
//! misses on the servant's `ArcInner` just to count the upcall's hold
//! (and the resolve cache's `Weak`), a cache line and a page that
//! servants which do not read their state on that operation would
//! otherwise never touch (T2: ~0.2-0.5 us per call at 1,000,000 objects).
//!
//! How (hazard slots): each [`super::ResolveCache`] (one per connection
//! thread or pool worker; an upcall borrows it, so its uses never nest)
//! owns a slot naming the servant its current upcall runs on. A lookup
//! publishes the servant's address in its slot while it holds the map's
//! read lock; a resolve-cache hit publishes it and then checks the epoch
//! (both sequentially consistent). Whoever removes servants from a map
//! (deactivation, destroy) first bumps the epoch, then [`Hazards::retire`]s
//! them: a servant no slot names is dropped at once, as before; one that
//! a slot names waits in `deferred` until the upcall ends and clears its
//! slot ([`Hazards::release`]). So a servant is kept only as long as the
//! upcalls running on it, as with a counted `Arc`, and an idle connection
//! holds nothing.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::client::lock;
use crate::runtime::Servant;

/// One thread's slot: the address of the servant its upcall runs on
/// (0: none).
pub(crate) type Slot = AtomicUsize;

/// The address a slot holds for `s`.
#[inline]
pub(crate) fn addr(s: &Arc<dyn Servant>) -> usize {
    Arc::as_ptr(s) as *const () as usize
}

/// Every slot of one ORB, and the servants removed while named by one.
#[derive(Default)]
pub(crate) struct Hazards {
    slots: Mutex<Vec<Arc<Slot>>>,
    deferred: Mutex<Vec<Arc<dyn Servant>>>,
    /// `deferred` is not empty (read by every ending lent upcall).
    pending: AtomicBool,
}

impl Hazards {
    pub(crate) fn register(&self) -> Arc<Slot> {
        let s = Arc::new(Slot::default());
        lock(&self.slots).push(s.clone());
        s
    }

    pub(crate) fn unregister(&self, slot: &Arc<Slot>) {
        lock(&self.slots).retain(|s| !Arc::ptr_eq(s, slot));
    }

    /// Drops `removed` (servants taken out of a map after an epoch bump)
    /// unless an upcall may be running on one of them.
    pub(crate) fn retire(&self, removed: impl IntoIterator<Item = Arc<dyn Servant>>) {
        {
            let mut d = lock(&self.deferred);
            let n = d.len();
            d.extend(removed);
            if d.len() == n {
                return;
            }
            self.pending.store(true, Ordering::SeqCst);
        }
        self.collect();
    }

    /// Ends a lent upcall: clears its slot, then drops deferred servants
    /// no slot names any more. (Clear, then read `pending`; `retire`
    /// sets `pending`, then reads the slots: one of the two sees the
    /// other, so no deferred servant is left behind.)
    #[inline]
    pub(crate) fn release(&self, slot: &Slot) {
        slot.store(0, Ordering::SeqCst);
        if self.pending.load(Ordering::SeqCst) {
            self.collect();
        }
    }

    #[cold]
    fn collect(&self) {
        let free: Vec<Arc<dyn Servant>> = {
            let mut d = lock(&self.deferred);
            let slots = lock(&self.slots);
            let named = |s: &Arc<dyn Servant>| {
                let a = addr(s);
                slots.iter().any(|h| h.load(Ordering::SeqCst) == a)
            };
            let (keep, free) = d.drain(..).partition(named);
            *d = keep;
            self.pending.store(!d.is_empty(), Ordering::SeqCst);
            free
        };
        // Outside the locks: a servant's drop may call into the POA.
        drop(free);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::poa::TestServant as S;
    use std::sync::atomic::AtomicUsize;

    /// The uncounted alias the resolve cache and lent upcalls use: the
    /// same servant, no count taken, none given back (runs under Miri).
    #[test]
    fn an_alias_neither_counts_nor_drops() {
        let drops = Arc::new(AtomicUsize::new(0));
        let s: Arc<dyn Servant> = Arc::new(S(Some(drops.clone())));
        {
            let a = super::super::alias(&s);
            assert!(Arc::ptr_eq(&a, &s));
            assert_eq!(a.repository_id(), "IDL:S:1.0");
            assert_eq!(Arc::strong_count(&s), 1);
        }
        // The alias went out of scope without giving a count back.
        assert_eq!(Arc::strong_count(&s), 1);
        assert_eq!(drops.load(Ordering::SeqCst), 0);
        drop(s);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_retired_servant_lives_until_the_upcalls_on_it_end() {
        let h = Hazards::default();
        let drops = Arc::new(AtomicUsize::new(0));
        let a: Arc<dyn Servant> = Arc::new(S(Some(drops.clone())));
        let b: Arc<dyn Servant> = Arc::new(S(Some(drops.clone())));
        let (s1, s2) = (h.register(), h.register());
        // Two upcalls on `a`, none on `b`.
        s1.store(addr(&a), Ordering::SeqCst);
        s2.store(addr(&a), Ordering::SeqCst);
        h.retire([a, b]);
        assert_eq!(drops.load(Ordering::SeqCst), 1, "b at once, a kept");
        h.release(&s1);
        assert_eq!(drops.load(Ordering::SeqCst), 1, "a still named by s2");
        h.release(&s2);
        assert_eq!(drops.load(Ordering::SeqCst), 2);
        assert!(!h.pending.load(Ordering::SeqCst));
        h.unregister(&s1);
        h.unregister(&s2);
        assert!(lock(&h.slots).is_empty());
    }
}
