//! The numbers-in-English data set: record N has key `N` in decimal ASCII and,
//! as value, N written in English exactly as the Perl program of "How well
//! does a GNU dbm database scale?" (`tests/fixtures/numbers.pl`) writes it
//! (`1001 -> one thousand, one`, `1000001 -> one million one`).
//!
//! The Perl program builds the words group by group, right to left; this
//! generator builds the same bytes a block of 1000 numbers at a time: the
//! words of the upper groups (everything above the last three digits) are
//! computed once per block, the words of the last group come from a table, so
//! a record costs a few copies and no allocation.
//!
//! Quirks of the Perl program that are reproduced on purpose: the multiplier
//! of a group carries a comma only when the next lower group is not zero
//! (`one million one`, `one million, one thousand`), and groups above the
//! billions have no multiplier word at all (Perl reads `undef` there), which
//! leaves a double space.

/// `@number` of the Perl program (index 0 is never printed).
const ONES: [&str; 20] = [
    "",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
];

/// `@tens` of the Perl program.
const TENS: [&str; 10] = [
    "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
];

/// `@multiplier` of the Perl program without its comma; exponents past 3 are `undef` there.
fn multiplier(exponent: usize) -> &'static str {
    match exponent {
        1 => "thousand",
        2 => "million",
        3 => "billion",
        _ => "",
    }
}

/// Appends the words of one group (0..=999) as the Perl program does: every
/// word followed by one space; nothing for 0.
fn push_group_words(group: u64, out: &mut Vec<u8>) {
    if group > 99 {
        out.extend_from_slice(
            ONES.get((group / 100) as usize)
                .copied()
                .unwrap_or("")
                .as_bytes(),
        );
        out.extend_from_slice(b" hundred ");
    }
    let j = (group % 100) as usize;
    if j >= 20 {
        out.extend_from_slice(TENS.get(j / 10).copied().unwrap_or("").as_bytes());
        if !j.is_multiple_of(10) {
            out.push(b'-');
            out.extend_from_slice(ONES.get(j % 10).copied().unwrap_or("").as_bytes());
        }
        out.push(b' ');
    } else if j > 0 {
        out.extend_from_slice(ONES.get(j).copied().unwrap_or("").as_bytes());
        out.push(b' ');
    }
}

/// Appends the words of `upper` (the number divided by 1000) as they appear in
/// front of the last group's words, with a trailing space. `lowest_nonzero`
/// says whether the last group is non-zero (it decides the thousands comma).
fn push_upper_words(upper: u64, lowest_nonzero: bool, out: &mut Vec<u8>) {
    let mut groups = [0u64; 8];
    let mut n = 0;
    let mut q = upper;
    while q != 0 {
        if let Some(slot) = groups.get_mut(n) {
            *slot = q % 1000;
        }
        q /= 1000;
        n += 1;
    }
    // Highest group first; exponent of groups[i] is i + 1.
    for i in (0..n).rev() {
        let group = groups.get(i).copied().unwrap_or(0);
        if group == 0 {
            continue;
        }
        push_group_words(group, out);
        let lower_nonzero = if i == 0 {
            lowest_nonzero
        } else {
            groups.get(i - 1) != Some(&0)
        };
        let exponent = i + 1;
        out.extend_from_slice(multiplier(exponent).as_bytes());
        if lower_nonzero && exponent <= 3 {
            out.push(b',');
        }
        out.push(b' ');
    }
}

/// The English words of `n` exactly as the Perl program prints them
/// (reference implementation; the generator uses the block tables).
#[cfg(test)]
fn words(n: u64) -> Vec<u8> {
    if n == 0 {
        return b"zero".to_vec();
    }
    let mut out = Vec::with_capacity(96);
    push_upper_words(n / 1000, !n.is_multiple_of(1000), &mut out);
    push_group_words(n % 1000, &mut out);
    out.pop(); // the Perl program's substr($text, 0, -1)
    out
}

/// How `lamina gen numbers` writes a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineStyle {
    /// `store N "words"` — the original Perl program, byte for byte.
    Store,
    /// `N<TAB>words` — lamina's tab-separated text (no escaping needed).
    Tsv,
    /// `N` and `words` on alternate lines — the input of Berkeley DB's `db_load -T`.
    DbLoad,
}

