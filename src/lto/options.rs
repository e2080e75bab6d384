//! The LTO part of the command line, in one place.
//!
//! The option parser records `--lto-*`/`--thinlto-*` arguments raw, together with `-plugin`,
//! `-plugin-opt=` and `-mllvm`; this module turns them into one `LtoOptions` with lld's meanings
//! and defaults. `-plugin-opt=` values are lld's aliases for the options clang passes to a
//! linker it believes uses LLVMgold.so (`O2`, `mcpu=`, `thinlto`, `jobs=`, ...). When the plugin
//! is GCC's `liblto_plugin.so` (gcc always passes it), its options are GCC's: they are not read
//! here but handed to GCC's plugin unchanged (`elf::gcc_lto`).

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
    /// The LTO library the command line's check of the LLVM options loaded (`cloptions.rs`):
    /// one process hosts one libLLVM, so a thin link that needs another runs out of process.
    pub llvm_loaded: Option<PathBuf>,
    pub emit_asm: bool,
    pub emit_llvm: bool,
    pub debug_pass_manager: bool,
    pub whole_program_visibility: bool,
    /// Backend options that only some of dtld's ways of running the backends pass on to LLVM
    /// (`Knob::honoured_by`), in command-line order.
    pub tuning: Vec<Tuning>,
    /// Options dtld reads but does not implement on any path, as spelled, with whether
    /// ignoring them would change what the output does (then the link is refused): reported
    /// once, when the LTO step runs (`report_unimplemented`).
    pub dropped: Vec<(String, bool)>,
    /// Other warnings about the options (lld's deprecation notes), said with `dropped`.
    pub warnings: Vec<String>,
    /// `--lto-validate-all-vtables-have-type-infos` (the last of it and its `no-` form), and the
    /// `--lto-known-safe-vtables=` patterns, which `finish` checks when the validation is on.
    pub validate_vtables: bool,
    pub known_safe_vtables: Vec<String>,
    /// The `dropped` entry of the last partition count other than 1, as spelled (a later one
    /// replaces it).
    pub partitions_dropped: Option<String>,
}

/// Whose command line the options came from: ld.lld checks them together (`finish`), lld-link
/// does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    Gnu,
    LldLink,
}

/// A backend option that lld sets in LLVM's `lto::Config` (or its target options).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Knob {
    CsProfileGenerate,
    CsProfilePath,
    AaPipeline,
    OptPipeline,
    StatsFile,
    RemarksFile,
    RemarksPasses,
    RemarksFormat,
    RemarksHotnessThreshold,
    RemarksWithHotness,
    DwoDir,
    DisableVerify,
    BbSections,
    BbAddrMap,
    UniqueBbSectionNames,
}

/// One `Knob` as given: its value (empty for a flag) and its spelling, for messages.
#[derive(Debug, Clone)]
pub struct Tuning {
    pub knob: Knob,
    pub value: String,
    pub spelled: String,
}

/// How a link's backends run, for what each can pass on to LLVM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// dtld's in-process library (`inproc.rs`): every `Knob`, as lld sets it.
    Library,
    /// `llvm-lto2 run` (`thinlink.rs`): what its command line has.
    Lto2,
    /// Backend jobs run by clang (DTLTO, or locally): lld 22's remote command line exactly,
    /// which carries none of them (`dtlto-llvm22.md` 2.4).
    Clang,
}

impl Knob {
    pub fn honoured_by(self, way: Way) -> bool {
        match way {
            Way::Library => true,
            Way::Lto2 => !matches!(self, Knob::DwoDir | Knob::DisableVerify),
            Way::Clang => false,
        }
    }

    /// Whether a link that drops it would behave differently (instrumentation that writes a
    /// profile): such a link is refused rather than made.
    pub fn changes_meaning(self) -> bool {
        self == Knob::CsProfileGenerate
    }

