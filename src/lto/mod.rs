//! Link-time optimization: bitcode inputs, the thin link with the user's LLVM, and backends.
//!
//! dtld resolves bitcode symbols itself (from the irsymtab, `irsymtab.rs`, in `resolve.rs`);
//! the user's LLVM only performs the summary analysis (`thinlink.rs`, `llvm-lto2 run`) and code
//! generation (`backend.rs`, `clang -fthinlto-index=`). This stage runs between resolution and
//! layout: it takes pass 1's bindings, computes lld's resolutions (`elf/lto.rs` for ELF), and returns
//! native objects that join the link in pass 2 — or, with `--thinlto-index-only`, writes the
//! index and imports files a distributed build needs and stops the link.
//!
//! This file drives the ways of running it (`run_request`: link cache, in-process library,
//! in-process `llvm-lto2`, local backends, index only; `distributed.rs`: DTLTO). What they read
//! sits below them: the request (`request.rs`), the bitcode model (`bitcode.rs`), lld's names
//! (`naming.rs`), the file writes (`files.rs`) and the steps they share (`steps.rs`).

pub mod backend;
pub mod bitcode;
pub mod cloptions;
pub mod diagnostics;
pub mod distributed;
pub mod dtlto;
pub mod emptyobj;
pub mod files;
pub mod goldhost;
pub mod goldindex;
pub mod inproc;
pub mod irsymtab;
pub mod linkcache;
pub mod llvm;
pub mod llvm_symtab;
pub mod naming;
pub mod options;
pub mod plugin_api;
pub mod plugin_host;
pub mod request;
pub mod skipindex;
pub mod steps;
pub mod temps;
pub mod thinlink;

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::input::InputFile;
use bitcode::Module;
use files::{copy_file, copy_file_if_changed, create_dir, lto_input_bytes, write_file, write_file_if_changed};
use llvm::thin_link_forced;
use naming::{hex, module_ids, module_name, object_name, prefix_replaced, unranked};
use options::LtoOptions;
use request::{LtoOutput, LtoRequest, ObjectOf};
use steps::{codegen_settings, make_module, native_objects, open_staging, run_in_process, shim_for, store_link_cache, thin_link, thinlink_placed};
use thinlink::CodegenSettings;

/// For a link with bitcode: starts loading, on a thread of its own, the library its thin link
/// will most likely use (that of the first LLVM installation `llvm.rs` would look at), while
/// the inputs are resolved: dtld's in-process library (`inproc.rs`; libLLVM's load, its
/// relocations and static constructors, is 10-12 ms, which lld pays before `main`), or, for
/// an index-only link without it, the LLVMgold.so that a fork will host (`goldindex.rs`).
/// (Stop 28 measured the in-process library's early load slowing the resolution by more than
/// the load took. Since glibc's thread arenas no longer grow by 1,182 `mprotect` calls
/// (`heap.rs`), each of which stalls the loader's page faults and the parser's alike, it pays:
/// Lua's relink after a change 40 -> 34 ms, OpenSSL's 553 -> 536 ms.)
pub fn preload(o: &LtoOptions) -> Option<goldhost::Preload> {
    if thin_link_forced("llvm-lto2") || thin_link_forced("helper") {
        return None;
    }
    let dir = llvm::first_dir(o)?;
    if let Some(shim) = inproc::find(&dir) {
        if o.llvm_loaded.as_ref().is_some_and(|l| *l != shim) {
            return None;
        }
        return goldhost::Preload::start(shim);
    }
    if !o.index_only {
        return None;
    }
    let gold = llvm::first_gold(o)?;
    goldhost::Preload::start(gold)
}

/// lld's libcall handling before LTO: the runtime library functions code generation may call
/// for `triple`, from the in-process library of the LLVM the link will use (`None` without
/// one, or when another LLVM was loaded early: one process hosts one libLLVM).
pub fn runtime_libcalls(o: &LtoOptions, producers: &[(String, String)], triple: &str, preload: Option<&goldhost::Preload>) -> Option<Vec<String>> {
    if thin_link_forced("llvm-lto2") || thin_link_forced("helper") {
        return None;
    }
    let llvm = llvm::discover(o, producers).ok()?;
    let path = inproc::find(&llvm.dir)?;
    if preload.is_some_and(|p| !p.ready_for(&path)) || o.llvm_loaded.as_ref().is_some_and(|l| *l != path) {
        return None;
    }
    Some(inproc::Shim::load(&path).ok()?.runtime_libcalls(triple))
}

