//! The database under soak: its options and how a thread's keys are read.

use crate::model::Model;
use lamina::{Compression, Db, Durability, Keyspace, Options};

/// Name of the second keyspace, created before the first writer starts.
pub const KEYSPACE: &str = "soak";

/// Small memtables and levels, so flushes and compactions run all the time
/// and are often interrupted by a kill.
pub fn options() -> Options {
    Options {
        durability: Durability::Os,
        memtable_size: 128 << 10,
        block_size: 1024,
        compression: Compression::Lz4,
        bottom_compression: Compression::Zstd,
        l0_compaction_trigger: 3,
        level_base_size: 512 << 10,
        target_table_size: 128 << 10,
        cache_size: 4 << 20,
        ..Options::default()
    }
}

/// The prefix of every key of thread `t`.
pub fn prefix(t: usize) -> Vec<u8> {
    format!("t{t}/").into_bytes()
}

/// The keyspace numbered as in the journal.
pub fn keyspace(db: &Db, soak: &Keyspace, ks: u8) -> Keyspace {
    if ks == 0 {
        db.default_keyspace()
    } else {
        soak.clone()
    }
}

/// Every key of thread `t` in both keyspaces, as the database has them now.
pub fn read_thread(db: &Db, soak: &Keyspace, t: usize) -> lamina::Result<Model> {
    let mut m = Model::new();
    for ks in [0u8, 1] {
        for e in keyspace(db, soak, ks).prefix(&prefix(t)) {
            let (k, v) = e?;
            m.insert((ks, k), v);
        }
    }
    Ok(m)
}
