//! Link-time optimization for GCC: objects built with `gcc -flto`, compiled by GCC's own LTO
//! plugin (`liblto_plugin.so`), which collect2 names with `-plugin` on every `gcc -flto` link.
//!
//! This stage runs where the LLVM one does, between the two resolution passes, and keeps the
//! same division of labour: dtld resolves every symbol itself, GCC only compiles.
//!
//! 1. Pass 1 of resolution reads each GCC LTO object's IR symbol table (`symtab.rs`) and binds
//!    its symbols like any object's (`Def::Bitcode`), archive members included: a member joins
//!    when something needs one of its definitions, exactly as a native member would.
//! 2. `run` turns the bindings into the plugin's resolutions (`resolution.rs`, GNU ld's rules),
//!    and has the plugin claim exactly the files that joined, in the order GNU ld would have
//!    loaded them (`order.rs`), and compile them (`host.rs`: a helper process runs the plugin,
//!    which runs `lto-wrapper`/`lto1`).
//! 3. The objects the plugin returns join the link in pass 2, after every other input, as
//!    LLVM's do; libraries it asks for (`-pass-through=-lgcc` ...) join too unless they are in
//!    the link already (with lld's archive model they always are: their lazy members still
//!    serve references from the new objects).
//!
//! A *fat* LTO object (`-ffat-lto-objects`) also holds native code: with GCC's plugin it is
//! compiled from its IR (what GNU ld does), without it the native code is linked. A *slim*
//! object without the plugin (`ld` run directly, or `-fuse-ld` with a driver that does not pass
//! the plugin) cannot be linked at all: `check` says so instead of letting every symbol it
//! defines come out undefined. GCC IR and LLVM bitcode in one link is an error (neither
//! compiler can optimize the other's IR; GNU ld cannot link it either).
//!
//! With `-r`, the plugin is told the output is relocatable (`LDPO_REL`) and offered the native
//! objects too, as GNU ld does: `lto-wrapper -flinker-output=rel` then merges the IR into one
//! new GCC LTO object (still IR, for the final link to optimize), or, when native objects are
//! mixed in, compiles it (`nolto-rel`, with GCC's warning); either way that object goes into the
//! relocatable output in place of the claimed files.

pub mod host;
pub mod order;
pub mod resolution;
pub mod symtab;

use std::path::{Path, PathBuf};

use crate::elf::config::{Config, InputArg};
use crate::elf::symtab::{File, FileId, Resolved};
use crate::error::{Error, Result};
use crate::input::InputFile;
use crate::lto::plugin_api::{LDPO_DYN, LDPO_EXEC, LDPO_PIE, LDPO_REL};
use crate::lto::plugin_host::RequestHead;

/// GCC's plugin, when the command line names it.
fn plugin(config: &Config) -> Option<&str> {
    config.gcc_plugin()
}

/// The GCC IR files that joined the link, in the order they did.
pub fn loaded_files(r: &Resolved) -> Vec<FileId> {
    r.load_order.iter().copied().filter(|&f| matches!(r.files[f], File::GccIr(_))).collect()
}

/// After pass 1: a GCC LTO object that joined the link needs GCC's plugin, and cannot share the
/// link with LLVM bitcode.
pub fn check(config: &Config, r: &Resolved) -> Result<()> {
    let gcc = loaded_files(r);
    if gcc.is_empty() {
        return Ok(());
    }
    if plugin(config).is_none() {
        let how = match config.plugin.as_deref() {
            Some(p) => format!("the plugin given, {p}, is not GCC's"),
            None => "no -plugin was given".to_string(),
        };
        let msgs = gcc
            .iter()
            .map(|&f| {
                format!(
                    "{}: this object holds only GCC LTO IR (it was compiled with gcc -flto) and needs GCC's LTO plugin to link, but {how}: \
                     link with `gcc -flto` (which passes -plugin liblto_plugin.so), or compile it with -ffat-lto-objects or without -flto",
                    r.inputs[f].name
                )
            })
            .collect();
        return Err(Error::many(msgs));
    }
    if let Some(b) = r.load_order.iter().find(|&&f| r.bitcode(f).is_some()) {
        return Err(Error::new(format!(
            "{}: GCC LTO object and LLVM bitcode ({}) in one link: GCC's LTO plugin cannot read LLVM bitcode and LLVM cannot read GCC's IR; \
             build every -flto input with the same compiler (GNU ld cannot link this either)",
            r.inputs[gcc[0]].name, r.inputs[*b].name
        )));
    }
    Ok(())
}

/// Where a file's bytes start in the file the plugin opens: 0 for a plain file (or a thin
/// archive member, which is a file of its own), after the member header (and a BSD `#1/`
/// name) for a member of a regular archive.
fn member_offset(input: &InputFile) -> Result<(String, u64)> {
    let Some((archive, _)) = &input.archive else { return Ok((input.path.to_string_lossy().into_owned(), 0)) };
    if input.thin_member {
        return Ok((input.path.to_string_lossy().into_owned(), 0));
    }
    use std::os::unix::fs::FileExt;
    let bad = |what: String| Error::new(format!("{}: {what}", input.name));
    let f = std::fs::File::open(&input.path).map_err(|e| bad(format!("cannot open {}: {}", input.path.display(), crate::error::io_error(&e))))?;
    let mut hdr = [0u8; 60];
    f.read_exact_at(&mut hdr, input.archive_offset).map_err(|e| bad(format!("cannot read the member header: {}", crate::error::io_error(&e))))?;
    let mut at = input.archive_offset + 60;
    if let Some(digits) = hdr[..16].strip_prefix(b"#1/") {
        let n: u64 = std::str::from_utf8(digits).ok().and_then(|s| s.trim().parse().ok()).ok_or_else(|| bad("bad BSD member name".into()))?;
        at += n;
    }
    // The bytes there must be the member dtld read.
    let mut probe = vec![0u8; input.data.len().min(64)];
    f.read_exact_at(&mut probe, at).map_err(|e| bad(format!("cannot read the member: {}", crate::error::io_error(&e))))?;
    if probe != input.data[..probe.len()] {
        return Err(bad(format!("member data not found at offset {at} of {archive}")));
    }
    // GNU ld names archive members to the plugin by the archive's name as given.
    Ok((archive.clone(), at))
}

