//! The commit pipeline's tests: gathering, syncing and publishing with
//! writers on threads.

use super::*;
use std::sync::Arc;

/// A pipeline whose last cycle saw `writers` durable writers and whose
/// syncer gathers for `limit` at most.
fn after_a_cycle_of(writers: usize, limit: Duration) -> (Pipeline, AtomicU64) {
    let p = Pipeline::default();
    let visible = AtomicU64::new(0);
    p.state.lock().gather_limit = Some(limit);
    let present: Vec<_> = (0..writers).map(|_| p.durable_writer()).collect();
    let t = p.handed_to_wal();
    p.inserted();
    p.finish(&visible, 0, 1, t, || {
        std::thread::sleep(Duration::from_millis(2));
        Ok(t)
    })
    .unwrap();
    drop(present);
    (p, visible)
}

#[test]
fn a_syncer_gathers_the_writers_it_expects() {
    gathers_the_writers_it_expects(None);
}

#[test]
fn a_syncer_gathers_yielding_while_its_writers_yield() {
    // Syncs of 100 µs: waiters, and so the syncer, yield.
    gathers_the_writers_it_expects(Some(100_000));
}

/// A syncer expecting two records waits (up to 30 s) for the second,
/// and one sync covers both; `yielding`: the syncs' average when
/// waiters yield (`None`: they sleep). A yielding syncer sees the second
/// record once it is handed to the WAL, before its writer finishes and
/// wakes anyone; a sleeping one is woken by that finish.
fn gathers_the_writers_it_expects(yielding: Option<u64>) {
    let (p, visible) = after_a_cycle_of(2, Duration::from_secs(30));
    if let Some(sync_nanos) = yielding {
        let mut s = p.state.lock();
        s.wait = CommitWait::yielding();
        s.sync_nanos = sync_nanos;
        assert_eq!(s.wait.wait(sync_nanos), Wait::Yield);
    }
    let p = Arc::new(p);
    let visible = Arc::new(visible);
    let syncs = Arc::new(Mutex::new(Vec::new()));
    let t2 = p.handed_to_wal();
    p.inserted();
    let first = {
        let (p, visible, syncs) = (Arc::clone(&p), Arc::clone(&visible), Arc::clone(&syncs));
        std::thread::spawn(move || {
            p.finish(&visible, 1, 2, t2, || {
                let covered = p.written();
                syncs.lock().push(covered);
                Ok(covered)
            })
        })
    };
    let waiting = Instant::now();
    while p.state.lock().gather_until == 0 {
        assert!(
            waiting.elapsed() < Duration::from_secs(10),
            "the syncer never gathered"
        );
        std::thread::yield_now();
    }
    assert!(
        syncs.lock().is_empty(),
        "the syncer waits for the second writer"
    );
    let t3 = p.handed_to_wal();
    p.inserted();
    if yielding.is_some() {
        let handed = Instant::now();
        while syncs.lock().is_empty() {
            assert!(
                handed.elapsed() < Duration::from_secs(10),
                "the syncer did not see the record come"
            );
            std::thread::yield_now();
        }
    }
    p.finish(&visible, 2, 3, t3, || {
        syncs.lock().push(0);
        Ok(0)
    })
    .unwrap();
    first.join().unwrap().unwrap();
    assert_eq!(*syncs.lock(), vec![3], "one sync covered both records");
    assert_eq!(visible.load(Ordering::Acquire), 3);
}

#[test]
fn a_syncer_stops_gathering_for_a_writer_that_does_not_come() {
    let (p, visible) = after_a_cycle_of(4, Duration::from_millis(5));
    let t2 = p.handed_to_wal();
    p.inserted();
    let started = Instant::now();
    p.finish(&visible, 1, 2, t2, || Ok(2)).unwrap();
    assert!(
        started.elapsed() >= Duration::from_micros(500),
        "it gathered"
    );
    assert_eq!(visible.load(Ordering::Acquire), 2);
}

