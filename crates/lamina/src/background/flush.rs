//! Flushing memtables to level-0 tables, in a background thread or on request.

use crate::commit::SegmentFor;
use crate::compaction::runner::{write_tables, OutputSpec};
use crate::db::Inner;
use crate::error::{Error, Result};
use crate::filename::{self, FileKind};
use crate::manifest::{FileMeta, VersionEdit, NUM_LEVELS};
use crate::memtable::Memtable;
use crate::table::TableOptions;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// The tables a flush or compaction writes.
pub struct Outputs<'a> {
    pub table: TableOptions,
    /// Size at which an output table is finished.
    pub target_size: u64,
    /// Whether no level below holds the keys written (tombstones may go).
    pub bottommost: bool,
    /// Whether closing the database stops the run.
    pub cancellable: bool,
    /// Blob files whose values are rewritten into new ones.
    pub collect_blobs: std::collections::HashSet<u64>,
    /// Tree keys, ascending, no output table may span (see
    /// `OutputSpec::cut_before`).
    pub cut_before: &'a [Vec<u8>],
}

impl Inner {
    /// Table options for a table written by a flush or compaction to
    /// `level`; `bottom` selects the compression of the last level.
    pub fn table_options(&self, level: usize, bottom: bool) -> TableOptions {
        self.table_options_for(level, bottom, 0)
    }

    /// [`Inner::table_options`] for a table that adds `incoming` bytes (a
    /// flushed memtable's) to the tables.
    fn table_options_for(&self, level: usize, bottom: bool, incoming: u64) -> TableOptions {
        TableOptions {
            block_size: self.block_size_choice(level, incoming).block_size,
            // Layout: docs/format.md#block (the interval of data blocks).
            restart_interval: 4,
            compression: if bottom {
                self.opts().bottom_compression
            } else {
                self.opts().compression
            },
            bloom_bits_per_key: self.opts().bloom_bits_per_key,
        }
    }

    /// The data block size of tables written now to `level`, and why
    /// (docs/design.md#settings-chosen-from-the-data); `incoming`: bytes
    /// about to join the tables beside the one written (a bulk load's, or
    /// the memtable a flush writes). A level-0 table counts as outgrowing
    /// the cache only when it is larger than twice a memtable (a batch
    /// larger than the memtable made it) and its own bytes outgrow the
    /// cache: such a table is not soon rewritten. Before the first flush
    /// since open, the shape is that of the tables already there, from the
    /// properties of up to `SAMPLE_TABLES` of them.
    pub fn block_size_choice(&self, level: usize, incoming: u64) -> crate::tuning::BlockSizeChoice {
        const SAMPLE_TABLES: usize = 8;
        let mut shape = *self.background().shape.lock();
        let version = self.state().lock().version.clone();
        if shape.entries == 0 {
            for (_, f) in version.all_files().take(SAMPLE_TABLES) {
                if let Ok(t) = self.tables().get_listed(f) {
                    let p = t.properties();
                    shape.entries += p.entries;
                    // Tree keys there; internal keys (8-byte trailer) here.
                    shape.key_bytes += p.key_bytes + 8 * p.entries;
                    shape.value_bytes += p.value_bytes;
                }
            }
        }
        let (_, room) = self.tables().block_cache().charge_state();
        let outgrown = if level > 0 {
            let tables = (0..NUM_LEVELS).map(|l| version.level_bytes(l)).sum::<u64>() + incoming;
            Some((tables, room))
        } else {
            let oversized = incoming > 2 * self.opts().memtable_size as u64;
            oversized.then_some((incoming, room))
        };
        let outgrown = outgrown.filter(|(tables, room)| tables > room);
        crate::tuning::choose_block_size(self.opts().block_size, &shape, outgrown)
    }

    /// Adds the first entries of `mem` to the shape the block size is
    /// chosen from.
    fn observe(&self, mem: &Memtable) {
        use crate::iter::InternalIterator;
        let mut seen = crate::tuning::DataShape::default();
        let mut it = mem.scan();
        it.seek_to_first();
        while it.valid() && seen.entries < crate::tuning::SAMPLE as u64 {
            seen.add(it.key().len(), it.value().len());
            it.next();
        }
        self.background().shape.lock().merge(&seen);
    }

