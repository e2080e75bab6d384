//! Archives: GNU, BSD, COFF (linker members), thin.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| dtld::fuzz::archive(data));
