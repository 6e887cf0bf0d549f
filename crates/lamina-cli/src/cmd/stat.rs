//! `lamina stat DB`: what the database's tables look like — levels, tables,
//! sizes, key and value sizes, compression, filters, space and write
//! amplification, reads of table files per lookup — and what, if anything,
//! would be worth changing.
//!
//! It is the answer to Berkeley DB's `db_tuner` (the block-size question):
//! instead of trying page sizes by hand, read the numbers and the advice.
//! The report is a pure function of [`Stats`], tested as text.

use crate::cmd::Ctx;
use crate::engine::{self, LevelStats, Mode, Stats};
use crate::error::{CliResult, Exit};
use crate::progress::{bytes, thousands};
use std::fmt::Write as _;
use std::path::PathBuf;

/// Arguments of `lamina stat`.
#[derive(Debug, clap::Args)]
pub struct StatArgs {
    /// The database directory.
    pub db: PathBuf,
    /// Print one JSON object instead of the report (fields in docs/cli.md).
    #[arg(long)]
    pub json: bool,
}

/// Runs `lamina stat`.
pub fn run(args: StatArgs, _ctx: &Ctx) -> CliResult<Exit> {
    let db = engine::open(&args.db, Mode::ReadOnly)?;
    let stats = db.stats();
    let path = args.db.display().to_string();
    if args.json {
        println!("{}", to_json(&path, &stats));
    } else {
        print!("{}", render(&path, &stats));
    }
    Ok(Exit::Ok)
}

/// The numbers of the report as one JSON object (docs/cli.md, "JSON
/// output"). A ratio is `null` where the data is too small for it to mean
/// anything.
pub fn to_json(path: &str, stats: &Stats) -> serde_json::Value {
    use serde_json::json;
    let t = sum(&stats.levels);
    let levels: Vec<_> = stats
        .levels
        .iter()
        .filter(|l| l.tables > 0)
        .map(level_json)
        .collect();
    json!({
        "path": path,
        "tables": t.tables,
        "table_bytes": stats.total_table_bytes,
        "entries": t.entries,
        "live_entries_estimate": stats.live_entries_estimate,
        "levels": levels,
        "space_amplification": space_amplification(stats),
        "lifetime": {
            "user_bytes": stats.lifetime_user_bytes,
            "disk_bytes": stats.lifetime_disk_bytes,
            "write_amplification":
                engine::amplification(stats.lifetime_user_bytes, stats.lifetime_disk_bytes),
        },
        "commits": commits_json(stats),
        "block_size": stats.block_size,
        "block_size_reason": stats.block_size_reason,
        "block_size_warning": stats.block_size_warning,
        "level_sizes": {
            "level1_bytes": stats.level_base_size,
            "multiplier": stats.level_multiplier,
            "reason": stats.level_sizes_reason,
            "warning": stats.level_sizes_warning,
        },
        "cache_bytes": stats.cache_bytes,
        "cache_capacity": stats.cache_capacity,
        "reads": reads_json(stats),
        "memory": {
            "budget": stats.memory_budget,
            "charged_to_cache": stats.memory_charged_bytes,
        },
        "stalls": stalls_json(stats),
        "keyspaces": stats.keyspaces,
        "blobs": blobs_json(stats),
        "advice": advice(stats),
    })
}

/// One level's tables, for `--json`.
fn level_json(l: &LevelStats) -> serde_json::Value {
    serde_json::json!({
        "level": l.level,
        "tables": l.tables,
        "bytes": l.bytes,
        "entries": l.entries,
        "deletes": l.deletes,
        "merges": l.merges,
        "key_bytes": l.key_bytes,
        "value_bytes": l.value_bytes,
        "data_raw_bytes": l.data_raw_bytes,
        "data_stored_bytes": l.data_stored_bytes,
        "filter_bytes": l.filter_bytes,
        "index_bytes": l.index_bytes,
    })
}

/// Commits since open and the WAL fsyncs they shared, for `--json`.
fn commits_json(stats: &Stats) -> serde_json::Value {
    serde_json::json!({
        "since_open": stats.commits,
        "sync": stats.sync_commits,
        "wal_fsyncs": stats.wal_syncs,
        "per_fsync": (stats.wal_syncs > 0).then(|| stats.commits_per_fsync()),
        "wal_segments_reused": stats.wal_segments_reused,
        "waits_yielded": stats.commit_waits_yielded,
        "waits_slept": stats.commit_waits_slept,
    })
}

