//! A key rebuilt from the prefix-compressed entries of a block, held on the
//! stack while it is short.

use std::ops::Deref;

/// Bytes held without a heap allocation (a 16-byte user key makes a 28-byte
/// internal key).
const INLINE: usize = 64;

/// A reusable key buffer for point lookups: [`KeyBuf::splice`] keeps a
/// shared prefix and appends a suffix, the way block entries encode keys.
/// Keys up to 64 bytes never touch the heap.
#[derive(Debug, Clone)]
pub struct KeyBuf {
    inline: [u8; INLINE],
    len: usize,
    /// Holds the key instead of `inline` once it outgrew it.
    heap: Option<Vec<u8>>,
}

impl Default for KeyBuf {
    fn default() -> Self {
        KeyBuf::new()
    }
}

impl KeyBuf {
    /// An empty key.
    pub fn new() -> KeyBuf {
        KeyBuf {
            inline: [0; INLINE],
            len: 0,
            heap: None,
        }
    }

    /// Empties the key.
    pub fn clear(&mut self) {
        self.len = 0;
        if let Some(h) = self.heap.as_mut() {
            h.clear();
        }
    }

    /// Makes the key `head` followed by `tail`.
    #[inline]
    pub fn assign(&mut self, head: &[u8], tail: &[u8]) {
        let len = head.len() + tail.len();
        match self.inline.get_mut(..len) {
            Some(dst) if self.heap.is_none() => {
                let (h, t) = dst.split_at_mut(head.len());
                h.copy_from_slice(head);
                t.copy_from_slice(tail);
                self.len = len;
            }
            _ => {
                self.clear();
                self.splice(0, head);
                self.splice(head.len(), tail);
            }
        }
    }

    /// Keeps the first `shared` bytes and appends `suffix`.
    /// REQUIRES: `shared <= self.len()`.
    pub fn splice(&mut self, shared: usize, suffix: &[u8]) {
        let shared = shared.min(self.len());
        let new_len = shared + suffix.len();
        if let Some(h) = self.heap.as_mut() {
            h.truncate(shared);
            h.extend_from_slice(suffix);
        } else if let Some(dst) = self.inline.get_mut(shared..new_len) {
            dst.copy_from_slice(suffix);
        } else {
            let mut h = Vec::with_capacity(new_len);
            h.extend_from_slice(self.inline.get(..shared).unwrap_or(&[]));
            h.extend_from_slice(suffix);
            self.heap = Some(h);
        }
        self.len = new_len;
    }
}

impl Deref for KeyBuf {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match &self.heap {
            Some(h) => h,
            None => self.inline.get(..self.len).unwrap_or(&[]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_long_keys_splice_like_a_vec() {
        let mut k = KeyBuf::new();
        let mut model: Vec<u8> = Vec::new();
        for (shared, suffix) in [(0, &b"abc"[..]), (2, &[7u8; 70][..]), (5, b"z"), (1, b"q")] {
            k.splice(shared, suffix);
            model.truncate(shared);
            model.extend_from_slice(suffix);
            assert_eq!(&*k, model.as_slice());
        }
        k.clear();
        k.splice(0, b"x");
        assert_eq!(&*k, b"x");
    }

    #[test]
    fn assigned_keys_are_their_two_parts_whatever_their_length() {
        let mut k = KeyBuf::new();
        for (head, tail) in [
            (&b"ab"[..], &b"cd"[..]),
            (&[1u8; 40][..], &[2u8; 40][..]),
            (b"", b"z"),
            (b"hea", b""),
        ] {
            k.assign(head, tail);
            assert_eq!(&*k, [head, tail].concat().as_slice());
        }
    }
}
