//! Writes one blob file: header, records appended as values arrive, footer.
//!
//! Layout: docs/format.md#blob-file.

use super::pointer::BlobPointer;
use super::{BlobMeta, FOOTER_LEN, HEADER_LEN, MAGIC, RECORD_HEADER_LEN, VERSION};
use crate::coding::masked_crc;
use crate::error::{Error, Result};
use crate::fs::{FileSystem, WritableFile, Writeback, WritebackMark};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Bytes handed to the file at once, at offsets that are multiples of it.
/// Whole aligned writes let the page cache keep the file in large folios,
/// which a mapped read of a value then faults in a few pages at a time
/// (a blob file appended value by value, at unaligned offsets, sits in
/// 4 KiB pages, and a first read through a fresh mapping costs more:
/// `.venv/bin/python bench/cold_blob_reads.py`).
const WRITE_CHUNK: usize = 1 << 20;

/// A file written at commit runs ahead of its records in zeros to a
/// multiple of a step, for the same large folios: first reads through a
/// fresh mapping ran 1.4x faster than with the file appended value by value
/// (`.venv/bin/python bench/blob_first_pass.py`). The step is this, or
/// [`LARGE_FILL_STEP`] for a large record ([`fill_step`]).
const FILL_STEP: usize = 256 << 10;

/// The step of a record longer than [`LARGE_RECORD`]. A fresh mapping maps
/// a whole folio a fault, and the dbm benchmark's read rows each open the
/// database anew: 100 KB values read at random from 1 MiB folios instead of
/// 256 KiB ones ran 1.09x as fast (`.venv/bin/python bench/dbm_bench.py
/// --large -d lamina --rounds 5`, read_random). The zeros cost the fill a
/// second write of each byte, which stays in the CPU's caches only with the
/// smaller step, so smaller records keep [`FILL_STEP`].
const LARGE_FILL_STEP: usize = 1 << 20;

/// Records (header, tree key and value) longer than this take
/// [`LARGE_FILL_STEP`]: values of 64 KiB and less read no faster from its
/// folios, 72,000 B and more did.
const LARGE_RECORD: usize = 68 << 10;

/// The zeros' step for a record of `record_len` bytes, in a file whose
/// records a commit has asked to be made durable (`synced`) or not. Every
/// sync writes the dirty zeros too, so a file synced at commit keeps the
/// small step (with a megabyte of zeros to write back, `Sync` puts of
/// 100 KB values waited several times as long at the 99th percentile).
fn fill_step(record_len: usize, synced: bool) -> usize {
    if record_len > LARGE_RECORD && !synced {
        LARGE_FILL_STEP
    } else {
        FILL_STEP
    }
}

/// Zeros a file written at commit is extended with, [`LARGE_FILL_STEP`] of
/// them. Mapped anonymous and never written, every page of them is the
/// kernel's one zero page, so a write of zeros reads the same 4 KiB over and
/// over: an array of zeros in the binary's read-only data is as many
/// distinct pages, which each write of zeros would pull through the CPU's
/// caches beside the pages it fills.
fn zeros() -> &'static [u8] {
    enum Zeros {
        Mapped(memmap2::Mmap),
        Heap(Vec<u8>),
    }
    static ZEROS: OnceLock<Zeros> = OnceLock::new();
    let zeros = ZEROS.get_or_init(|| {
        memmap2::MmapOptions::new()
            .len(LARGE_FILL_STEP)
            .map_anon()
            .and_then(memmap2::MmapMut::make_read_only)
            .map_or_else(|_| Zeros::Heap(vec![0; LARGE_FILL_STEP]), Zeros::Mapped)
    });
    match zeros {
        Zeros::Mapped(map) => map,
        Zeros::Heap(heap) => heap,
    }
}

