//! `dtld-reapi`: a DTLTO distributor that runs the ThinLTO backend compilations as Actions on a
//! Remote Execution API v2 engine (Buildbarn, BuildBuddy, NativeLink, BuildGrid, buildbox-casd).
//!
//! The linker (dtld, or ld.lld-22) runs `[dtld-reapi, args..., <job file>]`. The job file names
//! the temporaries by the link's process id and the inputs by the paths they were given, so inside
//! an Action every file is named by its content instead (and the module paths inside each summary
//! shard are renamed to match): the Actions of a link are identical across links, build
//! directories, processes and machines, and a relink of unchanged inputs is served from the
//! engine's action cache without executing anything. Usage and deployment: `docs/remote.md`.
//!
//! This file is the command line (every option also has a `DTLD_REAPI_*` environment variable,
//! so `-Xthinlto-distributor=` is optional), the compiler's identity, the local fallback, the
//! summary line and the exit codes; `remote` runs the jobs on the engine, `client` speaks gRPC,
//! `action` builds the Actions and `layout` places files in the input root.

#![forbid(unsafe_code)]

mod action;
mod client;
mod layout;
mod remote;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::{CommandFactory, Parser};
use dtld_distributor::{generate, jobfile, progress, run};

/// Runs the backend compilations of a DTLTO job file on a REAPI (Remote Execution API v2) engine.
///
/// A linker doing distributed ThinLTO (dtld, ld.lld-22) writes the backend compilations of a link
/// to a JSON job file and runs this program with it, for example through `clang -flto=thin
/// -fuse-ld=dtld -fthinlto-distributor=dtld-reapi` with `DTLD_REAPI_ENDPOINT=grpc://HOST:PORT`.
/// Each compilation becomes an Action on the engine (Buildbarn, BuildBuddy, NativeLink,
/// BuildGrid, buildbox-casd) in which every file is named by its content, so a relink of
/// unchanged inputs from any directory or machine is served from the engine's action cache.
#[derive(Parser, Debug)]
#[command(
    name = "dtld-reapi",
    version,
    after_help = "Every option can also be set by its environment variable, so a link needs only \
                  -fthinlto-distributor=dtld-reapi. At the end one line is printed: \
                  'dtld-reapi: summary: jobs=N cache_hits=N executed=N retried=N fell_back=N failed=N \
                  uploaded_bytes=N uploaded_blobs=N downloaded_bytes=N time=S'.\n\
                  Exit status: 0 all jobs succeeded; 1 a job failed or the engine could not be used; \
                  2 usage error."
)]
struct Cli {
    /// The engine: grpc://HOST:PORT, or grpcs://HOST:PORT for TLS
    #[arg(long, env = "DTLD_REAPI_ENDPOINT", value_name = "URL")]
    endpoint: Option<String>,

    /// The REAPI instance name (Buildbarn/BuildGrid/NativeLink: as configured; often empty)
    #[arg(long, env = "DTLD_REAPI_INSTANCE", default_value = "", value_name = "NAME")]
    instance: String,

    /// An extra header on every call, e.g. 'authorization=Bearer TOKEN' (repeatable; from the
    /// environment: DTLD_REAPI_HEADERS, one NAME=VALUE per line)
    #[arg(long = "header", value_name = "NAME=VALUE")]
    headers: Vec<String>,

    /// PEM file of a CA certificate to trust besides the system's (grpcs://)
    #[arg(long, env = "DTLD_REAPI_TLS_CA", value_name = "PEM")]
    tls_ca: Option<PathBuf>,

    /// PEM file of a client certificate (mutual TLS; with --tls-key)
    #[arg(long, env = "DTLD_REAPI_TLS_CERT", value_name = "PEM")]
    tls_cert: Option<PathBuf>,

    /// PEM file of the client certificate's private key
    #[arg(long, env = "DTLD_REAPI_TLS_KEY", value_name = "PEM")]
    tls_key: Option<PathBuf>,

