//! A real process writing with `Durability::Sync` is killed with SIGKILL at
//! random moments; every write it acknowledged must be there after reopen.
//!
//! The test binary re-runs itself as the child (selected by an environment
//! variable), so no helper program is needed.

use lamina::{Batch, Db, Durability, Options};
use rand::Rng;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CHILD_ENV: &str = "LAMINA_KILL_CHILD_DB";

fn value(i: u64) -> Vec<u8> {
    format!("value-{i}-{}", "x".repeat((i % 50) as usize)).into_bytes()
}

/// The child: writes keys from `start` on, one Sync write each, and prints
/// each index once the write has returned.
fn child(path: &str) {
    let opts = Options {
        memtable_size: 256 << 10,
        ..Options::default()
    };
    let db = Db::open(path, opts).expect("child open");
    let start: u64 = std::env::var("LAMINA_KILL_START")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let mut out = std::io::stdout().lock();
    for i in start.. {
        let mut b = Batch::new();
        b.put(format!("key{i:010}").as_bytes(), &value(i));
        if i % 7 == 0 {
            b.merge(b"counter", &1u64.to_le_bytes());
        }
        db.write_with(b, Durability::Sync).expect("child write");
        writeln!(out, "{i}").expect("stdout");
        out.flush().expect("flush stdout");
    }
}

#[test]
fn sigkill_loses_no_acknowledged_write() {
    if let Ok(path) = std::env::var(CHILD_ENV) {
        child(&path);
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("db");
    let exe = std::env::current_exe().expect("current exe");
    let mut rng = rand::thread_rng();
    let mut acked: Option<u64> = None;
    for round in 0..6 {
        let start = acked.map_or(0, |a| a + 1);
        let mut proc = Command::new(&exe)
            .args([
                "--exact",
                "sigkill_loses_no_acknowledged_write",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, &path)
            .env("LAMINA_KILL_START", start.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn child");
        let stdout = proc.stdout.take().expect("child stdout");
        let lifetime = Duration::from_millis(rng.gen_range(50..600));
        let started = Instant::now();
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
        while started.elapsed() < lifetime {
            std::thread::sleep(Duration::from_millis(5));
        }
        // SIGKILL: no destructor, no flush, no close runs in the child.
        proc.kill().expect("kill child");
        proc.wait().expect("reap child");
        let last = reader.join().expect("reader thread");
        if let Some(l) = last {
            acked = Some(l);
        }
        let db = Db::open(&path, Options::default()).expect("reopen after kill");
        if let Some(a) = acked {
            for i in (0..=a).rev().take(2000) {
                let got = db.get(format!("key{i:010}").as_bytes()).expect("get");
                assert_eq!(
                    got,
                    Some(value(i)),
                    "round {round}: acknowledged key {i} of {a} is missing or wrong"
                );
            }
            let counter = db
                .get(b"counter")
                .expect("get counter")
                .expect("counter exists");
            let n = u64::from_le_bytes(counter.as_slice().try_into().expect("8 bytes"));
            assert!(
                n > a / 7,
                "round {round}: counter {n} lost acknowledged merges (acked {a})"
            );
        }
        let report = db.check().expect("check");
        assert!(report.is_ok(), "round {round}: {:?}", report.problems);
        // Keys written after the last acknowledgement may or may not be there;
        // continue writing after whatever survived.
        if let Some(Ok((k, _))) = db.range(&b"key"[..]..&b"kez"[..]).next_back() {
            let n: u64 = String::from_utf8_lossy(&k[3..])
                .parse()
                .expect("key number");
            acked = Some(acked.map_or(n, |a| a.max(n)));
        }
        db.close().expect("close");
    }
    assert!(
        acked.is_some_and(|a| a > 0),
        "the child never acknowledged a write"
    );
}
