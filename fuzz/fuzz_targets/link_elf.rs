//! The whole link (command line, loading, resolution, layout, writing) on a container of
//! files (dtld::fuzz::split_container), in a scratch directory under /dev/shm.
#![no_main]
use std::sync::OnceLock;
static DIR: OnceLock<std::path::PathBuf> = OnceLock::new();
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let dir = DIR.get_or_init(|| {
        let base = if std::path::Path::new("/dev/shm").is_dir() { std::path::PathBuf::from("/dev/shm") } else { std::env::temp_dir() };
        base.join(format!("dtld-fuzz-link-elf-{}", std::process::id()))
    });
    dtld::fuzz::link(data, dir, false);
});
