//! The operating system's file system.

use super::{FileLock, FileStat, FileSyncer, FileSystem, FileType, RandomAccessFile, WritableFile};
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt};
use std::path::Path;
use std::sync::Arc;

/// The real file system (`std::fs`). Appends go straight to the kernel with
/// `write(2)`, or on Linux are copied into a shared mapping of the file
/// (`map_window`); syncs are `fdatasync(2)`; locks are `flock(2)`.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealFs;

struct RealWritable {
    /// Shared with the file's [`FileSyncer`]s.
    file: Arc<File>,
    len: u64,
    /// The window of `map_window` (Linux: `fdatasync` of the file writes
    /// back pages dirtied through a mapping, as the page cache is one).
    #[cfg(target_os = "linux")]
    map: Option<super::mapping::WriteMap>,
}

impl RealWritable {
    fn new(file: File, len: u64) -> RealWritable {
        RealWritable {
            file: Arc::new(file),
            len,
            #[cfg(target_os = "linux")]
            map: None,
        }
    }
}

impl FileSyncer for File {
    fn sync_data(&self) -> io::Result<()> {
        File::sync_data(self)
    }

    #[cfg(target_os = "linux")]
    fn start_writeback(&self, from: u64, to: u64) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        let (Ok(offset), Ok(len)) = (i64::try_from(from), i64::try_from(to.saturating_sub(from)))
        else {
            return Ok(());
        };
        // SAFETY: a plain system call on a descriptor this handle owns (kept
        // open by `self`); it reads no memory of the process.
        #[allow(unsafe_code)]
        let rc = unsafe {
            libc::sync_file_range(self.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE)
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
}

impl WritableFile for RealWritable {
    fn append(&mut self, data: &[u8]) -> io::Result<()> {
        // At the end the handle knows, so a file opened by `reopen` (whose
        // cursor is at 0) appends too.
        let len = self.len;
        self.write_at(len, data)
    }

    fn write_at(&mut self, offset: u64, data: &[u8]) -> io::Result<()> {
        if let Err(e) = self.file.write_all_at(data, offset) {
            // Part of it may be in the file (a disk that fills up takes the
            // start of a write): `len` stays the file's length, which a
            // writer cutting what it wrote needs.
            if let Ok(meta) = self.file.metadata() {
                self.len = meta.len();
            }
            return Err(e);
        }
        self.len = self.len.max(offset.saturating_add(data.len() as u64));
        Ok(())
    }

    fn sync_data(&mut self) -> io::Result<()> {
        self.file.sync_data()
    }

    fn truncate(&mut self, len: u64) -> io::Result<()> {
        if len > self.len {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "cannot truncate a file to more than its length",
            ));
        }
        #[cfg(target_os = "linux")]
        {
            self.map = None;
        }
        self.file.set_len(len)?;
        self.len = len;
        Ok(())
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn syncer(&self) -> Option<Arc<dyn FileSyncer>> {
        Some(Arc::clone(&self.file) as Arc<dyn FileSyncer>)
    }

    #[cfg(target_os = "linux")]
    fn map_window(&mut self, from: u64, to: u64) -> io::Result<bool> {
        self.map = None;
        if to > self.len {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "cannot map past the end of the file",
            ));
        }
        self.map = Some(super::mapping::WriteMap::new(&self.file, from, to)?);
        Ok(true)
    }

    #[cfg(target_os = "linux")]
    fn write_mapped(&mut self, offset: u64, data: &[u8]) -> io::Result<bool> {
        Ok(self.map.as_mut().is_some_and(|m| m.write(offset, data)))
    }
}

struct RealReadable {
    file: File,
    len: u64,
}

impl RandomAccessFile for RealReadable {
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        read_uninit_at(&self.file, offset, len)
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        FileExt::read_exact_at(&self.file, buf, offset)
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn os_file(&self) -> Option<&File> {
        Some(&self.file)
    }

    fn advise_random(&self) {
        fadvise(&self.file, 0, 0, Advice::Random);
    }

