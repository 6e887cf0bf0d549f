//! Engine statistics and check reports as Python dicts.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// `Db.stats()`: every field of the engine's `Stats`, levels as a list of dicts.
pub fn stats_dict<'py>(py: Python<'py>, s: &lamina::Stats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let levels = PyList::empty(py);
    for l in &s.levels {
        levels.append(level_dict(py, l)?)?;
    }
    d.set_item("levels", levels)?;
    write_items(&d, s)?;
    stall_items(&d, s)?;
    commit_items(&d, s)?;
    read_items(&d, s)?;
    shape_items(&d, s)?;
    Ok(d)
}

/// One level's dict.
fn level_dict<'py>(py: Python<'py>, l: &lamina::LevelStats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("level", l.level)?;
    d.set_item("tables", l.tables)?;
    d.set_item("bytes", l.bytes)?;
    d.set_item("entries", l.entries)?;
    d.set_item("deletes", l.deletes)?;
    d.set_item("merges", l.merges)?;
    d.set_item("key_bytes", l.key_bytes)?;
    d.set_item("value_bytes", l.value_bytes)?;
    d.set_item("data_raw_bytes", l.data_raw_bytes)?;
    d.set_item("data_stored_bytes", l.data_stored_bytes)?;
    d.set_item("filter_bytes", l.filter_bytes)?;
    d.set_item("index_bytes", l.index_bytes)?;
    Ok(d)
}

/// The memtables, the transactions, the bytes written, the flushes and
/// compactions, the write delays and stops.
fn write_items(d: &Bound<'_, PyDict>, s: &lamina::Stats) -> PyResult<()> {
    d.set_item("memtable_bytes", s.memtable_bytes)?;
    d.set_item("immutable_memtables", s.immutable_memtables)?;
    d.set_item("last_seqno", s.last_seqno)?;
    d.set_item("txn_commits", s.txn_commits)?;
    d.set_item("txn_conflicts", s.txn_conflicts)?;
    d.set_item("txn_conflicts_unverifiable", s.txn_conflicts_unverifiable)?;
    d.set_item("user_bytes_written", s.user_bytes_written)?;
    d.set_item("wal_bytes_written", s.wal_bytes_written)?;
    d.set_item("flush_bytes_written", s.flush_bytes_written)?;
    d.set_item("compaction_bytes_read", s.compaction_bytes_read)?;
    d.set_item("compaction_bytes_written", s.compaction_bytes_written)?;
    d.set_item("flushes", s.flushes)?;
    d.set_item("compactions", s.compactions)?;
    d.set_item("trivial_moves", s.trivial_moves)?;
    d.set_item("compaction_tables_kept", s.compaction_tables_kept)?;
    d.set_item("write_delay_micros", s.write_delay_micros)?;
    d.set_item("write_stops", s.write_stops)?;
    d.set_item("write_stop_micros", s.write_stop_micros)?;
    Ok(())
}

/// The stalls by cause, the compaction debt, and the memory budget with
/// what is charged to it.
fn stall_items(d: &Bound<'_, PyDict>, s: &lamina::Stats) -> PyResult<()> {
    let st = &s.stalls;
    d.set_item("level0_delay_micros", st.level0_delay_micros)?;
    d.set_item("pending_bytes_delay_micros", st.pending_bytes_delay_micros)?;
    d.set_item("memtables_delay_micros", st.memtables_delay_micros)?;
    d.set_item("level0_stops", st.level0_stops)?;
    d.set_item("pending_bytes_stops", st.pending_bytes_stops)?;
    d.set_item("memtables_stops", st.memtables_stops)?;
    d.set_item("pending_compaction_bytes", s.pending_compaction_bytes)?;
    d.set_item("memory_budget", s.memory_budget)?;
    d.set_item("memory_charged_bytes", s.memory_charged_bytes)?;
    Ok(())
}

/// The commits, how their waits began, and the WAL's syncs and segments.
fn commit_items(d: &Bound<'_, PyDict>, s: &lamina::Stats) -> PyResult<()> {
    d.set_item("commits", s.commits)?;
    d.set_item("sync_commits", s.sync_commits)?;
    d.set_item("commit_waits_yielded", s.commit_waits_yielded)?;
    d.set_item("commit_waits_slept", s.commit_waits_slept)?;
    d.set_item("wal_syncs", s.wal_syncs)?;
    d.set_item("commits_per_fsync", s.commits_per_fsync())?;
    d.set_item("wal_segments_reused", s.wal_segments_reused)?;
    Ok(())
}

/// The readers' refreshes, the block cache's hits, and the table reads of
/// lookups.
fn read_items(d: &Bound<'_, PyDict>, s: &lamina::Stats) -> PyResult<()> {
    d.set_item("refreshes", s.refreshes)?;
    d.set_item("reader_views_cut", s.reader_views_cut)?;
    d.set_item("cache_hits", s.cache_hits)?;
    d.set_item("cache_misses", s.cache_misses)?;
    d.set_item("data_block_hit_rate", s.data_block_hit_rate())?;
    let r = &s.reads;
    d.set_item("point_lookups", r.point_lookups)?;
    d.set_item("data_reads_per_lookup", r.data_reads_per_lookup())?;
    d.set_item("table_file_reads", r.file_reads())?;
    d.set_item("data_block_reads", r.data_block_reads)?;
    d.set_item("lookup_data_block_reads", r.lookup_data_block_reads)?;
    d.set_item("index_filter_reads", r.index_filter_reads)?;
    d.set_item("other_table_reads", r.other_reads)?;
    Ok(())
}

/// The cache and block sizes, the levels' shape, the keyspaces, the write
/// amplification, and the blob files.
fn shape_items(d: &Bound<'_, PyDict>, s: &lamina::Stats) -> PyResult<()> {
    d.set_item("cache_bytes", s.cache_bytes)?;
    d.set_item("cache_capacity", s.cache_capacity)?;
    d.set_item("block_size", s.block_size)?;
    d.set_item("level_base_size", s.level_base_size)?;
    d.set_item("level_multiplier", s.level_multiplier)?;
    d.set_item("total_table_bytes", s.total_table_bytes)?;
    d.set_item("live_entries_estimate", s.live_entries_estimate)?;
    d.set_item("keyspaces", &s.keyspaces)?;
    d.set_item("write_amplification", s.write_amplification())?;
    d.set_item("blob_threshold", s.blob_threshold)?;
    d.set_item("blob_files", s.blob_files)?;
    d.set_item("blob_file_bytes", s.blob_file_bytes)?;
    d.set_item("blob_value_bytes", s.blob_value_bytes)?;
    d.set_item("blob_dead_bytes", s.blob_dead_bytes)?;
    d.set_item("blob_space_amplification", s.blob_space_amplification())?;
    Ok(())
}

/// `Db.check()`: the engine's `CheckReport` plus `ok`.
pub fn check_dict<'py>(py: Python<'py>, r: &lamina::CheckReport) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("ok", r.is_ok())?;
    d.set_item("tables", r.tables)?;
    d.set_item("entries", r.entries)?;
    d.set_item("bytes", r.bytes)?;
    d.set_item("wal_records", r.wal_records)?;
    d.set_item("problems", &r.problems)?;
    Ok(d)
}
