//! The `dtld` executable. Everything lives in the library; this only forwards argv and the exit
//! code, and turns an unexpected panic into an lld-style internal error with exit status 1.

fn main() {
    dtld::heap::tune();
    let program = std::env::args_os().next().map(|a| a.to_string_lossy().into_owned()).unwrap_or_default();
    let argv: Vec<String> = std::env::args_os().skip(1).map(|a| a.to_string_lossy().into_owned()).collect();
    // Messages name the program as invoked (`ld.lld: error: ...`), as lld's do.
    dtld::set_program_name(&program);
    // The LLVMgold and GCC plugin hosts (processes of their own) and `--generate=man`.
    if let Some(code) = dtld::hidden_mode(&argv) {
        std::process::exit(code);
    }
    std::panic::set_hook(Box::new(|info| {
        dtld::print_error(&format!("internal linker error: {info}"));
    }));
    let code = std::panic::catch_unwind(|| dtld::main_process(&program, &argv)).unwrap_or(1);
    std::process::exit(code);
}
