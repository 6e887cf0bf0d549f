//! `lamina completions SHELL`: a completion script for bash, zsh, fish,
//! elvish or PowerShell, generated from the command-line definitions, on
//! standard output.

use crate::cmd::output_error;
use crate::error::{CliResult, Exit};
use std::io::Write;

/// Arguments of `lamina completions`.
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Writes the script for `args.shell`, describing `command` (lamina's own
/// definitions).
pub fn run(args: CompletionsArgs, mut command: clap::Command) -> CliResult<Exit> {
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut command, "lamina", &mut out);
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(&out)
        .and_then(|()| stdout.flush())
        .map_err(output_error)?;
    Ok(Exit::Ok)
}
