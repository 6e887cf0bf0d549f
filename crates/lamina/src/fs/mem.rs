//! In-memory file system that can simulate a crash.
//!
//! The model follows the durability rules of [`FileSystem`]: every file is an
//! *inode* holding its bytes and how many of them are synced; the namespace
//! (path → inode) exists twice, as the *current* namespace every call sees and
//! the *durable* namespace a power loss would leave. Creating, renaming and
//! removing a file change the current namespace and are queued as pending
//! directory operations; `sync_dir(dir)` applies the pending operations that
//! touch `dir` to the durable namespace. Directories themselves are durable as
//! soon as `create_dir_all` returns (lamina never removes one). `create` on an
//! existing file truncates it, and the truncation is durable at once (the file
//! keeps its name and inode; a crash leaves it empty until the next sync).

use super::{FileLock, FileSyncer, FileSystem, RandomAccessFile, WritableFile};
use parking_lot::Mutex;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// An in-memory [`FileSystem`] that keeps synced and unsynced bytes apart and
/// can produce what a power loss would leave ([`MemFs::crash_clone`]).
///
/// Cloning a `MemFs` gives another handle on the same files; every handle is
/// usable from any thread. Paths are compared after normalisation of `.` and
/// repeated separators; `/` and the empty path are directories that always
/// exist.
#[derive(Clone, Default)]
pub struct MemFs {
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    syncs: AtomicU64,
}

/// The bytes of one file. `synced_len <= data.len()` always holds.
///
/// The durable contents are `data[..synced_len]` with `undo` applied from
/// its last entry back: each entry holds the synced bytes a `write_at`
/// replaced since the last sync (at their offset).
#[derive(Default)]
struct Inode {
    data: Vec<u8>,
    synced_len: usize,
    undo: Vec<(usize, Vec<u8>)>,
}

impl Inode {
    /// The durable contents, with the first `kept` overwrites of the synced
    /// bytes since the last sync taken as written back, and `extra` bytes
    /// past the synced length.
    fn durable(&self, kept: usize, extra: usize) -> Vec<u8> {
        let len = self.synced_len.saturating_add(extra).min(self.data.len());
        let mut out = self.data.get(..len).unwrap_or_default().to_vec();
        for (at, old) in self.undo.iter().skip(kept).rev() {
            if let Some(dst) = out.get_mut(*at..at.saturating_add(old.len())) {
                dst.copy_from_slice(old);
            }
        }
        out
    }

    /// Writes `bytes` at `at` (at most the length), remembering the synced
    /// bytes it replaces.
    fn write_at(&mut self, at: usize, bytes: &[u8]) -> io::Result<()> {
        if at > self.data.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "write_at past the end of the file",
            ));
        }
        let end = at.saturating_add(bytes.len());
        let synced_end = end.min(self.synced_len);
        if at < synced_end {
            let old = self.data.get(at..synced_end).unwrap_or_default().to_vec();
            self.undo.push((at, old));
        }
        if end > self.data.len() {
            self.data.resize(end, 0);
        }
        if let Some(dst) = self.data.get_mut(at..end) {
            dst.copy_from_slice(bytes);
        }
        Ok(())
    }
}

type InodeRef = Arc<Mutex<Inode>>;

/// A directory operation not yet made durable by `sync_dir`.
#[derive(Clone)]
enum DirOp {
    /// `path` now names `inode` (a creation).
    Link { path: PathBuf, inode: InodeRef },
    /// `path` no longer names anything.
    Unlink { path: PathBuf },
    /// `from` moved to `to` (one atomic operation).
    Rename {
        from: PathBuf,
        to: PathBuf,
        inode: InodeRef,
    },
}

impl DirOp {
    fn touches(&self, dir: &Path) -> bool {
        let in_dir = |p: &PathBuf| parent_of(p) == dir;
        match self {
            DirOp::Link { path, .. } | DirOp::Unlink { path } => in_dir(path),
            DirOp::Rename { from, to, .. } => in_dir(from) || in_dir(to),
        }
    }

