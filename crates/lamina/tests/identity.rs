//! Every file knows its database: a WAL segment or a table copied in from
//! another database, renamed to another number, or missing, is
//! `Error::Corruption` naming the file at open or at the first read — never
//! a silent replay, a silent loss or a wrong answer. A database written
//! before the identity existed (by a pre-release build) is refused.

#![allow(clippy::indexing_slicing)]

use lamina::cache::BlockCache;
use lamina::fs::{FileSystem, MemFs};
use lamina::manifest::VersionEdit;
use lamina::table::{Properties, Table, TableBuilder, TableOptions};
use lamina::wal::{LogReader, LogWriter, MANIFEST_MAGIC, WAL_MAGIC};
use lamina::{Db, Error, Options};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn opts(fs: &MemFs) -> Options {
    Options {
        fs: Arc::new(fs.clone()),
        ..Options::default()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

/// A database at `dir` holding keys 0..n with values `tag`-i, all in its WAL.
fn wal_only(fs: &MemFs, dir: &str, n: u32, tag: &str) -> Db {
    let db = Db::open(Path::new(dir), opts(fs)).expect("open");
    for i in 0..n {
        db.put(&key(i), format!("{tag}-{i:05}").as_bytes())
            .expect("put");
    }
    db.sync().expect("sync");
    db
}

fn names(fs: &MemFs, dir: &str, ext: &str) -> Vec<String> {
    let mut v: Vec<String> = fs
        .file_names(Path::new(dir))
        .into_iter()
        .filter(|n| n.ends_with(ext))
        .collect();
    v.sort();
    v
}

fn copy(fs: &MemFs, from: &Path, to: &Path) {
    let bytes = fs.read_all(from).expect("read");
    let mut f = fs.create(to).expect("create");
    f.append(&bytes).expect("append");
    f.sync_data().expect("sync");
    fs.sync_dir(to.parent().expect("parent")).expect("sync dir");
}

/// The error is corruption and names `file`.
fn assert_corruption_naming(e: &Error, file: &Path, words: &str) {
    match e {
        Error::Corruption {
            file: f, reason, ..
        } => {
            assert_eq!(f, file, "{e}");
            assert!(reason.contains(words), "{e}");
        }
        other => panic!("expected corruption naming {}, got {other}", file.display()),
    }
}

fn open_err(fs: &MemFs, dir: &str) -> Error {
    match Db::open(Path::new(dir), opts(fs)) {
        Ok(db) => {
            let got: Vec<_> = db.iter().take(3).collect();
            panic!("the database opened; it reads {got:?}")
        }
        Err(e) => e,
    }
}

/// Before the fix: write, `sync()`, exit, delete `*.wal`: the database
/// opened, `check` said OK, and the acknowledged key was gone although the
/// manifest named the deleted segment.
#[test]
fn a_deleted_wal_is_corruption_naming_it() {
    let fs = MemFs::new();
    let db = wal_only(&fs, "/db", 10, "v");
    let crashed = fs.crash_clone();
    drop(db);
    let wals = names(&crashed, "/db", ".wal");
    assert_eq!(wals.len(), 1, "{wals:?}");
    let path = PathBuf::from("/db").join(&wals[0]);
    crashed.remove_file(&path).expect("remove");
    crashed.sync_dir(Path::new("/db")).expect("sync dir");
    let e = open_err(&crashed, "/db");
    assert_corruption_naming(&e, &path, "is missing");
    // A read-only open refuses it too.
    let ro = Options {
        read_only: true,
        ..opts(&crashed)
    };
    let e = Db::open(Path::new("/db"), ro).expect_err("read-only open");
    assert_corruption_naming(&e, &path, "is missing");
}

/// A segment started by a memtable rotation is recorded before anything in
/// it is acknowledged; deleting it (while an older one remains) is noticed.
#[test]
fn a_deleted_later_wal_is_corruption_naming_it() {
    let fs = MemFs::new();
    let o = Options {
        memtable_size: 4 << 10,
        l0_compaction_trigger: 100,
        l0_slowdown_trigger: 200,
        l0_stop_trigger: 200,
        ..opts(&fs)
    };
    let db = Db::open(Path::new("/db"), o.clone()).expect("open");
    for i in 0..300 {
        db.put(&key(i), &[b'x'; 40]).expect("put");
    }
    db.sync().expect("sync");
    let crashed = fs.crash_clone();
    drop(db);
    let wals = names(&crashed, "/db", ".wal");
    let last = PathBuf::from("/db").join(wals.last().expect("a WAL segment"));
    crashed.remove_file(&last).expect("remove");
    crashed.sync_dir(Path::new("/db")).expect("sync dir");
    let e = open_err(&crashed, "/db");
    assert_corruption_naming(&e, &last, "is missing");
}

/// Before the fix: a WAL copied in from another database was replayed
/// silently (2,489 wrong values, `check` OK): its header named no database.
#[test]
fn a_wal_from_another_database_is_refused() {
    let fs = MemFs::new();
    let a = wal_only(&fs, "/a", 50, "a");
    let b = wal_only(&fs, "/b", 50, "b");
    let crashed = fs.crash_clone();
    drop((a, b));
    let (wa, wb) = (names(&crashed, "/a", ".wal"), names(&crashed, "/b", ".wal"));
    let target = PathBuf::from("/a").join(&wa[0]);
    copy(&crashed, &PathBuf::from("/b").join(&wb[0]), &target);
    let e = open_err(&crashed, "/a");
    assert_corruption_naming(&e, &target, "another database");
}

/// A segment renamed to another number would replay its writes out of
/// order (or twice); its header names the number it was written as.
#[test]
fn a_renumbered_wal_is_refused() {
    let fs = MemFs::new();
    let a = wal_only(&fs, "/a", 50, "a");
    let crashed = fs.crash_clone();
    drop(a);
    let wals = names(&crashed, "/a", ".wal");
    let from = PathBuf::from("/a").join(&wals[0]);
    let number: u64 = wals[0].trim_end_matches(".wal").parse().expect("number");
    let to = PathBuf::from("/a").join(format!("{:06}.wal", number + 100));
    copy(&crashed, &from, &to);
    let e = open_err(&crashed, "/a");
    assert_corruption_naming(&e, &to, "written as number");
}

/// Two databases of the same shape: same keys, same value lengths, so their
/// tables have the same numbers, sizes, keys and entry counts.
fn twins(fs: &MemFs) {
    for (dir, tag) in [("/a", "a"), ("/b", "b")] {
        let db = wal_only(fs, dir, 2000, tag);
        db.flush().expect("flush");
        db.close().expect("close");
    }
}

/// Before the fix: a table swapped in from another database gave wrong
/// reads with no error (3,443 keys missing, 1,620 extra, 4,223 wrong); only
/// `check` noticed.
#[test]
fn a_table_from_another_database_is_refused_at_the_first_read() {
    let fs = MemFs::new();
    twins(&fs);
    let ta = names(&fs, "/a", ".sst");
    let tb = names(&fs, "/b", ".sst");
    assert_eq!(ta, tb, "the twins' tables have the same names");
    let target = PathBuf::from("/a").join(&ta[0]);
    copy(&fs, &PathBuf::from("/b").join(&tb[0]), &target);
    let db = Db::open(Path::new("/a"), opts(&fs)).expect("open");
    let e = db.get(&key(7)).expect_err("a read of the foreign table");
    assert_corruption_naming(&e, &target, "another database");
    let e = db
        .iter()
        .collect::<Result<Vec<_>, _>>()
        .expect_err("a scan of the foreign table");
    assert_corruption_naming(&e, &target, "another database");
    let report = db.check().expect("check");
    assert!(!report.is_ok());
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains("another database")),
        "{:?}",
        report.problems
    );
}

