//! SHF_MERGE sections: deduplicated the way lld does, so that sizes and contents match.
//!
//! A mergeable section is a sequence of pieces — NUL-terminated strings (`SHF_STRINGS`, such as
//! `.rodata.str1.1`, `.debug_str`, `.comment`) or fixed-size constants (`.rodata.cst16`). Pieces
//! that are byte-for-byte equal are stored once, and relocations into them are redirected to
//! the one copy. Every input section of one output section with the same flags and entry size
//! (and, for strings, the same alignment) feeds one merged chunk. As in lld:
//!
//! * at `-O1` (the default) pieces are spread over 32 shards by the xxh3 hash of their bytes;
//!   each shard keeps the first copy of each piece in input order, every piece aligned to the
//!   chunk's alignment, and the shards are laid out one after the other. The shards are
//!   independent, so they are built in parallel — this is what makes a 20 MB `.debug_str` cheap;
//! * at `-O2`, strings are tail-merged: a string that ends another one is stored inside it
//!   (`"bar"` inside `"foobar"`), with the strings laid out in lld's order (sorted by their
//!   reversed bytes, longest first);
//! * under `--gc-sections`, a piece of an allocated section that no live code refers to is left
//!   out (the liveness stage records the referenced offsets).

use object::elf;
use rayon::prelude::*;

use crate::elf::symtab::{FileId, Resolved};
use crate::elf::types::LE;
use crate::error::{Error, Result};
use crate::util::fasthash::{FastMap, HashKeyedMap};

/// lld's shard count (`MergeNoTailSection::numShards`).
const SHARDS: usize = 32;

/// One deduplicated output chunk.
pub struct Merged {
    /// The merged bytes as parts at their offsets (the parallel merge's shards, or one part),
    /// `len` bytes in all with zeros between parts: the writer copies the parts into the output
    /// side by side (`write_to`), never first into one buffer.
    parts: Vec<(u64, Vec<u8>)>,
    len: u64,
    pub align: u64,
    /// For each contributing input section: its pieces as (input offset, output offset), sorted
    /// by input offset (a dead piece has output offset 0, as in lld).
    pub pieces: FastMap<(FileId, u32), PieceList>,
}

impl Merged {
    /// The size of the merged contents.
    pub fn size(&self) -> u64 {
        self.len
    }

    /// Writes the merged contents into `dst` (`size()` bytes), the parts in parallel.
    pub fn write_to(&self, dst: &mut [u8]) {
        let mut places: Vec<(&mut [u8], &[u8])> = Vec::with_capacity(self.parts.len());
        let mut rest: &mut [u8] = dst;
        let mut at = 0u64;
        for (off, b) in &self.parts {
            let (gap, from) = std::mem::take(&mut rest).split_at_mut((off - at) as usize);
            gap.fill(0);
            let (mine, after) = from.split_at_mut(b.len());
            places.push((mine, b));
            rest = after;
            at = off + b.len() as u64;
        }
        rest.fill(0);
        places.into_par_iter().for_each(|(d, b)| d.copy_from_slice(b));
    }
}

/// The pieces of one input section and an index to find the piece holding an offset.
pub struct PieceList {
    /// (input offset, output offset), sorted by input offset.
    pub list: Vec<(u64, u64)>,
    /// For every `BUCKET`-byte block of the input section: how many pieces start before it.
    /// A lookup then looks only at the pieces starting in the offset's block, instead of a
    /// binary search over all of them (a large debug link makes millions of lookups into
    /// `.debug_str` pieces, in no particular order). Empty for a section too large for it.
    buckets: Vec<u32>,
    /// One bit per piece, set for a dead one (left out under `--gc-sections`); empty when every
    /// piece is live. lld leaves out of `.symtab` a local symbol whose piece is dead.
    dead: Vec<u64>,
}

/// log2 of the bytes per bucket: strings average a few dozen bytes, so a bucket holds a few
/// pieces, and the index is 1/32 of the section's size.
const BUCKET: u32 = 7;

