//! `lamina dump` then `lamina load` gives back exactly the same records, for
//! every byte value in keys and values, in every format, with the format
//! detected on load.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;
use common::*;

/// Records with every byte value, empty values, long values, and text that
/// looks like each format's own syntax.
fn records() -> Vec<(Vec<u8>, Vec<u8>)> {
    let all: Vec<u8> = (0..=255u8).collect();
    let mut r = vec![
        (b"#:len=1".to_vec(), b"# End of data".to_vec()),
        (b"VERSION=3".to_vec(), b"DATA=END".to_vec()),
        (b"\\".to_vec(), b"\\x41\\n".to_vec()),
        (b"empty".to_vec(), Vec::new()),
        (all.clone(), all.iter().rev().copied().collect()),
        (b" leading space".to_vec(), vec![b'v'; 5000]),
    ];
    for b in 0..=255u8 {
        r.push((vec![b'k', b], vec![b, b, 0, b]));
    }
    r.sort();
    r
}

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn every_format_round_trips_arbitrary_bytes() {
    let tmp = tempdir();
    let src = path(tmp.path(), "src");
    // The source database, from a Berkeley DB bytevalue dump written here.
    let mut dump = String::from("VERSION=3\nformat=bytevalue\ntype=btree\nHEADER=END\n");
    for (k, v) in records() {
        dump.push_str(&format!(" {}\n {}\n", hex(&k), hex(&v)));
    }
    dump.push_str("DATA=END\n");
    ok(lamina_with_input(&["-q", "load", &src], dump.as_bytes()));
    let want = tsv_bytes_of(&src);
    assert_eq!(want.split(|&b| b == b'\n').count() - 1, records().len());
    let scanned = ok(lamina_run(&["scan", "--hex", "--limit", "1", &src]));
    let (k0, v0) = &records()[0];
    assert_eq!(
        String::from_utf8(scanned).unwrap(),
        format!("{}\t{}\n", hex(k0), hex(v0))
    );
    for format in ["gdbm", "bdb", "bdb-print", "tsv"] {
        let file = path(tmp.path(), &format!("dump.{format}"));
        ok(lamina_run(&["dump", &src, &file, "--format", format]));
        let dst = path(tmp.path(), &format!("db-{format}"));
        // No --format: detected from the file.
        ok(lamina_run(&["-q", "load", &dst, &file]));
        assert!(
            tsv_bytes_of(&dst) == want,
            "{format}: records differ after the round trip"
        );
        // And from standard input.
        let dst2 = path(tmp.path(), &format!("db2-{format}"));
        let bytes = std::fs::read(&file).unwrap();
        ok(lamina_with_input(&["-q", "load", &dst2], &bytes));
        assert!(
            tsv_bytes_of(&dst2) == want,
            "{format} from stdin: records differ"
        );
    }
}

#[test]
fn load_adds_to_an_existing_database_and_newdb_replaces_it() {
    let tmp = tempdir();
    let db = path(tmp.path(), "db");
    ok(lamina_with_input(&["-q", "load", &db], b"a\t1\nb\t2\n"));
    ok(lamina_with_input(&["-q", "load", &db], b"b\t3\nc\t4\n"));
    assert_eq!(tsv_of(&db), "a\t1\nb\t3\nc\t4\n");
    let refused = lamina_with_input(&["-q", "load", "--no-replace", &db], b"d\t5\na\t9\n");
    assert_eq!(code(&refused), 3, "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("record 2: key already exists; the record before it was loaded")
    );
    assert_eq!(tsv_of(&db), "a\t1\nb\t3\nc\t4\nd\t5\n");
    ok(lamina_with_input(
        &["-q", "load", "--newdb", &db],
        b"z\t0\n",
    ));
    assert_eq!(tsv_of(&db), "z\t0\n");
}
