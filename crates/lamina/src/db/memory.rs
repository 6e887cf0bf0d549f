//! Keeping the memory budget: the memory memtables and open tables hold is
//! charged to the block cache (docs/design.md#memory), and the debt writers
//! are paced by is kept up to date as versions change.

use super::Inner;
use crate::cache::Charge;
use crate::compaction::pacing;
use crate::manifest::Version;
use std::sync::atomic::Ordering;

impl Inner {
    /// Bytes held by the active memtable and those waiting for flush.
    pub(crate) fn memtable_bytes(st: &super::State) -> u64 {
        st.mem.approximate_size() + st.imm.iter().map(|m| m.approximate_size()).sum::<u64>()
    }

    /// What the memtables are charged: their bytes, and this database's
    /// share of the huge chunks kept for its next memtables.
    pub(crate) fn memtable_charge(&self, st: &super::State) -> u64 {
        let kept = self.spare_chunks.as_ref().map_or(0, |s| s.charge());
        Inner::memtable_bytes(st) + kept
    }

    /// Charges the block cache with what the memtables and open tables
    /// hold now. Walks the open tables: called when a version is installed
    /// and by `stats`, not on every write.
    pub(crate) fn recharge_memory(&self) {
        let mem = self.memtable_charge(&self.state.lock());
        let cache = self.tables.block_cache();
        cache.charge(Charge::Memtables, mem);
        cache.charge(Charge::Tables, self.tables.pinned_bytes());
    }

    /// Records the bytes compaction owes under `version` (the debt of
    /// `compaction::pacing`) and recharges memory; called after each
    /// installed flush or compaction.
    pub(crate) fn note_version(&self, version: &Version) {
        let pending = pacing::pending_bytes(version, &self.picker_options());
        self.counters
            .pending_compaction_bytes
            .store(pending, Ordering::Relaxed);
        // A room kept before this debt is not good any more.
        self.state_epoch.fetch_add(1, Ordering::AcqRel);
        self.recharge_memory();
        crate::budget::release_free_memory();
    }
}
