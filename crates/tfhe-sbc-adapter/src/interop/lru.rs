//! A small least-recently-used map with a fixed capacity in entries.
//!
//! The cache of decompressed key-switching keys holds a handful of entries of about 20 MiB each, so a
//! linear scan over a `Vec` is all it needs: `O(capacity)` per access, no hashing, no pointers, and easy to
//! check. Not meant for large capacities.

use std::num::NonZeroUsize;

/// Entries in insertion order; each remembers the tick of its last use.
#[derive(Debug)]
pub(crate) struct Lru<K, V> {
    capacity: NonZeroUsize,
    tick: u64,
    entries: Vec<(K, V, u64)>,
}

impl<K: Eq, V> Lru<K, V> {
    /// An empty map holding at most `capacity` entries.
    pub(crate) fn new(capacity: NonZeroUsize) -> Self {
        Self {
            capacity,
            tick: 0,
            entries: Vec::with_capacity(capacity.get()),
        }
    }

    fn next_tick(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }

    /// The value of `key`, marked as the most recently used.
    pub(crate) fn get(&mut self, key: &K) -> Option<&V> {
        let tick = self.next_tick();
        let entry = self.entries.iter_mut().find(|(k, _, _)| k == key)?;
        entry.2 = tick;
        Some(&entry.1)
    }

    /// Inserts `key` as the most recently used entry. Returns the entry it displaced: the old value of
    /// `key`, or else the least recently used entry if the map was full.
    pub(crate) fn insert(&mut self, key: K, value: V) -> Option<(K, V)> {
        let tick = self.next_tick();
        if let Some(position) = self.entries.iter().position(|(k, _, _)| *k == key) {
            let (old_key, old_value, _) = std::mem::replace(&mut self.entries[position], (key, value, tick));
            return Some((old_key, old_value));
        }
        let evicted = if self.entries.len() == self.capacity.get() {
            self.entries
                .iter()
                .enumerate()
                .min_by_key(|(_, (_, _, used))| *used)
                .map(|(position, _)| position)
                .map(|position| {
                    let (k, v, _) = self.entries.swap_remove(position);
                    (k, v)
                })
        } else {
            None
        };
        self.entries.push((key, value, tick));
        evicted
    }

    /// Removes `key`, returning its value.
    pub(crate) fn remove(&mut self, key: &K) -> Option<V> {
        let position = self.entries.iter().position(|(k, _, _)| k == key)?;
        Some(self.entries.swap_remove(position).1)
    }

    /// The number of entries.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The most entries it holds.
    pub(crate) fn capacity(&self) -> NonZeroUsize {
        self.capacity
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::Lru;
    use std::num::NonZeroUsize;

    fn lru(capacity: usize) -> Lru<u32, String> {
        Lru::new(NonZeroUsize::new(capacity).unwrap())
    }

    #[test]
    fn evicts_the_least_recently_used() {
        let mut map = lru(2);
        assert!(map.insert(1, "one".into()).is_none());
        assert!(map.insert(2, "two".into()).is_none());
        // Touch 1: 2 is now the least recently used.
        assert_eq!(map.get(&1).map(String::as_str), Some("one"));
        assert_eq!(map.insert(3, "three".into()), Some((2, "two".into())));
        assert!(map.get(&2).is_none());
        assert_eq!(map.get(&1).map(String::as_str), Some("one"));
        assert_eq!(map.get(&3).map(String::as_str), Some("three"));
        assert_eq!(map.len(), 2);
        // Now 1 is older than 3.
        assert_eq!(map.insert(4, "four".into()), Some((1, "one".into())));
    }

    #[test]
    fn reinserting_a_key_replaces_it_and_evicts_nothing() {
        let mut map = lru(2);
        map.insert(1, "a".into());
        map.insert(2, "b".into());
        assert_eq!(map.insert(1, "c".into()), Some((1, "a".into())));
        assert_eq!(map.len(), 2);
        // 1 was just used, so 2 goes first.
        assert_eq!(map.insert(5, "e".into()), Some((2, "b".into())));
        assert_eq!(map.get(&1).map(String::as_str), Some("c"));
    }

    #[test]
    fn capacity_one_and_remove() {
        let mut map = lru(1);
        assert_eq!(map.capacity().get(), 1);
        map.insert(1, "a".into());
        assert_eq!(map.insert(2, "b".into()), Some((1, "a".into())));
        assert_eq!(map.remove(&2), Some("b".into()));
        assert_eq!(map.remove(&2), None);
        assert_eq!(map.len(), 0);
        assert!(map.get(&1).is_none());
    }

    #[test]
    fn never_exceeds_its_capacity_under_a_random_workload() {
        // A fixed pseudo-random access pattern checked against a reference model (a recency list).
        let mut map = lru(4);
        let mut model: Vec<u32> = Vec::new(); // most recent last
        let mut x = 0x1234_5678u32;
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let key = x % 9;
            if x & 0x100 == 0 {
                let hit = map.get(&key).is_some();
                assert_eq!(hit, model.contains(&key));
                if hit {
                    model.retain(|&k| k != key);
                    model.push(key);
                }
            } else {
                let evicted = map.insert(key, key.to_string()).map(|(k, _)| k);
                if model.contains(&key) {
                    assert_eq!(evicted, Some(key));
                    model.retain(|&k| k != key);
                } else if model.len() == 4 {
                    assert_eq!(evicted, Some(model.remove(0)));
                } else {
                    assert_eq!(evicted, None);
                }
                model.push(key);
            }
            assert!(map.len() <= 4);
            assert_eq!(map.len(), model.len());
        }
    }
}
