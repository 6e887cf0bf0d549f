//! The table under each shard of the memtable's hash index
//! ([`super::newest`]): open addressing over buckets of four 16-byte slots,
//! each bucket one aligned cache line, probed bucket after bucket.
//!
//! A slot holds its key's 64-bit hash (all but the low byte, which is the
//! caller's: the index keeps which skip list holds the entry there) and an
//! 8-byte value. A lookup reads one cache line unless its bucket is full,
//! where a general table reads two (control bytes, then the slot); and the
//! line can be asked for ahead of the lookup ([`HashSlots::prefetch`]), so
//! that its miss overlaps other work. Entries are never removed (a
//! memtable only grows), so a probe that meets an empty slot is over.

use std::mem::size_of;

/// Slots in a bucket: a cache line of 16-byte slots.
const BUCKET_SLOTS: usize = 4;

/// The table grows (doubles) before it is fuller than this, in eighths.
const MAX_LOAD_EIGHTHS: usize = 6;

/// Bits of a hash below the bucket number: the caller's byte.
const BUCKET_SHIFT: u32 = 8;

/// The bits of a slot's word that are the hash.
const HASH_BITS: u64 = !0xFF;

/// Bytes a slot takes at the table's highest load: what one entry costs.
pub(super) const fn bytes_per_entry<V>() -> usize {
    size_of::<Slot<V>>() * 8 / MAX_LOAD_EIGHTHS
}

#[derive(Clone, Copy)]
struct Slot<V> {
    /// The hash's high bits and the caller's byte.
    word: u64,
    /// `None`: the slot is free.
    value: Option<V>,
}

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Bucket<V> {
    slots: [Slot<V>; BUCKET_SLOTS],
}

impl<V: Copy> Bucket<V> {
    const EMPTY: Bucket<V> = Bucket {
        slots: [Slot {
            word: 0,
            value: None,
        }; BUCKET_SLOTS],
    };
}

/// Hash → (byte, value), for values whose equality the caller decides.
pub(super) struct HashSlots<V> {
    /// A power of two long, or empty.
    buckets: Vec<Bucket<V>>,
    len: usize,
}

impl<V: Copy> HashSlots<V> {
    pub(super) fn new() -> HashSlots<V> {
        HashSlots {
            buckets: Vec::new(),
            len: 0,
        }
    }

