//! Tables written and read back through the real file system: round trips
//! against a sorted `Vec`, and damaged files.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use super::test_util::{check_ops, exhaustive_walk, lower_bound, sample_entries, target, Op};
use super::*;
use crate::cache::{BlockCache, TableCache};
use crate::fs::{FileSystem, RealFs};
use crate::iter::InternalIterator;
use crate::key;
use crate::Error;
use proptest::prelude::*;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

type Entries = Vec<(Vec<u8>, Vec<u8>)>;

fn write_table(path: &Path, model: &Entries, opts: TableOptions) -> TableSummary {
    let file = RealFs.create(path).unwrap();
    let mut b = TableBuilder::new(file, path.to_path_buf(), opts);
    for (k, v) in model {
        b.add(k, v).unwrap();
    }
    assert_eq!(b.num_entries(), model.len() as u64);
    b.finish().unwrap()
}

fn open_table(path: &Path, number: u64, cache: &Arc<BlockCache>) -> crate::Result<Arc<Table>> {
    let file = RealFs.open(path).unwrap();
    Table::open(file, path.to_path_buf(), number, cache.clone()).map(Arc::new)
}

fn opts(block_size: usize, compression: Compression) -> TableOptions {
    TableOptions {
        block_size,
        compression,
        ..TableOptions::default()
    }
}

/// Every entry the iterator yields from first to last, then its status.
fn scan(t: &Arc<Table>, forward: bool) -> (Entries, crate::Result<()>) {
    let mut it = t.iter();
    let mut out = Vec::new();
    if forward {
        it.seek_to_first();
    } else {
        it.seek_to_last();
    }
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        if forward {
            it.next();
        } else {
            it.prev();
        }
    }
    if !forward {
        out.reverse();
    }
    (out, it.status())
}

#[test]
fn round_trip_at_several_block_sizes_and_compressions() {
    let dir = tempfile::tempdir().unwrap();
    let model = sample_entries(600, 11);
    let cache = Arc::new(BlockCache::new(1 << 20));
    let mut number = 0;
    for block_size in [64, 512, 4096, 16 << 10] {
        for compression in [Compression::None, Compression::Lz4, Compression::Zstd] {
            number += 1;
            let path = dir.path().join(crate::filename::file_name(
                crate::filename::FileKind::Table,
                number,
            ));
            let s = write_table(&path, &model, opts(block_size, compression));
            assert_eq!(s.file_size, std::fs::metadata(&path).unwrap().len());
            assert_eq!(
                (s.entries, &s.smallest, &s.largest),
                (600, &model[0].0, &model[599].0)
            );
            let t = open_table(&path, number, &cache).unwrap();
            assert_eq!(t.verify().unwrap(), 600);
            let p = t.properties();
            assert_eq!(p.entries, 600);
            assert_eq!(
                (p.smallest_seqno, p.largest_seqno),
                (s.smallest_seqno, s.largest_seqno)
            );
            if block_size == 64 {
                assert!(p.data_blocks > 200, "{} blocks of 64 bytes", p.data_blocks);
            }
            exhaustive_walk(&mut t.iter(), &model);
            for (i, (k, _)) in model.iter().enumerate() {
                assert!(t.may_contain(key::tree_key_of(k)));
                for v in 0..6 {
                    let tg = target(&model, i, v);
                    let want = model.get(lower_bound(&model, &tg)).cloned();
                    assert_eq!(t.get(&tg).unwrap(), want);
                }
            }
        }
    }
    assert!(cache.hits() > 0 && cache.misses() > 0);
}

