//! `lamina put DB KEY [VALUE]`: stores one record, durably.

use crate::cmd::{arg_bytes, Ctx};
use crate::engine::{self, check_record, Durability, Mode};
use crate::error::{CliError, CliResult, Exit};
use std::ffi::OsString;
use std::io::Read;
use std::path::PathBuf;

/// Arguments of `lamina put`.
#[derive(Debug, clap::Args)]
pub struct PutArgs {
    /// The database directory (created if missing).
    pub db: PathBuf,
    /// The key.
    pub key: OsString,
    /// The value; read from standard input (all of it, as is) if absent.
    pub value: Option<OsString>,
    /// Key and value are given in hex.
    #[arg(long)]
    pub hex: bool,
    /// The keyspace (`''` or absent: the default keyspace); created if missing.
    #[arg(long, value_name = "NAME")]
    pub keyspace: Option<String>,
}

/// Runs `lamina put`: the record is on stable storage when it returns.
pub fn run(args: PutArgs, _ctx: &Ctx) -> CliResult<Exit> {
    let key = arg_bytes(&args.key, args.hex)?;
    let value = match &args.value {
        Some(v) => arg_bytes(v, args.hex)?,
        None => {
            let mut v = Vec::new();
            std::io::stdin()
                .read_to_end(&mut v)
                .map_err(|e| CliError::io("reading standard input", e))?;
            v
        }
    };
    check_record(&key, &value).map_err(|why| CliError::new(Exit::Usage, why))?;
    let db = engine::open(&args.db, Mode::Create)?;
    let ks = engine::keyspace(&db, args.keyspace.as_deref(), true)?;
    let mut batch = engine::Batch::new();
    batch.put_in(&ks, &key, &value);
    db.write_with(batch, Durability::Sync)?;
    db.close()?;
    Ok(Exit::Ok)
}
