//! A version edit: one change to the set of live tables and counters.
//!
//! Layout: docs/format.md#version-edit.

use crate::coding::{put_len_prefixed, put_varint, Decoder};
use crate::key::{self, KeyspaceId, SeqNo};
use std::sync::Arc;

// Tags: written to disk; never renumber.
const TAG_LOG_NUMBER: u32 = 1;
const TAG_NEXT_FILE_NUMBER: u32 = 2;
const TAG_LAST_SEQNO: u32 = 3;
const TAG_NEW_TABLE: u32 = 4;
const TAG_DELETED_TABLE: u32 = 5;
const TAG_KEYSPACE_CREATED: u32 = 6;
const TAG_KEYSPACE_DROPPED: u32 = 7;
const TAG_NEXT_KEYSPACE_ID: u32 = 8;
const TAG_LIFETIME: u32 = 9;
const TAG_BLOB_FILE_ADDED: u32 = 12;
const TAG_BLOB_FILE_REMOVED: u32 = 13;
const TAG_BLOB_DEAD_BYTES: u32 = 14;
const TAG_IDENTITY: u32 = 10;
const TAG_WAL_STARTED: u32 = 11;

/// Bytes counted since the database was created, kept in the manifest so
/// that write amplification can be reported over the database's whole life.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Lifetime {
    /// Bytes of keys and values written by callers.
    pub user_bytes: u64,
    /// Bytes written to the WAL.
    pub wal_bytes: u64,
    /// Bytes of tables written by flushes.
    pub flush_bytes: u64,
    /// Bytes read by compactions.
    pub compaction_read_bytes: u64,
    /// Bytes of tables written by compactions.
    pub compaction_written_bytes: u64,
}

/// What the manifest knows of one table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMeta {
    /// File number (`NNNNNN.sst`).
    pub number: u64,
    /// File size in bytes.
    pub size: u64,
    /// Smallest internal key.
    pub smallest: Vec<u8>,
    /// Largest internal key.
    pub largest: Vec<u8>,
    /// Smallest seqno of its entries.
    pub smallest_seqno: SeqNo,
    /// Largest seqno of its entries.
    pub largest_seqno: SeqNo,
    /// Number of entries.
    pub entries: u64,
}

impl FileMeta {
    /// Smallest tree key.
    pub fn smallest_tree_key(&self) -> &[u8] {
        key::tree_key_of(&self.smallest)
    }

    /// Largest tree key.
    pub fn largest_tree_key(&self) -> &[u8] {
        key::tree_key_of(&self.largest)
    }

    /// True when the table's tree-key range intersects `[lo, hi]` (`None` = unbounded).
    pub fn overlaps(&self, lo: Option<&[u8]>, hi: Option<&[u8]>) -> bool {
        let after_hi = hi.is_some_and(|h| self.smallest_tree_key() > h);
        let before_lo = lo.is_some_and(|l| self.largest_tree_key() < l);
        !(after_hi || before_lo)
    }
}

/// A change to the version and counters; fields left `None`/empty are unchanged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VersionEdit {
    /// WAL segments numbered below this are no longer needed.
    pub log_number: Option<u64>,
    /// The next unused file number.
    pub next_file_number: Option<u64>,
    /// The largest seqno whose write is in a table or a live WAL segment.
    pub last_seqno: Option<SeqNo>,
    /// Tables added, with their level.
    pub new_files: Vec<(usize, Arc<FileMeta>)>,
    /// Tables removed: (level, file number).
    pub deleted_files: Vec<(usize, u64)>,
    /// Keyspaces created: (id, name).
    pub keyspaces_created: Vec<(KeyspaceId, String)>,
    /// Keyspaces dropped.
    pub keyspaces_dropped: Vec<KeyspaceId>,
    /// The next unused keyspace id.
    pub next_keyspace_id: Option<KeyspaceId>,
    /// Lifetime byte counters as of this edit.
    pub lifetime: Option<Lifetime>,
    /// Blob files added.
    pub new_blobs: Vec<Arc<crate::blob::BlobMeta>>,
    /// Blob files removed (no live pointer names them).
    pub deleted_blobs: Vec<u64>,
    /// Dead value bytes of blob files: (file number, total dead bytes).
    pub blob_dead: Vec<(u64, u64)>,
    /// The database identity (docs/format.md#database-identity); never 0.
    pub identity: Option<u128>,
    /// WAL segments started, by file number: each must exist until the log
    /// number passes it.
    pub wals_started: Vec<u64>,
}

