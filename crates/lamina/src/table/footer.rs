//! The fixed-size footer at the end of every table, and block handles.
//!
//! Layout: docs/format.md#footer and docs/format.md#table.

use crate::coding::{get_u32, get_u64, masked_crc, put_varint, Decoder};
use crate::error::{Error, Result};
use std::path::Path;

/// Length of the footer in bytes.
pub const FOOTER_LEN: usize = 64;

/// The magic number ending every table.
pub const TABLE_MAGIC: &[u8; 8] = b"LAMNATBL";

/// The table format version that format 1 writes and reads (version 1
/// was written only by pre-release builds, and is refused).
pub const TABLE_VERSION: u32 = 2;

/// Bytes of the footer covered by its checksum.
const CHECKED_LEN: usize = 52;

/// Where a block's stored bytes are: `size` bytes at `offset`, its 5-byte
/// trailer excluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockHandle {
    /// File offset of the block's first stored byte.
    pub offset: u64,
    /// Stored (possibly compressed) size, trailer excluded.
    pub size: u64,
}

impl BlockHandle {
    /// Appends the handle as `varint64 offset ‖ varint64 size` (the value of
    /// an index entry).
    pub fn encode_to(&self, buf: &mut Vec<u8>) {
        put_varint(buf, self.offset);
        put_varint(buf, self.size);
    }

    /// Decodes an index entry's value; `None` unless it is exactly two varints.
    pub fn decode(bytes: &[u8]) -> Option<BlockHandle> {
        let mut d = Decoder::new(bytes);
        let h = BlockHandle {
            offset: d.varint()?,
            size: d.varint()?,
        };
        d.is_empty().then_some(h)
    }

    /// Offset just past the block's trailer; `None` on overflow.
    pub fn end_with_trailer(&self) -> Option<u64> {
        self.offset
            .checked_add(self.size)?
            .checked_add(super::compress::BLOCK_TRAILER_LEN as u64)
    }
}

/// The last 64 bytes of a table: where the filter, properties and index
/// blocks are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Footer {
    /// The filter block.
    pub filter: BlockHandle,
    /// The properties block.
    pub properties: BlockHandle,
    /// The index block.
    pub index: BlockHandle,
    /// The table format version ([`TABLE_VERSION`], docs/format.md#footer).
    pub version: u32,
}

impl Footer {
    /// The footer's 64 bytes, checksum, version and magic included.
    pub fn encode(&self) -> [u8; FOOTER_LEN] {
        let mut buf = Vec::with_capacity(FOOTER_LEN);
        for h in [self.filter, self.properties, self.index] {
            buf.extend_from_slice(&h.offset.to_le_bytes());
            buf.extend_from_slice(&h.size.to_le_bytes());
        }
        buf.extend_from_slice(&self.version.to_le_bytes());
        let crc = masked_crc(&buf);
        buf.extend_from_slice(&crc.to_le_bytes());
        buf.extend_from_slice(TABLE_MAGIC);
        let mut out = [0u8; FOOTER_LEN];
        out.copy_from_slice(&buf);
        out
    }

    /// Decodes the footer `bytes` read at `offset` of `file`. Corruption
    /// naming the offending field if the length, magic, version or
    /// checksum is wrong; a table of the pre-release version 1 is refused
    /// in those words, at offset 0. Handles are not checked against the
    /// file here.
    pub fn decode(bytes: &[u8], file: &Path, offset: u64) -> Result<Footer> {
        let at = |field: usize, reason: String| {
            Error::corruption(file, offset.saturating_add(field as u64), reason)
        };
        if bytes.len() != FOOTER_LEN {
            return Err(at(
                0,
                format!("table footer is {} bytes, not {FOOTER_LEN}", bytes.len()),
            ));
        }
        let magic = bytes.get(56..).unwrap_or(&[]);
        if magic != TABLE_MAGIC {
            return Err(at(
                56,
                format!("bad table magic {magic:02x?}: not a lamina table"),
            ));
        }
        let version = get_u32(bytes, 48).unwrap_or(0);
        let pre_release = version == 1;
        if version != TABLE_VERSION && !pre_release {
            return Err(at(
                48,
                format!(
                    "table format version {version}, which this build does not read (format 1 \
                     reads version {TABLE_VERSION}): written by a later version of lamina, or damaged"
                ),
            ));
        }
        let stored = get_u32(bytes, CHECKED_LEN).unwrap_or(0);
        let actual = masked_crc(bytes.get(..CHECKED_LEN).unwrap_or(&[]));
        if stored != actual {
            return Err(at(
                CHECKED_LEN,
                format!("table footer checksum mismatch: stored {stored:#010x}, computed {actual:#010x}"),
            ));
        }
        if pre_release {
            return Err(Error::pre_release(file, "table format version 1"));
        }
        let handle = |i: usize| BlockHandle {
            offset: get_u64(bytes, 16 * i).unwrap_or(0),
            size: get_u64(bytes, 16 * i + 8).unwrap_or(0),
        };
        Ok(Footer {
            filter: handle(0),
            properties: handle(1),
            index: handle(2),
            version,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;

    fn sample() -> Footer {
        Footer {
            filter: BlockHandle {
                offset: 1000,
                size: 20,
            },
            properties: BlockHandle {
                offset: 1025,
                size: 44,
            },
            index: BlockHandle {
                offset: 1074,
                size: 300,
            },
            version: TABLE_VERSION,
        }
    }

    #[test]
    fn round_trip() {
        let bytes = sample().encode();
        assert_eq!(&bytes[56..], TABLE_MAGIC);
        assert_eq!(Footer::decode(&bytes, Path::new("f"), 0).unwrap(), sample());
    }

    #[test]
    fn every_damaged_byte_is_named() {
        let good = sample().encode();
        for i in 0..FOOTER_LEN {
            let mut bytes = good;
            bytes[i] ^= 0x20;
            let err = Footer::decode(&bytes, Path::new("f"), 100)
                .unwrap_err()
                .to_string();
            let field = if i >= 56 {
                "magic"
            } else if (48..52).contains(&i) {
                "version"
            } else {
                "checksum"
            };
            assert!(err.contains(field), "byte {i}: {err}");
        }
    }

    #[test]
    fn a_pre_release_version_is_refused_in_words_at_offset_0() {
        let mut f = sample();
        f.version = 1;
        match Footer::decode(&f.encode(), Path::new("f"), 100) {
            Err(Error::Corruption {
                offset: 0, reason, ..
            }) => assert!(
                reason.contains("pre-release build of lamina (table format version 1)"),
                "{reason}"
            ),
            other => panic!("{other:?}"),
        }
        f.version = 3;
        let e = Footer::decode(&f.encode(), Path::new("f"), 100).unwrap_err();
        assert!(e.to_string().contains("table format version 3"), "{e}");
    }

    #[test]
    fn handles_decode_exactly() {
        let h = BlockHandle {
            offset: 1 << 40,
            size: 77,
        };
        let mut buf = Vec::new();
        h.encode_to(&mut buf);
        assert_eq!(BlockHandle::decode(&buf), Some(h));
        buf.push(0);
        assert_eq!(BlockHandle::decode(&buf), None);
        assert_eq!(BlockHandle::decode(&[0x80]), None);
    }
}
