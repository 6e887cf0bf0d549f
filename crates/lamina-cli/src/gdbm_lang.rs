//! gdbmtool's command language: lexer, parser and datum printer.
//!
//! The rules are those of GNU dbm 1.23's `gdbmtool`, checked against the real
//! program (see `tests/shell_vs_gdbmtool.rs`):
//!
//! - A command is a verb, then arguments separated by blanks (space, tab),
//!   ended by a newline or `;`. A verb may be abbreviated to any prefix that
//!   names one command only; `?` is `help`.
//! - `#` at the start of a command makes the rest of the line a comment.
//!   Elsewhere it is an ordinary character.
//! - An unquoted argument is any run of bytes other than blanks, newline,
//!   `"`, `;`, `[`, `]`, `{`, `}`, `,` and `=`. No escapes: `a\tb` is four
//!   bytes. A carriage return is part of the argument.
//! - A quoted argument is `"..."`, on one line, with the escapes `\a \b \f \n
//!   \r \t \v \\ \"`; a backslash before any other byte yields that byte
//!   (`\q` is `q`, `\001` is `001`). A backslash at the end of a line joins the
//!   next line and is kept (gdbmtool 1.23 keeps it; its manual says otherwise).
//! - A quoted argument next to other text is a separate argument: `a"b"` is
//!   two.
//!
//! Differences, on purpose: an unknown or ambiguous verb, an unterminated
//! string or a stray `=` is reported and the parser goes on with the next
//! line (gdbmtool stops reading); the last command may lack its newline.
//! gdbmtool's structured data (`{...}` lists) is not supported.
//!
//! Parsing borrows from the input buffer: arguments without escapes are not
//! copied.

use std::borrow::Cow;
use std::fmt;

/// Where a command is in its input, as gdbmtool prints it: from the verb's
/// first byte to the byte that ended the command, 1-based columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Locus {
    /// Line of the verb.
    pub line: u64,
    /// Column of the verb.
    pub col: u64,
    /// Line of the terminator.
    pub end_line: u64,
    /// Column of the terminator (the newline or `;`).
    pub end_col: u64,
}

impl fmt::Display for Locus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.end_line == self.line {
            write!(f, "{}.{}-{}", self.line, self.col, self.end_col)
        } else {
            write!(
                f,
                "{}.{}-{}.{}",
                self.line, self.col, self.end_line, self.end_col
            )
        }
    }
}

/// A command lamina's shell carries out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Count,
    Delete,
    Export,
    Fetch,
    First,
    Help,
    Import,
    List,
    Next,
    Quit,
    Reorganize,
    Status,
    Store,
    Sync,
    Version,
    /// A gdbmtool command about gdbm's own file structure (buckets, hash
    /// directory, avail lists) or interactive use, which lamina does not have.
    Unsupported,
}

/// One command of the table: name, verb, argument counts, usage and summary
/// (the last two as gdbmtool's `help` prints them).
#[derive(Debug)]
pub struct CommandSpec {
    pub name: &'static str,
    pub verb: Verb,
    pub min_args: usize,
    pub max_args: usize,
    pub usage: &'static str,
    pub summary: &'static str,
}

const fn spec(
    name: &'static str,
    verb: Verb,
    min_args: usize,
    max_args: usize,
    usage: &'static str,
    summary: &'static str,
) -> CommandSpec {
    CommandSpec {
        name,
        verb,
        min_args,
        max_args,
        usage,
        summary,
    }
}

