//! `lamina dump DB [FILE]`: writes every record of every keyspace, in key
//! order, as a gdbm ASCII dump (the default), Berkeley DB `db_dump` text, or
//! tab-separated text: the default keyspace first, then a section per named
//! keyspace (see `dumpfmt`). `lamina load` reads each back exactly;
//! `gdbm_load` and `db_load` read the first two.

use crate::cmd::{output, output_error, refuse_inside_database, Ctx};
use crate::dumpfmt::{self, Format, RecordWriter};
use crate::engine::{self, Keyspace, Mode};
use crate::error::{CliResult, Exit};
use std::path::{Path, PathBuf};

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
    /// Dump only this keyspace (`''`: the default keyspace).
    #[arg(long, value_name = "NAME")]
    pub keyspace: Option<String>,
}

/// Runs `lamina dump`.
pub fn run(args: DumpArgs, _ctx: &Ctx) -> CliResult<Exit> {
    if let Some(file) = args.file.as_deref().filter(|f| *f != Path::new("-")) {
        refuse_inside_database(&args.db, file)?;
    }
    let db = engine::open(&args.db, Mode::ReadOnly)?;
    let keyspaces = match &args.keyspace {
        Some(name) => vec![engine::keyspace(&db, Some(name), false)?],
        None => engine::all_keyspaces(&db)?,
    };
    let mut out = output(args.file.as_deref())?;
    let mut w = dumpfmt::writer(args.format, &mut out);
    for ks in &keyspaces {
        section(ks, w.as_mut())?;
    }
    w.finish().map_err(output_error)?;
    Ok(Exit::Ok)
}

/// Writes the section of one keyspace: its header (none for the default
/// keyspace), then its records.
fn section(ks: &Keyspace, w: &mut dyn RecordWriter) -> CliResult<()> {
    if !ks.name().is_empty() {
        w.keyspace(ks.name()).map_err(output_error)?;
    }
    for item in ks.iter() {
        let (k, v) = item?;
        w.record(&k, &v).map_err(output_error)?;
    }
    Ok(())
}
