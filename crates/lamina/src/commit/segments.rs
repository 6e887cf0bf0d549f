//! The life of WAL segments: started (a fresh file, or an old segment
//! reused under the new number), closed with END, and retired once the
//! manifest's log number has passed them — kept for reuse, a few at a time,
//! or removed.
//!
//! Layout: docs/format.md#recyclable-segments. A reused file was
//! written before, to its whole length, so writing over it changes neither
//! its size nor its allocation and `fdatasync` has no metadata to write.
//! Only a rotation that writes made reuses one (see [`SegmentFor`]): a
//! segment started by an open, a flush or a compaction asked for, or an
//! ingest is a new file that grows as it is written, so that a database
//! at rest holds no segment longer than its data. An open after a clean
//! close starts none: it goes on writing the last segment after its
//! records (docs/format.md#appending-to-a-closed-segment).

use crate::db::Inner;
use crate::error::Result;
use crate::filename::{self, parse_file_name, FileKind};
use crate::wal::{LogWriter, Origin};
use std::sync::atomic::Ordering;

/// Most retired segments kept for reuse; the others are removed. A flush
/// retires about one segment per rotation, so two cover a flush that ends
/// after the next rotation has begun.
const KEEP_FOR_REUSE: usize = 2;

/// Memtables' worth of records a retired segment may hold and still be
/// kept for reuse (with its zero fill ahead). A longer one held a batch
/// larger than the memtable: reused, it would keep that length, and the
/// space, for writes that fill one memtable.
const REUSE_MEMTABLES: u64 = 2;

/// What a new WAL segment is started for, which decides whether it may be
/// a retired segment reused (docs/design.md, "WAL segments at the device's
/// limit").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SegmentFor {
    /// Writes filled the memtable and go on: a retired segment is reused
    /// whole, already as long as they are about to make it.
    Writes,
    /// Anything else — an open, a flush or compaction asked for, an
    /// ingest: what follows may be a few writes or none, so the segment is
    /// a new file that grows as it is written (a reused one would keep its
    /// whole former length, and its space, for them).
    Rest,
}

impl Inner {
    /// Makes every write so far durable: the WAL is flushed and synced.
    pub(crate) fn sync_wal(&self) -> Result<()> {
        let mut wal = self.wal_paid_for()?;
        if let Some(w) = wal.as_mut() {
            let synced = self
                .sync_commit_blob()
                .and_then(|mark| crate::commit::hand_mark(w, mark))
                .and_then(|()| w.sync());
            if let Err(e) = synced {
                self.poison(&e);
                return Err(e);
            }
            self.counters().wal_syncs.fetch_add(1, Ordering::Relaxed);
            let c = self.commit();
            c.pipeline.synced_to(c.pipeline.written(), &c.visible_seqno);
        }
        Ok(())
    }