#[test]
fn a_lone_writer_never_gathers() {
    let (p, visible) = after_a_cycle_of(1, Duration::from_secs(30));
    // Were it to gather, each sync would wait the whole 30 s.
    p.state.lock().sync_nanos = 120_000_000_000;
    let _me = p.durable_writer();
    for seq in 2..=20 {
        let t = p.handed_to_wal();
        p.inserted();
        let started = Instant::now();
        p.finish(&visible, seq - 1, seq, t, || Ok(t)).unwrap();
        assert!(started.elapsed() < Duration::from_secs(10), "it gathered");
    }
    assert_eq!(visible.load(Ordering::Acquire), 20);
}

#[test]
fn a_covered_ticket_needs_no_sync() {
    let p = Pipeline::default();
    let visible = AtomicU64::new(0);
    let t1 = p.handed_to_wal();
    let t2 = p.handed_to_wal();
    let calls = AtomicU64::new(0);
    let sync = || {
        calls.fetch_add(1, Ordering::Relaxed);
        Ok(2)
    };
    p.finish(&visible, 0, 1, t1, sync).unwrap();
    p.finish(&visible, 1, 2, t2, sync).unwrap();
    assert_eq!(
        calls.load(Ordering::Relaxed),
        1,
        "the second record rode on the first sync"
    );
    assert_eq!(visible.load(Ordering::Acquire), 2);
}

#[test]
fn a_failed_sync_fails_every_writer_it_did_not_make_durable() {
    let p = Pipeline::default();
    let visible = AtomicU64::new(0);
    let t1 = p.handed_to_wal();
    p.finish(&visible, 0, 1, t1, || Ok(1)).unwrap();
    let t2 = p.handed_to_wal();
    let t3 = p.handed_to_wal();
    let err = p.finish(&visible, 1, 2, t2, || Err(crate::Error::Closed));
    assert!(matches!(err, Err(crate::Error::Closed)), "{err:?}");
    let err = p.finish(&visible, 2, 3, t3, || panic!("no sync after a failed one"));
    assert!(matches!(err, Err(crate::Error::Closed)), "{err:?}");
    // Published all the same: nothing waits for them forever.
    assert_eq!(visible.load(Ordering::Acquire), 3);
    p.wait_published(3);
}

/// A pipeline whose first writer (seqno 1) is syncing, its sync held
/// until the sender returned sends; that writer's thread.
fn a_syncer_held_at_a_gate() -> (
    Arc<Pipeline>,
    Arc<AtomicU64>,
    std::thread::JoinHandle<Result<()>>,
    std::sync::mpsc::Sender<()>,
) {
    let p = Arc::new(Pipeline::default());
    let visible = Arc::new(AtomicU64::new(0));
    let t1 = p.handed_to_wal();
    let (gate_tx, gate_rx) = std::sync::mpsc::channel::<()>();
    let gate = std::sync::Mutex::new(gate_rx);
    let syncer = {
        let (p, visible) = (Arc::clone(&p), Arc::clone(&visible));
        std::thread::spawn(move || {
            p.finish(&visible, 0, 1, t1, || {
                gate.lock().unwrap().recv().unwrap();
                Ok(1)
            })
        })
    };
    while !p.state.lock().syncing {
        std::thread::yield_now();
    }
    (p, visible, syncer, gate_tx)
}

/// Finishes the second writer (seqno 2, ticket `t2`) of a pipeline
/// whose syncer is held at the gate of `gate_tx`, which another thread
/// opens after 50 ms; checks that it returned only once the sync
/// covered its record.
fn finish_once_the_gate_opens(
    p: &Pipeline,
    visible: &AtomicU64,
    t2: u64,
    gate_tx: std::sync::mpsc::Sender<()>,
) {
    let opened = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let opener = {
        let opened = Arc::clone(&opened);
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            opened.store(true, Ordering::Release);
            gate_tx.send(()).unwrap();
        })
    };
    p.finish(visible, 1, 2, t2, || Ok(2)).unwrap();
    assert!(
        opened.load(Ordering::Acquire),
        "returned before any sync covered its record"
    );
    assert!(p.synced.load(Ordering::Acquire) >= t2);
    opener.join().unwrap();
}

