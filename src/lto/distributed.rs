//! Distributed ThinLTO, from the thin link to the native objects, as ld.lld 22 does it.
//!
//! Why it exists: the DTLTO link is one sequence with its own files, and everything a user, a
//! distributor or a test can see of it is lld's contract (docs/dtlto.md): the module IDs the
//! backends get, the temporaries' names and places (`temps.rs`), the job file (`dtlto.rs`),
//! which files stay with `--save-temps` and the `--thinlto-emit-*` options, the cache. The
//! steps:
//!
//! 1. Module IDs as lld's `DTLTO::addInput` gives them: a plain bitcode file is its path as
//!    given; a thin-archive member the member's path (next to the archive, `.` and `..`
//!    removed); a regular-archive member a file written next to the output
//!    (`temps::Temps::member`).
//! 2. The thin link in this process (dtld's library), each module's shard in memory; without
//!    the library, `llvm-lto2` on staged copies in a private directory, whose shards are then
//!    renamed to the IDs above (`shardpaths.rs`). With a cache, each module is looked up by
//!    LLVM's key before its shard is even written.
//! 3. For the jobs that miss the cache: their modules, import sources and shards written (each
//!    file created exclusively), the job file, the distributor; every output checked.
//! 4. lld's side files for the emit options, the objects handed to the link, the temporaries
//!    removed in the background.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::bitcode::Module;
use super::request::{LtoOutput, LtoRequest};
use super::temps::{Kind, Temps};
use super::thinlink::{self, CodegenSettings};
use super::{backend, dtlto, inproc, irsymtab, linkcache, llvm};
use crate::error::Result;

/// What `mod.rs` has worked out for the link before choosing this way of running it.
pub(super) struct Prepared<'a> {
    pub llvm: &'a llvm::Llvm,
    pub cg: &'a CodegenSettings,
    /// lld's names of the modules (`lib.a(m.o at 8)`).
    pub names: &'a [String],
    /// The remote compiler's command line (`common.args`).
    pub common: &'a [String],
    /// Each module's XXH3-128.
    pub digests: &'a [[u8; 16]],
    /// The backend cache's salt for the profiles' contents.
    pub profiles_salt: String,
    pub link_cache: Option<linkcache::LinkCache>,
}

/// The module IDs a DTLTO link of this process gives the modules (what its objects are named
/// after), for naming objects without running the link.
pub(super) fn object_ids(req: &LtoRequest, names: &[String]) -> Vec<String> {
    let out = req.output.to_string_lossy();
    module_ids(req, names, &Temps::new(&out, None, true, true), None)
}

/// lld 22's module ID of each bitcode file under DTLTO (`DTLTO::addInput`), each step timed
/// into `steps` under lld's name when given.
fn module_ids(req: &LtoRequest, names: &[String], temps: &Temps, steps: Option<&crate::staging::Steps>) -> Vec<String> {
    let id = |i: usize| {
        let input = req.modules[i].bitcode.input;
        match &input.archive {
            // `seq` counts the bitcode files given to LTO, this one included.
            _ if written_out(req, i) => temps.member(&names[i], i + 1),
            None => input.name.clone(),
            // lld-link takes a thin member's path as it is (ELF's is normalized).
            Some((archive, member)) if req.format == irsymtab::ObjectFormat::Coff => coff_thin_member_path(archive, member),
            Some((archive, member)) => thin_member_path(archive, member),
        }
    };
    (0..req.modules.len())
        .map(|i| match steps {
            Some(s) => s.time("Add input for DTLTO", "", || id(i)),
            None => id(i),
        })
        .collect()
}

/// LLVM's `computeThinArchiveMemberPath`: a relative member name is relative to the archive's
/// directory; `.` and `..` are removed.
fn thin_member_path(archive: &str, member: &str) -> String {
    let p = if Path::new(member).is_absolute() { PathBuf::from(member) } else { Path::new(archive).parent().unwrap_or(Path::new("")).join(member) };
    thinlink::normalize(&p).to_string_lossy().into_owned()
}

/// lld-link's path of a thin-archive member: the member's name joined to the archive's
/// directory when relative, as it is otherwise (no `.`/`..` removed).
fn coff_thin_member_path(archive: &str, member: &str) -> String {
    if Path::new(member).is_absolute() {
        return member.to_string();
    }
    Path::new(archive).parent().unwrap_or(Path::new("")).join(member).to_string_lossy().into_owned()
}

