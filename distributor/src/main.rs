//! `dtld-distribute`: the local distributor for integrated distributed ThinLTO (DTLTO).
//!
//! A DTLTO linker (dtld, ld.lld-22, lld-link-22) does the thin link itself, writes one JSON job
//! file describing the backend compilations, runs `[distributor, distributor-args..., job-file]`
//! and then reads back every job's `outputs[0]`. LLVM ships only a serial Python script for that
//! (`llvm/utils/dtlto/local.py`); this is the same contract done properly on one machine: strict
//! validation of the job file, parallel jobs, per-job output that is never interleaved, objects
//! checked before the linker sees them, and clean-up on Ctrl-C. Usage: `docs/distributor.md`.
//!
//! This file is the command line and the exit codes; the library (`src/lib.rs`) does the rest:
//! `jobfile` reads the job file, `run` runs the jobs, `progress` does all printing while they run.

#![forbid(unsafe_code)]

use clap::{CommandFactory, Parser};
use dtld_distributor::{generate, jobfile, progress, run};
use std::path::PathBuf;
use std::process::ExitCode;

/// Runs the backend compilations of a DTLTO job file in parallel on this machine.
///
/// A linker doing distributed ThinLTO (dtld, ld.lld-22, lld-link-22) writes the backend
/// compilations of a link to a JSON job file and runs this program with it, for example through
/// `clang -flto=thin -fuse-ld=dtld -fthinlto-distributor=dtld-distribute`. The jobs run in
/// parallel with their output never interleaved; every output object is checked before the
/// linker reads it; on SIGINT or SIGTERM the running jobs are stopped and their outputs removed.
#[derive(Parser, Debug)]
#[command(
    name = "dtld-distribute",
    version,
    after_help = "Exit status: 0 all jobs succeeded; 1 a job failed or the job file is invalid; \
                  2 usage error; 130/143 interrupted by SIGINT/SIGTERM."
)]
struct Cli {
    /// Jobs to run at once [default: number of cores; 0 means the same]
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    jobs: Option<usize>,

    /// Progress display: a status line on a terminal and one line per job otherwise (auto), the
    /// status line even when stderr is not a terminal (always), or none (never)
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = progress::When::Auto)]
    progress: progress::When,

    /// Print each job's command line, and a summary at the end
    #[arg(short = 'v', long)]
    verbose: bool,

    /// The JSON job file written by the linker
    #[arg(value_name = "JOB-FILE")]
    job_file: PathBuf,
}

fn main() -> ExitCode {
    // `--generate=man|complete-bash|...` (hidden): the man page and completions, for packagers.
    let extras = generate::ManExtras { notes_heading: "EXIT STATUS", see_also: &[("dtld", "1"), ("dtld-reapi", "1"), ("clang", "1"), ("ld.lld", "1")] };
    if let Some(code) = generate::intercept(Cli::command, &extras) {
        return code;
    }
    // Usage errors exit with status 2 (0 for --help and --version), under the program's name.
    let cli: Cli = generate::parse_or_exit("dtld-distribute");
    let shown = cli.job_file.display();

    let file = match jobfile::load(&cli.job_file) {
        Ok(f) => f,
        Err(e) => return error(&format!("job file '{shown}': {e}")),
    };
    let total = file.jobs.len();
    if total == 0 {
        // lld does not even start the distributor then, but another linker might.
        return ExitCode::SUCCESS;
    }
    let compiler = match run::resolve_compiler(&file.common_args[0]) {
        Ok(c) => c,
        Err(e) => return error(&e),
    };

    let parallelism = match cli.jobs {
        Some(n) if n > 0 => n,
        _ => run::default_parallelism(),
    };
    // In a log, a line per job only with --verbose (else a summary and the failures).
    let mode = match cli.progress.mode() {
        progress::Mode::Summary if cli.verbose => progress::Mode::Plain,
        m => m,
    };
    let signals = run::Signals::install().unwrap_or_else(|e| {
        eprintln!("dtld-distribute: warning: cannot catch SIGINT/SIGTERM ({e}); outputs of interrupted jobs may remain");
        run::Signals::none()
    });

    let mut progress = progress::Progress::new(mode, total);
    let options = run::Options { parallelism, verbose: cli.verbose };
    match run::run(&file, &compiler, &options, &mut progress, &signals) {
        run::Outcome::Interrupted { signal, killed } => {
            let name = if signal == signal_hook::consts::SIGINT { "SIGINT" } else { "SIGTERM" };
            eprintln!("dtld-distribute: interrupted by {name}: stopped {killed} running job(s) and removed their outputs");
            ExitCode::from((128 + signal) as u8)
        }
        run::Outcome::Finished { failures, elapsed, max_parallel } => {
            progress.finish();
            if cli.verbose {
                let secs = elapsed.as_secs_f64();
                eprintln!("dtld-distribute: {total} jobs, total {secs:.2} s, max parallel {max_parallel}");
            } else if progress.wants_summary() {
                let secs = elapsed.as_secs_f64();
                eprintln!("dtld-distribute: {} of {total} jobs compiled in {secs:.1} s", total - failures.len());
            }
            if failures.is_empty() {
                return ExitCode::SUCCESS;
            }
            let failed: Vec<_> = failures.iter().map(|f| (f.module.as_str(), f.output.as_str(), f.reason.as_str())).collect();
            eprint!("{}", progress::failure_report("dtld-distribute", total, &failed));
            ExitCode::FAILURE
        }
    }
}

fn error(message: &str) -> ExitCode {
    eprintln!("dtld-distribute: error: {message}");
    ExitCode::FAILURE
}
