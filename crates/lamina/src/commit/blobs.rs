//! Large values written to a blob file at commit: the WAL record and the
//! memtable hold a pointer, and the value is written once
//! (docs/format.md#blob-files-written-at-commit, docs/design.md#blob-files).
//!
//! Each memtable has at most one such file, created by its first large Put,
//! appended to under the commit lock before the WAL record that points into
//! it, synced before that record's segment for a `Sync` commit, sealed
//! (footer) when the memtable is sealed and synced by the rotation's debts
//! (`commit/rotation.rs`), and named in the manifest by
//! the memtable's flush. Each sync of it is marked in the WAL
//! (docs/format.md#blob-sync-marks). Recovery and `check` check
//! every replayed pointer against its file with one rule
//! ([`ReplayedValues`]): a value missing where no crash could have lost it
//! is corruption, elsewhere the log's torn tail; recovery then seals the
//! files a crash left open.

use crate::batch::{Batch, Op};
use crate::blob::{BlobMeta, BlobPointer, BlobWriter, SealedBlob};
use crate::db::Inner;
use crate::error::{Error, Result};
use crate::filename::{self, FileKind};
use crate::key::{self, KeyspaceId, Kind};
use crate::manifest::VersionEdit;
use crate::memtable::Memtable;
use crate::wal::{BlobSynced, LogReader, WAL_MAGIC};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;

impl Inner {
    /// `batch` with each Put of a value of at least `blob_threshold` bytes
    /// written to the blob file of `mem` and replaced by a pointer to it
    /// (kind 3), or `None` if it holds no such value.
    /// REQUIRES: the commit lock is held and `mem` is the active memtable.
    pub(crate) fn write_large_values(
        &self,
        batch: &Batch,
        mem: &Memtable,
    ) -> Result<Option<Batch>> {
        let threshold = self.blob_threshold();
        let large = |op: &Op<'_>| op.kind == Kind::Put && op.value.len() >= threshold;
        if !batch.has_put_of(threshold) {
            return Ok(None);
        }
        let mut out = Batch::new();
        for op in batch.ops() {
            let op = op.map_err(Error::InvalidArgument)?;
            if large(&op) {
                self.write_large_put_value(op.keyspace, op.key, op.value, mem, &mut out)?;
            } else {
                out.push_op(&op);
            }
        }
        Ok(Some(out))
    }

    /// Writes `value`, set for `key` in keyspace `ks`, to the blob file of
    /// `mem` and adds the Put of its pointer (kind 3) to `out`.
    /// REQUIRES: the commit lock is held and `mem` is the active memtable.
    pub(crate) fn write_large_put_value(
        &self,
        ks: KeyspaceId,
        key: &[u8],
        value: &[u8],
        mem: &Memtable,
        out: &mut Batch,
    ) -> Result<()> {
        let mut active = self.commit().blob.lock();
        let w = match active.as_mut() {
            Some(w) => w,
            // `close` sets the flag before it takes the file: a writer that
            // raced past its check creates none after.
            None if self.is_closed() => return Err(Error::Closed),
            None => active.insert(self.create_commit_blob()?),
        };
        let p = w.add(&key::tree_key(ks, key), value)?;
        mem.add_blob_bytes(u64::from(p.len));
        out.put_blob(ks, key, &p.encode());
        if let Some(job) = w.writeback_due() {
            self.ask_writeback(job);
        }
        Ok(())
    }

    /// A new blob file for the active memtable's large values. Its name is
    /// made durable (the directory synced) before any pointer to it is
    /// acknowledged durable or named in the manifest: a debt paid with the
    /// rotations' (`commit/rotation.rs`).
    fn create_commit_blob(&self) -> Result<BlobWriter> {
        let number = self.versions().lock().new_file_number();
        let w = BlobWriter::create_at_commit(self.fs().as_ref(), self.path(), number)?;
        self.commit().debts.owe_dir_sync();
        Ok(w)
    }

    /// Makes durable every value handed to the active memtable's blob file.
    /// Called before the WAL is synced, so that a durable WAL record never
    /// points past the durable end of its blob file. Returns the mark the
    /// WAL is to hold of it (docs/format.md#blob-sync-marks), if
    /// there is a file and its name is durable too (no debt is unpaid, the
    /// directory's sync among them); the caller hands it to the WAL before
    /// the WAL's sync.
    pub(crate) fn sync_commit_blob(&self) -> Result<Option<BlobSynced>> {
        let mut active = self.commit().blob.lock();
        let Some(w) = active.as_mut() else {
            return Ok(None);
        };
        // Appends take this lock: the sync covers exactly these bytes.
        let end = w.bytes();
        w.sync()?;
        Ok((!self.commit().debts.any()).then(|| BlobSynced {
            file: w.number(),
            end,
        }))
    }

