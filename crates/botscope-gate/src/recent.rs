//! A bounded map of recent entries: two generations, the newer taking
//! inserts; when it holds half the bound, the older is dropped and the
//! newer becomes the older. An entry read from the older is moved up, so
//! what is in use stays. Every operation is O(1); memory is bounded by
//! the entries' count whatever keys clients choose. A dropped generation,
//! and everything [`Recent::clear`] forgets, is freed a few entries per
//! insertion (freeing a hundred thousand at once held the lock, and every
//! request behind it, for hundreds of milliseconds), and a new generation
//! is made at its full size (no rehash while it fills).

use std::collections::HashMap;
use std::hash::Hash;

/// Recent entries, at most `limit` of them.
#[derive(Debug)]
pub struct Recent<K, V> {
    new: HashMap<K, V, foldhash::fast::RandomState>,
    old: HashMap<K, V, foldhash::fast::RandomState>,
    /// Generations dropped, being freed.
    dying: Vec<std::collections::hash_map::IntoIter<K, V>>,
    half: usize,
}

/// Entries of dropped generations freed per insertion: a generation is
/// gone long before the next one is dropped.
const FREE_PER_INSERT: usize = 16;

impl<K: Hash + Eq + Clone, V: Clone> Recent<K, V> {
    /// Holding at most `limit` entries (at least 2).
    pub fn new(limit: usize) -> Recent<K, V> {
        Recent {
            new: HashMap::default(),
            old: HashMap::default(),
            dying: Vec::new(),
            half: (limit / 2).max(1),
        }
    }

    /// The entry of `k`, if it is still held.
    pub fn get(&mut self, k: &K) -> Option<V> {
        if let Some(v) = self.new.get(k) {
            return Some(v.clone());
        }
        let v = self.old.remove(k)?;
        self.insert(k.clone(), v.clone());
        Some(v)
    }

    /// Holds `v` for `k`.
    pub fn insert(&mut self, k: K, v: V) {
        self.free_some();
        if self.new.len() >= self.half && !self.new.contains_key(&k) {
            let fresh = HashMap::with_capacity_and_hasher(self.half, Default::default());
            let newer = std::mem::replace(&mut self.new, fresh);
            let older = std::mem::replace(&mut self.old, newer);
            self.dying.push(older.into_iter());
        }
        self.new.insert(k, v);
    }

    /// Frees up to [`FREE_PER_INSERT`] entries of dropped generations.
    fn free_some(&mut self) {
        let mut left = FREE_PER_INSERT;
        while left > 0
            && let Some(dying) = self.dying.last_mut()
        {
            left -= dying.by_ref().take(left).count();
            if dying.len() == 0 {
                self.dying.pop();
            }
        }
    }

    /// Every entry held, each once (the newer generation's first).
    pub fn entries(&self) -> impl Iterator<Item = (&K, &V)> {
        self.new
            .iter()
            .chain(self.old.iter().filter(|(k, _)| !self.new.contains_key(*k)))
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.new.len() + self.old.len()
    }

    /// Forgets everything (freed over the next insertions).
    pub fn clear(&mut self) {
        let new = std::mem::take(&mut self.new);
        let old = std::mem::take(&mut self.old);
        self.dying.extend([new.into_iter(), old.into_iter()]);
    }

    /// Entries forgotten and not yet freed.
    #[cfg(test)]
    fn dying(&self) -> usize {
        self.dying.iter().map(ExactSizeIterator::len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_and_keeps_what_is_used() {
        let mut r = Recent::new(100);
        r.insert(0u32, 0u32);
        for i in 1..10_000u32 {
            r.insert(i, i);
            // Entry 0 is used all along: it stays.
            assert_eq!(r.get(&0), Some(0));
            assert!(r.len() <= 100);
        }
        assert_eq!(r.get(&9_999), Some(9_999));
        assert_eq!(r.get(&5), None);
    }

    #[test]
    fn forgotten_entries_are_freed_a_few_per_insertion() {
        let mut r = Recent::new(2_000);
        for i in 0..=2_010u32 {
            r.insert(i, i);
        }
        // The generation 0..1000 was dropped at the insertion of 2,000 and
        // is freed 16 entries per insertion since: 10 insertions.
        assert_eq!(r.dying(), 1_000 - 10 * FREE_PER_INSERT);
        r.clear();
        assert_eq!(r.len(), 0);
        assert_eq!(r.get(&2_010), None);
        // Nothing is freed at once: 1,011 held entries join the 840.
        assert_eq!(r.dying(), 1_851);
        r.insert(0, 0);
        assert_eq!(r.dying(), 1_851 - FREE_PER_INSERT);
        for i in 1..200u32 {
            r.insert(i, i);
        }
        assert_eq!(r.dying(), 0);
    }
}
