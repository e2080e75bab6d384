//! One trial's working directory and command log, shared by the black-box test targets.
//!
//! Every target that builds programs step by step (the map file, call-graph profile, reproduce,
//! LTO and relocatable targets) runs each trial in a fresh directory under `target/`, logs every
//! command it runs, deletes the directory when the trial passes and, when it fails, keeps it and
//! prints the directory and the commands so that the failure can be replayed by hand. That
//! scaffolding lives here once; each target wraps a `TrialDir` in its own `Work` (which adds
//! the target's context and its compile/link helpers) and dereferences to it.

use std::cell::RefCell;
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{command_line, fresh_dir, run_tool, run_tool_ok, Outcome};

/// A trial's directory and the commands run in it so far.
pub struct TrialDir {
    pub dir: PathBuf,
    log: RefCell<Vec<String>>,
}

impl TrialDir {
    /// A path inside the trial directory.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    /// Writes a file of the trial, creating its parent directories.
    pub fn write(&self, rel: &str, contents: impl AsRef<[u8]>) -> Result<(), String> {
        let p = self.path(rel);
        if let Some(parent) = p.parent() {
            fs::create_dir_all(parent).map_err(|e| format!("mkdir {}: {e}", parent.display()))?;
        }
        fs::write(&p, contents).map_err(|e| format!("write {rel}: {e}"))
    }

    pub fn read(&self, rel: &str) -> Result<Vec<u8>, String> {
        fs::read(self.path(rel)).map_err(|e| format!("read {rel}: {e}"))
    }

    pub fn read_string(&self, rel: &str) -> Result<String, String> {
        fs::read_to_string(self.path(rel)).map_err(|e| format!("read {rel}: {e}"))
    }

    /// A command run in the trial directory.
    pub fn cmd(&self, program: impl AsRef<OsStr>) -> Command {
        let mut c = Command::new(program);
        c.current_dir(&self.dir);
        c
    }

    /// Runs a build step that must succeed (logged).
    pub fn ok(&self, cmd: &mut Command) -> Result<Outcome, String> {
        self.log.borrow_mut().push(command_line(cmd));
        run_tool_ok(cmd)
    }

    /// Runs a command whose outcome the caller judges (logged).
    pub fn run(&self, cmd: &mut Command) -> Result<Outcome, String> {
        self.log.borrow_mut().push(command_line(cmd));
        run_tool(cmd)
    }

    /// Logs a command the caller runs some other way (e.g. with a timeout of its own).
    pub fn note(&self, cmd: &Command) {
        self.log.borrow_mut().push(command_line(cmd));
    }

    /// Logs a command the caller starts in the background (shown with a trailing `&`).
    pub fn note_background(&self, cmd: &Command) {
        self.log.borrow_mut().push(format!("{} &", command_line(cmd)));
    }

    /// The names in the trial directory, sorted (to catch stray temporaries).
    pub fn listing(&self) -> Vec<String> {
        let mut v: Vec<String> =
            fs::read_dir(&self.dir).map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect()).unwrap_or_default();
        v.sort();
        v
    }
}

/// Whether `DTLD_HARNESS_KEEP` asks to keep the directories of passing trials.
pub fn keep_requested() -> bool {
    std::env::var("DTLD_HARNESS_KEEP").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Runs `f` in a fresh `dir`. A passing trial's directory is removed unless `keep`; a failure
/// is reported with `context` lines (e.g. the linker under test), the kept directory and the
/// commands run.
pub fn run_in(dir: &Path, keep: bool, context: &[String], f: impl FnOnce(&TrialDir) -> Result<(), String>) -> Result<(), String> {
    fresh_dir(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let t = TrialDir { dir: dir.to_path_buf(), log: RefCell::default() };
    match f(&t) {
        Ok(()) => {
            if !keep {
                let _ = fs::remove_dir_all(dir);
            }
            Ok(())
        }
        Err(e) => {
            let mut msg = format!("{e}\n\n");
            for line in context {
                msg.push_str(line);
                msg.push('\n');
            }
            msg.push_str(&format!("trial directory (kept): {}\ncommands run:\n  {}", dir.display(), t.log.borrow().join("\n  ")));
            Err(msg)
        }
    }
}
