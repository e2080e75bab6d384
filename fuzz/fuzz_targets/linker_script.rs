#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| dtld::fuzz::linker_script(data));