/// A table copied over another table of the same database: its properties
/// name the number it was written as.
#[test]
fn a_renumbered_table_is_refused_at_the_first_read() {
    let fs = MemFs::new();
    let db = Db::open(Path::new("/db"), opts(&fs)).expect("open");
    for round in 0..2u8 {
        for i in 0..500 {
            db.put(&key(i), &[b'a' + round; 20]).expect("put");
        }
        db.flush().expect("flush");
    }
    db.close().expect("close");
    let tables = names(&fs, "/db", ".sst");
    assert_eq!(tables.len(), 2, "{tables:?}");
    let target = PathBuf::from("/db").join(&tables[1]);
    copy(&fs, &PathBuf::from("/db").join(&tables[0]), &target);
    let db = Db::open(Path::new("/db"), opts(&fs)).expect("open");
    let e = db.get(&key(3)).expect_err("a read of the renumbered table");
    assert_corruption_naming(&e, &target, "written as number");
}

/// A table whose listing in the manifest does not match it (here: another
/// table's entries, written with this table's identity and number, put in
/// its place) is refused by what the manifest knows of it.
#[test]
fn a_table_unlike_its_listing_is_refused() {
    let fs = MemFs::new();
    let db = Db::open(Path::new("/db"), opts(&fs)).expect("open");
    for i in 0..500 {
        db.put(&key(i), b"first").expect("put");
    }
    db.flush().expect("flush");
    for i in 0..300 {
        db.put(&key(i), b"second, longer").expect("put");
    }
    db.flush().expect("flush");
    db.close().expect("close");
    let tables = names(&fs, "/db", ".sst");
    let (older, newer) = (
        PathBuf::from("/db").join(&tables[0]),
        PathBuf::from("/db").join(&tables[1]),
    );
    let origin = properties(&fs, &newer);
    rewrite_table(&fs, &older, &newer, (origin.identity, origin.file_number));
    let db = Db::open(Path::new("/db"), opts(&fs)).expect("open");
    let e = db.get(&key(1)).expect_err("a read of the swapped table");
    assert_corruption_naming(&e, &newer, "the manifest lists");
}

