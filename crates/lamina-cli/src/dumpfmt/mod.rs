//! Text dump formats read by `lamina load` and written by `lamina dump`:
//!
//! - [`gdbm`]: GNU dbm's ASCII dump (`gdbm_dump`, `gdbmtool export`): base64
//!   records with `#:len=N` headers.
//! - [`bdb`]: Berkeley DB's `db_dump` text in its two encodings, `bytevalue`
//!   (hex) and `print` (`db_dump -p`).
//! - [`tsv`]: lamina's own `key<TAB>value` lines with backslash escapes.
//!
//! [`database`] recognises a gdbm or Berkeley DB database file given in
//! place of a dump, and reads it through that library's dump tool.
//!
//! Every format round-trips arbitrary bytes exactly. Readers report the line
//! where input went wrong; the caller keeps the records before it.
//!
//! A dump holds the default keyspace first, then one section per named
//! keyspace, each opened by a header that names it (`#:keyspace=NAME` in
//! gdbm and TSV dumps, `database=NAME` in Berkeley DB's; see docs/cli.md,
//! "Keyspaces in dumps"). A dump without such headers is all default
//! keyspace.

pub mod bdb;
pub mod database;
pub mod gdbm;
pub mod tsv;

use std::fmt;
use std::io::{self, BufRead, Write};

/// A dump format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// GNU dbm's ASCII dump (`gdbm_dump`, `gdbm_load`).
    Gdbm,
    /// Berkeley DB `db_dump` text, hex bytes (`format=bytevalue`).
    Bdb,
    /// Berkeley DB `db_dump -p` text, printable bytes (`format=print`).
    BdbPrint,
    /// `key<TAB>value` lines, `\\ \t \n \r \xHH` escapes.
    Tsv,
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Gdbm => "gdbm",
            Format::Bdb => "bdb",
            Format::BdbPrint => "bdb-print",
            Format::Tsv => "tsv",
        })
    }
}

/// Malformed input: where, and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpError {
    /// 1-based line of the input where the problem was seen.
    pub line: u64,
    /// What was wrong, in words.
    pub message: String,
}

impl DumpError {
    pub(crate) fn new(line: u64, message: impl Into<String>) -> DumpError {
        DumpError {
            line,
            message: message.into(),
        }
    }
}

impl fmt::Display for DumpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// Why reading a record failed.
#[derive(Debug)]
pub enum ReadError {
    /// The input is malformed.
    Format(DumpError),
    /// The input could not be read.
    Io(io::Error),
}

impl From<io::Error> for ReadError {
    fn from(e: io::Error) -> ReadError {
        ReadError::Io(e)
    }
}

impl From<DumpError> for ReadError {
    fn from(e: DumpError) -> ReadError {
        ReadError::Format(e)
    }
}

/// What a reader found next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// A record, now in the `key` and `value` buffers.
    Record,
    /// A section begins: the records that follow belong to the named
    /// keyspace, or to the default keyspace (`None`).
    Keyspace(Option<String>),
    /// The proper end of the data.
    End,
}

/// Reads records from a dump.
pub trait RecordReader {
    /// Reads the next item; a record goes into `key` and `value` (both
    /// cleared first).
    fn next_item(&mut self, key: &mut Vec<u8>, value: &mut Vec<u8>) -> Result<Item, ReadError>;
    /// Bytes of input consumed so far.
    fn bytes_read(&self) -> u64;
    /// The line of input read last (1-based; 0 before the first).
    fn line(&self) -> u64;
}

/// Writes records to a dump.
pub trait RecordWriter {
    /// Writes one record.
    fn record(&mut self, key: &[u8], value: &[u8]) -> io::Result<()>;
    /// Begins the section of the named keyspace `name`: the records written
    /// after it belong there. Records written before the first call belong
    /// to the default keyspace.
    fn keyspace(&mut self, name: &str) -> io::Result<()>;
    /// Writes the trailer and flushes.
    fn finish(&mut self) -> io::Result<()>;
}

/// A keyspace name as written in a gdbm or TSV section header: the TSV
/// escapes, so that the header stays on one line.
pub(crate) fn escape_name(name: &str, out: &mut Vec<u8>) {
    tsv::escape(name.as_bytes(), out);
}

