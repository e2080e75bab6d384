//! DTLTO: the backend jobs handed to an external distributor through lld 22's job file.
//!
//! The job file has exactly the schema ld.lld 22 writes (`llvm/lib/LTO/LTO.cpp`,
//! `emitDistributorJson`), so every distributor written for LLVM works unchanged: one line of
//! JSON, `{"common":{"linker_output","args","inputs"},"jobs":[{"args","inputs","outputs"}]}`,
//! where a job's command is `common.args ++ job.args`, run in the linker's working directory.
//! The distributor runs as `[distributor, args..., <job file>]`.
//!
//! Where dtld differs from lld 22, on purpose: a bare distributor name is looked up on `PATH`;
//! the distributor's exit status or signal is reported; every missing output is listed; an
//! empty or non-ELF object is an error naming the job and its module (lld silently links an
//! empty object); jobs that hit the cache are not in the file and, when all hit, no
//! distributor runs at all.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Error, Result};
use crate::lto::backend::{check_object, Cache, Job, Known, Object, Stats};
use crate::lto::temps::{Kind, Temps};
use std::os::unix::process::CommandExt as _;

use crate::util::json::{json_array, json_string};

/// A job's `inputs`: the module, its shard, then the import sources sorted byte-wise (lld 22's
/// order).
pub fn job_inputs(job: &Job) -> Vec<String> {
    let mut imports: Vec<String> = job.imports.clone();
    imports.sort();
    imports.dedup();
    let mut v = vec![job.module.clone(), job.shard.clone()];
    v.extend(imports);
    v
}

/// The job file text: one line, no trailing newline, members in lld's order.
pub fn job_file(linker_output: &str, common: &[String], common_inputs: &[String], jobs: &[&Job]) -> String {
    let jobs: Vec<String> = jobs
        .iter()
        .map(|j| {
            format!(
                "{{\"args\":{},\"inputs\":{},\"outputs\":{}}}",
                json_array(&j.args()),
                json_array(&job_inputs(j)),
                json_array(std::slice::from_ref(&j.output))
            )
        })
        .collect();
    format!(
        "{{\"common\":{{\"linker_output\":{},\"args\":{},\"inputs\":{}}},\"jobs\":[{}]}}",
        json_string(linker_output),
        json_array(common),
        json_array(common_inputs),
        jobs.join(",")
    )
}

/// The distributor program: a path as given, or a bare name looked up on `PATH`.
pub fn find_program(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        return Some(PathBuf::from(name));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

fn describe_status(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        return format!("exit status {code}");
    }
    match status.signal() {
        Some(sig) => {
            let name = match sig {
                1 => "SIGHUP",
                2 => "SIGINT",
                6 => "SIGABRT",
                9 => "SIGKILL",
                11 => "SIGSEGV",
                15 => "SIGTERM",
                _ => "",
            };
            if name.is_empty() {
                format!("killed by signal {sig}")
            } else {
                format!("killed by signal {sig} ({name})")
            }
        }
        None => "unknown status".to_string(),
    }
}

pub struct Distributor<'a> {
    pub program: &'a str,
    pub args: &'a [String],
    pub linker_output: &'a str,
    pub common_inputs: &'a [String],
    /// Where the job file goes.
    pub job_file: PathBuf,
    /// The link's temporaries: the job file and the native objects are registered there
    /// (removed after the link and on a signal, unless kept).
    pub temps: &'a Temps,
    /// Writes what the given jobs read (their modules, import sources and shards) when the
    /// thin link left it in memory: called with the jobs that miss the cache, before the job
    /// file is written.
    pub prepare: Option<&'a (dyn Fn(&[&Job]) -> Result<()> + Sync)>,
    /// `--verbose`: the link's diagnostics, told how the distributor ended, beyond lld's words.
    pub verbose: Option<&'a crate::diag::Diag>,
    /// Where the steps are timed under lld's `--time-trace` names.
    pub steps: &'a crate::staging::Steps,
}

/// lld's words for a distributor that did not succeed (`sys::ExecuteAndWait`'s message).
fn failed(detail: Option<String>) -> Error {
    match detail {
        Some(d) => Error::new(format!("DTLTO backend compilation: distributor execution failed: {d}.")),
        None => Error::new("DTLTO backend compilation: distributor execution failed.".to_string()),
    }
}

