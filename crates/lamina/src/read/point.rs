//! Point lookups: the value of one key, or whether it exists, read from the
//! pinned memtables and tables without copying the value on the way.
//!
//! A lookup pins the published [`Pinned`] view (an atomic load, no lock),
//! searches the memtables that hold anything, newest first, then level-0
//! tables newest first, then the one table per deeper level whose range holds
//! the key, consulting each table's filter first. It stops at the first Put
//! or Delete; Merge operands met on the way are folded onto it. An existence
//! check stops at the first entry of any kind: a key whose newest entry is a
//! Merge operand exists, and no operand is applied.

use super::table_handles::TableHandles;
use super::Reads;
use crate::blob::LazyValue;
use crate::cache::Count;
use crate::error::{Error, Result};
use crate::key::{self, InternalKey, KeyspaceId, Kind, SeqNo};
use crate::manifest::{FileMeta, Version, NUM_LEVELS};
use crate::memtable::Memtable;
use crate::merge::MergeOperator;
use crate::table::{Probe, Table};
use std::sync::Arc;

/// What readers pin: the memtables (newest first) and the current version.
///
/// Published atomically by whoever changes the memtables or the version,
/// while holding the state lock; readers load it without a lock.
pub(crate) struct Pinned {
    pub mems: Vec<Arc<Memtable>>,
    pub version: Arc<Version>,
    /// Counts the versions published (1 for the first); rows of the row
    /// cache belong to one. 0 for a view not published (it uses no rows).
    pub generation: u64,
    /// The largest seqno in any table of `version`: only a read at or
    /// above it sees the tables' newest entries, and may fill rows.
    pub tables_seqno: SeqNo,
    /// The tables of `version` point reads have opened.
    pub handles: TableHandles,
}

impl Pinned {
    /// `earlier`: the view published before, whose table handles are
    /// shared if its version is `st`'s; `most`: the table cache's capacity.
    fn of(st: &crate::db::State, generation: u64, earlier: Option<&Pinned>, most: usize) -> Pinned {
        let mut mems = Vec::with_capacity(1 + st.imm.len());
        mems.push(Arc::clone(&st.mem));
        mems.extend(st.imm.iter().rev().cloned());
        let tables_seqno = st
            .version
            .all_files()
            .map(|(_, f)| f.largest_seqno)
            .max()
            .unwrap_or(0);
        let handles = match earlier {
            Some(e) if Arc::ptr_eq(&e.version, &st.version) => e.handles.clone(),
            _ => TableHandles::new(&st.version, most),
        };
        Pinned {
            mems,
            version: Arc::clone(&st.version),
            generation,
            tables_seqno,
            handles,
        }
    }
}

/// The entries of one key seen so far, newest first, and what the caller
/// wants made of them.
struct Point<'k, F, R> {
    /// The key's tree key (keyspace id and user key), for errors.
    tree_key: &'k [u8],
    user_key: &'k [u8],
    /// Stop at the first entry of any kind (an existence check).
    exists_only: bool,
    /// Merge operands met so far, newest first.
    operands: Vec<Vec<u8>>,
    f: Option<F>,
    out: Option<Result<Option<R>>>,
    /// The pointer of a value in a blob file the key was decided by (its
    /// newest Put-like entry), not yet read.
    blob: Option<Vec<u8>>,
}

impl<F: FnOnce(&[u8]) -> R, R> Point<'_, F, R> {
    /// Takes in the next older entry; true once the key is decided.
    fn see(&mut self, kind: Kind, value: &[u8], op: &dyn MergeOperator) -> bool {
        let out = match kind {
            Kind::Merge if !self.exists_only => {
                self.operands.push(value.to_vec());
                return false;
            }
            Kind::Merge => Ok(self.give(&[])),
            Kind::Put if self.operands.is_empty() => Ok(self.give(value)),
            Kind::Put => self.fold(Some(value), op),
            Kind::Delete if self.operands.is_empty() => Ok(None),
            Kind::Delete => self.fold(None, op),
            Kind::Blob if self.exists_only => Ok(self.give(&[])),
            Kind::Blob => {
                self.blob = Some(value.to_vec());
                return true;
            }
        };
        self.out = Some(out);
        true
    }

    fn give(&mut self, value: &[u8]) -> Option<R> {
        self.f.take().map(|f| f(value))
    }

    fn fold(&mut self, base: Option<&[u8]>, op: &dyn MergeOperator) -> Result<Option<R>> {
        let operands: Vec<&[u8]> = self.operands.iter().rev().map(Vec::as_slice).collect();
        let value = op
            .full_merge(self.user_key, base, &operands)
            .map_err(|why| crate::merge::merge_error(self.tree_key, &why))?;
        Ok(self.give(&value))
    }

    fn finish(&mut self, op: &dyn MergeOperator) -> Result<Option<R>> {
        if let Some(out) = self.out.take() {
            return out;
        }
        if self.operands.is_empty() {
            return Ok(None);
        }
        self.fold(None, op)
    }
}

