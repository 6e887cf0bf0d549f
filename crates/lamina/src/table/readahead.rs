//! Read-ahead for a table read in order.
//!
//! Table files are opened with the kernel's read-ahead off
//! ([`RandomAccessFile::advise_random`](crate::fs::RandomAccessFile::advise_random)):
//! a point lookup reads one block, and the read-ahead around it read 29 KiB
//! a lookup from the device where 20 KiB was the block's share (2x10^7
//! random keys under a 512 MiB cap, `lamina-bench scale-reads`). An
//! iterator that goes through a table in order asks for what it will read
//! next itself, as RocksDB's iterators do: a scan once it has read three
//! blocks in a row, in windows that double up to [`SCAN_MOST`]; a
//! compaction, which reads every block of its inputs once, from its first
//! block, in windows of [`COMPACTION_WINDOW`].

/// A scan's first window, and the most it grows to.
const SCAN_FIRST: u64 = 32 << 10;
const SCAN_MOST: u64 = 256 << 10;

/// A compaction's window (RocksDB's `compaction_readahead_size`).
const COMPACTION_WINDOW: u64 = 2 << 20;

/// Where a table's reader is, and what it asked the kernel for.
#[derive(Debug)]
pub(super) struct Readahead {
    /// The end of the last block read (where the next one in order starts).
    next: u64,
    /// Blocks read in a row in file order, not counting the first.
    run: u32,
    /// The end of what was asked for so far.
    until: u64,
    /// The window asked for last.
    window: u64,
    /// Blocks in a row before the first ask.
    after: u32,
    first: u64,
    most: u64,
}

impl Readahead {
    /// For an iterator of a reader: it asks once three blocks were read in
    /// a row (a short scan that crosses a block or two asks nothing).
    pub fn for_scans() -> Readahead {
        Readahead::new(2, SCAN_FIRST, SCAN_MOST)
    }

    /// For a compaction's input: it asks from the first block on.
    pub fn for_compaction() -> Readahead {
        Readahead::new(0, COMPACTION_WINDOW, COMPACTION_WINDOW)
    }

    fn new(after: u32, first: u64, most: u64) -> Readahead {
        Readahead {
            next: u64::MAX,
            run: 0,
            until: 0,
            window: 0,
            after,
            first,
            most,
        }
    }

    /// The block at `offset..end` is read next: the span of the file to
    /// ask for now, if any (`(offset, len)`).
    pub fn step(&mut self, offset: u64, end: u64) -> Option<(u64, u64)> {
        if offset == self.next {
            self.run = self.run.saturating_add(1);
        } else {
            self.run = 0;
            self.until = 0;
            self.window = 0;
        }
        self.next = end;
        if self.run < self.after || end <= self.until {
            return None;
        }
        self.window = if self.window == 0 {
            self.first
        } else {
            self.window.saturating_mul(2).min(self.most)
        };
        let from = self.until.max(offset);
        self.until = offset.saturating_add(self.window).max(end);
        Some((from, self.until - from))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scan_asks_after_three_blocks_in_a_row_in_growing_windows() {
        let mut r = Readahead::for_scans();
        let b = 4096;
        assert_eq!(r.step(0, b), None, "one block says nothing");
        assert_eq!(r.step(10 * b, 11 * b), None, "nor two apart");
        assert_eq!(r.step(11 * b, 12 * b), None, "nor two in a row");
        let mut r = Readahead::for_scans();
        assert_eq!(r.step(0, b), None);
        assert_eq!(r.step(b, 2 * b), None);
        let b2 = 2 * b;
        assert_eq!(r.step(b2, b2 + b), Some((b2, SCAN_FIRST)));
        // Inside the window: nothing more to ask.
        let mut at = b2 + b;
        while at + b <= b2 + SCAN_FIRST {
            assert_eq!(r.step(at, at + b), None);
            at += b;
        }
        assert_eq!(
            r.step(at, at + b),
            Some((b2 + SCAN_FIRST, at + 2 * SCAN_FIRST - (b2 + SCAN_FIRST)))
        );
        // A seek elsewhere starts again.
        assert_eq!(r.step(10 * SCAN_MOST, 10 * SCAN_MOST + b), None);
        // Windows never pass the most.
        let mut r = Readahead::for_scans();
        let mut at = 0;
        let mut asked = Vec::new();
        for _ in 0..1000 {
            if let Some((_, len)) = r.step(at, at + b) {
                asked.push(len);
            }
            at += b;
        }
        assert!(asked.iter().all(|&l| l <= SCAN_MOST), "{asked:?}");
        assert_eq!(asked.last(), Some(&SCAN_MOST));
    }

    #[test]
    fn a_compaction_asks_from_its_first_block_and_covers_every_block_once() {
        let mut r = Readahead::for_compaction();
        let b = 65_536 + 5;
        let mut at = 0;
        let mut covered = 0;
        for _ in 0..200 {
            if let Some((from, len)) = r.step(at, at + b) {
                assert_eq!(from, covered, "asks continue where the last ended");
                covered = from + len;
            }
            assert!(covered >= at + b, "block {at} read before it was asked for");
            at += b;
        }
    }
}
