//! One shell session: carries out parsed commands against the database,
//! printing gdbmtool's output formats.

use super::commands::{help_text, Verb};
use super::datum::format_datum;
use super::parser::Command;
use crate::dumpfmt::{self, Format};
use crate::engine::bulk::BulkSink;
use crate::engine::{check_record, Db, Loader};
use crate::error::{CliError, Exit};
use crate::progress::{Mode as ProgressMode, Progress, Total};
use std::io::{self, BufRead, Write};
use std::ops::Bound;
use std::path::PathBuf;

/// What a command asks of the read loop.
pub(super) enum Flow {
    Continue,
    Quit,
}

/// A failure that ends the shell: an engine error or broken output.
pub(super) enum Fatal {
    Engine(lamina::Error),
    Output(io::Error),
    Stop(CliError),
}

impl From<lamina::Error> for Fatal {
    fn from(e: lamina::Error) -> Fatal {
        Fatal::Engine(e)
    }
}

impl From<io::Error> for Fatal {
    fn from(e: io::Error) -> Fatal {
        Fatal::Output(e)
    }
}

pub(super) struct Shell<'d, W: Write> {
    pub loader: Loader<'d>,
    pub out: W,
    pub db_name: String,
    /// The database directory (where `export` refuses to write).
    pub db_path: PathBuf,
    pub source: String,
    pub read_only: bool,
    pub interactive: bool,
    /// Print UTF-8 characters as they are (the locale is UTF-8).
    pub utf8: bool,
    pub cursor: Option<Vec<u8>>,
    pub errors: u64,
    pub line: Vec<u8>,
    /// `--bulk`: stores gathered for one ingest, until the first command
    /// that reads or the end of input.
    pub bulk: Option<BulkSink>,
    /// Stores ingested from `bulk`.
    pub ingested: u64,
}