/// Runs LTO for a link of any format: thin link, backends (in process or through the
/// distributor) or the index-only files; returns the native objects for pass 2.
pub fn run_request(req: &LtoRequest, trace: &mut crate::trace::Trace) -> Result<LtoOutput> {
    let opts = req.opts;
    let producers: Vec<(String, String)> =
        req.modules.iter().map(|m| (m.bitcode.input.name.clone(), String::from_utf8_lossy(m.bitcode.ir.producer).into_owned())).collect();
    let llvm = llvm::discover(opts, &producers)?;
    let cg = codegen_settings(req);
    let names: Vec<String> = req.modules.iter().map(|m| module_name(m.bitcode.input, Some(opts), req.format)).collect();
    let warn = |m: &str| req.diag.warn(m);
    opts.report_unimplemented(&warn)?;
    if opts.index_only {
        index_only(req, &llvm, &cg, &names, |i, id| make_module(req, i, id), trace)?;
        return Ok(LtoOutput { objects: Vec::new(), stop: true, cleanup: None });
    }

    // In-process ThinLTO or DTLTO: stage under `<output>.dtld-lto/`, thin link, backends
    // (here or through the distributor), objects; or, with unchanged inputs and a cache
    // directory, the previous link's objects (`linkcache.rs`).
    let dtlto = opts.distributor.is_some();
    let in_process_lto2 = !dtlto && llvm.lto2.is_file();
    let out = req.output.to_string_lossy().into_owned();
    let t_digest = std::time::Instant::now();
    let inputs: Vec<&InputFile> = req.modules.iter().map(|m| m.bitcode.input).collect();
    let fingerprints = linkcache::fingerprints(&inputs);
    let common = backend_command(req, &llvm, &cg);
    let mode = match &opts.distributor {
        Some(d) => format!("dtlto {d} {:?}", opts.distributor_args),
        None if in_process_lto2 => "in-process llvm-lto2".to_string(),
        None => "local backends".to_string(),
    };
    // Read and hashed once, for the link cache's key and the backend cache's.
    let profiles = if opts.cache_dir.is_some() { profile_digests(opts) } else { Vec::new() };
    let parts = linkcache::KeyParts {
        profiles: &profiles,
        mode,
        backend_command: &common,
        tools: &llvm.identity,
        format: if req.format == irsymtab::ObjectFormat::Coff { "coff" } else { "elf" },
        pic: req.pic,
        opts,
        cg: &cg,
    };
    let link_cache = linkcache::LinkCache::new(req, &names, &fingerprints, &parts);
    // A hit's objects are named as this link names them: after the modules' IDs (DTLTO's carry
    // this process's id).
    let object_ids = if dtlto { distributed::object_ids(req, &names) } else { names.clone() };
    let name = |of: ObjectOf| object_name(&out, of, &object_ids, req.format);
    if let Some(hit) = link_cache.as_ref().and_then(|c| c.lookup(&name)) {
        // What the link that stored the entry said of the options.
        let way = if !dtlto && inproc::find(&llvm.dir).is_some() && inproc::unsupported(req, &names, inproc::Mode::Backends).is_none() {
            options::Way::Library
        } else if in_process_lto2 {
            options::Way::Lto2
        } else {
            options::Way::Clang
        };
        opts.report_knobs(way, &warn)?;
        trace.stage("Link cache", &format!("hit: {} modules, thin link skipped", hit.modules), t_digest);
        if let Some(d) = &opts.cache_dir {
            backend::Cache::new(d.clone(), String::new()).prune(opts.cache_policy.as_deref(), None)?;
        }
        if req.verbose {
            req.diag.log(&format!("thinlto: {} modules, 0 compiled, {} cached", hit.modules, hit.modules));
            req.diag.log("thinlto: inputs and options unchanged since a previous link: its result is reused, the thin link skipped");
        }
        return Ok(LtoOutput { objects: hit.objects, stop: false, cleanup: None });
    }
    if !dtlto {
        // In this process through the library built for this LLVM (`inproc.rs`), as lld: nothing
        // staged, the objects (cached or compiled) handed over in memory.
        match shim_for(req, &llvm, &names, inproc::Mode::Backends, trace) {
            Some(Ok(shim)) => {
                if let Some(InProcessObjects { objects, of, tasks: n, cache_files, state }) = in_process_shim(req, &shim, &llvm, &cg, &names, trace)? {
                    // The link-cache entry (references to LLVM's cache files) is written, and
                    // LLVM's state freed, while the link goes on (lld frees its LTO state before
                    // its final link; at OpenSSL's relink it kept dtld's peak memory above lld's).
                    let store = link_cache.map(|c| {
                        let stored: Vec<linkcache::Stored<'static>> = objects
                            .iter()
                            .zip(&of)
                            .map(|(o, &of)| linkcache::Stored { of, data: o.data, cache_file: cache_files.get(&(o.data.as_ptr() as usize)).cloned() })
                            .collect();
                        crate::staging::Removal::thread(
                            std::thread::Builder::new().name("dtld-link-cache".into()).spawn(move || c.store_parts(&stored, n)).ok(),
                        )
                    });
                    let cleanup = match (store, state) {
                        (Some(s), Some(f)) => Some(s.and(f.in_background())),
                        (s, f) => s.or(f.map(inproc::Release::in_background)),
                    };
                    return Ok(LtoOutput { objects, stop: false, cleanup });
                }
            }
            Some(Err(why)) if req.verbose => req.diag.log(&format!("thinlto: thin link not in process: {why}")),
            _ => {}
        }
    }
    // Committed to `llvm-lto2` or to clang backends: what they cannot pass on is said (or
    // refused) before anything is staged.
    opts.report_knobs(if in_process_lto2 { options::Way::Lto2 } else { options::Way::Clang }, &warn)?;
    let prepared = distributed::Prepared {
        llvm: &llvm,
        cg: &cg,
        names: &names,
        common: &common,
        digests: &fingerprints,
        profiles_salt: profiles_salt(&profiles),
        link_cache,
    };
    if dtlto {
        return distributed::run(req, prepared, trace);
    }
    run_local(req, prepared, in_process_lto2, trace)
}

