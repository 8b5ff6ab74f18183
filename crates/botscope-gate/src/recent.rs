//! A bounded map of recent entries: two generations, the newer taking
//! inserts; when it holds half the bound, the older is dropped and the
//! newer becomes the older. An entry read from the older is moved up, so
//! what is in use stays. Every operation is O(1); memory is bounded by
//! the entries' count whatever keys clients choose.

use std::collections::HashMap;
use std::hash::Hash;

/// Recent entries, at most `limit` of them.
#[derive(Debug)]
pub struct Recent<K, V> {
    new: HashMap<K, V, foldhash::fast::RandomState>,
    old: HashMap<K, V, foldhash::fast::RandomState>,
    half: usize,
}

impl<K: Hash + Eq + Clone, V: Clone> Recent<K, V> {
    /// Holding at most `limit` entries (at least 2).
    pub fn new(limit: usize) -> Recent<K, V> {
        Recent {
            new: HashMap::default(),
            old: HashMap::default(),
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
        if self.new.len() >= self.half && !self.new.contains_key(&k) {
            self.old = std::mem::take(&mut self.new);
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
}