    /// The `llvm-lto2 run` arguments for this value (none for what it cannot take); they are
    /// LLVM's option-parser flags for the library too where `library_setting` is `None`.
    pub fn lto2_args(self, value: &str) -> Vec<String> {
        let one = |s: String| vec![s];
        match self {
            Knob::CsProfileGenerate => one("--lto-cspgo-gen".into()),
            Knob::CsProfilePath => one(format!("--lto-cspgo-profile-file={value}")),
            Knob::AaPipeline => one(format!("--aa-pipeline={value}")),
            Knob::OptPipeline => one(format!("--opt-pipeline={value}")),
            Knob::StatsFile => one(format!("--stats-file={value}")),
            Knob::RemarksFile => one(format!("--pass-remarks-output={value}")),
            Knob::RemarksPasses => one(format!("--pass-remarks-filter={value}")),
            Knob::RemarksFormat => one(format!("--pass-remarks-format={value}")),
            Knob::RemarksHotnessThreshold => one(format!("--pass-remarks-hotness-threshold={value}")),
            Knob::RemarksWithHotness => one("--pass-remarks-with-hotness".into()),
            Knob::BbSections => one(format!("--basic-block-sections={value}")),
            Knob::BbAddrMap => one("--basic-block-address-map".into()),
            Knob::UniqueBbSectionNames => one("--unique-basic-block-section-names".into()),
            Knob::DwoDir | Knob::DisableVerify => Vec::new(),
        }
    }

    /// The library's `key=value` configuration entry (`dtld_lto.cpp`), or `None` when the
    /// knob goes through LLVM's option parser (`cl_args`), as for `llvm-lto2`.
    pub fn library_setting(self, value: &str) -> Option<String> {
        let key = match self {
            Knob::CsProfileGenerate => "cs-profile-generate",
            Knob::CsProfilePath => "cs-profile-path",
            Knob::AaPipeline => "aa-pipeline",
            Knob::OptPipeline => "opt-pipeline",
            Knob::StatsFile => "stats-file",
            Knob::RemarksFile => "remarks-file",
            Knob::RemarksPasses => "remarks-passes",
            Knob::RemarksFormat => "remarks-format",
            Knob::RemarksHotnessThreshold => "remarks-hotness-threshold",
            Knob::RemarksWithHotness => "remarks-with-hotness",
            Knob::DwoDir => "dwo-dir",
            Knob::DisableVerify => "disable-verify",
            Knob::BbSections | Knob::BbAddrMap | Knob::UniqueBbSectionNames => return None,
        };
        Some(format!("{key}={value}"))
    }
}

/// Warns about each `(option, changes meaning, how)` that does not change the output's meaning,
/// and fails with the others.
fn report<'a>(dropped: impl Iterator<Item = (&'a str, bool, &'a str)>, warn: &dyn Fn(&str)) -> Result<()> {
    let mut refused = Vec::new();
    for (spelled, meaning, via) in dropped {
        if meaning {
            refused.push(format!("{spelled} is not supported{via}"));
        } else {
            warn(&format!("{spelled} is not supported{via}; ignored"));
        }
    }
    if refused.is_empty() {
        Ok(())
    } else {
        Err(crate::error::Error::many(refused))
    }
}

/// Splits `old;new[;third]` the way lld does (an error without a `;`); `opt` is the option as
/// the user spelled it, up to its value (lld's `getSpelling`: `--thinlto-prefix-replace=`,
/// `/thinlto-prefix-replace:`).
/// The `-plugin-opt=` values GCC's collect2 passes even to links without LTO, which lld's
/// option table ignores (`-fresolution=`, `-pass-through=`) rather than hand them to LLVM.
pub fn is_gcc_collect2_opt(v: &str) -> bool {
    v.starts_with("-fresolution=") || v.starts_with("-pass-through=")
}

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
        Err(_) => crate::bail!("{opt}: invalid job count: {v}"),
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

