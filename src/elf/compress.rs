//! Compressed sections: `--compress-debug-sections=zlib|zstd` output and SHF_COMPRESSED input.
//!
//! Output follows lld 22's `OutputSection::maybeCompress`: every non-alloc `.debug_*` section is
//! rendered, split into 1 MiB shards compressed in parallel, and kept compressed only if that
//! makes it smaller. zlib shards are raw deflate streams ended by a sync flush (the last one
//! finished), concatenated behind the zlib header `78 01` and followed by the Adler-32 of the
//! whole section, combined from the shards' checksums; zstd shards are complete frames, which
//! zstd reads back to back. Levels are lld's: zlib 1 (best speed), zstd's default 3. The
//! compressed section and its `Elf64_Chdr` say alignment 1, as lld writes them.
//!
//! Input: the compression header is checked and the section inflated (zlib or zstd), charged to
//! the object's inflate budget first.

use flate2::{Compress, Compression, FlushCompress};
use object::elf;
use rayon::prelude::*;

use crate::error::{Error, Result};

/// The format `--compress-debug-sections` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DebugCompression {
    Zlib,
    Zstd,
}

/// lld's shard size.
const SHARD: usize = 1 << 20;
const ZLIB_LEVEL: u32 = 1;
const ZSTD_LEVEL: i32 = 3;
const CHDR: usize = 24;

/// Whether `--compress-debug-sections` applies to a non-alloc output section of this name.
pub fn wants(kind: Option<DebugCompression>, name: &str, alloc: bool, nobits: bool, size: u64) -> bool {
    kind.is_some() && !alloc && !nobits && name.starts_with(".debug_") && size > 0
}

/// The compressed form of `raw` (header included), or None when it would not be smaller.
pub fn compress_section(kind: DebugCompression, raw: &[u8]) -> Option<Vec<u8>> {
    let shards: Vec<&[u8]> = raw.chunks(SHARD).collect();
    let n = shards.len();
    let mut out = Vec::with_capacity(CHDR + raw.len() / 3);
    let ch_type = match kind {
        DebugCompression::Zlib => elf::ELFCOMPRESS_ZLIB,
        DebugCompression::Zstd => elf::ELFCOMPRESS_ZSTD,
    };
    out.extend_from_slice(&ch_type.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&(raw.len() as u64).to_le_bytes());
    out.extend_from_slice(&1u64.to_le_bytes());
    match kind {
        DebugCompression::Zlib => {
            let parts: Vec<(Vec<u8>, u32)> = shards.par_iter().enumerate().map(|(i, s)| (deflate_shard(s, i + 1 == n), adler32(s))).collect();
            out.extend_from_slice(&[0x78, 0x01]);
            let mut sum = 1u32;
            for ((data, adler), s) in parts.iter().zip(&shards) {
                out.extend_from_slice(data);
                sum = adler32_combine(sum, *adler, s.len() as u64);
            }
            out.extend_from_slice(&sum.to_be_bytes());
        }
        DebugCompression::Zstd => {
            // zstd fails only when memory runs out; the section then stays plain.
            let parts: Vec<Vec<u8>> = shards.par_iter().map(|s| zstd::bulk::compress(s, ZSTD_LEVEL)).collect::<std::io::Result<_>>().ok()?;
            for p in &parts {
                out.extend_from_slice(p);
            }
        }
    }
    (out.len() < raw.len()).then_some(out)
}

/// One shard as a raw deflate stream: sync-flushed to a byte boundary so the next shard's
/// stream can follow it, or finished for the last shard. zlib itself (the system's, as ld.lld
/// links it, through `flate2`) with lld's parameters, so the bytes are lld's.
fn deflate_shard(input: &[u8], last: bool) -> Vec<u8> {
    let mut c = Compress::new_with_window_bits(Compression::new(ZLIB_LEVEL), false, 15);
    let flush = if last { FlushCompress::Finish } else { FlushCompress::Sync };
    let mut out = Vec::with_capacity((input.len() / 2).max(64));
    loop {
        let before = c.total_in() as usize;
        c.compress_vec(&input[before..], &mut out, flush).expect("deflate of an in-memory buffer");
        if out.len() < out.capacity() {
            break;
        }
        out.reserve(out.capacity() / 2);
    }
    debug_assert_eq!(c.total_in() as usize, input.len());
    out
}

const ADLER_BASE: u32 = 65521;

pub fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    // 5552 bytes is the most that can be summed before `b` could overflow 32 bits.
    for block in data.chunks(5552) {
        for &x in block {
            a += x as u32;
            b += a;
        }
        a %= ADLER_BASE;
        b %= ADLER_BASE;
    }
    (b << 16) | a
}