/// Local backends: the thin link by llvm-lto2 (or in-process llvm-lto2, `in_process_lto2`) on
/// modules staged under `<output>.dtld-lto/` (content-named: the same bitcode gets the same path
/// in every link), clang for each backend.
fn run_local(req: &LtoRequest, p: distributed::Prepared, in_process_lto2: bool, trace: &mut crate::trace::Trace) -> Result<LtoOutput> {
    let (opts, llvm, cg, names, common, link_cache) = (req.opts, p.llvm, p.cg, p.names, p.common, p.link_cache);
    let out = req.output.to_string_lossy().into_owned();
    let digests = p.digests;
    let persistent = in_process_lto2.then_some(opts.cache_dir.as_ref()).flatten().filter(|_| !opts.save_temps && !crate::output::is_special_output(req.output));
    let (staging, _) = open_staging(req, &out, persistent)?;
    let base = staging.path().to_path_buf();
    let ids = module_ids(req, names, digests, "");
    if persistent.is_some() {
        // What a previous link of this output staged and that this one does not use goes;
        // the rest is reused (`thinlink::place`) or rewritten in place (`lto.<task>`).
        // A module staged by an earlier link under another rank (the set of modules changed)
        // is renamed to its new ID rather than staged again.
        let by_content: std::collections::HashMap<&[u8], &str> = ids.iter().filter_map(|i| Some((unranked(i.as_bytes())?, i.as_str()))).collect();
        staging.rename_entries(&|n: &std::ffi::CStr| {
            let id = by_content.get(unranked(n.to_bytes())?)?;
            std::ffi::CString::new(*id).ok()
        });
        let keep: std::collections::HashSet<&[u8]> = ids.iter().map(|i| i.as_bytes()).collect();
        staging.retain(&|n: &std::ffi::CStr| {
            let n = n.to_bytes();
            keep.contains(n) || n == b"thinlink.rsp" || thinlink::task_output(n).is_some()
        });
    }
    // Archive members are staged from a content-addressed store in the cache directory
    // (`.dtld/member-<XXH3-128>`, hard links: written once, not on every link).
    let store = |i: usize| opts.cache_dir.as_ref().map(|d| backend::own_dir(&crate::util::path::abs(d)).join(format!("member-{}", hex(&digests[i]))));
    let modules: Vec<Module> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| {
            let m = make_module(req, i, id.clone());
            let store = if m.source.is_none() { store(i) } else { None };
            Module { store, ..m }
        })
        .collect();
    if let Some(d) = opts.cache_dir.as_ref().filter(|_| modules.iter().any(|m| m.store.is_some())) {
        create_dir(&backend::own_dir(d))?;
    }
    if in_process_lto2 {
        // In-process ThinLTO, as lld: llvm-lto2 runs the thin link and the backends in its
        // thread pool, with LLVM's own ThinLTO cache.
        let ((objects, of), n) = in_process(req, llvm, cg, names, &ids, &modules, &base, trace)?;
        let cleanup = Some(staging.remove_in_background());
        if let Some(c) = &link_cache {
            c.store(&objects, &of, n);
        }
        return Ok(LtoOutput { objects, stop: false, cleanup });
    }
    let cache = opts
        .cache_dir
        .as_ref()
        .map(|d| backend::Cache::new(d.clone(), format!("{} {} {}{}", llvm.clang.display(), llvm.version, llvm.identity, p.profiles_salt)));
    let t_thin = std::time::Instant::now();
    let tl = thin_link(llvm, opts, cg, &base, &base, &modules, true)?;
    req.diag.forward(&tl.messages);
    staging.check()?;
    trace.stage("Thin link", &format!("{} modules, LLVM {}", modules.len(), llvm.version), t_thin);
    let (jobs, job_module) = backend_jobs(&tl, names, &ids);
    let t_backend = std::time::Instant::now();
    let (objs, stats) = backend::run_local(common, &jobs, &base, cg.threads, cache.as_ref())?;
    trace.stage("ThinLTO backends", &format!("{} jobs, {} compiled, {} cached", jobs.len(), stats.compiled, stats.cached), t_backend);
    if let Some(c) = &cache {
        c.prune(opts.cache_policy.as_deref(), Some((jobs.len() + 1, objs.iter().map(|o| o.len() as u64).sum())))?;
    }
    if req.verbose {
        req.diag.log(&format!("thinlto: {} modules, {} compiled, {} cached", jobs.len(), stats.compiled, stats.cached));
    }
    emit_index_files(opts, &tl, names, &ids, &base)?;
    let regular = tl.regular_object.is_some();
    let (objects, of) = native_objects(opts, &out, tl.regular_object, objs, names, &job_module, req.format)?;
    let removal = staging.remove_in_background();
    let cleanup = store_link_cache(link_cache, &objects, &of, regular, &stats.cache_files, jobs.len(), removal);
    Ok(LtoOutput { objects, stop: false, cleanup: Some(cleanup) })
}

