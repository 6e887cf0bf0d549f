//! The record framing shared by WAL segments and manifests: a file header
//! (16 bytes for a manifest; 40 for a WAL segment, naming its database and
//! number), then 32 KiB blocks of checksummed fragments. A WAL segment is
//! recyclable: its fragments' checksums cover its file number, END closes
//! it, and it is zero-filled ahead of its writes. It may also hold marks:
//! records that are not batches, saying how far a blob file written at
//! commit was synced.
//!
//! Layout: docs/format.md#record-framing. [`LogWriter`] appends records;
//! [`LogReader`] reads them back and tells a torn tail (the end of a write a
//! crash interrupted, which is dropped) from corruption (damage followed by
//! valid data, which is an error).

mod reader;
mod writer;

pub use reader::{LogReader, TornTail};
pub use writer::LogWriter;

use crate::coding::{get_u32, masked_crc, masked_crc2, masked_crc3, masked_crc_from};

/// Magic number of a WAL segment (`NNNNNN.wal`).
pub const WAL_MAGIC: &[u8; 8] = b"LAMNAWAL";
/// Magic number of a manifest (`MANIFEST-NNNNNN`).
pub const MANIFEST_MAGIC: &[u8; 8] = b"LAMNAMAN";

/// Version of the manifest header, the one format 1 writes and reads.
pub const MANIFEST_VERSION: u32 = 1;
/// Version of the WAL segment header, the one format 1 writes and reads:
/// a recyclable segment naming its database and number, whose batches may
/// hold blob pointers, started ahead of the syncs of the segment before it,
/// and which may hold [`BlobSynced`] marks. Versions 1 to 5 were written
/// only by pre-release builds, and are refused.
pub const WAL_VERSION: u32 = 6;
/// Size of a manifest's file header: magic, version, checksum.
pub const FILE_HEADER_LEN: usize = 16;
/// Size of a WAL segment's header: magic, version, identity, file number, checksum.
pub const WAL_HEADER_LEN: usize = 40;
/// Size of a block; blocks start at `header length + k * BLOCK_SIZE`.
pub const BLOCK_SIZE: usize = 32 * 1024;
/// Size of a fragment header: checksum u32, length u16, type u8.
pub const FRAGMENT_HEADER_LEN: usize = 7;
/// How far ahead of its data a WAL segment is zero-filled.
pub const ZERO_FILL_STEP: u64 = 1 << 20;

// Fragment types. Written to disk; never renumber.
const FULL: u8 = 1;
const FIRST: u8 = 2;
const MIDDLE: u8 = 3;
const LAST: u8 = 4;
/// Closes a WAL segment (never in a manifest).
const END: u8 = 5;

/// A mark (a record of a WAL segment that is not a batch): blob
/// file `file`, written at commit, was synced holding its first `end`
/// bytes before the mark was written, so no crash can lose a value of it
/// that ends there or before.
///
/// Layout: docs/format.md#blob-sync-marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlobSynced {
    /// The blob file's number.
    pub file: u64,
    /// Bytes of the file (header and records) the sync covered.
    pub end: u64,
}

/// The first bytes of every mark: where a batch has its first seqno,
/// which is never 0.
const MARK_PREFIX: [u8; 8] = [0; 8];
/// Mark type of [`BlobSynced`]. Written to disk; never renumber.
const MARK_BLOB_SYNCED: u8 = 1;
/// Length of a [`BlobSynced`] mark.
const MARK_LEN: usize = 25;

impl BlobSynced {
    /// The mark as a record.
    // Layout: docs/format.md#blob-sync-marks
    fn encode(&self) -> [u8; MARK_LEN] {
        let mut m = [0u8; MARK_LEN];
        let (prefix, rest) = m.split_at_mut(MARK_PREFIX.len());
        prefix.copy_from_slice(&MARK_PREFIX);
        let (ty, rest) = rest.split_at_mut(1);
        ty.copy_from_slice(&[MARK_BLOB_SYNCED]);
        let (file, end) = rest.split_at_mut(8);
        file.copy_from_slice(&self.file.to_le_bytes());
        end.copy_from_slice(&self.end.to_le_bytes());
        m
    }

    /// `None` if `record` is not a mark (it is a batch); otherwise the mark
    /// it holds, or what is wrong with it.
    fn parse(record: &[u8]) -> Option<Result<BlobSynced, String>> {
        if record.get(..MARK_PREFIX.len())? != MARK_PREFIX {
            return None;
        }
        let ty = record.get(MARK_PREFIX.len()).copied();
        Some(match ty {
            Some(MARK_BLOB_SYNCED) if record.len() == MARK_LEN => {
                let u64_at = |at| crate::coding::get_u64(record, at).unwrap_or_default();
                Ok(BlobSynced {
                    file: u64_at(9),
                    end: u64_at(17),
                })
            }
            Some(MARK_BLOB_SYNCED) => Err(format!(
                "a blob sync mark of {} bytes (it has {MARK_LEN})",
                record.len()
            )),
            Some(t) => Err(format!("a mark of unknown type {t}")),
            None => Err("a mark without its type".to_string()),
        })
    }
}

/// Whose WAL segment a file is: the database identity and the segment's own
/// file number, as its header says.
///
/// Layout: docs/format.md#record-framing (WAL segment header).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origin {
    /// The database identity (never 0).
    pub identity: u128,
    /// The segment's file number.
    pub number: u64,
}

/// The 16-byte file header of a log without an origin: a manifest's
/// ([`MANIFEST_MAGIC`]); a WAL segment's header is [`wal_header`].
// Layout: docs/format.md#record-framing
fn file_header(magic: &[u8; 8]) -> [u8; FILE_HEADER_LEN] {
    let mut h = [0u8; FILE_HEADER_LEN];
    let (head, crc) = h.split_at_mut(12);
    let (m, version) = head.split_at_mut(8);
    m.copy_from_slice(magic);
    version.copy_from_slice(&MANIFEST_VERSION.to_le_bytes());
    crc.copy_from_slice(&masked_crc(head).to_le_bytes());
    h
}

