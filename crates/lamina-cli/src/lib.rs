//! The parts of the `lamina` command-line tool that other programs of this
//! repository build on: the benchmark package (`bench/`, the `lamina-bench`
//! binary) opens its databases, reads `--memory-budget` and `--option`,
//! shows progress and generates the numbers-in-English records through the same code
//! as `lamina` itself, so the two never drift apart. Parsing and the
//! subcommands stay in the binary (`main.rs`, `cmd/`).

pub mod engine;
pub mod error;
pub mod global;
pub mod numbers;
pub mod progress;
pub mod size;

/// lamina's version (the workspace's, which every crate of it shares).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
