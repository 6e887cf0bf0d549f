//! The memory budget as `stats()` reports it: sizes derived from it, memory
//! charged to the block cache that follows the memtables through flushes
//! (never growing from one flush to the next), explicit sizes winning; and
//! writers paced, not stopped, while compaction is behind.

#![allow(clippy::unwrap_used)]

use lamina::fs::MemFs;
use lamina::{Db, Options, Stats};
use std::sync::Arc;

fn open(fs: &MemFs, opts: Options) -> Db {
    Db::open(
        "/db",
        Options {
            fs: Arc::new(fs.clone()),
            ..opts
        },
    )
    .unwrap()
}

fn write(db: &Db, from: u32, n: u32) {
    for i in from..from + n {
        db.put(format!("key{i:08}").as_bytes(), &[b'v'; 100])
            .unwrap();
    }
}

#[test]
fn sizes_come_from_the_budget_unless_set() {
    let fs = MemFs::new();
    let db = open(
        &fs,
        Options {
            memory_budget: 12 << 20,
            ..Options::default()
        },
    );
    let s = db.stats();
    assert_eq!(s.memory_budget, 12 << 20);
    // The cache is 2/3 of the budget; nothing is charged yet.
    assert_eq!(s.cache_capacity, 8 << 20);
    db.close().unwrap();

    let fs = MemFs::new();
    let db = open(
        &fs,
        Options {
            memory_budget: 9 << 20,
            cache_size: 3 << 20,
            ..Options::default()
        },
    );
    write(&db, 0, 5000);
    let s = db.stats();
    assert_eq!(s.cache_capacity, 3 << 20, "an explicit cache size wins");
    assert_eq!(s.memory_charged_bytes, 0, "and is not charged");
    db.close().unwrap();
}

#[test]
fn budget_out_of_range_is_refused_with_its_name() {
    let err = Db::open(
        "/db",
        Options {
            fs: Arc::new(MemFs::new()),
            memory_budget: 1000,
            ..Options::default()
        },
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        err.contains("memory_budget is 1000; it must be between 262144"),
        "{err}"
    );
}

/// The charge never passes what memtables and tables could hold, and the
/// room for blocks is the cache less the charge (never below an eighth).
fn check_accounting(s: &Stats, cache: u64, when: &str) {
    assert!(
        s.memory_charged_bytes <= s.memory_budget,
        "{when}: charged {} of a budget of {}",
        s.memory_charged_bytes,
        s.memory_budget
    );
    let room = cache.saturating_sub(s.memory_charged_bytes).max(cache / 8);
    let slack = cache / 64;
    assert!(
        s.cache_capacity.abs_diff(room) <= slack,
        "{when}: room for blocks {} but the cache less the charge is {room}",
        s.cache_capacity
    );
    assert!(s.cache_bytes <= s.cache_capacity + slack, "{when}");
}

#[test]
fn charges_follow_the_memtables_and_do_not_leak_across_flushes() {
    let fs = MemFs::new();
    let budget = 2u64 << 20;
    let cache = budget / 3 * 2;
    let db = open(
        &fs,
        Options {
            memory_budget: budget as usize,
            ..Options::default()
        },
    );
    // Memtables of budget / 4 = 512 KiB: about 4,000 records each.
    let mut after_flush = Vec::new();
    for round in 0..6 {
        write(&db, round * 3000, 3000);
        let s = db.stats();
        check_accounting(&s, cache, &format!("round {round}, before flush"));
        assert!(
            s.memory_charged_bytes > 0,
            "round {round}: memtables are charged"
        );
        db.flush().unwrap();
        let s = db.stats();
        check_accounting(&s, cache, &format!("round {round}, after flush"));
        after_flush.push(s.memory_charged_bytes);
    }
    // After a flush only the open tables' indexes and filters are charged:
    // a few KiB per table, far below one memtable, and no memtable's bytes
    // stay charged from one round to the next.
    let tables: u64 = db
        .stats()
        .levels
        .iter()
        .map(|l| l.index_bytes + l.filter_bytes)
        .sum();
    for (round, charged) in after_flush.iter().enumerate() {
        assert!(
            *charged <= tables + (cache / 64),
            "round {round}: {charged} charged after a flush; tables hold {tables}"
        );
    }
    for i in (0..18_000).step_by(997) {
        assert!(db.get(format!("key{i:08}").as_bytes()).unwrap().is_some());
    }
    db.close().unwrap();
}

#[test]
fn writers_are_slowed_before_they_are_stopped() {
    let fs = MemFs::new();
    let db = open(
        &fs,
        Options {
            memtable_size: 8 << 10,
            l0_compaction_trigger: 2,
            l0_slowdown_trigger: 3,
            l0_stop_trigger: 1000,
            level_base_size: 16 << 10,
            target_table_size: 8 << 10,
            ..Options::default()
        },
    );
    write(&db, 0, 20_000);
    let s = db.stats();
    let st = s.stalls;
    assert_eq!(
        s.write_delay_micros,
        st.level0_delay_micros + st.pending_bytes_delay_micros + st.memtables_delay_micros,
        "the delay is the sum of its causes: {s:?}"
    );
    assert_eq!(
        s.write_stops,
        st.level0_stops + st.pending_bytes_stops + st.memtables_stops,
        "{st:?}"
    );
    assert!(
        s.write_delay_micros > 0,
        "level 0 past its slowdown trigger slows writers: {st:?}"
    );
    assert_eq!(st.level0_stops, 0, "level 0 never reached its stop trigger");
    db.close().unwrap();
}
