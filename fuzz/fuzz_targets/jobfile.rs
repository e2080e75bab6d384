//! The DTLTO job file as the distributors read it (ld.lld 22's JSON schema).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = dtld_distributor::jobfile::parse(data);
});