impl VersionEdit {
    /// Encodes the edit as a manifest record.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::new();
        if let Some(v) = self.log_number {
            put_varint(&mut b, u64::from(TAG_LOG_NUMBER));
            put_varint(&mut b, v);
        }
        if let Some(v) = self.next_file_number {
            put_varint(&mut b, u64::from(TAG_NEXT_FILE_NUMBER));
            put_varint(&mut b, v);
        }
        if let Some(v) = self.last_seqno {
            put_varint(&mut b, u64::from(TAG_LAST_SEQNO));
            put_varint(&mut b, v);
        }
        for (level, f) in &self.new_files {
            put_varint(&mut b, u64::from(TAG_NEW_TABLE));
            put_varint(&mut b, *level as u64);
            put_varint(&mut b, f.number);
            put_varint(&mut b, f.size);
            put_len_prefixed(&mut b, &f.smallest);
            put_len_prefixed(&mut b, &f.largest);
            put_varint(&mut b, f.smallest_seqno);
            put_varint(&mut b, f.largest_seqno);
            put_varint(&mut b, f.entries);
        }
        for (level, number) in &self.deleted_files {
            put_varint(&mut b, u64::from(TAG_DELETED_TABLE));
            put_varint(&mut b, *level as u64);
            put_varint(&mut b, *number);
        }
        for (id, name) in &self.keyspaces_created {
            put_varint(&mut b, u64::from(TAG_KEYSPACE_CREATED));
            put_varint(&mut b, u64::from(*id));
            put_len_prefixed(&mut b, name.as_bytes());
        }
        for id in &self.keyspaces_dropped {
            put_varint(&mut b, u64::from(TAG_KEYSPACE_DROPPED));
            put_varint(&mut b, u64::from(*id));
        }
        if let Some(v) = self.next_keyspace_id {
            put_varint(&mut b, u64::from(TAG_NEXT_KEYSPACE_ID));
            put_varint(&mut b, u64::from(v));
        }
        if let Some(l) = self.lifetime {
            put_varint(&mut b, u64::from(TAG_LIFETIME));
            for v in [
                l.user_bytes,
                l.wal_bytes,
                l.flush_bytes,
                l.compaction_read_bytes,
                l.compaction_written_bytes,
            ] {
                put_varint(&mut b, v);
            }
        }
        self.encode_blobs(&mut b);
        if let Some(id) = self.identity {
            put_varint(&mut b, u64::from(TAG_IDENTITY));
            b.extend_from_slice(&(id as u64).to_le_bytes());
            b.extend_from_slice(&((id >> 64) as u64).to_le_bytes());
        }
        for n in &self.wals_started {
            put_varint(&mut b, u64::from(TAG_WAL_STARTED));
            put_varint(&mut b, *n);
        }
        b
    }

    // Layout: docs/format.md#version-edit (tags 12-14)
    fn encode_blobs(&self, b: &mut Vec<u8>) {
        for m in &self.new_blobs {
            put_varint(b, u64::from(TAG_BLOB_FILE_ADDED));
            for v in [m.number, m.size, m.records, m.value_bytes] {
                put_varint(b, v);
            }
            put_len_prefixed(b, &m.smallest);
            put_len_prefixed(b, &m.largest);
        }
        for n in &self.deleted_blobs {
            put_varint(b, u64::from(TAG_BLOB_FILE_REMOVED));
            put_varint(b, *n);
        }
        for (n, dead) in &self.blob_dead {
            put_varint(b, u64::from(TAG_BLOB_DEAD_BYTES));
            put_varint(b, *n);
            put_varint(b, *dead);
        }
    }

    /// Decodes a manifest record; `Err` says what is wrong and at which byte.
    pub fn decode(rec: &[u8]) -> Result<VersionEdit, String> {
        let mut d = Decoder::new(rec);
        let mut e = VersionEdit::default();
        while !d.is_empty() {
            let at = d.position();
            let bad = |what: &str| format!("malformed {what} at byte {at} of a version edit");
            let tag = d.varint32().ok_or_else(|| bad("tag"))?;
            match tag {
                TAG_LOG_NUMBER => e.log_number = Some(d.varint().ok_or_else(|| bad("log number"))?),
                TAG_NEXT_FILE_NUMBER => {
                    e.next_file_number = Some(d.varint().ok_or_else(|| bad("next file number"))?)
                }
                TAG_LAST_SEQNO => e.last_seqno = Some(d.varint().ok_or_else(|| bad("last seqno"))?),
                TAG_NEW_TABLE => {
                    let f = decode_new_table(&mut d).ok_or_else(|| bad("new table"))?;
                    check_new_table(&f)?;
                    e.new_files.push((f.0, Arc::new(f.1)));
                }
                TAG_DELETED_TABLE => {
                    let level = d.varint32().ok_or_else(|| bad("deleted table"))? as usize;
                    let number = d.varint().ok_or_else(|| bad("deleted table"))?;
                    e.deleted_files.push((level, number));
                }
                TAG_KEYSPACE_CREATED => {
                    let id = d.varint32().ok_or_else(|| bad("keyspace"))?;
                    let name = d.len_prefixed().ok_or_else(|| bad("keyspace"))?;
                    let name = String::from_utf8(name.to_vec())
                        .map_err(|_| bad("keyspace name (not UTF-8)"))?;
                    e.keyspaces_created.push((id, name));
                }
                TAG_KEYSPACE_DROPPED => e
                    .keyspaces_dropped
                    .push(d.varint32().ok_or_else(|| bad("keyspace"))?),
                TAG_NEXT_KEYSPACE_ID => {
                    e.next_keyspace_id = Some(d.varint32().ok_or_else(|| bad("next keyspace id"))?)
                }
                TAG_LIFETIME => {
                    let l = decode_lifetime(&mut d).ok_or_else(|| bad("lifetime counters"))?;
                    e.lifetime = Some(l);
                }
                TAG_BLOB_FILE_ADDED => {
                    let m = decode_blob_added(&mut d).ok_or_else(|| bad("blob file added"))?;
                    e.new_blobs.push(Arc::new(m));
                }
                TAG_BLOB_FILE_REMOVED => e
                    .deleted_blobs
                    .push(d.varint().ok_or_else(|| bad("blob file removed"))?),
                TAG_BLOB_DEAD_BYTES => {
                    let n = d.varint().ok_or_else(|| bad("blob dead bytes"))?;
                    let dead = d.varint().ok_or_else(|| bad("blob dead bytes"))?;
                    e.blob_dead.push((n, dead));
                }
                TAG_IDENTITY => {
                    let (lo, hi) = (d.u64(), d.u64());
                    let (Some(lo), Some(hi)) = (lo, hi) else {
                        return Err(bad("database identity"));
                    };
                    e.identity = Some(identity(lo, hi, at)?);
                }
                TAG_WAL_STARTED => e
                    .wals_started
                    .push(d.varint().ok_or_else(|| bad("WAL segment started"))?),
                other => {
                    return Err(format!(
                        "unknown tag {other} at byte {at} of a version edit"
                    ))
                }
            }
        }
        Ok(e)
    }
}

