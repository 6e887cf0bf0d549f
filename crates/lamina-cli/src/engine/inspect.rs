//! Debug dumps of single files (a WAL segment, a table, the manifest). The
//! engine does not export readers for them yet; each dump says so.

use lamina::fs::FileSystem;
use lamina::{Error, Result};
use std::io::Write;
use std::path::Path;

fn unavailable(what: &str) -> Result<()> {
    Err(Error::InvalidArgument(format!(
        "{what} dumps are not available in this version of lamina"
    )))
}

/// Prints one WAL segment, one record per line.
pub fn dump_wal(_fs: &dyn FileSystem, _path: &Path, _out: &mut dyn Write) -> Result<()> {
    unavailable("WAL")
}

/// Prints one table, one entry per line.
pub fn dump_table(_fs: &dyn FileSystem, _path: &Path, _out: &mut dyn Write) -> Result<()> {
    unavailable("table")
}

/// Prints the manifest, one version edit per line.
pub fn dump_manifest(_fs: &dyn FileSystem, _path: &Path, _out: &mut dyn Write) -> Result<()> {
    unavailable("manifest")
}