    fn will_need(&self, offset: u64, len: u64) {
        fadvise(&self.file, offset, len, Advice::WillNeed);
    }
}

/// What [`fadvise`] tells the kernel.
#[derive(Clone, Copy)]
enum Advice {
    /// `POSIX_FADV_RANDOM`: no read-ahead.
    Random,
    /// `POSIX_FADV_WILLNEED`: start reading the range now.
    WillNeed,
}

/// `posix_fadvise` on `file` (which std does not wrap); a hint, so a
/// failure is ignored.
fn fadvise(file: &File, offset: u64, len: u64, advice: Advice) {
    use std::os::fd::AsRawFd;
    let (Ok(offset), Ok(len)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len)) else {
        return;
    };
    let advice = match advice {
        Advice::Random => libc::POSIX_FADV_RANDOM,
        Advice::WillNeed => libc::POSIX_FADV_WILLNEED,
    };
    // SAFETY: a plain system call on a descriptor `file` keeps open; it
    // reads and writes no memory of the process.
    #[allow(unsafe_code)]
    let _ = unsafe { libc::posix_fadvise(file.as_raw_fd(), offset, len, advice) };
}

/// `len` bytes of `file` from `offset`, read into a buffer that is not
/// zeroed first: a block read from a table (64 KiB by default) would
/// otherwise be written twice, once with zeros. `UnexpectedEof` if the file
/// ends first, as `read_exact_at`.
fn read_uninit_at(file: &File, offset: u64, len: usize) -> io::Result<Vec<u8>> {
    use std::os::fd::AsRawFd;
    let mut buf: Vec<u8> = Vec::with_capacity(len);
    let mut filled = 0usize;
    while filled < len {
        let at = offset
            .checked_add(filled as u64)
            .and_then(|at| libc::off_t::try_from(at).ok())
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "offset out of range"))?;
        // SAFETY: `pread` writes at most `len - filled` bytes into the
        // buffer's spare capacity from byte `filled` on, which `with_capacity`
        // allocated and nothing else refers to; the descriptor is kept open by
        // `file`.
        #[allow(unsafe_code)]
        let n = unsafe {
            libc::pread(
                file.as_raw_fd(),
                buf.as_mut_ptr().add(filled).cast(),
                len - filled,
                at,
            )
        };
        match n {
            0 => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "failed to fill whole buffer",
                ))
            }
            n if n > 0 => filled += n as usize,
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
    // SAFETY: `pread` wrote every byte of `0..len` above.
    #[allow(unsafe_code)]
    unsafe {
        buf.set_len(len)
    };
    Ok(buf)
}

/// What kind of file `m` describes.
fn file_type(m: &fs::Metadata) -> FileType {
    let t = m.file_type();
    if t.is_file() {
        FileType::Regular
    } else if t.is_dir() {
        FileType::Directory
    } else if t.is_fifo() {
        FileType::Fifo
    } else {
        FileType::Other
    }
}

/// The device and inode number of the file `m` describes.
fn id(m: &fs::Metadata) -> (u64, u64) {
    (m.dev(), m.ino())
}

/// The kind and id of an open file, if it is one of the operating system's.
pub(super) fn open_file_stat(file: &dyn RandomAccessFile) -> Option<(FileType, (u64, u64))> {
    let m = file.os_file()?.metadata().ok()?;
    Some((file_type(&m), id(&m)))
}

/// The error for `path`, or a directory on it, being a symbolic link whose
/// target is missing; `None` if none is.
fn dangling_link(path: &Path) -> Option<io::Error> {
    path.ancestors().find_map(|p| {
        let is_link = fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink());
        if !is_link || fs::metadata(p).is_ok() {
            return None;
        }
        let target = fs::read_link(p).ok()?;
        let what = if p == path {
            "the path".to_string()
        } else {
            p.display().to_string()
        };
        Some(io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "{what} is a symbolic link to {}, which does not exist; create it, or remove the link",
                target.display()
            ),
        ))
    })
}

struct RealLock {
    _file: File,
}