/// Every gdbmtool 1.23 verb, so that abbreviations resolve as they do there.
pub const COMMANDS: &[CommandSpec] = &[
    spec("avail", Verb::Unsupported, 0, 0, "", ""),
    spec("bucket", Verb::Unsupported, 0, 1, "", ""),
    spec("cache", Verb::Unsupported, 0, 0, "", ""),
    spec("close", Verb::Unsupported, 0, 0, "", ""),
    spec(
        "count",
        Verb::Count,
        0,
        0,
        "count",
        "count (number of entries)",
    ),
    spec("current", Verb::Unsupported, 0, 0, "", ""),
    spec("debug", Verb::Unsupported, 0, 9, "", ""),
    spec("define", Verb::Unsupported, 0, 9, "", ""),
    spec(
        "delete",
        Verb::Delete,
        1,
        1,
        "delete KEY",
        "delete a record",
    ),
    spec("dir", Verb::Unsupported, 0, 0, "", ""),
    spec("downgrade", Verb::Unsupported, 0, 0, "", ""),
    spec(
        "export",
        Verb::Export,
        1,
        3,
        "export FILE [truncate] [binary|ascii]",
        "export",
    ),
    spec("fetch", Verb::Fetch, 1, 1, "fetch KEY", "fetch record"),
    spec(
        "first",
        Verb::First,
        0,
        0,
        "first",
        "begin iteration: get first key and datum",
    ),
    spec("hash", Verb::Unsupported, 1, 1, "", ""),
    spec("header", Verb::Unsupported, 0, 0, "", ""),
    spec("help", Verb::Help, 0, 0, "help", "print this help list"),
    spec("history", Verb::Unsupported, 0, 2, "", ""),
    spec(
        "import",
        Verb::Import,
        1,
        3,
        "import FILE [replace] [nometa]",
        "import",
    ),
    spec("list", Verb::List, 0, 0, "list", "list"),
    spec(
        "next",
        Verb::Next,
        0,
        1,
        "next [KEY]",
        "continue iteration: get next key and datum",
    ),
    spec("open", Verb::Unsupported, 0, 1, "", ""),
    spec("perror", Verb::Unsupported, 0, 1, "", ""),
    spec("quit", Verb::Quit, 0, 0, "quit", "quit the program"),
    spec("recover", Verb::Unsupported, 0, 9, "", ""),
    spec(
        "reorganize",
        Verb::Reorganize,
        0,
        0,
        "reorganize",
        "reorganize",
    ),
    spec("set", Verb::Unsupported, 0, 9, "", ""),
    spec("shell", Verb::Unsupported, 0, 9, "", ""),
    spec("sibling", Verb::Unsupported, 0, 0, "", ""),
    spec("snapshot", Verb::Unsupported, 2, 2, "", ""),
    spec("source", Verb::Unsupported, 1, 1, "", ""),
    spec(
        "status",
        Verb::Status,
        0,
        0,
        "status",
        "print current program status",
    ),
    spec("store", Verb::Store, 2, 2, "store KEY DATA", "store"),
    spec(
        "sync",
        Verb::Sync,
        0,
        0,
        "sync",
        "Synchronize the database with disk copy",
    ),
    spec("unset", Verb::Unsupported, 0, 9, "", ""),
    spec("upgrade", Verb::Unsupported, 0, 0, "", ""),
    spec(
        "version",
        Verb::Version,
        0,
        0,
        "version",
        "print version of lamina",
    ),
];

/// The help text, in gdbmtool's layout, for the commands lamina carries out.
pub fn help_text() -> String {
    let mut out = String::new();
    for c in COMMANDS.iter().filter(|c| c.verb != Verb::Unsupported) {
        if c.usage.len() > 28 {
            out.push_str(&format!(" {}\n{:30}{}\n", c.usage, "", c.summary));
        } else {
            out.push_str(&format!(" {:<28} {}\n", c.usage, c.summary));
        }
    }
    out
}

/// Finds a command by name or unambiguous prefix.
fn lookup(word: &[u8]) -> Result<&'static CommandSpec, String> {
    if let Some(c) = COMMANDS.iter().find(|c| c.name.as_bytes() == word) {
        return Ok(c);
    }
    let matches: Vec<&CommandSpec> = COMMANDS
        .iter()
        .filter(|c| c.name.as_bytes().starts_with(word))
        .collect();
    match matches.as_slice() {
        [one] => Ok(one),
        [] => Err(format!(
            "Unknown command: {}",
            String::from_utf8_lossy(word)
        )),
        many => {
            let names: Vec<&str> = many.iter().map(|c| c.name).collect();
            Err(format!(
                "ambiguous command: {} ({})",
                String::from_utf8_lossy(word),
                names.join(", ")
            ))
        }
    }
}

/// Most arguments any supported command takes; more are only counted.
const MAX_ARGS: usize = 3;