/// Time writers were slowed and stopped since open, and why, for `--json`.
fn stalls_json(stats: &Stats) -> serde_json::Value {
    serde_json::json!({
        "delay_micros": stats.write_delay_micros,
        "stop_micros": stats.write_stop_micros,
        "stops": stats.write_stops,
        "pending_compaction_bytes": stats.pending_compaction_bytes,
        "level0_delay_micros": stats.stalls.level0_delay_micros,
        "pending_bytes_delay_micros": stats.stalls.pending_bytes_delay_micros,
        "memtables_delay_micros": stats.stalls.memtables_delay_micros,
        "level0_stops": stats.stalls.level0_stops,
        "pending_bytes_stops": stats.stalls.pending_bytes_stops,
        "memtables_stops": stats.stalls.memtables_stops,
    })
}

/// Blob files and the values they hold, for `--json`.
fn blobs_json(stats: &Stats) -> serde_json::Value {
    serde_json::json!({
        "threshold": stats.blob_threshold,
        "files": stats.blob_files,
        "file_bytes": stats.blob_file_bytes,
        "value_bytes": stats.blob_value_bytes,
        "dead_bytes": stats.blob_dead_bytes,
        "space_amplification": (stats.blob_files > 0).then(|| stats.blob_space_amplification()),
    })
}

/// Point lookups and reads of table files since open, for `--json`.
fn reads_json(stats: &Stats) -> serde_json::Value {
    let r = &stats.reads;
    let asked = stats.cache_hits + stats.cache_misses;
    serde_json::json!({
        "point_lookups": r.point_lookups,
        "data_reads_per_lookup": (r.point_lookups > 0).then(|| r.data_reads_per_lookup()),
        "file_reads": r.file_reads(),
        "data_block_reads": r.data_block_reads,
        "lookup_data_block_reads": r.lookup_data_block_reads,
        "index_filter_reads": r.index_filter_reads,
        "other_reads": r.other_reads,
        "cache_hits": stats.cache_hits,
        "cache_misses": stats.cache_misses,
        "data_block_hit_rate": (asked > 0).then(|| stats.data_block_hit_rate()),
    })
}

/// Point lookups since open and the data blocks they read from files.
fn lookups_line(stats: &Stats) -> String {
    let r = &stats.reads;
    if r.point_lookups == 0 {
        return "reads            no point lookups since open".into();
    }
    format!(
        "reads            {} point lookups since open, {:.2} data blocks read from table files per lookup",
        thousands(r.point_lookups),
        r.data_reads_per_lookup()
    )
}

/// Reads of table files since open, by the kind of block read.
fn table_reads_line(stats: &Stats) -> String {
    let r = &stats.reads;
    let hit_rate = if stats.cache_hits + stats.cache_misses > 0 {
        format!("{:.1}%", stats.data_block_hit_rate() * 100.0)
    } else {
        "-".into()
    };
    format!(
        "table reads      {} since open: {} of data blocks (cache hit rate {hit_rate}), \
         {} of index and filter blocks (one per table opened; kept in memory while it is open), \
         {} of footers",
        thousands(r.file_reads()),
        thousands(r.data_block_reads),
        thousands(r.index_filter_reads),
        thousands(r.other_reads)
    )
}

/// Time writers were slowed and stopped since open, and why.
fn stall_line(stats: &Stats) -> String {
    format!("stalls           {}", crate::engine::stall_summary(stats))
}

