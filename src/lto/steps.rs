//! The steps the ways of running ThinLTO share (local backends, in process, DTLTO, index
//! only): the code generation settings, the modules as the thin link takes them, the staging
//! directory, the in-process library's load and run, the thin link by `llvm-lto2` or LLVMgold,
//! and the checked native objects. `mod.rs` and `distributed.rs` drive these; nothing here
//! drives a way itself.

use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::input::InputFile;

use super::bitcode::Module;
use super::files::{create_dir, lto_input, lto_input_bytes, write_file};
use super::naming::{hex, module_name, object_name, relative_to_cwd};
use super::options::LtoOptions;
use super::request::{LtoRequest, ObjectOf};
use super::thinlink::CodegenSettings;
use super::{backend, goldhost, inproc, irsymtab, linkcache, llvm, thinlink};

/// The in-process library for the link's LLVM, loaded, when it can do this link; otherwise why
/// not, for `--verbose` (`None`: there is no library).
pub(super) fn shim_for(
    req: &LtoRequest,
    llvm: &llvm::Llvm,
    names: &[String],
    mode: inproc::Mode,
    trace: &mut crate::trace::Trace,
) -> Option<std::result::Result<inproc::Shim, String>> {
    let path = inproc::find(&llvm.dir)?;
    if let Some(why) = inproc::unsupported(req, names, mode) {
        return Some(Err(why));
    }
    // libLLVM's load (10-12 ms: its relocations and static constructors), which lld pays
    // before `main`; usually started while the inputs were resolved (`preload`).
    let t = std::time::Instant::now();
    if let Some(loaded) = req.opts.llvm_loaded.as_ref().filter(|l| **l != path) {
        // The command line's check of the LLVM options loaded another installation's library
        // (`cloptions.rs`).
        return Some(Err(format!("{} is loaded already", loaded.display())));
    }
    if req.preload.is_some_and(|p| !p.ready_for(&path)) {
        // The early load guessed another LLVM installation (the bitcode's producer chose this
        // one): one process does not host two libLLVMs; the thin link runs out of process.
        return Some(Err(format!("{} is loaded already", req.preload.map_or_else(String::new, |p| p.path().display().to_string()))));
    }
    let shim = inproc::Shim::load(&path);
    trace.stage("Load LLVM", &path.display().to_string(), t);
    Some(shim)
}

/// `inproc::run` with its `--verbose` lines: the thin link in process, or why not (`None`:
/// nothing was written, the caller takes another path).
pub(super) fn run_in_process(
    req: &LtoRequest,
    shim: &inproc::Shim,
    llvm: &llvm::Llvm,
    cg: &CodegenSettings,
    names: &[String],
    mode: inproc::Mode,
    probe: Option<inproc::Probe>,
) -> Result<Option<inproc::Produced>> {
    match inproc::run(shim, req, cg, names, mode, probe, &llvm.version)? {
        Ok(p) => {
            if req.verbose {
                req.diag.log(&format!("thinlto: thin link in process (LLVM {})", shim.llvm_version()));
            }
            Ok(Some(p))
        }
        Err(why) => {
            if req.verbose {
                req.diag.log(&format!("thinlto: thin link not in process: {why}"));
            }
            Ok(None)
        }
    }
}

pub(super) fn thread_count(o: &LtoOptions) -> usize {
    o.jobs.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).max(1)
}

/// The link-cache entry for `objects` (the regular-LTO object first when `regular`), written
/// on a thread of its own while the link goes on (as `removal` goes on); it names the
/// backend cache's files that hold the objects (`cache_files`, by ThinLTO object) rather than
/// copying them (25 MiB and 24 ms for OpenSSL).
pub(super) fn store_link_cache(
    link_cache: Option<linkcache::LinkCache>,
    objects: &[InputFile],
    of: &[ObjectOf],
    regular: bool,
    cache_files: &[Option<String>],
    n: usize,
    removal: crate::staging::Removal,
) -> crate::staging::Removal {
    let Some(c) = link_cache else { return removal };
    let files = std::iter::repeat_n(None, regular as usize).chain(cache_files.iter().cloned().chain(std::iter::repeat(None)));
    let stored: Vec<linkcache::Stored<'static>> =
        objects.iter().zip(of).zip(files).map(|((o, &of), cache_file)| linkcache::Stored { of, data: o.data, cache_file }).collect();
    crate::staging::Removal::thread(std::thread::Builder::new().name("dtld-link-cache".into()).spawn(move || c.store_parts(&stored, n)).ok()).and(removal)
}

/// The code generation settings of the link: the request's optimization levels, CPU and
/// threads; position-independent for `-pie`/`-shared` and always for COFF (lld/COFF/LTO.cpp:
/// the PIC relocation model on x86-64).
pub(super) fn codegen_settings(req: &LtoRequest) -> CodegenSettings {
    let opts = req.opts;
    let coff = req.format == irsymtab::ObjectFormat::Coff;
    CodegenSettings {
        opt_level: opts.opt_level,
        cg_opt_level: opts.cg_opt_level,
        pic: req.pic || coff,
        relocatable: req.relocatable,
        mcpu: opts.mcpu.clone(),
        mattrs: opts.mattrs.clone(),
        threads: thread_count(opts),
    }
}

