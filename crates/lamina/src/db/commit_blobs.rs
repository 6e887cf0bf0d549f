//! Large values written to a blob file at commit: the WAL record and the
//! memtable hold a pointer, and the value is written once
//! (docs/format.md#blob-files-written-at-commit, docs/design.md#blob-files).
//!
//! Each memtable has at most one such file, created by its first large Put,
//! appended to under the commit lock before the WAL record that points into
//! it, synced before that record's segment for a `Sync` commit, sealed
//! (footer) when the memtable is sealed and synced by the rotation's debts
//! (`db/rotation.rs`), and named in the manifest by
//! the memtable's flush. Recovery checks every replayed pointer against its
//! file and seals the files a crash left open.

use super::Inner;
use crate::batch::{Batch, Op};
use crate::blob::{BlobMeta, BlobPointer, BlobWriter, SealedBlob};
use crate::error::{Error, Result};
use crate::key::{self, KeyspaceId, Kind};
use crate::manifest::VersionEdit;
use crate::memtable::Memtable;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

impl Inner {
    /// The smallest value written to a blob file: `blob_threshold`, at
    /// least one byte.
    pub(super) fn blob_threshold(&self) -> usize {
        self.opts.blob_threshold.max(1)
    }

    /// `batch` with each Put of a value of at least `blob_threshold` bytes
    /// written to the blob file of `mem` and replaced by a pointer to it
    /// (kind 3), or `None` if it holds no such value.
    /// REQUIRES: the commit lock is held and `mem` is the active memtable.
    pub(super) fn write_large_values(
        &self,
        batch: &Batch,
        mem: &Memtable,
    ) -> Result<Option<Batch>> {
        let threshold = self.blob_threshold();
        let large = |op: &Op<'_>| op.kind == Kind::Put && op.value.len() >= threshold;
        // A batch shorter than the threshold holds no value that long.
        if batch.encoded_len() < threshold || !batch.ops().any(|op| op.is_ok_and(|op| large(&op))) {
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
    pub(super) fn write_large_put_value(
        &self,
        ks: KeyspaceId,
        key: &[u8],
        value: &[u8],
        mem: &Memtable,
        out: &mut Batch,
    ) -> Result<()> {
        let mut active = self.commit_blob.lock();
        let w = match active.as_mut() {
            Some(w) => w,
            // `close` sets the flag before it takes the file: a writer that
            // raced past its check creates none after.
            None if self.closed.load(Ordering::Acquire) => return Err(Error::Closed),
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
    /// rotations' (`db/rotation.rs`).
    fn create_commit_blob(&self) -> Result<BlobWriter> {
        let number = self.versions.lock().new_file_number();
        let w = BlobWriter::create_at_commit(self.fs.as_ref(), &self.path, number)?;
        self.debts.owe_dir_sync();
        Ok(w)
    }

    /// Makes durable every value handed to the active memtable's blob file.
    /// Called before the WAL is synced, so that a durable WAL record never
    /// points past the durable end of its blob file.
    pub(super) fn sync_commit_blob(&self) -> Result<()> {
        match self.commit_blob.lock().as_mut() {
            Some(w) => w.sync(),
            None => Ok(()),
        }
    }

    /// Seals the blob file of the active memtable `mem`, if it has one
    /// (footer, not synced), gives what it holds to `mem` for its flush to
    /// name, and returns it for the rotation's debts.
    /// REQUIRES: no writer commits meanwhile (memtable rotation).
    pub(super) fn seal_commit_blob(&self, mem: &Memtable) -> Result<Option<SealedBlob>> {
        let Some(w) = self.commit_blob.lock().take() else {
            return Ok(None);
        };
        let sealed = w.seal()?;
        // A handle opened while the file was written maps the zeros the
        // seal cut; readers open it again at its sealed length.
        self.blobs.evict(sealed.meta().number);
        mem.set_blob_file(Arc::new(sealed.meta().clone()));
        Ok(Some(sealed))
    }

    /// Adds to `edit`, written by the flush of memtables whose sealed blob
    /// files are `sealed`, those files, with the bytes of their values the
    /// flush dropped (`dead`: overwritten or deleted in the memtable) as dead.
    /// Returns the files every value of which is dead: the edit adds and
    /// removes them, and they are to be retired once it is durable.
    pub(super) fn name_commit_blobs(
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

    /// Whether the value `p` names (replayed from a WAL record) is in its
    /// blob file. `false` where a crash kept the WAL record but not the
    /// value (the log's torn tail): the file is missing or ends before it,
    /// or its bytes fail their checksum with a page-piece of zeros (written
    /// ahead of the records and not yet overwritten when the machine lost
    /// power); `Corruption` naming the file and offset where the bytes
    /// fail their checksum otherwise (damage).
    pub(super) fn replayed_value_present(&self, p: &BlobPointer) -> Result<bool> {
        let file = match self.blobs.file_for(p) {
            Ok(f) => f,
            Err(Error::Corruption { .. }) => return Ok(false),
            Err(e) => return Err(e),
        };
        if file.handle().len() < p.offset.saturating_add(u64::from(p.len)) {
            return Ok(false);
        }
        match self.blobs.read(p) {
            Ok(_) => Ok(true),
            Err(e @ Error::Corruption { .. }) => {
                let bytes = file
                    .handle()
                    .read_at(p.offset, p.len as usize)
                    .map_err(|io| Error::io(file.path(), io))?;
                if crate::blob::has_zero_page(p.offset, &bytes) {
                    Ok(false)
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
    pub(super) fn seal_replayed_blobs(
        &self,
        replayed: ReplayedBlobs,
    ) -> Result<Vec<Arc<BlobMeta>>> {
        let mut sealed = Vec::new();
        for (end, meta) in replayed.files.into_values() {
            // Unmapped (the handle replay opened to check values) before it
            // is cut: a blob file is never cut while mapped.
            self.blobs.evict(meta.number);
            let w = BlobWriter::resume(self.fs.as_ref(), &self.path, end, meta)?;
            sealed.push(Arc::new(w.finish()?));
        }
        Ok(sealed)
    }
}

/// The pointers a recovery replayed into blob files no manifest record
/// names: per file, the end of the last value and what its footer will say.
#[derive(Default)]
pub(super) struct ReplayedBlobs {
    files: BTreeMap<u64, (u64, BlobMeta)>,
}

impl ReplayedBlobs {
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
