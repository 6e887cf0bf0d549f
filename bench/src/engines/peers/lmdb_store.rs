//! LMDB through `heed`: default flags with `MDB_NOSYNC` (a commit writes its
//! pages to the file and does not sync), one write transaction per commit,
//! one read transaction per read workload.

use super::super::order::Key;
use super::super::store::{Config, Op, Store};
use heed::types::Bytes;
use heed::{CommitOrAbort, Database, Env, EnvFlags, EnvOpenOptions};
use std::path::Path;

/// An open LMDB environment and its one database.
pub struct LmdbStore {
    env: Env,
    db: Database<'static, Bytes, Bytes>,
}

fn err(e: heed::Error) -> String {
    format!("lmdb: {e}")
}

impl LmdbStore {
    /// Opens (creating) the environment in `path`.
    pub fn open(path: &Path, cfg: &Config) -> Result<LmdbStore, String> {
        let mut opts = EnvOpenOptions::new();
        opts.map_size(usize::try_from(super::lmdb_map_size(cfg)).map_err(|e| e.to_string())?);
        opts.max_dbs(1);
        // SAFETY: NO_SYNC only drops the fsync at commit; the environment is
        // opened once, by this process alone.
        let env = unsafe {
            opts.flags(EnvFlags::NO_SYNC);
            opts.open(path)
        }
        .map_err(err)?;
        let txn = env.write_txn().map_err(err)?;
        let db = env
            .create_databases_and_commit(txn, |opener, txn| {
                opener
                    .create_database(txn, None)
                    .map(CommitOrAbort::<_, ()>::Commit)
            })
            .map_err(err)?
            .unwrap_commit();
        Ok(LmdbStore { env, db })
    }
}

impl Store for LmdbStore {
    fn write(&mut self, ops: &[Op<'_>]) -> Result<(), String> {
        let mut txn = self.env.write_txn().map_err(err)?;
        for op in ops {
            match op.value {
                Some(v) => self.db.put(&mut txn, &op.key, v).map_err(err)?,
                None => {
                    self.db.delete(&mut txn, &op.key).map_err(err)?;
                }
            }
        }
        txn.commit().map_err(err)
    }

    fn gets(&mut self, keys: &mut dyn Iterator<Item = Key>) -> Result<(u64, u64), String> {
        let txn = self.env.read_txn().map_err(err)?;
        let (mut found, mut bytes) = (0, 0);
        for k in keys {
            if let Some(v) = self.db.get(&txn, &k).map_err(err)? {
                found += 1;
                bytes += v.len() as u64;
            }
        }
        Ok((found, bytes))
    }

    fn scan(&mut self) -> Result<(u64, u64), String> {
        let txn = self.env.read_txn().map_err(err)?;
        let (mut n, mut bytes) = (0, 0);
        for e in self.db.iter(&txn).map_err(err)? {
            let (k, v) = e.map_err(err)?;
            n += 1;
            bytes += (k.len() + v.len()) as u64;
        }
        Ok((n, bytes))
    }

    fn close(self: Box<Self>) -> Result<(), String> {
        let LmdbStore { env, .. } = *self;
        env.prepare_for_closing().wait();
        Ok(())
    }
}
