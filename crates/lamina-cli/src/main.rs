//! `lamina`: the command-line tool of the lamina key-value store.
//! Parsing and dispatch only; each subcommand lives in `cmd/`.

/// mimalloc: the engine allocates one small block per memtable entry, and
/// glibc's allocator costs a tenth of a bulk load's time in free-list upkeep.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod cmd;
mod dumpfmt;

// The modules the benchmark package shares (lib.rs), under their old paths
// (`crate::engine`, `crate::progress`, ...) for the subcommands.
use lamina_cli::{engine, error, numbers, progress, size};

use clap::{CommandFactory, Parser, Subcommand};
use cmd::Ctx;
use error::{CliError, Exit, EXIT_CODES_HELP};
use std::process::ExitCode;
use std::time::Duration;

/// lamina: an embedded, ordered, crash-safe key-value store.
#[derive(Debug, Parser)]
#[command(name = "lamina", version, after_help = EXIT_CODES_HELP)]
struct Cli {
    /// Show no progress.
    #[arg(short, long, global = true)]
    quiet: bool,
    /// Seconds between progress lines when stderr is not a terminal.
    #[arg(long, global = true, value_name = "SECONDS", default_value_t = 5.0)]
    progress_interval: f64,
    /// Memory the database may hold: block cache, memtables, index and filter
    /// blocks together (e.g. 512M). Default: an eighth of the machine's
    /// memory, from 64 MiB to 1 GiB.
    #[arg(long, global = true, value_name = "BYTES", value_parser = size::parse_size)]
    memory_budget: Option<u64>,
    /// Force an engine option (for experts; repeatable): NAME=VALUE, one of
    /// block_size, blob_threshold, cache_size, l0_compaction_trigger,
    /// level_base_size, level_multiplier, memtable_size, target_table_size.
    /// `lamina stat` says when a forced setting is far from what lamina
    /// would choose.
    #[arg(long = "option", global = true, value_name = "NAME=VALUE", value_parser = engine::parse_forced)]
    options: Vec<(String, u64)>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run gdbmtool commands (store, fetch, list, ...) from stdin or a file.
    Shell(cmd::shell::ShellArgs),
    /// Generate a data set (numbers: the numbers-in-English records).
    Gen(cmd::gen::GenArgs),
    /// Load a gdbm, Berkeley DB or tab-separated dump (format detected).
    Load(cmd::load::LoadArgs),
    /// Write every record as a gdbm, Berkeley DB or tab-separated dump.
    Dump(cmd::dump::DumpArgs),
    /// Print the value of a key.
    Get(cmd::get::GetArgs),
    /// Store a value under a key.
    Put(cmd::put::PutArgs),
    /// Remove keys.
    Delete(cmd::delete::DeleteArgs),
    /// Print records in key order (range, prefix, reverse, limit).
    Scan(cmd::scan::ScanArgs),
    /// Count records.
    Count(cmd::count::CountArgs),
    /// Compact the whole database, reclaiming space.
    Compact(cmd::compact::CompactArgs),
    /// Copy a database (closed, or open in no other process) to a new directory.
    Backup(cmd::backup::BackupArgs),
    /// Add tables written by a table writer, all of them or none.
    Ingest(cmd::ingest::IngestArgs),
    /// Verify every checksum and invariant.
    Check(cmd::check::CheckArgs),
    /// Show levels, tables, sizes, amplification, and advice.
    Stat(cmd::stat::StatArgs),
    /// Print one WAL segment, table or manifest (debugging).
    Inspect(cmd::inspect::InspectArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(cmd::completions::CompletionsArgs),
    /// Print the manual page (roff; `lamina man | man -l -`).
    Man(cmd::man::ManArgs),
}

fn dispatch(command: Command, ctx: &Ctx) -> Result<Exit, CliError> {
    match command {
        Command::Shell(a) => cmd::shell::run(a, ctx),
        Command::Gen(a) => cmd::gen::run(a, ctx),
        Command::Load(a) => cmd::load::run(a, ctx),
        Command::Dump(a) => cmd::dump::run(a, ctx),
        Command::Get(a) => cmd::get::run(a, ctx),
        Command::Put(a) => cmd::put::run(a, ctx),
        Command::Delete(a) => cmd::delete::run(a, ctx),
        Command::Scan(a) => cmd::scan::run(a, ctx),
        Command::Count(a) => cmd::count::run(a, ctx),
        Command::Compact(a) => cmd::compact::run(a, ctx),
        Command::Backup(a) => cmd::backup::run(a, ctx),
        Command::Ingest(a) => cmd::ingest::run(a, ctx),
        Command::Check(a) => cmd::check::run(a, ctx),
        Command::Stat(a) => cmd::stat::run(a, ctx),
        Command::Inspect(a) => cmd::inspect::run(a, ctx),
        Command::Completions(a) => cmd::completions::run(a, Cli::command()),
        Command::Man(a) => cmd::man::run(a, Cli::command()),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let interval =
        Duration::try_from_secs_f64(cli.progress_interval).unwrap_or(Duration::from_secs(5));
    let ctx = Ctx {
        progress: progress::Settings {
            quiet: cli.quiet,
            interval,
        },
    };
    engine::set_forced(cli.options);
    let budget = cli.memory_budget.map(engine::set_memory_budget);
    let exit = match budget
        .unwrap_or(Ok(()))
        .and_then(|()| dispatch(cli.command, &ctx))
    {
        Ok(exit) => exit,
        Err(e) => {
            if !e.message.is_empty() {
                eprintln!("lamina: {}", e.message);
            }
            e.exit
        }
    };
    ExitCode::from(exit as u8)
}