/// A blob file being written. Dropping it without `finish` leaves a partial
/// file behind that the caller removes (or open removes as a leftover).
///
/// Written by a flush or compaction, nothing reads it before `finish` has
/// synced it, so its bytes wait in `buf` until a whole chunk is there.
/// Written at commit ([`BlobWriter::create_at_commit`]), each record is
/// handed to the file as it is added: a reader may follow a pointer to it at
/// once, and a killed process loses none of it; the file runs ahead of its
/// records in zero-filled whole chunks until `finish` cuts it after the
/// footer (docs/format.md#blob-files-written-at-commit).
pub struct BlobWriter {
    file: Box<dyn WritableFile>,
    path: PathBuf,
    meta: BlobMeta,
    /// Bytes not yet handed to the file; they follow its `len()` bytes,
    /// which are always a whole number of chunks. Always empty at commit.
    buf: Vec<u8>,
    /// Bytes written so far (header and records): where the next record
    /// goes. At commit the file's zeros run past it.
    end: u64,
    /// Written at commit: records go to the file as they are added.
    at_commit: bool,
    /// Bytes were handed to the file since the last sync.
    unsynced: bool,
    /// A commit has asked for the file's records to be made durable: later
    /// records take the small step ([`fill_step`]).
    synced_at_commit: bool,
    /// How far [`BlobWriter::writeback_due`] asked for write-back.
    written_back: WritebackMark,
}

impl BlobWriter {
    /// Creates blob file `number` in `dir` and writes its header.
    pub fn create(fs: &dyn FileSystem, dir: &Path, number: u64) -> Result<BlobWriter> {
        Self::create_with(fs, dir, number, false)
    }

    /// Creates blob file `number` in `dir` for values written at commit and
    /// hands its header to the file, zeros after it to a whole chunk; the
    /// caller syncs the directory.
    pub fn create_at_commit(fs: &dyn FileSystem, dir: &Path, number: u64) -> Result<BlobWriter> {
        Self::create_with(fs, dir, number, true)
    }

    /// Takes up blob file `number`, written at commit and never sealed, to
    /// seal it (recovery): cuts it to `end`, the end of the last value a
    /// replayed pointer names, where `meta` (records, value bytes, key
    /// range) describes the records before it.
    pub fn resume(fs: &dyn FileSystem, dir: &Path, end: u64, meta: BlobMeta) -> Result<BlobWriter> {
        let path = crate::filename::path(dir, crate::filename::FileKind::Blob, meta.number);
        let mut file = fs.reopen(&path).map_err(|e| Error::io(&path, e))?;
        if file.len() < end {
            return Err(Error::corruption(
                &path,
                file.len(),
                format!(
                    "blob file ends before offset {end}, where a replayed pointer's value ends"
                ),
            ));
        }
        if file.len() > end {
            file.truncate(end).map_err(|e| Error::io(&path, e))?;
        }
        Ok(BlobWriter {
            file,
            path,
            meta,
            buf: Vec::new(),
            end,
            at_commit: true,
            unsynced: true,
            synced_at_commit: false,
            written_back: WritebackMark::default(),
        })
    }

    fn create_with(
        fs: &dyn FileSystem,
        dir: &Path,
        number: u64,
        at_commit: bool,
    ) -> Result<BlobWriter> {
        let path = crate::filename::path(dir, crate::filename::FileKind::Blob, number);
        let file = fs.create(&path).map_err(|e| Error::io(&path, e))?;
        // Layout: docs/format.md#blob-file
        let mut header = Vec::with_capacity(HEADER_LEN);
        header.extend_from_slice(MAGIC);
        header.extend_from_slice(&VERSION.to_le_bytes());
        let crc = masked_crc(&header);
        header.extend_from_slice(&crc.to_le_bytes());
        let mut w = BlobWriter {
            file,
            path,
            meta: BlobMeta {
                number,
                ..BlobMeta::default()
            },
            buf: Vec::new(),
            end: 0,
            at_commit,
            unsynced: false,
            synced_at_commit: false,
            written_back: WritebackMark::default(),
        };
        if at_commit {
            // Layout: docs/format.md#blob-files-written-at-commit (created)
            let mut first = vec![0u8; FILL_STEP];
            if let Some(head) = first.get_mut(..HEADER_LEN) {
                head.copy_from_slice(&header);
            }
            w.file.append(&first).map_err(|e| Error::io(&w.path, e))?;
            w.end = HEADER_LEN as u64;
            w.unsynced = true;
        } else {
            w.write(&header)?;
        }
        Ok(w)
    }

