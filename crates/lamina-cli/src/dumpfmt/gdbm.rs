//! GNU dbm's ASCII dump format, as `gdbm_dump` writes it and `gdbm_load`
//! reads it:
//!
//! ```text
//! # GDBM dump file created by ...
//! #:version=1.1
//! #:format=standard
//! # End of header
//! #:len=3            <- length of the key in bytes
//! a2V5               <- the key in base64, lines of at most 76 characters
//! #:len=5
//! dmFsdWU=           <- the value, likewise
//! ...
//! #:count=1          <- number of records
//! # End of data
//! ```
//!
//! Other `#:` header lines (`#:file=`, `#:uid=...`) are informational and
//! ignored on load.
//!
//! lamina's extension: a line `#:keyspace=NAME` between records (the name
//! escaped as in TSV) begins the section of a named keyspace; records before
//! the first one belong to the default keyspace, and `#:count=` counts the
//! records of every section. `gdbm_load` 1.23 ignores the line (it loads
//! every section into one database).

use super::{
    escape_name, unescape_name, DumpError, Item, LineLimit, Lines, ReadError, RecordReader,
    RecordWriter,
};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use std::io::{self, BufRead, Write};

const LINE_WIDTH: usize = 76;

/// Writes a gdbm ASCII dump.
pub struct Writer<W: Write> {
    out: W,
    count: u64,
    started: bool,
    b64: String,
}

impl<W: Write> Writer<W> {
    /// A writer; the header is written with the first record or at the end.
    pub fn new(out: W) -> Writer<W> {
        Writer {
            out,
            count: 0,
            started: false,
            b64: String::new(),
        }
    }

    fn header(&mut self) -> io::Result<()> {
        if !self.started {
            self.started = true;
            writeln!(
                self.out,
                "# GDBM dump file created by lamina {}",
                env!("CARGO_PKG_VERSION")
            )?;
            self.out
                .write_all(b"#:version=1.1\n#:format=standard\n# End of header\n")?;
        }
        Ok(())
    }

    fn datum(&mut self, d: &[u8]) -> io::Result<()> {
        writeln!(self.out, "#:len={}", d.len())?;
        self.b64.clear();
        STANDARD.encode_string(d, &mut self.b64);
        for chunk in self.b64.as_bytes().chunks(LINE_WIDTH) {
            self.out.write_all(chunk)?;
            self.out.write_all(b"\n")?;
        }
        Ok(())
    }
}

impl<W: Write> RecordWriter for Writer<W> {
    fn record(&mut self, key: &[u8], value: &[u8]) -> io::Result<()> {
        self.header()?;
        self.datum(key)?;
        self.datum(value)?;
        self.count += 1;
        Ok(())
    }

    fn keyspace(&mut self, name: &str) -> io::Result<()> {
        self.header()?;
        let mut line = KEYSPACE_HEADER.to_vec();
        escape_name(name, &mut line);
        line.push(b'\n');
        self.out.write_all(&line)
    }

    fn finish(&mut self) -> io::Result<()> {
        self.header()?;
        writeln!(self.out, "#:count={}\n# End of data", self.count)?;
        self.out.flush()
    }
}

/// The start of a section header line.
const KEYSPACE_HEADER: &[u8] = b"#:keyspace=";

/// Reads a gdbm ASCII dump.
pub struct Reader<R> {
    lines: Lines<R>,
    line: Vec<u8>,
    b64: Vec<u8>,
    in_data: bool,
    done: bool,
    count: u64,
}

impl<R: BufRead> Reader<R> {
    /// A reader over `input`, positioned at the start of the header.
    pub fn new(input: R) -> Reader<R> {
        Reader {
            lines: Lines::new(input),
            line: Vec::new(),
            b64: Vec::new(),
            in_data: false,
            done: false,
            count: 0,
        }
    }

    fn err(&self, message: impl Into<String>) -> ReadError {
        ReadError::Format(DumpError::new(self.lines.line.max(1), message))
    }

    /// Reads the next line (at most `limit`); an error if the input ends
    /// `what` (where it was expected to go on).
    fn next_line_of(&mut self, what: &str, limit: LineLimit) -> Result<(), ReadError> {
        match self.lines.next_into(&mut self.line, limit)? {
            Some(_) => Ok(()),
            None => Err(self.err(format!("truncated dump: the input ends {what}"))),
        }
    }

