//! `lamina scan DB`: prints records in key order as tab-separated lines
//! (the escapes of `lamina dump --format tsv`, so the output loads back).

use crate::cmd::{arg_bytes, output_error, push_hex, Ctx};
use crate::dumpfmt::tsv::escape;
use crate::engine::{self, Mode};
use crate::error::{CliResult, Exit};
use std::ffi::OsString;
use std::io::Write;
use std::ops::Bound;
use std::path::PathBuf;

/// Arguments of `lamina scan`.
#[derive(Debug, clap::Args)]
pub struct ScanArgs {
    /// The database directory.
    pub db: PathBuf,
    /// Start at this key (included).
    #[arg(long, value_name = "KEY")]
    pub from: Option<OsString>,
    /// Stop before this key (excluded).
    #[arg(long, value_name = "KEY")]
    pub to: Option<OsString>,
    /// Only keys starting with this (combines with --from/--to).
    #[arg(long)]
    pub prefix: Option<OsString>,
    /// Descending order.
    #[arg(short, long)]
    pub reverse: bool,
    /// Print at most this many records.
    #[arg(short = 'l', long)]
    pub limit: Option<u64>,
    /// Print keys only.
    #[arg(short = 'k', long)]
    pub keys_only: bool,
    /// Keys in arguments are hex, and keys and values are printed in hex.
    #[arg(long)]
    pub hex: bool,
    /// The keyspace (`''` or absent: the default keyspace).
    #[arg(long, value_name = "NAME")]
    pub keyspace: Option<String>,
}

/// Runs `lamina scan`.
pub fn run(args: ScanArgs, _ctx: &Ctx) -> CliResult<Exit> {
    let db = engine::open(&args.db, Mode::ReadOnly)?;
    let bytes = |a: &Option<OsString>| a.as_ref().map(|a| arg_bytes(a, args.hex)).transpose();
    let (from, to, prefix) = (bytes(&args.from)?, bytes(&args.to)?, bytes(&args.prefix)?);
    let start = from.as_deref().map_or(Bound::Unbounded, Bound::Included);
    let end = to.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
    let ks = engine::keyspace(&db, args.keyspace.as_deref(), false)?;
    let iter = match &prefix {
        Some(p) if from.is_none() && to.is_none() => ks.prefix(p),
        _ => ks.range::<&[u8], _>((start, end)),
    };
    if args.reverse {
        emit(iter.rev(), &args, prefix.as_deref())?;
    } else {
        emit(iter, &args, prefix.as_deref())?;
    }
    Ok(Exit::Ok)
}

/// Prints the records of `iter` (those starting with `prefix`, if given).
fn emit<I>(iter: I, args: &ScanArgs, prefix: Option<&[u8]>) -> CliResult<()>
where
    I: Iterator<Item = lamina::Result<(Vec<u8>, Vec<u8>)>>,
{
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    let mut line = Vec::new();
    let mut printed = 0u64;
    for item in iter {
        if args.limit.is_some_and(|l| printed >= l) {
            break;
        }
        let (k, v) = item?;
        if prefix.is_some_and(|p| !k.starts_with(p)) {
            continue;
        }
        line.clear();
        let field = |d: &[u8], line: &mut Vec<u8>| {
            if args.hex {
                push_hex(d, line)
            } else {
                escape(d, line)
            }
        };
        field(&k, &mut line);
        if !args.keys_only {
            line.push(b'\t');
            field(&v, &mut line);
        }
        line.push(b'\n');
        out.write_all(&line).map_err(output_error)?;
        printed += 1;
    }
    out.flush().map_err(output_error)
}
