//! `lamina shell`: gdbmtool's command language over a lamina database.
//!
//! `numbers.pl | lamina shell --newdb numbers.lamina` builds the database
//! that `numbers.pl | gdbmtool --newdb numbers.db` builds, record for record.
//! Output formats are gdbmtool's; see `parser` for the language.
//!
//! Stores are batched: they reach the engine a few thousand at a time, and
//! once a batch is handed over it survives the process being killed. Any
//! other command first hands the pending batch to the engine, so it sees
//! every earlier store. Nothing is on stable storage until the input ends
//! (the database is then flushed and closed) or a `sync` command returns —
//! gdbm's contract too, where writes wait in its cache until `gdbm_sync` or
//! `gdbm_close`. `--synchronize` makes each write durable before the next
//! command is read. If the engine fails, the shell stops and says how many
//! stores the engine had acknowledged; those are kept.
//!
//! `--newdb --bulk` skips the WAL: stores are gathered by a `BulkSink`
//! (sorted in runs of bounded memory) and ingested in one step at the end of
//! input — all of them or none. The first command that reads or writes
//! otherwise (`fetch`, `count`, `list`, `first`, `next`, `delete`, `export`,
//! `import`, `sync`, `reorganize`) ingests what was gathered first, so it
//! sees every earlier store, and later stores take the ordinary path.
//!
//! The language is read by `lexer` and `parser`, looked up in `commands`,
//! carried out by `session` and printed by `datum`.
//!
//! A command that fails prints `lamina: stdin:LINE.COL-COL: message` on
//! stderr and the shell goes on (unless `--stop-on-error`); the exit code is
//! then 1. An I/O error in the engine stops the shell at once (exit code 5).

mod commands;
mod datum;
mod input;
mod lexer;
mod parser;
mod session;

use crate::cmd::Ctx;
use crate::engine::{self, Db, Loader, Mode};
use crate::error::{exit_of, CliError, CliResult, Exit};
use crate::progress::{Progress, Total};
use commands::Verb;
use input::{stdin_file_size, Input};
use parser::{Parser, Step};
use session::{Fatal, Flow, Shell};
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;

/// Arguments of `lamina shell` (gdbmtool's options where they apply).
#[derive(Debug, clap::Args)]
pub struct ShellArgs {
    /// The database directory.
    pub db: PathBuf,
    /// Create a new database, replacing an existing one (gdbmtool --newdb).
    #[arg(short = 'n', long)]
    pub newdb: bool,
    /// Open the database read-only (gdbmtool --read-only).
    #[arg(short = 'r', long, conflicts_with = "newdb")]
    pub read_only: bool,
    /// Read commands from FILE instead of standard input (gdbmtool --file).
    #[arg(short = 'f', long, value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Stop at the first command that fails (exit code 1).
    #[arg(short = 'e', long)]
    pub stop_on_error: bool,
    /// Make every write durable before the next command (gdbmtool --synchronize).
    #[arg(short = 's', long)]
    pub synchronize: bool,
    /// Show progress (records, bytes, rate) on stderr while reading.
    #[arg(short = 'p', long)]
    pub progress: bool,
    /// With --newdb: gather stores and ingest them as sorted tables in one
    /// step at the end of input (or before the first command that reads),
    /// without the WAL; all of them are kept or none.
    #[arg(long, requires = "newdb", conflicts_with = "synchronize")]
    pub bulk: bool,
    /// With --bulk: bytes of stores sorted in memory before a sorted run is
    /// written to a temporary file (e.g. 256M; default 64M).
    #[arg(long, value_name = "BYTES", requires = "bulk", value_parser = crate::size::parse_size)]
    pub memory: Option<u64>,
    /// Number of records expected, for the ETA (like `pv -s`).
    #[arg(long, value_name = "RECORDS")]
    pub total: Option<u64>,
    /// A command to run instead of reading commands, as with `gdbmtool DB
    /// COMMAND [ARG...]`: each ARG is one argument, as if quoted; a `;`
    /// word separates commands.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMMAND",
        conflicts_with = "file"
    )]
    pub command: Vec<std::ffi::OsString>,
}

