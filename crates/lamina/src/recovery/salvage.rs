//! Salvage: every readable record of a damaged database copied into a new
//! one, reading each file on its own, without opening the damaged database.
//!
//! Tables, WAL segments and manifests are read with the engine's own
//! readers (layouts in docs/format.md). Of every key, the entry with the
//! highest sequence number found in any file wins (a deletion removes the
//! key; merge operands newer than it are folded onto it by the new
//! database's merge operator); values kept in blob files are read from
//! them, each checked by its checksum. What cannot be read is skipped and
//! reported with its file and offset: a table from its first damaged block
//! to its end (a table whose footer or index is damaged, whole), a WAL
//! segment from its first damaged record, a manifest from its first
//! damaged edit, a value whose blob record is damaged. Keyspace names come
//! from the manifests; a keyspace whose name was lost is named
//! `salvaged-ID`.
//!
//! The newest entry of every key is held in memory until the new database
//! is written.

use crate::batch::decode_record;
use crate::blob::{BlobPointer, BlobStore};
use crate::cache::BlockCache;
use crate::filename::{self, FileKind};
use crate::iter::InternalIterator;
use crate::key::{self, Kind};
use crate::manifest::VersionEdit;
use crate::table::Table;
use crate::wal::{LogReader, MANIFEST_MAGIC, WAL_MAGIC};
use crate::{Batch, Db, Error, Options, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A part of the damaged database that could not be read, and was skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The file.
    pub file: PathBuf,
    /// Where in it the unreadable part starts.
    pub offset: u64,
    /// What was skipped and why, in words.
    pub what: String,
}

/// What a salvage did.
#[derive(Debug, Clone, Default)]
pub struct SalvageReport {
    /// Records written into the new database.
    pub records: u64,
    /// Files read (tables, WAL segments, manifests, blob files).
    pub files: u64,
    /// Named keyspaces created in the new database.
    pub keyspaces: Vec<String>,
    /// The parts skipped, in the order they were met.
    pub skipped: Vec<Skipped>,
}

/// The newest entries found of one key.
#[derive(Default)]
struct Newest {
    /// The newest Put, Blob or Delete: seqno, kind, value.
    base: Option<(u64, Kind, Vec<u8>)>,
    /// Merge operands, with their seqnos.
    merges: Vec<(u64, Vec<u8>)>,
}

impl Newest {
    fn add(&mut self, seqno: u64, kind: Kind, value: &[u8]) {
        if kind == Kind::Merge {
            self.merges.push((seqno, value.to_vec()));
        } else if self.base.as_ref().is_none_or(|(s, _, _)| seqno > *s) {
            self.base = Some((seqno, kind, value.to_vec()));
        }
    }
}

struct Salvager {
    src: PathBuf,
    fs: Arc<dyn crate::fs::FileSystem>,
    keys: BTreeMap<(u32, Vec<u8>), Newest>,
    names: BTreeMap<u32, String>,
    dropped: BTreeSet<u32>,
    report: SalvageReport,
}

/// Where and why reading stopped, from the error that stopped it.
fn skipped(path: &Path, e: &Error, what: &str) -> Skipped {
    let (offset, why) = match e {
        Error::Corruption { offset, reason, .. } => (*offset, reason.clone()),
        other => (0, other.to_string()),
    };
    Skipped {
        file: path.to_path_buf(),
        offset,
        what: format!("{what}: {why}"),
    }
}

impl Salvager {
    fn skip(&mut self, s: Skipped) {
        self.report.skipped.push(s);
    }

    fn manifest(&mut self, path: &Path) {
        let mut r = match LogReader::open(self.fs.as_ref(), path, MANIFEST_MAGIC) {
            Ok(r) => r,
            Err(e) => return self.skip(skipped(path, &e, "the whole manifest")),
        };
        loop {
            match r.next_record() {
                Ok(Some(rec)) => match VersionEdit::decode(&rec) {
                    Ok(edit) => {
                        for (id, name) in edit.keyspaces_created {
                            self.names.insert(id, name);
                        }
                        self.dropped.extend(edit.keyspaces_dropped);
                    }
                    Err(why) => {
                        let at = r.valid_end();
                        return self.skip(Skipped {
                            file: path.to_path_buf(),
                            offset: at,
                            what: format!("the manifest's edits from here: {why}"),
                        });
                    }
                },
                Ok(None) => return,
                Err(e) => return self.skip(skipped(path, &e, "the manifest's edits from here")),
            }
        }
    }

    fn table(&mut self, path: &Path, number: u64) {
        let file = match self.fs.open(path) {
            Ok(f) => f,
            Err(e) => return self.skip(skipped(path, &Error::io(path, e), "the whole table")),
        };
        let cache = Arc::new(BlockCache::new(1 << 20));
        let table = match Table::open(file, path.to_path_buf(), number, cache) {
            Ok(t) => Arc::new(t),
            Err(e) => return self.skip(skipped(path, &e, "the whole table")),
        };
        let mut it = table.iter_uncached();
        it.seek_to_first();
        while it.valid() {
            if let Some(p) = key::parse(it.key()) {
                self.keys
                    .entry((p.keyspace(), p.user_key().to_vec()))
                    .or_default()
                    .add(p.seqno, p.kind, it.value());
            }
            it.next();
        }
        if let Err(e) = it.status() {
            self.skip(skipped(path, &e, "the rest of the table"));
        }
    }