/// Tables shared by every block.
struct Tables {
    /// Words of the last group, trailing space removed; `lower[0]` is empty.
    lower: Vec<Vec<u8>>,
    /// The last group as three digits, zero-padded.
    digits3: Vec<[u8; 3]>,
}

impl Tables {
    fn new() -> Tables {
        let lower = (0..1000u64)
            .map(|g| {
                let mut w = Vec::new();
                push_group_words(g, &mut w);
                w.pop();
                w
            })
            .collect();
        let digits3 = (0..1000u32)
            .map(|g| {
                [
                    b'0' + (g / 100) as u8,
                    b'0' + (g / 10 % 10) as u8,
                    b'0' + (g % 10) as u8,
                ]
            })
            .collect();
        Tables { lower, digits3 }
    }
}

/// The words and key digits common to a block of 1000 numbers.
struct Block {
    upper: u64,
    /// Decimal digits of `upper` (empty for block 0).
    key_prefix: Vec<u8>,
    /// Words of `upper` followed by a space, for a non-zero last group.
    text_nonzero: Vec<u8>,
    /// The whole text of `upper * 1000` (last group zero), final space removed.
    text_zero: Vec<u8>,
}

impl Block {
    fn new(upper: u64) -> Block {
        let mut b = Block {
            upper,
            key_prefix: Vec::new(),
            text_nonzero: Vec::new(),
            text_zero: Vec::new(),
        };
        b.fill(upper);
        b
    }

    fn fill(&mut self, upper: u64) {
        self.upper = upper;
        self.key_prefix.clear();
        self.text_nonzero.clear();
        self.text_zero.clear();
        if upper == 0 {
            self.text_zero.extend_from_slice(b"zero");
            return;
        }
        self.key_prefix
            .extend_from_slice(upper.to_string().as_bytes());
        push_upper_words(upper, true, &mut self.text_nonzero);
        push_upper_words(upper, false, &mut self.text_zero);
        self.text_zero.pop();
    }
}

/// A generator of the records `0..=last`, in order.
///
/// `numbers.pl N` prints the records 0 through N (N + 1 lines); so does
/// `Numbers::range(0, N)`.
pub struct Numbers {
    next: u64,
    last: u64,
    done: bool,
    tables: Tables,
    block: Block,
}

impl Numbers {
    /// Records `first..=last` (none if `first > last`).
    pub fn range(first: u64, last: u64) -> Numbers {
        Numbers {
            next: first,
            last,
            done: first > last,
            tables: Tables::new(),
            block: Block::new(first / 1000),
        }
    }

    /// How many records are left.
    pub fn remaining(&self) -> u64 {
        if self.done {
            0
        } else {
            (self.last - self.next).saturating_add(1)
        }
    }

    /// Calls `f(key_parts, text_parts)` for up to `max` records; the key is
    /// the concatenation of the two key parts, the value that of the two text
    /// parts. Returns how many records were visited.
    fn visit(&mut self, max: u64, mut f: impl FnMut([&[u8]; 2], [&[u8]; 2])) -> u64 {
        let mut visited = 0;
        while visited < max && !self.done {
            let n = self.next;
            let upper = n / 1000;
            if upper != self.block.upper {
                self.block.fill(upper);
            }
            let g = (n % 1000) as usize;
            let lower = self.tables.lower.get(g).map(Vec::as_slice).unwrap_or(b"");
            let digits = self.tables.digits3.get(g).map(|d| &d[..]).unwrap_or(b"000");
            let block = &self.block;
            if upper == 0 {
                // No zero padding below 1000: "7", "42", "999".
                let skip = if g >= 100 {
                    0
                } else if g >= 10 {
                    1
                } else {
                    2
                };
                let key = digits.get(skip..).unwrap_or(b"0");
                if g == 0 {
                    f([b"", key], [&block.text_zero, b""]);
                } else {
                    f([b"", key], [b"", lower]);
                }
            } else if g == 0 {
                f([&block.key_prefix, digits], [&block.text_zero, b""]);
            } else {
                f([&block.key_prefix, digits], [&block.text_nonzero, lower]);
            }
            visited += 1;
            if n == self.last {
                self.done = true;
            } else {
                self.next = n + 1;
            }
        }
        visited
    }

