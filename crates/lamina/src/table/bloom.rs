//! The bloom filter of a table, over the tree keys of its entries: a
//! blocked filter, whose probes of one key all fall in one 64-byte line.
//!
//! Layout: docs/format.md#filter.

/// Largest probe count a filter may declare; a filter declaring more is
/// corruption.
const MAX_PROBES: u8 = 30;

/// Collects the hashes of tree keys and builds a filter over them.
///
/// Versions of one tree key arrive one after another (entries are sorted),
/// so a key equal to the previous one is counted once: the table builder
/// adds the hash of each new tree key ([`BloomBuilder::add_hash`]).
#[derive(Debug, Default)]
pub struct BloomBuilder {
    hashes: Vec<u64>,
    /// The tree key [`BloomBuilder::add`] added last.
    #[cfg(any(test, feature = "internals"))]
    last: Vec<u8>,
}

impl BloomBuilder {
    /// An empty builder.
    pub fn new() -> BloomBuilder {
        BloomBuilder::default()
    }

    /// Adds a tree key (skipped if equal to the key added just before).
    #[cfg(any(test, feature = "internals"))]
    pub fn add(&mut self, tree_key: &[u8]) {
        if !self.hashes.is_empty() && self.last == tree_key {
            return;
        }
        self.last.clear();
        self.last.extend_from_slice(tree_key);
        self.hashes.push(xxhash_rust::xxh3::xxh3_64(tree_key));
    }

    /// Adds the tree key of hash `h` (`xxh3_64` of it), which the caller
    /// knows differs from the key added just before: for a table builder,
    /// which compares each key with the one before anyway and shares the
    /// hash with the block's hash index. Not to be mixed with
    /// [`BloomBuilder::add`], which would not see this key as the last.
    pub fn add_hash(&mut self, h: u64) {
        self.hashes.push(h);
    }

    #[cfg(any(test, feature = "internals"))]
    /// Distinct tree keys added.
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    #[cfg(any(test, feature = "internals"))]
    /// True when no key was added.
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// The blocked filter for the keys added, with `bits_per_key` bits per
    /// key; `bits_per_key == 0` gives an empty filter, which matches
    /// everything.
    pub fn build(&self, bits_per_key: u32) -> Vec<u8> {
        if bits_per_key == 0 {
            return Vec::new();
        }
        let bits = (self.hashes.len() as u64).saturating_mul(u64::from(bits_per_key));
        let m = usize::try_from(bits.div_ceil(LINE_BITS))
            .unwrap_or(usize::MAX)
            .max(1);
        let k = probe_count(bits_per_key);
        let mut filter = vec![0u8; m * LINE_BYTES];
        for &h in &self.hashes {
            let line = line_of(h, m) * LINE_BYTES;
            for bit in line_probes(h, k) {
                if let Some(byte) = filter.get_mut(line + (bit / 8) as usize) {
                    *byte |= 1 << (bit % 8);
                }
            }
        }
        filter.push(k);
        filter.push(0);
        filter
    }
}

/// Probes per key for `bits_per_key` bits per key.
fn probe_count(bits_per_key: u32) -> u8 {
    (f64::from(bits_per_key) * 0.69)
        .round()
        .clamp(1.0, f64::from(MAX_PROBES)) as u8
}

/// Bytes of one line of a blocked filter: one cache line.
const LINE_BYTES: usize = 64;
/// Lines of a filter that stay in the CPU's caches (see
/// [`BlockedBloom::outgrows_caches`]).
const CACHED_LINES: usize = 4096;

/// Bits of one line.
const LINE_BITS: u64 = 512;

/// The line of a blocked filter of `m` lines that key hash `h` probes.
fn line_of(h: u64, m: usize) -> usize {
    (((h >> 32) * m as u64) >> 32) as usize
}

/// The bits (0 to 511) of its line that key hash `h` probes.
fn line_probes(h: u64, k: u8) -> impl Iterator<Item = u32> {
    let a = h as u32;
    let d = a.rotate_right(17);
    (0..u32::from(k)).map(move |i| a.wrapping_add(i.wrapping_mul(d)) & 511)
}

/// One line of a blocked filter, aligned so that it is one cache line.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; LINE_BYTES]);

/// A table's filter, checked when the table is opened. Its lines are
/// copied into cache-line-aligned memory, so a probe reads one cache line.
///
/// Layout: docs/format.md#blocked-filter.
#[derive(Debug, Default)]
pub struct BlockedBloom {
    /// Empty when the table has no filter.
    lines: Vec<Line>,
    k: u8,
}

