//! Crash tests of blob files: a power loss at every sync point of a workload
//! that writes blob files at flush and collects them in compaction. After
//! each, the database reopens holding every acknowledged value (read back
//! whole from its blob file), `check` finds nothing wrong, and no blob file
//! is left that the manifest does not list.

use lamina::fs::{FaultFs, FaultKind, FileSystem, MemFs};
use lamina::{Batch, Db, Durability, Options};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

const DIR: &str = "/crash";

fn opts(fs: Arc<dyn FileSystem>) -> Options {
    Options {
        fs,
        memtable_size: 1 << 20,
        l0_compaction_trigger: 100,
        l0_slowdown_trigger: 200,
        l0_stop_trigger: 300,
        blob_threshold: 512,
        blob_gc_ratio: 0.5,
        ..Options::default()
    }
}

fn value(i: u64, round: u64) -> Vec<u8> {
    let mut v = format!("{i}/{round}:").into_bytes();
    v.resize(600 + (i as usize * 37) % 900, b'a' + (round as u8));
    v
}

/// One step of the workload: the writes of a round, then what makes them
/// durable or reorganises them.
enum Step {
    Write(Vec<(u64, Option<u64>)>),
    Flush,
    Compact,
}

fn workload() -> Vec<Step> {
    vec![
        Step::Write((0..24).map(|i| (i, Some(0))).collect()),
        Step::Flush,
        // Two thirds of round 0 overwritten: its blob file passes the ratio.
        Step::Write((0..16).map(|i| (i, Some(1))).collect()),
        Step::Flush,
        Step::Compact,
        Step::Write(
            (16..20)
                .map(|i| (i, None))
                .chain((20..22).map(|i| (i, Some(2))))
                .collect(),
        ),
        Step::Flush,
        Step::Compact,
    ]
}

fn key(i: u64) -> Vec<u8> {
    format!("key{i:03}").into_bytes()
}

/// Runs the workload until an operation fails. Returns the states the
/// database may hold after a crash now: the last acknowledged one and the
/// one being written when the failure came.
fn run(fs: Arc<FaultFs>, fail_after_syncs: Option<u64>) -> Vec<Model> {
    let mut model = Model::new();
    let mut allowed = vec![model.clone()];
    let db = Db::open(DIR, opts(fs.clone())).expect("open");
    if let Some(n) = fail_after_syncs {
        fs.faults().fail_after(FaultKind::Sync, n);
    }
    for step in workload() {
        match step {
            Step::Write(ops) => {
                let mut b = Batch::new();
                for (i, round) in ops {
                    match round {
                        Some(r) => {
                            b.put(&key(i), &value(i, r));
                            model.insert(key(i), value(i, r));
                        }
                        None => {
                            b.delete(&key(i));
                            model.remove(&key(i));
                        }
                    }
                }
                // Synced writes: a failed sync is then met first inside a
                // flush or compaction, the sync points this test is about.
                if db.write_with(b, Durability::Sync).is_err() {
                    allowed.push(model.clone());
                    return allowed;
                }
                allowed = vec![model.clone()];
            }
            Step::Flush => {
                if db.flush().is_err() {
                    return allowed;
                }
            }
            Step::Compact => {
                if db.compact().is_err() {
                    return allowed;
                }
            }
        }
    }
    let _ = db.close();
    vec![model]
}

fn verify(crashed: MemFs, allowed: &[Model], what: &str) {
    let db = Db::open(DIR, opts(Arc::new(crashed.clone())))
        .unwrap_or_else(|e| panic!("{what}: reopen failed: {e}"));
    let got: Model = db
        .iter()
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("{what}: read failed: {e}"));
    assert!(
        allowed.contains(&got),
        "{what}: {} keys after the crash, not a state the acknowledged writes allow",
        got.len()
    );
    let report = db.check().expect("check");
    assert!(report.is_ok(), "{what}: {:?}", report.problems);
    // Closing removes the files background work retired; what is left on
    // disk must be what the manifest lists.
    db.close().expect("close");
    let ro = Db::open(
        DIR,
        Options {
            read_only: true,
            ..opts(Arc::new(crashed.clone()))
        },
    )
    .expect("read-only open");
    let on_disk = crashed
        .file_names(Path::new(DIR))
        .iter()
        .filter(|n| n.ends_with(".blob"))
        .count();
    assert_eq!(
        on_disk,
        ro.stats().blob_files,
        "{what}: a blob file the manifest does not list was left behind: {:?}",
        crashed.file_names(Path::new(DIR))
    );
}

