//! The in-memory write buffer: concurrent skip lists of internal keys (a
//! few, each of a bounded size: `lists`), with a hash index of each key's
//! newest entry for lookups as of now.

mod arena;
mod hash_slots;
mod cursor;
mod lists;
mod newest;
mod skiplist;
mod spare;

pub(crate) use spare::{register as register_spare_chunks, Registration as SpareChunks};

use crate::key::{self, InternalKey, Kind, SeqNo};
pub use cursor::{MemtableIter, MemtableScan};
use lists::{Lists, MAX_LISTS};
use newest::{NewestIndex, Probe};
use skiplist::Entry;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Who may insert into a memtable while a caller does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inserters {
    /// Other writers may be inserting too: each step another could race
    /// (carving the entry's memory, linking it, counting it) is an atomic
    /// read-modify-write.
    Many,
    /// The caller is the only one, and stays so until its insert returns
    /// (a single writer's commit, under the commit lock with every writer
    /// before it published): those steps are plain loads and stores.
    /// Readers may still read meanwhile.
    One,
}

/// Sorted, concurrent buffer of recent writes. Readers never block writers.
///
/// A memtable belongs to one WAL segment (`wal_number`): the writes in it are
/// in that segment (or, after recovery, in segments up to it).
pub struct Memtable {
    lists: Lists,
    newest: NewestIndex,
    /// Bytes of the hash index (the lists count their own).
    index_bytes: AtomicU64,
    wal_number: u64,
    /// Value bytes its commits wrote to its blob file
    /// (docs/format.md#blob-files-written-at-commit).
    blob_bytes: AtomicU64,
    /// That blob file, once sealed; its flush names it in the manifest.
    /// Shared with the versions that list it: a reader that pins this
    /// memtable keeps the file on disk.
    blob_file: parking_lot::Mutex<Option<Arc<crate::blob::BlobMeta>>>,
}

impl Memtable {
    /// An empty memtable whose writes are logged in WAL segment
    /// `wal_number`, to be sealed at about `memtable_size` bytes (which sets
    /// the size of its skip lists).
    /// Its hash index is kept from its first point lookup on.
    pub fn new(wal_number: u64, memtable_size: u64) -> Memtable {
        Memtable::with_list_bytes(wal_number, lists::list_bytes(memtable_size), false)
    }

    /// [`Memtable::new`] with its hash index kept from the start: for a
    /// memtable rebuilt from the WAL at open, which is read next.
    pub fn indexed(wal_number: u64, memtable_size: u64) -> Memtable {
        Memtable::with_list_bytes(wal_number, lists::list_bytes(memtable_size), true)
    }

    /// An empty memtable whose skip lists hold `list_bytes` each.
    fn with_list_bytes(wal_number: u64, list_bytes: u64, indexed: bool) -> Memtable {
        let lists = Lists::new(list_bytes);
        Memtable {
            newest: NewestIndex::new(&lists, indexed),
            lists,
            index_bytes: AtomicU64::new(0),
            wal_number,
            blob_bytes: AtomicU64::new(0),
            blob_file: parking_lot::Mutex::new(None),
        }
    }

    /// Whether the skip lists of a memtable of `memtable_size` bytes take
    /// huge chunks from their first entry (and [`register_spare_chunks`]
    /// keeps chunks for them).
    pub fn takes_huge_chunks(memtable_size: u64) -> bool {
        let list_bytes = lists::list_bytes(memtable_size);
        arena::Arena::starts_huge(usize::try_from(list_bytes).unwrap_or(usize::MAX))
    }

