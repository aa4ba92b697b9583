//! A map keyed by request id: a vector sorted by id. Ids are handed out
//! in order, so an insert is usually a push and the table keeps its
//! capacity between calls (a tree allocates and frees a node each time
//! the table goes from empty to one entry and back, which is every call
//! on a connection used by one caller).

/// Values by request id, in id order.
#[derive(Debug, Clone)]
pub(crate) struct IdMap<V> {
    entries: Vec<(u32, V)>,
}

impl<V> Default for IdMap<V> {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
        }
    }
}

impl<V> IdMap<V> {
    #[inline]
    fn find(&self, id: u32) -> Result<usize, usize> {
        match self.entries.last() {
            // The common cases: empty, or a newer id than all.
            None => Err(0),
            Some(&(last, _)) if last < id => Err(self.entries.len()),
            _ => self.entries.binary_search_by_key(&id, |&(k, _)| k),
        }
    }

    /// Inserts or replaces; the replaced value.
    #[inline]
    pub(crate) fn insert(&mut self, id: u32, value: V) -> Option<V> {
        match self.find(id) {
            Ok(i) => Some(core::mem::replace(&mut self.entries[i].1, value)),
            // Ids come in order: almost always a push.
            Err(i) if i == self.entries.len() => {
                self.entries.push((id, value));
                None
            }
            Err(i) => {
                self.entries.insert(i, (id, value));
                None
            }
        }
    }

    #[inline]
    pub(crate) fn remove(&mut self, id: u32) -> Option<V> {
        // Answers come in order too: the oldest (first) or the only one.
        if self.entries.first().is_some_and(|&(k, _)| k == id) && self.entries.len() == 1 {
            return self.entries.pop().map(|(_, v)| v);
        }
        let i = self.find(id).ok()?;
        Some(self.entries.remove(i).1)
    }

    #[inline]
    pub(crate) fn get(&self, id: u32) -> Option<&V> {
        let i = self.find(id).ok()?;
        self.entries.get(i).map(|(_, v)| v)
    }

    #[inline]
    pub(crate) fn get_mut(&mut self, id: u32) -> Option<&mut V> {
        let i = self.find(id).ok()?;
        self.entries.get_mut(i).map(|(_, v)| v)
    }

    pub(crate) fn contains(&self, id: u32) -> bool {
        self.find(id).is_ok()
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub(crate) fn clear(&mut self) {
        self.entries.clear();
    }

    /// Removes every entry, in id order.
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = (u32, V)> + '_ {
        self.entries.drain(..)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behaves_like_a_sorted_map() {
        let mut m = IdMap::default();
        for id in [5, 9, 1, 7, 3, 9] {
            m.insert(id, id * 10);
        }
        assert_eq!(m.len(), 5);
        assert_eq!(m.insert(7, 0), Some(70));
        assert_eq!(m.get(1), Some(&10));
        assert_eq!(m.remove(5), Some(50));
        assert_eq!(m.remove(5), None);
        assert!(!m.contains(4) && m.contains(3));
        *m.get_mut(3).unwrap() += 1;
        let all: Vec<_> = m.drain().collect();
        assert_eq!(all, [(1, 10), (3, 31), (7, 0), (9, 90)]);
        assert!(m.is_empty());
    }
}
