//! `check` tells a torn WAL tail — what a crash leaves, dropped by the next
//! open — from damage.

#![allow(clippy::indexing_slicing)]

use lamina::coding::masked_crc;
use lamina::fs::{FileSystem, MemFs};
use lamina::wal::{LogReader, LogWriter, WAL_MAGIC};
use lamina::{Db, Options};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn opts(fs: &MemFs, read_only: bool) -> Options {
    Options {
        fs: Arc::new(fs.clone()),
        read_only,
        ..Options::default()
    }
}

/// A crashed database: the writes to segment `n` were synced; a later
/// segment holds the start of a write the crash tore (a fragment header and
/// no payload).
fn crashed_with_torn_tail() -> (MemFs, PathBuf) {
    let fs = MemFs::new();
    let db = Db::open(Path::new("/db"), opts(&fs, false)).expect("open");
    for i in 0..10u32 {
        db.put(format!("k{i}").as_bytes(), b"v").expect("put");
    }
    db.sync().expect("sync");
    let fs = fs.crash_clone();
    drop(db);
    let wal = fs
        .file_names(Path::new("/db"))
        .into_iter()
        .find(|n| n.ends_with(".wal"))
        .expect("a WAL segment");
    let n: u64 = wal.trim_end_matches(".wal").parse().expect("number");
    let bytes = fs.read_all(&Path::new("/db").join(&wal)).expect("read");
    // The same database's header, naming the later segment's number.
    let mut header = bytes[..40].to_vec();
    header[28..36].copy_from_slice(&(n + 100).to_le_bytes());
    let crc = masked_crc(&header[..36]);
    header[36..].copy_from_slice(&crc.to_le_bytes());
    header.extend_from_slice(&[0x12, 0x34, 0x56, 0x78, 0x20, 0x00, 0x01]);
    let later = PathBuf::from("/db").join(format!("{:06}.wal", n + 100));
    let mut f = fs.create(&later).expect("create");
    f.append(&header).expect("append");
    f.sync_data().expect("sync");
    fs.sync_dir(Path::new("/db")).expect("sync dir");
    (fs, later)
}

/// Before the fix: after a SIGKILL during `lamina load`, `check` exited 6
/// (`000012.wal: ends early ... 205294 bytes unreadable`) although opening
/// recovers exactly as designed: a read-only handle whose memtable was
/// numbered after the first segment called the torn tail of the last one
/// damage.
#[test]
fn a_torn_tail_of_the_last_segment_is_a_note_not_a_problem() {
    let (fs, later) = crashed_with_torn_tail();
    let db = Db::open(Path::new("/db"), opts(&fs, true)).expect("read-only open");
    let report = db.check().expect("check");
    assert!(report.is_ok(), "{:?}", report.problems);
    assert_eq!(report.notes.len(), 1, "{:?}", report.notes);
    let note = &report.notes[0];
    assert!(note.contains(&later.display().to_string()), "{note}");
    assert!(note.contains("will be dropped at the next open"), "{note}");
    assert_eq!(db.iter().count(), 10);
    drop(db);
    // The next read-write open drops it; nothing is left to note.
    let db = Db::open(Path::new("/db"), opts(&fs, false)).expect("open");
    let report = db.check().expect("check");
    assert!(report.is_ok() && report.notes.is_empty(), "{report:?}");
    assert_eq!(db.iter().count(), 10);
}

/// The crashed database of [`crashed_with_torn_tail`], whose later segment
/// then gets records (the first one's, framed under its own number), and is
/// recorded in the manifest as started (tag 11) if `recorded`; the first
/// segment is torn inside its last record. Returns the file system and the
/// first segment's path.
fn torn_before_writes(recorded: bool) -> (MemFs, PathBuf) {
    let (fs, later) = crashed_with_torn_tail();
    let first = fs
        .file_names(Path::new("/db"))
        .into_iter()
        .filter(|n| n.ends_with(".wal"))
        .map(|n| PathBuf::from("/db").join(n))
        .find(|p| *p != later)
        .expect("first segment");
    let mut r = LogReader::open(&fs, &first, WAL_MAGIC).expect("read");
    let origin = LogReader::open(&fs, &later, WAL_MAGIC)
        .expect("read")
        .origin()
        .expect("a WAL header");
    let mut w = LogWriter::create_wal(&fs, &later, origin).expect("create");
    while let Some(rec) = r.next_record().expect("record") {
        w.add_record(&rec);
    }
    w.sync().expect("sync");
    if recorded {
        record_started(&fs, origin.number);
    }
    fs.truncate(&first, r.valid_end() - 3).expect("truncate");
    (fs, first)
}

