//! Records the versions of the peers' crates, from Cargo.lock, for the
//! tables' headers (`LAMINA_BENCH_PEER_VERSIONS`: `name=version;...`), and
//! compiles the Berkeley DB peer's C calls (bdb_shim.c) where the library
//! is installed: then `cfg(bdb_linked)` is set.

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
    peer_versions();
    berkeley_db();
}

/// Compiles bdb_shim.c and links Debian's libdb-5.3 when the `bdb` feature
/// is on and the library's header is installed; else the peer is left out,
/// with a warning that says why.
fn berkeley_db() {
    println!("cargo::rustc-check-cfg=cfg(bdb_linked)");
    println!("cargo:rerun-if-changed=bdb_shim.c");
    if std::env::var_os("CARGO_FEATURE_BDB").is_none() {
        return;
    }
    match cc::Build::new()
        .file("bdb_shim.c")
        .warnings(true)
        .cargo_warnings(false)
        .try_compile("lamina_bench_bdb")
    {
        Ok(()) => {
            println!("cargo:rustc-link-lib=db-5.3");
            println!("cargo:rustc-cfg=bdb_linked");
        }
        Err(_) => println!(
            "cargo:warning=Berkeley DB left out of scale-reads: bdb_shim.c did not \
             compile (Debian's libdb5.3-dev missing? bench/setup installs it)"
        ),
    }
}

/// `LAMINA_BENCH_PEER_VERSIONS` from Cargo.lock.
fn peer_versions() {
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
