//! Where the shell's commands come from: standard input or a file read in
//! large chunks (the fast path for piped loads), the command line, or a
//! terminal with line editing and history.

use std::io::{self, BufRead, Write};

/// The prompt of an interactive shell.
const PROMPT: &str = "lamina> ";

/// Bytes read at once from standard input or a file.
const CHUNK: usize = 1 << 20;

/// Where commands come from.
pub enum Input {
    /// Piped or redirected standard input, read in large chunks.
    Stdin(io::BufReader<io::Stdin>),
    /// A file given with `--file`.
    File(io::BufReader<std::fs::File>),
    /// A one-shot command from the command line.
    Bytes(io::Cursor<Vec<u8>>),
    /// A terminal, read a line at a time with line editing and history.
    Editor(Box<rustyline::DefaultEditor>),
    /// A terminal the line editor cannot drive: plain lines, plain prompt.
    Lines(io::Stdin),
}

impl Input {
    /// Piped or redirected standard input.
    pub fn stdin() -> Input {
        Input::Stdin(io::BufReader::with_capacity(CHUNK, io::stdin()))
    }

    /// The file `f`.
    pub fn file(f: std::fs::File) -> Input {
        Input::File(io::BufReader::with_capacity(CHUNK, f))
    }

    /// Standard input on a terminal: the line editor if it can start.
    pub fn terminal() -> Input {
        match rustyline::DefaultEditor::new() {
            Ok(editor) => Input::Editor(Box::new(editor)),
            Err(_) => Input::Lines(io::stdin()),
        }
    }

    /// Whether a person types the commands (a prompt, a line at a time).
    pub fn is_interactive(&self) -> bool {
        matches!(self, Input::Editor(_) | Input::Lines(_))
    }

    /// Appends what can be read now to `buf`; 0 at the end of input.
    pub fn read_more(&mut self, buf: &mut Vec<u8>) -> io::Result<usize> {
        match self {
            Input::Stdin(s) => read_chunk(s, buf),
            Input::File(f) => read_chunk(f, buf),
            Input::Bytes(b) => read_chunk(b, buf),
            Input::Editor(editor) => read_edited_line(editor, buf),
            Input::Lines(s) => {
                eprint!("{PROMPT}");
                let _ = io::stderr().flush();
                s.lock().read_until(b'\n', buf)
            }
        }
    }
}

/// Reads one line from the line editor, with its newline; Ctrl-C gives an
/// empty line, Ctrl-D the end of input.
fn read_edited_line(editor: &mut rustyline::DefaultEditor, buf: &mut Vec<u8>) -> io::Result<usize> {
    use rustyline::error::ReadlineError;
    match editor.readline(PROMPT) {
        Ok(line) => {
            if !line.trim().is_empty() {
                let _ = editor.add_history_entry(line.as_str());
            }
            buf.extend_from_slice(line.as_bytes());
            buf.push(b'\n');
            Ok(line.len() + 1)
        }
        Err(ReadlineError::Interrupted) => {
            buf.push(b'\n');
            Ok(1)
        }
        Err(ReadlineError::Eof) => Ok(0),
        Err(ReadlineError::Io(e)) => Err(e),
        Err(e) => Err(io::Error::other(e.to_string())),
    }
}

/// Appends what one read of `r` gives (up to its buffer's [`CHUNK`]).
/// Read through the buffer, which is zeroed once, instead of into `buf`
/// grown by a chunk of zeros each time: a pipe hands over 64 KiB a read,
/// and each read zeroed a whole chunk.
fn read_chunk(r: &mut impl BufRead, buf: &mut Vec<u8>) -> io::Result<usize> {
    let got = loop {
        match r.fill_buf() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => break other?,
        }
    };
    buf.extend_from_slice(got);
    let n = got.len();
    r.consume(n);
    Ok(n)
}

/// The size of standard input when it is a regular file (for the ETA).
pub fn stdin_file_size() -> Option<u64> {
    use std::os::fd::AsFd;
    let fd = io::stdin().as_fd().try_clone_to_owned().ok()?;
    let meta = std::fs::File::from(fd).metadata().ok()?;
    meta.is_file().then_some(meta.len())
}
