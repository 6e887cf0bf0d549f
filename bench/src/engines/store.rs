//! The one interface the driver runs every engine through, and lamina's side
//! of it. Each engine gets its own fastest ordinary calls: single puts,
//! deletes and gets where the batch is one operation, its batch or
//! transaction otherwise; gets and scans borrow the value where the engine
//! can (no copy).

use super::order::Key;
use crate::engine::{Batch, Db, Durability, Options};
use std::path::Path;

/// One operation of a commit: a put (with its value) or a delete.
pub struct Op<'a> {
    /// The key.
    pub key: Key,
    /// The value of a put; `None` for a delete.
    pub value: Option<&'a [u8]>,
}

/// What every engine is given: the memory it may use and the commit
/// durability of the run.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    /// lamina's memory budget; the peers' caches and write buffers add up to it.
    pub memory_budget: u64,
    /// The memtable lamina derives from the budget: the peers' write buffer.
    pub write_buffer: u64,
    /// Bytes the workloads put (keys and values), for LMDB's map size.
    pub data_bytes: u64,
}

impl Config {
    /// The block cache of an engine with two write buffers (the active one
    /// and one being flushed) beside it: the budget less those.
    pub fn cache_beside_two_write_buffers(&self) -> u64 {
        self.memory_budget
            .saturating_sub(2 * self.write_buffer)
            .max(8 << 20)
    }
}

/// An open database of one engine.
pub trait Store {
    /// Applies `ops` as one commit, at the run's durability.
    fn write(&mut self, ops: &[Op<'_>]) -> Result<(), String>;
    /// Gets every key `keys` yields, one get each, in that order; returns
    /// how many were found and the bytes of their values.
    fn gets(&mut self, keys: &mut dyn Iterator<Item = Key>) -> Result<(u64, u64), String>;
    /// Reads every entry in key order; returns the entries and the bytes of
    /// their keys and values.
    fn scan(&mut self) -> Result<(u64, u64), String>;
    /// Called at the end of each write workload, inside its time: an engine
    /// whose commits do not reach the OS (redb's `Durability::None`) hands
    /// them over here. Nothing for the others.
    fn settle(&mut self) -> Result<(), String> {
        Ok(())
    }
    /// Closes the database.
    fn close(self: Box<Self>) -> Result<(), String>;
}

/// lamina with the options every `lamina` command uses (the defaults, with
/// `--memory-budget` and `--option` applied) and `Durability::Os`.
pub struct LaminaStore {
    db: Db,
}

/// lamina's options for this run: the `lamina` tool's.
pub fn lamina_options() -> Result<Options, String> {
    let mut opts = crate::engine::options().map_err(|e| e.message)?;
    opts.create_if_missing = true;
    opts.durability = Durability::Os;
    Ok(opts)
}

impl LaminaStore {
    /// Opens (creating) the database at `path`.
    pub fn open(path: &Path) -> Result<LaminaStore, String> {
        let db = Db::open(path, lamina_options()?).map_err(|e| format!("lamina: {e}"))?;
        Ok(LaminaStore { db })
    }
}

fn err(e: lamina::Error) -> String {
    format!("lamina: {e}")
}

impl Store for LaminaStore {
    fn write(&mut self, ops: &[Op<'_>]) -> Result<(), String> {
        match ops {
            [Op {
                key,
                value: Some(v),
            }] => self.db.put(key, v).map_err(err),
            [Op { key, value: None }] => self.db.delete(key).map_err(err),
            _ => {
                let mut batch = Batch::new();
                for op in ops {
                    match op.value {
                        Some(v) => batch.put(&op.key, v),
                        None => batch.delete(&op.key),
                    }
                }
                self.db.write_with(batch, Durability::Os).map_err(err)
            }
        }
    }

    fn gets(&mut self, keys: &mut dyn Iterator<Item = Key>) -> Result<(u64, u64), String> {
        let (mut found, mut bytes) = (0, 0);
        for k in keys {
            if let Some(n) = self.db.get_with(&k, |v| v.len()).map_err(err)? {
                found += 1;
                bytes += n as u64;
            }
        }
        Ok((found, bytes))
    }

    fn scan(&mut self) -> Result<(u64, u64), String> {
        let (mut n, mut bytes) = (0, 0);
        for e in self.db.iter() {
            let (k, v) = e.map_err(err)?;
            n += 1;
            bytes += (k.len() + v.len()) as u64;
        }
        Ok((n, bytes))
    }

    fn close(self: Box<Self>) -> Result<(), String> {
        self.db.close().map_err(err)
    }
}