#[test]
fn stored_sizes_shrink_with_compression() {
    let dir = tempfile::tempdir().unwrap();
    let model: Entries = (0..2000u32)
        .map(|i| {
            let k = key::internal_key(&key::tree_key(0, format!("user{i:06}").as_bytes()), 5, 1);
            (
                k,
                format!("value number {} of a compressible run", i % 10).into_bytes(),
            )
        })
        .collect();
    let cache = Arc::new(BlockCache::new(0));
    let mut sizes = Vec::new();
    for (n, c) in [Compression::None, Compression::Lz4, Compression::Zstd]
        .into_iter()
        .enumerate()
    {
        let path = dir.path().join(format!("{n}.sst"));
        write_table(&path, &model, opts(4096, c));
        let t = open_table(&path, n as u64, &cache).unwrap();
        let p = *t.properties();
        assert_eq!(p.key_bytes, 2000 * 14);
        assert!(p.data_stored_bytes > 0 && p.data_raw_bytes > 0);
        sizes.push(p.data_stored_bytes);
        assert_eq!(scan(&t, true).0, model);
    }
    assert!(
        sizes[1] < sizes[0] * 3 / 4 && sizes[2] < sizes[1],
        "{sizes:?}"
    );
}

/// A table whose data blocks stopped being compressed (random values) and
/// were compressed again (repetitive ones) holds blocks of compression 0
/// among LZ4 blocks (docs/format.md, "Block trailer"): every entry reads
/// back, and `verify` finds nothing wrong.
#[test]
fn a_table_whose_blocks_stop_and_start_compressing_reads_back() {
    use rand::{RngCore, SeedableRng};
    let dir = tempfile::tempdir().unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let model: Entries = (0..6000u32)
        .map(|i| {
            let k = key::internal_key(&key::tree_key(0, format!("k{i:06}").as_bytes()), 5, 1);
            let mut v = vec![b'a' + (i % 3) as u8; 100];
            if i < 3000 {
                rng.fill_bytes(&mut v);
            }
            (k, v)
        })
        .collect();
    let path = dir.path().join("1.sst");
    write_table(&path, &model, opts(1024, Compression::Lz4));
    let t = open_table(&path, 1, &Arc::new(BlockCache::new(1 << 20))).unwrap();
    assert_eq!(t.verify().unwrap(), 6000);
    let p = *t.properties();
    // The random half stored as is (more than its values' bytes), the
    // repetitive half compressed: less in all than the raw blocks.
    assert!(p.data_stored_bytes > 3000 * 100, "{p:?}");
    assert!(p.data_stored_bytes < p.data_raw_bytes * 3 / 4, "{p:?}");
    assert_eq!(scan(&t, true).0, model);
    for (k, v) in &model {
        assert_eq!(t.get(k).unwrap(), Some((k.clone(), v.clone())));
    }
}

#[test]
fn builder_refuses_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("1.sst");
    let mut b = TableBuilder::new(
        RealFs.create(&path).unwrap(),
        path.clone(),
        TableOptions::default(),
    );
    let k1 = key::internal_key(&key::tree_key(0, b"b"), 5, 1);
    let newer = key::internal_key(&key::tree_key(0, b"b"), 6, 1);
    let smaller = key::internal_key(&key::tree_key(0, b"a"), 1, 1);
    b.add(&k1, b"v").unwrap();
    for bad in [&k1, &newer, &smaller] {
        assert!(matches!(b.add(bad, b"v"), Err(Error::InvalidArgument(_))));
    }
    assert!(matches!(
        b.add(b"short", b"v"),
        Err(Error::InvalidArgument(_))
    ));
    let bad_kind = key::internal_key(&key::tree_key(0, b"c"), 1, 9);
    assert!(matches!(
        b.add(&bad_kind, b"v"),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(b.num_entries(), 1);
    b.finish().unwrap();
    let empty = TableBuilder::new(
        RealFs.create(&path).unwrap(),
        path.clone(),
        TableOptions::default(),
    );
    assert!(matches!(empty.finish(), Err(Error::InvalidArgument(_))));
}

#[test]
fn filter_excludes_most_absent_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("1.sst");
    let model: Entries = (0..5000u32)
        .map(|i| {
            (
                key::internal_key(&key::tree_key(0, &i.to_be_bytes()), 1, 1),
                vec![],
            )
        })
        .collect();
    write_table(&path, &model, TableOptions::default());
    let t = open_table(&path, 1, &Arc::new(BlockCache::new(0))).unwrap();
    let fp = (5000..25000u32)
        .filter(|i| t.may_contain(&key::tree_key(0, &i.to_be_bytes())))
        .count();
    assert!(fp < 400, "{fp} false positives in 20000");
    let no_filter = dir.path().join("2.sst");
    write_table(
        &no_filter,
        &model,
        TableOptions {
            bloom_bits_per_key: 0,
            ..TableOptions::default()
        },
    );
    let t = open_table(&no_filter, 2, &Arc::new(BlockCache::new(0))).unwrap();
    assert!(t.may_contain(b"\0\0\0\0absent"));
    assert_eq!(t.verify().unwrap(), 5000);
}

