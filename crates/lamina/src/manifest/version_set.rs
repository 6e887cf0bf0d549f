//! The version set: the current version, the counters and keyspaces, and the
//! manifest that makes changes to them durable.
//!
//! Layout of the files it names: docs/format.md#directory, #current, #manifest.

use super::edit::VersionEdit;
use super::version::Version;
use crate::error::{Error, Result};
use crate::filename::{self, FileKind};
use crate::fs::FileSystem;
use crate::key::{KeyspaceId, SeqNo};
use crate::wal::{LogReader, LogWriter, MANIFEST_MAGIC};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A manifest larger than this is rewritten as a fresh snapshot.
const MANIFEST_ROLL_BYTES: u64 = 64 << 20;

/// An open appends its edits to the manifest it recovered (no new manifest,
/// no new `CURRENT`: one sync instead of four syncs, a rename and an unlink)
/// while that manifest is at most this many times its snapshot's size, or
/// [`MANIFEST_REUSE_FLOOR`]; a larger one is rewritten as a fresh snapshot.
const MANIFEST_REUSE_FACTOR: u64 = 4;
const MANIFEST_REUSE_FLOOR: u64 = 16 << 10;

/// Writes `MANIFEST-<number>` in `dir` holding `snapshot` as its first
/// record, makes it durable, and points `CURRENT` at it. Returns the writer,
/// for later edits. Used by the version set and by backups.
pub(crate) fn write_manifest(
    fs: &dyn FileSystem,
    dir: &Path,
    number: u64,
    snapshot: &VersionEdit,
) -> Result<LogWriter> {
    let path = filename::path(dir, FileKind::Manifest, number);
    let mut w = LogWriter::create(fs, &path, MANIFEST_MAGIC)?;
    w.add_record(&snapshot.encode());
    w.sync()?;
    // The manifest's name must be durable before CURRENT can name it.
    fs.sync_dir(dir).map_err(|e| Error::io(dir, e))?;
    filename::set_current(fs, dir, number)?;
    Ok(w)
}

/// The current version, counters and keyspaces, and the manifest writer.
/// Callers serialise access (the database keeps it behind a mutex).
pub struct VersionSet {
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
    manifest: Option<LogWriter>,
    manifest_number: u64,
    next_file_number: u64,
    log_number: u64,
    last_seqno: SeqNo,
    keyspaces: BTreeMap<KeyspaceId, String>,
    next_keyspace_id: KeyspaceId,
    lifetime: super::edit::Lifetime,
    /// The database identity (docs/format.md#database-identity); never 0
    /// once created or recovered.
    identity: u128,
    /// WAL segments recorded as started, at or above `log_number`.
    wals: BTreeSet<u64>,
    current: Arc<Version>,
    /// Set by [`VersionSet::close`]: no manifest is written any more.
    closed: bool,
    /// Where the recovered manifest's records end, if they end cleanly at
    /// the end of its file: the next edit may be appended there.
    append_at: Option<u64>,
}

impl VersionSet {
    /// An empty version set for a new database with a new random identity
    /// (nothing written yet: [`VersionSet::start_manifest`] records it
    /// before any file naming it is written).
    pub fn create(fs: Arc<dyn FileSystem>, dir: &Path) -> Result<VersionSet> {
        let identity = new_identity(dir)?;
        Ok(VersionSet::empty(fs, dir, identity))
    }

    /// An empty version set of the database `identity` (0 while a manifest
    /// is replayed, until its tag 10).
    fn empty(fs: Arc<dyn FileSystem>, dir: &Path, identity: u128) -> VersionSet {
        VersionSet {
            fs,
            dir: dir.to_path_buf(),
            manifest: None,
            manifest_number: 0,
            next_file_number: 1,
            log_number: 0,
            last_seqno: 0,
            keyspaces: BTreeMap::new(),
            next_keyspace_id: 1,
            lifetime: super::edit::Lifetime::default(),
            identity,
            wals: BTreeSet::new(),
            current: Arc::new(Version::default()),
            closed: false,
            append_at: None,
        }
    }

