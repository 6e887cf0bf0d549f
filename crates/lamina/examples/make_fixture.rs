//! Writes the format fixture databases of `tests/fixtures/` with today's
//! code, and beside each one what it must hold, from the generator's own
//! model (never by reading the database back). Today's code writes format
//! 1: the scenarios of `tests/fixtures/format1/`.
//!
//! cargo run -p lamina --example make_fixture -- crates/lamina/tests/fixtures/formatN
//!
//! Refuses a directory that already exists: a committed fixture is never
//! regenerated. See `tests/fixtures/README.md`.

use lamina::{Batch, Compression, Db, Keyspace, Options};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

type BoxError = Box<dyn std::error::Error>;

/// splitmix64: the fixtures depend on no crate's idea of a stable stream.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// What the database must hold: live keyspace name (empty for the default)
/// to its keys and values.
#[derive(Default)]
struct Model {
    spaces: BTreeMap<String, BTreeMap<Vec<u8>, Vec<u8>>>,
}

impl Model {
    fn put(&mut self, ks: &str, k: &[u8], v: &[u8]) {
        self.spaces
            .entry(ks.to_string())
            .or_default()
            .insert(k.to_vec(), v.to_vec());
    }

    fn delete(&mut self, ks: &str, k: &[u8]) {
        if let Some(m) = self.spaces.get_mut(ks) {
            m.remove(k);
        }
    }

    /// The built-in `add` operator: u64 little-endian, wrapping.
    fn add(&mut self, ks: &str, k: &[u8], n: u64) {
        let m = self.spaces.entry(ks.to_string()).or_default();
        let old = m
            .get(k)
            .and_then(|v| <[u8; 8]>::try_from(v.as_slice()).ok())
            .map_or(0, u64::from_le_bytes);
        m.insert(k.to_vec(), old.wrapping_add(n).to_le_bytes().to_vec());
    }

    fn create(&mut self, ks: &str) {
        self.spaces.entry(ks.to_string()).or_default();
    }

    fn drop_space(&mut self, ks: &str) {
        self.spaces.remove(ks);
    }
}

/// Writes to the database and the model together.
struct Writer<'a> {
    db: &'a Db,
    model: Model,
}

impl Writer<'_> {
    fn ks(&self, name: &str) -> Result<Keyspace, BoxError> {
        Ok(if name.is_empty() {
            self.db.default_keyspace()
        } else {
            self.db.keyspace(name)?
        })
    }

    fn put(&mut self, ks: &str, k: &[u8], v: &[u8]) -> Result<(), BoxError> {
        self.ks(ks)?.put(k, v)?;
        self.model.put(ks, k, v);
        Ok(())
    }

    fn delete(&mut self, ks: &str, k: &[u8]) -> Result<(), BoxError> {
        self.ks(ks)?.delete(k)?;
        self.model.delete(ks, k);
        Ok(())
    }

    fn add(&mut self, ks: &str, k: &[u8], n: u64) -> Result<(), BoxError> {
        self.ks(ks)?.merge(k, &n.to_le_bytes())?;
        self.model.add(ks, k, n);
        Ok(())
    }

    fn create(&mut self, ks: &str) -> Result<(), BoxError> {
        self.db.keyspace(ks)?;
        self.model.create(ks);
        Ok(())
    }

    fn drop_space(&mut self, ks: &str) -> Result<(), BoxError> {
        self.db.drop_keyspace(ks)?;
        self.model.drop_space(ks);
        Ok(())
    }
}

/// Options that keep the shape deterministic: no automatic flush or compaction.
fn base_options() -> Options {
    Options {
        memtable_size: 64 << 20,
        l0_compaction_trigger: 1000,
        l0_slowdown_trigger: 1001,
        l0_stop_trigger: 1001,
        block_size: 1024,
        ..Options::default()
    }
}

/// LZ4 tables at level 0, zstd tables in the last level, counter operands
/// folded in the last level and unfolded above it, tombstones over older
/// table entries, a dropped keyspace whose entries remain in a table, the
/// empty key, binary keys, a large value (in a blob file), and writes only
/// in the WAL.
fn mixed(w: &mut Writer<'_>, rng: &mut Rng) -> Result<(), BoxError> {
    mixed_last_level(w, rng)?;
    mixed_level0(w)?;
    mixed_wal_only(w)
}

