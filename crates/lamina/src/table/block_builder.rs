//! Builds one block: prefix-compressed entries and a restart array.
//!
//! Layout: docs/format.md#block.

use crate::coding::put_varint;
use crate::key;
use xxhash_rust::xxh3::xxh3_64;

/// Bucket value: keys of two restart intervals hash here.
/// Layout: docs/format.md#data-block-hash-index.
pub(super) const BUCKET_COLLISION: u8 = 254;
/// Bucket value: no key hashes here.
pub(super) const BUCKET_EMPTY: u8 = 255;
/// Most restart points a block with a hash index may have.
pub(super) const MAX_HASHED_RESTARTS: usize = 254;

/// Buckets of a block's hash index for `keys` distinct tree keys:
/// `ceil(4/3 × keys)`, at least 1 (docs/format.md#data-block-hash-index).
fn hash_buckets(keys: usize) -> usize {
    (keys * 4).div_ceil(3).clamp(1, usize::from(u16::MAX))
}

/// The bucket of key hash `h` among `buckets`.
pub(super) fn bucket_of(h: u64, buckets: usize) -> usize {
    ((u64::from(h as u32) * buckets as u64) >> 32) as usize
}

/// Accumulates entries into the bytes of one (uncompressed) block.
///
/// REQUIRES: keys are added in strictly ascending order (the caller checks;
/// the builder only compresses), and the finished block is shorter than
/// 4 GiB so that restart offsets fit in a `u32` (the table builder bounds
/// block, key and value sizes to guarantee it).
#[derive(Debug)]
pub struct BlockBuilder {
    buf: Vec<u8>,
    restarts: Vec<u32>,
    restart_interval: usize,
    /// Entries added since the last restart point.
    counter: usize,
    last_key: Vec<u8>,
    entries: usize,
    /// For a data block with a hash index: each distinct tree key's hash
    /// and the restart interval of its first entry.
    hashes: Option<Vec<(u64, u8)>>,
}

impl BlockBuilder {
    /// An empty builder placing a restart point every `restart_interval`
    /// entries (0 acts as 1).
    pub fn new(restart_interval: usize) -> BlockBuilder {
        BlockBuilder {
            buf: Vec::new(),
            restarts: vec![0],
            restart_interval: restart_interval.max(1),
            counter: 0,
            last_key: Vec::new(),
            entries: 0,
            hashes: None,
        }
    }

    /// Like [`BlockBuilder::new`], for a data block (not an index block): the
    /// finished block ends with a hash index over the tree keys of its
    /// entries (docs/format.md#data-block-hash-index).
    pub fn with_hash_index(restart_interval: usize) -> BlockBuilder {
        BlockBuilder {
            hashes: Some(Vec::new()),
            ..BlockBuilder::new(restart_interval)
        }
    }

    /// Appends an entry. REQUIRES: `key` sorts after every key added since
    /// the last `reset`.
    pub fn add(&mut self, key: &[u8], value: &[u8]) {
        let tk = key::tree_key_of(key);
        let new_tree_key =
            self.hashes.is_some() && (self.entries == 0 || key::tree_key_of(&self.last_key) != tk);
        self.add_hashed(key, value, new_tree_key.then(|| xxh3_64(tk)));
    }

    /// [`BlockBuilder::add`] for a caller that knows whether `key`'s tree
    /// key is new: `tree_key_hash` is its `xxh3_64` if it differs from the
    /// tree key of the entry added before (or the block is empty), `None`
    /// if it is the same. A data block records each new tree key in its
    /// hash index. REQUIRES: as for `add`.
    pub fn add_hashed(&mut self, key: &[u8], value: &[u8], tree_key_hash: Option<u64>) {
        let shared = if self.counter < self.restart_interval {
            common_prefix(&self.last_key, key)
        } else {
            self.restarts.push(self.buf.len() as u32);
            self.counter = 0;
            0
        };
        if let (Some(hashes), Some(h)) = (self.hashes.as_mut(), tree_key_hash) {
            let restart = u8::try_from(self.restarts.len() - 1).unwrap_or(BUCKET_COLLISION);
            hashes.push((h, restart));
        }
        let suffix = key.get(shared..).unwrap_or(&[]);
        put_varint(&mut self.buf, shared as u64);
        put_varint(&mut self.buf, suffix.len() as u64);
        put_varint(&mut self.buf, value.len() as u64);
        self.buf.extend_from_slice(suffix);
        self.buf.extend_from_slice(value);
        self.last_key.truncate(shared);
        self.last_key.extend_from_slice(suffix);
        self.counter += 1;
        self.entries += 1;
    }