/// The command text for the words of a one-shot command: verbs as they
/// are, arguments as they are when they can be, else quoted with the
/// language's escapes; `;` between commands.
fn one_shot_text(words: &[std::ffi::OsString]) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    let mut text = Vec::new();
    let mut verb_next = true;
    for word in words {
        let w = word.as_bytes();
        if w == b";" {
            text.extend_from_slice(b";\n");
            verb_next = true;
            continue;
        }
        if !verb_next {
            text.push(b' ');
        }
        if verb_next {
            text.extend_from_slice(w);
            verb_next = false;
            continue;
        }
        if !w.is_empty() && w.iter().all(|&b| lexer::is_word_byte(b)) {
            text.extend_from_slice(w);
            continue;
        }
        text.push(b'"');
        for &b in w {
            match b {
                b'"' => text.extend_from_slice(b"\\\""),
                b'\\' => text.extend_from_slice(b"\\\\"),
                b'\n' => text.extend_from_slice(b"\\n"),
                b'\r' => text.extend_from_slice(b"\\r"),
                _ => text.push(b),
            }
        }
        text.push(b'"');
    }
    text.push(b'\n');
    text
}

/// Runs `lamina shell`.
pub fn run(args: ShellArgs, ctx: &Ctx) -> CliResult<Exit> {
    let (mut input, source, size) = open_input(&args)?;
    let interactive = input.is_interactive();
    let mode = if args.newdb {
        Mode::New
    } else if args.read_only {
        Mode::ReadOnly
    } else {
        Mode::Create
    };
    let db = engine::open(&args.db, mode)?;
    let mut shell = new_shell(&args, &db, source, interactive);
    let total = match (args.total, size) {
        (Some(n), _) => Total::Records(n),
        (None, Some(bytes)) => Total::Bytes(bytes),
        (None, None) => Total::Unknown,
    };
    let mut progress = Progress::new(
        "shell",
        total,
        ctx.progress.mode(args.progress),
        &ctx.progress,
    );
    let Ending { fatal, stopped } =
        read_commands(&mut shell, &mut input, &mut progress, args.stop_on_error)?;
    let fatal = finish_bulk(&mut shell, fatal);
    let _ = shell.out.flush();
    let errors = shell.errors;
    let ingested = shell.ingested;
    let source = shell.source;
    let loader = shell.loader;
    drop(shell.out);
    if let Some((at, fatal)) = fatal {
        return stop(&db, loader, ingested, at, fatal);
    }
    close(&db, loader, &progress, &source, ingested)?;
    if progress.records() > 0 {
        progress.finish();
    }
    if stopped {
        eprintln!("lamina: stopped at the first error (--stop-on-error)");
    }
    Ok(if errors > 0 { Exit::Failed } else { Exit::Ok })
}

/// Where the commands come from (the command line, `--file`, a terminal or
/// piped standard input), its name in messages, and its size in bytes when
/// known.
fn open_input(args: &ShellArgs) -> CliResult<(Input, String, Option<u64>)> {
    Ok(match &args.file {
        _ if !args.command.is_empty() => {
            let text = one_shot_text(&args.command);
            (
                Input::Bytes(io::Cursor::new(text)),
                "argv".to_string(),
                None,
            )
        }
        Some(p) => {
            let f = std::fs::File::open(p).map_err(|e| CliError::io(p.display(), e))?;
            let size = f.metadata().ok().filter(|m| m.is_file()).map(|m| m.len());
            (Input::file(f), p.display().to_string(), size)
        }
        None if io::stdin().is_terminal() => (Input::terminal(), "stdin".to_string(), None),
        None => {
            let size = stdin_file_size();
            (Input::stdin(), "stdin".to_string(), size)
        }
    })
}