/// The arguments of one command.
#[derive(Debug, Default)]
pub struct Args<'a> {
    items: [Cow<'a, [u8]>; MAX_ARGS],
    total: usize,
}

impl<'a> Args<'a> {
    fn push(&mut self, arg: Cow<'a, [u8]>) {
        if let Some(slot) = self.items.get_mut(self.total) {
            *slot = arg;
        }
        self.total += 1;
    }

    /// How many arguments were given.
    pub fn len(&self) -> usize {
        self.total
    }

    /// Argument `i`, or an empty slice.
    pub fn get(&self, i: usize) -> &[u8] {
        match self.items.get(i) {
            Some(a) if i < self.total => a,
            _ => b"",
        }
    }
}

/// A parsed command whose argument count fits its verb.
#[derive(Debug)]
pub struct Command<'a> {
    pub spec: &'static CommandSpec,
    pub args: Args<'a>,
    pub locus: Locus,
}

/// What one call of [`Parser::parse`] found.
#[derive(Debug)]
pub enum Step<'a> {
    /// A command to carry out.
    Command(Command<'a>),
    /// A blank line, a comment or an empty command.
    Blank,
    /// A command that cannot be carried out; the parser skipped past it.
    Error { locus: Locus, message: String },
    /// The buffer ends inside a command: call again with more input.
    NeedMore,
    /// The input is exhausted.
    End,
}

/// Commands longer than this are refused (the largest value is 256 MiB;
/// quoting can triple it).
pub const MAX_COMMAND_LEN: usize = 800 << 20;

/// Parses commands from successive buffers of one input.
///
/// The caller keeps the unconsumed tail of its buffer, appends more input
/// when told [`Step::NeedMore`], and passes `at_eof` once nothing more will
/// come.
#[derive(Debug)]
pub struct Parser {
    line: u64,
    /// Offset of the start of `line` relative to the next buffer; negative
    /// when the line started in bytes already consumed.
    line_start: i64,
    /// Skipping the rest of a line after an error.
    skipping: bool,
}

impl Default for Parser {
    fn default() -> Parser {
        Parser::new()
    }
}

struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    line: u64,
    line_start: i64,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }

    fn col(&self) -> u64 {
        (self.pos as i64 - self.line_start + 1).max(1) as u64
    }

    fn newline(&mut self) {
        self.line += 1;
        self.line_start = self.pos as i64 + 1;
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
    }

    /// Advances past the next newline; false if there is none.
    fn skip_line(&mut self) -> bool {
        match memchr(b'\n', self.buf.get(self.pos..).unwrap_or(b"")) {
            Some(i) => {
                self.pos += i;
                self.newline();
                self.pos += 1;
                true
            }
            None => {
                self.pos = self.buf.len();
                false
            }
        }
    }
}

fn memchr(byte: u8, hay: &[u8]) -> Option<usize> {
    hay.iter().position(|&b| b == byte)
}

