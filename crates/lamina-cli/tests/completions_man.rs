//! `lamina completions SHELL` and `lamina man` are generated from the
//! command-line definitions: each mentions every subcommand that `lamina
//! --help` lists, and the man page has the exit codes.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;
use common::*;

/// The subcommands `lamina --help` lists.
fn subcommands() -> Vec<String> {
    let help = String::from_utf8(ok(lamina_run(&["--help"]))).unwrap();
    let section = help.split("Commands:\n").nth(1).unwrap();
    let names: Vec<String> = section
        .lines()
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "help")
        .map(str::to_string)
        .collect();
    for expected in ["shell", "dump", "load", "count", "completions", "man"] {
        assert!(names.iter().any(|n| n == expected), "{names:?}");
    }
    names
}

#[test]
fn completions_name_every_subcommand() {
    let names = subcommands();
    for shell in ["bash", "zsh", "fish"] {
        let script = String::from_utf8(ok(lamina_run(&["completions", shell]))).unwrap();
        for name in &names {
            assert!(script.contains(name.as_str()), "{shell}: no {name}");
        }
        // Options of subcommands too.
        assert!(script.contains("keyspace"), "{shell}: no --keyspace");
    }
    let bad = lamina_run(&["completions", "tcsh"]);
    assert_eq!(code(&bad), 2);
    assert!(
        stderr(&bad).contains("invalid value 'tcsh'"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn man_page_has_every_subcommand_and_the_exit_codes() {
    let page = String::from_utf8(ok(lamina_run(&["man"]))).unwrap();
    assert!(page.starts_with(".ie") || page.starts_with(".TH"), "{page}");
    assert!(page.contains(".TH lamina 1"));
    for name in subcommands() {
        assert!(
            page.contains(&format!(".SS \"lamina {name}\"")),
            "no {name}"
        );
    }
    assert!(page.contains(".SH \"EXIT STATUS\""));
    assert!(page.contains("the database is damaged"));
    assert!(page.contains("\\-\\-keyspace"), "options are listed");
}
