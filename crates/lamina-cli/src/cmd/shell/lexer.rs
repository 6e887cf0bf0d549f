//! The lexer of gdbmtool's language: a cursor over the input buffer, the
//! bytes that make up words, and quoted arguments with their escapes.

use std::borrow::Cow;

pub(super) struct Cursor<'a> {
    pub buf: &'a [u8],
    pub pos: usize,
    pub line: u64,
    pub line_start: i64,
}

impl<'a> Cursor<'a> {
    pub fn peek(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }

    pub fn col(&self) -> u64 {
        (self.pos as i64 - self.line_start + 1).max(1) as u64
    }

    pub fn newline(&mut self) {
        self.line += 1;
        self.line_start = self.pos as i64 + 1;
    }

    pub fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
    }

    /// Advances past the next newline; false if there is none.
    pub fn skip_line(&mut self) -> bool {
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
pub(super) fn is_word_byte(b: u8) -> bool {
    !matches!(
        b,
        b' ' | b'\t' | b'\n' | b'"' | b';' | b'[' | b']' | b'{' | b'}' | b',' | b'='
    )
}

pub(super) fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

pub(super) fn is_ident(b: u8) -> bool {
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
pub(super) enum TokenError {
    NeedMore,
    Syntax(String),
}

pub(super) fn describe(b: u8) -> String {
    if b.is_ascii_graphic() {
        format!("'{}'", b as char)
    } else {
        format!("byte 0x{b:02x}")
    }
}

/// Reads a quoted argument starting at the opening quote.
pub(super) fn quoted<'a>(cur: &mut Cursor<'a>, at_eof: bool) -> Result<Cow<'a, [u8]>, TokenError> {
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
