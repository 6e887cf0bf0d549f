//! The key range of an ordered read: `start` (inclusive), `stop` (exclusive,
//! as in a Python slice) and `prefix`, combined into one pair of bounds.

use std::ops::Bound;

/// A key range for the engine's `range` calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bounds {
    pub lo: Bound<Vec<u8>>,
    pub hi: Bound<Vec<u8>>,
}

impl Bounds {
    /// Every key.
    pub fn all() -> Bounds {
        Bounds {
            lo: Bound::Unbounded,
            hi: Bound::Unbounded,
        }
    }

    /// Keys strictly after `key`.
    pub fn after(key: &[u8]) -> Bounds {
        Bounds {
            lo: Bound::Excluded(key.to_vec()),
            hi: Bound::Unbounded,
        }
    }

    /// `Bounds::new` from the Python arguments `start`, `stop` and `prefix`
    /// (`None` or absent leaves that side open; keys are `bytes` or `str`).
    pub fn from_py(
        start: Option<&pyo3::Bound<'_, pyo3::PyAny>>,
        stop: Option<&pyo3::Bound<'_, pyo3::PyAny>>,
        prefix: Option<&pyo3::Bound<'_, pyo3::PyAny>>,
    ) -> pyo3::PyResult<Bounds> {
        Ok(Bounds::new(
            crate::convert::opt_key(start)?,
            crate::convert::opt_key(stop)?,
            crate::convert::opt_key(prefix)?,
        ))
    }

    /// Keys `k` with `start <= k < stop` that begin with `prefix`; `None` leaves
    /// that side open.
    pub fn new(start: Option<Vec<u8>>, stop: Option<Vec<u8>>, prefix: Option<Vec<u8>>) -> Bounds {
        let mut lo = start;
        let mut hi = stop;
        if let Some(p) = prefix {
            // The prefix's own range is [p, successor(p)).
            if lo.as_ref().is_none_or(|s| *s < p) {
                lo = Some(p.clone());
            }
            if let Some(end) = successor(&p) {
                if hi.as_ref().is_none_or(|s| end < *s) {
                    hi = Some(end);
                }
            }
        }
        Bounds {
            lo: lo.map_or(Bound::Unbounded, Bound::Included),
            hi: hi.map_or(Bound::Unbounded, Bound::Excluded),
        }
    }

    /// True when no key can lie in the range (saves an engine call).
    pub fn is_empty(&self) -> bool {
        match (&self.lo, &self.hi) {
            (Bound::Included(a), Bound::Excluded(b)) => a >= b,
            _ => false,
        }
    }

    /// The bounds as a tuple the engine's `range` accepts.
    pub fn as_range(&self) -> (Bound<&[u8]>, Bound<&[u8]>) {
        (as_slice(&self.lo), as_slice(&self.hi))
    }
}

fn as_slice(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match b {
        Bound::Included(v) => Bound::Included(v.as_slice()),
        Bound::Excluded(v) => Bound::Excluded(v.as_slice()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// The smallest key greater than every key that begins with `prefix`, or
/// `None` when there is none (the prefix is empty or all 0xff bytes).
pub fn successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last != 0xff {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[u8]) -> Option<Vec<u8>> {
        Some(s.to_vec())
    }

    #[test]
    fn successor_skips_trailing_ff() {
        assert_eq!(successor(b"ab"), v(b"ac"));
        assert_eq!(successor(b"a\xff\xff"), v(b"b"));
        assert_eq!(successor(b"\xff"), None);
        assert_eq!(successor(b""), None);
    }

    #[test]
    fn prefix_narrows_start_and_stop() {
        let b = Bounds::new(v(b"a"), v(b"z"), v(b"m"));
        assert_eq!(b.lo, Bound::Included(b"m".to_vec()));
        assert_eq!(b.hi, Bound::Excluded(b"n".to_vec()));
        let b = Bounds::new(v(b"mm"), v(b"mq"), v(b"m"));
        assert_eq!(b.lo, Bound::Included(b"mm".to_vec()));
        assert_eq!(b.hi, Bound::Excluded(b"mq".to_vec()));
        assert!(!b.is_empty());
    }

    #[test]
    fn disjoint_start_and_prefix_is_empty() {
        assert!(Bounds::new(v(b"n"), None, v(b"m")).is_empty());
        assert!(Bounds::new(v(b"b"), v(b"a"), None).is_empty());
        assert!(Bounds::new(v(b"b"), v(b"b"), None).is_empty());
        assert!(!Bounds::new(None, None, v(b"\xff")).is_empty());
        assert_eq!(Bounds::new(None, None, None), Bounds::all());
    }
}