impl PieceList {
    fn new(list: Vec<(u64, u64)>, size: usize, dead: Vec<u64>) -> PieceList {
        let mut buckets = Vec::new();
        if u32::try_from(list.len()).is_ok() {
            let n = (size >> BUCKET) + 2;
            buckets.reserve_exact(n);
            let mut k = 0;
            for b in 0..n as u64 {
                while k < list.len() && list[k].0 < b << BUCKET {
                    k += 1;
                }
                buckets.push(k as u32);
            }
        }
        PieceList { list, buckets, dead }
    }

    /// The piece (input offset, output offset) holding input offset `off`: the last one that
    /// starts at or before it; `None` when `off` lies before the first piece.
    pub fn find(&self, off: u64) -> Option<(u64, u64)> {
        self.index(off).map(|k| self.list[k])
    }

    /// Whether the piece holding input offset `off` is in the output (an offset before the
    /// first piece counts as live).
    pub fn is_live(&self, off: u64) -> bool {
        match self.index(off) {
            Some(k) => !is_dead(&self.dead, k),
            None => true,
        }
    }

    /// Index in `list` of the piece holding input offset `off` (see `find`).
    fn index(&self, off: u64) -> Option<usize> {
        let p = &self.list;
        let b = (off >> BUCKET) as usize;
        let k = match (self.buckets.get(b), self.buckets.get(b + 1)) {
            // Pieces before the block start at or before `off`, those after it start after.
            (Some(&lo), Some(&hi)) => lo as usize + p[lo as usize..hi as usize].iter().take_while(|x| x.0 <= off).count(),
            _ => p.partition_point(|x| x.0 <= off),
        };
        k.checked_sub(1)
    }
}

/// One piece of an input section: 16 bytes (a large debug link splits millions). Offsets are
/// 32-bit, as in lld's `SectionPiece`: a mergeable input section is at most 4 GiB.
struct Piece {
    start: u32,
    end: u32,
    hash: u64,
}

/// Whether piece `k` is set in `dead` (one bit per piece; an empty vector: none is).
fn is_dead(dead: &[u64], k: usize) -> bool {
    dead.get(k / 64).is_some_and(|w| w >> (k % 64) & 1 != 0)
}

/// An input section's pieces, and one bit per piece set for a dead one (empty when every piece
/// is live, the common case).
struct Pieces {
    list: Vec<Piece>,
    dead: Vec<u64>,
}

impl Pieces {
    fn live(&self, j: usize) -> bool {
        !is_dead(&self.dead, j)
    }

    /// The live pieces with their index.
    fn live_pieces(&self) -> impl Iterator<Item = (usize, &Piece)> {
        self.list.iter().enumerate().filter(|&(j, _)| self.live(j))
    }
}

/// Splits one input section into pieces: strings end at their NUL character (of the entry
/// size), other sections are fixed-size entries.
fn split(r: &Resolved, f: FileId, s: u32, live_refs: Option<&[u64]>) -> Result<Pieces> {
    let o = r.obj(f);
    let sec = &o.sections[s as usize];
    let ent = sec.hdr.sh_entsize.get(LE).max(1) as usize;
    let strings = sec.flags & elf::SHF_STRINGS as u64 != 0;
    let d = sec.data;
    if u32::try_from(d.len()).is_err() {
        return Err(Error::new(format!("{}:({}): mergeable section is larger than 4 GiB", o.input.name, String::from_utf8_lossy(sec.name))));
    }
    let mut out = Pieces { list: Vec::new(), dead: Vec::new() };
    let mut off = 0usize;
    while off < d.len() {
        let end = if strings && ent == 1 {
            // Byte strings (.debug_str, .rodata.str1.1: nearly every merge section) end at the
            // next NUL; memchr finds it a word at a time.
            match memchr::memchr(0, &d[off..]) {
                Some(n) => off + n + 1,
                None => return Err(Error::new(format!("{}:({}): string is not null terminated", o.input.name, String::from_utf8_lossy(sec.name)))),
            }
        } else if strings {
            let mut e = off;
            loop {
                if e + ent > d.len() {
                    return Err(Error::new(format!("{}:({}): string is not null terminated", o.input.name, String::from_utf8_lossy(sec.name))));
                }
                if d[e..e + ent].iter().all(|&b| b == 0) {
                    break e + ent;
                }
                e += ent;
            }
        } else {
            (off + ent).min(d.len())
        };
        // Dead pieces (no live reference into them) stay out of the output; a reference from
        // debug information into one resolves to the chunk's start (lld's output offset 0).
        let live = live_refs.is_none_or(|refs| {
            let k = refs.partition_point(|&x| x < off as u64);
            refs.get(k).is_some_and(|&x| x < end as u64)
        });
        let j = out.list.len();
        if !live {
            out.dead.resize(j / 64 + 1, 0);
            out.dead[j / 64] |= 1 << (j % 64);
        }
        // lld hashes a string without its terminator (and a constant whole).
        let body = if strings { &d[off..end - ent] } else { &d[off..end] };
        let hash = if live { xxhash_rust::xxh3::xxh3_64(body) } else { 0 };
        out.list.push(Piece { start: off as u32, end: end as u32, hash });
        off = end;
    }
    if !out.dead.is_empty() {
        out.dead.resize(out.list.len().div_ceil(64), 0);
    }
    Ok(out)
}

