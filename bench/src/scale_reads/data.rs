//! The data sets of `lamina-bench scale-reads`: their keys, found and
//! absent, drawn by index so that any thread can draw any key; their
//! values and the check of a value read; and every record in key order,
//! which is the order every engine loads them in.
//!
//! **Random keys.** Found key `i` (0 ≤ i < N) and absent key `i` come from
//! one generator, two streams: the key's first 8 bytes are `mix(2i)` for
//! the found stream and `mix(2i + 1)` for the absent one, where `mix` is
//! splitmix64's finalizer (a bijection of 64-bit words), so no two found
//! keys are equal and no absent key is ever a found one; the last 8 bytes
//! are `mix` of the first 8 xor a constant. The 100-byte value is derived
//! from the key's first 8 bytes: 8 bytes of a check word, then 92 bytes of
//! xorshift64* output, both from that word.
//!
//! **Numbers.** Record `n` (0 ≤ n < N) of the numbers load: key `n` in
//! decimal ASCII, value `n` in English as the numbers generator writes it.
//! Absent key `i` is the decimal of `N + i` (never inserted).

use lamina_cli::numbers::Numbers;

/// Bytes of a random key.
pub const KEY_SIZE: usize = 16;
/// Bytes of a random key's value.
pub const VALUE_SIZE: usize = 100;
/// Constants that tell the key's second half and the value apart from its
/// first half.
const SECOND_HALF: u64 = 0x6a09_e667_f3bc_c908;
const VALUE_WORD: u64 = 0xbb67_ae85_84ca_a73b;

/// splitmix64's finalizer: a bijection of 64-bit words that spreads every
/// input bit over the output.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// What the data set is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Data {
    /// Keys of 16 random bytes with values of 100 bytes.
    Random,
    /// The numbers load's records: decimal keys, English words as values.
    Numbers,
}

/// Which of the generator's streams a key comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Keys that were loaded.
    Found,
    /// Keys that never were.
    Absent,
}

impl Stream {
    /// The stream's name in the table and the CSV.
    pub fn label(self) -> &'static str {
        match self {
            Stream::Found => "found",
            Stream::Absent => "absent",
        }
    }
}

/// What receives the records of a load, one at a time (key, value); an
/// error stops the load.
pub type Visit<'a> = dyn FnMut(&[u8], &[u8]) -> Result<(), String> + 'a;

/// Room for one key of either data set.
pub type KeyBuf = [u8; 24];

/// A data set of `keys` records.
pub struct DataSet {
    data: Data,
    keys: u64,
    /// For numbers: the words of 0..999 as the generator writes them (the
    /// last group of every record's value).
    groups: Vec<Vec<u8>>,
}

impl DataSet {
    /// The data set `data` of `keys` records.
    pub fn new(data: Data, keys: u64) -> DataSet {
        let mut groups = Vec::new();
        if data == Data::Numbers {
            Numbers::range(0, 999).for_each_record(1000, |_, v| groups.push(v.to_vec()));
        }
        DataSet { data, keys, groups }
    }

    /// What it is.
    pub fn data(&self) -> Data {
        self.data
    }

    /// N, the records loaded.
    pub fn keys(&self) -> u64 {
        self.keys
    }

    /// What it is, in words, for the table's header.
    pub fn describe(&self) -> String {
        let n = crate::progress::thousands(self.keys);
        match self.data {
            Data::Random => format!("{n} keys of 16 random bytes with 100-byte values"),
            Data::Numbers => {
                format!("{n} records of the numbers load (decimal keys, English words)")
            }
        }
    }

    /// The bytes of keys and values at most: a bound for an engine that
    /// must size its file up front.
    pub fn max_bytes(&self) -> u64 {
        let per = match self.data {
            Data::Random => (KEY_SIZE + VALUE_SIZE) as u64,
            // A key of up to 20 digits; the words of a 20-digit number.
            Data::Numbers => 20 + 200,
        };
        self.keys.saturating_mul(per)
    }

