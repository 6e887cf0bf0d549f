//! Reads records back from a log file and classifies damage.

use super::{
    check_file_header, header_len, type_name, BlobSynced, FragmentCrc, Origin, BLOCK_SIZE, END,
    FILE_HEADER_LEN, FIRST, FRAGMENT_HEADER_LEN, FULL, LAST, MIDDLE,
};
use crate::coding::get_u32;
use crate::fs::{FileSystem, RandomAccessFile};
use crate::{Error, Result};
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where a torn tail begins: the log's records end at `offset` and the
/// `dropped_bytes` after it held a write a crash interrupted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TornTail {
    /// Offset just past the last whole record (0 when the file header itself
    /// is incomplete).
    pub offset: u64,
    /// Bytes of the file after `offset`.
    pub dropped_bytes: u64,
}

/// Reads the records of a log file in order, one block (32 KiB) in memory
/// at a time. Layout: docs/format.md#record-framing.
///
/// Damage is classified as the format requires. A bad fragment (short
/// header, short payload, bad checksum, zero fill, unknown type, length past
/// the end of its block, non-zero block trailer) is a **torn tail** when no
/// valid data follows it: `next_record` returns `Ok(None)` and
/// [`LogReader::torn_tail`] says where the good records ended. It is
/// **corruption** when a valid fragment (good checksum, known type, inside
/// its block) follows it — right after it in the same block, or at the start
/// of any later block: `next_record` returns [`Error::Corruption`] with the
/// bad fragment's offset. Valid fragments in an impossible order (FIRST
/// without LAST, MIDDLE or LAST without FIRST) are always corruption; a
/// record whose last fragments are missing at the end of the file is a torn
/// tail. A file that ends cleanly after its last whole record has no torn
/// tail; any bytes after the last whole record (part of a record, a zero
/// trailer, zero fill) make one. Once `next_record` has returned an error it
/// returns the same error again.
///
/// A WAL segment (docs/format.md#recyclable-segments) checks each fragment
/// with its file number and stops at END (it is then *closed*). Without END
/// it *ends open* at the first fragment that does not verify; that is a
/// torn tail only if the file ends inside that fragment (otherwise the rest
/// is zero fill or an earlier life's records). Damage followed by a
/// fragment that verifies is corruption, as in a manifest.
///
/// A WAL segment's marks (docs/format.md#blob-sync-marks) are records too,
/// but not batches: `next_record` never returns one; it keeps what they say
/// ([`LogReader::blob_synced`]).
pub struct LogReader {
    file: Arc<dyn RandomAccessFile>,
    path: PathBuf,
    file_len: u64,
    /// Length of the file header (16 for a manifest, 40 for a WAL segment).
    header_len: u64,
    /// Whose segment this is, as a WAL segment's header says (`None` for a
    /// manifest, or a header cut short).
    origin: Option<Origin>,
    /// Fragment checksums, covering the segment's number in a WAL segment
    /// (see [`FragmentCrc`]).
    crc: FragmentCrc,
    /// Per blob file, the greatest end a mark read so far says was synced.
    blob_synced: BTreeMap<u64, u64>,
    /// END was read, and the offset just past it.
    closed: Option<u64>,
    /// Bytes of the current block present in the file (the last one may be short).
    block: Vec<u8>,
    /// File offset of `block[0]`.
    block_start: u64,
    /// Position in `block` of the next fragment.
    pos: usize,
    valid_end: u64,
    torn: Option<TornTail>,
    done: bool,
    failed: Option<Error>,
}

/// One step of reading fragments.
enum Step {
    /// The file ends cleanly at a fragment boundary or inside a zero trailer.
    End,
    /// A damaged fragment at `offset`; `next` is the offset just after it if
    /// its length field places it inside its block and the file.
    Bad {
        offset: u64,
        next: Option<u64>,
        reason: String,
        /// The file ends inside this fragment (header or payload cut short).
        at_eof: bool,
    },
    /// A fragment with a good checksum and a known type; `payload` indexes `block`.
    Good {
        ty: u8,
        offset: u64,
        payload: Range<usize>,
    },
}

