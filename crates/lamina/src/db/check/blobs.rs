//! The blob half of `Db::check`: every live blob file reads back whole, and
//! every pointer in a live table names a record of a live blob file; the dead
//! bytes the manifest records match the pointers found.

use crate::blob::BlobPointer;
use crate::db::CheckReport;
use crate::db::Inner;
use crate::filename::{self, FileKind};
use crate::iter::InternalIterator;
use crate::key::{self, Kind};
use crate::manifest::Version;
use std::collections::{BTreeMap, HashSet};

/// Every value each live blob file holds, by its (offset, length, crc).
type Records = BTreeMap<u64, HashSet<(u64, u32, u32)>>;

pub(crate) fn check_blobs(inner: &Inner, version: &Version, report: &mut CheckReport) {
    let records = blob_records(inner, version, report);
    let live = live_value_bytes(inner, version, &records, report);
    for (&n, meta) in version.blobs() {
        if !records.contains_key(&n) {
            continue;
        }
        let found = live.get(&n).copied().unwrap_or(0);
        let expected = meta.value_bytes.saturating_sub(version.blob_dead(n));
        if found != expected {
            report.problems.push(format!(
                "{}: pointers name {found} bytes of its values, the manifest counts {expected} live",
                inner.blobs.path(n).display()
            ));
        }
    }
}

/// Reads every live blob file whole, reporting a file that differs from
/// the manifest or does not read back.
fn blob_records(inner: &Inner, version: &Version, report: &mut CheckReport) -> Records {
    let mut records = Records::new();
    for (&n, meta) in version.blobs() {
        let path = inner.blobs.path(n);
        let file = match inner.blobs.file_of_len(n, meta.size) {
            Ok(f) => f,
            Err(e) => {
                report.problems.push(e.to_string());
                continue;
            }
        };
        if file.handle().len() != meta.size {
            report.problems.push(format!(
                "{}: the manifest says {} bytes, the file has {}",
                path.display(),
                meta.size,
                file.handle().len()
            ));
        }
        match crate::blob::scan(file.handle(), &path, n) {
            Ok(listing) => {
                if listing.footer_records != meta.records
                    || listing.footer_value_bytes != meta.value_bytes
                {
                    report.problems.push(format!(
                        "{}: the manifest says {} values of {} bytes, the file holds {} of {}",
                        path.display(),
                        meta.records,
                        meta.value_bytes,
                        listing.footer_records,
                        listing.footer_value_bytes
                    ));
                }
                let set = listing
                    .records
                    .iter()
                    .map(|r| (r.pointer.offset, r.pointer.len, r.pointer.crc))
                    .collect();
                records.insert(n, set);
                report.blob_files += 1;
            }
            Err(e) => report.problems.push(e.to_string()),
        }
    }
    records
}

/// Follows every blob pointer of every live table to a value of `records`,
/// reporting the pointers that name none; the bytes of values named, by
/// blob file.
fn live_value_bytes(
    inner: &Inner,
    version: &Version,
    records: &Records,
    report: &mut CheckReport,
) -> BTreeMap<u64, u64> {
    let mut live: BTreeMap<u64, u64> = BTreeMap::new();
    for (_, f) in version.all_files() {
        let tpath = filename::path(&inner.path, FileKind::Table, f.number);
        let Ok(table) = inner.tables.get(f.number) else {
            continue; // reported by the table checks
        };
        let mut it = table.iter_uncached();
        it.seek_to_first();
        while it.valid() {
            if key::parse(it.key()).is_some_and(|p| p.kind == Kind::Blob) {
                report.blob_pointers += 1;
                match BlobPointer::decode(it.value()) {
                    Err(why) => report.problems.push(format!("{}: {why}", tpath.display())),
                    Ok(p) => match records.get(&p.file) {
                        Some(set) if set.contains(&(p.offset, p.len, p.crc)) => {
                            *live.entry(p.file).or_default() += u64::from(p.len);
                        }
                        Some(_) => report.problems.push(format!(
                            "{}: a pointer names {} bytes at offset {} of blob file {:06}, where no such value starts",
                            tpath.display(),
                            p.len,
                            p.offset,
                            p.file
                        )),
                        None if version.blobs().contains_key(&p.file) => {} // reported above
                        None => report.problems.push(format!(
                            "{}: a pointer names blob file {:06}, which is not live",
                            tpath.display(),
                            p.file
                        )),
                    },
                }
            }
            it.next();
        }
    }
    live
}
