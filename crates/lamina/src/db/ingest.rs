//! Ingesting tables written by a [`TableWriter`](crate::TableWriter): all of
//! them are added to the tree in one manifest edit, or none is.
//!
//! Layout: docs/format.md#ingested-tables.
//!
//! Moved files that overlap nothing in the tree, with no snapshot live, are
//! hard-linked in as they are, as the commit leader (`link_in`). Otherwise,
//! the steps, and what blocks whom:
//!
//! 1. *Verify* every file (checksums, order, properties, writer settings);
//!    nothing is locked.
//! 2. *Reserve* seqnos, as the commit leader (writers wait for a moment):
//!    seal the memtable if it holds keys in an ingested range, take one seqno
//!    per file and record the last in the manifest.
//! 3. *Write* each file again as a table of the database, its entries given
//!    the file's seqno and keyspace id; writers are not blocked. Sealed
//!    memtables holding keys in the ranges are flushed meanwhile.
//! 4. *Install*, as the commit leader: if a snapshot was taken after the
//!    reservation or a table deeper than level 0 got newer entries in a range,
//!    go back to 2 with new seqnos; otherwise place the tables
//!    (`placement::place`), log one edit and publish the seqnos.
//!
//! After two retries the steps run as the commit leader throughout, so a
//! steady stream of writes into the ingested ranges cannot starve an ingest.

use super::placement::{self, Range};
use super::{Db, Inner};
use crate::error::{Error, Result};
use crate::key::{self, KeyspaceId, SeqNo};
use crate::manifest::{file_name, FileKind, FileMeta, VersionEdit};
use crate::memtable::Memtable;
use crate::table::{Table, TableBuilder, WriterProps};
use crate::table_writer::show_key;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// How [`Db::ingest`] treats the files it is given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IngestOptions {
    /// Remove the given files once they are ingested (by default they are
    /// left in place).
    pub move_files: bool,
}

/// One ingested table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IngestedTable {
    /// The file given.
    pub source: PathBuf,
    /// The table's file number in the database.
    pub file_number: u64,
    /// The level it went to.
    pub level: usize,
    /// The seqno its entries carry.
    pub seqno: SeqNo,
    /// Number of entries.
    pub entries: u64,
    /// True if the file was linked in as it is (its entries keep seqno 0);
    /// false if it was rewritten.
    pub linked: bool,
}

/// Attempts before the steps run as the commit leader throughout.
const SHARED_ATTEMPTS: usize = 2;

/// A verified file to ingest.
struct Source {
    path: PathBuf,
    table: Arc<Table>,
    keyspace: Option<String>,
    /// The first and last internal keys.
    first: Vec<u8>,
    last: Vec<u8>,
}

/// Seqnos reserved by one attempt.
struct Reservation {
    first: SeqNo,
    /// Sealed memtables holding keys in a range: flushed before install.
    overlapping_imm: Vec<Arc<Memtable>>,
}

impl Db {
    /// Adds the tables in `paths`, written by [`TableWriter`](crate::TableWriter)s,
    /// to the database atomically: after it returns `Ok`, every entry of
    /// every file is visible and durable; after an error, none is.
    ///
    /// Files may overlap each other: a later file in `paths` is newer (its
    /// value of a key wins). Each file's entries get one seqno, newer than
    /// every earlier write and every live snapshot, so snapshots taken
    /// before never see them. With `move_files`, files in the default
    /// keyspace that overlap nothing in the database (nor each other), with
    /// no snapshot live, are hard-linked in unchanged instead of rewritten. Keyspaces named by the files are created if
    /// missing. Writers are held only for the moments seqnos are reserved and
    /// the tables installed.
    ///
    /// Errors: `Corruption` naming a damaged file (nothing is added);
    /// `InvalidArgument` for a file not written by a TableWriter or written
    /// with settings this build cannot ingest; `Io`.
    pub fn ingest<P: AsRef<Path>>(
        &self,
        paths: &[P],
        opts: IngestOptions,
    ) -> Result<Vec<IngestedTable>> {
        let inner = self.inner();
        inner.check_writable()?;
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let sources = paths
            .iter()
            .map(|p| inner.open_source(p.as_ref()))
            .collect::<Result<Vec<_>>>()?;
        let mut ids = Vec::with_capacity(sources.len());
        for s in &sources {
            ids.push(match &s.keyspace {
                None => 0,
                Some(name) => self.keyspace(name)?.id(),
            });
        }
        let ranges: Vec<Range> = sources
            .iter()
            .zip(&ids)
            .map(|(s, &id)| source_range(s, id))
            .collect();
        let linkable =
            opts.move_files && ids.iter().all(|&id| id == 0) && !placement::any_overlap(&ranges);
        let linked = if linkable {
            inner.with_leadership(|| inner.link_in(&sources, &ranges))?
        } else {
            None
        };
        let done = match linked {
            Some(done) => done,
            None => inner.ingest_rewriting(&sources, &ids, &ranges)?,
        };
        if opts.move_files {
            for s in &sources {
                let _ = inner.fs.remove_file(&s.path);
            }
        }
        Ok(done)
    }
}

