//! Internal keys: the tree key (keyspace id ‖ user key) followed by an
//! 8-byte trailer holding the seqno and the entry kind.
//!
//! Layout: docs/format.md#internal-key.

use std::cmp::Ordering;

/// Sequence number of a write. 56 bits are usable.
pub type SeqNo = u64;

/// The largest seqno a write can get.
pub const MAX_SEQNO: SeqNo = (1 << 56) - 1;

/// Identifier of a keyspace; 0 is the default keyspace.
pub type KeyspaceId = u32;

/// Longest user key accepted, in bytes.
pub const MAX_KEY_LEN: usize = 64 * 1024;

/// Longest value (or merge operand) accepted, in bytes.
pub const MAX_VALUE_LEN: usize = 256 * 1024 * 1024;

/// Longest keyspace name, in bytes (the keyspaces' limit, kept here for
/// the modules below them that store names, such as table properties).
pub const MAX_KEYSPACE_NAME: usize = 255;

/// Length of the trailer at the end of every internal key.
pub const TRAILER_LEN: usize = 8;

/// Length of the keyspace id at the start of every tree key.
pub const KEYSPACE_ID_LEN: usize = 4;

/// What an entry in the tree says about its key.
///
/// Written to disk; never renumber.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Kind {
    /// The key was deleted (a tombstone).
    Delete = 0,
    /// The key was set to the entry's value.
    Put = 1,
    /// The entry's value is a merge operand to fold onto older entries.
    Merge = 2,
    /// The key was set to a value kept in a blob file; the entry's value is a
    /// blob pointer (docs/format.md#blob-pointer). Only in tables.
    Blob = 3,
}

/// Kind byte used in seek targets: larger than every real kind so that
/// `(key, seqno, KIND_FOR_SEEK)` sorts before every real entry of `key` at `seqno`.
pub const KIND_FOR_SEEK: u8 = 0xff;

impl Kind {
    /// Decodes a kind byte read from disk.
    pub fn from_u8(b: u8) -> Option<Kind> {
        match b {
            0 => Some(Kind::Delete),
            1 => Some(Kind::Put),
            2 => Some(Kind::Merge),
            3 => Some(Kind::Blob),
            _ => None,
        }
    }
}

/// Builds the tree key `keyspace id (u32 BE) ‖ user key`.
pub fn tree_key(ks: KeyspaceId, user_key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(KEYSPACE_ID_LEN + user_key.len() + TRAILER_LEN);
    k.extend_from_slice(&ks.to_be_bytes());
    k.extend_from_slice(user_key);
    k
}

/// Appends the trailer for `(seqno, kind)` to `buf`.
pub fn push_trailer(buf: &mut Vec<u8>, seqno: SeqNo, kind: u8) {
    buf.extend_from_slice(&((seqno << 8) | u64::from(kind)).to_le_bytes());
}

/// Builds an internal key from a tree key, a seqno and a kind byte.
pub fn internal_key(tree_key: &[u8], seqno: SeqNo, kind: u8) -> Vec<u8> {
    let mut k = Vec::with_capacity(tree_key.len() + TRAILER_LEN);
    k.extend_from_slice(tree_key);
    push_trailer(&mut k, seqno, kind);
    k
}

/// The smallest internal key of `tree_key`: a seek target that lands on its newest entry.
pub fn seek_key(tree_key: &[u8]) -> Vec<u8> {
    internal_key(tree_key, MAX_SEQNO, KIND_FOR_SEEK)
}

#[cfg(any(test, feature = "internals"))]
/// The seek target for reading `tree_key` as of `seqno`.
pub fn seek_key_at(tree_key: &[u8], seqno: SeqNo) -> Vec<u8> {
    internal_key(tree_key, seqno, KIND_FOR_SEEK)
}

/// An internal key split into its parts. Only built from keys that passed
/// [`parse`], so its parts are always well formed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parsed<'a> {
    /// Keyspace id ‖ user key.
    pub tree_key: &'a [u8],
    /// Sequence number.
    pub seqno: SeqNo,
    /// Entry kind.
    pub kind: Kind,
}

impl<'a> Parsed<'a> {
    /// The keyspace the entry belongs to.
    pub fn keyspace(&self) -> KeyspaceId {
        keyspace_of(self.tree_key)
    }

    /// The user key (tree key without its keyspace id).
    pub fn user_key(&self) -> &'a [u8] {
        self.tree_key.get(KEYSPACE_ID_LEN..).unwrap_or(&[])
    }
}

/// Splits an internal key; `None` if it is too short or its kind is unknown.
pub fn parse(ikey: &[u8]) -> Option<Parsed<'_>> {
    let split = ikey.len().checked_sub(TRAILER_LEN)?;
    if split < KEYSPACE_ID_LEN {
        return None;
    }
    let (tree_key, trailer) = ikey.split_at(split);
    let t = u64::from_le_bytes(trailer.try_into().ok()?);
    Some(Parsed {
        tree_key,
        seqno: t >> 8,
        kind: Kind::from_u8(t as u8)?,
    })
}

/// An internal key as a person reads it in an error: keyspace, user key
/// (printable bytes as they are, others as `\xNN`, at most 64 of them),
/// seqno and kind; a key that does not parse, as hex.
pub fn describe(ikey: &[u8]) -> String {
    let Some(p) = parse(ikey) else {
        return format!("{ikey:02x?}");
    };
    let user = p.user_key();
    let mut shown: String = user
        .iter()
        .take(64)
        .flat_map(|&b| std::ascii::escape_default(b))
        .map(char::from)
        .collect();
    if user.len() > 64 {
        shown.push_str("...");
    }
    format!(
        "keyspace {} key \"{shown}\" seqno {} {:?}",
        p.keyspace(),
        p.seqno,
        p.kind
    )
}

