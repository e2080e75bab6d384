//! One link's jobs on the engine, in the order that costs the least:
//!
//! 1. hash every input file once (files shared by many jobs, such as an imported module, are read
//!    once), rename every job's summary shard to the content names of its modules, and build
//!    every job's Action (`action`: nothing in it depends on the job file's paths or the link's
//!    process id, so the same inputs give the same Actions in any directory);
//! 2. ask the action cache for every Action (GetActionResult), in parallel; a hit only needs its
//!    outputs downloaded, so a relink that hits everywhere uploads nothing and executes nothing;
//! 3. for the misses, ask the CAS which blobs it lacks (FindMissingBlobs) and upload each missing
//!    blob once for the whole link (a renamed shard is renamed again from its file at upload);
//! 4. Execute the misses, at most `parallelism` at a time, and download their outputs.
//!
//! Every output is checked before it is written where the linker expects it, the job's own
//! `outputs[n]` (the Action names it `out.o`): its digest, that it is not empty and that it is an
//! ELF or COFF object. A job that cannot be done remotely is returned as a failure with the
//! reason, and `main` decides whether to compile it locally. When the engine stops answering
//! (retries used up on UNAVAILABLE), jobs that have not started fail at once instead of each
//! waiting through its own retries.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bazel_remote_apis::build::bazel::remote::execution::v2 as re;
use dtld_distributor::jobfile::JobFile;
use dtld_distributor::progress::Progress;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tonic::{Code, Status};

use crate::action::{self, Built, Settings};
use crate::client::{status_text, transient, Capabilities, Client};
use crate::layout;

pub struct Config {
    /// Actions executing at once.
    pub parallelism: usize,
    /// Deadline for one action's execution.
    pub timeout: Duration,
    pub platform: Vec<(String, String)>,
    pub salt: Vec<u8>,
    pub verbose: bool,
}

/// A job the engine did not complete.
#[derive(Debug, Clone)]
pub struct Failure {
    pub job: usize,
    pub reason: String,
}

#[derive(Debug, Default)]
pub struct Outcome {
    /// Jobs whose outputs came from the action cache (GetActionResult, or Execute's own lookup).
    pub hits: usize,
    /// Jobs that ran on the engine.
    pub executed: usize,
    /// In job order.
    pub failures: Vec<Failure>,
}

/// State shared by the job tasks.
struct Shared {
    client: Client,
    caps: Capabilities,
    file: JobFile,
    /// Each job's Action; `None` for a job that failed before reaching the engine.
    built: Vec<Option<Built>>,
    progress: Arc<Mutex<Progress>>,
    /// Set when a call failed for good with a transient status: the engine is gone.
    down: AtomicBool,
    timeout: Duration,
}

enum Done {
    Hit,
    Executed,
}

/// Why a job did not finish remotely, and whether the Action must be re-executed without the
/// cache (an evicted output of a cached result).
enum Miss {
    Retry { skip_cache_lookup: bool },
    Failed(String),
}

impl Shared {
    /// Job `i`'s Action (only jobs that have one are looked up and executed).
    fn built(&self, i: usize) -> &Built {
        self.built[i].as_ref().expect("only jobs with an Action reach the engine")
    }
}

fn lock(p: &Mutex<Progress>) -> std::sync::MutexGuard<'_, Progress> {
    p.lock().unwrap_or_else(|e| e.into_inner())
}

