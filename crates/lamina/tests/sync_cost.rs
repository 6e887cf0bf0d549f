//! What one durable commit costs the file system: a `Sync` commit of one
//! put is one write of its record and one sync of the WAL segment, with no
//! sync of the directory, the manifest or a blob file, and no change of the
//! segment's size except where its record passes the zeros written ahead
//! (docs/design.md, "WAL segments at the device's limit").

use lamina::fs::{FaultFs, FaultKind, Faults, FileSystem, MemFs};
use lamina::{Batch, Db, Durability, Options};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The operations of each kind a step made, and whether the segment grew.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cost {
    writes: u64,
    syncs: u64,
    metadata: u64,
    grew: bool,
}

/// The one WAL segment in `/db` (a database that never filled a memtable
/// has one).
fn segment(mem: &MemFs) -> PathBuf {
    let names = mem.list_dir(Path::new("/db")).expect("list /db");
    let wals: Vec<&String> = names.iter().filter(|n| n.ends_with(".wal")).collect();
    match wals.as_slice() {
        [one] => Path::new("/db").join(one),
        _ => panic!("not one WAL segment in {names:?}"),
    }
}

fn counts(faults: &Faults) -> [u64; 3] {
    [
        faults.count(FaultKind::Write),
        faults.count(FaultKind::Sync),
        faults.count(FaultKind::Metadata),
    ]
}

/// Commits one put of a 24-byte key and a 150-byte value (redb's
/// "individual writes") at `Durability::Sync` and says what it cost.
fn commit_one(db: &Db, mem: &MemFs, faults: &Faults, i: u32) -> Cost {
    let wal = segment(mem);
    let size = mem.file_size(&wal).expect("WAL size");
    let before = counts(faults);
    let mut batch = Batch::new();
    batch.put(format!("key-{i:020}").as_bytes(), &[7; 150]);
    db.write_with(batch, Durability::Sync)
        .expect("durable commit");
    let after = counts(faults);
    Cost {
        writes: after[0] - before[0],
        syncs: after[1] - before[1],
        metadata: after[2] - before[2],
        grew: mem.file_size(&wal).expect("WAL size") != size,
    }
}

#[test]
fn a_durable_put_is_one_write_and_one_sync_of_the_segment() {
    let mem = MemFs::new();
    let faulty = FaultFs::new(Arc::new(mem.clone()));
    let faults = faulty.faults();
    let opts = Options {
        fs: Arc::new(faulty),
        ..Options::default()
    };
    let db = Db::open(Path::new("/db"), opts).expect("open");
    let mut in_place = 0;
    for i in 0..300u32 {
        let cost = commit_one(&db, &mem, &faults, i);
        // Exactly one sync: the segment's. A sync of the directory (a
        // rotation), of the manifest or of a blob file on the commit path
        // would be a second.
        assert_eq!(cost.syncs, 1, "commit {i}: {cost:?}");
        assert_eq!(cost.metadata, 0, "commit {i}: {cost:?}");
        if cost.grew {
            // The record, then the next step of zeros ahead.
            assert!(cost.writes <= 2, "commit {i}: {cost:?}");
        } else {
            assert_eq!(cost.writes, 1, "commit {i}: {cost:?}");
            in_place += 1;
        }
    }
    // 300 records of about 200 bytes grow a segment zero-filled ahead in
    // doubling steps a few times, not once per commit.
    assert!(
        in_place >= 290,
        "{in_place} of 300 commits left the size alone"
    );
    db.close().expect("close");
}
