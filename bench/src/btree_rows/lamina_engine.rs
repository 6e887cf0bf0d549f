//! lamina under the rows of `lamina-bench btree-rows`, through its public
//! API alone, with the `lamina` tool's options (the defaults, with
//! `--memory-budget` and `--option` applied). A write transaction is a
//! `Batch` committed by `write_with` at `Durability::Sync` (`Os` for the
//! nosync writes); retain and extract_if iterate the database and delete
//! in that batch. A pop must see the pops before it, so a write
//! transaction that pops is a `Transaction` (`pop_first`, `pop_last`),
//! committed by `commit_with`, and its other writes go there too. Sorted
//! inserts go through a `BulkLoader`: input in order is written as tables
//! once and ingested.
//! A read transaction is a `Snapshot`.

use super::{Engine, Reader, Writer};
use lamina::{Batch, BulkLoadOptions, BulkLoader, Db, Durability, Keyspace, Snapshot, Transaction};
use std::path::Path;

fn err(e: lamina::Error) -> String {
    format!("lamina: {e}")
}

/// An open lamina database.
pub struct LaminaEngine {
    db: Db,
}

impl LaminaEngine {
    /// Opens (creating) the database in `dir`.
    pub fn open(dir: &Path) -> Result<LaminaEngine, String> {
        let mut opts = crate::engine::options().map_err(|e| e.message)?;
        opts.create_if_missing = true;
        let db = Db::open(dir, opts).map_err(err)?;
        Ok(LaminaEngine { db })
    }
}

/// One write transaction.
struct LaminaWriter<'a> {
    db: &'a Db,
    batch: Batch,
    /// The transaction, once it popped.
    tx: Option<Transaction>,
}

impl LaminaWriter<'_> {
    fn pop(&mut self, first: bool, seen: &mut dyn FnMut(&[u8])) -> Result<bool, String> {
        if self.tx.is_none() && !self.batch.is_empty() {
            return Err("lamina: a pop after writes in one write transaction".into());
        }
        let tx = self.tx.get_or_insert_with(|| self.db.transaction());
        let entry = if first { tx.pop_first() } else { tx.pop_last() };
        let Some((key, _)) = entry.map_err(err)? else {
            return Ok(false);
        };
        seen(&key);
        Ok(true)
    }
}

impl Writer for LaminaWriter<'_> {
    fn insert(&mut self, key: &[u8], value: &[u8]) -> Result<(), String> {
        match &mut self.tx {
            Some(tx) => tx.put(key, value).map_err(err),
            None => {
                self.batch.put(key, value);
                Ok(())
            }
        }
    }

    fn insert_sorted<'p>(
        &mut self,
        pairs: &mut dyn Iterator<Item = (&'p [u8], &'p [u8])>,
    ) -> Result<(), String> {
        if self.tx.is_some() || !self.batch.is_empty() {
            return Err("lamina: sorted inserts after writes in one write transaction".into());
        }
        let mut loader = BulkLoader::new(self.db, BulkLoadOptions::default());
        for (k, v) in pairs {
            loader.add(k, v).map_err(err)?;
        }
        loader.finish().map_err(err)?;
        Ok(())
    }

    fn remove(&mut self, key: &[u8]) -> Result<(), String> {
        match &mut self.tx {
            Some(tx) => tx.delete(key).map_err(err),
            None => {
                self.batch.delete(key);
                Ok(())
            }
        }
    }

    fn pop_first(&mut self, seen: &mut dyn FnMut(&[u8])) -> Result<bool, String> {
        self.pop(true, seen)
    }

    fn pop_last(&mut self, seen: &mut dyn FnMut(&[u8])) -> Result<bool, String> {
        self.pop(false, seen)
    }

    fn retain(&mut self, keep: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<u64, String> {
        if let Some(tx) = &mut self.tx {
            let mut removed = 0;
            for entry in tx.iter() {
                let (k, v) = entry.map_err(err)?;
                if !keep(&k, &v) {
                    tx.delete(&k).map_err(err)?;
                    removed += 1;
                }
            }
            return Ok(removed);
        }
        let mut removed = 0;
        for entry in self.db.iter() {
            let (k, v) = entry.map_err(err)?;
            if !keep(&k, &v) {
                self.batch.delete(&k);
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
        if let Some(tx) = &mut self.tx {
            let mut removed = 0;
            for entry in tx.range(start..end) {
                let (k, v) = entry.map_err(err)?;
                if extract(&k, &v) {
                    tx.delete(&k).map_err(err)?;
                    removed += 1;
                }
            }
            return Ok(removed);
        }
        let mut removed = 0;
        for entry in self.db.range(start..end) {
            let (k, v) = entry.map_err(err)?;
            if extract(&k, &v) {
                self.batch.delete(&k);
                removed += 1;
            }
        }
        Ok(removed)
    }
}

/// One read transaction: a snapshot.
struct LaminaReader {
    snap: Snapshot,
    ks: Keyspace,
}

impl Reader for LaminaReader {
    fn get(&mut self, key: &[u8]) -> Result<Option<u8>, String> {
        self.snap
            .get_with_in(&self.ks, key, |v| v.first().copied().unwrap_or(0))
            .map_err(err)
    }

    fn range_from(
        &mut self,
        start: &[u8],
        n: usize,
        visit: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<usize, String> {
        let mut seen = 0;
        for entry in self.snap.range(start..).take(n) {
            let (k, v) = entry.map_err(err)?;
            visit(&k, &v);
            seen += 1;
        }
        Ok(seen)
    }

    fn len(&mut self) -> Result<u64, String> {
        self.snap.iter().count_keys().map_err(err)
    }
}

impl Engine for LaminaEngine {
    fn write(
        &mut self,
        durable: bool,
        f: &mut dyn FnMut(&mut dyn Writer) -> Result<(), String>,
    ) -> Result<(), String> {
        let mut w = LaminaWriter {
            db: &self.db,
            batch: Batch::new(),
            tx: None,
        };
        f(&mut w)?;
        let LaminaWriter { batch, tx, .. } = w;
        let durability = if durable {
            Durability::Sync
        } else {
            Durability::Os
        };
        match tx {
            Some(tx) => tx.commit_with(durability).map_err(err),
            None => self.db.write_with(batch, durability).map_err(err),
        }
    }

    fn read(&self, f: &mut dyn FnMut(&mut dyn Reader) -> Result<(), String>) -> Result<(), String> {
        let mut r = LaminaReader {
            snap: self.db.snapshot(),
            ks: self.db.default_keyspace(),
        };
        f(&mut r)
    }

    fn compact(&mut self) -> Result<(), String> {
        self.db.compact().map_err(err)
    }

    fn close(self: Box<Self>) -> Result<(), String> {
        self.db.close().map_err(err)
    }
}
