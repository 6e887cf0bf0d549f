//! Sealing the active memtable and starting the next WAL segment, and the
//! syncs such a rotation owes, paid later and in order.
//!
//! A rotation only writes: the sealed memtable's blob file gets its footer,
//! the old segment its END, and the writer goes on into the new segment at
//! once. What makes the old segment durable and records the new one — the
//! blob file's sync, the old segment's, the directory's, then tag 11 in the
//! manifest — is a debt, paid by the flush of the sealed memtable (before
//! it writes the table) or by the next sync (a `Sync` commit, `Db::sync`, `close`),
//! whichever comes first. A blob file created at commit owes the
//! directory's sync the same way. Nothing in a segment is acknowledged durable
//! before it is paid for, so a power loss before the payment leaves at
//! worst a tear in the old segment followed by records no sync covered,
//! which recovery drops
//! (docs/format.md#segments-started-ahead-of-their-syncs).

use super::SegmentFor;
use crate::blob::SealedBlob;
use crate::db::Inner;
use crate::error::Result;
use crate::memtable::Memtable;
use crate::wal::LogWriter;
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// What one rotation owes.
struct Owed {
    /// The sealed memtable's blob file, footer written.
    blob: Option<SealedBlob>,
    /// The old segment, END written.
    old: Option<LogWriter>,
    /// The segment the rotation started, to be recorded (tag 11).
    started: u64,
    /// The pipeline ticket of the last record handed to the old segment.
    ticket: u64,
}

/// The rotations not yet paid for, oldest first, and a sync of the
/// directory owed by a blob file created at commit.
#[derive(Default)]
pub struct Debts {
    owed: Mutex<VecDeque<Owed>>,
    /// A blob file was created at commit since the directory's last sync.
    dir_owed: AtomicBool,
    /// Debts taken and not yet paid in full (one being paid counts):
    /// rotations, and the directory's sync while `dir_owed`.
    unpaid: AtomicUsize,
    /// Held by the one payer at a time, so that rotations are paid in order.
    payer: Mutex<()>,
}

impl Debts {
    /// Whether some debt is not paid in full. Read under the WAL lock after
    /// a record was handed to it, it covers every debt taken before.
    pub fn any(&self) -> bool {
        self.unpaid.load(Ordering::Acquire) > 0
    }

    fn push(&self, owed: Owed) {
        self.owed.lock().push_back(owed);
        self.unpaid.fetch_add(1, Ordering::AcqRel);
    }

    /// Owes a sync of the directory: a file was created in it (a blob file
    /// at commit) that must be durable before anything pointing into it is
    /// acknowledged durable or named in the manifest.
    pub fn owe_dir_sync(&self) {
        if !self.dir_owed.swap(true, Ordering::AcqRel) {
            self.unpaid.fetch_add(1, Ordering::AcqRel);
        }
    }
}

impl Inner {
    /// Seals the active memtable (if it holds anything) and starts a new WAL
    /// segment for its successor, once every writer that handed its record
    /// to the old segment has inserted it; `purpose` says whether writes
    /// filled it (see [`SegmentFor`]). Syncs nothing: what it owes is
    /// paid by [`Inner::pay_rotations`]. REQUIRES: called under the commit
    /// lock or commit leadership, or with writers otherwise quiet (close).
    pub fn rotate_memtable(&self, purpose: SegmentFor) -> Result<()> {
        let number = self.versions().lock().new_file_number();
        let mut wal = self.commit().wal.lock();
        self.commit().pipeline.wait_for_inserts();
        let mem = {
            let st = self.state().lock();
            if st.mem.is_empty() {
                return Ok(());
            }
            Arc::clone(&st.mem)
        };
        // Before the old segment's END: docs/format.md#blob-files-written-at-commit.
        let started = self.seal_commit_blob(&mem).and_then(|blob| {
            let new_wal = self.start_wal_segment(number, purpose)?;
            if let Some(old) = wal.as_mut() {
                old.add_end();
                old.flush()?;
            }
            Ok((blob, new_wal))
        });
        let (blob, new_wal) = match started {
            Ok(s) => s,
            Err(e) => {
                self.poison(&e);
                return Err(e);
            }
        };
        self.commit().debts.push(Owed {
            blob,
            old: wal.replace(new_wal),
            started: number,
            ticket: self.commit().pipeline.written(),
        });
        let mut st = self.state().lock();
        let old = std::mem::replace(
            &mut st.mem,
            Arc::new(Memtable::new(number, self.opts().memtable_size as u64)),
        );
        st.imm.push(old);
        self.publish(&st);
        drop(st);
        drop(wal);
        self.wake_background();
        Ok(())
    }

    /// Pays what every rotation so far owes, oldest first: the sealed blob
    /// file synced, the old segment synced, the directory synced, and the
    /// new segment recorded in the manifest; then every record handed to
    /// the old segment counts as durable. A failure poisons the database.
    /// REQUIRES: neither the WAL lock nor the manifest's is held.
    pub fn pay_rotations(&self) -> Result<()> {
        if !self.commit().debts.any() {
            return Ok(());
        }
        let _payer = self.commit().debts.payer.lock();
        // A payment that failed stays unpaid: nothing is durable past it.
        self.check_unpoisoned()?;
        let paid = self.pay_in_order();
        if let Err(e) = &paid {
            self.poison(e);
        }
        paid
    }

    /// The rotations' debts in the order taken, then the directory's, which
    /// a rotation's payment (it syncs the directory) pays too.
    /// REQUIRES: the payer's lock is held.
    fn pay_in_order(&self) -> Result<()> {
        // Taken first: any sync of the directory from here on covers the
        // files created before; one created later owes again.
        let dir_owed = self.commit().debts.dir_owed.swap(false, Ordering::AcqRel);
        let mut dir_synced = false;
        loop {
            let Some(mut owed) = self.commit().debts.owed.lock().pop_front() else {
                break;
            };
            self.pay(&mut owed)?;
            dir_synced = true;
            self.commit().debts.unpaid.fetch_sub(1, Ordering::AcqRel);
            self.commit()
                .pipeline
                .synced_to(owed.ticket, &self.commit().visible_seqno);
        }
        if dir_owed {
            if !dir_synced {
                self.sync_dir()?;
            }
            self.commit().debts.unpaid.fetch_sub(1, Ordering::AcqRel);
        }
        Ok(())
    }

    fn pay(&self, owed: &mut Owed) -> Result<()> {
        if let Some(blob) = owed.blob.as_mut() {
            blob.sync()?;
        }
        if let Some(old) = owed.old.as_mut() {
            old.sync()?;
            self.counters().wal_syncs.fetch_add(1, Ordering::Relaxed);
        }
        self.sync_dir()?;
        // Layout: docs/format.md#segments-started-ahead-of-their-syncs.
        self.versions().lock().record_wal_started(owed.started)
    }

    /// The WAL lock, taken once no rotation is unpaid: a sync of the
    /// segment it guards then covers every earlier segment too.
    pub(crate) fn wal_paid_for(&self) -> Result<parking_lot::MutexGuard<'_, Option<LogWriter>>> {
        loop {
            let wal = self.commit().wal.lock();
            if !self.commit().debts.any() {
                return Ok(wal);
            }
            drop(wal);
            self.pay_rotations()?;
        }
    }
}
