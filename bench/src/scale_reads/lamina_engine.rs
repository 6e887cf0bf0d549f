//! lamina under `lamina-bench scale-reads`, through its public API alone.
//! The load: the `lamina` tool's options (its defaults, with
//! `--memory-budget` and `--option` applied) and a `BulkLoader` fed in key
//! order, whose runs, overlapping nowhere, are ingested as they are. The
//! lookups: a read-only open with `memory_budget` set to the cache share
//! of the cap; single gets by `Db::get_with` (the value borrowed, not
//! copied), batches by `Db::get_many`.

use super::{Engine, Load, Reader};
use lamina::{BulkLoadOptions, BulkLoader, Db};
use std::path::Path;

fn err(e: lamina::Error) -> String {
    format!("lamina: {e}")
}

/// Loads the records into a new database in `dir`.
pub fn build(dir: &Path, load: &mut Load) -> Result<(), String> {
    let mut opts = crate::engine::options().map_err(|e| e.message)?;
    opts.create_if_missing = true;
    opts.error_if_exists = true;
    let db = Db::open(dir, opts).map_err(err)?;
    let mut loader = BulkLoader::new(&db, BulkLoadOptions::default());
    load.for_each(&mut |k, v| loader.add(k, v).map_err(err))?;
    loader.finish().map_err(err)?;
    db.close().map_err(err)
}

/// The database in `dir`, opened read-only with a memory budget of
/// `budget` bytes.
pub struct LaminaEngine {
    db: Db,
}

impl LaminaEngine {
    /// Opens the database in `dir` for the lookups.
    pub fn open(dir: &Path, budget: usize) -> Result<LaminaEngine, String> {
        let mut opts = crate::engine::options().map_err(|e| e.message)?;
        opts.read_only = true;
        opts.create_if_missing = false;
        opts.memory_budget = budget;
        let db = Db::open(dir, opts).map_err(err)?;
        Ok(LaminaEngine { db })
    }
}

impl Engine for LaminaEngine {
    fn reader(&self) -> Result<Box<dyn Reader + '_>, String> {
        Ok(Box::new(LaminaReader { db: &self.db }))
    }
}

struct LaminaReader<'a> {
    db: &'a Db,
}

impl Reader for LaminaReader<'_> {
    fn get(&mut self, key: &[u8], seen: &mut dyn FnMut(Option<&[u8]>)) -> Result<(), String> {
        if self
            .db
            .get_with(key, |v| seen(Some(v)))
            .map_err(err)?
            .is_none()
        {
            seen(None);
        }
        Ok(())
    }

    fn get_many(
        &mut self,
        keys: &[&[u8]],
        seen: &mut dyn FnMut(usize, Option<&[u8]>),
    ) -> Result<(), String> {
        for (i, v) in self.db.get_many(keys).map_err(err)?.iter().enumerate() {
            seen(i, v.as_deref());
        }
        Ok(())
    }
}
