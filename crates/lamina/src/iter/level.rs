//! Concatenates the tables of one level ≥ 1 (sorted, non-overlapping),
//! opening each table only when the cursor reaches it; a level-0 table is
//! read as a level of one.

use super::InternalIterator;
use crate::cache::TableCache;
use crate::error::{Error, Result};
use crate::key;
use crate::manifest::{FileMeta, Version};
use crate::table::TableIter;
use std::cmp::Ordering;
use std::ops::Range;
use std::sync::Arc;

/// The tables a [`LevelIter`] walks, in key order.
enum Files {
    /// Tables `from..to` of level `level` of a version, read from the
    /// version's own list (a reader's iterator copies no list).
    Listed {
        version: Arc<Version>,
        level: usize,
        from: usize,
        to: usize,
    },
    /// A list of its own (a compaction's inputs).
    Own(Vec<Arc<FileMeta>>),
}

impl Files {
    fn all(&self) -> &[Arc<FileMeta>] {
        match self {
            Files::Listed {
                version,
                level,
                from,
                to,
            } => version.level(*level).get(*from..*to).unwrap_or(&[]),
            Files::Own(files) => files,
        }
    }
}

/// Cursor over one level's tables.
pub struct LevelIter {
    files: Files,
    tables: Arc<TableCache>,
    index: usize,
    cur: Option<TableIter>,
    err: Option<Error>,
    fill_cache: bool,
}

impl LevelIter {
    /// REQUIRES: `files` sorted by key and non-overlapping.
    pub fn new(files: Vec<Arc<FileMeta>>, tables: Arc<TableCache>) -> LevelIter {
        LevelIter::over(Files::Own(files), tables)
    }

    /// Over the tables `range` of `level` of `version` (a level-0 table
    /// alone, or a whole deeper level), without copying the version's list.
    pub fn of_version(
        version: Arc<Version>,
        level: usize,
        range: Range<usize>,
        tables: Arc<TableCache>,
    ) -> LevelIter {
        let files = Files::Listed {
            version,
            level,
            from: range.start,
            to: range.end,
        };
        LevelIter::over(files, tables)
    }

    fn over(files: Files, tables: Arc<TableCache>) -> LevelIter {
        LevelIter {
            files,
            tables,
            index: 0,
            cur: None,
            err: None,
            fill_cache: true,
        }
    }

    /// Like [`LevelIter::new`], but blocks read from the files are not added
    /// to the block cache (for compactions).
    pub fn uncached(files: Vec<Arc<FileMeta>>, tables: Arc<TableCache>) -> LevelIter {
        LevelIter {
            fill_cache: false,
            ..LevelIter::new(files, tables)
        }
    }

    /// Opens table `index` (keeping its cursor if it is the one open, to
    /// be positioned again); false if there is none or it cannot be opened.
    fn open(&mut self, index: usize) -> bool {
        if index == self.index && self.cur.as_ref().is_some_and(|c| c.status().is_ok()) {
            return true;
        }
        self.index = index;
        self.cur = None;
        let Some(f) = self.files.all().get(index) else {
            return false;
        };
        match self.tables.get_listed(f) {
            Ok(t) => {
                self.cur = Some(if self.fill_cache {
                    t.iter()
                } else {
                    t.iter_uncached()
                });
                true
            }
            Err(e) => {
                self.err.get_or_insert(e);
                false
            }
        }
    }

    fn check_cur(&mut self) {
        if let Some(c) = &self.cur {
            if !c.valid() {
                if let Err(e) = c.status() {
                    self.err.get_or_insert(e);
                    self.cur = None;
                }
            }
        }
    }

    fn skip_forward(&mut self) {
        loop {
            self.check_cur();
            match &self.cur {
                Some(c) if c.valid() => return,
                None if self.err.is_some() => return,
                _ => {}
            }
            if self.index + 1 >= self.files.all().len() || !self.open(self.index + 1) {
                self.cur = None;
                return;
            }
            if let Some(c) = self.cur.as_mut() {
                c.seek_to_first();
            }
        }
    }

    fn skip_backward(&mut self) {
        loop {
            self.check_cur();
            match &self.cur {
                Some(c) if c.valid() => return,
                None if self.err.is_some() => return,
                _ => {}
            }
            if self.index == 0 || !self.open(self.index - 1) {
                self.cur = None;
                return;
            }
            if let Some(c) = self.cur.as_mut() {
                c.seek_to_last();
            }
        }
    }
}

impl InternalIterator for LevelIter {
    fn valid(&self) -> bool {
        self.cur.as_ref().is_some_and(|c| c.valid())
    }

    fn seek_to_first(&mut self) {
        if self.open(0) {
            if let Some(c) = self.cur.as_mut() {
                c.seek_to_first();
            }
        }
        self.skip_forward();
    }

    fn seek_to_last(&mut self) {
        if let Some(last) = self.files.all().len().checked_sub(1) {
            if self.open(last) {
                if let Some(c) = self.cur.as_mut() {
                    c.seek_to_last();
                }
            }
        } else {
            self.cur = None;
        }
        self.skip_backward();
    }

    fn seek(&mut self, target: &[u8]) {
        let files = self.files.all();
        let i = files.partition_point(|f| key::compare(&f.largest, target) == Ordering::Less);
        if i >= files.len() {
            self.cur = None;
            return;
        }
        if self.open(i) {
            if let Some(c) = self.cur.as_mut() {
                c.seek(target);
            }
        }
        self.skip_forward();
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        let i = self
            .files
            .all()
            .partition_point(|f| key::compare(&f.smallest, target) != Ordering::Greater);
        let Some(i) = i.checked_sub(1) else {
            self.cur = None;
            return;
        };
        if self.open(i) {
            if let Some(c) = self.cur.as_mut() {
                c.seek_for_prev(target);
            }
        }
        self.skip_backward();
    }

    fn next(&mut self) {
        if let Some(c) = self.cur.as_mut() {
            c.next();
        }
        self.skip_forward();
    }

    fn prev(&mut self) {
        if let Some(c) = self.cur.as_mut() {
            c.prev();
        }
        self.skip_backward();
    }

    fn key(&self) -> &[u8] {
        self.cur.as_ref().map(|c| c.key()).unwrap_or(&[])
    }

    fn value(&self) -> &[u8] {
        self.cur.as_ref().map(|c| c.value()).unwrap_or(&[])
    }

    fn status(&self) -> Result<()> {
        match &self.err {
            Some(e) => Err(e.clone()),
            None => self.cur.as_ref().map_or(Ok(()), |c| c.status()),
        }
    }
}
