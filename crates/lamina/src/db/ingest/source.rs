//! What a file given to ingest must be, checked before anything is added:
//! a regular file; never one of the database's own files when it is to be
//! moved; and a table writer's table whose every entry is a seqno-0 put in
//! keyspace 0 (docs/format.md#table-writer-settings; read entry by entry
//! unless a bulk loader of the database wrote it). A file that is not is
//! bad input, refused with `InvalidArgument` naming it — never reported as
//! damage of the database, which it is not.
//!
//! Layout: docs/format.md#ingested-tables.

use crate::db::Inner;
use crate::error::{Error, Result};
use crate::fs::{self, FileStat, FileType};
use crate::key::{self, Kind};
use crate::table::{Table, WriterProps};
use crate::table_writer::show_key;
use std::collections::HashMap;
use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Who wrote the files given to an ingest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// The caller: a file that is one of the database's (in its directory,
    /// or another name of a file there) is never moved.
    Caller,
    /// A bulk loader of this database: its temporary files, which it writes
    /// in the database directory, are moved in. They are not verified entry
    /// by entry: the loader wrote them through a table writer, which takes
    /// only what the checks accept, and synced them just before (as a
    /// flush's table, trusted without being read back).
    BulkLoader,
}

/// A verified file to ingest.
pub(crate) struct Source {
    /// The path given.
    pub(crate) path: PathBuf,
    /// The file it names, symbolic links resolved: what a link is made to.
    pub(crate) canonical: PathBuf,
    /// The file's id ([`FileStat::id`]) where the file system knows it.
    pub(crate) id: Option<(u64, u64)>,
    pub(crate) table: Arc<Table>,
    pub(crate) keyspace: Option<String>,
    /// The first and last internal keys.
    pub(crate) first: Vec<u8>,
    pub(crate) last: Vec<u8>,
}

/// The error refusing `path`: `why` says what is wrong with it.
pub(crate) fn refuse(path: &Path, why: impl Display) -> Error {
    Error::InvalidArgument(format!("cannot ingest {}: {why}", path.display()))
}

/// `e`, met reading the given file `path`: damage of that file is bad
/// input, not damage of the database.
pub(crate) fn damaged(path: &Path, e: Error) -> Error {
    match e {
        Error::Corruption { offset, reason, .. } => refuse(
            path,
            format!(
                "it is damaged or not a table ({reason}, at offset {offset}); nothing was ingested"
            ),
        ),
        e => e,
    }
}

/// Checks entry `n` (counted from 0) of a writer's table `path`: a put with
/// seqno 0 whose tree key is in keyspace 0, its key and value within the
/// limits a table writer enforces. Anything else (a tombstone, a merge
/// operand, a blob pointer naming some blob file of the database) would be
/// trusted by every reader once the table is in the tree.
pub(crate) fn check_entry(path: &Path, n: u64, p: &key::Parsed<'_>, value: &[u8]) -> Result<()> {
    let entry = || format!("entry {n} (key {})", show_key(p.user_key()));
    let kind = match p.kind {
        Kind::Put => None,
        Kind::Delete => Some("a delete (tombstone)"),
        Kind::Merge => Some("a merge operand"),
        Kind::Blob => Some("a blob pointer"),
    };
    if let Some(kind) = kind {
        return Err(refuse(
            path,
            format!(
                "{} is {kind}; a table writer's entries are all puts",
                entry()
            ),
        ));
    }
    if p.seqno != 0 {
        return Err(refuse(
            path,
            format!(
                "{} has seqno {}; a table writer's entries have seqno 0",
                entry(),
                p.seqno
            ),
        ));
    }
    if p.keyspace() != 0 {
        return Err(refuse(
            path,
            format!(
                "{} has keyspace id {}; a table writer's keys have keyspace id 0 \
                 (its properties name the keyspace)",
                entry(),
                p.keyspace()
            ),
        ));
    }
    if p.user_key().len() > key::MAX_KEY_LEN || value.len() > key::MAX_VALUE_LEN {
        return Err(refuse(
            path,
            format!(
                "{} has a key of {} bytes and a value of {} bytes; the limits are {} and {}",
                entry(),
                p.user_key().len(),
                value.len(),
                key::MAX_KEY_LEN,
                key::MAX_VALUE_LEN
            ),
        ));
    }
    Ok(())
}

impl Inner {
    /// Checks and opens the files given to an ingest: each a regular file
    /// (looked at before it is opened, so a FIFO is never waited on); with
    /// `moving` and from the caller, none a file of the database; then each
    /// verified entry by entry (from the caller). Nothing is changed.
    pub(crate) fn open_sources(
        &self,
        paths: &[&Path],
        moving: bool,
        origin: Origin,
    ) -> Result<Vec<Source>> {
        let mut stats = Vec::with_capacity(paths.len());
        for &path in paths {
            let stat = self.fs.stat(path).map_err(|e| Error::io(path, e))?;
            if stat.file_type != FileType::Regular {
                return Err(refuse(path, not_regular(stat.file_type)));
            }
            stats.push(stat);
        }
        if moving && origin == Origin::Caller {
            self.check_movable(paths, &stats)?;
        }
        paths
            .iter()
            .zip(stats)
            .map(|(&path, stat)| self.open_source(path, stat, origin))
            .collect()
    }

