//! The block size chosen from the data: what a flush writes, what `Stats`
//! says, and the warning about a forced size far from the choice.

use lamina::fs::MemFs;
use lamina::{BulkLoadOptions, BulkLoader, Compression, Db, Options, Stats};
use std::sync::Arc;

/// Options of a fresh in-memory database with `block_size`, uncompressed
/// (so that block sizes show in the index's size).
fn uncompressed(block_size: usize) -> Options {
    Options {
        fs: Arc::new(MemFs::new()),
        block_size,
        compression: Compression::None,
        bottom_compression: Compression::None,
        ..Options::default()
    }
}

/// Opens a database on a fresh in-memory file system with `block_size`,
/// fills it (`fill`), and returns its stats.
fn loaded(block_size: usize) -> Stats {
    let db = Db::open("/db", uncompressed(block_size)).expect("open");
    let before = db.stats();
    let first = if block_size == 0 {
        16 << 10
    } else {
        block_size
    };
    assert_eq!(before.block_size, first, "{}", before.block_size_reason);
    fill(&db);
    let stats = db.stats();
    db.close().expect("close");
    stats
}

/// Writes 20,000 entries of ~71 bytes (21-byte internal keys, 50-byte
/// values) and flushes.
fn fill(db: &Db) {
    for i in 0..20_000u32 {
        let v = format!("{:050}", u64::from(i) * 7919);
        db.put(format!("k{i:08}").as_bytes(), v.as_bytes())
            .expect("put");
    }
    db.flush().expect("flush");
}

fn index_bytes(s: &Stats) -> u64 {
    s.levels.iter().map(|l| l.index_bytes).sum()
}

#[test]
fn unset_the_block_size_follows_the_entries_flushed() {
    let auto = loaded(0);
    assert_eq!(auto.block_size, 64 << 10, "{}", auto.block_size_reason);
    assert!(
        auto.block_size_reason.contains("entries average 71 bytes"),
        "{}",
        auto.block_size_reason
    );
    assert_eq!(auto.block_size_warning, None);
    // The flush wrote 64 KiB blocks: about half the index of 32 KiB ones.
    let forced = loaded(32 << 10);
    assert_eq!(forced.block_size, 32 << 10);
    assert!(forced.block_size_reason.contains("set by the user"));
    assert_eq!(forced.block_size_warning, None, "32 KiB is near 64 KiB");
    let (a, f) = (index_bytes(&auto), index_bytes(&forced));
    assert!(a > 0 && a * 10 < f * 6, "index bytes: auto {a}, 32 KiB {f}");
}

#[test]
fn a_forced_size_far_from_the_data_is_named_with_its_cost() {
    let s = loaded(4 << 10);
    assert_eq!(s.block_size, 4 << 10);
    let w = s.block_size_warning.expect("4 KiB is far from 64 KiB");
    assert!(w.contains("block_size is set to 4 KiB"), "{w}");
    assert!(w.contains("lamina would use 64 KiB"), "{w}");
}

/// Before the fix: after a reopen, before any flush, the choice was made
/// from the tables' stored (compressed) bytes per entry, and said 8 KiB for
/// tables written with 32 KiB blocks (when 512 entries a block were aimed at); it now reads their properties.
#[test]
fn after_a_reopen_the_choice_is_the_one_the_tables_were_written_with() {
    let fs = MemFs::new();
    let opts = || Options {
        fs: Arc::new(fs.clone()),
        ..Options::default()
    };
    let db = Db::open("/db", opts()).expect("open");
    fill(&db);
    let written = db.stats().block_size;
    db.close().expect("close");
    let db = Db::open("/db", opts()).expect("reopen");
    let s = db.stats();
    assert_eq!(written, 64 << 10);
    assert_eq!(s.block_size, written, "{}", s.block_size_reason);
}

/// A bulk load into a new database (no flush, no table to learn from)
/// samples its own pairs: before, its tables were cut into the 16 KiB
/// blocks used before any data is seen.
#[test]
fn a_bulk_load_into_a_new_database_cuts_blocks_chosen_from_its_data() {
    let bulk_loaded = |block_size: usize| {
        let db = Db::open("/db", uncompressed(block_size)).expect("open");
        let mut loader = BulkLoader::new(&db, BulkLoadOptions::default());
        for i in 0..20_000u32 {
            let v = format!("{:050}", u64::from(i) * 7919);
            loader
                .add(format!("k{i:08}").as_bytes(), v.as_bytes())
                .expect("add");
        }
        loader.finish().expect("finish");
        let stats = db.stats();
        db.close().expect("close");
        stats
    };
    let auto = bulk_loaded(0);
    assert_eq!(auto.block_size, 64 << 10, "{}", auto.block_size_reason);
    let forced = bulk_loaded(16 << 10);
    let (a, f) = (index_bytes(&auto), index_bytes(&forced));
    assert!(a > 0 && a * 2 < f, "index bytes: auto {a}, 16 KiB {f}");
}

/// A fresh in-memory database, block size chosen, with a block cache of
/// `cache_size` bytes.
fn with_cache(cache_size: usize) -> Db {
    let opts = Options {
        cache_size,
        ..uncompressed(0)
    };
    Db::open("/db", opts).expect("open")
}

