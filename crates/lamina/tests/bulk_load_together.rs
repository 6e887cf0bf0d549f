//! `BulkLoader::finish_all`: loaders into several keyspaces of one database
//! are ingested in one step — all of them, or after a failure none of them
//! and no file left behind, nor a keyspace the ingest created.

use lamina::fs::{FaultFs, FaultKind, FileSystem, MemFs};
use lamina::{BulkLoadOptions, BulkLoader, Db, Options};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

type Pairs = BTreeMap<Vec<u8>, Vec<u8>>;

fn options(keyspace: Option<&str>) -> BulkLoadOptions {
    BulkLoadOptions {
        memory_bytes: 16 << 10,
        table_size: 16 << 10,
        keyspace: keyspace.map(str::to_string),
    }
}

/// Feeds 3000 pairs (with repeats) to a loader of the default keyspace and
/// one of `users`, alternating, writing a run at each switch; returns what
/// each keyspace should hold.
fn feed(db: &Db) -> (Vec<BulkLoader>, Pairs, Pairs) {
    let mut plain = BulkLoader::new(db, options(None));
    let mut users = BulkLoader::new(db, options(Some("users")));
    let (mut want_plain, mut want_users) = (Pairs::new(), Pairs::new());
    for i in 0..3000u64 {
        let k = format!("k{:05}", (i * 7919) % 1000).into_bytes();
        let v = format!("v{i}").into_bytes();
        if (i / 250) % 2 == 0 {
            plain.add(&k, &v).expect("add");
            want_plain.insert(k, v);
            if i % 250 == 249 {
                plain.write_run().expect("run");
            }
        } else {
            users.add(&k, &v).expect("add");
            want_users.insert(k, v);
        }
    }
    users.add(b"", b"the empty key").expect("add");
    want_users.insert(Vec::new(), b"the empty key".to_vec());
    (vec![plain, users], want_plain, want_users)
}

fn contents(db: &Db, keyspace: Option<&str>) -> Pairs {
    match keyspace {
        None => db.iter().collect::<Result<_, _>>().expect("iter"),
        Some(name) => db
            .open_keyspace(name)
            .expect("keyspace")
            .iter()
            .collect::<Result<_, _>>()
            .expect("iter"),
    }
}

fn tmp_files(fs: &dyn FileSystem) -> Vec<String> {
    let names = fs.list_dir(Path::new("/db")).expect("list");
    names.into_iter().filter(|n| n.ends_with(".tmp")).collect()
}

#[test]
fn several_keyspaces_are_ingested_together() {
    let fs = MemFs::new();
    let opts = Options {
        fs: Arc::new(fs.clone()),
        ..Options::default()
    };
    let db = Db::open("/db", opts).expect("open");
    db.put(b"k00001", b"older").expect("put");
    let (loaders, want_plain, want_users) = feed(&db);
    let tables = BulkLoader::finish_all(loaders).expect("finish");
    let entries: u64 = tables.iter().map(|t| t.entries).sum();
    assert_eq!(entries, (want_plain.len() + want_users.len()) as u64);
    assert!(
        contents(&db, None) == want_plain,
        "default keyspace differs"
    );
    assert!(
        contents(&db, Some("users")) == want_users,
        "keyspace users differs"
    );
    assert_eq!(tmp_files(&fs), Vec::<String>::new());
    assert!(db.check().expect("check").is_ok());
}

#[test]
fn a_failed_write_leaves_the_database_as_it_was() {
    let mut failures = 0;
    for n in 0u64..24 {
        let mem = MemFs::new();
        let fault = FaultFs::new(Arc::new(mem.clone()));
        let faults = fault.faults();
        let opts = Options {
            fs: Arc::new(fault),
            ..Options::default()
        };
        let db = Db::open("/db", opts).expect("open");
        db.put(b"k00001", b"older").expect("put");
        db.flush().expect("flush");
        let before = contents(&db, None);
        let (loaders, want_plain, _) = feed(&db);
        faults.fail_after(FaultKind::Write, n);
        let done = BulkLoader::finish_all(loaders);
        faults.clear();
        match done {
            Ok(_) => assert!(contents(&db, None) == want_plain, "write:{n}"),
            Err(e) => {
                failures += 1;
                assert!(e.to_string().contains("No space left"), "write:{n}: {e}");
                drop(db);
                let reopened = Db::open(
                    "/db",
                    Options {
                        fs: Arc::new(mem.clone()),
                        ..Options::default()
                    },
                )
                .expect("reopen");
                assert!(contents(&reopened, None) == before, "write:{n}");
                // Before the fix: Db::ingest created the missing keyspace
                // `users` before it wrote, and a failure after that left it
                // behind, empty — a failed load changed the database.
                assert_eq!(reopened.keyspaces(), Vec::<String>::new(), "write:{n}");
                assert_eq!(tmp_files(&mem), Vec::<String>::new(), "write:{n}");
            }
        }
    }
    assert!(failures >= 3, "the fault was hit {failures} times");
}

#[test]
fn loaders_of_two_databases_are_refused() {
    let fs = MemFs::new();
    let open = |p: &str| {
        let opts = Options {
            fs: Arc::new(fs.clone()),
            ..Options::default()
        };
        Db::open(p, opts).expect("open")
    };
    let (a, b) = (open("/a"), open("/b"));
    let mut la = BulkLoader::new(&a, options(None));
    let mut lb = BulkLoader::new(&b, options(None));
    la.add(b"x", b"1").expect("add");
    lb.add(b"y", b"2").expect("add");
    let e = BulkLoader::finish_all(vec![la, lb]).expect_err("two databases");
    assert!(e.to_string().contains("one database"), "{e}");
    assert_eq!(a.iter().count() + b.iter().count(), 0);
}

/// The keyspace an ingest creates is created by the edit that installs its
/// tables: it is there, with its records, after a reopen.
#[test]
fn a_keyspace_the_ingest_created_survives_a_reopen() {
    let fs = MemFs::new();
    let opts = || Options {
        fs: Arc::new(fs.clone()),
        ..Options::default()
    };
    let db = Db::open("/db", opts()).expect("open");
    let (loaders, _, want_users) = feed(&db);
    BulkLoader::finish_all(loaders).expect("finish");
    db.close().expect("close");
    let db = Db::open("/db", opts()).expect("reopen");
    assert_eq!(db.keyspaces(), ["users"]);
    assert!(contents(&db, Some("users")) == want_users);
    // A keyspace created afterwards gets a new id: its records are its own.
    let other = db.keyspace("other").expect("keyspace");
    other.put(b"k", b"v").expect("put");
    assert!(contents(&db, Some("users")) == want_users);
    assert!(db.check().expect("check").is_ok());
}
