//! Counters kept while the database runs, and the `Stats` report built from
//! them and the shape of the tree. (The read counters are kept with the
//! block cache, which every table reads through: `cache::read_counts`.)

use crate::cache::{BlockCache, Count};
use crate::db::Inner;
use crate::manifest::NUM_LEVELS;
use std::sync::atomic::{AtomicU64, Ordering};

/// Adds `n` to `counter` without a locked instruction (a plain load and
/// store). REQUIRES: every writer of `counter` holds the WAL lock.
pub(crate) fn add_under_wal_lock(counter: &AtomicU64, n: u64) {
    counter.store(
        counter.load(Ordering::Relaxed).wrapping_add(n),
        Ordering::Relaxed,
    );
}

/// Running counters, updated with relaxed atomics; `user_bytes_written`,
/// `wal_bytes_written` and `commits` only under the WAL lock, with
/// [`add_under_wal_lock`].
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub user_bytes_written: AtomicU64,
    pub wal_bytes_written: AtomicU64,
    pub wal_syncs: AtomicU64,
    pub commits: AtomicU64,
    pub sync_commits: AtomicU64,
    pub wal_segments_reused: AtomicU64,
    /// Refreshes of a read-only handle.
    pub refreshes: AtomicU64,
    /// Times a read-only handle's view ended where a live writer was writing.
    pub reader_views_cut: AtomicU64,
    pub flush_bytes_written: AtomicU64,
    pub compaction_bytes_read: AtomicU64,
    pub compaction_bytes_written: AtomicU64,
    pub flushes: AtomicU64,
    pub compactions: AtomicU64,
    pub trivial_moves: AtomicU64,
    pub compaction_tables_kept: AtomicU64,
    pub write_delay_micros: AtomicU64,
    pub write_stops: AtomicU64,
    pub write_stop_micros: AtomicU64,
    /// Delay and stops per cause, indexed by [`cause_index`].
    pub write_delay_micros_by_cause: [AtomicU64; 3],
    pub write_stops_by_cause: [AtomicU64; 3],
    /// Bytes compaction must move down before every level is within its
    /// target, as of the last installed version (`compaction::pacing`).
    pub pending_compaction_bytes: AtomicU64,
    /// Delay owed by writers and not yet slept, in nanoseconds (writers
    /// sleep once it reaches a millisecond).
    pub owed_delay_nanos: AtomicU64,
    pub blob_bytes_moved: AtomicU64,
    /// Transactions committed with writes (`crate::txn`).
    pub txn_commits: AtomicU64,
    /// Transactions refused at commit because something they read changed.
    pub txn_conflicts: AtomicU64,
    /// Of those, the ones refused because a flush or an ingest since their
    /// snapshot left the engine unable to tell what changed.
    pub txn_conflicts_unverifiable: AtomicU64,
}

/// The tables of one level.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LevelStats {
    /// Level number.
    pub level: usize,
    /// Number of tables.
    pub tables: usize,
    /// Bytes of table files.
    pub bytes: u64,
    /// Entries (every version of every key, tombstones included).
    pub entries: u64,
    /// Tombstones.
    pub deletes: u64,
    /// Merge operands.
    pub merges: u64,
    /// Bytes of keys (as stored in the tree, keyspace id included).
    pub key_bytes: u64,
    /// Bytes of values.
    pub value_bytes: u64,
    /// Bytes of data blocks before compression.
    pub data_raw_bytes: u64,
    /// Bytes of data blocks as stored.
    pub data_stored_bytes: u64,
    /// Bytes of bloom filters.
    pub filter_bytes: u64,
    /// Bytes of index blocks.
    pub index_bytes: u64,
}

