//! `lamina delete DB KEY...`: removes records, durably.

use crate::cmd::{arg_bytes, Ctx};
use crate::engine::{self, Durability, Mode};
use crate::error::{CliError, CliResult, Exit};
use std::ffi::OsString;
use std::path::PathBuf;

/// Arguments of `lamina delete`.
#[derive(Debug, clap::Args)]
pub struct DeleteArgs {
    /// The database directory.
    pub db: PathBuf,
    /// The keys.
    #[arg(required = true)]
    pub keys: Vec<OsString>,
    /// Keys are given in hex.
    #[arg(long)]
    pub hex: bool,
    /// Fail (exit code 1) if a key is missing; the others are still deleted.
    #[arg(long)]
    pub must_exist: bool,
    /// The keyspace (`''` or absent: the default keyspace).
    #[arg(long, value_name = "NAME")]
    pub keyspace: Option<String>,
}

/// Runs `lamina delete`: all keys go in one atomic, durable batch.
pub fn run(args: DeleteArgs, _ctx: &Ctx) -> CliResult<Exit> {
    let db = engine::open(&args.db, Mode::Existing)?;
    let ks = engine::keyspace(&db, args.keyspace.as_deref(), false)?;
    let mut batch = engine::Batch::new();
    let mut missing = Vec::new();
    for k in &args.keys {
        let key = arg_bytes(k, args.hex)?;
        if args.must_exist && !ks.contains_key(&key)? {
            missing.push(k.to_string_lossy().into_owned());
        }
        batch.delete_in(&ks, &key);
    }
    db.write_with(batch, Durability::Sync)?;
    db.close()?;
    if missing.is_empty() {
        Ok(Exit::Ok)
    } else {
        Err(CliError::new(
            Exit::Failed,
            format!("no such key: {}", missing.join(", ")),
        ))
    }
}
