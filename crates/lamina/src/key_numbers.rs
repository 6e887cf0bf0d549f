//! Numbers standing for sorted keys, so that a search of the keys compares
//! numbers side by side in memory and reads a key itself only on a tie.
//!
//! Each key's number is its first bytes after the bytes every key shares
//! (the head), zero-padded, as a big-endian number: `number(a) <
//! number(b)` implies `a < b`. So every key before the first number equal
//! to a target's is smaller than the target, and every key after the last
//! such number larger; only the keys between, nearly always none or one,
//! are compared in full. A table block keeps 16-byte numbers for its
//! restart keys (`table::block::search`); the memtable's list index 8-byte
//! numbers for its entries (`memtable::frozen`).

use std::cmp::Ordering;

/// A key's number: its first bytes, zero-padded, as a big-endian number.
pub(crate) trait Number: Copy + Ord {
    /// The number of `bytes`.
    fn of(bytes: &[u8]) -> Self;
}

impl Number for u64 {
    #[inline]
    fn of(bytes: &[u8]) -> u64 {
        let mut b = [0u8; 8];
        let n = bytes.len().min(8);
        if let (Some(dst), Some(src)) = (b.get_mut(..n), bytes.get(..n)) {
            dst.copy_from_slice(src);
        }
        u64::from_be_bytes(b)
    }
}

impl Number for u128 {
    #[inline]
    fn of(bytes: &[u8]) -> u128 {
        crate::key::tree_prefix(bytes)
    }
}

/// The numbers of a sorted run of keys, with the head they share.
#[derive(Debug)]
pub(crate) struct KeyNumbers<N> {
    /// The bytes every key starts with.
    head: Vec<u8>,
    numbers: Vec<N>,
    /// Every [`SPAN`]-th number, when there are more than [`TOP_AFTER`]
    /// (empty otherwise): a large run's search reads this first, small
    /// enough to stay in the CPU's caches, then one span of `numbers`,
    /// fetched at once.
    top: Vec<N>,
}

/// The numbers a large run's search reads after its top level: 1 KiB of
/// 16-byte numbers, sixteen cache lines asked for together.
pub(crate) const SPAN: usize = 64;

/// Numbers past which a run keeps a top level ([`KeyNumbers::top`]): 64 KiB
/// of 16-byte numbers. A binary search of a larger array waits for memory
/// at each of its last steps (an index block of 230,000 entries, 4 KiB
/// blocks of a 900 MB table: a fifth of a random point read's time out of
/// the block cache, in the search alone).
pub(crate) const TOP_AFTER: usize = 4096;

/// Numbers equal to a target's that are counted one by one before a
/// binary search counts the rest.
const NEAR_TIES: usize = 8;

impl<N: Number> KeyNumbers<N> {
    /// No keys.
    pub fn empty() -> KeyNumbers<N> {
        KeyNumbers {
            head: Vec::new(),
            numbers: Vec::new(),
            top: Vec::new(),
        }
    }

    /// The numbers of `keys`, ascending, the first of which is `first` and
    /// the last `last`. `Err(i)` if key `i` does not start with the bytes
    /// those two share (the keys are not in order).
    pub fn new<'a>(
        first: &[u8],
        last: &[u8],
        keys: impl ExactSizeIterator<Item = &'a [u8]>,
    ) -> Result<KeyNumbers<N>, usize> {
        let shared = first.iter().zip(last).take_while(|(a, b)| a == b).count();
        let head = first.get(..shared).unwrap_or(&[]).to_vec();
        let mut numbers = Vec::with_capacity(keys.len());
        for (i, k) in keys.enumerate() {
            match k.strip_prefix(head.as_slice()) {
                Some(rest) => numbers.push(N::of(rest)),
                None => return Err(i),
            }
        }
        let top = top_level(&numbers);
        Ok(KeyNumbers { head, numbers, top })
    }

    /// The keys that may equal `key`, as `(lo, hi)`: every key before `lo`
    /// is smaller than `key` and every key from `hi` on larger.
    #[inline]
    pub fn candidates(&self, key: &[u8]) -> (usize, usize) {
        let head = key.get(..self.head.len()).unwrap_or(key);
        match head.cmp(&self.head) {
            // Every key is greater, or every one smaller.
            Ordering::Less => (0, 0),
            Ordering::Greater => (self.numbers.len(), self.numbers.len()),
            Ordering::Equal => {
                let t = N::of(key.get(self.head.len()..).unwrap_or(&[]));
                let lo = count_below_two_level(&self.numbers, &self.top, t);
                // Keys that share the target's number: nearly always none
                // or one, beside `lo` in memory (counted, not searched,
                // unless there are many).
                let ties = self.numbers.get(lo..).unwrap_or(&[]);
                let near = ties.iter().take(NEAR_TIES).take_while(|&&x| x == t).count();
                let n = if near < NEAR_TIES {
                    near
                } else {
                    ties.partition_point(|&x| x == t)
                };
                (lo, lo + n)
            }
        }
    }

    /// Asks the CPU for every line of the numbers if they take a few KiB at
    /// most (a data block's), so that a search waits for memory about once
    /// rather than at each of its steps; a larger run's numbers are left to
    /// the caches. Returns whether it did.
    pub fn prefetch(&self) -> bool {
        let bytes = std::mem::size_of_val(self.numbers.as_slice());
        prefetch_range(self.numbers.as_ptr().cast::<u8>(), bytes)
    }

    /// Bytes of memory the numbers take.
    pub fn bytes(&self) -> usize {
        self.head.capacity()
            + (self.numbers.capacity() + self.top.capacity()) * std::mem::size_of::<N>()
    }
}

