//! Entries and restart keys of a block, decoded in place, and the key an
//! entry stands for rebuilt from the prefixes it shares ([`KeyBuf`], held
//! on the stack while it is short).
//!
//! Layout: docs/format.md#block.

use super::Block;
use crate::coding::Decoder;
use crate::error::Result;
use std::ops::Deref;

/// One entry decoded in place.
pub(super) struct Entry<'a> {
    /// Bytes its key shares with the key before it.
    pub shared: usize,
    /// The rest of its key.
    pub suffix: &'a [u8],
    /// Its value's byte range in the block.
    pub value: (usize, usize),
    /// Where the next entry starts.
    pub next: usize,
}

impl Block {
    /// Decodes the entry at byte `pos`; `None` if it is malformed or runs
    /// into the restart array.
    pub(super) fn entry(&self, pos: usize) -> Option<Entry<'_>> {
        let rest = self.data.get(pos..self.restarts_offset)?;
        // Fast path: the key's two lengths fit in one byte each (nearly
        // always), the value's in one or two (values under 16 KiB).
        if let [shared, unshared, v0, ref tail @ ..] = *rest {
            let value = match tail.first() {
                _ if v0 < 0x80 => Some((usize::from(v0), 3usize)),
                // Two bytes, the last not 0 (every length has one encoding).
                Some(&v1) if v1 != 0 && v1 < 0x80 => {
                    Some((usize::from(v0 & 0x7f) | usize::from(v1) << 7, 4))
                }
                _ => None,
            };
            if let Some((value_len, key_start)) = value.filter(|_| (shared | unshared) < 0x80) {
                let value_start = key_start + usize::from(unshared);
                let end = value_start + value_len;
                let suffix = rest.get(key_start..value_start)?;
                if end > rest.len() {
                    return None;
                }
                return Some(Entry {
                    shared: usize::from(shared),
                    suffix,
                    value: (pos + value_start, pos + end),
                    next: pos + end,
                });
            }
        }
        let mut d = Decoder::new(rest);
        let shared = d.varint32()? as usize;
        let unshared = d.varint32()? as usize;
        let value_len = d.varint32()? as usize;
        let suffix = d.bytes(unshared)?;
        let value_start = pos + d.position();
        d.bytes(value_len)?;
        let next = pos + d.position();
        Some(Entry {
            shared,
            suffix,
            value: (value_start, next),
            next,
        })
    }

    /// The key of restart point `i`, read in place.
    pub(super) fn restart_key(&self, i: usize) -> Result<&[u8]> {
        let pos = self.restart_point(i);
        match self.entry(pos) {
            Some(e) if e.shared == 0 => Ok(e.suffix),
            _ => Err(self.corruption(format!(
                "restart entry at byte {pos} is malformed or shares bytes with a previous key"
            ))),
        }
    }
}

/// Bytes held without a heap allocation (a 16-byte user key makes a 28-byte
/// internal key).
const INLINE: usize = 64;

/// A reusable key buffer for point lookups: [`KeyBuf::splice`] keeps a
/// shared prefix and appends a suffix, the way block entries encode keys.
/// Keys up to 64 bytes never touch the heap.
#[derive(Debug, Clone)]
pub struct KeyBuf {
    inline: [u8; INLINE],
    len: usize,
    /// Holds the key instead of `inline` once it outgrew it.
    heap: Option<Vec<u8>>,
}

impl Default for KeyBuf {
    fn default() -> Self {
        KeyBuf::new()
    }
}

impl KeyBuf {
    /// An empty key.
    pub fn new() -> KeyBuf {
        KeyBuf {
            inline: [0; INLINE],
            len: 0,
            heap: None,
        }
    }

    /// Empties the key.
    pub fn clear(&mut self) {
        self.len = 0;
        if let Some(h) = self.heap.as_mut() {
            h.clear();
        }
    }

    /// Makes the key `head` followed by `tail`.
    #[inline]
    pub fn assign(&mut self, head: &[u8], tail: &[u8]) {
        let len = head.len() + tail.len();
        match self.inline.get_mut(..len) {
            Some(dst) if self.heap.is_none() => {
                let (h, t) = dst.split_at_mut(head.len());
                h.copy_from_slice(head);
                t.copy_from_slice(tail);
                self.len = len;
            }
            _ => {
                self.clear();
                self.splice(0, head);
                self.splice(head.len(), tail);
            }
        }
    }

    /// Keeps the first `shared` bytes and appends `suffix`.
    /// REQUIRES: `shared <= self.len()`.
    pub fn splice(&mut self, shared: usize, suffix: &[u8]) {
        let shared = shared.min(self.len());
        let new_len = shared + suffix.len();
        if let Some(h) = self.heap.as_mut() {
            h.truncate(shared);
            h.extend_from_slice(suffix);
        } else if let Some(dst) = self.inline.get_mut(shared..new_len) {
            dst.copy_from_slice(suffix);
        } else {
            let mut h = Vec::with_capacity(new_len);
            h.extend_from_slice(self.inline.get(..shared).unwrap_or(&[]));
            h.extend_from_slice(suffix);
            self.heap = Some(h);
        }
        self.len = new_len;
    }
}

impl Deref for KeyBuf {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match &self.heap {
            Some(h) => h,
            None => self.inline.get(..self.len).unwrap_or(&[]),
        }
    }
}
