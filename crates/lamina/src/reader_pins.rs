//! Reader pins: how a read-only handle tells the read-write handle (in
//! another process or in this one) which files its views use, so that the
//! writer leaves them on disk until the reader lets them go — LMDB's reader
//! table, as files.
//!
//! A read-only handle registers a *reader file* `NNNNNN.reader` and holds an
//! exclusive advisory lock on it for as long as it lives; the file lists the
//! table and blob files of every version the handle still reads, and a file
//! number from which on every file is pinned (the WAL segments it replayed,
//! and everything written after it opened). Before removing or reusing a
//! file, the writer reads every reader file ([`Pins::read`]) and keeps what
//! one of them pins. A reader file nobody holds the lock on belongs to a
//! handle that is gone (closed, or its process died): the writer removes it.
//!
//! The reader's side of the protocol (in `recovery/reader.rs`): it writes its
//! pins, then reads the manifest again; only a view whose tables and blob
//! files are all still in the newest version is used, because a writer that
//! read the pins before they were written may remove only files that had
//! already left the version (a WAL segment retired in between ends the
//! view before it).
//!
//! Layout: docs/format.md#reader-files.

use crate::coding::{get_u32, get_u64, masked_crc};
use crate::error::{Error, Result};
use crate::filename::{self, FileKind};
use crate::fs::{FileLock, FileSystem};
use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The first bytes of every reader file.
pub const READER_MAGIC: &[u8; 8] = b"LAMNARDR";
/// The reader file version this build writes and reads.
const VERSION: u32 = 1;
/// Magic, version, count, `from`.
const HEADER_LEN: usize = 8 + 4 + 4 + 8;

/// What one reader (or all readers together) keep on disk.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PinSet {
    /// Every file numbered this or above is pinned (`u64::MAX`: none).
    pub from: u64,
    /// Further files pinned by number.
    pub files: BTreeSet<u64>,
}

impl PinSet {
    /// A set that pins nothing.
    pub fn none() -> PinSet {
        PinSet {
            from: u64::MAX,
            files: BTreeSet::new(),
        }
    }

    /// Whether file `number` is pinned.
    pub fn holds(&self, number: u64) -> bool {
        number >= self.from || self.files.contains(&number)
    }

    /// Adds what `other` pins.
    pub fn add(&mut self, other: &PinSet) {
        self.from = self.from.min(other.from);
        self.files.extend(other.files.iter().copied());
    }

    /// The bytes of a reader file holding this set and `nonce`.
    /// Layout: docs/format.md#reader-files.
    fn encode(&self, nonce: u64) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_LEN + 8 * (self.files.len() + 2));
        out.extend_from_slice(READER_MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        let count = u32::try_from(self.files.len()).unwrap_or(u32::MAX);
        out.extend_from_slice(&count.to_le_bytes());
        out.extend_from_slice(&self.from.to_le_bytes());
        for n in self.files.iter().take(count as usize) {
            out.extend_from_slice(&n.to_le_bytes());
        }
        out.extend_from_slice(&nonce.to_le_bytes());
        let crc = masked_crc(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// The set and nonce a reader file holds, or `None` if its bytes are not
    /// a whole reader file (being written, or from an unknown version).
    fn decode(bytes: &[u8]) -> Option<(PinSet, u64)> {
        let body_len = bytes.len().checked_sub(4)?;
        let (body, crc) = bytes.split_at(body_len);
        if get_u32(crc, 0)? != masked_crc(body) || body.get(..8)? != READER_MAGIC {
            return None;
        }
        if get_u32(body, 8)? != VERSION {
            return None;
        }
        let count = get_u32(body, 12)? as usize;
        let from = get_u64(body, 16)?;
        if body.len() != HEADER_LEN + 8 * count + 8 {
            return None;
        }
        let files = (0..count)
            .map(|i| get_u64(body, HEADER_LEN + 8 * i))
            .collect::<Option<BTreeSet<u64>>>()?;
        let nonce = get_u64(body, HEADER_LEN + 8 * count)?;
        Some((PinSet { from, files }, nonce))
    }
}

/// What every live reader of a directory pins, as the writer sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pins {
    /// Every file is kept: a live reader's file could not be read whole
    /// (it is being rewritten), so this round removes nothing.
    Everything,
    /// The union of the live readers' sets (none: nothing pinned).
    Files(PinSet),
}

impl Pins {
    /// Reads the reader files of `dir`: removes those no handle holds any
    /// more and returns what the others pin.
    pub fn read(fs: &dyn FileSystem, dir: &Path) -> Pins {
        let Ok(names) = fs.list_dir(dir) else {
            return Pins::Everything;
        };
        let mut all = PinSet::none();
        for name in names {
            if !matches!(
                filename::parse_file_name(&name),
                Some((FileKind::Reader, _))
            ) {
                continue;
            }
            let path = dir.join(&name);
            match fs.lock(&path) {
                // Nobody holds it: its reader is gone.
                Ok(lock) => {
                    let _ = fs.remove_file(&path);
                    drop(lock);
                    continue;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) => return Pins::Everything,
            }
            match fs.read_all(&path).ok().as_deref().and_then(PinSet::decode) {
                Some((set, _)) => all.add(&set),
                None => return Pins::Everything,
            }
        }
        Pins::Files(all)
    }

    /// Whether file `number` must stay.
    pub fn holds(&self, number: u64) -> bool {
        match self {
            Pins::Everything => true,
            Pins::Files(set) => set.holds(number),
        }
    }
}

