//! redb under the rows of `lamina-bench btree-rows`, as redb's harness
//! drives it: `cache_size` 4 GiB, one table, write transactions at the
//! default durability (`Durability::None` for the nosync writes), redb's
//! own `pop_first`/`pop_last`, `retain`, `extract_if` and `len`, sorted
//! inserts through its appending cursor (`upper_bound_mut(Unbounded)` and
//! `insert_before`), and `compact` (its default mode, `Balanced`).

use super::{Engine, Reader, Writer, CACHE_SIZE};
use redb::{
    CompactionMode, Database, Durability, ReadableDatabase, ReadableTable, ReadableTableMetadata,
    TableDefinition,
};
use std::ops::Bound;
use std::path::Path;

const X: TableDefinition<&[u8], &[u8]> = TableDefinition::new("x");

fn err(e: impl std::fmt::Display) -> String {
    format!("redb: {e}")
}

/// An open redb database (the file `data.redb`).
pub struct RedbEngine {
    db: Database,
}

impl RedbEngine {
    /// Opens (creating) the database in `dir`.
    pub fn open(dir: &Path) -> Result<RedbEngine, String> {
        let db = Database::builder()
            .set_cache_size(CACHE_SIZE)
            .create(dir.join("data.redb"))
            .map_err(err)?;
        Ok(RedbEngine { db })
    }
}

struct RedbWriter<'t> {
    table: redb::Table<'t, &'static [u8], &'static [u8]>,
}

impl Writer for RedbWriter<'_> {
    fn insert(&mut self, key: &[u8], value: &[u8]) -> Result<(), String> {
        self.table.insert(key, value).map(|_| ()).map_err(err)
    }

    fn insert_sorted<'p>(
        &mut self,
        pairs: &mut dyn Iterator<Item = (&'p [u8], &'p [u8])>,
    ) -> Result<(), String> {
        let mut cursor = self
            .table
            .upper_bound_mut(Bound::<&[u8]>::Unbounded)
            .map_err(err)?;
        for (k, v) in pairs {
            cursor.insert_before(k, v).map_err(err)?;
        }
        cursor.close().map_err(err)
    }

    fn remove(&mut self, key: &[u8]) -> Result<(), String> {
        self.table.remove(key).map(|_| ()).map_err(err)
    }

    fn pop_first(&mut self, seen: &mut dyn FnMut(&[u8])) -> Result<bool, String> {
        let Some((k, _)) = self.table.pop_first().map_err(err)? else {
            return Ok(false);
        };
        seen(k.value());
        Ok(true)
    }

    fn pop_last(&mut self, seen: &mut dyn FnMut(&[u8])) -> Result<bool, String> {
        let Some((k, _)) = self.table.pop_last().map_err(err)? else {
            return Ok(false);
        };
        seen(k.value());
        Ok(true)
    }

    fn retain(&mut self, keep: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<u64, String> {
        let mut removed = 0;
        self.table
            .retain(|k, v| {
                let kept = keep(k, v);
                if !kept {
                    removed += 1;
                }
                kept
            })
            .map_err(err)?;
        Ok(removed)
    }

    fn extract_if(
        &mut self,
        start: &[u8],
        end: &[u8],
        extract: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<u64, String> {
        let range = (Bound::Included(start), Bound::Excluded(end));
        let mut removed = 0;
        for entry in self
            .table
            .extract_if(range, |k, v| extract(k, v))
            .map_err(err)?
        {
            entry.map_err(err)?;
            removed += 1;
        }
        Ok(removed)
    }
}

struct RedbReader {
    table: redb::ReadOnlyTable<&'static [u8], &'static [u8]>,
}

impl Reader for RedbReader {
    fn get(&mut self, key: &[u8]) -> Result<Option<u8>, String> {
        // The lifetime-bound accessor of the trait, as the harness calls it.
        Ok(ReadableTable::get(&self.table, key)
            .map_err(err)?
            .map(|v| v.value().first().copied().unwrap_or(0)))
    }

    fn range_from(
        &mut self,
        start: &[u8],
        n: usize,
        visit: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<usize, String> {
        let mut seen = 0;
        for entry in ReadableTable::range(&self.table, start..)
            .map_err(err)?
            .take(n)
        {
            let (k, v) = entry.map_err(err)?;
            visit(k.value(), v.value());
            seen += 1;
        }
        Ok(seen)
    }

    fn len(&mut self) -> Result<u64, String> {
        self.table.len().map_err(err)
    }
}

impl Engine for RedbEngine {
    fn write(
        &mut self,
        durable: bool,
        f: &mut dyn FnMut(&mut dyn Writer) -> Result<(), String>,
    ) -> Result<(), String> {
        let mut txn = self.db.begin_write().map_err(err)?;
        if !durable {
            txn.set_durability(Durability::None).map_err(err)?;
        }
        {
            let table = txn.open_table(X).map_err(err)?;
            f(&mut RedbWriter { table })?;
        }
        txn.commit().map_err(err)
    }

    fn read(&self, f: &mut dyn FnMut(&mut dyn Reader) -> Result<(), String>) -> Result<(), String> {
        let txn = self.db.begin_read().map_err(err)?;
        let table = txn.open_table(X).map_err(err)?;
        f(&mut RedbReader { table })
    }

    fn compact(&mut self) -> Result<(), String> {
        self.db
            .compact(CompactionMode::Balanced)
            .map(|_| ())
            .map_err(err)
    }

    fn close(self: Box<Self>) -> Result<(), String> {
        drop(self);
        Ok(())
    }
}