/// LLVM's `parseCachePruningPolicy` checks, with its words: `key=value` pairs joined by `:`.
pub fn check_cache_policy(policy: &str) -> std::result::Result<(), String> {
    let duration = |d: &str| -> std::result::Result<(), String> {
        if d.is_empty() {
            return Err("Duration must not be empty".into());
        }
        let (num, unit) = d.split_at(d.len() - 1);
        if !matches!(unit, "s" | "m" | "h") {
            return Err(format!("'{d}' must end with one of 's', 'm' or 'h'"));
        }
        num.parse::<u64>().map(|_| ()).map_err(|_| format!("'{num}' not an integer"))
    };
    for entry in policy.split(':').filter(|e| !e.is_empty()) {
        let (key, value) = entry.split_once('=').unwrap_or((entry, ""));
        match key {
            "prune_interval" | "prune_after" => duration(value)?,
            "cache_size" => {
                let Some(pct) = value.strip_suffix('%') else {
                    return Err(format!("'{value}' must be a percentage"));
                };
                match pct.parse::<u64>() {
                    Ok(n) if n <= 100 => {}
                    Ok(_) => return Err(format!("'{pct}' must be between 0 and 100")),
                    Err(_) => return Err(format!("'{pct}' not an integer")),
                }
            }
            "cache_size_bytes" => {
                let digits = value.trim_end_matches(['k', 'K', 'm', 'M', 'g', 'G']);
                digits.parse::<u64>().map_err(|_| format!("'{digits}' not an integer"))?;
            }
            "cache_size_files" => {
                value.parse::<u64>().map_err(|_| format!("'{value}' not an integer"))?;
            }
            _ => return Err(format!("Unknown key: '{key}'")),
        }
    }
    Ok(())
}

impl LtoOptions {
    /// The options before the command line says anything: lld's defaults (`-O2`, one
    /// partition). A driver then gives each LTO option to `set` as it reads it, and calls
    /// `finish` once the command line is read.
    pub fn new() -> LtoOptions {
        LtoOptions { opt_level: 2, partitions: 1, ..Default::default() }
    }

    /// The options of a GNU-style command line, at once (`new`, `set` for each of `lto_args`,
    /// `finish`): for tests, which have the arguments as a list.
    #[cfg(test)]
    pub fn from_args(plugin: Option<&str>, lto_args: &[String], plugin_opts: &[String], mllvm: &[String]) -> Result<LtoOptions> {
        let mut o = LtoOptions::new();
        let mut errors = Vec::new();
        for a in lto_args {
            if let Err(e) = o.set_arg(a) {
                errors.extend(e.messages);
            }
        }
        if let Err(e) = o.finish(plugin, plugin_opts, mllvm, Flavor::Gnu) {
            errors.extend(e.messages);
        }
        if !errors.is_empty() {
            return Err(crate::error::Error::many(errors));
        }
        Ok(o)
    }

    /// After the command line: the `-plugin` path, the `-plugin-opt=` values and the `-mllvm`
    /// options, and the checks lld makes on the options together (ld.lld's `readConfigs`;
    /// lld-link makes none of them).
    pub fn finish(&mut self, plugin: Option<&str>, plugin_opts: &[String], mllvm: &[String], flavor: Flavor) -> Result<()> {
        // `-plugin-opt=` options are lld's own LTO options unless GCC's plugin is named (then
        // they are GCC's, for elf/gcc_lto): without `-plugin`, lld reads them as its own.
        let is_llvm_plugin = plugin.is_none_or(|p| {
            let name = p.rsplit('/').next().unwrap_or(p);
            !name.contains("liblto_plugin")
        });
        if let Some(p) = plugin {
            if is_llvm_plugin {
                // LLVMgold.so named by the compiler driver: the fallback thin-link host.
                self.plugin = Some(PathBuf::from(p));
            }
        }
        let mut errors = Vec::new();
        if flavor == Flavor::Gnu {
            // lld's readConfigs checks on the ThinLTO index options.
            if self.emit_index_files && !self.index_only {
                if self.object_suffix_replace.is_some() {
                    errors.push("--thinlto-object-suffix-replace is not supported with --thinlto-emit-index-files".into());
                } else if self.prefix_replace.is_some() {
                    errors.push("--thinlto-prefix-replace is not supported with --thinlto-emit-index-files".into());
                }
            }
            if self.prefix_replace.as_ref().is_some_and(|p| !p.2.is_empty()) && self.index_only_file.is_none() {
                errors.push("--thinlto-prefix-replace=old_dir;new_dir;obj_dir must be used with --thinlto-index-only=".into());
            }
            // --lto-known-safe-vtables= names vtables (`_ZTV...`) when the validation is on.
            if self.validate_vtables {
                for v in &self.known_safe_vtables {
                    match v.strip_prefix("_ZTV") {
                        None => errors.push(format!("--lto-known-safe-vtables=: expected symbol to start with _ZTV, but got {v}")),
                        Some(rest) => {
                            if let Some(g) = crate::util::glob::glob_error(rest) {
                                errors.push(format!("--lto-known-safe-vtables=: {g}"));
                            }
                        }
                    }
                }
            }
        }
        if is_llvm_plugin {
            for v in plugin_opts {
                if let Err(e) = self.apply_plugin_opt(v) {
                    errors.extend(e.messages);
                }
            }
        }
        self.mllvm.extend(mllvm.iter().cloned());
        if self.whole_program_visibility {
            // LLVM's option of the same meaning as lld's `Config::HasWholeProgramVisibility`,
            // which every way of running the thin link passes on (`-mllvm` options go to the
            // library, `llvm-lto2` and LLVMgold.so alike).
            self.mllvm.push("-whole-program-visibility".into());
        }
        if self.llvm_dir.is_none() {
            if let Some(d) = std::env::var_os("DTLD_LLVM_DIR").filter(|d| !d.is_empty()) {
                self.llvm_dir = Some(PathBuf::from(d));
            }
        }
        if !errors.is_empty() {
            return Err(crate::error::Error::many(errors));
        }
        Ok(())
    }