/// Decodes a keyspace name written by [`escape_name`].
pub(crate) fn unescape_name(field: &[u8]) -> Result<String, String> {
    let mut raw = Vec::new();
    tsv::unescape(field, &mut raw).map_err(|m| format!("keyspace name: {m}"))?;
    name_of(raw)
}

/// A decoded keyspace name: not empty, UTF-8 (the engine checks its length
/// when the keyspace is opened).
pub(crate) fn name_of(raw: Vec<u8>) -> Result<String, String> {
    if raw.is_empty() {
        return Err("a keyspace name cannot be empty".into());
    }
    String::from_utf8(raw).map_err(|_| "keyspace name is not UTF-8".to_string())
}

/// Guesses the format of a dump from its first bytes.
///
/// gdbm dumps start with `# GDBM dump file` or `#:version=`, Berkeley DB
/// dumps with `VERSION=`; anything else (a TSV dump may start with its
/// `#:keyspace=` header) is taken for tab-separated text. gdbm's binary dump is recognised
/// only to be refused with advice.
pub fn detect(head: &[u8]) -> Result<Format, String> {
    if head.starts_with(b"!\r\n! GDBM FLAT FILE DUMP") {
        return Err("this is a gdbm binary dump; write an ASCII one with \
                    `gdbm_dump --format=ascii DB FILE` and load that"
            .into());
    }
    if head.starts_with(b"# GDBM dump file") || head.starts_with(b"#:version=") {
        return Ok(Format::Gdbm);
    }
    if head.starts_with(b"VERSION=") {
        // The header says which encoding; the reader handles both.
        let print = head.windows(13).any(|w| w == b"format=print\n");
        return Ok(if print { Format::BdbPrint } else { Format::Bdb });
    }
    Ok(Format::Tsv)
}

/// A reader for `format` over `input`.
pub fn reader<'a, R: BufRead + 'a>(format: Format, input: R) -> Box<dyn RecordReader + 'a> {
    match format {
        Format::Gdbm => Box::new(gdbm::Reader::new(input)),
        Format::Bdb | Format::BdbPrint => Box::new(bdb::Reader::new(input)),
        Format::Tsv => Box::new(tsv::Reader::new(input)),
    }
}

/// A writer for `format` over `output`.
pub fn writer<'a, W: Write + 'a>(format: Format, output: W) -> Box<dyn RecordWriter + 'a> {
    match format {
        Format::Gdbm => Box::new(gdbm::Writer::new(output)),
        Format::Bdb => Box::new(bdb::Writer::new(output, bdb::Encoding::ByteValue)),
        Format::BdbPrint => Box::new(bdb::Writer::new(output, bdb::Encoding::Print)),
        Format::Tsv => Box::new(tsv::Writer::new(output)),
    }
}

/// Most bytes a line that holds no key or value may take (headers, section
/// lines, `#:len=` lines): far more than any such line needs.
pub(crate) const HEADER_LINE_MAX: usize = 64 << 10;

/// The most bytes a line (or a piece of one) may take, and what the
/// longest such line holds, for the words of the error that refuses a
/// longer one.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LineLimit {
    /// Bytes of the line, its newline not counted.
    pub max: usize,
    /// What it holds, e.g. "a key's line".
    pub what: &'static str,
    /// Where the piece ends, e.g. " before a tab" (empty for a line).
    pub before: &'static str,
    /// The most bytes of the datum it holds, and the most characters each
    /// is written in (none for a header line).
    pub datum: Option<(usize, usize)>,
}

impl LineLimit {
    /// A line that holds no key or value: [`HEADER_LINE_MAX`].
    pub const HEADER: LineLimit = LineLimit {
        max: HEADER_LINE_MAX,
        what: "a header line",
        before: "",
        datum: None,
    };

    /// A line holding `what`: a datum of at most `len` bytes, each written
    /// in at most `per_byte` characters, and `extra` bytes more.
    pub const fn datum(what: &'static str, len: usize, per_byte: usize, extra: usize) -> LineLimit {
        LineLimit {
            max: len * per_byte + extra,
            what,
            before: "",
            datum: Some((len, per_byte)),
        }
    }

