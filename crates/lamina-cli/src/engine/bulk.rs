//! Records loaded without the WAL and the memtable: one `BulkLoader` per
//! keyspace, all of them ingested in one step at the end.

use lamina::{BulkLoadOptions, BulkLoader, Db};

/// Default bound on the pairs held in memory before a sorted run is
/// written out (`--memory`).
pub const DEFAULT_MEMORY: usize = 64 << 20;

/// What a finished bulk load kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BulkDone {
    /// Records added (repeated keys included).
    pub records: u64,
    /// Records in the database afterwards: one per distinct key and
    /// keyspace, the last value added for it.
    pub kept: u64,
    /// Tables ingested.
    pub tables: usize,
}

/// Gathers records of any keyspace in any order, then ingests them all at
/// once: after [`finish`](BulkSink::finish) returns `Ok` every record is
/// visible and durable; after an error none is (nothing is visible before).
/// Of several records of one key in one keyspace, the last added wins.
///
/// Memory: only the loader of the keyspace being filled holds pairs; when
/// records go to another keyspace, the previous one's pairs are written
/// out as a sorted run, so all loaders together stay within `memory`.
pub struct BulkSink {
    db: Db,
    memory: usize,
    /// One loader per keyspace met (`None`: the default keyspace), in the
    /// order met.
    loaders: Vec<(Option<String>, BulkLoader)>,
    current: Option<usize>,
    records: u64,
}

impl BulkSink {
    /// A sink into `db` holding at most about `memory` bytes of pairs.
    pub fn new(db: &Db, memory: usize) -> BulkSink {
        BulkSink {
            db: db.clone(),
            memory,
            loaders: Vec::new(),
            current: None,
            records: 0,
        }
    }

    /// Sends later records to keyspace `name` (`None` or empty: the default
    /// keyspace). The keyspace is created, if missing, when the load is
    /// finished.
    pub fn set_keyspace(&mut self, name: Option<&str>) -> lamina::Result<()> {
        let name = name.filter(|n| !n.is_empty()).map(str::to_string);
        let found = self.loaders.iter().position(|(n, _)| *n == name);
        if found.is_some() && found == self.current {
            return Ok(());
        }
        if let Some((_, l)) = self.current.and_then(|i| self.loaders.get_mut(i)) {
            l.write_run()?;
        }
        let i = match found {
            Some(i) => i,
            None => {
                let opts = BulkLoadOptions {
                    memory_bytes: self.memory,
                    keyspace: name.clone(),
                    ..BulkLoadOptions::default()
                };
                self.loaders.push((name, BulkLoader::new(&self.db, opts)));
                self.loaders.len() - 1
            }
        };
        self.current = Some(i);
        Ok(())
    }

    /// Adds a record to the current keyspace. REQUIRES: `check_record`
    /// passed.
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> lamina::Result<()> {
        if self.current.is_none() {
            self.set_keyspace(None)?;
        }
        if let Some((_, l)) = self.current.and_then(|i| self.loaders.get_mut(i)) {
            l.add(key, value)?;
        }
        self.records += 1;
        Ok(())
    }

    /// Records added so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Ingests everything added, in one step, and creates the keyspaces
    /// met that received no record (an empty keyspace of a dump).
    pub fn finish(self) -> lamina::Result<BulkDone> {
        let mut empty = Vec::new();
        let mut loaders = Vec::new();
        for (name, l) in self.loaders {
            match name {
                Some(name) if l.is_empty() => empty.push(name),
                _ => loaders.push(l),
            }
        }
        let tables = BulkLoader::finish_all(loaders)?;
        for name in empty {
            self.db.keyspace(&name)?;
        }
        Ok(BulkDone {
            records: self.records,
            kept: tables.iter().map(|t| t.entries).sum(),
            tables: tables.len(),
        })
    }
}
