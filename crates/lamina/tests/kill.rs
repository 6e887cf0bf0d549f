//! A real process is killed with SIGKILL while it writes; every write it
//! acknowledged must be there after reopen. Two writers:
//!
//! - `Durability::Sync` batches (with merges), killed at random moments;
//! - the default durability (`Os`, copied into a shared mapping of the WAL
//!   segment, docs/design.md#durability-contract): the mapped pages belong
//!   to the kernel's page cache, not to the process. Each round also checks,
//!   in `/proc`, that the child had a WAL segment mapped when it was killed.
//!
//! The test binary re-runs itself as the child (selected by an environment
//! variable), so no helper program is needed.

use lamina::binding::NonBlocking;
use lamina::{Batch, Db, Durability, Options};
use rand::Rng;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const CHILD_ENV: &str = "LAMINA_KILL_CHILD_DB";
const START_ENV: &str = "LAMINA_KILL_START";

fn key(i: u64) -> Vec<u8> {
    format!("key{i:010}").into_bytes()
}

fn sync_value(i: u64) -> Vec<u8> {
    format!("value-{i}-{}", "x".repeat((i % 50) as usize)).into_bytes()
}

fn os_value(i: u64) -> Vec<u8> {
    format!("os-value-{i}-{}", "y".repeat((i % 60) as usize)).into_bytes()
}

/// The child's side: if this process is the child, opens the database with
/// `memtable_size`, writes indexes from the start given on and prints each
/// once `write` has returned (never returning itself); otherwise returns.
fn run_child_if_asked(memtable_size: usize, write: impl Fn(&Db, u64)) {
    let Ok(path) = std::env::var(CHILD_ENV) else {
        return;
    };
    let opts = Options {
        memtable_size,
        ..Options::default()
    };
    let db = Db::open(&path, opts).expect("child open");
    let start: u64 = std::env::var(START_ENV)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let mut out = std::io::stdout().lock();
    for i in start.. {
        write(&db, i);
        writeln!(out, "{i}").expect("stdout");
        out.flush().expect("flush stdout");
    }
}

/// Starts this test binary as the child running `test`, writing into `path`
/// from `start`; the thread returns the last index the child acknowledged.
fn spawn_child(test: &str, path: &Path, start: u64) -> (Child, JoinHandle<Option<u64>>) {
    let exe = std::env::current_exe().expect("current exe");
    let mut proc = Command::new(exe)
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, path)
        .env(START_ENV, start.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn child");
    let stdout = proc.stdout.take().expect("child stdout");
    let reader = std::thread::spawn(move || {
        let mut last = None;
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Ok(i) = line.trim().parse::<u64>() {
                last = Some(i);
            }
        }
        last
    });
    (proc, reader)
}

/// SIGKILL: no destructor, no flush, no close runs in the child. Returns
/// the last index it acknowledged, or `acked` if it acknowledged none.
fn kill(mut proc: Child, reader: JoinHandle<Option<u64>>, acked: Option<u64>) -> Option<u64> {
    proc.kill().expect("kill child");
    proc.wait().expect("reap child");
    reader.join().expect("reader thread").or(acked)
}

/// Runs `rounds` children of `test` on one database, each from after the
/// last key that survived the previous one: `wait(round, &child)` returns
/// once it is time to kill it; after each kill the database is reopened and
/// `check(&db, round, acked)` runs before `check_and_resume`. Returns the
/// last index acknowledged.
fn kill_rounds(
    test: &str,
    rounds: usize,
    mut wait: impl FnMut(usize, &Child),
    mut check: impl FnMut(&Db, usize, Option<u64>),
) -> Option<u64> {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("db");
    let mut acked: Option<u64> = None;
    for round in 0..rounds {
        let start = acked.map_or(0, |a| a + 1);
        let (proc, reader) = spawn_child(test, &path, start);
        wait(round, &proc);
        acked = kill(proc, reader, acked);
        let db = Db::open(&path, Options::default()).expect("reopen after kill");
        check(&db, round, acked);
        acked = check_and_resume(&db, round, acked);
        db.close().expect("close");
    }
    acked
}

/// Checks `db` and returns where the next child starts: after the last key
/// that survived (keys after the last acknowledgement may or may not be there).
fn check_and_resume(db: &Db, round: usize, acked: Option<u64>) -> Option<u64> {
    let report = db.check().expect("check");
    assert!(report.is_ok(), "round {round}: {:?}", report.problems);
    match db.range(&b"key"[..]..&b"kez"[..]).next_back() {
        Some(Ok((k, _))) => {
            let n: u64 = String::from_utf8_lossy(k.get(3..).expect("key digits"))
                .parse()
                .expect("key number");
            Some(acked.map_or(n, |a| a.max(n)))
        }
        _ => acked,
    }
}

/// Every acknowledged key up to `a` (the last `depth` of them) has its value.
fn assert_acknowledged(db: &Db, round: usize, a: u64, depth: usize, value: fn(u64) -> Vec<u8>) {
    for i in (0..=a).rev().take(depth) {
        let got = db.get(&key(i)).expect("get");
        assert_eq!(
            got,
            Some(value(i)),
            "round {round}: acknowledged key {i} of {a} is missing or wrong"
        );
    }
}

