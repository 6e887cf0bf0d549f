//! `backup`: a consistent copy of a database in another directory.

use crate::db::Inner;
use crate::error::{Error, Result};
use crate::filename::{self, FileKind};
use crate::manifest::write_manifest;
use std::path::Path;

impl Inner {
    /// Writes a consistent copy of the database into `dest`, which must not
    /// exist or be empty: the memtable is flushed, then every live table and
    /// blob file is copied and a fresh manifest written, naming no WAL.
    /// Durable when it returns.
    pub(crate) fn backup(&self, dest: &Path) -> Result<()> {
        backup(self, dest)
    }
}

fn backup(inner: &Inner, dest: &Path) -> Result<()> {
    let fs = inner.fs.as_ref();
    match fs.is_dir(dest).map_err(|e| Error::io(dest, e))? {
        Some(true) => {
            if !filename::list(fs, dest)?.is_empty() {
                return Err(Error::InvalidArgument(format!(
                    "backup destination {} is not empty",
                    dest.display()
                )));
            }
        }
        Some(false) => {
            return Err(Error::InvalidArgument(format!(
                "backup destination {} is a file",
                dest.display()
            )))
        }
        None => fs.create_dir_all(dest).map_err(|e| Error::io(dest, e))?,
    }
    inner.flush_and_wait()?;
    let _guard = inner.background.hold_compactions();
    let (version, mut edit) = {
        let vs = inner.versions.lock();
        let mut e = vs.snapshot_edit();
        // The backup holds no WAL: the memtable was flushed above, and its
        // counters are the source's as of now, not as of its last edit.
        e.log_number = Some(0);
        e.wals_started.clear();
        e.lifetime = Some(inner.lifetime_now());
        (vs.current(), e)
    };
    let tables = version
        .all_files()
        .map(|(_, f)| (FileKind::Table, f.number));
    let blobs = version.blobs().keys().map(|&n| (FileKind::Blob, n));
    for (kind, number) in tables.chain(blobs) {
        let src = filename::path(&inner.path, kind, number);
        let data = fs.read_all(&src).map_err(|e| Error::io(&src, e))?;
        let dst = filename::path(dest, kind, number);
        let mut w = fs.create(&dst).map_err(|e| Error::io(&dst, e))?;
        w.append(&data)
            .and_then(|()| w.sync_data())
            .map_err(|e| Error::io(&dst, e))?;
    }
    let manifest_number = edit.next_file_number.unwrap_or(1);
    edit.next_file_number = Some(manifest_number + 1);
    write_manifest(fs, dest, manifest_number, &edit)?;
    drop(version);
    Ok(())
}
