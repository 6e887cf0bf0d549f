//! Helpers shared by the CLI's integration tests: run the `lamina` binary,
//! find optional tools (gdbmtool, db5.3 utilities, perl), make temporary
//! directories.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing
)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The binary under test.
pub fn lamina() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lamina"));
    c.env_remove("LAMINA_INJECT_FAULT");
    c
}

/// Runs `cmd` with `stdin` as its input.
pub fn run_with_input(mut cmd: Command, stdin: &[u8]) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        // The child may exit early (quit, a fatal error): ignore a broken pipe.
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().expect("wait");
    writer.join().unwrap();
    out
}

/// Runs `lamina ARGS` with `stdin`.
pub fn lamina_with_input(args: &[&str], stdin: &[u8]) -> Output {
    let mut c = lamina();
    c.args(args);
    run_with_input(c, stdin)
}

/// Runs `lamina ARGS` with no input.
pub fn lamina_run(args: &[&str]) -> Output {
    lamina_with_input(args, b"")
}

/// The exit code of an output.
pub fn code(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts success and returns stdout.
pub fn ok(out: Output) -> Vec<u8> {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        stdout(&out),
        stderr(&out)
    );
    out.stdout
}

/// Whether a program is on PATH. Prints why a test is skipped when not.
pub fn have(tool: &str, test: &str) -> bool {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
        .unwrap_or(false);
    if !found {
        eprintln!("skipping {test}: {tool} is not installed");
    }
    found
}

/// A fresh temporary directory.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

/// `dir/name` as a string.
pub fn path(dir: &Path, name: &str) -> String {
    dir.join(name).to_string_lossy().into_owned()
}

/// The directory of this crate's test data.
pub fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// Every record of a lamina database, via `lamina dump --format tsv`
/// (escaped lines, in key order).
pub fn tsv_of(db: &str) -> String {
    String::from_utf8_lossy(&tsv_bytes_of(db)).into_owned()
}

/// Like `tsv_of`, as bytes (values may hold any byte).
pub fn tsv_bytes_of(db: &str) -> Vec<u8> {
    ok(lamina_run(&["dump", db, "--format", "tsv"]))
}

/// Quotes `datum` for gdbmtool's (and lamina shell's) command language.
pub fn quote(datum: &[u8]) -> Vec<u8> {
    let mut out = vec![b'"'];
    for &b in datum {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\r' => out.extend_from_slice(b"\\r"),
            _ => out.push(b),
        }
    }
    out.push(b'"');
    out
}

/// Records with the empty key, binary keys and values (one key every `step`
/// byte values), and text that looks like each dump format's section
/// headers; `tag` makes one set's records differ from another's.
pub fn binary_records(tag: u8, step: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    let all: Vec<u8> = (0..=255u8).collect();
    let mut r = vec![
        (Vec::new(), vec![tag, 0, 255]),
        (b"#:keyspace=x".to_vec(), b"database=y".to_vec()),
        (b"VERSION=3".to_vec(), b"DATA=END".to_vec()),
        (all.clone(), all.iter().rev().copied().collect()),
        (vec![tag], Vec::new()),
    ];
    for b in (0..=255u8).step_by(step) {
        r.push((vec![b'k', b, tag], vec![b, tag, b'\n', b]));
    }
    r
}