    /// Appends `value` written under `tree_key`; returns the pointer to it.
    /// REQUIRES: `value` at most `MAX_VALUE_LEN` bytes, `tree_key` a valid tree key.
    pub fn add(&mut self, tree_key: &[u8], value: &[u8]) -> Result<BlobPointer> {
        let too_big = || Error::InvalidArgument(format!("value of {} bytes", value.len()));
        let key_len = u32::try_from(tree_key.len()).map_err(|_| too_big())?;
        let value_len = u32::try_from(value.len()).map_err(|_| too_big())?;
        let value_crc = masked_crc(value);
        // Layout: docs/format.md#blob-file (record)
        let mut head = Vec::with_capacity(RECORD_HEADER_LEN + tree_key.len());
        head.extend_from_slice(&[0; 4]);
        head.extend_from_slice(&key_len.to_le_bytes());
        head.extend_from_slice(&value_len.to_le_bytes());
        head.extend_from_slice(&value_crc.to_le_bytes());
        head.extend_from_slice(tree_key);
        let header_crc = masked_crc(head.get(4..).unwrap_or(&[]));
        if let Some(slot) = head.get_mut(..4) {
            slot.copy_from_slice(&header_crc.to_le_bytes());
        }
        let offset = self.bytes() + head.len() as u64;
        let record_len = head.len() + value.len();
        let step = fill_step(record_len, self.synced_at_commit);
        if self.at_commit && record_len < step {
            self.fill_to(self.end + record_len as u64, step)?;
        }
        self.write(&head)?;
        self.write(value)?;
        if self.at_commit {
            // The record is whole: zeros a full disk refuses after it fail
            // no commit (the next record that passes the file's end lays
            // them first, or fails before any byte of it is written).
            // Layout: docs/format.md#blob-files-written-at-commit (records appended)
            let _ = self.fill_to(self.end, step);
        }
        let m = &mut self.meta;
        m.records += 1;
        m.value_bytes += u64::from(value_len);
        if m.records == 1 || tree_key < m.smallest.as_slice() {
            m.smallest = tree_key.to_vec();
        }
        if tree_key > m.largest.as_slice() {
            m.largest = tree_key.to_vec();
        }
        Ok(BlobPointer {
            file: m.number,
            offset,
            len: value_len,
            crc: value_crc,
        })
    }

    /// Bytes of the header and records so far.
    pub fn bytes(&self) -> u64 {
        self.end
    }

    /// The file's number.
    pub fn number(&self) -> u64 {
        self.meta.number
    }

    /// At commit: extends the file with zeros to the first multiple of
    /// `step` at or past `to`, if it ends before it. (A record shorter than
    /// its step is written over zeros laid down first; a longer one extends
    /// the file itself, and the zeros follow it.)
    /// REQUIRES: `step` a power of two of at most [`LARGE_FILL_STEP`].
    fn fill_to(&mut self, to: u64, step: usize) -> Result<()> {
        let chunk = step as u64;
        let to = to.next_multiple_of(chunk);
        while self.file.len() < to {
            let len = self.file.len();
            let step = chunk - len % chunk;
            let all = zeros();
            let zeros = all.get(..step as usize).unwrap_or(all);
            self.unsynced = true;
            self.file
                .append(zeros)
                .map_err(|e| Error::io(&self.path, e))?;
        }
        Ok(())
    }

    /// Adds `data` after the bytes written so far: at commit handed to the
    /// file at once; otherwise whole chunks at chunk-aligned offsets
    /// (straight from `data` where the buffer is empty), the rest into the
    /// buffer.
    fn write(&mut self, mut data: &[u8]) -> Result<()> {
        let at = self.end;
        self.end += data.len() as u64;
        if self.at_commit {
            self.unsynced = true;
            return self
                .file
                .write_at(at, data)
                .map_err(|e| Error::io(&self.path, e));
        }
        while !data.is_empty() {
            if self.buf.is_empty() && data.len() >= WRITE_CHUNK {
                let (whole, rest) = data.split_at(data.len() - data.len() % WRITE_CHUNK);
                self.file
                    .append(whole)
                    .map_err(|e| Error::io(&self.path, e))?;
                data = rest;
                continue;
            }
            let (now, rest) = data.split_at(data.len().min(WRITE_CHUNK - self.buf.len()));
            if self.buf.capacity() == 0 {
                self.buf.reserve_exact(WRITE_CHUNK);
            }
            self.buf.extend_from_slice(now);
            data = rest;
            if self.buf.len() == WRITE_CHUNK {
                self.file
                    .append(&self.buf)
                    .map_err(|e| Error::io(&self.path, e))?;
                self.buf.clear();
            }
        }
        Ok(())
    }

