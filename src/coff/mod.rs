//! The COFF/PE link (MinGW and lld-link flavours), one stage per module.
//!
//! `link` reads like lld's `LinkerDriver::linkerMain` followed by `Writer::run`:
//!
//! 1. `resolve::Resolver::resolve` — read inputs (objects, archives, dlltool and short import
//!    libraries, bitcode), bind every symbol with lld's COFF rules, apply `.drectve` directives;
//! 2. `lto::run_request` — with bitcode in the link: lld's COFF resolutions
//!    (`Resolver::lto_modules`), the thin link and backends (in process or DTLTO), and the
//!    native objects join in a second pass (`Resolver::add_lto_objects`);
//! 3. `gc::mark_live` (`/opt:ref`, from `gc::roots`) and `icf::fold` (`/opt:icf`) — lld's
//!    `markLive` and `doICF`, on the final symbol table (`symtab::Resolved`);
//! 4. `layout::layout` — chunks, partial and output sections, import tables, pseudo
//!    relocations, exports, base relocations, addresses; `map::write_lldmap` writes
//!    `/lldmap` (MinGW `-Map`);
//! 5. `write::write` — the PE image; then `--out-implib` writes the import library.
//!
//! `config.rs` holds the options both drivers fill; `object.rs` parses one COFF object;
//! `idata.rs`, `pseudoreloc.rs`, `exports.rs`, `baserel.rs`, `implib.rs` and `drectve.rs` are the
//! pure table formats. `lib.rs` writes archives as LLVM does (import libraries, and
//! `lld-link /lib` with `libinput.rs`, what llvm-lib reads from its inputs).

pub mod armap;
pub mod baserel;
pub mod cgsort;
pub mod config;
pub mod cvlines;
pub mod deffile;
pub mod demangle;
pub mod dllinput;
pub mod drectve;
pub mod dwarf;
pub mod exports;
pub mod gc;
pub mod guardcf;
pub mod icf;
pub mod idata;
pub mod implib;
pub mod layout;
pub mod lib;
pub mod libinput;
pub mod linkmap;
pub mod locations;
pub mod map;
pub mod merge;
pub mod object;
pub mod order;
pub mod pdb;
pub mod pseudoreloc;
pub mod reproduce;
pub mod resolve;
pub mod resources;
pub mod symtab;
pub mod write;

use crate::error::{Error, Result};

/// Options both drivers accept that dtld does not implement yet: an error when ignoring them
/// would change what the output means, a warning otherwise (never silent).
fn refuse_unimplemented(c: &config::CoffConfig) -> Result<()> {
    let mut errors = Vec::new();
    if !c.delay_load.is_empty() {
        errors.push(format!("/delayload:{} (delay-loaded imports) is not supported by dtld", c.delay_load[0]));
    }
    if c.function_pad_min.is_some() {
        errors.push("/functionpadmin (hotpatch padding) is not supported by dtld".to_string());
    }
    if c.stub.is_some() {
        errors.push("/stub (a custom DOS stub) is not supported by dtld".to_string());
    }
    if c.release {
        errors.push("/release (the PE checksum) is not supported by dtld".to_string());
    }
    if !errors.is_empty() {
        return Err(Error::many(errors));
    }
    Ok(())
}

/// Runs one COFF link; at most `/errorlimit:` errors are reported, as lld does.
pub fn link(config: &config::CoffConfig) -> Result<()> {
    let linked = link_inner(config);
    // `/linkrepro`: the archive holds what was read, whether or not the link succeeded.
    let linked = match (config.repro.as_ref().map(reproduce::Repro::write), linked) {
        (None | Some(Ok(())), r) => r,
        (Some(Err(e)), Ok(())) => Err(e),
        (Some(Err(e)), Err(mut l)) => {
            l.messages.extend(e.messages);
            Err(l)
        }
    };
    linked.map_err(|mut e| {
        let limit = config.error_limit;
        if limit > 0 && e.messages.len() > limit && !e.messages.iter().any(|m| m.starts_with("too many errors emitted")) {
            e.messages.truncate(limit);
            let how = if config.mingw { "--error-limit=0" } else { "/errorlimit:0" };
            e.messages.push(format!("too many errors emitted, stopping now (use {how} to see all errors)"));
        }
        e
    })
}

