//! A merge operand that cannot be folded (an `add` onto a value that is not
//! a counter) is a problem of that key alone: reads of it fail naming it,
//! iteration goes on past it, listing keys never fails for it, it can be
//! deleted, and `check` lists it.

#![allow(clippy::indexing_slicing)]

use lamina::fs::MemFs;
use lamina::{Db, Error, Options};
use std::path::Path;
use std::sync::Arc;

fn open() -> Db {
    Db::open(
        Path::new("/db"),
        Options {
            fs: Arc::new(MemFs::new()),
            ..Options::default()
        },
    )
    .expect("open")
}

fn one() -> [u8; 8] {
    1u64.to_le_bytes()
}

fn merge_message(e: Error) -> String {
    match e {
        Error::Merge(_) => e.to_string(),
        other => panic!("expected a merge error, got {other}"),
    }
}

/// `a`, `k` (the value "hello" in a table, then an `add` operand) and `z`.
fn poisoned_key() -> Db {
    let db = open();
    db.put(b"a", b"1").expect("put");
    db.put(b"k", b"hello").expect("put");
    db.put(b"z", b"26").expect("put");
    db.flush().expect("flush");
    // The stored value is in a table, not the memtable: the operand is taken.
    db.merge(b"k", &one())
        .expect("merge onto a value in a table");
    db
}

/// Before the fix: after `d[b'k'] = b'hello'; d.increment(b'k', 1)`,
/// `len(d)`, `keys()`, iteration and even `del d[b'k']` raised ValueError;
/// `lamina count` and `dump` exited 1 with `merge failed for key: add: ...`
/// without naming the key; `check` said OK.
#[test]
fn one_unfoldable_key_breaks_nothing_else() {
    let db = poisoned_key();
    let m = merge_message(db.get(b"k").expect_err("get"));
    assert_eq!(
        m,
        "merge failed for key \"k\" in the default keyspace: the stored value is 5 bytes long, \
         not an 8-byte counter (the add operator counts in 64-bit little-endian integers)"
    );
    assert_eq!(db.get(b"a").expect("get"), Some(b"1".to_vec()));

    // Iteration reports the key and goes on, in both directions.
    let fwd: Vec<Result<Vec<u8>, String>> = db
        .iter()
        .map(|r| r.map(|(k, _)| k).map_err(|e| e.to_string()))
        .collect();
    assert_eq!(fwd.len(), 3, "{fwd:?}");
    assert_eq!(fwd[0], Ok(b"a".to_vec()));
    assert!(fwd[1].as_ref().is_err_and(|e| e.contains("key \"k\"")));
    assert_eq!(fwd[2], Ok(b"z".to_vec()));
    let back: Vec<bool> = db.iter().rev().map(|r| r.is_ok()).collect();
    assert_eq!(back, vec![true, false, true]);

    // Listing keys folds nothing, so it never fails for this reason.
    let keys: Vec<Vec<u8>> = db
        .iter()
        .keys_only()
        .map(|r| r.expect("keys-only entry").0)
        .collect();
    assert_eq!(keys, vec![b"a".to_vec(), b"k".to_vec(), b"z".to_vec()]);
    assert_eq!(db.iter().keys_only().rev().count(), 3);
    assert!(db.contains_key(b"k").expect("contains"));

    // check names it.
    let report = db.check().expect("check");
    assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
    assert!(report.problems[0].contains("key \"k\" in the default keyspace"));

    // Compaction keeps the entries as they are; the key still reads as before.
    db.compact().expect("compact");
    assert!(db.get(b"k").is_err());
    assert_eq!(db.get(b"z").expect("get"), Some(b"26".to_vec()));

    // Deleting it works and ends the problem.
    db.delete(b"k").expect("delete");
    assert_eq!(db.get(b"k").expect("get"), None);
    assert!(db.iter().all(|r| r.is_ok()));
    assert!(db.check().expect("check").is_ok());
}

/// When the stored value is in the memtable, the operand is refused at the
/// call, naming the key, and nothing is written.
#[test]
fn an_add_onto_a_value_in_the_memtable_is_refused_at_the_call() {
    let db = open();
    db.put(b"k", b"hello").expect("put");
    let m = merge_message(db.merge(b"k", &one()).expect_err("merge"));
    assert!(m.contains("key \"k\" in the default keyspace"), "{m}");
    assert_eq!(db.get(b"k").expect("get"), Some(b"hello".to_vec()));
    // A counter, a missing key and a deleted key take operands.
    db.put(b"c", &5u64.to_le_bytes()).expect("put");
    db.merge(b"c", &one()).expect("merge onto a counter");
    db.merge(b"new", &one()).expect("merge onto nothing");
    db.delete(b"k").expect("delete");
    db.merge(b"k", &one()).expect("merge onto a deleted key");
    assert_eq!(
        db.get(b"c").expect("get"),
        Some(6u64.to_le_bytes().to_vec())
    );
    assert_eq!(
        db.get(b"k").expect("get"),
        Some(1u64.to_le_bytes().to_vec())
    );
}

#[test]
fn the_error_names_the_keyspace_and_escapes_the_key() {
    let db = open();
    let ks = db.keyspace("counters").expect("keyspace");
    ks.put(b"user\x00id", b"text").expect("put");
    db.flush().expect("flush");
    ks.merge(b"user\x00id", &one()).expect("merge");
    let m = merge_message(ks.get(b"user\x00id").expect_err("get"));
    assert!(
        m.starts_with("merge failed for key \"user\\x00id\" in keyspace #"),
        "{m}"
    );
    assert_eq!(ks.iter().keys_only().count(), 1);
    let e = ks
        .merge(b"user\x00id", b"short")
        .expect_err("a bad operand");
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
}
