//! The peers, each behind the cargo feature of its name (all on by
//! default): RocksDB (the `rocksdb` crate, RocksDB's C++ compiled here with
//! `-O3 -DNDEBUG`), LMDB (`heed`), redb and fjall. Each gets its default
//! options, plus what makes the comparison like for like (`describe` says
//! exactly what, and the run's header prints it).

#[cfg(feature = "fjall")]
pub mod fjall_store;
#[cfg(feature = "lmdb")]
pub mod lmdb_store;
#[cfg(feature = "redb")]
pub mod redb_store;
#[cfg(feature = "rocksdb")]
pub mod rocksdb_store;

use super::store::{Config, Store};
use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};

/// Every engine, in the default order.
pub const ALL: [&str; 5] = ["lamina", "rocksdb", "lmdb", "redb", "fjall"];

/// Versions of the peers' crates, from Cargo.lock (build.rs).
pub const VERSIONS: &str = env!("LAMINA_BENCH_PEER_VERSIONS");

/// The version `Cargo.lock` holds for `krate`.
pub fn version(krate: &str) -> &'static str {
    VERSIONS
        .split(';')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == krate)
        .map(|(_, v)| v)
        .unwrap_or("?")
}

/// Whether `engine` is in this build (its cargo feature is on).
// With every feature on, clippy sees a `matches!`; the arms differ by build.
#[allow(clippy::match_like_matches_macro)]
pub fn built(engine: &str) -> bool {
    match engine {
        "lamina" => true,
        "rocksdb" => cfg!(feature = "rocksdb"),
        "lmdb" => cfg!(feature = "lmdb"),
        "redb" => cfg!(feature = "redb"),
        "fjall" => cfg!(feature = "fjall"),
        "bdb" => cfg!(bdb_linked),
        _ => false,
    }
}

/// The engine's name and version as the tables print them.
pub fn title(engine: &str) -> String {
    match engine {
        "lamina" => format!("lamina {}", crate::VERSION),
        "rocksdb" => {
            let sys = version("librocksdb-sys");
            let rocks = sys.split_once('+').map_or(sys, |(_, r)| r);
            format!("RocksDB {rocks} (rocksdb {})", version("rocksdb"))
        }
        "lmdb" => format!(
            "LMDB (heed {}, lmdb-master-sys {})",
            version("heed"),
            version("lmdb-master-sys")
        ),
        "redb" => format!("redb {}", version("redb")),
        "fjall" => format!("fjall {}", version("fjall")),
        "sqlite" => format!(
            "SQLite (rusqlite {}, bundled libsqlite3-sys {})",
            version("rusqlite"),
            version("libsqlite3-sys")
        ),
        "bdb" => "Berkeley DB 5.3 (Debian's libdb5.3)".into(),
        other => other.to_string(),
    }
}

/// What `engine` is given, in words, for the run's header.
pub fn describe(engine: &str, cfg: &Config) -> String {
    let mib = |b: u64| format!("{:.0} MiB", b as f64 / (1 << 20) as f64);
    let two = cfg.cache_beside_two_write_buffers();
    match engine {
        "lamina" => format!(
            "default options, memory_budget {} (memtable {}), Durability::Os",
            mib(cfg.memory_budget),
            mib(cfg.write_buffer)
        ),
        "rocksdb" => format!(
            "default options; LZ4 on every level; LRU block cache {} + write_buffer_size {} \
             x max_write_buffer_number 2 = the budget; bloom filter 10 bits/key (lamina's); \
             WriteOptions default (WAL written, sync off)",
            mib(two),
            mib(cfg.write_buffer)
        ),
        "lmdb" => format!(
            "default flags + MDB_NOSYNC; map size {}; one write transaction per commit; \
             its cache is the OS page cache (no budget of its own)",
            mib(lmdb_map_size(cfg))
        ),
        "redb" => format!(
            "default options, cache_size {} (the budget); commits at Durability::None, its \
             only level short of an fsync, which keeps them in redb's own write buffer; one \
             empty Durability::Immediate commit (timed) ends each write workload, writing \
             that buffer to the file and syncing it",
            mib(cfg.memory_budget)
        ),
        "fjall" => format!(
            "default options (LZ4 from level 2, bloom filters); cache_size {} + \
             max_memtable_size {} x 2 = the budget; commits flushed to the OS (its default, \
             PersistMode::Buffer)",
            mib(two),
            mib(cfg.write_buffer)
        ),
        _ => String::new(),
    }
}

