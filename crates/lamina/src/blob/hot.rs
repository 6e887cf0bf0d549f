//! Large values read again and again, kept in memory once verified: a read
//! of one skips the blob file, its checksum and its mapping.

use super::pointer::BlobPointer;
use crate::cache::doorkeeper::Doorkeeper;
use quick_cache::sync::Cache;
use quick_cache::Weighter;
use std::sync::Arc;

/// Bytes charged per value besides its own.
const VALUE_OVERHEAD: u64 = 64;

/// Where a value is: blob file number, offset.
type Place = (u64, u64);

#[derive(Debug, Clone, Copy, Default)]
struct ValueWeighter;

impl Weighter<Place, Arc<[u8]>> for ValueWeighter {
    fn weight(&self, _key: &Place, value: &Arc<[u8]>) -> u64 {
        value.len() as u64 + VALUE_OVERHEAD
    }
}

/// Blob values by where they are (file number, offset), each as it was when
/// its checksum was verified. A blob file's bytes never change and its
/// number is never reused, so a value cached is right for as long as it is
/// kept. Thread-safe; capacity 0 caches nothing.
///
/// A value is admitted on its second read (a [`Doorkeeper`]): reading each
/// value once, as a scan or a cold pass does, copies nothing into the
/// cache and evicts nothing.
pub struct HotValues {
    values: Option<Cache<Place, Arc<[u8]>, ValueWeighter>>,
    door: Doorkeeper,
    /// Larger values are not kept: one would crowd out the rest, and
    /// copying it costs more than reading it again.
    max_value: usize,
}

impl HotValues {
    /// A cache holding about `capacity_bytes` of values.
    pub fn new(capacity_bytes: usize) -> HotValues {
        let values = (capacity_bytes > 0).then(|| {
            let items = (capacity_bytes / (64 << 10)).max(16);
            Cache::with_weighter(items, capacity_bytes as u64, ValueWeighter)
        });
        HotValues {
            door: Doorkeeper::new(values.is_some()),
            values,
            max_value: capacity_bytes / 8,
        }
    }

    /// The value `p` names, if cached.
    pub fn get(&self, p: &BlobPointer) -> Option<Arc<[u8]>> {
        let values = self.values.as_ref()?;
        if !self.door.marked(hash(p)) {
            return None;
        }
        values
            .get(&(p.file, p.offset))
            .filter(|v| v.len() == p.len as usize)
    }

    /// Offers `value`, just read through `p` and verified: cached if `p`
    /// was offered before since the doorkeeper was last cleared and it is
    /// at most an eighth of the capacity.
    pub fn offer(&self, p: &BlobPointer, value: &[u8]) {
        let Some(values) = &self.values else {
            return;
        };
        if value.len() <= self.max_value && self.door.seen_before(hash(p)) {
            values.insert((p.file, p.offset), Arc::from(value));
        }
    }
}

/// The doorkeeper's hash of where `p`'s value is.
fn hash(p: &BlobPointer) -> u64 {
    let x = p.file.rotate_left(32) ^ p.offset;
    (x ^ (x >> 31)).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn ptr(file: u64, offset: u64, len: u32) -> BlobPointer {
        BlobPointer { file, offset, len, crc: 0 }
    }

    #[test]
    fn a_value_is_kept_from_its_second_read_and_only_at_its_place() {
        let c = HotValues::new(1 << 20);
        let p = ptr(7, 100, 3);
        assert!(c.get(&p).is_none());
        c.offer(&p, b"abc");
        assert!(c.get(&p).is_none(), "a value read once is not kept");
        c.offer(&p, b"abc");
        assert_eq!(&*c.get(&p).unwrap(), b"abc");
        assert!(c.get(&ptr(8, 100, 3)).is_none(), "another file");
        assert!(c.get(&ptr(7, 101, 3)).is_none(), "another offset");
        assert!(c.get(&ptr(7, 100, 4)).is_none(), "another length");
        let big = ptr(7, 200, (1 << 17) + 1);
        let value = vec![1u8; (1 << 17) + 1];
        c.offer(&big, &value);
        c.offer(&big, &value);
        assert!(c.get(&big).is_none(), "more than an eighth of the cache is not kept");
        let none = HotValues::new(0);
        none.offer(&p, b"abc");
        none.offer(&p, b"abc");
        assert!(none.get(&p).is_none());
    }
}
