//! The file system seen by the engine. Every byte lamina reads or writes goes
//! through [`FileSystem`], so that crash and fault tests are ordinary tests:
//! [`RealFs`] is the operating system's, [`MemFs`] keeps synced and unsynced
//! bytes apart and can simulate a crash, and [`FaultFs`] injects failures.

mod fault;
#[cfg(target_os = "linux")]
mod mapping;
mod mem;
mod read_map;
mod real;
mod writeback;

pub use fault::{FaultFs, FaultKind, Faults};
pub use mem::MemFs;
pub(crate) use read_map::ReadMap;
pub use real::RealFs;
#[cfg(test)]
pub(crate) use writeback::WRITEBACK_STEP;
pub(crate) use writeback::{Writeback, WritebackMark};

use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// A file opened for writing.
///
/// `append` and `write_at` hand the bytes to the operating system before
/// they return (no buffering inside the implementation): a killed process
/// does not lose them. Only `sync_data` makes them survive a power loss.
pub trait WritableFile: Send {
    /// Writes all of `data` at the end of the file.
    fn append(&mut self, data: &[u8]) -> io::Result<()>;
    /// Writes all of `data` at `offset`, over the bytes there and past the
    /// end if it reaches beyond (`offset` at most the file's length).
    fn write_at(&mut self, offset: u64, data: &[u8]) -> io::Result<()>;
    /// Makes every appended byte durable (`fdatasync`).
    fn sync_data(&mut self) -> io::Result<()>;
    /// Cuts the file to its first `len` bytes (at most its length); durable
    /// after the next `sync_data`. REQUIRES: no window of `map_window` reaches
    /// past `len`. File systems that cannot shorten a file say so.
    fn truncate(&mut self, _len: u64) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this file system cannot shorten a file",
        ))
    }
    /// Current length of the file in bytes.
    fn len(&self) -> u64;
    /// True when nothing has been written.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Maps the file's bytes `from..to` (`to` at most its length) for
    /// [`WritableFile::write_mapped`], replacing any window mapped before.
    /// `Ok(false)` if the file system writes only with system calls; callers
    /// then go on with `write_at`. REQUIRES: the file is not truncated below
    /// `to` while the window is mapped (it lives until the next call or the
    /// file is dropped).
    fn map_window(&mut self, _from: u64, _to: u64) -> io::Result<bool> {
        Ok(false)
    }
    /// Copies `data` to `offset` through the window of
    /// [`WritableFile::map_window`], with no system call. Durable as
    /// `write_at`: the bytes are in the operating system's page cache, so a
    /// killed process does not lose them, and `sync_data` (or a syncer)
    /// makes them survive a power loss. `Ok(false)`, nothing written, if the
    /// range is not inside the window.
    fn write_mapped(&mut self, _offset: u64, _data: &[u8]) -> io::Result<bool> {
        Ok(false)
    }
    /// A second handle that syncs this file from another thread while it is
    /// being written, or `None` if the file system has none (its callers
    /// then sync through the `WritableFile` itself).
    fn syncer(&self) -> Option<Arc<dyn FileSyncer>> {
        None
    }
}

/// Syncs a file being written by someone else (see
/// [`WritableFile::syncer`]); shared between threads.
pub trait FileSyncer: Send + Sync {
    /// Makes durable every byte handed to the file before the call
    /// (`fdatasync`); bytes written while it runs may or may not be covered.
    fn sync_data(&self) -> io::Result<()>;
    /// Starts writing the bytes `from..to` back to the device without
    /// waiting for it (Linux `sync_file_range` with `SYNC_FILE_RANGE_WRITE`),
    /// so that a later `sync_data` has less left to write. Durability is
    /// unchanged: only `sync_data` makes bytes durable. A no-op where the
    /// file system has no such call.
    fn start_writeback(&self, _from: u64, _to: u64) -> io::Result<()> {
        Ok(())
    }
}

/// A file opened for reading at arbitrary offsets; shared between threads.
pub trait RandomAccessFile: Send + Sync {
    /// Reads exactly `len` bytes at `offset`; `UnexpectedEof` if the file is shorter.
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>>;
    /// Reads exactly `buf.len()` bytes at `offset` straight into `buf` (one
    /// positional read, no intermediate copy where the file system allows);
    /// `UnexpectedEof` if the file is shorter.
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let data = self.read_at(offset, buf.len())?;
        buf.copy_from_slice(&data);
        Ok(())
    }
    /// Length of the file in bytes when it was opened.
    fn len(&self) -> u64;
    /// True when the file is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The operating system's file behind this handle, for a read-only
    /// memory mapping of an immutable file (tables, finished blob files); `None` (the
    /// default) where files live elsewhere or reads must go through `read_at`.
    fn os_file(&self) -> Option<&std::fs::File> {
        None
    }
    /// A hint: reads of this file land anywhere, so the operating system
    /// should read what is asked and no more (no read-ahead). Readers that
    /// go through it in order say so themselves ([`RandomAccessFile::will_need`]).
    fn advise_random(&self) {}
    /// A hint: bytes `offset..offset + len` will be read soon; the operating
    /// system may start reading them now.
    fn will_need(&self, _offset: u64, _len: u64) {}
}

