//! Behaviour of `dtld-distribute` on job files run with fake compilers: what counts as a failed
//! job, what is printed, which files are left behind, and the exit codes. The fake compilers are
//! shell scripts (see `common::fake_compiler`); the distributor itself runs them by argv.

mod common;

use common::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn exists(dir: &Path, file: &str) -> bool {
    dir.join(file).exists()
}

#[test]
fn all_jobs_succeed_and_parallelism_does_not_change_results() {
    let modules = [("a", 10), ("b", 300), ("c", 20), ("d", 4000), ("e", 1), ("f", 50)];
    let mut results = Vec::new();
    for j in ["1", "4"] {
        let dir = scratch(&format!("parallel-j{j}"));
        let cc = fake_compiler(&dir, "cc", &format!("sleep 0.05\n{WRITE_ELF}"));
        let jobs = job_file(&dir, cc.to_str().unwrap(), &modules);
        let run = distribute(&dir, &["-j", j, "--verbose", jobs]);
        assert_eq!(run.code, Some(0), "{run:?}");
        assert!(run.stderr.contains(&format!("max parallel {j}")), "{}", run.stderr);
        let done = run.stderr.lines().filter(|l| l.starts_with("dtld-distribute: [") && l.contains(" done (")).count();
        assert_eq!(done, modules.len(), "{}", run.stderr);
        let objects: Vec<Vec<u8>> = modules.iter().map(|(m, _)| std::fs::read(dir.join(format!("{m}.native.o"))).unwrap()).collect();
        results.push(objects);
    }
    assert_eq!(results[0], results[1]);
    assert_eq!(results[0][1], b"\x7fELF-b\n");
}

#[test]
fn failing_compiler_fails_the_run_and_names_the_job() {
    let dir = scratch("compiler-fails");
    let body = format!("if [ $name = b ]; then echo partial > \"$out\"; echo 'b.c:1:1: error: boom' >&2; exit 1; fi\n{WRITE_ELF}");
    let cc = fake_compiler(&dir, "cc", &body);
    let jobs = job_file(&dir, cc.to_str().unwrap(), &[("a", 1), ("b", 1), ("c", 1)]);
    let run = distribute(&dir, &[jobs]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.stderr.contains("dtld-distribute: output of b.bc -> b.native.o:\nb.c:1:1: error: boom\n"), "{}", run.stderr);
    assert!(run.stderr.contains("dtld-distribute: error: b.bc -> b.native.o failed: compiler exited with code 1\n"));
    assert!(run.stderr.ends_with("dtld-distribute: error: 1 of 3 jobs failed:\n  b.bc -> b.native.o: compiler exited with code 1\n"), "{}", run.stderr);
    assert!(!exists(&dir, "b.native.o"), "a failed job's output must be removed");
    assert!(exists(&dir, "a.native.o") && exists(&dir, "c.native.o"), "the other jobs still run");
}

