//! What the kernel and the device say around the lookups (Linux): the reads
//! the block device under a directory completed (`/sys/dev/block/M:m/stat`,
//! every process's), the bytes this process caused to be read from storage
//! (`read_bytes` of `/proc/self/io`, every thread's), dropping the page
//! cache, and `fio`'s random 4 KiB reads, the device's own limit.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The block device a directory's file system is on, by its statistics
/// file; `None` for a file system on no block device (tmpfs, overlay,
/// btrfs's anonymous devices).
pub struct BlockDevice {
    stat: PathBuf,
}

impl BlockDevice {
    /// The device under `dir`.
    pub fn of(dir: &Path) -> Option<BlockDevice> {
        let dev = std::fs::metadata(dir).ok()?.dev();
        // Linux's encoding of a device number (glibc's major() and minor()).
        let major = ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0x0000_0fff);
        let minor = ((dev >> 12) & 0xffff_ff00) | (dev & 0x0000_00ff);
        let stat = PathBuf::from(format!("/sys/dev/block/{major}:{minor}/stat"));
        stat.is_file().then_some(BlockDevice { stat })
    }

    /// Bytes written so far (the seventh field, sectors of 512 bytes).
    pub fn written_bytes(&self) -> Option<u64> {
        let text = std::fs::read_to_string(&self.stat).ok()?;
        let sectors: u64 = text.split_whitespace().nth(6)?.parse().ok()?;
        Some(sectors * 512)
    }

    /// Reads completed so far (the first field: merged requests count
    /// once).
    pub fn reads(&self) -> Option<u64> {
        std::fs::read_to_string(&self.stat)
            .ok()?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    }
}

/// `read_bytes` of `/proc/self/io`: bytes this process (every thread of
/// it) caused to be fetched from storage, page faults on mapped files
/// included; `None` where the file cannot be read.
pub fn read_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/io").ok()?;
    let line = text.lines().find(|l| l.starts_with("read_bytes:"))?;
    line.get("read_bytes:".len()..)?.trim().parse().ok()
}

/// Writes dirty pages back and drops the page cache (root only); the
/// reason when it cannot.
pub fn drop_page_cache() -> Result<(), String> {
    let _ = Command::new("sync").status();
    std::fs::write("/proc/sys/vm/drop_caches", "3")
        .map_err(|e| format!("the page cache could not be dropped (/proc/sys/vm/drop_caches: {e})"))
}

/// What `fio` measured at one queue depth.
#[derive(Debug, Clone, PartialEq)]
pub struct Fio {
    /// Requests in flight.
    pub depth: u32,
    /// Reads a second.
    pub iops: f64,
    /// Median completion latency, nanoseconds.
    pub p50_ns: u64,
    /// 99th percentile of the same.
    pub p99_ns: u64,
}

/// `fio` reading random 4 KiB blocks of the file `file` (`size` bytes,
/// laid out by fio first, untimed) with direct I/O through libaio, `depth`
/// requests in flight, for `seconds`.
pub fn fio(file: &Path, size: u64, depth: u32, seconds: u64) -> Result<Fio, String> {
    let out = Command::new("fio")
        .arg("--name=scale-reads")
        .arg(format!("--filename={}", file.display()))
        .arg(format!("--size={size}"))
        .args([
            "--rw=randread",
            "--bs=4k",
            "--direct=1",
            "--ioengine=libaio",
        ])
        .arg(format!("--iodepth={depth}"))
        .arg(format!("--runtime={seconds}"))
        .args(["--time_based", "--percentile_list=50:99", "--minimal"])
        .output()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                "fio not found: install it (`make bench-setup` installs Debian's fio)".to_string()
            }
            _ => format!("fio: {e}"),
        })?;
    if !out.status.success() {
        return Err(format!(
            "fio failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    parse_terse(&text, depth).ok_or_else(|| format!("fio printed what this cannot read: {text}"))
}

/// Reads fio's terse output (version 3): the read IOPS is field 8, the
/// read completion latency's percentiles follow as `P%=MICROSECONDS`.
fn parse_terse(text: &str, depth: u32) -> Option<Fio> {
    let line = text.lines().find(|l| l.starts_with("3;"))?;
    let fields: Vec<&str> = line.split(';').collect();
    let iops = fields.get(7)?.parse().ok()?;
    let percentile = |p: &str| -> Option<u64> {
        let us: u64 = fields
            .iter()
            .find_map(|f| f.strip_prefix(p))?
            .parse()
            .ok()?;
        Some(us * 1000)
    };
    Some(Fio {
        depth,
        iops,
        p50_ns: percentile("50.000000%=")?,
        p99_ns: percentile("99.000000%=")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_terse_output_is_read() {
        // fio 3.33's line for a second of `fio()`'s reads at depth 1 of a
        // 16 MiB file on a virtual disk.
        let line = "3;fio-3.33;scale-reads;0;0;27868;27840;6960;1001;10;5685;33.452942;\
            68.932425;1;8869;108.247856;468.249133;50.000000%=60;99.000000%=1597;0%=0;0%=0;\
            0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;\
            60;8895;141.700797;474.060731;28688;28688;100.000000%;28688.000000;0.000000;0;0;\
            0;0;0;0;0.000000;0.000000;0;0;0.000000;0.000000;50.000000%=0;99.000000%=0;0%=0;\
            0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;\
            0%=0;0;0;0.000000;0.000000;0;0;0.000000%;0.000000;0.000000;5.800000%;25.800000%;\
            6922;0;12;100.0%;0.0%;0.0%;0.0%;0.0%;0.0%;0.0%;0.13%;0.53%;0.01%;0.00%;13.36%;\
            81.50%;3.16%;0.09%;0.10%;0.03%;0.13%;0.56%;0.40%;0.00%;0.00%;0.00%;0.00%;0.00%;\
            0.00%;0.00%;0.00%;0.00%;vda;5757;0;79;0;494;0;493;46.53%";
        let f = parse_terse(line, 1).unwrap();
        assert_eq!(
            f,
            Fio {
                depth: 1,
                iops: 6960.0,
                p50_ns: 60_000,
                p99_ns: 1_597_000
            }
        );
        assert!(parse_terse("fio: no such file", 1).is_none());
    }
}
