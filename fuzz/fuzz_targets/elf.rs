//! ELF objects and shared libraries, told apart by e_type as the loader does.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if data.len() > 17 && data[16] == 3 {
        dtld::fuzz::elf_shared(data);
    } else {
        dtld::fuzz::elf_object(data);
    }
});