impl Db {
    /// For each live table holding keys of keyspace `keyspace` (`None`: the
    /// default keyspace), its smallest key in that keyspace (empty if it
    /// starts in an earlier one) and its number of entries, ordered by key:
    /// where to split a parallel scan. Writes in the memtable are not in
    /// any table.
    pub fn table_ranges(&self, keyspace: Option<&str>) -> Result<Vec<(Vec<u8>, u64)>> {
        let id = match keyspace {
            None => 0,
            Some(name) => self.open_keyspace(name)?.id(),
        };
        let version = Arc::clone(&self.inner().state.lock().version);
        let mut out: Vec<(Vec<u8>, u64)> = version
            .all_files()
            .filter_map(|(_, f)| {
                let (lo, hi) = (f.smallest_tree_key(), f.largest_tree_key());
                if key::keyspace_of(lo) > id || key::keyspace_of(hi) < id {
                    return None;
                }
                let start = if key::keyspace_of(lo) == id {
                    lo.get(key::KEYSPACE_ID_LEN..).unwrap_or(&[]).to_vec()
                } else {
                    Vec::new()
                };
                Some((start, f.entries))
            })
            .collect();
        out.sort();
        Ok(out)
    }
}

/// The tree-key range of `s`'s entries once in keyspace `id`.
fn source_range(s: &Source, id: KeyspaceId) -> Range {
    (
        key::tree_key(id, user_key(&s.first)),
        key::tree_key(id, user_key(&s.last)),
    )
}

/// The user key of internal key `ikey` (empty if malformed; verified before).
fn user_key(ikey: &[u8]) -> &[u8] {
    key::parse(ikey).map_or(&[][..], |p| p.user_key())
}

impl Inner {
    /// Opens and verifies a file given to ingest.
    fn open_source(&self, path: &Path) -> Result<Source> {
        let refuse = |why: String| {
            Error::InvalidArgument(format!("cannot ingest {}: {why}", path.display()))
        };
        let file = self.fs.open(path).map_err(|e| Error::io(path, e))?;
        // A cache of its own: the file has no number in this database.
        let cache = Arc::new(crate::cache::BlockCache::new(0));
        let table = Arc::new(Table::open(file, path.to_path_buf(), 0, cache)?);
        let writer: WriterProps = table.properties().writer.ok_or_else(|| {
            refuse(
                "it was not written by a table writer (its properties hold no writer settings)"
                    .into(),
            )
        })?;
        if let Some(why) = writer.incompatibility() {
            return Err(refuse(why));
        }
        table.verify()?;
        let p = table.properties();
        if p.largest_seqno != 0 || p.deletes != 0 || p.merges != 0 {
            return Err(refuse(
                "its entries are not the seqno-0 puts a table writer writes".into(),
            ));
        }
        let keyspace = writer.keyspace().map_err(refuse)?.map(str::to_string);
        let (first, last) = {
            use crate::iter::InternalIterator;
            let mut it = table.iter_uncached();
            it.seek_to_first();
            let first = it.valid().then(|| it.key().to_vec());
            it.seek_to_last();
            let last = it.valid().then(|| it.key().to_vec());
            it.status()?;
            (first, last)
        };
        let (Some(first), Some(last)) = (first, last) else {
            return Err(refuse("it holds no entries".into()));
        };
        // Sorted keys: if the first and last are in keyspace 0, all are.
        let in_default = |k: &[u8]| key::keyspace_of(key::tree_key_of(k)) == 0;
        if !in_default(&first) || !in_default(&last) {
            return Err(refuse(
                "its keys are not in keyspace 0, as a table writer writes them".into(),
            ));
        }
        Ok(Source {
            path: path.to_path_buf(),
            table,
            keyspace,
            first,
            last,
        })
    }

