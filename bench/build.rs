//! Records the versions of the peers' crates, from Cargo.lock, for the
//! tables' headers (`LAMINA_BENCH_PEER_VERSIONS`: `name=version;...`).

use std::path::Path;

const CRATES: [&str; 8] = [
    "rocksdb",
    "librocksdb-sys",
    "heed",
    "lmdb-master-sys",
    "redb",
    "fjall",
    "rusqlite",
    "libsqlite3-sys",
];

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let lock = Path::new(&dir).join("Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    let text = std::fs::read_to_string(&lock).unwrap_or_default();
    let mut found = Vec::new();
    let mut name = None;
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("name = ") {
            name = Some(n.trim_matches('"').to_string());
        } else if let Some(v) = line.strip_prefix("version = ") {
            if let Some(n) = name.take() {
                if CRATES.contains(&n.as_str()) {
                    found.push(format!("{n}={}", v.trim_matches('"')));
                }
            }
        }
    }
    println!(
        "cargo:rustc-env=LAMINA_BENCH_PEER_VERSIONS={}",
        found.join(";")
    );
}
