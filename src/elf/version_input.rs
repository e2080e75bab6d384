//! The version scripts and dynamic lists of a link, read and parsed: `-L` lookup and lld's
//! errors (`cannot find version script`), `--retain-symbols-file` as the anonymous version
//! lld makes of it, and the `VERSION` commands of linker scripts, merged into one script.
//!
//! Why it is a module of its own: the command line's early checks (`driver::gnu`), LTO (which
//! keeps what the script exports), the checks before LTO (`version_checks`) and the version
//! stage of resolution (`resolve/versions.rs`) all read the same files; kept here, below them,
//! none of them imports another for it.

use crate::elf::config::Config;
use crate::error::{Error, Result};

/// Reads a version script or dynamic list; a relative name not found as given is looked up in
/// the `-L` directories, as lld does (a version script found nowhere is lld's `cannot find
/// version script`).
pub(crate) fn read_script_file(config: &Config, path: &std::path::Path) -> Result<String> {
    let found = if path.exists() || path.is_absolute() {
        path.to_path_buf()
    } else {
        match config.library_paths.iter().map(|d| d.join(path)).find(|p| p.exists()) {
            Some(p) => p,
            None if config.version_scripts.iter().any(|v| v == path) => {
                return Err(Error::new(format!("cannot find version script {}", path.display())));
            }
            None => path.to_path_buf(),
        }
    };
    std::fs::read(&found)
        .map(|d| String::from_utf8_lossy(&d).into_owned())
        .map_err(|e| Error::new(format!("cannot open {}: {}", path.display(), crate::error::io_error(&e))))
}

/// The errors of reading and parsing the dynamic lists and version scripts alone: lld reads
/// them while it reads the command line, so a link without inputs reports them before `no input
/// files`.
pub fn script_file_errors(config: &Config) -> Vec<String> {
    use crate::elf::version_script as vs;
    let mut errors = Vec::new();
    for p in config.dynamic_lists.iter().chain(&config.export_dynamic_symbol_lists) {
        match read_script_file(config, p) {
            Ok(text) => errors.extend(vs::parse_dynamic_list(&text, &p.to_string_lossy()).err()),
            Err(e) => errors.extend(e.messages),
        }
    }
    for p in &config.version_scripts {
        match read_script_file(config, p) {
            Ok(text) => errors.extend(vs::parse(&text, &p.to_string_lossy()).err()),
            Err(e) => errors.extend(e.messages),
        }
    }
    errors
}

/// `--version-script` and `--dynamic-list`: every definition's version (0 local, 1 global,
/// 2.. named), hidden non-default versions, and the dynamically listed symbols, by lld's rules.
/// The version scripts of the command line (`--version-script`, and `VERSION` commands of
/// linker scripts), merged into one; `None` without any.
pub fn version_script(config: &Config) -> Result<Option<crate::elf::version_script::VersionScript>> {
    use crate::elf::version_script as vs;
    let mut errors = Vec::new();
    let mut scripts = Vec::new();
    for p in &config.version_scripts {
        let text = read_script_file(config, p)?;
        match vs::parse(&text, &p.to_string_lossy()) {
            Ok(s) => scripts.push(s),
            Err(e) => errors.push(e),
        }
    }
    // --retain-symbols-file: lld makes it the anonymous version `{ global: <lines>; local: *; }`
    // (lines trimmed, empty ones and `#` comments skipped; names are exact, not globs).
    if let Some(p) = &config.retain_symbols_file {
        let text = read_script_file(config, p)?;
        let mut script = String::from("{ global: ");
        // A name cannot hold a quote in the script's syntax; no symbol name has one.
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#') && !l.contains('"')) {
            script.push_str(&format!("\"{line}\"; "));
        }
        script.push_str("local: *; };");
        match vs::parse(&script, &p.to_string_lossy()) {
            Ok(s) => scripts.push(s),
            Err(e) => errors.push(e),
        }
    }
    for (name, text) in &config.inline_version_scripts {
        match vs::parse(text, name) {
            Ok(s) => scripts.push(s),
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        return Err(Error::many(errors));
    }
    Ok(if scripts.is_empty() { None } else { Some(vs::VersionScript::merge(scripts)) })
}
