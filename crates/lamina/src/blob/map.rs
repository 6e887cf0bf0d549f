//! A read-only memory mapping of one blob file, so that a value is copied once,
//! from the page cache into the caller's buffer, with no system call.

use crate::fs::RandomAccessFile;

/// The first bytes of a blob file, mapped read-only.
pub(crate) struct Mapping(memmap2::Mmap);

impl Mapping {
    /// Maps `file` read-only if its file system can (`os_file`) and it is
    /// `len` bytes long; `None` otherwise, and reads then go through
    /// `read_exact_at`.
    ///
    /// REQUIRES: the file's first `len` bytes never change while mapped. A
    /// finished blob file is immutable once its footer is synced: lamina
    /// never writes, truncates or renames one again, only removes it whole,
    /// and a removed file stays mapped until the mapping is dropped. A blob
    /// file written at commit only grows past the mapped bytes while it is
    /// written; the one time lamina cuts one (recovery sealing a file a
    /// crash left open) it first drops the mapping it made to check values,
    /// and no reader exists yet. The mapping is therefore valid
    /// for as long as it lives, on the assumption every mapped store makes
    /// (LMDB's too): nothing outside lamina truncates a database's files
    /// while it is open, which would turn a read into `SIGBUS`.
    pub(crate) fn of(file: &dyn RandomAccessFile, len: u64) -> Option<Mapping> {
        let os = file.os_file()?;
        if len == 0 || os.metadata().ok()?.len() != len {
            return None;
        }
        // SAFETY: see REQUIRES above: the mapped file is never modified or
        // truncated by lamina while mapped, and the slice handed out borrows
        // the mapping, so it cannot outlive it.
        #[allow(unsafe_code)]
        let map = unsafe { memmap2::MmapOptions::new().map(os) }.ok()?;
        Some(Mapping(map))
    }

    /// The file's bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.0
    }
}
