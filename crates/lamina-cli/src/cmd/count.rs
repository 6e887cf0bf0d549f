//! `lamina count DB`: the number of records (with `--prefix`, of those whose
//! key starts with it).

use crate::cmd::{arg_bytes, Ctx};
use crate::engine::{self, Mode};
use crate::error::{CliResult, Exit};
use std::ffi::OsString;
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
}

/// Runs `lamina count`.
pub fn run(args: CountArgs, _ctx: &Ctx) -> CliResult<Exit> {
    let db = engine::open(&args.db, Mode::ReadOnly)?;
    let iter = match &args.prefix {
        Some(p) => db.prefix(&arg_bytes(p, args.hex)?),
        None => db.iter(),
    };
    let mut n = 0u64;
    for item in iter {
        item?;
        n += 1;
    }
    println!("{n}");
    Ok(Exit::Ok)
}