/// What a point lookup is asked for.
#[derive(Clone, Copy)]
pub(super) struct Lookup {
    /// Stop at the first entry of any kind (an existence check).
    exists_only: bool,
    /// Never read from the disk.
    cached_only: bool,
    /// With `cached_only`: a value in a blob file whose file is open goes to
    /// the caller unread (for it to read); without, only one kept in memory.
    unread_blobs: bool,
}

impl Lookup {
    pub(super) const VALUE: Lookup = Lookup {
        exists_only: false,
        cached_only: false,
        unread_blobs: false,
    };
    pub(super) const CACHED_VALUE: Lookup = Lookup {
        exists_only: false,
        cached_only: true,
        unread_blobs: false,
    };
    pub(super) const EXISTS: Lookup = Lookup {
        exists_only: true,
        cached_only: false,
        unread_blobs: false,
    };
    pub(super) const CACHED_LAZY: Lookup = Lookup {
        exists_only: false,
        cached_only: true,
        unread_blobs: true,
    };
    pub(super) const CACHED_EXISTS: Lookup = Lookup {
        exists_only: true,
        cached_only: true,
        unread_blobs: false,
    };
}

/// The answer of a lookup that was asked not to wait for the disk
/// ([`NonBlocking::try_get_with`](crate::binding::NonBlocking::try_get_with),
/// [`NonBlocking::try_contains_key`](crate::binding::NonBlocking::try_contains_key)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cached<T> {
    /// Answered from memory: the memtables, open tables and cached blocks.
    Answered(T),
    /// The answer needs a read from the disk; ask the call that may wait.
    NeedsIo,
}

/// What a table said about the key.
enum Step {
    /// The table's entry at the target belongs to another key.
    Elsewhere,
    /// An entry of the key was seen; the key is decided if true.
    Seen(bool),
    /// The table's entry has a malformed internal key of this many bytes.
    Malformed(usize),
}

/// The seqno a read is as of, taken from the commit subsystem
/// (`Commit::read_seqno`) before the view is loaded, so that every write it
/// covers is in the view; `now` if it is now's (the caller named none).
#[derive(Clone, Copy)]
pub(crate) struct At {
    pub seqno: SeqNo,
    pub now: bool,
}

impl Reads {
    /// Pins the published memtables and version (see [`Pinned`]); fails
    /// with [`Error::Closed`] once `close` has let go of them.
    pub(crate) fn pinned(&self) -> Result<Arc<Pinned>> {
        self.view.load_full().ok_or(Error::Closed)
    }

    /// Publishes the memtables and version of `st` to readers.
    /// REQUIRES: `st` is the guarded state, still locked, just changed.
    pub(crate) fn publish(&self, st: &crate::db::State) {
        let earlier = self.view.load();
        let generation = match earlier.as_ref() {
            Some(p) if Arc::ptr_eq(&p.version, &st.version) => p.generation,
            Some(p) => p.generation + 1,
            None => 1,
        };
        let most = self.tables.capacity();
        let pinned = Pinned::of(st, generation, earlier.as_deref(), most);
        drop(earlier);
        self.view.store(Some(Arc::new(pinned)));
        // The cursor kept over the view before holds it no longer.
        self.drop_spare();
    }

