//! Tests of the record framing: WAL segments and manifests written, read
//! back, torn, damaged and recovered.

use super::*;
use crate::coding::masked_crc2;
use crate::fs::{FaultFs, FaultKind, FileSystem, MemFs, RealFs};
use crate::Error;
use rand::{rngs::StdRng, Rng, SeedableRng};
use std::path::Path;
use std::sync::Arc;

/// A log of a manifest's framing: no segment number in its checksums.
const LOG: &str = "/db/MANIFEST-000001";

/// The magic of the log at `path`: a WAL segment's if it is named as one.
fn magic_of(path: &str) -> &'static [u8; 8] {
    if path.ends_with(".wal") {
        WAL_MAGIC
    } else {
        MANIFEST_MAGIC
    }
}

fn mem() -> MemFs {
    let fs = MemFs::new();
    fs.create_dir_all(Path::new("/db")).unwrap();
    fs
}

fn payload(rng: &mut StdRng, len: usize) -> Vec<u8> {
    (0..len).map(|_| rng.gen()).collect()
}

/// Writes `records` and syncs; returns the offset where each record ends.
fn write_log(fs: &dyn FileSystem, path: &str, records: &[Vec<u8>]) -> Vec<u64> {
    let mut w = LogWriter::create(fs, Path::new(path), MANIFEST_MAGIC).unwrap();
    let ends = records
        .iter()
        .map(|r| {
            w.add_record(r);
            w.len()
        })
        .collect();
    w.sync().unwrap();
    ends
}

/// Reads every record: the records, then the error that stopped reading.
fn read_log(fs: &dyn FileSystem, path: &str) -> (Vec<Vec<u8>>, Option<Error>, LogReader) {
    let mut r = LogReader::open(fs, Path::new(path), magic_of(path)).unwrap();
    let mut records = Vec::new();
    loop {
        match r.next_record() {
            Ok(Some(rec)) => records.push(rec),
            Ok(None) => return (records, None, r),
            Err(e) => return (records, Some(e), r),
        }
    }
}

/// Writes `bytes` as the whole file at `path`.
fn put_file(fs: &MemFs, path: &str, bytes: &[u8]) {
    let mut f = fs.create(Path::new(path)).unwrap();
    f.append(bytes).unwrap();
}

/// One fragment, framed by hand.
fn fragment(ty: u8, payload: &[u8]) -> Vec<u8> {
    let mut f = masked_crc2(&[ty], payload).to_le_bytes().to_vec();
    f.extend_from_slice(&(payload.len() as u16).to_le_bytes());
    f.push(ty);
    f.extend_from_slice(payload);
    f
}

fn assert_round_trip(records: &[Vec<u8>]) {
    let fs = mem();
    let ends = write_log(&fs, LOG, records);
    let (got, err, r) = read_log(&fs, LOG);
    assert!(err.is_none(), "{err:?}");
    assert!(got == records, "records differ");
    assert_eq!(r.torn_tail(), None);
    let len = fs.file_size(Path::new(LOG)).unwrap();
    assert_eq!(r.valid_end(), len);
    assert_eq!(ends.last().copied().unwrap_or(FILE_HEADER_LEN as u64), len);
}

#[test]
fn fragment_checksums_from_cached_starts_match_fragment_crc() {
    let long: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
    for salt in [None, Some(0), Some(7), Some(u64::MAX)] {
        let c = FragmentCrc::new(salt);
        for ty in 0..=8u8 {
            for payload in [&b""[..], b"x", &long[..100], &long[..]] {
                assert_eq!(
                    c.of(ty, payload),
                    fragment_crc(salt, ty, payload),
                    "salt {salt:?} type {ty} len {}",
                    payload.len()
                );
            }
        }
    }
}

#[test]
fn round_trips_records_of_many_sizes() {
    let mut rng = StdRng::seed_from_u64(1);
    let fill_block = BLOCK_SIZE - FRAGMENT_HEADER_LEN;
    let sizes = [
        0,
        1,
        0,
        100,
        fill_block,
        fill_block,
        3 * BLOCK_SIZE + 11,
        1 << 20,
        0,
        7,
    ];
    let mut records: Vec<Vec<u8>> = sizes.iter().map(|&n| payload(&mut rng, n)).collect();
    for _ in 0..300 {
        let n = match rng.gen_range(0..10) {
            0 => rng.gen_range(0..4 * BLOCK_SIZE),
            _ => rng.gen_range(0..300),
        };
        records.push(payload(&mut rng, n));
    }
    assert_round_trip(&records);
    assert_round_trip(&[]);
    assert_round_trip(&[Vec::new()]);
}

#[test]
fn a_record_that_fills_a_block_exactly_leaves_no_trailer() {
    let fs = mem();
    let fill = vec![7u8; BLOCK_SIZE - FRAGMENT_HEADER_LEN];
    let ends = write_log(&fs, LOG, &[fill.clone(), b"next".to_vec()]);
    assert_eq!(ends[0], (FILE_HEADER_LEN + BLOCK_SIZE) as u64);
    let bytes = fs.read_all(Path::new(LOG)).unwrap();
    assert_eq!(
        &bytes[FILE_HEADER_LEN + BLOCK_SIZE..],
        fragment(FULL, b"next")
    );
    assert_eq!(read_log(&fs, LOG).0, [fill, b"next".to_vec()]);
}

/// Writes a first record that leaves `left` bytes in block 0, then `second`.
fn log_leaving(left: usize, second: &[u8]) -> (MemFs, Vec<u8>) {
    let fs = mem();
    let first = vec![1u8; BLOCK_SIZE - FRAGMENT_HEADER_LEN - left];
    write_log(&fs, LOG, &[first.clone(), second.to_vec()]);
    assert_eq!(read_log(&fs, LOG).0, [first, second.to_vec()]);
    (fs.clone(), fs.read_all(Path::new(LOG)).unwrap())
}

