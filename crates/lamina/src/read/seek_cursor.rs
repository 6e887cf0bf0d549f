//! A positioned cursor over one keyspace that seeks and moves both ways.

use super::Iter;
use super::Snapshot;
use crate::db::Keyspace;
use crate::error::Result;
use std::ops::Bound;

/// A cursor over one keyspace as of a snapshot: it seeks to a key (or the
/// first or last one) and moves to the next or previous entry, in key order.
///
/// It reads the snapshot it was made from, so it sees no later writes and
/// keeps what it sees from being compacted away while it lives. Moving on in
/// the same direction costs one step of the underlying iterator; turning
/// around or seeking costs one seek. A failed move leaves the cursor on no
/// entry and returns the error.
///
/// ```
/// # let dir = tempfile::tempdir()?;
/// let db = lamina::Db::open(dir.path().join("db"), lamina::Options::default())?;
/// for k in [b"a", b"c", b"e"] {
///     db.put(k, b"")?;
/// }
/// let mut cursor = db.default_keyspace().cursor();
/// cursor.seek(b"b")?;
/// assert_eq!(cursor.key(), Some(&b"c"[..]));
/// cursor.move_prev()?;
/// assert_eq!(cursor.key(), Some(&b"a"[..]));
/// cursor.move_prev()?;
/// assert!(!cursor.valid());
/// # Ok::<(), lamina::Error>(())
/// ```
pub struct SeekCursor {
    snap: Snapshot,
    ks: Keyspace,
    /// The walk the cursor is on, going forward or backward from `entry`.
    walk: Option<(Iter, bool)>,
    entry: Option<(Vec<u8>, Vec<u8>)>,
}

impl SeekCursor {
    pub(crate) fn new(snap: Snapshot, ks: Keyspace) -> SeekCursor {
        SeekCursor {
            snap,
            ks,
            walk: None,
            entry: None,
        }
    }

    /// Starts a walk over `range`, forward or backward, and steps onto its first entry.
    fn start(&mut self, lower: Bound<&[u8]>, upper: Bound<&[u8]>, forward: bool) -> Result<()> {
        // The walk before leaves its cursor to the new one.
        self.walk = None;
        let iter = self.snap.range_in::<&[u8], _>(&self.ks, (lower, upper));
        self.walk = Some((iter, forward));
        self.step()
    }

    /// Moves one entry along the current walk.
    fn step(&mut self) -> Result<()> {
        self.entry = None;
        let Some((iter, forward)) = self.walk.as_mut() else {
            return Ok(());
        };
        let next = if *forward {
            iter.next()
        } else {
            iter.next_back()
        };
        match next.transpose() {
            Ok(entry) => {
                self.entry = entry;
                Ok(())
            }
            Err(e) => {
                self.walk = None;
                Err(e)
            }
        }
    }

    /// Moves to the smallest key.
    pub fn seek_to_first(&mut self) -> Result<()> {
        self.start(Bound::Unbounded, Bound::Unbounded, true)
    }

    /// Moves to the largest key.
    pub fn seek_to_last(&mut self) -> Result<()> {
        self.start(Bound::Unbounded, Bound::Unbounded, false)
    }

    /// Moves to the first key `>= key` (no entry when there is none).
    pub fn seek(&mut self, key: &[u8]) -> Result<()> {
        self.start(Bound::Included(key), Bound::Unbounded, true)
    }

    /// Moves to the last key `<= key` (no entry when there is none).
    pub fn seek_for_prev(&mut self, key: &[u8]) -> Result<()> {
        self.start(Bound::Unbounded, Bound::Included(key), false)
    }

    /// Moves to the next key. On no entry, stays there.
    pub fn move_next(&mut self) -> Result<()> {
        match (&self.entry, &self.walk) {
            (None, _) => Ok(()),
            (Some(_), Some((_, true))) => self.step(),
            (Some((k, _)), _) => {
                let k = k.clone();
                self.start(Bound::Excluded(&k), Bound::Unbounded, true)
            }
        }
    }

    /// Moves to the previous key. On no entry, stays there.
    pub fn move_prev(&mut self) -> Result<()> {
        match (&self.entry, &self.walk) {
            (None, _) => Ok(()),
            (Some(_), Some((_, false))) => self.step(),
            (Some((k, _)), _) => {
                let k = k.clone();
                self.start(Bound::Unbounded, Bound::Excluded(&k), false)
            }
        }
    }

    /// True when the cursor is on an entry.
    pub fn valid(&self) -> bool {
        self.entry.is_some()
    }

    /// The key of the entry the cursor is on.
    pub fn key(&self) -> Option<&[u8]> {
        self.entry.as_ref().map(|(k, _)| k.as_slice())
    }

    /// The value of the entry the cursor is on.
    pub fn value(&self) -> Option<&[u8]> {
        self.entry.as_ref().map(|(_, v)| v.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use crate::{Db, Options};

    fn keys_forward(c: &mut super::SeekCursor) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        while let Some(k) = c.key() {
            out.push(k.to_vec());
            c.move_next().unwrap();
        }
        out
    }

    #[test]
    fn walks_both_ways_and_turns_around() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path().join("db"), Options::default()).unwrap();
        for k in [&b""[..], b"b", b"d", b"f"] {
            db.put(k, k).unwrap();
        }
        let mut c = db.default_keyspace().cursor();
        assert!(!c.valid());
        c.seek_to_first().unwrap();
        assert_eq!(keys_forward(&mut c), [&b""[..], b"b", b"d", b"f"]);
        c.move_next().unwrap();
        assert!(!c.valid());
        c.seek(b"c").unwrap();
        assert_eq!(c.key(), Some(&b"d"[..]));
        assert_eq!(c.value(), Some(&b"d"[..]));
        c.move_prev().unwrap();
        assert_eq!(c.key(), Some(&b"b"[..]));
        c.move_next().unwrap();
        assert_eq!(c.key(), Some(&b"d"[..]));
        c.seek_for_prev(b"c").unwrap();
        assert_eq!(c.key(), Some(&b"b"[..]));
        c.seek_for_prev(b"d").unwrap();
        assert_eq!(c.key(), Some(&b"d"[..]));
        c.seek_to_last().unwrap();
        assert_eq!(c.key(), Some(&b"f"[..]));
        c.seek(b"g").unwrap();
        assert!(!c.valid());
        c.seek_to_first().unwrap();
        c.move_prev().unwrap();
        assert!(!c.valid());
    }

    #[test]
    fn sees_its_snapshot_and_one_keyspace() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path().join("db"), Options::default()).unwrap();
        let other = db.keyspace("other").unwrap();
        db.put(b"a", b"1").unwrap();
        other.put(b"b", b"2").unwrap();
        let snap = db.snapshot();
        db.put(b"c", b"3").unwrap();
        db.delete(b"a").unwrap();
        let mut c = snap.cursor_in(&db.default_keyspace());
        c.seek_to_first().unwrap();
        assert_eq!(keys_forward(&mut c), [b"a"]);
        let mut live = db.default_keyspace().cursor();
        live.seek_to_first().unwrap();
        assert_eq!(keys_forward(&mut live), [b"c"]);
        let mut o = other.cursor();
        o.seek_to_last().unwrap();
        assert_eq!(o.key(), Some(&b"b"[..]));
        o.move_prev().unwrap();
        assert!(!o.valid());
    }
}
