//! `lamina count DB`: the number of records in every keyspace (with
//! `--keyspace`, in one; with `--prefix`, of those whose key starts with
//! it). `--json` also gives the count of each keyspace.

use crate::cmd::{arg_bytes, output_error, Ctx};
use crate::engine::{self, Mode};
use crate::error::{CliResult, Exit};
use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `lamina count`.
#[derive(Debug, clap::Args)]
pub struct CountArgs {
    /// The database directory.
    pub db: PathBuf,
    /// Count only keys starting with this.
    #[arg(long)]
    pub prefix: Option<OsString>,
    /// The prefix is given in hex.
    #[arg(long)]
    pub hex: bool,
    /// Count only this keyspace (`''`: the default keyspace).
    #[arg(long, value_name = "NAME")]
    pub keyspace: Option<String>,
    /// Print a JSON object: `total`, and `keyspaces` (each `name`, `records`).
    #[arg(long)]
    pub json: bool,
}

/// Runs `lamina count`.
pub fn run(args: CountArgs, _ctx: &Ctx) -> CliResult<Exit> {
    let db = engine::open(&args.db, Mode::ReadOnly)?;
    let prefix = args
        .prefix
        .as_ref()
        .map(|p| arg_bytes(p, args.hex))
        .transpose()?;
    let keyspaces = match &args.keyspace {
        Some(name) => vec![engine::keyspace(&db, Some(name), false)?],
        None => engine::all_keyspaces(&db)?,
    };
    let mut counts = Vec::new();
    for ks in &keyspaces {
        // Counting folds no merge operand, so a key whose operands cannot
        // be folded is counted like any other.
        let n = match &prefix {
            Some(p) => ks.prefix(p),
            None => ks.iter(),
        }
        .count_keys()?;
        counts.push((ks.name().to_string(), n));
    }
    let total: u64 = counts.iter().map(|(_, n)| n).sum();
    let text = if args.json {
        let keyspaces: Vec<_> = counts
            .iter()
            .map(|(name, n)| serde_json::json!({ "name": name, "records": n }))
            .collect();
        serde_json::json!({ "total": total, "keyspaces": keyspaces }).to_string()
    } else {
        total.to_string()
    };
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}").map_err(output_error)?;
    Ok(Exit::Ok)
}
