//! `get_many` returns what a loop of `get` returns, in the order of the keys
//! asked: duplicates, missing keys, deleted keys and merge operands, values
//! in blob files, keyspaces, snapshots taken before later writes, entries
//! in the memtable, in level 0 and at the bottom of the tree, and an empty
//! list; keys too long are refused as `get` refuses them.

use lamina::{Db, Error, Keyspace, Options, Snapshot};

/// Values at least this long go to blob files.
const BLOB_THRESHOLD: usize = 512;

fn options() -> Options {
    Options {
        memtable_size: 64 << 10,
        block_size: 512,
        blob_threshold: BLOB_THRESHOLD,
        ..Options::default()
    }
}

/// Where the entries are when they are read.
#[derive(Debug, Clone, Copy)]
enum Place {
    Memtable,
    Level0,
    Bottom,
}

fn settle(db: &Db, place: Place) {
    match place {
        Place::Memtable => {}
        Place::Level0 => db.flush().expect("flush"),
        Place::Bottom => db.compact().expect("compact"),
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

/// The value `key(i)` is given in round `round`; every seventh is long
/// enough to go to a blob file.
fn value(i: u32, round: u32) -> Vec<u8> {
    let len = if i.is_multiple_of(7) {
        BLOB_THRESHOLD * 3
    } else {
        20
    };
    let mut v = format!("v{round}-{i}-").into_bytes();
    v.resize(len, b'0' + (i % 10) as u8);
    v
}

/// Keys 0..n written, every fifth then deleted, every eleventh with two
/// merge operands on top (the default operator adds 64-bit counters, so
/// those hold counters only).
fn fill(db: &Db, n: u32, round: u32) {
    for i in 0..n {
        if i.is_multiple_of(11) {
            db.put(&key(i), &u64::from(round).to_le_bytes())
                .expect("put");
            db.merge(&key(i), &1u64.to_le_bytes()).expect("merge");
            db.merge(&key(i), &2u64.to_le_bytes()).expect("merge");
        } else {
            db.put(&key(i), &value(i, round)).expect("put");
        }
    }
    for i in (0..n).step_by(5) {
        db.delete(&key(i)).expect("delete");
    }
}

/// Keys to ask for: out of order, present and missing (deleted, past the
/// end, before the first), some more than once.
fn asked(n: u32) -> Vec<Vec<u8>> {
    let mut keys: Vec<Vec<u8>> = (0..n + 20).rev().step_by(3).map(key).collect();
    keys.extend((0..n).step_by(4).map(key));
    keys.extend([7, 10, 11].map(key));
    keys.push(key(1));
    keys.push(key(1));
    keys.push(b"".to_vec());
    keys.push(b"a".to_vec());
    keys.push(b"zzz".to_vec());
    keys
}

fn loop_of_get(
    get: impl Fn(&[u8]) -> lamina::Result<Option<Vec<u8>>>,
    keys: &[Vec<u8>],
) -> Vec<Option<Vec<u8>>> {
    keys.iter().map(|k| get(k).expect("get")).collect()
}

fn same_as_db(db: &Db, keys: &[Vec<u8>], place: Place) {
    let many = db.get_many(keys).expect("get_many");
    assert_eq!(many, loop_of_get(|k| db.get(k), keys), "{place:?}");
    assert_eq!(many.len(), keys.len());
}

#[test]
fn equals_a_loop_of_get_wherever_the_entries_are() {
    for place in [Place::Memtable, Place::Level0, Place::Bottom] {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = Db::open(dir.path().join("db"), options()).expect("open");
        fill(&db, 600, 1);
        settle(&db, place);
        if !matches!(place, Place::Memtable) {
            assert!(db.stats().blob_files > 0, "{place:?}: values in blob files");
        }
        let keys = asked(600);
        same_as_db(&db, &keys, place);
        let many = db.get_many(&keys).expect("get_many");
        // The cases are all there: found, missing, a blob value, a counter.
        assert!(many.iter().any(Option::is_none), "{place:?}");
        let at = |i: u32| {
            let k = key(i);
            let p = keys.iter().position(|x| *x == k).expect("asked");
            many.get(p).cloned().flatten()
        };
        assert_eq!(
            at(7),
            Some(value(7, 1)),
            "{place:?}: a value in a blob file"
        );
        assert_eq!(
            at(11),
            Some(4u64.to_le_bytes().to_vec()),
            "{place:?}: merged"
        );
        assert_eq!(at(10), None, "{place:?}: deleted");
    }
}

#[test]
fn equals_a_loop_of_get_with_entries_spread_over_every_place() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path().join("db"), options()).expect("open");
    fill(&db, 1500, 1);
    db.compact().expect("compact");
    fill(&db, 900, 2); // newer versions of some keys in level 0
    db.flush().expect("flush");
    for i in (0..1500).step_by(13) {
        db.put(&key(i), &value(i, 3)).expect("put"); // and in the memtable
    }
    same_as_db(&db, &asked(1500), Place::Memtable);
}

