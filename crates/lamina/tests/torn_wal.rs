//! `check` tells a torn WAL tail — what a crash leaves, dropped by the next
//! open — from damage.

#![allow(clippy::indexing_slicing)]

use lamina::coding::masked_crc;
use lamina::fs::{FileSystem, MemFs};
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

/// A torn tail followed by another segment is damage: recovery refuses it,
/// and `check` calls it a problem.
#[test]
fn a_torn_tail_before_a_later_segment_is_a_problem() {
    let (fs, later) = crashed_with_torn_tail();
    // Tear the first segment too: it now ends early with a later one after it.
    let first = fs
        .file_names(Path::new("/db"))
        .into_iter()
        .filter(|n| n.ends_with(".wal"))
        .map(|n| PathBuf::from("/db").join(n))
        .find(|p| *p != later)
        .expect("first segment");
    let len = fs.file_size(&first).expect("size");
    fs.truncate(&first, len - 3).expect("truncate");
    let e = Db::open(Path::new("/db"), opts(&fs, true)).expect_err("open");
    assert!(e.is_corruption(), "{e}");
    assert!(e.to_string().contains(&first.display().to_string()), "{e}");
}