/// Whether module `i` is written out for the backends: a regular-archive member, or the
/// bitcode of a FatLTO object (wherever the object is).
fn written_out(req: &LtoRequest, i: usize) -> bool {
    let input = req.modules[i].bitcode.input;
    (input.archive.is_some() && !input.thin_member) || input.fat_lto
}

/// The backend task of each module that is ThinLTO: lld numbers them after the regular-LTO
/// partitions, in the order the modules joined LTO.
fn tasks(req: &LtoRequest) -> Vec<Option<usize>> {
    let mut next = req.opts.partitions.max(1) as usize;
    req.modules
        .iter()
        .map(|m| {
            m.bitcode.ir.modules.iter().any(|im| im.thin).then(|| {
                next += 1;
                next - 1
            })
        })
        .collect()
}

/// Runs the DTLTO part of a link (see the module comment).
pub(super) fn run(req: &LtoRequest, p: Prepared, trace: &mut crate::trace::Trace) -> Result<LtoOutput> {
    let opts = req.opts;
    let out = req.output.to_string_lossy().into_owned();
    // A device as the output (`-o /dev/null`): a private directory for the temporaries.
    let private = crate::output::is_special_output(req.output).then(private_dir).transpose()?;
    let temps = Temps::new(&out, private.as_ref().map(|d| d.path().to_string_lossy().into_owned()), opts.save_temps, opts.emit_index_files);
    let steps = std::sync::Arc::new(crate::staging::Steps::default());
    let ids = module_ids(req, p.names, &temps, Some(&steps));
    let tasks = tasks(req);
    // Regular-archive members come from a content-addressed store in the cache directory
    // (`.dtld/member-<XXH3-128>`, hard links: written once, not on every link).
    let store =
        |i: usize| opts.cache_dir.as_ref().map(|d| backend::own_dir(&crate::util::path::abs(d)).join(format!("member-{}", super::naming::hex(&p.digests[i]))));
    let modules: Vec<Module> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| {
            let m = super::steps::make_module(req, i, id.clone());
            let placed = written_out(req, i);
            Module { place: placed, source: None, store: if placed { store(i) } else { None }, ..m }
        })
        .collect();
    if let Some(d) = opts.cache_dir.as_ref().filter(|_| modules.iter().any(|m| m.store.is_some())) {
        super::files::create_dir(&backend::own_dir(d))?;
    }
    let cache = opts.cache_dir.as_ref().map(|d| {
        std::sync::Arc::new(backend::Cache::new(
            d.clone(),
            format!("{} {} {} dtlto{}", p.llvm.clang.display(), p.llvm.version, p.llvm.identity, p.profiles_salt),
        ))
    });
    let t_thin = std::time::Instant::now();
    // With a cache, each module's backend is looked up by LLVM's key before its shard is
    // written (not when every index file is kept: -save-temps, the emit options).
    let probe: Option<inproc::Probe> = match &cache {
        Some(c) if !opts.save_temps && !opts.emit_index_files && !opts.emit_imports_files => {
            let c = c.clone();
            let common = p.common.to_vec();
            let steps = steps.clone();
            Some(Box::new(move |llvm_key: &[u8]| {
                let key = c.llvm_key(&common, llvm_key);
                // (Under the key until the job's shard is named, below.)
                let hit = steps.time("Check cache for DTLTO", &key, || c.lookup(&key));
                backend::Known { key, hit }
            }))
        }
        _ => None,
    };
    let (tl, freeing, staging, skip_index) = match thin_link_in_process(req, p.llvm, p.cg, &modules, probe, trace)? {
        Some(InProcess { tl, freeing, skip_index }) => (tl, freeing, None, skip_index),
        None => {
            let (tl, staging) = staged_thin_link(req, &p, &ids)?;
            (tl, None, Some(staging.remove_in_background()), super::skipindex::skip_module_index())
        }
    };
    // LLVM writes the imports files while it writes the shards, before the distributor runs.
    if req.format == irsymtab::ObjectFormat::Elf && opts.emit_imports_files {
        write_imports_files(&ids, &tl)?;
    }
    trace.stage("Thin link", &format!("{} modules, LLVM {}", modules.len(), p.llvm.version), t_thin);

    let (jobs, job_module) = backend_jobs(&tl, p.names, &ids, &tasks, &temps);
    let known: Vec<Option<backend::Known>> = job_module.iter().map(|&m| tl.known.get(m).cloned().flatten()).collect();
    let shard_of: HashMap<&str, &str> = known.iter().zip(&jobs).filter_map(|(k, j)| Some((k.as_ref()?.key.as_str(), j.shard.as_str()))).collect();
    steps.relabel("Check cache for DTLTO", &|key| shard_of.get(key).map(|s| s.to_string()));
    let cwd = crate::util::path::abs(Path::new("."));
    if let Some(c) = &cache {
        know_contents(c, &cwd, &modules, &tl, &jobs, &known, &job_module, p.digests);
    }
    let writer = Writer { temps: &temps, modules: &modules, tl: &tl, cwd: &cwd, written: Default::default(), steps: &steps };
    if opts.save_temps || opts.emit_index_files {
        // Every file of the thin link is kept for the user, as lld writes them all.
        let all: Vec<&backend::Job> = jobs.iter().collect();
        writer.write(&all)?;
    }
    let prepare = |miss: &[&backend::Job]| writer.write(miss);
    let t_backend = std::time::Instant::now();
    let d = dtlto::Distributor {
        program: opts.distributor.as_deref().unwrap_or_default(),
        args: &opts.distributor_args,
        linker_output: &out,
        common_inputs: &opts.sample_profile.iter().cloned().collect::<Vec<_>>(),
        job_file: PathBuf::from(temps.job_file()),
        temps: &temps,
        prepare: Some(&prepare),
        verbose: req.verbose.then_some(req.diag),
        steps: &steps,
    };
    let (objs, stats) = dtlto::run(&d, p.common, &jobs, &known, &cwd, cache.as_deref())?;
    steps.record(trace);
    trace.stage("Distribute ThinLTO backends", &format!("{} jobs, {} compiled, {} cached", jobs.len(), stats.compiled, stats.cached), t_backend);
    if let Some(c) = &cache {
        c.prune(opts.cache_policy.as_deref(), Some((jobs.len() + 1, objs.iter().map(|o| o.len() as u64).sum())))?;
    }
    if req.verbose {
        req.diag.log(&format!("thinlto: {} modules, {} compiled, {} cached", jobs.len(), stats.compiled, stats.cached));
    }
    emit_index_files(req, p.names, &skip_index)?;
    let mut tl = tl;
    let regular = tl.regular_object.take();
    let has_regular = regular.is_some();
    drop(tl);
    // The shards (11 MiB for OpenSSL) are not needed any more: their memory goes back before
    // the objects are linked.
    super::files::release_free_memory();
    // An empty object is linked as no code, as lld links it, and said (not cached as a link).
    for o in &stats.empty {
        req.diag.warn(&format!("DTLTO backend compilation: native object file {o} is empty; the link goes on without it"));
    }
    let link_cache = if stats.empty.is_empty() { p.link_cache } else { None };
    let (objs, job_module): (Vec<backend::Object>, Vec<usize>) = objs.into_iter().zip(job_module).filter(|(o, _)| !o.is_empty()).unzip();
    let (objects, of) = super::steps::native_objects(opts, &out, regular, objs, &ids, &job_module, req.format)?;
    if opts.save_temps {
        // lld keeps each object under the name it links it by.
        for o in &objects {
            super::files::write_file(&o.path, o.data)?;
        }
    }
    let mut removal = temps.remove_in_background();
    for r in [staging, freeing, private.map(crate::staging::StagingDir::remove_in_background)].into_iter().flatten() {
        removal = removal.and(r);
    }
    let cleanup = super::steps::store_link_cache(link_cache, &objects, &of, has_regular, &stats.cache_files, jobs.len(), removal);
    Ok(LtoOutput { objects, stop: false, cleanup: Some(cleanup) })
}

