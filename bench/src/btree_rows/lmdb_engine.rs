//! LMDB (through `heed`) under the rows of `lamina-bench btree-rows`, as
//! redb's harness drives it: default flags, map size 4 GiB, the unnamed
//! database; `MDB_NOSYNC` switched on for the nosync writes; pop, retain
//! and extract_if delete at the cursor (`del_current`); len from `stat`;
//! sorted inserts with `MDB_APPEND`; compaction a compacting copy to a new
//! file that replaces `data.mdb`, the environment closed and reopened.

use super::{Engine, Reader, Writer};
use heed::types::Bytes;
use heed::{
    CommitOrAbort, CompactionOption, Database, Env, EnvFlags, EnvOpenOptions, FlagSetMode,
    PutFlags, RwTxn,
};
use std::fs::File;
use std::ops::Bound;
use std::path::{Path, PathBuf};

/// The harness's map size.
const MAP_SIZE: usize = 4096 * 1024 * 1024;

type Db = Database<'static, Bytes, Bytes>;

fn err(e: heed::Error) -> String {
    format!("lmdb: {e}")
}

fn io(path: &Path, e: std::io::Error) -> String {
    format!("lmdb: {}: {e}", path.display())
}

/// An open LMDB environment and its unnamed database.
pub struct LmdbEngine {
    env: Option<Env>,
    db: Db,
    dir: PathBuf,
    /// Whether `MDB_NOSYNC` is on.
    nosync: bool,
}

/// Opens the environment in `dir` with the harness's map size.
fn open_env(dir: &Path) -> Result<Env, String> {
    let mut opts = EnvOpenOptions::new();
    opts.map_size(MAP_SIZE);
    // SAFETY: the environment is opened once, by this process alone, and
    // closed before it is opened again.
    unsafe { opts.open(dir) }.map_err(err)
}

impl LmdbEngine {
    /// Opens (creating) the environment in `dir`.
    pub fn open(dir: &Path) -> Result<LmdbEngine, String> {
        let env = open_env(dir)?;
        let txn = env.write_txn().map_err(err)?;
        let db = env
            .create_databases_and_commit(txn, |opener, txn| {
                opener
                    .create_database(txn, None)
                    .map(CommitOrAbort::<_, ()>::Commit)
            })
            .map_err(err)?
            .unwrap_commit();
        Ok(LmdbEngine {
            env: Some(env),
            db,
            dir: dir.to_path_buf(),
            nosync: false,
        })
    }

    fn env(&self) -> Result<&Env, String> {
        self.env
            .as_ref()
            .ok_or_else(|| "lmdb: the environment is closed".to_string())
    }
}

struct LmdbWriter<'t, 'e> {
    db: Db,
    txn: &'t mut RwTxn<'e>,
}

impl LmdbWriter<'_, '_> {
    fn pop(&mut self, first: bool, seen: &mut dyn FnMut(&[u8])) -> Result<bool, String> {
        if first {
            let mut it = self.db.iter_mut(self.txn).map_err(err)?;
            let Some(entry) = it.next() else {
                return Ok(false);
            };
            let (k, _) = entry.map_err(err)?;
            seen(k);
            // SAFETY: nothing read through the cursor is used after this.
            unsafe { it.del_current() }.map_err(err)?;
        } else {
            let mut it = self.db.rev_iter_mut(self.txn).map_err(err)?;
            let Some(entry) = it.next() else {
                return Ok(false);
            };
            let (k, _) = entry.map_err(err)?;
            seen(k);
            // SAFETY: nothing read through the cursor is used after this.
            unsafe { it.del_current() }.map_err(err)?;
        }
        Ok(true)
    }
}

impl Writer for LmdbWriter<'_, '_> {
    fn insert(&mut self, key: &[u8], value: &[u8]) -> Result<(), String> {
        self.db.put(self.txn, key, value).map_err(err)
    }

