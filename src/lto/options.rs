//! The LTO part of the command line, in one place.
//!
//! The option parser records `--lto-*`/`--thinlto-*` arguments raw, together with `-plugin`,
//! `-plugin-opt=` and `-mllvm`; this module turns them into one `LtoOptions` with lld's meanings
//! and defaults. `-plugin-opt=` values are lld's aliases for the options clang passes to a
//! linker it believes uses LLVMgold.so (`O2`, `mcpu=`, `thinlto`, `jobs=`, ...). When the plugin
//! is GCC's `liblto_plugin.so` (gcc always passes it), its options are GCC's: they are not read
//! here but handed to GCC's plugin unchanged (`lto::gcc`).

use std::path::PathBuf;

use crate::error::Result;

#[derive(Debug, Clone, Default)]
pub struct LtoOptions {
    /// `--lto-O<n>` / `-plugin-opt=O<n>` (default 2).
    pub opt_level: u32,
    /// `--lto-CGO<n>`: code generation level; default derived from `opt_level` by LLVM.
    pub cg_opt_level: Option<u32>,
    pub mcpu: Option<String>,
    pub mattrs: Vec<String>,
    /// `--thinlto-jobs=N` (`all` or 0: one per core).
    pub jobs: Option<usize>,
    pub cache_dir: Option<PathBuf>,
    pub cache_policy: Option<String>,
    /// `--thinlto-index-only[=file]`.
    pub index_only: bool,
    pub index_only_file: Option<PathBuf>,
    pub emit_imports_files: bool,
    pub emit_index_files: bool,
    /// `--thinlto-prefix-replace=old;new[;native]`.
    pub prefix_replace: Option<(String, String, String)>,
    /// `--thinlto-object-suffix-replace=old;new`.
    pub object_suffix_replace: Option<(String, String)>,
    pub save_temps: bool,
    /// `-mllvm` options and plugin options that start with `-`, for the thin link.
    pub mllvm: Vec<String>,
    /// `--lto-obj-path=`: where the regular-LTO object is also written.
    pub obj_path: Option<PathBuf>,
    pub partitions: u32,
    pub sample_profile: Option<String>,
    pub no_pgo_warn_mismatch: bool,
    /// DTLTO (the DTLTO issue implements the distribution).
    pub distributor: Option<String>,
    pub distributor_args: Vec<String>,
    pub remote_compiler: Option<String>,
    pub remote_compiler_prepend_args: Vec<String>,
    pub remote_compiler_args: Vec<String>,
    /// Where the user's LLVM lives, in the order dtld looks: `--lto-llvm-dir=`, `$DTLD_LLVM_DIR`,
    /// then the LLVMgold.so given with `-plugin`.
    pub llvm_dir: Option<PathBuf>,
    pub plugin: Option<PathBuf>,
    pub emit_asm: bool,
    pub emit_llvm: bool,
    pub debug_pass_manager: bool,
    pub whole_program_visibility: bool,
}

/// Splits `old;new[;third]` the way lld does (an error without a `;`).
fn split_semicolon(opt: &str, v: &str, parts: usize) -> Result<Vec<String>> {
    let p: Vec<String> = v.split(';').map(str::to_string).collect();
    if p.len() < 2 || p.len() > parts {
        crate::bail!("{opt} expects 'old;new' format, but got {v}");
    }
    Ok(p)
}

fn parse_jobs(opt: &str, v: &str) -> Result<Option<usize>> {
    if v == "all" || v == "0" {
        return Ok(None);
    }
    // lld also accepts `heavyweight`-style strategies; a plain number is what users write.
    match v.parse::<usize>() {
        Ok(n) => Ok(Some(n)),
        Err(_) => crate::bail!("{opt}: expected a positive integer or 'all', but got '{v}'"),
    }
}

/// An optimization level as lld reads it: a number (a negative one wraps around as lld's
/// unsigned parse does) no larger than `max`; `arg` is the whole argument, for the message.
fn parse_level(arg: &str, v: &str, max: u32) -> Result<u32> {
    match v.parse::<i64>() {
        Ok(n) if (0..=max as i64).contains(&n) => Ok(n as u32),
        Ok(n) => crate::bail!("invalid optimization level for LTO: {}", n as u32),
        Err(_) => crate::bail!("{arg}: number expected, but got '{v}'"),
    }
}

