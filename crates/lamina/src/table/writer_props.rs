//! The settings a [`TableWriter`](crate::TableWriter) records in the tables it
//! writes: properties counters 20 and above.
//!
//! Layout: docs/format.md#table-writer-settings.

use crate::key::MAX_KEYSPACE_NAME;

/// Index of the first writer counter in the properties block.
pub const FIRST_WRITER_COUNTER: usize = 20;

/// The writer format this build writes and reads.
pub const WRITER_FORMAT: u64 = 1;

/// Key order id: bytewise comparison of user keys (the only order lamina has).
pub const ORDER_BYTEWISE: u64 = 1;

/// Counters holding the keyspace name: 8 bytes each.
const NAME_COUNTERS: usize = MAX_KEYSPACE_NAME.div_ceil(8);

#[cfg(any(test, feature = "internals"))]
/// Counters written after the first: order, compression, block size, bloom
/// bits, name length, then the name.
const COUNTERS: usize = 6 + NAME_COUNTERS;

/// What a TableWriter recorded about how its table was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriterProps {
    /// The writer format (counter 20); 0 means "not written by a TableWriter".
    pub format: u64,
    /// Key order id (counter 21).
    pub order: u64,
    /// Compression of data blocks, as in the block trailer (counter 22).
    pub compression: u64,
    /// Data block size in bytes (counter 23).
    pub block_size: u64,
    /// Bloom filter bits per key (counter 24).
    pub bloom_bits_per_key: u64,
    /// Length of the keyspace name; 0 for the default keyspace (counter 25).
    name_len: u64,
    /// The keyspace name, UTF-8, zero-padded (counters 26 onward).
    name: [u8; NAME_COUNTERS * 8],
}

impl WriterProps {
    /// Settings of a writer of this build for `keyspace` (`None` or `""` for
    /// the default keyspace). REQUIRES: the name is at most 255 bytes.
    pub fn new(
        compression: u64,
        block_size: u64,
        bloom_bits_per_key: u64,
        keyspace: Option<&str>,
    ) -> WriterProps {
        let mut name = [0u8; NAME_COUNTERS * 8];
        let bytes = keyspace.unwrap_or("").as_bytes();
        let n = bytes.len().min(MAX_KEYSPACE_NAME);
        if let (Some(dst), Some(src)) = (name.get_mut(..n), bytes.get(..n)) {
            dst.copy_from_slice(src);
        }
        WriterProps {
            format: WRITER_FORMAT,
            order: ORDER_BYTEWISE,
            compression,
            block_size,
            bloom_bits_per_key,
            name_len: n as u64,
            name,
        }
    }

    /// The keyspace the table's entries belong to: `None` for the default
    /// keyspace, `Err` if the recorded name is not UTF-8 or too long.
    pub fn keyspace(&self) -> Result<Option<&str>, String> {
        if self.name_len == 0 {
            return Ok(None);
        }
        let n = usize::try_from(self.name_len)
            .ok()
            .filter(|&n| n <= MAX_KEYSPACE_NAME)
            .ok_or_else(|| format!("keyspace name of {} bytes is too long", self.name_len))?;
        let bytes = self.name.get(..n).unwrap_or(&[]);
        std::str::from_utf8(bytes)
            .map(Some)
            .map_err(|_| "keyspace name is not UTF-8".to_string())
    }

    /// Appends the counters to `counters` (the properties block's list),
    /// padding it with zeros up to counter 20.
    pub fn encode_into(&self, counters: &mut Vec<u64>) {
        if counters.len() < FIRST_WRITER_COUNTER {
            counters.resize(FIRST_WRITER_COUNTER, 0);
        }
        counters.extend([
            self.format,
            self.order,
            self.compression,
            self.block_size,
            self.bloom_bits_per_key,
            self.name_len,
        ]);
        for chunk in self.name.chunks_exact(8) {
            let mut b = [0u8; 8];
            b.copy_from_slice(chunk);
            counters.push(u64::from_le_bytes(b));
        }
    }

    /// Reads the counters from a properties block's list (`counters` is every
    /// counter, from counter 0). `None` if the table has none (counter 20
    /// absent or 0).
    pub fn decode(counters: &[u64]) -> Option<WriterProps> {
        let at = |i: usize| counters.get(FIRST_WRITER_COUNTER + i).copied().unwrap_or(0);
        let format = at(0);
        if format == 0 {
            return None;
        }
        let mut name = [0u8; NAME_COUNTERS * 8];
        for (i, chunk) in name.chunks_exact_mut(8).enumerate() {
            chunk.copy_from_slice(&at(6 + i).to_le_bytes());
        }
        Some(WriterProps {
            format,
            order: at(1),
            compression: at(2),
            block_size: at(3),
            bloom_bits_per_key: at(4),
            name_len: at(5),
            name,
        })
    }

    /// Why a database of this build cannot ingest the table, if it cannot.
    pub fn incompatibility(&self) -> Option<String> {
        if self.format != WRITER_FORMAT {
            return Some(format!(
                "it was written by a table writer of format {}; this lamina reads format {WRITER_FORMAT}",
                self.format
            ));
        }
        if self.order != ORDER_BYTEWISE {
            return Some(format!(
                "its keys are in order {} but lamina orders keys bytewise (order {ORDER_BYTEWISE})",
                self.order
            ));
        }
        if self.compression > 2 {
            return Some(format!("its compression {} is unknown", self.compression));
        }
        self.keyspace().err()
    }

    /// Number of counters written from counter 20 on.
    #[cfg(any(test, feature = "internals"))]
    pub const fn counter_count() -> usize {
        COUNTERS
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn round_trip_with_and_without_keyspace() {
        for ks in [None, Some("calls/2026"), Some(&*"é".repeat(127))] {
            let w = WriterProps::new(2, 4096, 10, ks);
            let mut counters = vec![7; 13];
            w.encode_into(&mut counters);
            assert_eq!(
                counters.len(),
                FIRST_WRITER_COUNTER + WriterProps::counter_count()
            );
            assert_eq!(counters[12], 7);
            assert_eq!(counters[13..20], [0; 7]);
            let back = WriterProps::decode(&counters).unwrap();
            assert_eq!(back, w);
            assert_eq!(back.keyspace().unwrap(), ks.filter(|s| !s.is_empty()));
            assert_eq!(back.incompatibility(), None);
        }
    }

    #[test]
    fn absent_and_incompatible() {
        assert_eq!(WriterProps::decode(&[1; 10]), None);
        let mut counters = Vec::new();
        WriterProps::new(1, 4096, 10, None).encode_into(&mut counters);
        counters[FIRST_WRITER_COUNTER] = 2;
        let w = WriterProps::decode(&counters).unwrap();
        assert!(w.incompatibility().unwrap().contains("format 2"));
        counters[FIRST_WRITER_COUNTER] = 1;
        counters[FIRST_WRITER_COUNTER + 1] = 9;
        let w = WriterProps::decode(&counters).unwrap();
        assert!(w.incompatibility().unwrap().contains("order 9"));
        counters[FIRST_WRITER_COUNTER + 1] = 1;
        counters[FIRST_WRITER_COUNTER + 5] = 300;
        let w = WriterProps::decode(&counters).unwrap();
        assert!(w.incompatibility().unwrap().contains("too long"));
    }
}