    /// [`Reader::next_line_of`] a line that holds no datum.
    fn next_line(&mut self, what: &str) -> Result<(), ReadError> {
        self.next_line_of(what, LineLimit::HEADER)
    }

    fn skip_header(&mut self) -> Result<(), ReadError> {
        loop {
            self.next_line("inside the header")?;
            if self.line.as_slice() == b"# End of header" {
                self.in_data = true;
                return Ok(());
            }
            if self.line.first() != Some(&b'#') {
                return Err(self.err("not a gdbm dump header line (expected '#')"));
            }
            if let Some(f) = self.line.strip_prefix(b"#:format=") {
                if f != b"standard" && f != b"numsync" {
                    let f = String::from_utf8_lossy(f).into_owned();
                    return Err(self.err(format!("unknown gdbm dump format '{f}'")));
                }
            }
        }
    }

    /// Parses `#:len=N` in the current line.
    fn len_line(&self) -> Result<usize, ReadError> {
        let digits = self
            .line
            .strip_prefix(b"#:len=")
            .ok_or_else(|| self.err("expected '#:len=N'"))?;
        std::str::from_utf8(digits)
            .ok()
            .and_then(|s| s.parse::<usize>().ok())
            .filter(|&n| n <= lamina::MAX_VALUE_LEN)
            .ok_or_else(|| self.err("bad length in '#:len=' line"))
    }

    /// Reads the base64 lines of a datum of `len` bytes into `out`.
    fn datum(&mut self, len: usize, out: &mut Vec<u8>) -> Result<(), ReadError> {
        let start_line = self.lines.line;
        let want = len.div_ceil(3) * 4;
        self.b64.clear();
        while self.b64.len() < want {
            // No line holds more than the rest of the datum's base64 and a
            // line's worth of spaces.
            let rest = LineLimit {
                max: want - self.b64.len() + LINE_WIDTH + 4,
                what: "the rest of the record's base64",
                before: "",
                datum: None,
            };
            self.next_line_of("inside a record", rest)?;
            if self.line.first() == Some(&b'#') {
                return Err(self.err(format!(
                    "record at line {start_line} is shorter than its #:len={len}"
                )));
            }
            self.b64
                .extend(self.line.iter().filter(|b| !b.is_ascii_whitespace()));
        }
        if self.b64.len() != want {
            return Err(self.err(format!(
                "record at line {start_line} is longer than its #:len={len}"
            )));
        }
        out.clear();
        STANDARD.decode_vec(&self.b64, out).map_err(|e| {
            self.err(format!(
                "bad base64: {}",
                e.to_string().trim_end_matches('.')
            ))
        })?;
        if out.len() != len {
            return Err(self.err(format!(
                "record at line {start_line} decodes to {} bytes, not its #:len={len}",
                out.len()
            )));
        }
        Ok(())
    }
}