#[test]
fn six_bytes_left_in_a_block_are_zero_filled() {
    let block1 = FILE_HEADER_LEN + BLOCK_SIZE;
    let (_, bytes) = log_leaving(6, b"abc");
    assert_eq!(&bytes[block1 - 6..block1], [0u8; 6]);
    assert_eq!(&bytes[block1..], fragment(FULL, b"abc"));
    let (_, bytes) = log_leaving(6, b"");
    assert_eq!(&bytes[block1..], fragment(FULL, b""));
}

#[test]
fn seven_bytes_left_in_a_block_hold_a_fragment_header() {
    let block1 = FILE_HEADER_LEN + BLOCK_SIZE;
    let (_, bytes) = log_leaving(7, b"abc");
    assert_eq!(&bytes[block1 - 7..block1], fragment(FIRST, b""));
    assert_eq!(&bytes[block1..], fragment(LAST, b"abc"));
    let (_, bytes) = log_leaving(7, b"");
    assert_eq!(&bytes[block1 - 7..], fragment(FULL, b""));
}

/// Checks every truncation length of the log of `records` that `keep` selects.
fn check_truncations(records: &[Vec<u8>], keep: impl Fn(u64) -> bool) {
    let fs = mem();
    let ends = write_log(&fs, LOG, records);
    let bytes = fs.read_all(Path::new(LOG)).unwrap();
    let lens = (0..=bytes.len() as u64).filter(|&len| keep(len));
    for len in lens {
        let torn = mem();
        put_file(&torn, LOG, &bytes[..len as usize]);
        let (got, err, r) = read_log(&torn, LOG);
        assert!(err.is_none(), "length {len}: {err:?}");
        let whole = ends.iter().filter(|&&e| e <= len).count();
        assert!(
            got[..] == records[..whole],
            "length {len}: {} records",
            got.len()
        );
        let valid_end = match whole {
            0 if len < FILE_HEADER_LEN as u64 => 0,
            0 => FILE_HEADER_LEN as u64,
            n => ends[n - 1],
        };
        assert_eq!(r.valid_end(), valid_end, "length {len}");
        let expected = (len != valid_end || len < FILE_HEADER_LEN as u64).then_some(TornTail {
            offset: valid_end,
            dropped_bytes: len - valid_end,
        });
        assert_eq!(r.torn_tail(), expected, "length {len}");
    }
}

#[test]
fn torn_tail_at_every_length_of_a_small_log() {
    let records: Vec<Vec<u8>> = [3, 0, 50, 1, 200, 0, 9]
        .iter()
        .map(|&n| vec![n as u8; n])
        .collect();
    check_truncations(&records, |_| true);
}

#[test]
fn torn_tail_near_every_boundary_of_a_multi_block_log() {
    let mut rng = StdRng::seed_from_u64(2);
    let sizes = [
        10,
        BLOCK_SIZE - 40,
        5,
        2 * BLOCK_SIZE,
        0,
        30,
        BLOCK_SIZE - 120,
        300,
    ];
    let records: Vec<Vec<u8>> = sizes.iter().map(|&n| payload(&mut rng, n)).collect();
    // Every length within 40 bytes of a block boundary, and a sample elsewhere.
    check_truncations(&records, |len| {
        let in_block = len.saturating_sub(FILE_HEADER_LEN as u64) % BLOCK_SIZE as u64;
        !(40..BLOCK_SIZE as u64 - 40).contains(&in_block) || (len / 97) * 97 == len
    });
}

#[test]
fn a_flipped_byte_is_corruption_or_a_torn_tail_never_a_wrong_record() {
    let records: Vec<Vec<u8>> = [(100, 1u8), (0, 2), (BLOCK_SIZE - 150, 3), (300, 4), (10, 5)]
        .iter()
        .map(|&(n, b)| vec![b; n])
        .collect();
    let fs = mem();
    let ends = write_log(&fs, LOG, &records);
    let len = fs.file_size(Path::new(LOG)).unwrap();
    let last_block = (FILE_HEADER_LEN + BLOCK_SIZE) as u64;
    assert!(len > last_block, "the log spans two blocks");
    let (mut corrupt, mut torn_tails) = (0, 0);
    for pos in 0..len {
        fs.corrupt_byte(Path::new(LOG), pos).unwrap();
        let opened = LogReader::open(&fs, Path::new(LOG), MANIFEST_MAGIC);
        if pos < FILE_HEADER_LEN as u64 {
            let err = opened.unwrap_err();
            assert!(
                matches!(err, Error::Corruption { offset: 0, .. }),
                "{pos}: {err}"
            );
        } else {
            let (got, err, r) = read_log(&fs, LOG);
            assert!(records.starts_with(&got), "byte {pos}: wrong record");
            let damaged = ends.iter().position(|&e| pos < e).unwrap();
            assert!(got.len() <= damaged, "byte {pos}: damaged record returned");
            match err {
                Some(Error::Corruption { offset, .. }) => {
                    assert!(offset <= pos, "byte {pos}: reported at {offset}");
                    corrupt += 1;
                }
                Some(e) => panic!("byte {pos}: {e}"),
                None => {
                    // Damage in block 0 is followed by valid data at the
                    // start of block 1; only damage in the last block can
                    // pass for a torn tail.
                    assert!(
                        pos >= last_block,
                        "byte {pos}: damage taken for a torn tail"
                    );
                    assert_eq!(got.len(), damaged, "byte {pos}");
                    let torn = r.torn_tail().unwrap();
                    assert_eq!(torn.offset, ends[damaged - 1], "byte {pos}");
                    torn_tails += 1;
                }
            }
        }
        fs.corrupt_byte(Path::new(LOG), pos).unwrap();
    }
    assert!(
        corrupt > 0 && torn_tails > 0,
        "{corrupt} corrupt, {torn_tails} torn"
    );
    assert_eq!(read_log(&fs, LOG).0, records, "flips undone");
}

