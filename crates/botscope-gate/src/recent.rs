//! A bounded map of recent entries: two generations, the newer taking
//! inserts; when it holds half the bound, the older is dropped and the
//! newer becomes the older. An entry read from the older is moved up, so
//! what is in use stays. Every operation is O(1); memory is bounded by
//! the entries' count whatever keys clients choose. A dropped generation
//! is freed a few entries per operation (freeing a hundred thousand at
//! once stalls every caller of the lock for tens of milliseconds; freeing
//! them on another thread contends for the allocator's arena), and a new
//! one is made at its full size (no rehash while it fills).

use std::collections::HashMap;
use std::hash::Hash;

/// Recent entries, at most `limit` of them.
#[derive(Debug)]
pub struct Recent<K, V> {
    new: HashMap<K, V, foldhash::fast::RandomState>,
    old: HashMap<K, V, foldhash::fast::RandomState>,
    /// The generation dropped last, being freed.
    dying: Option<std::collections::hash_map::IntoIter<K, V>>,
    half: usize,
}

/// Entries of a dropped generation freed per insertion: a generation is
/// gone long before the next one is dropped.
const FREE_PER_INSERT: usize = 16;

impl<K: Hash + Eq + Clone, V: Clone> Recent<K, V> {
    /// Holding at most `limit` entries (at least 2).
    pub fn new(limit: usize) -> Recent<K, V> {
        Recent {
            new: HashMap::default(),
            old: HashMap::default(),
            dying: None,
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
        if let Some(dying) = &mut self.dying
            && dying.by_ref().take(FREE_PER_INSERT).count() < FREE_PER_INSERT
        {
            self.dying = None;
        }
        if self.new.len() >= self.half && !self.new.contains_key(&k) {
            let fresh = HashMap::with_capacity_and_hasher(self.half, Default::default());
            let newer = std::mem::replace(&mut self.new, fresh);
            let older = std::mem::replace(&mut self.old, newer);
            // Freed over the next insertions (a generation still dying,
            // which cannot happen at this pace, goes at once).
            self.dying = Some(older.into_iter());
        }
        self.new.insert(k, v);
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.new.len() + self.old.len()
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.new.clear();
        self.old.clear();
        self.dying = None;
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
        // A dropped generation is freed within its size in insertions.
        assert!(r.dying.as_ref().is_none_or(|d| d.len() <= 50));
    }
}