impl BlockedBloom {
    /// Checks the filter block `bytes`: empty (no filter), or `64 m + 2`
    /// bytes with `m >= 1` and `1 <= k <= 30`. `Err` says what is wrong.
    pub fn new(bytes: &[u8]) -> Result<BlockedBloom, String> {
        if bytes.is_empty() {
            return Ok(BlockedBloom::default());
        }
        let len = bytes.len();
        let body = len.saturating_sub(2);
        if len < LINE_BYTES + 2 || !body.is_multiple_of(LINE_BYTES) {
            return Err(format!(
                "blocked filter of {len} bytes is not a whole number of 64-byte lines plus 2"
            ));
        }
        let k = bytes.get(body).copied().unwrap_or(0);
        if k == 0 || k > MAX_PROBES {
            return Err(format!(
                "blocked filter declares {k} probes (1 to {MAX_PROBES})"
            ));
        }
        let lines = bytes
            .get(..body)
            .unwrap_or(&[])
            .chunks_exact(LINE_BYTES)
            .map(|c| {
                let mut line = [0u8; LINE_BYTES];
                line.copy_from_slice(c);
                Line(line)
            })
            .collect();
        Ok(BlockedBloom { lines, k })
    }

    /// False only if the key of hash `h` (`xxh3_64` of its tree key) was
    /// certainly not added. Reads one 64-byte line.
    pub fn may_contain_hash(&self, h: u64) -> bool {
        if self.lines.is_empty() {
            return true;
        }
        let Some(Line(line)) = self.lines.get(line_of(h, self.lines.len())) else {
            return true;
        };
        line_probes(h, self.k).all(|bit| {
            line.get((bit / 8) as usize)
                .is_some_and(|b| b & (1 << (bit % 8)) != 0)
        })
    }

    /// Whether the filter is larger than a CPU's own caches are likely to
    /// keep of it while other data passes through (256 KiB): a probe of a
    /// random key then waits for memory.
    pub fn outgrows_caches(&self) -> bool {
        self.lines.len() > CACHED_LINES
    }

    /// Asks the CPU for the line [`BlockedBloom::may_contain_hash`] reads
    /// for `h`, so that its miss overlaps the work before that call.
    pub fn prefetch(&self, h: u64) {
        if let Some(line) = self.lines.get(line_of(h, self.lines.len())) {
            crate::prefetch::prefetch(line);
        }
    }

    #[cfg(any(test, feature = "internals"))]
    /// Bytes of the filter block it was made from.
    pub fn len(&self) -> usize {
        if self.lines.is_empty() {
            0
        } else {
            self.lines.len() * LINE_BYTES + 2
        }
    }

    #[cfg(any(test, feature = "internals"))]
    /// True when the table has no filter (it matches everything).
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;
    use xxhash_rust::xxh3::xxh3_64;

    fn key(i: u64) -> Vec<u8> {
        crate::key::tree_key(0, format!("key{i:08}").as_bytes())
    }

    #[test]
    fn blocked_filter_has_no_false_negatives_and_few_false_positives() {
        let mut b = BloomBuilder::new();
        let n = 20_000;
        for i in 0..n {
            b.add(&key(i));
            b.add(&key(i)); // a second version of the same tree key
        }
        assert_eq!(b.len(), n as usize);
        let bytes = b.build(10);
        assert_eq!(bytes[bytes.len() - 2], 7, "k = round(10 × 0.69)");
        let f = BlockedBloom::new(&bytes).unwrap();
        assert_eq!(f.len(), 391 * 64 + 2);
        let h = |i| xxh3_64(&key(i));
        assert!((0..n).all(|i| f.may_contain_hash(h(i))));
        let probes = 100_000;
        let fp = (n..n + probes)
            .filter(|&i| f.may_contain_hash(h(i)))
            .count();
        let rate = fp as f64 / probes as f64;
        assert!((0.004..0.025).contains(&rate), "false-positive rate {rate}");
    }

    #[test]
    fn malformed_blocked_filters_are_refused() {
        for bytes in [vec![0u8; 10], vec![0u8; 66], vec![0u8; 67], {
            let mut v = vec![0u8; 64];
            v.extend([31, 0]);
            v
        }] {
            assert!(BlockedBloom::new(&bytes).is_err(), "{}", bytes.len());
        }
        let none = BlockedBloom::new(&[]).unwrap();
        assert!(none.is_empty() && none.may_contain_hash(7));
    }

    #[test]
    fn empty_and_tiny_filters() {
        assert!(BloomBuilder::new().build(0).is_empty());
        let bytes = BloomBuilder::new().build(10);
        assert_eq!(bytes.len(), 64 + 2, "one line at least");
        let f = BlockedBloom::new(&bytes).unwrap();
        assert!(!f.may_contain_hash(xxh3_64(b"anything")));
        let mut b = BloomBuilder::new();
        b.add(b"only");
        let bytes = b.build(1);
        assert_eq!((bytes.len(), bytes[64]), (66, 1));
        let f = BlockedBloom::new(&bytes).unwrap();
        assert!(f.may_contain_hash(xxh3_64(b"only")));
    }
}
