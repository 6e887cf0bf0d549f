//! Ingesting tables written by a [`TableWriter`](crate::TableWriter): all of
//! them are added to the tree in one manifest edit, or none is.
//!
//! Layout: docs/format.md#ingested-tables.
//!
//! Moved files that overlap nothing in the tree, with no snapshot live, are
//! hard-linked in as they are, as the commit leader (link.rs). Otherwise,
//! the steps (rewrite.rs), and what blocks whom:
//!
//! 1. *Verify* every file (checksums, order, properties, writer settings);
//!    nothing is locked.
//! 2. *Reserve* seqnos, as the commit leader (writers wait for a moment):
//!    seal the memtable if it holds keys in an ingested range, take one seqno
//!    per file and record the last in the manifest.
//! 3. *Write* each file again as a table of the database, its entries given
//!    the file's seqno and keyspace id; writers are not blocked. Sealed
//!    memtables holding keys in the ranges are flushed meanwhile.
//! 4. *Install*, as the commit leader: if a snapshot was taken after the
//!    reservation or a table deeper than level 0 got newer entries in a range,
//!    go back to 2 with new seqnos; otherwise place the tables
//!    (`placement::place`), log one edit and publish the seqnos.
//!
//! After two retries the steps run as the commit leader throughout, so a
//! steady stream of writes into the ingested ranges cannot starve an ingest.

mod link;
mod placement;
mod rewrite;

use super::{Db, Inner};
use crate::error::{Error, Result};
use crate::key::{self, KeyspaceId, SeqNo};
use crate::memtable::Memtable;
use crate::table::{Table, WriterProps};
use placement::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How [`Db::ingest`] treats the files it is given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IngestOptions {
    /// Remove the given files once they are ingested (by default they are
    /// left in place).
    pub move_files: bool,
}

/// One ingested table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IngestedTable {
    /// The file given.
    pub source: PathBuf,
    /// The table's file number in the database.
    pub file_number: u64,
    /// The level it went to.
    pub level: usize,
    /// The seqno its entries carry.
    pub seqno: SeqNo,
    /// Number of entries.
    pub entries: u64,
    /// True if the file was linked in as it is (its entries keep seqno 0);
    /// false if it was rewritten.
    pub linked: bool,
}

/// A verified file to ingest.
struct Source {
    path: PathBuf,
    table: Arc<Table>,
    keyspace: Option<String>,
    /// The first and last internal keys.
    first: Vec<u8>,
    last: Vec<u8>,
}

impl Db {
    /// Adds the tables in `paths`, written by [`TableWriter`](crate::TableWriter)s,
    /// to the database atomically: after it returns `Ok`, every entry of
    /// every file is visible and durable; after an error, none is.
    ///
    /// Files may overlap each other: a later file in `paths` is newer (its
    /// value of a key wins). Each file's entries get one seqno, newer than
    /// every earlier write and every live snapshot, so snapshots taken
    /// before never see them. With `move_files`, files in the default
    /// keyspace that overlap nothing in the database (nor each other), with
    /// no snapshot live, are hard-linked in unchanged instead of rewritten. Keyspaces named by the files are created if
    /// missing, by the manifest edit that installs the tables: after an
    /// error no keyspace was created. Writers are held only for the moments seqnos are reserved and
    /// the tables installed.
    ///
    /// Errors: `Corruption` naming a damaged file (nothing is added);
    /// `InvalidArgument` for a file not written by a TableWriter or written
    /// with settings this build cannot ingest; `Io`.
    pub fn ingest<P: AsRef<Path>>(
        &self,
        paths: &[P],
        opts: IngestOptions,
    ) -> Result<Vec<IngestedTable>> {
        let inner = self.inner();
        inner.check_writable()?;
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let sources = paths
            .iter()
            .map(|p| inner.open_source(p.as_ref()))
            .collect::<Result<Vec<_>>>()?;
        // A keyspace a file names that does not exist yet gets its id now
        // and is created by the same manifest edit that installs the
        // tables: a failed ingest leaves no keyspace behind.
        let mut ids = Vec::with_capacity(sources.len());
        let mut created: Vec<(KeyspaceId, String)> = Vec::new();
        for s in &sources {
            let Some(name) = &s.keyspace else {
                ids.push(0);
                continue;
            };
            let known = inner.keyspaces.read().get(name).copied();
            let id = match known.or_else(|| created.iter().find(|(_, n)| n == name).map(|c| c.0)) {
                Some(id) => id,
                None => {
                    inner.check_open()?;
                    let id = inner.versions.lock().allocate_keyspace_id();
                    created.push((id, name.clone()));
                    id
                }
            };
            ids.push(id);
        }
        let ranges: Vec<Range> = sources
            .iter()
            .zip(&ids)
            .map(|(s, &id)| source_range(s, id))
            .collect();
        let linkable =
            opts.move_files && ids.iter().all(|&id| id == 0) && !placement::any_overlap(&ranges);
        let linked = if linkable {
            inner.with_leadership(|| inner.link_in(&sources, &ranges))?
        } else {
            None
        };
        let done = match linked {
            Some(done) => done,
            None => inner.ingest_rewriting(&sources, &ids, &created, &ranges)?,
        };
        if opts.move_files {
            for s in &sources {
                let _ = inner.fs.remove_file(&s.path);
            }
        }
        Ok(done)
    }
}

