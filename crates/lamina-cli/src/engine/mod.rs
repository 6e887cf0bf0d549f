//! The engine as the CLI uses it: how each command opens a database, and the
//! batched writer behind every bulk load. Every call into the storage engine
//! goes through the types re-exported here.

pub mod bulk;

pub use lamina::{Batch, Db, Durability, Keyspace, LevelStats, Options, Stats};

use crate::error::{CliError, CliResult, Exit};
use lamina::fs::{FaultFs, FaultKind};
use lamina::{MAX_KEY_LEN, MAX_VALUE_LEN};
use std::path::Path;
use std::sync::Arc;

/// How a command opens its database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Read only; the database must exist. Takes no lock.
    ReadOnly,
    /// Read-write; the database must exist.
    Existing,
    /// Read-write; created if missing (gdbmtool's default).
    Create,
    /// Read-write; an existing database is removed first (`--newdb`).
    New,
}

/// Environment variable that makes the CLI run on a fault-injecting file
/// system, for tests of how it fails: `KIND:N` lets the first `N` operations
/// of `KIND` (`write`, `sync`, `read`, `metadata`) succeed and fails every
/// later one (`write` with ENOSPC, a full disk; the others with EIO);
/// `space:N` gives the disk room for `N` more bytes, and a write that does
/// not fit writes what does, then fails with ENOSPC, as a real disk fills.
pub const FAULT_ENV: &str = "LAMINA_INJECT_FAULT";

/// The `--memory-budget` every command opens its database with, if given.
static MEMORY_BUDGET: std::sync::OnceLock<usize> = std::sync::OnceLock::new();

/// Sets the memory budget of every database this process opens (the global
/// `--memory-budget`); the first call wins.
pub fn set_memory_budget(bytes: u64) -> CliResult<()> {
    let bytes = usize::try_from(bytes)
        .map_err(|_| CliError::new(Exit::Usage, format!("memory budget {bytes} is too large")))?;
    let _ = MEMORY_BUDGET.set(bytes);
    Ok(())
}

/// The `--option NAME=VALUE` settings every command opens its database with.
static FORCED: std::sync::OnceLock<Vec<(String, u64)>> = std::sync::OnceLock::new();

/// The engine options an expert may force from the command line (`--option`),
/// each a whole number of bytes or a count.
pub const FORCEABLE: [&str; 8] = [
    "block_size",
    "blob_threshold",
    "cache_size",
    "l0_compaction_trigger",
    "level_base_size",
    "level_multiplier",
    "memtable_size",
    "target_table_size",
];

/// Parses one `--option NAME=VALUE` (sizes may end in K, M or G).
pub fn parse_forced(spec: &str) -> Result<(String, u64), String> {
    let (name, value) = spec
        .split_once('=')
        .ok_or_else(|| format!("{spec}: expected NAME=VALUE, e.g. level_multiplier=8"))?;
    let name = name.trim().replace('-', "_");
    let value = crate::size::parse_size(value.trim()).map_err(|e| format!("{name}: {e}"))?;
    // Applied once to the defaults, so that `force` alone knows the names.
    force(&mut Options::default(), &name, value).map_err(|e| e.message)?;
    Ok((name, value))
}

/// Sets the `--option` settings of every database this process opens; the
/// first call wins.
pub fn set_forced(settings: Vec<(String, u64)>) {
    let _ = FORCED.set(settings);
}

fn force(opts: &mut Options, name: &str, value: u64) -> CliResult<()> {
    let size = || {
        usize::try_from(value)
            .map_err(|_| CliError::new(Exit::Usage, format!("option {name}={value} is too large")))
    };
    match name {
        "block_size" => opts.block_size = size()?,
        "blob_threshold" => opts.blob_threshold = size()?,
        "cache_size" => opts.cache_size = size()?,
        "l0_compaction_trigger" => opts.l0_compaction_trigger = size()?,
        "level_base_size" => opts.level_base_size = value,
        "level_multiplier" => opts.level_multiplier = value,
        "memtable_size" => opts.memtable_size = size()?,
        "target_table_size" => opts.target_table_size = value,
        _ => {
            return Err(CliError::new(
                Exit::Usage,
                format!(
                    "{name} is not an option that can be set here; these can: {}",
                    FORCEABLE.join(", ")
                ),
            ))
        }
    }
    Ok(())
}

