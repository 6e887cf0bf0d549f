//! Berkeley DB's `db_dump` text format, as `db_dump` writes it and `db_load`
//! reads it:
//!
//! ```text
//! VERSION=3
//! format=bytevalue      <- or "print" (db_dump -p)
//! type=btree
//! HEADER=END
//!  6b6579               <- key: one space, then the bytes
//!  76616c7565           <- value
//! DATA=END
//! ```
//!
//! `bytevalue` writes every byte as two hex digits. `print` writes printable
//! ASCII as itself, a backslash as `\\`, and any other byte as `\` and two
//! hex digits. A file may hold several databases, one header and data
//! section each. A section whose header has `database=NAME` (the name in
//! the `print` encoding, as `db_dump` writes it) is the keyspace NAME; a
//! section without one is the default keyspace.

use super::{name_of, DumpError, Item, LineLimit, Lines, ReadError, RecordReader, RecordWriter};
use lamina::{MAX_KEY_LEN, MAX_VALUE_LEN};
use std::io::{self, BufRead, Write};

/// How bytes are written in the data lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// Two lowercase hex digits per byte.
    ByteValue,
    /// Printable bytes as is, others escaped.
    Print,
}

impl Encoding {
    /// The most characters a byte is written in.
    const fn per_byte(self) -> usize {
        match self {
            Encoding::ByteValue => 2,
            Encoding::Print => 3,
        }
    }

    /// The longest line of a key (`value` false) or a value: its leading
    /// space and every byte written in the most characters.
    const fn data_line(self, value: bool) -> LineLimit {
        if value {
            LineLimit::datum("a value's line", MAX_VALUE_LEN, self.per_byte(), 1)
        } else {
            LineLimit::datum("a key's line", MAX_KEY_LEN, self.per_byte(), 1)
        }
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Writes a `db_dump` text file holding one btree database.
pub struct Writer<W: Write> {
    out: W,
    encoding: Encoding,
    started: bool,
    line: Vec<u8>,
}

impl<W: Write> Writer<W> {
    /// A writer; the header is written with the first record or at the end.
    pub fn new(out: W, encoding: Encoding) -> Writer<W> {
        Writer {
            out,
            encoding,
            started: false,
            line: Vec::new(),
        }
    }

    fn header(&mut self) -> io::Result<()> {
        if !self.started {
            self.section(None)?;
        }
        Ok(())
    }

    /// Writes a section header, for the named keyspace `name` or the
    /// default keyspace.
    fn section(&mut self, name: Option<&str>) -> io::Result<()> {
        self.started = true;
        let format = match self.encoding {
            Encoding::ByteValue => "bytevalue",
            Encoding::Print => "print",
        };
        write!(self.out, "VERSION=3\nformat={format}\n")?;
        if let Some(name) = name {
            self.line.clear();
            self.line.extend_from_slice(b"database=");
            for &b in name.as_bytes() {
                push_print(b, &mut self.line);
            }
            self.line.push(b'\n');
            self.out.write_all(&self.line)?;
        }
        self.out.write_all(b"type=btree\nHEADER=END\n")
    }

    fn datum(&mut self, d: &[u8]) -> io::Result<()> {
        self.line.clear();
        self.line.push(b' ');
        for &b in d {
            match self.encoding {
                Encoding::Print => push_print(b, &mut self.line),
                Encoding::ByteValue => push_hex(b, &mut self.line),
            }
        }
        self.line.push(b'\n');
        self.out.write_all(&self.line)
    }
}

fn push_hex(b: u8, out: &mut Vec<u8>) {
    out.push(HEX.get(usize::from(b >> 4)).copied().unwrap_or(b'0'));
    out.push(HEX.get(usize::from(b & 15)).copied().unwrap_or(b'0'));
}

/// Appends `b` in the `print` encoding.
fn push_print(b: u8, out: &mut Vec<u8>) {
    match b {
        b'\\' => out.extend_from_slice(b"\\\\"),
        0x20..0x7f => out.push(b),
        _ => {
            out.push(b'\\');
            push_hex(b, out);
        }
    }
}

/// Decodes `body` from the `print` encoding into `out`.
fn decode_print(body: &[u8], out: &mut Vec<u8>) -> Result<(), &'static str> {
    let mut i = 0;
    while let Some(&b) = body.get(i) {
        if b != b'\\' {
            out.push(b);
            i += 1;
            continue;
        }
        match (body.get(i + 1).copied(), body.get(i + 2).copied()) {
            (Some(b'\\'), _) => {
                out.push(b'\\');
                i += 2;
            }
            (Some(h), Some(l)) => match (hex_value(h), hex_value(l)) {
                (Some(h), Some(l)) => {
                    out.push(h << 4 | l);
                    i += 3;
                }
                _ => return Err(BAD_ESCAPE),
            },
            _ => return Err(BAD_ESCAPE),
        }
    }
    Ok(())
}

const BAD_ESCAPE: &str = "bad escape (expected \\\\ or \\ and two hex digits)";

impl<W: Write> RecordWriter for Writer<W> {
    fn record(&mut self, key: &[u8], value: &[u8]) -> io::Result<()> {
        self.header()?;
        self.datum(key)?;
        self.datum(value)
    }

