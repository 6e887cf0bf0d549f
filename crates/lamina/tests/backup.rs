//! `Db::backup`: a copy that opens with every key, keyspace and counter of
//! its source.
//!
//! Before the fix: `backup` built its manifest by hand, repeating the version
//! set's snapshot field by field, and had drifted from it: the lifetime byte
//! counters (version edit tag 9) were left out, so a backup reported the bytes
//! written over the database's life as 0 (and `lamina stat` a lifetime write
//! amplification of 0). The backup now writes the version set's own snapshot.

use lamina::{Db, LevelStats, Options, Stats};

fn small() -> Options {
    Options {
        memtable_size: 32 << 10,
        block_size: 512,
        l0_compaction_trigger: 2,
        ..Options::default()
    }
}

/// What a backup must carry over: the shape of the tree, the keyspaces, the
/// last seqno and the lifetime counters (not the counters of this handle).
fn carried(s: &Stats) -> (Vec<LevelStats>, Vec<String>, u64, u64, u64) {
    let mut keyspaces = s.keyspaces.clone();
    keyspaces.sort();
    (
        s.levels.clone(),
        keyspaces,
        s.last_seqno,
        s.lifetime_user_bytes,
        s.lifetime_disk_bytes,
    )
}

fn contents(db: &Db) -> Vec<(String, Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    let mut names = db.keyspaces();
    names.sort();
    names.insert(0, String::new());
    for name in names {
        let ks = if name.is_empty() {
            db.default_keyspace()
        } else {
            db.open_keyspace(&name).expect("keyspace")
        };
        for e in ks.iter() {
            let (k, v) = e.expect("entry");
            out.push((name.clone(), k, v));
        }
    }
    out
}

#[test]
fn a_backup_keeps_every_key_and_the_lifetime_counters() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path().join("src"), small()).expect("open");
    let users = db.keyspace("users").expect("keyspace");
    for i in 0..3000u32 {
        db.put(format!("k{i:05}").as_bytes(), &[b'v'; 40])
            .expect("put");
        if i % 3 == 0 {
            users.put(format!("u{i}").as_bytes(), b"user").expect("put");
        }
        if i % 7 == 0 {
            db.merge(b"counter", &1u64.to_le_bytes()).expect("merge");
        }
    }
    db.compact().expect("compact");
    for i in (0..3000u32).step_by(11) {
        db.delete(format!("k{i:05}").as_bytes()).expect("delete");
    }
    db.put(b"after compaction", b"in the memtable until the backup")
        .expect("put");

    let dest = dir.path().join("backup");
    db.backup(&dest).expect("backup");
    let source = db.stats();
    assert!(source.lifetime_user_bytes > 0 && source.lifetime_disk_bytes > 0);
    let want = contents(&db);
    db.close().expect("close");

    let backup = Db::open(&dest, small()).expect("open backup");
    assert_eq!(carried(&backup.stats()), carried(&source));
    assert_eq!(contents(&backup), want);
    assert!(backup.check().expect("check").is_ok());

    // The counters survive the backup's own reopen too.
    backup.close().expect("close");
    let backup = Db::open(&dest, small()).expect("reopen backup");
    assert_eq!(carried(&backup.stats()).3, source.lifetime_user_bytes);
    assert_eq!(contents(&backup), want);
}