#[test]
fn exit_zero_with_an_empty_output_is_a_failure() {
    let dir = scratch("empty-output");
    let cc = fake_compiler(&dir, "cc", r#": > "$out""#);
    let jobs = job_file(&dir, cc.to_str().unwrap(), &[("a", 1)]);
    let run = distribute(&dir, &[jobs]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.stderr.contains("  a.bc -> a.native.o: compiler exited 0 but wrote an empty a.native.o\n"), "{}", run.stderr);
    assert!(!exists(&dir, "a.native.o"));
}

#[test]
fn exit_zero_without_an_output_is_a_failure() {
    let dir = scratch("missing-output");
    let cc = fake_compiler(&dir, "cc", "echo 'nothing to do'");
    let jobs = job_file(&dir, cc.to_str().unwrap(), &[("a", 1), ("b", 1)]);
    let run = distribute(&dir, &["--progress=never", jobs]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.stderr.contains("dtld-distribute: error: 2 of 2 jobs failed:\n"), "{}", run.stderr);
    assert!(run.stderr.contains("  a.bc -> a.native.o: compiler exited 0 but did not write a.native.o\n"));
    assert!(run.stderr.contains("dtld-distribute: output of a.bc -> a.native.o:\nnothing to do\n"));
}

#[test]
fn output_that_is_not_an_object_is_a_failure() {
    let dir = scratch("not-an-object");
    let cc = fake_compiler(&dir, "cc", r#"echo 'hello' > "$out""#);
    let jobs = job_file(&dir, cc.to_str().unwrap(), &[("a", 1)]);
    let run = distribute(&dir, &[jobs]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.stderr.contains("a.native.o is not an ELF or COFF object (starts with 68 65 6c 6c)"), "{}", run.stderr);
    assert!(!exists(&dir, "a.native.o"));
}

#[test]
fn coff_objects_are_accepted() {
    let dir = scratch("coff");
    // IMAGE_FILE_MACHINE_AMD64 and the rest of a 20-byte file header.
    let cc = fake_compiler(&dir, "cc", r#"printf '\144\206\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0' > "$out""#);
    let jobs = job_file(&dir, cc.to_str().unwrap(), &[("a", 1)]);
    let run = distribute(&dir, &[jobs]);
    assert_eq!(run.code, Some(0), "{run:?}");
}

#[test]
fn compiler_killed_by_a_signal() {
    let dir = scratch("signalled");
    let cc = fake_compiler(&dir, "cc", &format!("{WRITE_ELF}\nkill -SEGV $$"));
    let jobs = job_file(&dir, cc.to_str().unwrap(), &[("a", 1)]);
    let run = distribute(&dir, &[jobs]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.stderr.contains("  a.bc -> a.native.o: compiler killed by signal 11 (SIGSEGV)\n"), "{}", run.stderr);
    assert!(!exists(&dir, "a.native.o"));
}

#[test]
fn messages_of_failing_jobs_are_not_interleaved() {
    let dir = scratch("not-interleaved");
    // Both jobs write slowly and at the same time (-j 2), to stdout and stderr alternately.
    let body = r#"for i in 1 2 3 4 5; do echo "$name out $i"; echo "$name err $i" >&2; sleep 0.05; done; exit 3"#;
    let cc = fake_compiler(&dir, "cc", body);
    let jobs = job_file(&dir, cc.to_str().unwrap(), &[("a", 1), ("b", 1)]);
    let run = distribute(&dir, &["-j", "2", "--verbose", jobs]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.stderr.contains("max parallel 2"), "the jobs must overlap for this test to mean anything");
    for m in ["a", "b"] {
        let mut block = format!("dtld-distribute: output of {m}.bc -> {m}.native.o:\n");
        for i in 1..=5 {
            block.push_str(&format!("{m} out {i}\n{m} err {i}\n"));
        }
        block.push_str(&format!("dtld-distribute: error: {m}.bc -> {m}.native.o failed: compiler exited with code 3\n"));
        assert!(run.stderr.contains(&block), "job {m}'s block is not contiguous:\n{}", run.stderr);
    }
    assert!(run.stdout.is_empty(), "job output goes to stderr: {:?}", run.stdout);
}

#[test]
fn largest_module_runs_first() {
    let dir = scratch("largest-first");
    let cc = fake_compiler(&dir, "cc", &format!("echo $name >> order.log\n{WRITE_ELF}"));
    let jobs = job_file(&dir, cc.to_str().unwrap(), &[("small", 10), ("big", 5000), ("medium", 600), ("tiny", 1)]);
    let run = distribute(&dir, &["-j1", jobs]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(std::fs::read_to_string(dir.join("order.log")).unwrap(), "big\nmedium\nsmall\ntiny\n");
}

#[test]
fn progress_lines_in_a_log_and_none_with_never() {
    let dir = scratch("progress");
    let cc = fake_compiler(&dir, "cc", WRITE_ELF);
    let jobs = job_file(&dir, cc.to_str().unwrap(), &[("a", 2), ("b", 1)]);
    // In a log: one summary line, no line per job (thousands of them in a large link's log).
    let run = distribute(&dir, &["-j1", jobs]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", run.stderr);
    assert!(lines[0].starts_with("dtld-distribute: 2 of 2 jobs compiled in ") && lines[0].ends_with(" s"), "{}", lines[0]);
    // --verbose: a line per job.
    let run = distribute(&dir, &["-j1", "--verbose", jobs]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let lines: Vec<&str> = run.stderr.lines().filter(|l| l.contains("] ")).collect();
    assert_eq!(lines.len(), 2, "{}", run.stderr);
    assert!(lines[0].starts_with("dtld-distribute: [1/2] a.native.o done (") && lines[0].ends_with("s)"), "{}", lines[0]);
    assert!(lines[1].starts_with("dtld-distribute: [2/2] b.native.o done ("), "{}", lines[1]);

    let run = distribute(&dir, &["--progress", "never", jobs]);
    assert_eq!((run.code, run.stderr.as_str(), run.stdout.as_str()), (Some(0), "", ""));

    // A job's own messages are printed even with --progress=never.
    let cc = fake_compiler(&dir, "cc", &format!("echo \"warning: $name\"\n{WRITE_ELF}"));
    job_file(&dir, cc.to_str().unwrap(), &[("a", 1)]);
    let run = distribute(&dir, &["--progress=never", jobs]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stderr, "dtld-distribute: output of a.bc -> a.native.o:\nwarning: a\n");
}

#[test]
fn verbose_prints_commands_and_a_summary() {
    let dir = scratch("verbose");
    let cc = fake_compiler(&dir, "cc", WRITE_ELF);
    let jobs = job_file(&dir, cc.to_str().unwrap(), &[("a", 1)]);
    let run = distribute(&dir, &["--verbose", "--progress=never", jobs]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let command = format!("dtld-distribute: running: {} -c a.bc -fthinlto-index=a.native.o.thinlto.bc -o a.native.o\n", cc.display());
    assert!(run.stderr.starts_with(&command), "{}", run.stderr);
    let last = run.stderr.lines().last().unwrap();
    assert!(last.starts_with("dtld-distribute: 1 jobs, total ") && last.ends_with(" s, max parallel 1"), "{last}");
}

#[test]
fn compiler_is_looked_up_on_path() {
    let dir = scratch("path-lookup");
    fake_compiler(&dir, "fakecc", WRITE_ELF);
    let jobs = job_file(&dir, "fakecc", &[("a", 1)]);
    let path = format!("{}:{}", dir.display(), std::env::var("PATH").unwrap_or_default());
    let out = output(Command::new(DISTRIBUTOR).current_dir(&dir).env("PATH", &path).arg(jobs));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(exists(&dir, "a.native.o"));

    job_file(&dir, "no-such-compiler-dtld", &[("a", 1)]);
    let run = distribute(&dir, &[jobs]);
    assert_eq!(run.code, Some(1));
    assert_eq!(run.stderr, "dtld-distribute: error: compiler 'no-such-compiler-dtld' (common.args[0]) not found on PATH\n");
}

#[test]
fn empty_compiler_is_reported() {
    let dir = scratch("no-compiler");
    let jobs = job_file(&dir, "", &[("a", 1)]);
    let run = distribute(&dir, &[jobs]);
    assert_eq!(run.code, Some(1));
    assert_eq!(run.stderr, "dtld-distribute: error: job file names no compiler (common.args[0] is empty); pass --thinlto-remote-compiler=\n");
}

#[test]
fn malformed_job_files_are_rejected() {
    let dir = scratch("malformed");
    let job = r#"{"args":["a.bc","-o","a.o"],"inputs":["a.bc","a.shard"],"outputs":["a.o"]}"#;
    let common = r#"{"linker_output":"prog","args":["cc","-c"],"inputs":[]}"#;
    let cases: Vec<(String, &str)> = vec![
        ("".into(), "not valid JSON: EOF while parsing"),
        ("{\"common\": ".into(), "not valid JSON: EOF while parsing"),
        ("hello".into(), "not valid JSON: expected value at line 1 column 1"),
        ("[1, 2]".into(), "top level: expected an object, found an array"),
        (format!(r#"{{"jobs":[{job}]}}"#), "top level: missing member \"common\""),
        (format!(r#"{{"common":{common},"jobs":[{job}],"version":2}}"#), "top level: unexpected member \"version\""),
        (format!(r#"{{"common":{common},"jobs":{job}}}"#), "jobs: expected an array, found an object"),
        (format!(r#"{{"common":{{"linker_output":"p","args":[],"inputs":[]}},"jobs":[{job}]}}"#), "common.args: expected at least 1 entry, found 0"),
        (format!(r#"{{"common":{{"linker_output":"p","args":["cc"]}},"jobs":[{job}]}}"#), "common: missing member \"inputs\""),
        (format!(r#"{{"common":{{"linker_output":"p","args":["cc",1],"inputs":[]}},"jobs":[{job}]}}"#), "common.args[1]: expected a string, found a number"),
        (
            format!(r#"{{"common":{common},"jobs":[{job},{{"args":[],"inputs":["a.bc"],"outputs":["a.o"]}}]}}"#),
            "jobs[1].inputs: expected at least 2 entries, found 1",
        ),
        (format!(r#"{{"common":{common},"jobs":[{{"args":[],"inputs":["a","b"],"outputs":[]}}]}}"#), "jobs[0].outputs: expected at least 1 entry, found 0"),
        (format!(r#"{{"common":{common},"jobs":[{{"args":[],"inputs":["a","b"],"outputs":["o"],"env":{{}}}}]}}"#), "jobs[0]: unexpected member \"env\""),
        (format!(r#"{{"common":{common},"jobs":[null]}}"#), "jobs[0]: expected an object, found null"),
    ];
    for (i, (text, expected)) in cases.iter().enumerate() {
        let name = format!("bad{i}.json");
        std::fs::write(dir.join(&name), text).unwrap();
        let run = distribute(&dir, &[&name]);
        assert_eq!(run.code, Some(1), "{text}: {run:?}");
        let prefix = format!("dtld-distribute: error: job file '{name}': ");
        assert!(run.stderr.starts_with(&prefix) && run.stderr.contains(expected), "{text}:\n{}", run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    }
    let run = distribute(&dir, &["missing.json"]);
    assert_eq!(run.code, Some(1));
    assert!(run.stderr.starts_with("dtld-distribute: error: job file 'missing.json': cannot read: "), "{}", run.stderr);
}

#[test]
fn no_jobs_is_success() {
    let dir = scratch("no-jobs");
    std::fs::write(dir.join("j.json"), r#"{"common":{"linker_output":"p","args":[""],"inputs":[]},"jobs":[]}"#).unwrap();
    let run = distribute(&dir, &["j.json"]);
    assert_eq!((run.code, run.stderr.as_str()), (Some(0), ""));
}

#[test]
fn usage_errors_exit_2() {
    let dir = scratch("usage");
    for args in [&["--bogus", "j.json"][..], &[], &["-j", "x", "j.json"], &["--progress=sometimes", "j.json"], &["a.json", "b.json"]] {
        let run = distribute(&dir, args);
        assert_eq!(run.code, Some(2), "{args:?}: {run:?}");
        assert!(run.stderr.starts_with("dtld-distribute: error: "), "{args:?}: {}", run.stderr);
    }
    let run = distribute(&dir, &["--bogus", "j.json"]);
    assert!(run.stderr.contains("unexpected argument '--bogus'") && run.stderr.contains("Usage: dtld-distribute"), "{}", run.stderr);
    let run = distribute(&dir, &["--help"]);
    assert_eq!(run.code, Some(0));
    assert!(run.stdout.contains("--progress <WHEN>"), "{}", run.stdout);
}

/// Starts jobs that never finish, sends `signal`, and checks the exit code and that the outputs
/// the jobs had started writing are gone.
fn interrupted(name: &str, signal: &str, expected_code: i32) {
    let dir = scratch(name);
    let cc = fake_compiler(&dir, "cc", &format!("{WRITE_ELF}\nexec sleep 60"));
    let jobs = job_file(&dir, cc.to_str().unwrap(), &[("a", 1), ("b", 1), ("c", 1)]);
    let begin = Instant::now();
    let child = spawn(Command::new(DISTRIBUTOR).current_dir(&dir).args(["-j2", jobs]).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()));
    while !(exists(&dir, "a.native.o") && exists(&dir, "b.native.o")) {
        assert!(begin.elapsed() < Duration::from_secs(20), "jobs did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = Command::new("kill").args([signal, &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(expected_code), "{stderr}");
    assert!(begin.elapsed() < Duration::from_secs(30), "the jobs were not killed");
    assert!(stderr.contains("stopped 2 running job(s) and removed their outputs"), "{stderr}");
    for m in ["a", "b", "c"] {
        assert!(!exists(&dir, &format!("{m}.native.o")), "{m}.native.o left behind");
    }
}

#[test]
fn sigterm_stops_jobs_and_removes_their_outputs() {
    interrupted("sigterm", "-TERM", 143);
}

#[test]
fn sigint_stops_jobs_and_removes_their_outputs() {
    interrupted("sigint", "-INT", 130);
}

/// `--generate=man` and `--generate=complete-*` (for packagers, scripts/install.sh): the page
/// documents every option clap parses, the completions offer them, and a wrong kind is a usage
/// error. The rendered page must give groff no warnings.
#[test]
fn generates_man_page_and_completions() {
    let dir = scratch("generate");
    let man = distribute(&dir, &["--generate=man"]);
    assert_eq!(man.code, Some(0), "{man:?}");
    assert!(man.stdout.contains("\n.TH dtld-distribute 1 "), "{}", man.stdout);
    assert_eq!(man.stdout.matches(".ds Aq").count(), 2, "one preamble: {}", man.stdout);
    for opt in ["\\-\\-jobs", "\\-\\-progress", "\\-\\-verbose", "JOB\\-FILE", ".SH \"EXIT STATUS\"", ".SH \"SEE ALSO\""] {
        assert!(man.stdout.contains(opt), "{opt} missing in:\n{}", man.stdout);
    }
    let page = dir.join("dtld-distribute.1");
    std::fs::write(&page, &man.stdout).unwrap();
    if let Ok(out) = Command::new("groff").args(["-man", "-ww", "-z"]).arg(&page).output() {
        assert!(out.status.success() && out.stderr.is_empty(), "groff: {}", String::from_utf8_lossy(&out.stderr));
    }
    for (kind, needle) in [("complete-bash", "--jobs"), ("complete-zsh", "--jobs"), ("complete-fish", "-l jobs")] {
        let run = distribute(&dir, &["--generate", kind]);
        assert_eq!(run.code, Some(0), "{kind}: {run:?}");
        assert!(run.stdout.contains(needle) && run.stdout.contains("dtld-distribute"), "{kind}: {}", run.stdout);
    }
    let bad = distribute(&dir, &["--generate=html"]);
    assert_eq!(bad.code, Some(2), "{bad:?}");
    assert!(bad.stderr.contains("unknown kind 'html'"), "{}", bad.stderr);
    // Only alone and first: anything else is clap's command line.
    let mixed = distribute(&dir, &["--generate=man", "j.json"]);
    assert_eq!(mixed.code, Some(2), "{mixed:?}");
}
