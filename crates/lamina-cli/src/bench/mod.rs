//! `lamina bench WORKLOAD [ARGS...]`: benchmark workloads (the definitions
//! are in `BENCHMARKS.md`). No workload is built in yet.

/// Arguments of `lamina bench`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// The workload to run.
    pub workload: String,
    /// The workload's own arguments.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

/// Runs a workload.
pub fn run(args: BenchArgs) -> Result<(), String> {
    Err(format!("unknown workload: {}", args.workload))
}
