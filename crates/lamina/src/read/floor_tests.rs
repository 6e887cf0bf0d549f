//! Tests of the limits' bookkeeping without a database: what writers,
//! installs and ingests do to a slot's floor and ceiling.

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

/// Installs the floor at `key` of `ks` at `seqno` as an install with
/// nothing recorded would.
fn install(f: &Floors, ks: KeyspaceId, key: &[u8], seqno: SeqNo) {
    install_at(f, End::Front, ks, tk(ks, key), seqno);
}

/// Installs the ceiling that keeps `key` of `ks`, at `seqno`.
fn install_ceiling(f: &Floors, ks: KeyspaceId, key: &[u8], seqno: SeqNo) {
    install_at(f, End::Back, ks, ceiling(ks, key), seqno);
}

fn install_at(f: &Floors, end: End, ks: KeyspaceId, limit: Vec<u8>, seqno: SeqNo) {
    f.mark(end, ks);
    f.unmark(end, ks, Some((limit, seqno)), f.ingests_ended());
}

/// The ceiling that keeps `key` of `ks`: just past its tree key.
fn ceiling(ks: KeyspaceId, key: &[u8]) -> Vec<u8> {
    let mut k = tk(ks, key);
    k.push(0);
    k
}

fn floor_at(f: &Floors, ks: KeyspaceId, seqno: SeqNo) -> Option<Vec<u8>> {
    f.limit_at(End::Front, ks, seqno)
}

fn ceiling_at(f: &Floors, ks: KeyspaceId, seqno: SeqNo) -> Option<Vec<u8>> {
    f.limit_at(End::Back, ks, seqno)
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
    assert_eq!(floor_at(&f, 3, 10), Some(tk(3, b"m")));
    assert_eq!(floor_at(&f, 3, 9), None);
    assert_eq!(floor_at(&f, 3 + SLOTS as u32, 10), None);
    assert_eq!(floor_at(&f, 4, 10), None);
}

#[test]
fn a_put_or_merge_below_lowers_the_floor_and_a_delete_or_a_put_above_does_not() {
    let f = Floors::default();
    install(&f, 1, b"queue:0500", 10);
    put(&f, 1, b"queue:0900");
    assert_eq!(floor_at(&f, 1, 10), Some(tk(1, b"queue:0500")));
    put(&f, 1, b"queue:0500");
    assert_eq!(floor_at(&f, 1, 10), Some(tk(1, b"queue:0500")));
    written(&f, &[(1, b"queue:0100", Kind::Delete)]);
    assert_eq!(floor_at(&f, 1, 10), Some(tk(1, b"queue:0500")));
    written(
        &f,
        &[
            (1, b"queue:0300", Kind::Merge),
            (1, b"queue:0100", Kind::Delete),
        ],
    );
    assert_eq!(floor_at(&f, 1, 10), Some(tk(1, b"queue:0300")));
    // Another keyspace's keys, below or above, leave it alone.
    put(&f, 0, b"a");
    put(&f, 1 + SLOTS as u32, b"a");
    assert_eq!(floor_at(&f, 1, 10), Some(tk(1, b"queue:0300")));
    // A put of the keyspace's first key leaves nothing below: no floor.
    put(&f, 1, b"");
    assert_eq!(floor_at(&f, 1, 10), None);
    assert_eq!(f.busy.load(Ordering::Relaxed), 0);
}

#[test]
fn a_floor_at_the_end_of_its_keyspace_is_lowered_by_any_put() {
    let f = Floors::default();
    f.mark(End::Front, 2);
    f.unmark(End::Front, 2, Some((tk(3, b""), 5)), f.ingests_ended());
    assert_eq!(floor_at(&f, 2, 5), Some(tk(3, b"")));
    put(&f, 2, b"\xff\xff\xff\xff\xff\xff\xff\xff");
    assert_eq!(
        floor_at(&f, 2, 5),
        Some(tk(2, b"\xff\xff\xff\xff\xff\xff\xff\xff"))
    );
}

#[test]
fn a_key_written_while_an_install_runs_lowers_what_it_installs() {
    let f = Floors::default();
    f.mark(End::Front, 0);
    put(&f, 0, b"c");
    put(&f, 0, b"x");
    f.unmark(End::Front, 0, Some((tk(0, b"k"), 4)), f.ingests_ended());
    assert_eq!(floor_at(&f, 0, 4), Some(tk(0, b"c")));
    // Recorded keys are forgotten once no install runs.
    f.mark(End::Front, 0);
    f.unmark(End::Front, 0, Some((tk(0, b"k"), 5)), f.ingests_ended());
    assert_eq!(floor_at(&f, 0, 5), Some(tk(0, b"k")));
}

#[test]
fn no_floor_is_installed_during_an_ingest_nor_after_one_the_walk_began_before() {
    let f = Floors::default();
    install(&f, 0, b"p", 3);
    let before = f.ingests_ended();
    let ranges = [(tk(0, b"f"), tk(0, b"g")), (tk(9, b"a"), tk(9, b"b"))];
    let guard = f.ingest_begins(&ranges);
    assert_eq!(floor_at(&f, 0, 3), Some(tk(0, b"f")));
    f.mark(End::Front, 0);
    f.unmark(End::Front, 0, Some((tk(0, b"z"), 6)), before);
    assert_eq!(floor_at(&f, 0, 6), Some(tk(0, b"f")));
    drop(guard);
    f.mark(End::Front, 0);
    f.unmark(End::Front, 0, Some((tk(0, b"z"), 6)), before);
    assert_eq!(floor_at(&f, 0, 6), Some(tk(0, b"f")));
    f.mark(End::Front, 0);
    f.unmark(End::Front, 0, Some((tk(0, b"z"), 6)), f.ingests_ended());
    assert_eq!(floor_at(&f, 0, 6), Some(tk(0, b"z")));
}