#[test]
fn bad_file_headers_are_corruption_at_offset_zero() {
    let fs = mem();
    let mut w = LogWriter::create(&fs, Path::new(LOG), MANIFEST_MAGIC).unwrap();
    w.add_record(b"edit");
    w.sync().unwrap();
    let reason = |path: &str, magic| match LogReader::open(&fs, Path::new(path), magic) {
        Err(Error::Corruption {
            offset: 0, reason, ..
        }) => reason,
        other => panic!("{other:?}"),
    };
    let r = reason(LOG, WAL_MAGIC);
    assert!(r.contains("wrong magic"), "{r}");
    let mut r = LogReader::open(&fs, Path::new(LOG), MANIFEST_MAGIC).unwrap();
    assert_eq!(r.next_record().unwrap().unwrap(), b"edit");

    // A version format 1 does not know is refused naming it, checksum
    // or not (its header may be longer).
    let mut header = file_header(MANIFEST_MAGIC);
    header[8] = 7;
    let crc = masked_crc(&header[..12]);
    header[12..].copy_from_slice(&crc.to_le_bytes());
    put_file(&fs, "/db/v7", &header);
    let r = reason("/db/v7", MANIFEST_MAGIC);
    assert!(
        r.contains("manifest header version 7, which this build does not read"),
        "{r}"
    );

    let mut header = file_header(MANIFEST_MAGIC);
    header[13] ^= 1;
    put_file(&fs, "/db/crc", &header);
    assert!(reason("/db/crc", MANIFEST_MAGIC).contains("checksum"));

    let full = file_header(MANIFEST_MAGIC);
    for len in 0..FILE_HEADER_LEN {
        put_file(&fs, "/db/short", &full[..len]);
        let (got, err, r) = read_log(&fs, "/db/short");
        assert!(got.is_empty() && err.is_none());
        assert_eq!(
            r.torn_tail(),
            Some(TornTail {
                offset: 0,
                dropped_bytes: len as u64
            })
        );
        assert_eq!(r.valid_end(), 0);
    }
}

#[test]
fn a_wal_header_names_its_database_and_number() {
    let fs = mem();
    let origin = Origin {
        identity: (7u128 << 64) | 9,
        number: 42,
    };
    let mut w = LogWriter::create_wal(&fs, Path::new(SEG), origin).unwrap();
    w.add_record(b"batch");
    w.sync().unwrap();
    let bytes = fs.read_all(Path::new(SEG)).unwrap();
    assert_eq!(&bytes[..8], WAL_MAGIC);
    assert_eq!(&bytes[8..12], &6u32.to_le_bytes());
    assert_eq!(&bytes[12..20], &9u64.to_le_bytes());
    assert_eq!(&bytes[20..28], &7u64.to_le_bytes());
    assert_eq!(&bytes[28..36], &42u64.to_le_bytes());
    assert_eq!(&bytes[36..40], &masked_crc(&bytes[..36]).to_le_bytes());
    let (got, err, r) = read_log(&fs, SEG);
    assert_eq!((got, err.is_none()), (vec![b"batch".to_vec()], true));
    assert_eq!(r.origin(), Some(origin));
    r.check_origin(origin.identity, 42).unwrap();
    let foreign = r.check_origin(1, 42).unwrap_err().to_string();
    assert!(foreign.contains("another database"), "{foreign}");
    let renamed = r.check_origin(origin.identity, 43).unwrap_err();
    assert!(renamed.to_string().contains("written as number 42"));
    // A header cut short by a crash is a torn tail at offset 0: it
    // names nothing, and passes.
    for len in 0..WAL_HEADER_LEN {
        put_file(&fs, "/db/000043.wal", &bytes[..len]);
        let (got, err, r) = read_log(&fs, "/db/000043.wal");
        assert!(got.is_empty() && err.is_none());
        assert_eq!(r.torn_tail().map(|t| t.offset), Some(0));
        assert_eq!(r.origin(), None);
        r.check_origin(5, 43).unwrap();
    }
    // A flipped byte in it is corruption at offset 0.
    let mut bad = bytes.clone();
    bad[25] ^= 1;
    put_file(&fs, "/db/bad", &bad);
    let e = LogReader::open(&fs, Path::new("/db/bad"), WAL_MAGIC).unwrap_err();
    assert!(e.to_string().contains("checksum"), "{e}");
    // The manifest magic never takes a WAL header.
    let mut man = bytes[..40].to_vec();
    man[..8].copy_from_slice(MANIFEST_MAGIC);
    put_file(&fs, "/db/man", &man);
    assert!(LogReader::open(&fs, Path::new("/db/man"), MANIFEST_MAGIC).is_err());
}