/// A new table's level and metadata, after its tag; `None` if cut short.
fn decode_new_table(d: &mut Decoder<'_>) -> Option<(usize, FileMeta)> {
    let level = d.varint32()? as usize;
    let meta = FileMeta {
        number: d.varint()?,
        size: d.varint()?,
        smallest: d.len_prefixed()?.to_vec(),
        largest: d.len_prefixed()?.to_vec(),
        smallest_seqno: d.varint()?,
        largest_seqno: d.varint()?,
        entries: d.varint()?,
    };
    Some((level, meta))
}

/// Checks a new table's level and key bounds.
fn check_new_table((level, meta): &(usize, FileMeta)) -> Result<(), String> {
    if *level >= super::NUM_LEVELS {
        return Err(format!(
            "table {} at level {}, past the last level",
            meta.number, level
        ));
    }
    if key::parse(&meta.smallest).is_none() || key::parse(&meta.largest).is_none() {
        return Err(format!("table {} has malformed key bounds", meta.number));
    }
    Ok(())
}

/// The lifetime counters, after their tag; `None` if cut short.
fn decode_lifetime(d: &mut Decoder<'_>) -> Option<Lifetime> {
    Some(Lifetime {
        user_bytes: d.varint()?,
        wal_bytes: d.varint()?,
        flush_bytes: d.varint()?,
        compaction_read_bytes: d.varint()?,
        compaction_written_bytes: d.varint()?,
    })
}

/// An added blob file's metadata, after its tag; `None` if cut short.
fn decode_blob_added(d: &mut Decoder<'_>) -> Option<crate::blob::BlobMeta> {
    Some(crate::blob::BlobMeta {
        number: d.varint()?,
        size: d.varint()?,
        records: d.varint()?,
        value_bytes: d.varint()?,
        smallest: d.len_prefixed()?.to_vec(),
        largest: d.len_prefixed()?.to_vec(),
    })
}