    /// One LTO option in its GNU spelling, `--name[=value]` (either number of dashes): `set`
    /// with the name and value split off the argument.
    pub fn set_arg(&mut self, arg: &str) -> Result<()> {
        let body = arg.trim_start_matches('-');
        match body.split_once('=') {
            Some((name, value)) => self.set(name, Some(value), arg),
            None => self.set(body, None, arg),
        }
    }

    /// One LTO option as the command line gives it: `name` in ld.lld's spelling without dashes
    /// (`thinlto-jobs`, `lto-O3`), its value, and `spelled`, the argument as the user wrote it
    /// (`--thinlto-jobs=4`, `/lto-obj-path:x.obj`), which the messages about it quote. Each
    /// driver's option rows call this as they read the option (lld-link's map onto these
    /// names); a later one replaces an earlier one, as lld reads the last.
    pub fn set(&mut self, name: &str, value: Option<&str>, spelled: &str) -> Result<()> {
        let v = || value.unwrap_or("").to_string();
        match (name, value) {
            (n, None) if n.starts_with("lto-O") => self.opt_level = parse_level(spelled, &n[5..], 3)?,
            (n, None) if n.starts_with("lto-CGO") => {
                // lld: any number is read, and one LLVM has no code generation level for fails.
                let level = parse_level(spelled, &n[7..], u32::MAX)?;
                if level > 3 {
                    crate::bail!("invalid codegen optimization level for LTO: {level}");
                }
                self.cg_opt_level = Some(level);
            }
            ("thinlto-jobs", Some(j)) => self.jobs = parse_jobs("--thinlto-jobs", j)?,
            ("thinlto-cache-dir", Some(_)) => self.cache_dir = Some(PathBuf::from(v())),
            ("thinlto-cache-policy", Some(p)) => {
                if let Err(e) = check_cache_policy(p) {
                    crate::bail!("--thinlto-cache-policy: invalid cache policy: {e}");
                }
                self.cache_policy = Some(v());
            }
            ("thinlto-index-only", None) => self.index_only = true,
            ("thinlto-index-only", Some(f)) => {
                self.index_only = true;
                self.index_only_file = Some(PathBuf::from(f));
            }
            ("thinlto-emit-imports-files", None) => self.emit_imports_files = true,
            ("thinlto-emit-index-files", None) => self.emit_index_files = true,
            ("thinlto-prefix-replace", Some(p)) => {
                let p = split_semicolon(spelled.strip_suffix(p).unwrap_or(spelled), p, 3)?;
                self.prefix_replace = Some((p[0].clone(), p[1].clone(), p.get(2).cloned().unwrap_or_default()));
            }
            ("thinlto-object-suffix-replace", Some(p)) => {
                let p = split_semicolon(spelled.strip_suffix(p).unwrap_or(spelled), p, 2)?;
                self.object_suffix_replace = Some((p[0].clone(), p[1].clone()));
            }
            ("save-temps", None) => self.save_temps = true,
            ("save-temps", Some(v)) => {
                // lld's list of what --save-temps= can name.
                const VALUES: &[&str] = &["resolution", "preopt", "promote", "internalize", "import", "opt", "precodegen", "prelink", "combinedindex"];
                if !VALUES.contains(&v) {
                    crate::bail!("unknown --save-temps value: {v}");
                }
                self.save_temps = true;
            }
            // --lto=thin|full pick the LTO kind of unified modules, which dtld does not choose.
            ("lto", Some("default")) => {}
            ("lto", Some("thin" | "full")) => self.dropped.push((spelled.to_string(), true)),
            ("lto", Some(m)) => crate::bail!("unknown LTO mode: {m}"),
            ("lto-obj-path", Some(_)) => self.obj_path = Some(PathBuf::from(v())),
            ("lto-partitions", Some(p)) => {
                self.partitions = match p.parse::<u32>() {
                    Ok(n) if n > 0 => n,
                    _ => crate::bail!("--lto-partitions: number of threads must be > 0"),
                };
                // The regular-LTO module is compiled as one partition: the same code, in one
                // object instead of several.
                if let Some(earlier) = self.partitions_dropped.take() {
                    self.dropped.retain(|(d, _)| *d != earlier);
                }
                if self.partitions != 1 {
                    self.dropped.push((spelled.to_string(), false));
                    self.partitions_dropped = Some(spelled.to_string());
                }
            }
            ("lto-sample-profile", Some(_)) => self.sample_profile = Some(v()),
            ("lto-debug-pass-manager", None) => self.debug_pass_manager = true,
            ("lto-whole-program-visibility", None) => self.whole_program_visibility = true,
            ("lto-llvm-dir", Some(_)) => self.llvm_dir = Some(PathBuf::from(v())),
            ("thinlto-distributor", Some(d)) => self.distributor = if d.is_empty() { None } else { Some(d.to_string()) },
            ("thinlto-distributor-arg", Some(_)) => self.distributor_args.push(v()),
            ("thinlto-remote-compiler", Some(r)) => self.remote_compiler = if r.is_empty() { None } else { Some(r.to_string()) },
            ("thinlto-remote-compiler-prepend-arg", Some(_)) => self.remote_compiler_prepend_args.push(v()),
            ("thinlto-remote-compiler-arg", Some(_)) => self.remote_compiler_args.push(v()),
            ("lto-pgo-warn-mismatch", None) => self.no_pgo_warn_mismatch = false,
            ("no-lto-pgo-warn-mismatch", None) => self.no_pgo_warn_mismatch = true,
            ("lto-emit-asm", None) => {
                self.emit_asm = true;
                self.dropped.push((spelled.to_string(), true));
            }
            ("lto-emit-llvm", None) => {
                self.emit_llvm = true;
                self.dropped.push((spelled.to_string(), true));
            }
            ("lto-cs-profile-generate", None) => self.tune(Knob::CsProfileGenerate, "", spelled),
            ("lto-cs-profile-file", Some(f)) => self.tune(Knob::CsProfilePath, f, spelled),
            ("lto-aa-pipeline", Some(p)) => self.tune(Knob::AaPipeline, p, spelled),
            ("lto-newpm-passes", Some(p)) => self.tune(Knob::OptPipeline, p, spelled),
            ("opt-remarks-filename", Some(f)) => self.tune(Knob::RemarksFile, f, spelled),
            ("opt-remarks-passes", Some(p)) => self.tune(Knob::RemarksPasses, p, spelled),
            ("opt-remarks-format", Some(f)) => self.tune(Knob::RemarksFormat, f, spelled),
            ("opt-remarks-hotness-threshold", Some(t)) => {
                if t != "auto" && t.parse::<u64>().is_err() {
                    crate::bail!("--opt-remarks-hotness-threshold: invalid argument '{t}', only integer or 'auto' is supported");
                }
                self.tune(Knob::RemarksHotnessThreshold, t, spelled)
            }
            ("opt-remarks-with-hotness", None) => self.tune(Knob::RemarksWithHotness, "", spelled),
            ("lto-basic-block-sections", Some("labels")) => {
                self.warnings.push(format!("'{spelled}' is deprecated; Please use '--lto-basic-block-address-map' instead"));
                self.tune(Knob::BbAddrMap, "", spelled);
            }
            ("lto-basic-block-sections", Some(v)) => self.tune(Knob::BbSections, v, spelled),
            ("lto-basic-block-address-map", None) => self.tune(Knob::BbAddrMap, "", spelled),
            ("no-lto-basic-block-address-map", None) => self.untune(Knob::BbAddrMap),
            ("lto-unique-basic-block-section-names", None) => self.tune(Knob::UniqueBbSectionNames, "", spelled),
            ("no-lto-unique-basic-block-section-names", None) => self.untune(Knob::UniqueBbSectionNames),
            ("no-lto-whole-program-visibility", None) => self.whole_program_visibility = false,
            // Not implemented. Only compiling one module changes what the link produces; the
            // vtable validation makes devirtualization more careful (going without it could
            // miscompile); the safe-vtable list only tunes that validation.
            ("thinlto-single-module", Some(_)) => self.dropped.push((spelled.to_string(), true)),
            ("lto-validate-all-vtables-have-type-infos", None) => {
                self.validate_vtables = true;
                self.dropped.push((spelled.to_string(), true));
            }
            ("no-lto-validate-all-vtables-have-type-infos", None) => {
                self.validate_vtables = false;
                self.dropped.retain(|(d, _)| !d.ends_with("-lto-validate-all-vtables-have-type-infos"));
            }
            ("lto-known-safe-vtables", Some(v)) => {
                self.known_safe_vtables.push(v.to_string());
                self.dropped.push((spelled.to_string(), false));
            }
            _ => crate::bail!("unknown argument '{spelled}'"),
        }
        Ok(())
    }

