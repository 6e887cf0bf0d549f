//! LMDB (through `heed`) under `lamina-bench scale-reads`. The load: the
//! unnamed database, records put in key order with `MDB_APPEND` (LMDB's
//! fastest path for sorted input: pages filled, never split), a commit
//! every million records; map size twice the data's largest size plus 1
//! GiB (address space only). The lookups: the environment opened with
//! `MDB_RDONLY` and `MDB_NORDAHEAD` (no readahead on its memory map, so a
//! page fault reads one page); one read transaction per thread, `get` in a
//! loop for a batch. LMDB has no cache of its own: its pages are the OS
//! page cache's, within the cap.

use super::{Engine, Load, Reader};
use heed::types::Bytes;
use heed::{CommitOrAbort, Database, Env, EnvFlags, EnvOpenOptions, PutFlags, RoTxn, WithTls};
use std::path::Path;

type Db = Database<'static, Bytes, Bytes>;

/// Records put per write transaction of the load.
const RECORDS_PER_COMMIT: u64 = 1_000_000;

fn err(e: heed::Error) -> String {
    format!("lmdb: {e}")
}

/// Loads the records into a new environment in `dir`.
pub fn build(dir: &Path, load: &mut Load) -> Result<(), String> {
    let map_size = (load.max_bytes().saturating_mul(2) + (1 << 30)).next_multiple_of(1 << 30);
    let mut opts = EnvOpenOptions::new();
    opts.map_size(usize::try_from(map_size).map_err(|_| "lmdb: map size too large")?);
    // SAFETY: the environment is opened once, by this process alone.
    let env = unsafe { opts.open(dir) }.map_err(err)?;
    let txn = env.write_txn().map_err(err)?;
    let db: Db = env
        .create_databases_and_commit(txn, |opener, txn| {
            opener
                .create_database(txn, None)
                .map(CommitOrAbort::<_, ()>::Commit)
        })
        .map_err(err)?
        .unwrap_commit();
    let mut txn = Some(env.write_txn().map_err(err)?);
    let mut in_txn = 0u64;
    load.for_each(&mut |k, v| {
        if in_txn == RECORDS_PER_COMMIT {
            if let Some(full) = txn.take() {
                full.commit().map_err(err)?;
            }
            txn = Some(env.write_txn().map_err(err)?);
            in_txn = 0;
        }
        in_txn += 1;
        match &mut txn {
            Some(t) => db.put_with_flags(t, PutFlags::APPEND, k, v).map_err(err),
            None => Err("lmdb: no write transaction".to_string()),
        }
    })?;
    match txn {
        // Every commit is synced (the default flags); the environment is
        // closed when it is dropped.
        Some(last) => last.commit().map_err(err),
        None => Ok(()),
    }
}

/// The environment in `dir`, opened read-only.
pub struct LmdbEngine {
    env: Env,
    db: Db,
}

impl LmdbEngine {
    /// Opens the environment in `dir` for the lookups.
    pub fn open(dir: &Path) -> Result<LmdbEngine, String> {
        let mut opts = EnvOpenOptions::new();
        // SAFETY: neither flag is one of those LMDB calls unsafe (NO_SYNC,
        // NO_META_SYNC, NO_LOCK); nothing writes to the environment.
        unsafe { opts.flags(EnvFlags::READ_ONLY | EnvFlags::NO_READ_AHEAD) };
        // SAFETY: the environment is opened once by this process, and no
        // other process writes to it.
        let env = unsafe { opts.open(dir) }.map_err(err)?;
        let txn = env.read_txn().map_err(err)?;
        let db = env
            .open_databases_and_commit(txn, |opener, txn| {
                opener
                    .open_database(txn, None)
                    .map(CommitOrAbort::<_, ()>::Commit)
            })
            .map_err(err)?
            .unwrap_commit()
            .ok_or("lmdb: the environment has no database")?;
        Ok(LmdbEngine { env, db })
    }
}

impl Engine for LmdbEngine {
    fn reader(&self) -> Result<Box<dyn Reader + '_>, String> {
        Ok(Box::new(LmdbReader {
            db: self.db,
            txn: self.env.read_txn().map_err(err)?,
        }))
    }
}

/// A read transaction of one thread.
struct LmdbReader<'e> {
    db: Db,
    txn: RoTxn<'e, WithTls>,
}

impl Reader for LmdbReader<'_> {
    fn get(&mut self, key: &[u8], seen: &mut dyn FnMut(Option<&[u8]>)) -> Result<(), String> {
        seen(self.db.get(&self.txn, key).map_err(err)?);
        Ok(())
    }
}