    /// The error for line `line`, which ran past `self.max` bytes.
    pub fn refuse(&self, line: u64) -> ReadError {
        let n = |v: usize| crate::progress::thousands(v as u64);
        let mut message = format!(
            "longer than {} bytes{}, more than {} can take",
            n(self.max),
            self.before,
            self.what
        );
        if let Some((len, per_byte)) = self.datum {
            message.push_str(&format!(
                ": at most {} bytes, each written in at most {per_byte} characters",
                n(len)
            ));
        }
        ReadError::Format(DumpError::new(line, message))
    }
}

/// What ended a piece read by [`Lines::read_to`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// One of the stop bytes (consumed, not kept).
    At(u8),
    /// The end of input.
    End,
    /// `max` bytes came without a stop byte (the next is not read).
    TooLong,
}

/// Reads lines (or pieces of lines) of at most a given length, so that no
/// input, however long its lines, makes the reader hold more than the
/// longest line a valid record takes; counts lines and bytes.
pub(crate) struct Lines<R> {
    input: R,
    pub line: u64,
    pub bytes: u64,
}

impl<R: BufRead> Lines<R> {
    pub fn new(input: R) -> Lines<R> {
        Lines {
            input,
            line: 0,
            bytes: 0,
        }
    }

    /// Appends to `out` the input up to the first of the bytes `stops`, or
    /// its end, and no more than `max` bytes; returns the bytes consumed
    /// and what ended the piece. Does not count lines.
    pub fn read_to(
        &mut self,
        stops: &[u8],
        max: usize,
        out: &mut Vec<u8>,
    ) -> io::Result<(usize, Stop)> {
        let mut kept = 0usize;
        loop {
            let avail = match self.input.fill_buf() {
                Ok(a) => a,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if avail.is_empty() {
                return Ok((kept, Stop::End));
            }
            let room = max - kept;
            // A stop byte right after `room` bytes still ends the piece in time.
            let look = avail
                .get(..avail.len().min(room.saturating_add(1)))
                .unwrap_or_default();
            let (keep, used, stop) = match look.iter().position(|b| stops.contains(b)) {
                Some(i) => (i, i + 1, look.get(i).map(|&b| Stop::At(b))),
                None if look.len() > room => (room, room, Some(Stop::TooLong)),
                None => (look.len(), look.len(), None),
            };
            out.extend_from_slice(avail.get(..keep).unwrap_or_default());
            self.input.consume(used);
            self.bytes += used as u64;
            kept += keep;
            if let Some(stop) = stop {
                let consumed = if matches!(stop, Stop::At(_)) {
                    kept + 1
                } else {
                    kept
                };
                return Ok((consumed, stop));
            }
        }
    }

    /// Reads the next line without its `\n` into `line` (cleared first);
    /// `Ok(None)` at the end, else whether the line had its newline. A
    /// line longer than `limit.max` bytes is refused at once, with its
    /// number.
    pub fn next_into(
        &mut self,
        line: &mut Vec<u8>,
        limit: LineLimit,
    ) -> Result<Option<bool>, ReadError> {
        line.clear();
        let (n, stop) = self.read_to(b"\n", limit.max, line)?;
        if n == 0 {
            return Ok(None);
        }
        self.line += 1;
        match stop {
            Stop::At(_) => Ok(Some(true)),
            Stop::End => Ok(Some(false)),
            Stop::TooLong => Err(limit.refuse(self.line)),
        }
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    use super::*;

    pub type Records = Vec<(Vec<u8>, Vec<u8>)>;

    /// Writes `records` in `format` and reads them back.
    pub fn round_trip(format: Format, records: &[(Vec<u8>, Vec<u8>)]) -> Records {
        let mut out = Vec::new();
        {
            let mut w = writer(format, &mut out);
            for (k, v) in records {
                w.record(k, v).unwrap();
            }
            w.finish().unwrap();
        }
        assert_eq!(
            detect(&out).unwrap(),
            format,
            "{}",
            String::from_utf8_lossy(&out)
        );
        read_all(format, &out).unwrap()
    }

    pub fn read_all(format: Format, input: &[u8]) -> Result<Records, DumpError> {
        Ok(read_sections(format, input)?
            .into_iter()
            .flat_map(|(_, r)| r)
            .collect())
    }

    /// Every section of a dump: keyspace name (`None`: default) and records.
    pub fn read_sections(
        format: Format,
        input: &[u8],
    ) -> Result<Vec<(Option<String>, Records)>, DumpError> {
        let mut r = reader(format, input);
        let mut got: Vec<(Option<String>, Records)> = vec![(None, Vec::new())];
        let (mut k, mut v) = (Vec::new(), Vec::new());
        loop {
            match r.next_item(&mut k, &mut v) {
                Ok(Item::Record) => got.last_mut().unwrap().1.push((k.clone(), v.clone())),
                Ok(Item::Keyspace(name)) => {
                    if got.len() == 1 && got[0].1.is_empty() && name.is_none() {
                        continue;
                    }
                    got.push((name, Vec::new()))
                }
                Ok(Item::End) => return Ok(got),
                Err(ReadError::Format(e)) => return Err(e),
                Err(ReadError::Io(e)) => panic!("{e}"),
            }
        }
    }

    /// Writes sections (`None`: the default keyspace, first) in `format`.
    pub fn write_sections(format: Format, sections: &[(Option<&str>, Records)]) -> Vec<u8> {
        let mut out = Vec::new();
        {
            let mut w = writer(format, &mut out);
            for (name, records) in sections {
                if let Some(name) = name {
                    w.keyspace(name).unwrap();
                }
                for (k, v) in records {
                    w.record(k, v).unwrap();
                }
            }
            w.finish().unwrap();
        }
        out
    }

    /// Keys and values that exercise every byte and the edge lengths.
    pub fn nasty_records() -> Records {
        let all: Vec<u8> = (0..=255u8).collect();
        vec![
            (b"a".to_vec(), b"".to_vec()),
            (all.clone(), all.iter().rev().copied().collect()),
            (b"\\".to_vec(), b"\\\\n".to_vec()),
            (b" lead".to_vec(), b"trail \n".to_vec()),
            (b"#:len=3".to_vec(), b"DATA=END".to_vec()),
            (b"k\tt".to_vec(), vec![b'x'; 1000]),
        ]
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    /// Lines of at most 5 bytes, read through a buffer of 3 so that lines
    /// cross its refills.
    fn lines(input: &[u8]) -> (Vec<Vec<u8>>, Option<u64>) {
        let mut r = Lines::new(io::BufReader::with_capacity(3, input));
        let limit = LineLimit::datum("a test line", 5, 1, 0);
        let (mut got, mut line) = (Vec::new(), Vec::new());
        loop {
            match r.next_into(&mut line, limit) {
                Ok(Some(_)) => got.push(line.clone()),
                Ok(None) => return (got, None),
                Err(ReadError::Format(e)) => return (got, Some(e.line)),
                Err(ReadError::Io(e)) => panic!("{e}"),
            }
        }
    }

    #[test]
    fn a_line_longer_than_its_limit_is_refused_with_its_number() {
        let five = b"12345".to_vec();
        assert_eq!(
            lines(b"12345\n\n12345"),
            (vec![five.clone(), vec![], five.clone()], None)
        );
        assert_eq!(lines(b"ab\n123456\nc\n"), (vec![b"ab".to_vec()], Some(2)));
        assert_eq!(lines(b"123456"), (vec![], Some(1)), "without a newline too");
        let e = LineLimit::HEADER.refuse(7);
        let ReadError::Format(e) = e else { panic!() };
        assert_eq!(
            e.to_string(),
            "line 7: longer than 65,536 bytes, more than a header line can take"
        );
    }

    #[test]
    fn a_piece_ends_at_any_of_its_stop_bytes() {
        let mut r = Lines::new(io::BufReader::with_capacity(2, &b"key\tvalue\n123456"[..]));
        let mut out = Vec::new();
        assert_eq!(
            r.read_to(b"\t\n", 5, &mut out).unwrap(),
            (4, Stop::At(b'\t'))
        );
        assert_eq!(out, b"key");
        out.clear();
        assert_eq!(r.read_to(b"\n", 5, &mut out).unwrap(), (6, Stop::At(b'\n')));
        assert_eq!(out, b"value", "as long as the limit");
        out.clear();
        assert_eq!(r.read_to(b"\n", 5, &mut out).unwrap(), (5, Stop::TooLong));
        assert_eq!(out, b"12345", "no byte past the limit is read");
        assert_eq!(r.bytes, 15);
    }
}
