//! ThinLTO backends: one compile job per module, run locally in parallel, with a cache.
//!
//! A job is exactly what lld 22 would put in a DTLTO job file: the remote compiler's common
//! arguments (`clang -c --target=... -O2 -faddrsig -ffunction-sections -fdata-sections [-fpic]
//! -Wno-unused-command-line-argument`) followed by `<module> -fthinlto-index=<shard> -o <object>`,
//! run in the linker's working directory. In-process ThinLTO runs these jobs itself; the DTLTO
//! stage hands the same jobs to a distributor. Every output is checked (clang's ThinLTO backend
//! can exit 0 after writing an empty object), and cached by the hash of everything that enters
//! the job: compiler, arguments, module, shard and import sources.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use sha1::{Digest, Sha1};

use crate::error::{Error, Result};

#[derive(Debug, Clone)]
pub struct Job {
    /// The module as lld would name it (for messages).
    pub display: String,
    /// Module ID (bitcode path), shard path and output path, relative to the working directory.
    pub module: String,
    pub shard: String,
    pub output: String,
    /// Module IDs this job imports from.
    pub imports: Vec<String>,
}

impl Job {
    pub fn args(&self) -> Vec<String> {
        vec![self.module.clone(), format!("-fthinlto-index={}", self.shard), "-o".into(), self.output.clone()]
    }
}

/// lld 22's remote-compiler argument list (`common.args` of the DTLTO job file).
pub fn common_args(
    compiler: &str,
    prepend: &[String],
    triple: &str,
    opt_level: u32,
    pic: bool,
    sample_profile: Option<&str>,
    no_pgo_warn_mismatch: bool,
    extra: &[String],
) -> Vec<String> {
    let mut a = vec![compiler.to_string()];
    a.extend(prepend.iter().cloned());
    a.push("-c".into());
    a.push(format!("--target={triple}"));
    a.push(format!("-O{opt_level}"));
    a.push("-faddrsig".into());
    a.push("-ffunction-sections".into());
    a.push("-fdata-sections".into());
    if pic {
        a.push("-fpic".into());
    }
    if no_pgo_warn_mismatch {
        a.push("-mllvm".into());
        a.push("-no-pgo-warn-mismatch".into());
    }
    if let Some(p) = sample_profile {
        a.push(format!("-fprofile-sample-use={p}"));
    }
    a.push("-Wno-unused-command-line-argument".into());
    a.extend(extra.iter().cloned());
    a
}

/// Checks a backend output: an x86-64 ELF relocatable object, or an x86-64 COFF object (for
/// COFF links), with something in it.
pub fn check_object(data: &[u8]) -> std::result::Result<(), String> {
    if data.is_empty() {
        return Err("the object file is empty".into());
    }
    if !data.starts_with(b"\x7fELF") && data.len() >= 20 {
        // COFF: IMAGE_FILE_MACHINE_AMD64 in a regular header, or a /bigobj header.
        let machine = u16::from_le_bytes([data[0], data[1]]);
        let bigobj = data[0..4] == [0, 0, 0xff, 0xff] && data.len() >= 8 && u16::from_le_bytes([data[6], data[7]]) == 0x8664;
        if machine == 0x8664 || bigobj {
            return Ok(());
        }
    }
    if data.len() < 64 || &data[..4] != b"\x7fELF" {
        return Err("not an ELF or COFF x86-64 object".into());
    }
    if data[4] != 2 || data[5] != 1 {
        return Err("not a 64-bit little-endian ELF file".into());
    }
    let e_type = u16::from_le_bytes([data[16], data[17]]);
    let e_machine = u16::from_le_bytes([data[18], data[19]]);
    if e_type != 1 {
        return Err("not a relocatable object".into());
    }
    if e_machine != 62 {
        return Err("not an x86-64 object".into());
    }
    Ok(())
}

/// dtld's own files in a cache directory (link-cache entries, the member store, input stamps,
/// symbol tables, persistent staging directories): in `<dir>/.dtld/`, out of sight, so that
/// what a user or a test lists in the directory is what lld leaves there (`llvmcache-<key>`,
/// `llvmcache.timestamp`).
pub fn own_dir(cache_dir: &Path) -> PathBuf {
    cache_dir.join(".dtld")
}