/// How many of `xs`, ascending, are `< t` (`xs.partition_point(|&x| x <
/// t)`), with no branch on a comparison: every step of a search for a
/// random key goes either way as often, so a branch on it would be
/// mispredicted half the time, a pipeline flush a step. The steps are
/// written out rather than looped over, as LLVM's x86 backend turns
/// conditional moves in a loop back into branches; past sixteen steps
/// (arrays of more than 65,536) the search goes on in a loop.
pub(crate) fn count_below<N: Copy + Ord>(xs: &[N], t: N) -> usize {
    // `rest` holds the answer's candidates from `base` on (the answer is
    // in `base..=base + rest.len()`); every element before `base` is `< t`.
    let mut rest = xs;
    let mut base = 0;
    let mut step = || {
        if rest.len() > 1 {
            let (low, high) = rest.split_at(rest.len() / 2);
            let below = high.first().is_some_and(|&x| x < t);
            let keep = high.len();
            base = std::hint::select_unpredictable(below, base + low.len(), base);
            rest = std::hint::select_unpredictable(below, high, rest.split_at(keep).0);
            true
        } else {
            false
        }
    };
    let _ = step() && step() && step() && step();
    let _ = step() && step() && step() && step();
    let _ = step() && step() && step() && step();
    let _ = step() && step() && step() && step();
    while step() {}
    base + usize::from(rest.first().is_some_and(|&x| x < t))
}

/// The length of the top level of `n` numbers.
pub(crate) fn top_len(n: usize) -> usize {
    if n <= TOP_AFTER {
        0
    } else {
        n.div_ceil(SPAN)
    }
}

/// The top level of `numbers`: every [`SPAN`]-th, if there are more than
/// [`TOP_AFTER`]; empty otherwise.
pub(crate) fn top_level<N: Copy>(numbers: &[N]) -> Vec<N> {
    if numbers.len() <= TOP_AFTER {
        return Vec::new();
    }
    numbers.iter().step_by(SPAN).copied().collect()
}

/// How many of `numbers` (ascending) are `< t`, as [`count_below`],
/// through `top` (see [`top_level`]) when it is not empty: the span of
/// `numbers` that holds the answer is found in `top`, then searched.
pub(crate) fn count_below_two_level<N: Copy + Ord>(numbers: &[N], top: &[N], t: N) -> usize {
    if top.is_empty() {
        return count_below(numbers, t);
    }
    // top[i - 1] = numbers[(i - 1) * SPAN] is < t and top[i] =
    // numbers[i * SPAN] is not: the answer is past the first and at most
    // the second.
    let Some(from) = count_below(top, t).checked_sub(1).map(|i| i * SPAN) else {
        return 0;
    };
    let span = numbers
        .get(from..numbers.len().min(from + SPAN))
        .unwrap_or(&[]);
    prefetch_range(span.as_ptr().cast::<u8>(), std::mem::size_of_val(span));
    from + count_below(span, t)
}

