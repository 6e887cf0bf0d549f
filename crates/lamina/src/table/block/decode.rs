//! Entries and restart keys of a block, decoded in place.
//!
//! Layout: docs/format.md#block.

use super::Block;
use crate::coding::Decoder;
use crate::error::Result;

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
