//! Reads blob files: one value through its pointer, or every record in order.
//!
//! Layout: docs/format.md#blob-file.

use super::pointer::BlobPointer;
use super::{FOOTER_LEN, HEADER_LEN, MAGIC, RECORD_HEADER_LEN, VERSION};
use crate::coding::{get_u32, get_u64, masked_crc, masked_crc_copy, masked_crc_copy_into};
use crate::error::{Error, Result};
use crate::fs::RandomAccessFile;
use std::mem::MaybeUninit;
use std::path::Path;

/// Reads the value `ptr` names from `file` (at `path`) into `buf` and
/// verifies its checksum. REQUIRES: `buf.len() == ptr.len`.
/// A mismatch is `Corruption` naming the file and the value's offset; `buf`
/// then holds bytes that must not be used.
pub fn read_value(
    file: &dyn RandomAccessFile,
    path: &Path,
    ptr: &BlobPointer,
    buf: &mut [u8],
) -> Result<()> {
    check_bounds(path, ptr, buf.len(), file.len())?;
    file.read_exact_at(ptr.offset, buf).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            Error::corruption(path, ptr.offset, "blob file ends inside a value")
        } else {
            Error::io(path, e)
        }
    })?;
    verify(path, ptr, buf)
}

/// [`read_value`] from the bytes of a whole blob file in memory (a
/// mapping): the value's bytes there are read once, to be copied into `buf`
/// and checksummed in the same pass. A mismatch is `Corruption` as
/// [`read_value`]'s; `buf` then holds bytes that must not be used.
pub(crate) fn copy_value(
    file: &[u8],
    path: &Path,
    ptr: &BlobPointer,
    buf: &mut [u8],
) -> Result<()> {
    let value = value_in(file, path, ptr, buf.len())?;
    check_crc(path, ptr, masked_crc_copy_into(value, buf))
}

/// [`copy_value`] into a buffer not yet initialised (a new Python `bytes`
/// object's); returns it, initialised.
pub(crate) fn copy_value_uninit<'b>(
    file: &[u8],
    path: &Path,
    ptr: &BlobPointer,
    buf: &'b mut [MaybeUninit<u8>],
) -> Result<&'b [u8]> {
    let value = value_in(file, path, ptr, buf.len())?;
    let (crc, copy) = masked_crc_copy(value, buf);
    check_crc(path, ptr, crc)?;
    Ok(copy)
}

/// The bytes of the value `ptr` names in the whole file `file`, checked to
/// be `len` bytes inside it.
fn value_in<'f>(file: &'f [u8], path: &Path, ptr: &BlobPointer, len: usize) -> Result<&'f [u8]> {
    check_bounds(path, ptr, len, file.len() as u64)?;
    usize::try_from(ptr.offset)
        .ok()
        .and_then(|at| file.get(at..at.checked_add(len)?))
        .ok_or_else(|| Error::corruption(path, ptr.offset, "blob file ends inside a value"))
}

/// `InvalidArgument` unless a buffer of `buf_len` bytes fits a value of
/// `value_len` exactly.
pub(crate) fn check_buffer(buf_len: usize, value_len: usize) -> Result<()> {
    if buf_len != value_len {
        return Err(Error::InvalidArgument(format!(
            "a buffer of {buf_len} bytes for a value of {value_len}"
        )));
    }
    Ok(())
}

fn check_bounds(path: &Path, ptr: &BlobPointer, buf_len: usize, file_len: u64) -> Result<()> {
    check_buffer(buf_len, ptr.len as usize)?;
    let end = ptr.offset.checked_add(u64::from(ptr.len));
    if ptr.offset < HEADER_LEN as u64 || end.is_none_or(|e| e > file_len) {
        return Err(Error::corruption(
            path,
            ptr.offset,
            format!(
                "a blob pointer names {} bytes at offset {}, outside the file of {file_len} bytes",
                ptr.len, ptr.offset,
            ),
        ));
    }
    Ok(())
}

fn verify(path: &Path, ptr: &BlobPointer, value: &[u8]) -> Result<()> {
    check_crc(path, ptr, masked_crc(value))
}

/// `Corruption` unless `crc`, the masked CRC32C of the value `ptr` names,
/// is the one `ptr` holds.
fn check_crc(path: &Path, ptr: &BlobPointer, crc: u32) -> Result<()> {
    if crc != ptr.crc {
        return Err(Error::corruption(
            path,
            ptr.offset,
            format!(
                "checksum mismatch in the blob value of {} bytes at offset {}",
                ptr.len, ptr.offset
            ),
        ));
    }
    Ok(())
}

