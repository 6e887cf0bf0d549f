//! Shelve-style use: a database opened, written once and closed, over and
//! over. An open keeps a small replayed log in its memtable (no table is
//! written) and appends its edit to the manifest it found (no new manifest,
//! no new `CURRENT`); the close syncs the WAL once. What each round costs
//! and leaves on disk stays bounded, and every round's write is there.

use lamina::fs::MemFs;
use lamina::{Db, Options};
use std::path::Path;
use std::sync::Arc;

fn opts(fs: &MemFs) -> Options {
    Options {
        fs: Arc::new(fs.clone()),
        ..Options::default()
    }
}

fn manifests(fs: &MemFs, path: &Path) -> Vec<String> {
    fs.file_names(path)
        .into_iter()
        .filter(|n| n.starts_with("MANIFEST-"))
        .collect()
}

#[test]
fn a_round_of_open_put_close_syncs_files_at_most_twice_and_stays_small() {
    let fs = MemFs::new();
    let path = Path::new("/loop");
    let db = Db::open(path, opts(&fs)).expect("create");
    db.put(b"a", b"0").expect("put");
    db.close().expect("close");
    let first_manifest = manifests(&fs, path);
    let mut cheap_rounds = 0;
    for round in 1..=60u32 {
        let before = fs.sync_count();
        let db = Db::open(path, opts(&fs)).expect("open");
        assert_eq!(
            db.get(b"a").expect("get"),
            Some((round - 1).to_string().into_bytes()),
            "round {round}: the last round's write is there"
        );
        db.put(b"a", round.to_string().as_bytes()).expect("put");
        db.close().expect("close");
        let syncs = fs.sync_count() - before;
        // The manifest's edit and the WAL's sync at close; a round that
        // writes the kept log to a table (every few) syncs that too.
        if syncs <= 2 {
            cheap_rounds += 1;
        }
        let files = fs.file_names(path);
        assert!(
            files.len() <= 14,
            "round {round}: the directory grows: {files:?}"
        );
        assert!(
            fs.total_bytes() < 64 << 10,
            "round {round}: {} bytes",
            fs.total_bytes()
        );
    }
    assert!(
        cheap_rounds >= 40,
        "only {cheap_rounds} of 60 rounds synced files at most twice"
    );
    assert_eq!(
        manifests(&fs, path),
        first_manifest,
        "the opens append to the manifest they found while it is small"
    );
    let db = Db::open(path, opts(&fs)).expect("open");
    assert_eq!(db.get(b"a").expect("get"), Some(b"60".to_vec()));
    assert!(db.check().expect("check").is_ok());
}

#[test]
fn a_manifest_grown_by_many_opens_is_rewritten_at_an_open() {
    let fs = MemFs::new();
    let path = Path::new("/grown");
    let db = Db::open(path, opts(&fs)).expect("create");
    db.close().expect("close");
    let first = manifests(&fs, path);
    let size = |fs: &MemFs, name: &str| {
        use lamina::fs::FileSystem;
        fs.file_size(&path.join(name)).expect("size")
    };
    let mut rewritten = None;
    for round in 0..2000u32 {
        let db = Db::open(path, opts(&fs)).expect("open");
        db.put(format!("k{}", round % 3).as_bytes(), b"v")
            .expect("put");
        db.close().expect("close");
        let now = manifests(&fs, path);
        assert_eq!(now.len(), 1, "one manifest: {now:?}");
        assert!(
            size(&fs, &now[0]) < 20 << 10,
            "round {round}: the manifest grows past its bound"
        );
        if now != first {
            rewritten = Some(round);
            break;
        }
    }
    assert!(
        rewritten.is_some(),
        "a manifest past its bound is rewritten"
    );
    let db = Db::open(path, opts(&fs)).expect("open");
    for k in 0..3 {
        assert_eq!(
            db.get(format!("k{k}").as_bytes()).expect("get"),
            Some(b"v".to_vec())
        );
    }
    assert!(db.check().expect("check").is_ok());
}
