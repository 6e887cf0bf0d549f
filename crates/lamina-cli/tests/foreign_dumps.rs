//! Dumps made by GNU dbm's and Berkeley DB's own tools load into lamina, and
//! lamina's dumps load into them, with every record intact. Skipped when
//! gdbmtool/gdbm_dump/gdbm_load or db5.3_load/db5.3_dump are not installed.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;
use common::*;
use std::process::Command;

/// A command stream with awkward keys and values (all bytes but NUL).
fn commands() -> Vec<u8> {
    let mut input = ok(lamina_run(&["gen", "numbers", "2000"]));
    for b in 1..=255u8 {
        let mut line = b"store ".to_vec();
        line.extend_from_slice(&quote(&[b'k', b]));
        line.push(b' ');
        line.extend_from_slice(&quote(&[b, b'v', b]));
        line.push(b'\n');
        input.extend_from_slice(&line);
    }
    // An empty value, last in key order: gdbm_load 1.23 rejects a dump in
    // which an empty datum is followed by another record (even one written
    // by gdbm_dump), so it goes at the end.
    input.extend_from_slice(b"store zzz-empty \"\"\n");
    input
}

fn sorted(out: &[u8]) -> Vec<Vec<u8>> {
    let mut l: Vec<Vec<u8>> = out.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    l.sort();
    l
}

fn run(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.env("LC_ALL", "C").output().unwrap();
    assert!(out.status.success(), "{:?}: {}", cmd, stderr(&out));
    out.stdout
}

fn lamina_list(db: &str) -> Vec<u8> {
    let mut c = lamina();
    c.args(["shell", "--read-only", db]).env("LC_ALL", "C");
    ok(run_with_input(c, b"list\n"))
}

#[test]
fn gdbm_dumps_both_ways() {
    let test = "gdbm_dumps_both_ways";
    if !(have("gdbmtool", test) && have("gdbm_dump", test) && have("gdbm_load", test)) {
        return;
    }
    let tmp = tempdir();
    let gdb = path(tmp.path(), "g.db");
    let mut c = Command::new("gdbmtool");
    c.args(["--newdb", "--norc", &gdb]).env("LC_ALL", "C");
    ok(run_with_input(c, &commands()));
    let g_list = {
        let mut c = Command::new("gdbmtool");
        c.args(["--read-only", "--norc", &gdb]).env("LC_ALL", "C");
        ok(run_with_input(c, b"list\n"))
    };

    // gdbm_dump's ASCII dump, and gdbmtool's export, into lamina.
    let dump = path(tmp.path(), "g.dump");
    run(Command::new("gdbm_dump").args([&gdb, &dump]));
    let ldb = path(tmp.path(), "from-gdbm");
    ok(lamina_run(&["-q", "load", &ldb, &dump]));
    assert!(
        sorted(&lamina_list(&ldb)) == sorted(&g_list),
        "gdbm_dump -> lamina load differs"
    );
    let export = path(tmp.path(), "g.export");
    let mut c = Command::new("gdbmtool");
    c.args(["--read-only", "--norc", &gdb]).env("LC_ALL", "C");
    ok(run_with_input(
        c,
        format!("export {export} ascii\n").as_bytes(),
    ));
    let ldb2 = path(tmp.path(), "from-export");
    ok(lamina_run(&["-q", "load", &ldb2, &export]));
    assert!(
        sorted(&lamina_list(&ldb2)) == sorted(&g_list),
        "gdbmtool export -> lamina differs"
    );

    // lamina's dump into gdbm_load.
    let back = path(tmp.path(), "l.dump");
    ok(lamina_run(&["dump", &ldb, &back]));
    let gdb2 = path(tmp.path(), "g2.db");
    run(Command::new("gdbm_load").args([&back, &gdb2]));
    let mut c = Command::new("gdbmtool");
    c.args(["--read-only", "--norc", &gdb2]).env("LC_ALL", "C");
    let g2_list = ok(run_with_input(c, b"list\n"));
    assert!(
        sorted(&g2_list) == sorted(&g_list),
        "lamina dump -> gdbm_load differs"
    );
}