/// A held advisory lock; released when dropped.
pub trait FileLock: Send + Sync {
    /// Replaces the bytes of the locked file (the file the lock was taken
    /// on, even if its name has been removed since). Not durable: for files
    /// other processes read while the lock is held, such as reader files.
    fn replace_contents(&self, _bytes: &[u8]) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this file system cannot write through a lock",
        ))
    }
}

/// The operations lamina needs from a file system.
///
/// Durability rules (which the in-memory implementation enforces when it
/// simulates a crash): file contents are durable up to the last `sync_data`;
/// creating, renaming or removing a file is durable only after `sync_dir` on
/// its directory.
pub trait FileSystem: Send + Sync + 'static {
    /// Creates `path` and its missing parents.
    fn create_dir_all(&self, path: &Path) -> io::Result<()>;
    /// Creates (or truncates) a file for writing.
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>>;
    /// Opens an existing file for writing, keeping its bytes (to be written
    /// over with [`WritableFile::write_at`]). `NotFound` if it is missing.
    fn reopen(&self, path: &Path) -> io::Result<Box<dyn WritableFile>>;
    /// Opens an existing file for reading.
    fn open(&self, path: &Path) -> io::Result<Arc<dyn RandomAccessFile>>;
    /// Names (not paths) of the entries of a directory, in no particular order.
    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>>;
    /// Removes a file.
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// Atomically replaces `to` with `from`.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Makes the creations, renames and removals in a directory durable.
    fn sync_dir(&self, path: &Path) -> io::Result<()>;
    /// Whether `path` names an existing directory (`Some(true)`), another kind
    /// of file (`Some(false)`), or nothing (`None`).
    fn is_dir(&self, path: &Path) -> io::Result<Option<bool>>;
    /// Size of a file in bytes.
    fn file_size(&self, path: &Path) -> io::Result<u64>;
    /// Takes an exclusive lock on `path` (created if missing). Fails with
    /// `io::ErrorKind::WouldBlock` if anyone, in this process or another, holds it.
    fn lock(&self, path: &Path) -> io::Result<Box<dyn FileLock>>;

    /// Makes `to` a second name of the file `from` (a hard link), so that
    /// either name can be removed without losing the file. Like a creation,
    /// the new name is durable after `sync_dir`. File systems that cannot
    /// link (or `from` and `to` on different devices) return an error, and
    /// callers copy instead.
    fn hard_link(&self, _from: &Path, _to: &Path) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "hard links are not supported by this file system",
        ))
    }

    /// Removes an empty directory. File systems without real directories may
    /// do nothing.
    fn remove_dir(&self, _path: &Path) -> io::Result<()> {
        Ok(())
    }

    /// What `path` names, following symbolic links, found without opening
    /// it (so a FIFO is never waited on); `NotFound` if nothing. The default
    /// serves file systems without links or special files: a file is
    /// regular unless it is a directory, its path is resolved lexically, and
    /// it has no id.
    fn stat(&self, path: &Path) -> io::Result<FileStat> {
        match self.is_dir(path)? {
            None => Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{}: no such file or directory", path.display()),
            )),
            Some(dir) => Ok(FileStat {
                file_type: if dir {
                    FileType::Directory
                } else {
                    FileType::Regular
                },
                canonical: lexical(path),
                id: None,
            }),
        }
    }

    /// Reads a whole file.
    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>> {
        let f = self.open(path)?;
        let len = usize::try_from(f.len()).map_err(|_| io::Error::other("file too large"))?;
        f.read_at(0, len)
    }
}

/// What [`FileSystem::stat`] finds at a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStat {
    /// What kind of file it is.
    pub file_type: FileType,
    /// Its path with `.`, `..` and symbolic links resolved (absolute where
    /// the file system has a working directory).
    pub canonical: PathBuf,
    /// The file itself (device and inode number on Unix), the same for every
    /// name of one file; `None` where the file system cannot tell.
    pub id: Option<(u64, u64)>,
}

/// The kinds of file [`FileStat`] tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileType {
    /// A regular file.
    Regular,
    /// A directory.
    Directory,
    /// A FIFO (named pipe): opening it for reading waits for a writer.
    Fifo,
    /// Anything else: a socket, a device.
    Other,
}

/// The kind and id (as in [`FileStat`]) of an open file, where the file
/// system can tell (files of [`RealFs`]).
pub(crate) fn open_file_stat(file: &dyn RandomAccessFile) -> Option<(FileType, (u64, u64))> {
    real::open_file_stat(file)
}

/// `path` with `.` dropped and each `..` taking away the name before it,
/// without consulting any file system.
pub(crate) fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if matches!(out.components().next_back(), Some(Component::Normal(_))) {
                    out.pop();
                } else if !out.has_root() {
                    out.push(c);
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// The default file system: the operating system's.
pub fn default_fs() -> Arc<dyn FileSystem> {
    Arc::new(RealFs)
}