/// `Corruption` at the first byte of `from..to` in `file` that is not zero.
fn check_zeros(file: &dyn RandomAccessFile, path: &Path, from: u64, to: u64) -> Result<()> {
    const PIECE: u64 = 1 << 20;
    let mut at = from;
    while at < to {
        let len = (to - at).min(PIECE);
        let bytes = file
            .read_at(at, len as usize)
            .map_err(|e| Error::io(path, e))?;
        if let Some(i) = bytes.iter().position(|&b| b != 0) {
            let bad = at + i as u64;
            return Err(Error::corruption(
                path,
                bad,
                format!("non-zero byte at offset {bad} after the last record (at {from})"),
            ));
        }
        at += len;
    }
    Ok(())
}

/// Whether the bytes `value` at file offset `offset` hold a piece between
/// two 4 KiB boundaries of the file (or the value's start or end) that is
/// all zeros: a page a power loss left as the zeros written ahead of a
/// file written at commit (docs/format.md#blob-files-written-at-commit,
/// recovery).
pub(crate) fn has_zero_page(offset: u64, value: &[u8]) -> bool {
    const PAGE: u64 = 4096;
    let mut rest = value;
    let mut at = offset;
    while !rest.is_empty() {
        let piece = usize::try_from(PAGE - at % PAGE).map_or(rest.len(), |p| p.min(rest.len()));
        let (now, later) = rest.split_at(piece);
        if now.iter().all(|&b| b == 0) {
            return true;
        }
        rest = later;
        at += piece as u64;
    }
    false
}

/// One record of a blob file, as listed by [`scan`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobRecord {
    /// The tree key the value was written under.
    pub tree_key: Vec<u8>,
    /// The pointer to its value.
    pub pointer: BlobPointer,
}

/// What [`scan`] found: the records, and the counts the footer declares.
#[derive(Debug, Clone, Default)]
pub struct BlobListing {
    /// Every record, in file order.
    pub records: Vec<BlobRecord>,
    /// Records declared by the footer.
    pub footer_records: u64,
    /// Value bytes declared by the footer.
    pub footer_value_bytes: u64,
}

/// Reads every record of the blob file at `path`, verifying the header, each
/// record's header and value checksums, and the footer. The first problem is
/// `Corruption` naming the offset.
pub fn scan(file: &dyn RandomAccessFile, path: &Path, number: u64) -> Result<BlobListing> {
    let bad = |at: u64, why: String| Error::corruption(path, at, why);
    let len = file.len();
    if len < (HEADER_LEN + FOOTER_LEN) as u64 {
        return Err(bad(
            0,
            format!("blob file of {len} bytes is shorter than a header and a footer"),
        ));
    }
    check_header(file, path)?;
    let footer_at = len - FOOTER_LEN as u64;
    let footer = file
        .read_at(footer_at, FOOTER_LEN)
        .map_err(|e| Error::io(path, e))?;
    if footer.get(20..) != Some(MAGIC.as_slice())
        || get_u32(&footer, 16) != Some(masked_crc(footer.get(..16).unwrap_or(&[])))
    {
        return Err(bad(
            footer_at,
            "blob file footer is missing or damaged (the file was not finished)".into(),
        ));
    }
    let (records, value_bytes) = read_records(file, path, number, footer_at, "the footer", false)?;
    let listing = BlobListing {
        records,
        footer_records: get_u64(&footer, 0).unwrap_or(0),
        footer_value_bytes: get_u64(&footer, 8).unwrap_or(0),
    };
    if listing.records.len() as u64 != listing.footer_records
        || value_bytes != listing.footer_value_bytes
    {
        return Err(bad(
            footer_at,
            format!(
                "footer declares {} records of {} value bytes; the file holds {} of {}",
                listing.footer_records,
                listing.footer_value_bytes,
                listing.records.len(),
                value_bytes
            ),
        ));
    }
    Ok(listing)
}

/// [`scan`] of a blob file written at commit and not yet sealed
/// (docs/format.md#blob-files-written-at-commit): the records run to the end
/// of the file or to a record header of zeros, after which the file holds
/// only zeros; there is no footer (the listing's footer counts are those of
/// the records found).
pub fn scan_open(file: &dyn RandomAccessFile, path: &Path, number: u64) -> Result<BlobListing> {
    if file.len() < HEADER_LEN as u64 {
        return Err(Error::corruption(
            path,
            0,
            format!(
                "blob file of {} bytes is shorter than its header",
                file.len()
            ),
        ));
    }
    check_header(file, path)?;
    let (records, value_bytes) =
        read_records(file, path, number, file.len(), "the end of the file", true)?;
    Ok(BlobListing {
        footer_records: records.len() as u64,
        footer_value_bytes: value_bytes,
        records,
    })
}

