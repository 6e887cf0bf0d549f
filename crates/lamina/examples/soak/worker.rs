//! The process that gets killed: writer threads running random operations,
//! each on its own keys, journaling every batch before and after writing it
//! and checking every read against its own model.

use crate::journal::{Journal, Op};
use crate::model::{apply, differences, Model};
use crate::store::{keyspace, options, prefix, read_thread, KEYSPACE};
use lamina::{Batch, Db, Keyspace};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::path::Path;

/// Runs `threads` writers against the database in `dir` until killed.
pub fn run(dir: &Path, seed: u64, threads: usize) -> ! {
    let db = match Db::open(dir.join("db"), options()) {
        Ok(db) => db,
        Err(e) => fail(dir, &format!("open: {e}")),
    };
    let soak = match db.open_keyspace(KEYSPACE) {
        Ok(ks) => ks,
        Err(e) => fail(dir, &format!("keyspace: {e}")),
    };
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (db, soak, dir) = (db.clone(), soak.clone(), dir.to_path_buf());
            std::thread::spawn(move || {
                let journal = match Journal::create(&dir.join(format!("journal-{t}"))) {
                    Ok(j) => j,
                    Err(e) => fail(&dir, &format!("journal: {e}")),
                };
                let rng = StdRng::seed_from_u64(seed ^ (t as u64).wrapping_mul(0x9E37_79B9));
                Writer::new(db, soak, t, journal, rng).run();
            })
        })
        .collect();
    for h in handles {
        let _ = h.join();
    }
    // Every writer stopped on an error it journaled; wait to be killed.
    loop {
        std::thread::park();
    }
}

/// Journals a failure to open (thread "-") and waits to be killed.
fn fail(dir: &Path, what: &str) -> ! {
    if let Ok(mut j) = Journal::create(&dir.join("journal-open")) {
        j.difference(what);
    }
    loop {
        std::thread::park();
    }
}

struct Writer {
    db: Db,
    soak: Keyspace,
    t: usize,
    journal: Journal,
    rng: StdRng,
    model: Model,
    next: u64,
    reads: u64,
}

impl Writer {
    fn new(db: Db, soak: Keyspace, t: usize, journal: Journal, rng: StdRng) -> Writer {
        Writer {
            db,
            soak,
            t,
            journal,
            rng,
            model: Model::new(),
            next: 0,
            reads: 0,
        }
    }

    fn run(mut self) {
        match read_thread(&self.db, &self.soak, self.t) {
            Ok(m) => self.model = m,
            Err(e) => {
                return self
                    .journal
                    .difference(&format!("thread {}: read: {e}", self.t))
            }
        }
        loop {
            let r = match self.rng.gen_range(0..100) {
                0..=34 => self.write(1),
                35..=54 => {
                    let n = self.rng.gen_range(2..8);
                    self.write(n)
                }
                55..=74 => self.check_get(),
                75..=84 => self.check_scan(),
                85..=94 => self.check_snapshot(),
                95..=98 => self.check_reverse_scan(),
                _ => self.db.flush().map_err(|e| format!("flush: {e}")),
            };
            if let Err(e) = r {
                return self.journal.difference(&format!("thread {}: {e}", self.t));
            }
        }
    }

    fn key(&mut self) -> (u8, Vec<u8>, bool) {
        let ks = self.rng.gen_range(0..2u8);
        let counter = self.rng.gen_bool(0.2);
        let k = if counter {
            format!("t{}/c{:02}", self.t, self.rng.gen_range(0..20))
        } else {
            format!("t{}/k{:04}", self.t, self.rng.gen_range(0..400))
        };
        (ks, k.into_bytes(), counter)
    }