/// A report on the database: the shape of the tree and what it has done since
/// it was opened.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Stats {
    /// One entry per level, 0 to 6.
    pub levels: Vec<LevelStats>,
    /// Bytes in the active memtable.
    pub memtable_bytes: u64,
    /// Memtables waiting to be flushed.
    pub immutable_memtables: usize,
    /// Seqno of the last visible write.
    pub last_seqno: u64,
    /// Bytes of keys and values written by callers since open.
    pub user_bytes_written: u64,
    /// Bytes written to the WAL since open.
    pub wal_bytes_written: u64,
    /// WAL fsyncs since open (by commits, `sync`, rotation and close).
    pub wal_syncs: u64,
    /// Write batches committed since open (each `put`, `delete`, `merge`
    /// or `write` of a non-empty batch).
    pub commits: u64,
    /// Of `commits`, those made durable with `Durability::Sync`.
    pub sync_commits: u64,
    /// Commits that waited (for a sync, or for earlier writers) and began
    /// by yielding the CPU in a loop, since open (docs/design.md, "Write
    /// path": chosen only while it measures faster).
    pub commit_waits_yielded: u64,
    /// Commits that waited and slept, at once or after yielding, since open.
    pub commit_waits_slept: u64,
    /// WAL segments started by reusing a retired one instead of creating a
    /// file, since open.
    pub wal_segments_reused: u64,
    /// Times a read-only handle was caught up with the writer (`refresh`).
    pub refreshes: u64,
    /// Times a read-only handle's view ended where a live writer was still
    /// writing (the tail of the WAL, a segment being started): normal beside
    /// a writer, never reported as damage.
    pub reader_views_cut: u64,
    /// Bytes of tables written by flushes since open.
    pub flush_bytes_written: u64,
    /// Bytes read by compactions since open.
    pub compaction_bytes_read: u64,
    /// Bytes of tables written by compactions since open.
    pub compaction_bytes_written: u64,
    /// Memtable flushes since open.
    pub flushes: u64,
    /// Compactions that rewrote tables since open.
    pub compactions: u64,
    /// Compactions that moved tables down without rewriting them.
    pub trivial_moves: u64,
    /// Next-level tables compactions left in place, not rewritten, since
    /// open: no key of their inputs fell in them.
    pub compaction_tables_kept: u64,
    /// Microseconds writers were slowed by pacing (not counting stops).
    pub write_delay_micros: u64,
    /// Times a writer was stopped until a flush or compaction finished
    /// (a last resort: pacing slows writers before that).
    pub write_stops: u64,
    /// Microseconds writers were stopped.
    pub write_stop_micros: u64,
    /// Why writers were slowed or stopped, per cause.
    pub stalls: StallStats,
    /// Bytes compaction must move down before every level is within its
    /// target (the debt writers are paced by, with level 0 and memtables).
    pub pending_compaction_bytes: u64,
    /// The memory budget the database was opened with
    /// ([`crate::Options::memory_budget`]).
    pub memory_budget: u64,
    /// Bytes of memtables and open tables' index and filter blocks charged
    /// to the block cache (0 when the cache size was set explicitly).
    pub memory_charged_bytes: u64,
    /// Block cache hits (the cache holds data blocks only: see
    /// [`Stats::data_block_hit_rate`]).
    pub cache_hits: u64,
    /// Block cache misses.
    pub cache_misses: u64,
    /// Point lookups and the reads of table files since open.
    pub reads: ReadStats,
    /// Bytes held by the block cache.
    pub cache_bytes: u64,
    /// Bytes the block cache may hold now: its capacity less what memtables
    /// and open tables are charged (docs/design.md#memory).
    pub cache_capacity: u64,
    /// Data block size of tables written now below level 0 (chosen from the
    /// data and from whether the tables outgrow the block cache, unless
    /// `Options::block_size` set it).
    pub block_size: usize,
    /// Why that block size, in words.
    pub block_size_reason: String,
    /// When a block size set by the user is far from what the data calls
    /// for: what it costs.
    pub block_size_warning: Option<String>,
    /// Target bytes of level 1 (chosen from the memtable size unless
    /// `Options::level_base_size` set it).
    pub level_base_size: u64,
    /// Growth factor between levels (chosen unless
    /// `Options::level_multiplier` set it).
    pub level_multiplier: u64,
    /// Why those level sizes, in words.
    pub level_sizes_reason: String,
    /// When level sizes set by the user are far from the choice: what they
    /// cost.
    pub level_sizes_warning: Option<String>,
    /// Bytes of all table files.
    pub total_table_bytes: u64,
    /// Entries in tables and memtables (every version counted).
    pub live_entries_estimate: u64,
    /// Named keyspaces.
    pub keyspaces: Vec<String>,
    /// Bytes of keys and values written by callers since the database was created.
    pub lifetime_user_bytes: u64,
    /// Bytes written to the WAL and to tables (by flushes and compactions)
    /// since the database was created.
    pub lifetime_disk_bytes: u64,
    /// Values of at least this many bytes go to blob files.
    pub blob_threshold: usize,
    /// Live blob files.
    pub blob_files: usize,
    /// Bytes of live blob files.
    pub blob_file_bytes: u64,
    /// Bytes of the values they hold, dead ones included.
    pub blob_value_bytes: u64,
    /// Bytes of values no live pointer names (reclaimed when their file is collected).
    pub blob_dead_bytes: u64,
    /// Value bytes moved out of collected blob files since open.
    pub blob_bytes_moved: u64,
    /// Transactions with writes committed since open (a read-only
    /// transaction is not counted: it writes nothing).
    pub txn_commits: u64,
    /// Transactions refused with [`crate::Error::Conflict`] since open.
    pub txn_conflicts: u64,
    /// Of `txn_conflicts`, those refused because a flush or an ingest after
    /// their snapshot wrote newer entries to a table, where the engine no
    /// longer tells which keys changed (docs/design.md#transactions).
    pub txn_conflicts_unverifiable: u64,
}