/// The first phase of `mixed`, compacted into the last level (zstd):
/// values of several lengths, the empty key, binary keys, random keys, a
/// large value, counters, and two named keyspaces, one dropped later.
fn mixed_last_level(w: &mut Writer<'_>, rng: &mut Rng) -> Result<(), BoxError> {
    for i in 0..200u32 {
        let v = format!("value-{i}-").repeat(1 + (i % 4) as usize);
        w.put("", format!("key{i:04}").as_bytes(), v.as_bytes())?;
    }
    w.put("", b"", b"the empty key")?;
    for k in [&[0u8][..], &[0xff, 0xff], &[0, 1, 0xfe, 0x80], b"\n\t\r\\"] {
        w.put("", k, &[0u8, 1, 2, 0xff])?;
    }
    for _ in 0..10 {
        let len = 1 + (rng.next() % 16) as usize;
        let k = rng.bytes(len);
        let v = rng.bytes(8);
        w.put("", &k, &v)?;
    }
    let big = rng.bytes(12 << 10);
    w.put("", b"big", &big)?;
    w.put("", b"counter/base", &100u64.to_le_bytes())?;
    for n in 1..=5 {
        w.add("", b"counter/base", n)?;
        w.add("", b"counter/nobase", n * 10)?;
    }
    w.create("users")?;
    for i in 0..50u32 {
        w.put(
            "users",
            format!("user/{i:03}").as_bytes(),
            format!("name {i}").as_bytes(),
        )?;
    }
    w.add("users", b"logins", 3)?;
    w.create("dropped")?;
    for i in 0..20u32 {
        w.put(
            "dropped",
            format!("gone/{i:02}").as_bytes(),
            b"never seen again",
        )?;
    }
    w.db.flush()?;
    w.db.compact()?;
    Ok(())
}

/// The second phase of `mixed`, one table at level 0 (LZ4) over the last
/// level: the keyspace `dropped` dropped, tombstones and rewrites over
/// older entries, counter operands over folded ones.
fn mixed_level0(w: &mut Writer<'_>) -> Result<(), BoxError> {
    w.drop_space("dropped")?;
    for i in (0..200u32).step_by(5) {
        w.delete("", format!("key{i:04}").as_bytes())?;
    }
    for i in (1..200u32).step_by(7) {
        w.put(
            "",
            format!("key{i:04}").as_bytes(),
            format!("second-{i}").as_bytes(),
        )?;
    }
    w.delete("", &[0xff, 0xff])?;
    for n in 1..=3 {
        w.add("", b"counter/base", n * 1000)?;
        w.add("", b"counter/nobase", n)?;
        w.add("", b"counter/l0only", n)?;
    }
    w.add("users", b"logins", 4)?;
    for i in (0..50u32).step_by(4) {
        w.delete("users", format!("user/{i:03}").as_bytes())?;
    }
    w.db.flush()?;
    Ok(())
}

/// The last phase of `mixed`, only in the WAL: rewrites, deletes and
/// counter operands, a keyspace made after the last flush, and one batch
/// across keyspaces.
fn mixed_wal_only(w: &mut Writer<'_>) -> Result<(), BoxError> {
    w.put("", b"", b"the empty key, rewritten")?;
    w.put("", b"wal/only", b"not yet in a table")?;
    w.delete("", b"key0003")?;
    w.delete("", &[0u8])?;
    w.add("", b"counter/base", 1_000_000)?;
    w.add("", b"counter/walonly", 42)?;
    w.create("late")?;
    let users = w.ks("users")?;
    let late = w.ks("late")?;
    let mut batch = Batch::new();
    batch.put(b"batch/default", b"1");
    batch.put_in(&users, b"user/999", b"from a batch");
    batch.delete_in(&users, b"user/001");
    batch.put_in(&late, b"late/1", b"in a keyspace made after the last flush");
    batch.merge_in(&users, b"logins", &5u64.to_le_bytes());
    w.db.write(batch)?;
    w.model.put("", b"batch/default", b"1");
    w.model.put("users", b"user/999", b"from a batch");
    w.model.delete("users", b"user/001");
    w.model.put(
        "late",
        b"late/1",
        b"in a keyspace made after the last flush",
    );
    w.model.add("users", b"logins", 5);
    Ok(())
}

