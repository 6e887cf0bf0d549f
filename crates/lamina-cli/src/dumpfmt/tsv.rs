//! Tab-separated text: one record per line, `key<TAB>value<LF>`.
//!
//! In both fields a backslash is written `\\`, a tab `\t`, a newline `\n`, a
//! carriage return `\r`, and every other control byte (below 0x20, and 0x7f)
//! `\xHH`. Bytes from 0x80 up are written as they are, so UTF-8 text stays
//! readable. A key starting with `#` or `VERSION=` has that first byte
//! written `\xHH`, so that the file is never mistaken for a gdbm or Berkeley
//! DB dump. The last line may lack its newline.
//!
//! A line `#:keyspace=NAME` (no tab; the name escaped like a field) begins
//! the section of a named keyspace; lines before the first such header
//! belong to the default keyspace. No record line starts with `#`, so the
//! header cannot be mistaken for a record.

use super::{
    escape_name, unescape_name, DumpError, Item, LineLimit, Lines, ReadError, RecordReader,
    RecordWriter, Stop,
};
use lamina::{MAX_KEY_LEN, MAX_VALUE_LEN};
use std::io::{self, BufRead, Write};

/// Most bytes before the tab: a key, each byte written in at most 4
/// (`\xHH`). A section header line fits too.
const KEY_FIELD: LineLimit = LineLimit {
    before: " before a tab",
    ..LineLimit::datum("a key", MAX_KEY_LEN, 4, 0)
};

/// Most bytes after the tab: a value, each byte written in at most 4.
const VALUE_FIELD: LineLimit = LineLimit::datum("a value", MAX_VALUE_LEN, 4, 0);

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Appends `d` escaped.
pub fn escape(d: &[u8], out: &mut Vec<u8>) {
    for &b in d {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            0..=0x1f | 0x7f => push_hex_escape(b, out),
            _ => out.push(b),
        }
    }
}

fn push_hex_escape(b: u8, out: &mut Vec<u8>) {
    out.extend_from_slice(b"\\x");
    out.push(HEX.get(usize::from(b >> 4)).copied().unwrap_or(b'0'));
    out.push(HEX.get(usize::from(b & 15)).copied().unwrap_or(b'0'));
}

/// Decodes an escaped field into `out`.
pub fn unescape(field: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    out.clear();
    let mut i = 0;
    while let Some(&b) = field.get(i) {
        if b != b'\\' {
            out.push(b);
            i += 1;
            continue;
        }
        let (byte, len) = match field.get(i + 1) {
            Some(b'\\') => (b'\\', 2),
            Some(b't') => (b'\t', 2),
            Some(b'n') => (b'\n', 2),
            Some(b'r') => (b'\r', 2),
            Some(b'x') => {
                let hex = field
                    .get(i + 2..i + 4)
                    .and_then(|h| std::str::from_utf8(h).ok());
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(v) => (v, 4),
                    None => return Err("bad \\x escape (expected two hex digits)".into()),
                }
            }
            Some(&c) => {
                return Err(format!(
                    "unknown escape '\\{}'",
                    char::from(c).escape_default()
                ))
            }
            None => return Err("a backslash at the end of a field".into()),
        };
        out.push(byte);
        i += len;
    }
    Ok(())
}

/// Writes tab-separated records.
pub struct Writer<W: Write> {
    out: W,
    line: Vec<u8>,
}

impl<W: Write> Writer<W> {
    /// A writer over `out`.
    pub fn new(out: W) -> Writer<W> {
        Writer {
            out,
            line: Vec::new(),
        }
    }
}

impl<W: Write> RecordWriter for Writer<W> {
    fn record(&mut self, key: &[u8], value: &[u8]) -> io::Result<()> {
        self.line.clear();
        match key.split_first() {
            Some((&first, rest)) if first == b'#' || key.starts_with(b"VERSION=") => {
                push_hex_escape(first, &mut self.line);
                escape(rest, &mut self.line);
            }
            _ => escape(key, &mut self.line),
        }
        self.line.push(b'\t');
        escape(value, &mut self.line);
        self.line.push(b'\n');
        self.out.write_all(&self.line)
    }

    fn keyspace(&mut self, name: &str) -> io::Result<()> {
        self.line.clear();
        self.line.extend_from_slice(KEYSPACE_HEADER);
        escape_name(name, &mut self.line);
        self.line.push(b'\n');
        self.out.write_all(&self.line)
    }

