//! COFF objects (regular, /bigobj, GNU dlltool's import members) and short import objects,
//! told apart by their signature as the COFF reader does.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if data.len() >= 6 && data[0..4] == [0, 0, 0xff, 0xff] && data[4..6] == [0, 0] {
        dtld::fuzz::short_import(data);
    } else {
        dtld::fuzz::coff_object(data);
    }
});
