//! Soak: random operations from several threads against one database, with
//! the writer process killed (SIGKILL) again and again and the database
//! reopened and checked against what was acknowledged after every kill.
//!
//! `make soak` runs it; environment: `SOAK_SECONDS` (default 300),
//! `SOAK_SEED` (default: from the clock; printed), `SOAK_THREADS` (default 4),
//! `SOAK_DIR` (default: a new directory under the system's temporary one,
//! removed when no difference was found).
//!
//! Writes use `Durability::Os`: everything acknowledged before a kill must be
//! there after it; the one batch per thread in flight at the kill may be
//! there or not, but whole. Each thread writes only its own keys, so its
//! journal alone says what they must hold. Exits 1 on any difference.

mod journal;
mod model;
mod store;
mod worker;

use model::{apply, differences, Model};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

type BoxError = Box<dyn std::error::Error>;

fn env_u64(name: &str, default: u64) -> Result<u64, BoxError> {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .map_err(|_| format!("{name}={v:?} is not a whole number").into()),
        Err(_) => Ok(default),
    }
}

/// The soak's settings, from the environment.
struct Settings {
    seconds: u64,
    seed: u64,
    threads: usize,
    dir: PathBuf,
}

impl Settings {
    fn from_env() -> Result<Settings, BoxError> {
        let seconds = env_u64("SOAK_SECONDS", 300)?;
        let clock = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let seed = env_u64("SOAK_SEED", clock % 1_000_000)?;
        let threads = env_u64("SOAK_THREADS", 4)?.clamp(1, 64) as usize;
        let dir = match std::env::var("SOAK_DIR") {
            Ok(d) => PathBuf::from(d),
            Err(_) => std::env::temp_dir().join(format!("lamina-soak-{seed}")),
        };
        Ok(Settings {
            seconds,
            seed,
            threads,
            dir,
        })
    }
}

#[derive(Default)]
struct Totals {
    kills: u64,
    reopens: u64,
    writes: u64,
    reads: u64,
    landed: u64,
    lost_in_flight: u64,
    differences: u64,
}

fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, dir, seed, threads] = args.as_slice() {
        if flag == "--child" {
            worker::run(Path::new(dir), seed.parse()?, threads.parse()?);
        }
    }
    let Settings {
        seconds,
        seed,
        threads,
        dir,
    } = Settings::from_env()?;
    if dir.exists() {
        return Err(format!("{} exists; remove it or set SOAK_DIR", dir.display()).into());
    }
    std::fs::create_dir_all(&dir)?;
    println!(
        "soak: {seconds} s, seed {seed}, {threads} threads, in {}",
        dir.display()
    );
    {
        let db = lamina::Db::open(dir.join("db"), store::options())?;
        db.keyspace(store::KEYSPACE)?;
        db.close()?;
    }
    let mut rng = StdRng::seed_from_u64(seed);
    let mut models = vec![Model::new(); threads];
    let mut t = Totals::default();
    let start = Instant::now();
    let end = start + Duration::from_secs(seconds);
    let mut cycle = 0u64;
    while Instant::now() < end {
        cycle += 1;
        let run = run_and_kill(&dir, threads, &mut rng, end)?;
        t.kills += 1;
        let (writes, reads, diffs) = verify(&dir, &mut models, &mut t)?;
        t.reopens += 1;
        t.writes += writes;
        t.reads += reads;
        t.differences += diffs;
        println!(
            "cycle {cycle}: killed after {} ms; {writes} writes, {reads} reads acknowledged; reopened; {diffs} differences",
            run.as_millis()
        );
    }
    println!(
        "soak: {} s, seed {seed}: {} writes and {} checked reads acknowledged, {} kills, {} reopens; batches in flight at a kill: {} landed whole, {} did not; {} differences",
        start.elapsed().as_secs(),
        t.writes,
        t.reads,
        t.kills,
        t.reopens,
        t.landed,
        t.lost_in_flight,
        t.differences
    );
    if t.differences > 0 {
        println!("soak: database kept in {}", dir.display());
        std::process::exit(1);
    }
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

/// Starts the writer process (this program again with `--child`, its seed
/// drawn from `rng`) on the database in `dir`, lets it run for a time drawn
/// from `rng` (cut short at `end`) and kills it; the time drawn.
fn run_and_kill(
    dir: &Path,
    threads: usize,
    rng: &mut StdRng,
    end: Instant,
) -> Result<Duration, BoxError> {
    let mut child = Command::new(std::env::current_exe()?)
        .args(["--child", &dir.to_string_lossy()])
        .arg(rng.gen::<u64>().to_string())
        .arg(threads.to_string())
        .stdin(Stdio::null())
        .spawn()?;
    let run = Duration::from_millis(rng.gen_range(20..3000));
    std::thread::sleep(run.min(end.saturating_duration_since(Instant::now())));
    child.kill()?; // SIGKILL
    child.wait()?;
    Ok(run)
}

/// Reopens the database after a kill and compares every thread's keys with
/// its model; moves each model forward to what the database holds. Returns
/// the writes and reads the journals acknowledged and the differences found.
fn verify(dir: &Path, models: &mut [Model], t: &mut Totals) -> Result<(u64, u64, u64), BoxError> {
    let mut writes = 0;
    let mut reads = 0;
    let mut diffs = Vec::new();
    if let Ok(text) = std::fs::read_to_string(dir.join("journal-open")) {
        diffs.extend(journal::replay(&text).differences);
        std::fs::remove_file(dir.join("journal-open"))?;
    }
    let db = match lamina::Db::open(dir.join("db"), store::options()) {
        Ok(db) => db,
        Err(e) => {
            println!("  reopen failed: {e}");
            return Ok((0, 0, 1));
        }
    };
    let soak = db.open_keyspace(store::KEYSPACE)?;
    for (i, model) in models.iter_mut().enumerate() {
        let path = dir.join(format!("journal-{i}"));
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let replay = journal::replay(&text);
        writes += replay.acked.len() as u64;
        reads += replay.reads;
        diffs.extend(replay.differences);
        for ops in &replay.acked {
            apply(model, ops);
        }
        let got = store::read_thread(&db, &soak, i)?;
        if &got == model {
            if replay.in_flight.is_some() {
                t.lost_in_flight += 1;
            }
        } else {
            let mut landed = model.clone();
            if let Some(ops) = &replay.in_flight {
                apply(&mut landed, ops);
            }
            if replay.in_flight.is_some() && got == landed {
                t.landed += 1;
            } else {
                diffs.extend(
                    differences(model, &got, 5)
                        .into_iter()
                        .map(|d| format!("thread {i} after reopen: {d}")),
                );
            }
            *model = got;
        }
        if path.exists() {
            std::fs::remove_file(&path)?;
        }
    }
    let report = db.check()?;
    if !report.is_ok() {
        diffs.push(format!("check after reopen: {report:?}"));
    }
    db.close()?;
    for d in diffs.iter().take(20) {
        println!("  difference: {d}");
    }
    if diffs.len() > 20 {
        println!("  … and {} more", diffs.len() - 20);
    }
    Ok((writes, reads, diffs.len() as u64))
}
