//! `lamina-bench numbers`: the numbers load's curve of rate against size.
//!
//! For N = 2^17, 2^18, ... 2^max records (keys 0 to N - 1, the numbers in
//! English), each into a fresh database: (i) `gen`, the built-in generator
//! straight into the engine (what `lamina gen numbers --into` does), and
//! (ii) `shell`, `store N "words"` lines piped into `lamina shell --newdb`
//! (the `lamina` binary, release-built; the original ran `numbers.pl |
//! gdbmtool --newdb`; see [`lamina_binary`] for where it is looked for). Timed
//! from open (process start for the shell) to close; printed: seconds,
//! records/s and the size on disk per size, then the rate at the largest size
//! as a percentage of the rate at 2^20.

use crate::engine::{Loader, Options};
use crate::progress::{bytes, thousands, Progress, Total};
use crate::Ctx;
use crate::{clear_db, dir_size, fresh_db, options, rate, Common, Csv, Workdir};
use lamina_cli::numbers::{LineStyle, Numbers};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Arguments of `lamina-bench numbers`.
#[derive(Debug, Clone, clap::Args)]
pub struct NumbersArgs {
    /// Largest size, as a power of two (2^K records).
    #[arg(long, value_name = "K", default_value_t = 22)]
    pub max: u32,
    /// Smallest size, as a power of two.
    #[arg(long, value_name = "K", default_value_t = 17)]
    pub min: u32,
    /// The `lamina` binary the shell path runs. Default: `lamina` beside this
    /// binary, else the root workspace's release build (`target/release/lamina`
    /// when this one is `target/bench/release/lamina-bench`), else `lamina`
    /// on PATH.
    #[arg(long, value_name = "PATH")]
    pub lamina: Option<PathBuf>,
    #[command(flatten)]
    pub common: Common,
}

/// The two load paths.
const PATHS: [&str; 2] = ["gen", "shell"];

/// The columns of the CSV, a line per size and path.
const CSV_HEADER: [&str; 8] = [
    "engine",
    "path",
    "exp",
    "records",
    "seconds",
    "records_per_s",
    "bytes",
    "memlimit",
];

/// Runs `lamina-bench numbers`.
pub fn run(args: NumbersArgs, ctx: &Ctx) -> Result<(), String> {
    if args.min > args.max || args.max > 40 {
        return Err(format!(
            "sizes 2^{}..2^{}: need --min <= --max <= 40",
            args.min, args.max
        ));
    }
    let lamina = match &args.lamina {
        Some(p) => p.clone(),
        None => lamina_binary().ok_or(
            "no `lamina` binary for the shell path: build it \
             (cargo build --release -p lamina-cli) or give --lamina PATH",
        )?,
    };
    let dir = Workdir::new(&args.common, "numbers");
    std::fs::create_dir_all(dir.path()).map_err(|e| format!("{}: {e}", dir.path().display()))?;
    let mut csv = Csv::open(args.common.csv.as_deref(), &CSV_HEADER)?;
    println!(
        "numbers load on lamina {}: records 0..N-1 into a fresh database; gen = the built-in \
         generator into the engine, shell = `store N \"words\"` lines through `lamina shell --newdb`",
        crate::VERSION
    );
    println!(
        "{:>21} {:>5} {:>10} {:>11} {:>24}",
        "records", "path", "seconds", "records/s", "size on disk"
    );
    // (exp, path index, rate)
    let mut rates: Vec<(u32, usize, f64)> = Vec::new();
    for exp in args.min..=args.max {
        let n = 1u64 << exp;
        for (pi, &which) in PATHS.iter().enumerate() {
            let path = dir.path().join(format!("{which}-2^{exp}"));
            let opts = options(None, None)?;
            let secs = if which == "gen" {
                load_gen(&path, opts, n, ctx)?
            } else {
                load_shell(&lamina, &path, &opts, n, ctx)?
            };
            let size = dir_size(&path);
            let r = rate(n, secs);
            rates.push((exp, pi, r));
            println!(
                "{:>21} {which:>5} {secs:>10.3} {:>11} {:>24}",
                format!("{} (2^{exp})", thousands(n)),
                thousands(r as u64),
                format!("{} ({size} B)", bytes(size))
            );
            csv.row(&[
                "lamina".into(),
                which.into(),
                exp.to_string(),
                n.to_string(),
                format!("{secs:.6}"),
                format!("{r:.0}"),
                size.to_string(),
                args.common.memlimit_note.clone(),
            ])?;
            if dir.temporary() {
                let _ = clear_db(&path, &options(None, None)?);
            }
        }
    }
    println!("{}", rate_at_largest(&rates, args.max));
    Ok(())
}