/// Options for every open: the defaults (lamina needs no tuning) with the
/// `--memory-budget` and `--option` settings given, on the file system
/// `LAMINA_INJECT_FAULT` asks for.
pub fn options() -> CliResult<Options> {
    let mut opts = Options::default();
    if let Some(b) = MEMORY_BUDGET.get() {
        opts.memory_budget = *b;
    }
    for (name, value) in FORCED.get().into_iter().flatten() {
        force(&mut opts, name, *value)?;
    }
    if let Some(spec) = std::env::var_os(FAULT_ENV) {
        let spec = spec.to_string_lossy().into_owned();
        let bad = || CliError::new(Exit::Usage, format!("{FAULT_ENV}={spec}: expected KIND:N"));
        let (kind, n) = spec.split_once(':').ok_or_else(bad)?;
        let kind = match kind {
            "write" => Some(FaultKind::Write),
            "sync" => Some(FaultKind::Sync),
            "read" => Some(FaultKind::Read),
            "metadata" => Some(FaultKind::Metadata),
            "space" => None,
            _ => return Err(bad()),
        };
        let n: u64 = n.parse().map_err(|_| bad())?;
        let fs = FaultFs::new(opts.fs.clone());
        match kind {
            Some(kind) => fs.faults().fail_after(kind, n),
            None => fs.faults().limit_space(n),
        }
        opts.fs = Arc::new(fs);
    }
    Ok(opts)
}

/// Opens the database at `path`.
///
/// `Mode::New` removes an existing lamina database there first, but refuses
/// to touch a path that holds anything else.
pub fn open(path: &Path, mode: Mode) -> CliResult<Db> {
    let mut opts = options()?;
    match mode {
        Mode::ReadOnly => {
            opts.read_only = true;
            opts.create_if_missing = false;
        }
        Mode::Existing => opts.create_if_missing = false,
        Mode::Create => {}
        Mode::New => {
            if path.exists() {
                match Db::destroy(path, &opts) {
                    Ok(()) => {}
                    Err(lamina::Error::NotADatabase { .. }) if is_empty_dir(path) => {}
                    Err(e) => {
                        return Err(CliError::new(
                            Exit::CannotOpen,
                            format!("cannot replace {} with a new database: {e}", path.display()),
                        ))
                    }
                }
            }
            opts.error_if_exists = true;
        }
    }
    Db::open(path, opts).map_err(|e| CliError::open(path, e))
}

/// Opens the existing database at `path` read-write, or read-only beside
/// the writer when another handle holds it; says which (true: read-only).
pub fn open_beside_writer(path: &Path) -> CliResult<(Db, bool)> {
    let mut opts = options()?;
    opts.create_if_missing = false;
    match Db::open(path, opts) {
        Ok(db) => Ok((db, false)),
        Err(lamina::Error::Locked(_)) => Ok((open(path, Mode::ReadOnly)?, true)),
        Err(e) => Err(CliError::open(path, e)),
    }
}

fn is_empty_dir(path: &Path) -> bool {
    std::fs::read_dir(path)
        .map(|mut d| d.next().is_none())
        .unwrap_or(false)
}

