//! The blob files of one database, opened on first use and kept open.

use super::file::BlobFile;
use super::hot::{HotValues, Kept};
use super::pointer::BlobPointer;
use super::value::LazyValue;
use crate::error::{Error, Result};
use crate::fs::FileSystem;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Open blob files by number, at most `max_open` at once. Thread-safe.
/// Once [`BlobStore::close`]d it keeps no file open and opens none.
pub struct BlobStore {
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
    max_open: usize,
    /// The files kept open; `None` once closed.
    open: Mutex<Option<HashMap<u64, Arc<BlobFile>>>>,
    hot: Arc<HotValues>,
}

impl BlobStore {
    /// The blob files of the database in `dir`, keeping at most `max_open`
    /// of them open (a value being read keeps its own file open).
    pub fn new(fs: Arc<dyn FileSystem>, dir: &Path, max_open: usize) -> BlobStore {
        BlobStore {
            fs,
            dir: dir.to_path_buf(),
            max_open: max_open.max(1),
            open: Mutex::new(Some(HashMap::new())),
            hot: Arc::new(HotValues::new(0)),
        }
    }

    /// The same store, keeping about `bytes` of the values read more than
    /// once in memory, verified ([`HotValues`]).
    pub fn with_hot_values(mut self, bytes: usize) -> BlobStore {
        self.hot = Arc::new(HotValues::new(bytes));
        self
    }

    /// The path of blob file `number`.
    pub fn path(&self, number: u64) -> PathBuf {
        crate::filename::path(&self.dir, crate::filename::FileKind::Blob, number)
    }

    /// Blob file `number`, opened (and mapped, where the file system can) if
    /// it is not yet.
    #[cfg(any(test, feature = "internals"))]
    pub fn file(&self, number: u64) -> Result<Arc<BlobFile>> {
        if let Some(f) = self.open.lock().as_ref().and_then(|o| o.get(&number)) {
            return Ok(Arc::clone(f));
        }
        self.open_file(number)
    }

    /// The blob file `p` points into, opened again if the handle kept
    /// open ends before `p`'s value (a file written at commit grows after
    /// it was opened: docs/format.md#blob-files-written-at-commit).
    pub fn file_for(&self, p: &BlobPointer) -> Result<Arc<BlobFile>> {
        self.file_of_len(p.file, p.offset.saturating_add(u64::from(p.len)))
    }

    /// Blob file `number`, opened again if the handle kept open ends before
    /// `len` bytes (it was opened while the file was written at commit).
    pub fn file_of_len(&self, number: u64, len: u64) -> Result<Arc<BlobFile>> {
        match self.open_covering(number, len) {
            Some(f) => Ok(f),
            None => self.open_file(number),
        }
    }

    /// Blob file `number` if it is open with at least `len` bytes.
    fn open_covering(&self, number: u64, len: u64) -> Option<Arc<BlobFile>> {
        self.open
            .lock()
            .as_ref()?
            .get(&number)
            .filter(|f| f.handle().len() >= len)
            .cloned()
    }

    /// Opens blob file `number` and keeps it open in place of any handle
    /// kept before; `Error::Closed` once the store is closed.
    fn open_file(&self, number: u64) -> Result<Arc<BlobFile>> {
        if self.open.lock().is_none() {
            return Err(Error::Closed);
        }
        let path = self.path(number);
        let f = self.fs.open(&path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                Error::corruption(&path, 0, "a blob pointer names a blob file that is missing")
            } else {
                Error::io(&path, e)
            }
        })?;
        let f = Arc::new(BlobFile::new(f, path));
        let mut open = self.open.lock();
        // Closed while the file was opened: it goes with this call's `Arc`.
        let Some(open) = open.as_mut() else {
            return Err(Error::Closed);
        };
        if open.len() >= self.max_open && !open.contains_key(&number) {
            // Any one will do: blob files are read rarely enough that which
            // stays open matters less than the bound.
            if let Some(&victim) = open.keys().next() {
                open.remove(&victim);
            }
        }
        open.insert(number, Arc::clone(&f));
        Ok(f)
    }

    /// Decodes a kind 3 entry's value; a bad pointer is corruption of `table`.
    pub fn pointer(table: &Path, value: &[u8]) -> Result<BlobPointer> {
        BlobPointer::decode(value).map_err(|r| Error::corruption(table, 0, r))
    }

    /// The value a pointer (the bytes of a kind 3 entry) names, not yet read.
    pub fn lazy(&self, pointer_bytes: &[u8]) -> Result<LazyValue> {
        let p = BlobStore::pointer(&self.dir, pointer_bytes)?;
        if let Some(v) = self.hot.get(&p) {
            return Ok(LazyValue::hot(v));
        }
        Ok(LazyValue::blob(
            self.file_for(&p)?,
            p,
            Arc::clone(&self.hot),
        ))
    }

    /// The value a pointer names, not yet read, if that needs no file to be
    /// opened: kept in memory, or in a file open already.
    pub fn lazy_if_open(&self, pointer_bytes: &[u8]) -> Result<Option<LazyValue>> {
        let p = BlobStore::pointer(&self.dir, pointer_bytes)?;
        if let Some(v) = self.hot.get(&p) {
            return Ok(Some(LazyValue::hot(v)));
        }
        let end = p.offset.saturating_add(u64::from(p.len));
        Ok(self
            .open_covering(p.file, end)
            .map(|f| LazyValue::blob(f, p, Arc::clone(&self.hot))))
    }

    /// The value a pointer names if it is kept in memory (read before and
    /// verified then), without opening its file.
    pub fn kept(&self, pointer_bytes: &[u8]) -> Result<Option<Kept>> {
        Ok(self.hot.get(&BlobStore::pointer(&self.dir, pointer_bytes)?))
    }

    /// Reads the value `p` names into a new vector (checksum verified),
    /// from its file (for recovery and checks: it is not offered to the
    /// values kept in memory, nor taken from them).
    pub fn read(&self, p: &BlobPointer) -> Result<Vec<u8>> {
        let mut v = vec![0u8; p.len as usize];
        self.file_for(p)?.read_into(p, &mut v)?;
        Ok(v)
    }

    /// Forgets blob file `number` (it was removed).
    pub fn evict(&self, number: u64) {
        if let Some(open) = self.open.lock().as_mut() {
            open.remove(&number);
        }
    }

    /// Closes every blob file kept open, unmapping it (a value being read
    /// keeps its own file until the read ends), and opens none from now
    /// on: `Error::Closed`. For the database's `close`.
    pub fn close(&self) {
        let open = self.open.lock().take();
        drop(open);
    }

    /// Forgets every open blob file (a read-only handle's refresh: files
    /// written at commit have grown since they were opened).
    pub fn evict_all(&self) {
        if let Some(open) = self.open.lock().as_mut() {
            open.clear();
        }
    }
}
