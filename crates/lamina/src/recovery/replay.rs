//! WAL replay at open: the segments the manifest leaves to replay, their
//! records into memtables (and the checks a record passes first), where
//! the log ends, and what a read-write handle then makes of the memtables:
//! kept as the active one, writing on at the end of the last segment (an
//! open after a clean close, which writes nothing), or kept with a new
//! segment, or written to level-0 tables with a new segment (one manifest
//! edit).

use crate::batch::{decode_record, Batch, DecodedBatch};
use crate::blob::BlobPointer;
use crate::commit::{ReplayedBlobs, ReplayedValues, SegmentFor};
use crate::db::Inner;
use crate::error::{Error, Result};
use crate::filename::{self, parse_file_name, FileKind};
use crate::key::{self, Kind};
use crate::manifest::{Version, VersionEdit};
use crate::memtable::{Inserters, Memtable};
use crate::wal::{LogReader, WAL_MAGIC};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::Path;
use std::sync::Arc;

/// At most this many WAL segments are replayed into the active memtable of
/// a read-write handle and kept (see [`keeps_replayed`]); more are written
/// to a level-0 table at open. An open after a clean close starts no
/// segment; one after a crash does, so a database that crashes again and
/// again writes a table once every this many opens.
const SEGMENTS_KEPT: usize = 4;

/// At most this many replayed records are kept in the active memtable of a
/// read-write handle; more are written to a level-0 table at open. An open
/// after a clean close writes on into the same segment, so a loop of opens
/// that write once each would otherwise replay every round so far. A
/// record replayed costs an open about a quarter of a microsecond (one
/// over 1,000 one-key records took 240 us longer than one over a single
/// record), a flush at open a few syncs: 256 keeps the replay under 70 us
/// and flushes once every 256 rounds of such a loop.
const RECORDS_KEPT: u64 = 256;

/// Replays the WAL segments numbered `log_number` and above into memtables;
/// for a read-write handle, goes on writing the last segment or starts a
/// new one, and writes the memtables to level-0 tables unless they are
/// kept in the active memtable. Returns the names of the files the
/// directory held before (which the open removes leftovers from).
pub(super) fn replay_wals(inner: &Arc<Inner>, log_number: u64) -> Result<Vec<String>> {
    let mut found = Segments::find(inner, log_number)?;
    let opened = std::mem::take(&mut found.opened);
    let mut replay = Replay::new(inner, &found);
    let mut whole = true;
    for (num, reader) in opened {
        if !replay.segment(num, reader)? {
            whole = false;
            break;
        }
    }
    let Replay {
        mut sealed,
        mem,
        runs,
        blobs,
        last_seqno,
        torn,
        appendable,
        records,
        ..
    } = replay;
    // Every segment replayed to its END: the log is whole and durable as
    // it stands (a clean close synced it), and may be kept as it is.
    let whole = whole && torn.is_none();
    sealed.push(mem);
    let names = std::mem::take(&mut found.names);
    if let Err(e) = check_orphans(inner, &names, found.manifest_seqno, &runs) {
        // A live writer's flush or bulk load writes tables before the
        // manifest names them.
        inner.forgive_live_writer(e)?;
    }
    inner.commit().set_visible(last_seqno);
    inner.commit().set_last_seqno(last_seqno);
    if inner.opts().read_only {
        // No thread of a read-only handle indexes the replayed memtables'
        // lists for ordered reads later: done now.
        for m in &sealed {
            m.freeze_all();
        }
        let mut st = inner.state().lock();
        if let Some(m) = sealed.pop() {
            st.mem = m;
        }
        st.imm = sealed;
        return Ok(names);
    }
    if whole && keeps_replayed(inner, &sealed, &blobs, found.wals.len(), records) {
        // The last segment goes on where a clean close left it, if the
        // manifest records it (a clean close paid every rotation).
        if let Some((num, end)) = appendable.filter(|(num, _)| found.recorded.contains(num)) {
            append(inner, sealed, &found, num, end)?;
            return Ok(names);
        }
        if sealed.iter().any(|m| !m.is_empty()) {
            keep(inner, sealed, log_number)?;
            return Ok(names);
        }
    }
    install(inner, &sealed, blobs, last_seqno, log_number)?;
    Ok(names)
}

