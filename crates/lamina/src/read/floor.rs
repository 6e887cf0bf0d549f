//! The live floor and the live ceiling of each keyspace: a key below which,
//! and a key from which on, no key has a value, so that an iterator from
//! the keyspace's start seeks to the floor and one from its end to the
//! ceiling instead of stepping over the tombstones of every key deleted
//! there (a work queue popped from the front, or from the back). Kept in
//! memory only; hints that are never wrong
//! (docs/design.md#the-live-floor-and-ceiling).
//!
//! Both are *limits* of an [`End`] of a keyspace, one the mirror of the
//! other, and one code keeps them. A limit `(K, S)` of keyspace `ks` says:
//! at seqno `S`, no key of `ks` beyond the tree key `K` had a value —
//! below `K` for the floor (the front's), at or above `K` for the ceiling
//! (the back's). Writers keep it true for later seqnos: a write that gives
//! a key beyond `K` a value (a Put, a Merge operand, a blob pointer; a
//! Delete gives none) moves the limit to keep that key before its seqno is
//! published ([`Floors::wrote`], from the commit path), and an ingest moves
//! it to keep its tables' smallest and largest keys before its tables are
//! ([`Floors::ingest_begins`]). An iterator whose cursor at that end starts
//! at or beyond the limit, at a seqno `R >= S`, reads the limit after
//! taking `R` and seeks to it ([`LiveWalk::start`]); the keys it skips are
//! keys without a value, so it yields the same. The limit that keeps the
//! first key it finds (or the far end of its range) becomes the new limit
//! ([`Reads::install_limit`]), so the next pop steps only over the
//! tombstones since: amortized O(1).
//!
//! **Why a reader never misses a live key.** Say the slot holds `(K, S)`
//! and a reader, having loaded `R >= S` from the visible seqno, reads it.
//! At `S` no key beyond `K` had a value: walking from the keyspace's edge
//! at that end, or from a limit it read the same way, the installer found
//! the key `K` keeps as the first live key at `S`. Take a write `w` giving
//! a key `k` beyond `K` a value, with `S < seqno(w) <= R`. It was published
//! before the reader loaded `R`, so its check came before the reader's
//! read of the slot. If it checked after the install, it moved the limit
//! to keep `k`. If before: the installer marked the slot as recording, then
//! read `A`, the last seqno handed out, under the commit queue, and
//! installs only at `S >= A`, with every seqno up to `A` visible.
//! `seqno(w) > S >= A`, so `w` took its seqno under the queue after the
//! installer let it go, and its check came after the mark: it recorded `k`,
//! and the installer installed a limit that keeps `k`. Either way the
//! reader's seek keeps `k`. An ingest's entries are handled alike: it moves
//! limits before publishing its tables, and no limit is installed while one
//! runs, nor by an iterator made before one ended (its view may lack the
//! tables).
//!
//! A writer that meets no limit and no install pays one relaxed load per
//! batch; a writer short of the limits, two more and comparisons of the
//! key's first bytes ([`Slot::words`]). Limits are per slot (`ks % 64`),
//! one floor and one ceiling a slot; installing one for another keyspace of
//! the slot replaces it. Read-only handles keep none: a refresh publishes
//! writes that never passed a check.

use super::iter::keyspace_end;
use super::Reads;
use crate::commit::Commit;
use crate::iter::Cursor;
use crate::key::{self, KeyspaceId, Kind, SeqNo, KEYSPACE_ID_LEN};
use parking_lot::Mutex;
use std::cmp::Ordering as Order;
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A cursor's answer: the next entry, an error, or `None` at the range's end.
type Answer = Option<crate::Result<(Vec<u8>, Vec<u8>)>>;

/// Slots of limits: keyspace `ks` uses slot `ks % SLOTS`.
const SLOTS: usize = 64;

/// In a slot's word: writers must take the slot's lock (an install is
/// recording the keys written, or the floor is a keyspace's end, which
/// every key of it is below).
const LOCK: u64 = 1;
/// In a slot's word: the slot holds a limit.
const LIMIT: u64 = 2;

/// Entries an iterator must have stepped over before its first key for
/// that key to become the limit: a scan of a keyspace whose ends hold no
/// tombstones installs nothing, and writers pay nothing for it.
const MIN_STEPS: u64 = 32;