/// A session over `db` that prints on standard output and reads commands
/// from `source`.
fn new_shell<'d>(
    args: &ShellArgs,
    db: &'d Db,
    source: String,
    interactive: bool,
) -> Shell<'d, io::BufWriter<io::StdoutLock<'static>>> {
    let loader = if args.synchronize {
        Loader::synchronous(db)
    } else {
        Loader::new(db)
    };
    Shell {
        loader,
        out: io::BufWriter::with_capacity(1 << 16, io::stdout().lock()),
        db_name: args.db.display().to_string(),
        db_path: args.db.clone(),
        source,
        read_only: args.read_only,
        interactive,
        utf8: datum::locale_is_utf8(),
        cursor: None,
        errors: 0,
        line: Vec::new(),
        bulk: args.bulk.then(|| {
            let memory = args.memory.map_or(engine::bulk::DEFAULT_MEMORY, |m| {
                usize::try_from(m).unwrap_or(usize::MAX)
            });
            engine::bulk::BulkSink::new(db, memory)
        }),
        ingested: 0,
    }
}

/// How reading commands ended.
struct Ending {
    /// The failure that ended the shell, and where it happened.
    fatal: Option<(String, Fatal)>,
    /// `--stop-on-error` stopped the shell after a command failed.
    stopped: bool,
}

/// Reads, parses and carries out commands until the input ends, a `quit`,
/// a failure that ends the shell, or (with `stop_on_error`) a command that
/// fails. An error reading the input is returned at once.
fn read_commands<W: Write>(
    shell: &mut Shell<'_, W>,
    input: &mut Input,
    progress: &mut Progress,
    stop_on_error: bool,
) -> CliResult<Ending> {
    let mut parser = Parser::new();
    let mut unparsed = Unparsed::new();
    loop {
        let (step, n) = parser.parse(unparsed.rest(), unparsed.eof);
        let flow = match step {
            Step::NeedMore => None,
            Step::End => break,
            Step::Blank => Some(Flow::Continue),
            Step::Error { locus, message } => {
                shell.report(locus, &message);
                Some(Flow::Continue)
            }
            Step::Command(cmd) => {
                let is_store = cmd.spec.verb == Verb::Store;
                match shell.execute(&cmd) {
                    Ok(flow) => {
                        if is_store {
                            progress.add(1, 0);
                        }
                        Some(flow)
                    }
                    Err(e) => {
                        let at = format!("{}:{}", shell.source, cmd.locus);
                        return Ok(Ending {
                            fatal: Some((at, e)),
                            stopped: false,
                        });
                    }
                }
            }
        };
        match flow {
            Some(Flow::Continue) => {
                unparsed.start += n;
                if stop_on_error && shell.errors > 0 {
                    return Ok(Ending {
                        fatal: None,
                        stopped: true,
                    });
                }
            }
            Some(Flow::Quit) => break,
            None => {
                if let Some(fatal) = unparsed.read_more(input, shell, progress)? {
                    return Ok(Ending {
                        fatal: Some(fatal),
                        stopped: false,
                    });
                }
            }
        }
    }
    Ok(Ending {
        fatal: None,
        stopped: false,
    })
}

/// The input read and not yet parsed, and the length of its lines.
struct Unparsed {
    /// Bytes read; those before `start` are parsed.
    buf: Vec<u8>,
    start: usize,
    /// Nothing more will come.
    eof: bool,
    lines: LineWatch,
}

impl Unparsed {
    /// Nothing read yet.
    fn new() -> Unparsed {
        Unparsed {
            buf: Vec::with_capacity(1 << 21),
            start: 0,
            eof: false,
            lines: LineWatch::new(parser::MAX_COMMAND_LEN),
        }
    }

    /// The bytes read and not yet parsed.
    fn rest(&self) -> &[u8] {
        self.buf.get(self.start..).unwrap_or_default()
    }

