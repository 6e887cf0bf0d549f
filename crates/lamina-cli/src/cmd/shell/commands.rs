//! The commands of gdbmtool's language: every gdbmtool 1.23 verb (so that
//! abbreviations resolve as they do there), what lamina does for each, and
//! the help text.

/// A command lamina's shell carries out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Count,
    Delete,
    Export,
    Fetch,
    First,
    Help,
    Import,
    List,
    Next,
    Quit,
    Reorganize,
    Status,
    Store,
    Sync,
    Version,
    /// A gdbmtool command about gdbm's own file structure (buckets, hash
    /// directory, avail lists) or interactive use, which lamina does not have.
    Unsupported,
}

/// One command of the table: name, verb, argument counts, usage and summary
/// (the last two as gdbmtool's `help` prints them).
#[derive(Debug)]
pub struct CommandSpec {
    pub name: &'static str,
    pub verb: Verb,
    pub min_args: usize,
    pub max_args: usize,
    pub usage: &'static str,
    pub summary: &'static str,
}

const fn spec(
    name: &'static str,
    verb: Verb,
    min_args: usize,
    max_args: usize,
    usage: &'static str,
    summary: &'static str,
) -> CommandSpec {
    CommandSpec {
        name,
        verb,
        min_args,
        max_args,
        usage,
        summary,
    }
}

/// Every gdbmtool 1.23 verb, so that abbreviations resolve as they do there.
pub const COMMANDS: &[CommandSpec] = &[
    spec("avail", Verb::Unsupported, 0, 0, "", ""),
    spec("bucket", Verb::Unsupported, 0, 1, "", ""),
    spec("cache", Verb::Unsupported, 0, 0, "", ""),
    spec("close", Verb::Unsupported, 0, 0, "", ""),
    spec(
        "count",
        Verb::Count,
        0,
        0,
        "count",
        "count (number of entries)",
    ),
    spec("current", Verb::Unsupported, 0, 0, "", ""),
    spec("debug", Verb::Unsupported, 0, 9, "", ""),
    spec("define", Verb::Unsupported, 0, 9, "", ""),
    spec(
        "delete",
        Verb::Delete,
        1,
        1,
        "delete KEY",
        "delete a record",
    ),
    spec("dir", Verb::Unsupported, 0, 0, "", ""),
    spec("downgrade", Verb::Unsupported, 0, 0, "", ""),
    spec(
        "export",
        Verb::Export,
        1,
        3,
        "export FILE [truncate] [binary|ascii]",
        "export",
    ),
    spec("fetch", Verb::Fetch, 1, 1, "fetch KEY", "fetch record"),
    spec(
        "first",
        Verb::First,
        0,
        0,
        "first",
        "begin iteration: get first key and datum",
    ),
    spec("hash", Verb::Unsupported, 1, 1, "", ""),
    spec("header", Verb::Unsupported, 0, 0, "", ""),
    spec("help", Verb::Help, 0, 0, "help", "print this help list"),
    spec("history", Verb::Unsupported, 0, 2, "", ""),
    spec(
        "import",
        Verb::Import,
        1,
        3,
        "import FILE [replace] [nometa]",
        "import",
    ),
    spec("list", Verb::List, 0, 0, "list", "list"),
    spec(
        "next",
        Verb::Next,
        0,
        1,
        "next [KEY]",
        "continue iteration: get next key and datum",
    ),
    spec("open", Verb::Unsupported, 0, 1, "", ""),
    spec("perror", Verb::Unsupported, 0, 1, "", ""),
    spec("quit", Verb::Quit, 0, 0, "quit", "quit the program"),
    spec("recover", Verb::Unsupported, 0, 9, "", ""),
    spec(
        "reorganize",
        Verb::Reorganize,
        0,
        0,
        "reorganize",
        "reorganize",
    ),
    spec("set", Verb::Unsupported, 0, 9, "", ""),
    spec("shell", Verb::Unsupported, 0, 9, "", ""),
    spec("sibling", Verb::Unsupported, 0, 0, "", ""),
    spec("snapshot", Verb::Unsupported, 2, 2, "", ""),
    spec("source", Verb::Unsupported, 1, 1, "", ""),
    spec(
        "status",
        Verb::Status,
        0,
        0,
        "status",
        "print current program status",
    ),
    spec("store", Verb::Store, 2, 2, "store KEY DATA", "store"),
    spec(
        "sync",
        Verb::Sync,
        0,
        0,
        "sync",
        "Synchronize the database with disk copy",
    ),
    spec("unset", Verb::Unsupported, 0, 9, "", ""),
    spec("upgrade", Verb::Unsupported, 0, 0, "", ""),
    spec(
        "version",
        Verb::Version,
        0,
        0,
        "version",
        "print version of lamina",
    ),
];

/// The help text, in gdbmtool's layout, for the commands lamina carries out.
pub fn help_text() -> String {
    let mut out = String::new();
    for c in COMMANDS.iter().filter(|c| c.verb != Verb::Unsupported) {
        if c.usage.len() > 28 {
            out.push_str(&format!(" {}\n{:30}{}\n", c.usage, "", c.summary));
        } else {
            out.push_str(&format!(" {:<28} {}\n", c.usage, c.summary));
        }
    }
    out
}

/// Finds a command by name or unambiguous prefix.
pub(super) fn lookup(word: &[u8]) -> Result<&'static CommandSpec, String> {
    if let Some(c) = COMMANDS.iter().find(|c| c.name.as_bytes() == word) {
        return Ok(c);
    }
    let matches: Vec<&CommandSpec> = COMMANDS
        .iter()
        .filter(|c| c.name.as_bytes().starts_with(word))
        .collect();
    match matches.as_slice() {
        [one] => Ok(one),
        [] => Err(format!(
            "Unknown command: {}",
            String::from_utf8_lossy(word)
        )),
        many => {
            let names: Vec<&str> = many.iter().map(|c| c.name).collect();
            Err(format!(
                "ambiguous command: {} ({})",
                String::from_utf8_lossy(word),
                names.join(", ")
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_layout() {
        let h = help_text();
        assert!(h.starts_with(" count                        count (number of entries)\n"));
        assert!(h.contains(
            " export FILE [truncate] [binary|ascii]\n                              export\n"
        ));
    }
}