/// How long an install waits for the commit queue before giving up.
const PATIENCE: Duration = Duration::from_micros(100);

/// An end of a keyspace, and of an iterator over it: the front keeps the
/// floor, the back the ceiling.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum End {
    Front,
    Back,
}

impl End {
    const BOTH: [End; 2] = [End::Front, End::Back];

    /// The limit that keeps the tree key `tk` and nothing beyond it: the
    /// floor at `tk`, the ceiling just past it.
    fn keeping(self, mut tk: Vec<u8>) -> Vec<u8> {
        if self == End::Back {
            tk.push(0);
        }
        tk
    }

    /// How much of its keyspace the limit `a` says is without a value,
    /// against the limit `b`: `Greater` when more.
    fn depth(self, a: &[u8], b: &[u8]) -> Order {
        match self {
            End::Front => a.cmp(b),
            End::Back => b.cmp(a),
        }
    }

    /// Whether the key (`ks`, `user_key`) is beyond `limit`, a tree key of
    /// `ks`'s limit at this end.
    fn beyond(self, ks: KeyspaceId, user_key: &[u8], limit: &[u8]) -> bool {
        let order = cmp_tree(ks, user_key, limit);
        match self {
            End::Front => order == Order::Less,
            End::Back => order != Order::Less,
        }
    }

    /// Whether a key whose first bytes are `h` ([`head`]) is short of a
    /// limit whose first bytes are `limit`: not beyond it, however the
    /// keys go on.
    fn short_of(self, h: u64, limit: u64) -> bool {
        match self {
            End::Front => h > limit,
            End::Back => h < limit,
        }
    }

    /// Whether `limit`, of keyspace `ks`, is at the keyspace's edge at this
    /// end or past it: it says nothing.
    fn says_nothing(self, ks: KeyspaceId, limit: &[u8]) -> bool {
        match self {
            End::Front => limit <= ks.to_be_bytes().as_slice(),
            End::Back => ks
                .checked_add(1)
                .is_some_and(|next| limit >= next.to_be_bytes().as_slice()),
        }
    }

    /// The bound of an iterator's range at this end that starts at
    /// keyspace `ks`'s edge.
    fn edge(self, ks: KeyspaceId) -> Bound<Vec<u8>> {
        match self {
            End::Front => Bound::Included(key::tree_key(ks, b"")),
            End::Back => keyspace_end(ks),
        }
    }

    /// Whether `limit` cuts into a range whose bound at this end is
    /// `bound`: the cursor starts at the limit instead.
    fn cuts(self, limit: &[u8], bound: &Bound<Vec<u8>>) -> bool {
        match (self, bound) {
            (_, Bound::Unbounded) => true,
            (End::Front, Bound::Included(l)) => limit >= l.as_slice(),
            (End::Front, Bound::Excluded(l)) => limit > l.as_slice(),
            (End::Back, Bound::Included(u) | Bound::Excluded(u)) => limit <= u.as_slice(),
        }
    }

    /// The bound a cursor at this end starts from at `limit`.
    fn start_at(self, limit: Vec<u8>) -> Bound<Vec<u8>> {
        match self {
            End::Front => Bound::Included(limit),
            End::Back => Bound::Excluded(limit),
        }
    }

    /// The limit at this end that a range whose bound at the other end is
    /// `far` says when it holds no live key: all of it is without a value.
    fn past(self, far: &Bound<Vec<u8>>) -> Option<Vec<u8>> {
        match (self, far) {
            (End::Front, Bound::Excluded(k)) | (End::Back, Bound::Included(k)) => Some(k.clone()),
            (End::Front, Bound::Included(k)) | (End::Back, Bound::Excluded(k)) => {
                let mut k = k.clone();
                k.push(0);
                Some(k)
            }
            (_, Bound::Unbounded) => None,
        }
    }
}

/// One thing for each end.
#[derive(Default)]
struct Ends<T> {
    front: T,
    back: T,
}

impl<T> Ends<T> {
    fn get(&self, end: End) -> &T {
        match end {
            End::Front => &self.front,
            End::Back => &self.back,
        }
    }