/// Point lookups and the reads of table files since open: each read is one
/// read call on a table file (a block cache miss, or a table being opened),
/// counted by the kind of block it read.
///
/// Only data blocks go through the block cache ([`Stats::cache_hits`],
/// [`Stats::cache_misses`]). A table's index and filter blocks are read
/// when it is opened, in one read with its properties, and stay in memory
/// for as long as it is open: every later use of them is a hit, and their
/// misses are `index_filter_reads`, one per table opened (the table cache
/// keeps up to [`Options::max_open_tables`](crate::Options::max_open_tables)
/// open).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadStats {
    /// Point lookups: each `get` (of any kind), `contains_key`, and each
    /// key of a `get_many`; a lookup that may not wait
    /// ([`binding`](crate::binding)) once it answers, so that one asked
    /// again with the disk allowed counts once.
    pub point_lookups: u64,
    /// Data blocks read from table files, by any reader: point lookups,
    /// iterators, compactions, checks, and each table's first block, read
    /// when it is opened to check its first key.
    pub data_block_reads: u64,
    /// Of `data_block_reads`, those point lookups made.
    pub lookup_data_block_reads: u64,
    /// Reads of a table's filter, properties and index blocks, which lie
    /// back to back and are read at once when the table is opened.
    pub index_filter_reads: u64,
    /// Other reads of table files: each table's footer, read when it is
    /// opened.
    pub other_reads: u64,
}

impl ReadStats {
    /// Every read of a table file counted.
    pub fn file_reads(&self) -> u64 {
        self.data_block_reads + self.index_filter_reads + self.other_reads
    }

    /// Data blocks point lookups read from table files, per lookup (0
    /// before the first lookup): 0 when every block they needed was cached,
    /// about 1 when each lookup read one. Tables opened are not included
    /// (see `index_filter_reads`).
    pub fn data_reads_per_lookup(&self) -> f64 {
        if self.point_lookups == 0 {
            return 0.0;
        }
        self.lookup_data_block_reads as f64 / self.point_lookups as f64
    }
}

/// Time writers were slowed and times they were stopped, per cause.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StallStats {
    /// Microseconds slowed because level 0 held too many tables.
    pub level0_delay_micros: u64,
    /// Microseconds slowed because too many bytes waited for compaction.
    pub pending_bytes_delay_micros: u64,
    /// Microseconds slowed because memtables waited for flush.
    pub memtables_delay_micros: u64,
    /// Stops because level 0 reached `l0_stop_trigger`.
    pub level0_stops: u64,
    /// Stops because pending compaction bytes reached their hard limit.
    pub pending_bytes_stops: u64,
    /// Stops because every memtable allowed was waiting for flush.
    pub memtables_stops: u64,
}

/// The slot of `cause` in the per-cause counters.
pub(crate) fn cause_index(cause: crate::compaction::pacing::Cause) -> usize {
    use crate::compaction::pacing::Cause;
    match cause {
        Cause::Level0 => 0,
        Cause::PendingBytes => 1,
        Cause::Memtables => 2,
    }
}