impl Step {
    /// A [`Step::Bad`].
    fn bad(offset: u64, next: Option<u64>, reason: String, at_eof: bool) -> Step {
        Step::Bad {
            offset,
            next,
            reason,
            at_eof,
        }
    }
}

impl LogReader {
    /// Opens the log at `path` and checks its file header against `magic`.
    ///
    /// A file shorter than the header (empty included) is a torn tail at
    /// offset 0: it yields no record. A full header with a bad checksum, a
    /// wrong magic or a version other than format 1's (a pre-release one
    /// is refused in those words) is [`Error::Corruption`] at offset 0.
    pub fn open(fs: &dyn FileSystem, path: &Path, magic: &[u8; 8]) -> Result<LogReader> {
        let file = fs.open(path).map_err(|e| Error::io(path, e))?;
        let file_len = file.len();
        let mut reader = LogReader {
            file,
            path: path.to_path_buf(),
            file_len,
            header_len: FILE_HEADER_LEN as u64,
            origin: None,
            crc: FragmentCrc::new(None),
            blob_synced: BTreeMap::new(),
            closed: None,
            block: Vec::new(),
            block_start: FILE_HEADER_LEN as u64,
            pos: 0,
            valid_end: 0,
            torn: None,
            done: false,
            failed: None,
        };
        if file_len < FILE_HEADER_LEN as u64 {
            reader.stop_torn();
            return Ok(reader);
        }
        let len = header_len(&reader.read(0, 12)?, magic);
        if file_len < len as u64 {
            reader.stop_torn();
            return Ok(reader);
        }
        let header = reader.read(0, len)?;
        let origin =
            check_file_header(&header, magic).map_err(|r| Error::corruption(path, 0, r))?;
        reader.origin = origin;
        reader.crc = FragmentCrc::new(origin.map(|o| o.number));
        reader.header_len = len as u64;
        reader.block_start = len as u64;
        reader.valid_end = len as u64;
        reader.load_block()?;
        Ok(reader)
    }

