//! Writing a table outside any database, to be ingested later with
//! [`Db::ingest`](crate::Db::ingest).
//!
//! Layout: docs/format.md#table; the writer's settings are properties counters
//! 20 and above (docs/format.md#properties). Entries carry seqno 0 and
//! keyspace id 0; ingest gives them their seqno and keyspace
//! (docs/format.md#ingested-tables).

use crate::error::{Error, Result};
use crate::fs::{default_fs, FileSystem};
use crate::key::{self, Kind, MAX_KEYSPACE_NAME};
use crate::options::Compression;
use crate::table::{TableBuilder, TableOptions, WriterProps};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How a [`TableWriter`] writes its table.
#[derive(Clone)]
pub struct TableWriterOptions {
    /// Compression of data and index blocks. Default: LZ4.
    pub compression: Compression,
    /// Uncompressed size at which a data block is cut. Default: 16 KiB; 0
    /// (what `Options::block_size` holds by default) also means 16 KiB.
    pub block_size: usize,
    /// Bloom filter bits per key; 0 for none. Default: 10.
    pub bloom_bits_per_key: u32,
    /// The keyspace the entries belong to, by name (created at ingest if
    /// missing). `None`: the default keyspace.
    pub keyspace: Option<String>,
    /// The file system to write through. Default: the operating system's.
    pub fs: Arc<dyn FileSystem>,
}

impl Default for TableWriterOptions {
    fn default() -> Self {
        TableWriterOptions {
            compression: Compression::Lz4,
            block_size: 16 << 10,
            bloom_bits_per_key: 10,
            keyspace: None,
            fs: default_fs(),
        }
    }
}

impl std::fmt::Debug for TableWriterOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableWriterOptions")
            .field("compression", &self.compression)
            .field("block_size", &self.block_size)
            .field("bloom_bits_per_key", &self.bloom_bits_per_key)
            .field("keyspace", &self.keyspace)
            .finish_non_exhaustive()
    }
}

/// What a finished [`TableWriter`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableInfo {
    /// The table's path.
    pub path: PathBuf,
    /// The first user key.
    pub smallest: Vec<u8>,
    /// The last user key.
    pub largest: Vec<u8>,
    /// Number of entries.
    pub entries: u64,
    /// Size of the file in bytes.
    pub file_size: u64,
}

/// Writes one table of key-value pairs given in strictly increasing key
/// order, for [`Db::ingest`](crate::Db::ingest).
///
/// Nothing is durable until [`finish`](TableWriter::finish) returns. A writer
/// dropped unfinished (or after an I/O error) removes its file. Not shared
/// between threads while writing (`&mut self`); it is `Send`.
///
/// ```
/// use lamina::{Db, IngestOptions, Options, TableWriter, TableWriterOptions};
///
/// let dir = tempfile::tempdir()?;
/// // Anywhere (another thread, process or machine): one sorted table.
/// let file = dir.path().join("part-0001.sst");
/// let mut w = TableWriter::create(&file, TableWriterOptions::default())?;
/// for i in 0..1000u32 {
///     w.put(format!("call{i:06}").as_bytes(), b"record")?;
/// }
/// assert!(w.put(b"call000000", b"late").is_err()); // out of order
/// let info = w.finish()?;
/// assert_eq!(info.entries, 1000);
///
/// // On the database's host: every file or none.
/// let db = Db::open(dir.path().join("calls.lamina"), Options::default())?;
/// db.ingest(&[&file], IngestOptions { move_files: true })?;
/// assert_eq!(db.get(b"call000042")?, Some(b"record".to_vec()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct TableWriter {
    builder: Option<TableBuilder>,
    fs: Arc<dyn FileSystem>,
    path: PathBuf,
    ikey: Vec<u8>,
    last: Option<Vec<u8>>,
    smallest: Vec<u8>,
}

/// A key as a person reads it in a message: text if it is printable ASCII,
/// escaped bytes otherwise, cut after 64 bytes.
pub(crate) fn show_key(key: &[u8]) -> String {
    let cut = key.get(..64).unwrap_or(key);
    let mut s = format!("\"{}\"", cut.escape_ascii());
    if cut.len() < key.len() {
        s.push_str(&format!("… ({} bytes)", key.len()));
    }
    s
}