    fn wal(&mut self, path: &Path) {
        let mut r = match LogReader::open(self.fs.as_ref(), path, WAL_MAGIC) {
            Ok(r) => r,
            Err(e) => return self.skip(skipped(path, &e, "the whole WAL segment")),
        };
        loop {
            let start = r.valid_end();
            match r.next_record() {
                Ok(Some(rec)) => match decode_record(&rec) {
                    Ok(d) => {
                        for (i, op) in d.batch.ops().enumerate() {
                            let Ok(op) = op else { break };
                            self.keys
                                .entry((op.keyspace, op.key.to_vec()))
                                .or_default()
                                .add(d.first_seqno + i as u64, op.kind, op.value);
                        }
                    }
                    Err(why) => self.skip(Skipped {
                        file: path.to_path_buf(),
                        offset: start,
                        what: format!("a WAL record: {why}"),
                    }),
                },
                Ok(None) => return,
                Err(e) => return self.skip(skipped(path, &e, "the rest of the WAL segment")),
            }
        }
    }
}

/// Copies every readable record of the database at `src` into a new
/// database at `dst` (which must not exist, or be an empty directory),
/// opened with `opts`; see the module documentation. On failure, the new
/// database is removed.
pub fn salvage(src: &Path, dst: &Path, opts: Options) -> Result<SalvageReport> {
    let fs = Arc::clone(&opts.fs);
    match fs.is_dir(dst).map_err(|e| Error::io(dst, e))? {
        None => {}
        Some(true) if filename::list(fs.as_ref(), dst)?.is_empty() => {}
        Some(_) => {
            return Err(Error::io(
                dst,
                std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    "already exists; salvage writes a new database",
                ),
            ))
        }
    }
    if fs.is_dir(src).map_err(|e| Error::io(src, e))? != Some(true) {
        return Err(Error::NotADatabase {
            path: src.to_path_buf(),
            reason: "no such directory".into(),
        });
    }
    let mut s = Salvager {
        src: src.to_path_buf(),
        fs: Arc::clone(&fs),
        keys: BTreeMap::new(),
        names: BTreeMap::new(),
        dropped: BTreeSet::new(),
        report: SalvageReport::default(),
    };
    let mut files: Vec<(FileKind, u64, String)> = filename::list(fs.as_ref(), src)?
        .into_iter()
        .filter_map(|n| filename::parse_file_name(&n).map(|(k, num)| (k, num, n)))
        .collect();
    files.sort_by_key(|(_, num, _)| *num);
    for (kind, number, name) in &files {
        let path = s.src.join(name);
        match kind {
            FileKind::Manifest => s.manifest(&path),
            FileKind::Table => s.table(&path, *number),
            FileKind::Wal => s.wal(&path),
            FileKind::Blob => {}
            _ => continue,
        }
        s.report.files += 1;
    }
    let created = fs.is_dir(dst).map_err(|e| Error::io(dst, e))?.is_none();
    let written = write(&mut s, dst, opts);
    if written.is_err() {
        let _ = Db::destroy(dst, &Options::default());
        if created {
            let _ = fs.remove_dir(dst);
        }
    }
    written.map(|()| s.report)
}

/// Writes the newest live entry of every key into a new database at `dst`.
fn write(s: &mut Salvager, dst: &Path, mut opts: Options) -> Result<()> {
    opts.create_if_missing = true;
    opts.error_if_exists = true;
    opts.read_only = false;
    let blobs = BlobStore::new(Arc::clone(&s.fs), &s.src, 16);
    let db = Db::open(dst, opts)?;
    let mut handles = BTreeMap::new();
    let mut batch = Batch::new();
    let keys = std::mem::take(&mut s.keys);
    for ((ks, user_key), newest) in keys {
        if s.dropped.contains(&ks) {
            continue;
        }
        let handle = match handles.get(&ks) {
            Some(h) => h,
            None => {
                let h = if ks == 0 {
                    db.default_keyspace()
                } else {
                    let name = s
                        .names
                        .get(&ks)
                        .cloned()
                        .unwrap_or(format!("salvaged-{ks}"));
                    s.report.keyspaces.push(name.clone());
                    db.keyspace(&name)?
                };
                handles.entry(ks).or_insert(h)
            }
        };
        let base_seqno = newest.base.as_ref().map_or(0, |b| b.0);
        let before = batch.len();
        match newest.base {
            Some((_, Kind::Put, value)) => batch.put_in(handle, &user_key, &value),
            Some((_, Kind::Blob, pointer)) => match read_blob(&blobs, &s.src, &pointer) {
                Ok(value) => batch.put_in(handle, &user_key, &value),
                Err(skip) => {
                    s.report.skipped.push(skip);
                    continue;
                }
            },
            _ => {}
        }
        let mut merges: Vec<(u64, Vec<u8>)> = newest
            .merges
            .into_iter()
            .filter(|(seqno, _)| *seqno > base_seqno)
            .collect();
        merges.sort_by_key(|(seqno, _)| *seqno);
        merges.dedup_by_key(|(seqno, _)| *seqno);
        for (_, operand) in &merges {
            batch.merge_in(handle, &user_key, operand);
        }
        if batch.len() > before {
            s.report.records += 1;
        }
        if batch.len() >= 4096 {
            db.write(std::mem::take(&mut batch))?;
        }
    }
    if !batch.is_empty() {
        db.write(batch)?;
    }
    db.flush()?;
    db.close()
}

/// The value a blob pointer names, or what to report when it cannot be read.
fn read_blob(
    blobs: &BlobStore,
    src: &Path,
    pointer: &[u8],
) -> std::result::Result<Vec<u8>, Skipped> {
    let p = BlobPointer::decode(pointer).map_err(|why| Skipped {
        file: src.to_path_buf(),
        offset: 0,
        what: format!("a value: bad blob pointer: {why}"),
    })?;
    blobs.read(&p).map_err(|e| {
        let file = filename::path(src, FileKind::Blob, p.file);
        Skipped {
            offset: p.offset,
            ..skipped(&file, &e, "a value")
        }
    })
}
