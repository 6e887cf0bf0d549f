//! Text dump formats read by `lamina load` and written by `lamina dump`:
//!
//! - [`gdbm`]: GNU dbm's ASCII dump (`gdbm_dump`, `gdbmtool export`): base64
//!   records with `#:len=N` headers.
//! - [`bdb`]: Berkeley DB's `db_dump` text in its two encodings, `bytevalue`
//!   (hex) and `print` (`db_dump -p`).
//! - [`tsv`]: lamina's own `key<TAB>value` lines with backslash escapes.
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

/// Reads one line (with its newline, if any) into `line`; counts lines and
/// bytes. Returns false at the end of input.
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

    /// Reads the next line without its `\n`; `Ok(None)` at the end.
    /// The second value says whether the line had its newline.
    pub fn next_into(&mut self, line: &mut Vec<u8>) -> io::Result<Option<bool>> {
        line.clear();
        let n = self.input.read_until(b'\n', line)?;
        if n == 0 {
            return Ok(None);
        }
        self.line += 1;
        self.bytes += n as u64;
        let had_newline = line.last() == Some(&b'\n');
        if had_newline {
            line.pop();
        }
        Ok(Some(had_newline))
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
