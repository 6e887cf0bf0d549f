//! Golden tests of `lamina shell`: each `tests/golden/shell/NAME.in` is fed
//! to `lamina shell --newdb` and its stdout, stderr and exit code compared
//! with `NAME.golden`, in the C locale (`*utf8*` cases: C.UTF-8). The formats are gdbmtool's (checked against gdbmtool
//! itself by `shell_vs_gdbmtool.rs`). `LAMINA_UPDATE_GOLDEN=1` rewrites the
//! golden files.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;
use common::*;

fn render(db: &str, out: &std::process::Output) -> String {
    let clean = |s: String| s.replace(db, "DB");
    format!(
        "--- stdout\n{}--- stderr\n{}--- exit {}\n",
        clean(stdout(out)),
        clean(stderr(out)),
        code(out)
    )
}

#[test]
fn shell_output_matches_golden_files() {
    let dir = testdata().join("golden/shell");
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "in"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 10);
    let update = std::env::var_os("LAMINA_UPDATE_GOLDEN").is_some();
    let mut failures = Vec::new();
    for case in cases {
        let tmp = tempdir();
        let db = path(tmp.path(), "db");
        let input = std::fs::read(&case).unwrap();
        // Output of non-ASCII bytes depends on the locale, as gdbmtool's does.
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let locale = if name.contains("utf8") {
            "C.UTF-8"
        } else {
            "C"
        };
        let mut cmd = lamina();
        cmd.args(["shell", "--newdb", &db]).env("LC_ALL", locale);
        let out = run_with_input(cmd, &input);
        let got = render(&db, &out);
        let golden = case.with_extension("golden");
        if update {
            std::fs::write(&golden, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&golden).unwrap_or_default();
        if got != want {
            failures.push(format!("{}:\n{got}\n--- expected\n{want}", case.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
