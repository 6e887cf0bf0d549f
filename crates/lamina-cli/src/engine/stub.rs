//! A minimal store with the public API of `lamina::Db` (the subset the CLI
//! uses, same names and signatures): an ordered map kept in memory and
//! written to one file, `DATA`, by `flush`, `sync`, `compact` and `close`.
//! `engine/mod.rs` re-exports either this or the engine's own types.

use lamina::fs::{FileLock, FileSystem};
use lamina::{Durability, Error, Options, Result};
use std::collections::BTreeMap;
use std::io;
use std::ops::{Bound, RangeBounds};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

const DATA: &str = "DATA";
const MAGIC: &[u8] = b"lamina-stub 1\n";

type Map = BTreeMap<Vec<u8>, Vec<u8>>;

/// A database handle.
#[derive(Clone)]
pub struct Db {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    fs: Arc<dyn FileSystem>,
    read_only: bool,
    map: RwLock<Map>,
    closed: AtomicBool,
    dirty: AtomicBool,
    lock: Mutex<Option<Box<dyn FileLock>>>,
    user_bytes_written: AtomicU64,
    file_bytes_written: AtomicU64,
}

fn io_err(path: &Path, e: io::Error) -> Error {
    Error::io(path, e)
}

fn corrupt(path: &Path, offset: usize, reason: &str) -> Error {
    Error::corruption(path, offset as u64, reason)
}

fn decode(path: &Path, bytes: &[u8]) -> Result<Map> {
    let mut map = Map::new();
    let mut rest = bytes
        .strip_prefix(MAGIC)
        .ok_or_else(|| corrupt(path, 0, "bad magic number"))?;
    let take = |rest: &mut &[u8], n: usize| -> Result<Vec<u8>> {
        let at = bytes.len() - rest.len();
        if rest.len() < n {
            return Err(corrupt(path, at, "truncated record"));
        }
        let (head, tail) = rest.split_at(n);
        *rest = tail;
        Ok(head.to_vec())
    };
    while !rest.is_empty() {
        let lens = take(&mut rest, 8)?;
        let mut k = [0u8; 4];
        let mut v = [0u8; 4];
        k.copy_from_slice(lens.get(..4).unwrap_or(&[0; 4]));
        v.copy_from_slice(lens.get(4..).unwrap_or(&[0; 4]));
        let key = take(&mut rest, u32::from_le_bytes(k) as usize)?;
        let value = take(&mut rest, u32::from_le_bytes(v) as usize)?;
        map.insert(key, value);
    }
    Ok(map)
}

impl Db {
    /// Opens (or creates) the database in directory `path`.
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<Db> {
        let path = path.as_ref().to_path_buf();
        let fs = options.fs.clone();
        match fs.is_dir(&path).map_err(|e| io_err(&path, e))? {
            Some(false) => {
                return Err(Error::NotADatabase {
                    path,
                    reason: "it is not a directory".into(),
                })
            }
            None if options.create_if_missing && !options.read_only => {
                fs.create_dir_all(&path).map_err(|e| io_err(&path, e))?
            }
            None => {
                return Err(Error::NotADatabase {
                    path,
                    reason: "no such directory".into(),
                })
            }
            Some(true) => {}
        }
        let names = fs.list_dir(&path).map_err(|e| io_err(&path, e))?;
        let exists = names.iter().any(|n| n == DATA);
        if exists && options.error_if_exists {
            return Err(Error::AlreadyExists(path));
        }
        if !exists && names.iter().any(|n| n != "LOCK") {
            return Err(Error::NotADatabase {
                path,
                reason: "the directory holds other files".into(),
            });
        }
        if !exists && (options.read_only || !options.create_if_missing) {
            return Err(Error::NotADatabase {
                path,
                reason: "no database here".into(),
            });
        }
        let lock = if options.read_only {
            None
        } else {
            match fs.lock(&path.join("LOCK")) {
                Ok(l) => Some(l),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Err(Error::Locked(path)),
                Err(e) => return Err(io_err(&path, e)),
            }
        };
        let data = path.join(DATA);
        let map = if exists {
            decode(&data, &fs.read_all(&data).map_err(|e| io_err(&data, e))?)?
        } else {
            Map::new()
        };
        let db = Db {
            inner: Arc::new(Inner {
                path,
                fs,
                read_only: options.read_only,
                map: RwLock::new(map),
                closed: AtomicBool::new(false),
                dirty: AtomicBool::new(!exists),
                lock: Mutex::new(lock),
                user_bytes_written: AtomicU64::new(0),
                file_bytes_written: AtomicU64::new(0),
            }),
        };
        if !exists {
            db.save()?;
        }
        Ok(db)
    }