/// Appends to the manifest a version edit recording WAL segment `number`
/// as started (tag 11), as a payment of the rotation that started it does.
fn record_started(fs: &MemFs, number: u64) {
    use lamina::manifest::VersionEdit;
    use lamina::wal::MANIFEST_MAGIC;
    let name = fs
        .file_names(Path::new("/db"))
        .into_iter()
        .find(|n| n.starts_with("MANIFEST-"))
        .expect("a manifest");
    let path = PathBuf::from("/db").join(name);
    let mut edits = Vec::new();
    let mut r = LogReader::open(fs, &path, MANIFEST_MAGIC).expect("read manifest");
    while let Some(rec) = r.next_record().expect("edit") {
        edits.push(rec);
    }
    edits.push(
        VersionEdit {
            wals_started: vec![number],
            ..VersionEdit::default()
        }
        .encode(),
    );
    let mut w = LogWriter::create(fs, &path, MANIFEST_MAGIC).expect("rewrite manifest");
    for e in &edits {
        w.add_record(e);
    }
    w.sync().expect("sync");
}

/// A torn tail followed by a segment holding writes is damage when a sync
/// covered those writes (writes after the tear survived, writes at it did
/// not): the later segment is recorded in the manifest. Recovery refuses
/// it, naming the torn segment; `check` calls it a problem.
#[test]
fn a_torn_tail_before_a_segment_holding_writes_is_corruption() {
    let (fs, first) = torn_before_writes(true);
    let e = Db::open(Path::new("/db"), opts(&fs, true)).expect_err("open");
    assert!(e.is_corruption(), "{e}");
    assert!(e.to_string().contains(&first.display().to_string()), "{e}");
    assert!(e.to_string().contains("later segment holds writes"), "{e}");
}

/// A torn tail followed by writes in a segment the manifest does not
/// record is what a power loss leaves when a rotation had not yet paid its
/// syncs: no sync covered anything from the tear on, so the log ends there
/// (docs/format.md#segments-started-ahead-of-their-syncs).
#[test]
fn a_tear_before_writes_no_sync_covered_ends_the_log() {
    let (fs, first) = torn_before_writes(false);
    let db = Db::open(Path::new("/db"), opts(&fs, true)).expect("read-only open");
    assert_eq!(
        db.iter().count(),
        9,
        "the nine whole writes of the first segment"
    );
    let report = db.check().expect("check");
    assert!(report.is_ok(), "{:?}", report.problems);
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.contains(&first.display().to_string()) && n.contains("never synced")),
        "{:?}",
        report.notes
    );
    drop(db);
    let db = Db::open(Path::new("/db"), opts(&fs, false)).expect("open");
    assert_eq!(db.iter().count(), 9);
    let report = db.check().expect("check");
    assert!(report.is_ok() && report.notes.is_empty(), "{report:?}");
}

/// Before the fix: a crash tore the WAL's last write; the next open, while
/// recovering, created its new segment and then crashed too. The open after
/// that found a torn segment followed by another and refused the database
/// ("WAL segment ends early but a later segment exists"), although the later
/// segment was empty and nothing acknowledged was missing.
#[test]
fn a_crash_while_recovering_a_torn_tail_still_recovers() {
    use lamina::fs::{FaultFs, FaultKind};
    let base = MemFs::new();
    let db = Db::open(Path::new("/db"), opts(&base, false)).expect("open");
    for i in 0..10u32 {
        db.put(format!("k{i}").as_bytes(), b"v").expect("put");
    }
    db.sync().expect("sync");
    let torn = base.crash_clone();
    drop(db);
    let wal = PathBuf::from("/db").join(
        torn.file_names(Path::new("/db"))
            .into_iter()
            .find(|n| n.ends_with(".wal"))
            .expect("a WAL segment"),
    );
    // The segment is zero-filled past its records: cut inside the last one.
    let end = {
        let mut r = LogReader::open(&torn, &wal, WAL_MAGIC).expect("read");
        while r.next_record().expect("record").is_some() {}
        r.valid_end()
    };
    torn.truncate(&wal, end - 3).expect("tear the last write");
    let mut interrupted = 0;
    for k in 0..20 {
        let mem = torn.crash_clone();
        let faulty = FaultFs::new(Arc::new(mem.clone()));
        faulty.faults().fail_after(FaultKind::Sync, k);
        let o = Options {
            fs: Arc::new(faulty),
            ..Options::default()
        };
        if Db::open(Path::new("/db"), o).is_ok() {
            continue;
        }
        interrupted += 1;
        let db = Db::open(Path::new("/db"), opts(&mem.crash_clone(), false))
            .unwrap_or_else(|e| panic!("sync point {k}: {e}"));
        assert_eq!(
            db.iter().count(),
            9,
            "sync point {k}: the nine whole writes"
        );
        assert!(db.check().expect("check").is_ok());
    }
    assert!(
        interrupted >= 3,
        "only {interrupted} recoveries were interrupted"
    );
}
