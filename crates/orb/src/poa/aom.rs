//! The active object map: servants by object id.
//!
//! System ids index a slot vector directly (slot + generation, no
//! hashing); user ids go through a hash map. For UNIQUE_ID the map also
//! knows each servant's id (keyed by the servant's address with a cheap
//! integer hash: the addresses are ours, not the network's).
//!
//! User ids are kept inline next to their servant ([`UserIdMap`]): a
//! request for an object not called recently then costs one miss in the
//! table and one on the servant (T2: 1,000,000 objects called round
//! robin), not four (control bytes, entry, boxed id, servant).

use std::collections::HashMap;

use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use super::key::{parse_system_id, system_id};
use super::user_ids::UserIdMap;
use super::{ObjectId, PoaError, Policies};
use crate::runtime::{Cause, Phase, Servant};
use crate::short_bytes::ShortBytes;

/// A hasher for servant addresses (a 64-bit finalizer: the low bits of
/// heap addresses are always zero, so they must be mixed).
#[derive(Default)]
pub(crate) struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        let mut x = self.0;
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^= x >> 33;
        x
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = n as u64;
    }
}

type AddrMap<V> = HashMap<usize, V, BuildHasherDefault<AddrHasher>>;

pub(crate) fn servant_addr(s: &Arc<dyn Servant>) -> usize {
    Arc::as_ptr(s) as *const () as usize
}

/// One system-id slot: free, reserved (a reference exists, no servant),
/// or active.
struct Slot {
    servant: Option<Arc<dyn Servant>>,
    generation: u32,
    used: bool,
}

/// The map itself (behind the POA's `RwLock`).
pub(crate) struct Aom {
    system: bool,
    unique: bool,
    /// Count the ids of each servant (MULTIPLE_ID with a servant
    /// activator: `remaining_activations`).
    count: bool,
    slots: Vec<Slot>,
    free: Vec<u32>,
    by_user_id: UserIdMap,
    /// UNIQUE_ID + SYSTEM_ID: servant -> slot.
    slot_of: AddrMap<u32>,
    /// UNIQUE_ID + USER_ID: servant -> id.
    id_of: AddrMap<ShortBytes>,
    /// Servant -> number of ids it incarnates (see `count`).
    counts: AddrMap<u32>,
    active: usize,
}

/// What deactivation removed.
pub(crate) struct Removed {
    pub(crate) servant: Arc<dyn Servant>,
    /// The servant still incarnates other ids.
    pub(crate) remaining: bool,
}

impl Aom {
    pub(crate) fn new(p: &Policies, servant_manager: bool) -> Self {
        Aom {
            system: p.system_id(),
            unique: p.unique(),
            count: !p.unique() && servant_manager,
            slots: Vec::new(),
            free: Vec::new(),
            by_user_id: UserIdMap::default(),
            slot_of: AddrMap::default(),
            id_of: AddrMap::default(),
            counts: AddrMap::default(),
            active: 0,
        }
    }

    fn slot(&self, id: &[u8]) -> Option<(u32, &Slot)> {
        let (slot, generation) = parse_system_id(id)?;
        let s = self.slots.get(slot as usize)?;
        (s.used && s.generation == generation).then_some((slot, s))
    }

    /// The servant active under `id`.
    #[inline]
    pub(crate) fn get(&self, id: &[u8]) -> Option<&Arc<dyn Servant>> {
        if self.system {
            self.slot(id)?.1.servant.as_ref()
        } else {
            self.by_user_id.get(id)
        }
    }

    /// True if `id` may name an object of this POA: any user id, or a
    /// system id whose slot is allocated with this generation.
    pub(crate) fn valid(&self, id: &[u8]) -> bool {
        !self.system || self.slot(id).is_some()
    }

    /// Number of active objects.
    pub(crate) fn len(&self) -> usize {
        self.active
    }

    /// True if `servant` is active (UNIQUE_ID only: otherwise false).
    pub(crate) fn is_active(&self, servant: &Arc<dyn Servant>) -> bool {
        let a = servant_addr(servant);
        self.unique && (self.slot_of.contains_key(&a) || self.id_of.contains_key(&a))
    }

    /// The id of an active servant (UNIQUE_ID).
    pub(crate) fn id_of(&self, servant: &Arc<dyn Servant>) -> Option<ObjectId> {
        let a = servant_addr(servant);
        if let Some(&slot) = self.slot_of.get(&a) {
            let g = self.slots[slot as usize].generation;
            return Some(system_id(slot, g).to_vec());
        }
        self.id_of.get(&a).map(|id| id.to_vec())
    }

