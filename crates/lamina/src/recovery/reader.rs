//! Read-only handles beside a live writer: the view a reader chooses (one
//! whose files the writer will leave on disk), the races a reader forgives
//! while a writer is live, and `refresh`.
//!
//! The contract (docs/design.md#readers-beside-a-writer): a read-only open
//! sees a consistent state the writer reached — the manifest's version plus
//! a prefix of the WAL records after it — and files its views use stay
//! readable while it uses them, because it pins them in its reader file
//! (`crate::reader_pins`). Damage is still damage; what a live writer is in
//! the middle of writing (the tail of the newest WAL segment, a segment
//! being started, a manifest being replaced) ends the reader's view there.

use crate::db::Inner;
use crate::error::{Error, Result};
use crate::filename::{self, FileKind};
use crate::fs::FileSystem;
use crate::manifest::{Version, VersionSet};
use crate::memtable::Memtable;
use crate::reader_pins::{PinSet, ReaderFile};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

/// How many manifests a reader reads before it gives up choosing a view
/// (each read after the writer changed the files the previous one listed).
const VIEW_TRIES: usize = 200;

/// A read-only handle's registration: its reader file and the views whose
/// files it pins.
pub(crate) struct ReaderState {
    file: ReaderFile,
    views: Vec<PinnedView>,
}

/// What one view (the state of one open or refresh) pins, while anything
/// still reads it.
struct PinnedView {
    set: PinSet,
    version: Weak<Version>,
    mems: Vec<Weak<Memtable>>,
}

impl PinnedView {
    fn in_use(&self) -> bool {
        self.version.strong_count() > 0 || self.mems.iter().any(|m| m.strong_count() > 0)
    }
}

/// What a reader pins for the version `vs` holds: its tables and blob files,
/// and every file from its log number on (the WAL segments it replays, the
/// blob files their records point into, and all the writer makes later).
fn pins_of(vs: &VersionSet) -> PinSet {
    let v = vs.current();
    PinSet {
        from: vs.log_number(),
        files: v
            .all_files()
            .map(|(_, f)| f.number)
            .chain(v.blobs().keys().copied())
            .collect(),
    }
}

/// Whether the tables and blob files the view of `old` uses are all still
/// in the version of `new`, read later. (A WAL segment the view would
/// replay may still have been retired by a flush in between: the replay
/// ends the view before a segment that is gone or reused, and before a
/// record whose sequence numbers do not follow on, so the view is always a
/// prefix of the log.)
fn still_holds(old: &VersionSet, new: &VersionSet) -> bool {
    let (o, n) = (old.current(), new.current());
    let live: std::collections::HashSet<u64> = n.all_files().map(|(_, f)| f.number).collect();
    o.all_files().all(|(_, f)| live.contains(&f.number))
        && o.blobs().keys().all(|b| n.blobs().contains_key(b))
}

/// Whether a read-write handle holds the database open now. Probing takes
/// the `LOCK` for an instant when nobody holds it; a writer opening in that
/// instant waits for it (`open::lock_database`).
pub(crate) fn writer_is_live(fs: &dyn FileSystem, dir: &Path) -> bool {
    match fs.lock(&filename::path(dir, FileKind::Lock, 0)) {
        Ok(_probe) => false,
        Err(e) => e.kind() == std::io::ErrorKind::WouldBlock,
    }
}

/// Reads the manifest, forgiving what a writer replacing it leaves for an
/// instant (`CURRENT` naming a manifest just removed, a tail half written).
fn recover(fs: &Arc<dyn FileSystem>, dir: &Path) -> Result<VersionSet> {
    let mut tries = 0;
    loop {
        match VersionSet::recover(Arc::clone(fs), dir) {
            Ok(vs) => return Ok(vs),
            Err(e) if tries < VIEW_TRIES && writer_is_live(fs.as_ref(), dir) => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(2));
                let _ = e;
            }
            Err(e) => return Err(e),
        }
    }
}