/// The SHA-1 of each profile the backends read (`LtoOptions::profiles`), `None` for one that
/// cannot be read: a new profile under the same name changes the objects, so the caches key on
/// the contents.
fn profile_digests(opts: &LtoOptions) -> Vec<Option<[u8; 20]>> {
    use sha1::Digest;
    opts.profiles().iter().map(|p| std::fs::read(p).ok().map(|d| sha1::Sha1::digest(&d).into())).collect()
}

/// The profiles' digests for the backend cache's keys: the key of a job otherwise covers the
/// command line, which names a profile but not what is in it (LLVM's own key, used when the
/// thin link runs in this process, reads the sample profile itself). A profile that cannot be
/// read adds a marker, and the backend reports it.
fn profiles_salt(profiles: &[Option<[u8; 20]>]) -> String {
    profiles
        .iter()
        .map(|d| match d {
            Some(d) => format!(" profile {}", d.iter().map(|b| format!("{b:02x}")).collect::<String>()),
            None => " profile unreadable".to_string(),
        })
        .collect()
}

/// One backend job per module the thin link wrote a shard for (its output
/// `<id>.native.o`), and for each job the index of its module.
fn backend_jobs(tl: &thinlink::ThinLinkOutput, names: &[String], ids: &[String]) -> (Vec<backend::Job>, Vec<usize>) {
    let mut jobs = Vec::new();
    let mut job_module = Vec::new();
    for (i, shard) in tl.shards.iter().enumerate() {
        if let Some(shard) = shard {
            jobs.push(backend::Job {
                display: names[i].clone(),
                module: ids[i].clone(),
                shard: shard.to_string_lossy().into_owned(),
                output: format!("{}.native.o", ids[i]),
                imports: tl.imports[i].clone(),
            });
            job_module.push(i);
        }
    }
    (jobs, job_module)
}

/// The compiler command line every backend job shares. With a distributor it is lld 22's
/// remote command line exactly (`-fpic` never for COFF); without `--thinlto-remote-compiler`
/// (lld would send "") the clang of the LLVM that ran the thin link. Locally, as lld's
/// in-process backends, non-PIC output gets the static relocation model.
fn backend_command(req: &LtoRequest, llvm: &llvm::Llvm, cg: &CodegenSettings) -> Vec<String> {
    let opts = req.opts;
    let coff = req.format == irsymtab::ObjectFormat::Coff;
    let triple = req.modules.first().map(|m| String::from_utf8_lossy(m.bitcode.ir.target_triple).into_owned()).unwrap_or_default();
    let local_clang = llvm.clang.to_string_lossy().into_owned();
    if opts.distributor.is_some() {
        // lld 22's remote command line exactly; without --thinlto-remote-compiler (lld would
        // send ""), the clang of the LLVM that ran the thin link.
        backend::common_args(
            opts.remote_compiler.as_deref().unwrap_or(&local_clang),
            &opts.remote_compiler_prepend_args,
            &triple,
            opts.opt_level,
            cg.pic && !coff,
            opts.sample_profile.as_deref(),
            opts.no_pgo_warn_mismatch,
            &opts.remote_compiler_args,
        )
    } else {
        backend::common_args(
            &local_clang,
            &[],
            &triple,
            opts.opt_level,
            cg.pic && !coff,
            opts.sample_profile.as_deref(),
            opts.no_pgo_warn_mismatch,
            // lld's in-process backends use the static relocation model for non-PIC output;
            // clang would otherwise default to PIE code. `-r` keeps the module's.
            &if cg.pic || cg.relocatable { Vec::new() } else { vec!["-fno-pic".to_string()] },
        )
    }
}

