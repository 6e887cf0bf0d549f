//! fjall: default options with its cache and memtable set so that they add
//! up to lamina's budget; commits handed to the OS (fjall's default,
//! `PersistMode::Buffer` after each write or batch).

use super::super::order::Key;
use super::super::store::{Config, Op, Store};
use fjall::{Database, Keyspace, KeyspaceCreateOptions};
use std::path::Path;

/// An open fjall database and its one keyspace.
pub struct FjallStore {
    db: Database,
    ks: Keyspace,
}

fn err(e: fjall::Error) -> String {
    format!("fjall: {e}")
}

impl FjallStore {
    /// Opens (creating) the database in `path`.
    pub fn open(path: &Path, cfg: &Config) -> Result<FjallStore, String> {
        let db = Database::builder(path)
            .cache_size(cfg.cache_beside_two_write_buffers())
            .open()
            .map_err(err)?;
        let memtable = cfg.write_buffer;
        let ks = db
            .keyspace("bench", || {
                KeyspaceCreateOptions::default().max_memtable_size(memtable)
            })
            .map_err(err)?;
        Ok(FjallStore { db, ks })
    }
}

impl Store for FjallStore {
    fn write(&mut self, ops: &[Op<'_>]) -> Result<(), String> {
        match ops {
            [Op {
                key,
                value: Some(v),
            }] => self.ks.insert(key.as_slice(), *v).map_err(err),
            [Op { key, value: None }] => self.ks.remove(key.as_slice()).map_err(err),
            _ => {
                let mut batch = self.db.batch();
                for op in ops {
                    match op.value {
                        Some(v) => batch.insert(&self.ks, op.key.as_slice(), v),
                        None => batch.remove(&self.ks, op.key.as_slice()),
                    }
                }
                batch.commit().map_err(err)
            }
        }
    }

    fn gets(&mut self, keys: &mut dyn Iterator<Item = Key>) -> Result<(u64, u64), String> {
        let (mut found, mut bytes) = (0, 0);
        for k in keys {
            if let Some(v) = self.ks.get(k).map_err(err)? {
                found += 1;
                bytes += v.len() as u64;
            }
        }
        Ok((found, bytes))
    }

    fn scan(&mut self) -> Result<(u64, u64), String> {
        let (mut n, mut bytes) = (0, 0);
        for guard in self.ks.iter() {
            let (k, v) = guard.into_inner().map_err(err)?;
            n += 1;
            bytes += (k.len() + v.len()) as u64;
        }
        Ok((n, bytes))
    }

    fn close(self: Box<Self>) -> Result<(), String> {
        drop(self);
        Ok(())
    }
}