    fn finish(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// The start of a section header line.
const KEYSPACE_HEADER: &[u8] = b"#:keyspace=";

/// Reads tab-separated records.
///
/// A line is read in two pieces, each no longer than the longest a valid
/// record writes: up to its tab ([`KEY_FIELD`]), then to its end
/// ([`VALUE_FIELD`]); a longer piece is refused at once, with its line, so
/// that no input (an endless line, `/dev/zero`) makes the reader hold more.
pub struct Reader<R> {
    lines: Lines<R>,
    key_field: Vec<u8>,
    value_field: Vec<u8>,
}

impl<R: BufRead> Reader<R> {
    /// A reader over `input`.
    pub fn new(input: R) -> Reader<R> {
        Reader {
            lines: Lines::new(input),
            key_field: Vec::new(),
            value_field: Vec::new(),
        }
    }
}

impl<R: BufRead> RecordReader for Reader<R> {
    fn next_item(&mut self, key: &mut Vec<u8>, value: &mut Vec<u8>) -> Result<Item, ReadError> {
        self.key_field.clear();
        let (n, stop) = self
            .lines
            .read_to(b"\t\n", KEY_FIELD.max, &mut self.key_field)?;
        if n == 0 {
            return Ok(Item::End);
        }
        self.lines.line += 1;
        let line_no = self.lines.line;
        let err = |m: String| ReadError::Format(DumpError::new(line_no, m));
        match stop {
            Stop::TooLong => return Err(KEY_FIELD.refuse(line_no)),
            Stop::At(b'\t') => {}
            Stop::At(_) | Stop::End => {
                // No tab: a section header, or not a record.
                if let Some(name) = self.key_field.strip_prefix(KEYSPACE_HEADER) {
                    let name = unescape_name(name).map_err(err)?;
                    return Ok(Item::Keyspace(Some(name)));
                }
                return Err(err("expected one tab between key and value".into()));
            }
        }
        self.value_field.clear();
        let (_, stop) = self
            .lines
            .read_to(b"\n", VALUE_FIELD.max, &mut self.value_field)?;
        if stop == Stop::TooLong {
            return Err(VALUE_FIELD.refuse(line_no));
        }
        if self.value_field.contains(&b'\t') {
            return Err(err("expected one tab between key and value".into()));
        }
        unescape(&self.key_field, key).map_err(|m| err(format!("key: {m}")))?;
        unescape(&self.value_field, value).map_err(|m| err(format!("value: {m}")))?;
        Ok(Item::Record)
    }

    fn bytes_read(&self) -> u64 {
        self.lines.bytes
    }

    fn line(&self) -> u64 {
        self.lines.line
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::super::Format;

    #[test]
    fn round_trips_arbitrary_bytes() {
        let recs = nasty_records();
        assert_eq!(round_trip(Format::Tsv, &recs), recs);
        let tricky = vec![(b"#not a comment".to_vec(), b"x".to_vec())];
        assert_eq!(round_trip(Format::Tsv, &tricky), tricky);
        let tricky = vec![(b"VERSION=3".to_vec(), b"x".to_vec())];
        assert_eq!(round_trip(Format::Tsv, &tricky), tricky);
    }

    #[test]
    fn keyspace_sections_round_trip() {
        let recs = nasty_records();
        let empty_key = vec![(Vec::new(), b"empty key".to_vec())];
        let sections = [
            (None, empty_key.clone()),
            (Some("users"), recs.clone()),
            (Some("empty"), Vec::new()),
            (Some("tab\there\n#"), empty_key.clone()),
        ];
        let dump = write_sections(Format::Tsv, &sections);
        let text = String::from_utf8_lossy(&dump);
        assert!(
            text.starts_with("\tempty key\n#:keyspace=users\n"),
            "{text}"
        );
        assert!(text.contains("\n#:keyspace=tab\\there\\n#\n"), "{text}");
        let got = read_sections(Format::Tsv, &dump).unwrap();
        let want: Vec<_> = sections
            .iter()
            .map(|(n, r)| (n.map(str::to_string), r.clone()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn plain_text_and_missing_final_newline() {
        let got = read_all(Format::Tsv, "1\tone\n2\ttwo".as_bytes()).unwrap();
        assert_eq!(
            got,
            [
                (b"1".to_vec(), b"one".to_vec()),
                (b"2".to_vec(), b"two".to_vec())
            ]
        );
    }

    #[test]
    fn malformed_lines() {
        let e = |s: &str| read_all(Format::Tsv, s.as_bytes()).unwrap_err().to_string();
        assert_eq!(
            e("a\tb\nno tab\n"),
            "line 2: expected one tab between key and value"
        );
        assert_eq!(
            e("a\tb\tc\n"),
            "line 1: expected one tab between key and value"
        );
        assert_eq!(e("a\\q\tb\n"), "line 1: key: unknown escape '\\q'");
        assert_eq!(
            e("#:keyspace=\n"),
            "line 1: a keyspace name cannot be empty"
        );
        assert_eq!(
            e("#:keyspace=\\xff\n"),
            "line 1: keyspace name is not UTF-8"
        );
        assert_eq!(
            e("a\tb\\x4\n"),
            "line 1: value: bad \\x escape (expected two hex digits)"
        );
    }
}