    fn get_mut(&mut self, end: End) -> &mut T {
        match end {
            End::Front => &mut self.front,
            End::Back => &mut self.back,
        }
    }
}

/// The floors and ceilings of every keyspace (see the module doc).
pub(crate) struct Floors {
    slots: [Slot; SLOTS],
    /// Words of slots that are not zero: a writer that reads zero checks
    /// nothing.
    busy: AtomicUsize,
    /// Ingests between [`Floors::ingest_begins`] and the end of its guard.
    ingests: AtomicUsize,
    /// Ingests ended; an iterator made before one ended installs nothing.
    ingests_ended: AtomicU64,
}

#[derive(Default)]
struct Slot {
    /// What a writer reads without the lock, one word for each end:
    /// [`LOCK`] and [`LIMIT`], and in bits 8 to 63 the first 7 bytes of the
    /// limit's user key (zero-padded, big-endian). A key whose first 7
    /// bytes are on the near side of those is short of the limit
    /// ([`End::short_of`]). Stored only under `state`'s lock, from the state.
    words: Ends<AtomicU64>,
    state: Mutex<Ends<EndState>>,
}

/// A slot's limit at one end, and the installs of one under way.
#[derive(Default)]
struct EndState {
    limit: Option<Limit>,
    /// Installs under way.
    recorders: u32,
    /// The limit that keeps every tree key given a value since `recorders`
    /// last rose from zero.
    recorded: Option<Vec<u8>>,
}

/// A floor or a ceiling.
struct Limit {
    ks: KeyspaceId,
    /// A tree key: of `ks`, or the first of the next keyspace (a floor of
    /// `ks` empty).
    key: Vec<u8>,
    seqno: SeqNo,
}

/// The first 7 bytes of `user_key` as a number (zero-padded).
fn head(user_key: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    for (to, from) in b.iter_mut().skip(1).zip(user_key) {
        *to = *from;
    }
    u64::from_be_bytes(b)
}

/// The order of the tree key of (`ks`, `user_key`) against the tree key `tk`.
fn cmp_tree(ks: KeyspaceId, user_key: &[u8], tk: &[u8]) -> Order {
    let (id, rest) = tk.split_at(tk.len().min(KEYSPACE_ID_LEN));
    ks.to_be_bytes()
        .as_slice()
        .cmp(id)
        .then_with(|| user_key.cmp(rest))
}

impl EndState {
    /// A write gives (`ks`, `user_key`) a value: recorded for the installs
    /// under way, and the limit moved to keep it.
    fn wrote(&mut self, end: End, ks: KeyspaceId, user_key: &[u8]) {
        let beyond = |limit: &[u8]| end.beyond(ks, user_key, limit);
        if self.recorders > 0 && self.recorded.as_deref().is_none_or(beyond) {
            self.recorded = Some(end.keeping(key::tree_key(ks, user_key)));
        }
        if let Some(l) = self.limit.as_mut() {
            if l.ks == ks && beyond(&l.key) {
                l.key = end.keeping(key::tree_key(ks, user_key));
            }
        }
    }

    /// Moves the limit of `ks` back to `to` if it says more than `to`.
    fn give_way(&mut self, end: End, ks: KeyspaceId, to: Vec<u8>) {
        if let Some(l) = self.limit.as_mut() {
            if l.ks == ks && end.depth(&l.key, &to) == Order::Greater {
                l.key = to;
            }
        }
    }
}

impl Default for Floors {
    fn default() -> Floors {
        Floors {
            slots: std::array::from_fn(|_| Slot::default()),
            busy: AtomicUsize::new(0),
            ingests: AtomicUsize::new(0),
            ingests_ended: AtomicU64::new(0),
        }
    }
}

impl Floors {
    fn slot(&self, ks: KeyspaceId) -> &Slot {
        let i = ks as usize % SLOTS;
        self.slots.get(i).unwrap_or(&self.slots[0])
    }

    /// Whether any limit is kept or installed: if not, a writer checks
    /// nothing. One relaxed load.
    #[inline]
    pub(crate) fn watched(&self) -> bool {
        self.busy.load(Ordering::Relaxed) != 0
    }