    fn note_active(&mut self, servant: &Arc<dyn Servant>, slot: u32, id: &[u8]) {
        self.active += 1;
        let a = servant_addr(servant);
        if self.unique {
            if self.system {
                self.slot_of.insert(a, slot);
            } else {
                self.id_of.insert(a, id.into());
            }
        } else if self.count {
            *self.counts.entry(a).or_insert(0) += 1;
        }
    }

    /// Forgets `servant`'s activation; true if it has others left.
    fn note_inactive(&mut self, servant: &Arc<dyn Servant>) -> bool {
        self.active -= 1;
        let a = servant_addr(servant);
        if self.unique {
            self.slot_of.remove(&a);
            self.id_of.remove(&a);
            false
        } else if self.count {
            match self.counts.get_mut(&a) {
                Some(n) if *n > 1 => {
                    *n -= 1;
                    true
                }
                _ => {
                    self.counts.remove(&a);
                    false
                }
            }
        } else {
            false
        }
    }

    /// Allocates a slot (system ids); `servant` `None` reserves it for a
    /// reference made before activation.
    fn alloc(&mut self, servant: Option<Arc<dyn Servant>>) -> (u32, u32) {
        if let Some(slot) = self.free.pop() {
            let s = &mut self.slots[slot as usize];
            s.used = true;
            s.servant = servant;
            (slot, s.generation)
        } else {
            let slot = self.slots.len() as u32;
            self.slots.push(Slot {
                servant,
                generation: 0,
                used: true,
            });
            (slot, 0)
        }
    }

    /// Reserves a new system id (`create_reference`).
    pub(crate) fn reserve(&mut self) -> [u8; 8] {
        let (slot, g) = self.alloc(None);
        system_id(slot, g)
    }

    /// Activates `servant` under a new system id.
    pub(crate) fn activate(&mut self, servant: Arc<dyn Servant>) -> Result<[u8; 8], PoaError> {
        if self.is_active(&servant) {
            return Err(PoaError::ServantAlreadyActive);
        }
        if self.slots.len() >= u32::MAX as usize && self.free.is_empty() {
            return Err(PoaError::System(crate::runtime::SystemException::new(
                crate::runtime::SystemExceptionKind::ImpLimit,
                crate::runtime::minor::IMP_LIMIT_OBJECT_TABLE_FULL,
                crate::runtime::CompletionStatus::No,
            )));
        }
        let (slot, g) = self.alloc(Some(servant.clone()));
        let id = system_id(slot, g);
        self.note_active(&servant, slot, &id);
        Ok(id)
    }

    /// Activates `servant` under `id` (a user id, or a reserved system id).
    pub(crate) fn activate_with_id(
        &mut self,
        id: &[u8],
        servant: Arc<dyn Servant>,
    ) -> Result<(), PoaError> {
        if self.is_active(&servant) {
            return Err(PoaError::ServantAlreadyActive);
        }
        let slot = if self.system {
            let Some((slot, s)) = self.slot(id) else {
                return Err(PoaError::System(crate::error::raise(
                    crate::runtime::SystemExceptionKind::BadParam,
                    peregrine_giop::system_exception::minor::BAD_PARAM_INVALID_OBJECT_ID,
                    crate::runtime::CompletionStatus::No,
                    || Cause::new(Phase::Local).with_detail("not a live system id of this POA"),
                )));
            };
            if s.servant.is_some() {
                return Err(PoaError::ObjectAlreadyActive);
            }
            self.slots[slot as usize].servant = Some(servant.clone());
            slot
        } else {
            if self.by_user_id.contains_key(id) {
                return Err(PoaError::ObjectAlreadyActive);
            }
            self.by_user_id.insert(id, servant.clone());
            0
        };
        self.note_active(&servant, slot, id);
        Ok(())
    }

    /// Removes the object `id`. `keep_id`: a system id stays reserved
    /// (a servant activator may incarnate it again) instead of getting
    /// a new generation (old references become `OBJECT_NOT_EXIST`).
    pub(crate) fn deactivate(&mut self, id: &[u8], keep_id: bool) -> Option<Removed> {
        let servant = if self.system {
            let (slot, _) = self.slot(id)?;
            let s = &mut self.slots[slot as usize];
            let servant = s.servant.take()?;
            if !keep_id {
                s.used = false;
                s.generation = s.generation.wrapping_add(1);
                self.free.push(slot);
            }
            servant
        } else {
            self.by_user_id.remove(id)?
        };
        let remaining = self.note_inactive(&servant);
        Some(Removed { servant, remaining })
    }

