//! `--incremental` (issue 38, docs/incremental.md): the state an `--incremental` link leaves
//! beside its output (`<output>.dtld-incremental`), and the check a later `--incremental` link
//! makes against it before it resolves anything.
//!
//! This is the first step of incremental relinking: a relink whose options, inputs and output
//! are what the state recorded is already done — the output is what the link would write
//! (dtld's links are deterministic) — so it ends after the inputs are found, with the output's
//! time stamp renewed for the build system. An input rebuilt with the same bytes counts as
//! unchanged (its contents are compared by digest when its identity changed), which is what
//! makes build systems relink for nothing. Every other relink is a full link, and `--verbose`
//! says why (`incremental: full link: <why>`). Patching a changed object into the output comes
//! next (docs/incremental.md).
//!
//! Why a relink that finds nothing changed can trust the output:
//! * the key covers dtld itself (its executable's identity), the command line as parsed, the
//!   working directory and the environment dtld reads;
//! * every file the link read, in the order it read them (so a library found in another
//!   directory than last time, or a new file shadowing one, is a change), and the files the
//!   options name beside the inputs (version scripts, dynamic lists, ordering files) are
//!   recorded by identity (device, inode, size, mtime, ctime) and XXH3-128 digest;
//! * a state is written only for a link that printed no warning (a skipped relink would not
//!   print it again), wrote no side output (`-Map`, `--reproduce`, `--trace`, ...), had no LTO
//!   input and no linker script with `INCLUDE`, and whose inputs were all last changed before
//!   it started (a file replaced during the link is not vouched for);
//! * the output's identity is recorded after it is in place: an output changed since (stripped,
//!   rewritten, replaced) makes the relink a full link.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::elf::config::Config;
use crate::input::{FileKind, InputFile};

const MAGIC: &[u8] = b"dtld-incremental 1\n";

/// What identifies a file's current version without reading it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i64,
    ctime_ns: i64,
}

impl Identity {
    fn of(path: &Path) -> Option<Identity> {
        let m = std::fs::metadata(path).ok()?;
        Some(Identity {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime_ns: m.mtime().saturating_mul(1_000_000_000).saturating_add(m.mtime_nsec()),
            ctime_ns: m.ctime().saturating_mul(1_000_000_000).saturating_add(m.ctime_nsec()),
        })
    }
}

/// One file the link depends on.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Record {
    path: PathBuf,
    id: Identity,
    digest: u128,
}

/// The state file's contents.
#[derive(Debug, PartialEq, Eq)]
struct State {
    key: u128,
    output: Identity,
    files: Vec<Record>,
}

/// A file the link depends on, as this link found it: its path and, when the link mapped it,
/// the bytes it read.
struct Dep {
    path: PathBuf,
    data: Option<&'static [u8]>,
}

/// An `--incremental` link's view of its own state: made once the inputs are found.
pub struct Incremental {
    state_path: PathBuf,
    key: u128,
    deps: Vec<Dep>,
    /// Why this link can leave no state (`None`: it can).
    ineligible: Option<String>,
    /// When the link began (`Start`).
    started: i64,
}

/// When a link began, on the clock the kernel stamps files with (the coarse real-time clock: a
/// file changed after this moment has a ctime at or after it, which the precise clock does not
/// promise).
#[derive(Clone, Copy)]
pub struct Start(i64);

impl Start {
    pub fn now() -> Start {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: a valid timespec to fill.
        unsafe { libc::clock_gettime(libc::CLOCK_REALTIME_COARSE, &mut ts) };
        Start(ts.tv_sec.saturating_mul(1_000_000_000).saturating_add(ts.tv_nsec))
    }
}

/// What the check found.
pub enum Verdict {
    /// Nothing changed: the output is the link's result (`Incremental::refresh` renews it).
    UpToDate(Refresh),
    /// A full link is needed, for this reason.
    Full(String),
}

/// The state a relink that found nothing changed writes back (the inputs' current identities).
pub struct Refresh(State);