#[test]
fn a_better_floor_is_kept_and_a_dropped_keyspace_forgotten() {
    let f = Floors::default();
    install(&f, 0, b"p", 3);
    install(&f, 0, b"k", 4);
    assert_eq!(floor_at(&f, 0, 4), Some(tk(0, b"p")));
    f.forget(0);
    assert_eq!(floor_at(&f, 0, 4), None);
    assert_eq!(f.busy.load(Ordering::Relaxed), 0);
}

#[test]
fn a_put_or_merge_at_or_above_raises_the_ceiling_and_a_delete_or_a_put_below_does_not() {
    let f = Floors::default();
    install_ceiling(&f, 1, b"queue:0500", 10);
    assert_eq!(ceiling_at(&f, 1, 10), Some(ceiling(1, b"queue:0500")));
    assert_eq!(ceiling_at(&f, 1, 9), None);
    put(&f, 1, b"queue:0100");
    put(&f, 1, b"queue:0500");
    assert_eq!(ceiling_at(&f, 1, 10), Some(ceiling(1, b"queue:0500")));
    written(&f, &[(1, b"queue:0900", Kind::Delete)]);
    assert_eq!(ceiling_at(&f, 1, 10), Some(ceiling(1, b"queue:0500")));
    // A key that only extends the kept one is above it.
    put(&f, 1, b"queue:0500\0");
    assert_eq!(ceiling_at(&f, 1, 10), Some(ceiling(1, b"queue:0500\0")));
    written(
        &f,
        &[
            (1, b"queue:0700", Kind::Merge),
            (1, b"queue:0900", Kind::Delete),
        ],
    );
    assert_eq!(ceiling_at(&f, 1, 10), Some(ceiling(1, b"queue:0700")));
    // The floor of the same slot is untouched, and another keyspace's keys
    // leave the ceiling alone.
    assert_eq!(floor_at(&f, 1, 10), None);
    put(&f, 2, b"a");
    put(&f, 1 + SLOTS as u32, b"zzz");
    assert_eq!(ceiling_at(&f, 1, 10), Some(ceiling(1, b"queue:0700")));
    f.forget(1);
    assert_eq!(ceiling_at(&f, 1, 10), None);
    assert_eq!(f.busy.load(Ordering::Relaxed), 0);
}

#[test]
fn a_ceiling_at_its_keyspace_start_is_raised_by_any_put_and_one_at_its_end_says_nothing() {
    let f = Floors::default();
    // A keyspace found empty from its end.
    install_at(&f, End::Back, 2, tk(2, b""), 5);
    assert_eq!(ceiling_at(&f, 2, 5), Some(tk(2, b"")));
    put(&f, 2, b"");
    assert_eq!(ceiling_at(&f, 2, 5), Some(ceiling(2, b"")));
    // The next keyspace's start is the keyspace's end: nothing said.
    install_at(&f, End::Back, 3, tk(4, b""), 6);
    assert_eq!(ceiling_at(&f, 3, 6), None);
    // The last keyspace has no end to be at.
    install_ceiling(&f, u32::MAX, b"\xff", 7);
    assert_eq!(
        ceiling_at(&f, u32::MAX, 7),
        Some(ceiling(u32::MAX, b"\xff"))
    );
}

#[test]
fn keys_written_while_a_ceiling_is_installed_raise_it_and_an_ingest_moves_it_up() {
    let f = Floors::default();
    f.mark(End::Back, 0);
    put(&f, 0, b"x");
    put(&f, 0, b"c");
    f.unmark(End::Back, 0, Some((ceiling(0, b"k"), 4)), f.ingests_ended());
    assert_eq!(ceiling_at(&f, 0, 4), Some(ceiling(0, b"x")));
    // A better ceiling is kept.
    install_ceiling(&f, 0, b"z", 5);
    assert_eq!(ceiling_at(&f, 0, 5), Some(ceiling(0, b"x")));
    // An ingest whose largest key is above the ceiling raises it to keep
    // that key; one below leaves it; no ceiling is installed during one.
    let below = [(tk(0, b"a"), tk(0, b"b"))];
    drop(f.ingest_begins(&below));
    assert_eq!(ceiling_at(&f, 0, 5), Some(ceiling(0, b"x")));
    let before = f.ingests_ended();
    let above = [(tk(0, b"m"), tk(0, b"y"))];
    let guard = f.ingest_begins(&above);
    assert_eq!(ceiling_at(&f, 0, 5), Some(ceiling(0, b"y")));
    f.mark(End::Back, 0);
    f.unmark(End::Back, 0, Some((ceiling(0, b"b"), 6)), before);
    assert_eq!(ceiling_at(&f, 0, 6), Some(ceiling(0, b"y")));
    drop(guard);
    f.mark(End::Back, 0);
    f.unmark(End::Back, 0, Some((ceiling(0, b"b"), 6)), f.ingests_ended());
    assert_eq!(ceiling_at(&f, 0, 6), Some(ceiling(0, b"b")));
}
