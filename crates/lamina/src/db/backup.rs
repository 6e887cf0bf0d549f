//! `backup`: a consistent copy of a database in another directory, from a
//! read-write handle or from a read-only one beside a live writer.
//!
//! A backup is an ordinary database: the tables and blob files of one
//! version (hard links where the file system allows, copies otherwise), the
//! data of that state still only in memtables written as level-0 tables,
//! and a fresh manifest naming no WAL. A read-write handle flushes first; a
//! read-only handle writes its view's memtables (the WAL records it
//! replayed), so its backup holds exactly its view: a prefix of the
//! writer's acknowledged history (docs/design.md#readers-beside-a-writer).

use crate::compaction::runner::{write_tables, OutputSpec};
use crate::db::Inner;
use crate::error::{Error, Result};
use crate::filename::{self, FileKind};
use crate::manifest::{write_manifest, FileMeta, Version, VersionEdit};
use crate::memtable::Memtable;
use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

impl Inner {
    /// Writes a consistent copy of the database into `dest`, which must not
    /// exist or be empty. Durable when it returns; on failure, what it
    /// wrote into `dest` is removed.
    pub(crate) fn backup(&self, dest: &Path) -> Result<()> {
        self.check_open()?;
        let created = prepare(self, dest)?;
        let result = backup(self, dest);
        if result.is_err() {
            remove_partial(self, dest, created);
        }
        result
    }
}

/// Refuses a destination that holds anything; creates it if missing.
/// Returns whether it was created.
fn prepare(inner: &Inner, dest: &Path) -> Result<bool> {
    let fs = inner.fs.as_ref();
    // EEXIST: Python raises `lamina.error` "[Errno 17] File exists: 'dest'".
    let refuse = || Error::io(dest, std::io::Error::from_raw_os_error(EEXIST));
    match fs.is_dir(dest).map_err(|e| Error::io(dest, e))? {
        Some(true) => {
            if !filename::list(fs, dest)?.is_empty() {
                return Err(refuse());
            }
            Ok(false)
        }
        Some(false) => Err(refuse()),
        None => {
            fs.create_dir_all(dest).map_err(|e| Error::io(dest, e))?;
            Ok(true)
        }
    }
}

/// The errno of a destination that already holds something.
const EEXIST: i32 = 17;

/// Removes the files a failed backup wrote into `dest`, and `dest` itself
/// if the backup created it.
fn remove_partial(inner: &Inner, dest: &Path, created: bool) {
    let fs = inner.fs.as_ref();
    if let Ok(names) = filename::list(fs, dest) {
        for name in names {
            let _ = fs.remove_file(&dest.join(name));
        }
    }
    if created {
        let _ = fs.remove_dir(dest);
    }
}

/// The state a backup copies: a version, the memtables over it (none for a
/// read-write handle, which flushed them) and the manifest edit describing
/// the version.
struct View {
    version: Arc<Version>,
    mems: Vec<Arc<Memtable>>,
    edit: VersionEdit,
}

fn backup(inner: &Inner, dest: &Path) -> Result<()> {
    let fs = inner.fs.as_ref();
    // A read-write handle flushes and holds off compactions while it copies;
    // a read-only handle's view pins its files in its reader file for as
    // long as `view` holds them.
    let _guard = if inner.opts.read_only {
        None
    } else {
        inner.flush_and_wait()?;
        Some(inner.background.hold_compactions())
    };
    let view = {
        let vs = inner.versions.lock();
        let st = inner.state.lock();
        let mut edit = vs.snapshot_edit();
        // The backup holds no WAL: what the view had only in the WAL is in
        // the tables written from its memtables below.
        edit.log_number = Some(0);
        edit.wals_started.clear();
        edit.lifetime = Some(inner.lifetime_now());
        let mut mems: Vec<Arc<Memtable>> = st.imm.clone();
        mems.push(Arc::clone(&st.mem));
        mems.retain(|m| !m.is_empty());
        if !inner.opts.read_only {
            // Flushed above; a write since then is after the backup.
            mems.clear();
        } else {
            let seen = inner.commit.visible_seqno();
            edit.last_seqno = Some(edit.last_seqno.unwrap_or(0).max(seen));
        }
        View {
            version: Arc::clone(&st.version),
            mems,
            edit,
        }
    };
    let View {
        version,
        mems,
        mut edit,
    } = view;
    let tables = version
        .all_files()
        .map(|(_, f)| (FileKind::Table, f.number));
    let blobs = version.blobs().keys().map(|&n| (FileKind::Blob, n));
    let mut highest = 0;
    for (kind, number) in tables.chain(blobs) {
        highest = highest.max(number);
        let src = filename::path(&inner.path, kind, number);
        let dst = filename::path(dest, kind, number);
        link_or_copy(fs, &src, &dst)?;
    }
    let mut next = edit.next_file_number.unwrap_or(1).max(highest + 1);
    if !mems.is_empty() {
        let written = write_memtables(inner, dest, &version, &mems, &mut next)?;
        edit.new_files
            .extend(written.tables.into_iter().map(|t| (0, Arc::new(t))));
        edit.new_blobs
            .extend(written.blobs.into_iter().map(Arc::new));
    }
    let manifest_number = next;
    edit.next_file_number = Some(manifest_number + 1);
    write_manifest(fs, dest, manifest_number, &edit)?;
    fs.sync_dir(dest).map_err(|e| Error::io(dest, e))?;
    drop(version);
    drop(mems);
    Ok(())
}

