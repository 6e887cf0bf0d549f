//! [`Source`]: one child of a reader's merge — a memtable list's cursor or
//! a level's tables (a level-0 table is a level of one) — held in place,
//! not boxed, so that making an iterator allocates no child and a merge
//! step calls its children directly.

use super::{InternalIterator, LevelIter};
use crate::error::Result;
use crate::memtable::MemtableIter;

/// One sorted source a reader merges.
// A memtable list's cursor is smaller than a level's; boxing the level
// would cost an allocation per level and iterator, which this type avoids.
#[allow(clippy::large_enum_variant)]
pub enum Source {
    /// One skip list of a memtable.
    Mem(MemtableIter),
    /// The tables of one level.
    Level(LevelIter),
}

impl InternalIterator for Source {
    #[inline]
    fn valid(&self) -> bool {
        match self {
            Source::Mem(i) => i.valid(),
            Source::Level(i) => i.valid(),
        }
    }
    fn seek_to_first(&mut self) {
        match self {
            Source::Mem(i) => i.seek_to_first(),
            Source::Level(i) => i.seek_to_first(),
        }
    }
    fn seek_to_last(&mut self) {
        match self {
            Source::Mem(i) => i.seek_to_last(),
            Source::Level(i) => i.seek_to_last(),
        }
    }
    fn seek(&mut self, target: &[u8]) {
        match self {
            Source::Mem(i) => i.seek(target),
            Source::Level(i) => i.seek(target),
        }
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        match self {
            Source::Mem(i) => i.seek_for_prev(target),
            Source::Level(i) => i.seek_for_prev(target),
        }
    }
    #[inline]
    fn next(&mut self) {
        match self {
            Source::Mem(i) => i.next(),
            Source::Level(i) => i.next(),
        }
    }
    #[inline]
    fn prev(&mut self) {
        match self {
            Source::Mem(i) => i.prev(),
            Source::Level(i) => i.prev(),
        }
    }
    #[inline]
    fn key(&self) -> &[u8] {
        match self {
            Source::Mem(i) => i.key(),
            Source::Level(i) => i.key(),
        }
    }
    #[inline]
    fn value(&self) -> &[u8] {
        match self {
            Source::Mem(i) => i.value(),
            Source::Level(i) => i.value(),
        }
    }
    fn status(&self) -> Result<()> {
        match self {
            Source::Mem(i) => i.status(),
            Source::Level(i) => i.status(),
        }
    }
}
