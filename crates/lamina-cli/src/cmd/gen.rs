//! `lamina gen numbers N`: the numbers-in-English data set, records 0
//! through N, byte-identical to `numbers.pl N` (the Perl program of "How
//! well does a GNU dbm database scale?", kept in `tests/fixtures`), or
//! loaded straight into a database with `--into`.

use crate::cmd::Ctx;
use crate::engine::{self, Loader, Mode};
use crate::error::{CliError, CliResult, Exit};
use crate::numbers::{LineStyle, Numbers};
use crate::progress::{Progress, Total};
use std::io::Write;
use std::path::PathBuf;

/// Data sets `gen` can make.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Dataset {
    /// Key N, value N in English words (`123 -> one hundred twenty-three`).
    Numbers,
}

/// Output styles of `gen`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Style {
    /// `store N "words"` lines: gdbmtool commands, as numbers.pl prints them.
    Store,
    /// `N<TAB>words` lines, for `lamina load`.
    Tsv,
    /// Key and value on alternate lines, for `db_load -T`.
    DbLoad,
}

/// Arguments of `lamina gen`.
#[derive(Debug, clap::Args)]
pub struct GenArgs {
    /// The data set.
    #[arg(value_enum)]
    pub dataset: Dataset,
    /// The last record: records 0 through N are made (N + 1 records), as
    /// `numbers.pl N` does.
    #[arg(default_value_t = 1_000_000)]
    pub n: u64,
    /// The first record (default 0).
    #[arg(long, value_name = "START", default_value_t = 0)]
    pub from: u64,
    /// How to write the records.
    #[arg(short = 'F', long, value_enum, default_value_t = Style::Store)]
    pub format: Style,
    /// Load the records into this database instead of printing them.
    #[arg(long, value_name = "DB")]
    pub into: Option<PathBuf>,
    /// With --into: replace an existing database.
    #[arg(short = 'n', long, requires = "into")]
    pub newdb: bool,
}

/// Runs `lamina gen`.
pub fn run(args: GenArgs, ctx: &Ctx) -> CliResult<Exit> {
    let Dataset::Numbers = args.dataset;
    if args.from > args.n {
        return Err(CliError::bad_input(format!(
            "--from {} is past the last record, {}: the range holds no record \
             (gen numbers N makes records {} through N)",
            args.from, args.n, args.from
        )));
    }
    let mut numbers = Numbers::range(args.from, args.n);
    match &args.into {
        Some(path) => into_db(&mut numbers, path, args.newdb, ctx),
        None => print(&mut numbers, args.format),
    }
}

fn print(numbers: &mut Numbers, format: Style) -> CliResult<Exit> {
    let style = match format {
        Style::Store => LineStyle::Store,
        Style::Tsv => LineStyle::Tsv,
        Style::DbLoad => LineStyle::DbLoad,
    };
    const BUF: usize = 1 << 20;
    let mut buf = Vec::with_capacity(BUF + 4096);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    while numbers.remaining() > 0 {
        buf.clear();
        numbers.write_lines(&mut buf, BUF, style);
        if let Err(e) = out.write_all(&buf) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                return Ok(Exit::Ok);
            }
            return Err(CliError::io("writing output", e));
        }
    }
    match out.flush() {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(CliError::io("writing output", e))
        }
        _ => Ok(Exit::Ok),
    }
}

fn into_db(
    numbers: &mut Numbers,
    path: &std::path::Path,
    newdb: bool,
    ctx: &Ctx,
) -> CliResult<Exit> {
    let db = engine::open(path, if newdb { Mode::New } else { Mode::Create })?;
    let total = Total::Records(numbers.remaining());
    let mut progress = Progress::new("gen", total, ctx.progress.mode(true), &ctx.progress);
    let mut loader = Loader::new(&db);
    let mut result = Ok(());
    while numbers.remaining() > 0 && result.is_ok() {
        numbers.for_each_record(4096, |k, v| {
            if result.is_ok() {
                result = loader.put(k, v);
                progress.add(1, (k.len() + v.len()) as u64);
            }
        });
    }
    result?;
    loader.finish()?;
    progress.note(&engine::write_summary(&db.stats()));
    db.close()?;
    progress.finish();
    Ok(Exit::Ok)
}
