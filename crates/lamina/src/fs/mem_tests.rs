//! Tests of the in-memory file system: files, directories and links, what
//! survives a simulated crash, and locks.

use super::*;

fn p(s: &str) -> &Path {
    Path::new(s)
}

fn write(fs: &MemFs, path: &str, data: &[u8], sync: bool) -> Box<dyn WritableFile> {
    let mut f = fs.create(p(path)).unwrap();
    f.append(data).unwrap();
    if sync {
        f.sync_data().unwrap();
    }
    f
}

fn db() -> MemFs {
    let fs = MemFs::new();
    fs.create_dir_all(p("/db")).unwrap();
    fs
}

#[test]
fn write_read_and_sizes() {
    let fs = db();
    let mut f = write(&fs, "/db/a", b"hello", false);
    f.append(b" world").unwrap();
    assert_eq!(f.len(), 11);
    assert_eq!(fs.read_all(p("/db/a")).unwrap(), b"hello world");
    assert_eq!(fs.file_size(p("/db/a")).unwrap(), 11);
    let r = fs.open(p("/db/a")).unwrap();
    assert_eq!(r.len(), 11);
    assert_eq!(r.read_at(6, 5).unwrap(), b"world");
    assert_eq!(
        r.read_at(6, 6).unwrap_err().kind(),
        io::ErrorKind::UnexpectedEof
    );
    assert_eq!(
        r.read_at(u64::MAX, 1).unwrap_err().kind(),
        io::ErrorKind::UnexpectedEof
    );
    assert_eq!(fs.total_bytes(), 11);
    assert_eq!(
        fs.open(p("/db/b")).err().unwrap().kind(),
        io::ErrorKind::NotFound
    );
    assert_eq!(
        fs.file_size(p("/db/b")).unwrap_err().kind(),
        io::ErrorKind::NotFound
    );
}

#[test]
fn directories() {
    let fs = MemFs::new();
    assert_eq!(
        fs.list_dir(p("/db")).unwrap_err().kind(),
        io::ErrorKind::NotFound
    );
    assert_eq!(fs.is_dir(p("/db")).unwrap(), None);
    assert!(fs.create(p("/db/x")).is_err(), "parent must exist");
    fs.create_dir_all(p("/db/sub/deeper")).unwrap();
    assert_eq!(fs.is_dir(p("/db")).unwrap(), Some(true));
    assert_eq!(fs.is_dir(p("/db/sub/")).unwrap(), Some(true));
    write(&fs, "/db/f", b"", false);
    assert_eq!(fs.is_dir(p("/db/f")).unwrap(), Some(false));
    let mut names = fs.list_dir(p("/db")).unwrap();
    names.sort();
    assert_eq!(names, ["f", "sub"]);
    assert_eq!(fs.file_names(p("/db")), ["f"]);
    assert!(fs.file_names(p("/nowhere")).is_empty());
    assert!(
        fs.create_dir_all(p("/db/f/g")).is_err(),
        "a file is in the way"
    );
    assert!(
        fs.create(p("/db/sub")).is_err(),
        "a directory is in the way"
    );
    assert!(fs.remove_file(p("/db/sub")).is_err());
    assert_eq!(
        fs.sync_dir(p("/nowhere")).unwrap_err().kind(),
        io::ErrorKind::NotFound
    );
}

#[test]
fn hard_link_shares_the_file_and_is_durable_after_sync_dir() {
    let fs = db();
    write(&fs, "/db/a", b"A", true);
    fs.sync_dir(p("/db")).unwrap();
    fs.hard_link(p("/db/a"), p("/db/b")).unwrap();
    assert_eq!(
        fs.hard_link(p("/db/a"), p("/db/b")).unwrap_err().kind(),
        io::ErrorKind::AlreadyExists
    );
    assert_eq!(fs.crash_clone().file_names(p("/db")), ["a"]);
    fs.sync_dir(p("/db")).unwrap();
    fs.remove_file(p("/db/a")).unwrap();
    assert_eq!(fs.read_all(p("/db/b")).unwrap(), b"A");
    assert_eq!(fs.crash_clone().read_all(p("/db/b")).unwrap(), b"A");
}