impl Stats {
    /// Bytes of blob files per byte of live blob values (1.0 when nothing is
    /// dead; 0 when there are no blob files).
    pub fn blob_space_amplification(&self) -> f64 {
        let live = self.blob_value_bytes.saturating_sub(self.blob_dead_bytes);
        if live == 0 {
            return 0.0;
        }
        self.blob_file_bytes as f64 / live as f64
    }
}

impl Stats {
    /// The share of block cache lookups (of data blocks, by any reader)
    /// that found their block, 0 to 1; 0 before the first.
    pub fn data_block_hit_rate(&self) -> f64 {
        let asked = self.cache_hits + self.cache_misses;
        if asked == 0 {
            return 0.0;
        }
        self.cache_hits as f64 / asked as f64
    }
}

impl Stats {
    /// Sync commits per WAL fsync since open: how many durable commits
    /// shared each `fdatasync` (0 before the first fsync).
    pub fn commits_per_fsync(&self) -> f64 {
        if self.wal_syncs == 0 {
            0.0
        } else {
            self.sync_commits as f64 / self.wal_syncs as f64
        }
    }
}

impl Stats {
    /// Bytes written to disk (WAL, flushes, compactions) per byte written by
    /// callers; 0 when nothing was written.
    pub fn write_amplification(&self) -> f64 {
        if self.user_bytes_written == 0 {
            return 0.0;
        }
        (self.wal_bytes_written + self.flush_bytes_written + self.compaction_bytes_written) as f64
            / self.user_bytes_written as f64
    }
}

impl Stats {
    /// Write amplification over the database's whole life (recorded in the
    /// manifest at each flush and compaction); 0 when nothing was written.
    pub fn lifetime_write_amplification(&self) -> f64 {
        if self.lifetime_user_bytes == 0 {
            return 0.0;
        }
        self.lifetime_disk_bytes as f64 / self.lifetime_user_bytes as f64
    }
}

impl Inner {
    /// Counters and the shape of the tree, as of now.
    pub(crate) fn stats(&self) -> Stats {
        collect(self)
    }
}

fn by_cause(slots: &[AtomicU64; 3], i: usize) -> u64 {
    slots.get(i).map_or(0, |a| a.load(Ordering::Relaxed))
}

