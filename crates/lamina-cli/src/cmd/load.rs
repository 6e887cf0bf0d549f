//! `lamina load DB [FILE]`: loads a gdbm ASCII dump, a Berkeley DB `db_dump`
//! text or tab-separated records (format detected unless given).
//!
//! Records go to the engine in batches, each acknowledged once the engine
//! has handed it to the operating system; the database is flushed and
//! closed at the end. If the input is malformed the
//! load stops there: the records before the bad one are kept (flushed), the
//! message names the line and how many records were kept, and the exit
//! code is 3. A failed write (a full disk) stops it too, exit code 5; the
//! message counts the records the engine acknowledged, which are kept.
//!
//! Each keyspace section of the dump goes to its keyspace, created if
//! missing (see `dumpfmt`).

use crate::cmd::{input, Ctx};
use crate::dumpfmt::database::{self, DumpChild};
use crate::dumpfmt::{self, Format, Item, ReadError, RecordReader};
use crate::engine::{self, check_record, Loader, Mode};
use crate::error::{CliError, CliResult, Exit};
use crate::progress::{Progress, Total};
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// Arguments of `lamina load`.
#[derive(Debug, clap::Args)]
pub struct LoadArgs {
    /// The database directory (created if missing).
    pub db: PathBuf,
    /// The dump to read; standard input if absent or `-`.
    pub file: Option<PathBuf>,
    /// The dump format; detected from the first bytes if absent.
    #[arg(short = 'F', long, value_enum)]
    pub format: Option<Format>,
    /// Replace an existing database instead of adding to it.
    #[arg(short = 'n', long)]
    pub newdb: bool,
    /// Refuse records whose key is already in the database (exit code 3).
    #[arg(long)]
    pub no_replace: bool,
    /// Load every record into this keyspace (created if missing); the dump
    /// must hold no other named keyspace. Without it, each section of the
    /// dump goes to its own keyspace.
    #[arg(long, value_name = "NAME")]
    pub keyspace: Option<String>,
    /// Load through sorted tables ingested in one step, without the WAL:
    /// all records or none are kept; of a key repeated in the input, the
    /// last value wins.
    #[arg(long, conflicts_with = "no_replace")]
    pub bulk: bool,
    /// With --bulk: bytes of records sorted in memory before a sorted run
    /// is written to a temporary file (e.g. 256M; default 64M).
    #[arg(long, value_name = "BYTES", requires = "bulk", value_parser = crate::size::parse_size)]
    pub memory: Option<u64>,
}

/// Words for how many records an interrupted load kept.
pub fn kept(n: u64) -> String {
    match n {
        0 => "no record was loaded".into(),
        1 => "the record before it was loaded".into(),
        n => format!(
            "the {} records before it were loaded",
            crate::progress::thousands(n)
        ),
    }
}

/// Copies every record of `reader` into `loader`, each section into its
/// keyspace (or all into the loader's keyspace when `one_keyspace` is set);
/// stops at the first bad record or failed write. Returns how many records
/// were read, and the error that stopped the copy. The words of the error
/// do not say what was kept: only the loader knows (`acknowledged`).
pub fn copy_records(
    reader: &mut dyn RecordReader,
    loader: &mut Loader<'_>,
    progress: &mut Progress,
    replace: bool,
    one_keyspace: bool,
) -> (u64, CliResult<()>) {
    let (mut key, mut value) = (Vec::new(), Vec::new());
    let mut copied = 0u64;
    let mut last_bytes = 0;
    loop {
        let step = (|| -> CliResult<bool> {
            match reader.next_item(&mut key, &mut value) {
                Ok(Item::Record) => {}
                Ok(Item::End) => return Ok(false),
                Ok(Item::Keyspace(name)) => {
                    if !one_keyspace {
                        let ks = engine::keyspace(loader.db(), name.as_deref(), true)?;
                        loader.set_keyspace(ks);
                    } else if let Some(name) = name.filter(|n| n != loader.keyspace().name()) {
                        return Err(CliError::bad_input(format!(
                            "line {}: the dump holds keyspace {name:?}, and --keyspace loads \
                             into one keyspace; load without --keyspace to restore every \
                             keyspace as it was",
                            reader.line()
                        )));
                    }
                    return Ok(true);
                }
                Err(ReadError::Format(e)) => return Err(CliError::bad_input(e.to_string())),
                Err(ReadError::Io(e)) => return Err(CliError::io("reading input", e)),
            }
            if let Err(why) = check_record(&key, &value) {
                return Err(CliError::bad_input(format!("record {}: {why}", copied + 1)));
            }
            if !replace {
                loader.write_pending()?;
                if loader.keyspace().contains_key(&key)? {
                    return Err(CliError::bad_input(format!(
                        "record {}: key already exists",
                        copied + 1
                    )));
                }
            }
            loader.put(&key, &value)?;
            copied += 1;
            let bytes = reader.bytes_read();
            progress.add(1, bytes - last_bytes);
            last_bytes = bytes;
            Ok(true)
        })();
        match step {
            Ok(true) => {}
            Ok(false) => return (copied, Ok(())),
            Err(e) => return (copied, Err(e)),
        }
    }
}

