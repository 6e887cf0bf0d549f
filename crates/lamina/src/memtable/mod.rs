//! The in-memory write buffer: concurrent skip lists of internal keys (a
//! few, each of a bounded size: `lists`), with a hash index of each key's
//! newest entry for lookups as of now.

mod arena;
mod cursor;
mod frozen;
mod hash_slots;
mod height;
mod lists;
mod newest;
mod skiplist;
mod spare;

pub use arena::Inserters;
pub use cursor::{MemSource, MemtableIter};
pub(crate) use spare::Registration as SpareChunks;

use crate::key::{self, InternalKey, Kind, SeqNo};
use lists::{Lists, MAX_LISTS};
use newest::{NewestIndex, Probe};
use skiplist::Entry;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

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
        let _ = self.insert_parts(&[tree_key, &trailer], value, Inserters::Many);
    }

    /// Inserts one entry of keyspace `ks`: its internal key is written
    /// straight into the skip list's entry, beside the value. True when the
    /// insert found its skip list full and moved on to another: the
    /// memtable then has lists to index ([`Memtable::freeze`]).
    pub fn insert_user(
        &self,
        ks: key::KeyspaceId,
        user_key: &[u8],
        seqno: SeqNo,
        kind: Kind,
        value: &[u8],
        who: Inserters,
    ) -> bool {
        let trailer = ((seqno << 8) | u64::from(kind as u8)).to_le_bytes();
        self.insert_parts(&[&ks.to_be_bytes(), user_key, &trailer], value, who)
    }

    /// Indexes the skip lists inserts moved on from, for ordered reads
    /// (`memtable::frozen`), and the active one too once inserts paused;
    /// nothing if there is nothing new to index. Off the writers' path: the
    /// flush thread calls it when [`Memtable::wants_freeze`] says so.
    pub fn freeze(&self) {
        self.lists.freeze();
    }

    /// Indexes every skip list now, the active one too: for a memtable no
    /// insert will come to (a read-only handle's replayed memtables).
    pub fn freeze_all(&self) {
        self.lists.freeze_all();
    }

    /// Whether the memtable has had an ordered read and has lists to index
    /// for the next: a memtable only written is never indexed. Each call
    /// notes the active list's count: the active list is indexed once a
    /// call finds it unchanged since the one before (inserts paused).
    pub fn wants_freeze(&self) -> bool {
        self.lists.wants_freeze()
    }

    /// Inserts into the newest skip list the entry whose internal key is
    /// the concatenation of `key_parts`, then records it in the index: a
    /// reader that finds it in the index finds it in a list too, and every
    /// entry a reader may see (seqno published after this returns) is in
    /// both.
    fn insert_parts(&self, key_parts: &[&[u8]], value: &[u8], who: Inserters) -> bool {
        let (entry, rolled) = self.lists.insert(key_parts, value, who);
        let ikey = entry.key();
        // A key that is not a well-formed internal key has no point lookup.
        if self.newest.is_kept() {
            if let Some(p) = key::parse(ikey) {
                let bytes = self.newest.record(&self.lists, entry, p.tree_key, p.seqno);
                self.index_bytes.fetch_add(bytes as u64, Ordering::Relaxed);
            }
        }
        rolled
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
    fn walk_key<'a>(
        &'a self,
        tree_key: &[u8],
        target: &[u8],
        mut visit: impl FnMut(Kind, &'a [u8]) -> bool,
    ) {
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
    /// one: the newest-entry index's answer when it keeps one, else the
    /// first entry of the key in each skip list (entries sort newest
    /// first), the largest of them. For a transaction's validation, under
    /// the commit lock: a search of every list took a TPC-B commit's
    /// validation to 10-80 µs there, the index a probe a key.
    pub fn newest_seqno(&self, tree_key: &[u8]) -> Option<SeqNo> {
        match self.newest.probe(&self.lists, tree_key) {
            Some(Probe::Absent) => return None,
            Some(Probe::Newest(n)) => return Some(n.seqno),
            None => {}
        }
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
}

/// Registers a database whose memtables are of `memtable_size` bytes with
/// the pool of spare chunks, if they take huge chunks; `None` otherwise
/// (nothing is kept for it).
pub(crate) fn register_spare_chunks(memtable_size: u64) -> Option<SpareChunks> {
    let bytes = usize::try_from(memtable_size).ok()?;
    if !Memtable::takes_huge_chunks(memtable_size) {
        return None;
    }
    Some(spare::register(bytes))
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
mod tests;
