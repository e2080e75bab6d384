//! `--time-trace`: how long each stage of the link took, as a Chrome trace (the format lld and
//! clang write, viewable in chrome://tracing or Perfetto), and `--verbose` stage times.
//!
//! The link records whole stages (input, resolution, the thin link, backend compilation or
//! distribution, layout, writing); each stage is an event with a start and a duration. The
//! longest stages of a native link (layout, writing) also record their parts (`Laps`), shown
//! nested inside them, as lld's trace does; work that runs on a thread of its own alongside
//! the stages is drawn on a second track; `--verbose` prints the stages only.

use std::path::Path;
use std::time::Instant;

pub struct Trace {
    start: Instant,
    /// (name, detail, start µs, duration µs, what it is).
    events: Vec<(String, String, u128, u128, Kind)>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Stage,
    /// A part of a stage.
    Part,
    /// Work on a thread of its own, alongside the stages.
    Background,
}

impl Default for Trace {
    fn default() -> Self {
        Trace { start: Instant::now(), events: Vec::new() }
    }
}

/// The parts of one stage, timed one after the other: each `lap` ends the part before it.
pub struct Laps {
    last: Instant,
    parts: Vec<(&'static str, Instant, std::time::Duration)>,
}

impl Default for Laps {
    fn default() -> Self {
        Laps { last: Instant::now(), parts: Vec::new() }
    }
}

impl Laps {
    /// Ends the part called `name`, which began at the previous lap (or at creation).
    pub fn lap(&mut self, name: &'static str) {
        let now = Instant::now();
        self.parts.push((name, self.last, now - self.last));
        self.last = now;
    }
}

impl Trace {
    /// Records the replaced output's page-cache recycling (`outfile::recycle_replaced`), done on
    /// a thread of its own alongside the link.
    pub fn recycled(&mut self, r: crate::outfile::Recycle) {
        if let Some((what, start, took)) = r.join() {
            self.background("Drop the replaced output's page cache", &what, start, took);
        }
    }

    /// Records a stage that started at `since` and ends now.
    pub fn stage(&mut self, name: &str, detail: &str, since: Instant) {
        self.event(name, detail, since, since.elapsed(), Kind::Stage);
    }

    /// Records a stage that started at `start` and took `dur` (a part of a larger step).
    pub fn span(&mut self, name: &str, detail: &str, start: Instant, dur: std::time::Duration) {
        self.event(name, detail, start, dur, Kind::Stage);
    }

    /// Records work that ran on a thread of its own from `start` for `dur`, alongside the
    /// stages (a second track of the trace; not in `--verbose`'s list).
    pub fn background(&mut self, name: &str, detail: &str, start: Instant, dur: std::time::Duration) {
        self.event(name, detail, start, dur, Kind::Background);
    }

    fn event(&mut self, name: &str, detail: &str, start: Instant, dur: std::time::Duration, kind: Kind) {
        let ts = start.saturating_duration_since(self.start).as_micros();
        self.events.push((name.to_string(), detail.to_string(), ts, dur.as_micros(), kind));
    }

    /// Records one step of a stage that ran from `start` for `dur` (drawn inside it; not in
    /// `--verbose`'s list): DTLTO's per-module steps, under lld's names.
    pub fn part(&mut self, name: &str, detail: &str, start: Instant, dur: std::time::Duration) {
        self.event(name, detail, start, dur, Kind::Part);
    }

    /// Records the parts of a stage (drawn inside it).
    pub fn laps(&mut self, laps: &Laps) {
        for &(name, start, dur) in &laps.parts {
            self.event(name, "", start, dur, Kind::Part);
        }
    }

    /// The trace as JSON: one complete ("X") event per stage or part that took at least
    /// `granularity` µs (`--time-trace-granularity`, as LLVM's time profiler), plus the total.
    pub fn to_json(&self, granularity: u64) -> String {
        let total = self.start.elapsed().as_micros();
        let mut ev = vec![format!("{{\"pid\":1,\"tid\":0,\"ph\":\"X\",\"ts\":0,\"dur\":{total},\"name\":\"Total Link\",\"args\":{{}}}}")];
        for (name, detail, ts, dur, kind) in self.events.iter().filter(|e| e.3 >= u128::from(granularity)) {
            let tid = u8::from(*kind == Kind::Background);
            ev.push(format!(
                "{{\"pid\":1,\"tid\":{tid},\"ph\":\"X\",\"ts\":{ts},\"dur\":{dur},\"name\":{},\"args\":{{\"detail\":{}}}}}",
                crate::util::json::json_string(name),
                crate::util::json::json_string(detail)
            ));
        }
        // LLVM's time profiler ends with one "Total <name>" event per name: the summed duration,
        // how many there were and their average (lld's DTLTO tests count events by these).
        let mut totals: Vec<(&str, u128, u64)> = Vec::new();
        for (name, _, _, dur, _) in &self.events {
            match totals.iter_mut().find(|t| t.0 == name) {
                Some(t) => {
                    t.1 += dur;
                    t.2 += 1;
                }
                None => totals.push((name, *dur, 1)),
            }
        }
        for (name, dur, count) in totals {
            ev.push(format!(
                "{{\"pid\":1,\"tid\":0,\"ph\":\"X\",\"ts\":0,\"dur\":{dur},\"name\":{},\"args\":{{\"count\":{count},\"avg ms\":{}}}}}",
                crate::util::json::json_string(&format!("Total {name}")),
                dur / u128::from(count) / 1000
            ));
        }
        ev.push("{\"pid\":1,\"tid\":0,\"ph\":\"M\",\"name\":\"process_name\",\"args\":{\"name\":\"dtld\"}}".to_string());
        if self.events.iter().any(|e| e.4 == Kind::Background) {
            ev.push("{\"pid\":1,\"tid\":1,\"ph\":\"M\",\"name\":\"thread_name\",\"args\":{\"name\":\"alongside the link\"}}".to_string());
        }
        format!("{{\"traceEvents\":[{}],\"displayTimeUnit\":\"ns\"}}\n", ev.join(","))
    }

    /// One line per stage, for `--verbose`.
    pub fn summary(&self) -> String {
        let parts: Vec<String> = self.events.iter().filter(|e| e.4 == Kind::Stage).map(|(n, _, _, d, _)| format!("{n} {:.3}s", *d as f64 / 1e6)).collect();
        format!("{}: time: {}; total {:.3}s", crate::diag::program(), parts.join(", "), self.start.elapsed().as_secs_f64())
    }

    pub fn write(&self, path: &Path, granularity: u64) -> crate::error::Result<()> {
        crate::outfile::write_atomic(path, self.to_json(granularity).as_bytes())
            // LLVM's timeTraceProfilerWrite words.
            .map_err(|_| crate::error::Error::new(format!("Could not open {}", path.display())))
    }
}