    fn apply(&self, names: &mut BTreeMap<PathBuf, InodeRef>) {
        match self {
            DirOp::Link { path, inode } => {
                names.insert(path.clone(), Arc::clone(inode));
            }
            DirOp::Unlink { path } => {
                names.remove(path);
            }
            DirOp::Rename { from, to, inode } => {
                names.remove(from);
                names.insert(to.clone(), Arc::clone(inode));
            }
        }
    }
}

#[derive(Default)]
struct State {
    current: BTreeMap<PathBuf, InodeRef>,
    durable: BTreeMap<PathBuf, InodeRef>,
    dirs: BTreeSet<PathBuf>,
    pending: Vec<DirOp>,
    locks: HashSet<PathBuf>,
}

fn normalize(path: &Path) -> PathBuf {
    path.components().collect()
}

fn parent_of(path: &Path) -> &Path {
    path.parent().unwrap_or(Path::new(""))
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("{}: no such file", path.display()),
    )
}

fn is_a_directory(path: &Path) -> io::Error {
    io::Error::other(format!("{}: is a directory", path.display()))
}

impl State {
    fn dir_exists(&self, path: &Path) -> bool {
        path.as_os_str().is_empty() || path == Path::new("/") || self.dirs.contains(path)
    }

    /// Checks that a file may be placed at `path`.
    fn check_file_slot(&self, path: &Path) -> io::Result<()> {
        if self.dir_exists(path) {
            return Err(is_a_directory(path));
        }
        if !self.dir_exists(parent_of(path)) {
            return Err(not_found(parent_of(path)));
        }
        Ok(())
    }

    fn file(&self, path: &Path) -> io::Result<&InodeRef> {
        if self.dir_exists(path) {
            return Err(is_a_directory(path));
        }
        self.current.get(path).ok_or_else(|| not_found(path))
    }

    /// Creates `path` if missing; returns its inode.
    fn create_or_truncate(&mut self, path: &Path, truncate: bool) -> io::Result<InodeRef> {
        self.check_file_slot(path)?;
        if let Some(inode) = self.current.get(path) {
            if truncate {
                let mut i = inode.lock();
                i.data.clear();
                i.synced_len = 0;
                i.undo.clear();
            }
            return Ok(Arc::clone(inode));
        }
        let inode = InodeRef::default();
        self.current.insert(path.to_path_buf(), Arc::clone(&inode));
        self.pending.push(DirOp::Link {
            path: path.to_path_buf(),
            inode: Arc::clone(&inode),
        });
        Ok(inode)
    }
}

/// A small deterministic generator (SplitMix64) for `crash_clone_with`.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A value in `0..=max`.
    fn up_to(&mut self, max: usize) -> usize {
        let bound = (max as u64).saturating_add(1);
        if bound == 0 {
            return 0;
        }
        usize::try_from(self.next() % bound).unwrap_or(max)
    }
}

impl MemFs {
    /// An empty file system holding only the root directory.
    pub fn new() -> MemFs {
        MemFs::default()
    }

    /// A new, independent file system holding exactly what would survive a
    /// power loss right now: the durable namespace, each file cut to its
    /// synced length. `self` is not changed and keeps running; locks are not
    /// carried over, and the clone's files are all synced.
    pub fn crash_clone(&self) -> MemFs {
        let state = self.shared.state.lock();
        let names = state.durable.clone();
        Self::materialize(&state, names, |inode| inode.durable(0, 0))
    }

    /// Like [`MemFs::crash_clone`], but models partial writeback, with every
    /// choice drawn from `seed` (the same seed on the same state gives the same
    /// result): each file keeps its synced bytes plus a pseudo-random prefix of
    /// its unsynced bytes, and each directory operation not yet made durable
    /// independently either happened or did not (a rename happens as a whole
    /// or not at all; later operations are applied in order on top).
    pub fn crash_clone_with(&self, seed: u64) -> MemFs {
        let state = self.shared.state.lock();
        let mut rng = SplitMix(seed);
        let mut names = state.durable.clone();
        for op in &state.pending {
            if rng.next() & 1 == 1 {
                op.apply(&mut names);
            }
        }
        Self::materialize(&state, names, |inode| {
            let unsynced = inode.data.len().saturating_sub(inode.synced_len);
            let extra = rng.up_to(unsynced);
            let kept = if inode.undo.is_empty() {
                0
            } else {
                rng.up_to(inode.undo.len())
            };
            inode.durable(kept, extra)
        })
    }

