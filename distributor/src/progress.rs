//! Everything the distributor prints while jobs run goes through here.
//!
//! The distributor shares the terminal with the linker and with the compilers it starts, so all
//! output is funnelled through one owner on the main thread: a job's captured output is written as
//! one block (never interleaved with another job's), and on a terminal the single `\r`-redrawn
//! status line is cleared before a block is printed and redrawn after it. In a log (not a
//! terminal) an updating line would be noise, and a line per job is thousands of lines in a CI
//! log for a large link: only failed jobs get a line there, and the run ends with a summary.

use std::io::Write;
use std::time::Duration;

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One status line, redrawn in place (for terminals).
    Line,
    /// One line per finished job (`--progress=always` without a terminal is still `Line`; kept
    /// for callers that ask for it).
    Plain,
    /// A line per failed job, and a summary at the end (for logs).
    Summary,
    /// No progress; errors and job output only.
    Quiet,
}

/// The `--progress=WHEN` option of the distributors' command lines (`dtld-distribute`,
/// `dtld-reapi`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    Auto,
    Always,
    Never,
}

impl When {
    /// The display for this choice: `auto` is a status line on a terminal and, in a log, a line
    /// per failed job and a summary.
    pub fn mode(self) -> Mode {
        use std::io::IsTerminal;
        match self {
            When::Never => Mode::Quiet,
            When::Always => Mode::Line,
            When::Auto if std::io::stderr().is_terminal() => Mode::Line,
            When::Auto => Mode::Summary,
        }
    }
}

/// The closing error of a run with failed jobs, as the distributors print it:
/// `NAME: error: F of N jobs failed:`, then `  module -> output: reason` per failed job.
pub fn failure_report(name: &str, total: usize, failed: &[(&str, &str, &str)]) -> String {
    let mut text = format!("{name}: error: {} of {total} jobs failed:\n", failed.len());
    for (module, output, reason) in failed {
        text.push_str(&format!("  {module} -> {output}: {reason}\n"));
    }
    text
}

pub struct Progress {
    /// The program name that starts every line (`dtld-distribute`, `dtld-reapi`).
    name: String,
    mode: Mode,
    total: usize,
    done: usize,
    /// Ids and names of the running jobs, in the order they started.
    running: Vec<(usize, String)>,
    /// Whether the status line is currently on screen.
    line_shown: bool,
    width: usize,
}

impl Progress {
    pub fn new(mode: Mode, total: usize) -> Progress {
        Progress::named("dtld-distribute", mode, total)
    }

    /// Progress for another program, whose lines start with `name`.
    pub fn named(name: &str, mode: Mode, total: usize) -> Progress {
        Progress { name: name.to_string(), mode, total, done: 0, running: Vec::new(), line_shown: false, width: terminal_width() }
    }

    /// The program name that starts every line.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Job `id` started; `name` is what the status line shows for it.
    pub fn started(&mut self, id: usize, name: &str) {
        self.running.push((id, name.to_string()));
        self.redraw();
    }

    /// Job `id` ended (successfully or not) after `took`.
    pub fn finished(&mut self, id: usize, output: &str, ok: bool, took: Duration) {
        self.finished_with(id, output, ok, took, "");
    }

    /// Like [`Progress::finished`], with a note after the time in the per-job line (for example
    /// `, cache hit`).
    pub fn finished_with(&mut self, id: usize, output: &str, ok: bool, took: Duration, note: &str) {
        if let Some(i) = self.running.iter().position(|(r, _)| *r == id) {
            self.running.remove(i);
        }
        self.done += 1;
        match self.mode {
            Mode::Line => self.redraw(),
            Mode::Plain => {
                let what = if ok { "done" } else { "FAILED" };
                let secs = took.as_secs_f64();
                self.message(&format!("{}: [{}/{}] {output} {what} ({secs:.1}s{note})\n", self.name, self.done, self.total));
            }
            Mode::Summary if !ok => {
                let secs = took.as_secs_f64();
                self.message(&format!("{}: [{}/{}] {output} FAILED ({secs:.1}s{note})\n", self.name, self.done, self.total));
            }
            Mode::Summary | Mode::Quiet => {}
        }
    }

    /// Whether the run ends with a summary line (a log's display).
    pub fn wants_summary(&self) -> bool {
        self.mode == Mode::Summary
    }

    /// Prints `text` (which should end in a newline) as one block, whatever the mode.
    pub fn message(&mut self, text: &str) {
        let mut buf = String::new();
        if self.line_shown {
            buf.push_str("\r\x1b[K");
            self.line_shown = false;
        }
        buf.push_str(text);
        if !text.is_empty() && !text.ends_with('\n') {
            buf.push('\n');
        }
        write_stderr(&buf);
        self.redraw();
    }

    /// Removes the status line; call before the final summary.
    pub fn finish(&mut self) {
        if self.line_shown {
            write_stderr("\r\x1b[K");
            self.line_shown = false;
        }
    }

    fn redraw(&mut self) {
        if self.mode != Mode::Line {
            return;
        }
        let mut line = format!("[{}/{}]", self.done, self.total);
        if let Some((_, first)) = self.running.first() {
            line.push_str(" running: ");
            line.push_str(first);
            if self.running.len() > 1 {
                line.push_str(&format!(" (+{} more)", self.running.len() - 1));
            }
        }
        // A line that wraps cannot be redrawn with `\r`, so cut it to the terminal's width.
        let line: String = line.chars().take(self.width.saturating_sub(1).max(10)).collect();
        write_stderr(&format!("\r{line}\x1b[K"));
        self.line_shown = true;
    }
}

/// Writes in one call, ignoring errors: a closed stderr must not stop the jobs.
fn write_stderr(s: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(s.as_bytes());
    let _ = err.flush();
}

/// Width of the terminal: `$COLUMNS` when exported, else 80 (a shorter line is harmless).
fn terminal_width() -> usize {
    std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()).filter(|&c| c > 0).unwrap_or(80)
}