pub struct Cache {
    pub dir: PathBuf,
    /// Identity of the compiler (path and version) that enters every key.
    pub salt: String,
    /// The digest of every file a key has read in this link (a module is the import source
    /// of many jobs: it is read and hashed once, not once per importer).
    digests: Mutex<std::collections::HashMap<PathBuf, Option<(u64, [u8; 20])>>>,
}

/// Opens a cache entry (a backend object or a link-cache record) without following a symlink
/// (one planted in a shared cache is removed, never read through); only a regular file.
fn open_entry(p: &std::path::Path) -> Option<(std::fs::File, std::fs::Metadata)> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = match std::fs::File::options().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(p) {
        Ok(f) => f,
        Err(e) => {
            if e.raw_os_error() == Some(libc::ELOOP) {
                let _ = std::fs::remove_file(p);
            }
            return None;
        }
    };
    let meta = f.metadata().ok()?;
    meta.is_file().then_some((f, meta))
}

/// Reads a cache entry (`open_entry`). Returns the open file (to mark the use) and its bytes.
pub(crate) fn read_entry(p: &std::path::Path) -> Option<(std::fs::File, Vec<u8>)> {
    use std::io::Read;
    let (mut f, _) = open_entry(p)?;
    let mut data = Vec::new();
    f.read_to_end(&mut data).ok()?;
    Some((f, data))
}

/// Maps a cache entry (`open_entry`) for the rest of the process, as LLVM maps its cache's
/// hits: no copy of the bytes (998 objects, 25 MiB, for an OpenSSL relink). Entries are
/// replaced by renaming and pruned by unlinking, never rewritten in place, so the mapping
/// keeps the bytes it was made with. Also the entry's metadata, and the open file.
/// A small entry is read instead (as LLVM reads files under 16 KiB): tens of thousands of
/// mappings would run into the process's limit on them (`vm.max_map_count`, 65,530 by default),
/// next to the inputs' own. A mapping that fails is a read too.
pub(crate) fn map_entry(p: &std::path::Path) -> Option<(std::fs::File, std::fs::Metadata, &'static [u8])> {
    use std::io::Read;
    const MAP_FROM: u64 = 16 << 10;
    let (mut f, meta) = open_entry(p)?;
    if meta.len() == 0 {
        return Some((f, meta, &[]));
    }
    if meta.len() >= MAP_FROM {
        // SAFETY: read-only and private; see above for why the bytes cannot change under us.
        if let Ok(m) = unsafe { memmap2::Mmap::map(&f) } {
            let m: &'static memmap2::Mmap = crate::util::keep::value(m);
            return Some((f, meta, &m[..]));
        }
    }
    let mut data = Vec::with_capacity(meta.len() as usize);
    f.read_to_end(&mut data).ok()?;
    Some((f, meta, crate::util::keep::slice(data)))
}

impl Cache {
    pub fn new(dir: PathBuf, salt: String) -> Cache {
        Cache { dir, salt, digests: Mutex::new(Default::default()) }
    }

    /// Tells the cache the (length, SHA-1) of a file it has not read: one whose bytes dtld
    /// already holds and hashed (a module), or that is not written yet and may never need to be
    /// (an index shard kept in memory until a job misses the cache).
    pub fn know(&self, path: PathBuf, data: &[u8], digest: [u8; 20]) {
        self.digests.lock().unwrap_or_else(|e| e.into_inner()).insert(path, Some((data.len() as u64, digest)));
    }

    /// (length, SHA-1) of a file, read once per link.
    fn digest(&self, path: PathBuf) -> Option<(u64, [u8; 20])> {
        if let Some(d) = self.digests.lock().unwrap_or_else(|e| e.into_inner()).get(&path) {
            return *d;
        }
        let d = std::fs::read(&path).ok().map(|data| (data.len() as u64, Sha1::digest(&data).into()));
        self.digests.lock().unwrap_or_else(|e| e.into_inner()).insert(path, d);
        d
    }