impl LtoOptions {
    /// The format-neutral constructor: the `-plugin` path, the raw `--lto-*`/`--thinlto-*`
    /// arguments (GNU spelling, e.g. `--thinlto-distributor=d`), the `-plugin-opt=` values and
    /// the `-mllvm` options. The ELF and the COFF drivers (which translate lld-link's
    /// `/thinlto-...:` spellings to these) both build their options here.
    pub fn from_args(plugin: Option<&str>, lto_args: &[String], plugin_opts: &[String], mllvm: &[String]) -> Result<LtoOptions> {
        let mut o = LtoOptions { opt_level: 2, partitions: 1, ..Default::default() };
        // `-plugin-opt=` options are lld's own LTO options unless GCC's plugin is named (then
        // they are GCC's, for elf/gcc_lto): without `-plugin`, lld reads them as its own.
        let is_llvm_plugin = plugin.is_none_or(|p| {
            let name = p.rsplit('/').next().unwrap_or(p);
            !name.contains("liblto_plugin")
        });
        if let Some(p) = plugin {
            if is_llvm_plugin {
                // LLVMgold.so named by the compiler driver: the fallback thin-link host.
                o.plugin = Some(PathBuf::from(p));
            }
        }
        let mut errors = Vec::new();
        for a in lto_args {
            let body = a.trim_start_matches('-');
            let (name, value) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (body, None),
            };
            if let Err(e) = o.apply(name, value, a) {
                errors.extend(e.messages);
            }
        }
        if is_llvm_plugin {
            for v in plugin_opts {
                if let Err(e) = o.apply_plugin_opt(v) {
                    errors.extend(e.messages);
                }
            }
        }
        o.mllvm.extend(mllvm.iter().cloned());
        if o.llvm_dir.is_none() {
            if let Some(d) = std::env::var_os("DTLD_LLVM_DIR").filter(|d| !d.is_empty()) {
                o.llvm_dir = Some(PathBuf::from(d));
            }
        }
        if !errors.is_empty() {
            return Err(crate::error::Error::many(errors));
        }
        Ok(o)
    }

    fn apply(&mut self, name: &str, value: Option<&str>, spelled: &str) -> Result<()> {
        let v = || value.unwrap_or("").to_string();
        match (name, value) {
            (n, None) if n.starts_with("lto-O") => self.opt_level = parse_level(spelled, &n[5..], 3)?,
            (n, None) if n.starts_with("lto-CGO") => self.cg_opt_level = Some(parse_level(spelled, &n[7..], 3)?),
            ("thinlto-jobs", Some(j)) => self.jobs = parse_jobs(spelled, j)?,
            ("thinlto-cache-dir", Some(_)) => self.cache_dir = Some(PathBuf::from(v())),
            ("thinlto-cache-policy", Some(_)) => self.cache_policy = Some(v()),
            ("thinlto-index-only", None) => self.index_only = true,
            ("thinlto-index-only", Some(f)) => {
                self.index_only = true;
                self.index_only_file = Some(PathBuf::from(f));
            }
            ("thinlto-emit-imports-files", None) => self.emit_imports_files = true,
            ("thinlto-emit-index-files", None) => self.emit_index_files = true,
            ("thinlto-prefix-replace", Some(p)) => {
                let p = split_semicolon("--thinlto-prefix-replace=", p, 3)?;
                self.prefix_replace = Some((p[0].clone(), p[1].clone(), p.get(2).cloned().unwrap_or_default()));
            }
            ("thinlto-object-suffix-replace", Some(p)) => {
                let p = split_semicolon("--thinlto-object-suffix-replace=", p, 2)?;
                self.object_suffix_replace = Some((p[0].clone(), p[1].clone()));
            }
            ("save-temps", _) => self.save_temps = true,
            ("lto-obj-path", Some(_)) => self.obj_path = Some(PathBuf::from(v())),
            ("lto-partitions", Some(p)) => {
                self.partitions = match p.parse::<u32>() {
                    Ok(n) if n > 0 => n,
                    _ => crate::bail!("--lto-partitions: number of threads must be > 0"),
                }
            }
            ("lto-sample-profile", Some(_)) => self.sample_profile = Some(v()),
            ("lto-emit-asm", None) => self.emit_asm = true,
            ("lto-debug-pass-manager", None) => self.debug_pass_manager = true,
            ("lto-whole-program-visibility", None) => self.whole_program_visibility = true,
            ("lto-validate-all-vtables-have-type-infos", _) | ("lto-unified", _) | ("lto-newpm-passes", _) => {}
            ("lto-llvm-dir", Some(_)) => self.llvm_dir = Some(PathBuf::from(v())),
            ("thinlto-distributor", Some(d)) => self.distributor = if d.is_empty() { None } else { Some(d.to_string()) },
            ("thinlto-distributor-arg", Some(_)) => self.distributor_args.push(v()),
            ("thinlto-remote-compiler", Some(r)) => self.remote_compiler = if r.is_empty() { None } else { Some(r.to_string()) },
            ("thinlto-remote-compiler-prepend-arg", Some(_)) => self.remote_compiler_prepend_args.push(v()),
            ("thinlto-remote-compiler-arg", Some(_)) => self.remote_compiler_args.push(v()),
            ("lto-pgo-warn-mismatch", None) => self.no_pgo_warn_mismatch = false,
            ("no-lto-pgo-warn-mismatch", None) => self.no_pgo_warn_mismatch = true,
            // Accepted for compatibility; they only tune LLVM internals dtld leaves at defaults.
            ("thinlto-single-module", Some(_))
            | ("lto-cs-profile-generate", None)
            | ("lto-cs-profile-file", Some(_))
            | ("lto-basic-block-sections", Some(_))
            | ("lto-unique-basic-block-section-names", None)
            | ("lto-aa-pipeline", Some(_))
            | ("lto-stats-file", Some(_))
            | ("lto-emit-llvm", None)
            | ("lto-known-safe-vtables", Some(_))
            | ("lto-pseudo-probe-for-profiling", None)
            | ("lto-remarks-file", Some(_)) => {}
            _ => crate::bail!("unknown argument '{spelled}'"),
        }
        Ok(())
    }

    /// lld's `-plugin-opt=` aliases (`lld/ELF/Options.td`).
    fn apply_plugin_opt(&mut self, v: &str) -> Result<()> {
        if let Some(level) = v.strip_prefix('O') {
            self.opt_level = parse_level(&format!("--plugin-opt={v}"), level, 3)?;
            return Ok(());
        }
        if let Some(rest) = v.strip_prefix('-') {
            // Everything starting with '-' goes to LLVM, as with -mllvm.
            self.mllvm.push(format!("-{rest}"));
            return Ok(());
        }
        let (name, value) = match v.split_once('=') {
            Some((n, val)) => (n, Some(val)),
            None => (v, None),
        };
        match (name, value) {
            ("mcpu", Some(c)) => self.mcpu = Some(c.to_string()),
            ("jobs", Some(j)) => self.jobs = parse_jobs("-plugin-opt=jobs=", j)?,
            ("thinlto", None) | ("disable-verify", None) | ("opt-remarks-with-hotness", None) => {}
            ("cache-dir", Some(d)) => self.cache_dir = Some(PathBuf::from(d)),
            ("cache-policy", Some(p)) => self.cache_policy = Some(p.to_string()),
            ("thinlto-index-only", _)
            | ("thinlto-emit-imports-files", None)
            | ("thinlto-prefix-replace", Some(_))
            | ("thinlto-object-suffix-replace", Some(_))
            | ("thinlto-emit-index-files", None) => self.apply(name, value, &format!("-plugin-opt={v}"))?,
            ("save-temps", None) => self.save_temps = true,
            ("obj-path", Some(p)) => self.obj_path = Some(PathBuf::from(p)),
            ("lto-partitions", Some(p)) => self.apply("lto-partitions", Some(p), v)?,
            ("sample-profile", Some(p)) => self.sample_profile = Some(p.to_string()),
            ("emit-asm", None) => self.emit_asm = true,
            ("emit-llvm", None) => self.emit_llvm = true,
            ("debug-pass-manager", None) => self.debug_pass_manager = true,
            ("dwo_dir", Some(_))
            | ("cs-profile-generate", None)
            | ("cs-profile-path", Some(_))
            | ("opt-remarks-filename", Some(_))
            | ("opt-remarks-passes", Some(_))
            | ("opt-remarks-format", Some(_))
            | ("opt-remarks-hotness-threshold", Some(_))
            | ("stats-file", Some(_))
            | ("time-trace", _)
            | ("time-trace-granularity", Some(_))
            | ("whole-program-visibility", None) => {}
            _ => {
                // GCC's lto-wrapper path is passed by collect2; lld ignores it too.
                if !(v.ends_with("lto-wrapper") || v.ends_with("lto-wrapper.exe")) {
                    crate::bail!("-plugin-opt=: unknown plugin option '{v}'");
                }
            }
        }
        Ok(())
    }
}