fn ratio(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

fn avg(total: u64, n: u64) -> String {
    ratio(total, n).map_or("-".into(), |v| format!("{v:.1} B"))
}

fn times(r: Option<f64>) -> String {
    r.map_or("-".into(), |v| format!("{v:.2}x"))
}

/// Totals over the levels.
fn sum(levels: &[LevelStats]) -> LevelStats {
    let mut t = LevelStats::default();
    for l in levels {
        t.tables += l.tables;
        t.bytes += l.bytes;
        t.entries += l.entries;
        t.deletes += l.deletes;
        t.merges += l.merges;
        t.key_bytes += l.key_bytes;
        t.value_bytes += l.value_bytes;
        t.data_raw_bytes += l.data_raw_bytes;
        t.data_stored_bytes += l.data_stored_bytes;
        t.filter_bytes += l.filter_bytes;
        t.index_bytes += l.index_bytes;
    }
    t
}

/// Bytes on disk per byte of the last (oldest, fully compacted) level: the
/// extra copies that newer levels hold.
pub fn space_amplification(stats: &Stats) -> Option<f64> {
    let last = stats.levels.iter().rev().find(|l| l.tables > 0)?;
    let total: u64 = stats.levels.iter().map(|l| l.bytes).sum();
    ratio(total, last.bytes)
}

/// Blob files: how many, their bytes, the dead share, and the threshold.
fn blob_line(stats: &Stats) -> String {
    let threshold = if stats.blob_threshold == usize::MAX {
        "values kept in the tree".to_string()
    } else {
        format!("values of {} or more", bytes(stats.blob_threshold as u64))
    };
    if stats.blob_files == 0 {
        return format!("blob files       none ({threshold} go to blob files)");
    }
    format!(
        "blob files       {} files, {} holding {} of values, {} dead; space amp. {} ({threshold})",
        thousands(stats.blob_files as u64),
        bytes(stats.blob_file_bytes),
        bytes(stats.blob_value_bytes),
        bytes(stats.blob_dead_bytes),
        times(Some(stats.blob_space_amplification()))
    )
}

/// Commits since the handle was opened and how many shared each fsync.
fn commit_line(stats: &Stats) -> String {
    let per = if stats.wal_syncs > 0 {
        format!("{:.1}", stats.commits_per_fsync())
    } else {
        "-".into()
    };
    format!(
        "commits          {} since open, {} durable (Sync); {} WAL fsyncs, {per} durable commits per fsync; \
         waits: {} began by yielding the CPU, {} slept",
        thousands(stats.commits),
        thousands(stats.sync_commits),
        thousands(stats.wal_syncs),
        thousands(stats.commit_waits_yielded),
        thousands(stats.commit_waits_slept)
    )
}

/// The report.
pub fn render(path: &str, stats: &Stats) -> String {
    let mut s = String::new();
    let t = sum(&stats.levels);
    let _ = writeln!(s, "database {path}");
    let _ = writeln!(
        s,
        "  {} tables, {} in tables, {} entries ({} live, estimated)",
        thousands(t.tables as u64),
        bytes(stats.total_table_bytes),
        thousands(t.entries),
        thousands(stats.live_entries_estimate)
    );
    let _ = writeln!(s);
    render_levels(&mut s, stats, &t);
    let _ = writeln!(s);
    render_contents(&mut s, stats, &t);
    let _ = writeln!(s, "{}", write_amp_line(stats));
    render_engine(&mut s, stats);
    let _ = writeln!(s);
    render_advice(&mut s, stats);
    s
}

/// The table of levels, one row per level with tables, then the totals `t`.
fn render_levels(s: &mut String, stats: &Stats, t: &LevelStats) {
    let _ = writeln!(
        s,
        "level  tables        size     entries   deletes  avg key  avg value  compression  filters"
    );
    for l in stats.levels.iter().filter(|l| l.tables > 0) {
        let _ = writeln!(s, "{}", level_row(&format!("L{}", l.level), l));
    }
    let _ = writeln!(s, "{}", level_row("total", t));
}

/// What the tables hold, from the totals `t`: key and value sizes,
/// compression, filters and index blocks, space amplification.
fn render_contents(s: &mut String, stats: &Stats, t: &LevelStats) {
    let _ = writeln!(
        s,
        "keys and values  average key {}, average value {}",
        avg(t.key_bytes, t.entries),
        avg(t.value_bytes, t.entries)
    );
    let _ = writeln!(
        s,
        "compression      {} of data blocks stored in {} ({})",
        bytes(t.data_raw_bytes),
        bytes(t.data_stored_bytes),
        times(ratio(t.data_raw_bytes, t.data_stored_bytes))
    );
    let bits = ratio(t.filter_bytes * 8, t.entries).map_or("-".into(), |b| format!("{b:.1}"));
    let _ = writeln!(
        s,
        "filters          {} ({bits} bits per entry); index blocks {}",
        bytes(t.filter_bytes),
        bytes(t.index_bytes)
    );
    let _ = writeln!(
        s,
        "space amp.       {} (bytes in all levels per byte in the last)",
        times(space_amplification(stats))
    );
}

/// Write amplification: since open if anything was written since, else
/// over the database's life.
fn write_amp_line(stats: &Stats) -> String {
    if stats.user_bytes_written > 0 {
        format!("write amp.       {}", crate::engine::write_summary(stats))
    } else if stats.lifetime_user_bytes > 0 {
        let ratio = engine::amplification(stats.lifetime_user_bytes, stats.lifetime_disk_bytes)
            .map_or_else(
                || engine::TOO_SMALL_FOR_A_RATIO.to_string(),
                |r| times(Some(r)),
            );
        format!(
            "write amp.       {ratio} over the database's life: {} written by callers, {} to the WAL and tables",
            bytes(stats.lifetime_user_bytes),
            bytes(stats.lifetime_disk_bytes)
        )
    } else {
        "write amp.       nothing written yet".to_string()
    }
}

/// How the engine is set up and what it did since open: commits, block
/// size and cache, reads, level sizes, memory, stalls, blob files and
/// keyspaces.
fn render_engine(s: &mut String, stats: &Stats) {
    if stats.commits > 0 {
        let _ = writeln!(s, "{}", commit_line(stats));
    }
    let _ = writeln!(
        s,
        "block size       {} ({}); cache {} of {}",
        bytes(stats.block_size as u64),
        stats.block_size_reason,
        bytes(stats.cache_bytes),
        bytes(stats.cache_capacity)
    );
    let _ = writeln!(s, "{}", lookups_line(stats));
    let _ = writeln!(s, "{}", table_reads_line(stats));
    let _ = writeln!(s, "level sizes      {}", stats.level_sizes_reason);
    let _ = writeln!(
        s,
        "memory           budget {}; {} of memtables and table indexes charged to the cache",
        bytes(stats.memory_budget),
        bytes(stats.memory_charged_bytes)
    );
    if stats.write_delay_micros > 0 || stats.write_stops > 0 {
        let _ = writeln!(s, "{}", stall_line(stats));
    }
    let _ = writeln!(s, "{}", blob_line(stats));
    if !stats.keyspaces.is_empty() {
        let _ = writeln!(s, "keyspaces        {}", stats.keyspaces.join(", "));
    }
}

/// The advice, one item a line, or that there is none.
fn render_advice(s: &mut String, stats: &Stats) {
    let advice = advice(stats);
    if advice.is_empty() {
        let _ = writeln!(
            s,
            "advice: nothing to change; the defaults fit this database."
        );
    } else {
        let _ = writeln!(s, "advice:");
        for a in advice {
            let _ = writeln!(s, "  - {a}");
        }
    }
}

fn level_row(name: &str, l: &LevelStats) -> String {
    let filters = if l.entries > 0 {
        format!(
            "{:.1} b/key",
            (l.filter_bytes * 8) as f64 / l.entries as f64
        )
    } else {
        "-".into()
    };
    format!(
        "{name:<5} {:>7} {:>11} {:>11} {:>9} {:>8} {:>10} {:>12} {:>8}",
        thousands(l.tables as u64),
        bytes(l.bytes),
        thousands(l.entries),
        thousands(l.deletes),
        avg(l.key_bytes, l.entries),
        avg(l.value_bytes, l.entries),
        times(ratio(l.data_raw_bytes, l.data_stored_bytes)),
        filters
    )
}

/// Settings that are clearly wrong for this database, and what to do.
pub fn advice(stats: &Stats) -> Vec<String> {
    let t = sum(&stats.levels);
    let mut out = Vec::new();
    if let Some(w) = &stats.level_sizes_warning {
        out.push(w.clone());
    }
    if t.entries == 0 {
        return out;
    }
    if let Some(l) = stats
        .levels
        .iter()
        .find(|l| l.entries > 0 && l.filter_bytes == 0)
    {
        out.push(format!(
            "tables in level {} have no filters: every lookup of a missing key reads a block; \
             set bloom_bits_per_key to 10 (the default)",
            l.level
        ));
    }
    let avg_record = (t.key_bytes + t.value_bytes) / t.entries.max(1);
    if let Some(w) = &stats.block_size_warning {
        out.push(w.clone());
    } else if stats.block_size < 4096 {
        out.push(format!(
            "block size {} is below 4 KiB: index blocks grow and compression suffers; \
             leave block_size unset and lamina chooses it from records of {avg_record} bytes",
            bytes(stats.block_size as u64)
        ));
    } else if stats.block_size > 256 << 10 {
        out.push(format!(
            "block size {} is above 256 KiB: every point read decompresses that much; \
             leave block_size unset and lamina chooses it from records of {avg_record} bytes",
            bytes(stats.block_size as u64)
        ));
    }
    if let Some(c) = ratio(t.data_raw_bytes, t.data_stored_bytes) {
        if c < 1.05 && t.data_raw_bytes > 64 << 20 {
            out.push(format!(
                "data blocks compress {c:.2}x only: Compression::None would save CPU for nothing lost"
            ));
        }
    }
    if let Some(a) = space_amplification(stats) {
        if a > 2.0 && stats.total_table_bytes > 64 << 20 {
            out.push(format!(
                "space amplification {a:.2}x: the levels above the last hold {:.2}x its bytes; \
                 where those are older versions of overwritten or deleted keys, `lamina compact` \
                 reclaims them (a database still growing by new keys shows this too, with nothing \
                 to reclaim)",
                a - 1.0
            ));
        }
    }
    let pinned = t.filter_bytes + t.index_bytes;
    if stats.memory_budget > 0 && pinned > stats.memory_budget {
        out.push(format!(
            "the tables' filter and index blocks ({}) are more than the memory budget ({}): \
             they stay in memory while their tables are open, beyond the budget, and data \
             blocks get only an eighth of the cache; give memory_budget at least {} where the \
             machine has it",
            bytes(pinned),
            bytes(stats.memory_budget),
            bytes(pinned.saturating_mul(2))
        ));
    }
    if t.deletes * 4 > t.entries && t.entries > 10_000 {
        out.push(format!(
            "{}% of entries are deletions: `lamina compact` reclaims their space",
            t.deletes * 100 / t.entries
        ));
    }
    let l0 = stats
        .levels
        .iter()
        .find(|l| l.level == 0)
        .map_or(0, |l| l.tables);
    if l0 >= 20 {
        out.push(format!(
            "{l0} tables in level 0: compaction is behind the writers (reads check each of them)"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(level: usize, tables: usize, bytes: u64, entries: u64) -> LevelStats {
        LevelStats {
            level,
            tables,
            bytes,
            entries,
            key_bytes: entries * 8,
            value_bytes: entries * 62,
            data_raw_bytes: entries * 75,
            data_stored_bytes: bytes * 9 / 10,
            filter_bytes: entries * 10 / 8,
            index_bytes: bytes / 200,
            ..LevelStats::default()
        }
    }

    #[test]
    fn healthy_database_needs_nothing() {
        let mut stats = Stats::default();
        stats.levels = vec![
            level(0, 2, 60 << 20, 2_000_000),
            level(1, 20, 700 << 20, 14_777_217),
        ];
        stats.total_table_bytes = 760 << 20;
        stats.live_entries_estimate = 16_777_217;
        stats.block_size = 16 << 10;
        stats.user_bytes_written = 1 << 30;
        stats.wal_bytes_written = 1 << 30;
        stats.flush_bytes_written = 800 << 20;
        assert!(advice(&stats).is_empty());
        let text = render("numbers.lamina", &stats);
        assert!(text.contains("advice: nothing to change"), "{text}");
        assert!(
            text.contains("L1         20   700.0 MiB  14,777,217"),
            "{text}"
        );
    }

    #[test]
    fn filters_and_index_beyond_the_budget_are_told() {
        let mut stats = Stats::default();
        stats.levels = vec![level(6, 183, 1_800 << 20, 125_000_000)];
        stats.total_table_bytes = 1_800 << 20;
        stats.block_size = 4096;
        stats.memory_budget = 128 << 20;
        let said = advice(&stats);
        assert!(
            said.iter()
                .any(|a| a.contains("are more than the memory budget (128.0 MiB)")),
            "{said:?}"
        );
        stats.memory_budget = 1 << 30;
        let said = advice(&stats);
        assert!(said.is_empty(), "{said:?}");
    }

    #[test]
    fn tiny_databases_get_no_amplification_ratio() {
        let mut stats = Stats::default();
        stats.levels = vec![level(0, 1, 2_000, 1)];
        stats.total_table_bytes = 2_000;
        stats.lifetime_user_bytes = 20;
        stats.lifetime_disk_bytes = 2_470;
        let text = render("tiny", &stats);
        assert!(!text.contains("123.50x"), "{text}");
        assert!(
            text.contains("write amp.       not shown (too little data for the ratio to mean anything) over the database's life: 20 B written by callers, 2.4 KiB to the WAL and tables"),
            "{text}"
        );
        assert!(to_json("tiny", &stats)["lifetime"]["write_amplification"].is_null());
        stats.lifetime_user_bytes = 100 << 20;
        stats.lifetime_disk_bytes = 250 << 20;
        assert!(render("big", &stats).contains("write amp.       2.50x over"));
        assert_eq!(
            to_json("big", &stats)["lifetime"]["write_amplification"].as_f64(),
            Some(2.5)
        );
    }

    #[test]
    fn commits_and_their_fsyncs_are_shown_once_there_are_any() {
        let mut stats = Stats::default();
        assert!(!render("db", &stats).contains("commits "));
        assert!(to_json("db", &stats)["commits"]["per_fsync"].is_null());
        stats.commits = 12_000;
        stats.sync_commits = 10_000;
        stats.wal_syncs = 800;
        let text = render("db", &stats);
        assert!(
            text.contains("commits          12,000 since open, 10,000 durable (Sync); 800 WAL fsyncs, 12.5 durable commits per fsync"),
            "{text}"
        );
        let j = to_json("db", &stats);
        assert_eq!(j["commits"]["per_fsync"].as_f64(), Some(12.5));
        assert_eq!(j["commits"]["since_open"].as_u64(), Some(12_000));
    }

    #[test]
    fn reads_per_lookup_and_hit_rates_are_shown() {
        let mut stats = Stats::default();
        let text = render("db", &stats);
        assert!(
            text.contains("reads            no point lookups since open"),
            "{text}"
        );
        assert!(text.contains("cache hit rate -)"), "{text}");
        assert!(to_json("db", &stats)["reads"]["data_reads_per_lookup"].is_null());
        stats.reads.point_lookups = 2_000;
        stats.reads.lookup_data_block_reads = 500;
        stats.reads.data_block_reads = 700;
        stats.reads.index_filter_reads = 3;
        stats.reads.other_reads = 3;
        stats.cache_hits = 1_500;
        stats.cache_misses = 500;
        let text = render("db", &stats);
        assert!(
            text.contains("reads            2,000 point lookups since open, 0.25 data blocks read from table files per lookup"),
            "{text}"
        );
        assert!(
            text.contains("table reads      706 since open: 700 of data blocks (cache hit rate 75.0%), 3 of index and filter blocks"),
            "{text}"
        );
        let j = to_json("db", &stats);
        assert_eq!(j["reads"]["data_reads_per_lookup"].as_f64(), Some(0.25));
        assert_eq!(j["reads"]["data_block_hit_rate"].as_f64(), Some(0.75));
        assert_eq!(j["reads"]["file_reads"].as_u64(), Some(706));
    }

    #[test]
    fn clear_mistakes_are_named() {
        let mut l = level(1, 40, 900 << 20, 10_000_000);
        l.filter_bytes = 0;
        l.deletes = 4_000_000;
        let mut stats = Stats::default();
        stats.levels = vec![level(0, 25, 500 << 20, 1_000_000), l];
        stats.total_table_bytes = 1400 << 20;
        stats.block_size = 1024;
        let a = advice(&stats).join("\n");
        assert!(a.contains("level 1 have no filters"), "{a}");
        assert!(a.contains("below 4 KiB"), "{a}");
        assert!(a.contains("tables in level 0"), "{a}");
        assert!(a.contains("deletions"), "{a}");
    }
}
