//! The live floor of each keyspace: a key below which no key has a value,
//! so that a forward iterator from the keyspace's start seeks there instead
//! of stepping over the tombstones of every key deleted before it (a work
//! queue popped from the front). Kept in memory only; a hint that is never
//! wrong (docs/design.md#the-live-floor).
//!
//! A floor `(K, S)` of keyspace `ks` says: at seqno `S`, no key of `ks`
//! below the tree key `K` had a value. Writers keep it true for later
//! seqnos: a write that gives a key below `K` a value (a Put, a Merge
//! operand, a blob pointer; a Delete gives none) lowers the floor to that
//! key before its seqno is published ([`Floors::wrote`], from the commit
//! path), and an ingest lowers it to its smallest key before its tables
//! are ([`Floors::ingest_begins`]). A forward iterator whose front starts
//! at or below the floor, at a seqno `R >= S`, reads the floor after taking
//! `R` and seeks to it ([`FloorWalk::start`]); the keys it skips are keys
//! without a value, so it yields the same. The first key it finds (or the
//! end of its range) becomes the new floor ([`Inner::install_floor`]), so
//! the next pop steps only over the tombstones since: amortized O(1).
//!
//! **Why a reader never misses a live key.** Say the slot holds `(K, S)`
//! and a reader, having loaded `R >= S` from the visible seqno, reads it.
//! At `S` no key below `K` had a value: the installer found `K` as the
//! first live key at `S` (from the keyspace's start, or from a floor it
//! read the same way). Take a write `w` giving a key `k < K` a value, with
//! `S < seqno(w) <= R`. It was published before the reader loaded `R`, so
//! its floor check came before the reader's read of the slot. If it checked
//! after the install, it lowered the floor to `k` or below. If before: the
//! installer marked the slot as recording, then read `A`, the last seqno
//! handed out, under the commit queue, and installs only at `S >= A`, with
//! every seqno up to `A` visible. `seqno(w) > S >= A`, so `w` took its
//! seqno under the queue after the installer let it go, and its check came
//! after the mark: it recorded `k`, and the installer installed at most
//! `k`. Either way the reader seeks to at most `k`. An ingest's entries are
//! handled alike: it lowers floors before publishing its tables, and no
//! floor is installed while one runs, nor by an iterator made before one
//! ended (its view may lack the tables).
//!
//! A writer that meets no floor and no install pays one relaxed load per
//! batch; a writer above a floor, one more and a comparison of the key's
//! first bytes ([`Slot::word`]). Floors are per slot (`ks % 64`), one
//! floor a slot; installing one for another keyspace of the slot replaces
//! it. Read-only handles keep none: a refresh publishes writes that never
//! passed a check.

use crate::db::Inner;
use crate::iter::Cursor;
use crate::key::{self, KeyspaceId, Kind, SeqNo, KEYSPACE_ID_LEN};
use parking_lot::Mutex;
use std::cmp::Ordering as Order;
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Slots of floors: keyspace `ks` uses slot `ks % SLOTS`.
const SLOTS: usize = 64;

/// In a slot's word: writers must take the slot's lock (an install is
/// recording the keys written, or the floor is a keyspace's end, which
/// every key of it is below).
const LOCK: u64 = 1;
/// In a slot's word: the slot holds a floor.
const FLOOR: u64 = 2;

/// Entries a forward iterator must have stepped over before its first key
/// for that key to become the floor: a scan of a keyspace whose front holds
/// no tombstones installs nothing, and writers pay nothing for it.
const MIN_STEPS: u64 = 32;

/// How long an install waits for the commit queue before giving up.
const PATIENCE: Duration = Duration::from_micros(100);

/// The floors of every keyspace (see the module doc).
pub(crate) struct Floors {
    slots: [Slot; SLOTS],
    /// Slots whose word is not zero: a writer that reads zero checks nothing.
    busy: AtomicUsize,
    /// Ingests between [`Floors::ingest_begins`] and the end of its guard.
    ingests: AtomicUsize,
    /// Ingests ended; an iterator made before one ended installs nothing.
    ingests_ended: AtomicU64,
}