    /// Drops what was parsed, then reads more of `input` (a person typing
    /// first sees every earlier store handed to the engine, and the output
    /// so far). The failure that ends the shell, if the engine fails or a
    /// line is longer than any command; an error reading the input is
    /// returned as it is.
    fn read_more<W: Write>(
        &mut self,
        input: &mut Input,
        shell: &mut Shell<'_, W>,
        progress: &mut Progress,
    ) -> CliResult<Option<(String, Fatal)>> {
        self.buf.drain(..self.start);
        self.start = 0;
        if shell.interactive {
            if let Err(e) = shell.loader.write_pending() {
                return Ok(Some((shell.source.clone(), Fatal::Engine(e))));
            }
            let _ = shell.out.flush();
        }
        // A command longer than what was read of it: read as much
        // again, so that parsing it again from its start costs no
        // more, in all, than twice its length (a pipe hands over
        // 64 KiB at a time, and each was a new parse of it all).
        let goal = if shell.interactive {
            0
        } else {
            self.buf.len() * 2
        };
        loop {
            let before = self.buf.len();
            match input.read_more(&mut self.buf) {
                Ok(0) => self.eof = true,
                Ok(read) => progress.add(0, read as u64),
                Err(e) => {
                    let _ = shell.out.flush();
                    return Err(CliError::io(format!("reading {}", shell.source), e));
                }
            }
            if let Some(line) = self.lines.saw(self.buf.get(before..).unwrap_or_default()) {
                return Ok(Some(too_long(shell, line)));
            }
            if self.eof || self.buf.len() >= goal {
                return Ok(None);
            }
        }
    }
}

/// `--bulk`: the stores gathered are ingested at the end of input (or
/// dropped, keeping none, when the engine stopped the shell). The failure
/// that ends the shell, now that the ingest is done.
fn finish_bulk<W: Write>(
    shell: &mut Shell<'_, W>,
    fatal: Option<(String, Fatal)>,
) -> Option<(String, Fatal)> {
    match &fatal {
        None | Some((_, Fatal::Output(_))) => {
            if let Err(e) = shell.end_bulk() {
                let at = format!("{}: at the end of input", shell.source);
                return Some((at, Fatal::Engine(e)));
            }
        }
        Some(_) => shell.bulk = None,
    }
    fatal
}

/// Ends a shell that `fatal` stopped at `at` and closes the database:
/// output closed by its reader ends it with exit code 0 once the stores
/// are durable; any other failure is returned with the stores kept (`ingested` by `--bulk`
/// and those `loader` handed to the engine).
fn stop(
    db: &Db,
    mut loader: Loader<'_>,
    ingested: u64,
    at: String,
    fatal: Fatal,
) -> CliResult<Exit> {
    match fatal {
        Fatal::Output(e) if e.kind() == io::ErrorKind::BrokenPipe => {
            loader.finish()?;
            db.close()?;
            Ok(Exit::Ok)
        }
        Fatal::Output(e) => {
            let _ = loader.finish();
            let _ = db.close();
            Err(CliError::io(format!("{at}: writing output"), e))
        }
        Fatal::Engine(e) => {
            // What the engine acknowledged is kept; try to make it
            // durable, then stop.
            let _ = db.close();
            let kept = stores_kept(ingested + loader.acknowledged());
            Err(CliError::new(
                exit_of(&e),
                format!("{at}: {e}; stopped: {kept}"),
            ))
        }
        Fatal::Stop(e) => {
            let _ = db.close();
            let kept = stores_kept(ingested + loader.acknowledged());
            Err(e.context(at).context_after(format!("stopped: {kept}")))
        }
    }
}

