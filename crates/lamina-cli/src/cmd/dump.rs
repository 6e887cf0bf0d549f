//! `lamina dump DB [FILE]`: writes every record, in key order, as a gdbm
//! ASCII dump (the default), Berkeley DB `db_dump` text, or tab-separated
//! text. `lamina load` reads each back exactly; `gdbm_load` and `db_load`
//! read the first two.

use crate::cmd::{output, output_error, Ctx};
use crate::dumpfmt::{self, Format};
use crate::engine::{self, Mode};
use crate::error::{CliResult, Exit};
use std::path::PathBuf;

/// Arguments of `lamina dump`.
#[derive(Debug, clap::Args)]
pub struct DumpArgs {
    /// The database directory.
    pub db: PathBuf,
    /// Where to write; standard output if absent or `-`.
    pub file: Option<PathBuf>,
    /// The dump format.
    #[arg(short = 'F', long, value_enum, default_value_t = Format::Gdbm)]
    pub format: Format,
}

/// Runs `lamina dump`.
pub fn run(args: DumpArgs, _ctx: &Ctx) -> CliResult<Exit> {
    let db = engine::open(&args.db, Mode::ReadOnly)?;
    let mut out = output(args.file.as_deref())?;
    let mut w = dumpfmt::writer(args.format, &mut out);
    for item in db.iter() {
        let (k, v) = item?;
        w.record(&k, &v).map_err(output_error)?;
    }
    w.finish().map_err(output_error)?;
    Ok(Exit::Ok)
}
