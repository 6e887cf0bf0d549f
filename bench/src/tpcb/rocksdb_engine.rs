//! RocksDB's `TransactionDB` (pessimistic, its default) through the
//! `rocksdb` crate: default options and `TransactionDBOptions` (a lock
//! waits up to 1 s), writes with `sync=true`. Each transaction locks the
//! account, branch and teller with `get_for_update` (exclusive) in that
//! order, puts them and the history row, and commits; `Busy`, `TimedOut`
//! and `TryAgain` are conflicts, rolled back and run again.

use super::{add, Engine, Sums, Txn, Worker, RECORD};
use rocksdb::{
    ErrorKind, Options, TransactionDB, TransactionDBOptions, TransactionOptions, WriteOptions,
};
use std::path::Path;

/// An open `TransactionDB`.
pub struct Rocks {
    db: TransactionDB,
    wo: WriteOptions,
}

fn err(e: &rocksdb::Error) -> String {
    format!("rocksdb: {e}")
}

/// Whether `e` means "run the transaction again".
fn is_conflict(e: &rocksdb::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::Busy | ErrorKind::TimedOut | ErrorKind::TryAgain
    )
}

impl Rocks {
    /// Opens (creating) the database in `path`.
    pub fn open(path: &Path) -> Result<Rocks, String> {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        let db = TransactionDB::open(&opts, &TransactionDBOptions::default(), path)
            .map_err(|e| err(&e))?;
        let mut wo = WriteOptions::default();
        wo.set_sync(true);
        Ok(Rocks { db, wo })
    }
}

impl Engine for Rocks {
    fn load(&self, rows: &[(Vec<u8>, [u8; RECORD])]) -> Result<(), String> {
        let tx = self
            .db
            .transaction_opt(&self.wo, &TransactionOptions::default());
        for (k, v) in rows {
            tx.put(k, v).map_err(|e| err(&e))?;
        }
        tx.commit().map_err(|e| err(&e))
    }

    fn worker(&self) -> Result<Box<dyn Worker + '_>, String> {
        Ok(Box::new(RocksWorker { r: self }))
    }

    fn sums(&self) -> Result<Sums, String> {
        let mut sums = Sums::default();
        let mut it = self.db.raw_iterator();
        it.seek_to_first();
        while it.valid() {
            if let (Some(k), Some(v)) = (it.key(), it.value()) {
                sums.add(k, v)?;
            }
            it.next();
        }
        it.status().map_err(|e| err(&e))?;
        Ok(sums)
    }

    fn close(self: Box<Self>) -> Result<(), String> {
        drop(self);
        Ok(())
    }
}

struct RocksWorker<'a> {
    r: &'a Rocks,
}

impl RocksWorker<'_> {
    /// One attempt: Ok(true) committed, Ok(false) a conflict.
    fn attempt(&self, t: &Txn) -> Result<bool, String> {
        let tx = self
            .r
            .db
            .transaction_opt(&self.r.wo, &TransactionOptions::default());
        // Err: RocksDB's error; Ok(Err): a row missing or malformed.
        let body = || -> Result<Result<(), String>, rocksdb::Error> {
            for k in [&t.account, &t.branch, &t.teller] {
                let v = tx.get_for_update(k, true)?;
                match add(v.as_deref(), t.delta, "a row") {
                    Ok(row) => tx.put(k, row)?,
                    Err(m) => return Ok(Err(m)),
                }
            }
            tx.put(t.history, t.history_row).map(Ok)
        };
        match body() {
            Ok(Ok(())) => {}
            Ok(Err(m)) => {
                let _ = tx.rollback();
                return Err(format!("rocksdb: {m}"));
            }
            Err(e) if is_conflict(&e) => {
                let _ = tx.rollback();
                return Ok(false);
            }
            Err(e) => return Err(err(&e)),
        }
        match tx.commit() {
            Ok(()) => Ok(true),
            Err(e) if is_conflict(&e) => Ok(false),
            Err(e) => Err(err(&e)),
        }
    }
}

impl Worker for RocksWorker<'_> {
    fn run(&mut self, t: &Txn) -> Result<u64, String> {
        let mut conflicts = 0;
        while !self.attempt(t)? {
            conflicts += 1;
        }
        Ok(conflicts)
    }
}