/// The tree key of an internal key (everything before the trailer).
/// Keys shorter than a trailer yield themselves.
pub fn tree_key_of(ikey: &[u8]) -> &[u8] {
    ikey.get(..ikey.len().saturating_sub(TRAILER_LEN))
        .unwrap_or(ikey)
}

/// The first 16 bytes of a tree key (or of any bytes ordered bytewise, such
/// as a user key), zero-padded, as a big-endian number: `tree_prefix(a) <
/// tree_prefix(b)` implies `a < b`, so keys can be ordered by a number
/// comparison first and in full only on a tie.
pub fn tree_prefix(tree_key: &[u8]) -> u128 {
    let mut b = [0u8; 16];
    let n = tree_key.len().min(16);
    if let (Some(dst), Some(src)) = (b.get_mut(..n), tree_key.get(..n)) {
        dst.copy_from_slice(src);
    }
    u128::from_be_bytes(b)
}

/// The keyspace id a tree key starts with (0 for keys too short to hold one).
pub fn keyspace_of(tree_key: &[u8]) -> KeyspaceId {
    tree_key
        .get(..KEYSPACE_ID_LEN)
        .and_then(|b| b.try_into().ok())
        .map(u32::from_be_bytes)
        .unwrap_or(0)
}

fn trailer_of(ikey: &[u8]) -> u64 {
    ikey.get(ikey.len().saturating_sub(TRAILER_LEN)..)
        .and_then(|t| t.try_into().ok())
        .map(u64::from_le_bytes)
        .unwrap_or(0)
}

/// The order of internal keys: tree key ascending, then trailer descending
/// (newest seqno first). Keys shorter than a trailer compare as raw bytes.
#[inline]
pub fn compare(a: &[u8], b: &[u8]) -> Ordering {
    compare_bytes(tree_key_of(a), tree_key_of(b)).then_with(|| trailer_of(b).cmp(&trailer_of(a)))
}

/// `a.cmp(b)`, told from their first 8 bytes as one number when those
/// differ (keys of a merge, a skip list or a block nearly always do past
/// the keyspace id), without a call to `memcmp`.
#[inline]
fn compare_bytes(a: &[u8], b: &[u8]) -> Ordering {
    if let (Some(x), Some(y)) = (a.first_chunk::<8>(), b.first_chunk::<8>()) {
        let (x, y) = (u64::from_be_bytes(*x), u64::from_be_bytes(*y));
        if x != y {
            return x.cmp(&y);
        }
    }
    a.cmp(b)
}

/// Internal keys up to this many bytes are stored inline, without a heap
/// allocation (most keys: a 16-byte user key makes a 28-byte internal key).
pub const INLINE_KEY_LEN: usize = 32;

/// An owned internal key ordered by [`compare`]; the memtable's key type.
/// Short keys live inline, so a skip-list node and its key share cache lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InternalKey(pub smallvec::SmallVec<[u8; INLINE_KEY_LEN]>);

impl InternalKey {
    /// Copies `bytes` into a key.
    pub fn from_slice(bytes: &[u8]) -> InternalKey {
        InternalKey(smallvec::SmallVec::from_slice(bytes))
    }

    /// The key's bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.0
    }
}

impl From<Vec<u8>> for InternalKey {
    fn from(v: Vec<u8>) -> InternalKey {
        InternalKey::from_slice(&v)
    }
}

impl Ord for InternalKey {
    fn cmp(&self, other: &Self) -> Ordering {
        compare(&self.0, &other.0)
    }
}

impl PartialOrd for InternalKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newer_entries_sort_first() {
        let tk = tree_key(0, b"k");
        let old = internal_key(&tk, 5, Kind::Put as u8);
        let new = internal_key(&tk, 9, Kind::Put as u8);
        assert_eq!(compare(&new, &old), Ordering::Less);
        assert_eq!(compare(&seek_key(&tk), &new), Ordering::Less);
        let other = internal_key(&tree_key(0, b"ka"), 100, Kind::Put as u8);
        assert_eq!(compare(&old, &other), Ordering::Less);
    }

    #[test]
    fn bytes_compare_as_slices_do() {
        let mut keys: Vec<Vec<u8>> = vec![Vec::new()];
        for len in 1..20 {
            for fill in [0u8, 1, 0x7f, 0x80, 0xff] {
                let mut k = vec![fill; len];
                keys.push(k.clone());
                *k.last_mut().unwrap_or(&mut 0) ^= 1;
                keys.push(k.clone());
                k[0] = fill.wrapping_add(1);
                keys.push(k);
            }
        }
        for a in &keys {
            for b in &keys {
                assert_eq!(compare_bytes(a, b), a.cmp(b), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn keyspaces_do_not_interleave() {
        let a = internal_key(&tree_key(1, b"zzz"), 1, 1);
        let b = internal_key(&tree_key(2, b""), 1, 1);
        assert_eq!(compare(&a, &b), Ordering::Less);
    }

    #[test]
    fn parse_round_trip_and_rejects_junk() {
        let k = internal_key(&tree_key(7, b"abc"), 42, Kind::Merge as u8);
        let p = parse(&k).expect("well formed");
        assert_eq!(
            (p.keyspace(), p.user_key(), p.seqno, p.kind),
            (7, &b"abc"[..], 42, Kind::Merge)
        );
        assert!(parse(b"short").is_none());
        assert!(parse(&internal_key(&tree_key(0, b"x"), 1, 9)).is_none());
    }
}