impl Db {
    /// For each live table holding keys of keyspace `keyspace` (`None`: the
    /// default keyspace), its smallest key in that keyspace (empty if it
    /// starts in an earlier one) and its number of entries, ordered by key:
    /// where to split a parallel scan. Writes in the memtable are not in
    /// any table.
    pub fn table_ranges(&self, keyspace: Option<&str>) -> Result<Vec<(Vec<u8>, u64)>> {
        let id = match keyspace {
            None => 0,
            Some(name) => self.open_keyspace(name)?.id(),
        };
        let version = Arc::clone(&self.inner().state.lock().version);
        let mut out: Vec<(Vec<u8>, u64)> = version
            .all_files()
            .filter_map(|(_, f)| {
                let (lo, hi) = (f.smallest_tree_key(), f.largest_tree_key());
                if key::keyspace_of(lo) > id || key::keyspace_of(hi) < id {
                    return None;
                }
                let start = if key::keyspace_of(lo) == id {
                    lo.get(key::KEYSPACE_ID_LEN..).unwrap_or(&[]).to_vec()
                } else {
                    Vec::new()
                };
                Some((start, f.entries))
            })
            .collect();
        out.sort();
        Ok(out)
    }
}

/// The tree-key range of `s`'s entries once in keyspace `id`.
fn source_range(s: &Source, id: KeyspaceId) -> Range {
    (
        key::tree_key(id, user_key(&s.first)),
        key::tree_key(id, user_key(&s.last)),
    )
}

/// The user key of internal key `ikey` (empty if malformed; verified before).
fn user_key(ikey: &[u8]) -> &[u8] {
    key::parse(ikey).map_or(&[][..], |p| p.user_key())
}

impl Inner {
    /// Opens and verifies a file given to ingest.
    fn open_source(&self, path: &Path) -> Result<Source> {
        let refuse = |why: String| {
            Error::InvalidArgument(format!("cannot ingest {}: {why}", path.display()))
        };
        let file = self.fs.open(path).map_err(|e| Error::io(path, e))?;
        // A cache of its own: the file has no number in this database.
        let cache = Arc::new(crate::cache::BlockCache::new(0));
        let table = Arc::new(Table::open(file, path.to_path_buf(), 0, cache)?);
        let writer: WriterProps = table.properties().writer.ok_or_else(|| {
            refuse(
                "it was not written by a table writer (its properties hold no writer settings)"
                    .into(),
            )
        })?;
        if let Some(why) = writer.incompatibility() {
            return Err(refuse(why));
        }
        table.verify()?;
        let p = table.properties();
        if p.largest_seqno != 0 || p.deletes != 0 || p.merges != 0 {
            return Err(refuse(
                "its entries are not the seqno-0 puts a table writer writes".into(),
            ));
        }
        let keyspace = writer.keyspace().map_err(refuse)?.map(str::to_string);
        let (first, last) = {
            use crate::iter::InternalIterator;
            let mut it = table.iter_uncached();
            it.seek_to_first();
            let first = it.valid().then(|| it.key().to_vec());
            it.seek_to_last();
            let last = it.valid().then(|| it.key().to_vec());
            it.status()?;
            (first, last)
        };
        let (Some(first), Some(last)) = (first, last) else {
            return Err(refuse("it holds no entries".into()));
        };
        // Sorted keys: if the first and last are in keyspace 0, all are.
        let in_default = |k: &[u8]| key::keyspace_of(key::tree_key_of(k)) == 0;
        if !in_default(&first) || !in_default(&last) {
            return Err(refuse(
                "its keys are not in keyspace 0, as a table writer writes them".into(),
            ));
        }
        Ok(Source {
            path: path.to_path_buf(),
            table,
            keyspace,
            first,
            last,
        })
    }
}

/// Whether `m` holds an entry whose tree key lies in `[lo, hi]`.
fn memtable_overlaps(m: &Memtable, (lo, hi): &Range) -> bool {
    m.seek(&key::seek_key(lo))
        .is_some_and(|(k, _)| key::tree_key_of(&k) <= hi.as_slice())
}