/// The signal's description as `strsignal` gives it ("Killed", "Interrupt"), as LLVM reports
/// a child that died by a signal.
fn signal_text(sig: i32) -> String {
    // SAFETY: strsignal returns a pointer to a static or thread-local string, or null.
    let p = unsafe { libc::strsignal(sig) };
    if p.is_null() {
        return format!("signal {sig}");
    }
    // SAFETY: a non-null result of strsignal is a NUL-terminated string.
    unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// Runs the jobs that miss the cache through the distributor, in `cwd` (the linker's working
/// directory). Returns every job's object bytes, in job order.
/// `known` (by job, or empty) holds what the thin link already learned from the cache
/// (`Known`): such a job is neither keyed nor looked up again.
pub fn run(d: &Distributor, common: &[String], jobs: &[Job], known: &[Option<Known>], cwd: &Path, cache: Option<&Cache>) -> Result<(Vec<Object>, Stats)> {
    let mut objects: Vec<Option<Object>> = vec![None; jobs.len()];
    let mut keys: Vec<Option<String>> = vec![None; jobs.len()];
    let mut stats = Stats::default();
    if let Some(c) = cache {
        use rayon::prelude::*;
        let found: Vec<(Option<String>, Option<&'static [u8]>)> = jobs
            .par_iter()
            .enumerate()
            .map(|(i, j)| {
                if let Some(Some(k)) = known.get(i) {
                    return (Some(k.key.clone()), k.hit);
                }
                d.steps.time("Check cache for DTLTO", &j.shard, || {
                    let k = c.key(common, j, cwd);
                    let data = k.as_ref().and_then(|k| c.lookup(k));
                    (k, data)
                })
            })
            .collect();
        stats.cache_files = vec![None; jobs.len()];
        for (i, (k, data)) in found.into_iter().enumerate() {
            if data.is_some() {
                stats.cached += 1;
                stats.cache_files[i] = k.as_deref().map(Cache::file_name);
            }
            keys[i] = k;
            objects[i] = data.map(Object::Borrowed);
        }
    }
    let misses: Vec<usize> = (0..jobs.len()).filter(|&i| objects[i].is_none()).collect();
    if misses.is_empty() {
        if d.temps.kept(Kind::JobFile) {
            // lld writes the job file when every job hit too (and runs no distributor).
            let text = job_file(d.linker_output, common, d.common_inputs, &[]);
            d.steps.time("Emit DTLTO JSON", "", || d.temps.create(&cwd.join(&d.job_file), text.as_bytes(), Kind::JobFile))?;
        }
        return Ok((objects.into_iter().map(|o| o.unwrap_or_default()).collect(), stats));
    }
    let miss_jobs: Vec<&Job> = misses.iter().map(|&i| &jobs[i]).collect();
    if let Some(prepare) = d.prepare {
        prepare(&miss_jobs)?;
    }
    for j in &miss_jobs {
        d.temps.expect(&cwd.join(&j.output), Kind::Native);
    }
    d.steps.time("Emit DTLTO JSON", "", || {
        let text = job_file(d.linker_output, common, d.common_inputs, &miss_jobs);
        d.temps.create(&cwd.join(&d.job_file), text.as_bytes(), Kind::JobFile)
    })?;
    let status = d.steps.time("Execute DTLTO distributor", d.program, || distribute(d, cwd))?;
    if !status.success() && crate::cleanup::interrupted() {
        // A signal is ending the link and stopped the distributor: the watcher removes the
        // temporaries and ends the process by the signal, as lld ends; nothing to report.
        std::thread::sleep(std::time::Duration::from_secs(5));
    }
    if !status.success() {
        if let Some(diag) = d.verbose {
            diag.log(&format!(
                "thinlto: distributor {} ended with {} ({} jobs in {})",
                d.program,
                describe_status(status),
                miss_jobs.len(),
                d.job_file.display()
            ));
        }
        use std::os::unix::process::ExitStatusExt;
        return Err(failed(status.signal().map(|s| {
            let core = if status.core_dumped() { " (core dumped)" } else { "" };
            format!("{}{core}", signal_text(s))
        })));
    }
    d.steps.time("Add DTLTO files to the link", "", || read_objects(jobs, &misses, &keys, cwd, cache, &mut objects, &mut stats))?;
    Ok((objects.into_iter().map(|o| o.unwrap_or_default()).collect(), stats))
}

/// Runs the distributor on the job file and waits for it.
fn distribute(d: &Distributor, cwd: &Path) -> Result<std::process::ExitStatus> {
    // lld runs the distributor as given; dtld also finds a bare name on PATH.
    let program = find_program(d.program).ok_or_else(|| failed(Some("posix_spawn failed: No such file or directory".into())))?;
    let mut child = Command::new(&program)
        .arg0(d.program)
        .args(d.args)
        .arg(&d.job_file)
        .current_dir(cwd)
        .spawn()
        .map_err(|e| failed(Some(format!("posix_spawn failed: {}", crate::error::io_error(&e)))))?;
    let _stop_on_signal = crate::cleanup::register_child(child.id());
    child.wait().map_err(|e| failed(Some(crate::error::io_error(&e))))
}

/// Reads the objects of the jobs `misses` ran, caches them, and reports every one that is
/// missing (an empty one is recorded in `stats.empty`).
fn read_objects(
    jobs: &[Job],
    misses: &[usize],
    keys: &[Option<String>],
    cwd: &Path,
    cache: Option<&Cache>,
    objects: &mut [Option<Object>],
    stats: &mut Stats,
) -> Result<()> {
    let mut errors = Vec::new();
    for &i in misses {
        let j = &jobs[i];
        match std::fs::read(cwd.join(&j.output)) {
            // lld links an empty object as if it had no code (a backend that failed quietly, as
            // clang 22 does on a module path it cannot load back): so does dtld, which also
            // says so (`Stats::empty`). Other objects are checked as link inputs
            // (`native_objects`), in lld's words; only good ones are cached.
            Ok(data) if data.is_empty() => {
                stats.compiled += 1;
                stats.empty.push(j.output.clone());
                objects[i] = Some(Object::Owned(data));
            }
            Ok(data) => {
                if let (Some(c), Some(k)) = (cache, &keys[i]) {
                    if check_object(&data).is_ok() && c.store(k, &data) {
                        stats.cache_files[i] = Some(Cache::file_name(k));
                    }
                }
                stats.compiled += 1;
                objects[i] = Some(Object::Owned(data));
            }
            Err(e) => errors.push(format!("DTLTO backend compilation: cannot open native object file: {}: {}", j.output, crate::error::io_error(&e))),
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Error::many(errors))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(m: &str, imports: &[&str]) -> Job {
        Job {
            display: m.to_string(),
            module: m.to_string(),
            shard: format!("{m}.thinlto.bc"),
            output: format!("{m}.native.o"),
            imports: imports.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn schema_matches_lld() {
        let common: Vec<String> = ["/usr/lib/llvm-22/bin/clang", "-c"].iter().map(|s| s.to_string()).collect();
        let j1 = job("t1.o", &["t2.o"]);
        let j2 = job("t2.o", &[]);
        let text = job_file("out.elf", &common, &[], &[&j1, &j2]);
        assert_eq!(
            text,
            r#"{"common":{"linker_output":"out.elf","args":["/usr/lib/llvm-22/bin/clang","-c"],"inputs":[]},"jobs":[{"args":["t1.o","-fthinlto-index=t1.o.thinlto.bc","-o","t1.o.native.o"],"inputs":["t1.o","t1.o.thinlto.bc","t2.o"],"outputs":["t1.o.native.o"]},{"args":["t2.o","-fthinlto-index=t2.o.thinlto.bc","-o","t2.o.native.o"],"inputs":["t2.o","t2.o.thinlto.bc"],"outputs":["t2.o.native.o"]}]}"#
        );
    }

    #[test]
    fn escaping() {
        assert_eq!(json_string("a b\\c\"ü.o"), r#""a b\\c\"ü.o""#);
        assert_eq!(json_string("x\ny\u{1}"), r#""x\ny\u0001""#);
    }

    #[test]
    fn import_order_is_bytewise() {
        let j = job("m.o", &["b.o", "B.o", "a.o", "b.o"]);
        assert_eq!(job_inputs(&j), vec!["m.o", "m.o.thinlto.bc", "B.o", "a.o", "b.o"]);
    }

    #[test]
    fn program_lookup() {
        assert_eq!(find_program("/x/y"), Some(PathBuf::from("/x/y")));
        assert!(find_program("sh").is_some());
        assert!(find_program("surely-not-a-program-dtld").is_none());
    }
}
