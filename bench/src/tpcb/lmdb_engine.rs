//! LMDB through `heed`: default flags, so every write transaction's commit
//! writes its pages and syncs the file (LMDB's durable default); one write
//! transaction per TPC-B transaction. LMDB admits one writer at a time (a
//! mutex held from `write_txn` to the commit): it never conflicts.

use super::{add, Engine, Scale, Sums, Txn, Worker, RECORD};
use heed::types::Bytes;
use heed::{CommitOrAbort, Database, Env, EnvOpenOptions};
use std::path::Path;

/// An open LMDB environment and its one database.
pub struct Lmdb {
    env: Env,
    db: Database<'static, Bytes, Bytes>,
}

fn err(e: heed::Error) -> String {
    format!("lmdb: {e}")
}

/// The map size: 1 GiB plus four times the rows loaded (address space only).
pub fn map_size(scale: Scale) -> usize {
    let rows = u64::from(scale.accounts) + u64::from(scale.tellers) + u64::from(scale.branches);
    let bytes = (rows * 4 * 128 + (1 << 30)).next_multiple_of(1 << 30);
    usize::try_from(bytes).unwrap_or(usize::MAX)
}

impl Lmdb {
    /// Opens (creating) the environment in `path`.
    pub fn open(path: &Path, scale: Scale) -> Result<Lmdb, String> {
        let mut opts = EnvOpenOptions::new();
        opts.map_size(map_size(scale));
        opts.max_dbs(1);
        // SAFETY: the environment is opened once, by this process alone.
        let env = unsafe { opts.open(path) }.map_err(err)?;
        let txn = env.write_txn().map_err(err)?;
        let db = env
            .create_databases_and_commit(txn, |opener, txn| {
                opener
                    .create_database(txn, None)
                    .map(CommitOrAbort::<_, ()>::Commit)
            })
            .map_err(err)?
            .unwrap_commit();
        Ok(Lmdb { env, db })
    }
}

impl Engine for Lmdb {
    fn load(&self, rows: &[(Vec<u8>, [u8; RECORD])]) -> Result<(), String> {
        let mut txn = self.env.write_txn().map_err(err)?;
        for (k, v) in rows {
            self.db.put(&mut txn, k, v).map_err(err)?;
        }
        txn.commit().map_err(err)
    }

    fn worker(&self) -> Result<Box<dyn Worker + '_>, String> {
        Ok(Box::new(LmdbWorker { l: self }))
    }

    fn sums(&self) -> Result<Sums, String> {
        let txn = self.env.read_txn().map_err(err)?;
        let mut sums = Sums::default();
        for e in self.db.iter(&txn).map_err(err)? {
            let (k, v) = e.map_err(err)?;
            sums.add(k, v)?;
        }
        Ok(sums)
    }

    fn close(self: Box<Self>) -> Result<(), String> {
        let Lmdb { env, .. } = *self;
        env.prepare_for_closing().wait();
        Ok(())
    }
}

struct LmdbWorker<'a> {
    l: &'a Lmdb,
}

impl Worker for LmdbWorker<'_> {
    fn run(&mut self, t: &Txn) -> Result<u64, String> {
        let (env, db) = (&self.l.env, self.l.db);
        let mut txn = env.write_txn().map_err(err)?;
        for k in [&t.account, &t.branch, &t.teller] {
            let row = add(db.get(&txn, k).map_err(err)?, t.delta, "a row")?;
            db.put(&mut txn, k, &row).map_err(err)?;
        }
        db.put(&mut txn, &t.history, &t.history_row).map_err(err)?;
        txn.commit().map_err(err)?;
        Ok(0)
    }
}
