//! Running compactions: the background loop and manual requests.

use super::flush::Outputs;
use crate::compaction::picker::{self, pick_manual, PickerOptions, Task};
use crate::db::Inner;
use crate::error::{Error, Result};
use crate::iter::{InternalIterator, LevelIter, MergingIter};
use crate::key;
use crate::manifest::{FileMeta, Version, VersionEdit, NUM_LEVELS};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// Tables of one level, as a version lists them.
type Tables = Vec<Arc<FileMeta>>;

impl Inner {
    pub fn picker_options(&self) -> PickerOptions {
        PickerOptions {
            l0_trigger: self.opts().l0_compaction_trigger,
            level_base_size: self.levels().base,
            level_multiplier: self.levels().multiplier,
        }
    }

    /// Runs `task`, installs its result and removes the tables and blob
    /// files it took out of the version, unless a reader still uses them
    /// (they go when it lets go). REQUIRES: `compaction_lock` held.
    pub fn run_task(&self, task: Task) -> Result<()> {
        let ran = self.run_and_install(&task);
        // The task holds its inputs: they are let go of before the removal,
        // which takes only files nothing else holds.
        drop(task);
        self.delete_obsolete_files();
        ran
    }

    /// Runs `task` and installs its result.
    fn run_and_install(&self, task: &Task) -> Result<()> {
        let out_level = task.output_level();
        if out_level >= NUM_LEVELS {
            return Ok(());
        }
        let mut edit = VersionEdit::default();
        for f in &task.inputs {
            edit.deleted_files.push((task.level, f.number));
        }
        if task.trivial_move {
            return self.install_moved(task, edit);
        }
        let version = self.state().lock().version.clone();
        let collect: std::collections::HashSet<u64> = self
            .blobs_to_collect(&version)
            .iter()
            .map(|m| m.number)
            .collect();
        let (kept, rewritten) = self.kept_and_rewritten(task, !collect.is_empty())?;
        for f in &rewritten {
            edit.deleted_files.push((out_level, f.number));
        }
        let cut_before: Vec<Vec<u8>> = kept
            .iter()
            .map(|f| key::tree_key_of(&f.smallest).to_vec())
            .collect();
        let (lo, hi) = task.key_range();
        let bottommost = (out_level + 1..NUM_LEVELS)
            .all(|l| version.overlapping(l, Some(&lo), Some(&hi)).is_empty());
        let deepest = version.deepest_nonempty_level().unwrap_or(0);
        let mut input = self.compaction_input(task, &rewritten)?;
        // Closing does not wait for a long compaction: it stops, and its inputs stay live.
        let table = self.table_options(out_level, out_level >= deepest && bottommost);
        let mut out = self.write_surviving(
            &mut input,
            Outputs {
                table,
                target_size: picker::output_table_size(out_level, self.opts().target_table_size),
                bottommost,
                cancellable: true,
                collect_blobs: collect,
                cut_before: &cut_before,
            },
        )?;
        drop(input);
        self.count_compaction(&out, kept.len());
        drop(version);
        let removed = self.settle_blobs(&mut edit, &self.current_version(), &mut out.blobs);
        for t in out.tables {
            edit.new_files.push((out_level, Arc::new(t)));
        }
        let obsolete = task.inputs.iter().chain(&rewritten).cloned().collect();
        self.install(edit, obsolete)?;
        self.retire_blobs(removed);
        Ok(())
    }