/// What the thin link in this process gives.
struct InProcess {
    tl: thinlink::ThinLinkOutput,
    /// LLVM's state, being freed while the backends run.
    freeing: Option<crate::staging::Removal>,
    /// LLVM's "skip this module" index, for unused lazy bitcode.
    skip_index: Vec<u8>,
}

/// DTLTO's thin link through the library (`inproc.rs`): each module's shard and import list
/// in memory (`write_job_inputs` writes those that jobs need, with their modules), and the
/// regular-LTO partition compiled: what `thinlink::run` gets from `llvm-lto2` in its
/// distributed-indexes mode, without the files. `None`: no library, or it cannot do this link
/// (`--verbose` says why); nothing was written.
fn thin_link_in_process(
    req: &LtoRequest,
    llvm: &llvm::Llvm,
    cg: &CodegenSettings,
    modules: &[Module],
    probe: Option<inproc::Probe>,
    trace: &mut crate::trace::Trace,
) -> Result<Option<InProcess>> {
    let ids: Vec<String> = modules.iter().map(|m| m.id.clone()).collect();
    let shim = match super::steps::shim_for(req, llvm, &ids, inproc::Mode::Distributed, trace) {
        Some(Ok(shim)) => shim,
        Some(Err(why)) => {
            if req.verbose {
                req.diag.log(&format!("thinlto: thin link not in process: {why}"));
            }
            return Ok(None);
        }
        None => return Ok(None),
    };
    thinlink::unique_ids(modules)?;
    let skip_index = shim.skip_index();
    let t_run = std::time::Instant::now();
    let Some(mut produced) = super::steps::run_in_process(req, &shim, llvm, cg, &ids, inproc::Mode::Distributed, probe)? else {
        return Ok(None);
    };
    let t_read = std::time::Instant::now();
    trace.laps(&produced.laps);
    let n = modules.len();
    let (mut shards, mut imports, mut data) = (vec![None; n], vec![Vec::new(); n], vec![None; n]);
    for (i, index) in std::mem::take(&mut produced.indexes).into_iter().enumerate() {
        let Some(index) = index else { continue };
        shards[i] = Some(PathBuf::from(format!("{}.thinlto.bc", index.module)));
        imports[i] = index.imports;
        data[i] = Some(index.shard);
    }
    // A module the backend cache holds has a job all the same (its object comes from the
    // cache); its shard is never written.
    for (i, k) in produced.probed.iter().enumerate() {
        if k.as_ref().is_some_and(|k| k.hit.is_some()) && shards[i].is_none() {
            shards[i] = Some(PathBuf::from(format!("{}.thinlto.bc", ids[i])));
        }
    }
    let regular_object = produced.objects.iter().find(|o| o.0 == 0).map(|o| o.1.to_vec());
    // LLVM's state is freed while the backends run (the distributor's compilers leave a core
    // to it): nothing below needs it, the regular-LTO object is copied out above.
    let freeing = produced.state.take().map(inproc::Release::in_background);
    Ok(Some(InProcess {
        tl: thinlink::ThinLinkOutput {
            shards,
            imports,
            regular_object,
            thin_objects: Vec::new(),
            in_memory: Some(data),
            known: std::mem::take(&mut produced.probed),
            times: [t_run, t_run, t_read, std::time::Instant::now()],
            messages: String::new(),
        },
        freeing,
        skip_index,
    }))
}

