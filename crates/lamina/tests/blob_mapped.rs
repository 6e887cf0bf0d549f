//! Blob values read through a memory mapping of their file (the real file
//! system): they read back whole across flushes, compactions and reopen,
//! match a model, and a flipped byte is still `Corruption` naming the blob
//! file and the value's offset.

use lamina::blob::BlobStore;
use lamina::fs::{FileSystem, MemFs, RealFs};
use lamina::{Db, Error, Options};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn opts() -> Options {
    Options {
        memtable_size: 256 << 10,
        l0_compaction_trigger: 3,
        target_table_size: 64 << 10,
        blob_threshold: 64,
        blob_gc_ratio: 0.3,
        ..Options::default()
    }
}

fn value(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn blob_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "blob"))
        .collect();
    v.sort();
    v
}

fn number(blob: &Path) -> u64 {
    let stem = blob.file_stem().and_then(|s| s.to_str()).expect("stem");
    stem.parse().expect("a numbered blob file")
}

#[test]
fn real_blob_files_are_mapped_and_mem_ones_are_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path(), opts()).expect("open");
    db.put(b"big", &value(1, 100_000)).expect("put");
    db.flush().expect("flush");
    db.close().expect("close");
    let blob = blob_files(dir.path()).pop().expect("a blob file");
    let store = BlobStore::new(Arc::new(RealFs), dir.path(), 4);
    assert!(store.file(number(&blob)).expect("open").is_mapped());

    let fs = MemFs::new();
    let db = Db::open(
        "/m",
        Options {
            fs: Arc::new(fs.clone()),
            ..opts()
        },
    )
    .expect("open");
    db.put(b"big", &value(1, 100_000)).expect("put");
    db.flush().expect("flush");
    let name = fs
        .file_names(Path::new("/m"))
        .into_iter()
        .find(|n| n.ends_with(".blob"))
        .expect("a blob file");
    let store = BlobStore::new(Arc::new(fs.clone()), Path::new("/m"), 4);
    let f = store.file(number(Path::new(&name))).expect("open");
    assert!(!f.is_mapped());
    assert_eq!(
        db.get(b"big").expect("get"),
        Some(value(1, 100_000)),
        "read without a mapping"
    );
    assert!(fs.file_size(&Path::new("/m").join(&name)).expect("size") > 100_000);
}

#[test]
fn mapped_values_match_a_model_across_compaction_and_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let seed = 11;
    println!("seed {seed}");
    let mut rng = StdRng::seed_from_u64(seed);
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    let mut db = Db::open(dir.path(), opts()).expect("open");
    for op in 0..3000u64 {
        let k = format!("k{:03}", rng.gen_range(0..200)).into_bytes();
        match rng.gen_range(0..100) {
            0..=59 => {
                let len = if rng.gen_bool(0.7) {
                    rng.gen_range(64..20_000)
                } else {
                    rng.gen_range(0..64)
                };
                let v = value(op, len);
                db.put(&k, &v).expect("put");
                model.insert(k, v);
            }
            60..=74 => {
                db.delete(&k).expect("delete");
                model.remove(&k);
            }
            75..=94 => {
                let got = db.get_lazy(&k).expect("get_lazy").map(|lazy| {
                    let mut buf = vec![0u8; lazy.len()];
                    lazy.read_into(&mut buf).expect("read_into");
                    buf
                });
                assert_eq!(got.as_ref(), model.get(&k), "op {op}");
            }
            95..=96 => db.flush().expect("flush"),
            97 => db.compact().expect("compact"),
            _ => {
                db.close().expect("close");
                db = Db::open(dir.path(), opts()).expect("reopen");
            }
        }
    }
    let all: BTreeMap<Vec<u8>, Vec<u8>> = db.iter().map(|r| r.expect("item")).collect();
    assert_eq!(all, model);
    assert!(
        !blob_files(dir.path()).is_empty(),
        "values went to blob files"
    );
    let report = db.check().expect("check");
    assert!(report.is_ok(), "{:?}", report.problems);
}

#[test]
fn a_flipped_byte_in_a_mapped_value_is_corruption_naming_file_and_offset() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path(), opts()).expect("open");
    db.put(b"big", &value(1, 100_000)).expect("put");
    db.put(b"other", &value(2, 100_000)).expect("put");
    db.flush().expect("flush");
    assert_eq!(db.get(b"big").expect("get"), Some(value(1, 100_000)));
    // The blob file holding "big", and where its value starts.
    let (blob, value_at) = blob_files(dir.path())
        .into_iter()
        .find_map(|path| {
            let f = RealFs.open(&path).expect("open");
            let listing = lamina::blob::scan(f.as_ref(), &path, number(&path)).expect("scan");
            let rec = listing
                .records
                .iter()
                .find(|r| r.tree_key.ends_with(b"big"))?;
            Some((path, rec.pointer.offset))
        })
        .expect("a blob file holds big");
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&blob)
        .expect("open the blob file");
    let mut byte = [0u8; 1];
    f.read_exact_at(&mut byte, value_at + 54_321).expect("read");
    byte[0] ^= 0x10;
    // Written beneath the open mapping: a read after it must see the change.
    f.write_all_at(&byte, value_at + 54_321).expect("flip");
    for _ in 0..2 {
        match db.get(b"big") {
            Err(Error::Corruption {
                file,
                offset,
                reason,
            }) => {
                assert_eq!(file, blob);
                assert_eq!(offset, value_at);
                assert!(reason.contains("checksum"), "{reason}");
            }
            Ok(v) => panic!(
                "expected corruption, got a value of {:?} bytes; blob files {:?}",
                v.map(|v| v.len()),
                blob_files(dir.path())
            ),
            Err(e) => panic!("expected corruption, got {e}"),
        }
        let lazy = db.get_lazy(b"big").expect("lookup").expect("a value");
        let mut buf = vec![0u8; lazy.len()];
        let err = lazy.read_into(&mut buf).expect_err("a damaged value");
        assert!(err.is_corruption(), "{err}");
    }
    assert_eq!(db.get(b"other").expect("get"), Some(value(2, 100_000)));
    db.close().expect("close");
    let db = Db::open(dir.path(), opts()).expect("reopen");
    let err = db.get(b"big").expect_err("still damaged after reopen");
    assert!(err.to_string().contains(&*blob.to_string_lossy()), "{err}");
}