/// `--thinlto-emit-index-files` / `--thinlto-emit-imports-files` while linking: lld's files
/// next to the inputs (after `--thinlto-prefix-replace`), import lists in lld's module names.
/// `base` is the directory the thin link's paths are relative to.
fn emit_index_files(opts: &LtoOptions, tl: &thinlink::ThinLinkOutput, names: &[String], ids: &[String], base: &Path) -> Result<()> {
    if !opts.emit_index_files && !opts.emit_imports_files {
        return Ok(());
    }
    let id_to_name: std::collections::HashMap<&str, &str> = ids.iter().map(String::as_str).zip(names.iter().map(String::as_str)).collect();
    let (old, new) = opts.prefix_replace.as_ref().map(|(o, n, _)| (o.as_str(), n.as_str())).unwrap_or(("", ""));
    for (i, shard) in tl.shards.iter().enumerate() {
        let dest = prefix_replaced(&names[i], old, new);
        if opts.emit_index_files {
            match shard {
                Some(s) => copy_file(&base.join(s), Path::new(&format!("{dest}.thinlto.bc")))?,
                None => write_file(Path::new(&format!("{dest}.thinlto.bc")), b"")?,
            }
        }
        if opts.emit_imports_files {
            let text: String = tl.imports[i].iter().map(|m| format!("{}\n", id_to_name.get(m.as_str()).copied().unwrap_or(m))).collect();
            write_file(Path::new(&format!("{dest}.imports")), text.as_bytes())?;
        }
    }
    Ok(())
}

/// Entries of LLVM's ThinLTO cache in `dir`.
fn llvm_cache_entries(dir: Option<&PathBuf>) -> usize {
    let Some(dir) = dir else { return 0 };
    std::fs::read_dir(dir).map(|rd| rd.flatten().filter(|e| e.file_name().to_string_lossy().starts_with("llvmcache-")).count()).unwrap_or(0)
}

/// In-process ThinLTO through `llvm-lto2 run` (thin link, backends, cache in one process).
#[allow(clippy::too_many_arguments)]
fn in_process(
    req: &LtoRequest,
    llvm: &llvm::Llvm,
    cg: &CodegenSettings,
    names: &[String],
    ids: &[String],
    modules: &[Module],
    stage: &Path,
    trace: &mut crate::trace::Trace,
) -> Result<((Vec<InputFile>, Vec<ObjectOf>), usize)> {
    let opts = req.opts;
    let out = req.output.to_string_lossy().into_owned();
    let thin_modules: Vec<usize> = (0..req.modules.len()).filter(|&i| req.modules[i].bitcode.ir.modules.iter().any(|m| m.thin)).collect();
    let before = llvm_cache_entries(opts.cache_dir.as_ref());
    if let Some(d) = &opts.cache_dir {
        create_dir(d)?;
    }
    let t = std::time::Instant::now();
    let mode = thinlink::Mode::InProcess {
        cache_dir: opts.cache_dir.clone(),
        emit_indexes: opts.emit_index_files || opts.emit_imports_files,
        save_temps: opts.save_temps,
    };
    let tl = thinlink::run(llvm, opts, cg, stage, stage, modules, &mode)?;
    req.diag.forward(&tl.messages);
    tl.record(trace, "Thin link and backends (llvm-lto2)");
    let bytes = tl.thin_objects.iter().map(|o| o.len() as u64).sum();
    backend_stats(req, llvm, before, (tl.thin_objects.len(), bytes), modules.len(), t, trace)?;
    emit_index_files(opts, &tl, names, ids, stage)?;
    let tasks = tl.thin_objects.len();
    let objects = lto_objects(req, names, tl.regular_object.map(Cow::Owned), tl.thin_objects.into_iter().map(Cow::Owned).collect())?;
    if opts.save_temps {
        save_temps(req, stage, &out, names, &thin_modules, &objects.0)?;
    }
    Ok((objects, tasks))
}

/// In-process ThinLTO through the library (`inproc.rs`): the thin link and the backends in
/// LLVM's thread pool, with LLVM's ThinLTO cache, the objects returned in memory. `None`: the
/// library cannot do this link (`--verbose` says why); nothing was done. Also the LLVM cache
/// file of each object that has one, by the address of its bytes.
fn in_process_shim(
    req: &LtoRequest,
    shim: &inproc::Shim,
    llvm: &llvm::Llvm,
    cg: &CodegenSettings,
    names: &[String],
    trace: &mut crate::trace::Trace,
) -> Result<Option<InProcessObjects>> {
    let opts = req.opts;
    let before = llvm_cache_entries(opts.cache_dir.as_ref());
    if let Some(d) = &opts.cache_dir {
        create_dir(d)?;
    }
    let t = std::time::Instant::now();
    let Some(mut produced) = run_in_process(req, shim, llvm, cg, names, inproc::Mode::Backends, None)? else {
        return Ok(None);
    };
    let mut regular = None;
    let mut thin = Vec::with_capacity(produced.objects.len());
    // Objects in LLVM's cache, by the address of their bytes: the link cache refers to those
    // files instead of storing the bytes again.
    let mut cache_files = std::collections::HashMap::new();
    for (task, data, file) in std::mem::take(&mut produced.objects) {
        if let Some(name) = file.as_deref().and_then(Path::file_name) {
            cache_files.insert(data.as_ptr() as usize, name.to_string_lossy().into_owned());
        }
        if task == 0 {
            regular = Some(Cow::Borrowed(data));
        } else {
            thin.push(Cow::Borrowed(data));
        }
    }
    let tasks = thin.len();
    let bytes = thin.iter().map(|o| o.len() as u64).sum();
    backend_stats(req, llvm, before, (tasks, bytes), req.modules.len(), t, trace)?;
    trace.laps(&produced.laps);
    let (objects, of) = lto_objects(req, names, regular, thin)?;
    Ok(Some(InProcessObjects { objects, of, tasks, cache_files, state: produced.state.take() }))
}

