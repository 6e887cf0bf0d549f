//! What the workloads write and read: 16-byte keys, values like db_bench's,
//! and key orders drawn from fixed-seed permutations (every key exactly
//! once, the same order for every engine, no table of indices in memory).

/// Bytes of a key.
pub const KEY_SIZE: usize = 16;

/// A key.
pub type Key = [u8; KEY_SIZE];

/// Key number `n`, in decimal, zero-padded to 16 digits (db_bench's keys).
pub fn key(n: u64) -> Key {
    let mut k = [b'0'; KEY_SIZE];
    let mut n = n;
    for b in k.iter_mut().rev() {
        *b = b'0' + (n % 10) as u8;
        n /= 10;
    }
    k
}

/// The key of record `i` (0 ≤ i < num): the even numbers, so that the odd
/// ones between them ([`absent_key`]) are never written and fall among the
/// written keys rather than past them.
pub fn present_key(i: u64) -> Key {
    key(2 * i)
}

/// A key no workload writes, between `present_key(i)` and `present_key(i + 1)`.
pub fn absent_key(i: u64) -> Key {
    key(2 * i + 1)
}

/// A fixed-seed permutation of `0..n`: a four-round Feistel network over the
/// smallest even power of two ≥ n, walked until it lands below n (at most
/// four steps on average). The same seed gives the same order on every run
/// and for every engine.
#[derive(Debug, Clone)]
pub struct Permutation {
    n: u64,
    half_bits: u32,
    keys: [u64; 4],
}

impl Permutation {
    /// The permutation of `0..n` for `seed`.
    pub fn new(n: u64, seed: u64) -> Permutation {
        let bits = 64 - n.saturating_sub(1).leading_zeros();
        let half_bits = bits.div_ceil(2).max(1);
        let mut s = seed;
        let keys = [(); 4].map(|()| {
            s = splitmix(s);
            s
        });
        Permutation { n, half_bits, keys }
    }

    /// The `i`-th element (i < n).
    pub fn at(&self, i: u64) -> u64 {
        let mut x = i;
        loop {
            x = self.feistel(x);
            if x < self.n {
                return x;
            }
        }
    }

    /// Every element in order.
    #[cfg(test)]
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.n).map(|i| self.at(i))
    }

    fn feistel(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let (mut l, mut r) = (x >> self.half_bits, x & mask);
        for k in self.keys {
            let f = splitmix(r ^ k) & mask;
            (l, r) = (r, l ^ f);
        }
        (l << self.half_bits) | r
    }
}

/// splitmix64's output function: a good 64-bit mix.
fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Values like db_bench's: slices of a buffer built from pieces that are
/// half random bytes and half a repeat of them, so that a block of values
/// compresses to about half its size (db_bench's `--compression_ratio
/// 0.5`). Value `i` is the `i`-th slice, round the buffer.
pub struct Values {
    buf: Vec<u8>,
    size: usize,
    slots: u64,
}

impl Values {
    /// Values of `size` bytes.
    pub fn new(size: usize) -> Values {
        let mut rng = crate::XorShift64Star::new(301);
        let want = (1 << 20) + size;
        let mut buf = Vec::with_capacity(want + 100);
        while buf.len() < want {
            let piece = size.clamp(2, 100);
            let random: Vec<u8> = (0..piece / 2)
                .map(|_| (rng.next_u64() % 95 + 32) as u8)
                .collect();
            buf.extend_from_slice(&random);
            buf.extend_from_slice(&random);
        }
        let slots = (buf.len() / size.max(1)) as u64;
        Values { buf, size, slots }
    }

    /// Value `i`.
    pub fn value(&self, i: u64) -> &[u8] {
        let at = (i % self.slots) as usize * self.size;
        self.buf.get(at..at + self.size).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutations_visit_every_element_once() {
        for n in [1u64, 2, 3, 7, 100, 1000, 4097] {
            for seed in [1, 2] {
                let p = Permutation::new(n, seed);
                let mut seen = vec![false; n as usize];
                for x in p.iter() {
                    assert!(x < n);
                    assert!(!std::mem::replace(&mut seen[x as usize], true), "{x} twice");
                }
                assert!(seen.iter().all(|&s| s));
            }
        }
        let a: Vec<u64> = Permutation::new(1000, 1).iter().collect();
        let b: Vec<u64> = Permutation::new(1000, 2).iter().collect();
        assert_ne!(a, b);
        assert_ne!(a, (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn keys_are_padded_decimal_and_interleave() {
        assert_eq!(&key(42), b"0000000000000042");
        assert!(present_key(3) < absent_key(3) && absent_key(3) < present_key(4));
    }

    #[test]
    fn values_have_the_size_asked_for() {
        let v = Values::new(65536);
        for i in 0..40 {
            assert_eq!(v.value(i).len(), 65536);
        }
        let v = Values::new(100);
        assert_eq!(v.value(7).len(), 100);
        assert_ne!(v.value(0), v.value(1));
    }
}
