//! Appends records to a log file.

use super::{
    file_header, wal_header, BlobSynced, FragmentCrc, Origin, BLOCK_SIZE, END, FILE_HEADER_LEN,
    FIRST, FRAGMENT_HEADER_LEN, FULL, LAST, MIDDLE, ZERO_FILL_STEP,
};
use crate::fs::{FileSyncer, FileSystem, WritableFile, Writeback, WritebackMark};
use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The first step of zeros written ahead of a WAL segment that grows as it
/// is written ([`LogWriter::grow_as_written`]): a database written once
/// keeps a small segment.
pub const FIRST_FILL_STEP: u64 = 4 << 10;

/// Most bytes [`LogWriter::flush_mapped`] copies through the mapped window
/// at once. Each 4 KiB page first written through a shared mapping costs a
/// page fault and the file system's dirtying of it: for a 100 KB record
/// from Python that was a quarter of the put's time (perf), where one
/// `pwrite` copies it in one call. Small records, the common case, share
/// their pages' faults and skip the system call.
pub const MAPPED_WRITE_MAX: usize = 16 << 10;

/// The most buffer a log keeps allocated once its bytes are written: two
/// steps of zeros. A larger buffer (a batch of hundreds of megabytes is one
/// record) is let go of, so that one large batch does not hold its size in
/// memory for the rest of the segment's life.
const KEEP_BUFFER: usize = 2 * ZERO_FILL_STEP as usize;

/// Writes records to a new log file in the framing of
/// docs/format.md#record-framing.
///
/// [`LogWriter::add_record`] only frames into a memory buffer;
/// [`LogWriter::flush`] hands the buffer to the operating system (it then
/// survives a killed process) and [`LogWriter::sync`] also makes it durable
/// (it then survives a power loss). A commit group adds several records and
/// syncs once.
///
/// A WAL segment (docs/format.md#recyclable-segments)
/// is written at its own position, over whatever the file held, and kept
/// zero-filled [`ZERO_FILL_STEP`] bytes past its data, so its size changes
/// once per step rather than on every flush.
///
/// After a failed flush the file holds the records flushed before it and
/// none of the failed one's (see [`LogWriter::flush`]); the caller must
/// stop using the writer and start a new file, as lamina does by refusing
/// writes until reopened.
pub struct LogWriter {
    file: Box<dyn WritableFile>,
    path: PathBuf,
    /// Framed bytes not yet handed to the file.
    buf: Vec<u8>,
    /// Bytes already handed to the file.
    flushed: u64,
    /// Position inside the current block of the next fragment.
    block_offset: usize,
    /// Fragment checksums, covering the segment's number in a WAL segment
    /// (see [`FragmentCrc`]).
    crc: FragmentCrc,
    /// Length of the file (its data, then zeros or an earlier life's bytes).
    file_len: u64,
    /// End of the window mapped for [`LogWriter::flush_mapped`] (0: none).
    window_end: u64,
    /// Whether the file can be written through a mapping (until it says no).
    mappable: bool,
    /// How far [`LogWriter::writeback_due`] asked for write-back.
    written_back: WritebackMark,
    /// The last mark added ([`LogWriter::add_blob_synced`]).
    last_mark: Option<BlobSynced>,
    /// Whether the zeros ahead grow with the segment's data (from
    /// [`FIRST_FILL_STEP`] to [`ZERO_FILL_STEP`]) rather than always being
    /// [`ZERO_FILL_STEP`].
    grow: bool,
}

// A log is never empty (it holds at least its file header), so no `is_empty`.
#[allow(clippy::len_without_is_empty)]
impl LogWriter {
    /// Creates (or truncates) the file at `path` and starts it with the
    /// 16-byte file header for `magic`: a manifest's, [`super::MANIFEST_MAGIC`]
    /// (a WAL segment is started by [`LogWriter::create_wal`]).
    /// The header is buffered: nothing but the empty file exists until the
    /// first flush, and neither the file nor its name is durable until the
    /// caller syncs it and its directory.
    pub fn create(fs: &dyn FileSystem, path: &Path, magic: &[u8; 8]) -> Result<LogWriter> {
        let file = fs.create(path).map_err(|e| Error::io(path, e))?;
        Ok(LogWriter {
            file,
            path: path.to_path_buf(),
            buf: file_header(magic).to_vec(),
            flushed: 0,
            block_offset: 0,
            crc: FragmentCrc::new(None),
            file_len: 0,
            window_end: 0,
            mappable: false,
            written_back: WritebackMark::default(),
            last_mark: None,
            grow: false,
        })
    }