/// The check at the start of an `--incremental` link whose loader read `read` and found
/// `inputs`: `true` when nothing changed and the link is done (the output renewed), else the
/// link goes on in full (`--verbose` says why).
pub fn up_to_date(config: &Config, read: &[(PathBuf, &'static [u8])], inputs: &[InputFile], started: Start) -> bool {
    let inc = Incremental::new(config, read, inputs, started);
    match inc.check(config) {
        Verdict::UpToDate(refresh) => {
            inc.refresh(config, refresh);
            if config.verbose {
                config.diag.log(&format!("incremental: {} is up to date: nothing it was linked from changed", config.output.display()));
            }
            true
        }
        Verdict::Full(why) => {
            if config.verbose {
                config.diag.log(&format!("incremental: full link: {why}"));
            }
            false
        }
    }
}

/// The state file of output `out`.
pub fn state_path(out: &Path) -> PathBuf {
    let mut p = out.as_os_str().to_owned();
    p.push(".dtld-incremental");
    PathBuf::from(p)
}

impl Incremental {
    /// The link of `config`, whose loader read `read` (every file, in order) and found `inputs`;
    /// `started` is when the link began.
    pub fn new(config: &Config, read: &[(PathBuf, &'static [u8])], inputs: &[InputFile], started: Start) -> Incremental {
        let mut deps: Vec<Dep> = read.iter().map(|(p, d)| Dep { path: p.clone(), data: Some(d) }).collect();
        // The files options name beside the inputs, found as the link finds them (as given,
        // else in the -L directories for the scripts the resolver reads).
        let scripts = config.version_scripts.iter().chain(&config.dynamic_lists).chain(&config.export_dynamic_symbol_lists);
        for p in scripts {
            let found = if p.exists() || p.is_absolute() {
                p.clone()
            } else {
                config.library_paths.iter().map(|d| d.join(p)).find(|q| q.exists()).unwrap_or_else(|| p.clone())
            };
            deps.push(Dep { path: found, data: None });
        }
        for p in [&config.symbol_ordering_file, &config.call_graph_ordering_file, &config.retain_symbols_file].into_iter().flatten() {
            deps.push(Dep { path: p.clone(), data: None });
        }
        Incremental { state_path: state_path(&config.output), key: key(config), deps, ineligible: ineligible(config, read, inputs), started: started.0 }
    }

    /// Whether the link can end now (see the module comment), else why not.
    pub fn check(&self, config: &Config) -> Verdict {
        if let Some(why) = &self.ineligible {
            return Verdict::Full(why.clone());
        }
        let state = match std::fs::read(&self.state_path) {
            Ok(bytes) => match decode(&bytes) {
                Some(s) => s,
                None => return Verdict::Full(format!("{} is damaged", self.state_path.display())),
            },
            Err(_) => return Verdict::Full(format!("no state ({} does not exist)", self.state_path.display())),
        };
        if state.key != self.key {
            return Verdict::Full("the command line, the working directory, the environment or dtld changed".to_string());
        }
        if Identity::of(&config.output) != Some(state.output) {
            return Verdict::Full(format!("{} changed since the last link", config.output.display()));
        }
        if state.files.len() != self.deps.len() || state.files.iter().zip(&self.deps).any(|(r, d)| r.path != d.path) {
            return Verdict::Full("the link reads other files than last time".to_string());
        }
        let mut state = state;
        for (r, d) in state.files.iter_mut().zip(&self.deps) {
            let id = Identity::of(&d.path);
            if id == Some(r.id) {
                continue;
            }
            // Rebuilt, perhaps with the same bytes.
            match id {
                Some(id) if digest_of(d) == Some(r.digest) => r.id = id,
                _ => return Verdict::Full(format!("{} changed", d.path.display())),
            }
        }
        Verdict::UpToDate(Refresh(state))
    }

    /// After a relink found nothing changed: the output's time stamps are renewed (a build
    /// system compares them with its inputs'), and the state records the new identities.
    pub fn refresh(&self, config: &Config, refresh: Refresh) {
        let now = [libc::timespec { tv_sec: 0, tv_nsec: libc::UTIME_NOW }; 2];
        let Ok(c) = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(config.output.as_os_str())) else { return };
        // SAFETY: a valid C string and two timespecs.
        if unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), now.as_ptr(), 0) } != 0 {
            let _ = std::fs::remove_file(&self.state_path);
            return;
        }
        let mut state = refresh.0;
        let started = self.started;
        match Identity::of(&config.output) {
            // An input changed while this relink ran: no state (the next link is a full one).
            Some(out) if !state.files.iter().any(|r| r.id.ctime_ns >= started) => {
                state.output = out;
                if crate::outfile::write_atomic(&self.state_path, &encode(&state)).is_err() {
                    let _ = std::fs::remove_file(&self.state_path);
                }
            }
            _ => {
                let _ = std::fs::remove_file(&self.state_path);
            }
        }
    }

    /// After a full link whose output is in place: writes the state, or removes a stale one
    /// when this link cannot vouch for its output (`ineligible`, a warning printed, an input
    /// changed while the link ran).
    pub fn record(&self, config: &Config) {
        let why_not = self.ineligible.clone().or_else(|| (config.diag.warnings() > 0).then(|| "the link printed warnings".to_string()));
        let state = why_not.is_none().then(|| self.state(config)).flatten();
        match state {
            Some(s) => {
                if crate::outfile::write_atomic(&self.state_path, &encode(&s)).is_err() {
                    let _ = std::fs::remove_file(&self.state_path);
                }
            }
            None => {
                let _ = std::fs::remove_file(&self.state_path);
                if let Some(why) = why_not {
                    if config.verbose {
                        config.diag.log(&format!("incremental: no state kept: {why}"));
                    }
                }
            }
        }
    }

    fn state(&self, config: &Config) -> Option<State> {
        let started = self.started;
        use rayon::prelude::*;
        let files = self
            .deps
            .par_iter()
            .map(|d| {
                let id = Identity::of(&d.path)?;
                // Changed while the link ran (or in the same clock tick): not vouched for.
                if id.ctime_ns >= started {
                    return None;
                }
                Some(Record { path: d.path.clone(), id, digest: digest_of(d)? })
            })
            .collect::<Option<Vec<Record>>>()?;
        Some(State { key: self.key, output: Identity::of(&config.output)?, files })
    }
}

