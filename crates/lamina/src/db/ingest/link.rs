//! Linking moved files into the database unchanged, when their seqno 0 is
//! already the truth.
//!
//! Layout: docs/format.md#ingested-tables.

use super::placement::{self, Range};
use super::source::refuse;
use super::{memtable_overlaps, IngestedTable, Source};
use crate::db::Inner;
use crate::error::{Error, Result};
use crate::filename::{self, FileKind};
use crate::manifest::{FileMeta, VersionEdit};
use std::sync::Arc;

impl Inner {
    /// Links the files into the database unchanged, their entries keeping
    /// seqno 0 (older than every write), if that is sound now: no snapshot is
    /// live and nothing in the memtables or tables overlaps them (the caller
    /// checked that they are in the default keyspace and do not overlap each
    /// other). `None` if it is not, or the file system cannot link; the files
    /// are then rewritten. REQUIRES: commit leadership.
    pub(crate) fn link_in(
        &self,
        sources: &[Source],
        ranges: &[Range],
    ) -> Result<Option<Vec<IngestedTable>>> {
        self.check_writable()?;
        if !self.may_link(ranges) {
            return Ok(None);
        }
        self.sync_wal()?;
        let Some(linked) = self.link_sources(sources)? else {
            return Ok(None);
        };
        if let Err(e) = self.fs.sync_dir(&self.path) {
            self.unlink(&linked);
            return Err(Error::io(&self.path, e));
        }
        let compaction = self.background().try_hold_compactions();
        let mut vs = self.versions.lock();
        let levels = placement::place(&vs.current(), ranges, compaction.is_some());
        let mut edit = VersionEdit::default();
        let mut report = Vec::new();
        for ((f, &level), s) in linked.iter().zip(&levels).zip(sources) {
            edit.new_files.push((level, Arc::new(f.clone())));
            report.push(IngestedTable {
                source: s.path.clone(),
                file_number: f.number,
                level,
                seqno: 0,
                entries: f.entries,
                linked: true,
            });
        }
        // Seqno 0 is visible at every seqno: floors above the tables' keys
        // and ceilings below them move back before they are published
        // (`read::floor`).
        let floors = self.reads().floors().ingest_begins(ranges);
        self.install_edit(&mut vs, edit)?;
        drop(floors);
        drop(vs);
        drop(compaction);
        self.wake_background();
        Ok(Some(report))
    }

    /// Whether files of `ranges` may be linked in with seqno 0 now: no
    /// snapshot is live, and nothing in the memtables or tables overlaps
    /// them.
    fn may_link(&self, ranges: &[Range]) -> bool {
        if !self.reads().snapshot_list().is_empty() {
            return false;
        }
        let (mems, version) = {
            let st = self.state.lock();
            let mut mems = st.imm.clone();
            mems.push(Arc::clone(&st.mem));
            (mems, Arc::clone(&st.version))
        };
        !ranges.iter().any(|r| {
            mems.iter().any(|m| memtable_overlaps(m, r))
                || (0..crate::manifest::NUM_LEVELS)
                    .any(|l| !version.overlapping(l, Some(&r.0), Some(&r.1)).is_empty())
        })
    }

    /// Links every source under a new table number, described as a table
    /// of seqno 0. `None` (nothing left linked) if the file system cannot
    /// link; refused if a source was replaced since it was verified.
    fn link_sources(&self, sources: &[Source]) -> Result<Option<Vec<FileMeta>>> {
        let mut linked: Vec<FileMeta> = Vec::new();
        for s in sources {
            let number = self.versions.lock().new_file_number();
            let dst = filename::path(&self.path, FileKind::Table, number);
            // The file itself, not a symbolic link to it (a link to a
            // relative symbolic link would name a file in the database
            // directory).
            if self.fs.hard_link(&s.canonical, &dst).is_err() {
                self.unlink(&linked);
                return Ok(None);
            }
            // The new name must be the file verified, not one put in its place since.
            let same = match (s.id, self.fs.stat(&dst).ok().and_then(|st| st.id)) {
                (Some(verified), Some(now)) => verified == now,
                _ => true,
            };
            if !same {
                let _ = self.fs.remove_file(&dst);
                self.unlink(&linked);
                return Err(refuse(
                    &s.path,
                    "it was replaced by another file while it was being ingested; nothing was ingested",
                ));
            }
            linked.push(FileMeta {
                number,
                size: s.table.file_size(),
                smallest: s.first.clone(),
                largest: s.last.clone(),
                smallest_seqno: 0,
                largest_seqno: 0,
                entries: s.table.properties().entries,
            });
        }
        Ok(Some(linked))
    }

    /// Removes the tables `linked` put in the database.
    fn unlink(&self, linked: &[FileMeta]) {
        for f in linked {
            let _ = self
                .fs
                .remove_file(&filename::path(&self.path, FileKind::Table, f.number));
        }
    }
}
