//! A [`FileSystem`] wrapper that injects I/O failures on command.

use super::{FileLock, FileSyncer, FileSystem, RandomAccessFile, WritableFile};
use parking_lot::{Condvar, Mutex};
use std::io;
use std::path::Path;
use std::sync::Arc;

/// Raw OS error returned by failed writes: `ENOSPC`, no space left on device.
const ENOSPC: i32 = 28;
/// Raw OS error returned by every other injected failure: `EIO`.
const EIO: i32 = 5;

/// The kinds of operation a fault can target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// `WritableFile::append` and `write_at`. Fails with `ENOSPC`.
    Write,
    /// `WritableFile::sync_data` and `FileSystem::sync_dir`. Fails with `EIO`.
    Sync,
    /// `RandomAccessFile::read_at` and `FileSystem::open`. Fails with `EIO`.
    Read,
    /// `FileSystem::create`, `reopen`, `rename`, `remove_file` and
    /// `create_dir_all`, and `WritableFile::truncate`. Fails with `EIO`.
    Metadata,
}

impl FaultKind {
    fn slot(self) -> usize {
        match self {
            FaultKind::Write => 0,
            FaultKind::Sync => 1,
            FaultKind::Read => 2,
            FaultKind::Metadata => 3,
        }
    }

    fn error(self) -> io::Error {
        match self {
            FaultKind::Write => io::Error::from_raw_os_error(ENOSPC),
            FaultKind::Sync | FaultKind::Read | FaultKind::Metadata => {
                io::Error::from_raw_os_error(EIO)
            }
        }
    }
}

/// When operations of one kind start failing.
#[derive(Debug, Clone, Copy)]
struct Rule {
    /// Index (in `Slot::seen` numbering) of the first operation that fails.
    first: u64,
    /// Only that operation fails, not the ones after it.
    once: bool,
}

#[derive(Debug, Default, Clone, Copy)]
struct Slot {
    seen: u64,
    rule: Option<Rule>,
}

/// The controller of a [`FaultFs`]: counts operations by kind and decides
/// which ones fail. Shared through an `Arc`; every method may be called from
/// any thread while the file system is in use.
#[derive(Debug, Default)]
pub struct Faults {
    slots: Mutex<[Slot; 4]>,
    /// Bytes files may still grow by in all (`None`: no limit); see
    /// [`Faults::limit_space`].
    room: Mutex<Option<u64>>,
    /// Syncs of files wait while held (see [`Faults::hold_syncs`]).
    held: Mutex<Held>,
    released: Condvar,
}

/// Whether syncs of files are held, and how many wait.
#[derive(Debug, Default)]
struct Held {
    on: bool,
    waiting: usize,
}

impl Faults {
    /// From now on, the next `n` operations of `kind` succeed and every later
    /// one fails, until [`Faults::clear`]. Replaces any earlier rule for `kind`.
    pub fn fail_after(&self, kind: FaultKind, n: u64) {
        self.set(kind, n, false);
    }

    /// From now on, the next `n` operations of `kind` succeed, the one after
    /// them fails, and later ones succeed again. Replaces any earlier rule for
    /// `kind`.
    pub fn fail_once_after(&self, kind: FaultKind, n: u64) {
        self.set(kind, n, true);
    }

    fn set(&self, kind: FaultKind, n: u64, once: bool) {
        let mut slots = self.slots.lock();
        if let Some(slot) = slots.get_mut(kind.slot()) {
            slot.rule = Some(Rule {
                first: slot.seen.saturating_add(n),
                once,
            });
        }
    }

    /// From now on the disk has room for `bytes` more bytes: writes that
    /// grow files take from it, and a write that would grow a file past it
    /// writes the bytes that fit, then fails with `ENOSPC` — as a real disk
    /// filling up does, which leaves the start of a failed write in the file
    /// (the other rules fail a write before any byte is written). Cutting or
    /// removing a file gives its bytes back. Until [`Faults::clear`].
    pub fn limit_space(&self, bytes: u64) {
        *self.room.lock() = Some(bytes);
    }