/// A WAL header of a pre-release version (1 to 5), whole and with a
/// good checksum, is refused in words at offset 0; so is a later one,
/// naming its version.
#[test]
fn wal_headers_of_other_versions_are_refused_in_words() {
    let fs = mem();
    write_segment(&fs, SEG, 7, &[b"batch".to_vec()]);
    let bytes = fs.read_all(Path::new(SEG)).unwrap();
    let open = |header: &[u8]| {
        put_file(&fs, "/db/other.wal", header);
        match LogReader::open(&fs, Path::new("/db/other.wal"), WAL_MAGIC) {
            Err(Error::Corruption {
                offset: 0, reason, ..
            }) => reason,
            other => panic!("{other:?}"),
        }
    };
    for version in 2u8..=5 {
        let mut old = bytes.clone();
        old[8] = version;
        let crc = masked_crc(&old[..36]);
        old[36..40].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(
            open(&old),
            format!(
                "written by a pre-release build of lamina (WAL header version {version}); \
                 this build reads format 1 only"
            )
        );
    }
    // Version 1 had the 16-byte header of a manifest.
    let mut v1 = file_header(WAL_MAGIC).to_vec();
    v1.extend_from_slice(&fragment(FULL, b"batch"));
    let r = open(&v1);
    assert!(
        r.contains("pre-release build of lamina (WAL header version 1)"),
        "{r}"
    );
    let mut later = bytes.clone();
    later[8] = 7;
    let r = open(&later);
    assert!(
        r.contains("WAL header version 7, which this build does not read"),
        "{r}"
    );
}

const SEG: &str = "/db/000007.wal";
const NEXT: &str = "/db/000012.wal";

fn origin(number: u64) -> Origin {
    Origin {
        identity: 99,
        number,
    }
}

/// A WAL segment `number` at `path` holding `records`, synced.
fn write_segment(fs: &dyn FileSystem, path: &str, number: u64, records: &[Vec<u8>]) {
    let mut w = LogWriter::create_wal(fs, Path::new(path), origin(number)).unwrap();
    for r in records {
        w.add_record(r);
    }
    w.sync().unwrap();
}

#[test]
fn a_wal_segment_is_zero_filled_ahead_and_keeps_its_size() {
    let fs = mem();
    let mut w = LogWriter::create_wal(&fs, Path::new(SEG), origin(7)).unwrap();
    w.add_record(b"first");
    w.sync().unwrap();
    let size = fs.file_size(Path::new(SEG)).unwrap();
    assert_eq!(size, w.len() + ZERO_FILL_STEP);
    for i in 0..100u32 {
        w.add_record(&i.to_le_bytes());
        w.sync().unwrap();
    }
    assert_eq!(
        fs.file_size(Path::new(SEG)).unwrap(),
        size,
        "no growth per commit"
    );
    w.add_record(&vec![1u8; ZERO_FILL_STEP as usize]);
    w.sync().unwrap();
    assert_eq!(
        fs.file_size(Path::new(SEG)).unwrap(),
        w.len() + ZERO_FILL_STEP
    );
    let (got, err, r) = read_log(&fs, SEG);
    assert_eq!((got.len(), err.is_none()), (102, true));
    assert!(
        r.ends_open() && r.torn_tail().is_none(),
        "zero fill is not a tear"
    );
    assert_eq!(r.valid_end(), w.len());
}

/// A commit group's records (or `None` commits' buffered ones) go to
/// the segment in one write. On a disk that filled up during it, the
/// first records of the write were whole in the file, every writer of
/// the group was told its commit failed, and the next open replayed
/// them. Now a failed write is cut from the file, and the zeros ahead,
/// a write of their own, fail nothing when refused. Before the fix the
/// reader found the first record of the failed write.
#[test]
fn a_write_a_full_disk_cut_short_leaves_no_record() {
    let mem = mem();
    let fs = FaultFs::new(Arc::new(mem.clone()));
    let mut w = LogWriter::create_wal(&fs, Path::new(SEG), origin(7)).unwrap();
    w.add_record(b"kept");
    w.sync().unwrap();
    // No room: the first record falls inside the zeros ahead, the
    // second passes the file's end.
    fs.faults().limit_space(0);
    let inside = vec![b'i'; ZERO_FILL_STEP as usize - 1000];
    w.add_record(&inside);
    w.add_record(&[b'p'; 2000]);
    let err = w.flush().expect_err("the disk is full");
    assert!(err.to_string().contains("No space left"), "{err}");
    let (got, err, r) = read_log(&mem, SEG);
    let lens: Vec<usize> = got.iter().map(Vec::len).collect();
    assert_eq!(lens, [4], "no record of the failed write");
    assert!(err.is_none() && r.torn_tail().is_none(), "{err:?}");
    // Room for a record, not for its zeros: the write succeeds.
    let fs = FaultFs::new(Arc::new(mem.clone()));
    let mut w = LogWriter::create_wal(&fs, Path::new(NEXT), origin(8)).unwrap();
    fs.faults().limit_space(WAL_HEADER_LEN as u64 + 1000);
    w.add_record(&[b'r'; 900]);
    w.flush().expect("the record is whole");
    w.add_record(&[b's'; 900]);
    assert!(w.flush().is_err(), "no room for the second");
    let (got, err, _) = read_log(&mem, NEXT);
    assert!(got == [vec![b'r'; 900]], "{} records", got.len());
    assert!(err.is_none(), "{err:?}");
}

#[test]
fn end_closes_a_segment_and_what_follows_is_ignored() {
    let fs = mem();
    let mut w = LogWriter::create_wal(&fs, Path::new(SEG), origin(7)).unwrap();
    w.add_record(b"a");
    w.add_end();
    w.add_record(b"after the end");
    w.sync().unwrap();
    let (got, err, r) = read_log(&fs, SEG);
    assert_eq!(got, [b"a".to_vec()]);
    assert!(err.is_none() && !r.ends_open() && r.torn_tail().is_none());
    // END in a manifest is an unknown type, and a writer of one never
    // frames it.
    let mut m = LogWriter::create(&fs, Path::new(LOG), MANIFEST_MAGIC).unwrap();
    m.add_record(b"x");
    m.add_end();
    m.sync().unwrap();
    let (got, err, r) = read_log(&fs, LOG);
    assert!(got == [b"x".to_vec()] && err.is_none() && r.torn_tail().is_none());
    let file = [
        file_header(MANIFEST_MAGIC).to_vec(),
        fragment(END, b""),
        fragment(FULL, b"ok"),
    ]
    .concat();
    put_file(&fs, LOG, &file);
    let e = read_log(&fs, LOG).1.unwrap();
    assert!(e.to_string().contains("unknown fragment type 5"), "{e}");
}