#[test]
fn sigkill_loses_no_acknowledged_write() {
    run_child_if_asked(256 << 10, |db, i| {
        let mut b = Batch::new();
        b.put(&key(i), &sync_value(i));
        if i % 7 == 0 {
            b.merge(b"counter", &1u64.to_le_bytes());
        }
        db.write_with(b, Durability::Sync).expect("child write");
    });
    let mut rng = rand::thread_rng();
    let acked = kill_rounds(
        "sigkill_loses_no_acknowledged_write",
        6,
        |_, _| std::thread::sleep(Duration::from_millis(rng.gen_range(50..600))),
        |db, round, acked| {
            let Some(a) = acked else { return };
            assert_acknowledged(db, round, a, 2000, sync_value);
            let counter = db
                .get(b"counter")
                .expect("get counter")
                .expect("counter exists");
            let n = u64::from_le_bytes(counter.as_slice().try_into().expect("8 bytes"));
            assert!(
                n > a / 7,
                "round {round}: counter {n} lost acknowledged merges (acked {a})"
            );
        },
    );
    assert!(
        acked.is_some_and(|a| a > 0),
        "the child never acknowledged a write"
    );
}

/// Whether process `pid` has a `.wal` file mapped.
fn maps_a_wal(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .map(|m| m.lines().any(|l| l.trim_end().ends_with(".wal")))
        .unwrap_or(false)
}

#[test]
fn sigkill_loses_no_acknowledged_os_write_written_through_the_mapping() {
    const TEST: &str = "sigkill_loses_no_acknowledged_os_write_written_through_the_mapping";
    run_child_if_asked(512 << 10, |db, i| {
        // Half the writes commit without waiting when they can (`try_put`).
        if i % 2 == 1 || !db.try_put(&key(i), &os_value(i)).expect("child try_put") {
            db.put(&key(i), &os_value(i)).expect("child put");
        }
    });
    let millis = [150u64, 400, 250, 700];
    kill_rounds(
        TEST,
        millis.len(),
        |round, proc| {
            let started = Instant::now();
            let mut mapped = false;
            while started.elapsed() < Duration::from_millis(millis[round]) || !mapped {
                std::thread::sleep(Duration::from_millis(5));
                mapped = mapped || maps_a_wal(proc.id());
                assert!(
                    started.elapsed() < Duration::from_secs(60),
                    "round {round}: the child never mapped a WAL segment"
                );
            }
        },
        |db, round, acked| {
            let a = acked.expect("the child acknowledged a write");
            assert_acknowledged(db, round, a, 5000, os_value);
        },
    );
}

/// Two of every three values are large enough (9-15 KiB, over the default
/// 4 KiB threshold) to be written to a blob file at commit, their pointer
/// in the WAL (docs/format.md#blob-files-written-at-commit); one in ten of
/// those is over 68 KiB, its record preceded by zeros to a whole 1 MiB.
fn large_value(i: u64) -> Vec<u8> {
    if i.is_multiple_of(3) {
        return os_value(i);
    }
    let len = if i % 10 == 1 {
        70_000 + (i % 4) as usize * 10_000
    } else {
        9_000 + (i % 7) as usize * 1_000
    };
    (0..len).map(|j| (i as usize * 13 + j) as u8).collect()
}

#[test]
fn sigkill_loses_no_acknowledged_large_value_written_at_commit() {
    const TEST: &str = "sigkill_loses_no_acknowledged_large_value_written_at_commit";
    // A small memtable: its blob file is sealed (and flushed) every few
    // hundred values, so kills land before, during and after sealing.
    run_child_if_asked(256 << 10, |db, i| {
        db.put(&key(i), &large_value(i)).expect("child put");
    });
    let mut rng = rand::thread_rng();
    kill_rounds(
        TEST,
        5,
        |_, _| std::thread::sleep(Duration::from_millis(rng.gen_range(100..700))),
        |db, round, acked| {
            let a = acked.expect("the child acknowledged a write");
            assert_acknowledged(db, round, a, 3000, large_value);
        },
    );
}

/// The 8-byte counter under `k`, 0 when missing.
fn counter_of(v: Option<Vec<u8>>) -> u64 {
    v.map_or(0, |v| u64::from_le_bytes(v.try_into().expect("8 bytes")))
}

#[test]
fn sigkill_loses_no_acknowledged_transaction_and_leaves_none_partial() {
    // Each transaction reads two counters and writes them with one key:
    // after a kill, the counters agree with the keys there, all or none.
    run_child_if_asked(256 << 10, |db, i| {
        let mut tx = db.transaction();
        let count = counter_of(tx.get(b"tx-count").expect("get"));
        let sum = counter_of(tx.get(b"tx-sum").expect("get"));
        tx.put(&key(i), &sync_value(i)).expect("put");
        tx.put(b"tx-count", &(count + 1).to_le_bytes())
            .expect("put");
        tx.put(b"tx-sum", &(sum + i).to_le_bytes()).expect("put");
        tx.commit_with(Durability::Sync).expect("child commit");
    });
    let mut rng = rand::thread_rng();
    let acked = kill_rounds(
        "sigkill_loses_no_acknowledged_transaction_and_leaves_none_partial",
        4,
        |_, _| std::thread::sleep(Duration::from_millis(rng.gen_range(50..600))),
        |db, round, acked| {
            if let Some(a) = acked {
                assert_acknowledged(db, round, a, 2000, sync_value);
            }
            let (mut n, mut total) = (0u64, 0u64);
            for item in db.range(&b"key"[..]..&b"kez"[..]) {
                let (k, _) = item.expect("entry");
                let i: u64 = String::from_utf8_lossy(k.get(3..).expect("digits"))
                    .parse()
                    .expect("key number");
                n += 1;
                total += i;
            }
            let count = counter_of(db.get(b"tx-count").expect("get"));
            let sum = counter_of(db.get(b"tx-sum").expect("get"));
            assert_eq!(
                (count, sum),
                (n, total),
                "round {round}: a partial transaction"
            );
        },
    );
    assert!(
        acked.is_some_and(|a| a > 0),
        "the child never acknowledged a transaction"
    );
}