/// Whether `b` may appear in an unquoted argument.
pub(crate) fn is_word_byte(b: u8) -> bool {
    !matches!(
        b,
        b' ' | b'\t' | b'\n' | b'"' | b';' | b'[' | b']' | b'{' | b'}' | b',' | b'='
    )
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// gdbmtool's `unescape`: the byte a backslash escape stands for.
fn unescape(c: u8) -> u8 {
    match c {
        b'a' => 0x07,
        b'b' => 0x08,
        b'f' => 0x0c,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'v' => 0x0b,
        other => other,
    }
}

/// Why a token could not be read.
enum TokenError {
    NeedMore,
    Syntax(String),
}

fn describe(b: u8) -> String {
    if b.is_ascii_graphic() {
        format!("'{}'", b as char)
    } else {
        format!("byte 0x{b:02x}")
    }
}

impl Parser {
    /// A parser at the start of an input.
    pub fn new() -> Parser {
        Parser {
            line: 1,
            line_start: 0,
            skipping: false,
        }
    }

    /// Parses the next command of `buf`, returning it and the number of
    /// bytes it consumed. REQUIRES: `buf` starts right after the bytes
    /// consumed by the previous call. With `Step::NeedMore` nothing was
    /// consumed: call again with the same bytes and more. Every other step
    /// but `Step::End` consumes at least one byte, so a caller that feeds
    /// the parser until `End` always finishes.
    pub fn parse<'a>(&mut self, buf: &'a [u8], at_eof: bool) -> (Step<'a>, usize) {
        let mut cur = Cursor {
            buf,
            pos: 0,
            line: self.line,
            line_start: self.line_start,
        };
        if self.skipping {
            let done = cur.skip_line();
            self.commit(&cur);
            self.skipping = !done && !at_eof;
            let step = if done {
                Step::Blank
            } else if at_eof {
                Step::End
            } else if cur.pos == 0 {
                // Nothing to skip yet: the rest of the line is still to come.
                Step::NeedMore
            } else {
                Step::Blank
            };
            return (step, cur.pos);
        }
        let step = self.command(&mut cur, at_eof);
        match step {
            Step::NeedMore if cur.buf.len() > MAX_COMMAND_LEN => {
                let locus = self.here(&cur);
                cur.pos = 0;
                cur.line = self.line;
                cur.line_start = self.line_start;
                let done = cur.skip_line();
                self.commit(&cur);
                self.skipping = !done;
                let message = format!("command longer than {} bytes", MAX_COMMAND_LEN);
                (Step::Error { locus, message }, cur.pos)
            }
            Step::NeedMore => (Step::NeedMore, 0),
            step => {
                self.commit(&cur);
                (step, cur.pos)
            }
        }
    }

    fn here(&self, cur: &Cursor<'_>) -> Locus {
        let col = cur.col();
        Locus {
            line: self.line,
            col: 1,
            end_line: cur.line,
            end_col: col,
        }
    }

    fn commit(&mut self, cur: &Cursor<'_>) {
        self.line = cur.line;
        // The next buffer starts at `cur.pos`.
        self.line_start = cur.line_start - cur.pos as i64;
    }

    fn command<'a>(&mut self, cur: &mut Cursor<'a>, at_eof: bool) -> Step<'a> {
        cur.skip_blanks();
        let start_line = cur.line;
        let start_col = cur.col();
        let locus_to = |cur: &Cursor<'_>, end_col: u64| Locus {
            line: start_line,
            col: start_col,
            end_line: cur.line,
            end_col,
        };
        let locus_at = |end: (u64, u64)| Locus {
            line: start_line,
            col: start_col,
            end_line: end.0,
            end_col: end.1,
        };
        let Some(first) = cur.peek() else {
            return if at_eof { Step::End } else { Step::NeedMore };
        };
        match first {
            b'\n' => {
                cur.newline();
                cur.pos += 1;
                return Step::Blank;
            }
            b';' => {
                cur.pos += 1;
                return Step::Blank;
            }
            b'#' => {
                return if cur.skip_line() || at_eof {
                    Step::Blank
                } else {
                    Step::NeedMore
                };
            }
            _ => {}
        }
        // The verb.
        let verb_start = cur.pos;
        if first == b'?' {
            cur.pos += 1;
        } else if is_ident_start(first) {
            while cur.peek().is_some_and(is_ident) {
                cur.pos += 1;
            }
        }
        let word = cur.buf.get(verb_start..cur.pos).unwrap_or(b"");
        if cur.pos == cur.buf.len() && !at_eof {
            return Step::NeedMore;
        }
        if word.is_empty() {
            let message = format!("syntax error, unexpected {}", describe(first));
            return self.fail(cur, at_eof, locus_to(cur, cur.col()), message);
        }
        let lookup = if word == b"?" {
            lookup(b"help")
        } else {
            lookup(word)
        };
        // The arguments, up to the terminator.
        let mut args = Args::default();
        let end;
        loop {
            cur.skip_blanks();
            match cur.peek() {
                None if at_eof => {
                    end = (cur.line, cur.col().saturating_sub(1).max(start_col));
                    break;
                }
                None => return Step::NeedMore,
                Some(b'\n') => {
                    end = (cur.line, cur.col());
                    cur.newline();
                    cur.pos += 1;
                    break;
                }
                Some(b';') => {
                    end = (cur.line, cur.col());
                    cur.pos += 1;
                    break;
                }
                Some(b'"') => match quoted(cur, at_eof) {
                    Ok(arg) => args.push(arg),
                    Err(TokenError::NeedMore) => return Step::NeedMore,
                    Err(TokenError::Syntax(message)) => {
                        return self.fail(cur, at_eof, locus_to(cur, cur.col()), message)
                    }
                },
                Some(b) if is_word_byte(b) => {
                    let s = cur.pos;
                    while cur.peek().is_some_and(is_word_byte) {
                        cur.pos += 1;
                    }
                    if cur.pos == cur.buf.len() && !at_eof {
                        return Step::NeedMore;
                    }
                    args.push(Cow::Borrowed(cur.buf.get(s..cur.pos).unwrap_or(b"")));
                }
                Some(b) => {
                    let message = format!("syntax error, unexpected {}", describe(b));
                    return self.fail(cur, at_eof, locus_to(cur, cur.col()), message);
                }
            }
        }
        let locus = locus_at(end);
        let spec = match lookup {
            Ok(spec) => spec,
            Err(message) => return Step::Error { locus, message },
        };
        if args.len() < spec.min_args {
            let message = format!("{}: not enough arguments", spec.name);
            return Step::Error { locus, message };
        }
        if args.len() > spec.max_args {
            let message = format!("{}: too many arguments", spec.name);
            return Step::Error { locus, message };
        }
        Step::Command(Command { spec, args, locus })
    }

    /// Reports a syntax error and skips the rest of the line.
    fn fail<'a>(
        &mut self,
        cur: &mut Cursor<'a>,
        at_eof: bool,
        locus: Locus,
        message: String,
    ) -> Step<'a> {
        if !cur.skip_line() && !at_eof {
            self.skipping = true;
        }
        Step::Error { locus, message }
    }
}

