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

/// lamina: an embedded, ordered, crash-safe key-value store.
#[derive(Debug, Parser)]
#[command(name = "lamina", version, after_help = EXIT_CODES_HELP)]
struct Cli {
    #[command(flatten)]
    global: lamina_cli::global::GlobalArgs,
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
    /// Copy a database to a new directory, also while another process writes to it.
    Backup(cmd::backup::BackupArgs),
    /// Copy every readable record of a damaged database into a new one.
    Salvage(cmd::salvage::SalvageArgs),
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
        Command::Salvage(a) => cmd::salvage::run(a, ctx),
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
    let exit = match cli
        .global
        .apply()
        .and_then(|progress| dispatch(cli.command, &Ctx { progress }))
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
