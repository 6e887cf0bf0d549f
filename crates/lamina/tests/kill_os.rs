//! A real process writing with the default durability (`Os`, copied into a
//! shared mapping of the WAL segment, docs/design.md#durability-contract)
//! is killed with SIGKILL while it writes; every write it acknowledged must
//! be there after reopen — the mapped pages belong to the kernel's page
//! cache, not to the process. Each round also checks, in `/proc`, that the
//! child really had a WAL segment mapped when it was killed.
//!
//! The test binary re-runs itself as the child (selected by an environment
//! variable), so no helper program is needed.

use lamina::{Db, Options};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CHILD_ENV: &str = "LAMINA_KILL_OS_CHILD_DB";

fn value(i: u64) -> Vec<u8> {
    format!("os-value-{i}-{}", "y".repeat((i % 60) as usize)).into_bytes()
}

/// The child: puts keys from `start` on with the default durability and
/// prints each index once its put has returned.
fn child(path: &str) {
    let opts = Options {
        memtable_size: 512 << 10,
        ..Options::default()
    };
    let db = Db::open(path, opts).expect("child open");
    let start: u64 = std::env::var("LAMINA_KILL_START")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let mut out = std::io::stdout().lock();
    for i in start.. {
        db.put(format!("key{i:010}").as_bytes(), &value(i))
            .expect("child put");
        writeln!(out, "{i}").expect("stdout");
        out.flush().expect("flush stdout");
    }
}

/// Whether process `pid` has a `.wal` file mapped.
fn maps_a_wal(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .map(|m| m.lines().any(|l| l.trim_end().ends_with(".wal")))
        .unwrap_or(false)
}

#[test]
fn sigkill_loses_no_acknowledged_os_write_written_through_the_mapping() {
    if let Ok(path) = std::env::var(CHILD_ENV) {
        child(&path);
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("db");
    let exe = std::env::current_exe().expect("current exe");
    let mut acked: Option<u64> = None;
    for (round, millis) in [150u64, 400, 250, 700].into_iter().enumerate() {
        let start = acked.map_or(0, |a| a + 1);
        let mut proc = Command::new(&exe)
            .args([
                "--exact",
                "sigkill_loses_no_acknowledged_os_write_written_through_the_mapping",
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
        let started = Instant::now();
        let mut mapped = false;
        while started.elapsed() < Duration::from_millis(millis) || !mapped {
            std::thread::sleep(Duration::from_millis(5));
            mapped = mapped || maps_a_wal(proc.id());
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "round {round}: the child never mapped a WAL segment"
            );
        }
        // SIGKILL: no destructor, no flush, no close runs in the child.
        proc.kill().expect("kill child");
        proc.wait().expect("reap child");
        if let Some(l) = reader.join().expect("reader thread") {
            acked = Some(l);
        }
        let db = Db::open(&path, Options::default()).expect("reopen after kill");
        let a = acked.expect("the child acknowledged a write");
        for i in (0..=a).rev().take(5000) {
            let got = db.get(format!("key{i:010}").as_bytes()).expect("get");
            assert_eq!(
                got,
                Some(value(i)),
                "round {round}: acknowledged key {i} of {a} is missing or wrong"
            );
        }
        let report = db.check().expect("check");
        assert!(report.is_ok(), "round {round}: {:?}", report.problems);
        // Keys after the last acknowledgement may or may not be there.
        if let Some(Ok((k, _))) = db.range(&b"key"[..]..&b"kez"[..]).next_back() {
            let n: u64 = String::from_utf8_lossy(&k[3..])
                .parse()
                .expect("key number");
            acked = Some(a.max(n));
        }
        db.close().expect("close");
    }
}
