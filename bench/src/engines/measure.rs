//! What the kernel says (Linux): the bytes a process caused to be written to
//! storage (`/proc/self/io`), its peak resident set (`VmHWM` of
//! `/proc/self/status`, reset between workloads through
//! `/proc/self/clear_refs`), and the disk space a directory takes.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Bytes of disk a directory's files take (allocated blocks, as `du`
/// counts them): a sparse or preallocated-by-`set_len` file counts what it
/// holds, not its length.
pub fn disk_usage(path: &Path) -> u64 {
    let Ok(meta) = fs::symlink_metadata(path) else {
        return 0;
    };
    let own = meta.blocks() * 512;
    if !meta.is_dir() {
        return own;
    }
    let below: u64 = fs::read_dir(path)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| disk_usage(&e.path()))
                .sum()
        })
        .unwrap_or(0);
    own + below
}

/// `write_bytes` of `/proc/self/io`: bytes this process (every thread of
/// it) caused to be sent to storage, counted when pages are dirtied. `None`
/// where the file cannot be read.
pub fn write_bytes() -> Option<u64> {
    proc_field("/proc/self/io", "write_bytes:")
}

/// The peak resident set since the process started or since the last
/// [`reset_peak_rss`], in bytes.
pub fn peak_rss() -> Option<u64> {
    proc_field("/proc/self/status", "VmHWM:").map(|kb| kb * 1024)
}

/// Resets the peak resident set to the current one (Linux 4.0 and later);
/// false where the kernel refuses.
pub fn reset_peak_rss() -> bool {
    fs::write("/proc/self/clear_refs", "5").is_ok()
}

fn proc_field(file: &str, name: &str) -> Option<u64> {
    let text = fs::read_to_string(file).ok()?;
    let line = text.lines().find(|l| l.starts_with(name))?;
    line.get(name.len()..)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_files_count_what_they_hold() {
        let dir = tempfile::tempdir().unwrap();
        let f = fs::File::create(dir.path().join("sparse")).unwrap();
        f.set_len(64 << 20).unwrap();
        fs::write(dir.path().join("full"), vec![1u8; 1 << 20]).unwrap();
        let used = disk_usage(dir.path());
        assert!((1 << 20..8 << 20).contains(&used), "{used}");
    }

    #[test]
    fn the_kernel_answers() {
        assert!(peak_rss().is_some_and(|b| b > 0));
        let before = write_bytes();
        if let Some(b) = before {
            let dir = tempfile::tempdir().unwrap();
            let f = dir.path().join("x");
            fs::write(&f, vec![7u8; 1 << 20]).unwrap();
            let after = write_bytes().unwrap();
            // Counted when the pages are dirtied (not where the kernel
            // keeps no account of it, e.g. some container file systems).
            assert!(after >= b);
        }
    }
}