    /// Writes `mem` to level-0 tables (none if it is empty), and any large
    /// value it holds in place (not written to a blob file at commit) to a
    /// new blob file. Returns the tables and what the flush did to blob
    /// files: those it wrote, and the value bytes of the pointers it
    /// dropped (overwritten or deleted in `mem`), per file.
    pub fn write_level0(
        &self,
        mem: &Arc<Memtable>,
    ) -> Result<(Vec<FileMeta>, crate::blob::BlobOutput)> {
        if mem.is_empty() {
            return Ok((Vec::new(), Default::default()));
        }
        self.observe(mem);
        let out = self.write_surviving(
            &mut mem.scan(),
            Outputs {
                table: self.table_options_for(0, false, mem.approximate_size()),
                target_size: u64::MAX,
                bottommost: false,
                cancellable: false,
                collect_blobs: Default::default(),
                cut_before: &[],
            },
        )?;
        self.counters()
            .flush_bytes_written
            .fetch_add(out.bytes_written, Ordering::Relaxed);
        self.counters().flushes.fetch_add(1, Ordering::Relaxed);
        Ok((out.tables, out.blobs))
    }

    /// Writes what survives of `input` (see `compaction::collapse`) into new
    /// tables shaped by `to`, with values over the blob threshold (and those
    /// of the blob files in `to.collect_blobs`) into new blob files, and
    /// syncs the directory: the shared tail of flushes and compactions.
    pub fn write_surviving(
        &self,
        input: &mut dyn crate::iter::InternalIterator,
        to: Outputs<'_>,
    ) -> Result<crate::compaction::runner::Output> {
        let Outputs {
            table,
            target_size,
            bottommost,
            cancellable,
            collect_blobs,
            cut_before,
        } = to;
        let mut blobs = self.separator(collect_blobs);
        let live = self.keyspace_filter();
        let mut alloc = || self.versions().lock().new_file_number();
        let cancelled = || cancellable && self.is_closed();
        let mut spec = OutputSpec {
            fs: self.fs().as_ref(),
            dir: self.path().to_path_buf(),
            table,
            identity: self.tables().identity(),
            target_size,
            snapshots: self.snapshot_list(),
            bottommost,
            keyspace_live: &live,
            merge_operator: self.opts().merge_operator.as_ref(),
            new_file_number: &mut alloc,
            cancelled: &cancelled,
            blobs: &mut blobs,
            cut_before,
        };
        let out = write_tables(input, &mut spec);
        let out = self.finish_blobs(out, &mut blobs)?;
        self.sync_dir()?;
        Ok(out)
    }

    /// A predicate telling which keyspaces' entries are still wanted; ids
    /// allocated after it was made count as live.
    pub fn keyspace_filter(&self) -> impl Fn(u32) -> bool {
        let vs = self.versions().lock();
        let next = vs.next_keyspace_id();
        let live: std::collections::HashSet<u32> = vs.keyspaces().keys().copied().collect();
        drop(vs);
        move |id| id == 0 || id >= next || live.contains(&id)
    }

    /// Flushes the oldest immutable memtable. Returns false if there was none.
    fn flush_one(&self) -> Result<bool> {
        let mem = {
            let mut st = self.state().lock();
            let first = match st.imm.first() {
                Some(m) if !st.flushing => Arc::clone(m),
                _ => return Ok(false),
            };
            st.flushing = true;
            first
        };
        let result = self.install_flush(&mem);
        self.state().lock().flushing = false;
        self.bg_cv().notify_all();
        // The room the commit queue kept may still write into this memtable
        // (stale since its rotation, and never used again): let it go, so
        // that the memtable is freed with its last reader. Only if the
        // commit lock is free: a writer may hold it while it waits for this
        // flush, and drops a stale room itself.
        self.commit().forget_room_in(&mem);
        // A blob file whose every value the flush found dead is removed
        // once no reader pins the memtable that pointed into it.
        drop(mem);
        self.delete_obsolete_blobs();
        result.map(|()| true)
    }