    /// Builds a new file system from `names`, giving each distinct inode the
    /// contents `keep(inode)` says survive.
    fn materialize(
        state: &State,
        names: BTreeMap<PathBuf, InodeRef>,
        mut keep: impl FnMut(&Inode) -> Vec<u8>,
    ) -> MemFs {
        let mut copies: HashMap<*const Mutex<Inode>, InodeRef> = HashMap::new();
        let mut files = BTreeMap::new();
        for (path, inode) in names {
            let copy = copies.entry(Arc::as_ptr(&inode)).or_insert_with(|| {
                let data = keep(&inode.lock());
                Arc::new(Mutex::new(Inode {
                    synced_len: data.len(),
                    data,
                    undo: Vec::new(),
                }))
            });
            files.insert(path, Arc::clone(copy));
        }
        let fresh = State {
            current: files.clone(),
            durable: files,
            dirs: state.dirs.clone(),
            pending: Vec::new(),
            locks: HashSet::new(),
        };
        MemFs {
            shared: Arc::new(Shared {
                state: Mutex::new(fresh),
                syncs: AtomicU64::new(0),
            }),
        }
    }

    /// Sorted names of the files (not directories) directly in `dir`, as the
    /// current namespace has them. Empty if `dir` does not exist.
    pub fn file_names(&self, dir: &Path) -> Vec<String> {
        let dir = normalize(dir);
        let state = self.shared.state.lock();
        state
            .current
            .keys()
            .filter(|p| parent_of(p) == dir)
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect()
    }

    /// Flips every bit of the byte at `offset` of the file at `path`, in its
    /// current and in its synced contents (the damage survives a crash).
    pub fn corrupt_byte(&self, path: &Path, offset: u64) -> io::Result<()> {
        let state = self.shared.state.lock();
        let mut inode = state.file(&normalize(path))?.lock();
        let byte = usize::try_from(offset)
            .ok()
            .and_then(|o| inode.data.get_mut(o))
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "offset past the end"))?;
        *byte ^= 0xff;
        Ok(())
    }

    /// Cuts the file at `path` to `len` bytes (no effect if it is shorter), in
    /// its current and its synced contents.
    pub fn truncate(&self, path: &Path, len: u64) -> io::Result<()> {
        let state = self.shared.state.lock();
        let mut inode = state.file(&normalize(path))?.lock();
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        inode.data.truncate(len);
        inode.synced_len = inode.synced_len.min(len);
        inode.undo.clear();
        Ok(())
    }

    /// How many times `sync_data` has been called on files of this file system.
    pub fn sync_count(&self) -> u64 {
        self.shared.syncs.load(Ordering::Relaxed)
    }

    /// Total size of the files in the current namespace (each file once).
    pub fn total_bytes(&self) -> u64 {
        let state = self.shared.state.lock();
        let mut seen = HashSet::new();
        let mut total = 0u64;
        for inode in state.current.values() {
            if seen.insert(Arc::as_ptr(inode)) {
                total = total.saturating_add(inode.lock().data.len() as u64);
            }
        }
        total
    }
}

impl std::fmt::Debug for MemFs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.shared.state.lock();
        f.debug_struct("MemFs")
            .field("files", &state.current.keys().collect::<Vec<_>>())
            .field("pending_dir_ops", &state.pending.len())
            .finish()
    }
}

struct MemWritable {
    inode: InodeRef,
    shared: Arc<Shared>,
    /// The window of `map_window`: a mapped write lands in the file's
    /// unsynced bytes, as a `write_at` does (a crash drops it, a killed
    /// process, the `MemFs` itself living on, does not).
    window: Option<(u64, u64)>,
}

impl WritableFile for MemWritable {
    fn append(&mut self, data: &[u8]) -> io::Result<()> {
        self.inode.lock().data.extend_from_slice(data);
        Ok(())
    }

