//! A driver for instruction counts of sorted loads under callgrind (redb's
//! "sorted inserts" at a small scale): it loads N items of random 32-byte
//! keys and 150-byte values, flushes them, then writes N more inside
//! `measured`, so `--toggle-collect` counts only that step.
//!
//! valgrind --tool=callgrind --separate-threads=yes \
//!     --toggle-collect='*measured*' \
//!     target/release/examples/sorted_insert batch 200000
//!
//! Ways: `batch` (the N keys, 0xFF×24 then a big-endian counter, all after
//! every loaded key, in ascending order as one `Batch`), `batch-random`
//! (N random keys as one `Batch`, to compare with), `bulk` (the sorted keys
//! through a `BulkLoader`), `table` (the sorted keys into one `TableWriter`
//! table, then ingested). Default durability. The items are made before
//! `measured`; it counts building the batch (or adding to the loader) and
//! the write.

use lamina::{Batch, BulkLoadOptions, BulkLoader, Db, IngestOptions, Options};
use lamina::{TableWriter, TableWriterOptions};
use std::path::Path;

const KEY_LEN: usize = 32;
const VALUE_LEN: usize = 150;

/// A xorshift64 generator: the same keys and values every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn fill(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(8) {
            for (c, b) in chunk.iter_mut().zip(self.next().to_le_bytes()) {
                *c = b;
            }
        }
    }
}

/// Key `i` of the sorted run: after every random key but the few that
/// start with 24 bytes of 0xFF.
fn sorted_key(i: u64) -> [u8; KEY_LEN] {
    let mut k = [0xFF; KEY_LEN];
    k[24..].copy_from_slice(&i.to_be_bytes());
    k
}

/// The items `measured` writes: keys and values side by side, made before
/// it so that it counts lamina's work alone.
struct Items {
    keys: Vec<[u8; KEY_LEN]>,
    values: Vec<[u8; VALUE_LEN]>,
}

impl Items {
    fn new(way: &str, n: u64, rng: &mut Rng) -> Items {
        let mut keys = Vec::with_capacity(n as usize);
        let mut values = Vec::with_capacity(n as usize);
        for i in 0..n {
            let mut key = sorted_key(i);
            if way == "batch-random" {
                rng.fill(&mut key);
            }
            let mut value = [0u8; VALUE_LEN];
            rng.fill(&mut value);
            keys.push(key);
            values.push(value);
        }
        Items { keys, values }
    }

    fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.keys
            .iter()
            .zip(&self.values)
            .map(|(k, v)| (&k[..], &v[..]))
    }
}

#[inline(never)]
fn measured(db: &Db, dir: &Path, way: &str, items: &Items) {
    match way {
        "batch" | "batch-random" => {
            let mut batch = Batch::new();
            for (k, v) in items.iter() {
                batch.put(k, v);
            }
            db.write(batch).expect("write");
        }
        "bulk" => {
            let mut loader = BulkLoader::new(db, BulkLoadOptions::default());
            for (k, v) in items.iter() {
                loader.add(k, v).expect("add");
            }
            loader.finish().expect("finish");
        }
        "table" => {
            let path = dir.join("sorted.sst");
            let mut w =
                TableWriter::create(&path, TableWriterOptions::default()).expect("create table");
            for (k, v) in items.iter() {
                w.put(k, v).expect("put");
            }
            w.finish().expect("finish table");
            db.ingest(&[&path], IngestOptions { move_files: true })
                .expect("ingest");
        }
        other => panic!("no way {other:?}: batch, batch-random, bulk or table"),
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let way = args.next().unwrap_or_else(|| "batch".into());
    let n: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(200_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path().join("db"), Options::default()).expect("open");
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut batch = Batch::new();
    let (mut key, mut value) = ([0u8; KEY_LEN], [0u8; VALUE_LEN]);
    for i in 0..n {
        rng.fill(&mut key);
        rng.fill(&mut value);
        batch.put(&key, &value);
        if i % 1000 == 999 {
            db.write(std::mem::take(&mut batch)).expect("load");
        }
    }
    db.write(batch).expect("load");
    db.flush().expect("flush");
    let items = Items::new(&way, n, &mut rng);
    measured(&db, dir.path(), &way, &items);
    println!("{way}: {n} items");
    db.close().expect("close");
}