    /// Empties the map: every (id, servant, remaining_activations).
    pub(crate) fn drain(&mut self) -> Vec<(ObjectId, Removed)> {
        let mut out = Vec::with_capacity(self.active);
        let slots = std::mem::take(&mut self.slots);
        for (i, s) in slots.into_iter().enumerate() {
            if let Some(servant) = s.servant {
                out.push((system_id(i as u32, s.generation).to_vec(), servant));
            }
        }
        out.extend(self.by_user_id.drain());
        let mut rest = Vec::with_capacity(out.len());
        for (id, servant) in out {
            let remaining = self.note_inactive(&servant);
            rest.push((id, Removed { servant, remaining }));
        }
        self.free.clear();
        rest
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::poa::TestServant as S;

    #[test]
    fn slots_generations_and_uniqueness() {
        let mut m = Aom::new(&Policies::ROOT, false);
        let a: Arc<dyn Servant> = Arc::new(S::default());
        let id = m.activate(a.clone()).unwrap();
        assert!(matches!(
            m.activate(a.clone()),
            Err(PoaError::ServantAlreadyActive)
        ));
        assert_eq!(m.id_of(&a).unwrap(), id);
        assert!(m.get(&id).is_some());
        assert!(m.deactivate(&id, false).is_some());
        assert!(m.get(&id).is_none() && !m.valid(&id));
        // The slot is reused with a new generation.
        let id2 = m.activate(a.clone()).unwrap();
        assert_eq!(id2[..4], id[..4]);
        assert_ne!(id2, id);
        assert!(m.get(&id).is_none());
        assert!(m.get(b"short").is_none());
        assert_eq!(m.len(), 1);
        assert_eq!(m.drain().len(), 1);
        assert_eq!(m.len(), 0);
    }

    #[test]
    fn multiple_ids_count_remaining_activations() {
        let p = Policies {
            id_uniqueness: super::super::IdUniqueness::Multiple,
            id_assignment: super::super::IdAssignment::User,
            ..Policies::default()
        };
        let mut m = Aom::new(&p, true);
        let a: Arc<dyn Servant> = Arc::new(S::default());
        m.activate_with_id(b"x", a.clone()).unwrap();
        m.activate_with_id(b"y", a.clone()).unwrap();
        assert!(m.deactivate(b"x", false).unwrap().remaining);
        assert!(!m.deactivate(b"y", false).unwrap().remaining);
    }

    /// User ids of every length around the inline limit (22 bytes), each
    /// a prefix of the next, so only the length tells neighbours apart.
    #[test]
    fn user_ids_inline_and_boxed_round_trip() {
        let p = Policies {
            id_assignment: super::super::IdAssignment::User,
            ..Policies::default()
        };
        let mut m = Aom::new(&p, false);
        let ids: Vec<Vec<u8>> = (0..=40)
            .map(|n| (0..n).map(|i| i as u8).collect())
            .collect();
        let servants: Vec<Arc<dyn Servant>> =
            ids.iter().map(|_| Arc::new(S::default()) as _).collect();
        for (id, s) in ids.iter().zip(&servants) {
            m.activate_with_id(id, s.clone()).unwrap();
        }
        assert_eq!(m.len(), ids.len());
        for (id, s) in ids.iter().zip(&servants) {
            assert!(Arc::ptr_eq(m.get(id).unwrap(), s), "{}", id.len());
            assert_eq!(m.id_of(s).as_deref(), Some(&id[..]));
            assert!(matches!(
                m.activate_with_id(id, Arc::new(S::default())),
                Err(PoaError::ObjectAlreadyActive)
            ));
        }
        // Deactivate the even lengths: the odd ones stay, unaffected.
        for id in ids.iter().step_by(2) {
            let r = m.deactivate(id, false).unwrap();
            assert!(!r.remaining);
            assert!(m.get(id).is_none());
        }
        for (n, (id, s)) in ids.iter().zip(&servants).enumerate() {
            assert_eq!(m.get(id).is_some(), n % 2 == 1, "{n}");
            assert_eq!(m.is_active(s), n % 2 == 1, "{n}");
        }
        let mut left: Vec<ObjectId> = m.drain().into_iter().map(|(id, _)| id).collect();
        left.sort_by_key(|id| id.len());
        let odd: Vec<ObjectId> = ids.iter().skip(1).step_by(2).cloned().collect();
        assert_eq!(left, odd);
    }
}