/// Only a segment closed by END with nothing but zeros after it may be
/// written on (docs/format.md#appending-to-a-closed-segment): a byte other
/// than zero after END, in END's block or a later one, and a segment that
/// ends open, say no.
#[test]
fn a_segment_closed_before_zeros_is_told_from_one_with_bytes_after_end() {
    let closed = |fs: &MemFs| {
        let (_, err, r) = read_log(fs, SEG);
        assert!(err.is_none(), "{err:?}");
        r.closed_before_zeros().unwrap()
    };
    let fs = mem();
    let mut w = LogWriter::create_wal(&fs, Path::new(SEG), origin(7)).unwrap();
    w.add_record(b"one");
    w.add_end();
    w.sync().unwrap();
    let end = w.len() as usize;
    let bytes = fs.read_all(Path::new(SEG)).unwrap();
    assert!(
        bytes.len() > end + 2 * BLOCK_SIZE,
        "a megabyte of zeros follows END"
    );
    assert!(closed(&fs));
    for at in [end, end + 100, BLOCK_SIZE + 50, bytes.len() - 1] {
        let mut damaged = bytes.clone();
        damaged[at] = 1;
        put_file(&fs, SEG, &damaged);
        assert!(!closed(&fs), "a byte at {at}, after END at {}", end - 7);
    }
    write_segment(&fs, SEG, 7, &[b"no end".to_vec()]);
    assert!(!closed(&fs), "a segment that ends open");
}

/// A segment written on after its END holds its records, then the new
/// ones, then the new END; where the last record left fewer than 7 bytes
/// of its block, the first new record starts in the next block, over END,
/// as it would have without the close.
#[test]
fn records_appended_over_end_follow_the_earlier_ones() {
    for first_len in [10, BLOCK_SIZE - WAL_HEADER_LEN - FRAGMENT_HEADER_LEN - 3] {
        let fs = mem();
        let first = vec![b'f'; first_len];
        let mut w = LogWriter::create_wal(&fs, Path::new(SEG), origin(7))
            .unwrap()
            .grow_as_written();
        w.add_record(&first);
        w.add_end();
        w.sync().unwrap();
        let (_, _, r) = read_log(&fs, SEG);
        assert!(r.closed_before_zeros().unwrap());
        let mut a = LogWriter::append_wal(&fs, Path::new(SEG), origin(7), r.valid_end()).unwrap();
        a.add_record(b"second");
        a.add_record(&[b't'; 40_000]);
        a.add_end();
        a.sync().unwrap();
        let (got, err, r) = read_log(&fs, SEG);
        assert!(err.is_none(), "{err:?}");
        let lens: Vec<usize> = got.iter().map(Vec::len).collect();
        assert_eq!(lens, [first_len, 6, 40_000]);
        assert!(!r.ends_open(), "closed by the new END");
        // The same records written in one go lie at the same offsets.
        let once = mem();
        let mut o = LogWriter::create_wal(&once, Path::new(SEG), origin(7))
            .unwrap()
            .grow_as_written();
        o.add_record(&first);
        o.add_record(b"second");
        o.add_record(&[b't'; 40_000]);
        o.add_end();
        o.sync().unwrap();
        let end = o.len() as usize;
        let (both, appended) = (
            once.read_all(Path::new(SEG)).unwrap(),
            fs.read_all(Path::new(SEG)).unwrap(),
        );
        assert!(
            both[..end] == appended[..end],
            "first record of {first_len} bytes"
        );
    }
    let fs = mem();
    write_segment(&fs, SEG, 7, &[b"x".to_vec()]);
    let past = fs.file_size(Path::new(SEG)).unwrap() + 1;
    let e = LogWriter::append_wal(&fs, Path::new(SEG), origin(7), past).unwrap_err();
    assert!(e.to_string().contains("does not hold the records"), "{e}");
}

#[test]
fn marks_are_kept_by_the_reader_and_never_returned_as_records() {
    let fs = mem();
    let mut w = LogWriter::create_wal(&fs, Path::new(SEG), origin(7)).unwrap();
    let mark = |file, end| BlobSynced { file, end };
    w.add_record(b"a batch");
    assert!(w.add_blob_synced(mark(9, 4_000)));
    assert!(
        !w.add_blob_synced(mark(9, 4_000)),
        "the same mark again is not framed"
    );
    w.add_record(b"another");
    assert!(w.add_blob_synced(mark(9, 9_000)));
    assert!(w.add_blob_synced(mark(12, 100)));
    w.add_end();
    w.sync().unwrap();
    let (got, err, r) = read_log(&fs, SEG);
    assert_eq!(got, [b"a batch".to_vec(), b"another".to_vec()]);
    assert!(err.is_none() && !r.ends_open());
    assert_eq!(
        r.blob_synced()
            .iter()
            .map(|(&f, &e)| (f, e))
            .collect::<Vec<_>>(),
        [(9, 9_000), (12, 100)]
    );
    let bytes = fs.read_all(Path::new(SEG)).unwrap();
    // The first mark: 7 bytes of fragment header after the first record.
    let at = WAL_HEADER_LEN + 7 + 7;
    assert_eq!(&bytes[at + 7..at + 7 + 9], &[0, 0, 0, 0, 0, 0, 0, 0, 1]);
    assert_eq!(&bytes[at + 16..at + 24], &9u64.to_le_bytes());
    assert_eq!(&bytes[at + 24..at + 32], &4_000u64.to_le_bytes());

    // A malformed mark is corruption at its offset.
    for bad in [
        [&[0u8; 8][..], &[2], &[0; 16]].concat(),
        [&[0u8; 8][..], &[1], &[0; 15]].concat(),
    ] {
        let mut w = LogWriter::create_wal(&fs, Path::new(SEG), origin(7)).unwrap();
        w.add_record(b"a batch");
        w.add_record(&bad);
        w.sync().unwrap();
        let (got, err, _) = read_log(&fs, SEG);
        assert_eq!(got, [b"a batch".to_vec()]);
        match err {
            Some(Error::Corruption { offset, .. }) => assert_eq!(offset, at as u64),
            other => panic!("{other:?}"),
        }
    }

    // A manifest never frames a mark.
    let mut m = LogWriter::create(&fs, Path::new(LOG), MANIFEST_MAGIC).unwrap();
    assert!(!m.add_blob_synced(mark(9, 1)));
}