    /// Creates (or truncates) the WAL segment at `path` and starts it with
    /// the WAL header naming `origin` (docs/format.md#record-framing).
    /// Buffered and durable as [`LogWriter::create`] says; the first flush
    /// also zero-fills the file ahead.
    pub fn create_wal(fs: &dyn FileSystem, path: &Path, origin: Origin) -> Result<LogWriter> {
        let file = fs.create(path).map_err(|e| Error::io(path, e))?;
        Ok(LogWriter {
            file,
            path: path.to_path_buf(),
            buf: wal_header(origin),
            flushed: 0,
            block_offset: 0,
            crc: FragmentCrc::new(Some(origin.number)),
            file_len: 0,
            window_end: 0,
            mappable: true,
            written_back: WritebackMark::default(),
            last_mark: None,
            grow: false,
        })
    }

    /// Opens the manifest at `path`, whose records end cleanly at `end` (its
    /// length: no torn tail), to append more records after them
    /// (docs/format.md#manifest). Nothing is written until the first flush.
    pub fn append_manifest(fs: &dyn FileSystem, path: &Path, end: u64) -> Result<LogWriter> {
        let file = fs.reopen(path).map_err(|e| Error::io(path, e))?;
        let file_len = file.len();
        if end != file_len || end < FILE_HEADER_LEN as u64 {
            return Err(Error::corruption(
                path,
                end,
                "the manifest does not end where its records do",
            ));
        }
        let in_block = (end - FILE_HEADER_LEN as u64) % BLOCK_SIZE as u64;
        Ok(LogWriter {
            file,
            path: path.to_path_buf(),
            buf: Vec::new(),
            flushed: end,
            block_offset: usize::try_from(in_block).unwrap_or(0),
            crc: FragmentCrc::new(None),
            file_len,
            window_end: 0,
            mappable: false,
            written_back: WritebackMark::default(),
            last_mark: None,
            grow: false,
        })
    }

    /// Opens the WAL segment `origin` at `path`, whose records end at `end`
    /// and which holds nothing but its END and zeros after them, to append
    /// more records there: the first flush writes over END
    /// (docs/format.md#appending-to-a-closed-segment). Nothing is written
    /// until then.
    /// REQUIRES: a reader found the segment so ([`super::LogReader::closed_before_zeros`]).
    pub fn append_wal(
        fs: &dyn FileSystem,
        path: &Path,
        origin: Origin,
        end: u64,
    ) -> Result<LogWriter> {
        let file = fs.reopen(path).map_err(|e| Error::io(path, e))?;
        let file_len = file.len();
        let header = super::WAL_HEADER_LEN as u64;
        if end > file_len || end < header {
            return Err(Error::corruption(
                path,
                end,
                "the WAL segment does not hold the records it was read with",
            ));
        }
        let in_block = (end - header) % BLOCK_SIZE as u64;
        Ok(LogWriter {
            file,
            path: path.to_path_buf(),
            buf: Vec::new(),
            flushed: end,
            block_offset: usize::try_from(in_block).unwrap_or(0),
            crc: FragmentCrc::new(Some(origin.number)),
            file_len,
            window_end: 0,
            mappable: true,
            written_back: WritebackMark::default(),
            last_mark: None,
            grow: false,
        })
    }

    /// Makes the zeros written ahead of this WAL segment grow with it: each
    /// step is as long as the data so far, at least [`FIRST_FILL_STEP`] and
    /// at most [`ZERO_FILL_STEP`] (docs/format.md#recyclable-segments), so
    /// a segment written once stays small and one written often is
    /// preallocated a megabyte at a time, as without it.
    #[must_use]
    pub fn grow_as_written(mut self) -> LogWriter {
        self.grow = true;
        self
    }

    /// The length of the step of zeros written after data ending at `end`.
    fn fill_step(&self, end: u64) -> u64 {
        if self.grow {
            end.clamp(FIRST_FILL_STEP, ZERO_FILL_STEP)
        } else {
            ZERO_FILL_STEP
        }
    }

    /// Reuses the WAL segment at `old` as segment `origin` at `new`
    /// (docs/format.md#recyclable-segments): writes the new
    /// header over the old one and syncs it, then renames `old` to `new`.
    /// The rest of the file is kept (its records no longer verify). The
    /// rename is durable only after the caller syncs the directory.
    /// REQUIRES: `old` is no longer needed (below the manifest's log number).
    pub fn reuse_wal(
        fs: &dyn FileSystem,
        old: &Path,
        new: &Path,
        origin: Origin,
    ) -> Result<LogWriter> {
        let file = fs.reopen(old).map_err(|e| Error::io(old, e))?;
        let file_len = file.len();
        let mut w = LogWriter {
            file,
            path: old.to_path_buf(),
            buf: wal_header(origin),
            flushed: 0,
            block_offset: 0,
            crc: FragmentCrc::new(Some(origin.number)),
            file_len,
            window_end: 0,
            mappable: true,
            written_back: WritebackMark::default(),
            last_mark: None,
            grow: false,
        };
        w.sync()?;
        fs.rename(old, new).map_err(|e| Error::io(new, e))?;
        w.path = new.to_path_buf();
        Ok(w)
    }

