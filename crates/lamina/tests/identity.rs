//! Every file knows its database: a WAL segment or a table copied in from
//! another database, renamed to another number, or missing, is
//! `Error::Corruption` naming the file at open or at the first read — never
//! a silent replay, a silent loss or a wrong answer. A database written
//! before the identity existed still opens and reads.

#![allow(clippy::indexing_slicing)]

use lamina::cache::BlockCache;
use lamina::fs::{FileSystem, MemFs};
use lamina::manifest::VersionEdit;
use lamina::table::{Table, TableBuilder, TableOptions};
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

/// A table whose listing in the manifest does not match it (here: a table
/// written before format version 2, which names no database or number, put
/// in place of another) is refused by what the manifest knows of it.
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
    rewrite_table_without_origin(&fs, &older, &newer);
    let db = Db::open(Path::new("/db"), opts(&fs)).expect("open");
    let e = db.get(&key(1)).expect_err("a read of the swapped table");
    assert_corruption_naming(&e, &newer, "the manifest lists");
}

/// Writes the entries of table `from` to `to` as a table written before
/// format version 2 would hold them: no identity, no file number.
fn rewrite_table_without_origin(fs: &MemFs, from: &Path, to: &Path) {
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
    for (k, v) in &entries {
        b.add(k, v).expect("add");
    }
    b.finish().expect("finish");
}

/// Rewrites `dir` as the code before format version 2 wrote it: WAL
/// segments with a version-1 header, tables without identity or number,
/// a manifest without tags 10 and 11.
fn make_old(fs: &MemFs, dir: &str) {
    for name in names(fs, dir, ".wal") {
        let path = PathBuf::from(dir).join(&name);
        let mut r = LogReader::open(fs, &path, WAL_MAGIC).expect("read WAL");
        let mut records = Vec::new();
        while let Some(rec) = r.next_record().expect("record") {
            records.push(rec);
        }
        let mut w = LogWriter::create(fs, &path, WAL_MAGIC).expect("rewrite WAL");
        for rec in &records {
            w.add_record(rec);
        }
        w.sync().expect("sync");
        let bytes = fs.read_all(&path).expect("read");
        assert_eq!(&bytes[8..12], &1u32.to_le_bytes(), "a version-1 header");
    }
    for name in names(fs, dir, ".sst") {
        let path = PathBuf::from(dir).join(&name);
        let tmp = PathBuf::from(dir).join("old.table");
        rewrite_table_without_origin(fs, &path, &tmp);
        fs.rename(&tmp, &path).expect("rename");
    }
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
}

/// A database written before format version 2 (version-1 WAL header, tables
/// without identity and number, a manifest without identity) opens
/// read-only and read-write, reads every key, gets an identity, and keeps
/// working.
#[test]
fn a_database_from_before_the_identity_opens_and_reads() {
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
    make_old(&fs, "/db");
    let ro = Options {
        read_only: true,
        ..opts(&fs)
    };
    for o in [ro, opts(&fs), opts(&fs)] {
        let db = Db::open(Path::new("/db"), o).expect("open an old database");
        let all: Vec<(Vec<u8>, Vec<u8>)> = db.iter().collect::<Result<_, _>>().expect("scan");
        assert_eq!(all.len(), 1100);
        assert_eq!(db.get(&key(5)).expect("get"), Some(b"in a table".to_vec()));
        assert_eq!(
            db.get(&key(1050)).expect("get"),
            Some(b"in the WAL".to_vec())
        );
        let report = db.check().expect("check");
        assert!(report.is_ok(), "{:?}", report.problems);
        db.close().expect("close");
    }
    let db = Db::open(Path::new("/db"), opts(&fs)).expect("open");
    db.put(b"new", b"after").expect("put");
    db.flush().expect("flush");
    db.close().expect("close");
    let db = Db::open(Path::new("/db"), opts(&fs)).expect("open");
    assert_eq!(db.get(b"new").expect("get"), Some(b"after".to_vec()));
    assert_eq!(db.get(&key(5)).expect("get"), Some(b"in a table".to_vec()));
}