    /// Calls `f` with the value of `user_key` in keyspace `ks` as of `at`,
    /// borrowed from the memtable or the cached block, and
    /// returns what it returns; `None` if the key has no value.
    pub(crate) fn get_with<R>(
        &self,
        ks: KeyspaceId,
        user_key: &[u8],
        at: At,
        f: impl FnOnce(&[u8]) -> R,
    ) -> Result<Option<R>> {
        answered(self.point(ks, user_key, at, Lookup::VALUE, f, |v, f| {
            Ok(f(&v.into_vec()?))
        })?)
    }

    /// The value of `user_key` in keyspace `ks` as of `at`; a value in a
    /// blob file is returned unread.
    pub(crate) fn get_lazy_value(
        &self,
        ks: KeyspaceId,
        user_key: &[u8],
        at: At,
    ) -> Result<Option<crate::blob::LazyValue>> {
        let inline = |v: &[u8]| crate::blob::LazyValue::inline(v.to_vec());
        answered(self.point(ks, user_key, at, Lookup::VALUE, inline, |v, _| Ok(v))?)
    }

    /// Like [`Reads::get_with`], but without reading from the disk: a
    /// lookup that would need to says [`Cached::NeedsIo`] (and `f` may then
    /// have been dropped without being called).
    pub(crate) fn try_get_with<R>(
        &self,
        ks: KeyspaceId,
        user_key: &[u8],
        at: At,
        f: impl FnOnce(&[u8]) -> R,
    ) -> Result<Cached<Option<R>>> {
        // A value in a blob file needs the disk unless it is kept in memory:
        // `settle` hands only a kept one here, and answers NeedsIo before it
        // would read one. Never empty bytes in place of a value.
        self.counted(
            self.point(ks, user_key, at, Lookup::CACHED_VALUE, f, |v, f| {
                match v.in_memory() {
                    Some(bytes) => Ok(f(bytes)),
                    None => Err(Error::InvalidArgument(
                        "a lookup that may not wait reached a value in a blob file".into(),
                    )),
                }
            }),
        )
    }

    /// [`Reads::try_get_with`], except that a value in a blob file goes to
    /// `blob` unread, as a [`LazyValue`], if it is kept in memory or its
    /// file is open (NeedsIo otherwise): the caller reads it, once, with
    /// no second lookup.
    pub(crate) fn try_get_with_lazy<R>(
        &self,
        ks: KeyspaceId,
        user_key: &[u8],
        at: At,
        f: impl FnOnce(&[u8]) -> R,
        blob: impl FnOnce(LazyValue) -> R,
    ) -> Result<Cached<Option<R>>> {
        self.counted(self.point(ks, user_key, at, Lookup::CACHED_LAZY, f, |v, _| Ok(blob(v))))
    }

    /// Whether `user_key` has a value in keyspace `ks` as of `at`; stops
    /// at its newest entry (see the module doc).
    pub(crate) fn contains(&self, ks: KeyspaceId, user_key: &[u8], at: At) -> Result<bool> {
        // An existence check stops at a blob pointer without reading it.
        let found = self.point(
            ks,
            user_key,
            at,
            Lookup::EXISTS,
            |_: &[u8]| (),
            |_, _| Ok(()),
        )?;
        Ok(answered(found)?.is_some())
    }

    /// Like [`Reads::contains`] now, but without reading from the disk.
    pub(crate) fn try_contains(
        &self,
        ks: KeyspaceId,
        user_key: &[u8],
        at: At,
    ) -> Result<Cached<bool>> {
        Ok(
            match self.counted(self.point(
                ks,
                user_key,
                at,
                Lookup::CACHED_EXISTS,
                |_: &[u8]| (),
                |_, _| Ok(()),
            ))? {
                Cached::Answered(v) => Cached::Answered(v.is_some()),
                Cached::NeedsIo => Cached::NeedsIo,
            },
        )
    }