/// lld's shard of a piece: the top 5 bits of the 31-bit hash it keeps (the low 32 bits of xxh3,
/// shifted right once).
fn shard_of(hash: u64) -> usize {
    (((hash as u32) >> 1) >> (31 - SHARDS.trailing_zeros())) as usize
}

fn align_up(v: u64, a: u64) -> u64 {
    if a <= 1 {
        v
    } else {
        (v + a - 1) & !(a - 1)
    }
}

/// One shard's pieces, in input order as (hash, bytes): the first copy of every distinct piece
/// appended to the shard's buffer (each at `align`), and each piece's offset in it.
///
/// Keyed by the piece's xxh3 (computed by `split`), not hashed again. A hit is confirmed
/// against the copy already in the buffer, which is small and in cache, rather than against
/// the first copy in its input file: most pieces of a debug link are duplicates, and reading
/// both far-apart copies cost half of this loop. Pieces whose hash is another string's (a
/// 64-bit collision) are deduplicated by their bytes in `collided`.
fn dedup_shard<'a>(pieces: &[(u64, &'a [u8])], align: u64) -> (Vec<u8>, Vec<u64>) {
    let count = pieces.len();
    let mut buf: Vec<u8> = Vec::new();
    let append = |buf: &mut Vec<u8>, b: &[u8]| {
        let o = align_up(buf.len() as u64, align);
        buf.resize(o as usize, 0);
        buf.extend_from_slice(b);
        o
    };
    let mut first: HashKeyedMap<(u64, u32)> = HashKeyedMap::with_capacity_and_hasher(count, Default::default());
    let mut collided: FastMap<&'a [u8], u64> = FastMap::default();
    let offs = (0..count)
        .map(|i| {
            // A shard's pieces are a sparse walk over the inputs' bytes: each would be a cache
            // miss; the bytes a few pieces ahead are fetched while this one is looked up.
            if let Some(ahead) = pieces.get(i + PREFETCH) {
                prefetch(ahead.1);
            }
            pieces[i]
        })
        .map(|(hash, b)| match first.entry(hash) {
            std::collections::hash_map::Entry::Vacant(e) => {
                let o = append(&mut buf, b);
                e.insert((o, b.len() as u32));
                o
            }
            std::collections::hash_map::Entry::Occupied(e) => {
                let (o, n) = *e.get();
                if n as usize == b.len() && &buf[o as usize..o as usize + b.len()] == b {
                    o
                } else {
                    *collided.entry(b).or_insert_with(|| append(&mut buf, b))
                }
            }
        })
        .collect();
    (buf, offs)
}

/// How many pieces ahead `dedup_shard` fetches.
const PREFETCH: usize = 12;