    /// Reads `CURRENT` and replays the manifest it names. A manifest that
    /// names no database identity (tag 10) was written by a pre-release
    /// build: corruption at offset 0, in those words.
    pub fn recover(fs: Arc<dyn FileSystem>, dir: &Path) -> Result<VersionSet> {
        let (path, manifest_number) = filename::read_current(fs.as_ref(), dir)?;
        let mut vs = VersionSet::empty(fs, dir, 0);
        vs.manifest_number = manifest_number;
        let mut reader = LogReader::open(vs.fs.as_ref(), &path, MANIFEST_MAGIC)?;
        let mut version = Version::default();
        let mut records = 0u64;
        while let Some(rec) = reader.next_record()? {
            let at = reader.valid_end();
            let edit = VersionEdit::decode(&rec).map_err(|r| Error::corruption(&path, at, r))?;
            version = version
                .apply(&edit)
                .map_err(|r| Error::corruption(&path, at, r))?;
            vs.absorb_counters(&edit);
            records += 1;
        }
        if records == 0 {
            return Err(Error::corruption(&path, 0, "manifest holds no version"));
        }
        if vs.identity == 0 {
            return Err(Error::pre_release(
                &path,
                "a manifest without a database identity",
            ));
        }
        vs.current = Arc::new(version);
        vs.next_file_number = vs.next_file_number.max(manifest_number + 1);
        if reader.torn_tail().is_none() {
            vs.append_at = Some(reader.valid_end());
        }
        Ok(vs)
    }

    fn absorb_counters(&mut self, edit: &VersionEdit) {
        if let Some(n) = edit.log_number {
            self.log_number = n;
        }
        if let Some(n) = edit.next_file_number {
            self.next_file_number = self.next_file_number.max(n);
        }
        if let Some(n) = edit.last_seqno {
            self.last_seqno = self.last_seqno.max(n);
        }
        for (_, f) in &edit.new_files {
            self.next_file_number = self.next_file_number.max(f.number + 1);
            self.last_seqno = self.last_seqno.max(f.largest_seqno);
        }
        for b in &edit.new_blobs {
            self.next_file_number = self.next_file_number.max(b.number + 1);
        }
        for (id, name) in &edit.keyspaces_created {
            self.keyspaces.insert(*id, name.clone());
            self.next_keyspace_id = self.next_keyspace_id.max(id.saturating_add(1));
        }
        for id in &edit.keyspaces_dropped {
            self.keyspaces.remove(id);
        }
        if let Some(n) = edit.next_keyspace_id {
            self.next_keyspace_id = self.next_keyspace_id.max(n);
        }
        if let Some(l) = edit.lifetime {
            self.lifetime = l;
        }
        if let Some(id) = edit.identity {
            self.identity = id;
        }
        self.wals.extend(edit.wals_started.iter().copied());
        let floor = self.log_number;
        self.wals.retain(|&n| n >= floor);
    }

    /// The whole state as one edit, the first record of every manifest: every
    /// live table, every keyspace, and the counters.
    pub fn snapshot_edit(&self) -> VersionEdit {
        let mut snap = self.current.snapshot_edit();
        snap.log_number = Some(self.log_number);
        snap.next_file_number = Some(self.next_file_number);
        snap.last_seqno = Some(self.last_seqno);
        snap.keyspaces_created = self
            .keyspaces
            .iter()
            .map(|(id, n)| (*id, n.clone()))
            .collect();
        snap.next_keyspace_id = Some(self.next_keyspace_id);
        snap.lifetime = Some(self.lifetime);
        snap.identity = Some(self.identity);
        snap.wals_started = self.wals.iter().copied().collect();
        snap
    }

    /// Starts a new manifest holding a snapshot of the current state, points
    /// `CURRENT` at it and removes the previous manifest.
    pub fn start_manifest(&mut self) -> Result<()> {
        if self.closed {
            return Err(Error::Closed);
        }
        let number = self.new_file_number();
        let w = write_manifest(self.fs.as_ref(), &self.dir, number, &self.snapshot_edit())?;
        let old = self.manifest_number;
        self.manifest = Some(w);
        self.manifest_number = number;
        if old != 0 && old != number {
            let old_path = filename::path(&self.dir, FileKind::Manifest, old);
            let _ = self.fs.remove_file(&old_path);
        }
        Ok(())
    }

    /// Writes `edit` to the manifest (synced), then installs the version it
    /// yields. On error nothing is installed; the caller must treat the
    /// manifest as unusable (poison the database).
    pub fn log_and_apply(&mut self, mut edit: VersionEdit) -> Result<Arc<Version>> {
        if self.closed {
            return Err(Error::Closed);
        }
        let version = self.current.apply(&edit).map_err(|r| {
            Error::corruption(
                self.dir.join(filename::file_name(
                    FileKind::Manifest,
                    self.manifest_number,
                )),
                0,
                r,
            )
        })?;
        if let Some(n) = edit.log_number {
            self.log_number = self.log_number.max(n);
        }
        if let Some(n) = edit.last_seqno {
            self.last_seqno = self.last_seqno.max(n);
        }
        edit.next_file_number = Some(self.next_file_number);
        if self.manifest.is_none() {
            self.manifest = self.reopen_manifest();
        }
        let roll = self
            .manifest
            .as_ref()
            .is_none_or(|m| m.len() > MANIFEST_ROLL_BYTES);
        self.absorb_counters(&edit);
        self.current = Arc::new(version);
        if roll {
            self.start_manifest()?;
        } else if let Some(m) = self.manifest.as_mut() {
            m.add_record(&edit.encode());
            m.sync()?;
        }
        Ok(Arc::clone(&self.current))
    }