    /// The key of a job from what it reads, by content: the remote command line every job
    /// shares, then its module's, its shard's and its import sources' lengths and digests (the
    /// import sources in the order of their digests). No path enters it: DTLTO's temporaries
    /// carry the link's process id, and a shard read for a key names its modules by their
    /// digests (`distributed::know_contents`), so a relink from anywhere finds the entry.
    pub fn key(&self, common: &[String], job: &Job, cwd: &Path) -> Option<String> {
        let mut h = Sha1::new();
        h.update(b"dtld-thinlto-cache-v4\0");
        h.update(self.salt.as_bytes());
        h.update([0]);
        for a in common {
            h.update(a.as_bytes());
            h.update([0]);
        }
        let mut imports = job.imports.iter().map(|f| self.digest(cwd.join(f))).collect::<Option<Vec<_>>>()?;
        imports.sort_unstable();
        imports.dedup();
        for (len, digest) in [self.digest(cwd.join(&job.module))?, self.digest(cwd.join(&job.shard))?].into_iter().chain(imports) {
            h.update(len.to_le_bytes());
            h.update(digest);
        }
        Some(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
    }

    /// The key of a job from LLVM's cache key for its module's backend (`computeLTOCacheKey`:
    /// the module's and its import sources' hashes, import and export lists, resolutions and
    /// the thin link's configuration, never a module's name) and the remote command line every
    /// job shares: no file is read or hashed, and no path of the link enters it, so a relink
    /// of another output, or on another machine, finds the same entries.
    pub fn llvm_key(&self, common: &[String], llvm_key: &[u8]) -> String {
        let mut h = Sha1::new();
        h.update(b"dtld-thinlto-cache-v3-llvm\0");
        h.update(self.salt.as_bytes());
        h.update([0]);
        for a in common {
            h.update(a.as_bytes());
            h.update([0]);
        }
        h.update((llvm_key.len() as u64).to_le_bytes());
        h.update(llvm_key);
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    fn entry(&self, key: &str) -> PathBuf {
        self.dir.join(Cache::file_name(key))
    }

    /// A cached object. Entries are opened without following a symlink (one planted in a
    /// shared cache is removed, never read through) and must be regular files.
    pub fn lookup(&self, key: &str) -> Option<&'static [u8]> {
        let p = self.entry(key);
        let (f, meta, data) = map_entry(&p)?;
        if check_object(data).is_err() {
            let _ = std::fs::remove_file(&p);
            return None;
        }
        // A hit counts as a use for pruning: the entry's time is renewed once it is an hour
        // old (pruning works in hours and days; a relink loop does not rewrite 998 inodes).
        let now = SystemTime::now();
        if meta.modified().ok().and_then(|m| now.duration_since(m).ok()).is_none_or(|age| age.as_secs() >= 3600) {
            let _ = f.set_modified(now);
        }
        Some(data)
    }

    /// The name of the entry for `key` in the cache directory: named as LLVM names its own
    /// (`llvmcache-<key>`, upper-case hex), so that the directory holds what lld's would (the
    /// keys differ: dtld's cover the remote command line too).
    pub fn file_name(key: &str) -> String {
        format!("llvmcache-{}", key.to_ascii_uppercase())
    }

    /// Adds an object: written to a new file (`O_EXCL|O_NOFOLLOW`, so a name planted in the
    /// cache cannot redirect the write) and renamed over the entry. Whether it was stored.
    pub fn store(&self, key: &str, data: &[u8]) -> bool {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let _ = std::fs::create_dir_all(&self.dir);
        let tmp = self.dir.join(format!(".tmp-dtld-{key}-{}", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        let Ok(mut f) = std::fs::File::options().write(true).create_new(true).custom_flags(libc::O_NOFOLLOW).mode(0o644).open(&tmp) else { return false };
        if f.write_all(data).is_ok() && std::fs::rename(&tmp, self.entry(key)).is_ok() {
            return true;
        }
        let _ = std::fs::remove_file(&tmp);
        false
    }

    /// lld's `--thinlto-cache-policy` over the cache, as LLVM's `pruneCache`: nothing when the
    /// policy sets no limit, else (at most once per `prune_interval`, by `llvmcache.timestamp`)
    /// LLVM's entries (`llvmcache-*`, `Thin-*`) unused for `prune_after` are removed, then the
    /// least recently used ones until at most `cache_size_files` remain and their size is
    /// within `cache_size_bytes` and `cache_size`% of the space available. `created`: the files
    /// this link made and their bytes (lld's buffers, one per task), for LLVM's two warnings.
    /// dtld's own files (`.dtld/`) are pruned by the same policy, counted apart.
    pub fn prune(&self, policy: Option<&str>, created: Option<(usize, u64)>) -> Result<()> {
        let p = CachePolicy::parse(policy.unwrap_or(""))?;
        if p.expire_after.is_none() && p.max_percent == 0 && p.max_bytes.is_none() && p.max_files.is_none() {
            return Ok(());
        }
        let stamp = self.dir.join("llvmcache.timestamp");
        if let Some(interval) = p.interval {
            if let Ok(m) = std::fs::metadata(&stamp).and_then(|m| m.modified()) {
                if SystemTime::now().duration_since(m).is_ok_and(|age| age <= interval) {
                    return Ok(());
                }
            }
        }
        // Touched without following a link (a planted one is replaced by the stamp).
        {
            use std::os::unix::fs::OpenOptionsExt;
            let open = || std::fs::File::options().write(true).create(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(&stamp);
            let f = open().or_else(|_| {
                let _ = std::fs::remove_file(&stamp);
                open()
            });
            if let Ok(f) = f {
                if f.metadata().is_ok_and(|m| m.is_file()) {
                    let _ = f.set_modified(SystemTime::now());
                }
            }
        }
        let llvm = std::fs::read_dir(&self.dir).into_iter().flatten().flatten().filter(|e| {
            let n = e.file_name();
            n.as_encoded_bytes().starts_with(b"llvmcache-") || n.as_encoded_bytes().starts_with(b"Thin-")
        });
        prune_entries(&self.dir, &p, llvm, created);
        let own = std::fs::read_dir(own_dir(&self.dir)).into_iter().flatten().flatten().filter(|e| {
            let n = e.file_name();
            let n = n.as_encoded_bytes();
            [&b"link-"[..], b"member-", b"inputs-", b"symtab-"].iter().any(|p| n.starts_with(p))
        });
        prune_entries(&self.dir, &p, own, None);
        Ok(())
    }
}

/// One set of cache files pruned by policy `p` (LLVM's `pruneCache` after the timestamp check).
fn prune_entries(dir: &Path, p: &CachePolicy, entries: impl Iterator<Item = std::fs::DirEntry>, created: Option<(usize, u64)>) {
    let now = SystemTime::now();
    // (last use, size, path), ordered as LLVM orders them: least recently used first, then the
    // larger, then by path.
    let mut files: Vec<(SystemTime, std::cmp::Reverse<u64>, PathBuf)> = Vec::new();
    for e in entries {
        let Ok(md) = e.metadata() else { continue };
        let used = match (md.accessed(), md.modified()) {
            (Ok(a), Ok(m)) => a.max(m),
            (Ok(t), _) | (_, Ok(t)) => t,
            _ => now,
        };
        if let Some(after) = p.expire_after {
            if now.duration_since(used).is_ok_and(|age| age > after) {
                let _ = std::fs::remove_file(e.path());
                continue;
            }
        }
        files.push((used, std::cmp::Reverse(md.len()), e.path()));
    }
    files.sort();
    let mut total: u64 = files.iter().map(|f| f.1 .0).sum();
    let mut count = files.len() as u64;
    let mut next = files.into_iter();
    let mut remove = |total: &mut u64, count: &mut u64| match next.next() {
        Some((_, std::cmp::Reverse(size), path)) => {
            let _ = std::fs::remove_file(path);
            *total -= size;
            *count -= 1;
            true
        }
        None => false,
    };
    if let Some(max) = p.max_files {
        if let Some((n, _)) = created.filter(|&(n, _)| n as u64 > max) {
            cache_warning(&format!("ThinLTO cache pruning happens since the number of created files ({n}) exceeds the maximum number of files ({max}); consider adjusting --thinlto-cache-policy"));
        }
        while count > max && remove(&mut total, &mut count) {}
    }
    if p.max_percent > 0 || p.max_bytes.is_some() {
        let available = total + free_space(dir);
        let percent = if p.max_percent == 0 { 100 } else { p.max_percent };
        let target = (available as u128 * percent as u128 / 100) as u64;
        let target = target.min(p.max_bytes.unwrap_or(available));
        if let Some((_, bytes)) = created.filter(|&(_, b)| b > target) {
            cache_warning(&format!(
                "ThinLTO cache pruning happens since the total size of the cache files consumed by the current link job ({bytes}  bytes) exceeds maximum cache size ({target} bytes); consider adjusting --thinlto-cache-policy"
            ));
        }
        while total > target && remove(&mut total, &mut count) {}
    }
}

/// The free space of the file system holding `dir` (LLVM's `space_info::free`).
fn free_space(dir: &Path) -> u64 {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else { return 0 };
    // SAFETY: statvfs is plain data, for which all-zero bytes are a valid value.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid C string and `st` a writable statvfs the call fills.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return 0;
    }
    (st.f_bfree as u64).saturating_mul(st.f_frsize as u64)
}

/// LLVM's cache warnings are LLVM's (`WithColor::warning()`): `warning: ...`, no program name.
fn cache_warning(msg: &str) {
    crate::diag::verbatim(&format!("warning: {msg}"));
}

#[derive(Debug, PartialEq)]
pub struct CachePolicy {
    pub interval: Option<Duration>,
    pub expire_after: Option<Duration>,
    pub max_bytes: Option<u64>,
    pub max_files: Option<u64>,
    /// `cache_size=N%` of the space available to the cache (LLVM's default 75; 0: no limit).
    pub max_percent: u64,
}

impl CachePolicy {
    pub fn parse(s: &str) -> Result<CachePolicy> {
        let mut p = CachePolicy {
            interval: Some(Duration::from_secs(1200)),
            expire_after: Some(Duration::from_secs(7 * 24 * 3600)),
            max_bytes: None,
            max_files: Some(1_000_000),
            max_percent: 75,
        };
        let duration = |v: &str| -> Result<Duration> {
            let (num, unit) = v.split_at(v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len()));
            let n: u64 = num.parse().map_err(|_| Error::new(format!("'{v}' not an integer")))?;
            let mult = match unit {
                "s" => 1,
                "m" => 60,
                "h" => 3600,
                _ => crate::bail!("'{v}' must end with one of 's', 'm' or 'h'"),
            };
            Ok(Duration::from_secs(n * mult))
        };
        for part in s.split(':').filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=').ok_or_else(|| Error::new(format!("invalid cache policy: {part}")))?;
            match k {
                "prune_interval" => p.interval = Some(duration(v)?),
                "prune_after" => {
                    let d = duration(v)?;
                    p.expire_after = if d.is_zero() { None } else { Some(d) };
                }
                "cache_size" => {
                    let Some(num) = v.strip_suffix('%') else { crate::bail!("'{v}' must be a percentage") };
                    let n: u64 = num.parse().map_err(|_| Error::new(format!("'{num}' not an integer")))?;
                    if n > 100 {
                        crate::bail!("'{num}' must be between 0 and 100");
                    }
                    p.max_percent = n;
                }
                "cache_size_bytes" => {
                    let (num, unit) = v.split_at(v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len()));
                    let n: u64 = num.parse().map_err(|_| Error::new(format!("'{v}' not an integer")))?;
                    let m: u64 = match unit {
                        "" => 1,
                        "k" => 1 << 10,
                        "m" => 1 << 20,
                        "g" => 1 << 30,
                        _ => crate::bail!("'{v}' not an integer"),
                    };
                    p.max_bytes = if n == 0 { None } else { Some(n * m) };
                }
                "cache_size_files" => {
                    let n: u64 = v.parse().map_err(|_| Error::new(format!("'{v}' not an integer")))?;
                    p.max_files = if n == 0 { None } else { Some(n) };
                }
                _ => crate::bail!("unknown key: '{k}'"),
            }
        }
        Ok(p)
    }
}

