//! The options every command of `lamina` and `lamina-bench` takes (`-q`,
//! `--progress-interval`, `--memory-budget`, `--option`), declared once and
//! applied by one function, so that the two programs read them alike.

use crate::error::CliError;
use crate::{engine, progress, size};
use std::time::Duration;

/// The global options, flattened into each program's command line.
#[derive(Debug, clap::Args)]
pub struct GlobalArgs {
    /// Show no progress.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Seconds between progress lines when stderr is not a terminal.
    #[arg(long, global = true, value_name = "SECONDS", default_value_t = 5.0)]
    pub progress_interval: f64,
    /// Memory the database may hold: block cache, memtables, index and filter
    /// blocks together (e.g. 512M). Default: an eighth of the memory the
    /// process may use (its control group's limit where lower), from 64 MiB to 1 GiB.
    #[arg(long, global = true, value_name = "BYTES", value_parser = size::parse_size)]
    pub memory_budget: Option<u64>,
    /// Force an engine option (for experts; repeatable): NAME=VALUE, one of
    /// block_size, blob_threshold, cache_size, l0_compaction_trigger,
    /// level_base_size, level_multiplier, memtable_size, target_table_size.
    /// `lamina stat` says when a forced setting is far from what lamina
    /// would choose.
    #[arg(long = "option", global = true, value_name = "NAME=VALUE", value_parser = engine::parse_forced)]
    pub options: Vec<(String, u64)>,
}

impl GlobalArgs {
    /// Makes the forced options and the memory budget those every database
    /// of this process opens with, and returns how to show progress.
    pub fn apply(self) -> Result<progress::Settings, CliError> {
        let interval =
            Duration::try_from_secs_f64(self.progress_interval).unwrap_or(Duration::from_secs(5));
        engine::set_forced(self.options);
        if let Some(budget) = self.memory_budget {
            engine::set_memory_budget(budget)?;
        }
        Ok(progress::Settings {
            quiet: self.quiet,
            interval,
        })
    }
}