    /// Key `i` of `stream` in `buf`.
    pub fn key<'b>(&self, stream: Stream, i: u64, buf: &'b mut KeyBuf) -> &'b [u8] {
        match self.data {
            Data::Random => {
                let (dst, _) = buf.split_at_mut(KEY_SIZE);
                dst.copy_from_slice(&random_key(random_head(stream, i)));
                dst
            }
            Data::Numbers => {
                let n = match stream {
                    Stream::Found => i,
                    Stream::Absent => self.keys.saturating_add(i),
                };
                decimal(n, buf)
            }
        }
    }

    /// Whether `value` is the value of found key `i`. For numbers, the
    /// value must end with the words of the key's last three digits (the
    /// whole value is generated and compared where those are zero, one
    /// key in a thousand).
    pub fn check(&self, i: u64, value: &[u8]) -> bool {
        match self.data {
            Data::Random => random_value(random_head(Stream::Found, i)).as_slice() == value,
            Data::Numbers => {
                let group = (i % 1000) as usize;
                if group == 0 {
                    let mut right = false;
                    Numbers::range(i, i).for_each_record(1, |_, v| right = v == value);
                    return right;
                }
                let Some(words) = self.groups.get(group) else {
                    return false;
                };
                if i < 1000 {
                    return value == words.as_slice();
                }
                value.len() > words.len()
                    && value.ends_with(words)
                    && value.get(value.len() - words.len() - 1) == Some(&b' ')
            }
        }
    }

    /// Calls `f` with every record in key order (bytewise), stopping at
    /// its first error.
    pub fn for_each_sorted(&self, f: &mut Visit<'_>) -> Result<(), String> {
        match self.data {
            Data::Random => {
                let n = usize::try_from(self.keys).map_err(|_| "too many keys".to_string())?;
                let mut heads: Vec<u64> = Vec::with_capacity(n);
                heads.extend((0..self.keys).map(|i| random_head(Stream::Found, i)));
                // The key's first 8 bytes are the head, big-endian: sorting
                // the heads sorts the keys.
                heads.sort_unstable();
                for head in heads {
                    f(&random_key(head), &random_value(head))?;
                }
                Ok(())
            }
            Data::Numbers => numbers_sorted(self.keys, f),
        }
    }
}

/// The first 8 bytes of key `i` of `stream`, as a big-endian word.
fn random_head(stream: Stream, i: u64) -> u64 {
    let bit = match stream {
        Stream::Found => 0,
        Stream::Absent => 1,
    };
    mix(i.wrapping_mul(2) | bit)
}

/// The random key whose first 8 bytes are `head`.
fn random_key(head: u64) -> [u8; KEY_SIZE] {
    let mut key = [0u8; KEY_SIZE];
    let (first, second) = key.split_at_mut(8);
    first.copy_from_slice(&head.to_be_bytes());
    second.copy_from_slice(&mix(head ^ SECOND_HALF).to_be_bytes());
    key
}

/// The value of the random key whose first 8 bytes are `head`.
fn random_value(head: u64) -> [u8; VALUE_SIZE] {
    let mut value = [0u8; VALUE_SIZE];
    let word = mix(head ^ VALUE_WORD);
    let mut rng = crate::XorShift64Star::new(word);
    let (check, rest) = value.split_at_mut(8);
    check.copy_from_slice(&word.to_le_bytes());
    for chunk in rest.chunks_mut(8) {
        for (dst, src) in chunk.iter_mut().zip(rng.next_u64().to_le_bytes()) {
            *dst = src;
        }
    }
    value
}

