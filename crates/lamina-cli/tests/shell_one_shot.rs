//! `lamina shell DB COMMAND [ARG...]` runs one command (or several,
//! separated by a `;` word) and exits, as `gdbmtool DB fetch 12` does. Each
//! argument is one word, spaces and quotes included.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;
use common::*;

#[test]
fn one_shot_commands_run_and_exit() {
    let tmp = tempdir();
    let db = path(tmp.path(), "db");
    ok(lamina_run(&["shell", &db, "store", "a b", "one \"two\"\\"]));
    ok(lamina_run(&["shell", &db, "store", "12", "twelve"]));
    ok(lamina_run(&["shell", &db, "store", "", "empty key"]));
    assert_eq!(ok(lamina_run(&["shell", &db, "fetch", "12"])), b"twelve\n");
    assert_eq!(
        ok(lamina_run(&["shell", &db, "fetch", "a b"])),
        b"one \"two\"\\\n"
    );
    assert_eq!(ok(lamina_run(&["shell", &db, "fetch", ""])), b"empty key\n");
    assert_eq!(
        ok(lamina_run(&["shell", &db, "count", ";", "fetch", "12"])),
        b"There are 3 items in the database.\ntwelve\n"
    );
    // A word that starts with a dash is an argument, not an option.
    ok(lamina_run(&["shell", &db, "store", "-k", "--v"]));
    assert_eq!(ok(lamina_run(&["shell", &db, "fetch", "-k"])), b"--v\n");
    let missing = lamina_run(&["shell", &db, "fetch", "nope"]);
    assert_eq!(code(&missing), 1);
    assert_eq!(
        stderr(&missing),
        "lamina: argv:1.1-11: No such item found\n"
    );
    // Standard input is not read.
    let out = lamina_with_input(&["shell", &db, "count"], b"store x y\n");
    assert_eq!(stdout(&out), "There are 4 items in the database.\n");
}

#[test]
fn same_output_as_gdbmtool() {
    if !have("gdbmtool", "same_output_as_gdbmtool") {
        return;
    }
    let tmp = tempdir();
    let gdbm = path(tmp.path(), "x.gdbm");
    let db = path(tmp.path(), "db");
    for args in [
        &["store", "a b", "v\tw"][..],
        &["store", "12", "x\"y"],
        &["fetch", "a b"],
        &["fetch", "12"],
        &["fetch", "missing"],
        &["count", ";", "fetch", "12"],
    ] {
        let g = std::process::Command::new("gdbmtool")
            .arg("--norc")
            .arg(&gdbm)
            .args(args)
            .output()
            .unwrap();
        let mut all = vec!["shell", db.as_str()];
        all.extend_from_slice(args);
        let l = lamina_run(&all);
        assert_eq!(stdout(&l), stdout(&g), "{args:?}");
        assert_eq!(
            stderr(&l).replace("lamina:", ""),
            stderr(&g).replace("gdbmtool:", ""),
            "{args:?}"
        );
    }
}