/// Asks the CPU to bring the start of `b` into the cache.
#[inline(always)]
fn prefetch(b: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(b.as_ptr() as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = b;
}

/// A merged chunk's contents (output offset, bytes), its length and each input's pieces.
type MergedParts = (Vec<(u64, Vec<u8>)>, u64, Vec<PieceList>);

/// `merge`'s tail merging of strings (`-O2`): one table, each string followed by the ones it
/// ends, which then share its bytes. Returns the contents, their length and each input's pieces.
fn merge_tail(r: &Resolved, inputs: &[(FileId, u32)], split: Vec<Pieces>, align: u64) -> MergedParts {
    let bytes = |k: usize, p: &Piece| -> &'static [u8] {
        let (f, s) = inputs[k];
        &r.obj(f).sections[s as usize].data[p.start as usize..p.end as usize]
    };
    // Output offset of every live piece, per input section, in piece order.
    let mut out_off: Vec<Vec<u64>> = split.iter().map(|v| vec![0; v.list.len()]).collect();
    // One table; strings sorted so that each is followed by the ones it ends.
    let mut index: FastMap<&'static [u8], usize> = FastMap::default();
    let mut uniq: Vec<&'static [u8]> = Vec::new();
    for (k, pieces) in split.iter().enumerate() {
        for (_, p) in pieces.live_pieces() {
            let b = bytes(k, p);
            index.entry(b).or_insert_with(|| {
                uniq.push(b);
                uniq.len() - 1
            });
        }
    }
    let mut order: Vec<usize> = (0..uniq.len()).collect();
    // Descending by reversed bytes; a string that is a suffix of another sorts after it.
    order.sort_by(|&a, &b| uniq[b].iter().rev().cmp(uniq[a].iter().rev()));
    let mut offs = vec![0u64; uniq.len()];
    let mut size = 0u64;
    let mut previous: &[u8] = &[];
    let mut layout: Vec<(u64, usize)> = Vec::with_capacity(uniq.len());
    for i in order {
        let sbytes = uniq[i];
        if previous.ends_with(sbytes) {
            let pos = size - sbytes.len() as u64;
            if pos.is_multiple_of(align) {
                offs[i] = pos;
                continue;
            }
        }
        size = align_up(size, align);
        offs[i] = size;
        layout.push((size, i));
        size += sbytes.len() as u64;
        previous = sbytes;
    }
    let mut buf = vec![0u8; size as usize];
    for (o, i) in layout {
        buf[o as usize..o as usize + uniq[i].len()].copy_from_slice(uniq[i]);
    }
    for (k, pieces) in split.iter().enumerate() {
        for (j, p) in pieces.live_pieces() {
            out_off[k][j] = offs[index[bytes(k, p)]];
        }
    }
    let len = buf.len() as u64;
    let parts = vec![(0, buf)];
    let lists = inputs
        .par_iter()
        .zip(split.into_par_iter().zip(out_off))
        .map(|(&(f, s), (ps, offs))| {
            let list = ps.list.iter().zip(offs).map(|(p, o)| (p.start as u64, o)).collect();
            PieceList::new(list, r.obj(f).sections[s as usize].data.len(), ps.dead)
        })
        .collect();
    (parts, len, lists)
}