/// `n` in decimal ASCII, in `buf`.
fn decimal(mut n: u64, buf: &mut KeyBuf) -> &[u8] {
    let mut at = buf.len();
    while let Some(digit) = at.checked_sub(1).and_then(|a| buf.get_mut(a)) {
        *digit = b'0' + (n % 10) as u8;
        at -= 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.get(at..).unwrap_or_default()
}

/// Records 0..n of the numbers load in key order. Keys of one length sort
/// as their numbers do, so each length is a generator of its own, in
/// numeric order, and the lengths are merged by key.
fn numbers_sorted(n: u64, f: &mut Visit<'_>) -> Result<(), String> {
    /// Records a stream holds in memory at a time.
    const CHUNK: u64 = 4096;
    struct Lane {
        numbers: Numbers,
        /// The chunk drawn: keys and values, side by side.
        records: Vec<(Vec<u8>, Vec<u8>)>,
        at: usize,
    }
    impl Lane {
        /// Draws the next chunk once the last one is used up.
        fn fill(&mut self) {
            if self.at == self.records.len() {
                self.records.clear();
                self.at = 0;
                let records = &mut self.records;
                self.numbers
                    .for_each_record(CHUNK, |k, v| records.push((k.to_vec(), v.to_vec())));
            }
        }
    }
    let mut lanes = Vec::new();
    let mut low = 0u64;
    while low < n {
        let high = low.max(1).saturating_mul(10).min(n);
        lanes.push(Lane {
            numbers: Numbers::range(low, high - 1),
            records: Vec::new(),
            at: 0,
        });
        low = high;
    }
    loop {
        lanes.iter_mut().for_each(Lane::fill);
        let best = lanes
            .iter()
            .enumerate()
            .filter_map(|(i, l)| l.records.get(l.at).map(|(k, _)| (i, k)))
            .min_by(|a, b| a.1.cmp(b.1))
            .map(|(i, _)| i);
        let Some(lane) = best.and_then(|b| lanes.get_mut(b)) else {
            return Ok(());
        };
        if let Some((k, v)) = lane.records.get(lane.at) {
            f(k, v)?;
        }
        lane.at += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, HashSet};

    fn all_sorted(set: &DataSet) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut out = Vec::new();
        set.for_each_sorted(&mut |k, v| {
            out.push((k.to_vec(), v.to_vec()));
            Ok(())
        })
        .unwrap();
        out
    }

    /// Loads the data set into a map, as an engine would, and looks up
    /// found and absent keys by index, as the lookups do.
    fn lookups_hold(set: &DataSet) {
        let loaded = all_sorted(set);
        assert_eq!(loaded.len() as u64, set.keys());
        assert!(
            loaded.windows(2).all(|w| w[0].0 < w[1].0),
            "not in key order, or a key repeats"
        );
        let map: BTreeMap<Vec<u8>, Vec<u8>> = loaded.into_iter().collect();
        let mut buf = KeyBuf::default();
        for i in 0..set.keys() {
            let key = set.key(Stream::Found, i, &mut buf).to_vec();
            let value = map
                .get(&key)
                .unwrap_or_else(|| panic!("found key {i} not loaded"));
            assert!(set.check(i, value), "value of found key {i} rejected");
            let other = (i + 1) % set.keys();
            assert!(
                !set.check(other, value),
                "key {other} accepts key {i}'s value"
            );
        }
        for i in 0..set.keys() * 3 {
            let key = set.key(Stream::Absent, i, &mut buf);
            assert!(!map.contains_key(key), "absent key {i} was loaded");
        }
    }

    #[test]
    fn random_keys_are_found_and_absent_keys_absent() {
        lookups_hold(&DataSet::new(Data::Random, 20_000));
    }

    #[test]
    fn numbers_are_found_and_absent_keys_absent() {
        lookups_hold(&DataSet::new(Data::Numbers, 12_345));
    }

    #[test]
    fn random_keys_are_spread() {
        let set = DataSet::new(Data::Random, 1000);
        let mut buf = KeyBuf::default();
        let firsts: HashSet<u8> = (0..1000)
            .map(|i| set.key(Stream::Found, i, &mut buf)[0])
            .collect();
        // 1000 draws of a uniform byte leave few of the 256 unseen.
        assert!(firsts.len() > 230, "{}", firsts.len());
    }

    #[test]
    fn numbers_in_key_order_are_the_generator_s_records() {
        let set = DataSet::new(Data::Numbers, 1001);
        let sorted = all_sorted(&set);
        let keys: Vec<&[u8]> = sorted.iter().take(5).map(|(k, _)| k.as_slice()).collect();
        assert_eq!(keys, [&b"0"[..], b"1", b"10", b"100", b"1000"]);
        let mut generated = Vec::new();
        Numbers::range(0, 1000)
            .for_each_record(1001, |k, v| generated.push((k.to_vec(), v.to_vec())));
        generated.sort();
        assert_eq!(sorted, generated);
    }
}