    /// Removes a database's files and its directory.
    pub fn destroy(path: impl AsRef<Path>, options: &Options) -> Result<()> {
        let path = path.as_ref();
        let fs = &options.fs;
        let names = fs.list_dir(path).map_err(|e| io_err(path, e))?;
        if !names.iter().any(|n| n == DATA) {
            return Err(Error::NotADatabase {
                path: path.to_path_buf(),
                reason: "no database here".into(),
            });
        }
        for n in names {
            fs.remove_file(&path.join(&n))
                .map_err(|e| io_err(path, e))?;
        }
        std::fs::remove_dir(path).map_err(|e| io_err(path, e))
    }

    /// The directory of the database.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    fn live(&self) -> Result<()> {
        if self.inner.closed.load(Ordering::Acquire) {
            Err(Error::Closed)
        } else {
            Ok(())
        }
    }

    fn writable(&self) -> Result<()> {
        self.live()?;
        if self.inner.read_only {
            Err(Error::ReadOnly)
        } else {
            Ok(())
        }
    }

    fn map(&self) -> std::sync::RwLockReadGuard<'_, Map> {
        self.inner.map()
    }

    fn map_mut(&self) -> std::sync::RwLockWriteGuard<'_, Map> {
        self.inner.map.write().unwrap_or_else(|p| p.into_inner())
    }

    fn save(&self) -> Result<()> {
        self.inner.save()
    }

    /// The value of `key`.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.live()?;
        Ok(self.map().get(key).cloned())
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &[u8]) -> Result<bool> {
        self.live()?;
        Ok(self.map().contains_key(key))
    }

    /// Stores `value` under `key`.
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        let mut b = Batch::new();
        b.put(key, value);
        self.write(b)
    }

    /// Removes `key`; removing a missing key is not an error.
    pub fn delete(&self, key: &[u8]) -> Result<()> {
        let mut b = Batch::new();
        b.delete(key);
        self.write(b)
    }

    /// Applies a batch atomically.
    pub fn write(&self, batch: Batch) -> Result<()> {
        self.write_with(batch, Durability::Os)
    }

    /// Applies a batch atomically with the given durability.
    pub fn write_with(&self, batch: Batch, _durability: Durability) -> Result<()> {
        self.writable()?;
        for op in &batch.ops {
            if op.0.is_empty() {
                return Err(Error::InvalidArgument("empty key".into()));
            }
            if op.0.len() > lamina::key::MAX_KEY_LEN {
                return Err(Error::InvalidArgument("key too long".into()));
            }
        }
        let mut map = self.map_mut();
        for (k, v) in batch.ops {
            let n = (k.len() + v.as_ref().map_or(0, Vec::len)) as u64;
            self.inner
                .user_bytes_written
                .fetch_add(n, Ordering::Relaxed);
            match v {
                Some(v) => map.insert(k, v),
                None => map.remove(&k),
            };
        }
        self.inner.dirty.store(true, Ordering::Release);
        Ok(())
    }

    /// Every record, ascending.
    pub fn iter(&self) -> Iter {
        self.range::<&[u8], _>(..)
    }

    /// The records in a key range, ascending.
    pub fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Iter {
        let conv = |b: Bound<&K>| match b {
            Bound::Included(k) => Bound::Included(k.as_ref().to_vec()),
            Bound::Excluded(k) => Bound::Excluded(k.as_ref().to_vec()),
            Bound::Unbounded => Bound::Unbounded,
        };
        let bounds = (conv(range.start_bound()), conv(range.end_bound()));
        if let (Bound::Included(s) | Bound::Excluded(s), Bound::Included(e) | Bound::Excluded(e)) =
            &bounds
        {
            if s > e {
                return Iter {
                    items: Vec::new().into_iter(),
                };
            }
        }
        let items: Vec<_> = self
            .map()
            .range(bounds)
            .map(|(k, v)| Ok((k.clone(), v.clone())))
            .collect();
        Iter {
            items: items.into_iter(),
        }
    }

    /// The records whose key starts with `prefix`, ascending.
    pub fn prefix(&self, prefix: &[u8]) -> Iter {
        let items: Vec<_> = self
            .map()
            .range(prefix.to_vec()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(k, v)| Ok((k.clone(), v.clone())))
            .collect();
        Iter {
            items: items.into_iter(),
        }
    }

    /// Makes everything written so far durable.
    pub fn flush(&self) -> Result<()> {
        self.live()?;
        self.save()
    }

    /// Makes everything written so far durable.
    pub fn sync(&self) -> Result<()> {
        self.flush()
    }

    /// Rewrites the data file.
    pub fn compact(&self) -> Result<()> {
        self.writable()?;
        self.inner.dirty.store(true, Ordering::Release);
        self.save()
    }

    /// Makes everything durable and closes the handle.
    pub fn close(&self) -> Result<()> {
        if self.inner.closed.load(Ordering::Acquire) {
            return Ok(());
        }
        let r = self.save();
        self.inner.closed.store(true, Ordering::Release);
        self.inner
            .lock
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        r
    }

    /// Counters and shape.
    pub fn stats(&self) -> Stats {
        let map = self.map();
        let key_bytes: u64 = map.keys().map(|k| k.len() as u64).sum();
        let value_bytes: u64 = map.values().map(|v| v.len() as u64).sum();
        let file = self
            .inner
            .fs
            .file_size(&self.inner.path.join(DATA))
            .unwrap_or(0);
        let level = LevelStats {
            level: 0,
            tables: 1,
            bytes: file,
            entries: map.len() as u64,
            key_bytes,
            value_bytes,
            data_raw_bytes: key_bytes + value_bytes,
            data_stored_bytes: file,
            ..LevelStats::default()
        };
        let written = self.inner.file_bytes_written.load(Ordering::Relaxed);
        Stats {
            levels: vec![level],
            user_bytes_written: self.inner.user_bytes_written.load(Ordering::Relaxed),
            flush_bytes_written: written,
            total_table_bytes: file,
            live_entries_estimate: map.len() as u64,
            block_size: 16 << 10,
            ..Stats::default()
        }
    }

    /// Reads everything back and reports damage.
    pub fn check(&self) -> Result<CheckReport> {
        self.live()?;
        let data = self.inner.path.join(DATA);
        let bytes = self
            .inner
            .fs
            .read_all(&data)
            .map_err(|e| io_err(&data, e))?;
        let mut report = CheckReport {
            tables: 1,
            bytes: bytes.len() as u64,
            ..Default::default()
        };
        match decode(&data, &bytes) {
            Ok(map) => report.entries = map.len() as u64,
            Err(e) => report.problems.push(e.to_string()),
        }
        Ok(report)
    }

    /// A consistent copy into a new directory.
    pub fn backup(&self, dest: impl AsRef<Path>) -> Result<()> {
        self.live()?;
        let dest = dest.as_ref();
        if self
            .inner
            .fs
            .is_dir(dest)
            .map_err(|e| io_err(dest, e))?
            .is_some()
        {
            return Err(Error::AlreadyExists(dest.to_path_buf()));
        }
        self.inner.dirty.store(true, Ordering::Release);
        self.save()?;
        self.inner
            .fs
            .create_dir_all(dest)
            .map_err(|e| io_err(dest, e))?;
        let bytes = self.inner.fs.read_all(&self.inner.path.join(DATA));
        let bytes = bytes.map_err(|e| io_err(&self.inner.path, e))?;
        let mut f = self
            .inner
            .fs
            .create(&dest.join(DATA))
            .map_err(|e| io_err(dest, e))?;
        f.append(&bytes)
            .and_then(|_| f.sync_data())
            .map_err(|e| io_err(dest, e))
    }
}

