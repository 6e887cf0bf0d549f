//! A compaction leaves in place the next-level tables no key of its inputs
//! falls in: level-0 tables whose keys sit at the two ends of the key space
//! (the memtable that held the last 8-digit and the first 9-digit keys of
//! the numbers load was one) overlap every level-1 table by their ranges,
//! and used to make the compaction rewrite all of level 1. Here only the
//! tables at the ends are rewritten; the others keep their files, and every
//! key reads back.

use lamina::fs::{FileSystem, MemFs};
use lamina::{Db, Options};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn tables(fs: &MemFs) -> Vec<String> {
    let mut v: Vec<String> = fs
        .list_dir(std::path::Path::new("/db"))
        .expect("list")
        .into_iter()
        .filter(|n| n.ends_with(".sst"))
        .collect();
    v.sort();
    v
}

/// Waits until level 0 holds no table. REQUIRES: it holds none, or exactly
/// the trigger's number, so that the compaction it triggers takes them all:
/// a compaction takes the level-0 tables there when it starts, and fewer
/// than the trigger are never compacted.
fn settle(db: &Db) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while db.stats().levels.first().is_some_and(|l| l.tables > 0) {
        assert!(Instant::now() < deadline, "level 0 never emptied");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("k{i:06}").into_bytes()
}

#[test]
fn tables_no_input_key_falls_in_stay_where_they_are() {
    let fs = Arc::new(MemFs::new());
    let opts = Options {
        fs: fs.clone(),
        memtable_size: 1 << 20,
        target_table_size: 64 << 10,
        // 4 x 4 flushes of 1,250 keys: the 20,000 below.
        l0_compaction_trigger: 4,
        ..Options::default()
    };
    let trigger = opts.l0_compaction_trigger as u32;
    let db = Db::open("/db", opts).expect("open");
    let value = [b'v'; 100];
    // Level 0 filled to the trigger by flushes of 1,250 keys (the memtable
    // never fills), and emptied, four times: a flush made while a
    // compaction runs would leave a number the next one does not take
    // whole. Each table moves down whole (nothing below overlaps it): 16
    // level-1 tables.
    for flush in 0..4 * trigger {
        for i in flush * 1_250..(flush + 1) * 1_250 {
            db.put(&key(i), &value).expect("put");
        }
        db.flush().expect("flush");
        if (flush + 1) % trigger == 0 {
            settle(&db);
        }
    }
    let before = tables(&fs);
    let level1 = db.stats().levels.get(1).map_or(0, |l| l.tables);
    assert!(level1 > 8, "level 1 holds {level1} tables");
    let kept_before = db.stats().compaction_tables_kept;

    // Level-0 tables each holding a key at either end of the key space.
    for round in 0..4u32 {
        let mut first = key(0);
        first.push(b'a' + round as u8);
        let mut last = key(19_999);
        last.push(b'a' + round as u8);
        db.put(&first, b"first").expect("put");
        db.put(&last, b"last").expect("put");
        db.flush().expect("flush");
    }
    settle(&db);

    let after = tables(&fs);
    let stayed = before.iter().filter(|t| after.contains(t)).count();
    let kept = db.stats().compaction_tables_kept - kept_before;
    assert!(
        kept as usize >= level1 - 4,
        "{kept} of {level1} tables kept"
    );
    assert!(
        stayed >= level1 - 4,
        "{stayed} of {level1} files still there"
    );
    for i in 0..20_000u32 {
        assert_eq!(
            db.get(&key(i)).expect("get").as_deref(),
            Some(&value[..]),
            "{i}"
        );
    }
    for round in 0..4u32 {
        let mut first = key(0);
        first.push(b'a' + round as u8);
        assert_eq!(db.get(&first).expect("get").as_deref(), Some(&b"first"[..]));
    }
    let report = db.check().expect("check");
    assert!(report.is_ok(), "{report:?}");
    db.close().expect("close");
}