#[test]
fn an_empty_list_gives_an_empty_list() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path().join("db"), options()).expect("open");
    db.put(b"a", b"1").expect("put");
    let none: &[&[u8]] = &[];
    assert_eq!(
        db.get_many(none).expect("get_many"),
        Vec::<Option<Vec<u8>>>::new()
    );
    assert!(db.snapshot().get_many(none).expect("get_many").is_empty());
    let ks = db.keyspace("k").expect("keyspace");
    assert!(ks.get_many(none).expect("get_many").is_empty());
}

#[test]
fn keys_take_any_byte_slice_type() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path().join("db"), options()).expect("open");
    db.put(b"a", b"1").expect("put");
    let one = Some(b"1".to_vec());
    assert_eq!(
        db.get_many(&["a", "b"]).expect("str"),
        vec![one.clone(), None]
    );
    assert_eq!(db.get_many(&[b"a"]).expect("arrays"), vec![one.clone()]);
    assert_eq!(db.get_many(&[b"a".to_vec()]).expect("vecs"), vec![one]);
}

#[test]
fn keyspaces_are_apart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path().join("db"), options()).expect("open");
    let a: Keyspace = db.keyspace("a").expect("keyspace");
    let b: Keyspace = db.keyspace("b").expect("keyspace");
    for i in 0..300u32 {
        db.put(&key(i), b"default").expect("put");
        if i.is_multiple_of(2) {
            a.put(&key(i), &value(i, 10)).expect("put");
        }
        if i.is_multiple_of(3) {
            b.put(&key(i), &value(i, 20)).expect("put");
        }
    }
    db.flush().expect("flush");
    b.delete(&key(3)).expect("delete");
    let keys = asked(300);
    assert_eq!(
        a.get_many(&keys).expect("a"),
        loop_of_get(|k| a.get(k), &keys)
    );
    assert_eq!(
        b.get_many(&keys).expect("b"),
        loop_of_get(|k| b.get(k), &keys)
    );
    same_as_db(&db, &keys, Place::Level0);
    let from_a = a.get_many(&[key(2), key(3)]).expect("a");
    assert_eq!(from_a, vec![Some(value(2, 10)), None]);
    let from_b = b.get_many(&[key(2), key(3), key(6)]).expect("b");
    assert_eq!(from_b, vec![None, None, Some(value(6, 20))]);
    let snap = db.snapshot();
    a.put(&key(4), b"later").expect("put");
    let then = snap.get_many_in(&a, &keys).expect("snapshot");
    assert_eq!(then, loop_of_get(|k| snap.get_in(&a, k), &keys));
    assert_eq!(
        then.get(keys.iter().position(|k| *k == key(4)).expect("asked")),
        Some(&Some(value(4, 10)))
    );
}

#[test]
fn a_snapshot_reads_at_its_seqno() {
    for place in [Place::Memtable, Place::Level0, Place::Bottom] {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = Db::open(dir.path().join("db"), options()).expect("open");
        fill(&db, 400, 1);
        let snap: Snapshot = db.snapshot();
        let before = loop_of_get(|k| db.get(k), &asked(400));
        fill(&db, 500, 2); // overwrites, deletes again, and new keys
        for i in (1..400).step_by(5) {
            db.delete(&key(i)).expect("delete");
        }
        settle(&db, place);
        let keys = asked(400);
        let then = snap.get_many(&keys).expect("snapshot get_many");
        assert_eq!(then, loop_of_get(|k| snap.get(k), &keys), "{place:?}");
        assert_eq!(
            then, before,
            "{place:?}: the snapshot sees none of the later writes"
        );
        let now = db.get_many(&keys).expect("get_many");
        assert_ne!(now, then, "{place:?}");
        same_as_db(&db, &keys, place);
    }
}

#[test]
fn a_transaction_sees_its_own_writes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path().join("db"), options()).expect("open");
    fill(&db, 100, 1);
    let mut tx = db.transaction();
    tx.put(&key(1), b"mine").expect("put");
    tx.delete(&key(2)).expect("delete");
    let keys = asked(100);
    let many = tx.get_many(&keys).expect("get_many");
    assert_eq!(many, loop_of_get(|k| tx.get(k), &keys));
    assert_eq!(
        tx.get_many(&[key(1), key(2)]).expect("get_many"),
        vec![Some(b"mine".to_vec()), None]
    );
}

#[test]
fn errors_are_those_of_get() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path().join("db"), options()).expect("open");
    db.put(b"a", b"1").expect("put");
    let long = vec![b'x'; lamina::MAX_KEY_LEN + 1];
    let one = db.get(&long).expect_err("get of a key too long");
    let many = db
        .get_many(&[b"a".to_vec(), long.clone()])
        .expect_err("get_many with a key too long");
    assert!(matches!(many, Error::InvalidArgument(_)), "{many}");
    assert_eq!(many.to_string(), one.to_string());
    let ks = db.keyspace("gone").expect("keyspace");
    db.drop_keyspace("gone").expect("drop");
    let dropped = ks.get_many(&[b"a"]).expect_err("a dropped keyspace");
    assert!(matches!(dropped, Error::KeyspaceDropped(_)), "{dropped}");
    db.close().expect("close");
    let closed = db.get_many(&[b"a"]).expect_err("closed");
    assert!(matches!(closed, Error::Closed), "{closed}");
}