/// A private directory for the temporaries of a link whose output is a device.
fn private_dir() -> Result<crate::staging::StagingDir> {
    crate::staging::StagingDir::open(&std::env::temp_dir().join(format!("dtld-lto-{}", std::process::id())), false)
}

/// The thin link by `llvm-lto2` (or LLVMgold), when dtld's library cannot run it: on copies of
/// the modules staged in a private directory (`<output>.dtld-lto`, content-named), whose shards
/// and import lists are then given lld's module IDs (`ids`) and kept in memory, as the
/// library's are. The directory is no longer needed then (the caller removes it).
fn staged_thin_link(req: &LtoRequest, p: &Prepared, ids: &[String]) -> Result<(thinlink::ThinLinkOutput, crate::staging::StagingDir)> {
    let out = req.output.to_string_lossy().into_owned();
    let (staging, _) = super::steps::open_staging(req, &out, None)?;
    let dir = staging.path().to_path_buf();
    let staged_ids = super::naming::module_ids(req, p.names, p.digests, "");
    let modules: Vec<Module> = staged_ids.iter().enumerate().map(|(i, id)| super::steps::make_module(req, i, id.clone())).collect();
    let mut tl = super::steps::thin_link(p.llvm, req.opts, p.cg, &dir, &dir, &modules, true)?;
    req.diag.forward(&tl.messages);
    staging.check()?;
    let to_lld: HashMap<&str, &str> = staged_ids.iter().map(String::as_str).zip(ids.iter().map(String::as_str)).collect();
    let rename = |path: &[u8]| std::str::from_utf8(path).ok().and_then(|p| to_lld.get(p)).map(|s| s.as_bytes().to_vec());
    let mut data = vec![None; ids.len()];
    for (i, shard) in tl.shards.iter().enumerate() {
        let Some(shard) = shard else { continue };
        let path = dir.join(shard);
        let bytes = std::fs::read(&path).map_err(|e| crate::error::Error::new(format!("cannot open {}: {}", path.display(), crate::error::io_error(&e))))?;
        let renamed = dtld_bitcode::shardpaths::rename_modules(&bytes, &rename).map_err(|e| crate::error::Error::new(format!("{}: {e}", path.display())))?;
        data[i] = Some(renamed);
    }
    for imports in &mut tl.imports {
        for s in imports.iter_mut() {
            if let Some(l) = to_lld.get(s.as_str()) {
                *s = l.to_string();
            }
        }
    }
    tl.in_memory = Some(data);
    Ok((tl, staging))
}

