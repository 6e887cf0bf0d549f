//! `lamina man`: the manual page, in roff, generated from the command-line
//! definitions (`lamina man | man -l -`), with a section per subcommand and
//! the exit codes.

use crate::cmd::output_error;
use crate::error::{CliError, CliResult, Exit, EXIT_CODES_HELP};
use std::io::Write;

/// Arguments of `lamina man`.
#[derive(Debug, clap::Args)]
pub struct ManArgs {}

/// Writes the page for `command` (lamina's own definitions).
pub fn run(_args: ManArgs, command: clap::Command) -> CliResult<Exit> {
    let command = command.disable_help_subcommand(true);
    let failed = |e: std::io::Error| CliError::new(Exit::Failed, format!("man: {e}"));
    let man = clap_mangen::Man::new(command.clone());
    let mut out = Vec::new();
    man.render_title(&mut out).map_err(failed)?;
    man.render_name_section(&mut out).map_err(failed)?;
    man.render_synopsis_section(&mut out).map_err(failed)?;
    man.render_description_section(&mut out).map_err(failed)?;
    man.render_options_section(&mut out).map_err(failed)?;
    out.extend_from_slice(b".SH COMMANDS\n");
    for sub in command.get_subcommands() {
        out.extend_from_slice(b".SS \"");
        out.extend_from_slice(escape(&format!("lamina {}", sub.get_name())).as_bytes());
        out.extend_from_slice(b"\"\n");
        if let Some(about) = sub.get_about() {
            out.extend_from_slice(escape(&about.to_string()).as_bytes());
            out.push(b'\n');
        }
        let mut named = sub.clone().bin_name(format!("lamina {}", sub.get_name()));
        let usage = named.render_usage().to_string();
        out.extend_from_slice(b".PP\n");
        out.extend_from_slice(escape(usage.trim_start_matches("Usage: ")).as_bytes());
        out.push(b'\n');
        let sub_man = clap_mangen::Man::new(named);
        let mut opts = Vec::new();
        sub_man.render_options_section(&mut opts).map_err(failed)?;
        // The subcommand's options, under its own heading.
        let opts = String::from_utf8_lossy(&opts).replace(".SH OPTIONS", ".PP\nOptions:");
        out.extend_from_slice(opts.as_bytes());
    }
    out.extend_from_slice(b".SH \"EXIT STATUS\"\n");
    for line in EXIT_CODES_HELP.lines().skip(1) {
        out.extend_from_slice(b".br\n");
        out.extend_from_slice(escape(line.trim()).as_bytes());
        out.push(b'\n');
    }
    man.render_version_section(&mut out).map_err(failed)?;
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(&out)
        .and_then(|()| stdout.flush())
        .map_err(output_error)?;
    Ok(Exit::Ok)
}

/// Text made safe for roff: backslashes doubled, a leading `.` or `'`
/// guarded.
fn escape(text: &str) -> String {
    let text = text.replace('\\', "\\e");
    if text.starts_with('.') || text.starts_with('\'') {
        format!("\\&{text}")
    } else {
        text
    }
}