    /// Installs a trivial move: `task`'s inputs, deleted from their level
    /// in `edit`, added unchanged to the next.
    fn install_moved(&self, task: &Task, mut edit: VersionEdit) -> Result<()> {
        for f in &task.inputs {
            edit.new_files.push((task.output_level(), Arc::clone(f)));
        }
        self.install(edit, Vec::new())?;
        self.counters()
            .trivial_moves
            .fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// The next-level tables of `task` that stay where they are, not
    /// rewritten (no input key falls in them), and those rewritten. A
    /// collection of blob files (`collecting`) rewrites them all: their
    /// pointers may name a collected file.
    fn kept_and_rewritten(&self, task: &Task, collecting: bool) -> Result<(Tables, Tables)> {
        let kept = if collecting {
            Vec::new()
        } else {
            self.untouched(task)?
        };
        let rewritten = task
            .next_inputs
            .iter()
            .filter(|f| !kept.iter().any(|k| k.number == f.number))
            .cloned()
            .collect();
        Ok((kept, rewritten))
    }

    /// Adds what a compaction read, wrote, moved and kept to the counters.
    fn count_compaction(&self, out: &crate::compaction::runner::Output, kept: usize) {
        let c = self.counters();
        c.compaction_bytes_read
            .fetch_add(out.bytes_read, Ordering::Relaxed);
        c.compaction_bytes_written
            .fetch_add(out.bytes_written, Ordering::Relaxed);
        c.compactions.fetch_add(1, Ordering::Relaxed);
        c.blob_bytes_moved
            .fetch_add(out.blobs.moved, Ordering::Relaxed);
        c.compaction_tables_kept
            .fetch_add(kept as u64, Ordering::Relaxed);
    }

    /// The entries a compaction rewrites, merged: the inputs of `task` and
    /// the next level's tables in `rewritten`, read past the block cache.
    fn compaction_input(&self, task: &Task, rewritten: &[Arc<FileMeta>]) -> Result<MergingIter> {
        let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
        if task.level == 0 {
            for f in &task.inputs {
                children.push(Box::new(self.tables().get_listed(f)?.iter_uncached()));
            }
        } else {
            children.push(Box::new(LevelIter::uncached(
                task.inputs.clone(),
                Arc::clone(self.tables()),
            )));
        }
        children.push(Box::new(LevelIter::uncached(
            rewritten.to_vec(),
            Arc::clone(self.tables()),
        )));
        Ok(MergingIter::new(children))
    }

    /// The tables of `task.next_inputs` that no key of `task.inputs` falls
    /// in (by tree key, so that no key's entries end up split between a kept
    /// table and an output one): each input that overlaps a table's range
    /// is sought to its first key and found past its last.
    fn untouched(&self, task: &Task) -> Result<Vec<Arc<FileMeta>>> {
        let mut kept = Vec::new();
        for t in &task.next_inputs {
            let (t_lo, t_hi) = (key::tree_key_of(&t.smallest), key::tree_key_of(&t.largest));
            let mut touched = false;
            for u in &task.inputs {
                if key::tree_key_of(&u.largest) < t_lo || key::tree_key_of(&u.smallest) > t_hi {
                    continue;
                }
                let mut it = self.tables().get_listed(u)?.iter_uncached();
                it.seek(&key::seek_key(t_lo));
                it.status()?;
                if it.valid() && key::tree_key_of(it.key()) <= t_hi {
                    touched = true;
                    break;
                }
            }
            if !touched {
                kept.push(Arc::clone(t));
            }
        }
        Ok(kept)
    }

    fn install(
        &self,
        mut edit: VersionEdit,
        obsolete: Vec<Arc<crate::manifest::FileMeta>>,
    ) -> Result<()> {
        edit.lifetime = Some(self.lifetime_now());
        let mut vs = self.versions().lock();
        let version = vs.log_and_apply(edit)?;
        let mut st = self.state().lock();
        st.version = Arc::clone(&version);
        self.publish(&st);
        st.obsolete.extend(obsolete);
        drop(st);
        drop(vs);
        self.note_version(&version);
        self.wake_background();
        Ok(())
    }

    fn current_version(&self) -> Arc<Version> {
        Arc::clone(&self.state().lock().version)
    }

    /// The compaction thread's loop.
    pub fn compaction_loop(self: &Arc<Self>) {
        let popts = self.picker_options();
        loop {
            {
                let mut st = self.state().lock();
                loop {
                    if st.shutting_down {
                        return;
                    }
                    if st.manual_compactions == 0
                        && !self.is_poisoned()
                        && self.pick_task(&st.version, &popts).is_some()
                    {
                        break;
                    }
                    self.bg_cv().wait_for(&mut st, Duration::from_millis(200));
                    drop(st);
                    self.delete_obsolete_files();
                    st = self.state().lock();
                }
            }
            let guard = self.background().compaction_lock.lock();
            let Some(task) = self.pick_task(&self.current_version(), &popts) else {
                continue;
            };
            let result = self.run_task(task);
            drop(guard);
            match result {
                Ok(()) | Err(Error::Closed) => {}
                Err(e) => self.poison(&e),
            }
        }
    }

    /// Whether version `v` wants a background task (a compaction or a blob
    /// collection).
    pub(crate) fn background_task_due(&self, v: &Version) -> bool {
        self.pick_task(v, &self.picker_options()).is_some()
    }

    /// The next background task: the picker's, else one that collects blob files.
    fn pick_task(&self, v: &Version, popts: &PickerOptions) -> Option<Task> {
        picker::pick(v, popts).or_else(|| self.blob_task(v))
    }

    /// A task moving the live values out of blob files past the collection ratio.
    fn blob_task(&self, v: &Version) -> Option<Task> {
        let ranges: Vec<_> = self
            .blobs_to_collect(v)
            .iter()
            .map(|m| (m.smallest.clone(), m.largest.clone()))
            .collect();
        if ranges.is_empty() {
            return None;
        }
        picker::pick_blob_collection(v, &ranges)
    }

    /// Compacts every table overlapping `[lo, hi]` (tree keys; `None` = unbounded)
    /// down to the deepest level, after flushing the memtable; then moves the
    /// live values out of the blob files that passed the collection ratio.
    pub fn compact_manual(&self, lo: Option<&[u8]>, hi: Option<&[u8]>) -> Result<()> {
        self.flush_and_wait()?;
        self.state().lock().manual_compactions += 1;
        let result = (|| {
            let mut level = 0;
            loop {
                self.check_writable()?;
                let _guard = self.background().compaction_lock.lock();
                // The version is not held while the task runs, so the blob
                // files it retires can be removed when it ends.
                let Some(task) = pick_manual(&self.current_version(), lo, hi, level) else {
                    break;
                };
                level = task.level + 1;
                self.run_task(task)?;
            }
            // Each step moves the tables that name blob files to collect one
            // level down, so this ends.
            for _ in 0..NUM_LEVELS {
                self.check_writable()?;
                let _guard = self.background().compaction_lock.lock();
                let Some(task) = self.blob_task(&self.current_version()) else {
                    break;
                };
                self.run_task(task)?;
            }
            Ok(())
        })();
        self.state().lock().manual_compactions -= 1;
        self.wake_background();
        // Files retired earlier and pinned by readers since gone go now.
        self.delete_obsolete_files();
        result
    }
}