    fn tune(&mut self, knob: Knob, value: &str, spelled: &str) {
        // The last one counts, as for any option lld reads into one setting.
        self.untune(knob);
        self.tuning.push(Tuning { knob, value: value.to_string(), spelled: spelled.to_string() });
    }

    fn untune(&mut self, knob: Knob) {
        self.tuning.retain(|t| t.knob != knob);
    }

    /// The profiles the backends read (the sample profile, the context-sensitive profile): a
    /// new profile under the same name changes the objects, so caches key on their contents.
    pub fn profiles(&self) -> Vec<&str> {
        let cs = self.tuning.iter().filter(|t| t.knob == Knob::CsProfilePath).map(|t| t.value.as_str());
        self.sample_profile.iter().map(String::as_str).chain(cs).collect()
    }

    /// The options dtld implements on no path, and lld's deprecation notes: a warning for
    /// each, an error for those whose loss would change what the link's output does. Said
    /// once, when the LTO step starts.
    pub fn report_unimplemented(&self, warn: &dyn Fn(&str)) -> Result<()> {
        for w in &self.warnings {
            warn(w);
        }
        report(self.dropped.iter().map(|(s, m)| (s.as_str(), *m, "")), warn)
    }

    /// The backend knobs that `way` drops (lld's spelling as given), as `report_unimplemented`
    /// says them; said when the link commits to `way`.
    pub fn report_knobs(&self, way: Way, warn: &dyn Fn(&str)) -> Result<()> {
        let via = match way {
            Way::Library => "",
            Way::Lto2 => " by llvm-lto2 (dtld's LTO library for this LLVM was not found)",
            // DTLTO: ld.lld's remote command line, which carries none of them (lld drops them
            // silently); or the local backend jobs of a thin link by LLVMgold.so.
            Way::Clang => " with backends compiled by clang",
        };
        report(self.tuning.iter().filter(|t| !t.knob.honoured_by(way)).map(|t| (t.spelled.as_str(), t.knob.changes_meaning(), via)), warn)
    }