    /// A platform property of every action, e.g. OSFamily=linux or container-image=docker://...
    /// (repeatable; from the environment: DTLD_REAPI_PLATFORM=k=v,k=v)
    #[arg(long = "platform", value_name = "NAME=VALUE")]
    platform: Vec<String>,

    /// Actions executing at once
    #[arg(short = 'j', long = "jobs", env = "DTLD_REAPI_JOBS", default_value_t = 32, value_name = "N")]
    jobs: usize,

    /// Seconds one action may take on the engine (a client-side deadline; not part of the Action)
    #[arg(long, env = "DTLD_REAPI_TIMEOUT", default_value_t = 600, value_name = "SECS")]
    timeout: u64,

    /// Retries of a call that failed with a transient error (UNAVAILABLE, DEADLINE_EXCEEDED,
    /// RESOURCE_EXHAUSTED, ...), with exponential backoff from 100 ms
    #[arg(long, env = "DTLD_REAPI_RETRIES", default_value_t = 5, value_name = "N")]
    retries: u32,

    /// The compiler's identity, put in every Action's salt. Default: the SHA-256 of the local
    /// compiler binary and its --version output. Needed when the compiler exists only on the
    /// workers.
    #[arg(long, env = "DTLD_REAPI_COMPILER_ID", value_name = "TEXT")]
    compiler_id: Option<String>,

    /// Compile a job on this machine when the engine cannot (unreachable, failed action, output
    /// missing, ...)
    #[arg(long, env = "DTLD_REAPI_LOCAL_FALLBACK", value_parser = clap::builder::BoolishValueParser::new())]
    local_fallback: bool,

    /// Progress display: a status line on a terminal and one line per job otherwise (auto), the
    /// status line always, or none (never)
    #[arg(long, value_enum, env = "DTLD_REAPI_PROGRESS", value_name = "WHEN", default_value_t = progress::When::Auto)]
    progress: progress::When,

    /// Print each job's action digest and each local command
    #[arg(short = 'v', long)]
    verbose: bool,

    /// The JSON job file written by the linker
    #[arg(value_name = "JOB-FILE")]
    job_file: PathBuf,
}

/// Counts for the summary line.
#[derive(Default)]
struct Summary {
    jobs: usize,
    hits: usize,
    executed: usize,
    fell_back: usize,
    failed: usize,
}

