//! On a terminal, `lamina shell` reads lines with an editor: the cursor
//! keys edit the line and recall earlier ones. Run under `script`, which
//! gives the shell a pseudo-terminal; skipped where `script` is missing.
//! Piped input is read in large chunks as before (every other shell test).
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;
use common::*;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn cursor_keys_edit_and_recall_lines() {
    if !have("script", "cursor_keys_edit_and_recall_lines") {
        return;
    }
    let tmp = tempdir();
    let db = path(tmp.path(), "db");
    ok(lamina_run(&["put", &db, "a", "value-of-a"]));
    let shell = format!("{} shell {db}", env!("CARGO_BIN_EXE_lamina"));
    let mut child = Command::new("script")
        .args(["-qec", &shell, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut keys = child.stdin.take().unwrap();
    let pause = || std::thread::sleep(Duration::from_millis(400));
    pause();
    // "fech a", four times Left, "t": the line reads "fetch a".
    keys.write_all(b"fech a\x1b[D\x1b[D\x1b[D\x1b[Dt\r")
        .unwrap();
    pause();
    // Up recalls "fetch a".
    keys.write_all(b"\x1b[A\r").unwrap();
    pause();
    keys.write_all(b"\x04").unwrap();
    keys.flush().unwrap();
    let out = child.wait_with_output().unwrap();
    let text = stdout(&out);
    assert!(text.contains("lamina> "), "no prompt: {text:?}");
    assert_eq!(text.matches("value-of-a").count(), 2, "{text:?}");
    assert!(!text.contains("Unknown command"), "{text:?}");
}
