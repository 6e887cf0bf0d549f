//! Counters describing a table, stored in its properties block.
//!
//! Layout: docs/format.md#properties.

use crate::coding::Decoder;
use crate::error::{Error, Result};
use std::path::Path;

/// Counters every table's properties hold (0 to 12).
const MIN_COUNTERS: u64 = 13;

/// What a table holds, counted when it was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Properties {
    /// Entries (every kind).
    pub entries: u64,
    /// Delete entries (tombstones).
    pub deletes: u64,
    /// Merge entries.
    pub merges: u64,
    /// Bytes of tree keys, summed over entries.
    pub key_bytes: u64,
    /// Bytes of values, summed over entries.
    pub value_bytes: u64,
    /// Data blocks.
    pub data_blocks: u64,
    /// Bytes of data blocks as stored, trailers included.
    pub data_stored_bytes: u64,
    /// Bytes of data blocks before compression.
    pub data_raw_bytes: u64,
    /// Smallest seqno of any entry.
    pub smallest_seqno: u64,
    /// Largest seqno of any entry.
    pub largest_seqno: u64,
    /// The identity of the database that wrote the table (counters 10–11;
    /// 0 in a table writer's table).
    pub identity: u128,
    /// The table's own file number (counter 12; 0 in a table writer's table).
    pub file_number: u64,
    /// Settings of the TableWriter that wrote the table (counters 20+), if one did.
    pub writer: Option<super::writer_props::WriterProps>,
}

impl Properties {
    /// Names of the counters counted from the entries (0–9), in on-disk
    /// order, for messages.
    pub(crate) const NAMES: [&'static str; 10] = [
        "entries",
        "delete entries",
        "merge entries",
        "tree key bytes",
        "value bytes",
        "data blocks",
        "stored data block bytes",
        "raw data block bytes",
        "smallest seqno",
        "largest seqno",
    ];

    /// The counters counted from the entries (0–9), in on-disk order.
    pub(crate) fn counters(&self) -> [u64; 10] {
        [
            self.entries,
            self.deletes,
            self.merges,
            self.key_bytes,
            self.value_bytes,
            self.data_blocks,
            self.data_stored_bytes,
            self.data_raw_bytes,
            self.smallest_seqno,
            self.largest_seqno,
        ]
    }

    /// The properties block: `count u32 ‖ count × u64`.
    pub fn encode(&self) -> Vec<u8> {
        let mut counters = self.counters().to_vec();
        counters.extend([
            self.identity as u64,
            (self.identity >> 64) as u64,
            self.file_number,
        ]);
        if let Some(w) = &self.writer {
            w.encode_into(&mut counters);
        }
        let mut buf = Vec::with_capacity(4 + 8 * counters.len());
        buf.extend_from_slice(&(counters.len() as u32).to_le_bytes());
        for c in counters {
            buf.extend_from_slice(&c.to_le_bytes());
        }
        buf
    }

    /// Decodes a properties block read at `offset` of `file`. Counters past
    /// the thirteen every table holds are ignored, but for a table writer's
    /// settings (20 and on). Corruption if the block is not exactly
    /// `4 + 8 × count` bytes or holds fewer than thirteen counters.
    pub fn decode(bytes: &[u8], file: &Path, offset: u64) -> Result<Properties> {
        let mut d = Decoder::new(bytes);
        let count = d.u32().map(u64::from);
        let expected = count.map(|c| 4 + 8 * c);
        if expected != Some(bytes.len() as u64) {
            return Err(Error::corruption(
                file,
                offset,
                format!(
                    "properties block of {} bytes does not hold the {} counters it declares",
                    bytes.len(),
                    count.unwrap_or(0)
                ),
            ));
        }
        if let Some(count @ 0..MIN_COUNTERS) = count {
            return Err(Error::corruption(
                file,
                offset,
                format!(
                    "properties block holds {count} counters, fewer than the \
                     {MIN_COUNTERS} every table holds"
                ),
            ));
        }
        let writer = {
            let all: Vec<u64> = bytes
                .get(4..)
                .unwrap_or(&[])
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                .collect();
            super::writer_props::WriterProps::decode(&all)
        };
        // Fields are evaluated in the order written, which is the on-disk order.
        let mut next = || d.u64().unwrap_or(0);
        Ok(Properties {
            entries: next(),
            deletes: next(),
            merges: next(),
            key_bytes: next(),
            value_bytes: next(),
            data_blocks: next(),
            data_stored_bytes: next(),
            data_raw_bytes: next(),
            smallest_seqno: next(),
            largest_seqno: next(),
            identity: u128::from(next()) | (u128::from(next()) << 64),
            file_number: next(),
            writer,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;

    #[test]
    fn round_trip_and_forward_compatibility() {
        let p = Properties {
            entries: 5,
            deletes: 1,
            merges: 2,
            largest_seqno: 1 << 50,
            ..Default::default()
        };
        let f = Path::new("t");
        assert_eq!(Properties::decode(&p.encode(), f, 0).unwrap(), p);
        // A later version with a fourteenth counter.
        let mut longer = p.encode();
        longer[0] = 14;
        longer.extend_from_slice(&7u64.to_le_bytes());
        assert_eq!(Properties::decode(&longer, f, 0).unwrap(), p);
        // Fewer than thirteen counters: no table of format 1 is so.
        let mut shorter = vec![12, 0, 0, 0];
        shorter.extend_from_slice(&[0u8; 8 * 12]);
        let e = Properties::decode(&shorter, f, 0).unwrap_err();
        assert!(e.to_string().contains("holds 12 counters"), "{e}");
    }

    #[test]
    fn identity_and_number_are_counters_10_to_12() {
        let p = Properties {
            identity: (3u128 << 64) | 2,
            file_number: 41,
            ..Default::default()
        };
        let b = p.encode();
        assert_eq!(b.len(), 4 + 8 * 13);
        assert_eq!(&b[..4], &13u32.to_le_bytes());
        assert_eq!(&b[4 + 80..4 + 88], &2u64.to_le_bytes());
        assert_eq!(&b[4 + 88..4 + 96], &3u64.to_le_bytes());
        assert_eq!(&b[4 + 96..], &41u64.to_le_bytes());
        assert_eq!(Properties::decode(&b, Path::new("t"), 0).unwrap(), p);
    }

    #[test]
    fn wrong_length_is_corruption() {
        let mut b = Properties::default().encode();
        b.pop();
        assert!(Properties::decode(&b, Path::new("t"), 3)
            .unwrap_err()
            .is_corruption());
        assert!(Properties::decode(&[], Path::new("t"), 3)
            .unwrap_err()
            .is_corruption());
        assert!(Properties::decode(&[0xff; 4], Path::new("t"), 3)
            .unwrap_err()
            .is_corruption());
    }
}