/// `merge`'s deduplication without tail merging, sharded by hash and parallel in every step.
/// Returns the contents, their length and each input's pieces.
fn merge_sharded(r: &Resolved, inputs: &[(FileId, u32)], split: Vec<Pieces>, align: u64) -> MergedParts {
    let bytes = |k: usize, p: &Piece| -> &'static [u8] {
        let (f, s) = inputs[k];
        &r.obj(f).sections[s as usize].data[p.start as usize..p.end as usize]
    };
    // Every step over the pieces runs in parallel (a large debug link has millions): each
    // input groups its live pieces by shard (a counting sort that keeps piece order), each
    // shard deduplicates its groups in input order, the shards' buffers are copied into
    // place side by side, and each input then reads its pieces' offsets from the shards.
    let grouped: Vec<(Vec<(u64, &'static [u8])>, [u32; SHARDS + 1])> = split
        .par_iter()
        .enumerate()
        .map(|(k, pieces)| {
            let mut bounds = [0u32; SHARDS + 1];
            for (_, p) in pieces.live_pieces() {
                bounds[shard_of(p.hash) + 1] += 1;
            }
            for i in 0..SHARDS {
                bounds[i + 1] += bounds[i];
            }
            let mut next = bounds;
            // Each piece's hash and bytes, grouped by shard: a shard then reads its pieces
            // from a few runs of consecutive records instead of one `Piece` per cache line.
            let mut order = vec![(0u64, &[][..]); bounds[SHARDS] as usize];
            for (_, p) in pieces.live_pieces() {
                let sh = shard_of(p.hash);
                order[next[sh] as usize] = (p.hash, bytes(k, p));
                next[sh] += 1;
            }
            (order, bounds)
        })
        .collect();
    let shards: Vec<(Vec<u8>, Vec<u64>)> = (0..SHARDS)
        .into_par_iter()
        .map(|sh| {
            let count = grouped.iter().map(|(_, b)| (b[sh + 1] - b[sh]) as usize).sum();
            let mut list: Vec<(u64, &[u8])> = Vec::with_capacity(count);
            for (order, b) in &grouped {
                list.extend_from_slice(&order[b[sh] as usize..b[sh + 1] as usize]);
            }
            dedup_shard(&list, align)
        })
        .collect();
    let mut base = [0u64; SHARDS];
    let mut off = 0u64;
    for (i, (buf, _)) in shards.iter().enumerate() {
        if !buf.is_empty() {
            off = align_up(off, align);
        }
        base[i] = off;
        off += buf.len() as u64;
    }
    let len = off;
    let (bufs, offs): (Vec<Vec<u8>>, Vec<Vec<u64>>) = shards.into_iter().unzip();
    let parts = bufs.into_iter().enumerate().filter(|(_, b)| !b.is_empty()).map(|(i, b)| (base[i], b)).collect();
    // Where each input's pieces start in each shard's list.
    let mut starts: Vec<[u32; SHARDS]> = Vec::with_capacity(grouped.len());
    let mut acc = [0u32; SHARDS];
    for (_, b) in &grouped {
        starts.push(acc);
        for sh in 0..SHARDS {
            acc[sh] += b[sh + 1] - b[sh];
        }
    }
    let lists = inputs
        .par_iter()
        .zip(split.into_par_iter().zip(starts))
        .map(|(&(f, s), (ps, mut at))| {
            let list = ps
                .list
                .iter()
                .enumerate()
                .map(|(j, p)| {
                    let o = if ps.live(j) {
                        let sh = shard_of(p.hash);
                        let o = base[sh] + offs[sh][at[sh] as usize];
                        at[sh] += 1;
                        o
                    } else {
                        0
                    };
                    (p.start as u64, o)
                })
                .collect();
            PieceList::new(list, r.obj(f).sections[s as usize].data.len(), ps.dead)
        })
        .collect();
    (parts, len, lists)
}

/// Builds one merged chunk from `inputs` (in input order). `merge_refs`: under
/// `--gc-sections`, the referenced offsets of allocated merge sections. `tail`: tail-merge
/// strings (`-O2`).
pub fn merge(r: &Resolved, inputs: &[(FileId, u32)], merge_refs: Option<&FastMap<(FileId, u32), Vec<u64>>>, tail: bool) -> Result<Merged> {
    let first = &r.obj(inputs[0].0).sections[inputs[0].1 as usize];
    let strings = first.flags & elf::SHF_STRINGS as u64 != 0;
    let align = inputs.iter().map(|&(f, s)| r.obj(f).sections[s as usize].align).max().unwrap_or(1).max(1);
    let split: Vec<Pieces> = inputs
        .par_iter()
        .map(|&(f, s)| {
            let sec = &r.obj(f).sections[s as usize];
            let refs = merge_refs.filter(|_| sec.flags & elf::SHF_ALLOC as u64 != 0).map(|m| {
                let mut v = m.get(&(f, s)).cloned().unwrap_or_default();
                v.sort_unstable();
                v
            });
            split(r, f, s, refs.as_deref())
        })
        .collect::<Result<_>>()?;
    let (parts, len, lists) = if tail && strings { merge_tail(r, inputs, split, align) } else { merge_sharded(r, inputs, split, align) };
    let pieces = inputs.iter().copied().zip(lists).collect();
    Ok(Merged { parts, len, align, pieces })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bucket index gives the answer a binary search gives, for every offset of the
    /// section and past it, and for pieces longer and shorter than a bucket.
    /// Pieces are deduplicated by their bytes, the first copy kept in input order, also when
    /// different strings share a hash (forged here: every piece gets hash 7) and when a string
    /// shares its hash with a prefix of a longer one.
    #[test]
    fn shard_dedup_is_by_bytes_even_on_hash_collisions() {
        let pieces: [&[u8]; 7] = [b"abc\0", b"xyz\0", b"abc\0", b"ab\0", b"xyz\0", b"ab\0", b"q\0"];
        let (buf, offs) = dedup_shard(&pieces.iter().map(|&p| (7u64, p)).collect::<Vec<_>>(), 1);
        assert_eq!(buf, b"abc\0xyz\0ab\0q\0");
        assert_eq!(offs, [0, 4, 0, 8, 4, 8, 11]);
        // Real hashes give the same answer; alignment pads each new copy.
        let (buf2, offs2) = dedup_shard(&pieces.iter().map(|&p| (xxhash_rust::xxh3::xxh3_64(p), p)).collect::<Vec<_>>(), 4);
        assert_eq!(buf2, b"abc\0xyz\0ab\0\0q\0");
        assert_eq!(offs2, [0, 4, 0, 8, 4, 8, 12]);
    }

    #[test]
    fn piece_index_matches_binary_search() {
        let starts: Vec<u64> = [0u64, 1, 2, 40, 41, 300, 301, 302, 700, 1000, 1001].to_vec();
        let list: Vec<(u64, u64)> = starts.iter().enumerate().map(|(i, &s)| (s, i as u64 * 10)).collect();
        let plain = |off: u64| match list.binary_search_by(|p| p.0.cmp(&off)) {
            Ok(i) => Some(list[i]),
            Err(0) => None,
            Err(i) => Some(list[i - 1]),
        };
        let p = PieceList::new(list.clone(), 1010, Vec::new());
        for off in 0..1500 {
            assert_eq!(p.find(off), plain(off), "offset {off}");
        }
        let late = PieceList::new(vec![(5, 0), (600, 1)], 700, Vec::new());
        assert_eq!(late.find(4), None);
        assert_eq!(late.find(599), Some((5, 0)));
        assert_eq!(PieceList::new(Vec::new(), 0, Vec::new()).find(3), None);
    }

    /// A dead piece's bit answers for every offset inside it; an all-live list has no bits.
    #[test]
    fn dead_piece_bits() {
        let list: Vec<(u64, u64)> = (0..70u64).map(|i| (i * 4, 0)).collect();
        let mut dead = vec![0u64; 2];
        dead[0] |= 1 << 1;
        dead[1] |= 1 << (65 - 64);
        let p = PieceList::new(list, 280, dead);
        assert!(p.is_live(3));
        assert!(!p.is_live(4) && !p.is_live(7));
        assert!(p.is_live(8));
        assert!(!p.is_live(260) && !p.is_live(263));
        assert!(p.is_live(264));
        let all = PieceList::new(vec![(0, 0), (4, 4)], 8, Vec::new());
        assert!(all.is_live(5));
    }

    #[test]
    fn shard_is_top_bits_of_31_bit_hash() {
        assert_eq!(shard_of(0), 0);
        assert_eq!(shard_of(0xffff_ffff), 31);
        assert_eq!(shard_of(0x8000_0000), 16);
        // Only the low 32 bits of the 64-bit hash count.
        assert_eq!(shard_of(0xdead_beef_0000_0000), 0);
    }
}
