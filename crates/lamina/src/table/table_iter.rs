//! The two-level iterator over a table: index block, then data blocks
//! ([`Table::iter`] makes one).

use super::block::BlockIter;
use super::readahead::Readahead;
use super::reader::Table;
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use std::sync::Arc;

/// A cursor over a whole table: the index block leads to data blocks.
///
/// Owns an `Arc<Table>` (it is `Send + 'static`). The first error (a damaged
/// block, a failed read) makes it invalid for good: `status` returns the
/// error and later positioning calls do nothing.
pub struct TableIter {
    table: Arc<Table>,
    index: BlockIter,
    /// The data block of the index entry `index` is on, if loaded.
    data: Option<BlockIter>,
    err: Option<Error>,
    /// Whether blocks read from the file go into the block cache.
    fill_cache: bool,
    /// What to ask the operating system to read ahead.
    ahead: Readahead,
}

impl std::fmt::Debug for TableIter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableIter")
            .field("table", &self.table.path())
            .field("valid", &self.valid())
            .field("err", &self.err)
            .finish_non_exhaustive()
    }
}

impl Table {
    /// An iterator over the table, positioned nowhere. It holds the table
    /// alive and may outlive this borrow; it is `Send + 'static`.
    pub fn iter(self: &Arc<Table>) -> TableIter {
        TableIter::new(Arc::clone(self), true)
    }

    /// Like [`Table::iter`], but blocks read from the file are not added to
    /// the block cache (for compactions, which read each block once and would
    /// otherwise push out what readers use).
    pub fn iter_uncached(self: &Arc<Table>) -> TableIter {
        TableIter::new(Arc::clone(self), false)
    }
}

impl TableIter {
    /// An iterator over `table`, positioned nowhere.
    fn new(table: Arc<Table>, fill_cache: bool) -> TableIter {
        let index = table.index_block().iter();
        // A compaction's iterator is the one that does not fill the cache.
        let ahead = if fill_cache {
            Readahead::for_scans()
        } else {
            Readahead::for_compaction()
        };
        TableIter {
            table,
            index,
            data: None,
            err: None,
            fill_cache,
            ahead,
        }
    }

    #[cfg(any(test, feature = "internals"))]
    /// The table iterated over.
    pub fn table(&self) -> &Arc<Table> {
        &self.table
    }

    fn set_error(&mut self, e: Error) {
        if self.err.is_none() {
            self.err = Some(e);
        }
        self.data = None;
    }

    /// Points `data` at the block of the index entry `index` is on (keeping
    /// it if already loaded); false when there is none or it cannot be read.
    fn load_data_block(&mut self) -> bool {
        if !self.index.valid() {
            if let Err(e) = self.index.status() {
                self.set_error(e);
            }
            self.data = None;
            return false;
        }
        let loaded = self
            .table
            .handle_of(self.index.value())
            .and_then(|h| match &self.data {
                Some(d) if d.block().offset() == h.offset => Ok(None),
                _ => {
                    let end = h.end_with_trailer().unwrap_or(u64::MAX);
                    if let Some((from, len)) = self.ahead.step(h.offset, end) {
                        self.table.will_need(from, len);
                    }
                    self.table.data_block_filling(h, self.fill_cache).map(Some)
                }
            });
        match loaded {
            Ok(Some(block)) => match &mut self.data {
                Some(d) => d.reset(block),
                None => self.data = Some(BlockIter::new(block)),
            },
            Ok(None) => {}
            Err(e) => {
                self.set_error(e);
                return false;
            }
        }
        true
    }

    /// Moves forward over exhausted data blocks to the next entry.
    fn skip_forward(&mut self) {
        while let Some(d) = &self.data {
            if d.valid() {
                return;
            }
            if let Err(e) = d.status() {
                return self.set_error(e);
            }
            self.index.next();
            if !self.load_data_block() {
                return;
            }
            if let Some(d) = &mut self.data {
                d.seek_to_first();
            }
        }
    }

    /// Moves backward over exhausted data blocks to the previous entry.
    fn skip_backward(&mut self) {
        while let Some(d) = &self.data {
            if d.valid() {
                return;
            }
            if let Err(e) = d.status() {
                return self.set_error(e);
            }
            self.index.prev();
            if !self.load_data_block() {
                return;
            }
            if let Some(d) = &mut self.data {
                d.seek_to_last();
            }
        }
    }

    /// Loads the block of the current index entry and positions in it.
    fn position(&mut self, f: impl FnOnce(&mut BlockIter)) {
        if self.load_data_block() {
            if let Some(d) = &mut self.data {
                f(d);
            }
        }
    }
}

impl InternalIterator for TableIter {
    fn valid(&self) -> bool {
        self.err.is_none() && self.data.as_ref().is_some_and(|d| d.valid())
    }

    fn seek_to_first(&mut self) {
        if self.err.is_none() {
            self.index.seek_to_first();
            self.position(|d| d.seek_to_first());
            self.skip_forward();
        }
    }

    fn seek_to_last(&mut self) {
        if self.err.is_none() {
            self.index.seek_to_last();
            self.position(|d| d.seek_to_last());
            self.skip_backward();
        }
    }

    fn seek(&mut self, target: &[u8]) {
        if self.err.is_none() {
            self.index.seek(target);
            self.position(|d| d.seek(target));
            self.skip_forward();
        }
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        if self.err.is_some() {
            return;
        }
        // The first block whose last key is >= target holds the answer, or
        // the block before it does; past every block, the last one does.
        self.index.seek(target);
        if !self.index.valid() && self.index.status().is_ok() {
            self.index.seek_to_last();
        }
        self.position(|d| d.seek_for_prev(target));
        self.skip_backward();
    }

    fn next(&mut self) {
        if let (None, Some(d)) = (&self.err, &mut self.data) {
            if d.valid() {
                d.next();
                self.skip_forward();
            }
        }
    }

    fn prev(&mut self) {
        if let (None, Some(d)) = (&self.err, &mut self.data) {
            if d.valid() {
                d.prev();
                self.skip_backward();
            }
        }
    }

    fn key(&self) -> &[u8] {
        self.data.as_ref().map_or(&[], |d| d.key())
    }

    fn value(&self) -> &[u8] {
        self.data.as_ref().map_or(&[], |d| d.value())
    }

    fn status(&self) -> Result<()> {
        match &self.err {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}
