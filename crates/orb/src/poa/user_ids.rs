//! Servants by user id: one open-addressing table (linear probing) whose
//! slots hold the id inline ([`ShortBytes`], up to 22 bytes) next to the
//! servant's `Arc`.
//!
//! Why not `HashMap`: its SwissTable keeps a byte of control data per
//! bucket in an array of its own, so finding an object not called
//! recently misses twice in the table (control bytes, then the entry) on
//! two pages far apart, before the third miss on the servant. With
//! 1,000,000 objects called round robin (T2) every request pays those
//! misses and their TLB misses. Here the home slot is found from the hash
//! alone and holds the id and the servant: one miss (two when a 40-byte
//! slot straddles a cache line, on the same page) before the servant.
//!
//! The table is at most 3/4 full, so probe sequences stay short and an
//! empty slot ends every search; removal shifts the rest of the cluster
//! back (no tombstones). The hash is [`SeededState`]'s, seeded per table:
//! ids come from the network, and only the application's activations
//! decide which slots are full.

use std::sync::Arc;

use crate::fasthash::SeededState;
use crate::runtime::Servant;
use crate::short_bytes::ShortBytes;
use std::hash::BuildHasher;

struct Slot {
    id: ShortBytes,
    /// `None`: the slot is empty (its `id` is then empty too).
    servant: Option<Arc<dyn Servant>>,
}

impl Slot {
    fn empty() -> Self {
        Slot {
            id: ShortBytes::from(&[][..]),
            servant: None,
        }
    }
}

/// The user-id half of the active object map.
pub(crate) struct UserIdMap {
    /// A power of two long, or empty.
    slots: Box<[Slot]>,
    len: usize,
    hasher: SeededState,
}

impl Default for UserIdMap {
    fn default() -> Self {
        UserIdMap {
            slots: Box::new([]),
            len: 0,
            hasher: SeededState::new(),
        }
    }
}

impl UserIdMap {
    #[inline]
    fn home(&self, id: &[u8]) -> usize {
        self.hasher.hash_one(id) as usize & (self.slots.len() - 1)
    }

    /// The slot holding `id`.
    #[inline]
    fn find(&self, id: &[u8]) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(id);
        loop {
            let s = &self.slots[i];
            s.servant.as_ref()?;
            if super::same_key(&s.id, id) {
                return Some(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// The servant active under `id`.
    #[inline]
    pub(crate) fn get(&self, id: &[u8]) -> Option<&Arc<dyn Servant>> {
        self.find(id).and_then(|i| self.slots[i].servant.as_ref())
    }

    pub(crate) fn contains_key(&self, id: &[u8]) -> bool {
        self.find(id).is_some()
    }

    /// Adds `id` (which must not be present).
    pub(crate) fn insert(&mut self, id: &[u8], servant: Arc<dyn Servant>) {
        debug_assert!(!self.contains_key(id));
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        self.place(Slot {
            id: id.into(),
            servant: Some(servant),
        });
        self.len += 1;
    }

    /// Puts `slot` in the first empty slot of its probe sequence.
    fn place(&mut self, slot: Slot) {
        let mask = self.slots.len() - 1;
        let mut i = self.home(&slot.id);
        while self.slots[i].servant.is_some() {
            i = (i + 1) & mask;
        }
        self.slots[i] = slot;
    }

    fn grow(&mut self) {
        let cap = (self.slots.len() * 2).max(8);
        let old = std::mem::replace(&mut self.slots, (0..cap).map(|_| Slot::empty()).collect());
        for s in old.into_vec() {
            if s.servant.is_some() {
                self.place(s);
            }
        }
    }

    /// Removes `id`, returning its servant.
    pub(crate) fn remove(&mut self, id: &[u8]) -> Option<Arc<dyn Servant>> {
        let mut hole = self.find(id)?;
        let Slot { servant, .. } = std::mem::replace(&mut self.slots[hole], Slot::empty());
        self.len -= 1;
        // Backward shift: every later entry of the cluster whose probe
        // sequence passes through the hole moves into it, so that an
        // empty slot still ends every search.
        let mask = self.slots.len() - 1;
        let mut j = hole;
        loop {
            j = (j + 1) & mask;
            if self.slots[j].servant.is_none() {
                break;
            }
            let home = self.home(&self.slots[j].id);
            if j.wrapping_sub(home) & mask >= j.wrapping_sub(hole) & mask {
                self.slots.swap(hole, j);
                hole = j;
            }
        }
        servant
    }

    /// Empties the map, returning every (id, servant).
    pub(crate) fn drain(&mut self) -> Vec<(Vec<u8>, Arc<dyn Servant>)> {
        self.len = 0;
        std::mem::take(&mut self.slots)
            .into_vec()
            .into_iter()
            .filter_map(|s| Some((s.id.to_vec(), s.servant?)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::poa::TestServant as S;
    use std::collections::HashMap;

    /// A deterministic pseudo-random sequence (xorshift).
    fn rng(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    /// Random inserts and removals agree with a `HashMap` model, across
    /// growth and long clusters (ids of 0..=40 bytes drawn from a small
    /// set, so removals often hit and leave holes to shift into).
    #[test]
    fn agrees_with_a_hash_map_under_random_inserts_and_removals() {
        let mut m = UserIdMap::default();
        let mut model: HashMap<Vec<u8>, Arc<dyn Servant>> = HashMap::new();
        let mut seed = 0x9e37_79b9_7f4a_7c15;
        for step in 0..20_000 {
            let r = rng(&mut seed);
            let n = (r % 2_000) as u32;
            let len = (r >> 32) as usize % 41;
            let id: Vec<u8> = n
                .to_le_bytes()
                .iter()
                .copied()
                .cycle()
                .take(len.max(4))
                .collect();
            if r >> 48 & 3 == 0 {
                let got = m.remove(&id);
                let want = model.remove(&id);
                assert_eq!(got.is_some(), want.is_some(), "step {step}");
                if let (Some(g), Some(w)) = (got, want) {
                    assert!(Arc::ptr_eq(&g, &w));
                }
            } else if let std::collections::hash_map::Entry::Vacant(e) = model.entry(id) {
                let s: Arc<dyn Servant> = Arc::new(S::default());
                m.insert(e.key(), s.clone());
                e.insert(s);
            }
            assert_eq!(m.len, model.len());
            if step % 1_000 == 0 {
                for (k, v) in &model {
                    assert!(Arc::ptr_eq(m.get(k).unwrap(), v));
                }
            }
        }
        // The table never fills: a miss always ends on an empty slot.
        assert!(m.len * 4 <= m.slots.len() * 3);
        assert!(m.get(b"not there at all").is_none());
        let mut all = m.drain();
        assert_eq!(all.len(), model.len());
        all.sort_by(|a, b| a.0.cmp(&b.0));
        for (k, v) in all {
            assert!(Arc::ptr_eq(&model[&k], &v));
        }
        assert!(m.get(b"").is_none() && m.len == 0);
        // Usable again after a drain.
        m.insert(b"", Arc::new(S::default()));
        assert!(m.contains_key(b"") && !m.contains_key(b"\0"));
    }

    #[test]
    fn one_slot_holds_the_id_and_the_servant() {
        // 40 bytes: a lookup touches one slot (sometimes two adjacent
        // cache lines), not a separate control array.
        assert_eq!(std::mem::size_of::<Slot>(), 40);
    }
}
