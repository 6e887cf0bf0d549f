//! The journal a writer thread keeps beside the database: one line before each
//! write ("intent", with the whole batch) and one after the database
//! acknowledged it ("ack"), each handed to the operating system with one
//! `write` so that it survives the process being killed.
//!
//! `I <n> <op> <op> …`   batch `n` is about to be written
//! `A <n> <reads>`       batch `n` was acknowledged; `reads` were checked since the last ack
//! `D <text>`            a read saw something the thread's model says it should not
//!
//! An op is `P<ks>:<hex key>=<hex value>`, `D<ks>:<hex key>` or
//! `M<ks>:<hex key>=<u64>` (an `add` operand), with `ks` 0 for the default
//! keyspace and 1 for the `soak` keyspace.

use std::fmt::Write as _;
use std::io::Write as _;

/// One operation of a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Put(u8, Vec<u8>, Vec<u8>),
    Delete(u8, Vec<u8>),
    Merge(u8, Vec<u8>, u64),
}

/// What a journal says once read back.
#[derive(Debug, Default)]
pub struct Replay {
    /// Acknowledged batches, in the order they were written.
    pub acked: Vec<Vec<Op>>,
    /// The batch being written when the process died, if any.
    pub in_flight: Option<Vec<Op>>,
    /// Reads the thread checked.
    pub reads: u64,
    /// Differences the thread saw itself, and journal lines that make no sense.
    pub differences: Vec<String>,
}

fn hex(b: &[u8]) -> String {
    b.iter()
        .fold(String::with_capacity(b.len() * 2), |mut s, x| {
            let _ = write!(s, "{x:02x}");
            s
        })
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    s.as_bytes()
        .chunks(2)
        .map(|pair| match pair {
            [hi, lo] => u8::from_str_radix(std::str::from_utf8(&[*hi, *lo]).ok()?, 16).ok(),
            _ => None,
        })
        .collect()
}

fn encode_op(op: &Op, out: &mut String) {
    let _ = match op {
        Op::Put(ks, k, v) => write!(out, " P{ks}:{}={}", hex(k), hex(v)),
        Op::Delete(ks, k) => write!(out, " D{ks}:{}", hex(k)),
        Op::Merge(ks, k, n) => write!(out, " M{ks}:{}={n}", hex(k)),
    };
}

fn parse_op(s: &str) -> Option<Op> {
    let kind = s.get(..1)?;
    let (ks, rest) = s.get(1..)?.split_once(':')?;
    let ks: u8 = ks.parse().ok()?;
    Some(match kind {
        "P" => {
            let (k, v) = rest.split_once('=')?;
            Op::Put(ks, unhex(k)?, unhex(v)?)
        }
        "D" => Op::Delete(ks, unhex(rest)?),
        "M" => {
            let (k, n) = rest.split_once('=')?;
            Op::Merge(ks, unhex(k)?, n.parse().ok()?)
        }
        _ => return None,
    })
}

/// Appends lines to one thread's journal file.
pub struct Journal {
    file: std::fs::File,
}

impl Journal {
    pub fn create(path: &std::path::Path) -> std::io::Result<Journal> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(Journal { file })
    }

    fn line(&mut self, s: &str) {
        // One write per line: a kill leaves at most the last line torn.
        if let Err(e) = self.file.write_all(s.as_bytes()) {
            eprintln!("soak: journal write failed: {e}");
            std::process::exit(3);
        }
    }

    pub fn intent(&mut self, n: u64, ops: &[Op]) {
        let mut s = format!("I {n}");
        for op in ops {
            encode_op(op, &mut s);
        }
        s.push('\n');
        self.line(&s);
    }

    pub fn ack(&mut self, n: u64, reads: u64) {
        self.line(&format!("A {n} {reads}\n"));
    }

    pub fn difference(&mut self, what: &str) {
        self.line(&format!("D {}\n", what.replace('\n', " ")));
    }
}

/// Reads a journal back; a last line without its newline was torn by the kill
/// and is ignored.
pub fn replay(text: &str) -> Replay {
    let mut r = Replay::default();
    let complete = match text.rfind('\n') {
        Some(end) => text.get(..end).unwrap_or(""),
        None => "",
    };
    let mut pending: Option<(u64, Vec<Op>)> = None;
    for line in complete.lines() {
        let mut words = line.split(' ');
        match words.next() {
            Some("I") => {
                let n = words.next().and_then(|w| w.parse().ok());
                let ops: Option<Vec<Op>> = words.map(parse_op).collect();
                match (n, ops, &pending) {
                    (Some(n), Some(ops), None) => pending = Some((n, ops)),
                    _ => r
                        .differences
                        .push(format!("journal: bad intent line {line:?}")),
                }
            }
            Some("A") => {
                let n: Option<u64> = words.next().and_then(|w| w.parse().ok());
                let reads: Option<u64> = words.next().and_then(|w| w.parse().ok());
                match (n, reads, pending.take()) {
                    (Some(n), Some(reads), Some((m, ops))) if n == m => {
                        r.acked.push(ops);
                        r.reads += reads;
                    }
                    _ => r
                        .differences
                        .push(format!("journal: bad ack line {line:?}")),
                }
            }
            Some("D") => r.differences.push(line.get(2..).unwrap_or("").to_string()),
            _ => r.differences.push(format!("journal: bad line {line:?}")),
        }
    }
    r.in_flight = pending.map(|(_, ops)| ops);
    r
}
