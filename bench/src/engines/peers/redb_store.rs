//! redb: default options with its cache set to lamina's budget; one write
//! transaction per commit at `Durability::None` (redb's only level short of
//! an fsync per commit, which keeps the commit in redb's own write buffer),
//! and at the end of each write workload one empty commit at
//! `Durability::Immediate`, timed, which writes that buffer to the file
//! (and syncs it): redb's only way to hand its commits to the OS. One read
//! transaction per read workload.

use super::super::order::Key;
use super::super::store::{Config, Op, Store};
use redb::{Database, Durability, ReadableDatabase, ReadableTable, TableDefinition};
use std::path::Path;

const TABLE: TableDefinition<&[u8], &[u8]> = TableDefinition::new("bench");

/// An open redb database.
pub struct RedbStore {
    db: Database,
}

fn err(e: impl std::fmt::Display) -> String {
    format!("redb: {e}")
}

impl RedbStore {
    /// Opens (creating) the database file `data.redb` in `path`.
    pub fn open(path: &Path, cfg: &Config) -> Result<RedbStore, String> {
        let db = Database::builder()
            .set_cache_size(usize::try_from(cfg.memory_budget).map_err(err)?)
            .create(path.join("data.redb"))
            .map_err(err)?;
        let txn = db.begin_write().map_err(err)?;
        txn.open_table(TABLE).map_err(err)?;
        txn.commit().map_err(err)?;
        Ok(RedbStore { db })
    }
}

impl Store for RedbStore {
    fn write(&mut self, ops: &[Op<'_>]) -> Result<(), String> {
        let mut txn = self.db.begin_write().map_err(err)?;
        txn.set_durability(Durability::None).map_err(err)?;
        {
            let mut table = txn.open_table(TABLE).map_err(err)?;
            for op in ops {
                match op.value {
                    Some(v) => {
                        table.insert(op.key.as_slice(), v).map_err(err)?;
                    }
                    None => {
                        table.remove(op.key.as_slice()).map_err(err)?;
                    }
                }
            }
        }
        txn.commit().map_err(err)
    }

    fn settle(&mut self) -> Result<(), String> {
        let mut txn = self.db.begin_write().map_err(err)?;
        txn.set_durability(Durability::Immediate).map_err(err)?;
        txn.commit().map_err(err)
    }

    fn gets(&mut self, keys: &mut dyn Iterator<Item = Key>) -> Result<(u64, u64), String> {
        let txn = self.db.begin_read().map_err(err)?;
        let table = txn.open_table(TABLE).map_err(err)?;
        let (mut found, mut bytes) = (0, 0);
        for k in keys {
            if let Some(v) = table.get(k.as_slice()).map_err(err)? {
                found += 1;
                bytes += v.value().len() as u64;
            }
        }
        Ok((found, bytes))
    }

    fn scan(&mut self) -> Result<(u64, u64), String> {
        let txn = self.db.begin_read().map_err(err)?;
        let table = txn.open_table(TABLE).map_err(err)?;
        let (mut n, mut bytes) = (0, 0);
        for e in table.iter().map_err(err)? {
            let (k, v) = e.map_err(err)?;
            n += 1;
            bytes += (k.value().len() + v.value().len()) as u64;
        }
        Ok((n, bytes))
    }

    fn close(self: Box<Self>) -> Result<(), String> {
        drop(self);
        Ok(())
    }
}
