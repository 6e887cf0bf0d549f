//! One open blob file: its handle, its path, and its mapping where the file
//! system can map it.

use super::pointer::BlobPointer;
use super::reader::{copy_value, copy_value_uninit, read_value};
use crate::error::Result;
use crate::fs::{RandomAccessFile, ReadMap};
use std::mem::MaybeUninit;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// An open, finished blob file. Thread-safe; immutable.
pub struct BlobFile {
    file: Arc<dyn RandomAccessFile>,
    path: PathBuf,
    map: Option<ReadMap>,
}

impl BlobFile {
    /// Wraps the finished blob file `file` at `path`, mapping it read-only
    /// when its file system can ([`RandomAccessFile::os_file`]).
    pub fn new(file: Arc<dyn RandomAccessFile>, path: PathBuf) -> BlobFile {
        let map = ReadMap::of(file.as_ref(), file.len());
        BlobFile { file, path, map }
    }

    /// The file's handle, for reads of whole records (`scan`).
    pub fn handle(&self) -> &dyn RandomAccessFile {
        self.file.as_ref()
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether reads copy from a mapping rather than read the file.
    #[cfg(any(test, feature = "internals"))]
    pub fn is_mapped(&self) -> bool {
        self.map.is_some()
    }

    /// Copies the value `ptr` names into `buf` (REQUIRES: `buf.len() ==
    /// ptr.len`) and verifies its checksum: from the mapping, one `memcpy`;
    /// otherwise one positional read. A mismatch is `Corruption` naming the
    /// file and offset; `buf` then holds bytes that must not be used.
    pub fn read_into(&self, ptr: &BlobPointer, buf: &mut [u8]) -> Result<()> {
        match &self.map {
            Some(m) => copy_value(m.bytes(), &self.path, ptr, buf),
            None => read_value(self.file.as_ref(), &self.path, ptr, buf),
        }
    }

    /// [`BlobFile::read_into`] a buffer not yet initialised; returns it,
    /// initialised and verified. From the mapping it is one `memcpy` with
    /// no zeroing before it.
    pub fn read_into_uninit<'b>(
        &self,
        ptr: &BlobPointer,
        buf: &'b mut [MaybeUninit<u8>],
    ) -> Result<&'b [u8]> {
        match &self.map {
            Some(m) => copy_value_uninit(m.bytes(), &self.path, ptr, buf),
            None => {
                let mut v = vec![0u8; buf.len()];
                read_value(self.file.as_ref(), &self.path, ptr, &mut v)?;
                Ok(buf.write_copy_of_slice(&v))
            }
        }
    }
}