    /// Values written so far.
    pub fn records(&self) -> u64 {
        self.meta.records
    }

    /// The next whole steps of a file written at commit whose write-back may
    /// start now (the caller hands them to a thread that does it, so that a
    /// later sync finds little left to write; durability is unchanged), or
    /// `None` while less than a step was written since the last.
    pub fn writeback_due(&mut self) -> Option<Writeback> {
        if !self.at_commit {
            return None;
        }
        self.written_back.due(self.end, self.file.as_ref())
    }

    /// Makes every record handed to the file durable (a no-op when nothing
    /// was handed to it since the last sync).
    pub fn sync(&mut self) -> Result<()> {
        self.synced_at_commit |= self.at_commit;
        if !self.unsynced {
            return Ok(());
        }
        self.file
            .sync_data()
            .map_err(|e| Error::io(&self.path, e))?;
        self.unsynced = false;
        Ok(())
    }

    /// Writes the footer after the last record (at commit, cutting the
    /// zeros after it) and syncs the file. Returns what the manifest records
    /// of it.
    pub fn finish(self) -> Result<BlobMeta> {
        let mut sealed = self.seal()?;
        sealed.sync()?;
        Ok(sealed.meta)
    }

    /// Writes the footer after the last record (at commit, cutting the
    /// zeros after it), without syncing: the file is laid out as a finished
    /// one, and durable once [`SealedBlob::sync`] returns.
    pub fn seal(mut self) -> Result<SealedBlob> {
        let mut footer = Vec::with_capacity(FOOTER_LEN);
        footer.extend_from_slice(&self.meta.records.to_le_bytes());
        footer.extend_from_slice(&self.meta.value_bytes.to_le_bytes());
        let crc = masked_crc(&footer);
        footer.extend_from_slice(&crc.to_le_bytes());
        footer.extend_from_slice(MAGIC);
        let size = self.end + FOOTER_LEN as u64;
        let written = if self.at_commit {
            self.file.write_at(self.end, &footer).and_then(|()| {
                if self.file.len() > size {
                    self.file.truncate(size)
                } else {
                    Ok(())
                }
            })
        } else {
            self.buf.extend_from_slice(&footer);
            self.file.append(&self.buf)
        };
        written.map_err(|e| Error::io(&self.path, e))?;
        self.meta.size = size;
        Ok(SealedBlob {
            file: self.file,
            path: self.path,
            meta: self.meta,
        })
    }

    /// The path of the file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// A blob file whose footer is written, not yet synced.
pub struct SealedBlob {
    file: Box<dyn WritableFile>,
    path: PathBuf,
    meta: BlobMeta,
}

impl SealedBlob {
    /// What the manifest records of the file.
    pub fn meta(&self) -> &BlobMeta {
        &self.meta
    }