    fn write_at(&mut self, offset: u64, data: &[u8]) -> io::Result<()> {
        let at = usize::try_from(offset).unwrap_or(usize::MAX);
        self.inode.lock().write_at(at, data)
    }

    fn sync_data(&mut self) -> io::Result<()> {
        sync_inode(&self.inode, &self.shared);
        Ok(())
    }

    /// The cut bytes are gone at once, durable or not (a crash never brings
    /// them back).
    fn truncate(&mut self, len: u64) -> io::Result<()> {
        let mut inode = self.inode.lock();
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        if len > inode.data.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "cannot truncate a file to more than its length",
            ));
        }
        self.window = None;
        inode.data.truncate(len);
        inode.synced_len = inode.synced_len.min(len);
        Ok(())
    }

    fn len(&self) -> u64 {
        self.inode.lock().data.len() as u64
    }

    fn map_window(&mut self, from: u64, to: u64) -> io::Result<bool> {
        self.window = None;
        if to > self.len() || from >= to {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "cannot map an empty window or past the end of the file",
            ));
        }
        self.window = Some((from, to));
        Ok(true)
    }

    fn write_mapped(&mut self, offset: u64, data: &[u8]) -> io::Result<bool> {
        let inside = self.window.is_some_and(|(from, to)| {
            offset >= from && offset.saturating_add(data.len() as u64) <= to
        });
        if inside {
            self.write_at(offset, data)?;
        }
        Ok(inside)
    }

    fn syncer(&self) -> Option<Arc<dyn FileSyncer>> {
        Some(Arc::new(MemSyncer {
            inode: Arc::clone(&self.inode),
            shared: Arc::clone(&self.shared),
        }))
    }
}

/// Makes every byte of `inode` durable.
fn sync_inode(inode: &InodeRef, shared: &Shared) {
    let mut inode = inode.lock();
    inode.synced_len = inode.data.len();
    inode.undo.clear();
    shared.syncs.fetch_add(1, Ordering::Relaxed);
}

struct MemSyncer {
    inode: InodeRef,
    shared: Arc<Shared>,
}

impl FileSyncer for MemSyncer {
    fn sync_data(&self) -> io::Result<()> {
        sync_inode(&self.inode, &self.shared);
        Ok(())
    }
}

struct MemReadable {
    inode: InodeRef,
    len: u64,
}

impl RandomAccessFile for MemReadable {
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        let inode = self.inode.lock();
        let eof = || {
            io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "read past the end of the file",
            )
        };
        let start = usize::try_from(offset).map_err(|_| eof())?;
        let end = start.checked_add(len).ok_or_else(eof)?;
        Ok(inode.data.get(start..end).ok_or_else(eof)?.to_vec())
    }

    fn len(&self) -> u64 {
        self.len
    }
}

struct MemLock {
    path: PathBuf,
    inode: InodeRef,
    shared: Arc<Shared>,
}

impl FileLock for MemLock {
    fn replace_contents(&self, bytes: &[u8]) -> io::Result<()> {
        let mut i = self.inode.lock();
        i.data = bytes.to_vec();
        Ok(())
    }
}

impl Drop for MemLock {
    fn drop(&mut self) {
        self.shared.state.lock().locks.remove(&self.path);
    }
}