fn link_inner(config: &config::CoffConfig) -> Result<()> {
    if config.implib_only {
        return write_def_implib(config);
    }
    refuse_unimplemented(config)?;
    // Parsed once (the drivers reported its errors with the command line already).
    let lto_opts = config.lto.options();
    // The replaced output's page cache is dropped while the link runs (`outfile.rs`), unless
    // no output is written (as for ELF); the thread is not waited for.
    if !lto_opts.as_ref().is_ok_and(|o| o.index_only) {
        drop(crate::outfile::recycle_replaced(&config.output));
    }
    let mut resolver = resolve::Resolver::new(config);
    resolver.start()?;
    if resolver.resolved().has_bitcode() && !config.force_unresolved {
        resolver.report_unresolvable()?;
    }
    // What LTO leaves under way (the staging directory's removal, the link-cache entry, LLVM's
    // state being freed) goes on until the image is written, as for ELF.
    let mut _lto_cleanup = None;
    if resolver.resolved().has_bitcode() {
        // ThinLTO through the same code as ELF (thin link, in-process backends or DTLTO);
        // COFF backends never get `-fpic` (lld/COFF/LTO.cpp).
        let opts = lto_opts?;
        let out = {
            let req = crate::lto::request::LtoRequest {
                output: &config.output,
                format: crate::lto::irsymtab::ObjectFormat::Coff,
                pic: false,
                relocatable: false,
                verbose: config.verbose,
                opts: &opts,
                modules: resolver.lto_modules(),
                lazy: Vec::new(),
                preload: None,
                diag: &config.diag,
            };
            let mut trace = crate::trace::Trace::default();
            crate::lto::run_request(&req, &mut trace)?
        };
        if out.stop {
            return Ok(());
        }
        resolver.add_lto_objects(&out.objects)?;
        _lto_cleanup = out.cleanup;
    }
    let mut resolved = resolver.finish()?;
    // lld's `markLive` (`/opt:ref`) and `doICF` (`/opt:icf`), once the symbol table is final.
    let live_before = config.verbose.then(|| gc::liveness(&resolved));
    if config.do_gc() {
        let roots = gc::roots(&resolved, config);
        gc::mark_live(&mut resolved, &roots, config.mingw);
    }
    if config.do_icf() {
        for line in icf::fold(&mut resolved, config).map_err(Error::new)? {
            if config.verbose {
                config.diag.log(&line);
            }
        }
    }
    if let Some(before) = live_before {
        gc::log_discarded(&resolved, &before, config);
    }
    write::warn_missing_load_config(config, &resolved);
    let layout = layout::layout(config, &resolved)?;
    if config.debug_pdb {
        pdb::check_type_servers(&layout);
        if config.pdb.is_some() && layout.debug_dir.is_some() {
            pdb::check_checksums(&layout).map_err(Error::new)?;
        }
    }
    if config.diag.error_count() > 0 {
        // `/WX`: a warning was an error; nothing is written.
        return Err(Error::many(Vec::new()));
    }
    if let Some(p) = &config.lldmap {
        // Before the image: lld fails on an unwritable map before committing the output.
        map::write_lldmap(&layout, p)?;
    }
    if let Some(p) = &config.map {
        linkmap::write(&layout, p)?;
    }
    write::write(&layout)?;
    if let Err(e) = pdb::write(&layout) {
        // lld writes the PDB before it commits the image: no image without its PDB.
        let _ = std::fs::remove_file(&config.output);
        return Err(e);
    }
    if let Some(p) = &config.output_def {
        // lld marks an export DATA when its symbol's chunk is not executable.
        let by_name = layout.r.exports_by_table_name();
        let text = deffile::write_def_file(&layout.exports, |e| {
            let Some(&k) = by_name.get(e.name.as_str()) else { return e.data };
            let id = layout.r.exports[k].1;
            match layout.sym_chunk(id).map(|c| &layout.chunks[c]) {
                Some(c) if c.osec != usize::MAX => layout.osecs[c.osec].chars & ::object::pe::IMAGE_SCN_MEM_EXECUTE == 0,
                _ => false,
            }
        });
        std::fs::write(p, text).map_err(|e| Error::new(format!("failed to open {}: {}", p.display(), crate::error::io_error(&e))))?;
    }
    if let Some(p) = &config.out_implib {
        write_implib(&layout, p)?;
    }
    Ok(())
}