    /// Refuses to move a file of the database: moving removes the name
    /// given, and the database's files are its own. A file is the
    /// database's if its name is in the database directory (after resolving
    /// `.`, `..` and symbolic links in the directories above it), if it
    /// resolves into that directory, or if it is another name (a hard link)
    /// of a file there.
    fn check_movable(&self, paths: &[&Path], stats: &[FileStat]) -> Result<()> {
        let db_dir = self
            .fs
            .stat(&self.path)
            .map_err(|e| Error::io(&self.path, e))?
            .canonical;
        let mut db_files: Option<HashMap<(u64, u64), String>> = None;
        for (&path, stat) in paths.iter().zip(stats) {
            let refuse_move = |why: String| {
                Error::InvalidArgument(format!(
                    "cannot move {} into the database: {why}; nothing was ingested \
                     (ingest it without moving it)",
                    path.display()
                ))
            };
            let parent = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            let name_dir = self
                .fs
                .stat(parent)
                .map_err(|e| Error::io(parent, e))?
                .canonical;
            if name_dir == db_dir || stat.canonical.parent() == Some(db_dir.as_path()) {
                return Err(refuse_move(format!(
                    "it is in the database directory {}, among the database's own files",
                    self.path.display()
                )));
            }
            let Some(id) = stat.id else { continue };
            if db_files.is_none() {
                db_files = Some(self.file_ids()?);
            }
            if let Some(name) = db_files.as_ref().and_then(|m| m.get(&id)) {
                return Err(refuse_move(format!(
                    "it is another name of the database's file {name}"
                )));
            }
        }
        Ok(())
    }

    /// The id of every file in the database directory, with its name.
    fn file_ids(&self) -> Result<HashMap<(u64, u64), String>> {
        let names = self
            .fs
            .list_dir(&self.path)
            .map_err(|e| Error::io(&self.path, e))?;
        Ok(names
            .into_iter()
            .filter_map(|name| {
                // A file removed since the listing is no longer the database's.
                let id = self.fs.stat(&self.path.join(&name)).ok()?.id?;
                Some((id, name))
            })
            .collect())
    }

    /// Opens and verifies a file given to ingest (entry by entry if it comes
    /// from the caller); `stat` is what it was before it was opened.
    fn open_source(&self, path: &Path, stat: FileStat, origin: Origin) -> Result<Source> {
        let file = self.fs.open(path).map_err(|e| Error::io(path, e))?;
        // What was opened, if the file system can tell: a file put in place
        // of the one looked at is judged as itself.
        let mut id = stat.id;
        if let Some((file_type, opened)) = fs::open_file_stat(&*file) {
            if file_type != FileType::Regular {
                return Err(refuse(path, not_regular(file_type)));
            }
            id = Some(opened);
        }
        // A cache of its own: the file has no number in this database.
        let cache = Arc::new(crate::cache::BlockCache::new(0));
        let table =
            Table::open(file, path.to_path_buf(), 0, cache).map_err(|e| damaged(path, e))?;
        let table = Arc::new(table);
        let p = table.properties();
        let writer: WriterProps = p.writer.ok_or_else(|| {
            refuse(
                path,
                "it was not written by a table writer (its properties hold no writer settings)",
            )
        })?;
        if let Some(why) = writer.incompatibility() {
            return Err(refuse(path, why));
        }
        if p.identity != 0 || p.file_number != 0 {
            // A linked table keeps its properties; a database refuses a
            // table that names another database or another number.
            return Err(refuse(
                path,
                format!(
                    "its properties name a database (identity {:032x}) or a file number \
                     ({}); a table writer leaves both 0",
                    p.identity, p.file_number
                ),
            ));
        }
        let keyspace = writer
            .keyspace()
            .map_err(|why| refuse(path, why))?
            .map(str::to_string);
        if origin == Origin::Caller {
            let mut n = 0;
            table
                .verify_entries(|entry, value| {
                    check_entry(path, n, entry, value)?;
                    n += 1;
                    Ok(())
                })
                .map_err(|e| damaged(path, e))?;
        }
        let (first, last) = {
            use crate::iter::InternalIterator;
            let mut it = table.iter_uncached();
            it.seek_to_first();
            let first = it.valid().then(|| it.key().to_vec());
            it.seek_to_last();
            let last = it.valid().then(|| it.key().to_vec());
            it.status().map_err(|e| damaged(path, e))?;
            (first, last)
        };
        let (Some(first), Some(last)) = (first, last) else {
            return Err(refuse(path, "it holds no entries"));
        };
        Ok(Source {
            path: path.to_path_buf(),
            canonical: stat.canonical,
            id,
            table,
            keyspace,
            first,
            last,
        })
    }
}

/// Why a file of type `t` (not a regular file) is refused.
fn not_regular(t: FileType) -> String {
    let what = match t {
        FileType::Directory => "a directory",
        FileType::Fifo => "a FIFO (named pipe)",
        FileType::Regular | FileType::Other => "not a regular file (a socket or a device)",
    };
    format!("it is {what}; a table to ingest is a regular file written by a table writer")
}