/// The bytes of a file the link depends on: what the link read, else the file now.
fn digest_of(d: &Dep) -> Option<u128> {
    match d.data {
        Some(data) => Some(xxhash_rust::xxh3::xxh3_128(data)),
        None => std::fs::read(&d.path).ok().map(|b| xxhash_rust::xxh3::xxh3_128(&b)),
    }
}

/// Why a link cannot be skipped even when nothing changed (its result is more than the output,
/// or not only a function of the files it read).
fn ineligible(config: &Config, read: &[(PathBuf, &'static [u8])], inputs: &[InputFile]) -> Option<String> {
    let side_outputs = [
        (config.map_file.is_some(), "-Map"),
        (config.reproduce.is_some() || std::env::var_os("LLD_REPRODUCE").is_some(), "--reproduce"),
        (config.print_archive_stats.is_some(), "--print-archive-stats"),
        (config.print_symbol_order.is_some(), "--print-symbol-order"),
        (config.time_trace.is_some(), "--time-trace"),
        (config.trace, "--trace"),
        (config.print_gc_sections, "--print-gc-sections"),
        (config.print_icf_sections, "--print-icf-sections"),
    ];
    if let Some((_, opt)) = side_outputs.iter().find(|(on, _)| *on) {
        return Some(format!("{opt} writes more than the output"));
    }
    if config.relocatable {
        return Some("-r".to_string());
    }
    if matches!(config.build_id, crate::elf::config::BuildId::Uuid) {
        return Some("--build-id=uuid differs in every link".to_string());
    }
    if inputs.iter().any(|i| i.kind == FileKind::Bitcode) || config.plugin.is_some() {
        return Some("LTO inputs".to_string());
    }
    // A script's INCLUDE reads a file the loader does not record.
    let is_binary = |d: &[u8]| d.starts_with(b"\x7fELF") || d.starts_with(b"!<arch>") || d.starts_with(b"!<thin>") || d.starts_with(b"BC\xc0\xde");
    if read.iter().any(|(_, d)| !is_binary(d) && d.windows(7).any(|w| w == b"INCLUDE")) {
        return Some("a linker script uses INCLUDE".to_string());
    }
    None
}

/// The digest of what decides the link besides the files it reads.
fn key(config: &Config) -> u128 {
    let mut k = Vec::new();
    k.extend_from_slice(crate::cmdline::version_string().as_bytes());
    k.push(0);
    let exe = std::env::current_exe().ok().and_then(|p| Identity::of(&p));
    k.extend_from_slice(format!("{exe:?}").as_bytes());
    k.push(0);
    k.extend_from_slice(format!("{:?}", std::env::current_dir().ok()).as_bytes());
    k.push(0);
    // Options that change what the link prints or how fast it runs, never the output, are left
    // out: adding `--verbose` to see why a relink was full does not make it full.
    const NOT_IN_OUTPUT: &[&str] =
        &["verbose", "threads", "fork", "no-fork", "color-diagnostics", "no-color-diagnostics", "error-limit", "time-trace-granularity"];
    let cmdline: Vec<&crate::cmdline::CmdArg> =
        config.cmdline.iter().filter(|a| !matches!(a, crate::cmdline::CmdArg::Opt { canon, .. } if NOT_IN_OUTPUT.contains(canon))).collect();
    k.extend_from_slice(format!("{cmdline:?}").as_bytes());
    k.push(0);
    let mut env: Vec<(String, String)> = std::env::vars().filter(|(n, _)| n.starts_with("DTLD_") || n.starts_with("LLD_") || n == "PWD").collect();
    env.sort();
    k.extend_from_slice(format!("{env:?}").as_bytes());
    xxhash_rust::xxh3::xxh3_128(&k)
}

fn encode(s: &State) -> Vec<u8> {
    let mut b = MAGIC.to_vec();
    let id = |b: &mut Vec<u8>, i: &Identity| {
        for v in [i.dev, i.ino, i.size, i.mtime_ns as u64, i.ctime_ns as u64] {
            b.extend_from_slice(&v.to_le_bytes());
        }
    };
    b.extend_from_slice(&s.key.to_le_bytes());
    id(&mut b, &s.output);
    b.extend_from_slice(&(s.files.len() as u64).to_le_bytes());
    for r in &s.files {
        let p = std::os::unix::ffi::OsStrExt::as_bytes(r.path.as_os_str());
        b.extend_from_slice(&(p.len() as u64).to_le_bytes());
        b.extend_from_slice(p);
        id(&mut b, &r.id);
        b.extend_from_slice(&r.digest.to_le_bytes());
    }
    let sum = xxhash_rust::xxh3::xxh3_64(&b);
    b.extend_from_slice(&sum.to_le_bytes());
    b
}

fn decode(b: &[u8]) -> Option<State> {
    let (body, sum) = b.split_at(b.len().checked_sub(8)?);
    if !body.starts_with(MAGIC) || xxhash_rust::xxh3::xxh3_64(body).to_le_bytes() != sum {
        return None;
    }
    let mut r = Reader { b: body, at: MAGIC.len() };
    let key = r.u128()?;
    let output = r.id()?;
    let n = r.u64()? as usize;
    let mut files = Vec::with_capacity(n.min(1 << 16));
    for _ in 0..n {
        let len = r.u64()? as usize;
        let path = PathBuf::from(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(r.bytes(len)?));
        let id = r.id()?;
        let digest = r.u128()?;
        files.push(Record { path, id, digest });
    }
    (r.at == body.len()).then_some(State { key, output, files })
}

/// Reads the state's little-endian fields, each bounds-checked.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.b.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.bytes(8)?.try_into().ok()?))
    }
    fn u128(&mut self) -> Option<u128> {
        Some(u128::from_le_bytes(self.bytes(16)?.try_into().ok()?))
    }
    fn id(&mut self) -> Option<Identity> {
        Some(Identity { dev: self.u64()?, ino: self.u64()?, size: self.u64()?, mtime_ns: self.u64()? as i64, ctime_ns: self.u64()? as i64 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_round_trips_and_damage_is_seen() {
        let id = Identity { dev: 1, ino: 2, size: 3, mtime_ns: -4, ctime_ns: 5 };
        let s = State { key: 7 << 100, output: id, files: vec![Record { path: PathBuf::from("/a/b.o"), id, digest: 9 }] };
        let b = encode(&s);
        assert_eq!(decode(&b), Some(s));
        for i in [0, MAGIC.len(), b.len() / 2, b.len() - 1] {
            let mut d = b.clone();
            d[i] ^= 1;
            assert_eq!(decode(&d), None, "a flipped byte {i} must be seen");
        }
        assert_eq!(decode(&b[..b.len() - 3]), None);
        assert_eq!(decode(b""), None);
    }
}