    /// Appends the restart array and returns the finished block's bytes,
    /// valid until the next call on the builder.
    pub fn finish(&mut self) -> &[u8] {
        self.finish_to(0)
    }

    /// [`BlockBuilder::finish`], with the hash index given more buckets
    /// than its keys need so that the block is `len` bytes, when it has a
    /// hash index and is shorter (docs/format.md#data-block-hash-index:
    /// more buckets only spread the keys further).
    pub fn finish_to(&mut self, len: usize) -> &[u8] {
        let pad = len.saturating_sub(self.estimated_size());
        for r in &self.restarts {
            self.buf.extend_from_slice(&r.to_le_bytes());
        }
        if let Some(hashes) = &self.hashes {
            // Layout: docs/format.md#data-block-hash-index
            let b = if self.restarts.len() > MAX_HASHED_RESTARTS {
                0
            } else {
                let needed = hash_buckets(hashes.len());
                needed
                    .saturating_add(pad)
                    .min(usize::from(u16::MAX))
                    .max(needed)
            };
            let start = self.buf.len();
            self.buf.resize(start + b, BUCKET_EMPTY);
            for &(h, restart) in hashes {
                if let Some(bucket) = self.buf.get_mut(start + bucket_of(h, b)) {
                    *bucket = match *bucket {
                        BUCKET_EMPTY => restart,
                        same if same == restart => restart,
                        _ => BUCKET_COLLISION,
                    };
                }
            }
            self.buf.extend_from_slice(&(b as u16).to_le_bytes());
        }
        self.buf
            .extend_from_slice(&(self.restarts.len() as u32).to_le_bytes());
        &self.buf
    }

    /// Empties the builder for the next block.
    pub fn reset(&mut self) {
        self.buf.clear();
        self.restarts.clear();
        self.restarts.push(0);
        self.counter = 0;
        self.last_key.clear();
        self.entries = 0;
        if let Some(h) = self.hashes.as_mut() {
            h.clear();
        }
    }

    /// True when the next entry would start a restart interval past
    /// [`MAX_HASHED_RESTARTS`], so that the block, finished later, could
    /// keep no hash index: a block with one must be cut now.
    pub fn hash_index_full(&self) -> bool {
        self.hashes.is_some()
            && self.restarts.len() >= MAX_HASHED_RESTARTS
            && self.counter >= self.restart_interval
    }

    /// Size the block would have if finished now.
    pub fn estimated_size(&self) -> usize {
        let hash_index = self
            .hashes
            .as_ref()
            .map_or(0, |h| hash_buckets(h.len()) + 2);
        self.buf.len() + 4 * self.restarts.len() + 4 + hash_index
    }

    /// True when no entry was added since the last `reset`.
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    #[cfg(any(test, feature = "internals"))]
    /// Entries added since the last `reset`.
    pub fn len(&self) -> usize {
        self.entries
    }

    #[cfg(any(test, feature = "internals"))]
    /// The last key added (empty if none).
    pub fn last_key(&self) -> &[u8] {
        &self.last_key
    }
}

/// How many leading bytes `a` and `b` share, counted eight at a time.
#[inline]
pub(super) fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n {
        let (Some(x), Some(y)) = (a.get(i..i + 8), b.get(i..i + 8)) else {
            break;
        };
        let x = u64::from_le_bytes(x.try_into().unwrap_or([0; 8]));
        let y = u64::from_le_bytes(y.try_into().unwrap_or([0; 8]));
        let diff = x ^ y;
        if diff != 0 {
            return i + (diff.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    i + a
        .get(i..n)
        .unwrap_or(&[])
        .iter()
        .zip(b.get(i..n).unwrap_or(&[]))
        .take_while(|(x, y)| x == y)
        .count()
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn common_prefix_counts_across_words() {
        let a = b"0123456789abcdefXY";
        for n in 0..a.len() {
            let mut b = a.to_vec();
            b[n] ^= 1;
            assert_eq!(common_prefix(a, &b), n);
            assert_eq!(common_prefix(&a[..n], a), n);
        }
    }
}
