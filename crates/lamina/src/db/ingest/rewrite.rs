//! Rewriting files with a seqno and keyspace of the database, and installing
//! them (steps 2 to 4 of the module doc of `db::ingest`).
//!
//! Layout: docs/format.md#ingested-tables.

use super::placement::{self, Range};
use super::source::{check_entry, damaged, refuse};
use super::{memtable_overlaps, IngestedTable, Source};
use crate::db::Inner;
use crate::error::{Error, Result};
use crate::filename::{self, FileKind};
use crate::key::{self, KeyspaceId, SeqNo};
use crate::manifest::{FileMeta, VersionEdit, VersionSet};
use crate::memtable::Memtable;
use crate::table::TableBuilder;
use crate::table_writer::show_key;
use std::sync::Arc;
use std::time::Duration;

/// Attempts before the steps run as the commit leader throughout.
const SHARED_ATTEMPTS: usize = 2;

/// Seqnos reserved by one attempt.
struct Reservation {
    first: SeqNo,
    /// Sealed memtables holding keys in a range: flushed before install.
    overlapping_imm: Vec<Arc<Memtable>>,
}

impl Inner {
    /// Rewrites the files with new seqnos and installs them, retrying while
    /// the reservation is overtaken (see the module doc). `created`: the
    /// keyspaces (ids allocated, not yet logged) that the installing edit
    /// creates.
    pub(crate) fn ingest_rewriting(
        &self,
        sources: &[Source],
        ids: &[KeyspaceId],
        created: &[(KeyspaceId, String)],
        ranges: &[Range],
    ) -> Result<Vec<IngestedTable>> {
        let mut attempt = 0;
        loop {
            let exclusive = attempt >= SHARED_ATTEMPTS;
            let run = || self.ingest_once(sources, ids, created, ranges, exclusive);
            let outcome = if exclusive {
                self.with_leadership(run)
            } else {
                run()
            }?;
            if let Some(done) = outcome {
                return Ok(done);
            }
            attempt += 1;
        }
    }

    /// One attempt; `None` if it must be retried with new seqnos.
    fn ingest_once(
        &self,
        sources: &[Source],
        ids: &[KeyspaceId],
        created: &[(KeyspaceId, String)],
        ranges: &[Range],
        exclusive: bool,
    ) -> Result<Option<Vec<IngestedTable>>> {
        let reserve = || self.reserve(ranges, sources.len() as u64);
        let r = if exclusive {
            reserve()
        } else {
            self.with_leadership(reserve)
        }?;
        self.wait_flushed(&r.overlapping_imm)?;
        let mut written: Vec<FileMeta> = Vec::new();
        let result = (|| {
            for (i, (s, &id)) in sources.iter().zip(ids).enumerate() {
                written.push(self.rewrite(s, id, r.first + i as u64)?);
            }
            self.sync_dir()?;
            let install = || self.install_ingested(sources, created, ranges, &written, r.first);
            if exclusive {
                install()
            } else {
                self.with_leadership(install)
            }
        })();
        // After a failed manifest write the edit may or may not be on disk:
        // the tables stay, and the next open removes them if it is not.
        let uncertain = self.poisoned.lock().is_some();
        if !matches!(result, Ok(Some(_))) && !uncertain {
            for f in &written {
                let _ = self
                    .fs
                    .remove_file(&filename::path(&self.path, FileKind::Table, f.number));
            }
        }
        result
    }

    /// Step 2. REQUIRES: commit leadership.
    fn reserve(&self, ranges: &[Range], count: u64) -> Result<Reservation> {
        self.check_writable()?;
        // Every earlier write becomes durable first, so that after a crash
        // the database never holds the ingested tables without them.
        self.sync_wal()?;
        let overlaps = |m: &Memtable| ranges.iter().any(|r| memtable_overlaps(m, r));
        let active = Arc::clone(&self.state.lock().mem);
        if overlaps(&active) {
            self.rotate_memtable(crate::commit::SegmentFor::Rest)?;
        }
        let overlapping_imm: Vec<Arc<Memtable>> = self
            .state
            .lock()
            .imm
            .iter()
            .filter(|m| overlaps(m))
            .cloned()
            .collect();
        let first = self.commit().take_seqnos(count);
        // Recorded so that tables written with these seqnos and left behind
        // by a crash are recognised as leftovers on open.
        let edit = VersionEdit {
            last_seqno: Some(first + count - 1),
            ..Default::default()
        };
        self.log_edit(edit)?;
        Ok(Reservation {
            first,
            overlapping_imm,
        })
    }

    /// Writes `edit` to the manifest and installs the version it yields;
    /// a failure poisons the database.
    fn log_edit(&self, edit: VersionEdit) -> Result<()> {
        self.install_edit(&mut self.versions.lock(), edit)
    }

    /// Writes `edit` to the manifest through `vs` (the locked
    /// `self.versions`) and installs and publishes the version it yields; a
    /// failure poisons the database.
    pub(crate) fn install_edit(&self, vs: &mut VersionSet, edit: VersionEdit) -> Result<()> {
        match vs.log_and_apply(edit) {
            Ok(v) => {
                let mut st = self.state.lock();
                st.version = v;
                self.publish(&st);
                Ok(())
            }
            Err(e) => {
                self.poison(&e);
                Err(e)
            }
        }
    }

