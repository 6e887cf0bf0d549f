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

/// Reads records from a dump.
pub trait RecordReader {
    /// Reads the next record into `key` and `value` (both cleared first).
    /// Returns `Ok(false)` at the proper end of the data.
    fn next_record(&mut self, key: &mut Vec<u8>, value: &mut Vec<u8>) -> Result<bool, ReadError>;
    /// Bytes of input consumed so far.
    fn bytes_read(&self) -> u64;
}

/// Writes records to a dump.
pub trait RecordWriter {
    /// Writes one record.
    fn record(&mut self, key: &[u8], value: &[u8]) -> io::Result<()>;
    /// Writes the trailer and flushes.
    fn finish(&mut self) -> io::Result<()>;
}

/// Guesses the format of a dump from its first bytes.
///
/// gdbm dumps start with `#`, Berkeley DB dumps with `VERSION=`; anything
/// else is taken for tab-separated text. gdbm's binary dump is recognised
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
        let mut r = reader(format, input);
        let mut got = Vec::new();
        let (mut k, mut v) = (Vec::new(), Vec::new());
        loop {
            match r.next_record(&mut k, &mut v) {
                Ok(true) => got.push((k.clone(), v.clone())),
                Ok(false) => return Ok(got),
                Err(ReadError::Format(e)) => return Err(e),
                Err(ReadError::Io(e)) => panic!("{e}"),
            }
        }
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