/// Whether the replayed records may stay in the active memtable, their
/// segments still needed, instead of being written to a table at open (a
/// sync of the table and a compaction every few opens, for a database
/// opened to write a key or two): when every segment was replayed to its
/// END, into one memtable under a quarter of its size, with no value in a
/// blob file the manifest does not name, from at most [`SEGMENTS_KEPT`]
/// segments and [`RECORDS_KEPT`] records (what an open replays stays
/// small).
fn keeps_replayed(
    inner: &Inner,
    sealed: &[Arc<Memtable>],
    blobs: &ReplayedBlobs,
    segments: usize,
    records: u64,
) -> bool {
    let [mem] = sealed else {
        return false;
    };
    mem.approximate_size() <= (inner.opts().memtable_size / 4) as u64
        && blobs.is_empty()
        && segments < SEGMENTS_KEPT
        && records <= RECORDS_KEPT
}

/// Keeps the replayed memtable as the active one and goes on writing
/// segment `num` after its records, which end at `end`: the segment a
/// clean close left last, with only zeros after its END. The open writes
/// nothing, and syncs nothing: the segment's name and its records are
/// durable, and it is recorded in the manifest
/// (docs/format.md#appending-to-a-closed-segment).
fn append(
    inner: &Inner,
    mut sealed: Vec<Arc<Memtable>>,
    found: &Segments,
    num: u64,
    end: u64,
) -> Result<()> {
    let Some(mem) = sealed.pop() else {
        return Ok(());
    };
    let w = inner.append_to_wal_segment(num, end)?;
    if found.retired_on_disk {
        // Segments a previous run retired are kept for this run's rotations.
        inner.retire_wals_below(found.log_number);
    }
    inner.state().lock().mem = mem;
    inner.commit().start_wal(w);
    Ok(())
}

/// Keeps the replayed memtable as the active one: starts a new WAL segment
/// for its next writes and records it in one manifest edit; the log number
/// stays, so the replayed segments stay needed until the memtable is
/// flushed (its flush's edit passes them all).
fn keep(inner: &Inner, mut sealed: Vec<Arc<Memtable>>, log_number: u64) -> Result<()> {
    let Some(mem) = sealed.pop() else {
        return Ok(());
    };
    // Segments a previous run retired are kept for this run's rotations.
    inner.retire_wals_below(log_number);
    let wal_number = inner.versions().lock().new_file_number();
    let w = inner.start_wal_segment(wal_number, SegmentFor::Rest)?;
    inner.sync_dir()?;
    // No last seqno: the writes kept are the WAL's alone (see the flush's
    // edit in background/flush.rs).
    let edit = VersionEdit {
        wals_started: vec![wal_number],
        lifetime: Some(inner.lifetime_now()),
        ..VersionEdit::default()
    };
    let version = inner.versions().lock().log_and_apply(edit)?;
    {
        let mut st = inner.state().lock();
        st.version = version;
        st.mem = mem;
    }
    inner.commit().start_wal(w);
    Ok(())
}

/// The directory's files and the WAL segments to replay, with what the
/// manifest records of them.
struct Segments {
    /// Every file name in the directory.
    names: Vec<String>,
    /// The segments to replay, ascending.
    wals: Vec<u64>,
    /// The database identity every segment's origin must name.
    identity: u128,
    /// The segments the manifest records as started.
    recorded: BTreeSet<u64>,
    /// The last seqno the manifest records.
    manifest_seqno: u64,
    /// The manifest's log number: segments below it are no longer needed.
    log_number: u64,
    /// Whether the directory holds a segment below the log number (a
    /// crash left it, retired but not removed).
    retired_on_disk: bool,
    /// The segments to replay (those of `wals`), opened: their headers
    /// read by `find`, their records by the replay.
    opened: BTreeMap<u64, Result<LogReader>>,
}