#[test]
fn stat_resolves_dots_and_gives_both_names_of_a_file_one_id() {
    use crate::fs::FileType;
    let fs = db();
    write(&fs, "/db/a", b"A", true);
    fs.hard_link(p("/db/a"), p("/db/b")).unwrap();
    write(&fs, "/db/c", b"C", true);
    let a = fs.stat(p("/db/./x/../a")).unwrap();
    assert_eq!(
        (a.file_type, a.canonical.as_path()),
        (FileType::Regular, p("/db/a"))
    );
    assert_eq!(fs.stat(p("/db/b")).unwrap().id, a.id);
    assert_ne!(fs.stat(p("/db/c")).unwrap().id, a.id);
    assert_eq!(fs.stat(p("/db/..")).unwrap().file_type, FileType::Directory);
    assert_eq!(
        fs.stat(p("/db/d")).unwrap_err().kind(),
        io::ErrorKind::NotFound
    );
}

#[test]
fn rename_and_remove() {
    let fs = db();
    write(&fs, "/db/a", b"A", false);
    write(&fs, "/db/b", b"B", false);
    fs.rename(p("/db/a"), p("/db/b")).unwrap();
    assert_eq!(fs.file_names(p("/db")), ["b"]);
    assert_eq!(fs.read_all(p("/db/b")).unwrap(), b"A");
    assert_eq!(
        fs.rename(p("/db/a"), p("/db/c")).unwrap_err().kind(),
        io::ErrorKind::NotFound
    );
    assert!(fs.rename(p("/db/b"), p("/nowhere/c")).is_err());
    fs.remove_file(p("/db/b")).unwrap();
    assert!(fs.file_names(p("/db")).is_empty());
    assert_eq!(
        fs.remove_file(p("/db/b")).unwrap_err().kind(),
        io::ErrorKind::NotFound
    );
}

#[test]
fn create_truncates_an_existing_file() {
    let fs = db();
    write(&fs, "/db/a", b"old contents", true);
    fs.sync_dir(p("/db")).unwrap();
    write(&fs, "/db/a", b"new", false);
    assert_eq!(fs.read_all(p("/db/a")).unwrap(), b"new");
    assert_eq!(fs.crash_clone().read_all(p("/db/a")).unwrap(), b"");
}

#[test]
fn crash_drops_unsynced_bytes() {
    let fs = db();
    let mut f = write(&fs, "/db/a", b"synced", true);
    fs.sync_dir(p("/db")).unwrap();
    f.append(b"+unsynced").unwrap();
    let crashed = fs.crash_clone();
    assert_eq!(crashed.read_all(p("/db/a")).unwrap(), b"synced");
    assert_eq!(fs.read_all(p("/db/a")).unwrap(), b"synced+unsynced");
    f.sync_data().unwrap();
    assert_eq!(
        fs.crash_clone().read_all(p("/db/a")).unwrap(),
        b"synced+unsynced"
    );
    assert_eq!(fs.sync_count(), 2);
}

#[test]
fn crash_reverts_unsynced_directory_operations() {
    let fs = db();
    write(&fs, "/db/kept", b"k", true);
    write(&fs, "/db/old", b"o", true);
    fs.sync_dir(p("/db")).unwrap();
    // A synced file whose creation is not yet durable is lost.
    write(&fs, "/db/new", b"n", true);
    fs.rename(p("/db/old"), p("/db/renamed")).unwrap();
    fs.remove_file(p("/db/kept")).unwrap();
    assert_eq!(fs.file_names(p("/db")), ["new", "renamed"]);
    let crashed = fs.crash_clone();
    assert_eq!(crashed.file_names(p("/db")), ["kept", "old"]);
    assert_eq!(crashed.read_all(p("/db/kept")).unwrap(), b"k");
    assert_eq!(crashed.read_all(p("/db/old")).unwrap(), b"o");
    fs.sync_dir(p("/db")).unwrap();
    let crashed = fs.crash_clone();
    assert_eq!(crashed.file_names(p("/db")), ["new", "renamed"]);
    assert_eq!(crashed.read_all(p("/db/renamed")).unwrap(), b"o");
}