/// Makes every store durable and closes the database at the end of input
/// from `source`, noting the writes in `progress` when there were stores.
fn close(
    db: &Db,
    mut loader: Loader<'_>,
    progress: &Progress,
    source: &str,
    ingested: u64,
) -> CliResult<()> {
    let summary_needed = progress.records() > 0;
    let at_end = |e: lamina::Error, kept: u64| {
        CliError::from(e)
            .context(format!("{source}: at the end of input"))
            .context_after(format!("stopped: {}", stores_kept(ingested + kept)))
    };
    if let Err(e) = loader.finish() {
        let _ = db.close();
        return Err(at_end(e, loader.acknowledged()));
    }
    if summary_needed {
        let stats = db.stats();
        progress.note(&engine::write_summary(&stats));
        if stats.write_delay_micros > 0 || stats.write_stops > 0 {
            progress.note(&format!("writers {}", engine::stall_summary(&stats)));
        }
    }
    db.close().map_err(|e| at_end(e, loader.acknowledged()))
}

/// Follows the input's lines as it is read, to refuse one longer than any
/// valid command ([`parser::MAX_COMMAND_LEN`]) as soon as it is, whatever
/// the parser is doing with it (reading a command, skipping a bad one): an
/// endless line (`/dev/zero`) ends the shell instead of growing its buffer
/// or being skipped for ever.
struct LineWatch {
    /// The most bytes of a line.
    max: usize,
    /// Lines ended so far.
    ended: u64,
    /// Bytes of the line being read.
    len: usize,
}

impl LineWatch {
    /// Lines of at most `max` bytes, none read yet.
    fn new(max: usize) -> LineWatch {
        LineWatch {
            max,
            ended: 0,
            len: 0,
        }
    }

    /// Follows `bytes`, the next input read; the number of the line being
    /// read if it is now too long.
    fn saw(&mut self, bytes: &[u8]) -> Option<u64> {
        match bytes.iter().rposition(|&b| b == b'\n') {
            Some(i) => {
                self.ended += bytes.iter().filter(|&&b| b == b'\n').count() as u64;
                self.len = bytes.len() - i - 1;
            }
            None => self.len = self.len.saturating_add(bytes.len()),
        }
        (self.len > self.max).then_some(self.ended + 1)
    }
}

/// The failure that ends a shell at line `line`, longer than any valid
/// command: malformed input (exit code 3), after the stores before it are
/// handed to the engine (kept, as a load keeps the records before a bad one).
fn too_long<W: Write>(shell: &mut Shell<'_, W>, line: u64) -> (String, Fatal) {
    let at = format!("{}:{line}", shell.source);
    if let Err(e) = shell.loader.write_pending() {
        return (at, Fatal::Engine(e));
    }
    let message = format!(
        "a line longer than {} bytes, more than any command can take (a store of \
         the largest key and value, {} and {} bytes, each written in at most 2 characters)",
        crate::progress::thousands(parser::MAX_COMMAND_LEN as u64),
        crate::progress::thousands(lamina::MAX_KEY_LEN as u64),
        crate::progress::thousands(lamina::MAX_VALUE_LEN as u64),
    );
    (at, Fatal::Stop(CliError::bad_input(message)))
}

/// Words for how many stores a shell that stopped kept.
fn stores_kept(n: u64) -> String {
    match n {
        0 => "no store was kept".to_string(),
        1 => "the 1 store the engine acknowledged before it is kept".to_string(),
        n => format!(
            "the {} stores the engine acknowledged before it are kept",
            crate::progress::thousands(n)
        ),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::LineWatch;

    #[test]
    fn a_line_is_too_long_once_it_passes_the_limit_across_reads() {
        let mut w = LineWatch::new(10);
        assert_eq!(w.saw(b"store a 1\nstore"), None);
        assert_eq!(w.saw(b" b 2\n0123"), None);
        assert_eq!(w.saw(b"456789"), None, "10 bytes are a line");
        assert_eq!(w.saw(b"\n0123456789"), None);
        assert_eq!(w.saw(b"x"), Some(4), "the fourth line has 11");
        let mut w = LineWatch::new(10);
        assert_eq!(w.saw(&[0; 11]), Some(1));
    }
}