/// Recognisable old records, a reuse as a later number, fewer new
/// records: only the new ones are read, whatever the old ones hold.
#[test]
fn a_reused_segment_never_yields_its_earlier_records() {
    let fs = mem();
    let old: Vec<Vec<u8>> = (0..300u32)
        .map(|i| format!("OLD record {i} {}", "o".repeat((i % 50) as usize)).into_bytes())
        .collect();
    write_segment(&fs, SEG, 7, &old);
    fs.sync_dir(Path::new("/db")).unwrap();
    let size = fs.file_size(Path::new(SEG)).unwrap();
    let mut w = LogWriter::reuse_wal(&fs, Path::new(SEG), Path::new(NEXT), origin(12)).unwrap();
    assert!(fs.read_all(Path::new(SEG)).is_err(), "renamed away");
    fs.sync_dir(Path::new("/db")).unwrap();
    // Each kind of new start: nothing yet, one short record, records of
    // other sizes than the old ones, a record crossing a block.
    let mut new: Vec<Vec<u8>> = Vec::new();
    for step in 0..4 {
        if step > 0 {
            let r = match step {
                1 => b"new".to_vec(),
                2 => vec![b'n'; 777],
                _ => vec![b'N'; BLOCK_SIZE + 5],
            };
            w.add_record(&r);
            new.push(r);
        }
        w.sync().unwrap();
        for crashed in [fs.clone(), fs.crash_clone()] {
            let (got, err, r) = read_log(&crashed, NEXT);
            assert!(err.is_none(), "step {step}: {err:?}");
            assert_eq!(got, new, "step {step}");
            assert!(r.ends_open() && r.torn_tail().is_none(), "step {step}");
            assert_eq!(r.origin(), Some(origin(12)));
        }
    }
    assert_eq!(
        fs.file_size(Path::new(NEXT)).unwrap(),
        size,
        "reuse keeps the size"
    );
    w.add_end();
    w.sync().unwrap();
    let (got, _, r) = read_log(&fs, NEXT);
    assert!(got == new && !r.ends_open());
}

#[test]
fn damage_in_a_wal_segment_is_corruption_when_records_follow() {
    let fs = mem();
    write_segment(&fs, SEG, 7, &[b"one".to_vec(), b"two".to_vec()]);
    fs.corrupt_byte(Path::new(SEG), 40 + 8).unwrap();
    let (got, err, _) = read_log(&fs, SEG);
    assert!(got.is_empty());
    assert!(
        matches!(err, Some(Error::Corruption { offset: 40, .. })),
        "{err:?}"
    );
    // A segment cut inside a fragment is torn (a write a crash cut short).
    let fs = mem();
    write_segment(&fs, SEG, 7, &[b"one".to_vec(), b"two".to_vec()]);
    fs.truncate(Path::new(SEG), 40 + 10 + 5).unwrap();
    let (got, err, r) = read_log(&fs, SEG);
    assert!(got == [b"one".to_vec()] && err.is_none());
    assert_eq!(r.torn_tail().map(|t| t.offset), Some(50));
    assert!(r.ends_open());
    // A fragment checked as a manifest's are (no number) does not verify.
    let mut file = wal_header(origin(7));
    file.extend_from_slice(&fragment(FULL, b"v2-style"));
    put_file(&fs, SEG, &file);
    let (got, err, r) = read_log(&fs, SEG);
    assert!(got.is_empty() && err.is_none() && r.ends_open());
}

#[test]
fn reuse_syncs_the_header_before_the_rename() {
    let fs = mem();
    write_segment(&fs, SEG, 7, &[b"old".to_vec()]);
    fs.sync_dir(Path::new("/db")).unwrap();
    let faulty = FaultFs::new(Arc::new(fs.clone()));
    faulty.faults().fail_after(FaultKind::Sync, 0);
    let e = LogWriter::reuse_wal(&faulty, Path::new(SEG), Path::new(NEXT), origin(12));
    assert!(e.is_err(), "a failed header sync stops the reuse");
    assert!(fs.read_all(Path::new(NEXT)).is_err(), "not renamed");
    faulty.faults().clear();
    LogWriter::reuse_wal(&faulty, Path::new(SEG), Path::new(NEXT), origin(12)).unwrap();
    // The rename is not durable yet: a crash leaves the old name, whose
    // header (already synced) names 12; that name is never read again.
    let crashed = fs.crash_clone();
    assert!(crashed.read_all(Path::new(NEXT)).is_err());
    fs.sync_dir(Path::new("/db")).unwrap();
    let (got, err, r) = read_log(&fs.crash_clone(), NEXT);
    assert!(got.is_empty() && err.is_none());
    assert_eq!(r.origin(), Some(origin(12)));
}