    /// Seals the blob file of the active memtable `mem`, if it has one
    /// (footer, not synced), gives what it holds to `mem` for its flush to
    /// name, and returns it for the rotation's debts.
    /// REQUIRES: no writer commits meanwhile (memtable rotation).
    pub(crate) fn seal_commit_blob(&self, mem: &Memtable) -> Result<Option<SealedBlob>> {
        let Some(w) = self.commit().blob.lock().take() else {
            return Ok(None);
        };
        let sealed = w.seal()?;
        // A handle opened while the file was written maps the zeros the
        // seal cut; readers open it again at its sealed length.
        self.blobs().evict(sealed.meta().number);
        mem.set_blob_file(Arc::new(sealed.meta().clone()));
        Ok(Some(sealed))
    }

    /// Adds to `edit`, written by the flush of memtables whose sealed blob
    /// files are `sealed`, those files, with the bytes of their values the
    /// flush dropped (`dead`: overwritten or deleted in the memtable) as dead.
    /// Returns the files every value of which is dead: the edit adds and
    /// removes them, and they are to be retired once it is durable.
    pub(crate) fn name_commit_blobs(
        &self,
        edit: &mut VersionEdit,
        sealed: Vec<Arc<BlobMeta>>,
        dead: &BTreeMap<u64, u64>,
    ) -> Vec<Arc<BlobMeta>> {
        let mut all_dead = Vec::new();
        for m in sealed {
            let d = dead.get(&m.number).copied().unwrap_or(0);
            edit.new_blobs.push(Arc::clone(&m));
            if d >= m.value_bytes {
                edit.deleted_blobs.push(m.number);
                all_dead.push(m);
            } else if d > 0 {
                edit.blob_dead.push((m.number, d));
            }
        }
        all_dead
    }

    /// How the value `p` names (replayed from a WAL record) stands in its
    /// blob file: `Ok(None)` when it is there; `Ok(Some(what))` when it is
    /// not, as a crash leaves a value not yet durable (the file missing or
    /// ending before it, or its bytes failing their checksum with a
    /// page-piece of zeros: written ahead of the records and not yet
    /// overwritten when the machine lost power); `Corruption` naming the
    /// file and offset where the bytes fail their checksum otherwise (no
    /// crash leaves that).
    fn replayed_value_lost(&self, p: &BlobPointer) -> Result<Option<String>> {
        let file = match self.blobs().file_for(p) {
            Ok(f) => f,
            Err(Error::Corruption { .. }) => {
                return Ok(Some("the blob file is missing".to_string()))
            }
            Err(e) => return Err(e),
        };
        let end = p.offset.saturating_add(u64::from(p.len));
        let len = file.handle().len();
        if len < end {
            return Ok(Some(format!(
                "the blob file ends at offset {len}, before the value's end at {end}"
            )));
        }
        match self.blobs().read(p) {
            Ok(_) => Ok(None),
            Err(e @ Error::Corruption { .. }) => {
                let bytes = file
                    .handle()
                    .read_at(p.offset, p.len as usize)
                    .map_err(|io| Error::io(file.path(), io))?;
                if crate::blob::has_zero_page(p.offset, &bytes) {
                    Ok(Some(
                        "the value's bytes fail their checksum, with zeros where it was written"
                            .to_string(),
                    ))
                } else {
                    Err(e)
                }
            }
            Err(e) => Err(e),
        }
    }

    /// Seals the blob files a crash left open (written at commit, named by
    /// no manifest record) that `replayed` saw pointers into: each is cut
    /// after the last replayed value and given its footer. Returns them.
    pub(crate) fn seal_replayed_blobs(
        &self,
        replayed: ReplayedBlobs,
    ) -> Result<Vec<Arc<BlobMeta>>> {
        let mut sealed = Vec::new();
        for (end, meta) in replayed.files.into_values() {
            // Unmapped (the handle replay opened to check values) before it
            // is cut: a blob file is never cut while mapped.
            self.blobs().evict(meta.number);
            let w = BlobWriter::resume(self.fs().as_ref(), self.path(), end, meta)?;
            sealed.push(Arc::new(w.finish()?));
        }
        Ok(sealed)
    }
}

/// Hands `mark`, of a blob file's sync, to the WAL segment `w` (through
/// its mapping where it can: no system call), for the segment's sync to
/// make durable with the records it covers
/// (docs/format.md#blob-sync-marks).
pub(crate) fn hand_mark(w: &mut crate::wal::LogWriter, mark: Option<BlobSynced>) -> Result<()> {
    match mark {
        Some(m) if w.add_blob_synced(m) => w.flush_mapped(),
        _ => Ok(()),
    }
}

/// The pointers a recovery replayed into blob files no manifest record
/// names: per file, the end of the last value and what its footer will say.
#[derive(Default)]
pub(crate) struct ReplayedBlobs {
    files: BTreeMap<u64, (u64, BlobMeta)>,
}