    /// The next record, `Ok(None)` at the end of the log (clean or torn), or
    /// the corruption that stops the log from being read further. Marks
    /// are kept, not returned.
    pub fn next_record(&mut self) -> Result<Option<Vec<u8>>> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        loop {
            if self.done {
                return Ok(None);
            }
            let start = self.valid_end;
            let read = match self.read_record() {
                Ok(Some(rec)) if self.origin.is_some() => match self.keep_mark(start, &rec) {
                    Ok(true) => continue,
                    Ok(false) => Ok(Some(rec)),
                    Err(e) => Err(e),
                },
                r => r,
            };
            if let Err(e) = &read {
                self.failed = Some(e.clone());
            }
            return read;
        }
    }

    /// If `record` (starting at `start`) is a mark, keeps what it says and
    /// returns `true`; a malformed one is corruption.
    fn keep_mark(&mut self, start: u64, record: &[u8]) -> Result<bool> {
        match BlobSynced::parse(record) {
            None => Ok(false),
            Some(Ok(m)) => {
                let end = self.blob_synced.entry(m.file).or_default();
                *end = (*end).max(m.end);
                Ok(true)
            }
            Some(Err(why)) => Err(self.corruption(start, why)),
        }
    }

    /// Per blob file written at commit, the greatest end that the marks read
    /// so far say it was synced to (docs/format.md#blob-sync-marks).
    pub fn blob_synced(&self) -> &BTreeMap<u64, u64> {
        &self.blob_synced
    }

    fn read_record(&mut self) -> Result<Option<Vec<u8>>> {
        // The record being assembled and the offset of its FIRST fragment.
        let mut partial: Option<(u64, Vec<u8>)> = None;
        loop {
            match self.next_fragment()? {
                Step::End => {
                    // Bytes after the last whole record (an unfinished record,
                    // or the zero trailer written with one) are a torn write.
                    if partial.is_some() || (self.file_len > self.valid_end && !self.crc.salted()) {
                        self.stop_torn();
                    } else {
                        self.done = true;
                    }
                    return Ok(None);
                }
                Step::Bad {
                    offset,
                    next,
                    reason,
                    at_eof,
                } => {
                    if self.valid_data_follows(offset, next)? {
                        return Err(self.corruption(offset, reason));
                    }
                    if self.crc.salted() && !at_eof {
                        // Zero fill or an earlier life: the segment ends open.
                        self.done = true;
                    } else {
                        self.stop_torn();
                    }
                    return Ok(None);
                }
                Step::Good {
                    ty,
                    offset,
                    payload,
                } => {
                    let bytes = self.block.get(payload).unwrap_or_default();
                    match (ty, partial.as_mut()) {
                        (END, None) => {
                            self.closed = Some(self.block_start.saturating_add(self.pos as u64));
                            self.done = true;
                            return Ok(None);
                        }
                        (FULL, None) => {
                            let record = bytes.to_vec();
                            self.record_ends_here();
                            return Ok(Some(record));
                        }
                        (FIRST, None) => partial = Some((offset, bytes.to_vec())),
                        (MIDDLE, Some((_, record))) => record.extend_from_slice(bytes),
                        (LAST, Some((_, record))) => {
                            record.extend_from_slice(bytes);
                            let record = std::mem::take(record);
                            self.record_ends_here();
                            return Ok(Some(record));
                        }
                        (FULL | FIRST | END, Some((start, _))) => {
                            let reason = format!(
                                "FIRST fragment is not followed by MIDDLE or LAST: \
                                 a {} fragment follows at offset {offset}",
                                type_name(ty)
                            );
                            return Err(self.corruption(*start, reason));
                        }
                        _ => {
                            let reason =
                                format!("{} fragment without a FIRST before it", type_name(ty));
                            return Err(self.corruption(offset, reason));
                        }
                    }
                }
            }
        }
    }

    /// Whose WAL segment this is, as its header says; `None` for a manifest
    /// or a header cut short.
    pub fn origin(&self) -> Option<Origin> {
        self.origin
    }

    /// Refuses a WAL segment from elsewhere: corruption at offset 0 if its
    /// header names a database other than `identity` or a file number other
    /// than `number`. A header cut short (a crash right after the segment
    /// was created) names neither and passes: the segment holds no record.
    /// Layout: docs/format.md#wal.
    pub fn check_origin(&self, identity: u128, number: u64) -> Result<()> {
        let Some(o) = self.origin else {
            return Ok(());
        };
        if o.identity != identity {
            return Err(self.corruption(
                0,
                format!(
                    "WAL segment belongs to another database (identity {:032x}, this database's is {identity:032x})",
                    o.identity,
                ),
            ));
        }
        if o.number != number {
            return Err(self.corruption(
                0,
                format!(
                    "WAL segment was written as number {} but is named as number {number} \
                     (copied or renamed)",
                    o.number
                ),
            ));
        }
        Ok(())
    }

    /// Whether the log ended without a clean end, once `next_record` has
    /// returned `Ok(None)`: a torn tail, or a WAL segment not closed by
    /// END (the one being written, or one a crash stopped).
    pub fn ends_open(&self) -> bool {
        self.torn.is_some() || (self.crc.salted() && self.closed.is_none())
    }

    /// Whether this WAL segment, read to its end (`next_record` returned
    /// `Ok(None)`), was closed by END with nothing but zeros after it: no
    /// byte past [`LogReader::valid_end`] holds a fragment, so records
    /// written there from now on are the only ones a later reader can find
    /// (docs/format.md#appending-to-a-closed-segment). Reads the bytes
    /// after END.
    pub fn closed_before_zeros(&self) -> Result<bool> {
        let Some(end) = self.closed else {
            return Ok(false);
        };
        // The rest of the block END is in is read already.
        let in_block = usize::try_from(end.saturating_sub(self.block_start)).unwrap_or(usize::MAX);
        if self
            .block
            .get(in_block..)
            .unwrap_or_default()
            .iter()
            .any(|&b| b != 0)
        {
            return Ok(false);
        }
        let mut at = self.block_start.saturating_add(self.block.len() as u64);
        while at < self.file_len {
            let len = usize::try_from(self.file_len - at).map_or(BLOCK_SIZE, |n| n.min(BLOCK_SIZE));
            if self.read(at, len)?.iter().any(|&b| b != 0) {
                return Ok(false);
            }
            at = at.saturating_add(len as u64);
        }
        Ok(true)
    }

    /// Offset just past the last whole record returned so far (the end of
    /// the header, before any; 0 if the header is incomplete).
    pub fn valid_end(&self) -> u64 {
        self.valid_end
    }

    /// Where the torn tail begins, once `next_record` has returned `Ok(None)`
    /// because of one; `None` otherwise (still reading, or a clean end).
    pub fn torn_tail(&self) -> Option<TornTail> {
        self.torn
    }

    #[cfg(any(test, feature = "internals"))]
    /// The path of the file being read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn record_ends_here(&mut self) {
        self.valid_end = self.block_start.saturating_add(self.pos as u64);
    }

    fn stop_torn(&mut self) {
        self.done = true;
        self.torn = Some(TornTail {
            offset: self.valid_end,
            dropped_bytes: self.file_len.saturating_sub(self.valid_end),
        });
    }

    fn corruption(&self, offset: u64, reason: impl Into<String>) -> Error {
        Error::corruption(&self.path, offset, reason)
    }

    fn read(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        if len == 0 {
            return Ok(Vec::new());
        }
        self.file
            .read_at(offset, len)
            .map_err(|e| Error::io(&self.path, e))
    }

    /// Reads the block starting at `block_start` (short or empty at the end).
    fn load_block(&mut self) -> Result<()> {
        let present = self.file_len.saturating_sub(self.block_start);
        let len = usize::try_from(present).map_or(BLOCK_SIZE, |p| p.min(BLOCK_SIZE));
        self.block = self.read(self.block_start, len)?;
        self.pos = 0;
        Ok(())
    }

    /// Reads the next fragment header and payload of the current block,
    /// moving to the next block over a zero trailer.
    fn next_fragment(&mut self) -> Result<Step> {
        loop {
            let offset = self.block_start.saturating_add(self.pos as u64);
            let room = BLOCK_SIZE.saturating_sub(self.pos);
            if room < FRAGMENT_HEADER_LEN {
                match self.cross_trailer(offset)? {
                    Some(step) => return Ok(step),
                    None => continue,
                }
            }
            let rest = self.block.get(self.pos..).unwrap_or_default();
            if rest.is_empty() {
                return Ok(Step::End);
            }
            let Some(header) = parse_header(rest) else {
                let reason = "truncated fragment header".to_string();
                return Ok(Step::bad(offset, None, reason, true));
            };
            let end = FRAGMENT_HEADER_LEN.saturating_add(header.len);
            if end > room {
                let reason = format!(
                    "fragment length {} runs past the end of its block ({} bytes left)",
                    header.len,
                    room - FRAGMENT_HEADER_LEN
                );
                return Ok(Step::bad(offset, None, reason, false));
            }
            let Some(payload) = rest.get(FRAGMENT_HEADER_LEN..end) else {
                let reason = format!("truncated fragment payload (length {})", header.len);
                return Ok(Step::bad(offset, None, reason, true));
            };
            let next = Some(offset.saturating_add(end as u64));
            if let Some(reason) = self.fragment_fault(&header, payload) {
                return Ok(Step::bad(offset, next, reason, false));
            }
            let start = self.pos.saturating_add(FRAGMENT_HEADER_LEN);
            self.pos = self.pos.saturating_add(end);
            return Ok(Step::Good {
                ty: header.ty,
                offset,
                payload: start..self.pos,
            });
        }
    }

    /// At a block's trailer (too short for a fragment header), at `offset`:
    /// moves to the next block and returns `None`, or returns the step that
    /// ends the read there (the file's end, or a trailer not zero).
    fn cross_trailer(&mut self, offset: u64) -> Result<Option<Step>> {
        let rest = self.block.get(self.pos..).unwrap_or_default();
        if rest.iter().any(|&b| b != 0) {
            let reason = "non-zero bytes in a block trailer".to_string();
            return Ok(Some(Step::bad(offset, None, reason, false)));
        }
        if self.block.len() < BLOCK_SIZE {
            return Ok(Some(Step::End));
        }
        self.block_start = self.block_start.saturating_add(BLOCK_SIZE as u64);
        self.load_block()?;
        Ok(None)
    }

    /// What is wrong with a whole fragment of `header` and `payload`, if
    /// anything: zero-filled, a checksum that does not match, or a type
    /// this log does not know.
    fn fragment_fault(&self, header: &FragmentHeader, payload: &[u8]) -> Option<String> {
        if header.is_zero() {
            return Some("zero-filled bytes where a fragment should be".to_string());
        }
        if self.crc.of(header.ty, payload) != header.crc {
            return Some("fragment checksum mismatch".to_string());
        }
        if !self.known_type(header.ty) {
            return Some(format!("unknown fragment type {}", header.ty));
        }
        None
    }

    /// Whether a valid fragment starts at `next` (the offset right after a
    /// bad fragment) or at any block start after `bad`.
    fn valid_data_follows(&self, bad: u64, next: Option<u64>) -> Result<bool> {
        if let Some(next) = next {
            if self.valid_fragment_at(next)? {
                return Ok(true);
            }
        }
        let block = BLOCK_SIZE as u64;
        let header = self.header_len;
        let mut start = header.saturating_add(
            (bad.saturating_sub(header) / block)
                .saturating_add(1)
                .saturating_mul(block),
        );
        while start < self.file_len {
            if self.valid_fragment_at(start)? {
                return Ok(true);
            }
            start = start.saturating_add(block);
        }
        Ok(false)
    }

    /// Whether the bytes at `offset` hold a fragment with a good checksum, a
    /// known type and a length that keeps it inside its block and the file.
    fn valid_fragment_at(&self, offset: u64) -> Result<bool> {
        let in_block = offset.saturating_sub(self.header_len) % BLOCK_SIZE as u64;
        let room = BLOCK_SIZE as u64 - in_block;
        let available = self.file_len.saturating_sub(offset);
        if offset < self.header_len || room.min(available) < FRAGMENT_HEADER_LEN as u64 {
            return Ok(false);
        }
        let bytes = self.read(offset, FRAGMENT_HEADER_LEN)?;
        let Some(header) = parse_header(&bytes) else {
            return Ok(false);
        };
        let end = (FRAGMENT_HEADER_LEN + header.len) as u64;
        if end > room.min(available) || header.is_zero() || !self.known_type(header.ty) {
            return Ok(false);
        }
        let payload = self.read(
            offset.saturating_add(FRAGMENT_HEADER_LEN as u64),
            header.len,
        )?;
        Ok(self.crc.of(header.ty, &payload) == header.crc)
    }

    /// Whether `ty` is a fragment type of this file (END only in a WAL segment).
    fn known_type(&self, ty: u8) -> bool {
        (FULL..=LAST).contains(&ty) || (ty == END && self.crc.salted())
    }
}

impl std::fmt::Debug for LogReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogReader")
            .field("path", &self.path)
            .field("valid_end", &self.valid_end)
            .field("torn", &self.torn)
            .finish_non_exhaustive()
    }
}

struct FragmentHeader {
    crc: u32,
    len: usize,
    ty: u8,
}

impl FragmentHeader {
    fn is_zero(&self) -> bool {
        self.crc == 0 && self.len == 0 && self.ty == 0
    }
}

/// The fragment header at the start of `bytes`, if 7 bytes are there.
fn parse_header(bytes: &[u8]) -> Option<FragmentHeader> {
    let crc = get_u32(bytes, 0)?;
    let len = u16::from_le_bytes([*bytes.get(4)?, *bytes.get(5)?]);
    let ty = *bytes.get(6)?;
    Some(FragmentHeader {
        crc,
        len: usize::from(len),
        ty,
    })
}
