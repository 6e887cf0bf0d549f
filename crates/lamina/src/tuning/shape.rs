//! What the entries written so far look like: the data the settings of
//! `crate::tuning` are chosen from.

/// Entries of a memtable sampled by a flush.
pub(crate) const SAMPLE: usize = 4096;

/// What the entries written so far look like.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DataShape {
    /// Entries seen.
    pub entries: u64,
    /// Bytes of their internal keys (tree key and 8-byte trailer).
    pub key_bytes: u64,
    /// Bytes of their values as stored in tables.
    pub value_bytes: u64,
}

impl DataShape {
    /// Counts one entry.
    pub fn add(&mut self, key_len: usize, value_len: usize) {
        self.entries += 1;
        self.key_bytes += key_len as u64;
        self.value_bytes += value_len as u64;
    }

    /// Adds what `other` saw.
    pub fn merge(&mut self, other: &DataShape) {
        self.entries += other.entries;
        self.key_bytes += other.key_bytes;
        self.value_bytes += other.value_bytes;
    }

    /// Mean bytes of an entry (key and value), if any was seen.
    pub fn mean_entry(&self) -> Option<u64> {
        (self.entries > 0).then(|| (self.key_bytes + self.value_bytes).div_ceil(self.entries))
    }
}

#[cfg(test)]
impl DataShape {
    /// `entries` entries of `key` and `value` bytes each (for tests).
    pub(crate) fn uniform(entries: u64, key: u64, value: u64) -> DataShape {
        DataShape {
            entries,
            key_bytes: entries * key,
            value_bytes: entries * value,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_merge_and_average() {
        let mut a = DataShape::default();
        a.add(10, 20);
        a.add(10, 21);
        let mut b = DataShape::default();
        b.merge(&a);
        b.merge(&a);
        assert_eq!(b, DataShape::uniform(4, 10, 0).merged_values(82));
        assert_eq!(b.mean_entry(), Some(31));
    }

    impl DataShape {
        fn merged_values(mut self, v: u64) -> DataShape {
            self.value_bytes = v;
            self
        }
    }
}