    /// Moves the limits of keyspace `ks` to keep `user_key` if the write
    /// gives that key a value (records it for an install under way). A
    /// writer calls it, when [`Floors::watched`], for each key of its batch
    /// once its seqnos are taken and before they are published.
    pub(crate) fn wrote(&self, ks: KeyspaceId, user_key: &[u8], kind: Kind) {
        if kind == Kind::Delete {
            return;
        }
        let slot = self.slot(ks);
        let h = head(user_key);
        let near = |end: End| {
            let word = slot.words.get(end).load(Ordering::Relaxed);
            word != 0 && (word & LOCK != 0 || !end.short_of(h, word >> 8))
        };
        if !near(End::Front) && !near(End::Back) {
            return;
        }
        let mut st = slot.state.lock();
        for end in End::BOTH {
            st.get_mut(end).wrote(end, ks, user_key);
        }
        self.settle(slot, &mut st);
    }

    /// The limit of keyspace `ks` at `end` for a reader at `seqno`, who
    /// took `seqno` before this call: every key beyond it is without a
    /// value there.
    pub(crate) fn limit_at(&self, end: End, ks: KeyspaceId, seqno: SeqNo) -> Option<Vec<u8>> {
        let slot = self.slot(ks);
        if slot.words.get(end).load(Ordering::Relaxed) & LIMIT == 0 {
            return None;
        }
        let st = slot.state.lock();
        st.get(end)
            .limit
            .as_ref()
            .filter(|l| l.ks == ks && l.seqno <= seqno)
            .map(|l| l.key.clone())
    }

    /// An ingest is about to publish tables whose keys span the tree keys
    /// `ranges` (smallest, largest; each of one keyspace): limits beyond
    /// them move back to keep them, and none is installed until the guard
    /// returned is dropped (after the ingest's seqnos are visible, or it
    /// failed).
    pub(crate) fn ingest_begins<'a>(
        &self,
        ranges: impl IntoIterator<Item = &'a (Vec<u8>, Vec<u8>)>,
    ) -> IngestGuard<'_> {
        self.ingests.fetch_add(1, Ordering::SeqCst);
        for (smallest, largest) in ranges {
            let ks = key::keyspace_of(smallest);
            let slot = self.slot(ks);
            let mut st = slot.state.lock();
            for (end, edge) in [(End::Front, smallest), (End::Back, largest)] {
                st.get_mut(end).give_way(end, ks, end.keeping(edge.clone()));
            }
            self.settle(slot, &mut st);
        }
        IngestGuard { floors: self }
    }

    /// Forgets the limits of a dropped keyspace.
    pub(crate) fn forget(&self, ks: KeyspaceId) {
        let slot = self.slot(ks);
        let mut st = slot.state.lock();
        for end in End::BOTH {
            let limit = &mut st.get_mut(end).limit;
            if limit.as_ref().is_some_and(|l| l.ks == ks) {
                *limit = None;
            }
        }
        self.settle(slot, &mut st);
    }

    /// The count of ended ingests, read by an iterator before its view.
    fn ingests_ended(&self) -> u64 {
        self.ingests_ended.load(Ordering::Acquire)
    }

    /// An install at `end` begins: writers from now on record what they
    /// write.
    fn mark(&self, end: End, ks: KeyspaceId) {
        let slot = self.slot(ks);
        let mut st = slot.state.lock();
        let e = st.get_mut(end);
        if e.recorders == 0 {
            e.recorded = None;
        }
        e.recorders += 1;
        self.settle(slot, &mut st);
    }

    /// An install at `end` ends, installing `found` (a limit and its
    /// seqno) — moved to keep every key recorded since the mark — unless an
    /// ingest runs or ended since `ended` (the count the iterator read), or
    /// the slot's limit is already as good.
    fn unmark(&self, end: End, ks: KeyspaceId, found: Option<(Vec<u8>, SeqNo)>, ended: u64) {
        let slot = self.slot(ks);
        let mut st = slot.state.lock();
        let e = st.get_mut(end);
        e.recorders = e.recorders.saturating_sub(1);
        // Acquire: an ingest that ended is seen with its count of ends.
        let ingest = self.ingests.load(Ordering::Acquire) > 0
            || self.ingests_ended.load(Ordering::Relaxed) != ended;
        if let (Some((mut key, seqno)), false) = (found, ingest) {
            if let Some(r) = e.recorded.as_ref() {
                if end.depth(r, &key) == Order::Less {
                    key = r.clone();
                }
            }
            let kept = e.limit.as_ref().is_some_and(|l| {
                l.ks == ks && end.depth(&l.key, &key) != Order::Less && l.seqno <= seqno
            });
            if !kept {
                e.limit = Some(Limit { ks, key, seqno });
            }
        }
        self.settle(slot, &mut st);
    }

    /// Drops a limit that says nothing (at its keyspace's edge or past it)
    /// and stores the slot's words. REQUIRES: `st` is `slot`'s state,
    /// locked.
    fn settle(&self, slot: &Slot, st: &mut Ends<EndState>) {
        for end in End::BOTH {
            let e = st.get_mut(end);
            if e.limit
                .as_ref()
                .is_some_and(|l| end.says_nothing(l.ks, &l.key))
            {
                e.limit = None;
            }
            let mut word = 0;
            if e.recorders > 0 {
                word |= LOCK;
            }
            if let Some(l) = &e.limit {
                word |= LIMIT;
                match l.key.split_at_checked(KEYSPACE_ID_LEN) {
                    Some((id, user_key)) if id == l.ks.to_be_bytes().as_slice() => {
                        word |= head(user_key) << 8;
                    }
                    _ => word |= LOCK,
                }
            }
            let slot_word = slot.words.get(end);
            let old = slot_word.load(Ordering::Relaxed);
            if (old == 0) != (word == 0) {
                if word == 0 {
                    self.busy.fetch_sub(1, Ordering::Relaxed);
                } else {
                    self.busy.fetch_add(1, Ordering::Relaxed);
                }
            }
            slot_word.store(word, Ordering::Relaxed);
        }
    }
}