/// Reads a quoted argument starting at the opening quote.
fn quoted<'a>(cur: &mut Cursor<'a>, at_eof: bool) -> Result<Cow<'a, [u8]>, TokenError> {
    let open = cur.pos;
    cur.pos += 1;
    // Fast path: no escape before the closing quote.
    let rest = cur.buf.get(cur.pos..).unwrap_or(b"");
    if let Some(i) = rest.iter().position(|&b| matches!(b, b'"' | b'\\' | b'\n')) {
        if rest.get(i) == Some(&b'"') {
            let arg = rest.get(..i).unwrap_or(b"");
            cur.pos += i + 1;
            return Ok(Cow::Borrowed(arg));
        }
    }
    let mut out = Vec::new();
    loop {
        match cur.peek() {
            None if at_eof => {
                cur.pos = open;
                return Err(TokenError::Syntax(
                    "syntax error, unterminated quoted string".into(),
                ));
            }
            None => return Err(TokenError::NeedMore),
            Some(b'"') => {
                cur.pos += 1;
                return Ok(Cow::Owned(out));
            }
            Some(b'\n') => {
                return Err(TokenError::Syntax(
                    "syntax error, unterminated quoted string".into(),
                ));
            }
            Some(b'\\') => match cur.buf.get(cur.pos + 1).copied() {
                None if at_eof => {
                    cur.pos += 1;
                }
                None => return Err(TokenError::NeedMore),
                Some(b'\n') => {
                    // A continued line: gdbmtool 1.23 keeps the backslash.
                    out.push(b'\\');
                    cur.pos += 1;
                    cur.newline();
                    cur.pos += 1;
                }
                Some(c) => {
                    out.push(unescape(c));
                    cur.pos += 2;
                }
            },
            Some(b) => {
                out.push(b);
                cur.pos += 1;
            }
        }
    }
}

/// Whether the locale's character set is UTF-8 (`LC_ALL`, else `LC_CTYPE`,
/// else `LANG`), which changes how gdbmtool prints non-ASCII bytes.
pub fn locale_is_utf8() -> bool {
    ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .filter_map(std::env::var_os)
        .find(|v| !v.is_empty())
        .map(|v| {
            let v = v.to_string_lossy().to_ascii_lowercase();
            v.contains("utf-8") || v.contains("utf8")
        })
        .unwrap_or(false)
}

