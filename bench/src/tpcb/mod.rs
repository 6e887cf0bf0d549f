//! `lamina-bench tpcb`: the TPC-B transaction, in the shape of Berkeley
//! DB's `ex_tpcb` example, on lamina beside RocksDB (`TransactionDB`), LMDB
//! (`heed`), SQLite (`rusqlite`, bundled) and Berkeley DB 5.3 (a C program,
//! bench/tpcb_bdb.c), every commit durable.
//!
//! The data (bench/README.md, "TPC-B transactions: durable read-modify-write
//! at 1 to 16 threads", is the definition): `--branches` B branches (10), 10
//! tellers per branch, `--accounts-per-branch` (10,000) accounts per
//! branch (ex_tpcb's defaults), each row an 8-byte little-endian balance padded to ex_tpcb's
//! 100-byte record, starting at 0; keys `a`/`t`/`b` + the 4-byte big-endian
//! id; history rows `h` + round + thread + counter (17 bytes), 100 bytes
//! holding the delta and the three ids. One transaction: a random account,
//! a random branch and a random teller (each drawn over all of its kind, as
//! ex_tpcb draws them), a random delta in [-999,999, 999,999] (TPC-B's);
//! read and update the account, branch and teller balances (that order, as
//! ex_tpcb), put one history row, commit durably. A conflict is retried
//! until the transaction commits.
//!
//! Each engine runs in a process of its own (this program again with
//! `--child ENGINE`; Berkeley DB: the C program), which loads the data, runs
//! each thread count for `--seconds`, checks the invariant after each
//! (sum of accounts == sum of tellers == sum of branches == sum of the
//! history's deltas) and prints one `row,` line per thread count. testfile
//! (commit.rs: write 256 B + lseek + fsync) runs before the first engine and
//! after each, each engine compared with the mean of the runs around it
//! (`driver.rs`); the table shows the rows and lamina's targets (`report.rs`).
//!
//! This file owns the data: its sizes, keys and rows, each thread's draws
//! of transactions, the sums the invariant compares; the interface the
//! engines' adapters (one file each) implement; and the row of figures a
//! child prints for one thread count.

mod bdb;
mod driver;
mod lamina_engine;
#[cfg(feature = "lmdb")]
mod lmdb_engine;
mod report;
#[cfg(feature = "rocksdb")]
mod rocksdb_engine;
#[cfg(feature = "sqlite")]
mod sqlite_engine;

pub use driver::{run, TpcbArgs};

use crate::XorShift64Star;

/// Bytes of every row (ex_tpcb's `RECLEN`).
pub const RECORD: usize = 100;
/// Tellers per branch (TPC-B's, ex_tpcb's).
pub const TELLERS_PER_BRANCH: u32 = 10;
/// Rows per load transaction.
pub const LOAD_BATCH: usize = 10_000;

/// The sizes of the data.
#[derive(Debug, Clone, Copy)]
pub struct Scale {
    pub branches: u32,
    pub tellers: u32,
    pub accounts: u32,
}

impl Scale {
    fn of(args: &TpcbArgs) -> Result<Scale, String> {
        let b = args.branches;
        let accounts = b.checked_mul(args.accounts_per_branch);
        match accounts {
            Some(a) if b > 0 && a > 0 => Ok(Scale {
                branches: b,
                tellers: b * TELLERS_PER_BRANCH,
                accounts: a,
            }),
            _ => {
                Err("--branches and --accounts-per-branch: at least 1, accounts below 2^32".into())
            }
        }
    }
}

/// The key of account, teller or branch `id` (`kind` b'a', b't', b'b').
pub fn key(kind: u8, id: u32) -> [u8; 5] {
    let b = id.to_be_bytes();
    [kind, b[0], b[1], b[2], b[3]]
}

/// The key of a history row: `h`, round, thread, the thread's counter.
pub fn history_key(round: u32, thread: u32, n: u64) -> [u8; 17] {
    let mut k = [b'h'; 17];
    put_at(&mut k, 1, &round.to_be_bytes());
    put_at(&mut k, 5, &thread.to_be_bytes());
    put_at(&mut k, 9, &n.to_be_bytes());
    k
}