/// Makes `dst` a second name of the immutable file `src`, or a synced copy
/// of it where the file system cannot link.
fn link_or_copy(fs: &dyn crate::fs::FileSystem, src: &Path, dst: &Path) -> Result<()> {
    if fs.hard_link(src, dst).is_ok() {
        return Ok(());
    }
    let data = fs.read_all(src).map_err(|e| Error::io(src, e))?;
    let mut w = fs.create(dst).map_err(|e| Error::io(dst, e))?;
    w.append(&data)
        .and_then(|()| w.sync_data())
        .map_err(|e| Error::io(dst, e))
}

/// What the memtables of a read-only view became in the backup.
struct Written {
    tables: Vec<FileMeta>,
    blobs: Vec<crate::blob::BlobMeta>,
}

/// Writes `mems` (oldest first) into level-0 tables in `dest`, numbered
/// from `next` on, each memtable's tables newer than the one before. Values
/// in blob files that `version` does not list (blob files written at
/// commit, not yet part of a version) are copied into new blob files in
/// `dest`, as are values over the blob threshold held in place.
fn write_memtables(
    inner: &Inner,
    dest: &Path,
    version: &Version,
    mems: &[Arc<Memtable>],
    next: &mut u64,
) -> Result<Written> {
    let listed: HashSet<u64> = version.blobs().keys().copied().collect();
    let unlisted: HashSet<u64> = filename::list(inner.fs.as_ref(), &inner.path)?
        .iter()
        .filter_map(|n| filename::parse_file_name(n))
        .filter(|&(kind, n)| kind == FileKind::Blob && !listed.contains(&n))
        .map(|(_, n)| n)
        .collect();
    let live = |_: u32| true;
    let never = || false;
    let mut out = Written {
        tables: Vec::new(),
        blobs: Vec::new(),
    };
    for mem in mems {
        let mut blobs = crate::blob::Separator::new(
            Arc::clone(&inner.fs),
            dest.to_path_buf(),
            Arc::clone(&inner.blobs),
            inner.blob_threshold(),
            inner.opts.target_table_size,
            unlisted.clone(),
        );
        let mut alloc = || {
            let n = *next;
            *next += 1;
            n
        };
        let mut spec = OutputSpec {
            fs: inner.fs.as_ref(),
            dir: dest.to_path_buf(),
            table: inner.table_options(0, false),
            identity: inner.tables.identity(),
            target_size: u64::MAX,
            snapshots: Vec::new(),
            bottommost: false,
            keyspace_live: &live,
            merge_operator: inner.opts.merge_operator.as_ref(),
            new_file_number: &mut alloc,
            cancelled: &never,
            blobs: &mut blobs,
            cut_before: &[],
        };
        let run = write_tables(&mut mem.scan(), &mut spec);
        let run = match run {
            Ok(r) => r,
            Err(e) => {
                blobs.abandon();
                return Err(e);
            }
        };
        blobs.finish()?;
        let b = blobs.output()?;
        out.tables.extend(run.tables);
        out.blobs.extend(b.written);
    }
    Ok(out)
}
