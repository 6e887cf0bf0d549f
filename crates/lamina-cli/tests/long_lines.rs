//! Lines longer than any valid record are refused at once, with their
//! line number, in bounded memory.
//!
//! Before the fix `lamina load DB /dev/zero` reached 4.9 GB resident in 12
//! seconds, still reading its first line, and a dump with a single line of
//! 3 GB reached 4.2 GB before "expected one tab": every reader of `load`
//! (and the shell) read a whole line into memory before looking at it. No
//! valid record needs a line longer than its key and value, each byte
//! written in the most characters its format uses, so each reader now reads
//! with that limit (a TSV line in two pieces: the key up to its tab, then
//! the value) and stops at the first line past it: exit code 3, the line's
//! number, and the records before it kept.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;
use common::*;
use std::io::Write;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

/// The largest key, and the characters each of its bytes takes at most:
/// TSV (`\xHH`) and Berkeley DB `print` (`\HH`).
const MAX_KEY: usize = 65_536;

fn count(db: &str) -> u64 {
    String::from_utf8(ok(lamina_run(&["count", db])))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Loads `input` into a new database; returns it and what `load` said.
fn load(format: &str, input: &[u8]) -> (tempfile::TempDir, String, Output) {
    let tmp = tempdir();
    let db = path(tmp.path(), "db");
    let out = lamina_with_input(&["-q", "load", "-F", format, &db, "-"], input);
    (tmp, db, out)
}

#[test]
fn a_tsv_key_one_byte_longer_than_the_largest_is_refused_at_its_line() {
    // The largest key, each byte escaped: 4 x 65,536 characters before the
    // tab, which is loaded; one more character, with no tab, is refused.
    let mut input = b"a\t1\n".to_vec();
    input.extend(b"\\x01".repeat(MAX_KEY));
    input.extend_from_slice(b"\tlargest key\nb\t2\n");
    input.extend(vec![b'k'; 4 * MAX_KEY + 1]);
    input.extend_from_slice(b"\nc\t3\n");
    let (_tmp, db, out) = load("tsv", &input);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "lamina: line 4: longer than 262,144 bytes before a tab, more than a key can \
         take: at most 65,536 bytes, each written in at most 4 characters; the 3 records \
         before it were loaded\n"
    );
    assert_eq!(count(&db), 3);
    let largest = ok(lamina_run(&["get", &db, &"\u{1}".repeat(MAX_KEY)]));
    assert_eq!(largest, b"largest key\n");
}

#[test]
fn a_berkeley_db_key_line_one_byte_longer_than_the_largest_is_refused() {
    // `print` writes a byte in at most 3 characters (`\00`), after a space.
    let mut input = b"VERSION=3\nformat=print\ntype=btree\nHEADER=END\n a\n 1\n ".to_vec();
    input.extend(b"\\00".repeat(MAX_KEY));
    input.extend_from_slice(b"\n largest key\n ");
    input.extend(b"\\00".repeat(MAX_KEY));
    input.extend_from_slice(b"0\n x\nDATA=END\n");
    let (_tmp, db, out) = load("bdb-print", &input);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "lamina: line 9: longer than 196,609 bytes, more than a key's line can take: at \
         most 65,536 bytes, each written in at most 3 characters; the 2 records before it \
         were loaded\n"
    );
    assert_eq!(count(&db), 2);
}

#[test]
fn a_gdbm_header_line_past_its_limit_is_refused() {
    let mut input = b"# GDBM dump file created by test\n#:version=1.1\n#:".to_vec();
    input.extend(vec![b'x'; 65_536]);
    input.extend_from_slice(b"\n# End of header\n");
    let (_tmp, _db, out) = load("gdbm", &input);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "lamina: line 3: longer than 65,536 bytes, more than a header line can take; \
         no record was loaded; the new database was removed\n"
    );
    // A base64 line longer than what is left of its record.
    let mut input =
        b"# GDBM dump file created by test\n#:version=1.1\n# End of header\n#:len=1\nYQ==\n#:len=3\n"
            .to_vec();
    input.extend(vec![b'A'; 10_000]);
    let (_tmp, _db, out) = load("gdbm", &input);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with("lamina: line 7: longer than 84 bytes, more than the rest"),
        "{}",
        stderr(&out)
    );
}

/// Waits for `child` at most `limit` (far more than it needs: this is not
/// a measure of speed, only a guard against a reader that never stops),
/// killing it if it has not ended.
fn wait_ending(mut child: Child, limit: Duration, what: &str) -> Output {
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still reading after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn loading_dev_zero_ends_at_its_first_line() {
    let tmp = tempdir();
    for format in ["tsv", "gdbm", "bdb", "auto"] {
        let db = path(tmp.path(), &format!("db-{format}"));
        let mut cmd = lamina();
        cmd.args(["-q", "load", &db, "/dev/zero"]);
        if format != "auto" {
            cmd.args(["-F", format]);
        }
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = wait_ending(child, Duration::from_secs(120), format);
        let err = stderr(&out);
        assert_eq!(code(&out), 3, "{format}: {err}");
        assert!(
            err.starts_with("lamina: line 1: longer than ")
                && err.ends_with("no record was loaded; the new database was removed\n"),
            "{format}: {err}"
        );
    }
}

#[test]
fn a_shell_fed_an_endless_line_stops_at_it() {
    let tmp = tempdir();
    let db = path(tmp.path(), "db");
    let mut child = lamina()
        .args(["shell", &db])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        // A store, then zeros until the shell stops reading.
        let zeros = vec![0u8; 1 << 20];
        let _ = stdin.write_all(b"store kept 1\n");
        while stdin.write_all(&zeros).is_ok() {}
    });
    let out = wait_ending(child, Duration::from_secs(300), "shell");
    writer.join().unwrap();
    let err = stderr(&out);
    assert_eq!(code(&out), 3, "{err}");
    assert!(
        err.contains("lamina: stdin:2: a line longer than 537,002,048 bytes"),
        "{err}"
    );
    assert!(
        err.ends_with("stopped: the 1 store the engine acknowledged before it is kept\n"),
        "{err}"
    );
    assert_eq!(ok(lamina_run(&["get", &db, "kept"])), b"1\n");
}