/// Asks the CPU for every line of the `bytes` from `base` if they are a
/// few KiB at most; returns whether it did.
pub(crate) fn prefetch_range(base: *const u8, bytes: usize) -> bool {
    const MOST: usize = 4 << 10;
    if bytes > MOST {
        return false;
    }
    // From the line `base` is in, to the one its last byte is in.
    let skew = base as usize % 64;
    let first = base.wrapping_sub(skew);
    for line in (0..skew + bytes).step_by(64) {
        crate::prefetch::prefetch(first.wrapping_add(line));
    }
    true
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn count_below_is_the_partition_point() {
        for len in 0..40u128 {
            // Ascending with repeats: 0, 0, 2, 2, 4, ...
            let xs: Vec<u128> = (0..len).map(|i| i / 2 * 2).collect();
            for t in 0..len + 2 {
                assert_eq!(
                    count_below(&xs, t),
                    xs.partition_point(|&x| x < t),
                    "{len} elements, target {t}"
                );
            }
        }
        // Past the steps written out: the rest of the search in a loop.
        let xs: Vec<u64> = (0..200_000u64).map(|i| i * 3).collect();
        for t in [
            0, 1, 3, 196_607, 196_608, 196_609, 599_997, 599_998, 10_000_000,
        ] {
            assert_eq!(
                count_below(&xs, t),
                xs.partition_point(|&x| x < t),
                "target {t}"
            );
        }
    }

    #[test]
    fn the_two_level_search_is_the_partition_point() {
        // Ascending with runs of repeats (some across a span's edge), around
        // the size where the top level starts.
        for len in [TOP_AFTER - 1, TOP_AFTER, TOP_AFTER + 1, 3 * TOP_AFTER + 17] {
            let xs: Vec<u128> = (0..len as u128).map(|i| i / 3 * 6).collect();
            let top = top_level(&xs);
            assert_eq!(top.is_empty(), len <= TOP_AFTER, "{len} elements");
            let edges = (0..len)
                .step_by(SPAN)
                .flat_map(|i| [i, i + 1, i + SPAN - 1]);
            let targets = edges
                .map(|i| i as u128 / 3 * 6)
                .flat_map(|x| [x.saturating_sub(1), x, x + 1])
                .chain([0, u128::MAX]);
            for t in targets {
                assert_eq!(
                    count_below_two_level(&xs, &top, t),
                    xs.partition_point(|&x| x < t),
                    "{len} elements, target {t}"
                );
            }
        }
    }

    /// The candidates of every target bracket its place among the keys:
    /// keys before them smaller, keys after them larger. Keys sharing a
    /// long head, keys shorter than a number, runs of keys equal in their
    /// first eight bytes after the head, and targets outside the head.
    #[test]
    fn candidates_bracket_the_place_of_every_target() {
        let mut keys: Vec<Vec<u8>> = Vec::new();
        for i in 0..300u32 {
            let mut k = b"head/".to_vec();
            k.extend_from_slice(&(i / 7).to_be_bytes());
            k.extend_from_slice(&[0; 4][..(i % 5) as usize]);
            k.extend_from_slice(&(i % 7).to_be_bytes()[..(i % 3) as usize]);
            keys.push(k);
        }
        keys.extend([b"head/".to_vec(), b"head/\xff".to_vec()]);
        keys.sort();
        keys.dedup();
        let mut targets = keys.clone();
        for k in &keys {
            let mut longer = k.clone();
            longer.push(0);
            targets.push(longer);
            if let Some(shorter) = k.get(..k.len() - 1) {
                targets.push(shorter.to_vec());
            }
        }
        targets.extend([
            b"".to_vec(),
            b"head".to_vec(),
            b"heae".to_vec(),
            b"\xff".to_vec(),
        ]);
        let first = keys.first().unwrap();
        let last = keys.last().unwrap();
        let n64 = KeyNumbers::<u64>::new(first, last, keys.iter().map(Vec::as_slice)).unwrap();
        let n128 = KeyNumbers::<u128>::new(first, last, keys.iter().map(Vec::as_slice)).unwrap();
        for t in &targets {
            for (lo, hi) in [n64.candidates(t), n128.candidates(t)] {
                assert!(lo <= hi && hi <= keys.len(), "{t:?}: {lo}..{hi}");
                assert!(keys[..lo].iter().all(|k| k < t), "{t:?}: {lo}..{hi}");
                assert!(keys[hi..].iter().all(|k| k > t), "{t:?}: {lo}..{hi}");
            }
        }
        // Out of order: the key without the head is named.
        let bad = [&b"ab"[..], b"b", b"ac"];
        let err = KeyNumbers::<u64>::new(b"ab", b"ac", bad.into_iter()).unwrap_err();
        assert_eq!(err, 1);
        assert_eq!(KeyNumbers::<u64>::empty().candidates(b"x"), (0, 0));
    }
}