impl<'d, W: Write> Shell<'d, W> {
    fn db(&self) -> &'d Db {
        self.loader.db()
    }

    pub fn report(&mut self, locus: impl std::fmt::Display, message: &str) {
        self.errors += 1;
        let _ = self.out.flush();
        let prefix = if self.interactive { "" } else { "lamina: " };
        eprintln!("{prefix}{}:{locus}: {message}", self.source);
    }

    /// Prints `key` and `value` on two lines (gdbmtool's `first`/`next`).
    fn print_pair_lines(&mut self, key: &[u8], value: &[u8]) -> io::Result<()> {
        self.line.clear();
        format_datum(key, self.utf8, &mut self.line);
        self.line.push(b'\n');
        format_datum(value, self.utf8, &mut self.line);
        self.line.push(b'\n');
        self.out.write_all(&self.line)
    }

    /// Carries out `cmd`. A command that fails is reported (and counted in
    /// `errors`); `Err` is a failure that ends the shell.
    pub fn execute(&mut self, cmd: &Command<'_>) -> Result<Flow, Fatal> {
        let verb = cmd.spec.verb;
        let writes = matches!(
            verb,
            Verb::Store | Verb::Delete | Verb::Import | Verb::Reorganize
        );
        if writes && self.read_only {
            let what = if verb == Verb::Store {
                "Item not inserted: "
            } else {
                ""
            };
            self.report(cmd.locus, &format!("{what}database is open read-only"));
            return Ok(Flow::Continue);
        }
        if verb == Verb::Store {
            self.store(cmd)?;
            return Ok(Flow::Continue);
        }
        // A command that reads or writes sees every earlier store: gathered
        // stores are ingested first, and later ones take the ordinary path.
        if !matches!(
            verb,
            Verb::Help | Verb::Version | Verb::Status | Verb::Quit | Verb::Unsupported
        ) {
            self.end_bulk()?;
        }
        // Every other command sees all earlier stores.
        self.loader.write_pending()?;
        match verb {
            Verb::Store => {}
            Verb::Fetch => self.fetch(cmd)?,
            Verb::Delete => self.delete(cmd)?,
            Verb::List => self.list()?,
            Verb::Count => self.count()?,
            Verb::First => self.first()?,
            Verb::Next => self.next(cmd)?,
            Verb::Reorganize => {
                self.db().compact()?;
                writeln!(self.out, "Reorganization succeeded.")?;
            }
            Verb::Status => {
                writeln!(
                    self.out,
                    "Database file: {}\nDatabase is open\ndefine key string\ndefine content string",
                    self.db_name
                )?;
            }
            Verb::Sync => self.loader.sync()?,
            Verb::Version => writeln!(self.out, "lamina version {}", env!("CARGO_PKG_VERSION"))?,
            Verb::Help => self.out.write_all(help_text().as_bytes())?,
            Verb::Quit => return Ok(Flow::Quit),
            Verb::Export => self.export(cmd)?,
            Verb::Import => self.import(cmd)?,
            Verb::Unsupported => {
                let message = format!(
                    "{}: not supported by lamina (it concerns gdbm's own file structure)",
                    cmd.spec.name
                );
                self.report(cmd.locus, &message);
            }
        }
        Ok(Flow::Continue)
    }

    /// `store KEY VALUE`: gathered by `--bulk`, else handed to the loader;
    /// a record the engine cannot take is reported.
    fn store(&mut self, cmd: &Command<'_>) -> Result<(), Fatal> {
        let (key, value) = (cmd.args.get(0), cmd.args.get(1));
        match check_record(key, value) {
            Ok(()) => match &mut self.bulk {
                Some(sink) => sink.add(key, value)?,
                None => self.loader.put(key, value)?,
            },
            Err(why) => self.report(cmd.locus, &format!("Item not inserted: {why}.")),
        }
        Ok(())
    }

    /// `fetch KEY`: prints its value; a missing key is reported.
    fn fetch(&mut self, cmd: &Command<'_>) -> Result<(), Fatal> {
        match self.db().get(cmd.args.get(0))? {
            Some(v) => {
                self.line.clear();
                format_datum(&v, self.utf8, &mut self.line);
                self.line.push(b'\n');
                self.out.write_all(&self.line)?;
            }
            None => self.report(cmd.locus, "No such item found"),
        }
        Ok(())
    }

    /// `delete KEY`: removes its record; a missing key is reported.
    fn delete(&mut self, cmd: &Command<'_>) -> Result<(), Fatal> {
        let key = cmd.args.get(0);
        if self.db().contains_key(key)? {
            self.db().delete(key)?;
        } else {
            self.report(cmd.locus, "No such item found");
        }
        Ok(())
    }

    /// `list`: prints every key and its value, one pair a line.
    fn list(&mut self) -> Result<(), Fatal> {
        for item in self.db().iter() {
            let (k, v) = item?;
            self.line.clear();
            format_datum(&k, self.utf8, &mut self.line);
            self.line.push(b' ');
            format_datum(&v, self.utf8, &mut self.line);
            self.line.push(b'\n');
            self.out.write_all(&self.line)?;
        }
        Ok(())
    }

    /// `count`: prints how many records there are.
    fn count(&mut self) -> Result<(), Fatal> {
        let n = self.db().iter().try_fold(0u64, |n, r| r.map(|_| n + 1))?;
        if n == 1 {
            writeln!(self.out, "There is 1 item in the database.")?;
        } else {
            writeln!(self.out, "There are {n} items in the database.")?;
        }
        Ok(())
    }

    /// `first`: prints the first record and puts the cursor on it.
    fn first(&mut self) -> Result<(), Fatal> {
        match self.db().iter().next().transpose()? {
            Some((k, v)) => {
                self.print_pair_lines(&k, &v)?;
                self.cursor = Some(k);
            }
            None => {
                self.cursor = None;
                writeln!(self.out, "No such item found.")?;
            }
        }
        Ok(())
    }

    /// `next [KEY]`: prints the record after the cursor (or after KEY) and
    /// puts the cursor on it.
    fn next(&mut self, cmd: &Command<'_>) -> Result<(), Fatal> {
        if cmd.args.len() == 1 {
            self.cursor = Some(cmd.args.get(0).to_vec());
        }
        let found = match &self.cursor {
            Some(c) => self
                .db()
                .range::<&[u8], _>((Bound::Excluded(c.as_slice()), Bound::Unbounded))
                .next()
                .transpose()?,
            None => None,
        };
        match found {
            Some((k, v)) => {
                self.print_pair_lines(&k, &v)?;
                self.cursor = Some(k);
            }
            None => {
                self.cursor = None;
                self.report(cmd.locus, "No such item found");
            }
        }
        Ok(())
    }

    /// Ingests the stores gathered by `--bulk` in one step (all or none);
    /// from then on stores take the ordinary path.
    pub fn end_bulk(&mut self) -> lamina::Result<()> {
        if let Some(sink) = self.bulk.take() {
            let n = sink.records();
            sink.finish()?;
            self.ingested += n;
        }
        Ok(())
    }

    /// `export FILE [truncate] [binary|ascii]`: a gdbm ASCII dump.
    fn export(&mut self, cmd: &Command<'_>) -> Result<(), Fatal> {
        let mut truncate = false;
        for i in 1..cmd.args.len() {
            match cmd.args.get(i) {
                b"truncate" => truncate = true,
                b"ascii" => {}
                b"binary" => {
                    self.report(
                        cmd.locus,
                        "export: binary dumps are not supported; use ascii",
                    );
                    return Ok(());
                }
                other => {
                    let m = format!(
                        "export: unrecognized argument: {}",
                        String::from_utf8_lossy(other)
                    );
                    self.report(cmd.locus, &m);
                    return Ok(());
                }
            }
        }
        let path = os_path(cmd.args.get(0));
        if let Err(e) = crate::cmd::refuse_inside_database(&self.db_path, &path) {
            self.report(cmd.locus, &format!("export: {}", e.message));
            return Ok(());
        }
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(truncate)
            .create_new(!truncate)
            .open(&path);
        let file = match file {
            Ok(f) => f,
            Err(e) => {
                self.report(
                    cmd.locus,
                    &format!("export: cannot open {}: {e}", path.display()),
                );
                return Ok(());
            }
        };
        let mut w = dumpfmt::writer(Format::Gdbm, io::BufWriter::new(file));
        let result = (|| -> Result<(), Fatal> {
            for item in self.db().iter() {
                let (k, v) = item?;
                w.record(&k, &v)?;
            }
            w.finish()?;
            Ok(())
        })();
        match result {
            Err(Fatal::Output(e)) => {
                self.report(cmd.locus, &format!("export: {}: {e}", path.display()));
                Ok(())
            }
            other => other,
        }
    }

    /// `import FILE [replace] [nometa]`: loads a dump (any format lamina reads).
    fn import(&mut self, cmd: &Command<'_>) -> Result<(), Fatal> {
        let mut replace = false;
        for i in 1..cmd.args.len() {
            match cmd.args.get(i) {
                b"replace" => replace = true,
                b"nometa" => {}
                other => {
                    let m = format!(
                        "import: unrecognized argument: {}",
                        String::from_utf8_lossy(other)
                    );
                    self.report(cmd.locus, &m);
                    return Ok(());
                }
            }
        }
        let path = os_path(cmd.args.get(0));
        let mut input = match std::fs::File::open(&path) {
            Ok(f) => io::BufReader::new(f),
            Err(e) => {
                self.report(
                    cmd.locus,
                    &format!("import: cannot open {}: {e}", path.display()),
                );
                return Ok(());
            }
        };
        let format = match input.fill_buf().map(dumpfmt::detect) {
            Ok(Ok(f)) => f,
            Ok(Err(why)) => {
                self.report(cmd.locus, &format!("import: {}: {why}", path.display()));
                return Ok(());
            }
            Err(e) => {
                self.report(cmd.locus, &format!("import: {}: {e}", path.display()));
                return Ok(());
            }
        };
        let mut reader = dumpfmt::reader(format, input);
        let mut progress = Progress::new(
            "import",
            Total::Unknown,
            ProgressMode::Off,
            &Default::default(),
        );
        let before = self.loader.acknowledged();
        let (_, result) = crate::cmd::load::copy_records(
            reader.as_mut(),
            &mut self.loader,
            &mut progress,
            replace,
            false,
        );
        self.loader.write_pending()?;
        // Later stores go to the default keyspace again.
        self.loader.set_keyspace(self.db().default_keyspace());
        match result {
            Ok(_) => Ok(()),
            Err(e) if e.exit == Exit::Io || e.exit == Exit::Damage => Err(Fatal::Stop(e)),
            Err(e) => {
                let kept = crate::cmd::load::kept(self.loader.acknowledged() - before);
                self.report(
                    cmd.locus,
                    &format!("import: {}: {}; {kept}", path.display(), e.message),
                );
                Ok(())
            }
        }
    }
}

fn os_path(bytes: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
}