fn main() -> ExitCode {
    // `--generate=man|complete-bash|...` (hidden): the man page and completions, for packagers.
    let extras = generate::ManExtras { notes_heading: "NOTES", see_also: &[("dtld", "1"), ("dtld-distribute", "1"), ("clang", "1")] };
    if let Some(code) = generate::intercept(Cli::command, &extras) {
        return code;
    }
    let cli: Cli = generate::parse_or_exit("dtld-reapi");
    let started = Instant::now();
    let usage = |m: &str| -> ExitCode {
        eprintln!("dtld-reapi: error: {m}");
        ExitCode::from(2)
    };

    let mut headers = Vec::new();
    let env_headers = std::env::var("DTLD_REAPI_HEADERS").unwrap_or_default();
    let header_texts: Vec<String> =
        if cli.headers.is_empty() { env_headers.lines().filter(|l| !l.trim().is_empty()).map(str::to_string).collect() } else { cli.headers.clone() };
    for h in &header_texts {
        match client::parse_header(h) {
            Ok(kv) => headers.push(kv),
            Err(e) => return usage(&e),
        }
    }
    let env_platform = std::env::var("DTLD_REAPI_PLATFORM").unwrap_or_default();
    let platform_texts: Vec<String> =
        if cli.platform.is_empty() { env_platform.split(',').filter(|p| !p.trim().is_empty()).map(str::to_string).collect() } else { cli.platform.clone() };
    let mut platform = Vec::new();
    for p in &platform_texts {
        match p.split_once('=') {
            Some((k, v)) if !k.is_empty() => platform.push((k.to_string(), v.to_string())),
            _ => return usage(&format!("platform property '{p}' is not NAME=VALUE")),
        }
    }
    platform.sort();
    platform.dedup();
    let Some(endpoint) = cli.endpoint.clone().filter(|e| !e.is_empty()) else {
        return usage("no REAPI engine given: pass --endpoint=grpc://HOST:PORT (or grpcs://) or set DTLD_REAPI_ENDPOINT");
    };
    if let Err(e) = client::parse_endpoint(&endpoint) {
        return usage(&e);
    }

    let shown = cli.job_file.display().to_string();
    let file = match jobfile::load(&cli.job_file) {
        Ok(f) => f,
        Err(e) => return error(&format!("job file '{shown}': {e}")),
    };
    let mut summary = Summary { jobs: file.jobs.len(), ..Default::default() };
    if file.jobs.is_empty() {
        print_summary(&summary, None, started);
        return ExitCode::SUCCESS;
    }

    // The compiler on this machine: its identity goes into every Action's salt, and it compiles
    // the jobs that fall back.
    let local_compiler = run::resolve_compiler(&file.common_args[0]);
    let salt = match (&cli.compiler_id, &local_compiler) {
        (Some(id), _) => format!("dtld-reapi/1\ncompiler-id={id}\n").into_bytes(),
        (None, Ok(c)) => match compiler_identity(c) {
            Ok(id) => id,
            Err(e) => return error(&e),
        },
        (None, Err(e)) => return error(&format!("{e} (pass --compiler-id=TEXT when the compiler exists only on the workers)")),
    };

    let mode = cli.progress.mode();
    let options = client::Options {
        endpoint,
        instance: cli.instance.clone(),
        headers,
        ca: cli.tls_ca.clone(),
        cert: cli.tls_cert.clone(),
        key: cli.tls_key.clone(),
        retries: cli.retries,
        rpc_timeout: Duration::from_secs(60),
    };
    let cwd = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => return error(&format!("cannot get the working directory: {e}")),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => return error(&format!("cannot start the async runtime: {e}")),
    };
    let progress = Arc::new(Mutex::new(progress::Progress::named("dtld-reapi", mode, file.jobs.len())));
    let cfg = remote::Config { parallelism: cli.jobs.max(1), timeout: Duration::from_secs(cli.timeout.max(1)), platform, salt, verbose: cli.verbose };
    let mut counters = None;
    let outcome = {
        // tonic's lazy channel spawns its connection task: it must be made inside the runtime.
        let _guard = runtime.enter();
        match client::Client::new(&options) {
            Ok(c) => {
                counters = Some(c.counters.clone());
                runtime.block_on(remote::run(file.clone(), &cwd, c, &cfg, progress.clone()))
            }
            Err(e) => Err(e),
        }
    };
    // Stop the runtime's threads (and any call still pending) before local work starts.
    runtime.shutdown_timeout(Duration::from_millis(100));
    let outcome = outcome.unwrap_or_else(|reason| remote::Outcome {
        failures: (0..file.jobs.len()).map(|job| remote::Failure { job, reason: reason.clone() }).collect(),
        ..Default::default()
    });
    summary.hits = outcome.hits;
    summary.executed = outcome.executed;
    lock(&progress).finish();

    let mut failed: Vec<(usize, String)> = Vec::new();
    if !outcome.failures.is_empty() && cli.local_fallback {
        let text: String = outcome
            .failures
            .iter()
            .map(|f| format!("dtld-reapi: warning: {} -> {}: {}; compiling it locally\n", file.jobs[f.job].module(), file.jobs[f.job].output(), f.reason))
            .collect();
        lock(&progress).message(&text);
        let compiler = match &local_compiler {
            Ok(c) => c.clone(),
            Err(e) => {
                print_summary(&summary, counters.as_deref(), started);
                return error(&format!("cannot fall back to local compiles: {e}"));
            }
        };
        let local = jobfile::JobFile { jobs: outcome.failures.iter().map(|f| file.jobs[f.job].clone()).collect(), ..file.clone() };
        summary.fell_back = local.jobs.len();
        let signals = run::Signals::install().unwrap_or_else(|_| run::Signals::none());
        let mut p = progress::Progress::named("dtld-reapi", mode, local.jobs.len());
        let opts = run::Options { parallelism: run::default_parallelism(), verbose: cli.verbose };
        match run::run(&local, &compiler, &opts, &mut p, &signals) {
            run::Outcome::Interrupted { signal, killed } => {
                eprintln!("dtld-reapi: interrupted: stopped {killed} local job(s) and removed their outputs");
                return ExitCode::from((128 + signal) as u8);
            }
            run::Outcome::Finished { failures, .. } => {
                p.finish();
                for f in failures {
                    let i = file.jobs.iter().position(|j| j.output() == f.output).unwrap_or(0);
                    failed.push((i, format!("{} (compiled locally)", f.reason)));
                }
            }
        }
    } else {
        let mut text = String::new();
        for f in &outcome.failures {
            let j = &file.jobs[f.job];
            text.push_str(&format!("dtld-reapi: error: {} -> {} failed: {}\n", j.module(), j.output(), f.reason));
            failed.push((f.job, f.reason.clone()));
        }
        lock(&progress).message(&text);
    }
    summary.failed = failed.len();
    print_summary(&summary, counters.as_deref(), started);
    if failed.is_empty() {
        return ExitCode::SUCCESS;
    }
    let failed: Vec<_> = failed.iter().map(|(i, reason)| (file.jobs[*i].module(), file.jobs[*i].output(), reason.as_str())).collect();
    eprint!("{}", progress::failure_report("dtld-reapi", file.jobs.len(), &failed));
    ExitCode::FAILURE
}