/// `/def:` without inputs: the import library alone (lld's `createImportLibrary(asLib)`), named
/// `/implib:` or after `/out:`, for the DLL the `.def` file's `LIBRARY` names (else `/out:`'s
/// name with `.dll`).
fn write_def_implib(c: &config::CoffConfig) -> Result<()> {
    let mut specs = c.exports.clone();
    specs.sort_by(|a, b| a.table_name().cmp(b.table_name()));
    let exports: Vec<implib::ImplibExport> = specs
        .iter()
        .map(|s| implib::ImplibExport {
            name: s.name.clone(),
            ordinal: s.ordinal.unwrap_or(0),
            data: s.data,
            noname: s.noname,
            private: s.private,
            constant: s.constant,
            export_as: s.export_as.clone(),
            import_name: s.import_name.clone(),
        })
        .collect();
    let out_name = c.output.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let dll = match c.import_name.as_deref() {
        Some(n) if !n.is_empty() => {
            if n.contains('.') {
                n.to_string()
            } else {
                format!("{n}.dll")
            }
        }
        _ => std::path::Path::new(&out_name).with_extension("dll").to_string_lossy().into_owned(),
    };
    let path = c.out_implib.clone().unwrap_or_else(|| c.output.with_extension("lib"));
    let bytes = implib::write_import_library(&dll, &exports);
    std::fs::write(&path, bytes).map_err(|e| Error::new(format!("failed to write {}: {}", path.display(), crate::error::io_error(&e))))
}

/// `--out-implib`: an import library for the DLL just written (lld's MinGW `.dll.a`).
fn write_implib(l: &layout::model::Layout, path: &std::path::Path) -> Result<()> {
    let by_name = l.r.exports_by_table_name();
    let exports: Vec<implib::ImplibExport> = l
        .exports
        .iter()
        .map(|e| match by_name.get(e.name.as_str()).map(|&k| &l.r.exports[k]) {
            // lld's createImportLibrary: the symbol is the export's own name; `EXPORTAS` (or a
            // `.def` file's `==name`) is what the DLL is asked for.
            Some((s, _)) => implib::ImplibExport {
                name: s.name.clone(),
                ordinal: s.ordinal.unwrap_or(0),
                data: e.data,
                noname: e.noname,
                private: e.private,
                constant: s.constant,
                export_as: s.export_as.clone(),
                import_name: s.import_name.clone(),
            },
            None => implib::ImplibExport { name: e.name.clone(), data: e.data, noname: e.noname, private: e.private, ..Default::default() },
        })
        .collect();
    let bytes = implib::write_import_library(&deffile::import_dll_name(l.config, &l.dll_name), &exports);
    // `/incremental`: an import library with the same bytes is left alone (its time stamp too),
    // so that dependent projects are not relinked (lld's createImportLibrary).
    if l.config.incremental == Some(true) && std::fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    crate::outfile::write_atomic(path, &bytes).map_err(|e| Error::new(format!("failed to write {}: {}", path.display(), crate::error::io_error(&e))))
}
