//! The worked examples of docs/format.md#worked-examples, built by the code
//! that writes those bytes: each hex dump in the document must be exactly
//! what the writers produce today, so the document cannot drift from them.

use crate::batch::Batch;
use crate::fs::{FileSystem, MemFs};
use crate::key;
use crate::table::{TableBuilder, TableOptions};
use crate::wal::{LogWriter, Origin, WAL_HEADER_LEN};
use crate::Compression;
use std::path::Path;

/// The identity both examples carry.
const IDENTITY: u128 = 0x0011_2233_4455_6677_8899_aabb_ccdd_eeff;

/// `bytes` as the document prints them: 16 to a line, each line led by
/// its offset in hex.
fn hex_dump(bytes: &[u8]) -> String {
    bytes
        .chunks(16)
        .enumerate()
        .map(|(i, line)| {
            let hex: Vec<String> = line.iter().map(|b| format!("{b:02x}")).collect();
            format!("{:04x}  {}\n", i * 16, hex.join(" "))
        })
        .collect()
}

/// The bytes of segment 7 up to the end of its one record: one batch
/// putting `apple` = `red` in the default keyspace at seqno 1.
fn wal_example() -> Vec<u8> {
    let fs = MemFs::new();
    let path = Path::new("/000007.wal");
    let mut w = LogWriter::create_wal(
        &fs,
        path,
        Origin {
            identity: IDENTITY,
            number: 7,
        },
    )
    .expect("create");
    let mut batch = Batch::new();
    batch.put(b"apple", b"red");
    let record = batch.encode_with_seqno(1).to_vec();
    w.add_record(&record);
    w.flush().expect("flush");
    let mut bytes = fs.read_all(path).expect("read");
    bytes.truncate(WAL_HEADER_LEN + 7 + record.len());
    bytes
}

/// A whole table: three puts in the default keyspace, uncompressed, as a
/// flush lays them out (format 2, restart interval 4, 10 bits per key).
fn table_example() -> Vec<u8> {
    let fs = MemFs::new();
    let path = Path::new("/000005.sst");
    let file = fs.create(path).expect("create");
    let opts = TableOptions {
        restart_interval: 4,
        compression: Compression::None,
        ..TableOptions::default()
    };
    let mut b = TableBuilder::new(file, path.to_path_buf(), opts);
    b.set_origin(IDENTITY, 5);
    for (seqno, (k, v)) in [
        (&b"apple"[..], &b"red"[..]),
        (b"banana", b"yellow"),
        (b"cherry", b"red"),
    ]
    .into_iter()
    .enumerate()
    {
        let ikey = key::internal_key(&key::tree_key(0, k), seqno as u64 + 1, 1);
        b.add(&ikey, v).expect("add");
    }
    b.finish().expect("finish");
    fs.read_all(path).expect("read")
}

const FORMAT_MD: &str = include_str!("../../../docs/format.md");

/// The text of the worked examples section.
fn section() -> &'static str {
    let start = FORMAT_MD
        .find("## Worked examples")
        .expect("docs/format.md has a Worked examples section");
    FORMAT_MD.get(start..).unwrap_or("")
}

/// The fenced block of the section that follows `title` (a `### ` heading).
fn dump_in_doc(title: &str) -> &'static str {
    let s = section();
    let at = s
        .find(&format!("### {title}"))
        .unwrap_or_else(|| panic!("no '### {title}' in the worked examples"));
    let rest = s.get(at..).unwrap_or("");
    let open = rest.find("```\n").expect("a fenced dump") + 4;
    let len = rest
        .get(open..)
        .and_then(|r| r.find("```"))
        .expect("its end");
    rest.get(open..open + len).unwrap_or("")
}

#[test]
fn the_wal_record_example_is_what_the_writer_writes() {
    let bytes = wal_example();
    assert_eq!(dump_in_doc("A WAL record"), hex_dump(&bytes));
    // The fragment checksum covers the file number, the type and the payload.
    let payload = bytes.get(47..).expect("payload");
    let stored = bytes.get(40..44).expect("checksum");
    let want = crate::coding::masked_crc3(&7u64.to_le_bytes(), &[1], payload);
    assert_eq!(stored, want.to_le_bytes());
}

#[test]
fn the_table_example_is_what_the_builder_writes() {
    let bytes = table_example();
    assert_eq!(dump_in_doc("A table"), hex_dump(&bytes));
    // The footer's handles are the ones the document names.
    let at = bytes.len() - crate::table::FOOTER_LEN;
    let footer = crate::table::Footer::decode(
        bytes.get(at..).expect("footer"),
        Path::new("/000005.sst"),
        at as u64,
    )
    .expect("footer decodes");
    assert_eq!(footer.version, 2);
    let handles = [footer.filter, footer.properties, footer.index];
    let got: Vec<(u64, u64)> = handles.iter().map(|h| (h.offset, h.size)).collect();
    assert_eq!(got, [(85, 66), (156, 108), (269, 31)]);
}
