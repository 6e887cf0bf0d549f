//! Berkeley DB 5.3: bench/tpcb_bdb.c, compiled on first use (and again
//! when the source is newer) against Debian's libdb5.3-dev, like
//! bench/tokudb_bdb.c, and run as the engine's child process: it loads,
//! runs each thread count and prints the same `row,` lines.

use super::{Scale, TpcbArgs};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The source, beside the package's manifest.
fn source() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tpcb_bdb.c")
}

/// The compiled program: `--build-dir`, or beside this program.
fn program(args: &TpcbArgs, exe: &Path) -> PathBuf {
    let dir = args
        .build_dir
        .clone()
        .or_else(|| exe.parent().map(Path::to_path_buf))
        .unwrap_or_else(std::env::temp_dir);
    dir.join("tpcb_bdb")
}

/// Compiles the program where it is missing or older than its source.
fn build(prog: &Path) -> Result<(), String> {
    let src = source();
    let mtime = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let src_time = mtime(&src).ok_or_else(|| format!("{} not found", src.display()))?;
    if mtime(prog).is_some_and(|t| t >= src_time) {
        return Ok(());
    }
    if let Some(d) = prog.parent() {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(&cc)
        .args(["-O2", "-pthread", "-o"])
        .arg(prog)
        .arg(&src)
        .arg("-ldb-5.3")
        .output()
        .map_err(|e| format!("no C compiler ({cc}: {e})"))?;
    if !out.status.success() {
        let msg = String::from_utf8_lossy(&out.stderr);
        let tail: String = msg
            .chars()
            .rev()
            .take(300)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        return Err(format!(
            "tpcb_bdb.c did not compile (libdb5.3-dev missing? bench/setup installs it): {}",
            tail.trim()
        ));
    }
    Ok(())
}

/// The command that runs Berkeley DB's rows, the program compiled first.
pub fn command(args: &TpcbArgs, exe: &Path, scale: Scale) -> Result<Command, String> {
    let prog = program(args, exe);
    build(&prog)?;
    let dir = super::driver::db_dir(args, "bdb");
    let threads: Vec<String> = args.threads.iter().map(|t| t.max(&1).to_string()).collect();
    let mut cmd = Command::new(&prog);
    cmd.arg(&dir)
        .arg(scale.branches.to_string())
        .arg((scale.accounts / scale.branches).to_string())
        .arg(args.seconds.to_string())
        .arg(args.seed.to_string())
        .arg(if args.keep { "1" } else { "0" })
        .arg(threads.join(","));
    Ok(cmd)
}