/// One backend job per module the thin link wrote a shard for, named as lld names its files,
/// and for each job the index of its module.
fn backend_jobs(tl: &thinlink::ThinLinkOutput, names: &[String], ids: &[String], tasks: &[Option<usize>], temps: &Temps) -> (Vec<backend::Job>, Vec<usize>) {
    let mut jobs = Vec::new();
    let mut job_module = Vec::new();
    for (i, shard) in tl.shards.iter().enumerate() {
        let (Some(_), Some(task)) = (shard, tasks[i]) else { continue };
        let native = temps.native(&ids[i], task);
        jobs.push(backend::Job {
            display: names[i].clone(),
            module: ids[i].clone(),
            shard: format!("{native}.thinlto.bc"),
            output: native,
            imports: tl.imports[i].clone(),
        });
        job_module.push(i);
    }
    (jobs, job_module)
}

/// Tells the backend cache what the jobs without LLVM's key read (`Cache::key` hashes
/// contents, never paths, so a relink, whose paths carry another process id, finds them): each
/// module's SHA-1, and each such job's shard with its module paths replaced by the modules'
/// digests (the shard names its module and import sources by path).
fn know_contents(
    c: &backend::Cache,
    cwd: &Path,
    modules: &[Module],
    tl: &thinlink::ThinLinkOutput,
    jobs: &[backend::Job],
    known: &[Option<backend::Known>],
    job_module: &[usize],
    digests: &[[u8; 16]],
) {
    use rayon::prelude::*;
    use sha1::Digest as _;
    if known.iter().all(Option::is_some) {
        return;
    }
    let Some(data) = &tl.in_memory else { return };
    let sha1s: Vec<[u8; 20]> = modules.par_iter().map(|m| sha1::Sha1::digest(m.data).into()).collect();
    for (m, d) in modules.iter().zip(sha1s) {
        c.know(cwd.join(&m.id), m.data, d);
    }
    let tags: HashMap<&[u8], String> = modules.iter().zip(digests).map(|(m, d)| (m.id.as_bytes(), super::naming::hex(d))).collect();
    let rename = |p: &[u8]| tags.get(p).map(|t| t.as_bytes().to_vec());
    let shards: Vec<(PathBuf, Vec<u8>)> = jobs
        .par_iter()
        .zip(job_module.par_iter())
        .zip(known.par_iter())
        .filter(|(_, k)| k.is_none())
        .filter_map(|((j, &i), _)| {
            let bytes = data[i].as_deref()?;
            Some((cwd.join(&j.shard), dtld_bitcode::shardpaths::rename_modules(bytes, &rename).unwrap_or_else(|_| bytes.to_vec())))
        })
        .collect();
    for (path, canonical) in shards {
        c.know(path, &canonical, sha1::Sha1::digest(&canonical).into());
    }
}

/// Writes what backend jobs read from the in-memory thin link: the regular-archive members
/// among their modules and import sources, and their shards; each file once.
struct Writer<'a> {
    temps: &'a Temps,
    modules: &'a [Module],
    tl: &'a thinlink::ThinLinkOutput,
    cwd: &'a Path,
    written: std::sync::Mutex<std::collections::HashSet<usize>>,
    steps: &'a crate::staging::Steps,
}