/// The database identity of its two halves, read at byte `at`; never 0.
fn identity(lo: u64, hi: u64, at: usize) -> Result<u128, String> {
    let id = u128::from(lo) | (u128::from(hi) << 64);
    if id == 0 {
        return Err(format!(
            "database identity 0 at byte {at} of a version edit"
        ));
    }
    Ok(id)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::key::{internal_key, tree_key};

    fn sample() -> VersionEdit {
        VersionEdit {
            log_number: Some(7),
            next_file_number: Some(12),
            last_seqno: Some(99),
            new_files: vec![(
                1,
                Arc::new(FileMeta {
                    number: 9,
                    size: 4096,
                    smallest: internal_key(&tree_key(0, b"a"), 5, 1),
                    largest: internal_key(&tree_key(0, b"z"), 6, 1),
                    smallest_seqno: 5,
                    largest_seqno: 6,
                    entries: 2,
                }),
            )],
            deleted_files: vec![(0, 3)],
            keyspaces_created: vec![(1, "index".into())],
            keyspaces_dropped: vec![2],
            next_keyspace_id: Some(3),
            lifetime: Some(Lifetime {
                user_bytes: 1,
                wal_bytes: 2,
                flush_bytes: 3,
                compaction_read_bytes: 4,
                compaction_written_bytes: 5,
            }),
            identity: Some(0x0123_4567_89ab_cdef_fedc_ba98_7654_3210),
            wals_started: vec![7, 10],
            ..Default::default()
        }
    }

    #[test]
    fn round_trip() {
        let e = sample();
        assert_eq!(VersionEdit::decode(&e.encode()).unwrap(), e);
    }

    #[test]
    fn truncations_and_unknown_tags_are_errors() {
        let bytes = sample().encode();
        for cut in 1..bytes.len() {
            // A cut may land on a field boundary and decode as a shorter edit;
            // it must never panic, and a cut inside a field must be refused.
            let _ = VersionEdit::decode(&bytes[..cut]);
        }
        assert!(VersionEdit::decode(&bytes[..bytes.len() - 1]).is_err());
        assert!(VersionEdit::decode(&[99, 1])
            .unwrap_err()
            .contains("unknown tag 99"));
    }

    #[test]
    fn blob_tags_round_trip() {
        let e = VersionEdit {
            new_blobs: vec![Arc::new(crate::blob::BlobMeta {
                number: 21,
                size: 1 << 20,
                records: 10,
                value_bytes: 1_000_000,
                smallest: tree_key(0, b"a"),
                largest: tree_key(0, b"q"),
            })],
            deleted_blobs: vec![4, 5],
            blob_dead: vec![(6, 300)],
            ..Default::default()
        };
        let bytes = e.encode();
        assert_eq!(bytes[0], 12, "tag 12 is a blob file added");
        assert_eq!(VersionEdit::decode(&bytes).unwrap(), e);
        assert!(VersionEdit::decode(&bytes[..bytes.len() - 1]).is_err());
    }

    #[test]
    fn identity_is_sixteen_fixed_bytes_and_never_zero() {
        let e = VersionEdit {
            identity: Some(u128::MAX - 1),
            ..Default::default()
        };
        let bytes = e.encode();
        assert_eq!(bytes.len(), 1 + 16);
        assert_eq!(bytes[0], 10);
        assert_eq!(&bytes[1..9], &(u64::MAX - 1).to_le_bytes());
        assert_eq!(&bytes[9..], &u64::MAX.to_le_bytes());
        let mut zero = vec![10u8];
        zero.extend_from_slice(&[0; 16]);
        assert!(VersionEdit::decode(&zero)
            .unwrap_err()
            .contains("identity 0"));
        assert!(VersionEdit::decode(&bytes[..16]).is_err());
        let w = VersionEdit {
            wals_started: vec![300],
            ..Default::default()
        };
        assert_eq!(w.encode(), vec![11, 0xac, 0x02]);
    }

    #[test]
    fn overlap_is_inclusive() {
        let f = &sample().new_files[0].1;
        assert!(f.overlaps(Some(&tree_key(0, b"z")), None));
        assert!(!f.overlaps(Some(&tree_key(0, b"zz")), None));
        assert!(f.overlaps(None, Some(&tree_key(0, b"a"))));
        assert!(!f.overlaps(None, Some(&tree_key(0, b"0"))));
    }
}