    /// Closes the WAL segment at `close`, after the threads are joined: a
    /// commit group racing with close may have appended after its last
    /// sync (and rotated); that is made durable too before the segment is
    /// let go, its blob file's values first, as `sync_wal` does.
    pub(crate) fn close_wal(&self) -> Result<()> {
        match self.wal_paid_for().map(|mut wal| wal.take()) {
            Ok(Some(mut w)) if !self.is_poisoned() => self
                .sync_commit_blob()
                .and_then(|mark| super::hand_mark(&mut w, mark))
                .and_then(|()| self.close_wal_segment(&mut w)),
            Ok(_) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Starts WAL segment `number`: for [`SegmentFor::Writes`], reuses a
    /// retired segment if one is kept (its new header synced, then
    /// renamed); else creates the file. The header is handed to the file;
    /// the caller syncs the directory and records the segment in the
    /// manifest before anything in it is acknowledged (docs/format.md#wal).
    pub(crate) fn start_wal_segment(&self, number: u64, purpose: SegmentFor) -> Result<LogWriter> {
        let path = filename::path(self.path(), FileKind::Wal, number);
        let origin = Origin {
            identity: self.tables().identity(),
            number,
        };
        let reusable = match purpose {
            SegmentFor::Writes => self.commit().reusable_wals.lock().pop(),
            SegmentFor::Rest => None,
        };
        if let Some(old) = reusable {
            let old_path = filename::path(self.path(), FileKind::Wal, old);
            match LogWriter::reuse_wal(self.fs().as_ref(), &old_path, &path, origin) {
                Ok(w) => {
                    let mut w = w.grow_as_written();
                    self.counters()
                        .wal_segments_reused
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    w.flush()?;
                    return Ok(w);
                }
                // A file that cannot be reused is not needed: a new one will do.
                Err(_) => {
                    let _ = self.fs().remove_file(&old_path);
                }
            }
        }
        let mut w = LogWriter::create_wal(self.fs().as_ref(), &path, origin)?.grow_as_written();
        w.flush()?;
        Ok(w)
    }

    /// Goes on writing WAL segment `number` (at open) after its records,
    /// which end at `end`: the segment a clean close left as the log's
    /// last, recorded in the manifest, with only zeros after its END
    /// (docs/format.md#appending-to-a-closed-segment). Writes nothing: its
    /// name and records are durable already, so nothing appended to it
    /// owes a sync of the directory or the manifest.
    pub(crate) fn append_to_wal_segment(&self, number: u64, end: u64) -> Result<LogWriter> {
        let path = filename::path(self.path(), FileKind::Wal, number);
        let origin = Origin {
            identity: self.tables().identity(),
            number,
        };
        Ok(LogWriter::append_wal(self.fs().as_ref(), &path, origin, end)?.grow_as_written())
    }

    /// Closes a segment that will receive no more records: END, then a
    /// sync. When it returns `Ok`, everything written to it is durable.
    pub(crate) fn close_wal_segment(&self, w: &mut LogWriter) -> Result<()> {
        w.add_end();
        w.sync()
    }

    /// Removes the retired segments kept for reuse (to reclaim their space).
    pub(crate) fn remove_reusable_wals(&self) {
        for n in std::mem::take(&mut *self.commit().reusable_wals.lock()) {
            let _ = self
                .fs()
                .remove_file(&filename::path(self.path(), FileKind::Wal, n));
        }
    }

    /// Retires every WAL segment numbered below `log_number` (which the
    /// manifest has recorded durably): up to [`KEEP_FOR_REUSE`] are kept to
    /// be reused by later segments, the others removed.
    /// REQUIRES: no segment below `log_number` is still needed.
    pub(crate) fn retire_wals_below(&self, log_number: u64) {
        let Ok(names) = self.fs().list_dir(self.path()) else {
            return;
        };
        let mut old: Vec<u64> = names
            .iter()
            .filter_map(|n| match parse_file_name(n) {
                Some((FileKind::Wal, n)) if n < log_number => Some(n),
                _ => None,
            })
            .collect();
        old.sort_unstable();
        if old.is_empty() {
            return;
        }
        // A read-only handle replaying a segment keeps it as it is.
        let pins = crate::reader_pins::Pins::read(self.fs().as_ref(), self.path());
        let longest = (self.opts().memtable_size as u64)
            .saturating_mul(REUSE_MEMTABLES)
            .saturating_add(crate::wal::ZERO_FILL_STEP);
        let mut keep = self.commit().reusable_wals.lock();
        for n in old {
            if keep.contains(&n) || pins.holds(n) {
                continue;
            }
            let path = filename::path(self.path(), FileKind::Wal, n);
            let reusable = self.fs().file_size(&path).is_ok_and(|len| len <= longest);
            if keep.len() < KEEP_FOR_REUSE && !self.opts().read_only && reusable {
                keep.push(n);
            } else {
                let _ = self.fs().remove_file(&path);
            }
        }
    }
}
