//! `BulkLoader`: unsorted pairs, spilled in sorted runs under a memory
//! bound, merged and ingested; the last pair of a key wins. Runs that overlap
//! nowhere are ingested as they were written.

use lamina::fs::{FileSystem, MemFs};
use lamina::{BulkLoadOptions, BulkLoader, Db, Options};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

fn open(fs: &MemFs) -> Db {
    let opts = Options {
        fs: Arc::new(fs.clone()),
        ..Options::default()
    };
    Db::open("/db", opts).expect("open")
}

/// A deterministic shuffle of 0..n with repeats: key i*7919 mod n.
fn load(db: &Db, n: u64, opts: BulkLoadOptions) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut model = BTreeMap::new();
    let mut loader = BulkLoader::new(db, opts);
    for round in 0..2u64 {
        for i in 0..n {
            let k = format!("key{:08}", (i * 7919) % n).into_bytes();
            let v = format!("round{round}-{i}").into_bytes();
            loader.add(&k, &v).expect("add");
            model.insert(k, v);
        }
    }
    let tables = loader.finish().expect("finish");
    assert!(!tables.is_empty());
    model
}

#[test]
fn runs_spilled_under_a_memory_bound_merge_with_the_last_pair_winning() {
    let fs = MemFs::new();
    let db = open(&fs);
    db.put(b"key00000001", b"written before").expect("put");
    let opts = BulkLoadOptions {
        memory_bytes: 64 << 10,
        table_size: 32 << 10,
        keyspace: None,
    };
    let model = load(&db, 5000, opts);
    let got: BTreeMap<Vec<u8>, Vec<u8>> = db.iter().collect::<Result<_, _>>().expect("iter");
    assert_eq!(got.len(), model.len());
    assert!(got == model, "contents differ");
    // Several output tables, and no run file left behind.
    assert!(db.stats().levels.iter().map(|l| l.tables).sum::<usize>() > 3);
    let names = fs.list_dir(Path::new("/db")).expect("list");
    assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");
    assert!(db.check().expect("check").is_ok());
}

#[test]
fn everything_in_memory_into_a_keyspace() {
    let fs = MemFs::new();
    let db = open(&fs);
    let opts = BulkLoadOptions {
        keyspace: Some("people".into()),
        ..BulkLoadOptions::default()
    };
    let model = load(&db, 300, opts);
    let ks = db.open_keyspace("people").expect("keyspace");
    let got: BTreeMap<Vec<u8>, Vec<u8>> = ks.iter().collect::<Result<_, _>>().expect("iter");
    assert!(got == model, "contents differ");
    assert_eq!(db.iter().count(), 0);
}

#[test]
fn nothing_added_ingests_nothing_and_a_dropped_loader_leaves_no_file() {
    let fs = MemFs::new();
    let db = open(&fs);
    assert!(BulkLoader::new(&db, BulkLoadOptions::default())
        .finish()
        .expect("finish")
        .is_empty());
    let mut l = BulkLoader::new(
        &db,
        BulkLoadOptions {
            memory_bytes: 1,
            ..BulkLoadOptions::default()
        },
    );
    l.add(b"a", b"1").expect("add");
    l.add(b"b", b"2").expect("add");
    drop(l);
    let names = fs.list_dir(Path::new("/db")).expect("list");
    assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");
    assert_eq!(db.iter().count(), 0);
}

/// Loads keys `key{:08}` in runs, one per range of `cuts`, each ended by
/// `write_run`; values name their run (a later run's value wins).
fn load_runs(db: &Db, cuts: &[(u32, u32)]) -> (Vec<lamina::IngestedTable>, Pairs) {
    let mut model = Pairs::new();
    let mut loader = BulkLoader::new(
        db,
        BulkLoadOptions {
            table_size: 8 << 10,
            ..BulkLoadOptions::default()
        },
    );
    for (run, &(from, to)) in cuts.iter().enumerate() {
        for i in from..to {
            let (k, v) = (format!("key{i:08}"), format!("run{run}-{i}"));
            loader.add(k.as_bytes(), v.as_bytes()).expect("add");
            model.insert(k.into_bytes(), v.into_bytes());
        }
        loader.write_run().expect("run");
    }
    (loader.finish().expect("finish"), model)
}

type Pairs = BTreeMap<Vec<u8>, Vec<u8>>;

/// Whether every table ingested is one a run was written to (the loader
/// names its files `…-run…` and `…-table…`): nothing was merged and
/// written again.
fn all_runs(tables: &[lamina::IngestedTable]) -> bool {
    tables
        .iter()
        .all(|t| t.source.to_string_lossy().contains("-run"))
}

#[test]
fn runs_that_overlap_nowhere_are_ingested_as_written_and_others_merged() {
    for (cuts, as_written) in [
        (&[(0, 1000), (1000, 2500), (2500, 3000)][..], true),
        // The second run starts at the first one's last key.
        (&[(0, 1000), (999, 2000)][..], false),
        // A run before the one written before it, overlapping nothing.
        (&[(1000, 2000), (0, 1000)][..], true),
        // A run within the range of another.
        (&[(0, 1000), (2000, 3000), (500, 600)][..], false),
    ] {
        let fs = MemFs::new();
        let db = open(&fs);
        let (tables, model) = load_runs(&db, cuts);
        assert!(tables.len() > cuts.len(), "{} tables", tables.len());
        assert_eq!(all_runs(&tables), as_written, "{cuts:?}");
        let got: Pairs = db.iter().collect::<Result<_, _>>().expect("iter");
        assert!(got == model, "{cuts:?}: contents differ");
        let names = fs.list_dir(Path::new("/db")).expect("list");
        assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");
        assert!(db.check().expect("check").is_ok());
    }
}