/// A backend's object: mapped from the cache, or read from the job's output file.
pub type Object = Cow<'static, [u8]>;

/// What the backend cache knows of a job before it runs: its key and, on a hit, the object.
/// DTLTO's in-process thin link asks before writing a module's shard (`inproc::Probe`), with
/// LLVM's own cache key for the module's backend (`Cache::llvm_key`).
#[derive(Debug, Clone)]
pub struct Known {
    pub key: String,
    pub hit: Option<&'static [u8]>,
}

/// What running the jobs did.
#[derive(Debug, Default)]
pub struct Stats {
    pub compiled: usize,
    pub cached: usize,
    /// By job: the cache file (a name in the cache directory) that holds the job's object, when
    /// the cache had it or took it.
    pub cache_files: Vec<Option<String>>,
    /// DTLTO: the jobs whose native object came back empty (a backend that failed quietly), by
    /// their output's name: linked without them, as lld does, and warned about.
    pub empty: Vec<String>,
}

/// Runs `jobs` (`common ++ job.args()`, in `cwd`) with `parallelism` processes at a time, using
/// `cache` when given. Returns each job's object bytes, in job order.
pub fn run_local(common: &[String], jobs: &[Job], cwd: &Path, parallelism: usize, cache: Option<&Cache>) -> Result<(Vec<Object>, Stats)> {
    let results: Vec<Mutex<Option<std::result::Result<Done, String>>>> = jobs.iter().map(|_| Mutex::new(None)).collect();
    // Largest module first, as LLVM schedules them, so one big module does not finish last.
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(std::fs::metadata(cwd.join(&jobs[i].module)).map(|m| m.len()).unwrap_or(0)));
    let next = AtomicUsize::new(0);
    let workers = parallelism.max(1).min(jobs.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                let Some(&i) = order.get(n) else { break };
                let r = run_one(common, &jobs[i], cwd, cache);
                *results[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
            });
        }
    });
    let mut objects = Vec::with_capacity(jobs.len());
    let mut stats = Stats::default();
    let mut errors = Vec::new();
    for r in results {
        match r.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(Ok(Done { data, hit, cache_file })) => {
                if hit {
                    stats.cached += 1;
                } else {
                    stats.compiled += 1;
                }
                objects.push(data);
                stats.cache_files.push(cache_file);
            }
            Some(Err(e)) => {
                errors.push(e);
                objects.push(Cow::Borrowed(&[][..]));
                stats.cache_files.push(None);
            }
            None => errors.push("internal error: a backend job did not run".into()),
        }
    }
    if !errors.is_empty() {
        return Err(Error::many(errors));
    }
    Ok((objects, stats))
}

