//! Ingesting tables written by a [`TableWriter`](crate::TableWriter): all of
//! them are added to the tree in one manifest edit, or none is.
//!
//! Layout: docs/format.md#ingested-tables.
//!
//! Every file is checked first, nothing locked (source.rs): a regular file,
//! not the database's own when it is to be moved, its checksums, order,
//! properties and writer settings verified and every entry a seqno-0 put
//! (entry by entry for a file from the caller; a bulk loader's tables, its
//! own just written, by their properties alone).
//! Moved files that overlap nothing in the tree, with no snapshot live, are
//! then hard-linked in as they are, as the commit leader (link.rs).
//! Otherwise, the steps (rewrite.rs), and what blocks whom:
//!
//! 1. *Verify* every file, as above; nothing is locked.
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
mod source;

use super::Db;
use crate::error::Result;
use crate::key::{self, KeyspaceId, SeqNo};
use crate::memtable::Memtable;
use placement::Range;
pub(crate) use source::Origin;
use source::Source;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How [`Db::ingest`] treats the files it is given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IngestOptions {
    /// Remove the given files once they are ingested (by default they are
    /// left in place). A file of the database itself is refused.
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
    /// Every file is checked before anything is added: it must be a regular
    /// file (a FIFO is refused, never waited on) holding a table writer's
    /// table, intact, whose every entry is a put with seqno 0 in keyspace 0
    /// (docs/format.md#table-writer-settings). With `move_files`, a file of
    /// the database — in its directory, resolving into it, or another name
    /// of a file there — is refused: moving it would remove the database's
    /// own file.
    ///
    /// Errors: `InvalidArgument` naming the file for any file that is not
    /// such a table (a damaged or garbage file, a tombstone, merge operand
    /// or blob pointer among its entries, a nonzero seqno, settings this
    /// build cannot ingest, not a regular file, a database file to move);
    /// nothing is added. `Io` (a missing file, a failed write).
    pub fn ingest<P: AsRef<Path>>(
        &self,
        paths: &[P],
        opts: IngestOptions,
    ) -> Result<Vec<IngestedTable>> {
        self.ingest_from(paths, opts, Origin::Caller)
    }

    /// [`Db::ingest`] of files written by `origin`.
    pub(crate) fn ingest_from<P: AsRef<Path>>(
        &self,
        paths: &[P],
        opts: IngestOptions,
        origin: Origin,
    ) -> Result<Vec<IngestedTable>> {
        let inner = self.inner();
        inner.check_writable()?;
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let paths: Vec<&Path> = paths.iter().map(AsRef::as_ref).collect();
        let sources = inner.open_sources(&paths, opts.move_files, origin)?;
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

/// Whether `m` holds an entry whose tree key lies in `[lo, hi]`.
fn memtable_overlaps(m: &Memtable, (lo, hi): &Range) -> bool {
    m.seek(&key::seek_key(lo))
        .is_some_and(|(k, _)| key::tree_key_of(&k) <= hi.as_slice())
}