/// Checks the blob file's header: its magic, version 2 (the pre-release
/// version 1 is refused in those words) and checksum.
fn check_header(file: &dyn RandomAccessFile, path: &Path) -> Result<()> {
    let bad = |why: String| Error::corruption(path, 0, why);
    let header = file
        .read_at(0, HEADER_LEN)
        .map_err(|e| Error::io(path, e))?;
    let (magic, rest) = header.split_at(MAGIC.len().min(header.len()));
    if magic != MAGIC {
        return Err(bad("not a blob file (bad magic)".into()));
    }
    let version = get_u32(rest, 0).unwrap_or_default();
    if version != VERSION && version != 1 {
        return Err(bad(format!(
            "blob file header version {version}, which this build does not read (format 1 \
             reads version {VERSION}): written by a later version of lamina, or damaged"
        )));
    }
    if get_u32(rest, 4) != Some(masked_crc(header.get(..12).unwrap_or(&[]))) {
        return Err(bad("blob file header checksum mismatch".into()));
    }
    if version == 1 {
        return Err(Error::pre_release(path, "blob file header version 1"));
    }
    Ok(())
}

/// The records from the header to `end` (named `end_name` in errors), each
/// header and value checked, or, where `zeros_end` and a record header (or
/// what is left of the file, if shorter) is all zeros, to there (every byte
/// from it to `end` must be zero); and the sum of their value lengths.
fn read_records(
    file: &dyn RandomAccessFile,
    path: &Path,
    number: u64,
    end: u64,
    end_name: &str,
    zeros_end: bool,
) -> Result<(Vec<BlobRecord>, u64)> {
    let bad = |at: u64, why: String| Error::corruption(path, at, why);
    let io = |e| Error::io(path, e);
    let mut records = Vec::new();
    let mut at = HEADER_LEN as u64;
    let mut value_bytes = 0u64;
    while at < end {
        if end - at < RECORD_HEADER_LEN as u64 {
            // Fewer zeros than a record header: zeros ahead a full disk cut
            // short (docs/format.md#blob-files-written-at-commit).
            if zeros_end && check_zeros(file, path, at, end).is_ok() {
                break;
            }
            return Err(bad(at, format!("record header runs into {end_name}")));
        }
        let head = file.read_at(at, RECORD_HEADER_LEN).map_err(io)?;
        if zeros_end && head.iter().all(|&b| b == 0) {
            check_zeros(file, path, at, end)?;
            break;
        }
        let field = |i: usize| get_u32(&head, i).unwrap_or(0);
        let (header_crc, key_len, value_len, value_crc) = (field(0), field(4), field(8), field(12));
        let key_at = at + RECORD_HEADER_LEN as u64;
        let value_at = key_at + u64::from(key_len);
        if value_at + u64::from(value_len) > end {
            return Err(bad(
                at,
                format!("record of a {key_len}-byte key and a {value_len}-byte value runs into {end_name}"),
            ));
        }
        let tree_key = file.read_at(key_at, key_len as usize).map_err(io)?;
        let mut covered = head.get(4..).unwrap_or(&[]).to_vec();
        covered.extend_from_slice(&tree_key);
        if masked_crc(&covered) != header_crc {
            return Err(bad(at, "record header checksum mismatch".into()));
        }
        let pointer = BlobPointer {
            file: number,
            offset: value_at,
            len: value_len,
            crc: value_crc,
        };
        let mut value = vec![0u8; value_len as usize];
        read_value(file, path, &pointer, &mut value)?;
        records.push(BlobRecord { tree_key, pointer });
        value_bytes += u64::from(value_len);
        at = value_at + u64::from(value_len);
    }
    Ok((records, value_bytes))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::has_zero_page;

    #[test]
    fn a_zero_piece_between_page_boundaries_is_found_and_nothing_else() {
        let mut v = vec![7u8; 10_000];
        // At offset 100: pieces 100..4096, 4096..8192, 8192..10100.
        assert!(!has_zero_page(100, &v));
        v[3996..8092].fill(0); // the whole second piece
        assert!(has_zero_page(100, &v));
        v[4000] = 1;
        assert!(
            !has_zero_page(100, &v),
            "zeros across a boundary are not a page"
        );
        let mut tail = vec![7u8; 10_000];
        tail[8092..].fill(0); // the last piece, up to the value's end
        assert!(has_zero_page(100, &tail));
        tail[8092..9000].fill(7);
        assert!(!has_zero_page(100, &tail), "zeros short of a boundary");
        assert!(!has_zero_page(5, &[]));
    }
}