    /// From now on every sync of a file waits, before it is counted or
    /// failed, until [`Faults::release_syncs`]: a sync that takes as long
    /// as a test needs. Syncs of directories are not held.
    pub fn hold_syncs(&self) {
        self.held.lock().on = true;
    }

    /// Lets every held sync go on, and later ones pass.
    pub fn release_syncs(&self) {
        self.held.lock().on = false;
        self.released.notify_all();
    }

    /// How many syncs of files are waiting now (see [`Faults::hold_syncs`]).
    pub fn syncs_waiting(&self) -> usize {
        self.held.lock().waiting
    }

    /// Waits while syncs are held.
    fn wait_if_held(&self) {
        let mut held = self.held.lock();
        if !held.on {
            return;
        }
        held.waiting += 1;
        while held.on {
            self.released.wait(&mut held);
        }
        held.waiting -= 1;
    }

    /// Removes every rule and limit: all operations succeed again. Counts
    /// are kept.
    pub fn clear(&self) {
        for slot in self.slots.lock().iter_mut() {
            slot.rule = None;
        }
        *self.room.lock() = None;
    }

    /// How many bytes of a write of `len` bytes at `offset`, in a file of
    /// `file_len` bytes, fit in the room left (taking it): `len` if all do.
    fn take_room(&self, file_len: u64, offset: u64, len: usize) -> usize {
        let mut room = self.room.lock();
        let Some(left) = room.as_mut() else {
            return len;
        };
        let growth = offset.saturating_add(len as u64).saturating_sub(file_len);
        if growth <= *left {
            *left -= growth;
            return len;
        }
        let fits = file_len.saturating_sub(offset).saturating_add(*left);
        *left = 0;
        usize::try_from(fits).map_or(len, |fits| fits.min(len))
    }

    /// Gives back the room of `bytes` cut from a file.
    fn give_room(&self, bytes: u64) {
        if let Some(left) = self.room.lock().as_mut() {
            *left = left.saturating_add(bytes);
        }
    }

    /// How many operations of `kind` were attempted so far, failed ones included.
    pub fn count(&self, kind: FaultKind) -> u64 {
        self.slots.lock().get(kind.slot()).map_or(0, |s| s.seen)
    }

    /// Counts one operation of `kind` and returns the error it must fail
    /// with, if a rule says so.
    fn check(&self, kind: FaultKind) -> io::Result<()> {
        let mut slots = self.slots.lock();
        let Some(slot) = slots.get_mut(kind.slot()) else {
            return Ok(());
        };
        let index = slot.seen;
        slot.seen = slot.seen.saturating_add(1);
        let fails = match slot.rule {
            Some(Rule { first, once: false }) => index >= first,
            Some(Rule { first, once: true }) => index == first,
            None => false,
        };
        if fails {
            Err(kind.error())
        } else {
            Ok(())
        }
    }
}

/// A [`FileSystem`] that passes every call to an inner one, except the calls
/// its [`Faults`] tell it to fail.
///
/// A failed call does nothing at all: it returns the error without reaching
/// the inner file system (a failed append writes no byte; a failed sync
/// makes nothing durable; a failed rename leaves both names as they were),
/// except a write that fills the room of [`Faults::limit_space`], which
/// writes the bytes that fit first.
/// `list_dir`, `is_dir`, `file_size` and `lock` are passed through, never
/// counted and never failed. Files opened or created through a `FaultFs`
/// stay under its control for their whole life.
#[derive(Clone)]
pub struct FaultFs {
    inner: Arc<dyn FileSystem>,
    faults: Arc<Faults>,
}

impl FaultFs {
    /// Wraps `inner`; no fault is armed.
    pub fn new(inner: Arc<dyn FileSystem>) -> FaultFs {
        FaultFs {
            inner,
            faults: Arc::new(Faults::default()),
        }
    }

    /// The shared controller of this file system's faults.
    pub fn faults(&self) -> Arc<Faults> {
        Arc::clone(&self.faults)
    }
}