    /// Frames END, which closes a WAL segment (no record follows); does
    /// nothing in a manifest. Does no I/O.
    pub fn add_end(&mut self) {
        if self.crc.salted() {
            self.make_room_for_header();
            self.emit(END, &[]);
        }
    }

    /// Frames a mark saying that a blob file was synced
    /// (docs/format.md#blob-sync-marks), unless it says what the
    /// last one did; does nothing in a file other than a WAL segment.
    /// Returns whether it framed it. Does no I/O.
    /// REQUIRES: the blob file's sync (and its name's) returned before.
    pub fn add_blob_synced(&mut self, mark: BlobSynced) -> bool {
        if !self.crc.salted() || self.last_mark == Some(mark) {
            return false;
        }
        self.add_record(&mark.encode());
        self.last_mark = Some(mark);
        true
    }

    /// Moves to the next block if the current one has no room for a
    /// fragment header, zero-filling the rest.
    fn make_room_for_header(&mut self) {
        let room = BLOCK_SIZE.saturating_sub(self.block_offset);
        if room < FRAGMENT_HEADER_LEN {
            self.buf.resize(self.buf.len().saturating_add(room), 0);
            self.block_offset = 0;
        }
    }

    /// Frames `payload` as one record at the end of the buffer. Does no I/O
    /// and cannot fail; any length is accepted, the empty payload included.
    pub fn add_record(&mut self, payload: &[u8]) {
        // Once, rather than doubling (and copying) as fragments are added.
        self.buf.reserve(self.framed_len(payload.len()));
        let mut rest = payload;
        let mut first = true;
        loop {
            let room = BLOCK_SIZE.saturating_sub(self.block_offset);
            if room < FRAGMENT_HEADER_LEN {
                // Too small for a fragment header: zero-fill, go to the next block.
                self.buf.resize(self.buf.len().saturating_add(room), 0);
                self.block_offset = 0;
                continue;
            }
            let fits = room - FRAGMENT_HEADER_LEN;
            let n = rest.len().min(fits);
            let (chunk, tail) = rest.split_at(n);
            let last = tail.is_empty();
            let ty = match (first, last) {
                (true, true) => FULL,
                (true, false) => FIRST,
                (false, false) => MIDDLE,
                (false, true) => LAST,
            };
            self.emit(ty, chunk);
            rest = tail;
            first = false;
            if last {
                return;
            }
        }
    }

    /// At most the bytes a record of `payload_len` takes once framed: its
    /// fragment headers, and the zeros that may close a block first.
    pub fn framed_len(&self, payload_len: usize) -> usize {
        let fragments = payload_len / (BLOCK_SIZE - FRAGMENT_HEADER_LEN) + 2;
        payload_len + (fragments + 1) * FRAGMENT_HEADER_LEN
    }

    /// Whether a record of `payload_len`, added now, reaches the file
    /// through the mapped window at the next [`LogWriter::flush_mapped`],
    /// with no system call.
    pub fn fits_mapped(&self, payload_len: usize) -> bool {
        let framed = self.buf.len().saturating_add(self.framed_len(payload_len));
        framed <= MAPPED_WRITE_MAX && self.flushed.saturating_add(framed as u64) <= self.window_end
    }

    /// Appends one fragment; `chunk` fits in the current block.
    fn emit(&mut self, ty: u8, chunk: &[u8]) {
        // A fragment never exceeds BLOCK_SIZE - FRAGMENT_HEADER_LEN < u16::MAX bytes.
        let len = u16::try_from(chunk.len()).unwrap_or(u16::MAX);
        self.buf
            .extend_from_slice(&self.crc.of(ty, chunk).to_le_bytes());
        self.buf.extend_from_slice(&len.to_le_bytes());
        self.buf.push(ty);
        self.buf.extend_from_slice(chunk);
        self.block_offset = self
            .block_offset
            .saturating_add(FRAGMENT_HEADER_LEN + chunk.len());
    }

