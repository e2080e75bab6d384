//! Architecture knowledge for dtld, kept in one pure crate.
//!
//! Generic linker code never names an `R_X86_64_*` constant: it asks this crate what a raw
//! relocation *means* (`RelKind`: absolute, PC-relative, via the GOT, via the PLT, one of the TLS
//! models, ...) and how wide the field is, and it asks this crate to rewrite instruction bytes when a
//! relaxation applies. Policy — whether a symbol needs a GOT slot, a PLT entry, a copy relocation or a
//! dynamic relocation — lives in the linker's layout stage and works on `RelKind` only (the split lld
//! makes between `Arch/X86_64.cpp` and `Relocations.cpp`, and wild between `linker-utils` and
//! `layout.rs`). Nothing here does I/O, so every rule is unit-testable.

#![forbid(unsafe_code)]

pub mod coff_x86_64;
pub mod x86_64;