    /// The lookup behind every point read: `exists_only` stops at the first
    /// entry, `cached_only` never reads from the disk. Counts the lookup,
    /// unless `cached_only`: such a lookup may need the disk and not answer,
    /// and its caller then asks again; its wrappers count it once answered
    /// ([`Reads::counted`]).
    fn point<F: FnOnce(&[u8]) -> R, R>(
        &self,
        ks: KeyspaceId,
        user_key: &[u8],
        at: At,
        lookup: Lookup,
        f: F,
        on_blob: impl FnOnce(crate::blob::LazyValue, F) -> Result<R>,
    ) -> Result<Cached<Option<R>>> {
        check_key_len(user_key)?;
        let guard = self.view.load();
        let Some(pinned) = guard.as_ref() else {
            return Err(Error::Closed);
        };
        if !lookup.cached_only {
            self.tables.block_cache().count(Count::Lookup, 1);
        }
        self.point_in(pinned, at, ks, user_key, lookup, f, on_blob)
    }

    /// `found`, the answer of a lookup not allowed to read, counted as a
    /// point lookup if it answered.
    #[inline]
    fn counted<T>(&self, found: Result<Cached<T>>) -> Result<Cached<T>> {
        if let Ok(Cached::Answered(_)) = found {
            self.tables.block_cache().count(Count::Lookup, 1);
        }
        found
    }

    /// [`Reads::point`] in the view `pinned`, as of `at`.
    /// REQUIRES: `user_key` passed [`check_key_len`].
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) fn point_in<F: FnOnce(&[u8]) -> R, R>(
        &self,
        pinned: &Pinned,
        at: At,
        ks: KeyspaceId,
        user_key: &[u8],
        lookup: Lookup,
        f: F,
        on_blob: impl FnOnce(crate::blob::LazyValue, F) -> Result<R>,
    ) -> Result<Cached<Option<R>>> {
        let Lookup {
            exists_only,
            cached_only,
            ..
        } = lookup;
        let target = seek_target(ks, user_key, at.seqno);
        let tk_len = target.0.len() - key::TRAILER_LEN;
        let tk = target.0.get(..tk_len).unwrap_or(&[]);
        let op = self.merge_operator.as_ref();
        let mut point = Point {
            tree_key: tk,
            user_key,
            exists_only,
            operands: Vec::new(),
            f: Some(f),
            out: None,
            blob: None,
        };
        if decided_in_memtables(&pinned.mems, tk, &target, &mut point, op) {
            return self.settle(&mut point, op, lookup, on_blob);
        }
        let rows = self.tables.rows();
        // One hash of the key serves every table's filter and block hash
        // index, and the row cache's doorkeeper (not computed for a key
        // the memtables answer).
        let hash = crate::table::key_hash(tk);
        let use_rows = self.asks_rows(pinned, at, point.operands.is_empty(), hash);
        if use_rows {
            if let Some((kind, v)) = rows.get(tk, hash, pinned.generation) {
                point.see(kind, &v, op);
                return self.settle(&mut point, op, lookup, on_blob);
            }
        }
        for (level, i, f) in tables_for(&pinned.version, tk) {
            // Borrowed from the version's handles once a read opened it.
            let opened;
            let table = match pinned.handles.get(level, i) {
                Some(t) => t,
                None => {
                    opened = match self.open_for_point(f, cached_only)? {
                        Some(t) => t,
                        None => return Ok(Cached::NeedsIo),
                    };
                    pinned.handles.keep(level, i, &opened);
                    &opened
                }
            };
            let step =
                table.get_point_hashed(tk, hash, target.as_slice(), cached_only, |k, v| {
                    match key::parse(k) {
                        None => Step::Malformed(k.len()),
                        Some(p) if p.tree_key != tk => Step::Elsewhere,
                        Some(p) => {
                            if use_rows
                                && matches!(p.kind, Kind::Put | Kind::Blob)
                                && point.operands.is_empty()
                            {
                                rows.insert_hashed(tk, hash, pinned.generation, p.kind, v);
                            }
                            Step::Seen(point.see(p.kind, v, op))
                        }
                    }
                })?;
            match after_probe(table, step, cached_only, tk, &target, &mut point, op)? {
                Next::Read => {}
                Next::Settle => return self.settle(&mut point, op, lookup, on_blob),
                Next::NeedsIo => return Ok(Cached::NeedsIo),
            }
        }
        self.settle(&mut point, op, lookup, on_blob)
    }

    /// Whether a lookup as of `at` that found nothing in the memtables asks
    /// the row cache (and fills it from the table that answers). Rows hold
    /// what the tables of one version say at their newest, so only a read
    /// as of now with no operands to fold may use them. A thread reading
    /// keys in order finds them in the block it read last, which costs less
    /// than a row cache lookup (a cache miss in its doorkeeper) and needs no
    /// row: it neither asks nor fills it.
    #[inline(always)]
    fn asks_rows(&self, pinned: &Pinned, at: At, no_operands: bool, hash: u64) -> bool {
        // Asked last: asking fetches the doorkeeper's word, wasted on a
        // lookup the other conditions keep from the rows.
        at.now
            && !self.tables.block_cache().reading_in_order()
            && pinned.generation != 0
            && at.seqno >= pinned.tables_seqno
            && no_operands
            && self.tables.rows().asks(hash)
    }

    /// Table `f` opened for a point lookup; `None` when it is not open and
    /// the lookup may not read the disk.
    #[inline(always)]
    fn open_for_point(&self, f: &FileMeta, cached_only: bool) -> Result<Option<Arc<Table>>> {
        if cached_only {
            return Ok(self.tables.get_if_open(f.number));
        }
        self.tables.get_listed(f).map(Some)
    }

    /// The answer of a decided (or exhausted) lookup: a value in a blob
    /// file goes to `on_blob` unread when nothing is to be folded onto it,
    /// and is read whole when merge operands must be.
    fn settle<F: FnOnce(&[u8]) -> R, R>(
        &self,
        point: &mut Point<'_, F, R>,
        op: &dyn MergeOperator,
        lookup: Lookup,
        on_blob: impl FnOnce(LazyValue, F) -> Result<R>,
    ) -> Result<Cached<Option<R>>> {
        let Some(ptr) = point.blob.take() else {
            return point.finish(op).map(Cached::Answered);
        };
        let lazy = if !lookup.cached_only {
            self.blobs.lazy(&ptr)?
        } else {
            // A value kept in memory once verified needs no disk; nor does
            // handing out, unread, one whose file is open.
            let found = if !point.operands.is_empty() {
                None
            } else if lookup.unread_blobs {
                self.blobs.lazy_if_open(&ptr)?
            } else {
                self.blobs.kept(&ptr)?.map(LazyValue::hot)
            };
            match found {
                Some(v) => v,
                None => return Ok(Cached::NeedsIo),
            }
        };
        if point.operands.is_empty() {
            return match point.f.take() {
                Some(f) => on_blob(lazy, f).map(|r| Cached::Answered(Some(r))),
                None => Ok(Cached::Answered(None)),
            };
        }
        let base = lazy.into_vec()?;
        point.fold(Some(&base), op).map(Cached::Answered)
    }
}

