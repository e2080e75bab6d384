//! The `dtld` executable. Everything lives in the library; this only forwards argv and the exit
//! code, and turns an unexpected panic into an lld-style internal error with exit status 1.

fn main() {
    let argv: Vec<String> = std::env::args_os().skip(1).map(|a| a.to_string_lossy().into_owned()).collect();
    std::panic::set_hook(Box::new(|info| {
        eprintln!("dtld: error: internal linker error: {info}");
    }));
    let code = match std::panic::catch_unwind(|| dtld::main_with_args(&argv)) {
        Ok(c) => c,
        Err(_) => 1,
    };
    std::process::exit(code);
}
