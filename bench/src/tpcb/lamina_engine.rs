//! lamina: the `lamina` tool's options with `Durability::Sync` as the
//! default, so that `Db::transact` commits every transaction durably; a
//! `Conflict` it gives up on (after its 100 runs again) is run again here.

use super::{add, Engine, Sums, Txn, Worker, RECORD};
use crate::engine::{Batch, Db, Durability};
use std::path::Path;

/// Runs again `Db::transact` is given before it returns the conflict.
const RETRIES: usize = 100;

/// An open lamina database.
pub struct Lamina {
    db: Db,
}

fn err(e: lamina::Error) -> String {
    format!("lamina: {e}")
}

impl Lamina {
    /// Opens (creating) the database at `path`.
    pub fn open(path: &Path) -> Result<Lamina, String> {
        let mut opts = crate::engine::options().map_err(|e| e.message)?;
        opts.create_if_missing = true;
        opts.durability = Durability::Sync;
        let db = Db::open(path, opts).map_err(err)?;
        Ok(Lamina { db })
    }
}

impl Engine for Lamina {
    fn load(&self, rows: &[(Vec<u8>, [u8; RECORD])]) -> Result<(), String> {
        let mut b = Batch::new();
        for (k, v) in rows {
            b.put(k, v);
        }
        self.db.write_with(b, Durability::Sync).map_err(err)
    }

    fn worker(&self) -> Result<Box<dyn Worker + '_>, String> {
        Ok(Box::new(LaminaWorker { db: &self.db }))
    }

    fn sums(&self) -> Result<Sums, String> {
        let snap = self.db.snapshot();
        let mut sums = Sums::default();
        for e in snap.iter() {
            let (k, v) = e.map_err(err)?;
            sums.add(&k, &v)?;
        }
        Ok(sums)
    }

    fn fsyncs(&self) -> Option<u64> {
        Some(self.db.stats().wal_syncs)
    }

    fn close(self: Box<Self>) -> Result<(), String> {
        self.db.close().map_err(err)
    }
}

struct LaminaWorker<'a> {
    db: &'a Db,
}

impl Worker for LaminaWorker<'_> {
    fn run(&mut self, t: &Txn) -> Result<u64, String> {
        let mut runs = 0u64;
        loop {
            let done = self.db.transact_with(RETRIES, |tx| {
                runs += 1;
                for k in [&t.account, &t.branch, &t.teller] {
                    let v = tx.get(k)?;
                    let row = add(v.as_deref(), t.delta, "a row")
                        .map_err(lamina::Error::InvalidArgument)?;
                    tx.put(k, &row)?;
                }
                tx.put(&t.history, &t.history_row)
            });
            match done {
                Ok(()) => return Ok(runs - 1),
                Err(lamina::Error::Conflict(_)) => continue,
                Err(e) => return Err(err(e)),
            }
        }
    }
}
