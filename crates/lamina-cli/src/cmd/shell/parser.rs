//! gdbmtool's command language: the parser (the lexer is in `lexer`, the
//! command table in `commands`, the datum printer in `datum`).
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

use super::commands::{lookup, CommandSpec};
use super::lexer::{describe, is_ident, is_ident_start, is_word_byte, quoted, Cursor, TokenError};
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

/// Commands, and lines, longer than this are refused: the longest valid
/// one stores the largest key and value quoted, each byte written in at
/// most 2 characters (`\n`, `\\`, `\"`; a line continued inside quotes
/// keeps its backslash as a byte of the datum), with room for the verb,
/// the spaces and the quotes.
pub const MAX_COMMAND_LEN: usize = 2 * (lamina::MAX_KEY_LEN + lamina::MAX_VALUE_LEN) + 64;

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
        let start = (cur.line, cur.col());
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
        let found = match self.verb(cur, at_eof, first, start) {
            Ok(found) => found,
            Err(step) => return step,
        };
        let (args, end) = match self.args(cur, at_eof, start) {
            Ok(args) => args,
            Err(step) => return step,
        };
        checked(found, args, span(start, end))
    }

    /// Reads the verb, which starts with `first`, and looks it up (`?` is
    /// `help`). `Err` holds the step to return instead: more input is
    /// needed, or there is no verb.
    fn verb<'a>(
        &mut self,
        cur: &mut Cursor<'a>,
        at_eof: bool,
        first: u8,
        start: (u64, u64),
    ) -> Result<Result<&'static CommandSpec, String>, Step<'a>> {
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
            return Err(Step::NeedMore);
        }
        if word.is_empty() {
            let message = format!("syntax error, unexpected {}", describe(first));
            let locus = span(start, (cur.line, cur.col()));
            return Err(self.fail(cur, at_eof, locus, message));
        }
        Ok(if word == b"?" {
            lookup(b"help")
        } else {
            lookup(word)
        })
    }

    /// Reads the arguments up to the end of the command (a newline, `;` or
    /// the end of input). Returns them and the line and column where the
    /// command ends; `Err` holds the step to return instead.
    fn args<'a>(
        &mut self,
        cur: &mut Cursor<'a>,
        at_eof: bool,
        start: (u64, u64),
    ) -> Result<(Args<'a>, (u64, u64)), Step<'a>> {
        let mut args = Args::default();
        loop {
            cur.skip_blanks();
            match cur.peek() {
                None if at_eof => {
                    let end = (cur.line, cur.col().saturating_sub(1).max(start.1));
                    return Ok((args, end));
                }
                None => return Err(Step::NeedMore),
                Some(b'\n') => {
                    let end = (cur.line, cur.col());
                    cur.newline();
                    cur.pos += 1;
                    return Ok((args, end));
                }
                Some(b';') => {
                    let end = (cur.line, cur.col());
                    cur.pos += 1;
                    return Ok((args, end));
                }
                Some(b'"') => match quoted(cur, at_eof) {
                    Ok(arg) => args.push(arg),
                    Err(TokenError::NeedMore) => return Err(Step::NeedMore),
                    Err(TokenError::Syntax(message)) => {
                        let locus = span(start, (cur.line, cur.col()));
                        return Err(self.fail(cur, at_eof, locus, message));
                    }
                },
                Some(b) if is_word_byte(b) => {
                    let s = cur.pos;
                    while cur.peek().is_some_and(is_word_byte) {
                        cur.pos += 1;
                    }
                    if cur.pos == cur.buf.len() && !at_eof {
                        return Err(Step::NeedMore);
                    }
                    args.push(Cow::Borrowed(cur.buf.get(s..cur.pos).unwrap_or(b"")));
                }
                Some(b) => {
                    let message = format!("syntax error, unexpected {}", describe(b));
                    let locus = span(start, (cur.line, cur.col()));
                    return Err(self.fail(cur, at_eof, locus, message));
                }
            }
        }
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

/// The locus from `start` to `end`, each a line and a column.
fn span(start: (u64, u64), end: (u64, u64)) -> Locus {
    Locus {
        line: start.0,
        col: start.1,
        end_line: end.0,
        end_col: end.1,
    }
}

/// The command that `found` names, with `args`, if their count fits it;
/// else the error, at `locus`.
fn checked<'a>(
    found: Result<&'static CommandSpec, String>,
    args: Args<'a>,
    locus: Locus,
) -> Step<'a> {
    let spec = match found {
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
        for input in [
            &b"{"[..],
            b"}",
            b"=",
            b",",
            b"\"",
            b"store a {",
            b"store a\"b",
        ] {
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
}