#[test]
fn fragments_out_of_order_are_corruption() {
    let fs = mem();
    let header = file_header(MANIFEST_MAGIC).to_vec();
    let first = fragment(FIRST, &vec![9u8; BLOCK_SIZE - FRAGMENT_HEADER_LEN]);
    let file = [header.clone(), first, fragment(FULL, b"x")].concat();
    put_file(&fs, LOG, &file);
    match read_log(&fs, LOG).1 {
        Some(Error::Corruption {
            offset: 16, reason, ..
        }) => assert!(reason.contains("FIRST")),
        other => panic!("{other:?}"),
    }
    for ty in [MIDDLE, LAST] {
        let file = [
            header.clone(),
            fragment(FULL, b"ok"),
            fragment(ty, b"stray"),
        ]
        .concat();
        put_file(&fs, LOG, &file);
        let (got, err, _) = read_log(&fs, LOG);
        assert_eq!(got, [b"ok".to_vec()]);
        assert!(
            matches!(err, Some(Error::Corruption { offset: 25, .. })),
            "{err:?}"
        );
    }
    let file = [header, fragment(9, b"??"), fragment(FULL, b"ok")].concat();
    put_file(&fs, LOG, &file);
    match read_log(&fs, LOG).1 {
        Some(Error::Corruption {
            offset: 16, reason, ..
        }) => assert!(reason.contains("type 9")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn zero_filled_tails_are_torn() {
    for zeros in [1, 6, 7, 100, 3 * BLOCK_SIZE] {
        let fs = mem();
        let ends = write_log(&fs, LOG, &[b"a".to_vec(), vec![2; 40_000]]);
        let mut f = fs.create(Path::new("/db/tmp")).unwrap();
        f.append(&fs.read_all(Path::new(LOG)).unwrap()).unwrap();
        f.append(&vec![0; zeros]).unwrap();
        let (got, err, r) = read_log(&fs, "/db/tmp");
        assert!(err.is_none() && got.len() == 2, "{zeros}: {err:?}");
        let expected = TornTail {
            offset: ends[1],
            dropped_bytes: zeros as u64,
        };
        assert_eq!(r.torn_tail(), Some(expected));
    }
}

#[test]
fn errors_stay_errors() {
    let fs = mem();
    write_log(&fs, LOG, &[b"one".to_vec(), b"two".to_vec()]);
    fs.corrupt_byte(Path::new(LOG), 23).unwrap();
    let mut r = LogReader::open(&fs, Path::new(LOG), MANIFEST_MAGIC).unwrap();
    let first = r.next_record().unwrap_err();
    assert!(first.is_corruption());
    assert_eq!(r.next_record().unwrap_err().to_string(), first.to_string());
}

#[test]
fn writer_buffers_until_flush_and_survives_crash_only_after_sync() {
    let fs = mem();
    let mut w = LogWriter::create(&fs, Path::new(LOG), MANIFEST_MAGIC).unwrap();
    fs.sync_dir(Path::new("/db")).unwrap();
    assert_eq!((w.buffered_len(), w.len()), (16, 16));
    w.add_record(b"hello");
    assert_eq!((w.buffered_len(), w.len()), (28, 28));
    assert_eq!(fs.file_size(Path::new(LOG)).unwrap(), 0);
    w.flush().unwrap();
    assert_eq!((w.buffered_len(), w.len()), (0, 28));
    assert_eq!(read_log(&fs, LOG).0, [b"hello".to_vec()]);
    assert_eq!(read_log(&fs.crash_clone(), LOG).0.len(), 0);
    w.add_record(b"world");
    w.sync().unwrap();
    let (got, _, r) = read_log(&fs.crash_clone(), LOG);
    assert_eq!(got, [b"hello".to_vec(), b"world".to_vec()]);
    assert_eq!(r.torn_tail(), None);
    assert_eq!(w.path(), Path::new(LOG));
}

#[test]
fn a_crash_with_partial_writeback_leaves_a_prefix_of_records() {
    let mut rng = StdRng::seed_from_u64(3);
    let fs = mem();
    let mut w = LogWriter::create(&fs, Path::new(LOG), MANIFEST_MAGIC).unwrap();
    fs.sync_dir(Path::new("/db")).unwrap();
    let records: Vec<Vec<u8>> = (0..40)
        .map(|_| {
            let n = rng.gen_range(0..3000);
            payload(&mut rng, n)
        })
        .collect();
    for r in &records[..20] {
        w.add_record(r);
    }
    w.sync().unwrap();
    for r in &records[20..] {
        w.add_record(r);
    }
    w.flush().unwrap();
    for seed in 0..100 {
        let (got, err, _) = read_log(&fs.crash_clone_with(seed), LOG);
        assert!(err.is_none(), "seed {seed}: {err:?}");
        assert!(got.len() >= 20 && records.starts_with(&got), "seed {seed}");
    }
}

#[test]
fn write_failures_name_the_file() {
    let fs = FaultFs::new(Arc::new(mem()));
    let mut w = LogWriter::create(&fs, Path::new(LOG), MANIFEST_MAGIC).unwrap();
    fs.faults().fail_after(FaultKind::Write, 0);
    w.add_record(b"x");
    match w.sync() {
        Err(Error::Io {
            path: Some(p),
            source,
        }) => {
            assert_eq!(p, Path::new(LOG));
            assert_eq!(source.raw_os_error(), Some(28));
        }
        other => panic!("{other:?}"),
    }
    assert!(LogWriter::create(&fs, Path::new("/nowhere/x"), MANIFEST_MAGIC).is_err());
    assert!(LogWriter::create_wal(&fs, Path::new("/nowhere/1.wal"), origin(1)).is_err());
}

#[test]
fn round_trip_on_the_real_file_system() {
    let dir = tempfile::tempdir().unwrap();
    let records = vec![b"a".to_vec(), vec![5; 100_000], Vec::new()];
    for (name, magic) in [
        ("MANIFEST-000001", MANIFEST_MAGIC),
        ("000001.wal", WAL_MAGIC),
    ] {
        let path = dir.path().join(name);
        let mut w = if magic == WAL_MAGIC {
            LogWriter::create_wal(&RealFs, &path, origin(1)).unwrap()
        } else {
            LogWriter::create(&RealFs, &path, magic).unwrap()
        };
        for r in &records {
            w.add_record(r);
        }
        w.sync().unwrap();
        let mut r = LogReader::open(&RealFs, &path, magic).unwrap();
        for expected in &records {
            assert_eq!(&r.next_record().unwrap().unwrap(), expected);
        }
        assert_eq!(r.next_record().unwrap(), None);
        assert_eq!(r.torn_tail(), None);
    }
}

/// Small records go through the mapped window, large ones through
/// `pwrite` into the same window's pages, in any order and across the
/// file's growth; a reader sees every one, with no process-side buffer
/// left (the writer is not synced or closed: a killed process's view).
#[test]
fn mapped_and_written_records_interleave_on_the_real_file_system() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("000003.wal");
    let mut w = LogWriter::create_wal(&RealFs, &path, origin(3)).unwrap();
    let big = writer::MAPPED_WRITE_MAX + 1;
    let records: Vec<Vec<u8>> = (0..60u8)
        .map(|i| match i % 4 {
            // Not 8 zero bytes first: that would be a mark, not a record.
            0 => vec![i + 1; big],
            1 => vec![i; 300_000],
            _ => vec![i; 1 + usize::from(i)],
        })
        .collect();
    for r in &records {
        w.add_record(r);
        w.flush_mapped().unwrap();
    }
    let mut r = LogReader::open(&RealFs, &path, WAL_MAGIC).unwrap();
    for expected in &records {
        assert_eq!(&r.next_record().unwrap().unwrap(), expected);
    }
    assert_eq!(r.next_record().unwrap(), None);
    drop(w);
}

proptest::proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(
        valid_header: bool,
        body in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..4000),
    ) {
        let fs = mem();
        let mut file = if valid_header { file_header(MANIFEST_MAGIC).to_vec() } else { Vec::new() };
        file.extend_from_slice(&body);
        put_file(&fs, LOG, &file);
        if let Ok(mut r) = LogReader::open(&fs, Path::new(LOG), MANIFEST_MAGIC) {
            for _ in 0..file.len() + 2 {
                match r.next_record() {
                    Ok(Some(_)) => {}
                    Ok(None) | Err(_) => break,
                }
            }
            proptest::prop_assert!(r.valid_end() <= file.len() as u64);
        }
    }

    #[test]
    fn mutated_logs_never_panic(
        sizes in proptest::collection::vec(0usize..40_000, 0..6),
        flips in proptest::collection::vec((0usize..200_000, 1u8..=255), 0..4),
        cut in 0usize..200_000,
    ) {
        let fs = mem();
        let records: Vec<Vec<u8>> = sizes.iter().map(|&n| vec![n as u8; n]).collect();
        write_log(&fs, LOG, &records);
        let mut file = fs.read_all(Path::new(LOG)).unwrap();
        for (pos, x) in flips {
            let len = file.len();
            file[pos % len] ^= x;
        }
        file.truncate(cut.max(FILE_HEADER_LEN));
        put_file(&fs, LOG, &file);
        if let Ok(mut r) = LogReader::open(&fs, Path::new(LOG), MANIFEST_MAGIC) {
            let mut n = 0;
            while let Ok(Some(rec)) = r.next_record() {
                proptest::prop_assert!(n < records.len());
                proptest::prop_assert_eq!(&rec, &records[n]);
                n += 1;
            }
        }
    }
}

