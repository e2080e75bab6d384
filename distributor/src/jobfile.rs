//! The DTLTO job file: reading it and checking its shape before anything runs.
//!
//! The linker writes one JSON object (schema: `docs/distributor.md`, and LLVM's
//! `llvm/utils/dtlto/validate.py` for the rules): `common` holds the compiler command prefix, each
//! element of `jobs` one backend compilation. The schema has no version field, so the only defence
//! against a linker that speaks a different dialect is to be strict: every member must be present,
//! have the right type, and nothing else may be there. A mistake is reported with the JSON path of
//! the offending value (`jobs[3].inputs`), never as a panic.

use serde_json::{Map, Value};
use std::fmt;
use std::path::Path;

/// A validated job file.
#[derive(Debug, Clone, PartialEq)]
pub struct JobFile {
    /// The linker's output path, as given to the linker (used only for messages).
    pub linker_output: String,
    /// Command prefix shared by every job; `[0]` is the compiler.
    pub common_args: Vec<String>,
    /// Files every job reads (a sample profile, if any). Only a remote distributor needs these.
    pub common_inputs: Vec<String>,
    pub jobs: Vec<Job>,
}

/// One backend compilation: run `common.args ++ args`, which must produce `outputs[0]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub args: Vec<String>,
    /// `[0]` is the module's bitcode, `[1]` its summary shard, the rest import sources.
    pub inputs: Vec<String>,
    /// `[0]` is the native object the linker reads back.
    pub outputs: Vec<String>,
}

impl Job {
    /// The bitcode module this job compiles.
    pub fn module(&self) -> &str {
        &self.inputs[0]
    }

    /// The object file the linker expects.
    pub fn output(&self) -> &str {
        &self.outputs[0]
    }
}

/// Why a job file was rejected.
#[derive(Debug, Clone, PartialEq)]
pub enum JobFileError {
    /// The file could not be read.
    Read(String),
    /// The file is not JSON.
    Syntax(String),
    /// The file is JSON but not a job file: `at` is the JSON path, `problem` what is wrong there.
    Shape { at: String, problem: String },
}

impl fmt::Display for JobFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JobFileError::Read(e) => write!(f, "cannot read: {e}"),
            JobFileError::Syntax(e) => write!(f, "not valid JSON: {e}"),
            JobFileError::Shape { at, problem } => write!(f, "{at}: {problem}"),
        }
    }
}

/// Reads and validates the job file at `path`.
pub fn load(path: &Path) -> Result<JobFile, JobFileError> {
    let bytes = std::fs::read(path).map_err(|e| JobFileError::Read(e.to_string()))?;
    parse(&bytes)
}

/// Parses and validates job file text.
pub fn parse(bytes: &[u8]) -> Result<JobFile, JobFileError> {
    let doc: Value = serde_json::from_slice(bytes).map_err(|e| JobFileError::Syntax(e.to_string()))?;
    let top = object(&doc, "top level")?;
    exact_keys(top, "top level", &["common", "jobs"])?;

    let common = object(&top["common"], "common")?;
    exact_keys(common, "common", &["linker_output", "args", "inputs"])?;
    let linker_output = match &common["linker_output"] {
        Value::String(s) => s.clone(),
        other => return Err(shape("common.linker_output", format!("expected a string, found {}", kind(other)))),
    };
    let common_args = strings(&common["args"], "common.args", 1)?;
    let common_inputs = strings(&common["inputs"], "common.inputs", 0)?;

    let Value::Array(list) = &top["jobs"] else {
        return Err(shape("jobs", format!("expected an array, found {}", kind(&top["jobs"]))));
    };
    let mut jobs = Vec::with_capacity(list.len());
    for (i, value) in list.iter().enumerate() {
        let at = format!("jobs[{i}]");
        let job = object(value, &at)?;
        exact_keys(job, &at, &["args", "inputs", "outputs"])?;
        jobs.push(Job {
            args: strings(&job["args"], &format!("{at}.args"), 0)?,
            inputs: strings(&job["inputs"], &format!("{at}.inputs"), 2)?,
            outputs: strings(&job["outputs"], &format!("{at}.outputs"), 1)?,
        });
    }
    Ok(JobFile { linker_output, common_args, common_inputs, jobs })
}

fn shape(at: &str, problem: String) -> JobFileError {
    JobFileError::Shape { at: at.to_string(), problem }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn object<'a>(v: &'a Value, at: &str) -> Result<&'a Map<String, Value>, JobFileError> {
    v.as_object().ok_or_else(|| shape(at, format!("expected an object, found {}", kind(v))))
}

/// The object must have exactly `keys`: a missing member and an unknown one are both errors.
fn exact_keys(obj: &Map<String, Value>, at: &str, keys: &[&str]) -> Result<(), JobFileError> {
    if let Some(missing) = keys.iter().find(|k| !obj.contains_key(**k)) {
        return Err(shape(at, format!("missing member \"{missing}\"")));
    }
    if let Some(extra) = obj.keys().find(|k| !keys.contains(&k.as_str())) {
        let expected = keys.iter().map(|k| format!("\"{k}\"")).collect::<Vec<_>>().join(", ");
        return Err(shape(at, format!("unexpected member \"{extra}\" (expected exactly {expected})")));
    }
    Ok(())
}

