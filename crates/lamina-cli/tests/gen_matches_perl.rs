//! `lamina gen numbers N` prints exactly what the original Perl program
//! (`tests/fixtures/numbers.pl`, from "How well does a GNU dbm database
//! scale?") prints, byte for
//! byte, across the thousand, million and billion boundaries. Skipped when
//! perl is not installed.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;
use common::*;
use std::process::Command;

fn perl(n: u64) -> Vec<u8> {
    let script = testdata().join("fixtures/numbers.pl");
    let out = Command::new("perl")
        .arg(script)
        .arg(n.to_string())
        .output()
        .unwrap();
    assert!(out.status.success());
    out.stdout
}

/// The Perl program run from `start` instead of 0 (its loop start patched in
/// memory; the file stays as published), so that large numbers can be
/// compared without printing everything below them.
fn perl_from(start: u64, last: u64) -> Vec<u8> {
    let text = std::fs::read_to_string(testdata().join("fixtures/numbers.pl")).unwrap();
    let patched = text.replace("my $N=0;", &format!("my $N={start};"));
    assert_ne!(patched, text, "the loop start was not found");
    let out = Command::new("perl")
        .args(["-e", &patched, &last.to_string()])
        .output()
        .unwrap();
    assert!(out.status.success());
    out.stdout
}

#[test]
fn byte_identical_to_the_perl_program() {
    if !have("perl", "byte_identical_to_the_perl_program") {
        return;
    }
    for n in [1u64, 19, 20, 999, 1000, 1001, 20_000, 1_001_001] {
        let ours = ok(lamina_run(&["gen", "numbers", &n.to_string()]));
        let theirs = perl(n);
        assert_eq!(ours.len(), theirs.len(), "N = {n}");
        assert!(ours == theirs, "N = {n}: outputs differ");
    }
}

#[test]
fn large_numbers_match_the_perl_program() {
    if !have("perl", "large_numbers_match_the_perl_program") {
        return;
    }
    // The last generator record is the argument, so a range end is the N of
    // a run from 0; the patched Perl program starts at `start`.
    for (start, last) in [
        (999_999_990u64, 1_000_001_010u64),
        (123_456_780, 123_456_800),
        (999_999_999_990, 1_000_000_001_010),
    ] {
        let theirs = perl_from(start, last);
        let mut ours = Vec::new();
        let all = ok(lamina_run(&[
            "gen",
            "numbers",
            &last.to_string(),
            "--from",
            &start.to_string(),
        ]));
        ours.extend_from_slice(&all);
        assert!(ours == theirs, "{start}..={last} differ");
    }
}