#[test]
fn sync_dir_covers_only_its_own_directory() {
    let fs = db();
    fs.create_dir_all(p("/other")).unwrap();
    write(&fs, "/db/a", b"a", true);
    write(&fs, "/other/b", b"b", true);
    fs.sync_dir(p("/other")).unwrap();
    let crashed = fs.crash_clone();
    assert!(crashed.file_names(p("/db")).is_empty());
    assert_eq!(crashed.file_names(p("/other")), ["b"]);
    assert_eq!(
        crashed.is_dir(p("/db")).unwrap(),
        Some(true),
        "directories are durable"
    );
}

#[test]
fn crash_clone_is_independent() {
    let fs = db();
    let mut f = write(&fs, "/db/a", b"1234", true);
    fs.sync_dir(p("/db")).unwrap();
    let crashed = fs.crash_clone();
    f.append(b"5678").unwrap();
    f.sync_data().unwrap();
    write(&fs, "/db/b", b"x", true);
    fs.sync_dir(p("/db")).unwrap();
    assert_eq!(crashed.read_all(p("/db/a")).unwrap(), b"1234");
    assert_eq!(crashed.file_names(p("/db")), ["a"]);
    let mut g = crashed.create(p("/db/c")).unwrap();
    g.append(b"zz").unwrap();
    crashed.corrupt_byte(p("/db/a"), 0).unwrap();
    assert_eq!(fs.file_names(p("/db")), ["a", "b"]);
    assert_eq!(fs.read_all(p("/db/a")).unwrap(), b"12345678");
    assert_eq!(crashed.sync_count(), 0);
}

#[test]
fn writes_over_synced_bytes_are_undone_by_a_crash_until_synced() {
    let fs = db();
    write(&fs, "/db/a", b"old-old-old", true);
    fs.sync_dir(p("/db")).unwrap();
    let mut f = fs.reopen(p("/db/a")).unwrap();
    f.write_at(0, b"NEW").unwrap();
    f.write_at(8, b"NEWER").unwrap();
    assert_eq!(fs.read_all(p("/db/a")).unwrap(), b"NEW-old-NEWER");
    assert_eq!(
        fs.crash_clone().read_all(p("/db/a")).unwrap(),
        b"old-old-old"
    );
    let mut seen = HashSet::new();
    for seed in 0..100 {
        let got = fs.crash_clone_with(seed).read_all(p("/db/a")).unwrap();
        // The overwrites reach the disk in order; the bytes past the
        // synced length, a prefix of them.
        let (head, tail) = got.split_at(11);
        assert!(
            [&b"old-old-old"[..], b"NEW-old-old", b"NEW-old-NEW"].contains(&head)
                && b"ER".starts_with(tail),
            "seed {seed}: {}",
            got.escape_ascii()
        );
        seen.insert(got);
    }
    assert!(seen.len() >= 3, "{seen:?}");
    f.sync_data().unwrap();
    assert_eq!(
        fs.crash_clone().read_all(p("/db/a")).unwrap(),
        b"NEW-old-NEWER"
    );
    assert!(f.write_at(100, b"x").is_err(), "a write past the end");
    assert!(fs.reopen(p("/db/missing")).is_err());
}

#[test]
fn crash_clone_with_keeps_a_prefix_of_unsynced_bytes() {
    let fs = db();
    let mut f = write(&fs, "/db/a", b"synced|", true);
    fs.sync_dir(p("/db")).unwrap();
    f.append(&[7u8; 100]).unwrap();
    let mut lens = HashSet::new();
    for seed in 0..200 {
        let data = fs.crash_clone_with(seed).read_all(p("/db/a")).unwrap();
        assert!((7..=107).contains(&data.len()));
        assert_eq!(&data[..7], b"synced|");
        assert!(data[7..].iter().all(|&b| b == 7));
        lens.insert(data.len());
        let again = fs.crash_clone_with(seed).read_all(p("/db/a")).unwrap();
        assert_eq!(again, data, "the seed decides");
    }
    assert!(lens.len() > 20, "prefix lengths vary: {lens:?}");
}

