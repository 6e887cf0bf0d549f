//! `--option NAME=VALUE`: an engine option forced for every database a
//! command opens, shown by `stat` with a warning when it is far from what
//! lamina would choose; a bad name or value is refused in words.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;
use common::*;

#[test]
fn a_forced_level_multiplier_is_used_and_warned_about() {
    let tmp = tempdir();
    let db = path(tmp.path(), "db");
    ok(lamina_run(&["put", &db, "k", "v"]));
    let chosen: serde_json::Value =
        serde_json::from_slice(&ok(lamina_run(&["stat", "--json", &db]))).unwrap();
    assert_eq!(chosen["level_sizes"]["multiplier"], 4);
    assert!(chosen["level_sizes"]["warning"].is_null(), "{chosen}");
    let forced: serde_json::Value = serde_json::from_slice(&ok(lamina_run(&[
        "--option",
        "level_multiplier=10",
        "stat",
        "--json",
        &db,
    ])))
    .unwrap();
    assert_eq!(forced["level_sizes"]["multiplier"], 10);
    let warning = forced["level_sizes"]["warning"].as_str().unwrap();
    assert!(
        warning.contains("level_multiplier is set to 10"),
        "{warning}"
    );
    let text = stdout(&lamina_run(&[
        "--option",
        "level_multiplier=10",
        "stat",
        &db,
    ]));
    assert!(
        text.contains("each level 10x the one above (set by the user)"),
        "{text}"
    );
    assert!(text.contains("lamina would use 4"), "{text}");
}

#[test]
fn bad_forced_options_are_refused_in_words() {
    let tmp = tempdir();
    let db = path(tmp.path(), "db");
    for (arg, words) in [
        (
            "nonsense=1",
            "nonsense is not an option that can be set here; these can: block_size",
        ),
        ("level_multiplier", "expected NAME=VALUE"),
        ("memtable_size=lots", "memtable_size: not a size: lots"),
    ] {
        let out = lamina_run(&["--option", arg, "put", &db, "k", "v"]);
        assert_eq!(code(&out), 2, "{arg}");
        assert!(stderr(&out).contains(words), "{arg}: {}", stderr(&out));
    }
    let out = lamina_run(&["--option", "level_multiplier=1", "put", &db, "k", "v"]);
    assert_ne!(code(&out), 0);
    assert!(
        stderr(&out).contains("option level_multiplier is 1; it must be between 2 and 1000"),
        "{}",
        stderr(&out)
    );
}
