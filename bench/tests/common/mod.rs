//! What the tests of `lamina-bench` share: running it, reading its output,
//! and the `lamina` binary its numbers workload drives.
#![allow(dead_code, clippy::unwrap_used)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs `lamina-bench ARGS`.
pub fn lamina_bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lamina-bench"))
        .args(args)
        .output()
        .unwrap()
}

/// Runs `lamina-bench -q ARGS`; asserts success and returns stdout.
pub fn bench(args: &[&str]) -> String {
    let mut all = vec!["-q"];
    all.extend_from_slice(args);
    let out = lamina_bench(&all);
    assert_eq!(
        code(&out),
        0,
        "lamina-bench {all:?} failed: {}",
        stderr(&out)
    );
    stdout(&out)
}

/// The exit code.
pub fn code(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

/// Standard output as text.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A fresh temporary directory.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// The `lamina` binary (the root workspace's `lamina-cli`): `$LAMINA_BIN`
/// (`make bench-test` builds it and sets it), else a build beside this
/// package's target directory or in the repository's `target/`.
pub fn lamina_binary() -> String {
    if let Some(p) = std::env::var_os("LAMINA_BIN") {
        return PathBuf::from(p).to_string_lossy().into_owned();
    }
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_lamina-bench"));
    let profile_dir = exe.parent().unwrap();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let candidates = [
        profile_dir.join("../../release/lamina"),
        profile_dir.join("../../debug/lamina"),
        root.join("target/release/lamina"),
        root.join("target/debug/lamina"),
    ];
    candidates
        .iter()
        .find(|p| p.is_file())
        .map(|p| p.to_string_lossy().into_owned())
        .expect("no lamina binary: build it (cargo build -p lamina-cli) or set LAMINA_BIN")
}

/// Those of `engines` this build has (the peers are cargo features).
pub fn built(engines: &[&'static str]) -> Vec<&'static str> {
    engines
        .iter()
        .copied()
        .filter(|e| match *e {
            "rocksdb" => cfg!(feature = "rocksdb"),
            "lmdb" => cfg!(feature = "lmdb"),
            "redb" => cfg!(feature = "redb"),
            "fjall" => cfg!(feature = "fjall"),
            "bdb" => cfg!(bdb_linked),
            _ => true,
        })
        .collect()
}