/// A read-only handle's reader file, locked while it lives and removed when
/// it is dropped.
pub struct ReaderFile {
    fs: Arc<dyn FileSystem>,
    path: PathBuf,
    nonce: u64,
    lock: Box<dyn FileLock>,
}

impl ReaderFile {
    /// Registers a new reader file in `dir`. `Ok(None)` where the directory
    /// cannot take one (a read-only file system, or no permission to write
    /// it): the handle then reads unpinned.
    pub fn register(fs: &Arc<dyn FileSystem>, dir: &Path) -> Result<Option<ReaderFile>> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        for _ in 0..64 {
            let seq = NEXT.fetch_add(1, Ordering::Relaxed);
            let number = u64::from(std::process::id()) * 1_000_000 + seq % 1_000_000;
            let path = filename::path(dir, FileKind::Reader, number);
            match fs.lock(&path) {
                Ok(lock) => {
                    let nonce = crate::process::generation() ^ seq.rotate_left(32) ^ number;
                    return Ok(Some(ReaderFile {
                        fs: Arc::clone(fs),
                        path,
                        nonce,
                        lock,
                    }));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem
                    ) =>
                {
                    return Ok(None)
                }
                Err(e) => return Err(Error::io(&path, e)),
            }
        }
        Err(Error::io(
            dir,
            io::Error::other("no free reader file name after 64 tries"),
        ))
    }

    /// Writes `set` as what this reader pins. `Ok(false)` when the file was
    /// removed from under the handle (a writer took it for a gone reader's
    /// in the instant between its creation and its lock): register anew.
    pub fn write(&self, set: &PinSet) -> Result<bool> {
        let bytes = set.encode(self.nonce);
        self.lock
            .replace_contents(&bytes)
            .map_err(|e| Error::io(&self.path, e))?;
        // Written through the lock, so into the file the handle locked; a
        // file of that name holding these bytes (this handle's nonce) is it.
        let back = self.fs.read_all(&self.path).ok();
        Ok(back.as_deref() == Some(bytes.as_slice()))
    }
}

impl Drop for ReaderFile {
    fn drop(&mut self) {
        let _ = self.fs.remove_file(&self.path);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::fs::MemFs;

    fn set(from: u64, files: &[u64]) -> PinSet {
        PinSet {
            from,
            files: files.iter().copied().collect(),
        }
    }

    #[test]
    fn a_reader_file_round_trips_and_refuses_damage() {
        let s = set(40, &[3, 7, 12]);
        let bytes = s.encode(99);
        assert_eq!(PinSet::decode(&bytes), Some((s, 99)));
        for cut in 0..bytes.len() {
            assert_eq!(PinSet::decode(&bytes[..cut]), None, "cut at {cut}");
        }
        let mut flipped = bytes.clone();
        flipped[20] ^= 1;
        assert_eq!(PinSet::decode(&flipped), None);
    }

    #[test]
    fn the_writer_sees_live_readers_and_removes_gone_ones() {
        let fs: Arc<dyn FileSystem> = Arc::new(MemFs::new());
        let dir = Path::new("/db");
        fs.create_dir_all(dir).unwrap();
        assert_eq!(Pins::read(fs.as_ref(), dir), Pins::Files(PinSet::none()));
        let a = ReaderFile::register(&fs, dir).unwrap().unwrap();
        let b = ReaderFile::register(&fs, dir).unwrap().unwrap();
        assert!(a.write(&set(50, &[3])).unwrap());
        // A reader whose file is being written pins everything.
        assert_eq!(Pins::read(fs.as_ref(), dir), Pins::Everything);
        assert!(b.write(&set(60, &[4, 9])).unwrap());
        let pins = Pins::read(fs.as_ref(), dir);
        assert_eq!(pins, Pins::Files(set(50, &[3, 4, 9])));
        assert!(pins.holds(3) && pins.holds(9) && pins.holds(50) && pins.holds(77));
        assert!(!pins.holds(5) && !pins.holds(49));
        drop(b);
        // A gone reader: its process died, its file was left behind unlocked.
        let b_path = filename::path(dir, FileKind::Reader, 123);
        let mut f = fs.create(&b_path).unwrap();
        f.append(&set(0, &[]).encode(5)).unwrap();
        drop(f);
        assert_eq!(Pins::read(fs.as_ref(), dir), Pins::Files(set(50, &[3])));
        assert_eq!(
            fs.file_size(&b_path).ok(),
            None,
            "the gone reader's file is removed"
        );
        let a_path = a.path.clone();
        drop(a);
        assert_eq!(
            fs.file_size(&a_path).ok(),
            None,
            "a closed reader removes its file"
        );
        assert_eq!(Pins::read(fs.as_ref(), dir), Pins::Files(PinSet::none()));
    }

    #[test]
    fn a_reader_whose_file_was_taken_is_told_to_register_again() {
        let fs: Arc<dyn FileSystem> = Arc::new(MemFs::new());
        let dir = Path::new("/db");
        fs.create_dir_all(dir).unwrap();
        let a = ReaderFile::register(&fs, dir).unwrap().unwrap();
        assert!(a.write(&set(1, &[])).unwrap());
        fs.remove_file(&a.path).unwrap();
        assert!(
            !a.write(&set(1, &[])).unwrap(),
            "the name no longer holds the locked file"
        );
        fs.create(&a.path)
            .unwrap()
            .append(b"someone else's")
            .unwrap();
        assert!(!a.write(&set(1, &[])).unwrap());
    }
}