/// The properties of the table at `path`.
fn properties(fs: &MemFs, path: &Path) -> Properties {
    let file = fs.open(path).expect("open table");
    let table =
        Table::open(file, path.to_path_buf(), 0, Arc::new(BlockCache::new(0))).expect("table");
    *table.properties()
}

/// Writes the entries of table `from` to `to`, naming `origin` (identity,
/// file number) in its properties.
fn rewrite_table(fs: &MemFs, from: &Path, to: &Path, origin: (u128, u64)) {
    let file = fs.open(from).expect("open table");
    let table = Arc::new(
        Table::open(file, from.to_path_buf(), 0, Arc::new(BlockCache::new(0))).expect("table"),
    );
    let mut entries = Vec::new();
    let mut it = table.iter();
    use lamina::iter::InternalIterator;
    it.seek_to_first();
    while it.valid() {
        entries.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    drop(it);
    drop(table);
    let out = fs.create(to).expect("create");
    let mut b = TableBuilder::new(out, to.to_path_buf(), TableOptions::default());
    b.set_origin(origin.0, origin.1);
    for (k, v) in &entries {
        b.add(k, v).expect("add");
    }
    b.finish().expect("finish");
}

/// A table that names no database (identity 0) and was not written by a
/// table writer is refused at the first read, as one copied in from
/// elsewhere.
#[test]
fn a_table_naming_no_database_is_refused_at_the_first_read() {
    let fs = MemFs::new();
    let db = Db::open(Path::new("/db"), opts(&fs)).expect("open");
    for i in 0..500 {
        db.put(&key(i), b"in a table").expect("put");
    }
    db.flush().expect("flush");
    db.close().expect("close");
    let tables = names(&fs, "/db", ".sst");
    let path = PathBuf::from("/db").join(&tables[0]);
    let tmp = PathBuf::from("/db").join("table.tmp");
    rewrite_table(&fs, &path, &tmp, (0, 0));
    fs.rename(&tmp, &path).expect("rename");
    let db = Db::open(Path::new("/db"), opts(&fs)).expect("open");
    let e = db.get(&key(1)).expect_err("a read of the table");
    assert_corruption_naming(&e, &path, "names no database (identity 0)");
}

/// Rewrites the manifest of `dir` as a pre-release build wrote it before
/// the identity existed: without tags 10 (identity) and 11 (WAL segment
/// started).
fn drop_identity_from_manifest(fs: &MemFs, dir: &str) -> PathBuf {
    let current = fs
        .read_all(&PathBuf::from(dir).join("CURRENT"))
        .expect("CURRENT");
    let manifest = PathBuf::from(dir).join(String::from_utf8(current).expect("utf8").trim_end());
    let mut r = LogReader::open(fs, &manifest, MANIFEST_MAGIC).expect("read manifest");
    let mut edits = Vec::new();
    while let Some(rec) = r.next_record().expect("record") {
        let mut e = VersionEdit::decode(&rec).expect("edit");
        e.identity = None;
        e.wals_started.clear();
        edits.push(e.encode());
    }
    let mut w = LogWriter::create(fs, &manifest, MANIFEST_MAGIC).expect("rewrite manifest");
    for e in &edits {
        w.add_record(e);
    }
    w.sync().expect("sync");
    fs.sync_dir(Path::new(dir)).expect("sync dir");
    manifest
}

/// A database written before the identity existed — by a pre-release
/// build, whose manifest names no database and whose WAL segments have the
/// 16-byte version-1 header — is refused read-only and read-write, in
/// words naming the file and the layout.
#[test]
fn a_database_from_before_the_identity_is_refused() {
    let fs = MemFs::new();
    let db = Db::open(Path::new("/db"), opts(&fs)).expect("open");
    for i in 0..1000 {
        db.put(&key(i), b"in a table").expect("put");
    }
    db.flush().expect("flush");
    for i in 1000..1100 {
        db.put(&key(i), b"in the WAL").expect("put");
    }
    db.sync().expect("sync");
    let fs = fs.crash_clone();
    drop(db);
    // The live WAL segment (the newest: an older one is kept for reuse)
    // alone: a version-1 header.
    let wal = PathBuf::from("/db").join(names(&fs, "/db", ".wal").last().expect("a WAL"));
    let mut r = LogReader::open(&fs, &wal, WAL_MAGIC).expect("read WAL");
    let mut records = Vec::new();
    while let Some(rec) = r.next_record().expect("record") {
        records.push(rec);
    }
    let mut w = LogWriter::create(&fs, &wal, WAL_MAGIC).expect("rewrite WAL");
    for rec in &records {
        w.add_record(rec);
    }
    w.sync().expect("sync");
    assert_eq!(
        &fs.read_all(&wal).expect("read")[8..12],
        &1u32.to_le_bytes()
    );
    let ro = Options {
        read_only: true,
        ..opts(&fs)
    };
    let words = "written by a pre-release build of lamina (WAL header version 1); \
                 this build reads format 1 only";
    for o in [ro.clone(), opts(&fs)] {
        let e = Db::open(Path::new("/db"), o).expect_err("open");
        assert_corruption_naming(&e, &wal, words);
        assert!(matches!(e, Error::Corruption { offset: 0, .. }), "{e}");
    }
    // And its manifest: no identity.
    let manifest = drop_identity_from_manifest(&fs, "/db");
    let words = "written by a pre-release build of lamina (a manifest without a database \
                 identity); this build reads format 1 only";
    for o in [ro, opts(&fs)] {
        let e = Db::open(Path::new("/db"), o).expect_err("open");
        assert_corruption_naming(&e, &manifest, words);
        assert!(matches!(e, Error::Corruption { offset: 0, .. }), "{e}");
    }
}