/// LMDB's map size: four times the data put, plus 1 GiB (only address space).
pub fn lmdb_map_size(cfg: &Config) -> u64 {
    (cfg.data_bytes.saturating_mul(4) + (1 << 30)).next_multiple_of(1 << 30)
}

/// Opens (creating) `engine`'s database in the directory `path`.
pub fn open(engine: &str, path: &Path, cfg: &Config) -> Result<Box<dyn Store>, String> {
    let _ = cfg;
    std::fs::create_dir_all(path).map_err(|e| format!("{}: {e}", path.display()))?;
    match engine {
        "lamina" => Ok(Box::new(super::store::LaminaStore::open(path)?)),
        #[cfg(feature = "rocksdb")]
        "rocksdb" => Ok(Box::new(rocksdb_store::RocksStore::open(path, cfg)?)),
        #[cfg(feature = "lmdb")]
        "lmdb" => Ok(Box::new(lmdb_store::LmdbStore::open(path, cfg)?)),
        #[cfg(feature = "redb")]
        "redb" => Ok(Box::new(redb_store::RedbStore::open(path, cfg)?)),
        #[cfg(feature = "fjall")]
        "fjall" => Ok(Box::new(fjall_store::FjallStore::open(path, cfg)?)),
        other => Err(format!("{other}: not in this build")),
    }
}

/// What the children of a driver reported: the lines each printed that
/// `parse` reads as rows, and a message for each engine skipped (not in
/// this build) or failed.
pub struct Children<R> {
    /// Every child's rows, in the engines' order.
    pub rows: Vec<R>,
    /// An engine left out of this build.
    pub skipped: Vec<String>,
    /// An engine whose process failed.
    pub failed: Vec<String>,
}

/// How a driver starts its children beyond `--child ENGINE`: a program the
/// child runs under (`bench/memlimit 512M`: the program's name and its
/// arguments, before this program's), and arguments added after the rest.
#[derive(Debug, Clone, Default)]
pub struct Launch {
    /// The wrapping command, empty for none.
    pub wrapper: Vec<OsString>,
    /// Arguments added after `--child ENGINE`.
    pub args: Vec<OsString>,
}

/// Runs this program again for each of `engines` with the same command
/// line and `--child ENGINE`, one after the other, each in a process of its
/// own (its page cache, memory and threads apart); `tool` names the driver
/// in messages, `unit` what its rows count ("workload", "row").
pub fn run_children<R>(
    tool: &str,
    unit: &str,
    engines: &[String],
    parse: impl Fn(&str) -> Option<R>,
) -> Result<Children<R>, String> {
    run_children_with(tool, unit, engines, &Launch::default(), parse)
}

/// [`run_children`], each child started as `launch` says.
pub fn run_children_with<R>(
    tool: &str,
    unit: &str,
    engines: &[String],
    launch: &Launch,
    parse: impl Fn(&str) -> Option<R>,
) -> Result<Children<R>, String> {
    let exe = std::env::current_exe().map_err(|e| format!("finding this program: {e}"))?;
    let mut out = Children {
        rows: Vec::new(),
        skipped: Vec::new(),
        failed: Vec::new(),
    };
    for engine in engines {
        if !built(engine) {
            let msg =
                format!("{engine}: skipped, not in this build (cargo feature `{engine}` off)");
            eprintln!("lamina-bench {tool}: {msg}");
            out.skipped.push(msg);
            continue;
        }
        eprintln!("lamina-bench {tool}: {}", title(engine));
        let mut cmd = match launch.wrapper.split_first() {
            Some((program, args)) => {
                let mut c = Command::new(program);
                c.args(args).arg(&exe);
                c
            }
            None => Command::new(&exe),
        };
        let child = cmd
            .args(std::env::args_os().skip(1))
            .args(["--child", engine])
            .args(&launch.args)
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| format!("{}: {e}", cmd.get_program().to_string_lossy()))?;
        let text = String::from_utf8_lossy(&child.stdout);
        let before = out.rows.len();
        out.rows.extend(text.lines().filter_map(&parse));
        if !child.status.success() {
            let msg = format!(
                "{engine}: failed ({}) after {} {unit}(s); see its message above",
                child.status,
                out.rows.len() - before
            );
            eprintln!("lamina-bench {tool}: {msg}");
            out.failed.push(msg);
        }
    }
    Ok(out)
}