#[test]
fn every_flipped_byte_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let model = sample_entries(40, 5);
    for (n, compression) in [Compression::None, Compression::Lz4]
        .into_iter()
        .enumerate()
    {
        let good_path = dir.path().join(format!("good{n}.sst"));
        write_table(&good_path, &model, opts(256, compression));
        let good = std::fs::read(&good_path).unwrap();
        // Flip one byte in place at a time (rewriting the whole file would
        // make the file system flush on every truncation).
        let path = dir.path().join("bad.sst");
        std::fs::write(&path, &good).unwrap();
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        for i in 0..good.len() {
            file.write_all_at(&[good[i] ^ 0x41], i as u64).unwrap();
            check_damaged(&path, &model, i);
            file.write_all_at(&good[i..=i], i as u64).unwrap();
        }
    }
}

/// Opens, scans, reads and verifies a table with a flipped byte at `i`:
/// never a panic, never wrong data, and `verify` always finds the damage.
fn check_damaged(path: &Path, model: &Entries, i: usize) {
    let cache = Arc::new(BlockCache::new(1 << 20));
    let t = match open_table(path, 1, &cache) {
        Err(e) => return assert!(e.is_corruption(), "byte {i}: {e}"),
        Ok(t) => t,
    };
    for forward in [true, false] {
        let (seen, status) = scan(&t, forward);
        match status {
            Ok(()) => assert_eq!(&seen, model, "byte {i}"),
            Err(e) => assert!(e.is_corruption(), "byte {i}: {e}"),
        }
    }
    for (k, v) in model {
        match t.get(k) {
            Ok(found) => assert_eq!(found, Some((k.clone(), v.clone())), "byte {i}"),
            Err(e) => assert!(e.is_corruption(), "byte {i}: {e}"),
        }
    }
    match t.verify() {
        Ok(n) => panic!("verify missed a flip at byte {i} and counted {n} entries"),
        Err(e) => assert!(e.is_corruption(), "byte {i}: {e}"),
    }
}

#[test]
fn truncated_files_are_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("1.sst");
    write_table(&path, &sample_entries(100, 2), opts(512, Compression::Lz4));
    let good = std::fs::read(&path).unwrap();
    let cache = Arc::new(BlockCache::new(1 << 20));
    for len in [
        0,
        1,
        63,
        64,
        65,
        good.len() / 2,
        good.len() - 65,
        good.len() - 64,
        good.len() - 1,
    ] {
        std::fs::write(&path, &good[..len]).unwrap();
        let e = open_table(&path, 1, &cache).unwrap_err();
        assert!(e.is_corruption(), "length {len}: {e}");
    }
}

#[test]
fn bad_magic_and_version_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("1.sst");
    write_table(&path, &sample_entries(10, 2), TableOptions::default());
    let good = std::fs::read(&path).unwrap();
    let cache = Arc::new(BlockCache::new(0));
    let footer = good.len() - FOOTER_LEN;
    let mut bad = good.clone();
    bad[good.len() - 1] = b'X';
    std::fs::write(&path, &bad).unwrap();
    let e = open_table(&path, 1, &cache).unwrap_err().to_string();
    assert!(
        e.contains("magic") && e.contains(&format!("offset {}", footer + 56)),
        "{e}"
    );
    let mut bad = good.clone();
    bad[footer + 48] = 3; // format 1 reads version 2
    std::fs::write(&path, &bad).unwrap();
    let e = open_table(&path, 1, &cache).unwrap_err().to_string();
    assert!(e.contains("version 3"), "{e}");
}

