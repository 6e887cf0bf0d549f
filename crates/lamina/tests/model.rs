//! Model-based tests: random operation sequences run against the database and
//! against a `BTreeMap` oracle, across configurations, with reopens,
//! simulated crashes and transactions (some of which must conflict). Each run prints its seed; set `LAMINA_MODEL_SEED` to
//! replay one, `LAMINA_MODEL_RUNS` / `LAMINA_MODEL_OPS` to run longer.

use lamina::fs::MemFs;
use lamina::{Batch, Db, Durability, Error, IngestOptions, Options, Snapshot, TableWriter};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

#[derive(Clone, Copy, Debug)]
enum Config {
    Tiny,
    Small,
    Default,
    Blobs,
    TinyBudget,
}

fn options(config: Config, fs: &MemFs) -> Options {
    let base = Options {
        fs: Arc::new(fs.clone()),
        ..Options::default()
    };
    match config {
        Config::Tiny => Options {
            memtable_size: 4 << 10,
            block_size: 128,
            l0_compaction_trigger: 2,
            l0_slowdown_trigger: 6,
            l0_stop_trigger: 10,
            level_base_size: 16 << 10,
            level_multiplier: 4,
            target_table_size: 8 << 10,
            cache_size: 64 << 10,
            max_open_tables: 8,
            ..base
        },
        Config::Small => Options {
            memtable_size: 32 << 10,
            block_size: 1024,
            level_base_size: 128 << 10,
            target_table_size: 32 << 10,
            compression: lamina::Compression::Zstd,
            bloom_bits_per_key: 0,
            ..base
        },
        Config::Default => base,
        // The smallest memory budget: memtables and cache derived from it,
        // memtables and tables charged to a cache of a few hundred KiB.
        Config::TinyBudget => Options {
            memory_budget: 256 << 10,
            l0_compaction_trigger: 2,
            l0_slowdown_trigger: 3,
            l0_stop_trigger: 6,
            level_base_size: 16 << 10,
            level_multiplier: 4,
            target_table_size: 8 << 10,
            ..base
        },
        // Most values in blob files, tiny memtables so flushes, compactions
        // and blob collections never stop.
        Config::Blobs => Options {
            memtable_size: 4 << 10,
            block_size: 256,
            l0_compaction_trigger: 2,
            level_base_size: 16 << 10,
            level_multiplier: 4,
            target_table_size: 8 << 10,
            blob_threshold: 16,
            blob_gc_ratio: 0.3,
            ..base
        },
    }
}

fn key(rng: &mut StdRng) -> Vec<u8> {
    if rng.gen_bool(0.2) {
        format!("c{:03}", rng.gen_range(0..20)).into_bytes()
    } else {
        format!("k{:04}", rng.gen_range(0..300)).into_bytes()
    }
}

fn value(rng: &mut StdRng) -> Vec<u8> {
    let len = if rng.gen_bool(0.05) {
        rng.gen_range(200..3000)
    } else {
        rng.gen_range(0..40)
    };
    (0..len).map(|_| rng.gen()).collect()
}

fn is_counter(k: &[u8]) -> bool {
    k.first() == Some(&b'c')
}

fn add(model: &mut Model, k: &[u8], n: u64) {
    let old = model
        .get(k)
        .map(|v| u64::from_le_bytes(v.as_slice().try_into().expect("counter")))
        .unwrap_or(0);
    model.insert(k.to_vec(), old.wrapping_add(n).to_le_bytes().to_vec());
}

/// The first few keys missing from, added to and changed in `got` against `want`.
fn diff(want: &Model, got: &Model) -> String {
    let show = |k: &Vec<u8>| String::from_utf8_lossy(k).into_owned();
    let missing: Vec<_> = want
        .keys()
        .filter(|k| !got.contains_key(*k))
        .take(5)
        .map(show)
        .collect();
    let extra: Vec<_> = got
        .keys()
        .filter(|k| !want.contains_key(*k))
        .take(5)
        .map(show)
        .collect();
    let wrong: Vec<_> = got
        .iter()
        .filter(|(k, v)| want.get(*k).is_some_and(|m| m != *v))
        .take(5)
        .map(|(k, _)| show(k))
        .collect();
    format!("missing {missing:?}, extra {extra:?}, wrong {wrong:?}")
}

