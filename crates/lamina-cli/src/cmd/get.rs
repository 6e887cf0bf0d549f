//! `lamina get DB KEY`: prints the value of a key.

use crate::cmd::{arg_bytes, output_error, push_hex, Ctx};
use crate::engine::{self, Mode};
use crate::error::{CliError, CliResult, Exit};
use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `lamina get`.
#[derive(Debug, clap::Args)]
pub struct GetArgs {
    /// The database directory.
    pub db: PathBuf,
    /// The key.
    pub key: OsString,
    /// The key is given in hex, and the value is printed in hex.
    #[arg(long)]
    pub hex: bool,
    /// The keyspace (`''` or absent: the default keyspace).
    #[arg(long, value_name = "NAME")]
    pub keyspace: Option<String>,
}

/// Runs `lamina get`: the value and a newline; exit code 1 if the key is missing.
pub fn run(args: GetArgs, _ctx: &Ctx) -> CliResult<Exit> {
    let key = arg_bytes(&args.key, args.hex)?;
    let db = engine::open(&args.db, Mode::ReadOnly)?;
    let ks = engine::keyspace(&db, args.keyspace.as_deref(), false)?;
    let Some(value) = ks.get(&key)? else {
        return Err(CliError::new(
            Exit::Failed,
            format!("no such key: {}", args.key.to_string_lossy()),
        ));
    };
    let mut line = Vec::with_capacity(value.len() * 2 + 1);
    if args.hex {
        push_hex(&value, &mut line);
    } else {
        line.extend_from_slice(&value);
    }
    line.push(b'\n');
    let mut out = std::io::stdout().lock();
    out.write_all(&line)
        .and_then(|_| out.flush())
        .map_err(output_error)?;
    Ok(Exit::Ok)
}
