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
    let mut seen = Unloadable::default();
    for ks in &keyspaces {
        section(ks, w.as_mut(), &mut seen)?;
    }
    w.finish().map_err(output_error)?;
    if args.format == Format::Gdbm {
        if let Some(note) = seen.note() {
            eprintln!("lamina: note: {note}");
        }
    }
    Ok(Exit::Ok)
}

/// Records of a gdbm dump that `gdbm_load` 1.23 refuses ("Malformed
/// data"), although the dump is well formed (`gdbm_dump` writes them the
/// same way, and `lamina load` reads them): an empty datum followed by
/// another line of data.
#[derive(Debug, Default)]
struct Unloadable {
    /// Records written so far.
    records: u64,
    /// The first record with the empty key.
    empty_key: Option<u64>,
    /// The first record with an empty value that another record follows.
    empty_value: Option<u64>,
    /// The last record written had an empty value.
    last_value_empty: bool,
}

impl Unloadable {
    fn record(&mut self, key: &[u8], value: &[u8]) {
        self.records += 1;
        if self.last_value_empty && self.empty_value.is_none() {
            self.empty_value = Some(self.records - 1);
        }
        if key.is_empty() && self.empty_key.is_none() {
            self.empty_key = Some(self.records);
        }
        self.last_value_empty = value.is_empty();
    }

    fn note(&self) -> Option<String> {
        let what = match (self.empty_key, self.empty_value) {
            (None, None) => return None,
            (Some(k), _) => format!("record {k} has the empty key"),
            (None, Some(v)) => format!("record {v} has an empty value and records follow it"),
        };
        Some(format!(
            "gdbm_load cannot load this dump: {what}, and gdbm_load 1.23 stops there with \
             \"Malformed data\" (as it does on gdbm_dump's own dump of such a record). \
             lamina load reads it; for Berkeley DB, dump with --format bdb"
        ))
    }
}

/// Writes the section of one keyspace: its header (none for the default
/// keyspace), then its records.
fn section(ks: &Keyspace, w: &mut dyn RecordWriter, seen: &mut Unloadable) -> CliResult<()> {
    if !ks.name().is_empty() {
        w.keyspace(ks.name()).map_err(output_error)?;
    }
    for item in ks.iter() {
        let (k, v) = item?;
        seen.record(&k, &v);
        w.record(&k, &v).map_err(output_error)?;
    }
    Ok(())
}