impl Writer<'_> {
    fn write(&self, jobs: &[&backend::Job]) -> Result<()> {
        use rayon::prelude::*;
        let Some(data) = &self.tl.in_memory else { return Ok(()) };
        let by_id: HashMap<&str, usize> = self.modules.iter().enumerate().map(|(i, m)| (m.id.as_str(), i)).collect();
        let mut members = Vec::new();
        let mut shards = Vec::new();
        {
            let mut written = self.written.lock().unwrap_or_else(|e| e.into_inner());
            for j in jobs {
                for id in std::iter::once(&j.module).chain(&j.imports) {
                    if let Some(&i) = by_id.get(id.as_str()) {
                        if self.modules[i].place && written.insert(i) {
                            members.push(i);
                        }
                    }
                }
                if let Some(&i) = by_id.get(j.module.as_str()) {
                    if let Some(bytes) = data[i].as_deref() {
                        if written.insert(self.modules.len() + i) {
                            shards.push((j.shard.as_str(), bytes));
                        }
                    }
                }
            }
        }
        members.par_iter().with_min_len(8).try_for_each(|&i| self.member(&self.modules[i]))?;
        shards.par_iter().with_min_len(8).try_for_each(|(shard, bytes)| {
            self.steps.time("Emit individual index for DTLTO", shard, || self.temps.create(&self.cwd.join(shard), bytes, Kind::Shard))
        })
    }

    /// A regular-archive member at its module ID: a hard link to its entry in the member store
    /// of the cache directory, or a new file.
    fn member(&self, m: &Module) -> Result<()> {
        self.steps.time("Serialize bitcode input for DTLTO", &m.id, || self.write_member(m))
    }

    fn write_member(&self, m: &Module) -> Result<()> {
        let path = self.cwd.join(&m.id);
        if let Some(store) = &m.store {
            if thinlink::link_from_store(store, m.data, &path) {
                self.temps.expect(&path, Kind::Member);
                return Ok(());
            }
        }
        self.temps.create(&path, m.data, Kind::Member)
    }
}

/// `--thinlto-emit-imports-files` under DTLTO (ELF): LLVM's backend writes
/// `<module ID>.imports` for every ThinLTO module, its import sources one per line, sorted.
fn write_imports_files(ids: &[String], tl: &thinlink::ThinLinkOutput) -> Result<()> {
    for (i, id) in ids.iter().enumerate().filter(|(i, _)| tl.shards[*i].is_some()) {
        let mut sources: Vec<&str> = tl.imports[i].iter().map(String::as_str).filter(|s| s != id).collect();
        sources.sort_unstable();
        sources.dedup();
        let text: String = sources.iter().map(|s| format!("{s}\n")).collect();
        super::files::write_file(Path::new(&format!("{id}.imports")), text.as_bytes())?;
    }
    Ok(())
}

/// `--thinlto-emit-index-files` under DTLTO (ELF; lld-link's DTLTO writes none): lld writes,
/// after `--thinlto-prefix-replace`, an empty `<name>.thinlto.bc` (and, with
/// `--thinlto-emit-imports-files`, an empty `<name>.imports`, truncating LLVM's for a plain
/// file) for every bitcode file of the link, because its own index writer never runs under
/// DTLTO; and LLVM's skip index (`skip_index`) for every bitcode file the link did not use.
/// The shards themselves stay where the jobs read them.
fn emit_index_files(req: &LtoRequest, names: &[String], skip_index: &[u8]) -> Result<()> {
    let opts = req.opts;
    if req.format == irsymtab::ObjectFormat::Coff || !opts.emit_index_files {
        return Ok(());
    }
    let (old, new) = opts.prefix_replace.as_ref().map(|(o, n, _)| (o.as_str(), n.as_str())).unwrap_or(("", ""));
    let lazy: Vec<String> =
        req.lazy.iter().map(|input| super::naming::suffix_replaced(&super::naming::module_name(input, Some(opts), req.format), opts)).collect();
    for (name, contents) in names.iter().map(|n| (n, &[][..])).chain(lazy.iter().map(|n| (n, skip_index))) {
        let dest = super::naming::prefix_replaced(name, old, new);
        super::files::write_file(Path::new(&format!("{dest}.thinlto.bc")), contents)?;
        if opts.emit_imports_files {
            super::files::write_file(Path::new(&format!("{dest}.imports")), b"")?;
        }
    }
    Ok(())
}
