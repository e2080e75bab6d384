//! dtld: an x86-64 ELF and COFF linker with integrated distributed ThinLTO.
//!
//! This file only declares the modules and the library's entry points, each handing over to the
//! module that does the work: `program.rs` (the command line's flavour, the thread pool, the
//! exit code), the plugin hosts, `diag.rs`. Each format's link is one list of stages:
//! `elf::link` and `coff::link` (see docs/design.md).

pub(crate) mod archive;
pub(crate) mod cleanup;
pub(crate) mod cmdline;
pub(crate) mod coff;
pub(crate) mod detach;
pub(crate) mod diag;
pub(crate) mod driver;
pub(crate) mod dwarf;
pub(crate) mod elf;
pub(crate) mod error;
pub mod fuzz;
pub mod heap;
pub(crate) mod input;
pub(crate) mod lto;
pub(crate) mod outfile;
pub(crate) mod output;
pub(crate) mod program;
pub(crate) mod staging;
pub(crate) mod tar;
pub(crate) mod trace;
pub(crate) mod util;

/// The hidden modes of the `dtld` program that are not links: the LLVMgold host and the host of
/// GCC's LTO plugin (each a process of its own: the plugins may exit the process), and
/// `--generate=man`. Returns the exit code when argv asks for one of them.
pub fn hidden_mode(argv: &[String]) -> Option<i32> {
    match argv.first().map(String::as_str) {
        Some(f) if f == lto::goldhost::HELPER_FLAG => Some(lto::goldhost::helper_main(argv)),
        Some(f) if f == elf::gcc_lto::host::HELPER_FLAG => Some(elf::gcc_lto::host::helper_main(argv)),
        _ => driver::manpage::intercept(argv),
    }
}

/// Names the program in every message by its argv[0] (`diag::set_program`), as lld does.
pub fn set_program_name(argv0: &str) {
    diag::set_program(argv0);
}

/// The name messages start with (`set_program_name`).
pub fn program_name() -> &'static str {
    diag::program()
}

/// `<program>: error: <msg>` on stderr, for the executable's panic hook.
pub fn print_error(msg: &str) {
    diag::error_plain(msg);
}

/// The `dtld` program: parse the command line, link, report errors as lld does.
/// Returns the process exit code.
pub fn main_with_args(argv: &[String]) -> i32 {
    main_with_program("ld.lld", argv)
}

/// `main_with_args` for a program invoked as `program` (argv[0]): `lld-link` selects the MSVC
/// flavour, `-m i386pep` the MinGW one.
pub fn main_with_program(program: &str, argv: &[String]) -> i32 {
    program::run(program, argv, false)
}

/// The `dtld` executable's entry: `main_with_program`, except that the link may finish in a
/// forked child that releases the caller as soon as the output is in place (detach.rs).
pub fn main_process(program: &str, argv: &[String]) -> i32 {
    program::run(program, argv, true)
}