/// Large values written to blob files at commit: a blob file sealed and
/// named by a flush, with one of its values overwritten (dead
/// bytes), and one left open at close, its pointers only in the WAL
/// (one overwritten, one deleted, one in a named keyspace).
fn wal_blobs(w: &mut Writer<'_>, rng: &mut Rng) -> Result<(), BoxError> {
    for i in 0..6u32 {
        let v = rng.bytes(9_000 + 1_000 * i as usize);
        w.put("", format!("big/{i}").as_bytes(), &v)?;
        w.put("", format!("small/{i}").as_bytes(), b"beside")?;
    }
    w.put("", b"big/0", &rng.bytes(12_000))?;
    w.db.flush()?;
    w.put("", b"big/1", &rng.bytes(10_000))?;
    w.put("", b"wal/big", &rng.bytes(20_000))?;
    w.put("", b"wal/big", &rng.bytes(9_000))?;
    w.put("", b"wal/gone", &rng.bytes(15_000))?;
    w.delete("", b"wal/gone")?;
    w.create("media")?;
    w.put("media", b"photo", &rng.bytes(30_000))?;
    w.put("", b"wal/small", b"not separated")?;
    Ok(())
}

/// Uncompressed tables without filters, in two levels, plus WAL writes.
fn plain(w: &mut Writer<'_>, rng: &mut Rng) -> Result<(), BoxError> {
    for i in 0..100u32 {
        let v = rng.bytes(1 + (i % 50) as usize);
        w.put("", format!("p{i:03}").as_bytes(), &v)?;
    }
    w.add("", b"count", 7)?;
    w.db.flush()?;
    w.db.compact()?;
    for i in (0..100u32).step_by(3) {
        w.delete("", format!("p{i:03}").as_bytes())?;
    }
    w.add("", b"count", 8)?;
    w.put("", b"", b"")?;
    w.db.flush()?;
    w.put("", b"p001", b"from the wal")?;
    w.add("", b"count", 9)?;
    Ok(())
}

fn hex(b: &[u8]) -> String {
    b.iter().fold(String::new(), |mut s, x| {
        let _ = write!(s, "{x:02x}");
        s
    })
}

fn write_expectations(dir: &Path, db: &Db, model: &Model) -> Result<(), BoxError> {
    let mut tsv = String::from("# keyspace (empty: default)\tkey (hex)\tvalue (hex)\n");
    for (ks, map) in &model.spaces {
        for (k, v) in map {
            let _ = writeln!(tsv, "{ks}\t{}\t{}", hex(k), hex(v));
        }
    }
    std::fs::write(dir.join("expected.tsv"), tsv)?;
    let mut names: String = model
        .spaces
        .keys()
        .filter(|k| !k.is_empty())
        .map(|k| format!("{k}\n"))
        .collect();
    if names.is_empty() {
        names.push('\n');
    }
    std::fs::write(dir.join("keyspaces.txt"), names)?;
    // The shape as written, so the test can tell the fixture still holds
    // tables at level 0 and deeper when it is opened.
    let mut shape = String::from("# level\ttables\n");
    for l in db.stats().levels.iter().filter(|l| l.tables > 0) {
        let _ = writeln!(shape, "{}\t{}", l.level, l.tables);
    }
    std::fs::write(dir.join("shape.tsv"), shape)?;
    Ok(())
}

type Scenario = fn(&mut Writer<'_>, &mut Rng) -> Result<(), BoxError>;

fn main() -> Result<(), BoxError> {
    let out = std::env::args()
        .nth(1)
        .ok_or("usage: make_fixture OUT_DIR (a directory that does not exist yet)")?;
    let out = Path::new(&out);
    if out.exists() {
        return Err(format!(
            "{} exists: a committed fixture is never regenerated; name a new format directory",
            out.display()
        )
        .into());
    }
    let scenarios: [(&str, Options, Scenario); 3] = [
        (
            "mixed",
            Options {
                compression: Compression::Lz4,
                bottom_compression: Compression::Zstd,
                ..base_options()
            },
            mixed,
        ),
        (
            "plain",
            Options {
                compression: Compression::None,
                bottom_compression: Compression::None,
                bloom_bits_per_key: 0,
                ..base_options()
            },
            plain,
        ),
        ("wal_blobs", base_options(), wal_blobs),
    ];
    for (seed, (name, opts, scenario)) in scenarios.into_iter().enumerate() {
        let dir = out.join(name);
        std::fs::create_dir_all(&dir)?;
        let db = Db::open(dir.join("db"), opts)?;
        let mut w = Writer {
            db: &db,
            model: Model::default(),
        };
        w.model.create("");
        let mut rng = Rng(seed as u64 + 1);
        scenario(&mut w, &mut rng)?;
        write_expectations(&dir, &db, &w.model)?;
        db.close()?;
        println!("wrote {}", dir.display());
    }
    Ok(())
}