fn lock(p: &Mutex<progress::Progress>) -> std::sync::MutexGuard<'_, progress::Progress> {
    p.lock().unwrap_or_else(|e| e.into_inner())
}

/// The machine-parsable end-of-run line (tests and scripts read it; keep its form stable).
fn print_summary(s: &Summary, c: Option<&client::Counters>, started: Instant) {
    let get = |f: fn(&client::Counters) -> &std::sync::atomic::AtomicU64| c.map(|c| f(c).load(Ordering::Relaxed)).unwrap_or(0);
    eprintln!(
        "dtld-reapi: summary: jobs={} cache_hits={} executed={} retried={} fell_back={} failed={} uploaded_bytes={} uploaded_blobs={} downloaded_bytes={} time={:.2}s",
        s.jobs,
        s.hits,
        s.executed,
        get(|c| &c.retried),
        s.fell_back,
        s.failed,
        get(|c| &c.uploaded_bytes),
        get(|c| &c.uploaded_blobs),
        get(|c| &c.downloaded_bytes),
        started.elapsed().as_secs_f64()
    );
}

/// The compiler's identity: the SHA-256 of its binary (symlinks resolved) and its `--version`
/// output, which names the LLVM release the shared libraries belong to.
fn compiler_identity(compiler: &Path) -> Result<Vec<u8>, String> {
    let real = std::fs::canonicalize(compiler).map_err(|e| format!("cannot resolve the compiler '{}': {e}", compiler.display()))?;
    let data = std::fs::read(&real).map_err(|e| format!("cannot read the compiler '{}': {e}", real.display()))?;
    let out = std::process::Command::new(compiler)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run '{} --version': {e}", compiler.display()))?;
    if !out.status.success() {
        return Err(format!("'{} --version' failed ({}); pass --compiler-id=TEXT to name the compiler", compiler.display(), out.status));
    }
    let mut salt = format!("dtld-reapi/1\ncompiler-sha256={}\n", action::digest(&data).hash).into_bytes();
    salt.extend_from_slice(&out.stdout);
    Ok(salt)
}

fn error(message: &str) -> ExitCode {
    eprintln!("dtld-reapi: error: {message}");
    ExitCode::FAILURE
}