impl Segments {
    /// The segments numbered `log_number` and above; a segment the
    /// manifest requires that is missing ends the log before it (a reader
    /// beside a live writer) or is corruption. Numbers of files past the
    /// manifest's counter are marked used. Each WAL file is opened once
    /// here, its header read; the readers of the segments to replay are
    /// kept for the replay.
    fn find(inner: &Inner, log_number: u64) -> Result<Segments> {
        let names = filename::list(inner.fs().as_ref(), inner.path())?;
        let mut wals = filename::wal_numbers(&names, log_number);
        let (identity, required, recorded) = {
            let vs = inner.versions().lock();
            (
                vs.identity(),
                vs.wals_required(),
                vs.wals_recorded().clone(),
            )
        };
        if let Some(&missing) = required.iter().find(|n| !wals.contains(n)) {
            // Beside a live writer, a segment retired by a flush that came
            // after this reader read the manifest: its view ends before it.
            inner.forgive_live_writer(Error::corruption(
                filename::path(inner.path(), FileKind::Wal, missing),
                0,
                "WAL segment the manifest records is missing; writes acknowledged in it are lost",
            ))?;
            wals.retain(|&n| n < missing);
        }
        let mut opened = BTreeMap::new();
        {
            // Files numbered past the manifest's counter exist when a crash
            // came before the next edit recorded it; never hand their numbers
            // out again. Nor the number a WAL file's header names: a crash
            // that undid the rename of a reused segment leaves its records
            // under the old name, and a segment given that number again would
            // read them as its own.
            let mut vs = inner.versions().lock();
            for n in &names {
                match parse_file_name(n) {
                    // Reader files are numbered by their process, not the counter.
                    Some((FileKind::Reader, _)) | None => {}
                    Some((FileKind::Wal, num)) => {
                        vs.mark_file_number_used(num);
                        let path = filename::path(inner.path(), FileKind::Wal, num);
                        let reader = LogReader::open(inner.fs().as_ref(), &path, WAL_MAGIC);
                        if let Some(o) = reader.as_ref().ok().and_then(LogReader::origin) {
                            vs.mark_file_number_used(o.number);
                        }
                        if wals.contains(&num) {
                            opened.insert(num, reader);
                        }
                    }
                    Some((_, num)) => vs.mark_file_number_used(num),
                }
            }
        }
        let retired_on_disk = names
            .iter()
            .any(|n| matches!(parse_file_name(n), Some((FileKind::Wal, num)) if num < log_number));
        Ok(Segments {
            names,
            wals,
            identity,
            recorded,
            manifest_seqno: inner.commit().visible_seqno(),
            log_number,
            retired_on_disk,
            opened,
        })
    }
}

/// What a record's replay says about the log.
enum Step {
    /// Go on with the next record.
    Next,
    /// The segment ends here (the tear is judged at the next record).
    EndSegment,
    /// The log ends here.
    EndLog,
}

/// A replay in progress.
struct Replay<'a> {
    inner: &'a Arc<Inner>,
    identity: u128,
    recorded: &'a BTreeSet<u64>,
    /// Whether a value the log points to is there, torn or lost (one rule
    /// with `check`).
    values: ReplayedValues<'a>,
    /// The blob files the manifest names.
    named: HashSet<u64>,
    memtable_size: u64,
    /// The memtable being filled, and those filled before it.
    mem: Arc<Memtable>,
    sealed: Vec<Arc<Memtable>>,
    /// The sequence numbers the replayed records hold, as ascending runs.
    runs: Vec<(u64, u64)>,
    /// How many records (batches) were replayed.
    records: u64,
    /// Blob files written at commit that the replayed records point into.
    blobs: ReplayedBlobs,
    /// A tear seen, and the error it is if a later record follows. A torn
    /// tail ends the log only if no later segment holds a record (a crash
    /// may leave empty segments after it: one created by a rotation before
    /// the torn one was synced, or by a recovery the crash interrupted), or
    /// if no segment after the tear is recorded: every later one was
    /// started ahead of the syncs of the torn one
    /// (docs/format.md#segments-started-ahead-of-their-syncs).
    torn: Option<(u64, Error)>,
    /// The first seqno the next record should hold (a read-only handle
    /// beside a live writer ends its view where one does not).
    next_seqno: Option<u64>,
    /// The last seqno the manifest records: seqnos up to it may be missing
    /// from the WAL (given to an ingest, or flushed).
    manifest_seqno: u64,
    last_seqno: u64,
    /// The last segment to replay, for a read-write handle (which may go
    /// on writing it).
    last_wal: Option<u64>,
    /// The last segment and where its records end, once it was read to an
    /// END with only zeros after it.
    appendable: Option<(u64, u64)>,
}