    fn keyspace(&mut self, name: &str) -> io::Result<()> {
        if self.started {
            self.out.write_all(b"DATA=END\n")?;
        }
        self.section(Some(name))
    }

    fn finish(&mut self) -> io::Result<()> {
        self.header()?;
        self.out.write_all(b"DATA=END\n")?;
        self.out.flush()
    }
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Reads `db_dump` text (either encoding; several databases are merged).
pub struct Reader<R> {
    lines: Lines<R>,
    line: Vec<u8>,
    encoding: Option<Encoding>,
    /// The keyspace named by the header being read.
    database: Option<String>,
    records: u64,
    seen_section: bool,
}

impl<R: BufRead> Reader<R> {
    /// A reader over `input`, positioned at a header.
    pub fn new(input: R) -> Reader<R> {
        Reader {
            lines: Lines::new(input),
            line: Vec::new(),
            encoding: None,
            database: None,
            records: 0,
            seen_section: false,
        }
    }

    fn err(&self, message: impl Into<String>) -> ReadError {
        ReadError::Format(DumpError::new(self.lines.line.max(1), message))
    }

    /// Reads a header; false at a clean end of input between sections.
    fn header(&mut self) -> Result<bool, ReadError> {
        let mut encoding = Encoding::Print;
        let mut first = true;
        self.database = None;
        loop {
            if self
                .lines
                .next_into(&mut self.line, LineLimit::HEADER)?
                .is_none()
            {
                if first && self.seen_section {
                    return Ok(false);
                }
                return Err(self.err("truncated dump: the input ends inside the header"));
            }
            if first && !self.line.starts_with(b"VERSION=") {
                return Err(self.err("expected 'VERSION=' (a Berkeley DB dump header)"));
            }
            first = false;
            match self.line.as_slice() {
                b"HEADER=END" => break,
                b"format=bytevalue" => encoding = Encoding::ByteValue,
                b"format=print" => encoding = Encoding::Print,
                b"type=recno" | b"type=queue" => {
                    return Err(self.err("recno and queue databases have no keys to load"))
                }
                l if l.starts_with(b"database=") => {
                    let mut raw = Vec::new();
                    decode_print(l.get(9..).unwrap_or_default(), &mut raw)
                        .map_err(|m| self.err(format!("database name: {m}")))?;
                    self.database = Some(name_of(raw).map_err(|m| self.err(m))?);
                }
                l if l.starts_with(b"format=") => {
                    return Err(self.err("unknown format (expected 'print' or 'bytevalue')"))
                }
                l if l.contains(&b'=') => {}
                _ => return Err(self.err("not a header line (expected NAME=VALUE)")),
            }
        }
        self.encoding = Some(encoding);
        self.seen_section = true;
        Ok(true)
    }

