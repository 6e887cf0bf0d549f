//! Differential tests: the same command stream through `gdbmtool --newdb`
//! and `lamina shell --newdb` leaves the same records (compared as sorted
//! `list` output, since gdbm lists in hash order), prints the same `count`
//! and `fetch` output, and reports the same errors at the same loci.
//! Skipped when gdbmtool is not installed.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;
use common::*;
use std::process::Command;

/// A small deterministic generator (no dependency needed).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// Bytes a command can carry: any byte but NUL (gdbmtool works on C
    /// strings) and, when unquoted, none of its separators. Bytes from 0x80
    /// up are either whole characters known to be printable, or bytes that
    /// can never start a UTF-8 sequence (so that output in a UTF-8 locale
    /// does not depend on the C library's table of printable characters).
    fn datum(&mut self, quoted: bool) -> Vec<u8> {
        const CHARS: [&str; 8] = [
            "\u{e9}",
            "\u{df}",
            "\u{416}",
            "\u{3b2}",
            "\u{4e2d}",
            "\u{20ac}",
            "\u{1f600}",
            "\u{a0}",
        ];
        let len = 1 + self.below(12) as usize;
        let mut out = Vec::new();
        while out.len() < len {
            match self.below(5) {
                0 => {
                    let b = b"\t\n\\\" #;=,{}[]\r"[self.below(13) as usize];
                    let separator = b" \t\n\";[]{},=\r".contains(&b);
                    if quoted && b != b'\r' || !separator {
                        out.push(b);
                    }
                }
                1 => out.push(0x80 + self.below(64) as u8),
                2 => out.push(0xfe + self.below(2) as u8),
                3 => out.extend_from_slice(CHARS[self.below(8) as usize].as_bytes()),
                _ => out.push(b'a' + self.below(26) as u8),
            }
        }
        out
    }
}

fn gdbmtool(db: &str, input: &[u8], locale: &str) -> std::process::Output {
    let mut c = Command::new("gdbmtool");
    c.args(["--newdb", "--norc", db]).env("LC_ALL", locale);
    run_with_input(c, input)
}

fn lamina_shell(db: &str, input: &[u8], locale: &str) -> std::process::Output {
    let mut c = lamina();
    c.args(["shell", "--newdb", db]).env("LC_ALL", locale);
    run_with_input(c, input)
}

fn sorted_lines(out: &[u8]) -> Vec<Vec<u8>> {
    let mut lines: Vec<Vec<u8>> = out.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    lines.sort();
    lines
}

#[test]
fn same_records_as_gdbmtool() {
    if !have("gdbmtool", "same_records_as_gdbmtool") {
        return;
    }
    let tmp = tempdir();
    let mut input = ok(lamina_run(&["gen", "numbers", "3000"]));
    let mut rng = Lcg(42);
    let mut keys: Vec<Vec<u8>> = Vec::new();
    input.extend_from_slice(b"# a comment\n\n   \n");
    for i in 0..600 {
        let quoted = rng.below(2) == 0;
        let key = rng.datum(quoted);
        let value = rng.datum(true);
        let mut line = if i % 7 == 0 {
            b"sto ".to_vec()
        } else {
            b"store ".to_vec()
        };
        if quoted {
            line.extend_from_slice(&quote(&key));
        } else {
            line.extend_from_slice(&key);
        }
        line.push(b' ');
        line.extend_from_slice(&quote(&value));
        line.extend_from_slice(if i % 5 == 0 { b" ; " } else { b"\n" });
        input.extend_from_slice(&line);
        keys.push(key);
    }
    input.extend_from_slice(b"\n");
    // Overwrite and delete some of each kind.
    for n in (0..3000).step_by(97) {
        input.extend_from_slice(format!("store {n} \"replaced {n}\"\n").as_bytes());
    }
    for n in (1..3000).step_by(89) {
        input.extend_from_slice(format!("delete {n}\n").as_bytes());
    }
    for k in keys.iter().step_by(11) {
        input.extend_from_slice(b"fetch ");
        input.extend_from_slice(&quote(k));
        input.extend_from_slice(b"\n");
    }
    // The empty key is a key, in gdbm as in lamina.
    input.extend_from_slice(b"store \"\" \"value of the empty key\"\nfetch \"\"\n");
    input.extend_from_slice(b"count\nlist\n");

    // gdbmtool prints non-ASCII bytes differently in a UTF-8 locale.
    for locale in ["C", "C.UTF-8"] {
        compare(&tmp, &input, locale);
    }
}

fn compare(tmp: &tempfile::TempDir, input: &[u8], locale: &str) {
    let g = gdbmtool(&path(tmp.path(), "g.db"), input, locale);
    let l = lamina_shell(&path(tmp.path(), "l.lamina"), input, locale);
    assert!(g.status.success(), "gdbmtool failed: {}", stderr(&g));
    assert!(l.status.success(), "lamina failed: {}", stderr(&l));
    assert_eq!(stderr(&l), "", "lamina reported errors");
    let (g_out, l_out) = (sorted_lines(&g.stdout), sorted_lines(&l.stdout));
    assert!(g_out.len() > 3000);
    if g_out != l_out {
        let only = |a: &[Vec<u8>], b: &[Vec<u8>]| -> Vec<String> {
            a.iter()
                .filter(|x| !b.contains(x))
                .map(|x| String::from_utf8_lossy(x).into_owned())
                .take(5)
                .collect()
        };
        panic!(
            "{locale}: outputs differ after sorting\nonly gdbmtool: {:?}\nonly lamina: {:?}",
            only(&g_out, &l_out),
            only(&l_out, &g_out)
        );
    }
    // The parts whose order is defined are identical too: fetches and count.
    let head = |o: &[u8]| {
        let text = String::from_utf8_lossy(o).into_owned();
        let i = text.find("There are").unwrap();
        text[..text[i..].find('\n').unwrap() + i].to_string()
    };
    assert_eq!(head(&g.stdout), head(&l.stdout));
}

#[test]
fn same_errors_as_gdbmtool() {
    if !have("gdbmtool", "same_errors_as_gdbmtool") {
        return;
    }
    // Errors after which gdbmtool goes on (it stops at unknown commands and
    // syntax errors, where lamina goes on).
    let input = b"store a 1\nfirst\nnext\nnext\nfetch b\nstore a\n  store a b c\ndelete zz\n\
                  fetch\nstore x 1; fetch y; count\nstore a\"b\" c\n\
                  fetch \"\"\ndelete \"\"\nstore \"\" e\nfetch \"\"\ndelete \"\"\nfetch \"\"\n";
    let tmp = tempdir();
    let g = gdbmtool(&path(tmp.path(), "g.db"), input, "C");
    let l = lamina_shell(&path(tmp.path(), "l.lamina"), input, "C");
    assert_eq!(stderr(&l), stderr(&g).replace("gdbmtool:", "lamina:"));
    assert_eq!(stdout(&l), stdout(&g));
    assert_eq!(code(&g), 0);
    assert_eq!(code(&l), 1, "lamina's exit code says commands failed");
}
