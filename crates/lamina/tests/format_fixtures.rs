//! Databases written by earlier versions of lamina (`tests/fixtures/vN/`) open
//! in this one with every key, value and keyspace they were written with.
//! A fixture is never regenerated: see `tests/fixtures/README.md`.

use lamina::{Db, Options};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Keyspace name (empty: default) to its keys and values.
type Contents = BTreeMap<String, BTreeMap<Vec<u8>, Vec<u8>>>;

fn fixtures_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Every fixture directory: `tests/fixtures/vN/NAME/`.
fn fixtures() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for version in std::fs::read_dir(fixtures_root()).expect("read fixtures") {
        let version = version.expect("entry").path();
        if !version.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&version).expect("read version") {
            let f = f.expect("entry").path();
            if f.join("db").is_dir() {
                out.push(f);
            }
        }
    }
    out.sort();
    out
}

fn unhex(s: &str) -> Vec<u8> {
    assert!(s.len().is_multiple_of(2), "odd hex {s:?}");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

fn expected(fixture: &Path) -> (Contents, Vec<String>) {
    let tsv = std::fs::read_to_string(fixture.join("expected.tsv")).expect("expected.tsv");
    let mut want = Contents::new();
    want.entry(String::new()).or_default();
    for line in tsv.lines().filter(|l| !l.starts_with('#')) {
        let mut f = line.split('\t');
        let (ks, k, v) = (f.next(), f.next(), f.next());
        let (Some(ks), Some(k), Some(v), None) = (ks, k, v, f.next()) else {
            panic!("bad line in expected.tsv: {line:?}");
        };
        want.entry(ks.to_string())
            .or_default()
            .insert(unhex(k), unhex(v));
    }
    let names = std::fs::read_to_string(fixture.join("keyspaces.txt")).expect("keyspaces.txt");
    let names: Vec<String> = names
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    for n in &names {
        want.entry(n.clone()).or_default();
    }
    (want, names)
}

fn shape(fixture: &Path) -> Vec<(usize, usize)> {
    let tsv = std::fs::read_to_string(fixture.join("shape.tsv")).expect("shape.tsv");
    tsv.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let (level, tables) = l.split_once('\t').expect("level\ttables");
            (
                level.parse().expect("level"),
                tables.parse().expect("tables"),
            )
        })
        .collect()
}

/// Everything the database holds, read by iteration.
fn contents(db: &Db) -> Contents {
    let mut got = Contents::new();
    let mut names = db.keyspaces();
    names.push(String::new());
    for name in names {
        let ks = if name.is_empty() {
            db.default_keyspace()
        } else {
            db.open_keyspace(&name).expect("open keyspace")
        };
        let map = ks
            .iter()
            .collect::<Result<BTreeMap<_, _>, _>>()
            .expect("iterate");
        got.insert(name, map);
    }
    got
}

/// The database agrees with the expectation by iteration and by point reads.
fn assert_holds(db: &Db, want: &Contents, names: &[String], fixture: &Path) {
    let mut live = db.keyspaces();
    live.sort();
    let mut names = names.to_vec();
    names.sort();
    assert_eq!(live, names, "keyspaces of {}", fixture.display());
    let got = contents(db);
    for (ks, map) in want {
        let got_map = got.get(ks).expect("keyspace present");
        for (k, v) in map {
            assert_eq!(
                got_map.get(k),
                Some(v),
                "{}: keyspace {ks:?} key {k:02x?}",
                fixture.display()
            );
        }
        assert_eq!(
            got_map.len(),
            map.len(),
            "{}: keyspace {ks:?} holds keys it should not",
            fixture.display()
        );
        let handle = if ks.is_empty() {
            db.default_keyspace()
        } else {
            db.open_keyspace(ks).expect("open keyspace")
        };
        for (k, v) in map {
            assert_eq!(
                handle.get(k).expect("get").as_ref(),
                Some(v),
                "get {k:02x?}"
            );
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read dir") {
        let e = e.expect("entry");
        std::fs::copy(e.path(), to.join(e.file_name())).expect("copy");
    }
}

fn file_kinds(db: &Path) -> Vec<String> {
    let mut kinds: Vec<String> = std::fs::read_dir(db)
        .expect("read db")
        .map(|e| {
            let name = e.expect("entry").file_name().to_string_lossy().to_string();
            match name.rsplit_once('.') {
                Some((_, ext)) => ext.to_string(),
                None => name.split('-').next().unwrap_or("").to_string(),
            }
        })
        .collect();
    kinds.sort();
    kinds.dedup();
    kinds
}

#[test]
fn there_are_fixtures_and_they_hold_every_file_kind() {
    let all = fixtures();
    assert!(all.len() >= 2, "fixtures found: {all:?}");
    for f in &all {
        assert_eq!(
            file_kinds(&f.join("db")),
            ["CURRENT", "LOCK", "MANIFEST", "sst", "wal"],
            "{}",
            f.display()
        );
    }
}

#[test]
fn every_fixture_opens_read_only_with_its_contents_and_shape() {
    for fixture in fixtures() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("db");
        copy_dir(&fixture.join("db"), &path);
        let (want, names) = expected(&fixture);
        let opts = Options {
            read_only: true,
            ..Options::default()
        };
        let db = Db::open(&path, opts).expect("open read-only");
        assert_holds(&db, &want, &names, &fixture);
        let levels: Vec<(usize, usize)> = db
            .stats()
            .levels
            .iter()
            .filter(|l| l.tables > 0)
            .map(|l| (l.level, l.tables))
            .collect();
        assert_eq!(levels, shape(&fixture), "{}", fixture.display());
        let report = db.check().expect("check");
        assert!(report.is_ok(), "{}: {report:?}", fixture.display());
        db.close().expect("close");
    }
}

#[test]
fn every_fixture_opens_read_write_takes_writes_and_reopens() {
    for fixture in fixtures() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("db");
        copy_dir(&fixture.join("db"), &path);
        let (mut want, mut names) = expected(&fixture);
        let db = Db::open(&path, Options::default()).expect("open read-write");
        assert_holds(&db, &want, &names, &fixture);
        let report = db.check().expect("check");
        assert!(report.is_ok(), "{}: {report:?}", fixture.display());

        // Write more: overwrite the first key, delete the last, and add a
        // keyspace under a name that may once have been dropped.
        let default = want.entry(String::new()).or_default();
        let first = default.keys().next().cloned().expect("a key");
        db.put(&first, b"written by today's code").expect("put");
        default.insert(first, b"written by today's code".to_vec());
        let last = default.keys().next_back().cloned().expect("a key");
        db.delete(&last).expect("delete");
        default.remove(&last);
        let ks = db.keyspace("dropped").expect("keyspace");
        assert_eq!(
            ks.iter().count(),
            0,
            "a dropped keyspace's entries came back"
        );
        ks.put(b"new", b"value").expect("put");
        want.entry("dropped".into())
            .or_default()
            .insert(b"new".to_vec(), b"value".to_vec());
        names.push("dropped".into());
        db.flush().expect("flush");
        db.compact().expect("compact");
        assert_holds(&db, &want, &names, &fixture);
        db.close().expect("close");

        let db = Db::open(&path, Options::default()).expect("reopen");
        assert_holds(&db, &want, &names, &fixture);
        let report = db.check().expect("check");
        assert!(report.is_ok(), "{}: {report:?}", fixture.display());
        db.close().expect("close");
    }
}