    /// Reads one data line (a value's if `value`) into `out`; false at
    /// `DATA=END`.
    fn datum(&mut self, out: &mut Vec<u8>, value: bool, what: &str) -> Result<bool, ReadError> {
        let encoding = self.encoding.unwrap_or(Encoding::Print);
        if self
            .lines
            .next_into(&mut self.line, encoding.data_line(value))?
            .is_none()
        {
            return Err(self.err(format!(
                "truncated dump: the input ends {what} (no DATA=END)"
            )));
        }
        if self.line.as_slice() == b"DATA=END" {
            return Ok(false);
        }
        let Some(body) = self.line.strip_prefix(b" ") else {
            return Err(self.err("a data line must start with a space"));
        };
        out.clear();
        match encoding {
            Encoding::ByteValue => {
                if body.len() % 2 != 0 {
                    return Err(self.err("odd number of hex digits"));
                }
                for pair in body.chunks_exact(2) {
                    match (
                        pair.first().and_then(|&c| hex_value(c)),
                        pair.get(1).and_then(|&c| hex_value(c)),
                    ) {
                        (Some(h), Some(l)) => out.push(h << 4 | l),
                        _ => return Err(self.err("bad hex digit")),
                    }
                }
            }
            Encoding::Print => decode_print(body, out).map_err(|m| self.err(m))?,
        }
        Ok(true)
    }
}

impl<R: BufRead> RecordReader for Reader<R> {
    fn next_item(&mut self, key: &mut Vec<u8>, value: &mut Vec<u8>) -> Result<Item, ReadError> {
        if self.encoding.is_none() {
            if !self.header()? {
                return Ok(Item::End);
            }
            return Ok(Item::Keyspace(self.database.clone()));
        }
        if !self.datum(key, false, "between records")? {
            self.encoding = None; // DATA=END: another section may follow
            return self.next_item(key, value);
        }
        if !self.datum(value, true, "after a key, without its value")? {
            return Err(self.err("a key without a value before DATA=END"));
        }
        self.records += 1;
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

    /// `db5.3_dump -p` of a btree made by `db5.3_load -T`.
    const PRINT: &str = "VERSION=3\nformat=print\ntype=btree\ndb_pagesize=4096\nHEADER=END\n \\01\\ff\n bin\n a\n b\n back\\\\slash\n x\n key two\n v\\09al\nDATA=END\n";
    /// `db5.3_dump` (bytevalue) of the same kind of file.
    const BYTEVALUE: &str = "VERSION=3\nformat=bytevalue\ntype=btree\ndb_pagesize=4096\nHEADER=END\n 01ff\n 62696e\n 61\n 62\nDATA=END\n";

    #[test]
    fn reads_db_dump_output() {
        let got = read_all(Format::BdbPrint, PRINT.as_bytes()).unwrap();
        assert_eq!(got.len(), 4);
        assert_eq!(got[0], (b"\x01\xff".to_vec(), b"bin".to_vec()));
        assert_eq!(got[2], (b"back\\slash".to_vec(), b"x".to_vec()));
        assert_eq!(got[3], (b"key two".to_vec(), b"v\tal".to_vec()));
        let got = read_all(Format::Bdb, BYTEVALUE.as_bytes()).unwrap();
        assert_eq!(
            got,
            [
                (b"\x01\xff".to_vec(), b"bin".to_vec()),
                (b"a".to_vec(), b"b".to_vec())
            ]
        );
    }

    #[test]
    fn merges_sections() {
        let two = format!("{BYTEVALUE}{BYTEVALUE}");
        assert_eq!(read_all(Format::Bdb, two.as_bytes()).unwrap().len(), 4);
    }

    #[test]
    fn keyspace_sections_round_trip() {
        let recs = nasty_records();
        let empty_key = vec![(Vec::new(), Vec::new()), (b"k".to_vec(), b"v".to_vec())];
        for format in [Format::Bdb, Format::BdbPrint] {
            let sections = [
                (None, empty_key.clone()),
                (Some("users"), recs.clone()),
                (Some("empty"), Vec::new()),
                (Some("new\nline\\"), empty_key.clone()),
            ];
            let dump = write_sections(format, &sections);
            let text = String::from_utf8_lossy(&dump);
            assert!(text.contains("\ndatabase=new\\0aline\\\\\n"), "{text}");
            let got = read_sections(format, &dump).unwrap();
            let want: Vec<_> = sections
                .iter()
                .map(|(n, r)| (n.map(str::to_string), r.clone()))
                .collect();
            assert_eq!(got, want);
        }
        // An empty default keyspace writes no section: db_load accepts a
        // file of named databases only.
        let dump = write_sections(Format::Bdb, &[(None, vec![]), (Some("a"), empty_key)]);
        assert!(
            String::from_utf8_lossy(&dump).starts_with("VERSION=3\nformat=bytevalue\ndatabase=a\n")
        );
    }

    #[test]
    fn round_trips_arbitrary_bytes() {
        let recs = nasty_records();
        assert_eq!(round_trip(Format::Bdb, &recs), recs);
        assert_eq!(round_trip(Format::BdbPrint, &recs), recs);
    }

    fn err(input: &str) -> String {
        read_all(Format::Bdb, input.as_bytes())
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn damaged_dumps() {
        assert_eq!(
            err(&BYTEVALUE.replace("DATA=END\n", "")),
            "line 9: truncated dump: the input ends between records (no DATA=END)"
        );
        assert_eq!(
            err(&BYTEVALUE.replace(" 62\n", "")),
            "line 9: a key without a value before DATA=END"
        );
        assert_eq!(
            err(&BYTEVALUE.replace(" 62696e", " 62696")),
            "line 7: odd number of hex digits"
        );
        assert_eq!(
            err(&BYTEVALUE.replace(" 62696e", " 6z696e")),
            "line 7: bad hex digit"
        );
        assert_eq!(
            err(&PRINT.replace("v\\09al", "v\\0gal")),
            "line 13: bad escape (expected \\\\ or \\ and two hex digits)"
        );
        assert_eq!(
            err(&BYTEVALUE.replace(" 61", "61")),
            "line 8: a data line must start with a space"
        );
    }
}