#[test]
fn a_sync_writer_is_not_visible_before_its_record_is_durable() {
    let (p, visible, syncer, gate_tx) = a_syncer_held_at_a_gate();
    // A later writer that needs no sync waits for the earlier one.
    let later = {
        let (p, visible) = (Arc::clone(&p), Arc::clone(&visible));
        std::thread::spawn(move || p.publish(&visible, 1, 2))
    };
    while !p.state.lock().done.values().any(|w| w.asleep) {
        std::thread::yield_now();
    }
    assert_eq!(
        visible.load(Ordering::Acquire),
        0,
        "nothing before the sync"
    );
    gate_tx.send(()).unwrap();
    syncer.join().unwrap().unwrap();
    later.join().unwrap();
    assert_eq!(visible.load(Ordering::Acquire), 2);
}

/// Writers asleep are woken together, whoever the wake-up is for, and
/// one meant for a thread's earlier commit can reach it while it waits
/// for a later one: that wait must go on until its own record is
/// durable.
#[test]
fn a_wake_up_for_others_does_not_end_a_wait() {
    let (p, visible, syncer, gate_tx) = a_syncer_held_at_a_gate();
    let t2 = p.handed_to_wal();
    p.inserted();
    // Wake-ups for other writers, all the while this one waits.
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let waker = {
        let (p, stop) = (Arc::clone(&p), Arc::clone(&stop));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Acquire) {
                p.wake_all(&mut Wakes { any: true });
                std::thread::sleep(Duration::from_micros(200));
            }
        })
    };
    finish_once_the_gate_opens(&p, &visible, t2, gate_tx);
    assert_eq!(visible.load(Ordering::Acquire), 2);
    syncer.join().unwrap().unwrap();
    stop.store(true, Ordering::Release);
    waker.join().unwrap();
    assert!(
        p.epoch.0.load(Ordering::Acquire) > 10,
        "woken often meanwhile"
    );
}

/// A waiter told to yield first, whose sync outlasts its yielding,
/// sleeps, and returns only once the sync covers its record.
#[test]
fn a_yielding_waiter_sleeps_when_the_sync_outlasts_its_yielding() {
    let (p, visible, syncer, gate_tx) = a_syncer_held_at_a_gate();
    {
        let mut s = p.state.lock();
        s.wait = CommitWait::yielding();
        s.sync_nanos = 100_000;
        assert_eq!(s.wait.yield_for(s.sync_nanos), Duration::from_micros(200));
    }
    let t2 = p.handed_to_wal();
    p.inserted();
    finish_once_the_gate_opens(&p, &visible, t2, gate_tx);
    let (yielded, slept) = p.waits();
    assert!(yielded >= 1 && slept >= 1, "slept after yielding");
    syncer.join().unwrap().unwrap();
}

#[test]
fn ranges_are_published_in_seqno_order() {
    let p = Arc::new(Pipeline::default());
    let visible = Arc::new(AtomicU64::new(0));
    // 3..=4 finishes first and must wait for 1..=2.
    let late = {
        let (p, visible) = (Arc::clone(&p), Arc::clone(&visible));
        std::thread::spawn(move || p.publish(&visible, 2, 4))
    };
    while !p.state.lock().done.values().any(|w| w.asleep) {
        std::thread::yield_now();
    }
    assert_eq!(
        visible.load(Ordering::Acquire),
        0,
        "3..=4 is not visible before 1..=2"
    );
    p.publish(&visible, 0, 2);
    late.join().unwrap();
    assert_eq!(visible.load(Ordering::Acquire), 4);
    assert!(p.state.lock().done.is_empty());
}

/// Before the fix, a writer published only once `visible` reached its
/// first seqno minus one: seqnos an ingest reserved between two writers
/// (published by the ingest's install, under commit leadership, which
/// waited for that writer) left the writer and the ingest waiting for
/// each other (found by the model tests).
#[test]
fn seqnos_taken_by_an_ingest_between_writers_do_not_stall_them() {
    let p = Pipeline::default();
    let visible = AtomicU64::new(0);
    p.publish(&visible, 0, 10);
    // 11..=15 reserved by an ingest, not yet installed.
    p.publish(&visible, 10, 16);
    assert_eq!(visible.load(Ordering::Acquire), 16);
    p.wait_published(16);
}

