//! `check`: verifies every checksum and invariant of a database; `backup`:
//! a consistent copy.

use crate::db::Inner;
use crate::error::{Error, Result};
use crate::manifest::{file_name, FileKind, VersionEdit};
use crate::wal::{LogReader, LogWriter, MANIFEST_MAGIC, WAL_MAGIC};
use std::path::Path;
use std::sync::Arc;

/// What `check` found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// Tables verified.
    pub tables: u64,
    /// Entries read from them.
    pub entries: u64,
    /// Bytes of tables read.
    pub bytes: u64,
    /// WAL records read.
    pub wal_records: u64,
    /// Blob files verified.
    pub blob_files: u64,
    /// Blob pointers found in tables.
    pub blob_pointers: u64,
    /// Every problem found, in words (file, offset, what is wrong).
    pub problems: Vec<String>,
}

impl CheckReport {
    /// True when no problem was found.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

pub(crate) fn check(inner: &Inner) -> Result<CheckReport> {
    inner.check_open()?;
    let mut report = CheckReport::default();
    let version = inner.state.lock().version.clone();
    if let Err(e) = version.validate() {
        report.problems.push(format!("version: {e}"));
    }
    for (level, f) in version.all_files() {
        let path = inner.path.join(file_name(FileKind::Table, f.number));
        match inner.fs.file_size(&path) {
            Ok(size) if size != f.size => report.problems.push(format!(
                "{}: the manifest says {} bytes, the file has {size}",
                path.display(),
                f.size
            )),
            Ok(_) => {}
            Err(e) => {
                report.problems.push(format!("{}: {e}", path.display()));
                continue;
            }
        }
        let table = match inner.tables.get(f.number) {
            Ok(t) => t,
            Err(e) => {
                report.problems.push(e.to_string());
                continue;
            }
        };
        match table.verify() {
            Ok(n) => {
                report.entries += n;
                if n != f.entries {
                    report.problems.push(format!(
                        "{}: the manifest says {} entries, the table holds {n}",
                        path.display(),
                        f.entries
                    ));
                }
            }
            Err(e) => report.problems.push(e.to_string()),
        }
        let (lo, hi) = bounds(&table);
        if lo.as_deref() != Some(f.smallest.as_slice())
            || hi.as_deref() != Some(f.largest.as_slice())
        {
            report.problems.push(format!(
                "{} (level {level}): its key range differs from the manifest's",
                path.display()
            ));
        }
        report.tables += 1;
        report.bytes += f.size;
    }
    crate::blob::check::check_blobs(inner, &version, &mut report);
    // Every WAL segment still needed must read back without damage.
    let names = inner
        .fs
        .list_dir(&inner.path)
        .map_err(|e| Error::io(&inner.path, e))?;
    let log_number = inner.versions.lock().log_number();
    let wals = crate::manifest::wal_numbers(&names, log_number);
    let live_wal = inner.state.lock().mem.wal_number();
    for num in wals {
        let path = inner.path.join(file_name(FileKind::Wal, num));
        match LogReader::open(inner.fs.as_ref(), &path, WAL_MAGIC) {
            Ok(mut r) => loop {
                match r.next_record() {
                    Ok(Some(rec)) => {
                        report.wal_records += 1;
                        if let Err(why) = crate::batch::decode_record(&rec) {
                            report.problems.push(format!(
                                "{} at {}: {why}",
                                path.display(),
                                r.valid_end()
                            ));
                        }
                    }
                    Ok(None) => {
                        if let (Some(t), true) = (r.torn_tail(), num != live_wal) {
                            report.problems.push(format!(
                                "{}: ends early at offset {} ({} bytes unreadable)",
                                path.display(),
                                t.offset,
                                t.dropped_bytes
                            ));
                        }
                        break;
                    }
                    Err(e) => {
                        report.problems.push(e.to_string());
                        break;
                    }
                }
            },
            Err(e) => report.problems.push(e.to_string()),
        }
    }
    // The live manifest must replay.
    let manifest = inner.versions.lock().manifest_number();
    if manifest != 0 {
        let path = inner.path.join(file_name(FileKind::Manifest, manifest));
        match LogReader::open(inner.fs.as_ref(), &path, MANIFEST_MAGIC) {
            Ok(mut r) => loop {
                match r.next_record() {
                    Ok(Some(rec)) => {
                        if let Err(why) = VersionEdit::decode(&rec) {
                            report.problems.push(format!(
                                "{} at {}: {why}",
                                path.display(),
                                r.valid_end()
                            ));
                        }
                    }
                    Ok(None) => break,
                    Err(e) => {
                        report.problems.push(e.to_string());
                        break;
                    }
                }
            },
            Err(e) => report.problems.push(e.to_string()),
        }
    }
    Ok(report)
}

pub(crate) fn backup(inner: &Inner, dest: &Path) -> Result<()> {
    let fs = inner.fs.as_ref();
    match fs.is_dir(dest).map_err(|e| Error::io(dest, e))? {
        Some(true) => {
            if !fs
                .list_dir(dest)
                .map_err(|e| Error::io(dest, e))?
                .is_empty()
            {
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
    let _guard = inner.compaction_lock.lock();
    let (version, mut edit) = {
        let vs = inner.versions.lock();
        let v = vs.current();
        let mut e = v.snapshot_edit();
        e.log_number = Some(0);
        e.next_file_number = Some(vs.next_file_number());
        e.last_seqno = Some(vs.last_seqno());
        e.keyspaces_created = vs
            .keyspaces()
            .iter()
            .map(|(id, n)| (*id, n.clone()))
            .collect();
        e.next_keyspace_id = Some(vs.next_keyspace_id());
        (v, e)
    };
    for (_, f) in version.all_files() {
        let name = file_name(FileKind::Table, f.number);
        let data = fs
            .read_all(&inner.path.join(&name))
            .map_err(|e| Error::io(inner.path.join(&name), e))?;
        let dst = dest.join(&name);
        let mut w = fs.create(&dst).map_err(|e| Error::io(&dst, e))?;
        w.append(&data)
            .and_then(|()| w.sync_data())
            .map_err(|e| Error::io(&dst, e))?;
    }
    for &n in version.blobs().keys() {
        let name = crate::blob::file_name(n);
        let data = fs
            .read_all(&inner.path.join(&name))
            .map_err(|e| Error::io(inner.path.join(&name), e))?;
        let dst = dest.join(&name);
        let mut w = fs.create(&dst).map_err(|e| Error::io(&dst, e))?;
        w.append(&data)
            .and_then(|()| w.sync_data())
            .map_err(|e| Error::io(&dst, e))?;
    }
    let manifest_number = edit.next_file_number.unwrap_or(1);
    edit.next_file_number = Some(manifest_number + 1);
    let mpath = dest.join(file_name(FileKind::Manifest, manifest_number));
    let mut w = LogWriter::create(fs, &mpath, MANIFEST_MAGIC)?;
    w.add_record(&edit.encode());
    w.sync()?;
    let tmp = dest.join("CURRENT.tmp");
    let mut c = fs.create(&tmp).map_err(|e| Error::io(&tmp, e))?;
    c.append(format!("{}\n", file_name(FileKind::Manifest, manifest_number)).as_bytes())
        .and_then(|()| c.sync_data())
        .map_err(|e| Error::io(&tmp, e))?;
    drop(c);
    fs.rename(&tmp, &dest.join("CURRENT"))
        .map_err(|e| Error::io(dest.join("CURRENT"), e))?;
    fs.sync_dir(dest).map_err(|e| Error::io(dest, e))?;
    drop(version);
    Ok(())
}

/// The first and last internal keys of a table, if it can be read.
fn bounds(table: &Arc<crate::table::Table>) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
    use crate::iter::InternalIterator;
    let mut it = table.iter();
    it.seek_to_first();
    let lo = it.valid().then(|| it.key().to_vec());
    it.seek_to_last();
    let hi = it.valid().then(|| it.key().to_vec());
    (lo, hi)
}
