//! The "skip this module" summary index for bitcode files the link did not use.
//!
//! With `--thinlto-index-only`, lld writes `<module>.thinlto.bc` even for lazy bitcode that no
//! symbol pulled in, so a distributed build system that runs one backend per input finds an
//! index for every input. That index is a combined summary with no entries and the
//! `SkipModuleByDistributedBackend` flag; clang then produces an empty object. llvm-lto2 cannot
//! write one (it only indexes modules of the link), so dtld writes this tiny bitcode file
//! itself (`bitstream::BitWriter`).

use dtld_bitcode::bitstream::BitWriter;

const MODULE_BLOCK: u64 = 8;
const GLOBALVAL_SUMMARY_BLOCK: u64 = 20;
const MODULE_CODE_VERSION: u64 = 1;
const FS_VERSION: u64 = 10;
const FS_FLAGS: u64 = 20;
/// `ModuleSummaryIndex::BitcodeSummaryVersion` of LLVM 22 (what its shards carry).
pub const DEFAULT_SUMMARY_VERSION: u64 = 12;
/// `SkipModuleByDistributedBackend` in the index flags.
const FLAG_SKIP_MODULE: u64 = 2;

/// A combined summary index whose only content is the skip-module flag.
pub fn skip_module_index_v(summary_version: u64) -> Vec<u8> {
    let mut w = BitWriter::default();
    w.bytes(b"BC\xC0\xDE");
    let m = w.enter(2, MODULE_BLOCK, 3);
    w.record(3, MODULE_CODE_VERSION, &[2]);
    let s = w.enter(3, GLOBALVAL_SUMMARY_BLOCK, 4);
    w.record(4, FS_VERSION, &[summary_version]);
    w.record(4, FS_FLAGS, &[FLAG_SKIP_MODULE]);
    w.end(4, s);
    w.end(3, m);
    w.finish()
}

pub fn skip_module_index() -> Vec<u8> {
    skip_module_index_v(DEFAULT_SUMMARY_VERSION)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_formed_and_read_by_llvm() {
        let data = skip_module_index();
        assert_eq!(&data[..4], b"BC\xC0\xDE");
        assert_eq!(data.len() % 4, 0);
        let dis = std::path::Path::new("/usr/lib/llvm-22/bin/llvm-bcanalyzer");
        if !dis.exists() {
            return;
        }
        let dir = std::env::temp_dir().join(format!("dtld-skipindex-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("skip.thinlto.bc");
        std::fs::write(&p, &data).unwrap();
        let out = std::process::Command::new(dis).arg("-dump").arg(&p).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let _ = std::fs::remove_dir_all(&dir);
        assert!(out.status.success(), "{text}");
        assert!(text.contains("<FLAGS op0=2/>"), "{text}");
        assert!(text.contains("<VERSION op0=12/>"), "{text}");
    }
}
