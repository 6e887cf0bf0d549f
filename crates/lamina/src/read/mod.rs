//! The read subsystem: the view published to readers (memtables and
//! version, swapped atomically by writers and background threads), point
//! lookups through it (`point`; many keys at once: `many`), the table
//! handles a view keeps open (`table_handles`), the iterators, snapshots
//! and cursors users read with (`iter`, `snapshot`, `seek_cursor`;
//! `spare`: the cursor an iterator leaves to the next one), and each
//! keyspace's live floor and ceiling that iterators seek to (`floor`).

mod floor;
mod iter;
mod many;
mod merge_check;
mod point;
mod seek_cursor;
mod snapshot;
mod spare;
mod table_handles;
#[cfg(test)]
mod tests;

pub(crate) use floor::Floors;
pub use iter::Iter;

pub(crate) use iter::ReadView;
pub use point::Cached;
pub(crate) use point::{At, Pinned};
pub use seek_cursor::SeekCursor;
pub use snapshot::Snapshot;

use crate::blob::BlobStore;
use crate::cache::TableCache;
use crate::key::SeqNo;
use crate::merge::MergeOperator;
use crate::options::Options;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The read subsystem's state: the published view, the live snapshots and
/// the keyspaces' live floors and ceilings, over the open tables and blob
/// files it reads from.
pub(crate) struct Reads {
    /// Open tables, by file number (shared with the background work that
    /// writes them).
    tables: Arc<TableCache>,
    /// Open blob files, by file number.
    blobs: Arc<BlobStore>,
    /// Folds merge operands into values.
    merge_operator: Arc<dyn MergeOperator>,
    /// Whether iterators keep the keyspaces' live floors and ceilings (not
    /// on a read-only handle, whose view a writer elsewhere moves).
    keeps_limits: bool,
    /// The memtables and version of the tree state, published for
    /// lock-free reads.
    view: arc_swap::ArcSwapOption<Pinned>,
    /// Live snapshots: seqno -> count.
    snapshots: Mutex<BTreeMap<SeqNo, usize>>,
    /// Each keyspace's live floor and ceiling.
    floors: Floors,
    /// The cursor the last iterator over the published view left.
    spare: spare::SpareCursor,
}

impl Reads {
    /// The read subsystem of a handle opened with `opts`, over `tables`
    /// and `blobs`; nothing is published until the first
    /// [`Reads::publish`].
    pub(crate) fn new(tables: Arc<TableCache>, blobs: Arc<BlobStore>, opts: &Options) -> Reads {
        Reads {
            tables,
            blobs,
            merge_operator: Arc::clone(&opts.merge_operator),
            keeps_limits: !opts.read_only,
            view: Default::default(),
            snapshots: Default::default(),
            floors: Default::default(),
            spare: Default::default(),
        }
    }

    /// The keyspaces' live floors and ceilings: moved by every writer
    /// before it publishes, read and installed by iterators.
    #[inline]
    pub(crate) fn floors(&self) -> &Floors {
        &self.floors
    }

    /// Live snapshot seqnos, ascending.
    pub(crate) fn snapshot_list(&self) -> Vec<SeqNo> {
        self.snapshots.lock().keys().copied().collect()
    }

    /// Registers a snapshot at the seqno `at` returns, read under the
    /// registry's lock (so that no compaction sees the registry without
    /// it once the seqno is taken); returns the seqno.
    pub(crate) fn add_snapshot(&self, at: impl FnOnce() -> SeqNo) -> SeqNo {
        let mut snaps = self.snapshots.lock();
        let seqno = at();
        *snaps.entry(seqno).or_insert(0) += 1;
        seqno
    }

    /// Ends one snapshot at `seqno`.
    pub(crate) fn drop_snapshot(&self, seqno: SeqNo) {
        let mut snaps = self.snapshots.lock();
        if let Some(n) = snaps.get_mut(&seqno) {
            *n -= 1;
            if *n == 0 {
                snaps.remove(&seqno);
            }
        }
    }

    /// Drops the published view, for `close`: its table handles go with it,
    /// and the cursor kept over it.
    pub(crate) fn let_go(&self) {
        self.view.store(None);
        drop(self.spare.clear());
    }

    /// Lets go of the cursor kept over a view no longer published.
    pub(crate) fn drop_spare(&self) {
        drop(self.spare.clear());
    }

    /// The cursor an iterator over `pinned` left, if one is kept.
    pub(crate) fn spare_cursor(&self, pinned: &Arc<Pinned>) -> Option<crate::iter::Cursor> {
        self.spare.take(pinned)
    }

    /// Keeps `cursor`, over `pinned`, for the next iterator, if `pinned` is
    /// the published view and the cursor met no error.
    pub(crate) fn keep_cursor(&self, pinned: Arc<Pinned>, cursor: crate::iter::Cursor) {
        let published = |p: &Arc<Pinned>| {
            let view = self.view.load();
            view.as_ref().is_some_and(|v| Arc::ptr_eq(v, p))
        };
        drop(self.spare.keep(pinned, cursor, published));
    }
}