impl std::fmt::Debug for FaultFs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FaultFs")
            .field("faults", &self.faults)
            .finish_non_exhaustive()
    }
}

struct FaultWritable {
    inner: Box<dyn WritableFile>,
    faults: Arc<Faults>,
}

impl FaultWritable {
    /// Writes `data` at `offset` (the end for `append`) as far as the room
    /// of [`Faults::limit_space`] allows: the bytes that fit, then `ENOSPC`.
    fn write_in_room(&mut self, offset: Option<u64>, data: &[u8]) -> io::Result<()> {
        let len = self.inner.len();
        let at = offset.unwrap_or(len);
        let fits = self.faults.take_room(len, at, data.len());
        let (now, rest) = data.split_at(fits.min(data.len()));
        if !now.is_empty() {
            match offset {
                Some(at) => self.inner.write_at(at, now)?,
                None => self.inner.append(now)?,
            }
        }
        if rest.is_empty() {
            Ok(())
        } else {
            Err(FaultKind::Write.error())
        }
    }
}

impl WritableFile for FaultWritable {
    fn append(&mut self, data: &[u8]) -> io::Result<()> {
        self.faults.check(FaultKind::Write)?;
        self.write_in_room(None, data)
    }

    fn write_at(&mut self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.faults.check(FaultKind::Write)?;
        self.write_in_room(Some(offset), data)
    }

    fn sync_data(&mut self) -> io::Result<()> {
        self.faults.wait_if_held();
        self.faults.check(FaultKind::Sync)?;
        self.inner.sync_data()
    }

    /// Counted and failed as a metadata operation (a full disk never
    /// refuses to free space; `EIO` may); gives the cut bytes' room back.
    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.faults.check(FaultKind::Metadata)?;
        let before = self.inner.len();
        self.inner.truncate(len)?;
        self.faults.give_room(before.saturating_sub(len));
        Ok(())
    }

    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn map_window(&mut self, from: u64, to: u64) -> io::Result<bool> {
        self.inner.map_window(from, to)
    }

    /// Counted and failed as a write.
    fn write_mapped(&mut self, offset: u64, data: &[u8]) -> io::Result<bool> {
        self.faults.check(FaultKind::Write)?;
        self.inner.write_mapped(offset, data)
    }

    fn syncer(&self) -> Option<Arc<dyn FileSyncer>> {
        let inner = self.inner.syncer()?;
        Some(Arc::new(FaultSyncer {
            inner,
            faults: Arc::clone(&self.faults),
        }))
    }
}

/// Syncs through the inner file system's syncer, failing as the file's
/// [`Faults`] say (a sync counted as any other).
struct FaultSyncer {
    inner: Arc<dyn FileSyncer>,
    faults: Arc<Faults>,
}

impl FileSyncer for FaultSyncer {
    fn sync_data(&self) -> io::Result<()> {
        self.faults.wait_if_held();
        self.faults.check(FaultKind::Sync)?;
        self.inner.sync_data()
    }

    fn start_writeback(&self, from: u64, to: u64) -> io::Result<()> {
        self.inner.start_writeback(from, to)
    }
}

struct FaultReadable {
    inner: Arc<dyn RandomAccessFile>,
    faults: Arc<Faults>,
}

impl RandomAccessFile for FaultReadable {
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        self.faults.check(FaultKind::Read)?;
        self.inner.read_at(offset, len)
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.faults.check(FaultKind::Read)?;
        self.inner.read_exact_at(offset, buf)
    }

    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn advise_random(&self) {
        self.inner.advise_random();
    }

    fn will_need(&self, offset: u64, len: u64) {
        self.inner.will_need(offset, len);
    }
}