impl FileSystem for MemFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        let path = normalize(path);
        let mut state = self.shared.state.lock();
        let mut missing = Vec::new();
        for dir in path.ancestors() {
            if state.dir_exists(dir) {
                break;
            }
            if state.current.contains_key(dir) {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!("{}: a file is in the way", dir.display()),
                ));
            }
            missing.push(dir.to_path_buf());
        }
        state.dirs.extend(missing);
        Ok(())
    }

    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        let inode = self
            .shared
            .state
            .lock()
            .create_or_truncate(&normalize(path), true)?;
        Ok(Box::new(MemWritable {
            inode,
            shared: Arc::clone(&self.shared),
            window: None,
        }))
    }

    fn reopen(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        let inode = Arc::clone(self.shared.state.lock().file(&normalize(path))?);
        Ok(Box::new(MemWritable {
            inode,
            shared: Arc::clone(&self.shared),
            window: None,
        }))
    }

    fn open(&self, path: &Path) -> io::Result<Arc<dyn RandomAccessFile>> {
        let state = self.shared.state.lock();
        let inode = Arc::clone(state.file(&normalize(path))?);
        let len = inode.lock().data.len() as u64;
        Ok(Arc::new(MemReadable { inode, len }))
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        let dir = normalize(path);
        let state = self.shared.state.lock();
        if !state.dir_exists(&dir) {
            return Err(not_found(&dir));
        }
        let files = state.current.keys();
        let dirs = state.dirs.iter();
        Ok(files
            .chain(dirs)
            .filter(|p| p.parent() == Some(dir.as_path()))
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect())
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        let path = normalize(path);
        let mut state = self.shared.state.lock();
        state.file(&path)?;
        state.current.remove(&path);
        state.pending.push(DirOp::Unlink { path });
        Ok(())
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let (from, to) = (normalize(from), normalize(to));
        let mut state = self.shared.state.lock();
        let inode = Arc::clone(state.file(&from)?);
        state.check_file_slot(&to)?;
        if from == to {
            return Ok(());
        }
        state.current.remove(&from);
        state.current.insert(to.clone(), Arc::clone(&inode));
        state.pending.push(DirOp::Rename { from, to, inode });
        Ok(())
    }

    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        let (from, to) = (normalize(from), normalize(to));
        let mut state = self.shared.state.lock();
        let inode = Arc::clone(state.file(&from)?);
        state.check_file_slot(&to)?;
        if state.current.contains_key(&to) {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{}: file exists", to.display()),
            ));
        }
        state.current.insert(to.clone(), Arc::clone(&inode));
        state.pending.push(DirOp::Link { path: to, inode });
        Ok(())
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        let dir = normalize(path);
        let mut state = self.shared.state.lock();
        if !state.dir_exists(&dir) {
            return Err(not_found(&dir));
        }
        let state = &mut *state;
        let (now, later): (Vec<DirOp>, Vec<DirOp>) =
            state.pending.drain(..).partition(|op| op.touches(&dir));
        state.pending = later;
        for op in &now {
            op.apply(&mut state.durable);
        }
        // The directory's durable entries are now exactly its current ones.
        state.durable.retain(|p, _| parent_of(p) != dir);
        for (p, inode) in state.current.iter().filter(|(p, _)| parent_of(p) == dir) {
            state.durable.insert(p.clone(), Arc::clone(inode));
        }
        Ok(())
    }

    fn is_dir(&self, path: &Path) -> io::Result<Option<bool>> {
        let path = normalize(path);
        let state = self.shared.state.lock();
        Ok(if state.dir_exists(&path) {
            Some(true)
        } else if state.current.contains_key(&path) {
            Some(false)
        } else {
            None
        })
    }

    fn stat(&self, path: &Path) -> io::Result<super::FileStat> {
        // No symbolic links: resolving `.` and `..` is all there is.
        let canonical = super::lexical(path);
        let state = self.shared.state.lock();
        if state.dir_exists(&canonical) {
            return Ok(super::FileStat {
                file_type: super::FileType::Directory,
                canonical,
                id: None,
            });
        }
        let inode = state.file(&canonical)?;
        // The inode's address names it while it lives, as an inode number does.
        let id = Arc::as_ptr(inode) as usize as u64;
        Ok(super::FileStat {
            file_type: super::FileType::Regular,
            canonical,
            id: Some((0, id)),
        })
    }

    fn file_size(&self, path: &Path) -> io::Result<u64> {
        let state = self.shared.state.lock();
        let len = state.file(&normalize(path))?.lock().data.len();
        Ok(len as u64)
    }

    fn lock(&self, path: &Path) -> io::Result<Box<dyn FileLock>> {
        let path = normalize(path);
        let mut state = self.shared.state.lock();
        let inode = state.create_or_truncate(&path, false)?;
        if !state.locks.insert(path.clone()) {
            return Err(io::Error::new(io::ErrorKind::WouldBlock, "lock is held"));
        }
        Ok(Box::new(MemLock {
            path,
            inode,
            shared: Arc::clone(&self.shared),
        }))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
#[path = "mem_tests.rs"]
mod tests;
