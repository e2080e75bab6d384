//! The `dtld` program around a link: which command line it is (lld's flavours: GNU ld, MinGW,
//! lld-link, and `lld-link /lib`), `--version` and `--help`, the thread pool the link runs on
//! (`--threads`), the forked child that releases the caller early (`detach.rs`), and the exit
//! code, with the errors reported as lld reports them. `lib.rs` hands every program entry here.

use crate::error::{self, Result};
use crate::{coff, detach, diag, driver, elf};

/// The program invoked as `program` (argv[0]) with `argv`; `may_fork`: the link may finish in
/// a detached child (the executable, not the library's callers). Returns the exit code.
pub(crate) fn run(program: &str, argv: &[String], may_fork: bool) -> i32 {
    match driver::flavor(program, argv) {
        (driver::Flavor::Gnu, skip) => main_gnu(&argv[skip..], may_fork),
        (driver::Flavor::MinGw, _) => main_coff(driver::mingw::parse(argv), "", driver::mingw::help_text(), may_fork),
        // `lld-link /lib ...` is llvm-lib.
        (driver::Flavor::Link, skip) if driver::lib::is_lib(&argv[skip..]) => driver::lib::main(&argv[skip + 1..]),
        (driver::Flavor::Link, skip) => main_coff(driver::link::parse(&argv[skip..]), "", driver::link::help_text(), may_fork),
    }
}

/// A PE link in either flavour; `version_suffix` and `help` are what that flavour's
/// `--version` and `--help` print.
fn main_coff(parsed: Result<driver::CoffAction>, version_suffix: &str, help: String, may_fork: bool) -> i32 {
    let mut config = match parsed {
        Ok(driver::CoffAction::Link(c)) => c,
        Ok(driver::CoffAction::Version) => {
            println!("{}{version_suffix}", driver::version_string());
            return 0;
        }
        Ok(driver::CoffAction::Help) => {
            print!("{help}");
            return 0;
        }
        Err(e) => {
            report(&e);
            return 1;
        }
    };
    if !check_coff_llvm_options(&mut config) {
        return 1;
    }
    if config.print_version {
        println!("{} (compatible with GNU linkers)", driver::version_string());
    }
    // coff::link applies `/errorlimit:` itself, with the flavour's wording of lld's closing line
    // (`/errorlimit:0` or `--error-limit=0`), so the reporter here prints every message it gets.
    let diag = diag::Diag::new(false, 0, Some(config.diag.color));
    run_link(config.threads, &diag, may_fork, || coff::link(&config))
}

/// lld-link's parse of `/mllvm:` (MinGW's `-mllvm` too) once the command line is read: all
/// options in one parse by LLVM's parser (`lto::cloptions`); a failure prints LLVM's words as
/// they are and ends the run with exit status 1, as lld-link's `cl::ParseCommandLineOptions`
/// does. Returns whether the link goes on.
fn check_coff_llvm_options(config: &mut coff::config::CoffConfig) -> bool {
    if config.lto.mllvm.is_empty() {
        return true;
    }
    let checks: Vec<(String, String)> = config.lto.mllvm.iter().map(|m| ("/mllvm:".to_string(), m.clone())).collect();
    let opts = config.lto.options().unwrap_or_else(|_| config.lto.options.clone());
    let checked = crate::lto::cloptions::check(&opts, &checks, crate::lto::cloptions::Style::LldLink);
    if let Some(w) = &checked.warning {
        diag::warn_plain(w);
    }
    if let Some(words) = checked.errors.first() {
        diag::verbatim(words);
        return false;
    }
    config.lto.options.llvm_loaded = checked.loaded;
    true
}

fn main_gnu(argv: &[String], may_fork: bool) -> i32 {
    let action = match driver::gnu::parse(argv) {
        Ok(a) => a,
        Err(e) => {
            report(&e);
            return 1;
        }
    };
    let config = match action {
        driver::Action::Version => {
            println!("{}", driver::version_string());
            return 0;
        }
        driver::Action::Help => {
            print!("{}", driver::gnu::help_text());
            return 0;
        }
        driver::Action::Link(c) => c,
    };
    if config.print_version {
        // `-v` with inputs: print the version and link, as GNU ld and lld do.
        println!("{}", driver::version_string());
    }
    let diag = config.diag.clone();
    run_link(config.threads, &diag, may_fork && config.fork, || elf::link(&config))
}

/// Runs a link on the thread pool `threads` asks for; with `fork`, in a child process that
/// releases this one when the link is done (detach.rs: forking happens here, before any thread
/// exists).
fn run_link(threads: Option<usize>, diag: &diag::Diag, fork: bool, run: impl FnOnce() -> Result<()> + Send) -> i32 {
    let detached = detach::fork(fork);
    let code = link_code(threads, diag, run);
    if let Some(d) = detached {
        d.finish(code);
    }
    code
}

fn link_code(threads: Option<usize>, diag: &diag::Diag, run: impl FnOnce() -> Result<()> + Send) -> i32 {
    // The link runs on a worker of its own pool (`--threads`, else one thread per core), not on
    // the main thread: each parallel step of the link then starts from a worker, which shares
    // its work directly, instead of handing it to the pool from outside and sleeping until it
    // is done (a wake-up per step; OpenSSL's native link was 5-8% faster, measured; making the
    // main thread a worker, rayon's `use_current_thread`, was 8% slower than this). The workers
    // get the main thread's 8 MiB stack, as the link had on it, and the thread that links takes
    // over the parent-death signal from the main thread, so that `detach::shielded` (a
    // per-thread setting) still protects the output's final rename.
    let mut pool = rayon::ThreadPoolBuilder::new().stack_size(8 << 20);
    if let Some(n) = threads {
        pool = pool.num_threads(n.max(1));
    }
    let death = detach::DeathSignal::take();
    let result = match pool.build() {
        Ok(pool) => pool.install(|| {
            death.arm();
            run()
        }),
        Err(e) => Err(error::Error::new(format!("cannot create thread pool: {e}"))),
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            diag.report(&e);
            // The previous output stays as it was, as with ld.lld: nothing touches it before
            // the finished image replaces it (outfile.rs).
            1
        }
    }
}

/// A command line that cannot be parsed: its errors, before there is a link's `Diag` (one
/// without colours or a limit, which separates a message of several lines from the next by an
/// empty line, as lld's do: LLVM's words on an unknown `-mllvm` option take two).
fn report(e: &error::Error) {
    diag::Diag::new(false, 0, Some(false)).report(e);
}