fn push_octal(b: u8, out: &mut Vec<u8>) {
    out.push(b'\\');
    out.push(b'0' + (b >> 6));
    out.push(b'0' + ((b >> 3) & 7));
    out.push(b'0' + (b & 7));
}

fn push_ascii(b: u8, out: &mut Vec<u8>) {
    match b {
        0x20..=0x7e => out.push(b),
        0x07 => out.extend_from_slice(b"\\a"),
        0x08 => out.extend_from_slice(b"\\b"),
        0x0c => out.extend_from_slice(b"\\f"),
        b'\n' => out.extend_from_slice(b"\\n"),
        b'\r' => out.extend_from_slice(b"\\r"),
        b'\t' => out.extend_from_slice(b"\\t"),
        0x0b => out.extend_from_slice(b"\\v"),
        _ => push_octal(b, out),
    }
}

/// Appends `datum` as gdbmtool prints a `string` datum: printable ASCII as
/// is, `\a \b \f \n \r \t \v` for those controls, `\ooo` (three octal
/// digits) for every other byte — except that in a UTF-8 locale (`utf8`)
/// a well-formed multibyte character that is not a control character is
/// printed as is, as gdbmtool does there.
pub fn format_datum(datum: &[u8], utf8: bool, out: &mut Vec<u8>) {
    if !utf8 || datum.is_ascii() {
        for &b in datum {
            push_ascii(b, out);
        }
        return;
    }
    for chunk in datum.utf8_chunks() {
        for c in chunk.valid().chars() {
            let mut buf = [0u8; 4];
            let bytes = c.encode_utf8(&mut buf).as_bytes();
            if c.is_ascii() {
                push_ascii(bytes.first().copied().unwrap_or(0), out);
            } else if c.is_control() {
                bytes.iter().for_each(|&b| push_octal(b, out));
            } else {
                out.extend_from_slice(bytes);
            }
        }
        chunk.invalid().iter().for_each(|&b| push_octal(b, out));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Quotes `datum` so that the lexer reads it back as the same bytes.
    fn quote_datum(datum: &[u8], out: &mut Vec<u8>) {
        out.push(b'"');
        for &b in datum {
            match b {
                b'"' => out.extend_from_slice(b"\\\""),
                b'\\' => out.extend_from_slice(b"\\\\"),
                b'\n' => out.extend_from_slice(b"\\n"),
                _ => out.push(b),
            }
        }
        out.push(b'"');
    }

    fn parse_all(input: &[u8]) -> Vec<String> {
        let mut p = Parser::new();
        let mut pos = 0;
        let mut out = Vec::new();
        loop {
            let (step, n) = p.parse(&input[pos..], true);
            pos += n;
            match step {
                Step::Command(c) => {
                    let args: Vec<String> = (0..c.args.len())
                        .map(|i| String::from_utf8_lossy(c.args.get(i)).into_owned())
                        .collect();
                    out.push(format!("{}{:?}@{}", c.spec.name, args, c.locus));
                }
                Step::Blank => {}
                Step::Error { locus, message } => out.push(format!("error {locus}: {message}")),
                Step::NeedMore => panic!("NeedMore at eof"),
                Step::End => return out,
            }
        }
    }

    #[test]
    fn words_quotes_and_escapes() {
        assert_eq!(parse_all(b"store a b\n"), ["store[\"a\", \"b\"]@1.1-10"]);
        assert_eq!(
            parse_all(b"store \"a\\qb\\\"c\\\\\" \"x\"\n"),
            ["store[\"aqb\\\"c\\\\\", \"x\"]@1.1-22"]
        );
        assert_eq!(
            parse_all(b"store a\\tb x\n"),
            ["store[\"a\\\\tb\", \"x\"]@1.1-13"]
        );
        assert_eq!(
            parse_all(b"store \"v\\tal\\n\" x\n")[0],
            "store[\"v\\tal\\n\", \"x\"]@1.1-18"
        );
        assert_eq!(
            parse_all(b"store a b\r\n")[0],
            "store[\"a\", \"b\\r\"]@1.1-11"
        );
    }

    #[test]
    fn separators_comments_and_loci() {
        assert_eq!(
            parse_all(b"store a 1; fetch zz; count\n"),
            [
                "store[\"a\", \"1\"]@1.1-10",
                "fetch[\"zz\"]@1.12-20",
                "count[]@1.22-27"
            ]
        );
        assert_eq!(parse_all(b"  fetch zz  \n"), ["fetch[\"zz\"]@1.3-13"]);
        assert_eq!(
            parse_all(b"# c\n\n   # d\nstore a b # x\n"),
            ["error 4.1-14: store: too many arguments"]
        );
        assert_eq!(
            parse_all(b"store a b; # comment\n"),
            ["store[\"a\", \"b\"]@1.1-10"]
        );
    }

    #[test]
    fn abbreviations() {
        assert_eq!(parse_all(b"sto a b\nco\nl\nfi\nn\nreo\n?\n").len(), 7);
        assert_eq!(
            parse_all(b"c\n"),
            ["error 1.1-2: ambiguous command: c (cache, close, count, current)"]
        );
        assert_eq!(
            parse_all(b"bogus 1\n"),
            ["error 1.1-8: Unknown command: bogus"]
        );
    }

    #[test]
    fn argument_counts() {
        assert_eq!(
            parse_all(b"store a\n"),
            ["error 1.1-8: store: not enough arguments"]
        );
        assert_eq!(
            parse_all(b"store a b c\n"),
            ["error 1.1-12: store: too many arguments"]
        );
        assert_eq!(
            parse_all(b"store a\"b\" c\n"),
            ["error 1.1-13: store: too many arguments"]
        );
    }

    #[test]
    fn errors_skip_the_line_and_go_on() {
        assert_eq!(
            parse_all(b"store \"unterm\ncount\n"),
            [
                "error 1.1-14: syntax error, unterminated quoted string",
                "count[]@2.1-6"
            ]
        );
        assert_eq!(
            parse_all(b"store a=b c\ncount\n"),
            ["error 1.1-8: syntax error, unexpected '='", "count[]@2.1-6"]
        );
        assert_eq!(
            parse_all(b"\x01\x02junk\ncount"),
            [
                "error 1.1-1: syntax error, unexpected byte 0x01",
                "count[]@2.1-5"
            ]
        );
    }

    #[test]
    fn continued_string_keeps_backslash() {
        assert_eq!(
            parse_all(b"store k \"line1\\\ncont\"\ncount\n"),
            ["store[\"k\", \"line1\\\\cont\"]@1.1-2.6", "count[]@3.1-6"]
        );
    }

    #[test]
    fn incremental_input() {
        let input = b"store 1 \"one\"\nstore 22 \"twenty-two\"\n";
        let mut p = Parser::new();
        let mut buf: Vec<u8> = Vec::new();
        let mut got = Vec::new();
        for &b in input.iter() {
            buf.push(b);
            loop {
                let (step, n) = p.parse(&buf, false);
                let done = matches!(step, Step::NeedMore);
                if let Step::Command(c) = step {
                    got.push(c.args.get(1).to_vec());
                }
                buf.drain(..n);
                if done {
                    break;
                }
            }
        }
        assert_eq!(got, [b"one".to_vec(), b"twenty-two".to_vec()]);
    }

    #[test]
    fn datum_format_matches_gdbmtool() {
        let mut out = Vec::new();
        format_datum(b"\x00\xff\x80 \x01\x02\x7f x\"y\\z\t\n", false, &mut out);
        assert_eq!(out, b"\\000\\377\\200 \\001\\002\\177 x\"y\\z\\t\\n");
        out.clear();
        format_datum(
            "\u{e9}t\u{e9}\u{a0}x\u{200b}y\u{85}".as_bytes(),
            false,
            &mut out,
        );
        assert_eq!(
            out,
            b"\\303\\251t\\303\\251\\302\\240x\\342\\200\\213y\\302\\205"
        );
        out.clear();
        let mut mixed = "\u{e9}t\u{e9}\u{a0}x\u{200b}y\u{85}\t".as_bytes().to_vec();
        mixed.extend_from_slice(b"\xff\xc3");
        format_datum(&mixed, true, &mut out);
        let mut want = "\u{e9}t\u{e9}\u{a0}x\u{200b}y".as_bytes().to_vec();
        want.extend_from_slice(b"\\302\\205\\t\\377\\303");
        assert_eq!(out, want);
    }

    #[test]
    fn quote_round_trips() {
        let datum = b"a \"b\"\\c\n\t\x00\xff;#=";
        let mut line = b"store k ".to_vec();
        quote_datum(datum, &mut line);
        line.push(b'\n');
        let mut p = Parser::new();
        match p.parse(&line, true).0 {
            Step::Command(c) => assert_eq!(c.args.get(1), datum),
            other => panic!("{other:?}"),
        }
    }

    /// Drives the parser as the shell does, feeding `input` in pieces cut at
    /// `cuts`; returns how many calls it took to reach `Step::End`, or
    /// `None` if it made no progress (a call neither consumed a byte nor
    /// asked for more).
    fn drive(input: &[u8], cuts: &[usize]) -> Option<usize> {
        let mut p = Parser::new();
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
        cuts.sort_unstable();
        cuts.push(input.len());
        let mut fed = 0;
        let mut next_cut = cuts.into_iter();
        let mut buf: Vec<u8> = Vec::new();
        let mut eof = false;
        let mut calls = 0;
        loop {
            calls += 1;
            let (step, n) = p.parse(&buf, eof);
            match step {
                Step::End => return Some(calls),
                Step::NeedMore => {
                    assert_eq!(n, 0, "NeedMore consumed bytes");
                    assert!(!eof, "NeedMore at the end of input");
                    match next_cut.next() {
                        Some(c) if c > fed => {
                            buf.extend_from_slice(&input[fed..c]);
                            fed = c;
                        }
                        Some(_) => {}
                        None => eof = true,
                    }
                }
                _ if n == 0 => return None,
                _ => {
                    buf.drain(..n);
                }
            }
        }
    }

    /// Before the fix: a syntax error on a last line without a newline left
    /// the parser skipping "the rest of the line" in an empty buffer,
    /// returning `Blank` without consuming anything, and the shell looped
    /// at 100% CPU forever (`printf '{' | lamina shell --newdb s.lamina`).
    #[test]
    fn syntax_error_on_an_unterminated_last_line_ends() {
        for input in [&b"{"[..], b"}", b"=", b",", b"\"", b"store a {", b"store a\"b"] {
            assert!(
                drive(input, &[]).is_some(),
                "{}",
                String::from_utf8_lossy(input)
            );
            assert!(drive(input, &[1, 2, 3]).is_some());
        }
        assert_eq!(
            parse_all(b"store a {"),
            ["error 1.1-9: syntax error, unexpected '{'"]
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// Any bytes, cut anywhere: the parser never panics and always
        /// reaches the end, in a number of calls bounded by the input.
        #[test]
        fn any_bytes_terminate(
            input in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
            cuts in proptest::collection::vec(proptest::prelude::any::<usize>(), 0..8),
        ) {
            let calls = drive(&input, &cuts);
            proptest::prop_assert!(calls.is_some(), "no progress");
            proptest::prop_assert!(calls.unwrap_or(0) <= 2 * input.len() + cuts.len() + 4);
        }

        /// Text that looks like commands (verbs, quotes, separators).
        #[test]
        fn command_like_text_terminates(
            words in proptest::collection::vec(
                proptest::sample::select(vec![
                    "store", "fetch", "c", "\"", "\\", "{", "}", "=", ",", ";", "#",
                    " ", "\n", "a", "\"x\"", "[", "]", "\r",
                ]),
                0..40,
            ),
            cuts in proptest::collection::vec(proptest::prelude::any::<usize>(), 0..8),
        ) {
            let input = words.concat().into_bytes();
            let calls = drive(&input, &cuts);
            proptest::prop_assert!(calls.is_some(), "no progress");
        }
    }

    #[test]
    fn help_layout() {
        let h = help_text();
        assert!(h.starts_with(" count                        count (number of entries)\n"));
        assert!(h.contains(
            " export FILE [truncate] [binary|ascii]\n                              export\n"
        ));
    }
}