    fn install_flush(&self, mem: &Arc<Memtable>) -> Result<()> {
        // The rotation that sealed `mem` owes the sync of its segment (a
        // table never holds writes the durable log does not: docs/format.md#manifest),
        // of its blob file, and of the segment the edit's log number names.
        self.pay_rotations()?;
        let (tables, blobs) = self.write_level0(mem)?;
        let mut vs = self.versions().lock();
        let log_number = {
            let st = self.state().lock();
            st.imm
                .get(1)
                .map(|m| m.wal_number())
                .unwrap_or(st.mem.wal_number())
        };
        // No last seqno of its own: the manifest's last seqno rises to the
        // largest seqno of the tables added, never past what the tables and
        // ingests hold, so the writes only the WAL holds are never taken
        // for seqnos given without a record (docs/format.md, "Where the log
        // ends at a missing segment").
        let mut edit = VersionEdit {
            log_number: Some(log_number),
            lifetime: Some(self.lifetime_now()),
            ..Default::default()
        };
        for t in tables {
            edit.new_files.push((0, Arc::new(t)));
        }
        edit.new_blobs = blobs.written.into_iter().map(Arc::new).collect();
        let all_dead = self.name_commit_blobs(
            &mut edit,
            mem.blob_file().into_iter().collect(),
            &blobs.dead,
        );
        let version = vs.log_and_apply(edit)?;
        let mut st = self.state().lock();
        st.version = Arc::clone(&version);
        if st.imm.first().is_some_and(|m| Arc::ptr_eq(m, mem)) {
            st.imm.remove(0);
        }
        self.publish(&st);
        drop(st);
        drop(vs);
        self.note_version(&version);
        self.retire_wals_below(log_number);
        self.retire_blobs(all_dead);
        Ok(())
    }

    /// Removes tables, and then blob files, that left the current version once
    /// no reader pins them.
    pub fn delete_obsolete_files(&self) {
        // Files another thread took from the list are gone when this returns.
        let _removing = self.background().hold_removals();
        let doomed = crate::db::take_unpinned(&mut self.state().lock().obsolete);
        let doomed = self.keep_reader_pinned(doomed, |st| &mut st.obsolete);
        for n in doomed.iter().map(|f| f.number) {
            self.tables().evict(n);
            let _ = self
                .fs()
                .remove_file(&filename::path(self.path(), FileKind::Table, n));
        }
        self.remove_unpinned_blobs();
    }

    /// Hands `job` to the flush thread, which starts it ([`Inner::start_writebacks`]).
    pub(crate) fn ask_writeback(&self, job: crate::fs::Writeback) {
        self.background().writeback.lock().push(job);
        self.wake_background();
    }

    /// Starts the write-back the commits asked for, of WAL segments and of
    /// blob files written at commit (on the flush thread, off the writers'
    /// path). Advisory: a failure is left to the sync that makes the bytes
    /// durable.
    fn start_writebacks(&self) {
        let jobs = std::mem::take(&mut *self.background().writeback.lock());
        for (file, from, to) in jobs {
            let _ = file.start_writeback(from, to);
        }
    }

    /// The flush thread's loop: flush sealed memtables as they appear, and
    /// index the full skip lists of the active one for ordered reads
    /// ([`Memtable::freeze`]).
    pub fn flush_loop(self: &Arc<Self>) {
        loop {
            self.start_writebacks();
            let active = {
                let mut st = self.state().lock();
                while st.imm.is_empty()
                    && !st.shutting_down
                    && self.background().writeback.lock().is_empty()
                    && !st.mem.wants_freeze()
                {
                    self.bg_cv().wait_for(&mut st, Duration::from_millis(200));
                }
                if st.imm.is_empty() && st.shutting_down {
                    return;
                }
                st.imm.is_empty().then(|| Arc::clone(&st.mem))
            };
            if let Some(active) = active {
                if active.wants_freeze() {
                    active.freeze();
                }
                continue;
            }
            if self.is_poisoned() {
                let mut st = self.state().lock();
                if st.shutting_down {
                    return;
                }
                self.bg_cv().wait_for(&mut st, Duration::from_millis(200));
                continue;
            }
            match self.flush_one() {
                Ok(_) => {}
                Err(e) => self.poison(&e),
            }
        }
    }

    /// Seals the memtable and waits until every sealed memtable is in a table
    /// and the flush that wrote the last has retired its WAL segments; then
    /// every write before the call is durable.
    pub fn flush_and_wait(&self) -> Result<()> {
        self.check_writable()?;
        self.with_leadership(|| self.rotate_memtable(SegmentFor::Rest))?;
        loop {
            let mut st = self.state().lock();
            self.check_unpoisoned()?;
            // The flush takes its memtable off the list before it retires
            // the segments the memtable needed.
            if st.imm.is_empty() && !st.flushing {
                break;
            }
            if st.shutting_down {
                return Err(Error::Closed);
            }
            self.bg_cv().wait_for(&mut st, Duration::from_millis(100));
        }
        self.sync_wal()
    }
}