impl<'a> Replay<'a> {
    fn new(inner: &'a Arc<Inner>, found: &'a Segments) -> Replay<'a> {
        let memtable_size = inner.opts().memtable_size as u64;
        let named = inner
            .state()
            .lock()
            .version
            .blobs()
            .keys()
            .copied()
            .collect();
        Replay {
            inner,
            identity: found.identity,
            recorded: &found.recorded,
            values: ReplayedValues::new(inner, &found.wals, &found.recorded),
            named,
            memtable_size,
            mem: Arc::new(Memtable::indexed(
                found.wals.first().copied().unwrap_or(0),
                memtable_size,
            )),
            sealed: Vec::new(),
            runs: Vec::new(),
            records: 0,
            blobs: ReplayedBlobs::default(),
            torn: None,
            next_seqno: None,
            manifest_seqno: found.manifest_seqno,
            last_seqno: found.manifest_seqno,
            last_wal: found
                .wals
                .last()
                .copied()
                .filter(|_| !inner.opts().read_only),
            appendable: None,
        }
    }

    /// Replays segment `num`, as `opened` (its reader, or why it could not
    /// be opened); false if the log ends in it. What a live writer is
    /// writing (a segment being started, the tail of the newest) ends a
    /// read-only handle's view; elsewhere, damage.
    fn segment(&mut self, num: u64, opened: Result<LogReader>) -> Result<bool> {
        let inner = self.inner;
        let path = filename::path(inner.path(), FileKind::Wal, num);
        let opened = opened.and_then(|r| r.check_origin(self.identity, num).map(|()| r));
        let mut reader = match opened {
            Ok(r) => r,
            Err(e) => {
                inner.forgive_live_writer(e)?;
                return Ok(false);
            }
        };
        loop {
            let rec = match reader.next_record() {
                Ok(Some(rec)) => rec,
                Ok(None) => break,
                Err(e) => {
                    inner.forgive_live_writer(e)?;
                    return Ok(false);
                }
            };
            if let Some((torn_num, e)) = self.torn.take() {
                if !tear_ends_log(torn_num, self.recorded) {
                    inner.forgive_live_writer(e)?;
                }
                return Ok(false);
            }
            match self.record(&rec, &path, num, reader.valid_end())? {
                Step::Next => {}
                Step::EndSegment => break,
                Step::EndLog => return Ok(false),
            }
        }
        if let (true, None) = (reader.ends_open(), &self.torn) {
            self.torn = Some((
                num,
                Error::corruption(
                    &path,
                    reader.valid_end(),
                    "WAL segment ends early but a later segment holds writes",
                ),
            ));
        }
        if self.last_wal == Some(num) && reader.closed_before_zeros()? {
            self.appendable = Some((num, reader.valid_end()));
        }
        Ok(true)
    }

    /// Replays one record of segment `num`, ending at `at`.
    fn record(&mut self, rec: &[u8], path: &Path, num: u64, at: u64) -> Result<Step> {
        let inner = self.inner;
        let d = decode_record(rec).map_err(|r| Error::corruption(path, at, r))?;
        if inner.opts().read_only
            && self.next_seqno.is_some_and(|n| n != d.first_seqno)
            && super::reader::writer_is_live(inner.fs().as_ref(), inner.path())
        {
            // Records that do not follow on: beside a live writer, the
            // segments between were retired after this reader read the
            // manifest (an ingest's seqnos, recorded in the manifest, are
            // the other cause). The view ends before the gap.
            inner.forgive_live_writer(Error::corruption(path, at, "seqno gap"))?;
            return Ok(Step::EndLog);
        }
        if let Some(step) = self.gap_before(d.first_seqno, path, num, at) {
            return step;
        }
        if let Some(p) = missing_value(&mut self.values, &d.batch, num, at)? {
            // The record survived a crash that its value did not (it was
            // not yet durable): the log ends here
            // (docs/format.md#blob-files-written-at-commit).
            self.torn = Some((
                num,
                Error::corruption(
                    path,
                    at,
                    format!(
                        "WAL record points to a value that blob file {:06} does not hold \
                         (offset {}, {} bytes), but a later segment holds writes",
                        p.file, p.offset, p.len
                    ),
                ),
            ));
            return Ok(Step::EndSegment);
        }
        self.insert(&d, path, num, at)?;
        Ok(Step::Next)
    }

    /// Where a record of segment `num` (ending at `at`) whose first seqno is
    /// `first` does not follow on from the record before it, and the
    /// seqnos between were given to WAL records (they are past the
    /// manifest's last seqno; an ingest's are not), a segment between is
    /// gone: a crash undid its creation or renaming while keeping a later
    /// segment's. If no segment from `num` on is recorded in the manifest,
    /// no sync covered the missing records, and the log ends before this
    /// one; otherwise acknowledged writes are lost: corruption.
    fn gap_before(&self, first: u64, path: &Path, num: u64, at: u64) -> Option<Result<Step>> {
        let expected = self.next_seqno?;
        if first <= expected || first - 1 <= self.manifest_seqno {
            return None;
        }
        if self.recorded.range(num..).next().is_none() {
            return Some(Ok(Step::EndLog));
        }
        Some(
            self.inner
                .forgive_live_writer(Error::corruption(
                    path,
                    at,
                    format!(
                        "WAL records hold seqnos from {first} on, but the records before them \
                         end at {}: a segment the manifest's later records cover is missing",
                        expected - 1
                    ),
                ))
                .map(|()| Step::EndLog),
        )
    }

    /// Inserts the operations of record `d` (of segment `num`) into the
    /// memtable, sealing it once full.
    fn insert(&mut self, d: &DecodedBatch, path: &Path, num: u64, at: u64) -> Result<()> {
        let mut seq = d.first_seqno;
        for op in d.batch.ops() {
            let op = op.map_err(|r| Error::corruption(path, at, r))?;
            if op.kind == Kind::Blob {
                let p =
                    BlobPointer::decode(op.value).map_err(|r| Error::corruption(path, at, r))?;
                if !self.named.contains(&p.file) {
                    self.blobs.note(&key::tree_key(op.keyspace, op.key), &p);
                }
            }
            // Before any thread of the handle starts: the only writer.
            self.mem
                .insert_user(op.keyspace, op.key, seq, op.kind, op.value, Inserters::One);
            seq += 1;
        }
        if seq > d.first_seqno {
            note_run(&mut self.runs, d.first_seqno, seq - 1);
        }
        self.records += 1;
        self.next_seqno = Some(seq);
        self.last_seqno = self.last_seqno.max(seq.saturating_sub(1));
        if (self.mem.approximate_size() as usize) >= self.inner.opts().memtable_size {
            let next = Arc::new(Memtable::indexed(num, self.memtable_size));
            self.sealed.push(std::mem::replace(&mut self.mem, next));
        }
        Ok(())
    }
}

