//! `check`: verifies every checksum and invariant of a database.

mod blobs;

use crate::commit::ReplayedValues;
use crate::db::Inner;
use crate::error::{Error, Result};
use crate::filename::{self, FileKind};
use crate::manifest::{FileMeta, VersionEdit};
use crate::wal::{LogReader, MANIFEST_MAGIC, WAL_MAGIC};
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
    /// Blob pointers found in tables and in WAL records (each one followed
    /// and its value read back).
    pub blob_pointers: u64,
    /// Every problem found, in words (file, offset, what is wrong).
    pub problems: Vec<String>,
    /// What is normal after a crash and repaired by the next read-write
    /// open (a torn tail of the last WAL segment), in words. Not problems.
    pub notes: Vec<String>,
}

impl CheckReport {
    /// True when no problem was found (notes may still be there).
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

impl Inner {
    /// Verifies every checksum and invariant; the report lists what is wrong.
    pub(crate) fn check(&self) -> Result<CheckReport> {
        check(self)
    }
}

fn check(inner: &Inner) -> Result<CheckReport> {
    inner.check_open()?;
    let mut report = CheckReport::default();
    let version = inner.state.lock().version.clone();
    if let Err(e) = version.validate() {
        report.problems.push(format!("version: {e}"));
    }
    for (level, f) in version.all_files() {
        check_table(inner, level, f, &mut report);
    }
    blobs::check_blobs(inner, &version, &mut report);
    unfoldable_keys(inner, &mut report);
    if inner.opts.read_only && crate::recovery::writer_is_live(inner.fs.as_ref(), &inner.path) {
        // What the writer is writing is not the reader's view: the view's
        // WAL records were verified as this handle replayed them.
        report.notes.push(format!(
            "{}: a writer has the database open; checked the view this handle reads \
             (the tables and blob files of its version, and the WAL records it read \
             when it opened); the WAL segment and manifest the writer is appending to \
             are checked when no writer is open",
            inner.path.display()
        ));
        return Ok(report);
    }
    check_wals(inner, &mut report)?;
    check_manifest(inner, &mut report);
    Ok(report)
}

/// Checks one table of the version against its manifest entry: its size,
/// every block's checksum, its entry count and its key range.
fn check_table(inner: &Inner, level: usize, f: &FileMeta, report: &mut CheckReport) {
    let path = filename::path(&inner.path, FileKind::Table, f.number);
    match inner.fs.file_size(&path) {
        Ok(size) if size != f.size => report.problems.push(format!(
            "{}: the manifest says {} bytes, the file has {size}",
            path.display(),
            f.size
        )),
        Ok(_) => {}
        Err(e) => {
            report.problems.push(format!("{}: {e}", path.display()));
            return;
        }
    }
    let table = match inner.tables.get_listed(f) {
        Ok(t) => t,
        Err(e) => {
            report.problems.push(e.to_string());
            return;
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
    if lo.as_deref() != Some(f.smallest.as_slice()) || hi.as_deref() != Some(f.largest.as_slice()) {
        report.problems.push(format!(
            "{} (level {level}): its key range differs from the manifest's",
            path.display()
        ));
    }
    report.tables += 1;
    report.bytes += f.size;
}

/// Replays the live manifest, reporting a record that does not decode.
fn check_manifest(inner: &Inner, report: &mut CheckReport) {
    let manifest = inner.versions.lock().manifest_number();
    if manifest != 0 {
        let path = filename::path(&inner.path, FileKind::Manifest, manifest);
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
}

/// Reads every live key with its value, as a reader would, and reports each
/// key whose merge operands the merge operator cannot fold (by name); other
/// read errors were already reported by the table checks, so the walk stops
/// at the first.
fn unfoldable_keys(inner: &Inner, report: &mut CheckReport) {
    use std::ops::Bound;
    let view = match inner.read_view(None) {
        Ok(view) => view,
        Err(e) => return report.problems.push(e.to_string()),
    };
    let mut cursor = crate::iter::Cursor::new(
        inner.reads.merged(&view),
        view.seqno,
        Bound::Unbounded,
        Bound::Unbounded,
        Arc::clone(&inner.opts.merge_operator),
    );
    while let Some(item) = cursor.next_forward() {
        match item {
            Ok(_) => {}
            Err(Error::Merge(m)) => {
                let live = cursor
                    .last_tree_key()
                    .and_then(|tk| tk.get(..crate::key::KEYSPACE_ID_LEN))
                    .and_then(|b| <[u8; 4]>::try_from(b).ok())
                    .is_none_or(|id| inner.keyspace_live(u32::from_be_bytes(id)));
                if live {
                    report.problems.push(format!(
                        "merge operands that the {} operator cannot fold: {m}",
                        inner.opts.merge_operator.name()
                    ));
                }
            }
            Err(_) => break,
        }
    }
}

/// Where a segment stopped early, as recovery would stop there.
struct Tear {
    segment: u64,
    path: std::path::PathBuf,
    /// Where its records end (for a lost value, the end of the record
    /// pointing to it).
    at: u64,
    /// Its torn tail, if it has one (a segment may end open without one).
    tail: Option<crate::wal::TornTail>,
    /// The value a crash lost before it was durable, if that ends it.
    lost: Option<crate::blob::BlobPointer>,
}

/// Every WAL segment still needed must be there, belong to this database
/// and read back without damage. A torn tail followed by no record (in the
/// last segment, or before segments a crash left empty) is what a crash
/// leaves and recovery drops: a note. A torn tail followed by records is a
/// problem (recovery refuses it). Every value a record points to in a blob
/// file written at commit is read back, and judged by the rule recovery
/// uses ([`ReplayedValues`]): one a crash lost before it was durable ends
/// the log like a torn tail; one gone that was durable is a problem.
fn check_wals(inner: &Inner, report: &mut CheckReport) -> Result<()> {
    let names = filename::list(inner.fs.as_ref(), &inner.path)?;
    let (log_number, identity, required, recorded, manifest_seqno) = {
        let vs = inner.versions.lock();
        let recorded = vs.wals_recorded().clone();
        let seqno = vs.last_seqno();
        (
            vs.log_number(),
            vs.identity(),
            vs.wals_required(),
            recorded,
            seqno,
        )
    };
    let wals = filename::wal_numbers(&names, log_number);
    for missing in required.iter().filter(|n| !wals.contains(n)) {
        let path = filename::path(&inner.path, FileKind::Wal, *missing);
        report.problems.push(format!(
            "{}: WAL segment the manifest records is missing; writes acknowledged in it are lost",
            path.display()
        ));
    }
    let mut walk = WalWalk {
        inner,
        recorded: &recorded,
        values: ReplayedValues::new(inner, &wals, &recorded),
        torn: None,
        last_tail: None,
        next_seqno: None,
        manifest_seqno,
    };
    for &num in &wals {
        let path = filename::path(&inner.path, FileKind::Wal, num);
        let opened = LogReader::open(inner.fs.as_ref(), &path, WAL_MAGIC)
            .and_then(|r| r.check_origin(identity, num).map(|()| r));
        match opened {
            Ok(r) => {
                if !walk.segment(r, num, &path, report) {
                    break;
                }
            }
            Err(e) => report.problems.push(e.to_string()),
        }
    }
    if let Some(note) = walk.ending_note() {
        report.notes.push(note);
    }
    Ok(())
}

/// What a record read by [`WalWalk::segment`] says.
enum Read {
    /// Go on with the next record.
    Next,
    /// Recovery reads nothing more of this segment.
    EndSegment,
    /// The log ends here.
    EndLog,
}

/// The WAL segments read in order, as recovery would.
struct WalWalk<'a> {
    inner: &'a Inner,
    recorded: &'a std::collections::BTreeSet<u64>,
    values: ReplayedValues<'a>,
    /// The first segment that ended early.
    torn: Option<Tear>,
    /// The torn tail of the last segment read, if nothing was read after it.
    last_tail: Option<(std::path::PathBuf, crate::wal::TornTail)>,
    /// The first seqno the next record should hold.
    next_seqno: Option<u64>,
    /// The last seqno the manifest records (an ingest's seqnos are at or
    /// below it, and have no record).
    manifest_seqno: u64,
}

impl WalWalk<'_> {
    /// Reads segment `num` through `r`; false once the log ends in it.
    fn segment(
        &mut self,
        mut r: LogReader,
        num: u64,
        path: &Path,
        report: &mut CheckReport,
    ) -> bool {
        loop {
            match r.next_record() {
                Ok(Some(rec)) => match self.record(&rec, num, path, r.valid_end(), report) {
                    Read::Next => {}
                    Read::EndSegment => return true,
                    Read::EndLog => return false,
                },
                Ok(None) => {
                    if r.ends_open() && self.torn.is_none() {
                        self.torn = Some(Tear {
                            segment: num,
                            path: path.to_path_buf(),
                            at: r.valid_end(),
                            tail: r.torn_tail(),
                            lost: None,
                        });
                    }
                    if let Some(t) = r.torn_tail() {
                        self.last_tail = Some((path.to_path_buf(), t));
                    }
                    return true;
                }
                Err(e) => {
                    report.problems.push(e.to_string());
                    return true;
                }
            }
        }
    }

    /// One record of segment `num`, ending at `at`.
    fn record(
        &mut self,
        rec: &[u8],
        num: u64,
        path: &Path,
        at: u64,
        report: &mut CheckReport,
    ) -> Read {
        if let Some(t) = &self.torn {
            if crate::recovery::tear_ends_log(t.segment, self.recorded) {
                report.notes.push(format!(
                    "{}: a write torn by a power loss ends the log at offset {}; \
                     the writes after it (from {} on) were never synced and \
                     will be dropped at the next open",
                    t.path.display(),
                    t.at,
                    path.display()
                ));
                self.last_tail = None;
                self.torn = None;
                return Read::EndLog;
            }
        }
        report.wal_records += 1;
        self.last_tail = None;
        if let Some(t) = self.torn.take() {
            report
                .problems
                .push(tear_followed_by_writes(self.inner, &t));
        }
        match crate::batch::decode_record(rec) {
            Ok(d) => {
                if let Some(read) = self.gap_before(&d, num, path, at, report) {
                    return read;
                }
                if let Some(p) = check_wal_blob_values(&mut self.values, &d.batch, num, at, report)
                {
                    self.torn = Some(Tear {
                        segment: num,
                        path: path.to_path_buf(),
                        at,
                        tail: None,
                        lost: Some(p),
                    });
                    return Read::EndSegment;
                }
            }
            Err(why) => report
                .problems
                .push(format!("{} at {at}: {why}", path.display())),
        }
        Read::Next
    }

    /// A record whose seqnos do not follow on from the record before it
    /// (past the manifest's last seqno) shows a segment between is gone:
    /// the log ends before it (a note) unless a later segment is recorded
    /// (a problem), the rule recovery applies (docs/format.md#wal).
    fn gap_before(
        &mut self,
        d: &crate::batch::DecodedBatch,
        num: u64,
        path: &Path,
        at: u64,
        report: &mut CheckReport,
    ) -> Option<Read> {
        let first = d.first_seqno;
        let expected = self.next_seqno.replace(first + d.batch.len() as u64)?;
        if first <= expected || first - 1 <= self.manifest_seqno {
            return None;
        }
        if self.recorded.range(num..).next().is_none() {
            report.notes.push(format!(
                "{} at {at}: the records before it end at seqno {}, and it starts at {first}: \
                 a segment a power loss undid is missing; the writes from here on were never \
                 synced and will be dropped at the next open",
                path.display(),
                expected - 1
            ));
            return Some(Read::EndLog);
        }
        report.problems.push(format!(
            "{} at {at}: the records before it end at seqno {}, and it starts at {first}: \
             a segment the manifest's later records cover is missing; writes acknowledged in \
             it are lost",
            path.display(),
            expected - 1
        ));
        None
    }

    /// The note on where the log ends, if a tear or a lost value ends it.
    fn ending_note(self) -> Option<String> {
        match (self.torn, self.last_tail) {
            (
                Some(Tear {
                    path,
                    at,
                    lost: Some(p),
                    ..
                }),
                _,
            ) => Some(format!(
                "{}: the record ending at offset {at} points to a value that {} does not hold \
                 ({} bytes at offset {}), which a crash lost before it was synced; the log ends \
                 there and the writes from it on will be dropped at the next open",
                path.display(),
                self.inner.blobs.path(p.file).display(),
                p.len,
                p.offset
            )),
            (Some(_), Some((p, t))) => Some(format!(
                "{}: a write torn by a crash ends it at offset {} ({} bytes); \
                 they will be dropped at the next open",
                p.display(),
                t.offset,
                t.dropped_bytes
            )),
            _ => None,
        }
    }
}

/// The problem of a segment that ended early (`t`) although a later
/// segment holds writes (recovery refuses it).
fn tear_followed_by_writes(inner: &Inner, t: &Tear) -> String {
    match t.lost {
        Some(p) => format!(
            "{}: the record ending at offset {} points to a value that {} does not hold \
             ({} bytes at offset {}), but a later segment holds writes",
            t.path.display(),
            t.at,
            inner.blobs.path(p.file).display(),
            p.len,
            p.offset
        ),
        None => format!(
            "{}: ends early at offset {}{} but a later segment holds writes",
            t.path.display(),
            t.at,
            t.tail
                .map(|t| format!(" ({} bytes unreadable)", t.dropped_bytes))
                .unwrap_or_default()
        ),
    }
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

/// Reads back, checksum verified, every value a WAL record (of segment
/// `segment`, ending at offset `at`) points to in a blob file written at
/// commit (docs/format.md#blob-files-written-at-commit). Returns the first
/// one a crash lost before it was durable (recovery ends the log there);
/// one gone that was durable, or damaged, is a problem.
fn check_wal_blob_values(
    values: &mut ReplayedValues<'_>,
    batch: &crate::batch::Batch,
    segment: u64,
    at: u64,
    report: &mut CheckReport,
) -> Option<crate::blob::BlobPointer> {
    let pointers = batch
        .ops()
        .flatten()
        .filter(|op| op.kind == crate::key::Kind::Blob)
        .filter_map(|op| crate::blob::BlobPointer::decode(op.value).ok());
    for p in pointers {
        report.blob_pointers += 1;
        match values.present(&p, segment, at) {
            Ok(true) => {}
            Ok(false) => return Some(p),
            Err(e) => report.problems.push(e.to_string()),
        }
    }
    None
}