    /// Makes the whole file durable, footer and cut included.
    pub fn sync(&mut self) -> Result<()> {
        self.file.sync_data().map_err(|e| Error::io(&self.path, e))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::blob::file::BlobFile;
    use crate::blob::reader::scan;
    use crate::fs::RealFs;
    use std::mem::MaybeUninit;
    use std::sync::Arc;

    /// Values of sizes around, below and above a chunk, each recognisable.
    fn values() -> Vec<Vec<u8>> {
        [
            1,
            100_000,
            WRITE_CHUNK - 40,
            WRITE_CHUNK,
            5,
            2 * WRITE_CHUNK + 3,
            700_000,
            0,
        ]
        .iter()
        .enumerate()
        .map(|(i, &n)| (0..n).map(|j| (j * 31 + i * 7 + j / 4093) as u8).collect())
        .collect()
    }

    /// A blob file `number` written at commit in `/w` of a new `MemFs`.
    fn at_commit(number: u64) -> (crate::fs::MemFs, BlobWriter) {
        let fs = crate::fs::MemFs::new();
        let dir = Path::new("/w");
        fs.create_dir_all(dir).unwrap();
        let w = BlobWriter::create_at_commit(&fs, dir, number).unwrap();
        (fs, w)
    }

    #[test]
    fn zeros_run_to_a_step_that_grows_with_the_record() {
        let (fs, mut w) = at_commit(6);
        assert_eq!(
            w.file.len(),
            FILL_STEP as u64,
            "created with a small step of zeros"
        );
        let sizes = [65_536, 70_000, 10, 300_000, 2_000_000, 20];
        let (mut lens, mut ends) = (Vec::new(), Vec::new());
        for (i, &n) in sizes.iter().enumerate() {
            w.add(format!("\0\0\0\0k{i}").as_bytes(), &vec![i as u8 + 1; n])
                .unwrap();
            lens.push(w.file.len());
            ends.push(w.end);
        }
        let large = LARGE_FILL_STEP as u64;
        assert_eq!(
            lens[0], FILL_STEP as u64,
            "a record of 64 KiB stays in the first small step"
        );
        assert_eq!(lens[1], large, "a large one runs the zeros to a large step");
        assert_eq!(
            lens[2], large,
            "a small record after it falls inside the zeros"
        );
        assert!(
            ends[3] < large && lens[3] == large,
            "so does a large one that fits"
        );
        assert!(
            ends[4] > 2 * large,
            "a record longer than the step extends the file..."
        );
        assert_eq!(
            lens[4],
            3 * large,
            "...and zeros run to a whole step after it"
        );
        assert_eq!(lens[5], lens[4]);
        let path = w.path.clone();
        w.finish().unwrap();
        let file = fs.open(&path).unwrap();
        let listing = scan(file.as_ref(), &path, 6).unwrap();
        let read: Vec<usize> = listing
            .records
            .iter()
            .map(|r| r.pointer.len as usize)
            .collect();
        assert_eq!(read, sizes);
        for (i, r) in listing.records.iter().enumerate() {
            let mut buf = vec![0u8; r.pointer.len as usize];
            super::super::reader::read_value(file.as_ref(), &path, &r.pointer, &mut buf).unwrap();
            assert!(
                buf.iter().all(|&b| b == i as u8 + 1),
                "record {i} reads back"
            );
        }
    }

    /// The blob side of a write that raised on a full disk although its
    /// record was whole (tests/faults.rs tells the WAL side): a record as
    /// long as its step or longer is written first, extending the file, and
    /// the zeros after it second; a disk that took the record and refused
    /// the zeros failed the commit, and poisoned the database, over bytes
    /// that were not the record. Before the fix `add` returned the ENOSPC of
    /// the zeros.
    #[test]
    fn zeros_refused_by_a_full_disk_fail_no_record() {
        let mem = crate::fs::MemFs::new();
        let dir = Path::new("/w");
        mem.create_dir_all(dir).unwrap();
        let fs = crate::fs::FaultFs::new(Arc::new(mem));
        let mut w = BlobWriter::create_at_commit(&fs, dir, 8).unwrap();
        let value = vec![5u8; LARGE_FILL_STEP + 10];
        let record_len = (RECORD_HEADER_LEN + 5 + value.len()) as u64;
        // Room for the record past the first step of zeros, and 100 bytes.
        fs.faults()
            .limit_space(HEADER_LEN as u64 + record_len - FILL_STEP as u64 + 100);
        let p = w
            .add(b"\0\0\0\0a", &value)
            .expect("a whole record is written");
        assert_eq!(w.file.len(), w.end + 100, "the zeros that fit");
        assert!(
            w.add(b"\0\0\0\0b", &[1; 10]).is_err(),
            "no room for another record"
        );
        fs.faults().clear();
        let path = w.path.clone();
        w.finish().unwrap();
        let file = fs.open(&path).unwrap();
        let listing = scan(file.as_ref(), &path, 8).unwrap();
        assert_eq!(listing.records.len(), 1);
        let mut buf = vec![0u8; p.len as usize];
        super::super::reader::read_value(file.as_ref(), &path, &p, &mut buf).unwrap();
        assert_eq!(buf, value);
    }

    #[test]
    fn a_file_synced_at_commit_keeps_the_small_step() {
        let (_fs, mut w) = at_commit(7);
        w.add(b"\0\0\0\0a", &[1u8; 10]).unwrap();
        w.sync().unwrap();
        w.add(b"\0\0\0\0b", &vec![2u8; 100_000]).unwrap();
        assert_eq!(
            w.file.len(),
            FILL_STEP as u64,
            "a large record after a sync"
        );
        w.add(b"\0\0\0\0c", &vec![3u8; 200_000]).unwrap();
        assert_eq!(w.file.len(), w.end.next_multiple_of(FILL_STEP as u64));
        assert!(w.file.len() < LARGE_FILL_STEP as u64);
    }

    #[test]
    fn a_file_written_at_commit_asks_for_the_write_back_of_each_whole_step_once() {
        let (fs, mut w) = at_commit(4);
        let dir = Path::new("/w");
        let value = vec![3u8; 3 << 20];
        let step = crate::fs::WRITEBACK_STEP;
        let mut asked = Vec::new();
        for i in 0..5 {
            w.add(format!("\0\0\0\0k{i}").as_bytes(), &value).unwrap();
            assert_eq!(w.end, w.bytes(), "handed to the file at once");
            assert_eq!(
                w.file.len(),
                w.end.next_multiple_of(LARGE_FILL_STEP as u64),
                "zeros to a whole step"
            );
            if let Some((_, from, to)) = w.writeback_due() {
                asked.push((from, to));
            }
            assert!(w.writeback_due().is_none(), "asked once");
        }
        // 5 values of 3 MiB: steps end at 4, 8 and 12 MiB as they are passed.
        assert_eq!(
            asked,
            vec![(0, step), (step, 2 * step), (2 * step, 3 * step)]
        );
        let mut flushed = BlobWriter::create(&fs, dir, 5).unwrap();
        flushed.add(b"\0\0\0\0k", &value).unwrap();
        flushed.add(b"\0\0\0\0l", &value).unwrap();
        assert!(
            flushed.writeback_due().is_none(),
            "only files written at commit"
        );
    }

    #[test]
    fn bytes_reach_the_file_in_whole_aligned_chunks_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = BlobWriter::create(&RealFs, dir.path(), 3).unwrap();
        let mut ptrs = Vec::new();
        for (i, v) in values().iter().enumerate() {
            ptrs.push(w.add(format!("\0\0\0\0key{i}").as_bytes(), v).unwrap());
            assert_eq!(w.file.len() % WRITE_CHUNK as u64, 0, "after value {i}");
            assert_eq!(w.bytes(), w.file.len() + w.buf.len() as u64);
        }
        assert!(w.file.len() >= 4 * WRITE_CHUNK as u64);
        let meta = w.finish().unwrap();
        let path = crate::filename::path(dir.path(), crate::filename::FileKind::Blob, 3);
        let handle: Arc<dyn crate::fs::RandomAccessFile> = RealFs.open(&path).unwrap();
        assert_eq!(handle.len(), meta.size);
        let listing = scan(handle.as_ref(), &path, 3).unwrap();
        assert_eq!(listing.records.len(), values().len());
        let file = BlobFile::new(handle, path.clone());
        assert!(file.is_mapped());
        for (v, p) in values().iter().zip(&ptrs) {
            let mut buf = vec![MaybeUninit::uninit(); v.len()];
            assert_eq!(file.read_into_uninit(p, &mut buf).unwrap(), v.as_slice());
        }
        // A flipped byte in the middle of the largest value is Corruption
        // naming the file and the value's offset, through the same path.
        let big = &ptrs[5];
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[big.offset as usize + big.len as usize / 2] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let file = BlobFile::new(RealFs.open(&path).unwrap(), path.clone());
        let mut buf = vec![MaybeUninit::uninit(); big.len as usize];
        let err = file
            .read_into_uninit(big, &mut buf)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("000003.blob") && err.contains(&big.offset.to_string()),
            "{err}"
        );
    }
}