#[derive(Default)]
struct Slot {
    /// What a writer reads without the lock: [`LOCK`] and [`FLOOR`], and in
    /// bits 8 to 63 the first 7 bytes of the floor's user key (zero-padded,
    /// big-endian). A key whose first 7 bytes are greater is above the
    /// floor. Stored only under `state`'s lock, from the state.
    word: AtomicU64,
    state: Mutex<SlotState>,
}

#[derive(Default)]
struct SlotState {
    floor: Option<Floor>,
    /// Installs under way.
    recorders: u32,
    /// The smallest tree key given a value since `recorders` last rose
    /// from zero.
    low: Option<Vec<u8>>,
}

struct Floor {
    ks: KeyspaceId,
    /// A tree key: of `ks`, or the first of the next keyspace (`ks` empty).
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

    /// Whether any floor is kept or installed: if not, a writer checks
    /// nothing. One relaxed load.
    #[inline]
    pub(crate) fn watched(&self) -> bool {
        self.busy.load(Ordering::Relaxed) != 0
    }

    /// Lowers the floor of keyspace `ks` below `user_key` if the write
    /// gives that key a value (records it for an install under way). A
    /// writer calls it, when [`Floors::watched`], for each key of its batch
    /// once its seqnos are taken and before they are published.
    pub(crate) fn wrote(&self, ks: KeyspaceId, user_key: &[u8], kind: Kind) {
        if kind == Kind::Delete {
            return;
        }
        let slot = self.slot(ks);
        let word = slot.word.load(Ordering::Relaxed);
        if word == 0 || (word & LOCK == 0 && head(user_key) > word >> 8) {
            return;
        }
        let mut st = slot.state.lock();
        let below = |tk: &[u8]| cmp_tree(ks, user_key, tk) == Order::Less;
        if st.recorders > 0 && st.low.as_deref().is_none_or(below) {
            st.low = Some(key::tree_key(ks, user_key));
        }
        if let Some(f) = st.floor.as_mut() {
            if f.ks == ks && below(&f.key) {
                f.key = key::tree_key(ks, user_key);
            }
        }
        self.settle(slot, &mut st);
    }

    /// The floor of keyspace `ks` for a reader at `seqno`, who took `seqno`
    /// before this call: every key below it is without a value there.
    pub(crate) fn floor_at(&self, ks: KeyspaceId, seqno: SeqNo) -> Option<Vec<u8>> {
        let slot = self.slot(ks);
        if slot.word.load(Ordering::Relaxed) & FLOOR == 0 {
            return None;
        }
        let st = slot.state.lock();
        st.floor
            .as_ref()
            .filter(|f| f.ks == ks && f.seqno <= seqno)
            .map(|f| f.key.clone())
    }

