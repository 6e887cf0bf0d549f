//! The cursor an iterator over the published view leaves behind, kept for
//! the next iterator over that view: a new iterator takes it and seeks it,
//! instead of building its merge (a child per memtable list and per level,
//! tables opened, blocks' cursors and buffers allocated) and dropping it
//! again when done. Short scans from random keys (a seek and ten entries)
//! spent an eighth of their instructions building and dropping those.
//!
//! One cursor is kept per database, over the view published when it was
//! left: publishing another view (a memtable switch, a flush, a
//! compaction, `close`) lets it go, so it never holds a memtable or table
//! the published view no longer lists. A thread finding it taken by
//! another builds its own.
//!
//! A cursor taken has the sources a new one would have: the view's
//! memtables, version and tables are the same, and only the active
//! memtable changes, by its writes (which its lists' cursors see, as any
//! cursor sees what is inserted after it was made, the seqno deciding)
//! and by the lists it adds and indexes: a cursor is taken only while it
//! reads the sources a new one would (the same lists and indexes of lists),
//! and an index it reads still holds every entry of its lists.

use super::point::Pinned;
use crate::iter::Cursor;
use parking_lot::Mutex;
use std::sync::Arc;

/// A slot for one cursor and the view it reads.
#[derive(Default)]
pub(crate) struct SpareCursor {
    slot: Mutex<Option<(Arc<Pinned>, Cursor)>>,
}

impl SpareCursor {
    /// The cursor kept over `pinned`, if one is (and no other thread holds
    /// the slot).
    pub fn take(&self, pinned: &Arc<Pinned>) -> Option<Cursor> {
        let mut slot = self.slot.try_lock()?;
        match slot.as_ref() {
            Some((p, c)) if Arc::ptr_eq(p, pinned) && reads_as_new(c, pinned) => {
                slot.take().map(|(_, c)| c)
            }
            _ => None,
        }
    }

    /// Keeps `cursor`, over `pinned`, if `published(pinned)` says that is
    /// the published view, unless it met an error or another thread holds
    /// the slot; what the slot held before is returned, to be dropped
    /// outside it. The view is asked with the slot held: a view published
    /// before the answer empties the slot after it (`clear`, once the
    /// view is stored), so no cursor over a view let go stays kept.
    pub fn keep(
        &self,
        pinned: Arc<Pinned>,
        cursor: Cursor,
        published: impl FnOnce(&Arc<Pinned>) -> bool,
    ) -> Option<(Arc<Pinned>, Cursor)> {
        if !cursor.healthy() {
            return None;
        }
        let mut slot = self.slot.try_lock()?;
        if !published(&pinned) {
            return None;
        }
        slot.replace((pinned, cursor))
    }

    /// Empties the slot; what it held is returned, to be dropped outside it.
    pub fn clear(&self) -> Option<(Arc<Pinned>, Cursor)> {
        self.slot.lock().take()
    }
}

/// Whether `cursor`'s memtable sources read what a new cursor's over
/// `pinned` would: the same lists and indexes of lists, in the same order,
/// each index still holding every entry of its lists.
fn reads_as_new(cursor: &Cursor, pinned: &Pinned) -> bool {
    let now = pinned.mems.iter().flat_map(|m| m.sources()).map(Some);
    cursor.memtable_sources().eq(now)
}
