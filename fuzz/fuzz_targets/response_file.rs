//! Response files, expanded and parsed as GNU and MinGW command lines.
#![no_main]
use std::sync::OnceLock;
static DIR: OnceLock<std::path::PathBuf> = OnceLock::new();
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let dir = DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("dtld-fuzz-rsp-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&d);
        d
    });
    dtld::fuzz::response_file(data, dir);
});
