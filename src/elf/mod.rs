//! The ELF link, one stage per line (`link`), each stage taking the previous one's output by
//! reference:
//!
//! 1. `input::load_logged`: find, map and identify every input (`-l` search, linker scripts
//!    such as glibc's libc.so, archives split into lazy members); `reproduce::after_load`
//!    writes `--reproduce`; with `--incremental`, `incremental::up_to_date` ends a relink that
//!    finds nothing changed (and the state is recorded after step 7);
//! 2. `resolve::Resolver::start`: parse objects and libraries, bind every symbol, pull archive
//!    members depth-first (lld's lazy-symbol model);
//! 3. `gcc_lto::run`: GCC LTO objects compiled by GCC's own plugin (pass 2);
//! 4. `lto::run`: with bitcode, lld's resolutions, the thin link by the user's LLVM, backends
//!    (local or distributed); native objects join in pass 2 (`Resolver::add_lto_objects`),
//!    then `finish`;
//! 5. `layout::layout`: liveness (`gc`), output sections (`merge`, `cgsort`), the relocation
//!    scan, dynamic symbols, addresses, symbol values;
//! 6. `write::write_output`: the memory-mapped output filled in parallel, build id, rename;
//! 7. `map::write_map`: `-Map`. `-r` leaves after step 4 for `relocatable`.

pub mod android_rela;
pub mod archive_stats;
pub mod binary_input;
pub mod cdsort;
pub mod cgsort;
pub mod compress;
pub mod config;
pub mod deplibs;
pub mod diag;
pub mod eh_frame;
pub mod emit_relocs;
pub mod gc;
pub mod gcc_lto;
pub mod gdb_index;
pub mod icf;
pub mod incremental;
pub mod input;
pub mod layout;
pub mod lto;
pub mod map;
pub mod merge;
pub mod object;
pub mod relocatable;
pub mod relocate;
pub mod relr;
pub mod reproduce;
pub mod reserved;
pub mod resolve;
pub mod script;
pub mod shared;
pub mod symentry;
pub mod symorder;
pub mod symtab;
pub mod synthetic;
pub mod types;
pub mod version_checks;
pub mod version_input;
pub mod version_script;
pub mod write;

