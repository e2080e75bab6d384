//! dtld: an x86-64 ELF (and, later, COFF) linker with integrated distributed ThinLTO.
//!
//! The whole link reads as one list of stages, each taking the previous stage's output by
//! reference (see docs/design.md):
//!
//! 1. `driver::args::parse`   — the GNU ld command line, into a `Config`;
//! 2. `input::load`           — find, map and identify every input; split archives;
//! 3. `resolve::resolve`      — parse objects and libraries, bind every symbol, pull archive
//!                              members (lld's lazy-symbol model);
//! 4. `lto::run`              — with bitcode in the link: lld's resolutions, the thin link by
//!                              the user's llvm-lto2, backends (local or distributed); the
//!                              native objects re-enter resolution (pass 2); with GCC LTO
//!                              objects, `lto::gcc::run` instead: GCC's plugin compiles them;
//! 5. `layout::layout`        — live sections, output sections, relocation scan (GOT/PLT/copy/
//!                              dynamic relocations, relaxations), addresses, symbol values;
//! 6. `write::write_output`   — fill the memory-mapped output in parallel, build-id, atomic rename.

pub mod cleanup;
pub mod coff;
pub mod diag;
pub mod driver;
pub mod elf;
pub mod error;
pub mod fuzz;
pub mod input;
pub mod layout;
pub mod lto;
pub mod map;
pub mod outfile;
pub mod reproduce;
pub mod staging;
pub mod resolve;
pub mod trace;
pub mod util;
pub mod write;
pub mod output;

use error::Result;

/// Formats an I/O error the way lld does (the OS message without Rust's "(os error N)").
pub fn io_error(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(p) => s[..p].to_string(),
        None => s,
    }
}

/// Runs one link described by `config`.
pub fn link(config: &driver::args::Config) -> Result<()> {
    let mut trace = trace::Trace::default();
    let t = std::time::Instant::now();
    // Input linker scripts may set the entry point, add undefined symbols and search
    // directories (ENTRY, EXTERN, SEARCH_DIR), so loading refines a copy of the config.
    let mut config = config.clone();
    // Fail early if the map file cannot be written, as lld does (the output is checked when
    // it is created; a failed link leaves the previous output in place either way).
    if let Some(p) = &config.map_file {
        outfile::check_writable(p).map_err(|e| error::Error::new(format!("cannot open map file {}: {}", p.display(), io_error(&e))))?;
    }
    let (loaded, read) = input::load_logged(&mut config);
    let inputs: &'static [input::InputFile] = Box::leak(reproduce::after_load(&config, loaded, &read)?.into_boxed_slice());
    let config = &config;
    trace.stage("Load input files", "", t);
    let t = std::time::Instant::now();
    let mut resolver = resolve::Resolver::start(config, inputs)?;
    trace.stage("Resolve symbols", "", t);
    lto::gcc::check(config, resolver.resolved())?;
    if resolver.resolved().has_gcc_ir() {
        // GCC's plugin compiles the GCC LTO objects; what it returns joins in pass 2 (with -r
        // too: the relocatable output carries the plugin's object instead of the claimed ones).
        let files = lto::gcc::run(config, resolver.resolved(), &mut trace)?;
        let t = std::time::Instant::now();
        resolver.add_lto_objects(files)?;
        trace.stage("Resolve LTO objects", "", t);
    }
    if config.relocatable {
        return elf::relocatable::write_relocatable(config, &resolver.finish()?).and_then(|()| finish_trace(config, &trace));
    }
    if resolver.resolved().has_bitcode() {
        // LTO replaces the bitcode files by native objects, which join the link in pass 2.
        let out = lto::run(config, resolver.resolved(), &mut trace)?;
        if out.stop {
            return finish_trace(config, &trace);
        }
        let t = std::time::Instant::now();
        resolver.add_lto_objects(out.objects)?;
        trace.stage("Resolve LTO objects", "", t);
    }
    let resolved = resolver.finish()?;
    if config.trace {
        // --trace: every file that joined the link, in the order it did.
        for &f in &resolved.load_order {
            println!("{}", resolved.inputs[f].name);
        }
    }
    let t = std::time::Instant::now();
    let layout = layout::layout(config, &resolved)?;
    trace.stage("Layout", "", t);
    let t = std::time::Instant::now();
    write::write_output(&layout)?;
    trace.stage("Write output file", "", t);
    if let Some(p) = &config.map_file {
        map::write_map(&layout, p)?;
    }
    finish_trace(config, &trace)
}