/// An ingest under way (see [`Floors::ingest_begins`]).
pub(crate) struct IngestGuard<'a> {
    floors: &'a Floors,
}

impl Drop for IngestGuard<'_> {
    fn drop(&mut self) {
        let f = self.floors;
        f.ingests_ended.fetch_add(1, Ordering::Release);
        f.ingests.fetch_sub(1, Ordering::Release);
    }
}

/// Where a cursor's walk started: what is known beyond it.
#[derive(Clone, Copy)]
pub(crate) enum Start {
    /// The keyspace's edge at the cursor's end: nothing is beyond.
    Edge,
    /// The keyspace's limit at that end.
    Limit,
}

/// An iterator's part in its keyspace's floor and ceiling: where its
/// cursors start, and the limit each installs once it finds its first key.
pub(crate) struct LiveWalk {
    /// The keyspace and the count of ended ingests, read before the
    /// iterator's view; `None` when limits are off (a read-only handle).
    watch: Option<(KeyspaceId, u64)>,
    /// Set, at each end, while the cursor's first key may become the limit.
    from: Ends<Option<Start>>,
}

impl LiveWalk {
    /// The walk of an iterator whose range starts at `lower` (and ends in
    /// the same keyspace). REQUIRES: it is called before the iterator's
    /// view is taken.
    pub(crate) fn watch(reads: &Reads, lower: &Bound<Vec<u8>>) -> LiveWalk {
        let watch = match lower {
            Bound::Included(l) | Bound::Excluded(l)
                if reads.keeps_limits && l.len() >= KEYSPACE_ID_LEN =>
            {
                Some((key::keyspace_of(l), reads.floors().ingests_ended()))
            }
            _ => None,
        };
        LiveWalk {
            watch,
            from: Ends::default(),
        }
    }

    /// Where the cursor at `end` of an iterator over `lower..upper`, at
    /// `seqno`, starts: the keyspace's limit there if it cuts into the
    /// range, else the range's own bound.
    pub(crate) fn start(
        &mut self,
        reads: &Reads,
        end: End,
        (lower, upper): (&Bound<Vec<u8>>, &Bound<Vec<u8>>),
        seqno: SeqNo,
    ) -> Bound<Vec<u8>> {
        let bound = match end {
            End::Front => lower,
            End::Back => upper,
        };
        let Some((ks, _)) = self.watch else {
            return bound.clone();
        };
        let from = self.from.get_mut(end);
        match reads.floors().limit_at(end, ks, seqno) {
            Some(limit) if end.cuts(&limit, bound) => {
                *from = Some(Start::Limit);
                end.start_at(limit)
            }
            _ => {
                if *bound == end.edge(ks) {
                    *from = Some(Start::Edge);
                }
                bound.clone()
            }
        }
    }