/// An array of at least `min` strings.
fn strings(v: &Value, at: &str, min: usize) -> Result<Vec<String>, JobFileError> {
    let Value::Array(items) = v else {
        return Err(shape(at, format!("expected an array of strings, found {}", kind(v))));
    };
    if items.len() < min {
        let plural = if min == 1 { "entry" } else { "entries" };
        return Err(shape(at, format!("expected at least {min} {plural}, found {}", items.len())));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| match item {
            Value::String(s) => Ok(s.clone()),
            other => Err(shape(&format!("{at}[{i}]"), format!("expected a string, found {}", kind(other)))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"common":{"linker_output":"out.elf","args":["/usr/bin/clang","-c"],"inputs":[]},
        "jobs":[{"args":["t1.o","-fthinlto-index=t1.bc","-o","t1.native.o"],
                 "inputs":["t1.o","t1.bc","t2.o"],"outputs":["t1.native.o"]}]}"#;

    fn err(text: &str) -> String {
        parse(text.as_bytes()).unwrap_err().to_string()
    }

    #[test]
    fn accepts_lld_output() {
        let f = parse(GOOD.as_bytes()).unwrap();
        assert_eq!(f.linker_output, "out.elf");
        assert_eq!(f.common_args, ["/usr/bin/clang", "-c"]);
        assert_eq!(f.jobs.len(), 1);
        assert_eq!(f.jobs[0].module(), "t1.o");
        assert_eq!(f.jobs[0].output(), "t1.native.o");
    }

    #[test]
    fn accepts_no_jobs_and_empty_job_args() {
        let f = parse(br#"{"common":{"linker_output":"a","args":[""],"inputs":["p.prof"]},"jobs":[]}"#).unwrap();
        assert!(f.jobs.is_empty());
        assert_eq!(f.common_inputs, ["p.prof"]);
        let f = parse(br#"{"common":{"linker_output":"a","args":["cc"],"inputs":[]},"jobs":[{"args":[],"inputs":["a","b"],"outputs":["c"]}]}"#).unwrap();
        assert!(f.jobs[0].args.is_empty());
    }

    #[test]
    fn rejects_bad_shapes() {
        assert!(err("").starts_with("not valid JSON"));
        assert!(err("{\"common\":").starts_with("not valid JSON"));
        assert_eq!(err("[]"), "top level: expected an object, found an array");
        assert_eq!(err(r#"{"jobs":[]}"#), "top level: missing member \"common\"");
        assert_eq!(
            err(&GOOD.replacen("{\"common\"", "{\"version\":1,\"common\"", 1)),
            "top level: unexpected member \"version\" (expected exactly \"common\", \"jobs\")"
        );
        assert_eq!(err(&GOOD.replace("\"linker_output\":\"out.elf\"", "\"linker_output\":3")), "common.linker_output: expected a string, found a number");
        assert_eq!(err(&GOOD.replace("[\"/usr/bin/clang\",\"-c\"]", "[]")), "common.args: expected at least 1 entry, found 0");
        assert_eq!(err(&GOOD.replace("\"-c\"", "7")), "common.args[1]: expected a string, found a number");
        assert_eq!(err(&GOOD.replace("\"inputs\":[]", "\"inputs\":null")), "common.inputs: expected an array of strings, found null");
        assert_eq!(err(&GOOD.replace(",\"t2.o\"]", "]").replace(",\"t1.bc\"", "")), "jobs[0].inputs: expected at least 2 entries, found 1");
        assert_eq!(err(&GOOD.replace("[\"t1.native.o\"]", "[]")), "jobs[0].outputs: expected at least 1 entry, found 0");
        assert_eq!(err(&GOOD.replace(",\"outputs\":[\"t1.native.o\"]", "")), "jobs[0]: missing member \"outputs\"");
        assert_eq!(err(r#"{"common":{"linker_output":"a","args":["cc"],"inputs":[]},"jobs":[5]}"#), "jobs[0]: expected an object, found a number");
        assert_eq!(err(r#"{"common":{"linker_output":"a","args":["cc"],"inputs":[]},"jobs":{}}"#), "jobs: expected an array, found an object");
    }

    /// The jobfile fuzzer's committed corpus and findings (fuzz/corpus/jobfile,
    /// fuzz/regressions/jobfile) parse without a panic.
    #[test]
    fn fuzz_corpus_replay() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
        let mut n = 0;
        for dir in ["corpus", "regressions"] {
            let Ok(rd) = std::fs::read_dir(root.join(dir).join("jobfile")) else { continue };
            for e in rd.flatten() {
                let data = std::fs::read(e.path()).unwrap();
                let _ = parse(&data);
                n += 1;
            }
        }
        assert!(n > 0, "no committed jobfile corpus");
    }
}