/// A job's object, whether it came from the cache, and the cache file holding it.
struct Done {
    data: Object,
    hit: bool,
    cache_file: Option<String>,
}

fn run_one(common: &[String], job: &Job, cwd: &Path, cache: Option<&Cache>) -> std::result::Result<Done, String> {
    let key = cache.and_then(|c| c.key(common, job, cwd));
    if let (Some(c), Some(k)) = (cache, &key) {
        if let Some(data) = c.lookup(k) {
            return Ok(Done { data: Cow::Borrowed(data), hit: true, cache_file: Some(Cache::file_name(k)) });
        }
    }
    let out_path = cwd.join(&job.output);
    let _ = std::fs::remove_file(&out_path);
    let output = Command::new(&common[0])
        .args(&common[1..])
        .args(job.args())
        .current_dir(cwd)
        .output()
        .map_err(|e| format!("ThinLTO backend for {}: cannot run {}: {}", job.display, common[0], crate::error::io_error(&e)))?;
    let messages = String::from_utf8_lossy(&output.stderr).trim_end().to_string();
    if !output.status.success() {
        let status = match output.status.code() {
            Some(c) => format!("exit code {c}"),
            None => "a signal".to_string(),
        };
        return Err(format!(
            "ThinLTO backend for {} failed with {status}{}",
            job.display,
            if messages.is_empty() { String::new() } else { format!(":\n{messages}") }
        ));
    }
    let data = std::fs::read(&out_path)
        .map_err(|e| format!("ThinLTO backend for {}: cannot open native object file {}: {}", job.display, job.output, crate::error::io_error(&e)))?;
    if let Err(e) = check_object(&data) {
        return Err(format!(
            "ThinLTO backend for {}: {}: {e}{}",
            job.display,
            job.output,
            if messages.is_empty() { String::new() } else { format!("; the compiler said:\n{messages}") }
        ));
    }
    if !messages.is_empty() {
        crate::diag::verbatim(&messages);
    }
    let cache_file = match (cache, &key) {
        (Some(c), Some(k)) if c.store(k, &data) => Some(Cache::file_name(k)),
        _ => None,
    };
    Ok(Done { data: Cow::Owned(data), hit: false, cache_file })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lld_common_args() {
        let a = common_args("/usr/lib/llvm-22/bin/clang", &[], "x86_64-pc-linux-gnu", 2, true, None, false, &[]);
        assert_eq!(a.join(" "), "/usr/lib/llvm-22/bin/clang -c --target=x86_64-pc-linux-gnu -O2 -faddrsig -ffunction-sections -fdata-sections -fpic -Wno-unused-command-line-argument");
    }

    #[test]
    fn object_checks() {
        assert_eq!(check_object(b""), Err("the object file is empty".into()));
        assert_eq!(check_object(b"garbage garbage garbage garbage garbage garbage garbage garbage garbage"), Err("not an ELF or COFF x86-64 object".into()));
    }

    /// Entries small and large come back whole (read or mapped); a symlink planted in the cache
    /// is removed, never followed; a directory is no entry; a hit renews an old entry's time.
    #[test]
    fn cache_entries() {
        let dir = std::env::temp_dir().join(format!("dtld-backend-cache-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for len in [1usize, 4096, 16 << 10, (64 << 10) + 3] {
            let data: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            let p = dir.join(format!("e{len}"));
            std::fs::write(&p, &data).unwrap();
            assert_eq!(map_entry(&p).unwrap().2, &data[..], "{len} bytes");
        }
        std::os::unix::fs::symlink(dir.join("e1"), dir.join("link")).unwrap();
        assert!(map_entry(&dir.join("link")).is_none());
        assert!(!dir.join("link").exists() && std::fs::symlink_metadata(dir.join("link")).is_err());
        std::fs::create_dir(dir.join("sub")).unwrap();
        assert!(map_entry(&dir.join("sub")).is_none());

        let c = Cache::new(dir.clone(), String::new());
        let obj = {
            let mut o = vec![0u8; 128];
            o[..4].copy_from_slice(b"\x7fELF");
            o[4] = 2;
            o[5] = 1;
            o[16] = 1; // ET_REL
            o[18] = 62; // EM_X86_64
            o
        };
        assert_eq!(check_object(&obj), Ok(()));
        assert!(c.store("k", &obj));
        let old = SystemTime::now() - Duration::from_secs(7200);
        std::fs::File::options().write(true).open(dir.join("llvmcache-K")).unwrap().set_modified(old).unwrap();
        assert_eq!(c.lookup("k").unwrap(), &obj[..]);
        let renewed = std::fs::metadata(dir.join("llvmcache-K")).unwrap().modified().unwrap();
        assert!(renewed > old + Duration::from_secs(3600));
        // A damaged entry is no hit, and goes.
        std::fs::write(dir.join("llvmcache-K"), b"junk").unwrap();
        assert!(c.lookup("k").is_none());
        assert!(!dir.join("llvmcache-K").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn cache_policy() {
        let p = CachePolicy::parse("prune_interval=30s:prune_after=1h:cache_size_bytes=2m:cache_size_files=5").unwrap();
        assert_eq!(p.interval, Some(Duration::from_secs(30)));
        assert_eq!(p.expire_after, Some(Duration::from_secs(3600)));
        assert_eq!(p.max_bytes, Some(2 << 20));
        assert_eq!(p.max_files, Some(5));
        assert!(CachePolicy::parse("bogus=1").is_err());
        assert!(CachePolicy::parse("prune_after=5x").is_err());
    }
}