    /// Hands every buffered byte to the file with one write at the log's
    /// position; for a WAL segment, a write that passes the file's end is
    /// followed by a second one of zeros past its end (the step:
    /// [`ZERO_FILL_STEP`], or less while the segment is small, see
    /// [`LogWriter::grow_as_written`]).
    /// When it returns `Ok` the bytes survive the process being killed, not
    /// a power loss. Does nothing if the buffer is empty.
    ///
    /// The outcome on disk is the one returned: `Ok` once the records are
    /// whole in the file, even if the zeros after them failed (a full disk
    /// takes the records and refuses the zeros: the next write past the end
    /// tries them again); an error once the records' own write failed, after
    /// cutting the file back to the bytes handed to it before, so that no
    /// record of the failed write (some may be whole, the rest torn) is
    /// replayed at the next open.
    pub fn flush(&mut self) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let end = self.flushed.saturating_add(self.buf.len() as u64);
        // Layout: docs/format.md#recyclable-segments (filling)
        let written = self.file.write_at(self.flushed, &self.buf);
        self.buf.clear();
        if let Err(e) = written {
            return Err(self.undo_failed_write(e));
        }
        self.flushed = end;
        if self.crc.salted() && end > self.file_len {
            let fill = usize::try_from(self.fill_step(end)).unwrap_or(0);
            self.buf.resize(fill, 0);
            // Refused, its start may be in the file: the file's length says
            // how far, and the next write past it tries the step again.
            let _ = self.file.write_at(end, &self.buf);
            self.buf.clear();
            self.file_len = self.file.len().max(end);
        }
        if self.buf.capacity() > KEEP_BUFFER {
            self.buf = Vec::new();
        }
        Ok(())
    }

    /// After the write of the records from [`LogWriter::len`]'s flushed
    /// position failed with `e` (a part of it may be in the file): cuts the
    /// file back to that position and syncs the cut, so that no byte of the
    /// failed write is read as a record. Returns the error to report: `e`,
    /// or, if the file could not be cut, `e` saying so.
    fn undo_failed_write(&mut self, e: std::io::Error) -> Error {
        self.window_end = 0;
        self.mappable = false;
        let cut = self.file.truncate(self.flushed).and_then(|()| {
            self.file_len = self.flushed;
            self.file.sync_data()
        });
        match cut {
            Ok(()) => Error::io(&self.path, e),
            Err(cut) => Error::io(
                &self.path,
                std::io::Error::new(
                    e.kind(),
                    format!(
                        "{e}; the records of the failed write could not be removed ({cut}), \
                         and may be replayed at the next open"
                    ),
                ),
            ),
        }
    }

    /// Hands every buffered byte to the file as [`LogWriter::flush`] does,
    /// durable alike (a killed process loses nothing), but without a system
    /// call when the bytes fall inside the zero-filled space ahead: a WAL
    /// segment's bytes from its position to the end of the file are mapped
    /// shared, and the bytes are copied there — the same bytes, at the same
    /// offsets, as `flush` would write (docs/format.md#recyclable-segments).
    /// Bytes that would pass the end of the file go through `flush` (which
    /// fills the next step with zeros), and the window is mapped again.
    /// Other logs, and file systems without mappings, always use `flush`;
    /// so do more than [`MAPPED_WRITE_MAX`] bytes at once, for which one
    /// `pwrite` costs less than the page faults of copying them through the
    /// window (a window mapped before stays valid: the file only grows).
    pub fn flush_mapped(&mut self) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let end = self.flushed.saturating_add(self.buf.len() as u64);
        if self.buf.len() > MAPPED_WRITE_MAX {
            // Nor is the window mapped again when this write grows the file:
            // a stream of large records would map (and populate) every step
            // of zeros ahead; the next small record maps it.
            return self.flush();
        }
        if end <= self.window_end {
            // Layout: docs/format.md#recyclable-segments (writing through a mapping)
            let written = self.file.write_mapped(self.flushed, &self.buf);
            match written {
                Ok(true) => {
                    self.buf.clear();
                    self.flushed = end;
                    return Ok(());
                }
                Ok(false) => self.window_end = 0,
                Err(e) => {
                    self.buf.clear();
                    return Err(self.undo_failed_write(e));
                }
            }
        }
        self.flush()?;
        if self.mappable && self.crc.salted() && self.file_len > self.flushed {
            // A file that cannot be mapped is still written, with system calls.
            match self.file.map_window(self.flushed, self.file_len) {
                Ok(true) => self.window_end = self.file_len,
                Ok(false) | Err(_) => {
                    self.window_end = 0;
                    self.mappable = false;
                }
            }
        }
        Ok(())
    }

    /// Flushes, then syncs the file's data. When it returns `Ok` every record
    /// added so far survives a power loss (provided the file's creation was
    /// made durable by a sync of its directory).
    pub fn sync(&mut self) -> Result<()> {
        self.flush()?;
        self.file.sync_data().map_err(|e| Error::io(&self.path, e))
    }

    /// A handle that syncs this log's file from another thread, without
    /// the writer (see [`crate::fs::WritableFile::syncer`]): it covers the
    /// bytes flushed before [`LogSyncer::sync`] is called. `None` if the
    /// file system has none.
    pub fn syncer(&self) -> Option<LogSyncer> {
        Some(LogSyncer {
            file: self.file.syncer()?,
            path: self.path.clone(),
        })
    }

    /// The next whole steps of [`crate::fs::WRITEBACK_STEP`] bytes handed to the file
    /// whose write-back may start now, or `None` while less than a step was
    /// handed to it since the last. The caller starts it on another thread,
    /// so that the sync which closes the segment (or a `Sync` commit's)
    /// finds little left to write; durability is unchanged. Bytes below the
    /// data's end are never written again, so the pages written back stay
    /// clean.
    pub fn writeback_due(&mut self) -> Option<Writeback> {
        self.written_back.due(self.flushed, self.file.as_ref())
    }

    /// Bytes the buffer holds allocated (tests).
    #[cfg(test)]
    pub(crate) fn buffer_capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// Bytes framed but not yet flushed.
    pub fn buffered_len(&self) -> usize {
        self.buf.len()
    }

    /// Logical length of the file: bytes flushed plus bytes buffered.
    pub fn len(&self) -> u64 {
        self.flushed.saturating_add(self.buf.len() as u64)
    }

    #[cfg(any(test, feature = "internals"))]
    /// The path of the file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Syncs a log's file while its [`LogWriter`] goes on writing.