#[test]
fn table_cache_opens_once_and_names_missing_tables() {
    let dir = tempfile::tempdir().unwrap();
    let model = sample_entries(50, 4);
    write_table(
        &dir.path().join(crate::filename::file_name(
            crate::filename::FileKind::Table,
            7,
        )),
        &model,
        TableOptions::default(),
    );
    let fs: Arc<dyn FileSystem> = Arc::new(RealFs);
    let tc = TableCache::new(
        fs,
        dir.path().to_path_buf(),
        2,
        Arc::new(BlockCache::new(1 << 20)),
    );
    let a = tc.get(7).unwrap();
    assert!(Arc::ptr_eq(&a, &tc.get(7).unwrap()));
    assert_eq!(
        (a.file_number(), a.path()),
        (7, dir.path().join("000007.sst").as_path())
    );
    tc.evict(7);
    assert!(!Arc::ptr_eq(&a, &tc.get(7).unwrap()));
    let e = tc.get(8).unwrap_err();
    assert!(
        e.to_string()
            .contains("table 000008.sst listed in the manifest is missing"),
        "{e}"
    );
    // The iterator keeps its table open after the cache let it go.
    let mut it = a.iter();
    drop(a);
    it.seek_to_first();
    for (k, v) in &model {
        assert!(it.valid());
        assert_eq!((it.key(), it.value()), (&k[..], &v[..]));
        it.next();
    }
    assert!(!it.valid());
    it.status().unwrap();
    assert!(tc.block_cache().usage_bytes() > 0);
}

#[test]
fn iterators_are_send_and_static() {
    fn assert_send_static<T: Send + 'static>() {}
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_static::<TableIter>();
    assert_send_sync::<Table>();
    assert_send_sync::<TableCache>();
    let _: PathBuf = PathBuf::new();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn table_ops_match_a_sorted_vec(
        n in 1usize..300,
        seed in any::<u64>(),
        block_size in prop_oneof![Just(64usize), Just(200), Just(1024), Just(8192)],
        ops in proptest::collection::vec(any::<Op>(), 1..80),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("1.sst");
        let model = sample_entries(n, seed);
        write_table(&path, &model, opts(block_size, Compression::Lz4));
        let t = open_table(&path, 1, &Arc::new(BlockCache::new(1 << 16))).unwrap();
        check_ops(&mut t.iter(), &model, &ops);
    }
}

/// `n` entries of keys `key00000000`... with 100-byte decimal values, which
/// compress well.
fn numbered_entries(n: u32) -> Entries {
    (0..n)
        .map(|i| {
            let k = key::internal_key(&key::tree_key(0, format!("key{i:08}").as_bytes()), 1, 1);
            (k, format!("{:0100}", u64::from(i) * 7919).into_bytes())
        })
        .collect()
}

/// Data blocks of a page end on the file's page boundaries (their hash
/// index takes the slack), so that a point read that misses the cache
/// reads one page of the file; the table reads back and verifies whole.
/// Other block sizes keep blocks cut at the size.
#[test]
fn blocks_of_a_page_end_on_page_boundaries() {
    let dir = tempfile::tempdir().unwrap();
    let model = numbered_entries(6000);
    let cache = Arc::new(BlockCache::new(1 << 20));
    for (n, block_size) in [(1u64, 4096usize), (2, 4000)] {
        let path = dir.path().join(format!("{n}.sst"));
        write_table(&path, &model, opts(block_size, Compression::None));
        let t = open_table(&path, n, &cache).unwrap();
        assert_eq!(t.verify().unwrap(), model.len() as u64);
        assert_eq!(scan(&t, true).0, model);
        let handles = t.data_block_handles().unwrap();
        assert!(handles.len() > 100, "{} blocks", handles.len());
        let page = 4096u64;
        let crossing = handles
            .iter()
            .filter(|h| h.offset / page != (h.offset + h.size + 4) / page)
            .count();
        if block_size == 4096 {
            assert_eq!(crossing, 0, "blocks crossing a page boundary");
            assert!(handles.iter().all(|h| h.offset % page == 0));
        } else {
            assert!(
                crossing > handles.len() / 2,
                "{crossing} of {}",
                handles.len()
            );
        }
    }
}