impl ReplayedBlobs {
    /// Whether no replayed record points into a blob file no manifest
    /// record names.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Counts the value `p` names, written under `tree_key`.
    pub fn note(&mut self, tree_key: &[u8], p: &BlobPointer) {
        let (end, m) = self.files.entry(p.file).or_insert_with(|| {
            (
                0,
                BlobMeta {
                    number: p.file,
                    smallest: tree_key.to_vec(),
                    largest: tree_key.to_vec(),
                    ..BlobMeta::default()
                },
            )
        });
        *end = (*end).max(p.offset + u64::from(p.len));
        m.records += 1;
        m.value_bytes += u64::from(p.len);
        if tree_key < m.smallest.as_slice() {
            m.smallest = tree_key.to_vec();
        }
        if tree_key > m.largest.as_slice() {
            m.largest = tree_key.to_vec();
        }
    }
}

/// Decides, for recovery and `check` alike, how a value that a WAL record
/// of a replayed segment points to stands: there; lost to a crash before it
/// was durable (the log's torn tail); or missing or damaged although it was
/// durable, which is corruption (docs/format.md#blob-files-written-at-commit).
///
/// A value was durable when the manifest lists its blob file, when the
/// manifest records a WAL segment after the record's (a rotation is
/// recorded only once the segment before it and its blob file were
/// synced whole), or when a mark in a replayed segment says its blob file
/// was synced past the value's end
/// (docs/format.md#blob-sync-marks). The marks are read only
/// when a value is missing: after a crash or damage, never on a clean open.
pub(crate) struct ReplayedValues<'a> {
    inner: &'a Inner,
    /// The segments replayed, ascending.
    wals: &'a [u64],
    /// The segments the manifest records (tag 11).
    recorded: &'a BTreeSet<u64>,
    /// The blob files the manifest lists.
    named: HashSet<u64>,
    /// Per blob file, the greatest end the replayed segments' marks say
    /// was synced; read at the first missing value.
    synced: Option<BTreeMap<u64, u64>>,
}

impl<'a> ReplayedValues<'a> {
    pub fn new(inner: &'a Inner, wals: &'a [u64], recorded: &'a BTreeSet<u64>) -> Self {
        let named = inner
            .state()
            .lock()
            .version
            .blobs()
            .keys()
            .copied()
            .collect();
        ReplayedValues {
            inner,
            wals,
            recorded,
            named,
            synced: None,
        }
    }

    /// Whether the value `p` is in its blob file: `Ok(true)` if it is,
    /// `Ok(false)` if a crash lost it before it was durable (the log ends
    /// at the record); `Corruption` naming the blob file and the value's
    /// offset if it is missing or damaged where no crash could have lost
    /// it. `p` is held by the record of segment `segment` that ends at
    /// offset `at`.
    pub fn present(&mut self, p: &BlobPointer, segment: u64, at: u64) -> Result<bool> {
        let Some(lost) = self.inner.replayed_value_lost(p)? else {
            return Ok(true);
        };
        let Some(why) = self.durable(p, segment) else {
            return Ok(false);
        };
        let wal = filename::path(self.inner.path(), FileKind::Wal, segment);
        Err(Error::corruption(
            self.inner.blobs().path(p.file),
            p.offset,
            format!(
                "{lost}, but the value of {} bytes here, which the WAL record ending at \
                 offset {at} of {} points to, was durable ({why}): a write acknowledged as \
                 durable is lost",
                p.len,
                wal.display()
            ),
        ))
    }

    /// Why the value `p` (pointed to from segment `segment`) was durable,
    /// or `None` if it may not have been.
    fn durable(&mut self, p: &BlobPointer, segment: u64) -> Option<String> {
        if self.named.contains(&p.file) {
            return Some("the manifest lists this blob file".to_string());
        }
        if let Some(later) = self.recorded.range(segment.saturating_add(1)..).next() {
            return Some(format!(
                "the manifest records WAL segment {later:06}, started once this segment \
                 and its blob file were synced"
            ));
        }
        let end = p.offset.saturating_add(u64::from(p.len));
        match self.synced().get(&p.file) {
            Some(&synced) if synced >= end => Some(format!(
                "a mark in the WAL says this file was synced through offset {synced}"
            )),
            _ => None,
        }
    }

    /// The marks of every replayed segment (read once). A segment that
    /// cannot be read, or is another database's, adds none: replay reports it.
    fn synced(&mut self) -> &BTreeMap<u64, u64> {
        if self.synced.is_none() {
            let inner = self.inner;
            let identity = inner.versions().lock().identity();
            let mut synced = BTreeMap::new();
            for &n in self.wals {
                let path = filename::path(inner.path(), FileKind::Wal, n);
                let Ok(mut r) = LogReader::open(inner.fs().as_ref(), &path, WAL_MAGIC) else {
                    continue;
                };
                if r.check_origin(identity, n).is_err() {
                    continue;
                }
                while let Ok(Some(_)) = r.next_record() {}
                for (&file, &end) in r.blob_synced() {
                    let e = synced.entry(file).or_insert(0);
                    *e = (*e).max(end);
                }
            }
            self.synced = Some(synced);
        }
        self.synced.get_or_insert_with(BTreeMap::new)
    }
}