/// What `in_process_shim` hands back.
struct InProcessObjects {
    objects: Vec<InputFile>,
    /// What each object was compiled from.
    of: Vec<ObjectOf>,
    /// ThinLTO tasks.
    tasks: usize,
    /// The LLVM cache file of each object that has one, by the address of its bytes.
    cache_files: std::collections::HashMap<usize, String>,
    /// LLVM's state, freed while the objects are linked.
    state: Option<inproc::Release>,
}

/// Records and reports how many of `tasks` ThinLTO objects were compiled and how many came from
/// LLVM's cache (new cache entries since `before`), and prunes the cache (`bytes`: the size of
/// those objects, for LLVM's warnings).
fn backend_stats(
    req: &LtoRequest,
    llvm: &llvm::Llvm,
    before: usize,
    (tasks, bytes): (usize, u64),
    modules: usize,
    t: std::time::Instant,
    trace: &mut crate::trace::Trace,
) -> Result<()> {
    let opts = req.opts;
    let compiled = llvm_cache_entries(opts.cache_dir.as_ref()).saturating_sub(before);
    let (compiled, cached) = if opts.cache_dir.is_some() { (compiled.min(tasks), tasks.saturating_sub(compiled)) } else { (tasks, 0) };
    trace.stage("Thin link and ThinLTO backends", &format!("{modules} modules, {compiled} compiled, {cached} cached, LLVM {}", llvm.version), t);
    if let Some(d) = &opts.cache_dir {
        let cache = backend::Cache::new(d.clone(), String::new());
        // lld's count is LTO's tasks: the regular partition and one per ThinLTO module.
        cache.prune(opts.cache_policy.as_deref(), Some((tasks + 1, bytes)))?;
    }
    if req.verbose {
        req.diag.log(&format!("thinlto: {tasks} modules, {compiled} compiled, {cached} cached"));
    }
    Ok(())
}

/// The objects of in-process LTO as link inputs, named as lld names them (`<out>.lto.o`,
/// `<out>.lto.<module>.o`; lld-link `.obj`), each checked.
fn lto_objects(
    req: &LtoRequest,
    names: &[String],
    regular_object: Option<Cow<'static, [u8]>>,
    thin_objects: Vec<Cow<'static, [u8]>>,
) -> Result<(Vec<InputFile>, Vec<ObjectOf>)> {
    let opts = req.opts;
    let out = req.output.to_string_lossy().into_owned();
    let thin_modules: Vec<usize> = (0..req.modules.len()).filter(|&i| req.modules[i].bitcode.ir.modules.iter().any(|m| m.thin)).collect();
    let mut objects = Vec::new();
    let mut of = Vec::new();
    if let Some(data) = regular_object {
        if let Some(p) = &opts.obj_path {
            write_file(p, &data)?;
        }
        objects.push(lto_input_bytes(object_name(&out, ObjectOf::Regular, names, req.format), data));
        of.push(ObjectOf::Regular);
    }
    let named = thin_objects.len() == thin_modules.len();
    // Checked in parallel (998 objects in an OpenSSL relink).
    use rayon::prelude::*;
    let checked: Vec<Result<Option<(InputFile, ObjectOf)>>> = thin_objects
        .into_par_iter()
        .enumerate()
        .map(|(k, data)| {
            let o = if named { ObjectOf::Module(thin_modules[k]) } else { ObjectOf::Task(k) };
            let name = object_name(&out, o, names, req.format);
            // An empty object is what a task with nothing to compile produces; anything else
            // must be a valid object.
            if data.is_empty() {
                return Ok(None);
            }
            if let Err(e) = backend::check_object(&data) {
                crate::bail!("{name}: {e}");
            }
            Ok(Some((lto_input_bytes(name, data), o)))
        })
        .collect();
    for c in checked {
        if let Some((obj, o)) = c? {
            objects.push(obj);
            of.push(o);
        }
    }
    Ok((objects, of))
}