/// Runs `lamina load`.
pub fn run(args: LoadArgs, ctx: &Ctx) -> CliResult<Exit> {
    let file = args.file.as_deref().filter(|p| *p != Path::new("-"));
    let foreign = file.and_then(|f| database::recognise_file(f).map(|kind| (f, kind)));
    let (mut source, size, mut child, label) = match foreign {
        Some((f, kind)) => {
            let (child, out) = DumpChild::spawn(kind, f)?;
            let label = format!("load ({} database through {})", kind.name(), child.tool());
            let out: Box<dyn BufRead> = Box::new(out);
            (out, None, Some((child, kind)), label)
        }
        None => {
            let (source, size) = input(args.file.as_deref())?;
            (source, size, None, String::new())
        }
    };
    let format = match (&child, args.format) {
        (Some((_, kind)), _) => kind.format(),
        (None, Some(f)) => f,
        (None, None) => detect_format(source.as_mut())?,
    };
    let label = if label.is_empty() {
        format!("load ({format})")
    } else {
        label
    };
    let existed = args.db.exists();
    let db = engine::open(&args.db, if args.newdb { Mode::New } else { Mode::Create })?;
    let (result, kept) = if args.bulk {
        let r = crate::cmd::load_bulk::run(
            args.keyspace.as_deref(),
            args.memory,
            ctx,
            db,
            source,
            format,
            size,
        );
        (r, 0)
    } else {
        load(&args, ctx, db, source, format, size, label)
    };
    let result = match child.take() {
        Some((c, _)) => {
            let tool = c.finish(result.is_err());
            result.and_then(|exit| tool.map(|()| exit))
        }
        None => result,
    };
    match result {
        Ok(exit) => Ok(exit),
        // A database this load created goes again when the load failed
        // and either kept nothing or read another library's database (a
        // migration is all or nothing: the source is still there).
        Err(e) if !existed && (foreign.is_some() || kept == 0) => {
            Err(remove_after_failure(&args.db, e, foreign.is_some()))
        }
        Err(e) => Err(e),
    }
}

/// The format of the dump at the start of `source`, detected from its first
/// bytes; a database file there is refused (it is read through its dump
/// tool, which needs its path).
fn detect_format(source: &mut dyn BufRead) -> CliResult<Format> {
    let head = source
        .fill_buf()
        .map_err(|e| CliError::io("reading input", e))?;
    if let Some(kind) = database::recognise(head) {
        return Err(CliError::bad_input(format!(
            "standard input holds a {} database file, not a dump; give its path \
             (lamina load DB FILE) and lamina reads it through its dump tool",
            kind.name()
        )));
    }
    dumpfmt::detect(head).map_err(CliError::bad_input)
}

/// Removes the database a load that failed with `e` created at `path`, and
/// returns `e` saying so; after a load from another library's database
/// (`foreign`) it says that no record was loaded instead of what was kept.
fn remove_after_failure(path: &Path, e: CliError, foreign: bool) -> CliError {
    let gone = if remove_created(path) {
        "the new database was removed"
    } else {
        "the new database could not be removed"
    };
    let message = if foreign {
        format!("{}; no record was loaded: {gone}", strip_kept(&e.message))
    } else {
        format!("{}; {gone}", e.message)
    };
    CliError::new(e.exit, message)
}

/// `message` without the words `run` appended about records kept.
fn strip_kept(message: &str) -> &str {
    message
        .rfind("; ")
        .filter(|&at| {
            let tail = message.get(at + 2..).unwrap_or("");
            tail.starts_with("no record was loaded")
                || tail.starts_with("the record before it")
                || tail.ends_with("before it were loaded")
        })
        .and_then(|at| message.get(..at))
        .unwrap_or(message)
}

/// Removes the database a failed load created at `path`. Whether it is gone.
fn remove_created(path: &Path) -> bool {
    let removed = match engine::options() {
        Ok(opts) => engine::Db::destroy(path, &opts).is_ok(),
        Err(_) => false,
    };
    let _ = std::fs::remove_dir(path);
    removed || !path.exists()
}

/// Loads `source` into `db` record by record and closes it. Returns the
/// outcome and the records kept.
fn load(
    args: &LoadArgs,
    ctx: &Ctx,
    db: engine::Db,
    source: Box<dyn BufRead>,
    format: Format,
    size: Option<u64>,
    label: String,
) -> (CliResult<Exit>, u64) {
    let total = size.map_or(Total::Unknown, Total::Bytes);
    let mut progress = Progress::new(label, total, ctx.progress.mode(true), &ctx.progress);
    let mut loader = Loader::new(&db);
    if let Some(name) = &args.keyspace {
        match engine::keyspace(&db, Some(name), true) {
            Ok(ks) => loader.set_keyspace(ks),
            Err(e) => {
                progress.abandon();
                drop(loader);
                let _ = db.close();
                return (Err(e), 0);
            }
        }
    }
    let mut reader = dumpfmt::reader(format, source);
    let (_, copied) = copy_records(
        reader.as_mut(),
        &mut loader,
        &mut progress,
        !args.no_replace,
        args.keyspace.is_some(),
    );
    // Keep everything read before an error: flush, then close.
    let finished = loader.finish().map(|_| ()).map_err(CliError::from);
    let kept_now = loader.acknowledged();
    let summary = engine::write_summary(&db.stats());
    let closed = db.close().map_err(CliError::from);
    let failure = copied.and(finished).and(closed);
    match failure {
        Ok(()) => {
            progress.note(&summary);
            progress.finish();
            (Ok(Exit::Ok), kept_now)
        }
        Err(e) => {
            progress.abandon();
            (
                Err(CliError::new(
                    e.exit,
                    format!("{}; {}", e.message, kept(kept_now)),
                )),
                kept_now,
            )
        }
    }
}