/// Why a record cannot be stored, in gdbmtool's words after "Item not
/// inserted: " (checked before batching, so one bad record never fails a
/// whole batch).
pub fn check_record(key: &[u8], value: &[u8]) -> Result<(), String> {
    if key.len() > MAX_KEY_LEN {
        return Err(format!(
            "key of {} bytes is longer than {MAX_KEY_LEN}",
            key.len()
        ));
    }
    if value.len() > MAX_VALUE_LEN {
        return Err(format!(
            "value of {} bytes is longer than {MAX_VALUE_LEN}",
            value.len()
        ));
    }
    Ok(())
}

/// The keyspace a command works on: the named one, or the default keyspace
/// when `name` is `None` or empty. A missing named keyspace is created when
/// `create` says so, and otherwise an error that lists the keyspaces there.
pub fn keyspace(db: &Db, name: Option<&str>, create: bool) -> CliResult<Keyspace> {
    let name = match name {
        None | Some("") => return Ok(db.default_keyspace()),
        Some(name) => name,
    };
    let found = if create {
        db.keyspace(name)
    } else {
        db.open_keyspace(name)
    };
    match found {
        Ok(ks) => Ok(ks),
        Err(lamina::Error::NoSuchKeyspace(_)) => {
            let names = db.keyspaces();
            let there = if names.is_empty() {
                "it has only the default keyspace".to_string()
            } else {
                format!("its keyspaces are {}", names.join(", "))
            };
            Err(CliError::new(
                Exit::Failed,
                format!(
                    "no keyspace named {name:?} in {}; {there}",
                    db.path().display()
                ),
            ))
        }
        Err(e) => Err(CliError::from(e).context(format!("keyspace {name:?}"))),
    }
}

/// Every keyspace of `db`: the default keyspace first, then the named ones
/// in name order.
pub fn all_keyspaces(db: &Db) -> CliResult<Vec<Keyspace>> {
    let mut all = vec![db.default_keyspace()];
    let mut names = db.keyspaces();
    names.sort();
    for name in names {
        all.push(keyspace(db, Some(&name), false)?);
    }
    Ok(all)
}

/// Fewest bytes written by the user for a write amplification to be shown:
/// below it, the fixed costs of file headers, footers and the manifest
/// dominate, and a 20-byte load reads as "123.50x".
pub const MIN_BYTES_FOR_A_RATIO: u64 = 1 << 20;

/// What is shown instead of a ratio computed on too little data.
pub const TOO_SMALL_FOR_A_RATIO: &str =
    "not shown (too little data for the ratio to mean anything)";

/// Bytes written to files per byte written by the user, when the user wrote
/// at least [`MIN_BYTES_FOR_A_RATIO`].
pub fn amplification(user_bytes: u64, file_bytes: u64) -> Option<f64> {
    (user_bytes >= MIN_BYTES_FOR_A_RATIO).then(|| file_bytes as f64 / user_bytes as f64)
}

/// How long writers were slowed and stopped, and why (`Stats::stalls`).
pub fn stall_summary(stats: &Stats) -> String {
    use crate::progress::thousands;
    let st = &stats.stalls;
    let secs = |us: u64| format!("{:.1} s", us as f64 / 1e6);
    format!(
        "slowed {} (level 0 {}, pending bytes {}, memtables {}); \
         stopped {} times for {} (level 0 {}, pending bytes {}, memtables {})",
        secs(stats.write_delay_micros),
        secs(st.level0_delay_micros),
        secs(st.pending_bytes_delay_micros),
        secs(st.memtables_delay_micros),
        thousands(stats.write_stops),
        secs(stats.write_stop_micros),
        st.level0_stops,
        st.pending_bytes_stops,
        st.memtables_stops
    )
}

/// What a run wrote: user bytes, file bytes, write amplification.
pub fn write_summary(stats: &Stats) -> String {
    use crate::progress::bytes;
    let files =
        stats.wal_bytes_written + stats.flush_bytes_written + stats.compaction_bytes_written;
    let ratio = amplification(stats.user_bytes_written, files)
        .map_or_else(|| TOO_SMALL_FOR_A_RATIO.to_string(), |r| format!("{r:.2}x"));
    format!(
        "write amplification {}: {} written by the user, {} to files \
         (wal {}, flushes {}, compactions {}; {} trivial moves)",
        ratio,
        bytes(stats.user_bytes_written),
        bytes(files),
        bytes(stats.wal_bytes_written),
        bytes(stats.flush_bytes_written),
        bytes(stats.compaction_bytes_written),
        stats.trivial_moves
    )
}