pub struct LogSyncer {
    file: Arc<dyn FileSyncer>,
    path: PathBuf,
}

impl LogSyncer {
    /// Makes every byte the writer flushed before this call durable.
    pub fn sync(&self) -> Result<()> {
        self.file.sync_data().map_err(|e| Error::io(&self.path, e))
    }
}

impl std::fmt::Debug for LogWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogWriter")
            .field("path", &self.path)
            .field("flushed", &self.flushed)
            .field("buffered", &self.buf.len())
            .finish()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::fs::MemFs;
    use crate::wal::Origin;

    fn segment(fs: &MemFs, path: &Path) -> LogWriter {
        let origin = Origin {
            identity: 7,
            number: 3,
        };
        let fs: &dyn FileSystem = fs;
        fs.create_dir_all(Path::new("/db")).unwrap();
        LogWriter::create_wal(fs, path, origin)
            .unwrap()
            .grow_as_written()
    }

    /// A segment that grows as written starts at a few KiB, not a MiB: a
    /// database written once took 1.1 MB, nearly all of it the zeros ahead
    /// of its WAL. Written on, its steps double up to a MiB.
    #[test]
    fn a_growing_segment_starts_small_and_doubles_to_the_full_step() {
        let fs = MemFs::new();
        let path = Path::new("/db/000003.wal");
        let mut w = segment(&fs, path);
        w.add_record(b"one key");
        w.sync().unwrap();
        let size = fs.file_size(path).unwrap();
        assert_eq!(size, w.len() + FIRST_FILL_STEP);
        let mut sizes = vec![size];
        while w.len() < 3 * ZERO_FILL_STEP {
            w.add_record(&[9u8; 3000]);
            w.flush().unwrap();
            let now = fs.file_size(path).unwrap();
            if now != *sizes.last().unwrap() {
                sizes.push(now);
            }
        }
        // A write passing the end leaves the data and as many zeros again
        // (at least 4 KiB, at most 1 MiB): the file at most doubles, and
        // grows by a MiB and a record once large.
        for pair in sizes.windows(2) {
            let (before, after) = (pair[0], pair[1]);
            assert!(after <= 2 * (before + 3100), "{sizes:?}");
            assert!(after - before <= ZERO_FILL_STEP + 3100, "{sizes:?}");
        }
        let last = sizes.windows(2).last().map_or(0, |p| p[1] - p[0]);
        assert!(last >= ZERO_FILL_STEP, "{sizes:?}");
        assert!(
            sizes.len() < 20,
            "a few steps, not one per flush: {sizes:?}"
        );
        let mut r = crate::wal::LogReader::open(&fs, path, crate::wal::WAL_MAGIC).unwrap();
        let mut n = 0;
        while r.next_record().unwrap().is_some() {
            n += 1;
        }
        assert!(n > 1000, "{n} records read back");
        assert!(
            r.ends_open() && r.torn_tail().is_none(),
            "zero fill is not a tear"
        );
    }
}
