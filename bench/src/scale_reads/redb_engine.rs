//! redb under `lamina-bench scale-reads`. The load: one table, records
//! added in key order through redb's appending cursor
//! (`upper_bound_mut(Unbounded)` and `insert_before`), a durable commit
//! every million records. The lookups: `ReadOnlyDatabase` with
//! `cache_size` the cache share of the cap; one read transaction per
//! thread, `get` in a loop for a batch.

use super::{Engine, Load, Reader};
use redb::{Database, ReadOnlyDatabase, ReadableDatabase, ReadableTable, TableDefinition};
use std::ops::Bound;
use std::path::Path;

const TABLE: TableDefinition<&[u8], &[u8]> = TableDefinition::new("records");

/// Records added per write transaction of the load.
const RECORDS_PER_COMMIT: u64 = 1_000_000;

fn err(e: impl std::fmt::Display) -> String {
    format!("redb: {e}")
}

/// The database file in `dir`.
fn file(dir: &Path) -> std::path::PathBuf {
    dir.join("data.redb")
}

/// Loads the records into a new database in `dir`.
pub fn build(dir: &Path, load: &mut Load) -> Result<(), String> {
    let db = Database::create(file(dir)).map_err(err)?;
    let mut pending: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    let commit = |pending: &mut Vec<(Vec<u8>, Vec<u8>)>| -> Result<(), String> {
        let txn = db.begin_write().map_err(err)?;
        {
            let mut table = txn.open_table(TABLE).map_err(err)?;
            let mut cursor = table
                .upper_bound_mut(Bound::<&[u8]>::Unbounded)
                .map_err(err)?;
            for (k, v) in pending.iter() {
                cursor
                    .insert_before(k.as_slice(), v.as_slice())
                    .map_err(err)?;
            }
            cursor.close().map_err(err)?;
        }
        pending.clear();
        txn.commit().map_err(err)
    };
    load.for_each(&mut |k, v| {
        pending.push((k.to_vec(), v.to_vec()));
        if pending.len() as u64 == RECORDS_PER_COMMIT {
            commit(&mut pending)?;
        }
        Ok(())
    })?;
    commit(&mut pending)
}

/// The database in `dir`, opened read-only.
pub struct RedbEngine {
    db: ReadOnlyDatabase,
}

impl RedbEngine {
    /// Opens the database in `dir` for the lookups with a cache of `cache`
    /// bytes.
    pub fn open(dir: &Path, cache: usize) -> Result<RedbEngine, String> {
        let db = Database::builder()
            .set_cache_size(cache)
            .open_read_only(file(dir))
            .map_err(err)?;
        Ok(RedbEngine { db })
    }
}

impl Engine for RedbEngine {
    fn reader(&self) -> Result<Box<dyn Reader + '_>, String> {
        let txn = self.db.begin_read().map_err(err)?;
        let table = txn.open_table(TABLE).map_err(err)?;
        Ok(Box::new(RedbReader { table }))
    }
}

/// A read transaction's table, for one thread.
struct RedbReader {
    table: redb::ReadOnlyTable<&'static [u8], &'static [u8]>,
}

impl Reader for RedbReader {
    fn get(&mut self, key: &[u8], seen: &mut dyn FnMut(Option<&[u8]>)) -> Result<(), String> {
        let v = ReadableTable::get(&self.table, key).map_err(err)?;
        seen(v.as_ref().map(|v| v.value()));
        Ok(())
    }
}