/// Writes the replayed memtables to level-0 tables, names the blob files
/// written at commit they point into, starts a new WAL segment and records
/// it all in one manifest edit; then retires the replayed segments.
fn install(
    inner: &Inner,
    sealed: &[Arc<Memtable>],
    blobs: ReplayedBlobs,
    last_seqno: u64,
    log_number: u64,
) -> Result<()> {
    let wal_number = inner.versions().lock().new_file_number();
    // Segments a previous run retired are kept for this run's rotations.
    inner.retire_wals_below(log_number);
    // Started before the tables: the directory's sync that ends writing
    // them makes the segment's name durable too.
    let w = inner.start_wal_segment(wal_number, SegmentFor::Rest)?;
    let mut edit = VersionEdit::default();
    let mut dead: BTreeMap<u64, u64> = BTreeMap::new();
    let mut dir_synced = false;
    for m in sealed {
        // A memtable holding anything is written, and the directory synced.
        dir_synced |= !m.is_empty();
        let (tables, written) = inner.write_level0(m)?;
        for t in tables {
            edit.new_files.push((0, Arc::new(t)));
        }
        edit.new_blobs
            .extend(written.written.into_iter().map(Arc::new));
        for (n, d) in written.dead {
            *dead.entry(n).or_default() += d;
        }
    }
    let opened = inner.seal_replayed_blobs(blobs)?;
    let all_dead = inner.name_commit_blobs(&mut edit, opened, &dead);
    if !dir_synced {
        inner.sync_dir()?;
    }
    edit.log_number = Some(wal_number);
    edit.wals_started.push(wal_number);
    edit.last_seqno = Some(last_seqno);
    edit.lifetime = Some(inner.lifetime_now());
    let version = inner.versions().lock().log_and_apply(edit)?;
    {
        let mut st = inner.state().lock();
        st.version = version;
        st.mem = Arc::new(Memtable::new(wal_number, inner.opts().memtable_size as u64));
    }
    inner.commit().start_wal(w);
    inner.retire_wals_below(wal_number);
    inner.retire_blobs(all_dead);
    Ok(())
}