/// The line that closes the run: each path's rate at 2^`max` as a
/// percentage of its rate at 2^20 (`rates`: size, path index, rate).
fn rate_at_largest(rates: &[(u32, usize, f64)], max: u32) -> String {
    let at = |exp: u32, pi: usize| {
        rates
            .iter()
            .find(|&&(e, p, _)| e == exp && p == pi)
            .map(|&(_, _, r)| r)
    };
    let parts: Vec<String> = PATHS
        .iter()
        .enumerate()
        .filter_map(|(pi, which)| {
            let base = at(20, pi)?;
            let last = at(max, pi)?;
            (base > 0.0).then(|| format!("{which} {:.1}%", 100.0 * last / base))
        })
        .collect();
    if parts.is_empty() {
        format!("rate at 2^{max} as % of the rate at 2^20: 2^20 not in the run")
    } else {
        format!(
            "rate at 2^{max} as % of the rate at 2^20: {}",
            parts.join(", ")
        )
    }
}

/// Loads records 0..n-1 with the built-in generator into a new database at
/// `path` (as `lamina gen numbers --into`); seconds from open to close.
pub fn load_gen(path: &Path, opts: Options, n: u64, ctx: &Ctx) -> Result<f64, String> {
    clear_db(path, &opts)?;
    let mut progress = Progress::new(
        format!("numbers gen {n}"),
        Total::Records(n),
        ctx.progress.mode(true),
        &ctx.progress,
    );
    let t0 = Instant::now();
    let db = fresh_db(path, opts)?;
    let mut loader = Loader::new(&db);
    let mut numbers = Numbers::range(0, n - 1);
    let mut result = Ok(());
    while numbers.remaining() > 0 && result.is_ok() {
        numbers.for_each_record(4096, |k, v| {
            if result.is_ok() {
                result = loader.put(k, v);
                progress.add(1, (k.len() + v.len()) as u64);
            }
        });
    }
    result.map_err(|e| format!("load: {e}"))?;
    loader.finish().map_err(|e| format!("load: {e}"))?;
    db.close().map_err(|e| format!("close: {e}"))?;
    let secs = t0.elapsed().as_secs_f64();
    progress.finish();
    Ok(secs)
}

/// The `lamina` binary: beside this executable, else the root workspace's
/// release build two directories up (this package's target directory is
/// `target/bench`, bench/.cargo/config.toml), else on PATH.
pub fn lamina_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    let near = [dir.join("lamina"), dir.join("../../release/lamina")];
    let on_path = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("lamina"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    near.into_iter().chain(on_path).find(|p| p.is_file())
}

/// Pipes `store N "words"` lines for records 0..n-1 into `lamina shell
/// --newdb path` (the `lamina` binary `exe`); seconds from its start to its
/// exit.
fn load_shell(exe: &Path, path: &Path, opts: &Options, n: u64, ctx: &Ctx) -> Result<f64, String> {
    clear_db(path, opts)?;
    let mut progress = Progress::new(
        format!("numbers shell {n}"),
        Total::Records(n),
        ctx.progress.mode(true),
        &ctx.progress,
    );
    let t0 = Instant::now();
    let mut child = Command::new(exe)
        .args(["--quiet", "shell", "--newdb"])
        .arg(path)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("{}: {e}", exe.display()))?;
    let mut written = Ok(());
    if let Some(mut stdin) = child.stdin.take() {
        let mut numbers = Numbers::range(0, n - 1);
        let mut buf = Vec::with_capacity((1 << 20) + 4096);
        let mut sent = 0u64;
        while numbers.remaining() > 0 {
            buf.clear();
            let lines = numbers.write_lines(&mut buf, 1 << 20, LineStyle::Store);
            if let Err(e) = stdin.write_all(&buf) {
                written = Err(e);
                break;
            }
            sent += buf.len() as u64;
            progress.set(progress.records() + lines, sent);
        }
    }
    let status = child.wait().map_err(|e| format!("lamina shell: {e}"))?;
    let secs = t0.elapsed().as_secs_f64();
    progress.finish();
    if !status.success() {
        return Err(format!(
            "lamina shell --newdb {} failed: {status}",
            path.display()
        ));
    }
    written.map_err(|e| format!("writing to lamina shell: {e}"))?;
    Ok(secs)
}
