//! Options are checked when a database is opened: a value out of range, or
//! options that contradict one another, get `InvalidArgument` naming the
//! option and the range it must lie in.

use lamina::fs::MemFs;
use lamina::{Db, Error, Options};
use std::path::Path;
use std::sync::Arc;

fn open_with(o: Options) -> Result<Db, Error> {
    Db::open(
        Path::new("/db"),
        Options {
            fs: Arc::new(MemFs::new()),
            ..o
        },
    )
}

fn refusal(o: Options) -> String {
    match open_with(o) {
        Err(Error::InvalidArgument(m)) => m,
        Err(e) => panic!("expected InvalidArgument, got {e}"),
        Ok(_) => panic!("the options were accepted"),
    }
}

/// Before the fix: `memtable_size=64<<10, l0_compaction_trigger=8,
/// l0_stop_trigger=4` opened, and 200,000 small writes then made no progress:
/// writers waited at 4 level-0 tables for a compaction that starts only at 8.
#[test]
fn a_stop_trigger_below_the_compaction_trigger_is_refused() {
    let m = refusal(Options {
        memtable_size: 64 << 10,
        l0_compaction_trigger: 8,
        l0_stop_trigger: 4,
        ..Options::default()
    });
    assert!(m.contains("l0_slowdown_trigger"), "{m}");
    let m = refusal(Options {
        l0_compaction_trigger: 8,
        l0_slowdown_trigger: 9,
        l0_stop_trigger: 4,
        ..Options::default()
    });
    assert!(
        m.contains("l0_stop_trigger is 4; it must be between 9 and"),
        "{m}"
    );
}

/// Before the fix: `l0_compaction_trigger=100, l0_stop_trigger=1` opened and
/// blocked the writer at the first flush.
#[test]
fn a_compaction_trigger_above_the_stop_trigger_is_refused() {
    let m = refusal(Options {
        l0_compaction_trigger: 100,
        l0_stop_trigger: 1,
        ..Options::default()
    });
    assert!(m.contains("above l0_compaction_trigger"), "{m}");
}

/// Before the fix: `block_size=1<<40` was accepted although the format caps
/// blocks at 256 MiB.
#[test]
fn a_block_larger_than_the_format_allows_is_refused() {
    let m = refusal(Options {
        block_size: 1 << 40,
        ..Options::default()
    });
    assert_eq!(
        m,
        "option block_size is 1099511627776; it must be between 64 and 268435456"
    );
}

#[test]
fn zero_sizes_and_counts_are_refused() {
    for (o, name) in [
        (
            Options {
                memtable_size: 0,
                ..Options::default()
            },
            "memtable_size",
        ),
        (
            Options {
                max_open_tables: 0,
                ..Options::default()
            },
            "max_open_tables",
        ),
        (
            Options {
                target_table_size: 0,
                ..Options::default()
            },
            "target_table_size",
        ),
    ] {
        let m = refusal(o);
        assert!(m.starts_with(&format!("option {name} is 0")), "{m}");
    }
}

/// Zero asks lamina to choose the level sizes; a forced size out of range
/// is refused with a message that says so.
#[test]
fn level_sizes_are_chosen_at_zero_and_refused_out_of_range() {
    let db = open_with(Options {
        level_base_size: 0,
        level_multiplier: 0,
        memtable_size: 8 << 20,
        ..Options::default()
    })
    .expect("open");
    let s = db.stats();
    assert_eq!((s.level_base_size, s.level_multiplier), (32 << 20, 4));
    assert!(
        s.level_sizes_reason.contains("4 memtables of 8 MiB"),
        "{}",
        s.level_sizes_reason
    );
    for (o, want) in [
        (
            Options {
                level_base_size: 1,
                ..Options::default()
            },
            "option level_base_size is 1; it must be between 1024 and 1125899906842624 \
             (or 0 to let lamina choose)",
        ),
        (
            Options {
                level_multiplier: 1,
                ..Options::default()
            },
            "option level_multiplier is 1; it must be between 2 and 1000 (or 0 to let lamina choose)",
        ),
    ] {
        assert_eq!(refusal(o), want);
    }
}

#[test]
fn options_within_range_open() {
    let db = open_with(Options {
        memtable_size: 2 << 10,
        block_size: 128,
        l0_compaction_trigger: 2,
        l0_slowdown_trigger: 3,
        l0_stop_trigger: 3,
        ..Options::default()
    })
    .expect("open");
    db.put(b"k", b"v").expect("put");
}

#[test]
fn a_blob_gc_ratio_outside_zero_to_one_is_refused() {
    for bad in [1.5, -0.1, f64::NAN] {
        let msg = refusal(Options {
            blob_gc_ratio: bad,
            ..Options::default()
        });
        assert!(
            msg.contains("blob_gc_ratio") && msg.contains("between 0 and 1"),
            "{msg}"
        );
    }
    let msg = refusal(Options {
        blob_threshold: 0,
        ..Options::default()
    });
    assert!(msg.contains("blob_threshold"), "{msg}");
}