    /// Links the files into the database unchanged, their entries keeping
    /// seqno 0 (older than every write), if that is sound now: no snapshot is
    /// live and nothing in the memtables or tables overlaps them (the caller
    /// checked that they are in the default keyspace and do not overlap each
    /// other). `None` if it is not, or the file system cannot link; the files
    /// are then rewritten. REQUIRES: commit leadership.
    fn link_in(&self, sources: &[Source], ranges: &[Range]) -> Result<Option<Vec<IngestedTable>>> {
        self.check_writable()?;
        if !self.snapshots.lock().is_empty() {
            return Ok(None);
        }
        let (mems, version) = {
            let st = self.state.lock();
            let mut mems = st.imm.clone();
            mems.push(Arc::clone(&st.mem));
            (mems, Arc::clone(&st.version))
        };
        let touches_tree = ranges.iter().any(|r| {
            mems.iter().any(|m| memtable_overlaps(m, r))
                || (0..crate::manifest::NUM_LEVELS)
                    .any(|l| !version.overlapping(l, Some(&r.0), Some(&r.1)).is_empty())
        });
        if touches_tree {
            return Ok(None);
        }
        self.sync_wal()?;
        let mut linked: Vec<FileMeta> = Vec::new();
        let unlink = |linked: &[FileMeta]| {
            for f in linked {
                let _ = self
                    .fs
                    .remove_file(&self.path.join(file_name(FileKind::Table, f.number)));
            }
        };
        for s in sources {
            let number = self.versions.lock().new_file_number();
            let dst = self.path.join(file_name(FileKind::Table, number));
            if self.fs.hard_link(&s.path, &dst).is_err() {
                unlink(&linked);
                return Ok(None);
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
        if let Err(e) = self.fs.sync_dir(&self.path) {
            unlink(&linked);
            return Err(Error::io(&self.path, e));
        }
        let compaction = self.compaction_lock.try_lock();
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
        match vs.log_and_apply(edit) {
            Ok(v) => self.state.lock().version = v,
            Err(e) => {
                self.poison(&e);
                return Err(e);
            }
        }
        drop(vs);
        drop(compaction);
        self.bg_cv.notify_all();
        Ok(Some(report))
    }

    /// Rewrites the files with new seqnos and installs them, retrying while
    /// the reservation is overtaken (see the module doc).
    fn ingest_rewriting(
        &self,
        sources: &[Source],
        ids: &[KeyspaceId],
        ranges: &[Range],
    ) -> Result<Vec<IngestedTable>> {
        let mut attempt = 0;
        loop {
            let exclusive = attempt >= SHARED_ATTEMPTS;
            let run = || self.ingest_once(sources, ids, ranges, exclusive);
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
            self.fs
                .sync_dir(&self.path)
                .map_err(|e| Error::io(&self.path, e))?;
            let install = || self.install_ingested(sources, ranges, &written, r.first);
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
                    .remove_file(&self.path.join(file_name(FileKind::Table, f.number)));
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
            self.rotate_memtable()?;
        }
        let overlapping_imm: Vec<Arc<Memtable>> = self
            .state
            .lock()
            .imm
            .iter()
            .filter(|m| overlaps(m))
            .cloned()
            .collect();
        let first = {
            let mut q = self.commit.lock();
            let first = q.last_seqno + 1;
            q.last_seqno += count;
            first
        };
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
        let mut vs = self.versions.lock();
        match vs.log_and_apply(edit) {
            Ok(v) => {
                self.state.lock().version = v;
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
        self.bg_cv.notify_all();
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
        let path = self.path.join(file_name(FileKind::Table, number));
        let file = self.fs.create(&path).map_err(|e| Error::io(&path, e))?;
        let mut b = TableBuilder::new(file, path.clone(), self.table_options(false));
        let mut it = s.table.iter_uncached();
        it.seek_to_first();
        let mut ikey = Vec::new();
        while it.valid() {
            let p = key::parse(it.key()).ok_or_else(|| {
                Error::corruption(&s.path, 0, "entry with a malformed key after verification")
            })?;
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
        it.status()?;
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

    /// Step 4. REQUIRES: commit leadership. `None` if the reservation no
    /// longer holds.
    fn install_ingested(
        &self,
        sources: &[Source],
        ranges: &[Range],
        written: &[FileMeta],
        first: SeqNo,
    ) -> Result<Option<Vec<IngestedTable>>> {
        self.check_writable()?;
        if self.snapshots.lock().keys().any(|&s| s >= first) {
            return Ok(None);
        }
        // With the compaction lock, no compaction runs and tables may go to
        // any level. Without it, a running compaction may be carrying newer
        // entries of a range from level 0 down, so those must not exist.
        let compaction = self.compaction_lock.try_lock();
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
        let levels = placement::place(&version, ranges, compaction.is_some());
        let last = first + written.len() as u64 - 1;
        let mut edit = VersionEdit {
            last_seqno: Some(last),
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
        match vs.log_and_apply(edit) {
            Ok(v) => self.state.lock().version = v,
            Err(e) => {
                self.poison(&e);
                return Err(e);
            }
        }
        drop(vs);
        self.visible_seqno.fetch_max(last, Ordering::AcqRel);
        drop(compaction);
        self.bg_cv.notify_all();
        Ok(Some(report))
    }
}

/// Whether `m` holds an entry whose tree key lies in `[lo, hi]`.
fn memtable_overlaps(m: &Memtable, (lo, hi): &Range) -> bool {
    m.seek(&key::seek_key(lo))
        .is_some_and(|(k, _)| key::tree_key_of(&k) <= hi.as_slice())
}