/// Blocks of a page that compress aim at the page with their stored bytes
/// (several pages of entries each, so the index holds a few times fewer
/// entries), and nearly all still lie in one page of the file; the table
/// reads back and verifies whole.
#[test]
fn compressed_blocks_of_a_page_fill_a_page_when_stored() {
    let dir = tempfile::tempdir().unwrap();
    let model = numbered_entries(20_000);
    let cache = Arc::new(BlockCache::new(1 << 20));
    let path = dir.path().join("1.sst");
    write_table(&path, &model, opts(4096, Compression::Lz4));
    let t = open_table(&path, 1, &cache).unwrap();
    assert_eq!(t.verify().unwrap(), model.len() as u64);
    assert_eq!(scan(&t, true).0, model);
    let p = t.properties();
    let raw_per_block = p.data_raw_bytes / p.data_blocks;
    assert!(
        raw_per_block > 2 * 4096,
        "{raw_per_block} raw bytes per block"
    );
    let handles = t.data_block_handles().unwrap();
    let page = 4096u64;
    // Only what is left of a page after a block can hold too few stored
    // bytes for an entry: such blocks, and the lookups they answer, are few.
    let crossing: u64 = handles
        .iter()
        .filter(|h| h.offset / page != (h.offset + h.size + 4) / page)
        .map(|h| h.size + 5)
        .sum();
    let all: u64 = handles.iter().map(|h| h.size + 5).sum();
    assert!(
        crossing * 20 <= all,
        "{crossing} of {all} stored bytes in blocks crossing a page boundary"
    );
}

/// A table file on the real file system whose read calls are counted; it
/// can be mapped, as the real file's handle says.
struct CountedReads {
    file: Arc<dyn crate::fs::RandomAccessFile>,
    reads: std::sync::atomic::AtomicUsize,
}

impl crate::fs::RandomAccessFile for CountedReads {
    fn read_at(&self, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
        self.reads
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.file.read_at(offset, len)
    }
    fn len(&self) -> u64 {
        self.file.len()
    }
    fn os_file(&self) -> Option<&std::fs::File> {
        self.file.os_file()
    }
}

/// Reads every key of a table of `block_size` blocks through a cold cache;
/// returns whether the table is mapped, the read calls the lookups made and
/// the bytes the cache holds after them.
fn read_calls_of_lookups(dir: &Path, block_size: usize, model: &Entries) -> (bool, usize, usize) {
    let path = dir.join(format!("{block_size}.sst"));
    write_table(&path, model, opts(block_size, Compression::None));
    let counted = Arc::new(CountedReads {
        file: RealFs.open(&path).unwrap(),
        reads: Default::default(),
    });
    let cache = Arc::new(BlockCache::new(64 << 20));
    let t = Table::open(counted.clone(), path, 1, Arc::clone(&cache)).unwrap();
    let at_open = counted.reads.load(std::sync::atomic::Ordering::Relaxed);
    for (k, v) in model {
        assert_eq!(t.get(k).unwrap(), Some((k.clone(), v.clone())));
    }
    let reads = counted.reads.load(std::sync::atomic::Ordering::Relaxed);
    (t.is_mapped(), reads - at_open, cache.usage_bytes() as usize)
}

