//! The hash index of a data block: its buckets found and checked, the
//! point lookup through them, and their prefetch.
//!
//! Layout: docs/format.md#data-block-hash-index.

use super::super::block_builder::{bucket_of, BUCKET_COLLISION, BUCKET_EMPTY};
use super::{Block, KeyBuf};
use crate::error::Result;
use crate::iter::InternalIterator;
use crate::key;
use std::cmp::Ordering;
use std::sync::Arc;

impl Block {
    /// Point lookup through the block's hash index, for tree key `tk` of
    /// hash `h` (`xxh3_64(tk)`) and internal key `target` of `tk`:
    /// `Ok(None)` when the block has no usable hash entry (no index, or a
    /// collision: use [`Block::seek_in_place`]); `Ok(Some(None))` when the
    /// block holds no entry of `tk`; otherwise as `seek_in_place`, scanning
    /// from the restart point the bucket names. A bucket naming one whose
    /// key sorts after `tk` also gives `Ok(None)`.
    /// Layout: docs/format.md#data-block-hash-index.
    #[allow(clippy::type_complexity)]
    pub fn hash_seek(
        &self,
        tk: &[u8],
        h: u64,
        target: &[u8],
        key: &mut KeyBuf,
    ) -> Result<Option<Option<(usize, usize)>>> {
        let (start, b) = self.buckets;
        if b == 0 {
            return Ok(None);
        }
        let restart = match self.data.get(start + bucket_of(h, b)).copied() {
            Some(BUCKET_EMPTY) => return Ok(Some(None)),
            Some(r) if r < BUCKET_COLLISION => usize::from(r),
            _ => return Ok(None),
        };
        self.prefetch_interval(restart);
        let pos = self.restart_point(restart);
        let Some(first) = self.entry(pos).filter(|e| e.shared == 0) else {
            return Err(self.corruption(format!(
                "restart entry at byte {pos} is malformed or shares bytes"
            )));
        };
        match key::tree_key_of(first.suffix).cmp(tk) {
            // `tk` is absent and shares the bucket of a later key, or the
            // bucket is wrong: the binary search answers either way.
            Ordering::Greater => Ok(None),
            // The bucket names the interval of `tk`'s first entry (`Equal`:
            // this restart point's): no entry of `tk` lies before it.
            Ordering::Less | Ordering::Equal => self.scan_from(pos, target, key).map(Some),
        }
    }

    /// Asks the CPU for the hash bucket [`Block::hash_seek`] reads first
    /// for `h`, so that its miss overlaps the work before that call.
    pub fn prefetch_bucket(&self, h: u64) {
        let (start, b) = self.buckets;
        if b > 0 {
            if let Some(byte) = self.data.get(start + bucket_of(h, b)) {
                crate::prefetch::prefetch(byte);
            }
        }
    }

    /// Asks the CPU for what a search of restart interval `r` reads: its
    /// restart point's word and, at once rather than after that word
    /// arrives, the interval's lines were the block's intervals all the
    /// same length (as a block of same-sized entries has them). A wrong
    /// guess costs fetches, never a wrong read.
    fn prefetch_interval(&self, r: usize) {
        let base = self.data.as_ptr();
        crate::prefetch::prefetch(base.wrapping_add(self.restarts_offset + 4 * r));
        let stride = self.restarts_offset / self.num_restarts.max(1);
        self.prefetch_lines(r * stride);
    }

    /// Checks the hash index against the entries: each bucket holds exactly
    /// what the builder would have put there. Corruption otherwise.
    pub fn verify_hash_index(self: &Arc<Self>) -> Result<()> {
        let (start, b) = self.buckets;
        if b == 0 {
            return Ok(());
        }
        let mut expected = vec![BUCKET_EMPTY; b];
        let mut it = self.iter();
        // The tree key before (none before the first entry), in a buffer
        // kept across entries: no allocation per entry.
        let mut last_tk: Vec<u8> = Vec::new();
        let mut first = true;
        it.seek_to_first();
        while it.valid() {
            let tk = key::tree_key_of(it.key());
            if first || last_tk.as_slice() != tk {
                let restart = u8::try_from(it.restart_index()).unwrap_or(BUCKET_COLLISION);
                if let Some(slot) = expected.get_mut(bucket_of(xxhash_rust::xxh3::xxh3_64(tk), b)) {
                    *slot = match *slot {
                        BUCKET_EMPTY => restart,
                        same if same == restart => restart,
                        _ => BUCKET_COLLISION,
                    };
                }
                last_tk.clear();
                last_tk.extend_from_slice(tk);
                first = false;
            }
            it.next();
        }
        it.status()?;
        if self.data.get(start..start + b) != Some(expected.as_slice()) {
            return Err(self.corruption("hash index does not match the block's keys"));
        }
        Ok(())
    }
}