fn random_bound(rng: &mut StdRng) -> Bound<Vec<u8>> {
    match rng.gen_range(0..3) {
        0 => Bound::Unbounded,
        1 => Bound::Included(key(rng)),
        _ => Bound::Excluded(key(rng)),
    }
}

fn model_range(model: &Model, lo: &Bound<Vec<u8>>, hi: &Bound<Vec<u8>>) -> Vec<(Vec<u8>, Vec<u8>)> {
    let bad = match (lo, hi) {
        (Bound::Included(a) | Bound::Excluded(a), Bound::Included(b) | Bound::Excluded(b)) => {
            a > b
                || (a == b
                    && (matches!(lo, Bound::Excluded(_)) || matches!(hi, Bound::Excluded(_))))
        }
        _ => false,
    };
    if bad {
        return Vec::new();
    }
    model
        .range::<Vec<u8>, _>((lo.clone(), hi.clone()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

struct Run {
    rng: StdRng,
    fs: MemFs,
    config: Config,
    db: Option<Db>,
    model: Model,
    /// Models since the last point where everything was durable, oldest
    /// first; after a crash the database must equal one of them.
    since_sync: Vec<Model>,
    snapshots: Vec<(Snapshot, Model)>,
    log: Vec<String>,
}

const PATH: &str = "/db";

impl Run {
    fn db(&self) -> &Db {
        self.db.as_ref().expect("open")
    }

    fn open(&mut self) {
        self.db = Some(Db::open(Path::new(PATH), options(self.config, &self.fs)).expect("open"));
    }

    fn durable_now(&mut self) {
        self.since_sync = vec![self.model.clone()];
    }

    fn wrote(&mut self, d: Durability) {
        if d == Durability::Sync {
            self.durable_now();
        } else {
            self.since_sync.push(self.model.clone());
        }
    }

    fn durability(&mut self) -> Durability {
        match self.rng.gen_range(0..10) {
            0 => Durability::Sync,
            1..=2 => Durability::None,
            _ => Durability::Os,
        }
    }

    fn step(&mut self) {
        let op = self.rng.gen_range(0..108);
        match op {
            0..=29 => {
                let k = key(&mut self.rng);
                let v = if is_counter(&k) {
                    self.rng.gen::<u64>().to_le_bytes().to_vec()
                } else {
                    value(&mut self.rng)
                };
                let d = self.durability();
                self.log.push(format!(
                    "put {:?} {}B {d:?}",
                    String::from_utf8_lossy(&k),
                    v.len()
                ));
                let mut b = Batch::new();
                b.put(&k, &v);
                self.db().write_with(b, d).expect("put");
                self.model.insert(k, v);
                self.wrote(d);
            }
            30..=39 => {
                let k = key(&mut self.rng);
                let d = self.durability();
                self.log
                    .push(format!("delete {:?} {d:?}", String::from_utf8_lossy(&k)));
                let mut b = Batch::new();
                b.delete(&k);
                self.db().write_with(b, d).expect("delete");
                self.model.remove(&k);
                self.wrote(d);
            }
            40..=47 => {
                let k = format!("c{:03}", self.rng.gen_range(0..20)).into_bytes();
                let n = self.rng.gen_range(0..1000u64);
                let d = self.durability();
                self.log.push(format!(
                    "merge {:?} +{n} {d:?}",
                    String::from_utf8_lossy(&k)
                ));
                let mut b = Batch::new();
                b.merge(&k, &n.to_le_bytes());
                self.db().write_with(b, d).expect("merge");
                add(&mut self.model, &k, n);
                self.wrote(d);
            }
            48..=53 => {
                let n = self.rng.gen_range(1..20);
                let d = self.durability();
                self.log.push(format!("batch of {n} {d:?}"));
                let mut b = Batch::new();
                for _ in 0..n {
                    let k = key(&mut self.rng);
                    if is_counter(&k) {
                        let x = self.rng.gen_range(0..10u64);
                        b.merge(&k, &x.to_le_bytes());
                        add(&mut self.model, &k, x);
                    } else if self.rng.gen_bool(0.3) {
                        b.delete(&k);
                        self.model.remove(&k);
                    } else {
                        let v = value(&mut self.rng);
                        b.put(&k, &v);
                        self.model.insert(k, v);
                    }
                }
                self.db().write_with(b, d).expect("batch");
                self.wrote(d);
            }
            54..=69 => {
                let k = key(&mut self.rng);
                let got = self.db().get(&k).expect("get");
                assert_eq!(
                    got.as_ref(),
                    self.model.get(&k),
                    "get {:?}",
                    String::from_utf8_lossy(&k)
                );
            }
            70..=77 => {
                let (lo, hi) = (random_bound(&mut self.rng), random_bound(&mut self.rng));
                let reverse = self.rng.gen_bool(0.4);
                self.log
                    .push(format!("range {lo:?}..{hi:?} reverse={reverse}"));
                let mut want = model_range(&self.model, &lo, &hi);
                let it = self.db().range::<Vec<u8>, _>((lo, hi));
                let got: Vec<_> = if reverse {
                    want.reverse();
                    it.rev().collect::<Result<_, _>>().expect("range")
                } else {
                    it.collect::<Result<_, _>>().expect("range")
                };
                assert_eq!(got.len(), want.len(), "range length");
                assert!(got == want, "range contents differ");
            }
            78..=80 => {
                self.log.push("snapshot".into());
                let s = self.db().snapshot();
                self.snapshots.push((s, self.model.clone()));
                if self.snapshots.len() > 3 {
                    self.snapshots.remove(0);
                }
            }
            81..=84 => {
                if let Some((s, m)) = self.snapshots.first() {
                    let got: Model = s.iter().collect::<Result<_, _>>().expect("snapshot iter");
                    assert!(got == *m, "snapshot at {} differs", s.seqno());
                }
            }
            85..=87 => {
                self.log.push("flush".into());
                self.db().flush().expect("flush");
                self.durable_now();
            }
            88..=89 => {
                self.log.push("compact".into());
                self.db().compact().expect("compact");
                self.durable_now();
            }
            90..=91 => {
                self.log.push("sync".into());
                self.db().sync().expect("sync");
                self.durable_now();
            }
            92..=94 => {
                self.log.push(format!(
                    "reopen; files before: {:?}",
                    self.fs.file_names(Path::new(PATH))
                ));
                self.snapshots.clear();
                self.db().close().expect("close");
                self.db = None;
                self.open();
                self.durable_now();
                self.check_all("after reopen");
            }
            100..=103 => self.ingest(),
            104..=107 => self.transaction(),
            _ => {
                let seed = self.rng.gen::<u64>();
                self.log.push(format!("crash (seed {seed})"));
                self.snapshots.clear();
                let crashed = if self.rng.gen_bool(0.5) {
                    self.fs.crash_clone()
                } else {
                    self.fs.crash_clone_with(seed)
                };
                let old = self.db.take().expect("open");
                self.fs = crashed;
                self.open();
                let got: Model = self
                    .db()
                    .iter()
                    .collect::<Result<_, _>>()
                    .expect("iter after crash");
                let Some(i) = self.since_sync.iter().position(|m| *m == got) else {
                    let first = self.since_sync.first().expect("a durable state");
                    panic!(
                        "after a crash the database matches no state since the last sync ({} candidates, {} keys); \
                         against the synced state: {}; files {:?}",
                        self.since_sync.len(),
                        got.len(),
                        diff(first, &got),
                        self.fs.file_names(Path::new(PATH))
                    );
                };
                self.model = self.since_sync.swap_remove(i);
                self.durable_now();
                self.check_all("after crash");
                drop(old);
            }
        }
    }

    /// Writes one to three tables of random sorted non-counter keys (they
    /// may overlap each other) and ingests them; a later file wins.
    /// A transaction of a few reads (checked against the model with its
    /// own writes), writes and perhaps a range; sometimes a plain write to
    /// a key it read comes before its commit, which must then conflict.
    fn transaction(&mut self) {
        let d = self.durability();
        let db = self.db().clone();
        let mut tx = db.transaction();
        let mut view = self.model.clone();
        // A key read from the snapshot (one the transaction had put or
        // deleted first is read from its own writes: no conflict).
        let mut read = None;
        let mut own = std::collections::BTreeSet::new();
        for _ in 0..self.rng.gen_range(1..8) {
            let k = key(&mut self.rng);
            match self.rng.gen_range(0..5) {
                0 => {
                    self.log
                        .push(format!("  tx get {:?}", String::from_utf8_lossy(&k)));
                    let got = tx.get(&k).expect("transaction get");
                    assert_eq!(got.as_ref(), view.get(&k), "transaction get");
                    if !own.contains(&k) {
                        read = Some(k);
                    }
                }
                1 => {
                    self.log
                        .push(format!("  tx delete {:?}", String::from_utf8_lossy(&k)));
                    tx.delete(&k).expect("transaction delete");
                    view.remove(&k);
                    own.insert(k);
                }
                2 if is_counter(&k) => {
                    let x = self.rng.gen_range(0..10u64);
                    self.log
                        .push(format!("  tx merge {:?}", String::from_utf8_lossy(&k)));
                    tx.merge(&k, &x.to_le_bytes()).expect("transaction merge");
                    add(&mut view, &k, x);
                }
                _ => {
                    let v = if is_counter(&k) {
                        self.rng.gen::<u64>().to_le_bytes().to_vec()
                    } else {
                        value(&mut self.rng)
                    };
                    self.log
                        .push(format!("  tx put {:?}", String::from_utf8_lossy(&k)));
                    tx.put(&k, &v).expect("transaction put");
                    view.insert(k.clone(), v);
                    own.insert(k);
                }
            }
        }
        if self.rng.gen_bool(0.3) {
            let (lo, hi) = (random_bound(&mut self.rng), random_bound(&mut self.rng));
            let want = model_range(&view, &lo, &hi);
            let got: Vec<_> = tx
                .range::<Vec<u8>, _>((lo, hi))
                .collect::<Result<_, _>>()
                .expect("transaction range");
            assert!(got == want, "transaction range differs");
        }
        let interfere = read.filter(|_| self.rng.gen_bool(0.2));
        let read_only = tx.is_read_only();
        let conflict = interfere.is_some() && !read_only;
        self.log.push(format!(
            "transaction {d:?}, {} a read key written before its commit",
            if interfere.is_some() {
                "with"
            } else {
                "without"
            }
        ));
        if let Some(k) = interfere {
            let v = if is_counter(&k) {
                7u64.to_le_bytes().to_vec()
            } else {
                b"plain".to_vec()
            };
            let plain = self.durability();
            let mut b = Batch::new();
            b.put(&k, &v);
            self.db().write_with(b, plain).expect("plain put");
            self.model.insert(k, v);
            self.wrote(plain);
        }
        match tx.commit_with(d) {
            Err(Error::Conflict(_)) if conflict => {}
            // A read-only transaction writes nothing, whatever changed.
            Ok(()) if read_only => {}
            Ok(()) if !conflict => {
                self.model = view;
                self.wrote(d);
            }
            other => panic!("transaction commit (conflict expected: {conflict}): {other:?}"),
        }
    }

    fn ingest(&mut self) {
        let files = self.rng.gen_range(1..=3);
        let dir = Path::new("/ingest");
        lamina::fs::FileSystem::create_dir_all(&self.fs, dir).expect("mkdir");
        let mut paths = Vec::new();
        let mut applied = Vec::new();
        for f in 0..files {
            let n = self.rng.gen_range(1..60);
            let entries: BTreeMap<Vec<u8>, Vec<u8>> = (0..n)
                .map(|_| {
                    let k = format!("k{:04}", self.rng.gen_range(0..300)).into_bytes();
                    (k, value(&mut self.rng))
                })
                .collect();
            let path = dir.join(format!("{}-{f}.sst", self.log.len()));
            let opts = lamina::TableWriterOptions {
                fs: Arc::new(self.fs.clone()),
                block_size: 256,
                ..Default::default()
            };
            let mut w = TableWriter::create(&path, opts).expect("table writer");
            for (k, v) in &entries {
                w.put(k, v).expect("writer put");
            }
            w.finish().expect("writer finish");
            paths.push(path);
            applied.push(entries);
        }
        self.log.push(format!(
            "ingest {:?}",
            applied.iter().map(BTreeMap::len).collect::<Vec<_>>()
        ));
        self.db()
            .ingest(&paths, IngestOptions { move_files: true })
            .expect("ingest");
        for entries in applied {
            self.model.extend(entries);
        }
        self.durable_now();
    }

    fn check_all(&self, when: &str) {
        let got: Model = self.db().iter().collect::<Result<_, _>>().expect("iter");
        if got != self.model {
            panic!(
                "contents differ {when}: {}; files {:?}",
                diff(&self.model, &got),
                self.fs.file_names(Path::new(PATH))
            );
        }
        let back: Vec<_> = self
            .db()
            .iter()
            .rev()
            .collect::<Result<_, _>>()
            .expect("iter rev");
        assert!(
            back.iter().rev().cloned().eq(self.model.clone()),
            "reverse contents differ {when}"
        );
    }
}

fn run(seed: u64, config: Config, ops: usize) {
    let mut r = Run {
        rng: StdRng::seed_from_u64(seed),
        fs: MemFs::new(),
        config,
        db: None,
        model: Model::new(),
        since_sync: vec![Model::new()],
        snapshots: Vec::new(),
        log: Vec::new(),
    };
    r.open();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        for _ in 0..ops {
            r.step();
        }
        r.check_all("at the end");
        let report = r.db().check().expect("check");
        assert!(report.is_ok(), "check: {:?}", report.problems);
    }));
    if let Err(e) = result {
        let tail: Vec<_> = r.log.iter().rev().take(15).rev().collect();
        eprintln!("model run failed: seed {seed} config {config:?}; last ops: {tail:#?}");
        std::panic::resume_unwind(e);
    }
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn runs(config: Config) {
    let ops = env("LAMINA_MODEL_OPS", 1500) as usize;
    if let Ok(s) = std::env::var("LAMINA_MODEL_SEED") {
        let seed = s.parse().expect("LAMINA_MODEL_SEED is a number");
        run(seed, config, ops);
        return;
    }
    // CI replays the same seeds every run; elsewhere each run explores new ones.
    let base: u64 = if std::env::var_os("CI").is_some() {
        0x1a31_2a00
    } else {
        rand::thread_rng().gen()
    };
    for i in 0..env("LAMINA_MODEL_RUNS", 3) {
        let seed = base.wrapping_add(i);
        println!("model run: seed {seed} config {config:?}");
        run(seed, config, ops);
    }
}

#[test]
fn model_tiny_memtables_and_blocks() {
    runs(Config::Tiny);
}

#[test]
fn model_small_zstd_without_filters() {
    runs(Config::Small);
}

#[test]
fn model_small_blob_threshold() {
    runs(Config::Blobs);
}

#[test]
fn model_default_settings() {
    runs(Config::Default);
}

#[test]
fn model_tiny_memory_budget() {
    runs(Config::TinyBudget);
}