impl<R: BufRead> RecordReader for Reader<R> {
    fn next_item(&mut self, key: &mut Vec<u8>, value: &mut Vec<u8>) -> Result<Item, ReadError> {
        if self.done {
            return Ok(Item::End);
        }
        if !self.in_data {
            self.skip_header()?;
        }
        self.next_line("before '# End of data'")?;
        if let Some(n) = self.line.strip_prefix(b"#:count=") {
            let n = String::from_utf8_lossy(n).into_owned();
            if n.parse::<u64>().ok() != Some(self.count) {
                return Err(self.err(format!(
                    "the dump says #:count={n} but holds {} records",
                    self.count
                )));
            }
            self.next_line("before '# End of data'")?;
            if self.line.as_slice() != b"# End of data" {
                return Err(self.err("expected '# End of data'"));
            }
            self.done = true;
            return Ok(Item::End);
        }
        if let Some(name) = self.line.strip_prefix(KEYSPACE_HEADER) {
            let name = unescape_name(name).map_err(|m| self.err(m))?;
            return Ok(Item::Keyspace(Some(name)));
        }
        let key_len = self.len_line()?;
        self.datum(key_len, key)?;
        self.next_line("after a key, without its value")?;
        if self.line.starts_with(b"#:count=") {
            return Err(self.err("a key without a value"));
        }
        let value_len = self.len_line()?;
        self.datum(value_len, value)?;
        self.count += 1;
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

    const GDBM_OUTPUT: &str = "# GDBM dump file created by GDBM version 1.23. 04/02/2022 on x
#:version=1.1
#:file=/tmp/x.db
#:uid=0,user=root,gid=0,group=root,mode=644
#:format=standard
# End of header
#:len=1
YQ==
#:len=0
#:len=10
d2l0aCBzcGFjZQ==
#:len=5
dglhbAo=
#:count=2
# End of data
";

    #[test]
    fn reads_gdbm_dump_output() {
        let got = read_all(Format::Gdbm, GDBM_OUTPUT.as_bytes()).unwrap();
        assert_eq!(
            got,
            [
                (b"a".to_vec(), b"".to_vec()),
                (b"with space".to_vec(), b"v\tal\n".to_vec())
            ]
        );
    }

    #[test]
    fn round_trips_arbitrary_bytes() {
        let recs = nasty_records();
        assert_eq!(round_trip(Format::Gdbm, &recs), recs);
        assert_eq!(round_trip(Format::Gdbm, &[]), []);
    }

    #[test]
    fn keyspace_sections_round_trip() {
        let recs = nasty_records();
        let empty_key = vec![(Vec::new(), Vec::new()), (b"k".to_vec(), b"v".to_vec())];
        let sections = [
            (None, empty_key.clone()),
            (Some("users"), recs.clone()),
            (Some("empty"), Vec::new()),
            (Some("new\nline"), empty_key.clone()),
        ];
        let dump = write_sections(Format::Gdbm, &sections);
        let text = String::from_utf8_lossy(&dump);
        assert!(text.contains("\n#:keyspace=new\\nline\n"), "{text}");
        assert!(text.contains("\n#:count=10\n"), "{text}");
        let got = read_sections(Format::Gdbm, &dump).unwrap();
        let want: Vec<_> = sections
            .iter()
            .map(|(n, r)| (n.map(str::to_string), r.clone()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn long_values_wrap_at_76() {
        let mut out = Vec::new();
        {
            let mut w = super::Writer::new(&mut out);
            use super::RecordWriter;
            w.record(b"k", &[b'x'; 300]).unwrap();
            w.finish().unwrap();
        }
        let text = String::from_utf8(out).unwrap();
        assert!(text.lines().all(|l| l.len() <= 76));
        assert!(text.contains("\n#:len=300\n"));
    }

    fn err(input: &str) -> String {
        read_all(Format::Gdbm, input.as_bytes())
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn damaged_dumps() {
        let cut = &GDBM_OUTPUT[..GDBM_OUTPUT.find("#:count").unwrap()];
        assert_eq!(
            err(cut),
            "line 13: truncated dump: the input ends before '# End of data'"
        );
        let bad_len = GDBM_OUTPUT.replace("#:len=10", "#:len=11");
        assert_eq!(
            err(&bad_len),
            "line 11: record at line 10 decodes to 10 bytes, not its #:len=11"
        );
        let short = GDBM_OUTPUT.replace("#:len=10", "#:len=30");
        assert_eq!(
            err(&short),
            "line 12: record at line 10 is shorter than its #:len=30"
        );
        let bad_b64 = GDBM_OUTPUT.replace("d2l0aCBzcGFjZQ==", "d2l0aCBz*GFjZQ==");
        assert!(
            err(&bad_b64).starts_with("line 11: bad base64"),
            "{}",
            err(&bad_b64)
        );
        let count = GDBM_OUTPUT.replace("#:count=2", "#:count=3");
        assert_eq!(
            err(&count),
            "line 14: the dump says #:count=3 but holds 2 records"
        );
        let no_value = "#:version=1.1\n# End of header\n#:len=1\nYQ==\n#:count=1\n# End of data\n";
        assert_eq!(err(no_value), "line 5: a key without a value");
        assert_eq!(
            err("#:version=1.1\n"),
            "line 1: truncated dump: the input ends inside the header"
        );
    }
}
