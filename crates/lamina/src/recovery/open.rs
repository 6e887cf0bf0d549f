//! Opening a database: the lock, the manifest, WAL replay, and the threads.

use crate::batch::{decode_record, Batch};
use crate::blob::BlobPointer;
use crate::cache::{BlockCache, TableCache};
use crate::commit::{ReplayedBlobs, ReplayedValues};
use crate::db::{Inner, Parts};
use crate::error::{Error, Result};
use crate::filename::{self, parse_file_name, FileKind};
use crate::fs::FileSystem;
use crate::key::{self, Kind};
use crate::manifest::{Version, VersionEdit, VersionSet};
use crate::memtable::{Inserters, Memtable};
use crate::options::Options;
use crate::wal::{LogReader, WAL_MAGIC};
use std::collections::{BTreeMap, BTreeSet};
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
    let inner = Arc::new(Inner::new(Parts {
        path: path.to_path_buf(),
        opts,
        tables,
        blobs,
        versions: vs,
        lock,
        reader: reader_file.map(super::reader::ReaderState::new),
        process,
    }));
    replay_wals(&inner, log_number)?;
    if let Some(r) = inner.reader().lock().as_mut() {
        let vs = inner.versions().lock();
        let st = inner.state().lock();
        let mut mems = st.imm.clone();
        mems.push(Arc::clone(&st.mem));
        r.adopt(&vs, &st.version, &mems)?;
    }
    if !inner.opts().read_only {
        remove_leftovers(&inner);
        inner.start_threads()?;
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

/// Replays the WAL segments numbered `log_number` and above into memtables;
/// for a read-write handle, writes them to level-0 tables and starts a new segment.
fn replay_wals(inner: &Arc<Inner>, log_number: u64) -> Result<()> {
    let names = filename::list(inner.fs().as_ref(), inner.path())?;
    let wals = filename::wal_numbers(&names, log_number);
    let (identity, required, recorded) = {
        let vs = inner.versions().lock();
        (
            vs.identity(),
            vs.wals_required(),
            vs.wals_recorded().clone(),
        )
    };
    let mut wals = wals;
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
    {
        // Files numbered past the manifest's counter exist when a crash came
        // before the next edit recorded it; never hand their numbers out again.
        let mut vs = inner.versions().lock();
        for n in &names {
            match parse_file_name(n) {
                // Reader files are numbered by their process, not the counter.
                Some((FileKind::Reader, _)) | None => {}
                Some((_, num)) => vs.mark_file_number_used(num),
            }
        }
    }
    let mut last_seqno = inner.commit().visible_seqno();
    let manifest_seqno = last_seqno;
    // The sequence numbers the replayed records hold, as ascending runs.
    let mut replayed: Vec<(u64, u64)> = Vec::new();
    let memtable_size = inner.opts().memtable_size as u64;
    let mut mem = Arc::new(Memtable::indexed(
        wals.first().copied().unwrap_or(0),
        memtable_size,
    ));
    let mut edit = VersionEdit::default();
    let mut sealed: Vec<Arc<Memtable>> = Vec::new();
    // A torn tail ends the log only if no later segment holds a record (a
    // crash may leave empty segments after it: one created by a rotation
    // before the torn one was synced, or by a recovery the crash interrupted),
    // or if no segment after the tear is recorded: every later one was
    // started ahead of the syncs of the torn one
    // (docs/format.md#segments-started-ahead-of-their-syncs).
    let mut torn: Option<(u64, Error)> = None;
    // Blob files written at commit that the replayed records point into.
    let mut replayed_blobs = ReplayedBlobs::default();
    let named: std::collections::HashSet<u64> = inner
        .state()
        .lock()
        .version
        .blobs()
        .keys()
        .copied()
        .collect();
    // Whether a value the log points to is there, torn or lost (one rule with `check`).
    let mut values = ReplayedValues::new(inner, &wals, &recorded);
    // The first seqno the next record should hold (a read-only handle beside
    // a live writer ends its view where one does not).
    let mut next_seqno: Option<u64> = None;
    'segments: for &num in &wals {
        let path = filename::path(inner.path(), FileKind::Wal, num);
        // What a live writer is writing (a segment being started, the tail
        // of the newest) ends a read-only handle's view; elsewhere, damage.
        let opened = LogReader::open(inner.fs().as_ref(), &path, WAL_MAGIC)
            .and_then(|r| r.check_origin(identity, num).map(|()| r));
        let mut reader = match opened {
            Ok(r) => r,
            Err(e) => {
                inner.forgive_live_writer(e)?;
                break 'segments;
            }
        };
        loop {
            let rec = match reader.next_record() {
                Ok(Some(rec)) => rec,
                Ok(None) => break,
                Err(e) => {
                    inner.forgive_live_writer(e)?;
                    break 'segments;
                }
            };
            if let Some((torn_num, e)) = torn.take() {
                if tear_ends_log(torn_num, &recorded) {
                    break 'segments;
                }
                inner.forgive_live_writer(e)?;
                break 'segments;
            }
            let at = reader.valid_end();
            let d = decode_record(&rec).map_err(|r| Error::corruption(&path, at, r))?;
            if inner.opts().read_only
                && next_seqno.is_some_and(|n| n != d.first_seqno)
                && super::reader::writer_is_live(inner.fs().as_ref(), inner.path())
            {
                // Records that do not follow on: beside a live writer, the
                // segments between were retired after this reader read the
                // manifest (an ingest's seqnos, recorded in the manifest, are
                // the other cause). The view ends before the gap.
                inner.forgive_live_writer(Error::corruption(&path, at, "seqno gap"))?;
                break 'segments;
            }
            if let Some(p) = missing_value(&mut values, &d.batch, num, at)? {
                // The record survived a crash that its value did not (it
                // was not yet durable): the log ends here
                // (docs/format.md#blob-files-written-at-commit).
                torn = Some((
                    num,
                    Error::corruption(
                        &path,
                        at,
                        format!(
                            "WAL record points to a value that blob file {:06} does not hold \
                         (offset {}, {} bytes), but a later segment holds writes",
                            p.file, p.offset, p.len
                        ),
                    ),
                ));
                break;
            }
            let mut seq = d.first_seqno;
            for op in d.batch.ops() {
                let op = op.map_err(|r| Error::corruption(&path, at, r))?;
                if op.kind == Kind::Blob {
                    let p = BlobPointer::decode(op.value)
                        .map_err(|r| Error::corruption(&path, at, r))?;
                    if !named.contains(&p.file) {
                        replayed_blobs.note(&key::tree_key(op.keyspace, op.key), &p);
                    }
                }
                // Before any thread of the handle starts: the only writer.
                mem.insert_user(op.keyspace, op.key, seq, op.kind, op.value, Inserters::One);
                seq += 1;
            }
            if seq > d.first_seqno {
                note_run(&mut replayed, d.first_seqno, seq - 1);
            }
            next_seqno = Some(seq);
            last_seqno = last_seqno.max(seq.saturating_sub(1));
            if (mem.approximate_size() as usize) >= inner.opts().memtable_size {
                let next = Arc::new(Memtable::indexed(num, memtable_size));
                sealed.push(std::mem::replace(&mut mem, next));
            }
        }
        if let (true, None) = (reader.ends_open(), &torn) {
            torn = Some((
                num,
                Error::corruption(
                    &path,
                    reader.valid_end(),
                    "WAL segment ends early but a later segment holds writes",
                ),
            ));
        }
    }
    sealed.push(mem);
    if let Err(e) = check_orphans(inner, &names, manifest_seqno, &replayed) {
        // A live writer's flush or bulk load writes tables before the
        // manifest names them.
        inner.forgive_live_writer(e)?;
    }
    inner.commit().set_visible(last_seqno);
    inner.commit().set_last_seqno(last_seqno);
    if inner.opts().read_only {
        let mut st = inner.state().lock();
        if let Some(m) = sealed.pop() {
            st.mem = m;
        }
        st.imm = sealed;
        return Ok(());
    }
    let mut dead: BTreeMap<u64, u64> = BTreeMap::new();
    for m in &sealed {
        let (tables, blobs) = inner.write_level0(m)?;
        for t in tables {
            edit.new_files.push((0, Arc::new(t)));
        }
        edit.new_blobs
            .extend(blobs.written.into_iter().map(Arc::new));
        for (n, d) in blobs.dead {
            *dead.entry(n).or_default() += d;
        }
    }
    let opened = inner.seal_replayed_blobs(replayed_blobs)?;
    let all_dead = inner.name_commit_blobs(&mut edit, opened, &dead);
    let wal_number = inner.versions().lock().new_file_number();
    // Segments a previous run retired are reused first.
    inner.retire_wals_below(log_number);
    let w = inner.start_wal_segment(wal_number)?;
    inner.sync_dir()?;
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

/// Removes tables the version does not list, temporary files and old manifests.
fn remove_leftovers(inner: &Inner) {
    let Ok(names) = filename::list(inner.fs().as_ref(), inner.path()) else {
        return;
    };
    let version: Arc<Version> = Arc::clone(&inner.state().lock().version);
    let live: std::collections::HashSet<u64> = version.all_files().map(|(_, f)| f.number).collect();
    let manifest = inner.versions().lock().manifest_number();
    let pins = crate::reader_pins::Pins::read(inner.fs().as_ref(), inner.path());
    for name in names {
        let parsed = parse_file_name(&name);
        if matches!(parsed, Some((FileKind::Table | FileKind::Blob, n)) if pins.holds(n)) {
            continue;
        }
        let doomed = match parsed {
            Some((FileKind::Table, n)) => !live.contains(&n),
            Some((FileKind::Manifest, n)) => n != manifest,
            // Retired segments are kept for reuse or removed (retire_wals_below).
            Some((FileKind::Wal, _)) => false,
            Some((FileKind::Temp, _)) => true,
            Some((FileKind::Blob, n)) => !version.blobs().contains_key(&n),
            _ => false,
        };
        if doomed {
            let _ = inner.fs().remove_file(&inner.path().join(&name));
        }
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