/// Hashes the input files, builds the Actions, and runs the jobs on the engine.
pub async fn run(file: JobFile, cwd: &Path, client: Client, cfg: &Config, progress: Arc<Mutex<Progress>>) -> Result<Outcome, String> {
    let layout = layout::compute(cwd, file.common_inputs.iter().map(String::as_str))?;

    // Every input file once; the shards (`inputs[1]`, one per job) are read when renamed.
    let mut digests: HashMap<String, re::Digest> = HashMap::new();
    let files = file.jobs.iter().flat_map(|j| j.inputs.iter().take(1).chain(j.inputs.iter().skip(2)));
    for p in file.common_inputs.iter().chain(files) {
        if !digests.contains_key(p) {
            let data = std::fs::read(p).map_err(|e| format!("cannot read input '{p}': {e}"))?;
            digests.insert(p.clone(), action::digest(&data));
        }
    }
    let settings = Settings { layout: &layout, common_args: &file.common_args, common_inputs: &file.common_inputs, platform: &cfg.platform, salt: &cfg.salt };
    // A job whose Action cannot be built (its shard unreadable or not naming its module) fails
    // alone; the others go on.
    let mut built = Vec::with_capacity(file.jobs.len());
    let mut failures: Vec<Failure> = Vec::new();
    for (i, j) in file.jobs.iter().enumerate() {
        let b = std::fs::read(&j.inputs[1])
            .map_err(|e| format!("cannot read input '{}': {e}", j.inputs[1]))
            .and_then(|shard| action::build(&settings, j, &|p| digests[p].clone(), &shard));
        match &b {
            Ok(b) if cfg.verbose => lock(&progress).message(&format!(
                "dtld-reapi: {} -> {}: action {}/{}\n",
                j.module(),
                j.output(),
                b.action_digest.hash,
                b.action_digest.size_bytes
            )),
            Ok(_) => {}
            Err(reason) => failures.push(Failure { job: i, reason: format!("cannot make its Action: {reason}") }),
        }
        built.push(b.ok());
    }

    let mut outcome = Outcome::default();
    let caps = match client.capabilities().await {
        Ok(c) => c,
        Err(e) => {
            let reason = format!("the REAPI engine is not usable: {e}");
            failures.extend((0..file.jobs.len()).filter(|&i| built[i].is_some()).map(|job| Failure { job, reason: reason.clone() }));
            failures.sort_by_key(|f| f.job);
            outcome.failures = failures;
            return Ok(outcome);
        }
    };
    let shared = Arc::new(Shared { client, caps, file, built, progress, down: AtomicBool::new(false), timeout: cfg.timeout });
    let n = shared.file.jobs.len();

    // 2. The action cache.
    let lookups = Arc::new(Semaphore::new(cfg.parallelism.max(32)));
    let mut set = JoinSet::new();
    for i in (0..n).filter(|&i| shared.built[i].is_some()) {
        let (s, sem) = (shared.clone(), lookups.clone());
        set.spawn(async move {
            let _permit = sem.acquire_owned().await;
            (i, lookup(&s, i).await)
        });
    }
    let mut misses: Vec<(usize, bool)> = Vec::new();
    while let Some(r) = set.join_next().await {
        let (i, r) = r.map_err(|e| format!("internal error: a job task failed: {e}"))?;
        match r {
            Ok(()) => outcome.hits += 1,
            Err(Miss::Retry { skip_cache_lookup }) => misses.push((i, skip_cache_lookup)),
            Err(Miss::Failed(reason)) => failures.push(Failure { job: i, reason }),
        }
    }
    misses.sort();

    // 3. Upload what the misses need and the CAS lacks, each blob once.
    if !misses.is_empty() {
        let mut seen = HashSet::new();
        let mut blobs = Vec::new();
        for &(i, _) in &misses {
            for (d, src) in &shared.built(i).blobs {
                if seen.insert(action::key(d)) {
                    blobs.push((d.clone(), src.clone()));
                }
            }
        }
        let wanted: Vec<re::Digest> = blobs.iter().map(|(d, _)| d.clone()).collect();
        let uploaded = match shared.client.find_missing(&wanted).await {
            Ok(missing) => {
                let missing: HashSet<_> = missing.iter().map(action::key).collect();
                blobs.retain(|(d, _)| missing.contains(&action::key(d)));
                shared.client.upload(blobs, &shared.caps).await
            }
            Err(s) => Err(format!("FindMissingBlobs: {}", status_text(&s))),
        };
        if let Err(e) = uploaded {
            let reason = format!("uploading the inputs failed: {e}");
            failures.extend(misses.drain(..).map(|(job, _)| Failure { job, reason: reason.clone() }));
        }
    }

    // 4. Execute the misses.
    let slots = Arc::new(Semaphore::new(cfg.parallelism.max(1)));
    let mut set = JoinSet::new();
    for (i, skip) in misses {
        let (s, sem) = (shared.clone(), slots.clone());
        set.spawn(async move {
            let _permit = sem.acquire_owned().await;
            (i, execute(&s, i, skip).await)
        });
    }
    while let Some(r) = set.join_next().await {
        let (i, r) = r.map_err(|e| format!("internal error: a job task failed: {e}"))?;
        match r {
            Ok(Done::Hit) => outcome.hits += 1,
            Ok(Done::Executed) => outcome.executed += 1,
            Err(reason) => failures.push(Failure { job: i, reason }),
        }
    }
    failures.sort_by_key(|f| f.job);
    outcome.failures = failures;
    Ok(outcome)
}

/// A failed call: marks the engine as gone when the failure was transient (retries used up).
fn call_failed(s: &Shared, what: &str, st: &Status) -> String {
    if transient(st) {
        s.down.store(true, Ordering::Relaxed);
    }
    format!("{what}: {}", status_text(st))
}

fn engine_down(s: &Shared) -> Option<String> {
    s.down.load(Ordering::Relaxed).then(|| "the REAPI engine stopped answering (an earlier call failed after its retries)".to_string())
}

/// The action cache for job `i`: its outputs written on a hit.
async fn lookup(s: &Shared, i: usize) -> Result<(), Miss> {
    if let Some(e) = engine_down(s) {
        return Err(Miss::Failed(e));
    }
    let job = &s.file.jobs[i];
    let start = Instant::now();
    let result = match s.client.cached_result(&s.built(i).action_digest).await {
        Ok(Some(r)) if r.exit_code == 0 => r,
        Ok(Some(_)) => return Err(Miss::Retry { skip_cache_lookup: true }),
        Ok(None) => return Err(Miss::Retry { skip_cache_lookup: false }),
        Err(st) => return Err(Miss::Failed(call_failed(s, "GetActionResult", &st))),
    };
    match outputs(s, i, &result).await {
        Ok(()) => {
            lock(&s.progress).finished_with(i, job.output(), true, start.elapsed(), ", cache hit");
            Ok(())
        }
        // An output of a cached result was evicted from the CAS: run the action again.
        Err(OutputError::Evicted) | Err(OutputError::Invalid(_)) => Err(Miss::Retry { skip_cache_lookup: true }),
        Err(OutputError::Failed(e)) => Err(Miss::Failed(e)),
    }
}