impl Inner {
    fn map(&self) -> std::sync::RwLockReadGuard<'_, Map> {
        self.map.read().unwrap_or_else(|p| p.into_inner())
    }

    fn save(&self) -> Result<()> {
        if self.read_only || !self.dirty.swap(false, Ordering::AcqRel) {
            return Ok(());
        }
        let fs = &self.fs;
        let tmp = self.path.join("DATA.tmp");
        let dst = self.path.join(DATA);
        let result = (|| -> io::Result<u64> {
            let mut f = fs.create(&tmp)?;
            let mut buf = MAGIC.to_vec();
            for (k, v) in self.map().iter() {
                buf.extend_from_slice(&(k.len() as u32).to_le_bytes());
                buf.extend_from_slice(&(v.len() as u32).to_le_bytes());
                buf.extend_from_slice(k);
                buf.extend_from_slice(v);
                if buf.len() > 1 << 20 {
                    f.append(&buf)?;
                    buf.clear();
                }
            }
            f.append(&buf)?;
            f.sync_data()?;
            let len = f.len();
            fs.rename(&tmp, &dst)?;
            fs.sync_dir(&self.path)?;
            Ok(len)
        })();
        match result {
            Ok(n) => {
                self.file_bytes_written.fetch_add(n, Ordering::Relaxed);
                Ok(())
            }
            Err(e) => {
                self.dirty.store(true, Ordering::Release);
                Err(io_err(&dst, e))
            }
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Like the engine, dropping the last handle closes it.
        if !*self.closed.get_mut() {
            let _ = self.save();
        }
    }
}