/// A row of accounts, tellers or branches: the balance, then padding.
pub fn record(balance: i64) -> [u8; RECORD] {
    let mut r = [b' '; RECORD];
    put_at(&mut r, 0, &balance.to_le_bytes());
    r
}

/// Copies `bytes` into `buf` at `at` (nothing past its end).
fn put_at(buf: &mut [u8], at: usize, bytes: &[u8]) {
    if let Some(d) = buf.get_mut(at..at + bytes.len()) {
        d.copy_from_slice(bytes);
    }
}

/// The balance of a row (the history row's delta).
pub fn balance(v: &[u8]) -> Result<i64, String> {
    v.get(..8)
        .and_then(|b| b.try_into().ok())
        .map(i64::from_le_bytes)
        .ok_or_else(|| format!("a row of {} bytes, too short", v.len()))
}

/// A row with `delta` added to its balance.
pub fn add(v: Option<&[u8]>, delta: i64, what: &str) -> Result<[u8; RECORD], String> {
    let v = v.ok_or_else(|| format!("{what}: missing"))?;
    Ok(record(balance(v)?.wrapping_add(delta)))
}

/// One TPC-B transaction's draws.
#[derive(Debug, Clone, Copy)]
pub struct Txn {
    pub account: [u8; 5],
    pub teller: [u8; 5],
    pub branch: [u8; 5],
    pub delta: i64,
    pub history: [u8; 17],
    pub history_row: [u8; RECORD],
}

/// A thread's stream of transactions.
pub struct Draws {
    rng: XorShift64Star,
    scale: Scale,
    round: u32,
    thread: u32,
    n: u64,
}

impl Draws {
    pub fn new(seed: u64, scale: Scale, round: u32, thread: u32) -> Draws {
        let s = seed ^ (u64::from(round) << 32 | u64::from(thread)).wrapping_mul(0x100_0000_01B3);
        Draws {
            rng: XorShift64Star::new(s),
            scale,
            round,
            thread,
            n: 0,
        }
    }

    /// The next transaction.
    pub fn next_txn(&mut self) -> Txn {
        let a = (self.rng.next_u64() % u64::from(self.scale.accounts)) as u32;
        let b = (self.rng.next_u64() % u64::from(self.scale.branches)) as u32;
        let t = (self.rng.next_u64() % u64::from(self.scale.tellers)) as u32;
        let delta = (self.rng.next_u64() % 1_999_999) as i64 - 999_999;
        let mut row = record(delta);
        put_at(&mut row, 8, &a.to_le_bytes());
        put_at(&mut row, 12, &b.to_le_bytes());
        put_at(&mut row, 16, &t.to_le_bytes());
        let h = history_key(self.round, self.thread, self.n);
        self.n += 1;
        Txn {
            account: key(b'a', a),
            teller: key(b't', t),
            branch: key(b'b', b),
            delta,
            history: h,
            history_row: row,
        }
    }
}

/// The balances' sums, for the invariant.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sums {
    pub accounts: i128,
    pub tellers: i128,
    pub branches: i128,
    pub history: i128,
    pub history_rows: u64,
}

impl Sums {
    /// Adds the row `k`, `v` to its sum.
    pub fn add(&mut self, k: &[u8], v: &[u8]) -> Result<(), String> {
        let x = i128::from(balance(v)?);
        match k.first() {
            Some(b'a') => self.accounts += x,
            Some(b't') => self.tellers += x,
            Some(b'b') => self.branches += x,
            Some(b'h') => {
                self.history += x;
                self.history_rows += 1;
            }
            _ => return Err(format!("an unknown key {k:?}")),
        }
        Ok(())
    }