#[test]
fn crash_clone_with_applies_renames_whole() {
    let fs = db();
    write(&fs, "/db/CURRENT", b"old", true);
    fs.sync_dir(p("/db")).unwrap();
    write(&fs, "/db/CURRENT.tmp", b"new", true);
    fs.rename(p("/db/CURRENT.tmp"), p("/db/CURRENT")).unwrap();
    write(&fs, "/db/extra", b"e", true);
    let mut outcomes = HashSet::new();
    for seed in 0..64 {
        let crashed = fs.crash_clone_with(seed);
        let names = crashed.file_names(p("/db"));
        let current = crashed.read_all(p("/db/CURRENT")).unwrap();
        assert!(current == b"old" || current == b"new");
        if current == b"new" {
            assert!(!names.contains(&"CURRENT.tmp".to_string()), "{names:?}");
        }
        outcomes.insert(names);
    }
    assert!(
        outcomes.len() >= 3,
        "operations happen independently: {outcomes:?}"
    );
    fs.sync_dir(p("/db")).unwrap();
    for seed in 0..8 {
        let crashed = fs.crash_clone_with(seed);
        assert_eq!(crashed.file_names(p("/db")), ["CURRENT", "extra"]);
        assert_eq!(crashed.read_all(p("/db/CURRENT")).unwrap(), b"new");
    }
}

#[test]
fn removed_file_survives_crash_until_dir_sync() {
    let fs = db();
    write(&fs, "/db/a", b"data", true);
    fs.sync_dir(p("/db")).unwrap();
    fs.remove_file(p("/db/a")).unwrap();
    assert_eq!(fs.total_bytes(), 0);
    assert_eq!(fs.crash_clone().read_all(p("/db/a")).unwrap(), b"data");
    fs.sync_dir(p("/db")).unwrap();
    assert!(fs.crash_clone().file_names(p("/db")).is_empty());
}

#[test]
fn corrupt_and_truncate_reach_synced_data() {
    let fs = db();
    write(&fs, "/db/a", b"abcdef", true);
    fs.sync_dir(p("/db")).unwrap();
    fs.corrupt_byte(p("/db/a"), 1).unwrap();
    assert_eq!(
        fs.read_all(p("/db/a")).unwrap(),
        [b'a', !b'b', b'c', b'd', b'e', b'f']
    );
    assert!(fs.corrupt_byte(p("/db/a"), 6).is_err());
    fs.truncate(p("/db/a"), 3).unwrap();
    let crashed = fs.crash_clone();
    assert_eq!(crashed.read_all(p("/db/a")).unwrap(), [b'a', !b'b', b'c']);
    fs.truncate(p("/db/a"), 10).unwrap();
    assert_eq!(fs.file_size(p("/db/a")).unwrap(), 3);
}

#[test]
fn locks_are_exclusive_until_dropped() {
    let fs = db();
    let other = fs.clone();
    let held = fs.lock(p("/db/LOCK")).unwrap();
    let err = other.lock(p("/db/LOCK")).err().unwrap();
    assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
    let second = other.lock(p("/db/LOCK2")).unwrap();
    assert_eq!(fs.file_names(p("/db")), ["LOCK", "LOCK2"]);
    let crashed = fs.crash_clone();
    drop(crashed.lock(p("/db/LOCK")).unwrap());
    drop(held);
    let again = other.lock(p("/db/LOCK")).unwrap();
    drop((again, second));
}

#[test]
fn handles_work_across_threads() {
    let fs = db();
    let mut f = fs.create(p("/db/a")).unwrap();
    let fs2 = fs.clone();
    std::thread::spawn(move || {
        let mut g = fs2.create(p("/db/b")).unwrap();
        g.append(b"from thread").unwrap();
        g.sync_data().unwrap();
    })
    .join()
    .unwrap();
    f.append(b"x").unwrap();
    assert_eq!(fs.read_all(p("/db/b")).unwrap(), b"from thread");
    assert_eq!(fs.sync_count(), 1);
}