    /// lld's `-plugin-opt=` aliases (`lld/ELF/Options.td`).
    fn apply_plugin_opt(&mut self, v: &str) -> Result<()> {
        if let Some(level) = v.strip_prefix('O') {
            self.opt_level = parse_level(&format!("--plugin-opt={v}"), level, 3)?;
            return Ok(());
        }
        if let Some(rest) = v.strip_prefix('-') {
            // Everything starting with '-' goes to LLVM, as with -mllvm, but for the options
            // GCC's collect2 passes even without LTO, which lld ignores (`is_gcc_collect2_opt`).
            if !is_gcc_collect2_opt(v) {
                self.mllvm.push(format!("-{rest}"));
            }
            return Ok(());
        }
        let (name, value) = match v.split_once('=') {
            Some((n, val)) => (n, Some(val)),
            None => (v, None),
        };
        let spelled = format!("--plugin-opt={v}");
        match (name, value) {
            ("mcpu", Some(c)) => self.mcpu = Some(c.to_string()),
            ("jobs", Some(j)) => self.jobs = parse_jobs("--thinlto-jobs", j)?,
            ("thinlto", None) => {}
            ("cache-dir", Some(d)) => self.cache_dir = Some(PathBuf::from(d)),
            ("cache-policy", Some(p)) => self.cache_policy = Some(p.to_string()),
            ("thinlto-index-only", _)
            | ("thinlto-emit-imports-files", None)
            | ("thinlto-prefix-replace", Some(_))
            | ("thinlto-object-suffix-replace", Some(_))
            | ("thinlto-emit-index-files", None) => self.set(name, value, &spelled)?,
            ("save-temps", None) => self.save_temps = true,
            ("obj-path", Some(p)) => self.obj_path = Some(PathBuf::from(p)),
            ("lto-partitions", Some(p)) => self.set("lto-partitions", Some(p), v)?,
            ("sample-profile", Some(p)) => self.sample_profile = Some(p.to_string()),
            ("emit-asm", None) => self.set("lto-emit-asm", None, &spelled)?,
            ("emit-llvm", None) => self.set("lto-emit-llvm", None, &spelled)?,
            ("debug-pass-manager", None) => self.debug_pass_manager = true,
            ("dwo_dir", Some(d)) => self.tune(Knob::DwoDir, d, &spelled),
            ("cs-profile-generate", None) => self.tune(Knob::CsProfileGenerate, "", &spelled),
            ("cs-profile-path", Some(f)) => self.tune(Knob::CsProfilePath, f, &spelled),
            ("opt-remarks-filename", Some(_)) | ("opt-remarks-passes", Some(_)) | ("opt-remarks-format", Some(_)) | ("opt-remarks-with-hotness", None) => {
                self.set(name, value, &spelled)?
            }
            ("opt-remarks-hotness-threshold", Some(t)) => self.set("opt-remarks-hotness-threshold", Some(t), &spelled)?,
            ("stats-file", Some(f)) => self.tune(Knob::StatsFile, f, &spelled),
            ("disable-verify", None) => self.tune(Knob::DisableVerify, "", &spelled),
            // lld's alias of `--time-trace=<file>`, which the driver reads (`gnu.rs`).
            ("time-trace", Some(_)) => {}
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    #[test]
    fn messages_quote_the_spelling_and_only_ld_lld_checks_options_together() {
        let mut o = LtoOptions::new();
        let e = o.set("thinlto-object-suffix-replace", Some("x"), "-thinlto-object-suffix-replace:x").unwrap_err();
        assert_eq!(e.messages, vec!["-thinlto-object-suffix-replace: expects 'old;new' format, but got x"]);
        // lld-link takes a third directory without /thinlto-index-only; ld.lld refuses it.
        let mut o = LtoOptions::new();
        o.set("thinlto-prefix-replace", Some("a;b;c"), "/thinlto-prefix-replace:a;b;c").unwrap();
        assert!(o.finish(None, &[], &[], Flavor::LldLink).is_ok());
        let mut o = LtoOptions::new();
        o.set("thinlto-prefix-replace", Some("a;b;c"), "--thinlto-prefix-replace=a;b;c").unwrap();
        let e = o.finish(None, &[], &[], Flavor::Gnu).unwrap_err();
        assert_eq!(e.messages, vec!["--thinlto-prefix-replace=old_dir;new_dir;obj_dir must be used with --thinlto-index-only="]);
        // A later partition count takes the earlier one's warning back, whatever its spelling.
        let mut o = LtoOptions::new();
        o.set("lto-partitions", Some("2"), "/opt:lldltopartitions=2").unwrap();
        o.set("lto-partitions", Some("1"), "/opt:lldltopartitions=1").unwrap();
        assert!(o.dropped.is_empty());
    }

    fn parse(lto: &[&str], plugin: &[&str]) -> Result<LtoOptions> {
        let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        LtoOptions::from_args(None, &s(lto), &s(plugin), &[])
    }

    /// What `report_knobs(way)` says: its warnings, and its error (if any).
    fn said(o: &LtoOptions, way: Way) -> (Vec<String>, Option<String>) {
        let warnings = RefCell::new(Vec::new());
        let r = o.report_knobs(way, &|m| warnings.borrow_mut().push(m.to_string()));
        (warnings.into_inner(), r.err().map(|e| e.to_string()))
    }

    #[test]
    fn knobs_are_dropped_only_where_the_way_cannot_pass_them() {
        let o = parse(&["--lto-cs-profile-generate"], &["dwo_dir=out-dwo"]).unwrap();
        assert_eq!(said(&o, Way::Library), (vec![], None));
        let (w, e) = said(&o, Way::Lto2);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].starts_with("--plugin-opt=dwo_dir=out-dwo is not supported by llvm-lto2") && w[0].ends_with("; ignored"), "{w:?}");
        assert_eq!(e, None);
        let (w, e) = said(&o, Way::Clang);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(e.is_some_and(|e| e.starts_with("--lto-cs-profile-generate is not supported with backends compiled by clang")));
    }