    /// `ok`, or what is wrong.
    pub fn verdict(&self, committed: u64) -> String {
        let s = self;
        if s.accounts == s.tellers
            && s.tellers == s.branches
            && s.branches == s.history
            && s.history_rows == committed
        {
            "ok".into()
        } else {
            format!(
                "FAILED: accounts {} tellers {} branches {} history {} ({} rows, {} committed)",
                s.accounts, s.tellers, s.branches, s.history, s.history_rows, committed
            )
        }
    }
}

/// One engine, open: loaded, then worked by threads.
pub trait Engine: Sync {
    /// Puts `rows` in one durable transaction.
    fn load(&self, rows: &[(Vec<u8>, [u8; RECORD])]) -> Result<(), String>;
    /// A handle for one thread.
    fn worker(&self) -> Result<Box<dyn Worker + '_>, String>;
    /// Sums every row (one read transaction or snapshot).
    fn sums(&self) -> Result<Sums, String>;
    /// fsyncs issued so far, where the engine counts them.
    fn fsyncs(&self) -> Option<u64> {
        None
    }
    /// Closes it.
    fn close(self: Box<Self>) -> Result<(), String>;
}

/// One thread's handle on an engine.
pub trait Worker {
    /// Runs `t` until it commits durably; returns the conflicts met.
    fn run(&mut self, t: &Txn) -> Result<u64, String>;
}

/// What one thread count on one engine measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row {
    pub engine: String,
    pub threads: usize,
    pub txns: u64,
    pub secs: f64,
    /// Conflicted attempts (each one run again).
    pub conflicts: u64,
    /// Transactions that needed more than one attempt.
    pub retried: u64,
    pub fsyncs: Option<u64>,
    /// Bytes the database's block device wrote during the round.
    pub written: Option<u64>,
    /// `ok`, or what failed.
    pub invariant: String,
}

impl Row {
    pub fn rate(&self) -> f64 {
        crate::rate(self.txns, self.secs)
    }

    fn per_txn(&self, n: u64) -> f64 {
        if self.txns > 0 {
            n as f64 / self.txns as f64
        } else {
            0.0
        }
    }

    fn to_line(&self) -> String {
        let opt = |v: Option<u64>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
        format!(
            "row,{},{},{},{:.6},{},{},{},{},{}",
            self.engine,
            self.threads,
            self.txns,
            self.secs,
            self.conflicts,
            self.retried,
            opt(self.fsyncs),
            opt(self.written),
            self.invariant.replace(',', ";")
        )
    }

    /// Parses a child's line (the C program prints the same).
    fn from_line(line: &str) -> Option<Row> {
        let f: Vec<&str> = line.strip_prefix("row,")?.splitn(9, ',').collect();
        let opt = |s: &str| s.parse::<u64>().ok();
        match f.as_slice() {
            [engine, threads, txns, secs, conflicts, retried, fsyncs, written, inv] => Some(Row {
                engine: engine.to_string(),
                threads: threads.parse().ok()?,
                txns: txns.parse().ok()?,
                secs: secs.parse().ok()?,
                conflicts: conflicts.parse().ok()?,
                retried: retried.parse().ok()?,
                fsyncs: opt(fsyncs),
                written: opt(written),
                invariant: inv.to_string(),
            }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_line_round_trips() {
        let r = Row {
            engine: "lamina".into(),
            threads: 4,
            txns: 100,
            secs: 1.5,
            conflicts: 3,
            retried: 2,
            fsyncs: Some(40),
            written: None,
            invariant: "ok".into(),
        };
        assert_eq!(Row::from_line(&r.to_line()), Some(r));
    }

    #[test]
    fn draws_stay_in_range() {
        let scale = Scale {
            branches: 2,
            tellers: 20,
            accounts: 50,
        };
        let mut d = Draws::new(1, scale, 0, 0);
        for _ in 0..1000 {
            let t = d.next_txn();
            assert!(t.delta.abs() <= 999_999);
            assert!(
                u32::from_be_bytes([t.account[1], t.account[2], t.account[3], t.account[4]]) < 50
            );
            assert!(u32::from_be_bytes([t.branch[1], t.branch[2], t.branch[3], t.branch[4]]) < 2);
        }
    }
}
