//! Read-only handles beside a live writer in the same process: every open,
//! read, scan and refresh succeeds while the writer writes, flushes and
//! compacts, and what a reader sees of a key never goes back in time.
//!
//! Before reader files pinned what a reader's view uses, a reader opened
//! beside a writer failed as soon as a compaction removed a table its view
//! listed ("table ... listed in the manifest is missing"), and a reader
//! opening while the writer rotated WAL segments reported the segment being
//! written as damaged; `reader_beside_a_compaction` failed the first way.

use lamina::{Db, Options};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn writer_options() -> Options {
    Options {
        memtable_size: 64 << 10,
        blob_threshold: 4096,
        level_base_size: 256 << 10,
        target_table_size: 64 << 10,
        ..Options::default()
    }
}

fn read_only() -> Options {
    Options {
        read_only: true,
        create_if_missing: false,
        ..Options::default()
    }
}

/// The value written for `key` at `round`: its round first, so a reader can
/// tell which write it sees; every fifth key's value is large (a blob).
fn value(key: u32, round: u32) -> Vec<u8> {
    let len = if key.is_multiple_of(5) { 6000 } else { 40 };
    let mut v = round.to_be_bytes().to_vec();
    v.resize(len, (key % 251) as u8);
    v
}

fn round_of(v: &[u8]) -> u32 {
    let head = v.get(..4).and_then(|h| h.try_into().ok());
    u32::from_be_bytes(head.expect("a value starts with its round"))
}

#[test]
fn reader_beside_a_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let w = Db::open(&path, writer_options()).unwrap();
    for k in 0..200u32 {
        w.put(&k.to_be_bytes(), &value(k, 1)).unwrap();
    }
    w.flush().unwrap();
    let r = Db::open(&path, read_only()).unwrap();
    for k in 0..200u32 {
        w.put(&k.to_be_bytes(), &value(k, 2)).unwrap();
    }
    w.flush().unwrap();
    w.compact().unwrap();
    for k in 0..200u32 {
        let v = r.get(&k.to_be_bytes()).unwrap().expect("present");
        assert_eq!(round_of(&v), 1, "the reader's view is the one it opened");
    }
    assert_eq!(r.iter().count(), 200);
    r.refresh().unwrap();
    for k in 0..200u32 {
        let v = r.get(&k.to_be_bytes()).unwrap().expect("present");
        assert_eq!(round_of(&v), 2, "refresh caught the reader up");
    }
    assert!(r.check().unwrap().is_ok());
}

#[test]
fn readers_never_see_false_damage_or_go_back_in_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let w = Db::open(&path, writer_options()).unwrap();
    w.put(b"start", b"").unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (w, stop) = (w.clone(), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut round = 0u32;
            while !stop.load(Ordering::Relaxed) {
                round += 1;
                for k in 0..300u32 {
                    w.put(&k.to_be_bytes(), &value(k, round)).unwrap();
                }
                if round.is_multiple_of(3) {
                    w.flush().unwrap();
                }
                if round.is_multiple_of(7) {
                    w.compact().unwrap();
                }
            }
            round
        })
    };
    let deadline = Instant::now() + Duration::from_secs(4);
    let mut opens = 0;
    let mut refreshes = 0;
    while Instant::now() < deadline {
        let r = Db::open(&path, read_only()).unwrap();
        opens += 1;
        let mut seen = vec![0u32; 300];
        for _ in 0..3 {
            for (k, last) in seen.iter_mut().enumerate() {
                if let Some(v) = r.get(&(k as u32).to_be_bytes()).unwrap() {
                    assert_eq!(v, value(k as u32, round_of(&v)), "key {k}: a torn value");
                    assert!(round_of(&v) >= *last, "key {k} went back in time");
                    *last = round_of(&v);
                }
            }
            let scanned = r
                .iter()
                .map(|e| e.map(drop))
                .collect::<Result<Vec<()>, _>>();
            let scanned = scanned.expect("scan").len();
            assert!(scanned >= 1);
            r.refresh().unwrap();
            refreshes += 1;
        }
        drop(r);
    }
    stop.store(true, Ordering::Relaxed);
    let rounds = writer.join().unwrap();
    assert!(
        rounds > 3 && opens > 3,
        "{rounds} rounds, {opens} opens, {refreshes} refreshes"
    );
}