    /// The first answer `item` of the cursor at `end`, found at `seqno`
    /// after stepping over `stepped` entries of the range `lower..upper`:
    /// the limit that keeps its key, or the far end of the range when it
    /// names none, becomes the keyspace's limit at `end`.
    pub(crate) fn found(
        &mut self,
        (reads, commit): (&Reads, &Commit),
        end: End,
        seqno: SeqNo,
        (item, stepped): (&Answer, u64),
        (lower, upper): (&Bound<Vec<u8>>, &Bound<Vec<u8>>),
    ) {
        let (Some(from), Some((ks, ended))) = (self.from.get_mut(end).take(), self.watch) else {
            return;
        };
        if stepped < MIN_STEPS {
            return;
        }
        let far = match end {
            End::Front => upper,
            End::Back => lower,
        };
        let limit = match item {
            Some(Ok((tk, _))) => end.keeping(tk.clone()),
            None => match end.past(far) {
                Some(limit) => limit,
                None => return,
            },
            Some(Err(_)) => return,
        };
        reads.install_limit(commit, end, ks, limit, seqno, (from, ended));
    }
}

impl Reads {
    /// Installs `limit` as the limit of keyspace `ks` at `end`: the one
    /// that keeps the first live key a walk from `from` found at `seqno`
    /// (see the module doc); `ended` is the count of ended ingests the
    /// walk's iterator read.
    fn install_limit(
        &self,
        commit: &Commit,
        end: End,
        ks: KeyspaceId,
        limit: Vec<u8>,
        seqno: SeqNo,
        (from, ended): (Start, u64),
    ) {
        let floors = self.floors();
        floors.mark(end, ks);
        let found = self.limit_seqno(commit, end, ks, limit, seqno, from);
        floors.unmark(end, ks, found, ended);
    }

    /// The limit to install and its seqno, at least the last seqno handed
    /// out after the mark: the walk's own if its seqno is that recent, else
    /// the limit that keeps the first live key short of `limit` (or
    /// `limit`), walking again at the visible seqno from the limit there.
    /// `None`: nothing to install.
    fn limit_seqno(
        &self,
        commit: &Commit,
        end: End,
        ks: KeyspaceId,
        limit: Vec<u8>,
        seqno: SeqNo,
        from: Start,
    ) -> Option<(Vec<u8>, SeqNo)> {
        let assigned = commit.last_assigned(PATIENCE)?;
        if seqno >= assigned {
            return Some((limit, seqno));
        }
        let visible = commit.visible_seqno();
        if visible < assigned {
            return None;
        }
        let view = self.read_view(commit.read_seqno(Some(visible))).ok()?;
        let base = match (self.floors().limit_at(end, ks, view.seqno), from) {
            (Some(l), _) if end.depth(&l, &limit) != Order::Less => return None,
            (Some(l), _) => end.start_at(l),
            (None, Start::Edge) => end.edge(ks),
            (None, Start::Limit) => return None,
        };
        let (lower, upper) = match end {
            End::Front => (base, Bound::Excluded(limit.clone())),
            End::Back => (Bound::Included(limit.clone()), base),
        };
        let mut cursor = Cursor::new(
            self.merged(&view),
            view.seqno,
            lower,
            upper,
            Arc::clone(&self.merge_operator),
        )
        .keys_only();
        let first = match end {
            End::Front => cursor.next_forward(),
            End::Back => cursor.next_backward(),
        };
        match first {
            None => Some((limit, view.seqno)),
            Some(Ok((tk, _))) => Some((end.keeping(tk), view.seqno)),
            Some(Err(_)) => None,
        }
    }
}

#[cfg(test)]
#[path = "floor_tests.rs"]
mod tests;
