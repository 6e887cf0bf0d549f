//! Large values read again and again, kept in memory once verified: a read
//! of one skips the blob file, its checksum and its mapping.

use super::pointer::BlobPointer;
use crate::cache::doorkeeper::Doorkeeper;
use quick_cache::sync::Cache;
use quick_cache::Weighter;
use std::any::Any;
use std::sync::Arc;

/// The bytes of a value kept in memory, in whatever object holds them: a
/// copy the engine made, or an object of the caller's that a value was read
/// into and that it offered ([`crate::LazyValue::keep`]; the Python binding
/// keeps the `bytes` object itself, and hands it out again).
pub trait KeptBytes: Any + Send + Sync {
    /// The value. The same bytes for as long as the object lives.
    fn bytes(&self) -> &[u8];
}

impl KeptBytes for Box<[u8]> {
    fn bytes(&self) -> &[u8] {
        self
    }
}

/// A value kept in memory, shared.
pub type Kept = Arc<dyn KeptBytes>;

/// Bytes charged per value besides its own.
const VALUE_OVERHEAD: u64 = 64;

/// Where a value is: blob file number, offset.
type Place = (u64, u64);

#[derive(Debug, Clone, Copy, Default)]
struct ValueWeighter;

impl Weighter<Place, Kept> for ValueWeighter {
    fn weight(&self, _key: &Place, value: &Kept) -> u64 {
        value.bytes().len() as u64 + VALUE_OVERHEAD
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
    values: Option<Cache<Place, Kept, ValueWeighter>>,
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
    pub fn get(&self, p: &BlobPointer) -> Option<Kept> {
        let values = self.values.as_ref()?;
        if !self.door.marked(hash(p)) {
            return None;
        }
        values
            .get(&(p.file, p.offset))
            .filter(|v| v.bytes().len() == p.len as usize)
    }

    /// Offers `value`, just read through `p` and verified: a copy is cached
    /// if [`HotValues::admits`] it.
    pub fn offer(&self, p: &BlobPointer, value: &[u8]) {
        self.offer_with(p, value.len(), || Arc::new(Box::<[u8]>::from(value)));
    }

    /// Offers the object `make` gives, holding the value just read through
    /// `p` and verified (`len` bytes), if [`HotValues::admits`] it.
    pub fn offer_with(&self, p: &BlobPointer, len: usize, make: impl FnOnce() -> Kept) {
        let Some(values) = &self.values else {
            return;
        };
        if len == p.len as usize && self.admits(p, len) {
            values.insert((p.file, p.offset), make());
        }
    }

    /// Whether a value of `len` bytes read through `p` is to be kept: if
    /// `p` was offered before since the doorkeeper was last cleared (this
    /// offer marks it) and it is at most an eighth of the capacity.
    fn admits(&self, p: &BlobPointer, len: usize) -> bool {
        len <= self.max_value && self.door.seen_before(hash(p))
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
        BlobPointer {
            file,
            offset,
            len,
            crc: 0,
        }
    }

    #[test]
    fn a_value_is_kept_from_its_second_read_and_only_at_its_place() {
        let c = HotValues::new(1 << 20);
        let p = ptr(7, 100, 3);
        assert!(c.get(&p).is_none());
        c.offer(&p, b"abc");
        assert!(c.get(&p).is_none(), "a value read once is not kept");
        c.offer(&p, b"abc");
        assert_eq!(c.get(&p).unwrap().bytes(), b"abc");
        assert!(c.get(&ptr(8, 100, 3)).is_none(), "another file");
        assert!(c.get(&ptr(7, 101, 3)).is_none(), "another offset");
        assert!(c.get(&ptr(7, 100, 4)).is_none(), "another length");
        let big = ptr(7, 200, (1 << 17) + 1);
        let value = vec![1u8; (1 << 17) + 1];
        c.offer(&big, &value);
        c.offer(&big, &value);
        assert!(
            c.get(&big).is_none(),
            "more than an eighth of the cache is not kept"
        );
        let none = HotValues::new(0);
        none.offer(&p, b"abc");
        none.offer(&p, b"abc");
        assert!(none.get(&p).is_none());
    }

    /// An object of the caller's, made only when it is to be kept.
    struct Theirs(Vec<u8>);

    impl KeptBytes for Theirs {
        fn bytes(&self) -> &[u8] {
            &self.0
        }
    }

    #[test]
    fn an_object_offered_is_made_only_when_kept_and_handed_back_as_is() {
        let c = HotValues::new(1 << 20);
        let p = ptr(3, 64, 5);
        let made = std::cell::Cell::new(0);
        let make = || -> Kept {
            made.set(made.get() + 1);
            Arc::new(Theirs(b"value".to_vec()))
        };
        c.offer_with(&p, 5, make);
        assert_eq!(made.get(), 0, "not made on the first read");
        assert!(c.get(&p).is_none());
        c.offer_with(&p, 5, make);
        assert_eq!(made.get(), 1);
        let kept = c.get(&p).unwrap();
        let any: &dyn Any = &*kept;
        assert_eq!(
            any.downcast_ref::<Theirs>().map(|t| t.0.as_slice()),
            Some(&b"value"[..])
        );
        c.offer_with(&ptr(3, 128, 5), 4, make);
        c.offer_with(&ptr(3, 128, 5), 4, make);
        assert_eq!(made.get(), 1, "an object of another length is not kept");
    }
}
