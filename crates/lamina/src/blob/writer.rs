//! Writes one blob file: header, records appended as values arrive, footer.
//!
//! Layout: docs/format.md#blob-file.

use super::pointer::BlobPointer;
use super::{BlobMeta, FOOTER_LEN, HEADER_LEN, MAGIC, RECORD_HEADER_LEN, VERSION};
use crate::coding::{masked_crc, masked_crc_long};
use crate::error::{Error, Result};
use crate::fs::{FileSystem, WritableFile};
use std::path::{Path, PathBuf};

/// A blob file being written. Dropping it without `finish` leaves a partial
/// file behind that the caller removes (or open removes as a leftover).
pub struct BlobWriter {
    file: Box<dyn WritableFile>,
    path: PathBuf,
    meta: BlobMeta,
}

impl BlobWriter {
    /// Creates blob file `number` in `dir` and writes its header.
    pub fn create(fs: &dyn FileSystem, dir: &Path, number: u64) -> Result<BlobWriter> {
        let path = crate::filename::path(dir, crate::filename::FileKind::Blob, number);
        let mut file = fs.create(&path).map_err(|e| Error::io(&path, e))?;
        // Layout: docs/format.md#blob-file
        let mut header = Vec::with_capacity(HEADER_LEN);
        header.extend_from_slice(MAGIC);
        header.extend_from_slice(&VERSION.to_le_bytes());
        let crc = masked_crc(&header);
        header.extend_from_slice(&crc.to_le_bytes());
        file.append(&header).map_err(|e| Error::io(&path, e))?;
        Ok(BlobWriter {
            file,
            path,
            meta: BlobMeta {
                number,
                ..BlobMeta::default()
            },
        })
    }

    /// Appends `value` written under `tree_key`; returns the pointer to it.
    /// REQUIRES: `value` at most `MAX_VALUE_LEN` bytes, `tree_key` a valid tree key.
    pub fn add(&mut self, tree_key: &[u8], value: &[u8]) -> Result<BlobPointer> {
        let too_big = || Error::InvalidArgument(format!("value of {} bytes", value.len()));
        let key_len = u32::try_from(tree_key.len()).map_err(|_| too_big())?;
        let value_len = u32::try_from(value.len()).map_err(|_| too_big())?;
        let value_crc = masked_crc_long(value);
        // Layout: docs/format.md#blob-file (record)
        let mut head = Vec::with_capacity(RECORD_HEADER_LEN + tree_key.len());
        head.extend_from_slice(&[0; 4]);
        head.extend_from_slice(&key_len.to_le_bytes());
        head.extend_from_slice(&value_len.to_le_bytes());
        head.extend_from_slice(&value_crc.to_le_bytes());
        head.extend_from_slice(tree_key);
        let header_crc = masked_crc(head.get(4..).unwrap_or(&[]));
        if let Some(slot) = head.get_mut(..4) {
            slot.copy_from_slice(&header_crc.to_le_bytes());
        }
        let offset = self.file.len() + head.len() as u64;
        self.file
            .append(&head)
            .and_then(|()| self.file.append(value))
            .map_err(|e| Error::io(&self.path, e))?;
        let m = &mut self.meta;
        m.records += 1;
        m.value_bytes += u64::from(value_len);
        if m.records == 1 || tree_key < m.smallest.as_slice() {
            m.smallest = tree_key.to_vec();
        }
        if tree_key > m.largest.as_slice() {
            m.largest = tree_key.to_vec();
        }
        Ok(BlobPointer {
            file: m.number,
            offset,
            len: value_len,
            crc: value_crc,
        })
    }

    /// Bytes of the file so far.
    pub fn bytes(&self) -> u64 {
        self.file.len()
    }

    /// Values written so far.
    pub fn records(&self) -> u64 {
        self.meta.records
    }

    /// Writes the footer and syncs the file. Returns what the manifest records of it.
    pub fn finish(mut self) -> Result<BlobMeta> {
        let mut footer = Vec::with_capacity(FOOTER_LEN);
        footer.extend_from_slice(&self.meta.records.to_le_bytes());
        footer.extend_from_slice(&self.meta.value_bytes.to_le_bytes());
        let crc = masked_crc(&footer);
        footer.extend_from_slice(&crc.to_le_bytes());
        footer.extend_from_slice(MAGIC);
        self.file
            .append(&footer)
            .and_then(|()| self.file.sync_data())
            .map_err(|e| Error::io(&self.path, e))?;
        self.meta.size = self.file.len();
        Ok(self.meta)
    }

    /// The path of the file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }
}
