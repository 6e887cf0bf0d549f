//! lamina under the rows of `lamina-bench btree-rows`, through its public
//! API alone, with the `lamina` tool's options (the defaults, with
//! `--memory-budget` and `--option` applied). A write transaction is a
//! `Batch` committed by `write_with` at `Durability::Sync` (`Os` for the
//! nosync writes); retain and extract_if iterate the database and delete
//! in that batch. A pop must see the pops before it, so it is
//! `iter().next()` (or `next_back()`) and a `delete` of its own (the
//! default durability, `Os`), and the transaction that popped ends with
//! `sync()` when durable. Sorted inserts write a table with a
//! `TableWriter` beside the database and add it with `ingest` (moved in).
//! A read transaction is a `Snapshot`.

use super::{Engine, Reader, Writer};
use lamina::{Batch, Db, Durability, IngestOptions, Keyspace, Snapshot};
use lamina::{TableWriter, TableWriterOptions};
use std::path::{Path, PathBuf};

fn err(e: lamina::Error) -> String {
    format!("lamina: {e}")
}

/// An open lamina database.
pub struct LaminaEngine {
    db: Db,
    /// Where sorted inserts write their table before it is ingested.
    scratch: PathBuf,
    /// Tables written there so far (each gets a name of its own).
    tables: u64,
}

impl LaminaEngine {
    /// Opens (creating) the database in `dir`; `scratch` is a directory
    /// beside it on the same file system.
    pub fn open(dir: &Path, scratch: &Path) -> Result<LaminaEngine, String> {
        let mut opts = crate::engine::options().map_err(|e| e.message)?;
        opts.create_if_missing = true;
        let db = Db::open(dir, opts).map_err(err)?;
        Ok(LaminaEngine {
            db,
            scratch: scratch.to_path_buf(),
            tables: 0,
        })
    }
}

/// One write transaction.
struct LaminaWriter<'a> {
    db: &'a Db,
    batch: Batch,
    /// Whether it popped (its deletes are already committed).
    popped: bool,
    /// The path for a sorted insert's table.
    table: PathBuf,
}

impl LaminaWriter<'_> {
    fn pop(&mut self, first: bool, seen: &mut dyn FnMut(&[u8])) -> Result<bool, String> {
        let mut it = self.db.iter();
        let entry = if first { it.next() } else { it.next_back() };
        let Some(entry) = entry else {
            return Ok(false);
        };
        let (key, _) = entry.map_err(err)?;
        self.db.delete(&key).map_err(err)?;
        self.popped = true;
        seen(&key);
        Ok(true)
    }
}

impl Writer for LaminaWriter<'_> {
    fn insert(&mut self, key: &[u8], value: &[u8]) -> Result<(), String> {
        self.batch.put(key, value);
        Ok(())
    }

    fn insert_sorted<'p>(
        &mut self,
        pairs: &mut dyn Iterator<Item = (&'p [u8], &'p [u8])>,
    ) -> Result<(), String> {
        let mut w = TableWriter::create(&self.table, TableWriterOptions::default()).map_err(err)?;
        for (k, v) in pairs {
            w.put(k, v).map_err(err)?;
        }
        w.finish().map_err(err)?;
        self.db
            .ingest(&[&self.table], IngestOptions { move_files: true })
            .map_err(err)?;
        Ok(())
    }

    fn remove(&mut self, key: &[u8]) -> Result<(), String> {
        self.batch.delete(key);
        Ok(())
    }

    fn pop_first(&mut self, seen: &mut dyn FnMut(&[u8])) -> Result<bool, String> {
        self.pop(true, seen)
    }

    fn pop_last(&mut self, seen: &mut dyn FnMut(&[u8])) -> Result<bool, String> {
        self.pop(false, seen)
    }

    fn retain(&mut self, keep: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<u64, String> {
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
        self.tables += 1;
        let mut w = LaminaWriter {
            db: &self.db,
            batch: Batch::new(),
            popped: false,
            table: self.scratch.join(format!("sorted-{}.table", self.tables)),
        };
        f(&mut w)?;
        let LaminaWriter { batch, popped, .. } = w;
        let durability = if durable {
            Durability::Sync
        } else {
            Durability::Os
        };
        self.db.write_with(batch, durability).map_err(err)?;
        if popped && durable {
            self.db.sync().map_err(err)?;
        }
        Ok(())
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
