//! The "skip this module" summary index for bitcode files the link did not use.
//!
//! With `--thinlto-index-only`, lld writes `<module>.thinlto.bc` even for lazy bitcode that no
//! symbol pulled in, so a distributed build system that runs one backend per input finds an
//! index for every input. That index is a combined summary with no entries and the
//! `SkipModuleByDistributedBackend` flag; clang then produces an empty object. llvm-lto2 cannot
//! write one (it only indexes modules of the link), so dtld writes this tiny bitcode file
//! itself with a minimal bitstream writer.

/// Bit-level writer for LLVM's bitstream container (little-endian 32-bit words).
struct BitWriter {
    out: Vec<u8>,
    cur: u64,
    bits: u32,
}

impl BitWriter {
    fn new() -> Self {
        BitWriter { out: Vec::new(), cur: 0, bits: 0 }
    }
    fn emit(&mut self, value: u64, width: u32) {
        self.cur |= value << self.bits;
        self.bits += width;
        while self.bits >= 8 {
            self.out.push(self.cur as u8);
            self.cur >>= 8;
            self.bits -= 8;
        }
    }
    fn vbr(&mut self, mut value: u64, width: u32) {
        let hi = 1u64 << (width - 1);
        while value >= hi {
            self.emit((value & (hi - 1)) | hi, width);
            value >>= width - 1;
        }
        self.emit(value, width);
    }
    fn align32(&mut self) {
        if self.bits > 0 {
            self.emit(0, 8 - self.bits);
        }
        while !self.out.len().is_multiple_of(4) {
            self.out.push(0);
        }
    }
    /// ENTER_SUBBLOCK; returns the position of the length word to patch.
    fn enter(&mut self, abbrev_width: u32, block_id: u64, new_width: u32) -> usize {
        self.emit(1, abbrev_width);
        self.vbr(block_id, 8);
        self.vbr(new_width as u64, 4);
        self.align32();
        let at = self.out.len();
        self.out.extend_from_slice(&[0; 4]);
        at
    }
    fn end(&mut self, abbrev_width: u32, len_at: usize) {
        self.emit(0, abbrev_width);
        self.align32();
        let words = ((self.out.len() - len_at - 4) / 4) as u32;
        self.out[len_at..len_at + 4].copy_from_slice(&words.to_le_bytes());
    }
    fn record(&mut self, abbrev_width: u32, code: u64, ops: &[u64]) {
        self.emit(3, abbrev_width);
        self.vbr(code, 6);
        self.vbr(ops.len() as u64, 6);
        for &op in ops {
            self.vbr(op, 6);
        }
    }
}

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
    let mut w = BitWriter::new();
    w.out.extend_from_slice(b"BC\xC0\xDE");
    let m = w.enter(2, MODULE_BLOCK, 3);
    w.record(3, MODULE_CODE_VERSION, &[2]);
    let s = w.enter(3, GLOBALVAL_SUMMARY_BLOCK, 4);
    w.record(4, FS_VERSION, &[summary_version]);
    w.record(4, FS_FLAGS, &[FLAG_SKIP_MODULE]);
    w.end(4, s);
    w.end(3, m);
    w.out
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
