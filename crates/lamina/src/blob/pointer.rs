//! The blob pointer: the value of a kind 3 entry, naming a value in a blob file.
//!
//! Layout: docs/format.md#blob-pointer.

use crate::coding::{put_varint, Decoder};
use crate::key::MAX_VALUE_LEN;

/// Where a separated value lives and what its checksum is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlobPointer {
    /// Number of the blob file (`NNNNNN.blob`).
    pub file: u64,
    /// File offset of the value's first byte.
    pub offset: u64,
    /// Length of the value in bytes.
    pub len: u32,
    /// Masked crc32c of the value.
    pub crc: u32,
}

impl BlobPointer {
    /// Encodes the pointer as an entry value.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(24);
        put_varint(&mut b, self.file);
        put_varint(&mut b, self.offset);
        put_varint(&mut b, u64::from(self.len));
        b.extend_from_slice(&self.crc.to_le_bytes());
        b
    }

    /// Decodes an entry value; `Err` says what is wrong with it.
    pub fn decode(bytes: &[u8]) -> Result<BlobPointer, String> {
        let mut d = Decoder::new(bytes);
        let p = (|| {
            Some(BlobPointer {
                file: d.varint()?,
                offset: d.varint()?,
                len: d.varint32()?,
                crc: d.u32()?,
            })
        })()
        .ok_or_else(|| format!("truncated blob pointer of {} bytes", bytes.len()))?;
        if !d.is_empty() {
            return Err(format!(
                "blob pointer of {} bytes has {} trailing bytes",
                bytes.len(),
                d.remaining().len()
            ));
        }
        if p.len as usize > MAX_VALUE_LEN {
            return Err(format!(
                "blob pointer names a value of {} bytes, over the {MAX_VALUE_LEN}-byte limit",
                p.len
            ));
        }
        Ok(p)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn round_trip_and_refusals() {
        let p = BlobPointer {
            file: 12,
            offset: 1 << 40,
            len: 100_000,
            crc: 0xdead_beef,
        };
        let b = p.encode();
        assert_eq!(BlobPointer::decode(&b).unwrap(), p);
        let mut long = b.clone();
        long.push(0);
        assert!(BlobPointer::decode(&long).unwrap_err().contains("trailing"));
        assert!(BlobPointer::decode(&b[..b.len() - 1])
            .unwrap_err()
            .contains("truncated"));
        let huge = BlobPointer { len: u32::MAX, ..p };
        assert!(BlobPointer::decode(&huge.encode())
            .unwrap_err()
            .contains("limit"));
    }

    proptest! {
        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
            let _ = BlobPointer::decode(&bytes);
        }
    }
}