/// Executes job `i` and writes its outputs.
async fn execute(s: &Shared, i: usize, skip_cache_lookup: bool) -> Result<Done, String> {
    if let Some(e) = engine_down(s) {
        return Err(e);
    }
    let job = &s.file.jobs[i];
    let start = Instant::now();
    lock(&s.progress).started(i, job.module());
    let r = run_action(s, i, skip_cache_lookup).await;
    let mut p = lock(&s.progress);
    match &r {
        Ok(Done::Hit) => p.finished_with(i, job.output(), true, start.elapsed(), ", cache hit"),
        Ok(Done::Executed) => p.finished_with(i, job.output(), true, start.elapsed(), ", executed"),
        Err(_) => p.finished(i, job.output(), false, start.elapsed()),
    }
    r
}

async fn run_action(s: &Shared, i: usize, skip_cache_lookup: bool) -> Result<Done, String> {
    let job = &s.file.jobs[i];
    let resp = s.client.execute(&s.built(i).action_digest, skip_cache_lookup, s.timeout).await.map_err(|st| call_failed(s, "Execute", &st))?;
    let Some(result) = resp.result else {
        return Err("the engine returned no result".into());
    };
    let engine_status = resp.status.filter(|st| st.code != 0).map(|st| status_text(&Status::new(Code::from_i32(st.code), st.message)));
    if result.exit_code != 0 || engine_status.is_some() {
        let mut text = Vec::new();
        for (raw, d) in [(&result.stdout_raw, &result.stdout_digest), (&result.stderr_raw, &result.stderr_digest)] {
            if !raw.is_empty() {
                text.extend_from_slice(raw);
            } else if let Some(d) = d.as_ref().filter(|d| d.size_bytes > 0) {
                if let Ok(data) = s.client.read(d, &s.caps).await {
                    text.extend_from_slice(&data);
                }
            }
        }
        if !text.is_empty() {
            // The compiler names the files by their names in the Action: give them their paths.
            let text = s.built(i).unname(&String::from_utf8_lossy(&text));
            let mut block = format!("dtld-reapi: output of {} -> {}:\n{text}", job.module(), job.output());
            if !block.ends_with('\n') {
                block.push('\n');
            }
            lock(&s.progress).message(&block);
        }
        return Err(match engine_status {
            Some(st) => format!("the engine reported {st} (exit code {})", result.exit_code),
            None => format!("compiler exited with code {} on the engine", result.exit_code),
        });
    }
    match outputs(s, i, &result).await {
        Ok(()) if resp.cached_result => Ok(Done::Hit),
        Ok(()) => Ok(Done::Executed),
        Err(OutputError::Evicted) => Err("an output of the result is no longer in the engine's CAS".into()),
        Err(OutputError::Invalid(e)) | Err(OutputError::Failed(e)) => Err(e),
    }
}

enum OutputError {
    /// NOT_FOUND reading an output blob.
    Evicted,
    /// Missing from the result, empty, or not an object.
    Invalid(String),
    /// The engine could not be reached, or the file could not be written.
    Failed(String),
}

/// Downloads, checks and writes every output of job `i` from `result`.
async fn outputs(s: &Shared, i: usize, result: &re::ActionResult) -> Result<(), OutputError> {
    let job = &s.file.jobs[i];
    let mut files = Vec::new();
    for (local, wanted) in job.outputs.iter().zip(&s.built(i).outputs) {
        let Some(f) = result.output_files.iter().find(|f| f.path == *wanted) else {
            return Err(OutputError::Invalid(format!("the engine's result has no output '{wanted}'")));
        };
        let d = f.digest.clone().unwrap_or_default();
        let data = if !f.contents.is_empty() && action::digest(&f.contents) == d {
            f.contents.clone()
        } else {
            match s.client.read(&d, &s.caps).await {
                Ok(data) => data,
                Err(st) if st.code() == Code::NotFound => return Err(OutputError::Evicted),
                Err(st) => return Err(OutputError::Failed(call_failed(s, &format!("reading output '{wanted}'"), &st))),
            }
        };
        dtld_distributor::run::check_object_bytes(&data, local)
            .map_err(|e| OutputError::Invalid(e.replace("compiler exited 0 but wrote", "the engine returned")))?;
        files.push((local, data));
    }
    for (local, data) in files {
        std::fs::write(local, &data).map_err(|e| OutputError::Failed(format!("cannot write '{local}': {e}")))?;
    }
    Ok(())
}
