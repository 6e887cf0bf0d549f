//! The database's side of key-value separation: reading values through
//! pointers, routing values in flushes and compactions, recording dead bytes,
//! and removing blob files no pointer names.

use crate::blob::{self, BlobMeta, BlobOutput, Separator};
use crate::compaction::runner::Output;
use crate::db::Inner;
use crate::error::Result;
use crate::manifest::{Version, VersionEdit};
use std::collections::HashSet;
use std::sync::Arc;

impl Inner {
    /// The value router of one flush or compaction.
    pub(crate) fn separator(&self, collect: HashSet<u64>) -> Separator {
        Separator::new(
            Arc::clone(self.fs()),
            self.path().to_path_buf(),
            Arc::clone(self.blobs()),
            self.blob_threshold(),
            self.opts().target_table_size,
            collect,
        )
    }

    /// Finishes the blob side of a run that wrote `out`: syncs its blob file
    /// and fills in `out.blobs`. On any failure, removes what the run wrote.
    pub(crate) fn finish_blobs(
        &self,
        out: Result<Output>,
        blobs: &mut Separator,
    ) -> Result<Output> {
        let mut out = match out {
            Ok(o) => o,
            Err(e) => {
                blobs.abandon();
                return Err(e);
            }
        };
        match blobs.finish().and_then(|()| blobs.output()) {
            Ok(b) => {
                out.bytes_written += b.written.iter().map(|m| m.size).sum::<u64>();
                out.blobs = b;
                Ok(out)
            }
            Err(e) => {
                blobs.abandon();
                for t in &out.tables {
                    self.tables().evict(t.number);
                    let _ = self.fs().remove_file(&crate::filename::path(
                        self.path(),
                        crate::filename::FileKind::Table,
                        t.number,
                    ));
                }
                Err(e)
            }
        }
    }

    /// Blob files whose dead share passed `blob_gc_ratio` in `v`.
    pub(crate) fn blobs_to_collect(&self, v: &Version) -> Vec<Arc<BlobMeta>> {
        v.blobs()
            .values()
            .filter(|m| {
                blob::should_collect(
                    m.value_bytes,
                    v.blob_dead(m.number),
                    self.opts().blob_gc_ratio,
                )
            })
            .cloned()
            .collect()
    }

    /// Adds to `edit` what a compaction did to blob files, given the version
    /// it ran against (REQUIRES: `compaction_lock` held, so no other run
    /// changes dead bytes): new files, new dead totals, and the files whose
    /// values are now all dead, which are removed. Returns those.
    pub(crate) fn settle_blobs(
        &self,
        edit: &mut VersionEdit,
        v: &Version,
        out: &mut BlobOutput,
    ) -> Vec<Arc<BlobMeta>> {
        edit.new_blobs
            .extend(std::mem::take(&mut out.written).into_iter().map(Arc::new));
        let mut removed = Vec::new();
        for (&n, &dead) in &out.dead {
            let Some(m) = v.blobs().get(&n) else { continue };
            let total = v.blob_dead(n).saturating_add(dead).min(m.value_bytes);
            if total >= m.value_bytes {
                edit.deleted_blobs.push(n);
                removed.push(Arc::clone(m));
            } else {
                edit.blob_dead.push((n, total));
            }
        }
        removed
    }

    /// Queues blob files that left the current version for removal.
    pub(crate) fn retire_blobs(&self, removed: Vec<Arc<BlobMeta>>) {
        if removed.is_empty() {
            return;
        }
        self.state().lock().obsolete_blobs.extend(removed);
        self.delete_obsolete_blobs();
    }

    /// Removes blob files that left the current version once no pinned
    /// version lists them.
    pub(crate) fn delete_obsolete_blobs(&self) {
        let _removing = self.background().hold_removals();
        self.remove_unpinned_blobs();
    }

    /// [`Inner::delete_obsolete_blobs`]. REQUIRES: the removals are held
    /// (`Background::hold_removals`).
    pub(super) fn remove_unpinned_blobs(&self) {
        let doomed = crate::db::take_unpinned(&mut self.state().lock().obsolete_blobs);
        let doomed = self.keep_reader_pinned(doomed, |st| &mut st.obsolete_blobs);
        for n in doomed.iter().map(|f| f.number) {
            self.blobs().evict(n);
            let _ = self.fs().remove_file(&self.blobs().path(n));
        }
    }
}
