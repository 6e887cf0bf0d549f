//! The checks of what the read rows of `lamina-bench btree-rows` read:
//! point reads found with the stream's values, range reads of full length,
//! pops closing in from both ends from the smallest and largest keys.

use super::{Reader, Stream, SCAN_LEN};

/// Gets `n` keys of `stream` in order; each must be found with the value
/// the stream gave it (by the sum of their first bytes, as the harness).
pub(super) fn point_reads(r: &mut dyn Reader, mut stream: Stream, n: u64) -> Result<(), String> {
    let (mut sum, mut expected, mut found) = (0u64, 0u64, 0u64);
    for _ in 0..n {
        stream.next_pair();
        if let Some(b) = r.get(&stream.key)? {
            sum += u64::from(b);
            found += 1;
        }
        expected += u64::from(stream.value.first().copied().unwrap_or(0));
    }
    if found != n || sum != expected {
        return Err(format!(
            "random reads found {found} of {n} keys (first bytes summing to {sum}, expected {expected})"
        ));
    }
    Ok(())
}

/// Range reads of [`SCAN_LEN`] entries from each of the first `n` keys of
/// the stream; returns the entries read and the sum of their values' first
/// bytes. A range ends short only where the table does.
pub(super) fn range_reads(r: &mut dyn Reader, n: u64) -> Result<(u64, u64), String> {
    let mut stream = Stream::new();
    let (mut entries, mut sum) = (0u64, 0u64);
    let mut short = 0u64;
    for _ in 0..n {
        stream.next_pair();
        let got = r.range_from(&stream.key, SCAN_LEN, &mut |_, v| {
            sum += u64::from(v.first().copied().unwrap_or(0));
        })?;
        if got < SCAN_LEN {
            short += 1;
        }
        entries += got as u64;
    }
    // Only a start among the last SCAN_LEN keys may read fewer; with
    // random keys that is a handful.
    if short > n / 100 + SCAN_LEN as u64 {
        return Err(format!(
            "{short} of {n} range reads ended before {SCAN_LEN} entries"
        ));
    }
    Ok((entries, sum))
}

/// What the pops returned: front pops must ascend from the smallest key,
/// back pops descend, the two never cross; and a digest of every key, for
/// the comparison between engines.
#[derive(Default)]
pub(super) struct PopCheck {
    first_front: Option<Vec<u8>>,
    last_front: Vec<u8>,
    last_back: Option<Vec<u8>>,
    fronts: u64,
    backs: u64,
    disorder: u64,
    digest: u64,
}

impl PopCheck {
    fn mix(&mut self, k: &[u8], role: u64) {
        // FNV-1a over the key, summed: the same keys popped from the same
        // ends give the same digest.
        let mut h = 0xcbf2_9ce4_8422_2325u64 ^ role;
        for b in k {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.digest = self.digest.wrapping_add(h);
    }

    pub(super) fn front(&mut self, k: &[u8]) {
        if self.first_front.is_none() {
            self.first_front = Some(k.to_vec());
        } else if k <= self.last_front.as_slice() {
            self.disorder += 1;
        }
        self.last_front.clear();
        self.last_front.extend_from_slice(k);
        self.fronts += 1;
        self.mix(k, 0);
    }

    pub(super) fn back(&mut self, k: &[u8]) {
        match &mut self.last_back {
            Some(b) => {
                if k >= b.as_slice() {
                    self.disorder += 1;
                }
                b.clear();
                b.extend_from_slice(k);
            }
            None => self.last_back = Some(k.to_vec()),
        }
        self.backs += 1;
        self.mix(k, 1);
    }

    pub(super) fn verify(&self, smallest: &[u8], pops: u64) -> Result<(), String> {
        if self.first_front.as_deref() != Some(smallest) {
            return Err("the first pop did not return the smallest key".into());
        }
        if self.fronts + self.backs != pops {
            return Err(format!(
                "{} pops returned a key, expected {pops}",
                self.fronts + self.backs
            ));
        }
        if self.disorder > 0 {
            return Err(format!(
                "{} pops returned a key out of order",
                self.disorder
            ));
        }
        if let Some(b) = &self.last_back {
            if self.last_front.as_slice() >= b.as_slice() {
                return Err("the pops from the front passed those from the back".into());
            }
        }
        Ok(())
    }
}

impl std::fmt::Display for PopCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} first + {} last, digest {:016x}",
            self.fronts, self.backs, self.digest
        )
    }
}