#[test]
fn blocks_within_a_page_are_read_through_the_mapping() {
    let dir = tempfile::tempdir().unwrap();
    let model = sample_entries(3000, 9);
    // Under a memory cap tables are not mapped, and every block is read.
    let mapped = !crate::budget::memory_capped();
    // Blocks of a page are cut to end on the page boundaries: each one is
    // read from the mapping, with no read call.
    let (is_mapped, reads, _) = read_calls_of_lookups(dir.path(), 4096, &model);
    assert_eq!(is_mapped, mapped);
    assert_eq!(reads == 0, mapped, "{reads} read calls");
    // Blocks of four pages each take one read call.
    let (_, reads, _) = read_calls_of_lookups(dir.path(), 16 << 10, &model);
    assert!(
        reads > 0,
        "blocks over several pages are read with read calls"
    );
}

/// A table named `name` in a new directory, of sample entries in blocks of
/// a page stored uncompressed: the directory, the entries and the path.
fn page_table(name: &str) -> (tempfile::TempDir, Entries, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let model = sample_entries(3000, 9);
    let path = dir.path().join(name);
    write_table(&path, &model, opts(4096, Compression::None));
    (dir, model, path)
}

/// A block of a page, stored uncompressed in a mapped table, is copied and
/// cached while the cache holds what it takes in, and read in place, not
/// cached, once the data outgrows the cache (or the cache caches nothing).
#[test]
fn blocks_of_a_page_are_read_in_place_once_the_data_outgrows_the_cache() {
    let (_dir, model, path) = page_table("pages.sst");
    let mapped = !crate::budget::memory_capped();
    let open = |capacity| {
        let cache = Arc::new(BlockCache::new(capacity));
        (open_table(&path, 1, &cache).unwrap(), cache)
    };
    let first_block = |t: &Table| {
        let mut index = t.index_block().iter();
        index.seek_to_first();
        t.data_block(t.handle_of(index.value()).unwrap()).unwrap()
    };
    // A cache with room: copied and cached.
    let (t, cache) = open(64 << 20);
    assert!(!first_block(&t).is_in_place());
    assert!(cache.usage_bytes() > 0);
    // No cache: in place where mapped.
    let (t, _) = open(0);
    assert_eq!(first_block(&t).is_in_place(), mapped);
    // A cache of two blocks that every key was read through: it let go of
    // most of what it took, and the blocks read next are read in place.
    let (t, cache) = open(8 << 10);
    for (k, v) in &model {
        assert_eq!(t.get(k).unwrap(), Some((k.clone(), v.clone())));
    }
    assert!(cache.outgrown());
    let held = cache.usage_bytes();
    assert_eq!(first_block(&t).is_in_place(), mapped);
    for (k, v) in &model {
        assert_eq!(t.get(k).unwrap(), Some((k.clone(), v.clone())));
    }
    if mapped {
        assert_eq!(
            cache.usage_bytes(),
            held,
            "blocks read in place are not cached"
        );
    }
}

/// A block read in place has its checksum checked at every read: a damaged
/// one is reported each time, and the blocks beside it still read.
#[test]
fn a_damaged_block_read_in_place_is_reported_at_every_read() {
    let (_dir, model, path) = page_table("damaged.sst");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[100] ^= 0x40;
    std::fs::write(&path, &bytes).unwrap();
    // No cache: the blocks of a page are read in place where mapped.
    let t = open_table(&path, 1, &Arc::new(BlockCache::new(0))).unwrap();
    let tk = crate::key::tree_key_of(&model[0].0).to_vec();
    for _ in 0..2 {
        // A scan's read, then a point lookup's: neither trusts the page.
        let e = t.get(&model[0].0).unwrap_err();
        assert!(e.is_corruption(), "{e}");
        assert!(e.to_string().contains("checksum"), "{e}");
        let e = t.get_point(&tk, &model[0].0, false, |_, _| ()).unwrap_err();
        assert!(e.to_string().contains("checksum"), "{e}");
    }
    let (k, v) = model.last().unwrap();
    assert_eq!(t.get(k).unwrap(), Some((k.clone(), v.clone())));
}
