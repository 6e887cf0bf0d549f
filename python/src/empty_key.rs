//! The empty key `b""`.
//!
//! dbm.gnu and dbm.dumb accept `b""` as a key; the engine's keys are 1 to
//! 65,536 bytes. So the Python module keeps the value of each keyspace's
//! empty key in one reserved keyspace, [`RESERVED`], under the key
//! `"=" + keyspace name`. The engine's own keys are untouched, so other tools
//! read the same data; the reserved keyspace is created only when an empty key
//! is first written, and is hidden from `keyspaces()`.
//!
//! In key order `b""` comes before every other key: a forward walk yields it
//! first, a reverse walk last ([`Walk`]).

use crate::bounds::Bounds;
use std::ops::Bound;

/// The keyspace holding the empty keys' values.
pub const RESERVED: &str = "lamina.python.empty-key";

/// The key under which `RESERVED` holds the empty key of keyspace `name`.
pub fn slot(name: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(1 + name.len());
    k.push(b'=');
    k.extend_from_slice(name.as_bytes());
    k
}

/// True when `bounds` contains the empty key.
pub fn in_bounds(bounds: &Bounds) -> bool {
    let lo = match &bounds.lo {
        Bound::Unbounded => true,
        Bound::Included(k) => k.is_empty(),
        Bound::Excluded(_) => false,
    };
    let hi = !matches!(&bounds.hi, Bound::Excluded(k) if k.is_empty());
    lo && hi
}

type Entry = lamina::Result<(Vec<u8>, Vec<u8>)>;

/// An engine iterator with the empty key's entry, if any, in front.
pub struct Walk {
    head: Option<Entry>,
    iter: Option<lamina::Iter>,
}

impl Walk {
    /// A walk over `iter` alone.
    pub fn plain(iter: lamina::Iter) -> Walk {
        Walk {
            head: None,
            iter: Some(iter),
        }
    }

    /// A walk that first yields the empty key's `value` (or its read error).
    pub fn with_head(value: lamina::Result<Option<Vec<u8>>>, iter: lamina::Iter) -> Walk {
        let head = value.transpose().map(|v| v.map(|v| (Vec::new(), v)));
        Walk {
            head,
            iter: Some(iter),
        }
    }
}

impl Walk {
    /// The same walk folding no merge operand (keys with empty values), so
    /// that a key whose operands cannot be folded never fails it; for what
    /// needs keys only (`len`, `keys()`, iteration over keys).
    pub fn keys_only(mut self) -> Walk {
        self.iter = self.iter.map(lamina::Iter::keys_only);
        self
    }

    /// Keys only when `what` yields keys only.
    pub fn for_yield(self, what: crate::iter::Yield) -> Walk {
        if what == crate::iter::Yield::Keys {
            self.keys_only()
        } else {
            self
        }
    }
}

impl Iterator for Walk {
    type Item = Entry;

    fn next(&mut self) -> Option<Entry> {
        if let Some(h) = self.head.take() {
            return Some(h);
        }
        self.iter.as_mut()?.next()
    }
}

impl DoubleEndedIterator for Walk {
    fn next_back(&mut self) -> Option<Entry> {
        if let Some(iter) = self.iter.as_mut() {
            if let Some(e) = iter.next_back() {
                return Some(e);
            }
            self.iter = None;
        }
        self.head.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[u8]) -> Option<Vec<u8>> {
        Some(s.to_vec())
    }

    #[test]
    fn empty_key_is_in_ranges_that_start_at_the_beginning() {
        assert!(in_bounds(&Bounds::all()));
        assert!(in_bounds(&Bounds::new(v(b""), None, None)));
        assert!(in_bounds(&Bounds::new(None, v(b"a"), None)));
        assert!(in_bounds(&Bounds::new(None, None, v(b""))));
        assert!(!in_bounds(&Bounds::new(v(b"a"), None, None)));
        assert!(!in_bounds(&Bounds::new(None, v(b""), None)));
        assert!(!in_bounds(&Bounds::new(None, None, v(b"a"))));
        assert!(!in_bounds(&Bounds::after(b"")));
    }

    #[test]
    fn slots_differ_per_keyspace() {
        assert_eq!(slot(""), b"=".to_vec());
        assert_eq!(slot("ab"), b"=ab".to_vec());
    }
}