    fn op(&mut self) -> Op {
        let (ks, k, counter) = self.key();
        match self.rng.gen_range(0..10) {
            0..=1 => Op::Delete(ks, k),
            2..=4 if counter => Op::Merge(ks, k, self.rng.gen_range(1..1000)),
            _ if counter => Op::Put(ks, k, self.rng.gen::<u64>().to_le_bytes().to_vec()),
            _ => {
                let len = if self.rng.gen_bool(0.05) {
                    self.rng.gen_range(1000..20_000)
                } else {
                    self.rng.gen_range(0..100)
                };
                let v = (0..len).map(|_| self.rng.gen()).collect();
                Op::Put(ks, k, v)
            }
        }
    }

    /// Journals, writes and acknowledges a batch of `n` random operations.
    fn write(&mut self, n: usize) -> Result<(), String> {
        let ops: Vec<Op> = (0..n).map(|_| self.op()).collect();
        let mut batch = Batch::new();
        for op in &ops {
            match op {
                Op::Put(ks, k, v) => batch.put_in(&keyspace(&self.db, &self.soak, *ks), k, v),
                Op::Delete(ks, k) => batch.delete_in(&keyspace(&self.db, &self.soak, *ks), k),
                Op::Merge(ks, k, x) => {
                    batch.merge_in(&keyspace(&self.db, &self.soak, *ks), k, &x.to_le_bytes())
                }
            }
        }
        self.journal.intent(self.next, &ops);
        self.db.write(batch).map_err(|e| format!("write: {e}"))?;
        self.journal.ack(self.next, std::mem::take(&mut self.reads));
        self.next += 1;
        apply(&mut self.model, &ops);
        Ok(())
    }

    fn check_get(&mut self) -> Result<(), String> {
        let (ks, k, _) = self.key();
        let got = keyspace(&self.db, &self.soak, ks)
            .get(&k)
            .map_err(|e| format!("get: {e}"))?;
        let want = self.model.get(&(ks, k.clone()));
        if got.as_ref() != want {
            self.journal.difference(&format!(
                "thread {}: get {:?} in keyspace {ks}: expected {:?}, found {:?}",
                self.t,
                String::from_utf8_lossy(&k),
                want.map(Vec::len),
                got.map(|v| v.len())
            ));
        }
        self.reads += 1;
        Ok(())
    }

    fn check_scan(&mut self) -> Result<(), String> {
        let got = read_thread(&self.db, &self.soak, self.t).map_err(|e| format!("scan: {e}"))?;
        self.compare("scan", &got);
        Ok(())
    }

    fn check_reverse_scan(&mut self) -> Result<(), String> {
        let mut got = Model::new();
        for ks in [0u8, 1] {
            for e in keyspace(&self.db, &self.soak, ks)
                .prefix(&prefix(self.t))
                .rev()
            {
                let (k, v) = e.map_err(|e| format!("reverse scan: {e}"))?;
                got.insert((ks, k), v);
            }
        }
        self.compare("reverse scan", &got);
        Ok(())
    }

    /// Takes a snapshot, writes over it, and reads the snapshot.
    fn check_snapshot(&mut self) -> Result<(), String> {
        let snap = self.db.snapshot();
        let before = self.model.clone();
        let n = self.rng.gen_range(1..6);
        self.write(n)?;
        let mut got = Model::new();
        for ks in [0u8, 1] {
            let iter = if ks == 0 {
                snap.prefix(&prefix(self.t))
            } else {
                snap.prefix_in(&self.soak, &prefix(self.t))
            };
            for e in iter {
                let (k, v) = e.map_err(|e| format!("snapshot scan: {e}"))?;
                got.insert((ks, k), v);
            }
        }
        for d in differences(&before, &got, 3) {
            self.journal
                .difference(&format!("thread {}: snapshot read: {d}", self.t));
        }
        self.reads += 1;
        Ok(())
    }

    fn compare(&mut self, what: &str, got: &Model) {
        for d in differences(&self.model, got, 3) {
            self.journal
                .difference(&format!("thread {}: {what}: {d}", self.t));
        }
        self.reads += 1;
    }
}