/// Whether a tear in segment `torn` ends the log although a later segment
/// holds a record: no segment after the tear is recorded in the manifest,
/// so every later one was started ahead of the torn segment's syncs and no
/// sync covered anything from the tear on
/// (docs/format.md#segments-started-ahead-of-their-syncs).
pub(crate) fn tear_ends_log(torn: u64, recorded: &BTreeSet<u64>) -> bool {
    recorded.range(torn.saturating_add(1)..).next().is_none()
}

/// The first value a kind-3 operation of `batch` (the record of segment
/// `segment` ending at `at`) points to that a crash lost before it was
/// durable; corruption if one is gone that was durable (see
/// [`ReplayedValues::present`]).
fn missing_value(
    values: &mut ReplayedValues<'_>,
    batch: &Batch,
    segment: u64,
    at: u64,
) -> Result<Option<BlobPointer>> {
    for op in batch.ops().flatten().filter(|op| op.kind == Kind::Blob) {
        let Ok(p) = BlobPointer::decode(op.value) else {
            continue;
        };
        if !values.present(&p, segment, at)? {
            return Ok(Some(p));
        }
    }
    Ok(None)
}

/// Adds the sequence numbers `first..=last` of one replayed record to `runs`.
fn note_run(runs: &mut Vec<(u64, u64)>, first: u64, last: u64) {
    match runs.last_mut() {
        Some(run) if run.1.checked_add(1) == Some(first) => run.1 = last,
        _ => runs.push((first, last)),
    }
}

/// Whether every sequence number of `first..=last` is in `runs` (in any
/// order, overlapping or not).
fn covered(runs: &[(u64, u64)], first: u64, last: u64) -> bool {
    let mut sorted = runs.to_vec();
    sorted.sort_unstable();
    let mut next = first;
    for (lo, hi) in sorted {
        if lo > next {
            break;
        }
        if hi >= next {
            match hi.checked_add(1) {
                Some(n) => next = n,
                None => return true,
            }
        }
        if next > last {
            return true;
        }
    }
    next > last
}

/// Tables the manifest does not list are normally leftovers of a crash (a
/// flush or compaction whose edit never reached the manifest, or inputs not
/// yet removed); their writes are also in a WAL segment or in listed tables.
/// One holding writes newer than the manifest records that the replayed
/// records do not all hold means manifest records were lost: that is
/// corruption, and the table is left in place. (Every sequence number past
/// the manifest's was given to a WAL record: ingest and bulk loads record
/// theirs in the manifest.)
fn check_orphans(
    inner: &Inner,
    names: &[String],
    manifest_seqno: u64,
    replayed: &[(u64, u64)],
) -> Result<()> {
    let version: Arc<Version> = Arc::clone(&inner.state().lock().version);
    let live: std::collections::HashSet<u64> = version.all_files().map(|(_, f)| f.number).collect();
    for name in names {
        let Some((FileKind::Table, n)) = parse_file_name(name) else {
            continue;
        };
        if live.contains(&n) {
            continue;
        }
        let Ok(table) = inner.tables().get(n) else {
            continue;
        };
        let (oldest, newest) = (
            table.properties().smallest_seqno,
            table.properties().largest_seqno,
        );
        inner.tables().evict(n);
        if newest > manifest_seqno && !covered(replayed, oldest.max(manifest_seqno + 1), newest) {
            let manifest = inner.versions().lock().manifest_number();
            return Err(Error::corruption(
                filename::path(inner.path(), FileKind::Manifest, manifest),
                0,
                format!(
                    "the manifest ends before recording table {name}, whose writes (up to seqno {newest}) \
                     are in no WAL segment; the manifest was truncated or damaged"
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{covered, note_run};

    #[test]
    fn runs_of_replayed_seqnos_cover_only_what_they_hold() {
        let mut runs = Vec::new();
        for (first, last) in [(10, 12), (13, 20), (31, 40), (5, 9)] {
            note_run(&mut runs, first, last);
        }
        assert_eq!(runs, [(10, 20), (31, 40), (5, 9)]);
        assert!(covered(&runs, 5, 20));
        assert!(covered(&runs, 12, 12));
        assert!(covered(&runs, 31, 40));
        assert!(!covered(&runs, 15, 31), "21-30 is in no record");
        assert!(!covered(&runs, 4, 9));
        assert!(!covered(&runs, 35, 41));
        assert!(!covered(&[], 1, 1));
        assert!(covered(&[(1, u64::MAX)], 7, u64::MAX));
    }
}