/// An error for a key longer than keys may be (before a lookup).
#[inline]
pub(super) fn check_key_len(user_key: &[u8]) -> Result<()> {
    if user_key.len() > key::MAX_KEY_LEN {
        return Err(Error::InvalidArgument(format!(
            "key is {} bytes; the limit is {}",
            user_key.len(),
            key::MAX_KEY_LEN
        )));
    }
    Ok(())
}

/// The internal key to seek for `user_key` of keyspace `ks` as of `seqno`,
/// built on the stack when it fits inline (no heap allocation).
pub(super) fn seek_target(ks: KeyspaceId, user_key: &[u8], seqno: SeqNo) -> InternalKey {
    let len = key::KEYSPACE_ID_LEN + user_key.len() + key::TRAILER_LEN;
    let trailer = ((seqno << 8) | u64::from(key::KIND_FOR_SEEK)).to_le_bytes();
    let mut buf = [0u8; key::INLINE_KEY_LEN];
    if let Some(dst) = buf.get_mut(..len) {
        let (ks_part, rest) = dst.split_at_mut(key::KEYSPACE_ID_LEN);
        let (user_part, trailer_part) = rest.split_at_mut(user_key.len());
        ks_part.copy_from_slice(&ks.to_be_bytes());
        user_part.copy_from_slice(user_key);
        trailer_part.copy_from_slice(&trailer);
        return InternalKey(smallvec::SmallVec::from_buf_and_len(buf, len));
    }
    let mut v = smallvec::SmallVec::with_capacity(len);
    v.extend_from_slice(&ks.to_be_bytes());
    v.extend_from_slice(user_key);
    v.extend_from_slice(&trailer);
    InternalKey(v)
}