/// `-save-temps` for in-process LTO, with lld's file names: the resolutions
/// (`<out>.resolution.txt`), LLVM's intermediate bitcode of the regular-LTO task
/// (`<out>.0.<stage>.bc`) and of each ThinLTO module (`<module>.<stage>.bc`, next to the input),
/// the combined index (`<out>.index.bc`) and the native objects (`<out>.lto.o`, `<out>.lto.<m>.o`).
fn save_temps(req: &LtoRequest, stage: &Path, out: &str, names: &[String], thin_modules: &[usize], objects: &[InputFile]) -> Result<()> {
    let mut res = String::new();
    for (m, name) in req.modules.iter().zip(names) {
        res.push_str(&format!("{name}\n"));
        for (k, flags) in m.flags.iter().enumerate() {
            res.push_str(&format!("-r={name},{},{flags}\n", String::from_utf8_lossy(m.bitcode.sym(k).name)));
        }
    }
    write_file(Path::new(&format!("{out}.resolution.txt")), res.as_bytes())?;
    let entries = std::fs::read_dir(stage).map_err(|e| Error::new(format!("cannot read {}: {}", stage.display(), crate::error::io_error(&e))))?;
    for e in entries.flatten() {
        let file = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = file.strip_prefix("lto.") else { continue };
        let to = match rest.split_once('.') {
            // llvm-lto2's own resolutions name the staged modules; ours name lld's.
            Some(("resolution", _)) => {
                let _ = std::fs::remove_file(e.path());
                continue;
            }
            // `lto.N` alone is a task's object, read already.
            None if rest.parse::<u32>().is_ok() => continue,
            Some((task, stage_name)) if task.parse::<u32>().is_ok_and(|t| t > 0) => {
                let t: usize = task.parse().unwrap_or(0);
                match thin_modules.get(t - 1) {
                    Some(&i) => format!("{}.{stage_name}", names[i]),
                    None => format!("{out}.{rest}"),
                }
            }
            _ => format!("{out}.{rest}"),
        };
        if std::fs::rename(e.path(), &to).is_err() {
            copy_file(&e.path(), Path::new(&to))?;
        }
    }
    for o in objects {
        write_file(&o.path, o.data)?;
    }
    Ok(())
}

/// `--thinlto-index-only[=file]`: the thin link only, with lld's module names, so the index
/// and imports files (and the module paths inside them) are the ones ld.lld writes.
#[allow(clippy::too_many_arguments)]
fn index_only(
    req: &LtoRequest,
    llvm: &llvm::Llvm,
    cg: &CodegenSettings,
    names: &[String],
    make_module: impl Fn(usize, String) -> Module,
    trace: &mut crate::trace::Trace,
) -> Result<()> {
    let opts = req.opts;
    // In this process through the library built for this LLVM (`inproc.rs`), as lld: no
    // module staged or parsed twice, every file written once where lld writes it.
    match shim_for(req, llvm, names, inproc::Mode::IndexOnly, trace) {
        Some(Ok(shim)) => {
            let t = std::time::Instant::now();
            if let Some(produced) = run_in_process(req, &shim, llvm, cg, names, inproc::Mode::IndexOnly, None)? {
                trace.stage("Thin link", &format!("in process, LLVM {}", shim.llvm_version()), t);
                trace.laps(&produced.laps);
                let t_write = std::time::Instant::now();
                finish_index_only(req, names, &|_| true, Some(&shim.skip_index()))?;
                trace.stage("Write index files", &format!("{} modules, {} lazy", names.len(), req.lazy.len()), t_write);
                return Ok(());
            }
        }
        Some(Err(why)) if req.verbose => req.diag.log(&format!("thinlto: thin link not in process: {why}")),
        _ => {}
    }
    // In place through LLVMgold when it can be told dtld's resolutions (`goldindex.rs`): no
    // module staged, every file written once where lld writes it.
    if let Some(gold) = llvm.gold.as_ref().filter(|_| !thin_link_forced("llvm-lto2")) {
        let t = std::time::Instant::now();
        match goldindex::run(gold, req, cg, names)? {
            goldindex::Outcome::Written => {
                trace.stage("Thin link", "LLVMgold, in place", t);
                let t_write = std::time::Instant::now();
                finish_index_only(req, names, &|_| true, None)?;
                trace.stage("Write index files", "the list of objects", t_write);
                return Ok(());
            }
            goldindex::Outcome::Fallback(why) => {
                if req.verbose {
                    req.diag.log(&format!("thinlto: thin link by llvm-lto2: {why}"));
                }
            }
        }
    }
    // Stage in a private tree deep enough that every relative name (even `../x.o`) stays
    // inside it; llvm-lto2 runs there and sees exactly lld's module names.
    let out = req.output.to_string_lossy().into_owned();
    let root = PathBuf::from(format!("{out}.dtld-index"));
    let depth = names.iter().map(|n| thinlink::leading_parents(&thinlink::normalize(Path::new(n)))).max().unwrap_or(0);
    let staging = crate::staging::StagingDir::open(&root, opts.save_temps)?;
    let mut cwd = staging.path().to_path_buf();
    for _ in 0..depth {
        cwd.push("_");
    }
    create_dir(&cwd)?;
    let mut modules = Vec::new();
    let mut materialized_abs = Vec::new();
    // llvm-lto2 writes `<id>.thinlto.bc` and `<id>.imports` next to an absolute module: those it
    // creates are removed at the end unless they are the files lld writes there (lld writes
    // them under `--thinlto-prefix-replace`'s new prefix, and imports files only when asked).
    let mut side_files = Vec::new();
    for (i, n) in names.iter().enumerate() {
        let m = make_module(i, n.clone());
        if Path::new(n).is_absolute() {
            for ext in ["thinlto.bc", "imports"] {
                let p = PathBuf::from(format!("{n}.{ext}"));
                if std::fs::symlink_metadata(&p).is_err() {
                    side_files.push(p);
                }
            }
            // An absolute module name cannot be redirected: plain files are used in place,
            // archive members are written next to their archive for the thin link only.
            let is_file_itself = m.source.as_ref().is_some_and(|s| s == Path::new(n));
            if !is_file_itself {
                write_file(Path::new(n), m.data)?;
                materialized_abs.push(PathBuf::from(n));
            }
            modules.push(Module { place: false, ..m });
            continue;
        }
        modules.push(m);
    }
    let result = thinlink_placed(llvm, opts, cg, &cwd, staging.path(), &modules);
    for p in &materialized_abs {
        let _ = std::fs::remove_file(p);
    }
    let mut written = std::collections::HashSet::new();
    let remove_side_files = |written: &std::collections::HashSet<PathBuf>| {
        for p in side_files.iter().filter(|p| !written.contains(*p)) {
            let _ = std::fs::remove_file(p);
        }
    };
    let tl = match result {
        Ok(tl) => {
            req.diag.forward(&tl.messages);
            tl
        }
        Err(e) => {
            remove_side_files(&written);
            return Err(e);
        }
    };
    tl.record(trace, "Thin link");
    let t_write = std::time::Instant::now();
    let (old, new, _) = opts.prefix_replace.clone().unwrap_or_default();
    for (i, n) in names.iter().enumerate() {
        let Some(shard) = &tl.shards[i] else { continue };
        let dest = prefix_replaced(n, &old, &new);
        let shard_src = cwd.join(shard);
        written.insert(PathBuf::from(format!("{dest}.thinlto.bc")));
        copy_file_if_changed(&shard_src, Path::new(&format!("{dest}.thinlto.bc")))?;
        if opts.emit_imports_files {
            written.insert(PathBuf::from(format!("{dest}.imports")));
            copy_file_if_changed(&cwd.join(format!("{n}.imports")), Path::new(&format!("{dest}.imports")))?;
        }
    }
    finish_index_only(req, names, &|i| tl.shards[i].is_some(), Some(&skipindex::skip_module_index()))?;
    remove_side_files(&written);
    trace.stage("Write index files", &format!("{} modules, {} lazy", names.len(), req.lazy.len()), t_write);
    let t_clean = std::time::Instant::now();
    drop(staging);
    trace.stage("Remove the staging directory", "", t_clean);
    Ok(())
}

