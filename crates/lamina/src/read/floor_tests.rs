//! Tests of the floors' bookkeeping without a database: what writers,
//! installs and ingests do to a slot.

use super::*;

fn tk(ks: KeyspaceId, k: &[u8]) -> Vec<u8> {
    key::tree_key(ks, k)
}

/// What a writer shows the floors for each key of its batch.
fn written(f: &Floors, ops: &[(KeyspaceId, &[u8], Kind)]) {
    if f.watched() {
        for &(ks, k, kind) in ops {
            f.wrote(ks, k, kind);
        }
    }
}

fn put(f: &Floors, ks: KeyspaceId, k: &[u8]) {
    written(f, &[(ks, k, Kind::Put)]);
}

/// Installs `key` of `ks` at `seqno` as an install with nothing recorded would.
fn install(f: &Floors, ks: KeyspaceId, key: &[u8], seqno: SeqNo) {
    f.mark(ks);
    f.unmark(ks, Some((tk(ks, key), seqno)), f.ingests_ended());
}

#[test]
fn a_key_whose_first_bytes_are_greater_is_greater() {
    let keys: Vec<&[u8]> = vec![
        b"",
        b"\0",
        b"\0\0",
        b"a",
        b"a\0",
        b"ab",
        b"abcdefg",
        b"abcdefg\0",
        b"abcdefgh",
        b"abcdefh",
        b"b",
        b"\xff\xff\xff\xff\xff\xff\xff\xff",
    ];
    for a in &keys {
        for b in &keys {
            if head(a) > head(b) {
                assert!(a > b, "{a:?} {b:?}");
            }
            let ks = 7;
            assert_eq!(cmp_tree(ks, a, &tk(ks, b)), a.cmp(b));
            assert_eq!(cmp_tree(ks, a, &tk(ks + 1, b)), Order::Less);
            assert_eq!(cmp_tree(ks + 1, a, &tk(ks, b)), Order::Greater);
        }
    }
}

#[test]
fn a_reader_older_than_the_floor_or_of_another_keyspace_gets_none() {
    let f = Floors::default();
    install(&f, 3, b"m", 10);
    assert_eq!(f.floor_at(3, 10), Some(tk(3, b"m")));
    assert_eq!(f.floor_at(3, 9), None);
    assert_eq!(f.floor_at(3 + SLOTS as u32, 10), None);
    assert_eq!(f.floor_at(4, 10), None);
}

#[test]
fn a_put_or_merge_below_lowers_the_floor_and_a_delete_or_a_put_above_does_not() {
    let f = Floors::default();
    install(&f, 1, b"queue:0500", 10);
    put(&f, 1, b"queue:0900");
    assert_eq!(f.floor_at(1, 10), Some(tk(1, b"queue:0500")));
    put(&f, 1, b"queue:0500");
    assert_eq!(f.floor_at(1, 10), Some(tk(1, b"queue:0500")));
    written(&f, &[(1, b"queue:0100", Kind::Delete)]);
    assert_eq!(f.floor_at(1, 10), Some(tk(1, b"queue:0500")));
    written(
        &f,
        &[
            (1, b"queue:0300", Kind::Merge),
            (1, b"queue:0100", Kind::Delete),
        ],
    );
    assert_eq!(f.floor_at(1, 10), Some(tk(1, b"queue:0300")));
    // Another keyspace's keys, below or above, leave it alone.
    put(&f, 0, b"a");
    put(&f, 1 + SLOTS as u32, b"a");
    assert_eq!(f.floor_at(1, 10), Some(tk(1, b"queue:0300")));
    // A put of the keyspace's first key leaves nothing below: no floor.
    put(&f, 1, b"");
    assert_eq!(f.floor_at(1, 10), None);
    assert_eq!(f.busy.load(Ordering::Relaxed), 0);
}

#[test]
fn a_floor_at_the_end_of_its_keyspace_is_lowered_by_any_put() {
    let f = Floors::default();
    f.mark(2);
    f.unmark(2, Some((tk(3, b""), 5)), f.ingests_ended());
    assert_eq!(f.floor_at(2, 5), Some(tk(3, b"")));
    put(&f, 2, b"\xff\xff\xff\xff\xff\xff\xff\xff");
    assert_eq!(
        f.floor_at(2, 5),
        Some(tk(2, b"\xff\xff\xff\xff\xff\xff\xff\xff"))
    );
}

#[test]
fn a_key_written_while_an_install_runs_lowers_what_it_installs() {
    let f = Floors::default();
    f.mark(0);
    put(&f, 0, b"c");
    put(&f, 0, b"x");
    f.unmark(0, Some((tk(0, b"k"), 4)), f.ingests_ended());
    assert_eq!(f.floor_at(0, 4), Some(tk(0, b"c")));
    // Recorded keys are forgotten once no install runs.
    f.mark(0);
    f.unmark(0, Some((tk(0, b"k"), 5)), f.ingests_ended());
    assert_eq!(f.floor_at(0, 5), Some(tk(0, b"k")));
}

#[test]
fn no_floor_is_installed_during_an_ingest_nor_after_one_the_walk_began_before() {
    let f = Floors::default();
    install(&f, 0, b"p", 3);
    let before = f.ingests_ended();
    let guard = f.ingest_begins([tk(0, b"f").as_slice(), tk(9, b"a").as_slice()]);
    assert_eq!(f.floor_at(0, 3), Some(tk(0, b"f")));
    f.mark(0);
    f.unmark(0, Some((tk(0, b"z"), 6)), before);
    assert_eq!(f.floor_at(0, 6), Some(tk(0, b"f")));
    drop(guard);
    f.mark(0);
    f.unmark(0, Some((tk(0, b"z"), 6)), before);
    assert_eq!(f.floor_at(0, 6), Some(tk(0, b"f")));
    f.mark(0);
    f.unmark(0, Some((tk(0, b"z"), 6)), f.ingests_ended());
    assert_eq!(f.floor_at(0, 6), Some(tk(0, b"z")));
}

#[test]
fn a_better_floor_is_kept_and_a_dropped_keyspace_forgotten() {
    let f = Floors::default();
    install(&f, 0, b"p", 3);
    install(&f, 0, b"k", 4);
    assert_eq!(f.floor_at(0, 4), Some(tk(0, b"p")));
    f.forget(0);
    assert_eq!(f.floor_at(0, 4), None);
    assert_eq!(f.busy.load(Ordering::Relaxed), 0);
}