    /// Counts `bytes` of values written to this memtable's blob file.
    pub fn add_blob_bytes(&self, bytes: u64) {
        self.blob_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Value bytes written to this memtable's blob file so far.
    pub fn blob_bytes(&self) -> u64 {
        self.blob_bytes.load(Ordering::Relaxed)
    }

    /// Records the sealed blob file holding this memtable's large values.
    pub fn set_blob_file(&self, meta: Arc<crate::blob::BlobMeta>) {
        *self.blob_file.lock() = Some(meta);
    }

    /// The sealed blob file holding this memtable's large values, if any.
    pub fn blob_file(&self) -> Option<Arc<crate::blob::BlobMeta>> {
        self.blob_file.lock().clone()
    }

    /// The WAL segment holding this memtable's writes.
    pub fn wal_number(&self) -> u64 {
        self.wal_number
    }

    #[cfg(any(test, feature = "internals"))]
    /// Inserts one entry. Each `(tree_key, seqno)` is inserted at most once.
    pub fn insert(&self, tree_key: &[u8], seqno: SeqNo, kind: Kind, value: &[u8]) {
        let trailer = ((seqno << 8) | u64::from(kind as u8)).to_le_bytes();
        self.insert_parts(&[tree_key, &trailer], value, Inserters::Many);
    }

    /// Inserts one entry of keyspace `ks`: its internal key is written
    /// straight into the skip list's entry, beside the value.
    pub fn insert_user(
        &self,
        ks: key::KeyspaceId,
        user_key: &[u8],
        seqno: SeqNo,
        kind: Kind,
        value: &[u8],
        who: Inserters,
    ) {
        let trailer = ((seqno << 8) | u64::from(kind as u8)).to_le_bytes();
        self.insert_parts(&[&ks.to_be_bytes(), user_key, &trailer], value, who);
    }

    /// Inserts into the newest skip list the entry whose internal key is
    /// the concatenation of `key_parts`, then records it in the index: a
    /// reader that finds it in the index finds it in a list too, and every
    /// entry a reader may see (seqno published after this returns) is in
    /// both.
    fn insert_parts(&self, key_parts: &[&[u8]], value: &[u8], who: Inserters) {
        let entry = self.lists.insert(key_parts, value, who);
        let ikey = entry.key();
        // A key that is not a well-formed internal key has no point lookup.
        if self.newest.is_kept() {
            if let Some(p) = key::parse(ikey) {
                let bytes = self.newest.record(&self.lists, entry, p.tree_key, p.seqno);
                self.index_bytes.fetch_add(bytes as u64, Ordering::Relaxed);
            }
        }
    }

    /// Bytes of memory held: what the skip lists' arenas are charged (a
    /// huge chunk whole, others as far as handed out) and the hash index.
    pub fn approximate_size(&self) -> u64 {
        self.lists.charged() + self.index_bytes.load(Ordering::Relaxed)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.lists.len()
    }

    /// True when nothing was inserted.
    pub fn is_empty(&self) -> bool {
        self.lists.is_empty()
    }

    /// The first entry at or after internal key `target`, as (internal key, value).
    pub fn seek(&self, target: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
        self.lists
            .all()
            .filter_map(|l| l.lower_bound(target))
            .min_by(|a, b| key::compare(a.key(), b.key()))
            .map(|e| (e.key().to_vec(), e.value().to_vec()))
    }

    /// Appends the entries of `tree_key` at or after seek target `target`
    /// (newest first), stopping after a Put or Delete. Returns true if it
    /// stopped on one (older sources need not be consulted).
    pub fn collect_entries(
        &self,
        tree_key: &[u8],
        target: &[u8],
        out: &mut Vec<(Kind, Vec<u8>)>,
    ) -> bool {
        let mut decided = false;
        self.walk_key(tree_key, target, |kind, value| {
            out.push((kind, value.to_vec()));
            decided = kind != Kind::Merge;
            decided
        });
        decided
    }

    /// Calls `visit` with the kind and value of each entry of `tree_key` at
    /// or after seek target `target`, newest first, until it returns true
    /// (the key is decided) or the key's entries end. Values are borrowed
    /// from the memtable: nothing is copied.
    ///
    /// When the key's newest entry is a Put or Delete at or before the
    /// target's seqno, the hash index answers without searching the skip
    /// lists; a key the index lacks has no entry here at all. The first
    /// call builds the index if the memtable keeps none yet (a memtable
    /// only written until now); while another call builds it, the skip
    /// lists answer.
    /// REQUIRES: every entry at or before the target's seqno was inserted
    /// before this call began (the seqno was published after the insert).
    pub fn visit_entries(
        &self,
        tree_key: &[u8],
        target: &InternalKey,
        mut visit: impl FnMut(Kind, &[u8]) -> bool,
    ) {
        // While no index is kept, a key before or after every entry (the
        // next of an ascending run: a delete after its existence check) is
        // answered by the lists' ends, and no index is built for it. Once
        // one is kept, its own ranges answer such keys as cheaply.
        if !self.newest.is_kept() && self.lists.outside(tree_key) {
            return;
        }
        let as_of = seek_seqno(target.as_slice());
        let built = self.newest.build(&self.lists);
        if built > 0 {
            self.index_bytes.fetch_add(built as u64, Ordering::Relaxed);
        }
        match self.newest.probe(&self.lists, tree_key) {
            Some(Probe::Absent) => return,
            Some(Probe::Newest(n))
                if n.seqno <= as_of && matches!(n.kind, Kind::Put | Kind::Delete) =>
            {
                visit(n.kind, n.entry.value());
                return;
            }
            _ => {}
        }
        self.walk_key(tree_key, target.as_slice(), visit);
    }

    /// Calls `visit` with each entry of `tree_key` at or after seek target
    /// `target` in internal-key order (newest first), merged from every
    /// skip list, until it returns true or the key's entries end.
    fn walk_key<'a>(&'a self, tree_key: &[u8], target: &[u8], mut visit: impl FnMut(Kind, &'a [u8]) -> bool) {
        let of_key = |e: Option<Entry<'a>>| {
            e.filter(|e| key::parse(e.key()).is_some_and(|p| p.tree_key == tree_key))
        };
        // Each list's next entry of the key.
        let mut heads: [Option<Entry<'a>>; MAX_LISTS] = [None; MAX_LISTS];
        for (head, list) in heads.iter_mut().zip(self.lists.all()) {
            *head = of_key(list.lower_bound(target));
        }
        loop {
            let mut newest: Option<(usize, Entry<'a>)> = None;
            for (i, head) in heads.iter().enumerate() {
                if let Some(e) = head {
                    if newest.is_none_or(|(_, n)| key::compare(e.key(), n.key()).is_lt()) {
                        newest = Some((i, *e));
                    }
                }
            }
            let Some((i, e)) = newest else { return };
            let Some(p) = key::parse(e.key()) else { return };
            if visit(p.kind, e.value()) {
                return;
            }
            if let Some(head) = heads.get_mut(i) {
                *head = of_key(e.next());
            }
        }
    }

    /// The seqno of the newest entry of `tree_key`, if the memtable holds
    /// one: the first entry of the key in each skip list (entries sort
    /// newest first), the largest of them. For a transaction's validation.
    pub fn newest_seqno(&self, tree_key: &[u8]) -> Option<SeqNo> {
        let target = key::seek_key(tree_key);
        self.lists
            .all()
            .filter_map(|list| list.lower_bound(&target))
            .filter_map(|e| key::parse(e.key()).filter(|p| p.tree_key == tree_key))
            .map(|p| p.seqno)
            .max()
    }

    /// The tree key of an entry newer than `seqno` whose tree key lies
    /// between `lower` and `upper`, if the memtable holds one: a walk of
    /// each skip list over the range. For a transaction's validation of a
    /// range it scanned.
    pub fn newer_in_range(
        &self,
        lower: std::ops::Bound<&[u8]>,
        upper: std::ops::Bound<&[u8]>,
        seqno: SeqNo,
    ) -> Option<Vec<u8>> {
        use std::ops::Bound;
        let start = match lower {
            Bound::Included(k) | Bound::Excluded(k) => Some(key::seek_key(k)),
            Bound::Unbounded => None,
        };
        let below_upper = |tk: &[u8]| match upper {
            Bound::Included(u) => tk <= u,
            Bound::Excluded(u) => tk < u,
            Bound::Unbounded => true,
        };
        for list in self.lists.all() {
            let mut at = match &start {
                Some(target) => list.lower_bound(target),
                None => list.front(),
            };
            while let Some(e) = at {
                let Some(p) = key::parse(e.key()) else { break };
                if !below_upper(p.tree_key) {
                    break;
                }
                let excluded = matches!(lower, Bound::Excluded(k) if k == p.tree_key);
                if p.seqno > seqno && !excluded {
                    return Some(p.tree_key.to_vec());
                }
                at = e.next();
            }
        }
        None
    }

    /// A cursor borrowing the memtable that moves from entry to entry
    /// without copying, merging its skip lists; for flushes.
    pub fn scan(&self) -> MemtableScan<'_> {
        cursor::scan(&self.lists)
    }

    /// Iterators over the memtable, one per skip list, to be merged; each
    /// keeps the memtable alive. Entries inserted later may or may not be
    /// seen (the caller filters by seqno: an entry the caller may see was
    /// inserted before its seqno was published).
    pub fn iters(self: &Arc<Self>) -> impl Iterator<Item = MemtableIter> + '_ {
        (0..self.lists.all().count()).map(|i| MemtableIter::new(Arc::clone(self), i))
    }
}