impl TableWriter {
    /// Creates the table file at `path`. [`Error::FileExists`] if something
    /// is there; `InvalidArgument` for a keyspace name over 255 bytes.
    pub fn create(path: impl AsRef<Path>, opts: TableWriterOptions) -> Result<TableWriter> {
        let path = path.as_ref().to_path_buf();
        let ks = opts.keyspace.as_deref().filter(|s| !s.is_empty());
        if ks.is_some_and(|s| s.len() > MAX_KEYSPACE_NAME) {
            return Err(Error::InvalidArgument(format!(
                "keyspace name longer than {MAX_KEYSPACE_NAME} bytes"
            )));
        }
        if opts
            .fs
            .is_dir(&path)
            .map_err(|e| Error::io(&path, e))?
            .is_some()
        {
            return Err(Error::FileExists(path));
        }
        let file = opts.fs.create(&path).map_err(|e| Error::io(&path, e))?;
        // A table written alone has seen no flush to choose a size from.
        let block_size = match opts.block_size {
            crate::tuning::AUTOMATIC => crate::tuning::FIRST_BLOCK,
            n => n,
        };
        let table = TableOptions {
            block_size,
            compression: opts.compression,
            bloom_bits_per_key: opts.bloom_bits_per_key,
            ..TableOptions::default()
        };
        let mut builder = TableBuilder::new(file, path.clone(), table);
        builder.set_writer_props(WriterProps::new(
            opts.compression as u64,
            block_size as u64,
            u64::from(opts.bloom_bits_per_key),
            ks,
        ));
        Ok(TableWriter {
            builder: Some(builder),
            fs: opts.fs,
            path,
            ikey: Vec::new(),
            last: None,
            smallest: Vec::new(),
        })
    }

    /// Adds `key` with `value`. `InvalidArgument` naming the key, and nothing
    /// added, if `key` is not strictly after the previous key or is too long
    /// (keys up to 64 KiB, values up to 256 MiB).
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        let builder = self.builder.as_mut().ok_or_else(|| {
            Error::InvalidArgument("table writer already failed or finished".into())
        })?;
        if let Some(last) = &self.last {
            if key <= last.as_slice() {
                let what = if key == last.as_slice() {
                    "repeats the previous key"
                } else {
                    "sorts before the previous key"
                };
                return Err(Error::InvalidArgument(format!(
                    "key {} {what} {}; a table writer takes keys in strictly increasing order",
                    show_key(key),
                    show_key(last)
                )));
            }
        }
        if key.len() > key::MAX_KEY_LEN || value.len() > key::MAX_VALUE_LEN {
            return Err(Error::InvalidArgument(format!(
                "key {} of {} bytes with a value of {} bytes is too large (keys up to {} bytes, values up to {})",
                show_key(key),
                key.len(),
                value.len(),
                key::MAX_KEY_LEN,
                key::MAX_VALUE_LEN
            )));
        }
        self.ikey.clear();
        self.ikey.extend_from_slice(&0u32.to_be_bytes());
        self.ikey.extend_from_slice(key);
        key::push_trailer(&mut self.ikey, 0, Kind::Put as u8);
        if let Err(e) = builder.add(&self.ikey, value) {
            self.abandon_file();
            return Err(e);
        }
        if self.last.is_none() {
            self.smallest = key.to_vec();
        }
        let last = self.last.get_or_insert_with(Vec::new);
        last.clear();
        last.extend_from_slice(key);
        Ok(())
    }

    /// Entries added so far.
    pub fn entries(&self) -> u64 {
        self.builder.as_ref().map_or(0, TableBuilder::num_entries)
    }

    /// The table's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the rest of the table and syncs it and its directory: when it
    /// returns, the file survives a power loss. `InvalidArgument` if no
    /// entry was added (the file is removed).
    pub fn finish(mut self) -> Result<TableInfo> {
        let builder = self.builder.take().ok_or_else(|| {
            Error::InvalidArgument("table writer already failed or finished".into())
        })?;
        let dir = match self.path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let done = builder.finish().and_then(|summary| {
            self.fs
                .sync_dir(&dir)
                .map_err(|e| Error::io(&dir, e))
                .map(|()| summary)
        });
        match done {
            Ok(summary) => Ok(TableInfo {
                path: self.path.clone(),
                smallest: std::mem::take(&mut self.smallest),
                largest: self.last.take().unwrap_or_default(),
                entries: summary.entries,
                file_size: summary.file_size,
            }),
            Err(e) => {
                let _ = self.fs.remove_file(&self.path);
                Err(e)
            }
        }
    }

    /// Stops writing and removes the file.
    pub fn abandon(mut self) {
        self.abandon_file();
    }

    fn abandon_file(&mut self) {
        if self.builder.take().is_some() {
            let _ = self.fs.remove_file(&self.path);
        }
    }
}

impl Drop for TableWriter {
    fn drop(&mut self) {
        self.abandon_file();
    }
}

impl std::fmt::Debug for TableWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableWriter")
            .field("path", &self.path)
            .field("entries", &self.entries())
            .finish_non_exhaustive()
    }
}