/// Records per batch handed to the engine by bulk loads.
pub const BATCH_RECORDS: usize = 4096;
/// Bytes per batch handed to the engine by bulk loads.
pub const BATCH_BYTES: usize = 4 << 20;

/// Writes a stream of records in batches.
///
/// Batches go to the engine with `Durability::Os`: once [`Loader::put`]
/// has handed a batch over, its records survive the process being killed,
/// and [`Loader::acknowledged`] counts them. Nothing is on stable storage
/// until [`Loader::finish`] (or [`Loader::sync`]) returns, as gdbm leaves
/// writes in its cache until `gdbm_sync` or `gdbm_close`.
pub struct Loader<'d> {
    db: &'d Db,
    keyspace: Keyspace,
    batch: Batch,
    batch_bytes: usize,
    durability: Durability,
    /// Records the engine has accepted (handed to the operating system).
    written: u64,
}

impl<'d> Loader<'d> {
    /// A loader writing into the default keyspace of `db`.
    pub fn new(db: &'d Db) -> Loader<'d> {
        Loader {
            db,
            keyspace: db.default_keyspace(),
            batch: Batch::new(),
            batch_bytes: 0,
            durability: Durability::Os,
            written: 0,
        }
    }

    /// A loader that makes every record durable before the next is read
    /// (gdbmtool's `--synchronize`); no batching.
    pub fn synchronous(db: &'d Db) -> Loader<'d> {
        Loader {
            durability: Durability::Sync,
            ..Loader::new(db)
        }
    }

    /// The database.
    pub fn db(&self) -> &'d Db {
        self.db
    }

    /// The keyspace later puts go to.
    pub fn keyspace(&self) -> &Keyspace {
        &self.keyspace
    }

    /// Sends later puts to `keyspace` (pending ones keep theirs).
    pub fn set_keyspace(&mut self, keyspace: Keyspace) {
        self.keyspace = keyspace;
    }

    /// Records the engine has accepted: they survive the process being
    /// killed, and are durable once `finish` or `sync` returns.
    pub fn acknowledged(&self) -> u64 {
        self.written
    }

    /// Adds a put. REQUIRES: `check_record(key, value)` passed.
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> lamina::Result<()> {
        self.batch.put_in(&self.keyspace, key, value);
        self.batch_bytes += key.len() + value.len();
        self.maybe_write()
    }

    fn maybe_write(&mut self) -> lamina::Result<()> {
        if self.durability == Durability::Sync
            || self.batch.len() >= BATCH_RECORDS
            || self.batch_bytes >= BATCH_BYTES
        {
            self.write_pending()?;
        }
        Ok(())
    }

    /// Hands the pending batch to the engine, so that reads see it.
    pub fn write_pending(&mut self) -> lamina::Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let n = self.batch.len() as u64;
        let batch = std::mem::take(&mut self.batch);
        self.batch_bytes = 0;
        self.db.write_with(batch, self.durability)?;
        self.written += n;
        Ok(())
    }

    /// Makes every record so far durable.
    pub fn sync(&mut self) -> lamina::Result<()> {
        self.write_pending()?;
        self.db.sync()
    }

    /// Writes what is pending and, if anything was written, makes
    /// everything durable. On an error, `acknowledged` says how many
    /// records the engine kept.
    pub fn finish(&mut self) -> lamina::Result<u64> {
        self.write_pending()?;
        if self.written > 0 {
            self.db.flush()?;
        }
        Ok(self.written)
    }
}