#[test]
fn many_writers_share_syncs_and_publish_everything() {
    let p = Arc::new(Pipeline::default());
    let visible = Arc::new(AtomicU64::new(0));
    // The commit lock: a ticket and seqnos taken together.
    let seqnos = Arc::new(Mutex::new(0u64));
    let syncs = Arc::new(AtomicU64::new(0));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let (p, visible) = (Arc::clone(&p), Arc::clone(&visible));
            let (seqnos, syncs) = (Arc::clone(&seqnos), Arc::clone(&syncs));
            std::thread::spawn(move || {
                for _ in 0..200 {
                    let (t, prev, last) = {
                        let mut q = seqnos.lock();
                        let prev = *q;
                        *q += 1;
                        (p.handed_to_wal(), prev, *q)
                    };
                    p.inserted();
                    p.finish(&visible, prev, last, t, || {
                        syncs.fetch_add(1, Ordering::Relaxed);
                        let covered = p.written();
                        std::thread::sleep(std::time::Duration::from_micros(200));
                        Ok(covered)
                    })
                    .unwrap();
                    assert!(visible.load(Ordering::Acquire) >= last);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(p.synced.load(Ordering::Acquire), 1600);
    assert_eq!(visible.load(Ordering::Acquire), 1600);
    assert!(
        syncs.load(Ordering::Relaxed) < 1600,
        "some records shared a sync"
    );
    p.wait_for_inserts();
}

/// `applied` runs over inserted writers in seqno order, synced or not, and
/// stops at the first writer not yet entered; `visible` waits for the sync.
#[test]
fn applied_covers_inserted_writers_up_to_the_first_gap() {
    let p = Pipeline::default();
    let visible = AtomicU64::new(0);
    // Writers of seqnos 1-2 (record 1), 3-5 (record 2), 6 (no sync needed).
    let (t1, t2) = (p.handed_to_wal(), p.handed_to_wal());
    p.took(6);
    let enter = |prev, last, ticket| {
        let mut s = p.state.lock();
        p.enter(&mut s, &visible, prev, last, ticket);
    };
    enter(5, 6, 0);
    assert_eq!(p.applied(), 0, "the writers before it have not inserted");
    enter(2, 5, t2);
    assert_eq!(p.applied(), 0);
    enter(0, 2, t1);
    assert_eq!(p.applied(), 6, "every writer has inserted");
    assert_eq!(p.settled(), 6);
    assert_eq!(visible.load(Ordering::Acquire), 0, "nothing is synced yet");
    p.synced_to(t1, &visible);
    assert_eq!(visible.load(Ordering::Acquire), 2);
    assert_eq!(p.applied(), 6);
    p.synced_to(t2, &visible);
    assert_eq!(visible.load(Ordering::Acquire), 6);
    assert_eq!(p.applied(), 6);
}

/// A thread waiting for a writer's insert (a transaction's check at commit)
/// or for a writer's publication (a transaction beginning) past its spin
/// sleeps, and the insert or the publication wakes it.
#[test]
fn waiters_for_a_slow_writer_sleep_until_it_inserts_and_publishes() {
    let p = Arc::new(Pipeline::default());
    let visible = Arc::new(AtomicU64::new(0));
    let ticket = p.handed_to_wal();
    p.took(1);
    let (woke, woken) = std::sync::mpsc::channel();
    for i in 0..2 {
        let (p, woke) = (Arc::clone(&p), woke.clone());
        std::thread::spawn(move || {
            if i == 0 {
                p.wait_for_inserts();
                woke.send((i, 0)).unwrap();
            } else {
                woke.send((i, p.settled())).unwrap();
            }
        });
    }
    // Both waiters are asleep: the writer is descheduled far longer than
    // their spin.
    let asleep = std::time::Instant::now();
    while p.parked.load(Ordering::SeqCst) < 2 {
        assert!(asleep.elapsed() < std::time::Duration::from_secs(10));
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let wait = std::time::Duration::from_secs(10);
    p.inserted();
    assert_eq!(
        woken.recv_timeout(wait),
        Ok((0, 0)),
        "the insert woke its waiter"
    );
    p.finish(&visible, 0, 1, ticket, || Ok(p.written()))
        .unwrap();
    assert_eq!(
        woken.recv_timeout(wait),
        Ok((1, 1)),
        "the publication woke its waiter"
    );
}
