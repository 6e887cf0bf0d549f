//! Short range scans (a seek and ten entries) beside point reads of the
//! same keys, for instruction counts under callgrind (deterministic, where
//! timings move from run to run):
//!
//! valgrind --tool=callgrind --toggle-collect='*measured_scans*' \
//!     target/release/examples/short_scans DIR layered 20000
//!
//! (`--toggle-collect='*measured_gets*'` counts the point reads instead.)
//!
//! The data is redb's range-read row at a smaller size: 200,000 keys of 24
//! random bytes with values of 150 random bytes. The first run with a DIR
//! loads it there, in batches of 1,000 puts with a memtable of 4 MiB, and
//! waits for the compactions the load started, so that the tree is left as
//! a load leaves it: tables in level 0 and in deeper levels (`layered`);
//! or, with `compacted`, compacted (`Db::compact`) after the load. Every
//! run then copies DIR and opens the copy (so that what it writes never
//! reaches DIR), puts 5,000 more keys (left in the memtable), takes a
//! snapshot and reads through it: every scan once, untimed, so that the
//! blocks are cached; then N scans (default 20,000) from keys drawn at
//! random among those loaded, each `range(key..)` and ten entries
//! (`measured_scans`), then N point reads of the same keys
//! (`measured_gets`). A fourth argument sets the block cache's size in
//! MiB (default: lamina's), to count what reading blocks that the cache
//! does not hold costs.

use lamina::{Batch, Db, Durability, Options, Snapshot};
use std::hint::black_box;

/// Keys loaded.
const KEYS: u64 = 200_000;
/// Keys put after opening, left in the memtable.
const IN_MEMTABLE: u64 = 5_000;
/// Entries each scan reads.
const SCAN_LEN: usize = 10;

/// splitmix64: the `i`-th number of a stream.
fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The `i`-th key: 24 random bytes.
fn key(i: u64) -> [u8; 24] {
    let mut k = [0u8; 24];
    for (n, chunk) in k.chunks_mut(8).enumerate() {
        chunk.copy_from_slice(&mix(i * 3 + n as u64).to_le_bytes());
    }
    k
}

/// The `i`-th key's value: 150 random bytes.
fn value(i: u64) -> [u8; 150] {
    let mut v = [0u8; 150];
    for (n, chunk) in v.chunks_mut(8).enumerate() {
        let bytes = mix((1 << 40) + i * 19 + n as u64).to_le_bytes();
        chunk.copy_from_slice(bytes.get(..chunk.len()).unwrap_or(&bytes));
    }
    v
}

fn options(cache_mib: Option<usize>) -> Options {
    let mut opts = Options {
        memtable_size: 4 << 20,
        ..Options::default()
    };
    if let Some(mib) = cache_mib {
        opts.cache_size = mib << 20;
    }
    opts
}

fn load(dir: &str, compacted: bool) {
    let db = Db::open(dir, options(None)).expect("open");
    let mut batch = Batch::new();
    for i in 0..KEYS {
        batch.put(&key(i), &value(i));
        if batch.len() == 1000 {
            db.write_with(std::mem::take(&mut batch), Durability::None)
                .expect("write");
        }
    }
    db.write_with(batch, Durability::None).expect("write");
    db.flush().expect("flush");
    if compacted {
        db.compact().expect("compact");
    }
    // Let the background compactions finish, so that opening the database
    // again starts none and every run reads the same tree.
    while db.stats().pending_compaction_bytes > 0 || l0_tables(&db) >= 4 {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    println!("loaded: {}", shape(&db));
    db.close().expect("close");
}

fn l0_tables(db: &Db) -> usize {
    db.stats().levels.first().map_or(0, |l| l.tables)
}

/// The tables of each level that has any, as `L0: 2, L1: 1`.
fn shape(db: &Db) -> String {
    let levels: Vec<String> = db
        .stats()
        .levels
        .iter()
        .filter(|l| l.tables > 0)
        .map(|l| format!("L{}: {}", l.level, l.tables))
        .collect();
    levels.join(", ")
}

#[inline(never)]
fn measured_scans(snap: &Snapshot, starts: &[[u8; 24]]) -> usize {
    let mut read = 0;
    for k in starts {
        for entry in snap.range(&k[..]..).take(SCAN_LEN) {
            let (k, v) = entry.expect("scan");
            read += k.len() + v.len();
        }
    }
    read
}

#[inline(never)]
fn measured_gets(snap: &Snapshot, keys: &[[u8; 24]]) -> usize {
    let mut found = 0;
    for k in keys {
        found += snap.get(k).expect("get").map_or(0, |v| v.len());
    }
    found
}

fn main() {
    let mut args = std::env::args().skip(1);
    let usage = "usage: short_scans DIR layered|compacted [N [CACHE_MIB]]";
    let dir = args.next().expect(usage);
    let compacted = match args.next().as_deref() {
        Some("layered") => false,
        Some("compacted") => true,
        _ => panic!("{usage}"),
    };
    let n: usize = args.next().map_or(20_000, |s| s.parse().expect("N"));
    let cache_mib: Option<usize> = args.next().map(|s| s.parse().expect("CACHE_MIB"));
    if !std::path::Path::new(&dir).exists() {
        load(&dir, compacted);
    }
    // A copy is read, so that the keys put below never reach DIR's tables.
    let copy = tempfile::tempdir().expect("tempdir");
    for entry in std::fs::read_dir(&dir).expect("read DIR") {
        let path = entry.expect("read DIR").path();
        if let Some(name) = path.file_name().filter(|n| *n != "LOCK") {
            std::fs::copy(&path, copy.path().join(name)).expect("copy");
        }
    }
    let db = Db::open(copy.path(), options(cache_mib)).expect("open");
    for i in KEYS..KEYS + IN_MEMTABLE {
        db.put(&key(i), &value(i)).expect("put");
    }
    println!("tables: {}", shape(&db));
    let starts: Vec<[u8; 24]> = (0..n as u64)
        .map(|i| key(mix((1 << 50) + i) % KEYS))
        .collect();
    let snap = db.snapshot();
    black_box(warm(&snap, &starts));
    let t = std::time::Instant::now();
    let read = black_box(measured_scans(&snap, &starts));
    let scans = t.elapsed();
    let t = std::time::Instant::now();
    let found = black_box(measured_gets(&snap, &starts));
    let gets = t.elapsed();
    println!(
        "{n} scans: {read} bytes, {:.0} ns a scan; {n} gets: {found} bytes, {:.0} ns a get",
        scans.as_nanos() as f64 / n as f64,
        gets.as_nanos() as f64 / n as f64
    );
}

/// The scans once, untimed, so that their blocks are cached.
fn warm(snap: &Snapshot, starts: &[[u8; 24]]) -> usize {
    starts
        .iter()
        .map(|k| snap.range(&k[..]..).take(SCAN_LEN).count())
        .sum()
}