    /// The recovered manifest, opened to append the next edit after its
    /// records, if they ended cleanly and it is small beside its snapshot
    /// (see [`MANIFEST_REUSE_FACTOR`]); `None` to start a new one. Taken
    /// once: a later edit with no writer starts a new manifest.
    fn reopen_manifest(&mut self) -> Option<LogWriter> {
        let end = self.append_at.take()?;
        let snapshot = self.snapshot_edit().encode().len() as u64;
        if end
            > snapshot
                .saturating_mul(MANIFEST_REUSE_FACTOR)
                .max(MANIFEST_REUSE_FLOOR)
        {
            return None;
        }
        let path = filename::path(&self.dir, FileKind::Manifest, self.manifest_number);
        LogWriter::append_manifest(self.fs.as_ref(), &path, end).ok()
    }

    /// Closes the manifest writer, for the database's `close`: every edit
    /// was synced when it was written, so there is nothing left to write.
    /// Later edits are refused with `Error::Closed` (a new manifest is
    /// never started for them).
    pub fn close(&mut self) {
        self.manifest = None;
        self.closed = true;
    }

    /// The database identity (never 0).
    pub fn identity(&self) -> u128 {
        self.identity
    }

    /// Records (synced) that WAL segment `number` was started. REQUIRES: the
    /// segment's file and name are durable, so are every segment before it
    /// and their blob files, and nothing in it is acknowledged durable yet.
    /// Layout: docs/format.md#wal.
    pub fn record_wal_started(&mut self, number: u64) -> Result<()> {
        self.log_and_apply(VersionEdit {
            wals_started: vec![number],
            ..VersionEdit::default()
        })
        .map(drop)
    }

    /// The WAL segments that must be in the directory: every one recorded
    /// as started at or above the log number, and the log number's own.
    pub fn wals_required(&self) -> BTreeSet<u64> {
        let mut w = self.wals.clone();
        if self.log_number != 0 {
            w.insert(self.log_number);
        }
        w
    }

    /// The WAL segments a version edit (tag 11) recorded as started, at or
    /// above the log number.
    pub fn wals_recorded(&self) -> &BTreeSet<u64> {
        &self.wals
    }

    /// Records that file number `n` is taken (found on disk), so it is never
    /// allocated again.
    pub fn mark_file_number_used(&mut self, n: u64) {
        self.next_file_number = self.next_file_number.max(n.saturating_add(1));
    }

    /// Allocates a file number.
    pub fn new_file_number(&mut self) -> u64 {
        let n = self.next_file_number;
        self.next_file_number += 1;
        n
    }

    /// The current version.
    pub fn current(&self) -> Arc<Version> {
        Arc::clone(&self.current)
    }

    /// WAL segments below this number are no longer needed.
    pub fn log_number(&self) -> u64 {
        self.log_number
    }

    /// The largest seqno recorded as durable in tables or live WAL segments.
    pub fn last_seqno(&self) -> SeqNo {
        self.last_seqno
    }

    /// The live manifest's file number.
    pub fn manifest_number(&self) -> u64 {
        self.manifest_number
    }

    #[cfg(any(test, feature = "internals"))]
    /// The next file number that would be allocated.
    pub fn next_file_number(&self) -> u64 {
        self.next_file_number
    }

    /// Named keyspaces (the default keyspace, id 0, is not listed).
    pub fn keyspaces(&self) -> &BTreeMap<KeyspaceId, String> {
        &self.keyspaces
    }

    /// An id for a new keyspace (the caller logs the creation).
    pub fn allocate_keyspace_id(&mut self) -> KeyspaceId {
        let id = self.next_keyspace_id;
        self.next_keyspace_id = self.next_keyspace_id.saturating_add(1);
        id
    }

    /// Lifetime byte counters as of the last edit.
    pub fn lifetime(&self) -> super::edit::Lifetime {
        self.lifetime
    }

    /// The next keyspace id that would be allocated.
    pub fn next_keyspace_id(&self) -> KeyspaceId {
        self.next_keyspace_id
    }
}

/// A random, non-zero 128-bit database identity from the operating
/// system's generator.
fn new_identity(dir: &Path) -> Result<u128> {
    loop {
        let mut b = [0u8; 16];
        getrandom::getrandom(&mut b).map_err(|e| {
            Error::io(
                dir,
                std::io::Error::other(format!("no random identity: {e}")),
            )
        })?;
        let id = u128::from_le_bytes(b);
        if id != 0 {
            return Ok(id);
        }
    }
}