/// The plugin's output kind.
fn linker_output(config: &Config) -> usize {
    if config.relocatable {
        LDPO_REL
    } else if config.shared {
        LDPO_DYN
    } else if config.pie {
        LDPO_PIE
    } else {
        LDPO_EXEC
    }
}

/// `-Bstatic` in effect at the end of the command line (where the plugin's libraries go).
fn static_at_end(config: &Config) -> bool {
    let mut stack = Vec::new();
    let mut bstatic = false;
    for a in &config.inputs {
        match a {
            InputArg::Static(b) => bstatic = *b,
            InputArg::PushState => stack.push(bstatic),
            InputArg::PopState => bstatic = stack.pop().unwrap_or(bstatic),
            _ => {}
        }
    }
    bstatic
}

/// The files of libraries the plugin asked for that are not in the link yet.
fn extra_libraries(config: &Config, r: &Resolved, names: &[String], dirs: &[String]) -> Result<Vec<InputFile>> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let mut c = config.clone();
    c.library_paths.extend(dirs.iter().map(PathBuf::from));
    c.inputs = vec![InputArg::Static(static_at_end(config))];
    c.inputs.extend(names.iter().map(|n| InputArg::Library(n.clone())));
    let found = crate::elf::input::load(&c)?;
    let have: std::collections::HashSet<&Path> = r.inputs.iter().map(|i| i.path.as_path()).collect();
    Ok(found.into_iter().filter(|f| !have.contains(f.path.as_path())).collect())
}

/// Runs GCC's plugin on the GCC IR files pass 1 loaded; returns the files that join the link
/// in pass 2 (the plugin's objects, then libraries it added that were not linked yet).
pub fn run(config: &Config, r: &Resolved, trace: &mut crate::trace::Trace) -> Result<Vec<InputFile>> {
    let t = std::time::Instant::now();
    let plugin = plugin(config).expect("check() verified the plugin");
    // The plugin sees the files in GNU ld's order (`order.rs`), so GCC compiles what it would
    // for GNU ld.
    let mut roots: Vec<&str> = config.undefined.iter().map(String::as_str).collect();
    roots.extend(config.entry.as_deref());
    let order = order::gnu_ld_order(r, &roots);
    let gcc: Vec<FileId> = order.iter().copied().filter(|&f| matches!(r.files[f], File::GccIr(_))).collect();
    let exports = resolution::Exports::read(config)?;
    let res = resolution::compute(config, &exports, r, &gcc);
    let mut req = host::Request {
        head: RequestHead {
            plugin: plugin.to_string(),
            output_name: config.output.to_string_lossy().into_owned(),
            linker_output: linker_output(config),
            options: config.plugin_opts.clone(),
        },
        files: Vec::new(),
    };
    let mut next = gcc.iter().zip(res).peekable();
    for &f in &order {
        let input = r.inputs[f];
        match &r.files[f] {
            File::GccIr(g) => {
                let (_, res) = next.next().expect("one resolution list per GCC IR file");
                let (path, offset) = member_offset(input)?;
                req.files.push(host::ReqFile {
                    path,
                    offset,
                    size: input.data.len() as u64,
                    display: input.name.clone(),
                    claim: true,
                    syms: g.syms.iter().zip(res).map(|(s, r)| (s.name.to_vec(), s.kind, r)).collect(),
                });
            }
            // With -r the plugin must see the native objects too: mixing them with IR makes
            // GCC compile the IR instead of merging it (`-flinker-output=nolto-rel`).
            File::Obj(_) if config.relocatable => {
                let (path, offset) = member_offset(input)?;
                req.files.push(host::ReqFile { path, offset, size: input.data.len() as u64, display: input.name.clone(), claim: false, syms: Vec::new() });
            }
            _ => {}
        }
    }
    let resp = host::run(&req)?;
    let objects = resp.objects.len();
    let mut files: Vec<InputFile> = resp.objects.into_iter().map(|(path, data)| crate::lto::files::lto_input(path, data)).collect();
    for (path, data) in files.iter().map(|f| (&f.name, f.data)) {
        crate::lto::backend::check_object(data).map_err(|e| Error::new(format!("{path}: {e}")))?;
    }
    // GNU ld does not add the plugin's libraries to a relocatable link (the final link will
    // have them), nor does dtld.
    if !config.relocatable {
        files.extend(extra_libraries(config, r, &resp.libraries, &resp.library_paths)?);
    }
    trace.stage("GCC LTO (plugin)", &format!("{} IR files, {objects} objects", gcc.len()), t);
    if config.verbose {
        config.diag.log(&format!("GCC LTO: {} IR files claimed by {plugin}, {objects} objects back", gcc.len()));
    }
    Ok(files)
}