    /// Appends records as text lines in `style` until `out` holds at least
    /// `limit` bytes or the records run out. Returns how many were written.
    pub fn write_lines(&mut self, out: &mut Vec<u8>, limit: usize, style: LineStyle) -> u64 {
        let mut written = 0;
        // A line is at most ~160 bytes: batch records so the length test is rare.
        while out.len() < limit && !self.done {
            let room = ((limit - out.len()) / 160).max(1) as u64;
            written += self.visit(room, |key, text| {
                match style {
                    LineStyle::Store => out.extend_from_slice(b"store "),
                    LineStyle::Tsv | LineStyle::DbLoad => {}
                }
                out.extend_from_slice(key[0]);
                out.extend_from_slice(key[1]);
                match style {
                    LineStyle::Store => out.extend_from_slice(b" \""),
                    LineStyle::Tsv => out.push(b'\t'),
                    LineStyle::DbLoad => out.push(b'\n'),
                }
                out.extend_from_slice(text[0]);
                out.extend_from_slice(text[1]);
                match style {
                    LineStyle::Store => out.extend_from_slice(b"\"\n"),
                    LineStyle::Tsv | LineStyle::DbLoad => out.push(b'\n'),
                }
            });
        }
        written
    }

    /// Calls `f(key, value)` for up to `max` records, with both in contiguous
    /// buffers that are reused between calls. Returns how many were visited.
    pub fn for_each_record(&mut self, max: u64, mut f: impl FnMut(&[u8], &[u8])) -> u64 {
        let mut key = Vec::with_capacity(24);
        let mut value = Vec::with_capacity(160);
        self.visit(max, |k, t| {
            key.clear();
            key.extend_from_slice(k[0]);
            key.extend_from_slice(k[1]);
            value.clear();
            value.extend_from_slice(t[0]);
            value.extend_from_slice(t[1]);
            f(&key, &value);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line_of(n: u64) -> String {
        let mut g = Numbers::range(n, n);
        let mut out = Vec::new();
        g.write_lines(&mut out, 1 << 20, LineStyle::Store);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn examples_from_the_seed() {
        assert_eq!(line_of(0), "store 0 \"zero\"\n");
        assert_eq!(line_of(1001), "store 1001 \"one thousand, one\"\n");
        assert_eq!(line_of(1_000_001), "store 1000001 \"one million one\"\n");
        assert_eq!(
            line_of(123_456),
            "store 123456 \"one hundred twenty-three thousand, four hundred fifty-six\"\n"
        );
        assert_eq!(
            line_of(123_456_790),
            "store 123456790 \"one hundred twenty-three million, four hundred fifty-six \
             thousand, seven hundred ninety\"\n"
        );
        assert_eq!(line_of(1_000_000), "store 1000000 \"one million\"\n");
        assert_eq!(
            line_of(1_001_000),
            "store 1001000 \"one million, one thousand\"\n"
        );
        assert_eq!(line_of(2000), "store 2000 \"two thousand\"\n");
    }

    #[test]
    fn block_generator_matches_reference_words() {
        let mut g = Numbers::range(990, 1_002_020);
        let mut expected = 990u64;
        g.for_each_record(u64::MAX, |k, v| {
            assert_eq!(k, expected.to_string().as_bytes());
            assert_eq!(v, words(expected).as_slice(), "record {expected}");
            expected += 1;
        });
        assert_eq!(expected, 1_002_021);
    }

    #[test]
    fn styles() {
        let mut out = Vec::new();
        Numbers::range(20, 21).write_lines(&mut out, 1 << 20, LineStyle::Tsv);
        assert_eq!(out, b"20\ttwenty\n21\ttwenty-one\n");
        out.clear();
        Numbers::range(20, 21).write_lines(&mut out, 1 << 20, LineStyle::DbLoad);
        assert_eq!(out, b"20\ntwenty\n21\ntwenty-one\n");
    }

    #[test]
    fn counts_and_limits() {
        let mut g = Numbers::range(0, 9999);
        assert_eq!(g.remaining(), 10_000);
        let mut out = Vec::new();
        let n = g.write_lines(&mut out, 100, LineStyle::Store);
        assert!(n >= 1 && out.len() >= 100);
        assert_eq!(g.remaining(), 10_000 - n);
        assert_eq!(Numbers::range(5, 4).remaining(), 0);
        let end = Numbers::range(u64::MAX - 1, u64::MAX).for_each_record(10, |_, _| {});
        assert_eq!(end, 2);
    }
}