/// Runs one link described by `config`.
pub fn link(config: &crate::elf::config::Config) -> crate::error::Result<()> {
    let mut trace = crate::trace::Trace::default();
    let t = std::time::Instant::now();
    let started = incremental::Start::now();
    // A link with bitcode loads LLVM while the inputs are resolved (`lto::preload`), unless
    // its inputs look unchanged since the previous link (whose result the link cache then
    // most likely holds: LLVM is not needed).
    let mut preload = None;
    let mut stamp = None;
    // An archive member the resolver extracts, or a bitcode file, may name dependent libraries
    // (`deplibs`) that are not in the link yet: then the link loads and resolves once more.
    let mut wanted = config.clone();
    // The replaced output's page cache is dropped while the link runs (`outfile.rs`), once the
    // output's name is known (a script's OUTPUT may set it), unless no output is written.
    let mut recycle = None;
    // `--incremental`: what the last round of loading read and found.
    let (mut read_log, mut loaded): (&[(std::path::PathBuf, &'static [u8])], &[crate::input::InputFile]);
    let (config, mut resolver) = loop {
        let (config, inputs, read) = load_inputs(&wanted)?;
        trace.stage("Load input files", "", t);
        // `--incremental`, before anything is resolved: a relink that finds nothing changed ends.
        if config.incremental && recycle.is_none() && incremental::up_to_date(config, read, inputs, started) {
            return finish_trace(config, &trace);
        }
        (read_log, loaded) = (read, inputs);
        if recycle.is_none() {
            recycle = Some(if config.lto.index_only { None } else { crate::outfile::recycle_replaced(&config.output) });
        }
        // Only for bitcode the link certainly has (not archive members it may not extract).
        if preload.is_none() && stamp.is_none() && !config.relocatable && inputs.iter().any(|i| !i.lazy && i.kind == crate::input::FileKind::Bitcode) {
            stamp = crate::lto::linkcache::InputsStamp::new(&config.lto, &config.output, inputs);
            if !stamp.as_ref().is_some_and(|s| s.unchanged()) {
                preload = crate::lto::preload(&config.lto);
            }
        }
        let t = std::time::Instant::now();
        let resolver = resolve::Resolver::start(config, inputs)?;
        trace.stage("Resolve symbols", "", t);
        trace.laps(&resolver.laps);
        let more =
            if config.dependent_libraries && !config.relocatable { deplibs::from_resolved(resolver.resolved(), &config.extracted_deplibs) } else { Vec::new() };
        if more.is_empty() {
            break (config, resolver);
        }
        wanted.extracted_deplibs.extend(more);
    };
    gcc_lto::check(config, resolver.resolved())?;
    if resolver.resolved().has_gcc_ir() {
        // GCC's plugin compiles the GCC LTO objects; what it returns joins in pass 2 (with -r
        // too: the relocatable output carries the plugin's object instead of the claimed ones).
        let files = gcc_lto::run(config, resolver.resolved(), &mut trace)?;
        let t = std::time::Instant::now();
        resolver.add_lto_objects(files)?;
        trace.stage("Resolve LTO objects", "", t);
    }
    let recycle = recycle.flatten();
    // What LTO leaves under way (the staging directory's removal, the link-cache entry, LLVM's
    // state being freed) goes on until the output is written (dropped last).
    let mut lto_cleanup = None;
    if resolver.resolved().has_bitcode() {
        // LTO replaces the bitcode files by native objects, which join the link in pass 2.
        {
            let o = &config.lto;
            let r = resolver.resolved();
            let bitcode: Vec<&crate::lto::bitcode::BitcodeFile> = r.load_order.iter().filter_map(|&f| r.bitcode(f)).collect();
            let producers: Vec<(String, String)> =
                bitcode.iter().map(|b| (b.input.name.clone(), String::from_utf8_lossy(b.ir.producer).into_owned())).collect();
            let triple = bitcode.first().map(|b| String::from_utf8_lossy(b.ir.target_triple).into_owned()).unwrap_or_default();
            if let Some(libcalls) = crate::lto::runtime_libcalls(o, &producers, &triple, preload.as_ref()) {
                resolver.extract_bitcode_libcalls(&libcalls);
            }
        }
        resolver.check_versions_before_lto()?;
        let out = lto::run(config, resolver.resolved(), preload.as_ref(), &mut trace)?;
        if let Some(s) = &stamp {
            s.record();
        }
        if out.stop {
            // lld fails an index-only link too when the version script's checks did.
            if let Some(e) = resolver.resolved().version_errors_before_lto.as_ref().filter(|e| !e.is_empty()) {
                return Err(crate::error::Error::many(e.clone()));
            }
            // As at the end of a native link: the process ends here, and freeing the
            // resolution's tables one by one would only delay its exit (8 ms for OpenSSL's
            // thin link). `out` goes: its drop removes the temporaries.
            crate::util::keep::skip_drop(resolver);
            drop(out);
            return finish_trace(config, &trace);
        }
        lto_cleanup = out.cleanup;
        let t = std::time::Instant::now();
        resolver.add_lto_objects(out.objects)?;
        trace.stage("Resolve LTO objects", "", t);
    }
    if config.relocatable {
        // With bitcode, LTO's objects (every symbol kept visible) are what `-r` combines.
        let resolved = resolver.finish()?;
        if let Some(r) = recycle {
            trace.recycled(r);
        }
        let written = relocatable::write_relocatable(config, &resolved);
        // Not freed, as after a native link.
        crate::util::keep::skip_drop(resolved);
        drop(lto_cleanup);
        return written.and_then(|()| finish_trace(config, &trace));
    }
    let t = std::time::Instant::now();
    let mut resolved = resolver.finish()?;
    trace.stage("Finish resolution", "", t);
    if let Some(p) = &config.print_archive_stats {
        archive_stats::write(config, &resolved, p)?;
    }
    if config.trace {
        print_trace(&resolved);
    }
    let t = std::time::Instant::now();
    let mut live_lap = crate::trace::Laps::default();
    let liveness = layout::mark_live(config, &mut resolved)?;
    live_lap.lap("Mark live sections");
    let layout = layout::layout(config, &resolved, liveness)?;
    trace.stage("Layout", "", t);
    trace.laps(&live_lap);
    trace.laps(&layout.laps);
    // A warning made an error by --fatal-warnings fails the link before anything is written.
    config.diag.check()?;
    if let Some(r) = recycle {
        trace.recycled(r);
    }
    let t = std::time::Instant::now();
    let mut laps = crate::trace::Laps::default();
    write::write_output(&layout, &mut laps)?;
    trace.stage("Write output file", "", t);
    trace.laps(&laps);
    if let Some(p) = &config.map_file {
        map::write_map(&layout, p)?;
    }
    if config.incremental {
        incremental::Incremental::new(config, read_log, loaded, started).record(config);
    }
    // The process ends with the link (the inputs are leaked already): freeing the layout's and
    // the resolution's tables one by one would only delay the exit (60 ms on a large link).
    crate::util::keep::skip_drop(layout);
    crate::util::keep::skip_drop(resolved);
    // What LTO left under way ends now (the link waits for it before exiting in any case), and
    // the trace shows its steps.
    if let Some(c) = lto_cleanup.take() {
        c.join_into(&mut trace);
    }
    finish_trace(config, &trace)
}

/// Loads the inputs of `config` (input linker scripts may set the entry point, add undefined
/// symbols and search directories: ENTRY, EXTERN, SEARCH_DIR, so loading refines a copy of the
/// config), writes `--reproduce`, and fails early if the output (named by -o or a script's
/// OUTPUT) or the map file cannot be written, as lld does once it has read the inputs; a failed
/// link leaves the previous output in place either way.
type Loaded = (&'static crate::elf::config::Config, &'static [crate::input::InputFile], &'static [(std::path::PathBuf, &'static [u8])]);

fn load_inputs(config: &crate::elf::config::Config) -> crate::error::Result<Loaded> {
    let mut config = config.clone();
    let (loaded, read) = input::load_logged(&mut config);
    let inputs: &'static [crate::input::InputFile] = crate::util::keep::slice(reproduce::after_load(&config, loaded, &read)?);
    let mut unwritable = Vec::new();
    for (path, what) in [(Some(&config.output), "output file"), (config.map_file.as_ref(), "map file")] {
        let Some(p) = path else { continue };
        if let Err(e) = crate::outfile::check_writable(p) {
            unwritable.push(format!("cannot open {what} {}: {}", p.display(), crate::error::io_error(&e)));
        }
    }
    if !unwritable.is_empty() {
        return Err(crate::error::Error::many(unwritable));
    }
    // Like the inputs, the config (and the list of files read) lives until the process exits.
    Ok((crate::util::keep::value(config), inputs, crate::util::keep::slice(read)))
}

/// `--trace`: every file that joined the link, in the order it did.
fn print_trace(resolved: &crate::elf::symtab::Resolved) {
    for &f in &resolved.trace_order {
        println!("{}", resolved.inputs[f].name);
    }
}

fn finish_trace(config: &crate::elf::config::Config, trace: &crate::trace::Trace) -> crate::error::Result<()> {
    if config.verbose {
        crate::diag::verbatim(&trace.summary());
    }
    if let Some(p) = &config.time_trace {
        let path = match (&config.time_trace_file, p.as_os_str().is_empty()) {
            (Some(f), _) => f.clone(),
            (None, false) => p.clone(),
            (None, true) => std::path::PathBuf::from(format!("{}.time-trace", config.output.display())),
        };
        trace.write(&path, config.time_trace_granularity)?;
    }
    Ok(())
}
