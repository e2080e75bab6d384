//! The `dtld` executable. Everything lives in the library; this only forwards argv and the exit
//! code, and turns an unexpected panic into an lld-style internal error with exit status 1.

fn main() {
    let program = std::env::args_os().next().map(|a| a.to_string_lossy().into_owned()).unwrap_or_default();
    let argv: Vec<String> = std::env::args_os().skip(1).map(|a| a.to_string_lossy().into_owned()).collect();
    // The hidden LLVMgold host (src/lto/goldhost.rs): a process of its own, because the plugin
    // exits the process when it has written the index files.
    if argv.first().map(String::as_str) == Some(dtld::lto::goldhost::HELPER_FLAG) {
        std::process::exit(dtld::lto::goldhost::helper_main(&argv));
    }
    // The hidden host of GCC's LTO plugin (src/lto/gcc/host.rs).
    if argv.first().map(String::as_str) == Some(dtld::elf::gcc_lto::host::HELPER_FLAG) {
        std::process::exit(dtld::elf::gcc_lto::host::helper_main(&argv));
    }
    // `dtld --generate=man` (hidden): the man page, for packagers (src/driver/manpage.rs).
    if let Some(code) = dtld::driver::manpage::intercept(&argv) {
        std::process::exit(code);
    }
    std::panic::set_hook(Box::new(|info| {
        eprintln!("dtld: error: internal linker error: {info}");
    }));
    let code = std::panic::catch_unwind(|| dtld::main_with_program(&program, &argv)).unwrap_or(1);
    std::process::exit(code);
}
