//! Bad input gets a clear error, never a panic.

use lamina::key::{MAX_KEY_LEN, MAX_VALUE_LEN};
use lamina::{Db, Error, Options};

fn db() -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path().join("db"), Options::default()).expect("open");
    (dir, db)
}

/// The empty key is an ordinary key (gdbm and dbm allow it): it sorts first
/// in its keyspace and survives flush and reopen.
#[test]
fn the_empty_key_is_a_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("db");
    let db = Db::open(&path, Options::default()).expect("open");
    assert_eq!(db.get(b"").expect("get"), None);
    db.put(b"", b"nothing").expect("put");
    db.put(b"a", b"1").expect("put");
    let ks = db.keyspace("other").expect("keyspace");
    ks.put(b"", b"other nothing").expect("put in keyspace");
    assert_eq!(db.get(b"").expect("get"), Some(b"nothing".to_vec()));
    db.flush().expect("flush");
    db.close().expect("close");
    let db = Db::open(&path, Options::default()).expect("reopen");
    let keys: Vec<Vec<u8>> = db.iter().map(|e| e.expect("entry").0).collect();
    assert_eq!(keys, vec![b"".to_vec(), b"a".to_vec()]);
    let ks = db.keyspace("other").expect("keyspace");
    assert_eq!(ks.get(b"").expect("get"), Some(b"other nothing".to_vec()));
    db.delete(b"").expect("delete");
    assert_eq!(db.get(b"").expect("get"), None);
    db.merge(b"", &1u64.to_le_bytes()).expect("merge");
}

#[test]
fn keys_at_and_past_the_limit() {
    let (_d, db) = db();
    let at = vec![b'k'; MAX_KEY_LEN];
    db.put(&at, b"v").expect("a key at the limit is accepted");
    assert_eq!(db.get(&at).expect("get"), Some(b"v".to_vec()));
    let past = vec![b'k'; MAX_KEY_LEN + 1];
    let err = db.put(&past, b"v").expect_err("past the limit");
    assert!(err.to_string().contains("limit"), "{err}");
    assert!(matches!(db.get(&past), Err(Error::InvalidArgument(_))));
}

#[test]
fn values_past_the_limit() {
    let (_d, db) = db();
    let big = vec![0u8; MAX_VALUE_LEN + 1];
    let err = db.put(b"k", &big).expect_err("past the limit");
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    drop(big);
    let at = vec![7u8; 1 << 20];
    db.put(b"k", &at).expect("a 1 MiB value");
    db.flush().expect("flush");
    assert_eq!(db.get(b"k").expect("get").map(|v| v.len()), Some(1 << 20));
}

#[test]
fn opening_something_that_is_not_a_database() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("plain-file");
    std::fs::write(&file, b"hello").expect("write");
    match Db::open(&file, Options::default()) {
        Err(Error::NotADatabase { path, reason }) => {
            assert_eq!(path, file);
            assert!(reason.contains("file"), "{reason}");
        }
        other => panic!("expected NotADatabase, got {other:?}"),
    }
    let foreign = dir.path().join("foreign");
    std::fs::create_dir(&foreign).expect("mkdir");
    std::fs::write(foreign.join("notes.txt"), b"x").expect("write");
    let err = Db::open(&foreign, Options::default()).expect_err("foreign directory");
    assert!(matches!(err, Error::NotADatabase { .. }), "{err}");
    assert!(err.to_string().contains("notes.txt"), "{err}");
    let missing = dir.path().join("missing");
    let opts = Options {
        create_if_missing: false,
        ..Options::default()
    };
    assert!(matches!(
        Db::open(&missing, opts),
        Err(Error::NotADatabase { .. })
    ));
    let nested = dir.path().join("no/such/parent");
    let opts = Options {
        create_if_missing: false,
        ..Options::default()
    };
    assert!(Db::open(&nested, opts).is_err());
}

#[test]
fn error_if_exists_and_read_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("db");
    let db = Db::open(&path, Options::default()).expect("open");
    db.put(b"k", b"v").expect("put");
    db.close().expect("close");
    let opts = Options {
        error_if_exists: true,
        ..Options::default()
    };
    assert!(matches!(
        Db::open(&path, opts),
        Err(Error::AlreadyExists(_))
    ));
    let ro = Db::open(
        &path,
        Options {
            read_only: true,
            ..Options::default()
        },
    )
    .expect("read-only open");
    assert_eq!(ro.get(b"k").expect("get"), Some(b"v".to_vec()));
    assert!(matches!(ro.put(b"k", b"w"), Err(Error::ReadOnly)));
    assert!(matches!(ro.delete(b"k"), Err(Error::ReadOnly)));
    // A read-only handle takes no lock, so a writer can open beside it.
    let rw = Db::open(&path, Options::default()).expect("writer beside a reader");
    rw.close().expect("close");
}

#[test]
fn destroy_removes_only_databases() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("db");
    let db = Db::open(&path, Options::default()).expect("open");
    db.put(b"k", b"v").expect("put");
    assert!(matches!(
        Db::destroy(&path, &Options::default()),
        Err(Error::Locked(_))
    ));
    db.close().expect("close");
    Db::destroy(&path, &Options::default()).expect("destroy");
    assert!(!path.exists());
    let foreign = dir.path().join("foreign");
    std::fs::create_dir(&foreign).expect("mkdir");
    std::fs::write(foreign.join("keep.txt"), b"x").expect("write");
    assert!(Db::destroy(&foreign, &Options::default()).is_err());
    assert!(foreign.join("keep.txt").exists());
}

/// The child half of `a_database_locked_by_another_process`: holds the
/// database open until its standard input closes.
fn hold_open(path: &str) {
    let db = Db::open(path, Options::default()).expect("child open");
    println!("open");
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
    db.close().expect("child close");
}

#[test]
fn a_database_locked_by_another_process() {
    use std::io::{BufRead, BufReader};
    if let Ok(path) = std::env::var("LAMINA_HOLD_OPEN") {
        hold_open(&path);
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("db");
    let mut child = std::process::Command::new(std::env::current_exe().expect("exe"))
        .args([
            "--exact",
            "a_database_locked_by_another_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("LAMINA_HOLD_OPEN", &path)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    while !line.contains("open") {
        line.clear();
        assert!(
            out.read_line(&mut line).expect("read") > 0,
            "child exited before opening"
        );
    }
    match Db::open(&path, Options::default()) {
        Err(Error::Locked(p)) => assert_eq!(p, path),
        other => panic!("expected Locked while another process holds it, got {other:?}"),
    }
    let ro = Db::open(
        &path,
        Options {
            read_only: true,
            ..Options::default()
        },
    )
    .expect("read-only open beside it");
    drop(ro);
    drop(child.stdin.take());
    assert!(child.wait().expect("wait").success());
    Db::open(&path, Options::default()).expect("open after the other process closed");
}
