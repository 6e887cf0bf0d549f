//! Database files of gdbm and Berkeley DB given to `lamina load` in place
//! of a dump: recognised by their magic numbers, and read through their own
//! dump tool (`gdbm_dump`, `db5.3_dump`) run as a child process whose
//! output streams into the dump readers of this module's parent.

use crate::dumpfmt::Format;
use crate::error::{CliError, CliResult, Exit};
use std::io::{BufReader, Read};
use std::path::Path;
use std::process::{Child, ChildStderr, ChildStdout, Command, Stdio};

/// A kind of database file another dbm library wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// GNU dbm.
    Gdbm,
    /// Berkeley DB (btree, hash, queue or recno).
    BerkeleyDb,
}

impl Kind {
    /// The name a person knows it by.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Gdbm => "gdbm",
            Kind::BerkeleyDb => "Berkeley DB",
        }
    }

    /// The dump tools that read it, in the order tried, and the Debian
    /// package of the first.
    fn tools(self) -> (&'static [&'static str], &'static str) {
        match self {
            Kind::Gdbm => (&["gdbm_dump"], "gdbmtool"),
            Kind::BerkeleyDb => (&["db5.3_dump", "db_dump"], "db5.3-util"),
        }
    }

    /// The format of the tool's output.
    pub fn format(self) -> Format {
        match self {
            Kind::Gdbm => Format::Gdbm,
            Kind::BerkeleyDb => Format::Bdb,
        }
    }
}

/// The magic numbers at the start of a gdbm file (its header's first
/// word, in either byte order): the original, 32- and 64-bit offsets, and
/// the two with a sync counter.
const GDBM_MAGICS: [u32; 5] = [
    0x1357_9ace,
    0x1357_9acd,
    0x1357_9acf,
    0x1357_9ad0,
    0x1357_9ad1,
];

/// Berkeley DB's magic numbers, at byte 12 of its first page: btree (and
/// recno), hash, queue, heap.
const BDB_MAGICS: [u32; 4] = [0x0005_3162, 0x0006_1561, 0x0004_2253, 0x0007_4582];

fn word_at(head: &[u8], at: usize) -> Option<(u32, u32)> {
    let bytes: [u8; 4] = head.get(at..at + 4)?.try_into().ok()?;
    Some((u32::from_le_bytes(bytes), u32::from_be_bytes(bytes)))
}

/// Which database file `head`, the first bytes of a file, begins, if any.
pub fn recognise(head: &[u8]) -> Option<Kind> {
    let matches = |at: usize, magics: &[u32]| {
        word_at(head, at).is_some_and(|(le, be)| magics.contains(&le) || magics.contains(&be))
    };
    if matches(0, &GDBM_MAGICS) {
        Some(Kind::Gdbm)
    } else if matches(12, &BDB_MAGICS) {
        Some(Kind::BerkeleyDb)
    } else {
        None
    }
}

/// The kind of database file at `path`, if it is one (a dump, a missing
/// file or a directory is none).
pub fn recognise_file(path: &Path) -> Option<Kind> {
    let mut head = [0u8; 16];
    let mut f = std::fs::File::open(path).ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    f.read_exact(&mut head).ok()?;
    recognise(&head)
}

/// A dump tool running over a database file.
pub struct DumpChild {
    child: Child,
    tool: &'static str,
    stderr: Option<std::thread::JoinHandle<String>>,
}

impl DumpChild {
    /// Starts the dump tool of `kind` on `path`; its output is the
    /// returned reader. A tool that is not installed is an error naming the
    /// Debian package that has it.
    pub fn spawn(kind: Kind, path: &Path) -> CliResult<(DumpChild, BufReader<ChildStdout>)> {
        let (tools, package) = kind.tools();
        for &tool in tools {
            let mut cmd = Command::new(tool);
            if kind == Kind::Gdbm {
                cmd.arg("--format=ascii");
            }
            let spawned = cmd
                .arg(path)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn();
            let mut child = match spawned {
                Ok(c) => c,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(CliError::io(format!("running {tool}"), e)),
            };
            let stdout = child
                .stdout
                .take()
                .ok_or_else(|| CliError::new(Exit::Io, format!("{tool} gave no output pipe")))?;
            let stderr = child.stderr.take().map(collect);
            let dump = DumpChild {
                child,
                tool,
                stderr,
            };
            return Ok((dump, BufReader::with_capacity(1 << 20, stdout)));
        }
        Err(CliError::new(
            Exit::CannotOpen,
            format!(
                "{} is a {} database file; reading it needs {}, from Debian's {package} \
                 package (apt-get install {package}), which is not installed here. Install \
                 it, or dump the file where it is (`{} FILE > DUMP`) and load the dump",
                path.display(),
                kind.name(),
                tools.join(" or "),
                tools.first().copied().unwrap_or("the dump tool"),
            ),
        ))
    }

    /// The tool's name.
    pub fn tool(&self) -> &'static str {
        self.tool
    }

    /// Waits for the tool to end (stopping it first when `stop`, after the
    /// load gave up on its output). An error if it failed, with what it said.
    pub fn finish(mut self, stop: bool) -> CliResult<()> {
        if stop {
            let _ = self.child.kill();
        }
        let status = self
            .child
            .wait()
            .map_err(|e| CliError::io(format!("waiting for {}", self.tool), e))?;
        let said = self
            .stderr
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        if stop || status.success() {
            return Ok(());
        }
        let said = said.trim();
        Err(CliError::new(
            Exit::Damage,
            if said.is_empty() {
                format!("{} failed ({status})", self.tool)
            } else {
                format!("{} failed: {said}", self.tool)
            },
        ))
    }
}

/// Reads a child's standard error to the end in a thread, so that a tool
/// that says much never blocks on it.
fn collect(mut stderr: ChildStderr) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_numbers_in_either_byte_order() {
        let mut gdbm = [0u8; 16];
        gdbm[..4].copy_from_slice(&0x1357_9acf_u32.to_le_bytes());
        assert_eq!(recognise(&gdbm), Some(Kind::Gdbm));
        gdbm[..4].copy_from_slice(&0x1357_9ace_u32.to_be_bytes());
        assert_eq!(recognise(&gdbm), Some(Kind::Gdbm));
        let mut bdb = [0u8; 16];
        bdb[12..].copy_from_slice(&0x0006_1561_u32.to_le_bytes());
        assert_eq!(recognise(&bdb), Some(Kind::BerkeleyDb));
        bdb[12..].copy_from_slice(&0x0005_3162_u32.to_be_bytes());
        assert_eq!(recognise(&bdb), Some(Kind::BerkeleyDb));
        assert_eq!(recognise(b"a\tb\n"), None);
        assert_eq!(recognise(b"# GDBM dump file created by"), None);
    }
}