    /// An ingest is about to publish tables whose keys start at the tree
    /// keys `smallest`: floors above them are lowered, and none is
    /// installed until the guard returned is dropped (after the ingest's
    /// seqnos are visible, or it failed).
    pub(crate) fn ingest_begins<'a>(
        &self,
        smallest: impl IntoIterator<Item = &'a [u8]>,
    ) -> IngestGuard<'_> {
        self.ingests.fetch_add(1, Ordering::SeqCst);
        for tk in smallest {
            let ks = key::keyspace_of(tk);
            let slot = self.slot(ks);
            let mut st = slot.state.lock();
            if let Some(f) = st.floor.as_mut() {
                if f.ks == ks && tk < f.key.as_slice() {
                    f.key = tk.to_vec();
                }
            }
            self.settle(slot, &mut st);
        }
        IngestGuard { floors: self }
    }

    /// Forgets the floor of a dropped keyspace.
    pub(crate) fn forget(&self, ks: KeyspaceId) {
        let slot = self.slot(ks);
        let mut st = slot.state.lock();
        if st.floor.as_ref().is_some_and(|f| f.ks == ks) {
            st.floor = None;
        }
        self.settle(slot, &mut st);
    }

    /// The count of ended ingests, read by an iterator before its view.
    fn ingests_ended(&self) -> u64 {
        self.ingests_ended.load(Ordering::Acquire)
    }

    /// An install begins: writers from now on record what they write.
    fn mark(&self, ks: KeyspaceId) {
        let slot = self.slot(ks);
        let mut st = slot.state.lock();
        if st.recorders == 0 {
            st.low = None;
        }
        st.recorders += 1;
        self.settle(slot, &mut st);
    }

    /// An install ends, installing `found` (a floor key and its seqno) —
    /// lowered to the smallest key recorded since the mark — unless an
    /// ingest runs or ended since `ended` (the count the iterator read), or
    /// the slot's floor is already as good.
    fn unmark(&self, ks: KeyspaceId, found: Option<(Vec<u8>, SeqNo)>, ended: u64) {
        let slot = self.slot(ks);
        let mut st = slot.state.lock();
        st.recorders = st.recorders.saturating_sub(1);
        // Acquire: an ingest that ended is seen with its count of ends.
        let ingest = self.ingests.load(Ordering::Acquire) > 0
            || self.ingests_ended.load(Ordering::Relaxed) != ended;
        if let (Some((mut key, seqno)), false) = (found, ingest) {
            if let Some(low) = st.low.as_ref().filter(|low| **low < key) {
                key = low.clone();
            }
            let kept = st
                .floor
                .as_ref()
                .is_some_and(|f| f.ks == ks && f.key >= key && f.seqno <= seqno);
            if !kept {
                st.floor = Some(Floor { ks, key, seqno });
            }
        }
        self.settle(slot, &mut st);
    }

    /// Drops a floor that says nothing (at its keyspace's first key or
    /// below) and stores the slot's word. REQUIRES: `st` is `slot`'s state,
    /// locked.
    fn settle(&self, slot: &Slot, st: &mut SlotState) {
        if st
            .floor
            .as_ref()
            .is_some_and(|f| f.key.as_slice() <= f.ks.to_be_bytes().as_slice())
        {
            st.floor = None;
        }
        let mut word = 0;
        if st.recorders > 0 {
            word |= LOCK;
        }
        if let Some(f) = &st.floor {
            word |= FLOOR;
            match f.key.split_at_checked(KEYSPACE_ID_LEN) {
                Some((id, user_key)) if id == f.ks.to_be_bytes().as_slice() => {
                    word |= head(user_key) << 8;
                }
                _ => word |= LOCK,
            }
        }
        let old = slot.word.load(Ordering::Relaxed);
        if (old == 0) != (word == 0) {
            if word == 0 {
                self.busy.fetch_sub(1, Ordering::Relaxed);
            } else {
                self.busy.fetch_add(1, Ordering::Relaxed);
            }
        }
        slot.word.store(word, Ordering::Relaxed);
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

/// Where a forward iterator's walk started: what is known below it.
#[derive(Clone, Copy)]
pub(crate) enum Start {
    /// The keyspace's first key: nothing is below.
    KeyspaceStart,
    /// The keyspace's floor.
    Floor,
}

/// A forward iterator's part in its keyspace's floor: where its front
/// cursor starts, and the floor it installs once it finds its first key.
pub(crate) struct FloorWalk {
    /// The keyspace and the count of ended ingests, read before the
    /// iterator's view; `None` when floors are off (a read-only handle).
    watch: Option<(KeyspaceId, u64)>,
    /// Set while the front's first key may become the floor.
    from: Option<Start>,
}

impl FloorWalk {
    /// The walk of an iterator whose range starts at `lower`. REQUIRES: it is
    /// called before the iterator's view is taken.
    pub(crate) fn watch(inner: &Inner, lower: &Bound<Vec<u8>>) -> FloorWalk {
        let watch = match lower {
            Bound::Included(l) | Bound::Excluded(l)
                if !inner.opts().read_only && l.len() >= KEYSPACE_ID_LEN =>
            {
                Some((key::keyspace_of(l), inner.reads().floors().ingests_ended()))
            }
            _ => None,
        };
        FloorWalk { watch, from: None }
    }

    /// Where the front cursor of an iterator over `lower..`, at `seqno`,
    /// starts: the keyspace's floor if it is above `lower`, else `lower`.
    pub(crate) fn start(
        &mut self,
        inner: &Inner,
        lower: &Bound<Vec<u8>>,
        seqno: SeqNo,
    ) -> Bound<Vec<u8>> {
        let Some((ks, _)) = self.watch else {
            return lower.clone();
        };
        let floor = inner.reads().floors().floor_at(ks, seqno);
        match (lower, floor) {
            (Bound::Included(l), Some(k)) if k >= *l => {
                self.from = Some(Start::Floor);
                Bound::Included(k)
            }
            (Bound::Excluded(l), Some(k)) if k > *l => {
                self.from = Some(Start::Floor);
                Bound::Included(k)
            }
            (Bound::Included(l), _) if l.as_slice() == ks.to_be_bytes().as_slice() => {
                self.from = Some(Start::KeyspaceStart);
                lower.clone()
            }
            _ => lower.clone(),
        }
    }

    /// The front cursor's first answer `item`, found at `seqno` after
    /// stepping over `stepped` entries within `..upper`: the key it names,
    /// or the end of the range when it names none, becomes the floor.
    pub(crate) fn found(
        &mut self,
        inner: &Inner,
        seqno: SeqNo,
        item: &Option<crate::Result<(Vec<u8>, Vec<u8>)>>,
        stepped: u64,
        upper: &Bound<Vec<u8>>,
    ) {
        let (Some(from), Some((ks, ended))) = (self.from.take(), self.watch) else {
            return;
        };
        if stepped < MIN_STEPS {
            return;
        }
        let key = match (item, upper) {
            (Some(Ok((tk, _))), _) => tk.clone(),
            (None, Bound::Excluded(u)) => u.clone(),
            (None, Bound::Included(u)) => {
                let mut k = u.clone();
                k.push(0);
                k
            }
            _ => return,
        };
        inner.install_floor(ks, key, seqno, from, ended);
    }
}

impl Inner {
    /// Installs `key` as the floor of keyspace `ks`: the first live key a
    /// forward walk from `from` found at `seqno` (see the module doc).
    fn install_floor(&self, ks: KeyspaceId, key: Vec<u8>, seqno: SeqNo, from: Start, ended: u64) {
        let floors = self.reads().floors();
        floors.mark(ks);
        let found = self.floor_seqno(ks, key, seqno, from);
        floors.unmark(ks, found, ended);
    }

    /// The floor to install and its seqno, at least the last seqno handed
    /// out after the mark: the walk's own if its seqno is that recent, else
    /// the first live key below `key` (or `key`) walking again at the
    /// visible seqno from the floor there. `None`: nothing to install.
    fn floor_seqno(
        &self,
        ks: KeyspaceId,
        key: Vec<u8>,
        seqno: SeqNo,
        from: Start,
    ) -> Option<(Vec<u8>, SeqNo)> {
        let assigned = self.commit().last_assigned(PATIENCE)?;
        if seqno >= assigned {
            return Some((key, seqno));
        }
        let visible = self.commit().visible_seqno();
        if visible < assigned {
            return None;
        }
        let view = self.read_view(Some(visible));
        let base = match (self.reads().floors().floor_at(ks, view.seqno), from) {
            (Some(f), _) if f >= key => return None,
            (Some(f), _) => f,
            (None, Start::KeyspaceStart) => key::tree_key(ks, b""),
            (None, Start::Floor) => return None,
        };
        let mut cursor = Cursor::new(
            self.merged(&view),
            view.seqno,
            Bound::Included(base),
            Bound::Excluded(key.clone()),
            Arc::clone(&self.opts().merge_operator),
        )
        .keys_only();
        match cursor.next_forward() {
            None => Some((key, view.seqno)),
            Some(Ok((first, _))) => Some((first, view.seqno)),
            Some(Err(_)) => None,
        }
    }
}

#[cfg(test)]
#[path = "floor_tests.rs"]
mod tests;
