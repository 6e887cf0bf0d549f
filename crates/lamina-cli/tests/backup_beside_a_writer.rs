//! `lamina backup` while another process writes: the backup opens, `check`
//! passes, and it holds exactly a prefix of the writer's acknowledged
//! history, at least what was acknowledged before the backup started.
//!
//! Before it opened a read-only view beside the writer, `lamina backup`
//! exited 4 ("locked") whenever any process held the database.

#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;

use common::{lamina, stderr};
use lamina::{Db, Options};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Keys the writer cycles through: write `i` goes to slot `i % SLOTS`.
const SLOTS: u64 = 257;

/// The value of write `i`: `i` in 8 bytes, padded; every seventh is large
/// enough to live in a blob file.
fn value(i: u64) -> Vec<u8> {
    let mut v = i.to_be_bytes().to_vec();
    v.resize(if i.is_multiple_of(7) { 5000 } else { 30 }, b'.');
    v
}

fn key(slot: u64) -> Vec<u8> {
    format!("slot{slot:04}").into_bytes()
}

/// Checks that `backup` holds the state after writes `0..n` for some `n`
/// in `min..=max`, and returns `n`.
fn prefix_of_history(backup: &std::path::Path, min: u64, max: u64) -> u64 {
    let db = Db::open(
        backup,
        Options {
            read_only: true,
            ..Options::default()
        },
    )
    .unwrap();
    let mut n = 0;
    for slot in 0..SLOTS {
        if let Some(v) = db.get(&key(slot)).unwrap() {
            let i = u64::from_be_bytes(v[..8].try_into().unwrap());
            assert_eq!(v, value(i), "slot {slot} holds write {i} whole");
            n = n.max(i + 1);
        }
    }
    assert!(
        (min..=max).contains(&n),
        "the backup holds writes 0..{n}; acknowledged before it started {min}, after it ended {max}"
    );
    for slot in 0..SLOTS {
        // The newest write to `slot` before `n`, if any.
        let want = (slot < n).then(|| slot + (n - 1 - slot) / SLOTS * SLOTS);
        let got = db
            .get(&key(slot))
            .unwrap()
            .map(|v| u64::from_be_bytes(v[..8].try_into().unwrap()));
        assert_eq!(got, want, "slot {slot} in a backup of writes 0..{n}");
    }
    db.close().unwrap();
    n
}

#[test]
fn a_backup_beside_a_writer_is_a_prefix_of_its_acknowledged_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let opts = Options {
        memtable_size: 64 << 10,
        target_table_size: 64 << 10,
        level_base_size: 256 << 10,
        ..Options::default()
    };
    let db = Db::open(&path, opts).unwrap();
    let acked = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (db, acked, stop) = (db.clone(), Arc::clone(&acked), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                db.put(&key(i % SLOTS), &value(i)).unwrap();
                i += 1;
                acked.store(i, Ordering::Release);
                if i.is_multiple_of(3000) {
                    db.flush().unwrap();
                }
            }
        })
    };
    let mut seen = Vec::new();
    for round in 0..6 {
        while acked.load(Ordering::Acquire) < 2000 * (round + 1) {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let dest = dir.path().join(format!("backup{round}"));
        let before = acked.load(Ordering::Acquire);
        let out = lamina()
            .arg("backup")
            .arg(&path)
            .arg(&dest)
            .output()
            .unwrap();
        let after = acked.load(Ordering::Acquire);
        assert!(
            out.status.success(),
            "backup beside a writer: {}",
            stderr(&out)
        );
        let check = lamina().arg("check").arg(&dest).output().unwrap();
        assert!(
            check.status.success(),
            "check of the backup: {}",
            stderr(&check)
        );
        seen.push(prefix_of_history(&dest, before, after));
    }
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    db.close().unwrap();
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "backups {seen:?}");
}

#[test]
fn a_backup_of_a_closed_database_holds_everything() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = Db::open(&path, Options::default()).unwrap();
    for i in 0..1000 {
        db.put(&key(i % SLOTS), &value(i)).unwrap();
    }
    db.close().unwrap();
    let dest = dir.path().join("copy");
    let out = lamina()
        .arg("backup")
        .arg(&path)
        .arg(&dest)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(prefix_of_history(&dest, 1000, 1000), 1000);
}