    /// Entries held.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.len
    }

    fn first_bucket(&self, hash: u64) -> usize {
        (hash >> BUCKET_SHIFT) as usize & (self.buckets.len().wrapping_sub(1))
    }

    /// Asks the processor for the cache line a lookup of `hash` reads
    /// first; it reads no memory now, so the miss overlaps what the caller
    /// does until the lookup.
    pub(super) fn prefetch(&self, hash: u64) {
        if let Some(b) = self.buckets.get(self.first_bucket(hash)) {
            crate::prefetch::prefetch(b);
        }
    }

    /// The byte and value of the entry of `hash` for which `eq` holds
    /// (called only for slots whose hash matches).
    pub(super) fn find(&self, hash: u64, mut eq: impl FnMut(u8, V) -> bool) -> Option<(u8, V)> {
        let mask = self.buckets.len().wrapping_sub(1);
        let mut b = self.first_bucket(hash);
        for _ in 0..self.buckets.len() {
            for s in &self.buckets.get(b)?.slots {
                let value = s.value?;
                if (s.word ^ hash) & HASH_BITS == 0 && eq(s.word as u8, value) {
                    return Some((s.word as u8, value));
                }
            }
            b = (b + 1) & mask;
        }
        None
    }

    /// Records (`byte`, `value`) for `hash`: if an entry for which `eq`
    /// holds is there, it is replaced when `replace` says so (given that
    /// entry's byte and value); otherwise a new entry is added. Returns
    /// whether one was added.
    pub(super) fn upsert(
        &mut self,
        hash: u64,
        byte: u8,
        value: V,
        mut eq: impl FnMut(u8, V) -> bool,
        replace: impl FnOnce(u8, V) -> bool,
    ) -> bool {
        if (self.len + 1) * 8 > self.buckets.len() * BUCKET_SLOTS * MAX_LOAD_EIGHTHS {
            self.grow();
        }
        let word = (hash & HASH_BITS) | u64::from(byte);
        let mask = self.buckets.len().wrapping_sub(1);
        let mut b = self.first_bucket(hash);
        loop {
            let Some(bucket) = self.buckets.get_mut(b) else {
                unreachable!("bucket numbers are masked to the table")
            };
            for s in &mut bucket.slots {
                match s.value {
                    None => {
                        *s = Slot {
                            word,
                            value: Some(value),
                        };
                        self.len += 1;
                        return true;
                    }
                    Some(cur) if (s.word ^ hash) & HASH_BITS == 0 && eq(s.word as u8, cur) => {
                        if replace(s.word as u8, cur) {
                            *s = Slot {
                                word,
                                value: Some(value),
                            };
                        }
                        return false;
                    }
                    Some(_) => {}
                }
            }
            // The load limit leaves a free slot somewhere: the loop ends.
            b = (b + 1) & mask;
        }
    }

    /// Doubles the buckets and places every entry again, by the hash its
    /// slot keeps (no key is read).
    fn grow(&mut self) {
        let buckets = (self.buckets.len() * 2).max(1);
        let old = std::mem::replace(&mut self.buckets, vec![Bucket::EMPTY; buckets]);
        for s in old.iter().flat_map(|b| b.slots.iter()) {
            if s.value.is_some() {
                self.place(*s);
            }
        }
    }

    /// Puts `slot` in the first free slot of its probe sequence.
    /// REQUIRES: the table has a free slot.
    fn place(&mut self, slot: Slot<V>) {
        let mask = self.buckets.len().wrapping_sub(1);
        let mut b = self.first_bucket(slot.word);
        loop {
            let Some(bucket) = self.buckets.get_mut(b) else {
                unreachable!("bucket numbers are masked to the table")
            };
            if let Some(free) = bucket.slots.iter_mut().find(|s| s.value.is_none()) {
                *free = slot;
                return;
            }
            b = (b + 1) & mask;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::num::NonZeroU64;

    #[test]
    fn a_slot_is_sixteen_bytes_and_a_bucket_one_cache_line() {
        assert_eq!(size_of::<Slot<NonZeroU64>>(), 16);
        assert_eq!(size_of::<Bucket<NonZeroU64>>(), 64);
        assert_eq!(std::mem::align_of::<Bucket<NonZeroU64>>(), 64);
    }

    fn v(i: u64) -> NonZeroU64 {
        NonZeroU64::new(i + 1).unwrap()
    }

    #[test]
    fn finds_every_entry_through_growth_and_full_buckets() {
        let mut t = HashSlots::new();
        // Hashes that share buckets: only their low 12 bits above the
        // caller's byte differ, so many fall in the same bucket.
        let hash = |i: u64| ((i % 37) << BUCKET_SHIFT) | (i << 40);
        for i in 0..5_000u64 {
            assert!(t.upsert(hash(i), (i % 16) as u8, v(i), |_, x| x == v(i), |_, _| true));
        }
        assert_eq!(t.len(), 5_000);
        for i in 0..5_000u64 {
            assert_eq!(
                t.find(hash(i), |_, x| x == v(i)),
                Some(((i % 16) as u8, v(i)))
            );
        }
        assert_eq!(t.find(hash(5_001), |_, x| x == v(5_001)), None);
    }

    #[test]
    fn an_entry_is_replaced_only_when_asked() {
        let mut t = HashSlots::new();
        let h = 0xABCD_EF01_2345_6700;
        assert!(t.upsert(h, 1, v(1), |_, _| true, |_, _| true));
        assert!(!t.upsert(h, 2, v(2), |_, _| true, |b, x| b == 1 && x == v(1)));
        assert_eq!(t.find(h, |_, _| true), Some((2, v(2))));
        assert!(!t.upsert(h, 3, v(3), |_, _| true, |_, _| false));
        assert_eq!(t.find(h, |_, _| true), Some((2, v(2))));
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn entries_of_one_hash_told_apart_by_the_caller_all_stay() {
        let mut t = HashSlots::new();
        let h = 0x1234_5600;
        for i in 0..20u64 {
            assert!(t.upsert(h, 0, v(i), |_, x| x == v(i), |_, _| true));
        }
        for i in 0..20u64 {
            assert_eq!(t.find(h, |_, x| x == v(i)), Some((0, v(i))));
        }
        // The caller's byte is not part of the hash compared.
        assert_eq!(t.find(h | 0x7F, |_, x| x == v(3)), Some((0, v(3))));
        assert_eq!(t.find(h ^ 0x100, |_, _| true), None);
    }

    #[test]
    fn an_empty_table_finds_nothing_and_a_prefetch_is_harmless() {
        let t: HashSlots<NonZeroU64> = HashSlots::new();
        t.prefetch(42);
        assert_eq!(t.find(42, |_, _| true), None);
        assert_eq!(t.len(), 0);
    }
}