#[test]
fn crash_at_every_sync_point_of_blob_writing_and_collection() {
    // Count the syncs of a clean run, and check it collected a blob file.
    let mem = MemFs::new();
    let clean = Arc::new(FaultFs::new(Arc::new(mem.clone())));
    let faults = clean.faults();
    let end = run(Arc::clone(&clean), Some(u64::MAX));
    let syncs = faults.count(FaultKind::Sync);
    {
        let db = Db::open(DIR, opts(Arc::new(mem.clone()))).expect("open");
        assert!(
            db.stats().blob_bytes_moved == 0,
            "a fresh handle has moved nothing"
        );
        let got: Model = db.iter().collect::<Result<_, _>>().expect("iter");
        assert_eq!(got, end[0]);
    }
    assert!(syncs > 10, "the workload syncs {syncs} times");
    for n in 0..syncs {
        let mem = MemFs::new();
        let fs = Arc::new(FaultFs::new(Arc::new(mem.clone())));
        let allowed = run(fs, Some(n));
        verify(
            mem.crash_clone(),
            &allowed,
            &format!("crash at sync {n} of {syncs}"),
        );
    }
}

#[test]
fn crash_during_collection_keeps_values_moved_and_unmoved() {
    // A blob file past the ratio is collected by compaction; the writes of
    // the collection (new blob file, tables, manifest edit, removal) are cut
    // at every point, and every value reads back either way.
    let base = MemFs::new();
    {
        let db = Db::open(DIR, opts(Arc::new(base.clone()))).expect("open");
        for i in 0..30 {
            db.put(&key(i), &value(i, 0)).expect("put");
        }
        db.flush().expect("flush");
        for i in 0..20 {
            db.put(&key(i), &value(i, 1)).expect("put");
        }
        db.flush().expect("flush");
        db.close().expect("close");
    }
    let want: Model = (0..30)
        .map(|i| (key(i), value(i, u64::from(i < 20))))
        .collect();
    let mut n = 0;
    loop {
        let mem = base.crash_clone();
        let fs = FaultFs::new(Arc::new(mem.clone()));
        let faults = fs.faults();
        let db = Db::open(DIR, opts(Arc::new(fs))).expect("open");
        faults.fail_after(FaultKind::Sync, n);
        let done = db.compact().is_ok();
        drop(db);
        verify(
            mem.crash_clone(),
            std::slice::from_ref(&want),
            &format!("collection cut at sync {n}"),
        );
        if done {
            let db = Db::open(DIR, opts(Arc::new(mem.crash_clone()))).expect("open");
            assert!(
                db.stats().blob_files <= 2,
                "the two-thirds-dead file was collected"
            );
            break;
        }
        n += 1;
        assert!(n < 200, "compaction never finished");
    }
}

/// Large values written at commit across many memtable rotations, with
/// `Os` durability and a `Sync` write now and then: after a power loss
/// right after any write (unsynced bytes dropped, or a random prefix of
/// them kept), the database reopens at a state the acknowledged writes
/// allow. A rotation's syncs are paid later than it starts the next
/// segment (docs/format.md#segments-started-ahead-of-their-syncs),
/// so the crash often finds a sealed blob file, an old segment's END or a
/// new blob file's name not yet durable, with records of the next segment
/// written back.
#[test]
fn a_power_loss_between_a_rotation_and_its_syncs_keeps_a_prefix() {
    let mem = MemFs::new();
    let fs: Arc<dyn FileSystem> = Arc::new(mem.clone());
    let o = || Options {
        memtable_size: 8 << 10,
        ..opts(Arc::clone(&fs))
    };
    let db = Db::open(DIR, o()).expect("open");
    let mut model = Model::new();
    let mut allowed = vec![model.clone()];
    for i in 0u64..120 {
        let durability = if i % 17 == 16 {
            Durability::Sync
        } else {
            Durability::Os
        };
        let mut b = Batch::new();
        b.put(&key(i % 40), &value(i, i / 40));
        model.insert(key(i % 40), value(i, i / 40));
        db.write_with(b, durability).expect("write");
        if durability == Durability::Sync {
            allowed.clear();
        }
        allowed.push(model.clone());
        for (n, crashed) in [mem.crash_clone(), mem.crash_clone_with(i)]
            .into_iter()
            .enumerate()
        {
            verify(crashed, &allowed, &format!("write {i} crash {n}"));
        }
    }
    assert!(db.stats().flushes >= 5, "{:?}", db.stats());
    db.close().expect("close");
}