    /// Waits until none of `mems` is waiting for a flush.
    fn wait_flushed(&self, mems: &[Arc<Memtable>]) -> Result<()> {
        if mems.is_empty() {
            return Ok(());
        }
        self.wake_background();
        let mut st = self.state.lock();
        while st
            .imm
            .iter()
            .any(|m| mems.iter().any(|w| Arc::ptr_eq(m, w)))
        {
            if let Some(p) = self.poisoned.lock().as_ref() {
                return Err(Error::Poisoned(p.clone()));
            }
            if st.shutting_down {
                return Err(Error::Closed);
            }
            self.bg_cv.wait_for(&mut st, Duration::from_millis(50));
        }
        Ok(())
    }

    /// Step 3: copies `s` into a new table of the database with keyspace
    /// `id` and seqno `seqno`, synced.
    fn rewrite(&self, s: &Source, id: KeyspaceId, seqno: SeqNo) -> Result<FileMeta> {
        use crate::iter::InternalIterator;
        let number = self.versions.lock().new_file_number();
        let path = filename::path(&self.path, FileKind::Table, number);
        let file = self.fs.create(&path).map_err(|e| Error::io(&path, e))?;
        let mut b = TableBuilder::new(file, path.clone(), self.table_options(1, false));
        b.set_origin(self.tables.identity(), number);
        let mut it = s.table.iter_uncached();
        it.seek_to_first();
        let mut ikey = Vec::new();
        let mut n = 0;
        while it.valid() {
            let p = key::parse(it.key()).ok_or_else(|| {
                refuse(
                    &s.path,
                    "an entry has a malformed key, though the file was verified \
                     (did it change while it was being ingested?)",
                )
            })?;
            // Again, as copied: the bytes read now are the ones that count.
            check_entry(&s.path, n, &p, it.value())?;
            n += 1;
            ikey.clear();
            ikey.extend_from_slice(&key::tree_key(id, p.user_key()));
            key::push_trailer(&mut ikey, seqno, p.kind as u8);
            b.add(&ikey, it.value()).map_err(|e| match e {
                Error::InvalidArgument(why) => Error::InvalidArgument(format!(
                    "{}: key {}: {why}",
                    s.path.display(),
                    show_key(p.user_key())
                )),
                e => e,
            })?;
            it.next();
        }
        it.status().map_err(|e| damaged(&s.path, e))?;
        let t = b.finish()?;
        Ok(FileMeta {
            number,
            size: t.file_size,
            smallest: t.smallest,
            largest: t.largest,
            smallest_seqno: t.smallest_seqno,
            largest_seqno: t.largest_seqno,
            entries: t.entries,
        })
    }

    /// Step 4: one edit installs the tables and creates the keyspaces of
    /// `created`. REQUIRES: commit leadership. `None` if the reservation no
    /// longer holds.
    fn install_ingested(
        &self,
        sources: &[Source],
        created: &[(KeyspaceId, String)],
        ranges: &[Range],
        written: &[FileMeta],
        first: SeqNo,
    ) -> Result<Option<Vec<IngestedTable>>> {
        self.check_writable()?;
        if self.reads().snapshot_list().iter().any(|&s| s >= first) {
            return Ok(None);
        }
        // With the compaction lock, no compaction runs and tables may go to
        // any level. Without it, a running compaction may be carrying newer
        // entries of a range from level 0 down, so those must not exist.
        let compaction = self.background().try_hold_compactions();
        let mut vs = self.versions.lock();
        let version = vs.current();
        let first_newer_level = if compaction.is_some() { 1 } else { 0 };
        let newer = ranges.iter().any(|(lo, hi)| {
            (first_newer_level..crate::manifest::NUM_LEVELS).any(|l| {
                version
                    .overlapping(l, Some(lo), Some(hi))
                    .iter()
                    .any(|f| f.largest_seqno >= first)
            })
        });
        if newer {
            return Ok(None);
        }
        if let Some((_, name)) = created
            .iter()
            .find(|(_, name)| self.keyspaces.read().contains_key(name))
        {
            return Err(Error::InvalidArgument(format!(
                "keyspace {name:?} was created by another writer while the ingest \
                 ran; nothing was ingested (ingest again to add to it)"
            )));
        }
        let levels = placement::place(&version, ranges, compaction.is_some());
        let last = first + written.len() as u64 - 1;
        let mut edit = VersionEdit {
            last_seqno: Some(last),
            keyspaces_created: created.to_vec(),
            next_keyspace_id: (!created.is_empty()).then(|| vs.next_keyspace_id()),
            ..Default::default()
        };
        let mut report = Vec::new();
        for (i, ((f, &level), s)) in written.iter().zip(&levels).zip(sources).enumerate() {
            edit.new_files.push((level, Arc::new(f.clone())));
            report.push(IngestedTable {
                source: s.path.clone(),
                file_number: f.number,
                level,
                seqno: first + i as u64,
                entries: f.entries,
                linked: false,
            });
        }
        // Floors above the tables' keys and ceilings below them move back
        // before they are published, and none is installed until their
        // seqnos are visible.
        let _floors = self.reads().floors().ingest_begins(ranges);
        self.install_edit(&mut vs, edit)?;
        // Still under the version set's lock, which `Keyspace::open` takes
        // before it creates a keyspace: no second keyspace of these names.
        self.keyspaces
            .write()
            .extend(created.iter().map(|(id, name)| (name.clone(), *id)));
        drop(vs);
        self.commit().set_visible(last);
        drop(compaction);
        self.wake_background();
        Ok(Some(report))
    }
}