/// The seqno of a seek target (its kind byte is not a real kind); 0 if the
/// target is shorter than a trailer, which makes the index step aside.
fn seek_seqno(target: &[u8]) -> SeqNo {
    let trailer = target
        .len()
        .checked_sub(key::TRAILER_LEN)
        .and_then(|split| target.get(split..))
        .and_then(|t| <[u8; key::TRAILER_LEN]>::try_from(t).ok());
    trailer.map_or(0, |t| u64::from_le_bytes(t) >> 8)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    use crate::iter::{InternalIterator, MergingIter};

    /// Every skip list of `m` merged, as reads merge them.
    fn merged(m: &Arc<Memtable>) -> MergingIter<MemtableIter> {
        MergingIter::new(m.iters().collect())
    }

    /// Every entry of `it` from the first, as (tree key, seqno, kind, value).
    fn entries(it: &mut impl InternalIterator) -> Vec<(Vec<u8>, SeqNo, Kind, Vec<u8>)> {
        let mut got = Vec::new();
        it.seek_to_first();
        while it.valid() {
            let p = key::parse(it.key()).unwrap();
            got.push((p.tree_key.to_vec(), p.seqno, p.kind, it.value().to_vec()));
            it.next();
        }
        got
    }

    /// The newest entry of `k` as a lookup as of now finds it.
    fn lookup(m: &Memtable, k: &[u8]) -> Option<(Kind, Vec<u8>)> {
        let tk = key::tree_key(0, k);
        let target = InternalKey::from(key::seek_key(&tk));
        let mut found = None;
        m.visit_entries(&tk, &target, |kind, v| {
            found = Some((kind, v.to_vec()));
            true
        });
        found
    }

    fn uses_index(m: &Memtable, k: &[u8]) -> bool {
        m.newest.probe(&m.lists, &key::tree_key(0, k)).is_some()
    }

    #[test]
    fn a_memtable_only_written_keeps_no_index_until_its_first_lookup() {
        // Small lists: the entries spread over several.
        let m = Memtable::with_list_bytes(1, 4 << 10, false);
        for i in 0..2_000u32 {
            let k = format!("k{:05}", i % 1_500);
            m.insert(&key::tree_key(0, k.as_bytes()), u64::from(i) + 1, Kind::Put, &i.to_le_bytes());
        }
        assert!(m.lists.all().count() > 1);
        let unindexed = m.approximate_size();
        assert!(!uses_index(&m, b"k00001"), "no index before a lookup");
        // The first lookup builds it; every key's newest entry is found.
        assert_eq!(lookup(&m, b"k00001"), Some((Kind::Put, 1501u32.to_le_bytes().to_vec())));
        assert!(uses_index(&m, b"k00001"));
        assert!(m.approximate_size() > unindexed, "the index is counted once built");
        for i in 0..1_500u32 {
            let newest = if i < 500 { i + 1_500 } else { i };
            let k = format!("k{i:05}");
            assert_eq!(lookup(&m, k.as_bytes()), Some((Kind::Put, newest.to_le_bytes().to_vec())), "{k}");
        }
        assert_eq!(lookup(&m, b"absent"), None);
        // Writers record their entries from now on.
        m.insert(&key::tree_key(0, b"k00001"), 5_000, Kind::Delete, b"");
        assert_eq!(lookup(&m, b"k00001"), Some((Kind::Delete, Vec::new())));
    }

    #[test]
    fn a_key_before_or_after_every_entry_is_answered_without_the_index() {
        let m = Memtable::with_list_bytes(1, 4 << 10, false);
        for i in 100..2_000u32 {
            let k = format!("k{i:05}");
            m.insert(&key::tree_key(0, k.as_bytes()), u64::from(i), Kind::Put, b"v");
        }
        assert!(m.lists.all().count() > 1, "several lists");
        for outside in ["a", "k00099", "k02000", "z"] {
            assert_eq!(lookup(&m, outside.as_bytes()), None, "{outside}");
        }
        assert!(!uses_index(&m, b"k00500"), "no index built for keys outside");
        // Between the first and the last key: the index answers, absent
        // keys included, and is built for it.
        assert_eq!(lookup(&m, b"k00500"), Some((Kind::Put, b"v".to_vec())));
        assert_eq!(lookup(&m, b"k00500x"), None);
        assert!(uses_index(&m, b"k00500"));
        // An ascending run goes on: its next key is after every entry.
        m.insert(&key::tree_key(0, b"k02000"), 9_000, Kind::Delete, b"");
        assert_eq!(lookup(&m, b"k02000"), Some((Kind::Delete, Vec::new())));
        assert_eq!(lookup(&m, b"k02001"), None);
    }

    #[test]
    fn an_index_built_while_writers_insert_misses_no_entry() {
        for round in 0..20u64 {
            let m = Arc::new(Memtable::with_list_bytes(1, 16 << 10, false));
            // Keys around the writers', so that the lookup below is not
            // answered by the lists' first and last keys alone.
            m.insert(&key::tree_key(0, b"a"), 1, Kind::Put, b"a");
            m.insert(&key::tree_key(0, b"z"), 2, Kind::Put, b"z");
            let seqno = Arc::new(AtomicU64::new(2));
            let writers: Vec<_> = (0..4u64)
                .map(|t| {
                    let (m, seqno) = (Arc::clone(&m), Arc::clone(&seqno));
                    std::thread::spawn(move || {
                        for i in 0..3_000u64 {
                            let k = format!("w{t}-{:05}", (i * 7919 + round) % 3_000);
                            let s = seqno.fetch_add(1, Ordering::Relaxed) + 1;
                            m.insert(&key::tree_key(0, k.as_bytes()), s, Kind::Put, k.as_bytes());
                        }
                    })
                })
                .collect();
            // A lookup while they write builds the index.
            while m.len() < 100 {
                std::thread::yield_now();
            }
            let _ = lookup(&m, b"w0-00000");
            for w in writers {
                w.join().unwrap();
            }
            for t in 0..4u64 {
                for i in 0..3_000u64 {
                    let k = format!("w{t}-{i:05}");
                    let got = m.newest.probe(&m.lists, &key::tree_key(0, k.as_bytes()));
                    assert!(
                        matches!(got, Some(Probe::Newest(_))),
                        "round {round}: {k} missing from the index"
                    );
                }
            }
        }
    }

    #[test]
    fn iterates_in_internal_key_order_both_ways() {
        // One list, then a list per entry (the smallest size opens the next
        // list at once).
        for list_bytes in [1 << 20, 1] {
            iterates_both_ways(list_bytes);
        }
    }

    fn iterates_both_ways(list_bytes: u64) {
        let m = Arc::new(Memtable::with_list_bytes(1, list_bytes, true));
        m.insert(&key::tree_key(0, b"b"), 1, Kind::Put, b"b1");
        m.insert(&key::tree_key(0, b"a"), 2, Kind::Put, b"a2");
        m.insert(&key::tree_key(0, b"b"), 3, Kind::Delete, b"");
        let mut it = merged(&m);
        it.seek_to_first();
        let mut fwd = Vec::new();
        while it.valid() {
            let p = key::parse(it.key()).unwrap();
            fwd.push((p.user_key().to_vec(), p.seqno));
            it.next();
        }
        assert_eq!(
            fwd,
            vec![(b"a".to_vec(), 2), (b"b".to_vec(), 3), (b"b".to_vec(), 1)]
        );
        it.seek_to_last();
        let mut back = Vec::new();
        while it.valid() {
            back.push(key::parse(it.key()).unwrap().seqno);
            it.prev();
        }
        assert_eq!(back, vec![1, 3, 2]);
        it.seek(&key::seek_key_at(&key::tree_key(0, b"b"), 2));
        assert_eq!(key::parse(it.key()).unwrap().seqno, 1);
        it.seek_for_prev(&key::seek_key(&key::tree_key(0, b"b")));
        assert_eq!(key::parse(it.key()).unwrap().user_key(), b"a");
        assert!(m.approximate_size() > 0);
    }

    /// The entries `visit_entries` shows for `tk` as of `as_of`.
    fn visited(m: &Memtable, tk: &[u8], as_of: SeqNo) -> Vec<(Kind, Vec<u8>)> {
        let target = InternalKey::from_slice(&key::seek_key_at(tk, as_of));
        let mut seen = Vec::new();
        m.visit_entries(tk, &target, |kind, value| {
            seen.push((kind, value.to_vec()));
            kind != Kind::Merge
        });
        seen
    }

    proptest::proptest! {
        /// Point lookups at every seqno (the hash index's now and the skip
        /// list's snapshots), and ordered iteration, agree with a model that
        /// keeps every entry.
        #[test]
        fn lookups_snapshots_and_iteration_agree_with_a_model(
            ops in proptest::collection::vec((0u8..6, 0u8..3, 0u8..255), 1..60),
            list_bytes in proptest::prop_oneof![proptest::strategy::Just(1u64 << 20), 1u64..1000],
        ) {
            let m = Arc::new(Memtable::with_list_bytes(1, list_bytes, true));
            // (tree key, seqno) → (kind, value), every entry ever inserted.
            let mut model = std::collections::BTreeMap::new();
            for (seqno, (k, kind, v)) in (1u64..).zip(&ops) {
                let tk = key::tree_key(0, &[b'k', *k]);
                let kind = match kind { 0 => Kind::Delete, 1 => Kind::Put, _ => Kind::Merge };
                let value = if kind == Kind::Delete { Vec::new() } else { vec![*v; 3] };
                m.insert(&tk, seqno, kind, &value);
                model.insert((tk, seqno), (kind, value));
            }
            let last = ops.len() as u64;
            for k in 0u8..7 {
                let tk = key::tree_key(0, &[b'k', k]);
                for as_of in 0..=last + 1 {
                    let mut want = Vec::new();
                    for ((_, _), (kind, value)) in model
                        .range((tk.clone(), 0)..=(tk.clone(), as_of))
                        .rev()
                    {
                        want.push((*kind, value.clone()));
                        if *kind != Kind::Merge {
                            break;
                        }
                    }
                    proptest::prop_assert_eq!(visited(&m, &tk, as_of), want, "key {} as of {}", k, as_of);
                }
            }
            let got = entries(&mut merged(&m));
            proptest::prop_assert_eq!(&entries(&mut m.scan()), &got);
            for (k, _, _, _) in &got {
                let mut out = Vec::new();
                m.collect_entries(k, &key::seek_key(k), &mut out);
                let mut want = Vec::new();
                for ((_, _), (kind, value)) in model.range((k.clone(), 0)..=(k.clone(), u64::MAX)).rev() {
                    want.push((*kind, value.clone()));
                    if *kind != Kind::Merge {
                        break;
                    }
                }
                proptest::prop_assert_eq!(out, want);
            }
            // Internal key order: tree key ascending, seqno descending.
            let mut want: Vec<_> = model
                .iter()
                .map(|((tk, s), (kind, v))| (tk.clone(), *s, *kind, v.clone()))
                .collect();
            want.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
            proptest::prop_assert_eq!(&got, &want);
            let mut it = merged(&m);
            it.seek_to_last();
            let mut back = Vec::new();
            while it.valid() {
                back.push(key::parse(it.key()).unwrap().seqno);
                it.prev();
            }
            back.reverse();
            proptest::prop_assert_eq!(back, want.iter().map(|w| w.1).collect::<Vec<_>>());
        }
    }
}