impl FileLock for RealLock {
    fn replace_contents(&self, bytes: &[u8]) -> io::Result<()> {
        use std::os::unix::fs::FileExt;
        self._file.set_len(0)?;
        self._file.write_all_at(bytes, 0)
    }
}

impl FileSystem for RealFs {
    /// A path (or a directory on it) that is a symbolic link to nothing
    /// is said in words: the system's `EEXIST` ("File exists") names the
    /// link, which does exist, and not the target, which does not.
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        fs::create_dir_all(path).map_err(|e| dangling_link(path).unwrap_or(e))
    }

    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        // Readable too: a shared writable mapping needs it (`map_window`).
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        Ok(Box::new(RealWritable::new(file, 0)))
    }

    fn reopen(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        let file = OpenOptions::new().read(true).write(true).open(path)?;
        let len = file.metadata()?.len();
        Ok(Box::new(RealWritable::new(file, len)))
    }

    fn open(&self, path: &Path) -> io::Result<Arc<dyn RandomAccessFile>> {
        let file = File::open(path)?;
        let len = file.metadata()?.len();
        Ok(Arc::new(RealReadable { file, len }))
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in fs::read_dir(path)? {
            names.push(entry?.file_name().to_string_lossy().into_owned());
        }
        Ok(names)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }

    fn remove_dir(&self, path: &Path) -> io::Result<()> {
        fs::remove_dir(path)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }

    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::hard_link(from, to)
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        File::open(path)?.sync_all()
    }

    fn is_dir(&self, path: &Path) -> io::Result<Option<bool>> {
        match fs::metadata(path) {
            Ok(m) => Ok(Some(m.is_dir())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn file_size(&self, path: &Path) -> io::Result<u64> {
        Ok(fs::metadata(path)?.len())
    }

    fn stat(&self, path: &Path) -> io::Result<FileStat> {
        let m = fs::metadata(path)?;
        Ok(FileStat {
            file_type: file_type(&m),
            canonical: fs::canonicalize(path)?,
            id: Some(id(&m)),
        })
    }

    fn lock(&self, path: &Path) -> io::Result<Box<dyn FileLock>> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        match file.try_lock() {
            Ok(()) => Ok(Box::new(RealLock { _file: file })),
            Err(fs::TryLockError::WouldBlock) => {
                Err(io::Error::new(io::ErrorKind::WouldBlock, "lock is held"))
            }
            Err(fs::TryLockError::Error(e)) => Err(e),
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn mapped_writes_reach_the_file_and_stay_inside_the_window() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut f = RealFs.create(&path).unwrap();
        f.write_at(0, &[0u8; 8192]).unwrap();
        assert!(f.map_window(100, 8192).unwrap(), "the file was mapped");
        assert!(f.write_mapped(4000, b"through the mapping").unwrap());
        assert!(!f.write_mapped(8190, b"past the window").unwrap());
        assert!(!f.write_mapped(50, b"before the window").unwrap());
        f.syncer().unwrap().sync_data().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len(), 8192, "a mapped write does not change the size");
        assert_eq!(&bytes[4000..4019], b"through the mapping");
        assert!(f.map_window(0, 9000).is_err(), "no window past the end");
    }

    #[test]
    fn reads_return_the_bytes_asked_for_or_fail_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let bytes: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let r = RealFs.open(&path).unwrap();
        assert_eq!(r.read_at(0, 0).unwrap(), b"");
        assert_eq!(r.read_at(0, bytes.len()).unwrap(), bytes);
        assert_eq!(r.read_at(70_001, 65_541).unwrap(), &bytes[70_001..135_542]);
        assert_eq!(r.read_at(199_999, 1).unwrap(), &bytes[199_999..]);
        for (offset, len, kind) in [
            (199_999, 2, io::ErrorKind::UnexpectedEof),
            (200_000, 1, io::ErrorKind::UnexpectedEof),
            (u64::MAX - 1, 8, io::ErrorKind::InvalidInput),
        ] {
            let e = r.read_at(offset, len).unwrap_err();
            assert_eq!(e.kind(), kind, "{offset}+{len}: {e}");
        }
    }
}