fn collect(inner: &Inner) -> Stats {
    let c = &inner.counters;
    let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
    let (mem_bytes, mem_entries, imm, version) = {
        let st = inner.state.lock();
        let imm_entries: u64 = st.imm.iter().map(|m| m.len() as u64).sum();
        (
            st.mem.approximate_size(),
            st.mem.len() as u64 + imm_entries,
            st.imm.len(),
            st.version.clone(),
        )
    };
    let levels = level_stats(inner, &version);
    // After the levels, whose tables are open now, so that they are charged.
    inner.recharge_memory();
    let cache = inner.tables.block_cache();
    let (charged, block_room) = cache.charge_state();
    let block = inner.block_size_choice(1, 0);
    let lifetime = inner.lifetime_now();
    let blobs = version.blobs();
    let waits = inner.commit.waits();
    Stats {
        blob_threshold: inner.opts.blob_threshold,
        blob_files: blobs.len(),
        blob_file_bytes: blobs.values().map(|m| m.size).sum(),
        blob_value_bytes: blobs.values().map(|m| m.value_bytes).sum(),
        blob_dead_bytes: blobs.keys().map(|n| version.blob_dead(*n)).sum(),
        blob_bytes_moved: get(&c.blob_bytes_moved),
        txn_commits: get(&c.txn_commits),
        txn_conflicts: get(&c.txn_conflicts),
        txn_conflicts_unverifiable: get(&c.txn_conflicts_unverifiable),
        total_table_bytes: levels.iter().map(|l| l.bytes).sum(),
        live_entries_estimate: levels.iter().map(|l| l.entries).sum::<u64>() + mem_entries,
        levels,
        memtable_bytes: mem_bytes,
        immutable_memtables: imm,
        last_seqno: inner.commit.visible_seqno(),
        user_bytes_written: get(&c.user_bytes_written),
        wal_bytes_written: get(&c.wal_bytes_written),
        wal_syncs: get(&c.wal_syncs),
        commits: get(&c.commits),
        sync_commits: get(&c.sync_commits),
        commit_waits_yielded: waits.0,
        commit_waits_slept: waits.1,
        wal_segments_reused: get(&c.wal_segments_reused),
        refreshes: get(&c.refreshes),
        reader_views_cut: get(&c.reader_views_cut),
        flush_bytes_written: get(&c.flush_bytes_written),
        compaction_bytes_read: get(&c.compaction_bytes_read),
        compaction_bytes_written: get(&c.compaction_bytes_written),
        flushes: get(&c.flushes),
        compactions: get(&c.compactions),
        trivial_moves: get(&c.trivial_moves),
        compaction_tables_kept: get(&c.compaction_tables_kept),
        write_delay_micros: get(&c.write_delay_micros),
        write_stops: get(&c.write_stops),
        write_stop_micros: get(&c.write_stop_micros),
        stalls: stall_stats(c),
        pending_compaction_bytes: get(&c.pending_compaction_bytes),
        memory_budget: inner.opts.memory_budget as u64,
        memory_charged_bytes: charged,
        cache_hits: cache.hits(),
        cache_misses: cache.misses(),
        reads: read_stats(cache),
        cache_bytes: cache.usage_bytes(),
        cache_capacity: block_room,
        block_size: block.block_size,
        block_size_reason: block.reason,
        block_size_warning: block.warning,
        level_base_size: inner.levels.base,
        level_multiplier: inner.levels.multiplier,
        level_sizes_reason: inner.levels.reason.clone(),
        level_sizes_warning: inner.levels.warning.clone(),
        keyspaces: inner.keyspaces.read().keys().cloned().collect(),
        lifetime_user_bytes: lifetime.user_bytes,
        lifetime_disk_bytes: lifetime.wal_bytes
            + lifetime.flush_bytes
            + lifetime.compaction_written_bytes,
    }
}

/// Where writers waited, by cause.
fn stall_stats(c: &Counters) -> StallStats {
    StallStats {
        level0_delay_micros: by_cause(&c.write_delay_micros_by_cause, 0),
        pending_bytes_delay_micros: by_cause(&c.write_delay_micros_by_cause, 1),
        memtables_delay_micros: by_cause(&c.write_delay_micros_by_cause, 2),
        level0_stops: by_cause(&c.write_stops_by_cause, 0),
        pending_bytes_stops: by_cause(&c.write_stops_by_cause, 1),
        memtables_stops: by_cause(&c.write_stops_by_cause, 2),
    }
}

/// What point lookups and the block cache read from table files.
fn read_stats(cache: &BlockCache) -> ReadStats {
    ReadStats {
        point_lookups: cache.counted(Count::Lookup),
        data_block_reads: cache.counted(Count::DataRead),
        lookup_data_block_reads: cache.counted(Count::LookupDataRead),
        index_filter_reads: cache.counted(Count::IndexFilterRead),
        other_reads: cache.counted(Count::FooterRead),
    }
}

/// What each level of `version` holds, from its tables' properties (each
/// table opened if it is not).
fn level_stats(inner: &Inner, version: &crate::manifest::Version) -> Vec<LevelStats> {
    let mut levels = Vec::with_capacity(NUM_LEVELS);
    for level in 0..NUM_LEVELS {
        let mut ls = LevelStats {
            level,
            ..Default::default()
        };
        for f in version.level(level) {
            ls.tables += 1;
            ls.bytes += f.size;
            ls.entries += f.entries;
            if let Ok(t) = inner.tables.get_listed(f) {
                let p = t.properties();
                ls.deletes += p.deletes;
                ls.merges += p.merges;
                ls.key_bytes += p.key_bytes;
                ls.value_bytes += p.value_bytes;
                ls.data_raw_bytes += p.data_raw_bytes;
                ls.data_stored_bytes += p.data_stored_bytes;
                ls.filter_bytes += t.filter_bytes();
                ls.index_bytes += t.index_bytes();
            }
        }
        levels.push(ls);
    }
    levels
}