/// The checksum of a fragment: over its type and payload, and first the
/// segment's file number in a WAL segment (`salt`).
// Layout: docs/format.md#recyclable-segments
fn fragment_crc(salt: Option<u64>, ty: u8, payload: &[u8]) -> u32 {
    match salt {
        None => masked_crc2(&[ty], payload),
        Some(n) => masked_crc3(&n.to_le_bytes(), &[ty], payload),
    }
}

/// A log's fragment checksums: [`fragment_crc`], with the CRC32C of
/// what comes before the payload (the segment's number, the type) computed
/// once per type, so that a fragment costs one pass over its payload.
#[derive(Clone, Copy)]
struct FragmentCrc {
    salt: Option<u64>,
    /// By fragment type: the CRC32C of `salt ‖ type` (or of `type`).
    starts: [u32; END as usize + 1],
}

impl FragmentCrc {
    fn new(salt: Option<u64>) -> FragmentCrc {
        let starts = std::array::from_fn(|ty| {
            let ty = ty as u8;
            match salt {
                None => crc32c::crc32c(&[ty]),
                Some(n) => crc32c::crc32c_append(crc32c::crc32c(&n.to_le_bytes()), &[ty]),
            }
        });
        FragmentCrc { salt, starts }
    }

    /// Whether the checksums cover a segment's number (a WAL segment,
    /// which may be recycled and ends with END; not a manifest).
    fn salted(&self) -> bool {
        self.salt.is_some()
    }

    /// `fragment_crc(salt, ty, payload)`.
    fn of(&self, ty: u8, payload: &[u8]) -> u32 {
        match self.starts.get(usize::from(ty)) {
            Some(&start) => masked_crc_from(start, payload),
            None => fragment_crc(self.salt, ty, payload),
        }
    }
}

/// The 40-byte WAL header (version 6) naming `origin`.
// Layout: docs/format.md#record-framing
fn wal_header(origin: Origin) -> Vec<u8> {
    let mut h = Vec::with_capacity(WAL_HEADER_LEN);
    h.extend_from_slice(WAL_MAGIC);
    h.extend_from_slice(&WAL_VERSION.to_le_bytes());
    h.extend_from_slice(&(origin.identity as u64).to_le_bytes());
    h.extend_from_slice(&((origin.identity >> 64) as u64).to_le_bytes());
    h.extend_from_slice(&origin.number.to_le_bytes());
    let crc = masked_crc(&h);
    h.extend_from_slice(&crc.to_le_bytes());
    h
}

/// The length of the file header that starts with `prefix` (at least its
/// first 12 bytes) in a file with `magic`: a WAL segment's 40 bytes (16
/// for the first pre-release WAL header, so that it is refused in words),
/// a manifest's 16.
fn header_len(prefix: &[u8], magic: &[u8; 8]) -> usize {
    if magic == WAL_MAGIC && get_u32(prefix, 8) != Some(1) {
        WAL_HEADER_LEN
    } else {
        FILE_HEADER_LEN
    }
}

/// Checks a whole file header (16 or 40 bytes, as [`header_len`] said)
/// against `magic`; returns whose WAL segment it is (`None` for a
/// manifest), or what is wrong. Format 1 reads one header version per
/// magic: 6 for a WAL segment, 1 for a manifest. A WAL header of versions
/// 1 to 5 was written by a pre-release build and is refused as such; any
/// other version is refused naming it (docs/format.md#format-1--the-first-release).
fn check_file_header(header: &[u8], magic: &[u8; 8]) -> Result<Option<Origin>, String> {
    let n = header.len();
    let (Some(covered), Some(stored), true) = (
        header.get(..n.saturating_sub(4)),
        get_u32(header, n.saturating_sub(4)),
        n >= FILE_HEADER_LEN,
    ) else {
        return Err("file header is shorter than 16 bytes".to_string());
    };
    let found = covered.get(..8).unwrap_or_default();
    if found != magic {
        if masked_crc(covered) != stored {
            return Err("file header checksum mismatch".to_string());
        }
        return Err(format!(
            "wrong magic: expected \"{}\", found \"{}\"",
            magic.escape_ascii(),
            found.escape_ascii()
        ));
    }
    let wal = magic == WAL_MAGIC;
    let (kind, current) = if wal {
        ("WAL header", WAL_VERSION)
    } else {
        ("manifest header", MANIFEST_VERSION)
    };
    let version = get_u32(covered, 8).unwrap_or_default();
    let pre_release = wal && (1..WAL_VERSION).contains(&version);
    if version != current && !pre_release {
        return Err(format!(
            "{kind} version {version}, which this build does not read (format 1 reads \
             version {current}): written by a later version of lamina, or damaged"
        ));
    }
    if masked_crc(covered) != stored {
        return Err("file header checksum mismatch".to_string());
    }
    if pre_release {
        return Err(crate::error::pre_release_reason(&format!(
            "{kind} version {version}"
        )));
    }
    let u64_at = |at: usize| crate::coding::get_u64(covered, at).unwrap_or_default();
    Ok(wal.then(|| Origin {
        identity: u128::from(u64_at(12)) | (u128::from(u64_at(20)) << 64),
        number: u64_at(28),
    }))
}

/// Name of a fragment type, for error messages.
fn type_name(ty: u8) -> &'static str {
    match ty {
        FULL => "FULL",
        FIRST => "FIRST",
        MIDDLE => "MIDDLE",
        LAST => "LAST",
        END => "END",
        _ => "unknown",
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests;
