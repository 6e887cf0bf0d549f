//! `lamina load DB [FILE]`: loads a gdbm ASCII dump, a Berkeley DB `db_dump`
//! text or tab-separated records (format detected unless given).
//!
//! Records go to the engine in batches with no durability of their own; the
//! database is flushed and closed at the end. If the input is malformed the
//! load stops there: the records before the bad one are kept (flushed), the
//! message names the line, and the exit code is 3.

use crate::cmd::{input, Ctx};
use crate::dumpfmt::{self, Format, ReadError, RecordReader};
use crate::engine::{self, check_record, Loader, Mode};
use crate::error::{CliError, CliResult, Exit};
use crate::progress::{Progress, Total};
use std::io::BufRead;
use std::path::PathBuf;

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
}

fn kept(n: u64) -> String {
    match n {
        0 => "no record was loaded".into(),
        1 => "the record before it was loaded".into(),
        n => format!("the {n} records before it were loaded"),
    }
}

/// Copies every record of `reader` into `loader`; stops at the first bad
/// record. Returns how many were copied.
pub fn copy_records(
    reader: &mut dyn RecordReader,
    loader: &mut Loader<'_>,
    progress: &mut Progress,
    replace: bool,
) -> CliResult<u64> {
    let (mut key, mut value) = (Vec::new(), Vec::new());
    let mut copied = 0u64;
    let mut last_bytes = 0;
    loop {
        match reader.next_record(&mut key, &mut value) {
            Ok(true) => {}
            Ok(false) => return Ok(copied),
            Err(ReadError::Format(e)) => {
                return Err(CliError::bad_input(format!("{e}; {}", kept(copied))))
            }
            Err(ReadError::Io(e)) => return Err(CliError::io("reading input", e)),
        }
        if let Err(why) = check_record(&key, &value) {
            return Err(CliError::bad_input(format!(
                "record {}: {why}; {}",
                copied + 1,
                kept(copied)
            )));
        }
        if !replace {
            loader.write_pending()?;
            if loader.db().contains_key(&key)? {
                return Err(CliError::bad_input(format!(
                    "record {}: key already exists; {}",
                    copied + 1,
                    kept(copied)
                )));
            }
        }
        loader.put(&key, &value)?;
        copied += 1;
        let bytes = reader.bytes_read();
        progress.add(1, bytes - last_bytes);
        last_bytes = bytes;
    }
}

/// Runs `lamina load`.
pub fn run(args: LoadArgs, ctx: &Ctx) -> CliResult<Exit> {
    let (mut source, size) = input(args.file.as_deref())?;
    let format = match args.format {
        Some(f) => f,
        None => {
            let head = source
                .fill_buf()
                .map_err(|e| CliError::io("reading input", e))?;
            dumpfmt::detect(head).map_err(CliError::bad_input)?
        }
    };
    let db = engine::open(&args.db, if args.newdb { Mode::New } else { Mode::Create })?;
    let total = size.map_or(Total::Unknown, Total::Bytes);
    let mut progress = Progress::new(
        format!("load ({format})"),
        total,
        ctx.progress.mode(true),
        &ctx.progress,
    );
    let mut loader = Loader::new(&db);
    let mut reader = dumpfmt::reader(format, source);
    let result = copy_records(
        reader.as_mut(),
        &mut loader,
        &mut progress,
        !args.no_replace,
    );
    // Keep everything read before an error: flush, then close.
    let finished = loader.finish().map_err(CliError::from);
    progress.note(&engine::write_summary(&db.stats()));
    let closed = db.close().map_err(CliError::from);
    progress.finish();
    result?;
    finished?;
    closed?;
    Ok(Exit::Ok)
}
