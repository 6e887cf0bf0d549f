//! A read-only memory mapping of one immutable file (a finished blob file or
//! a table), so that bytes are copied once, from the page cache into the
//! caller's buffer, with no system call.

use super::RandomAccessFile;

/// The bytes of an immutable file, mapped read-only.
pub(crate) struct ReadMap(memmap2::Mmap);

impl ReadMap {
    /// Maps `file` read-only if its file system can (`os_file`) and it is
    /// `len` bytes long; `None` otherwise, and reads then go through
    /// `read_exact_at`.
    ///
    /// REQUIRES: the bytes read never change while mapped, and the file is
    /// never cut below a byte that is read. A table is immutable once
    /// written: lamina never writes, truncates or renames it again, only
    /// removes it whole. A finished blob file is immutable once its footer
    /// is synced: lamina never writes, truncates or renames one again, only
    /// removes it whole. A removed file stays mapped until the mapping is
    /// dropped. A blob file written
    /// at commit changes only in its zeros past the last record, which each
    /// new record overwrites before any pointer names it; sealing cuts those
    /// zeros, below which every pointer ends, and the store drops its handle
    /// so that later readers map the sealed length (recovery also drops the
    /// handle it checked values with before cutting a file a crash left
    /// open). The mapping is therefore valid for every byte read through it
    /// for as long as it lives, on the assumption every mapped store makes
    /// (LMDB's too): nothing outside lamina truncates a database's files
    /// while it is open, which would turn a read into `SIGBUS`.
    pub(crate) fn of(file: &dyn RandomAccessFile, len: u64) -> Option<ReadMap> {
        let os = file.os_file()?;
        if len == 0 || os.metadata().ok()?.len() != len {
            return None;
        }
        // SAFETY: see REQUIRES above: the mapped file is never modified or
        // truncated by lamina while mapped, and the slice handed out borrows
        // the mapping, so it cannot outlive it.
        #[allow(unsafe_code)]
        let map = unsafe { memmap2::MmapOptions::new().map(os) }.ok()?;
        Some(ReadMap(map))
    }

    /// A hint: the mapping is read at random, so a read of a page not in
    /// the page cache reads that page and no more (no read-ahead around it).
    pub(crate) fn advise_random(&self) {
        let _ = self.0.advise(memmap2::Advice::Random);
    }

    /// The file's bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.0
    }
}
