//! The rows run on an in-memory engine (a `BTreeMap`), whole and with one
//! fault at a time, to show that each check catches what it is for; the
//! sizes against the harness's; the child's lines and the comparison of
//! engines.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use super::driver::{disagreements, Row};
use super::*;
use std::collections::BTreeMap;
use std::sync::RwLock;

type Map = BTreeMap<Vec<u8>, Vec<u8>>;

/// One thing the in-memory engine gets wrong.
#[derive(Clone, Copy, PartialEq)]
enum Fault {
    None,
    /// Range reads stop one entry short.
    ShortRanges,
    /// `pop_first` removes the second entry.
    PopsSecond,
    /// Gets return a wrong first byte.
    WrongValues,
    /// `extract_if` sees one entry fewer than the range holds.
    ExtractSkipsFirst,
}

struct MapEngine {
    map: RwLock<Map>,
    fault: Fault,
    compactions: u32,
}

impl MapEngine {
    fn new(fault: Fault) -> MapEngine {
        MapEngine {
            map: RwLock::new(Map::new()),
            fault,
            compactions: 0,
        }
    }
}

struct MapWriter<'a> {
    map: &'a mut Map,
    fault: Fault,
}

impl Writer for MapWriter<'_> {
    fn insert(&mut self, key: &[u8], value: &[u8]) -> Result<(), String> {
        self.map.insert(key.to_vec(), value.to_vec());
        Ok(())
    }

    fn insert_sorted<'p>(
        &mut self,
        pairs: &mut dyn Iterator<Item = (&'p [u8], &'p [u8])>,
    ) -> Result<(), String> {
        for (k, v) in pairs {
            self.insert(k, v)?;
        }
        Ok(())
    }

    fn remove(&mut self, key: &[u8]) -> Result<(), String> {
        self.map.remove(key);
        Ok(())
    }

    fn pop_first(&mut self, seen: &mut dyn FnMut(&[u8])) -> Result<bool, String> {
        let skip = usize::from(self.fault == Fault::PopsSecond);
        let Some(k) = self.map.keys().nth(skip).cloned() else {
            return Ok(false);
        };
        self.map.remove(&k);
        seen(&k);
        Ok(true)
    }

    fn pop_last(&mut self, seen: &mut dyn FnMut(&[u8])) -> Result<bool, String> {
        let Some((k, _)) = self.map.pop_last() else {
            return Ok(false);
        };
        seen(&k);
        Ok(true)
    }

    fn retain(&mut self, keep: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<u64, String> {
        let before = self.map.len();
        self.map.retain(|k, v| keep(k, v));
        Ok((before - self.map.len()) as u64)
    }

    fn extract_if(
        &mut self,
        start: &[u8],
        end: &[u8],
        extract: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<u64, String> {
        let skip = usize::from(self.fault == Fault::ExtractSkipsFirst);
        let chosen: Vec<Vec<u8>> = self
            .map
            .range(start.to_vec()..end.to_vec())
            .skip(skip)
            .filter(|(k, v)| extract(k, v))
            .map(|(k, _)| k.clone())
            .collect();
        for k in &chosen {
            self.map.remove(k);
        }
        Ok(chosen.len() as u64)
    }
}

struct MapReader {
    map: Map,
    fault: Fault,
}

impl Reader for MapReader {
    fn get(&mut self, key: &[u8]) -> Result<Option<u8>, String> {
        let bump = u8::from(self.fault == Fault::WrongValues);
        Ok(self.map.get(key).map(|v| v[0].wrapping_add(bump)))
    }

    fn range_from(
        &mut self,
        start: &[u8],
        n: usize,
        visit: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<usize, String> {
        let n = if self.fault == Fault::ShortRanges && n < usize::MAX {
            n - 1
        } else {
            n
        };
        let mut seen = 0;
        for (k, v) in self.map.range(start.to_vec()..).take(n) {
            visit(k, v);
            seen += 1;
        }
        Ok(seen)
    }

    fn len(&mut self) -> Result<u64, String> {
        Ok(self.map.len() as u64)
    }
}

impl Engine for MapEngine {
    fn write(
        &mut self,
        _durable: bool,
        f: &mut dyn FnMut(&mut dyn Writer) -> Result<(), String>,
    ) -> Result<(), String> {
        let mut work = self.map.read().unwrap().clone();
        f(&mut MapWriter {
            map: &mut work,
            fault: self.fault,
        })?;
        *self.map.write().unwrap() = work;
        Ok(())
    }

    fn read(&self, f: &mut dyn FnMut(&mut dyn Reader) -> Result<(), String>) -> Result<(), String> {
        let map = self.map.read().unwrap().clone();
        f(&mut MapReader {
            map,
            fault: self.fault,
        })
    }

    fn compact(&mut self) -> Result<(), String> {
        self.compactions += 1;
        Ok(())
    }

    fn close(self: Box<Self>) -> Result<(), String> {
        Ok(())
    }
}

/// Runs the rows `ids` (all for none) on a `MapEngine` with `fault`;
/// returns what was reported, or the error.
fn run_on(fault: Fault, ids: &[&str], sizes: Sizes) -> (Result<Vec<Measured>, String>, MapEngine) {
    let mut db = MapEngine::new(fault);
    let ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
    let sel = Selection::new(&ids).unwrap();
    let mut got = Vec::new();
    let result = run_rows(&mut db, &sizes, &sel, &|| 1234, &mut |m| {
        got.push(m);
        Ok(())
    });
    (result.map(|()| got), db)
}

fn small() -> Sizes {
    Sizes::new(2_000)
}

#[test]
fn every_row_runs_once_in_the_harness_order() {
    let (got, db) = run_on(Fault::None, &[], small());
    let got = got.unwrap();
    let ids: Vec<&str> = got.iter().map(|m| m.id).collect();
    assert_eq!(ids, RUN_ORDER);
    assert_eq!(db.compactions, 1);
    // E = 2,000 + 1 + 1,000 + 20; what the checks saw.
    let check = |id: &str| got.iter().find(|m| m.id == id).unwrap().check.clone();
    assert_eq!(check("len"), "3021");
    assert_eq!(check("retain"), ((3021 - 3021 / 2) / 2).to_string());
    assert!(
        check("pop").starts_with("100 first + 100 last"),
        "{}",
        check("pop")
    );
    assert_eq!(check("sorted-inserts"), "400");
    let sizes: Vec<Option<u64>> = got.iter().filter_map(|m| m.bytes.map(Some)).collect();
    assert_eq!(sizes, [Some(1234), Some(1234)]);
    assert!(got.iter().all(|m| !m.estimated));
}

#[test]
fn a_slow_pop_is_estimated_and_the_rest_removed_by_retain() {
    let mut sizes = small();
    sizes.pop_sample_limit = Duration::ZERO;
    let (got, _) = run_on(Fault::None, &["pop", "uncompacted-size"], sizes);
    let got = got.unwrap();
    let pop = &got[0];
    assert_eq!(pop.id, "pop");
    assert!(pop.estimated);
    // Two pops sampled (the first 1%), one from each end; the rest by
    // retain, so the refill after it finds the table's length as before.
    assert!(pop.check.starts_with("1 first + 1 last"), "{}", pop.check);
    assert_eq!(pop.count, sizes.pops);
}

#[test]
fn each_fault_is_caught() {
    for (fault, says) in [
        (Fault::ShortRanges, "range reads ended before"),
        (
            Fault::PopsSecond,
            "first pop did not return the smallest key",
        ),
        (Fault::WrongValues, "random reads found"),
        (Fault::ExtractSkipsFirst, ""),
    ] {
        let (got, _) = run_on(fault, &[], small());
        match got {
            Err(e) => assert!(e.contains(says), "{e}"),
            // A fault no engine can see alone shows in the comparison.
            Ok(rows) => {
                assert!(fault == Fault::ExtractSkipsFirst);
                let (good, _) = run_on(Fault::None, &[], small());
                let mut all: Vec<Row> = good
                    .unwrap()
                    .into_iter()
                    .map(|m| Row {
                        engine: "good".into(),
                        m,
                    })
                    .collect();
                all.extend(rows.into_iter().map(|m| Row {
                    engine: "bad".into(),
                    m,
                }));
                // The first row to differ is extract_if (later ones may
                // follow: the table differs from there on).
                let notes = disagreements(&all);
                assert!(
                    notes[0].starts_with("extract_if: the engines disagree"),
                    "{notes:?}"
                );
            }
        }
    }
}

/// A pop rate estimated from a sample checked only the sample's pops: it is
/// held against the other estimates, not against an engine that popped all.
#[test]
fn estimates_are_compared_with_estimates() {
    let row = |engine: &str, check: &str, estimated: bool| Row {
        engine: engine.into(),
        m: Measured {
            id: "pop",
            count: 1,
            secs: 1.0,
            bytes: None,
            check: check.into(),
            estimated,
        },
    };
    let mixed = [
        row("a", "all", false),
        row("b", "sample", true),
        row("c", "all", false),
        row("d", "sample", true),
    ];
    assert!(disagreements(&mixed).is_empty());
    for (i, wrong) in [(1, true), (2, false)] {
        let mut rows = mixed.clone();
        rows[i] = row("x", "other", wrong);
        let notes = disagreements(&rows);
        assert!(
            notes[0].starts_with("pop: the engines disagree"),
            "{notes:?}"
        );
    }
}

#[test]
fn a_subset_stops_after_its_last_row() {
    let (got, db) = run_on(Fault::None, &["random-reads", "len"], small());
    let ids: Vec<&str> = got.unwrap().iter().map(|m| m.id).collect();
    assert_eq!(ids, ["len", "random-reads"]);
    assert_eq!(db.compactions, 0);
    // The write rows before it ran: every key the reads asked for was found.
    assert_eq!(db.map.read().unwrap().len(), 3021);
}

#[test]
fn an_unknown_row_is_named() {
    let err = Selection::new(&["bulk".to_string()]).err().unwrap();
    assert!(
        err.starts_with("unknown row bulk; these are: bulk-load,"),
        "{err}"
    );
}

#[test]
fn the_default_sizes_are_the_harness_constants() {
    let s = Sizes::new(BULK_ELEMENTS);
    assert_eq!(
        (s.individual, s.batches, s.nosync, s.reads, s.scans),
        (1_000, 100, 50_000, 1_000_000, 500_000)
    );
    assert_eq!(
        (s.pops, s.pop_sample, s.sorted),
        (500_000, 5_000, 1_000_000)
    );
    assert_eq!(s.elements(), 5_151_000);
    assert_eq!(s.pop_sample_limit, Duration::from_secs(1));
}

#[test]
fn the_stream_is_fastrands_seeded_with_3() {
    // A pair is the key's 24 bytes then the value's 150 from one generator.
    let mut s = Stream::new();
    s.next_pair();
    let mut rng = fastrand::Rng::with_seed(3);
    let mut bytes = [0u8; KEY_SIZE + VALUE_SIZE];
    rng.fill(&mut bytes[..KEY_SIZE]);
    rng.fill(&mut bytes[KEY_SIZE..]);
    assert_eq!(&s.key[..], &bytes[..KEY_SIZE]);
    assert_eq!(&s.value[..], &bytes[KEY_SIZE..]);
    // Pair n of a stream started there is pair n of the whole stream.
    let mut whole = Stream::new();
    for _ in 0..5 {
        whole.next_pair();
    }
    let mut from = Stream::from(4);
    from.next_pair();
    assert_eq!(whole.key, from.key);
}

#[test]
fn a_row_line_reads_back() {
    let row = Row {
        engine: "lamina".into(),
        m: Measured {
            id: "range-reads",
            count: 500,
            secs: 0.25,
            bytes: None,
            check: "4990 entries, first bytes summing to 6".into(),
            estimated: true,
        },
    };
    assert_eq!(Row::from_line(&row.to_line()), Some(row));
}