/// The data block size below level 0 once the tables outgrow the block
/// cache: a page of the device, so that a read that misses the cache reads
/// one; a database that fits keeps the size chosen from its entries.
#[test]
fn tables_that_outgrow_the_cache_are_compacted_into_page_sized_blocks() {
    let compacted = |cache_size: usize| {
        let db = with_cache(cache_size);
        fill(&db);
        db.compact().expect("compact");
        let s = db.stats();
        db.close().expect("close");
        assert_eq!(s.levels[0].tables, 0, "compact() empties level 0");
        s
    };
    // 20,000 entries of ~71 bytes: about 1.4 MB of tables.
    let fits = compacted(64 << 20);
    assert_eq!(fits.block_size, 64 << 10, "{}", fits.block_size_reason);
    let outgrown = compacted(256 << 10);
    assert_eq!(
        outgrown.block_size,
        4 << 10,
        "{}",
        outgrown.block_size_reason
    );
    assert!(
        outgrown
            .block_size_reason
            .contains("outgrow the block cache"),
        "{}",
        outgrown.block_size_reason
    );
    // Sixteen times the blocks: the compacted tables' index holds an
    // entry per block.
    let (small, large) = (index_bytes(&outgrown), index_bytes(&fits));
    assert!(small > 8 * large, "index of {small} bytes against {large}");
}

/// A bulk load counts what it loads: a load larger than the cache writes
/// page-sized blocks into an empty database.
#[test]
fn a_bulk_load_larger_than_the_cache_writes_page_sized_blocks() {
    let loaded = |cache_size: usize| {
        let db = with_cache(cache_size);
        // The shape of the entries first, as a flush sees it.
        fill(&db);
        let mut loader = BulkLoader::new(&db, BulkLoadOptions::default());
        for i in 0..20_000u32 {
            let v = format!("{:050}", u64::from(i) * 31);
            loader
                .add(format!("z{i:08}").as_bytes(), v.as_bytes())
                .expect("add");
        }
        loader.finish().expect("finish");
        let s = db.stats();
        db.close().expect("close");
        s
    };
    let (fits, outgrown) = (loaded(64 << 20), loaded(2 << 20));
    let below = |s: &Stats| -> u64 { s.levels[1..].iter().map(|l| l.index_bytes).sum() };
    let (small, large) = (below(&outgrown), below(&fits));
    assert!(large > 0, "the load went below level 0");
    assert!(small > 8 * large, "index of {small} bytes against {large}");
}

/// A batch larger than twice the memtable leaves a level-0 table that is
/// not soon rewritten: when that table alone outgrows the cache, its
/// blocks are page-sized too; one that fits keeps the size chosen from the
/// data.
#[test]
fn a_batch_larger_than_the_cache_is_flushed_into_page_sized_blocks() {
    let flushed = |cache_size: usize| {
        let opts = Options {
            cache_size,
            memtable_size: 256 << 10,
            ..uncompressed(0)
        };
        let db = Db::open("/db", opts).expect("open");
        // 20,000 entries of ~71 bytes in one batch: about 1.4 MB.
        let mut batch = lamina::Batch::new();
        for i in 0..20_000u32 {
            let v = format!("{:050}", u64::from(i) * 7919);
            batch.put(format!("k{i:08}").as_bytes(), v.as_bytes());
        }
        db.write(batch).expect("write");
        db.flush().expect("flush");
        let s = db.stats();
        db.close().expect("close");
        assert_eq!(s.levels[0].tables, 1, "the batch is one level-0 table");
        s.levels[0].index_bytes
    };
    let (fits, outgrown) = (flushed(64 << 20), flushed(256 << 10));
    assert!(fits > 0, "the flush wrote an index");
    assert!(
        outgrown > 8 * fits,
        "index of {outgrown} bytes against {fits}"
    );
}

/// A bulk load whose first runs were written while it still fit in the
/// cache, and which outgrew it after, leaves every table in page-sized
/// blocks: those runs are written again (their index is then as large as
/// that of a load with 4 KiB blocks forced), and every pair is there.
#[test]
fn a_bulk_load_that_outgrows_the_cache_midway_leaves_page_sized_blocks() {
    let loaded = |block_size: usize| -> u64 {
        let opts = Options {
            cache_size: 512 << 10,
            ..uncompressed(block_size)
        };
        let db = Db::open("/db", opts).expect("open");
        let runs = BulkLoadOptions {
            memory_bytes: 128 << 10,
            ..BulkLoadOptions::default()
        };
        let mut loader = BulkLoader::new(&db, runs);
        let value = |i: u32| format!("{:050}", u64::from(i) * 31);
        for i in 0..20_000u32 {
            loader
                .add(format!("z{i:08}").as_bytes(), value(i).as_bytes())
                .expect("add");
        }
        loader.finish().expect("finish");
        let mut n = 0u32;
        for item in db.iter() {
            let (k, v) = item.expect("read");
            assert_eq!(k, format!("z{n:08}").as_bytes());
            assert_eq!(v, value(n).as_bytes());
            n += 1;
        }
        assert_eq!(n, 20_000);
        let s = db.stats();
        db.close().expect("close");
        assert_eq!(s.levels[0].tables, 0, "the load went below level 0");
        s.levels[1..].iter().map(|l| l.index_bytes).sum()
    };
    let (midway, pages) = (loaded(0), loaded(4 << 10));
    assert!(
        midway * 10 >= pages * 9,
        "index of {midway} bytes against {pages} with 4 KiB blocks forced"
    );
}
