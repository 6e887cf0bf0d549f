//! A syntax error on the last line of the input, without a newline after it.
//!
//! Before the fix: `printf '{' | lamina shell --newdb s.lamina` (also `}`,
//! `=`, `,`, `"`, `store a {`) spun at 100% CPU forever: after the error the
//! parser waited to skip the rest of the line, found an empty buffer, and
//! answered "nothing here" without asking for more input. Now the shell
//! reports the error and ends with exit code 1, as for any failed command.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;
use common::*;
use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Runs the shell on `input`; fails the test if it has not ended in 20 s.
fn shell_ends(input: &[u8]) -> (i32, String) {
    let tmp = tempdir();
    let db = path(tmp.path(), "s.lamina");
    let mut child = lamina()
        .args(["shell", "--newdb", &db])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let start = Instant::now();
    loop {
        if let Some(_status) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            return (code(&out), stderr(&out));
        }
        if start.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            let _ = child.wait();
            panic!(
                "lamina shell still running after 20 s on {:?}",
                String::from_utf8_lossy(input)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn syntax_error_without_final_newline_exits_1() {
    for input in ["{", "}", "=", ",", "\"", "store a {"] {
        let (code, err) = shell_ends(input.as_bytes());
        assert_eq!(code, 1, "{input:?}: {err}");
        assert!(err.contains("stdin:1."), "{input:?}: {err}");
        assert!(err.contains("syntax error"), "{input:?}: {err}");
    }
}

#[test]
fn commands_before_the_error_are_kept() {
    let tmp = tempdir();
    let db = path(tmp.path(), "db");
    let out = lamina_with_input(&["shell", "--newdb", &db], b"store a 1\nstore b {");
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert_eq!(ok(lamina_run(&["get", &db, "a"])), b"1\n");
}