fn finish_trace(config: &driver::args::Config, trace: &trace::Trace) -> Result<()> {
    if config.verbose {
        eprintln!("{}", trace.summary());
    }
    if let Some(p) = &config.time_trace {
        let path = match (&config.time_trace_file, p.as_os_str().is_empty()) {
            (Some(f), _) => f.clone(),
            (None, false) => p.clone(),
            (None, true) => std::path::PathBuf::from(format!("{}.time-trace", config.output.display())),
        };
        trace.write(&path)?;
    }
    Ok(())
}

/// The `dtld` program: parse the command line, link, report errors as lld does.
/// Returns the process exit code.
pub fn main_with_args(argv: &[String]) -> i32 {
    main_with_program("ld.lld", argv)
}

/// Which command line a run speaks (lld's flavour selection).
enum Flavor {
    Gnu,
    MinGw,
    Link,
}

fn flavor(program: &str, argv: &[String]) -> (Flavor, usize) {
    if argv.first().map(String::as_str) == Some("-flavor") {
        return match argv.get(1).map(String::as_str) {
            Some("link") => (Flavor::Link, 2),
            _ => (Flavor::Gnu, 2),
        };
    }
    let base = program.rsplit(['/', '\\']).next().unwrap_or(program);
    let base = base.strip_suffix(".exe").unwrap_or(base);
    if base.eq_ignore_ascii_case("lld-link") || base.ends_with("-lld-link") {
        return (Flavor::Link, 0);
    }
    let expanded = driver::args::expand_response_files(argv).unwrap_or_else(|_| argv.to_vec());
    if driver::mingw::is_pe_target(&expanded) {
        return (Flavor::MinGw, 0);
    }
    (Flavor::Gnu, 0)
}

/// `main_with_args` for a program invoked as `program` (argv[0]): `lld-link` selects the MSVC
/// flavour, `-m i386pep` the MinGW one.
pub fn main_with_program(program: &str, argv: &[String]) -> i32 {
    match flavor(program, argv) {
        (Flavor::Gnu, skip) => main_gnu(&argv[skip..]),
        (Flavor::MinGw, _) => main_coff(driver::mingw::parse(argv), " (compatible with GNU linkers)", "USAGE: dtld [options] file..."),
        (Flavor::Link, skip) => main_coff(driver::link::parse(&argv[skip..]), "", "USAGE: lld-link [options] file..."),
    }
}

/// A PE link in either flavour; `version_suffix` and `usage` are what that flavour's
/// `--version` and `--help` print.
fn main_coff(parsed: Result<driver::CoffAction>, version_suffix: &str, usage: &str) -> i32 {
    let config = match parsed {
        Ok(driver::CoffAction::Link(c)) => c,
        Ok(driver::CoffAction::Version) => {
            println!("{}{version_suffix}", driver::args::version_string());
            return 0;
        }
        Ok(driver::CoffAction::Help) => {
            println!("OVERVIEW: LLVM Linker\n\n{usage}");
            return 0;
        }
        Err(e) => {
            report(&e);
            return 1;
        }
    };
    if config.print_version {
        println!("{} (compatible with GNU linkers)", driver::args::version_string());
    }
    run_link(config.threads, || coff::link(&config))
}

fn main_gnu(argv: &[String]) -> i32 {
    let action = match driver::args::parse(argv) {
        Ok(a) => a,
        Err(e) => {
            report(&e);
            return 1;
        }
    };
    let config = match action {
        driver::args::Action::Version => {
            println!("{}", driver::args::version_string());
            return 0;
        }
        driver::args::Action::Help => {
            print!("{}", driver::args::help_text());
            return 0;
        }
        driver::args::Action::Link(c) => c,
    };
    if config.print_version {
        // `-v` with inputs: print the version and link, as GNU ld and lld do.
        println!("{}", driver::args::version_string());
    }
    run_link(config.threads, || link(&config))
}

/// Runs a link (ELF or COFF) on `threads` worker threads (`--threads`; rayon's default when
/// `None`) and returns the exit code, reporting errors as lld does.
fn run_link(threads: Option<usize>, run: impl FnOnce() -> Result<()> + Send) -> i32 {
    let result = match threads {
        Some(n) => match rayon::ThreadPoolBuilder::new().num_threads(n.max(1)).build() {
            Ok(pool) => pool.install(run),
            Err(e) => Err(error::Error::new(format!("cannot create thread pool: {e}"))),
        },
        None => run(),
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            report(&e);
            // The previous output stays as it was, as with ld.lld: nothing touches it before
            // the finished image replaces it (outfile.rs).
            1
        }
    }
}

fn report(e: &error::Error) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    for m in &e.messages {
        let _ = writeln!(err, "dtld: error: {m}");
    }
}