    #[test]
    fn last_setting_counts_and_no_forms_cancel() {
        let o =
            parse(&["--lto-aa-pipeline=basic-aa", "--lto-aa-pipeline=tbaa", "--lto-basic-block-address-map", "--no-lto-basic-block-address-map"], &[]).unwrap();
        let t: Vec<(Knob, &str)> = o.tuning.iter().map(|t| (t.knob, t.value.as_str())).collect();
        assert_eq!(t, vec![(Knob::AaPipeline, "tbaa")]);
        assert_eq!(Knob::AaPipeline.library_setting("tbaa").as_deref(), Some("aa-pipeline=tbaa"));
        assert_eq!(Knob::BbAddrMap.library_setting(""), None);
        assert_eq!(Knob::BbAddrMap.lto2_args(""), vec!["--basic-block-address-map"]);
    }

    #[test]
    fn unimplemented_options_warn_or_refuse() {
        let o = parse(&["--lto-partitions=2", "--lto-known-safe-vtables=_ZTV1A"], &[]).unwrap();
        let warnings = RefCell::new(Vec::new());
        assert!(o.report_unimplemented(&|m| warnings.borrow_mut().push(m.to_string())).is_ok());
        assert_eq!(warnings.into_inner(), vec!["--lto-partitions=2 is not supported; ignored", "--lto-known-safe-vtables=_ZTV1A is not supported; ignored"]);
        for (lto, plugin, refused) in [
            (&["--lto-emit-asm"][..], &[][..], "--lto-emit-asm"),
            (&[], &["emit-llvm"], "--plugin-opt=emit-llvm"),
            (&["--thinlto-single-module=a.o"], &[], "--thinlto-single-module=a.o"),
        ] {
            let e = parse(lto, plugin).unwrap().report_unimplemented(&|_| {}).unwrap_err().to_string();
            assert_eq!(e, format!("{refused} is not supported"));
        }
        // A later `--lto-partitions=1` takes the first back.
        let o = parse(&["--lto-partitions=2", "--lto-partitions=1"], &[]).unwrap();
        assert!(o.dropped.is_empty());
    }

    #[test]
    fn lld_spellings_only() {
        // lld 22 has no such options; nor has dtld.
        for a in ["--lto-unified", "--lto-stats-file=x", "--lto-pseudo-probe-for-profiling"] {
            assert!(parse(&[a], &[]).is_err(), "{a}");
        }
        assert!(parse(&[], &["whole-program-visibility"]).is_err());
        assert!(parse(&["--opt-remarks-hotness-threshold=abc"], &[]).is_err());
        let o = parse(&["--lto-whole-program-visibility"], &[]).unwrap();
        assert_eq!(o.mllvm, vec!["-whole-program-visibility"]);
        assert!(parse(&["--lto-whole-program-visibility", "--no-lto-whole-program-visibility"], &[]).unwrap().mllvm.is_empty());
    }
}