/// The Adler-32 of `A ++ B` from the checksums of `A` and `B` and the length of `B`.
pub fn adler32_combine(adler_a: u32, adler_b: u32, len_b: u64) -> u32 {
    let base = ADLER_BASE as u64;
    let rem = len_b % base;
    let (a1, b1) = ((adler_a & 0xffff) as u64, (adler_a >> 16) as u64);
    let (a2, b2) = ((adler_b & 0xffff) as u64, (adler_b >> 16) as u64);
    let a = (a1 + a2 + base - 1) % base;
    let b = (rem * a1 % base + b1 + b2 + base - rem) % base;
    ((b << 16) | a) as u32
}

/// Inflates the contents of an SHF_COMPRESSED section of `name` (its `Elf64_Chdr`, then a zlib
/// or zstd stream), charging the size it claims to `budget` first; returns the contents and
/// the alignment the header gives.
pub fn decompress(name: &[u8], d: &'static [u8], budget: &mut u64) -> Result<(&'static [u8], u64)> {
    let sec = String::from_utf8_lossy(name);
    if d.len() < CHDR {
        return Err(Error::new(format!("{sec}: corrupted compressed section header")));
    }
    let ch_type = u32::from_le_bytes(d[0..4].try_into().unwrap());
    let ch_size = u64::from_le_bytes(d[8..16].try_into().unwrap());
    let ch_align = u64::from_le_bytes(d[16..24].try_into().unwrap());
    if ch_type != elf::ELFCOMPRESS_ZLIB && ch_type != elf::ELFCOMPRESS_ZSTD {
        return Err(Error::new(format!("{sec}: unsupported compression type ({ch_type})")));
    }
    if ch_size > 1 << 32 {
        return Err(Error::new(format!("{sec}: uncompressed section is too large")));
    }
    // zlib's best ratio is about 1032:1; a larger claim is a lie, whatever the budget. (zstd
    // can do far better on runs, so only the budget bounds it.)
    if ch_type == elf::ELFCOMPRESS_ZLIB && ch_size > (d.len() as u64 - 24).saturating_mul(1032) + 64 {
        return Err(Error::new(format!("{sec}: corrupted compressed section: {ch_size} bytes cannot come from {} compressed bytes", d.len() - 24)));
    }
    if ch_size > *budget {
        return Err(Error::new(format!(
            "{sec}: compressed sections would inflate to more than 64 times the file's size (decompression bomb?); refusing to inflate {ch_size} bytes"
        )));
    }
    *budget -= ch_size;
    let out = if ch_type == elf::ELFCOMPRESS_ZLIB {
        miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(&d[CHDR..], ch_size as usize)
            .map_err(|_| Error::new(format!("{sec}: uncompress failed: zlib error")))?
    } else {
        zstd::bulk::decompress(&d[CHDR..], ch_size as usize).map_err(|e| Error::new(format!("{sec}: uncompress failed: zstd error: {e}")))?
    };
    if out.len() as u64 != ch_size {
        return Err(Error::new(format!("{sec}: uncompress failed: size mismatch")));
    }
    if !ch_align.is_power_of_two() && ch_align != 0 {
        return Err(Error::new(format!("{sec}: invalid alignment in compressed section header")));
    }
    Ok((crate::util::keep::slice(out), ch_align))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(n: usize) -> Vec<u8> {
        (0..n).map(|i| ((i * 7919) % 251) as u8 ^ (i / 4096) as u8).collect()
    }

    #[test]
    fn adler_combines() {
        let d = sample(100_000);
        for cut in [0, 1, 5552, 65521, 99_999] {
            let (a, b) = d.split_at(cut);
            assert_eq!(adler32_combine(adler32(a), adler32(b), b.len() as u64), adler32(&d));
        }
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
    }

    #[test]
    fn sharded_zlib_and_zstd_round_trip() {
        // Three shards: the concatenated sync-flushed streams must read as one zlib stream.
        let d = sample(2 * SHARD + 12345);
        for kind in [DebugCompression::Zlib, DebugCompression::Zstd] {
            let c = compress_section(kind, &d).expect("compressible");
            assert_eq!(u64::from_le_bytes(c[8..16].try_into().unwrap()), d.len() as u64);
            let mut budget = u64::MAX;
            let leaked: &'static [u8] = crate::util::keep::slice(c);
            let (back, align) = decompress(b".debug_info", leaked, &mut budget).unwrap();
            assert_eq!(back, &d[..]);
            assert_eq!(align, 1);
        }
    }

    #[test]
    fn incompressible_stays_plain() {
        assert!(compress_section(DebugCompression::Zlib, &[1, 2, 3]).is_none());
    }
}