#[test]
fn a_segment_asks_for_the_write_back_of_each_whole_step_once_flushed() {
    let fs = mem();
    let origin = Origin {
        identity: 9,
        number: 1,
    };
    let mut w = LogWriter::create_wal(&fs, Path::new(LOG), origin).unwrap();
    let step = crate::fs::WRITEBACK_STEP;
    let record = vec![5u8; 3 << 20];
    let mut asked = Vec::new();
    for _ in 0..5 {
        w.add_record(&record);
        assert!(
            w.writeback_due().is_none(),
            "bytes still buffered are not asked for"
        );
        w.flush().unwrap();
        if let Some((_, from, to)) = w.writeback_due() {
            asked.push((from, to));
        }
        assert!(w.writeback_due().is_none(), "asked once");
    }
    // 5 records of 3 MiB and their framing: steps end at 4, 8 and 12 MiB as they are passed.
    assert_eq!(
        asked,
        vec![(0, step), (step, 2 * step), (2 * step, 3 * step)]
    );
}

/// A record of many megabytes (one large batch) is framed into a buffer
/// sized for it once, and the buffer is let go of once it is written: the
/// writer keeps at most two steps of zeros allocated, not the batch's size.
#[test]
fn a_large_record_leaves_no_large_buffer_behind() {
    let fs = mem();
    let mut w = LogWriter::create_wal(&fs, Path::new(SEG), origin(7)).unwrap();
    let large = vec![7u8; 64 << 20];
    w.add_record(&large);
    assert!(w.buffer_capacity() <= w.framed_len(large.len()) + BLOCK_SIZE);
    w.sync().unwrap();
    assert!(
        w.buffer_capacity() <= 2 * ZERO_FILL_STEP as usize,
        "{} bytes kept",
        w.buffer_capacity()
    );
    w.add_record(b"small");
    w.sync().unwrap();
    let (got, err, _) = read_log(&fs, SEG);
    assert_eq!((got.len(), err.is_none()), (2, true));
    assert!(got[0] == large && got[1] == b"small");
}