    fn insert_sorted<'p>(
        &mut self,
        pairs: &mut dyn Iterator<Item = (&'p [u8], &'p [u8])>,
    ) -> Result<(), String> {
        for (k, v) in pairs {
            self.db
                .put_with_flags(self.txn, PutFlags::APPEND, k, v)
                .map_err(err)?;
        }
        Ok(())
    }

    fn remove(&mut self, key: &[u8]) -> Result<(), String> {
        self.db.delete(self.txn, key).map(|_| ()).map_err(err)
    }

    fn pop_first(&mut self, seen: &mut dyn FnMut(&[u8])) -> Result<bool, String> {
        self.pop(true, seen)
    }

    fn pop_last(&mut self, seen: &mut dyn FnMut(&[u8])) -> Result<bool, String> {
        self.pop(false, seen)
    }

    fn retain(&mut self, keep: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<u64, String> {
        let mut it = self.db.iter_mut(self.txn).map_err(err)?;
        let mut removed = 0;
        while let Some(entry) = it.next() {
            let (k, v) = entry.map_err(err)?;
            if !keep(k, v) {
                // SAFETY: nothing read through the cursor is used after this.
                unsafe { it.del_current() }.map_err(err)?;
                removed += 1;
            }
        }
        Ok(removed)
    }

    fn extract_if(
        &mut self,
        start: &[u8],
        end: &[u8],
        extract: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<u64, String> {
        let range = (Bound::Included(start), Bound::Excluded(end));
        let mut it = self.db.range_mut(self.txn, &range).map_err(err)?;
        let mut removed = 0;
        while let Some(entry) = it.next() {
            let (k, v) = entry.map_err(err)?;
            if extract(k, v) {
                // The harness copies each extracted entry out before the
                // delete (its iterator yields it).
                let copied = (k.to_vec(), v.to_vec());
                // SAFETY: the entry was copied; nothing read through the
                // cursor is used after this.
                unsafe { it.del_current() }.map_err(err)?;
                drop(copied);
                removed += 1;
            }
        }
        Ok(removed)
    }
}

struct LmdbReader<'t, 'e> {
    db: Db,
    txn: &'t heed::RoTxn<'e>,
}

impl Reader for LmdbReader<'_, '_> {
    fn get(&mut self, key: &[u8]) -> Result<Option<u8>, String> {
        Ok(self
            .db
            .get(self.txn, key)
            .map_err(err)?
            .map(|v| v.first().copied().unwrap_or(0)))
    }

    fn range_from(
        &mut self,
        start: &[u8],
        n: usize,
        visit: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<usize, String> {
        // LMDB refuses an empty key, even as a bound: from the start then.
        let lower = if start.is_empty() {
            Bound::Unbounded
        } else {
            Bound::Included(start)
        };
        let range = (lower, Bound::Unbounded);
        let mut seen = 0;
        for entry in self.db.range(self.txn, &range).map_err(err)?.take(n) {
            let (k, v) = entry.map_err(err)?;
            visit(k, v);
            seen += 1;
        }
        Ok(seen)
    }

    fn len(&mut self) -> Result<u64, String> {
        Ok(self.db.stat(self.txn).map_err(err)?.entries as u64)
    }
}

impl Engine for LmdbEngine {
    fn write(
        &mut self,
        durable: bool,
        f: &mut dyn FnMut(&mut dyn Writer) -> Result<(), String>,
    ) -> Result<(), String> {
        let env = self.env()?.clone();
        if self.nosync == durable {
            let mode = if durable {
                FlagSetMode::Disable
            } else {
                FlagSetMode::Enable
            };
            // SAFETY: no write transaction is open while the flag changes.
            unsafe { env.set_flags(EnvFlags::NO_SYNC, mode) }.map_err(err)?;
            self.nosync = !durable;
        }
        let mut txn = env.write_txn().map_err(err)?;
        f(&mut LmdbWriter {
            db: self.db,
            txn: &mut txn,
        })?;
        txn.commit().map_err(err)
    }

    fn read(&self, f: &mut dyn FnMut(&mut dyn Reader) -> Result<(), String>) -> Result<(), String> {
        let txn = self.env()?.read_txn().map_err(err)?;
        f(&mut LmdbReader {
            db: self.db,
            txn: &txn,
        })
    }

    fn compact(&mut self) -> Result<(), String> {
        let env = self
            .env
            .take()
            .ok_or_else(|| "lmdb: the environment is closed".to_string())?;
        let copy = self.dir.join("data2.mdb");
        let mut file = File::create_new(&copy).map_err(|e| io(&copy, e))?;
        env.copy_to_file(&mut file, CompactionOption::Enabled)
            .map_err(err)?;
        file.sync_all().map_err(|e| io(&copy, e))?;
        drop(file);
        env.prepare_for_closing().wait();
        let data = self.dir.join("data.mdb");
        std::fs::rename(&copy, &data).map_err(|e| io(&data, e))?;
        let env = open_env(&self.dir)?;
        let txn = env.read_txn().map_err(err)?;
        self.db = env
            .open_databases_and_commit(txn, |opener, txn| {
                opener
                    .open_database(txn, None)
                    .map(CommitOrAbort::<_, ()>::Commit)
            })
            .map_err(err)?
            .unwrap_commit()
            .ok_or_else(|| "lmdb: no database after compaction".to_string())?;
        self.env = Some(env);
        // Reopened with the default flags: synced commits.
        self.nosync = false;
        Ok(())
    }

    fn close(mut self: Box<Self>) -> Result<(), String> {
        if let Some(env) = self.env.take() {
            env.prepare_for_closing().wait();
        }
        Ok(())
    }
}
