//! A handle used in a process forked after the open returns
//! `Error::WrongProcess`, and the child never touches the parent's files.
#![cfg(unix)]

use lamina::{Db, Error, Options};

fn key(who: &str, i: u32) -> Vec<u8> {
    format!("{who}{i:05}").into_bytes()
}

/// What the child does with its parent's handle; its exit code says what
/// went wrong (0: every use was refused with `WrongProcess`).
fn in_child(db: Db) -> i32 {
    for i in 0..5000 {
        match db.put(&key("child", i), b"from the child") {
            Err(Error::WrongProcess) => {}
            Ok(()) => return 10,
            Err(_) => return 11,
        }
    }
    if !matches!(db.get(&key("parent", 0)), Err(Error::WrongProcess)) {
        return 12;
    }
    if !matches!(db.sync(), Err(Error::WrongProcess)) {
        return 13;
    }
    if !matches!(db.close(), Err(Error::WrongProcess)) {
        return 14;
    }
    // Dropping the last handle in the child must not flush, sync or join.
    drop(db);
    0
}

/// Before the fix: a process opened a database, forked, and both wrote 5,000
/// keys through the same handle; on reopen only 348 of the parent's
/// acknowledged writes were there and `check` said OK — or the database no
/// longer opened ("non-zero bytes in a block trailer" in its WAL).
#[test]
fn a_forked_child_cannot_use_its_parents_handle() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("db");
    let db = Db::open(&path, Options::default()).expect("open");
    for i in 0..100 {
        db.put(&key("parent", i), b"before the fork").expect("put");
    }
    // SAFETY: the child uses only the handle (whose checks come before any
    // lock) and ends with `_exit`, running none of the parent's destructors.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let code = in_child(db);
        // SAFETY: ends the child at once.
        unsafe { libc::_exit(code) };
    }
    for i in 100..5000 {
        db.put(&key("parent", i), b"after the fork").expect("put");
    }
    let mut status = 0;
    // SAFETY: waits for the child just forked.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert!(libc::WIFEXITED(status), "the child did not exit");
    assert_eq!(
        libc::WEXITSTATUS(status),
        0,
        "the child's use was not refused"
    );
    db.close().expect("close");

    let db = Db::open(&path, Options::default()).expect("reopen");
    let keys: Vec<Vec<u8>> = db.iter().map(|e| e.expect("entry").0).collect();
    let expected: Vec<Vec<u8>> = (0..5000).map(|i| key("parent", i)).collect();
    assert_eq!(
        keys, expected,
        "every write of the parent, none of the child"
    );
    assert!(db.check().expect("check").is_ok());
}
