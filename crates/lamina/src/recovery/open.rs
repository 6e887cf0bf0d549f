//! Opening a database: its directory and lock, the manifest, WAL replay
//! (`replay`), leftovers removed, and the background threads if work waits
//! already; and `destroy`.

use crate::cache::{BlockCache, TableCache};
use crate::db::{Inner, Parts};
use crate::error::{Error, Result};
use crate::filename::{self, parse_file_name, FileKind};
use crate::fs::FileSystem;
use crate::manifest::{Version, VersionSet};
use crate::options::Options;
use std::path::Path;
use std::sync::Arc;

fn not_a_db(path: &Path, reason: impl Into<String>) -> Error {
    Error::NotADatabase {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// What the directory holds.
enum Found {
    Database,
    Empty,
}

fn inspect_dir(fs: &dyn FileSystem, path: &Path, create: bool) -> Result<Found> {
    match fs.is_dir(path).map_err(|e| Error::io(path, e))? {
        Some(true) => {}
        Some(false) => return Err(not_a_db(path, "it is a file, not a directory")),
        None if create => {
            fs.create_dir_all(path).map_err(|e| Error::io(path, e))?;
            return Ok(Found::Empty);
        }
        None => return Err(not_a_db(path, "no such directory")),
    }
    // One look at CURRENT settles the common case without listing.
    let current = filename::path(path, FileKind::Current, 0);
    if fs.is_dir(&current).map_err(|e| Error::io(&current, e))? == Some(false) {
        return Ok(Found::Database);
    }
    let names = filename::list(fs, path)?;
    if names
        .iter()
        .any(|n| parse_file_name(n) == Some((FileKind::Current, 0)))
    {
        return Ok(Found::Database);
    }
    let foreign: Vec<&String> = names
        .iter()
        .filter(|n| parse_file_name(n).is_none())
        .collect();
    if let Some(f) = foreign.first() {
        return Err(not_a_db(
            path,
            format!("the directory holds {f:?}, which is not a lamina file"),
        ));
    }
    // A manifest alone (no table, no WAL segment) is a creation that a crash
    // interrupted before CURRENT named it: it holds no data, and the
    // database is created afresh over it.
    let has = |kind: FileKind| {
        names
            .iter()
            .any(|n| matches!(parse_file_name(n), Some((k, _)) if k == kind))
    };
    if has(FileKind::Table) || (has(FileKind::Manifest) && has(FileKind::Wal)) {
        return Err(Error::corruption(
            filename::path(path, FileKind::Current, 0),
            0,
            "CURRENT is missing but tables or manifests exist",
        ));
    }
    Ok(Found::Empty)
}

pub(crate) fn open(path: &Path, opts: Options) -> Result<Arc<Inner>> {
    if !opts.read_only {
        return open_once(path, opts);
    }
    // A read-only open beside a live writer that met what looks like damage
    // tries again from a newer manifest a few times: the writer may have
    // removed or reused a file between the reader's reads. Damage that
    // stays is reported.
    let mut tries = 0;
    loop {
        match open_once(path, opts.clone()) {
            Err(e @ (Error::Corruption { .. } | Error::Io { .. }))
                if tries < 5 && super::reader::writer_is_live(opts.fs.as_ref(), path) =>
            {
                tries += 1;
                let _ = e;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            r => return r,
        }
    }
}

fn open_once(path: &Path, opts: Options) -> Result<Arc<Inner>> {
    opts.validate()?;
    let (opts, charged) = crate::budget::resolve(opts);
    let process = crate::process::generation();
    let fs = Arc::clone(&opts.fs);
    let found = inspect_dir(fs.as_ref(), path, opts.create_if_missing && !opts.read_only)?;
    let lock = if opts.read_only {
        None
    } else {
        Some(lock_database(fs.as_ref(), path)?)
    };
    let mut reader_file = None;
    let vs = match found {
        Found::Database if opts.error_if_exists => {
            return Err(Error::AlreadyExists(path.to_path_buf()))
        }
        Found::Database if opts.read_only => {
            let (vs, file) = super::reader::choose_view(&fs, path)?;
            reader_file = file;
            vs
        }
        Found::Database => VersionSet::recover(Arc::clone(&fs), path)?,
        Found::Empty if !opts.create_if_missing || opts.read_only => {
            return Err(not_a_db(path, "the directory holds no database"))
        }
        Found::Empty => {
            // The identity is recorded before any file naming it is written
            // (docs/format.md#database-identity).
            let mut vs = VersionSet::create(Arc::clone(&fs), path)?;
            vs.start_manifest()?;
            vs
        }
    };
    let block_cache = Arc::new(if charged {
        BlockCache::charged(opts.cache_size)
    } else {
        BlockCache::new(opts.cache_size)
    });
    let tables = Arc::new(
        TableCache::new(
            Arc::clone(&fs),
            path.to_path_buf(),
            opts.max_open_tables,
            block_cache,
        )
        .with_identity(vs.identity()),
    );
    let blobs = Arc::new(
        crate::blob::BlobStore::new(Arc::clone(&fs), path, opts.max_open_tables)
            .with_hot_values(opts.cache_size / crate::budget::HOT_VALUES_SHARE),
    );
    let log_number = vs.log_number();
    let parts = Parts {
        path: path.to_path_buf(),
        opts,
        tables,
        blobs,
        versions: vs,
        lock,
        reader: reader_file.map(super::reader::ReaderState::new),
        process,
    };
    let inner = Arc::new_cyclic(|me| Inner::new(parts, me.clone()));
    let names = super::replay::replay_wals(&inner, log_number)?;
    if let Some(r) = inner.reader().lock().as_mut() {
        let vs = inner.versions().lock();
        let st = inner.state().lock();
        let mut mems = st.imm.clone();
        mems.push(Arc::clone(&st.mem));
        r.adopt(&vs, &st.version, &mems)?;
    }
    // Readers, the background threads' among them, see the recovered
    // tree from here on.
    inner.publish(&inner.state().lock());
    if !inner.opts().read_only {
        remove_leftovers(&inner, &names);
        inner.start_background_if_due();
    }
    Ok(inner)
}

/// Takes the `LOCK` of the database in `dir` for a read-write handle. A
/// read-only handle probing whether a writer is live holds it for an
/// instant, so a lock found held is asked for again for a moment before
/// the database is reported locked.
fn lock_database(fs: &dyn FileSystem, dir: &Path) -> Result<Box<dyn crate::fs::FileLock>> {
    let path = filename::path(dir, FileKind::Lock, 0);
    let mut tries = 0;
    loop {
        match fs.lock(&path) {
            Ok(l) => return Ok(l),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && tries < 50 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(4));
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                return Err(Error::Locked(dir.to_path_buf()))
            }
            Err(e) => return Err(Error::io(path, e)),
        }
    }
}

/// Removes, of the files `names` (the directory as the open found it
/// under its lock: files it made since are live), tables and blob files the
/// version does not list and no reader pins, temporary files and old
/// manifests.
fn remove_leftovers(inner: &Inner, names: &[String]) {
    let version: Arc<Version> = Arc::clone(&inner.state().lock().version);
    let live: std::collections::HashSet<u64> = version.all_files().map(|(_, f)| f.number).collect();
    let manifest = inner.versions().lock().manifest_number();
    let doomed: Vec<&String> = names
        .iter()
        .filter(|name| match parse_file_name(name) {
            Some((FileKind::Table, n)) => !live.contains(&n),
            Some((FileKind::Manifest, n)) => n != manifest,
            // Retired segments are kept for reuse or removed (retire_wals_below).
            Some((FileKind::Wal, _)) => false,
            Some((FileKind::Temp, _)) => true,
            Some((FileKind::Blob, n)) => !version.blobs().contains_key(&n),
            _ => false,
        })
        .collect();
    if doomed.is_empty() {
        return;
    }
    let pins = crate::reader_pins::Pins::read(inner.fs().as_ref(), inner.path());
    for name in doomed {
        if matches!(parse_file_name(name), Some((FileKind::Table | FileKind::Blob, n)) if pins.holds(n))
        {
            continue;
        }
        let _ = inner.fs().remove_file(&inner.path().join(name));
    }
}

pub(crate) fn destroy(path: &Path, opts: &Options) -> Result<()> {
    let fs = opts.fs.as_ref();
    match inspect_dir(fs, path, false) {
        Ok(Found::Database) => {}
        Ok(Found::Empty) => {}
        Err(e) => return Err(e),
    }
    let lock = lock_database(fs, path)?;
    let names = filename::list(fs, path)?;
    for name in names
        .iter()
        .filter(|n| !matches!(parse_file_name(n), None | Some((FileKind::Lock, _))))
    {
        fs.remove_file(&path.join(name))
            .map_err(|e| Error::io(path.join(name), e))?;
    }
    drop(lock);
    let _ = fs.remove_file(&filename::path(path, FileKind::Lock, 0));
    let _ = fs.remove_dir(path);
    fs.sync_dir(path.parent().unwrap_or(path)).ok();
    Ok(())
}