/// Module `i` of the request for the thin link under module ID `id`: its bytes, the file
/// it came from when it is a file of its own, and its symbols' resolutions.
pub(super) fn make_module(req: &LtoRequest, i: usize, id: String) -> Module {
    let m = &req.modules[i];
    let b = m.bitcode;
    let input = b.input;
    let source = if (input.archive.is_none() || input.thin_member) && !input.fat_lto { Some(input.path.clone()) } else { None };
    let name = module_name(input, Some(req.opts), req.format);
    Module { id, name, data: input.data, source, resolutions: (0..b.syms.len()).map(|k| (b.sym(k).name, m.flags[k])).collect(), place: true, store: None }
}

/// The staging directory and its name as the backends see it: `<output>.dtld-lto` next to
/// the output (relative to the current directory when inside it), or a private directory
/// under the temporary directory when the output is a device (`-o /dev/null`). Created 0700
/// or refused (a planted symlink, someone else's directory), locked against another link of
/// the same output, emptied, and reached through its descriptor.
///
/// In-process ThinLTO with a cache directory (`persistent`) stages in
/// `<cache dir>/.dtld/stage-<hash of the output's path>` instead, kept between links of that
/// output: a relink reuses the staged modules and llvm-lto2 rewrites its objects in place, as
/// lld creates no file for them (on a loaded ext4, allocating and freeing 3,000 inodes per
/// link of OpenSSL took seconds). Nothing in it reaches a job or an output: module IDs are
/// relative to it, and LLVM's cache keys do not name modules.
pub(super) fn open_staging(req: &LtoRequest, out: &str, persistent: Option<&PathBuf>) -> Result<(crate::staging::StagingDir, String)> {
    if let Some(cache) = persistent {
        use sha1::Digest as _;
        create_dir(cache)?;
        let key = sha1::Sha1::digest(crate::util::path::abs(req.output).as_os_str().as_encoded_bytes());
        create_dir(&backend::own_dir(cache))?;
        let dir = backend::own_dir(&crate::util::path::abs(cache)).join(format!("stage-{}", hex(&key[..8])));
        let staging = crate::staging::StagingDir::open_persistent(&dir)?;
        return Ok((staging, dir.to_string_lossy().into_owned()));
    }
    let special = crate::output::is_special_output(req.output);
    let stage_rel = if special {
        std::env::temp_dir().join(format!("dtld-lto-{}", std::process::id())).to_string_lossy().into_owned()
    } else {
        format!("{}.dtld-lto", relative_to_cwd(out))
    };
    let staging = crate::staging::StagingDir::open(Path::new(&stage_rel), req.opts.save_temps)?;
    Ok((staging, stage_rel))
}

/// The native objects for pass 2, in lld's order: the regular-LTO partition (also written
/// to `--lto-obj-path`; an invalid one is an error), then each backend's object, named as lld
/// names them (`lto_object_name` of its module ID, `ids`), each checked.
pub(super) fn native_objects(
    opts: &LtoOptions,
    out: &str,
    regular: Option<Vec<u8>>,
    objs: Vec<backend::Object>,
    ids: &[String],
    job_module: &[usize],
    format: irsymtab::ObjectFormat,
) -> Result<(Vec<InputFile>, Vec<ObjectOf>)> {
    let mut objects = Vec::new();
    let mut of = Vec::new();
    if let Some(data) = regular {
        if let Some(p) = &opts.obj_path {
            write_file(p, &data)?;
        }
        if backend::check_object(&data).is_err() {
            crate::bail!("regular LTO: the thin link produced an invalid object");
        }
        objects.push(lto_input(object_name(out, ObjectOf::Regular, ids, format), data));
        of.push(ObjectOf::Regular);
    }
    for (k, data) in objs.into_iter().enumerate() {
        let o = ObjectOf::Module(job_module[k]);
        let name = object_name(out, o, ids, format);
        if let Err(e) = backend::check_object(&data) {
            if format == irsymtab::ObjectFormat::Elf && !data.starts_with(b"\x7fELF") {
                crate::bail!("{name}: not an ELF file");
            }
            crate::bail!("{name}: {e}");
        }
        objects.push(lto_input_bytes(name, data));
        of.push(o);
    }
    Ok((objects, of))
}

pub(super) fn thinlink_placed(
    llvm: &llvm::Llvm,
    opts: &LtoOptions,
    cg: &CodegenSettings,
    cwd: &Path,
    work: &Path,
    modules: &[Module],
) -> Result<thinlink::ThinLinkOutput> {
    // Absolute modules are already in place; the others are staged under `cwd`.
    let work = crate::util::path::abs(work);
    thin_link(llvm, opts, cg, cwd, &work, modules, opts.emit_imports_files)
}

/// The thin link by `llvm-lto2`, or by the installation's `LLVMgold.so` when it has no
/// `llvm-lto2` (`goldhost.rs`).
pub(super) fn thin_link(
    llvm: &llvm::Llvm,
    opts: &LtoOptions,
    cg: &CodegenSettings,
    cwd: &Path,
    work: &Path,
    modules: &[Module],
    imports: bool,
) -> Result<thinlink::ThinLinkOutput> {
    match &llvm.gold {
        Some(gold) if !llvm.lto2.is_file() => goldhost::run(gold, opts, cg, cwd, work, modules),
        _ => thinlink::run(llvm, opts, cg, cwd, work, modules, &thinlink::Mode::DistributedIndexes { imports }),
    }
}