/// The end of an index-only link, once the thin link wrote the shards: skip indexes for the
/// bitcode files the link did not need, and the `--thinlto-index-only=` list of the native
/// objects the final link will read (modules `indexed` says got a shard). `skip_index`: the
/// bytes of the skip indexes to write, when the thin link did not write them itself (LLVMgold
/// does).
fn finish_index_only(req: &LtoRequest, names: &[String], indexed: &dyn Fn(usize) -> bool, skip_index: Option<&[u8]>) -> Result<()> {
    let opts = req.opts;
    let (old, new, native) = opts.prefix_replace.clone().unwrap_or_default();
    let obj_prefix = if native.is_empty() { new.clone() } else { native.clone() };
    let mut linked = String::new();
    for (_, n) in names.iter().enumerate().filter(|(i, _)| indexed(*i)) {
        linked.push_str(&prefix_replaced(n, &old, &obj_prefix));
        linked.push('\n');
    }
    // Bitcode files the link did not need still get an index that tells a distributed backend
    // to skip them (and an empty imports file), as lld writes.
    for input in req.lazy.iter().filter(|_| skip_index.is_some()) {
        let name = module_name(input, Some(opts), req.format);
        let dest = prefix_replaced(&name, &old, &new);
        write_file_if_changed(Path::new(&format!("{dest}.thinlto.bc")), skip_index.unwrap_or_default())?;
        if opts.emit_imports_files {
            write_file_if_changed(Path::new(&format!("{dest}.imports")), b"")?;
        }
    }
    if let Some(f) = &opts.index_only_file {
        write_file(f, linked.as_bytes())?;
    }
    // lld runs the regular partition even when it is empty, and writes its object.
    let all_thin = req.modules.iter().all(|m| m.bitcode.ir.modules.iter().all(|im| im.thin));
    if let (Some(p), true) = (&opts.obj_path, all_thin) {
        if let Some(data) = emptyobj::empty_object(req.format) {
            write_file(p, &data)?;
        }
    }
    Ok(())
}