/// Writes applied together.
#[derive(Default)]
pub struct Batch {
    ops: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

impl Batch {
    /// An empty batch.
    pub fn new() -> Batch {
        Batch::default()
    }
    /// Adds a put.
    pub fn put(&mut self, key: &[u8], value: &[u8]) {
        self.ops.push((key.to_vec(), Some(value.to_vec())));
    }
    /// Adds a delete.
    pub fn delete(&mut self, key: &[u8]) {
        self.ops.push((key.to_vec(), None));
    }
    /// Number of operations.
    pub fn len(&self) -> usize {
        self.ops.len()
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
    /// Removes every operation.
    pub fn clear(&mut self) {
        self.ops.clear()
    }
}

/// Records in key order.
pub struct Iter {
    items: std::vec::IntoIter<Result<(Vec<u8>, Vec<u8>)>>,
}

impl Iterator for Iter {
    type Item = Result<(Vec<u8>, Vec<u8>)>;
    fn next(&mut self) -> Option<Self::Item> {
        self.items.next()
    }
}

impl DoubleEndedIterator for Iter {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.items.next_back()
    }
}

/// Counters and shape of a database.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    pub levels: Vec<LevelStats>,
    pub memtable_bytes: u64,
    pub immutable_memtables: usize,
    pub last_seqno: u64,
    pub user_bytes_written: u64,
    pub wal_bytes_written: u64,
    pub flush_bytes_written: u64,
    pub compaction_bytes_read: u64,
    pub compaction_bytes_written: u64,
    pub flushes: u64,
    pub compactions: u64,
    pub trivial_moves: u64,
    pub write_delay_micros: u64,
    pub write_stops: u64,
    pub cache_hits: u64,
    pub cache_misses: u64,
    pub cache_bytes: u64,
    pub cache_capacity: u64,
    pub block_size: usize,
    pub total_table_bytes: u64,
    pub live_entries_estimate: u64,
    pub keyspaces: Vec<String>,
}

impl Stats {
    /// Bytes written to files per byte written by the user.
    pub fn write_amplification(&self) -> f64 {
        let file =
            self.wal_bytes_written + self.flush_bytes_written + self.compaction_bytes_written;
        if self.user_bytes_written == 0 {
            0.0
        } else {
            file as f64 / self.user_bytes_written as f64
        }
    }
}

/// Shape of one level.
#[derive(Debug, Clone, Default)]
pub struct LevelStats {
    pub level: usize,
    pub tables: usize,
    pub bytes: u64,
    pub entries: u64,
    pub deletes: u64,
    pub merges: u64,
    pub key_bytes: u64,
    pub value_bytes: u64,
    pub data_raw_bytes: u64,
    pub data_stored_bytes: u64,
    pub filter_bytes: u64,
    pub index_bytes: u64,
}

/// What `check` found.
#[derive(Debug, Clone, Default)]
pub struct CheckReport {
    pub tables: u64,
    pub entries: u64,
    pub bytes: u64,
    pub wal_records: u64,
    pub problems: Vec<String>,
}

impl CheckReport {
    /// True when nothing is wrong.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Debug dumps of single files.
pub mod inspect {
    use lamina::fs::FileSystem;
    use lamina::{Error, Result};
    use std::io::Write;
    use std::path::Path;

    fn unavailable(what: &str) -> Result<()> {
        Err(Error::InvalidArgument(format!(
            "{what} dumps need the LSM engine"
        )))
    }
    /// Prints one WAL segment.
    pub fn dump_wal(_fs: &dyn FileSystem, _path: &Path, _out: &mut dyn Write) -> Result<()> {
        unavailable("WAL")
    }
    /// Prints one table.
    pub fn dump_table(_fs: &dyn FileSystem, _path: &Path, _out: &mut dyn Write) -> Result<()> {
        unavailable("table")
    }
    /// Prints the manifest.
    pub fn dump_manifest(_fs: &dyn FileSystem, _path: &Path, _out: &mut dyn Write) -> Result<()> {
        unavailable("manifest")
    }
}
