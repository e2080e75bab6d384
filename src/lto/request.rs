//! What a link asks of LTO and what LTO hands back: `LtoRequest` (filled by the ELF and COFF
//! drivers), `LtoOutput`, and `ObjectOf` (what each LTO object was compiled from, which names
//! it). Its own module so that every way of running the backends (`distributed`, `inproc`,
//! `linkcache`, `goldindex`) reads the request without importing the stage that drives them.

use std::path::Path;

use crate::input::InputFile;

use super::bitcode::LtoModule;
use super::goldhost;
use super::irsymtab;
use super::options::LtoOptions;

/// Everything LTO needs from a link, whatever the object format: the format's driver and
/// resolver fill this in (ELF: `run`; COFF: `coff`), and `run_request` does the rest.
pub struct LtoRequest<'a> {
    pub output: &'a Path,
    /// The object format the link produces (COFF backends always generate position-independent
    /// code, but their remote command line never says `-fpic`: lld 22's DTLTO rule).
    pub format: irsymtab::ObjectFormat,
    /// Position-independent code for the backends (ELF `-pie`/`-shared`; never for COFF).
    pub pic: bool,
    /// `-r`: the backends keep each module's own relocation model (lld's `RelocModel =
    /// std::nullopt`), and the objects join a relocatable output.
    pub relocatable: bool,
    pub verbose: bool,
    pub opts: &'a LtoOptions,
    /// Loaded bitcode files, in the order they joined the link.
    pub modules: Vec<LtoModule<'a>>,
    /// Bitcode inputs that stayed lazy (index-only mode writes skip indexes for them).
    pub lazy: Vec<&'a InputFile>,
    /// The thin link's library (dtld's in-process library, or LLVMgold.so for an index-only
    /// link), loading since the inputs were read (`preload`).
    pub preload: Option<&'a goldhost::Preload>,
    /// Where the LTO step's warnings go (`--fatal-warnings` applies).
    pub diag: &'a crate::diag::Diag,
}

/// What an LTO object was compiled from, which is what names it (`object_name`): the
/// regular-LTO partition, the ThinLTO backend of module `i` (in the request's order), or
/// backend task `k` when the objects do not match the modules one to one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectOf {
    Regular,
    Module(usize),
    Task(usize),
}

impl ObjectOf {
    /// One number for the link cache's entries.
    pub fn code(self) -> u64 {
        match self {
            ObjectOf::Regular => 0,
            ObjectOf::Module(i) => 1 + 2 * i as u64,
            ObjectOf::Task(k) => 2 + 2 * k as u64,
        }
    }

    pub fn from_code(c: u64) -> Option<ObjectOf> {
        if c == 0 {
            return Some(ObjectOf::Regular);
        }
        let n = usize::try_from((c - 1) / 2).ok()?;
        Some(if c % 2 == 1 { ObjectOf::Module(n) } else { ObjectOf::Task(n) })
    }
}

/// What LTO hands back to the link.
pub struct LtoOutput {
    /// Native objects, in lld's order: the regular-LTO partition, then one per ThinLTO module.
    pub objects: Vec<InputFile>,
    /// `--thinlto-index-only`: the index files are written; the link stops here.
    pub stop: bool,
    /// The staging directory's removal, under way while the link goes on; kept until the
    /// output is written (dropping it waits for the removal).
    pub cleanup: Option<crate::staging::Removal>,
}
