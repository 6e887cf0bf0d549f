//! The names of the files in a database directory: making them, recognising
//! them, listing them, and pointing `CURRENT` at a manifest. Open, flush,
//! compaction, the version set, check, backup, blob and ingest code all name
//! files through here, so there is one spelling of each.
//!
//! Layout: docs/format.md#directory, docs/format.md#current.

use crate::error::{Error, Result};
use crate::fs::FileSystem;
use std::path::{Path, PathBuf};

/// The kinds of file in a database directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// `NNNNNN.wal`
    Wal,
    /// `NNNNNN.sst`
    Table,
    /// `MANIFEST-NNNNNN`
    Manifest,
    /// `CURRENT`
    Current,
    /// `LOCK`
    Lock,
    /// `*.tmp`
    Temp,
    /// `NNNNNN.blob`
    Blob,
    /// `NNNNNN.reader`: the files a read-only handle uses (`crate::reader_pins`).
    Reader,
}

/// The name of a file of `kind` with `number` (ignored for CURRENT and LOCK).
pub fn file_name(kind: FileKind, number: u64) -> String {
    match kind {
        FileKind::Wal => format!("{number:06}.wal"),
        FileKind::Table => format!("{number:06}.sst"),
        FileKind::Manifest => format!("MANIFEST-{number:06}"),
        FileKind::Current => "CURRENT".into(),
        FileKind::Lock => "LOCK".into(),
        FileKind::Temp => format!("{number:06}.tmp"),
        FileKind::Blob => format!("{number:06}.blob"),
        FileKind::Reader => format!("{number:06}.reader"),
    }
}

/// The path of the file of `kind` with `number` in database directory `dir`.
pub fn path(dir: &Path, kind: FileKind, number: u64) -> PathBuf {
    dir.join(file_name(kind, number))
}

/// The path of a temporary file in `dir`: `<stem>.tmp`, which open removes
/// if a crash leaves it behind.
pub fn temp_path(dir: &Path, stem: &str) -> PathBuf {
    dir.join(format!("{stem}.tmp"))
}

/// Recognises a file name of a database directory.
pub fn parse_file_name(name: &str) -> Option<(FileKind, u64)> {
    let num = |s: &str| -> Option<u64> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        s.parse().ok()
    };
    if name == "CURRENT" {
        return Some((FileKind::Current, 0));
    }
    if name == "LOCK" {
        return Some((FileKind::Lock, 0));
    }
    if let Some(n) = name.strip_prefix("MANIFEST-") {
        return Some((FileKind::Manifest, num(n)?));
    }
    if name.ends_with(".tmp") {
        return Some((FileKind::Temp, 0));
    }
    let (stem, ext) = name.split_once('.')?;
    match ext {
        "wal" => Some((FileKind::Wal, num(stem)?)),
        "sst" => Some((FileKind::Table, num(stem)?)),
        "blob" => Some((FileKind::Blob, num(stem)?)),
        "reader" => Some((FileKind::Reader, num(stem)?)),
        _ => None,
    }
}

/// The names of the entries of directory `dir`.
pub fn list(fs: &dyn FileSystem, dir: &Path) -> Result<Vec<String>> {
    fs.list_dir(dir).map_err(|e| Error::io(dir, e))
}

/// The numbers of the WAL segments among directory entries `names` that are
/// numbered `from` or above, ascending.
pub fn wal_numbers(names: &[String], from: u64) -> Vec<u64> {
    let mut wals: Vec<u64> = names
        .iter()
        .filter_map(|n| match parse_file_name(n) {
            Some((FileKind::Wal, num)) if num >= from => Some(num),
            _ => None,
        })
        .collect();
    wals.sort_unstable();
    wals
}

/// Points `CURRENT` in `dir` at `MANIFEST-<number>`, atomically: written to
/// `CURRENT.tmp`, synced, renamed, directory synced.
/// Layout: docs/format.md#current.
pub fn set_current(fs: &dyn FileSystem, dir: &Path, number: u64) -> Result<()> {
    let tmp = temp_path(dir, "CURRENT");
    let dst = path(dir, FileKind::Current, 0);
    let mut f = fs.create(&tmp).map_err(|e| Error::io(&tmp, e))?;
    f.append(format!("{}\n", file_name(FileKind::Manifest, number)).as_bytes())
        .and_then(|()| f.sync_data())
        .map_err(|e| Error::io(&tmp, e))?;
    drop(f);
    fs.rename(&tmp, &dst).map_err(|e| Error::io(&dst, e))?;
    fs.sync_dir(dir).map_err(|e| Error::io(dir, e))
}

/// Reads `CURRENT` in `dir`: the path and number of the manifest it names.
/// Layout: docs/format.md#current.
pub fn read_current(fs: &dyn FileSystem, dir: &Path) -> Result<(PathBuf, u64)> {
    let current_path = path(dir, FileKind::Current, 0);
    let current = fs
        .read_all(&current_path)
        .map_err(|e| Error::io(&current_path, e))?;
    std::str::from_utf8(&current)
        .ok()
        .and_then(|s| s.strip_suffix('\n'))
        .and_then(|s| match parse_file_name(s) {
            Some((FileKind::Manifest, n)) => Some((dir.join(s), n)),
            _ => None,
        })
        .ok_or_else(|| Error::corruption(&current_path, 0, "CURRENT does not name a manifest"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::MemFs;

    #[test]
    fn file_names_round_trip() {
        for kind in [
            FileKind::Wal,
            FileKind::Table,
            FileKind::Manifest,
            FileKind::Blob,
        ] {
            assert_eq!(
                parse_file_name(&file_name(kind, 1234567)),
                Some((kind, 1234567))
            );
        }
        assert_eq!(parse_file_name("CURRENT"), Some((FileKind::Current, 0)));
        assert_eq!(parse_file_name("LOCK"), Some((FileKind::Lock, 0)));
        assert_eq!(
            parse_file_name("bulk-1-2-run000003.tmp"),
            Some((FileKind::Temp, 0))
        );
        assert_eq!(parse_file_name("000001.txt"), None);
        assert_eq!(parse_file_name("x.sst"), None);
        assert_eq!(parse_file_name("MANIFEST-"), None);
    }

    #[test]
    fn wal_numbers_are_sorted_and_filtered() {
        let names: Vec<String> = [
            "000009.wal",
            "000003.wal",
            "000004.sst",
            "000001.wal",
            "LOCK",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(wal_numbers(&names, 3), [3, 9]);
    }

    #[test]
    fn current_names_the_manifest_it_was_set_to() {
        let fs = MemFs::new();
        let dir = Path::new("/db");
        fs.create_dir_all(dir).unwrap();
        set_current(&fs, dir, 42).unwrap();
        assert_eq!(
            read_current(&fs, dir).unwrap(),
            (dir.join("MANIFEST-000042"), 42)
        );
        assert!(!fs
            .list_dir(dir)
            .unwrap()
            .iter()
            .any(|n| n.ends_with(".tmp")));
    }

    #[test]
    fn current_naming_something_else_is_corruption() {
        let fs = MemFs::new();
        let dir = Path::new("/db");
        fs.create_dir_all(dir).unwrap();
        let mut f = fs.create(&dir.join("CURRENT")).unwrap();
        f.append(b"000001.sst\n").unwrap();
        drop(f);
        let err = read_current(&fs, dir).unwrap_err().to_string();
        assert!(err.contains("CURRENT does not name a manifest"), "{err}");
    }
}
