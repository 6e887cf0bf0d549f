//! A load or shell stopped by a full disk says exactly how many records it
//! kept, and never says "done".
//!
//! Before the fix: `lamina load` on a full disk printed `done: 196,607
//! records`, then the ENOSPC error (exit 5), and the database held 184,320
//! records: the summary counted records read, and batches buffered in the
//! process were lost with the failure. Now batches are handed to the
//! operating system as they are written, the message counts the records the
//! engine acknowledged, and that is what the database holds afterwards.
//! The full disk is the engine's fault-injecting file system
//! (`LAMINA_INJECT_FAULT=write:N`: the N+1st write fails with ENOSPC).
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;
use common::*;

fn count(db: &str) -> u64 {
    String::from_utf8(ok(lamina_run(&["count", db])))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// The number in "the 1,234 records before it were loaded" (and the
/// shell's "the 1,234 stores ... are kept").
fn number_before(text: &str, marker: &str) -> u64 {
    let at = text
        .find(marker)
        .unwrap_or_else(|| panic!("{marker:?} in {text}"));
    let digits: String = text[..at]
        .rsplit(' ')
        .nth(1)
        .unwrap()
        .chars()
        .filter(char::is_ascii_digit)
        .collect();
    digits.parse().unwrap()
}

#[test]
fn load_reports_exactly_what_it_kept() {
    let tmp = tempdir();
    let tsv = path(tmp.path(), "n.tsv");
    std::fs::write(
        &tsv,
        ok(lamina_run(&["gen", "numbers", "60000", "--format", "tsv"])),
    )
    .unwrap();
    let mut failures = 0;
    for n in [5u64, 7, 10, 20] {
        let db = path(tmp.path(), &format!("db{n}"));
        let mut cmd = lamina();
        cmd.args(["--progress-interval", "0", "load", &db, &tsv])
            .env("LAMINA_INJECT_FAULT", format!("write:{n}"));
        let out = run_with_input(cmd, b"");
        let err = stderr(&out);
        if code(&out) == 0 {
            assert!(err.contains("done: 60,001 records"), "write:{n}: {err}");
            assert_eq!(count(&db), 60_001);
            continue;
        }
        failures += 1;
        assert_eq!(code(&out), 5, "write:{n}: {err}");
        assert!(err.contains("No space left on device"), "write:{n}: {err}");
        assert!(
            !err.contains("done"),
            "write:{n}: a failed load said done: {err}"
        );
        let kept = number_before(&err, "records before it were loaded");
        assert!(kept <= 60_001, "write:{n}: {err}");
        assert_eq!(count(&db), kept, "write:{n}: {err}");
    }
    assert!(failures >= 2, "the fault was hit {failures} times");
}

#[test]
fn shell_reports_exactly_what_it_kept() {
    let tmp = tempdir();
    let input = ok(lamina_run(&["gen", "numbers", "60000"]));
    let mut failures = 0;
    for n in [5u64, 7, 10] {
        let db = path(tmp.path(), &format!("db{n}"));
        let mut cmd = lamina();
        cmd.args(["--progress-interval", "0", "shell", "--progress", &db])
            .env("LAMINA_INJECT_FAULT", format!("write:{n}"));
        let out = run_with_input(cmd, &input);
        let err = stderr(&out);
        if code(&out) == 0 {
            assert_eq!(count(&db), 60_001);
            continue;
        }
        failures += 1;
        assert_eq!(code(&out), 5, "write:{n}: {err}");
        assert!(
            !err.contains("done"),
            "write:{n}: a failed shell said done: {err}"
        );
        let kept = number_before(&err, "stores the engine acknowledged before it are kept");
        assert_eq!(count(&db), kept, "write:{n}: {err}");
    }
    assert!(failures >= 2, "the fault was hit {failures} times");
}
