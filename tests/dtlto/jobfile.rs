//! The job file a DTLTO link hands its distributor, read back by the tests: the job list with
//! its module identities and imports, in ld.lld 22's schema, so that dtld's jobs can be
//! compared with lld's job for job.

use std::collections::BTreeSet;

use std::path::Path;

use regex::Regex;
use serde_json::Value;

/// The identity of the module a job-file path stands for, the same for dtld's and lld's names:
/// the file name of the object the module came from. For an archive member, whatever the
/// linker's naming (`libarch.a(arch.o at 84)` plus lld's `.<seq>.<HEXPID>.o` or dtld's `.o`),
/// that is the member's file name (`arch.o`); otherwise the path's file name, after removing
/// dtld's staging prefix (`<output>.dtld-lto/[<content tag>-[<n>-]]`, or an older dtld's
/// `<content tag>/`) and lld's temporary-name
/// decorations (`.<task>.<pid>.native.o`, `.<seq>.<HEXPID>.o`, `.thinlto.bc`). The test
/// inputs have unique file names, so this tells every module apart (thin-archive members are
/// `lib/thin.o` for lld 22 but may be named after the archive by dtld).
pub(crate) fn module_identity(path: &str, linker_output: &str) -> String {
    let mut p = path.to_string();
    if let Some(rest) = p.strip_prefix(&format!("{linker_output}.dtld-lto/")) {
        p = rest.to_string();
        let tagged = Regex::new(r"^[0-9a-f]{16}(-\d+)?[-/]").expect("valid regex");
        p = tagged.replace(&p, "").into_owned();
    }
    let member = Regex::new(r"\(([^()]+) at \d+\)").expect("valid regex");
    if let Some(c) = member.captures(&p) {
        return Path::new(&c[1]).file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_else(|| c[1].to_string());
    }
    for re in [r"\.thinlto\.bc$", r"\.\d+\.\d+\.native\.o$", r"\.native\.o$", r"\.\d+\.[0-9A-F]+\.o$"] {
        p = Regex::new(re).expect("valid regex").replace(&p, "").into_owned();
    }
    Path::new(&p).file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or(p)
}

/// One job of a job file, checked for lld 22's shape.
pub(crate) struct JobView {
    pub module: String,
    pub shard: String,
    pub output: String,
    pub imports: Vec<String>,
}

fn strings(v: &Value, what: &str) -> Result<Vec<String>, String> {
    v.as_array()
        .ok_or_else(|| format!("{what} is not an array: {v}"))?
        .iter()
        .map(|s| s.as_str().map(str::to_string).ok_or_else(|| format!("{what} has a non-string element: {s}")))
        .collect()
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default()
}

/// Checks the job file's schema (lld 22's, see dtlto-llvm22.md §1) and returns its jobs.
pub(crate) fn parse_job_file(text: &str, json: &Value) -> Result<Vec<JobView>, String> {
    let mut problems = Vec::new();
    if text.contains('\n') {
        problems.push("the job file is not one line".to_string());
    }
    // llvm::json::OStream keeps insertion order; serde_json's map does not, so check the text.
    if !text.starts_with(r#"{"common":{"linker_output":"#) {
        problems.push(format!("the job file does not start with {{\"common\":{{\"linker_output\": (lld's key order): {}", &text[..text.len().min(80)]));
    }
    let want = |k: &[&str]| k.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    if keys(json) != want(&["common", "jobs"]) {
        problems.push(format!("top-level keys {:?}, expected common, jobs", keys(json)));
    }
    if keys(&json["common"]) != want(&["linker_output", "args", "inputs"]) {
        problems.push(format!("common has keys {:?}, expected linker_output, args, inputs", keys(&json["common"])));
    }
    let jobs = json["jobs"].as_array().cloned().unwrap_or_default();
    let jobs_text = text.split_once(r#"},"jobs":["#).map_or("", |(_, rest)| rest);
    for (k, pattern) in [("args", r#"{"args":["#), ("inputs", r#"],"inputs":["#), ("outputs", r#"],"outputs":["#)] {
        if jobs_text.matches(pattern).count() != jobs.len() {
            problems.push(format!(
                "`{pattern}` occurs {} times for {} jobs (job key order args, inputs, outputs; key {k})",
                jobs_text.matches(pattern).count(),
                jobs.len()
            ));
        }
    }
    let mut views = Vec::new();
    for (i, job) in jobs.iter().enumerate() {
        let n = i + 1;
        if keys(job) != want(&["args", "inputs", "outputs"]) {
            problems.push(format!("job {n} has keys {:?}", keys(job)));
            continue;
        }
        let (args, inputs, outputs) = match (strings(&job["args"], "args"), strings(&job["inputs"], "inputs"), strings(&job["outputs"], "outputs")) {
            (Ok(a), Ok(i), Ok(o)) => (a, i, o),
            (a, i, o) => {
                for e in [a.err(), i.err(), o.err()].into_iter().flatten() {
                    problems.push(format!("job {n}: {e}"));
                }
                continue;
            }
        };
        if args.len() != 4 || inputs.len() < 2 || outputs.len() != 1 {
            problems.push(format!("job {n}: expected 4 args, at least 2 inputs and 1 output: {job}"));
            continue;
        }
        if args[0] != inputs[0] || args[1] != format!("-fthinlto-index={}", inputs[1]) || args[2] != "-o" || args[3] != outputs[0] {
            problems.push(format!("job {n}: args are not [inputs[0], -fthinlto-index=inputs[1], -o, outputs[0]]: {job}"));
        }
        let imports = inputs[2..].to_vec();
        let mut sorted = imports.clone();
        sorted.sort();
        sorted.dedup();
        if sorted != imports {
            problems.push(format!("job {n}: import sources not sorted byte-wise without duplicates: {imports:?}"));
        }
        views.push(JobView { module: args[0].clone(), shard: inputs[1].clone(), output: outputs[0].clone(), imports });
    }
    if problems.is_empty() {
        Ok(views)
    } else {
        Err(problems.join("\n"))
    }
}

/// Module identity → identities of its import sources, in job order.
pub(crate) fn import_map(jobs: &[JobView], out: &str) -> Vec<(String, BTreeSet<String>)> {
    jobs.iter().map(|j| (module_identity(&j.module, out), j.imports.iter().map(|p| module_identity(p, out)).collect())).collect()
}

/// `text` (a job file, a path, a directory listing) with the process ids that ld.lld 22's
/// temporary names carry replaced by placeholders, so that two links' names compare equal:
/// `<stem>.<task>.<pid>.native.o` (and its `.thinlto.bc`), `<stem>.<pid>.dist-file.json`, and a
/// written-out archive member's `<name>.<seq>.<PID in hex>.o` (lld's `lib.a(m.o at 8).3.1A2B.o`,
/// lld-link's `lib.libm.obj0.3.1A2B.o`).
pub(crate) fn without_pids(text: &str) -> String {
    let native = Regex::new(r"(\.\d+)\.\d+\.native\.o").expect("valid regex");
    let job = Regex::new(r"\.\d+\.dist-file\.json").expect("valid regex");
    let member = Regex::new(r"(\.\d+)\.[0-9A-F]+(\.o\b|\.\d+\.PID\.native)").expect("valid regex");
    let t = native.replace_all(text, "$1.PID.native.o");
    let t = job.replace_all(&t, ".PID.dist-file.json");
    member.replace_all(&t, "$1.HEXPID$2").into_owned()
}