impl FileSystem for FaultFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.faults.check(FaultKind::Metadata)?;
        self.inner.create_dir_all(path)
    }

    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        self.faults.check(FaultKind::Metadata)?;
        let inner = self.inner.create(path)?;
        Ok(Box::new(FaultWritable {
            inner,
            faults: self.faults(),
        }))
    }

    fn reopen(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        self.faults.check(FaultKind::Metadata)?;
        let inner = self.inner.reopen(path)?;
        Ok(Box::new(FaultWritable {
            inner,
            faults: self.faults(),
        }))
    }

    fn open(&self, path: &Path) -> io::Result<Arc<dyn RandomAccessFile>> {
        self.faults.check(FaultKind::Read)?;
        let inner = self.inner.open(path)?;
        Ok(Arc::new(FaultReadable {
            inner,
            faults: self.faults(),
        }))
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        self.inner.list_dir(path)
    }

    /// Gives the file's room back (as if no other name kept it).
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.faults.check(FaultKind::Metadata)?;
        let size = self.inner.file_size(path).unwrap_or(0);
        self.inner.remove_file(path)?;
        self.faults.give_room(size);
        Ok(())
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.faults.check(FaultKind::Metadata)?;
        self.inner.rename(from, to)
    }

    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.faults.check(FaultKind::Metadata)?;
        self.inner.hard_link(from, to)
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.faults.check(FaultKind::Sync)?;
        self.inner.sync_dir(path)
    }

    fn is_dir(&self, path: &Path) -> io::Result<Option<bool>> {
        self.inner.is_dir(path)
    }

    fn file_size(&self, path: &Path) -> io::Result<u64> {
        self.inner.file_size(path)
    }

    fn stat(&self, path: &Path) -> io::Result<super::FileStat> {
        self.inner.stat(path)
    }

    fn lock(&self, path: &Path) -> io::Result<Box<dyn FileLock>> {
        self.inner.lock(path)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::fs::MemFs;

    fn setup() -> (MemFs, FaultFs, Arc<Faults>) {
        let mem = MemFs::new();
        mem.create_dir_all(Path::new("/db")).unwrap();
        let fs = FaultFs::new(Arc::new(mem.clone()));
        let faults = fs.faults();
        (mem, fs, faults)
    }

    #[test]
    fn nothing_fails_until_armed_and_everything_is_counted() {
        let (mem, fs, faults) = setup();
        let path = Path::new("/db/a");
        let mut f = fs.create(path).unwrap();
        f.append(b"abc").unwrap();
        f.sync_data().unwrap();
        fs.sync_dir(Path::new("/db")).unwrap();
        let r = fs.open(path).unwrap();
        assert_eq!(r.read_at(0, 3).unwrap(), b"abc");
        fs.rename(path, Path::new("/db/b")).unwrap();
        fs.remove_file(Path::new("/db/b")).unwrap();
        fs.create_dir_all(Path::new("/db/sub")).unwrap();
        assert_eq!(fs.list_dir(Path::new("/db")).unwrap(), ["sub"]);
        assert_eq!(faults.count(FaultKind::Write), 1);
        assert_eq!(faults.count(FaultKind::Sync), 2);
        assert_eq!(faults.count(FaultKind::Read), 2);
        assert_eq!(faults.count(FaultKind::Metadata), 4);
        assert_eq!(mem.sync_count(), 1);
    }

    #[test]
    fn fail_after_fails_every_later_operation_until_cleared() {
        let (mem, fs, faults) = setup();
        let mut f = fs.create(Path::new("/db/a")).unwrap();
        f.append(b"before").unwrap();
        faults.fail_after(FaultKind::Write, 2);
        f.append(b"1").unwrap();
        f.append(b"2").unwrap();
        for _ in 0..3 {
            let err = f.append(b"lost").unwrap_err();
            assert_eq!(err.raw_os_error(), Some(ENOSPC));
        }
        assert_eq!(mem.read_all(Path::new("/db/a")).unwrap(), b"before12");
        assert_eq!(f.len(), 8);
        faults.clear();
        f.append(b"3").unwrap();
        assert_eq!(mem.read_all(Path::new("/db/a")).unwrap(), b"before123");
        assert_eq!(faults.count(FaultKind::Write), 7);
    }

    #[test]
    fn fail_once_after_fails_exactly_one_operation() {
        let (mem, fs, faults) = setup();
        let mut f = fs.create(Path::new("/db/a")).unwrap();
        f.append(b"x").unwrap();
        faults.fail_once_after(FaultKind::Sync, 1);
        f.sync_data().unwrap();
        let err = fs.sync_dir(Path::new("/db")).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(EIO));
        f.sync_data().unwrap();
        fs.sync_dir(Path::new("/db")).unwrap();
        assert_eq!(mem.sync_count(), 2);
        assert_eq!(faults.count(FaultKind::Sync), 4);
    }

    #[test]
    fn failed_sync_makes_nothing_durable() {
        let (mem, fs, faults) = setup();
        let mut f = fs.create(Path::new("/db/a")).unwrap();
        fs.sync_dir(Path::new("/db")).unwrap();
        f.append(b"data").unwrap();
        faults.fail_after(FaultKind::Sync, 0);
        assert!(f.sync_data().is_err());
        assert_eq!(mem.crash_clone().read_all(Path::new("/db/a")).unwrap(), b"");
    }

    #[test]
    fn read_and_metadata_faults() {
        let (mem, fs, faults) = setup();
        fs.create(Path::new("/db/a"))
            .unwrap()
            .append(b"abc")
            .unwrap();
        let r = fs.open(Path::new("/db/a")).unwrap();
        faults.fail_after(FaultKind::Read, 0);
        assert_eq!(r.read_at(0, 1).unwrap_err().raw_os_error(), Some(EIO));
        assert!(fs.open(Path::new("/db/a")).is_err());
        assert!(fs.read_all(Path::new("/db/a")).is_err());
        faults.fail_after(FaultKind::Metadata, 0);
        assert!(fs.rename(Path::new("/db/a"), Path::new("/db/b")).is_err());
        assert!(fs.remove_file(Path::new("/db/a")).is_err());
        assert!(fs.create(Path::new("/db/c")).is_err());
        assert!(fs.create_dir_all(Path::new("/db/d")).is_err());
        assert_eq!(mem.file_names(Path::new("/db")), ["a"]);
        // Pass-through calls are not affected.
        assert_eq!(fs.file_size(Path::new("/db/a")).unwrap(), 3);
        assert_eq!(fs.is_dir(Path::new("/db")).unwrap(), Some(true));
        drop(fs.lock(Path::new("/db/a")).unwrap());
        faults.clear();
        assert_eq!(r.read_at(0, 3).unwrap(), b"abc");
        assert_eq!(faults.count(FaultKind::Read), 5);
        assert_eq!(faults.count(FaultKind::Metadata), 5);
    }

    #[test]
    fn a_full_disk_writes_what_fits_then_fails() {
        let (mem, fs, faults) = setup();
        let path = Path::new("/db/a");
        let mut f = fs.create(path).unwrap();
        f.append(b"0123456789").unwrap();
        faults.limit_space(4);
        f.write_at(2, b"ab").unwrap();
        let err = f.write_at(8, b"cdefghij").unwrap_err();
        assert_eq!(err.raw_os_error(), Some(ENOSPC));
        assert_eq!(
            mem.read_all(path).unwrap(),
            b"01ab4567cdefgh",
            "the start that fit"
        );
        assert!(f.append(b"x").is_err(), "no room left");
        f.write_at(0, b"AB").unwrap();
        f.truncate(12).unwrap();
        f.append(b"xy").unwrap();
        assert!(f.append(b"z").is_err(), "the room given back is used up");
        fs.remove_file(path).unwrap();
        let mut g = fs.create(Path::new("/db/b")).unwrap();
        g.append(&[7; 14]).unwrap();
        assert!(
            g.append(b"z").is_err(),
            "a removed file gives its room back"
        );
        faults.clear();
        g.append(&[7; 100]).unwrap();
    }

    #[test]
    fn faults_are_controlled_from_another_thread() {
        let (_mem, fs, faults) = setup();
        let mut f = fs.create(Path::new("/db/a")).unwrap();
        std::thread::spawn(move || faults.fail_after(FaultKind::Write, 0))
            .join()
            .unwrap();
        assert!(f.append(b"x").is_err());
    }
}