/// `db_load -T` text: one line per key or value, backslash as `\\`, other
/// bytes outside printable ASCII as `\xx`.
fn db_load_text(records: &[(Vec<u8>, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (k, v) in records {
        for d in [k, v] {
            for &b in d.iter() {
                match b {
                    b'\\' => out.extend_from_slice(b"\\\\"),
                    0x20..=0x7e => out.push(b),
                    _ => out.extend_from_slice(format!("\\{b:02x}").as_bytes()),
                }
            }
            out.push(b'\n');
        }
    }
    out
}

fn data_lines(dump: &[u8]) -> Vec<Vec<u8>> {
    let text: Vec<Vec<u8>> = dump.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    let start = text.iter().position(|l| l == b"HEADER=END").unwrap() + 1;
    let end = text.iter().position(|l| l == b"DATA=END").unwrap();
    text[start..end].to_vec()
}

#[test]
fn berkeley_db_dumps_both_ways() {
    let test = "berkeley_db_dumps_both_ways";
    if !(have("db5.3_load", test) && have("db5.3_dump", test)) {
        return;
    }
    let tmp = tempdir();
    let mut records: Vec<(Vec<u8>, Vec<u8>)> = (1..=255u8)
        .map(|b| (vec![b'k', b], vec![b, 0, b'\\', b]))
        .collect();
    records.push((b"plain key".to_vec(), b"plain value".to_vec()));
    records.push((b"empty".to_vec(), Vec::new()));
    records.sort();
    let bdb = path(tmp.path(), "b.db");
    let mut c = Command::new("db5.3_load");
    c.args(["-T", "-t", "btree", &bdb]);
    ok(run_with_input(c, &db_load_text(&records)));

    let print = run(Command::new("db5.3_dump").args(["-p", &bdb]));
    let bytevalue = run(Command::new("db5.3_dump").arg(&bdb));
    let mut tsvs = Vec::new();
    for (name, dump) in [("print", &print), ("bytevalue", &bytevalue)] {
        let ldb = path(tmp.path(), name);
        ok(lamina_with_input(&["-q", "load", &ldb], dump));
        let got = ok(lamina_run(&["scan", "--hex", &ldb]));
        let want: String = records
            .iter()
            .map(|(k, v)| {
                let h = |d: &[u8]| d.iter().map(|b| format!("{b:02x}")).collect::<String>();
                format!("{}\t{}\n", h(k), h(v))
            })
            .collect();
        assert!(
            String::from_utf8(got).unwrap() == want,
            "db_dump {name} -> lamina differs"
        );
        tsvs.push(ldb);
    }

    // lamina's dumps into db_load: the same data lines as db_dump's.
    for (format, theirs) in [("bdb", &bytevalue), ("bdb-print", &print)] {
        let file = path(tmp.path(), &format!("l.{format}"));
        ok(lamina_run(&["dump", &tsvs[0], &file, "--format", format]));
        let bdb2 = path(tmp.path(), &format!("b2-{format}.db"));
        run(Command::new("db5.3_load").args(["-f", &file, &bdb2]));
        let flag = if format == "bdb" {
            Vec::new()
        } else {
            vec!["-p"]
        };
        let again = run(Command::new("db5.3_dump").args(flag).arg(&bdb2));
        assert!(
            data_lines(&again) == data_lines(theirs),
            "lamina --format {format} -> db_load differs"
        );
        let ours = std::fs::read(&file).unwrap();
        assert!(
            data_lines(&ours) == data_lines(theirs),
            "lamina's {format} data lines differ"
        );
    }
}

/// A gdbm dump holding the empty key is one `gdbm_load` 1.23 refuses
/// ("Malformed data"), as it refuses `gdbm_dump`'s own dump of it: `lamina
/// dump` says so on stderr, naming the record, instead of leaving the user
/// to meet the refusal later. A dump without such a record says nothing.
#[test]
fn a_gdbm_dump_gdbm_load_cannot_read_says_so() {
    let tmp = tempdir();
    let db = path(tmp.path(), "db");
    ok(lamina_run(&["put", &db, "a", "1"]));
    let plain = lamina_run(&["dump", &db, "--keyspace", ""]);
    assert_eq!(code(&plain), 0);
    assert_eq!(stderr(&plain), "");
    ok(lamina_run(&["put", &db, "", "empty"]));
    let out = lamina_run(&["dump", &db, "--keyspace", ""]);
    assert_eq!(code(&out), 0);
    let err = stderr(&out);
    assert!(
        err.starts_with(
            "lamina: note: gdbm_load cannot load this dump: record 1 has the empty key"
        ),
        "{err}"
    );
    // lamina reads it back whole.
    let back = path(tmp.path(), "back");
    ok(lamina_with_input(&["load", &back], &out.stdout));
    assert_eq!(tsv_of(&back), "\tempty\na\t1\n");
    if have("gdbm_load", "gdbm_load refusing the empty key") {
        let file = path(tmp.path(), "dump.txt");
        std::fs::write(&file, &out.stdout).unwrap();
        let refused = Command::new("gdbm_load")
            .args([&file, &path(tmp.path(), "x.gdbm")])
            .output()
            .unwrap();
        assert!(
            !refused.status.success(),
            "gdbm_load now loads the empty key: drop the note"
        );
    }
}