/// The answer of a lookup that was allowed to read.
pub(super) fn answered<T>(c: Cached<T>) -> Result<T> {
    match c {
        Cached::Answered(v) => Ok(v),
        Cached::NeedsIo => Err(Error::InvalidArgument(
            "a lookup allowed to read the disk asked to read it".into(),
        )),
    }
}

/// The tables that may hold `tk` as `(level, place in the level, file)`,
/// newest first: every level-0 table whose range holds it, then the one
/// table of each deeper level whose range does.
#[inline(always)]
fn tables_for<'v>(
    version: &'v Version,
    tk: &'v [u8],
) -> impl Iterator<Item = (usize, usize, &'v Arc<FileMeta>)> + 'v {
    let level0 = version
        .level(0)
        .iter()
        .enumerate()
        .filter(move |(_, f)| f.overlaps(Some(tk), Some(tk)))
        .map(|(i, f)| (0, i, f));
    let deeper =
        (1..NUM_LEVELS).filter_map(move |l| version.find_in_level(l, tk).map(|(i, f)| (l, i, f)));
    level0.chain(deeper)
}

/// Feeds `point` the entries of the memtables, newest first; true once
/// one decides the key.
#[inline(always)]
fn decided_in_memtables<F: FnOnce(&[u8]) -> R, R>(
    mems: &[Arc<Memtable>],
    tk: &[u8],
    target: &InternalKey,
    point: &mut Point<'_, F, R>,
    op: &dyn MergeOperator,
) -> bool {
    for mem in mems {
        if mem.is_empty() {
            continue;
        }
        let mut decided = false;
        mem.visit_entries(tk, target, |kind, value| {
            decided = point.see(kind, value, op);
            decided
        });
        if decided {
            return true;
        }
    }
    false
}

/// Where a lookup goes after a table's answer.
enum Next {
    /// On to the next older table.
    Read,
    /// The key is decided.
    Settle,
    /// The answer needs the disk, which the lookup may not read.
    NeedsIo,
}

/// What `table`'s answer `probe` means for the lookup.
#[inline(always)]
fn after_probe<F: FnOnce(&[u8]) -> R, R>(
    table: &Arc<Table>,
    probe: Probe<Step>,
    cached_only: bool,
    tk: &[u8],
    target: &InternalKey,
    point: &mut Point<'_, F, R>,
    op: &dyn MergeOperator,
) -> Result<Next> {
    Ok(match probe {
        Probe::NeedsIo => Next::NeedsIo,
        Probe::Absent | Probe::Found(Step::Elsewhere) => Next::Read,
        Probe::Found(Step::Seen(true)) => Next::Settle,
        // The key's older entries in this table may be in blocks not cached.
        Probe::Found(Step::Seen(false)) if cached_only => Next::NeedsIo,
        Probe::Found(Step::Seen(false)) => {
            if older_in_table(table, tk, target.as_slice(), point, op)? {
                Next::Settle
            } else {
                Next::Read
            }
        }
        Probe::Found(Step::Malformed(len)) => {
            let reason = format!("malformed internal key of {len} bytes");
            return Err(Error::corruption(table.path(), 0, reason));
        }
    })
}

/// Feeds `point` the entries of `tk` in `table` after the newest one at
/// `target` (which it has seen); true once the key is decided.
fn older_in_table<F: FnOnce(&[u8]) -> R, R>(
    table: &Arc<Table>,
    tk: &[u8],
    target: &[u8],
    point: &mut Point<'_, F, R>,
    op: &dyn MergeOperator,
) -> Result<bool> {
    use crate::iter::InternalIterator;
    let mut it = table.iter();
    it.seek(target);
    if it.valid() {
        it.next();
    }
    while it.valid() {
        let Some(p) = key::parse(it.key()) else {
            let reason = format!("malformed internal key of {} bytes", it.key().len());
            return Err(Error::corruption(table.path(), 0, reason));
        };
        if p.tree_key != tk {
            break;
        }
        if point.see(p.kind, it.value(), op) {
            return Ok(true);
        }
        it.next();
    }
    it.status()?;
    Ok(false)
}