/// Chooses the version a read-only handle opens with and registers it. With
/// a reader file, the version is one whose files were all still live after
/// its pins were written; without one (a directory the reader cannot write
/// to) the newest version, unpinned.
pub(crate) fn choose_view(
    fs: &Arc<dyn FileSystem>,
    dir: &Path,
) -> Result<(VersionSet, Option<ReaderFile>)> {
    let mut file = ReaderFile::register(fs, dir)?;
    let mut view = recover(fs, dir)?;
    for _ in 0..VIEW_TRIES {
        let Some(f) = &file else {
            return Ok((view, None));
        };
        if !f.write(&pins_of(&view))? {
            file = ReaderFile::register(fs, dir)?;
            continue;
        }
        let now = recover(fs, dir)?;
        if still_holds(&view, &now) {
            return Ok((view, file));
        }
        view = now;
    }
    Err(Error::io(
        dir,
        std::io::Error::other(format!(
            "the writer changed the database {VIEW_TRIES} times while a view was chosen"
        )),
    ))
}

impl ReaderState {
    pub(crate) fn new(file: ReaderFile) -> ReaderState {
        ReaderState {
            file,
            views: Vec::new(),
        }
    }

    /// Records the view a handle now reads (after open or refresh) and
    /// writes the pins of every view still in use.
    pub(crate) fn adopt(
        &mut self,
        vs: &VersionSet,
        version: &Arc<Version>,
        mems: &[Arc<Memtable>],
    ) -> Result<()> {
        self.views.retain(PinnedView::in_use);
        self.views.push(PinnedView {
            set: pins_of(vs),
            version: Arc::downgrade(version),
            mems: mems.iter().map(Arc::downgrade).collect(),
        });
        let mut all = PinSet::none();
        for v in &self.views {
            all.add(&v.set);
        }
        // A file taken from under the handle can only be one not yet
        // written when its view was chosen; the pins were verified then.
        self.file.write(&all).map(|_| ())
    }
}

impl Inner {
    /// Whether an error met while reading what a live writer may be writing
    /// ends this read-only handle's view there (`Ok`) or is damage (`Err`).
    pub(crate) fn forgive_live_writer(&self, e: Error) -> Result<()> {
        if self.opts().read_only && writer_is_live(self.fs().as_ref(), self.path()) {
            self.counters()
                .reader_views_cut
                .fetch_add(1, Ordering::Relaxed);
            Ok(())
        } else {
            Err(e)
        }
    }

    /// Catches a read-only handle up with the writer: a new view (the
    /// newest version and the WAL after it) replaces the old one for every
    /// read that starts afterwards; snapshots and iterators taken before
    /// keep reading the old view, whose files stay pinned until they end.
    /// On a read-write handle it does nothing: it always reads the newest.
    pub(crate) fn refresh(&self) -> Result<()> {
        self.check_open()?;
        if !self.opts().read_only {
            return Ok(());
        }
        let fresh = super::open::open(self.path(), self.opts().clone())?;
        // Swap the fresh handle's state in; its registration's pins move to
        // this handle's reader file before the fresh one's is removed. (A
        // read-only handle commits nothing: the commit queue only holds the
        // seqno, set first, in lock order.)
        let seqno = fresh.commit().visible_seqno();
        self.commit().set_last_seqno(seqno);
        {
            let mut vs = self.versions().lock();
            let mut st = self.state().lock();
            std::mem::swap(&mut *vs, &mut *fresh.versions().lock());
            let mut fst = fresh.state().lock();
            st.version = Arc::clone(&fst.version);
            st.mem = Arc::clone(&fst.mem);
            st.imm = std::mem::take(&mut fst.imm);
            drop(fst);
            *self.keyspace_ids().write() = fresh.keyspace_ids().read().clone();
            self.commit().set_visible(seqno);
            self.state_epoch().fetch_add(1, Ordering::AcqRel);
            // Blob files written at commit grow; let the next read open them afresh.
            self.blobs().evict_all();
            let mut mems = st.imm.clone();
            mems.push(Arc::clone(&st.mem));
            if let Some(r) = self.reader().lock().as_mut() {
                r.adopt(&vs, &st.version, &mems)?;
            }
            self.publish(&st);
        }
        self.counters().refreshes.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}
