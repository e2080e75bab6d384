//! Helpers shared by the distributor's integration tests: scratch directories, fake compilers,
//! job files, and running the built `dtld-distribute`.
//!
//! Tests run in parallel threads of one process, and a script being written while another thread
//! forks would make its later `exec` fail with ETXTBSY ("text file busy"). So writing a script and
//! starting a process both take `SPAWN_LOCK`: no fork happens while a script is open for writing.

#![allow(dead_code)] // each test file uses a different subset

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;

pub static SPAWN_LOCK: Mutex<()> = Mutex::new(());

pub const DISTRIBUTOR: &str = env!("CARGO_BIN_EXE_dtld-distribute");

/// A fresh, empty directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dtld-distribute").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes an executable file.
pub fn write_executable(path: &Path, text: &str) {
    let _guard = SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Starts `cmd` (holding the spawn lock only while it starts).
pub fn spawn(cmd: &mut Command) -> Child {
    let _guard = SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    cmd.spawn().unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"))
}

/// Runs `cmd` to completion, capturing its output.
pub fn output(cmd: &mut Command) -> Output {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    spawn(cmd).wait_with_output().unwrap()
}

/// Runs the distributor in `dir` with `args`.
pub fn distribute(dir: &Path, args: &[&str]) -> Run {
    let out = output(Command::new(DISTRIBUTOR).current_dir(dir).args(args));
    Run { code: out.status.code(), stdout: String::from_utf8_lossy(&out.stdout).into_owned(), stderr: String::from_utf8_lossy(&out.stderr).into_owned() }
}

#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// A fake backend compiler: a shell script (only the TEST uses a shell) that takes a DTLTO job's
/// command line (`-c <module> -fthinlto-index=<shard> -o <out>`), sets `$name` to the module's
/// name without `.bc`, `$out` to the output, and then runs `body`.
pub fn fake_compiler(dir: &Path, file: &str, body: &str) -> PathBuf {
    let path = dir.join(file);
    let text = format!(
        r#"#!/bin/sh
mod=; out=
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out=$2; shift ;;
    -c|-fthinlto-index=*) ;;
    *) mod=$1 ;;
  esac
  shift
done
name=$(basename "$mod" .bc)
{body}
"#
    );
    write_executable(&path, &text);
    path
}

/// Writes a well-formed ELF-looking object (what most fake compilers do).
pub const WRITE_ELF: &str = r#"printf '\177ELF-%s\n' "$name" > "$out""#;

/// Creates module files `<name>.bc` (of `size` bytes) and shards in `dir` and a job file `jobs.json`
/// whose compiler is `compiler`; each job's output is `<name>.native.o`. Returns the job file name.
pub fn job_file(dir: &Path, compiler: &str, modules: &[(&str, usize)]) -> &'static str {
    let jobs: Vec<serde_json::Value> = modules
        .iter()
        .map(|&(name, size)| {
            let module = format!("{name}.bc");
            let shard = format!("{name}.native.o.thinlto.bc");
            let out = format!("{name}.native.o");
            std::fs::write(dir.join(&module), vec![b'B'; size]).unwrap();
            std::fs::write(dir.join(&shard), b"shard").unwrap();
            serde_json::json!({
                "args": [module, format!("-fthinlto-index={shard}"), "-o", out],
                "inputs": [module, shard],
                "outputs": [out],
            })
        })
        .collect();
    let doc = serde_json::json!({
        "common": {"linker_output": "prog", "args": [compiler, "-c"], "inputs": []},
        "jobs": jobs,
    });
    std::fs::write(dir.join("jobs.json"), doc.to_string()).unwrap();
    "jobs.json"
}
