//! The module paths of a ThinLTO index shard, renamed.
//!
//! Why it exists: DTLTO's thin link runs in dtld's process with short module IDs
//! (`inproc::ModuleIds`): LLVM hashes and compares module IDs millions of times in the thin link
//! and its cache keys, and DTLTO's IDs are paths under the staging directory (often absolute,
//! 100 bytes and more). A shard that a backend reads must name its module and import sources by
//! those paths, relative to the linker's directory, as lld writes them. LLVM writes the names
//! once, in the shard's MODULE_STRTAB block (one ENTRY record per module: its number in the
//! shard and its path; one HASH record after each), so only that block is rewritten here: the
//! records are re-encoded unabbreviated with the new paths, the block's and the enclosing
//! MODULE_BLOCK's lengths are patched, and every other byte is kept (blocks start and end on
//! 32-bit words, so the rest moves as bytes). Only the shards of the jobs that run are renamed.

use crate::bitstream::{BitWriter, BitstreamCursor, Entry, END_BLOCK};

/// Block ids and record codes of LLVM's bitcode (`LLVMBitCodes.h`).
const MODULE_BLOCK_ID: u32 = 8;
const MODULE_STRTAB_BLOCK_ID: u32 = 19;
const MST_CODE_ENTRY: u32 = 1;

fn put_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn get_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// `shard` with every module path `p` of its MODULE_STRTAB replaced by `rename(p)` (a path
/// `rename` returns `None` for stays). A shard without the block comes back unchanged.
pub fn rename_modules(shard: &[u8], rename: &dyn Fn(&[u8]) -> Option<Vec<u8>>) -> Result<Vec<u8>, String> {
    if shard.len() < 4 || &shard[..4] != b"BC\xC0\xDE" {
        return Err("index shard: not a bitcode file".into());
    }
    let mut cur = BitstreamCursor::new(shard);
    cur.jump_to_bit(32)?;
    // The top level: the MODULE_BLOCK (an index file has nothing else before it).
    let module_len_at = loop {
        match cur.advance()? {
            Entry::SubBlock(MODULE_BLOCK_ID) => {
                cur.enter_block(MODULE_BLOCK_ID)?;
                break cur.byte_pos() as usize - 4;
            }
            Entry::SubBlock(_) => cur.skip_block()?,
            Entry::Record(a) => {
                cur.skip_record(a)?;
            }
            Entry::EndBlock => return Err("index shard: no module block".into()),
        }
    };
    // In it: the MODULE_STRTAB block.
    let (strtab_len_at, width, old_end, records) = loop {
        match cur.advance()? {
            Entry::SubBlock(MODULE_STRTAB_BLOCK_ID) => {
                cur.enter_block(MODULE_STRTAB_BLOCK_ID)?;
                let len_at = cur.byte_pos() as usize - 4;
                let (width, end_bit) = cur.block_extent();
                let mut records = Vec::new();
                loop {
                    match cur.advance()? {
                        Entry::EndBlock => break,
                        Entry::SubBlock(_) => cur.skip_block()?,
                        Entry::Record(a) => {
                            let r = cur.read_record(a)?;
                            if r.blob.is_some() {
                                return Err("index shard: a blob in the module table".into());
                            }
                            records.push((r.code, r.ops));
                        }
                    }
                }
                break (len_at, width, (end_bit / 8) as usize, records);
            }
            Entry::SubBlock(_) => cur.skip_block()?,
            Entry::Record(a) => {
                cur.skip_record(a)?;
            }
            Entry::EndBlock => return Ok(shard.to_vec()),
        }
    };
    let contents_at = strtab_len_at + 4;
    let mut w = BitWriter::default();
    for (code, mut ops) in records {
        if code == MST_CODE_ENTRY && !ops.is_empty() {
            let path: Vec<u8> = ops[1..].iter().map(|&c| c as u8).collect();
            if let Some(new) = rename(&path) {
                ops.truncate(1);
                ops.extend(new.iter().map(|&c| u64::from(c)));
            }
        }
        w.record(width, u64::from(code), &ops);
    }
    w.emit(u64::from(END_BLOCK), width);
    w.align32();
    let contents = w.finish();
    if old_end > shard.len() || contents_at > old_end || module_len_at + 4 > shard.len() {
        return Err("index shard: malformed module table".into());
    }
    let mut out = Vec::with_capacity(shard.len() - (old_end - contents_at) + contents.len());
    out.extend_from_slice(&shard[..contents_at]);
    out.extend_from_slice(&contents);
    out.extend_from_slice(&shard[old_end..]);
    let (old_words, new_words) = (((old_end - contents_at) / 4) as i64, (contents.len() / 4) as i64);
    let module_words = i64::from(get_u32(shard, module_len_at)) + new_words - old_words;
    put_u32(&mut out, strtab_len_at, new_words as u32);
    put_u32(&mut out, module_len_at, u32::try_from(module_words).map_err(|_| "index shard: malformed module block".to_string())?);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal index file: magic, MODULE_BLOCK { VERSION, MODULE_STRTAB { abbreviated and
    /// unabbreviated entries and hashes }, a sub-block after it }, then a top-level block.
    fn shard(paths: &[&str]) -> Vec<u8> {
        let mut w = BitWriter::default();
        w.bytes(b"BC\xC0\xDE");
        let m = w.enter(2, u64::from(MODULE_BLOCK_ID), 3);
        w.record(3, 1, &[2]);
        let s = w.enter(3, u64::from(MODULE_STRTAB_BLOCK_ID), 4);
        // DEFINE_ABBREV id 4: [1 (literal ENTRY), vbr8 modid, array of char6].
        w.emit(2, 4);
        w.vbr(4, 5);
        w.emit(1, 1);
        w.vbr(1, 8);
        w.emit(0, 1);
        w.emit(2, 3);
        w.vbr(8, 5);
        w.emit(0, 1);
        w.emit(3, 3);
        w.emit(0, 1);
        w.emit(4, 3);
        for (i, p) in paths.iter().enumerate() {
            if i % 2 == 0 {
                // Abbreviated (char6 names only).
                w.emit(4, 4);
                w.vbr(i as u64, 8);
                w.vbr(p.len() as u64, 6);
                for c in p.bytes() {
                    let v = match c {
                        b'a'..=b'z' => c - b'a',
                        b'A'..=b'Z' => c - b'A' + 26,
                        b'0'..=b'9' => c - b'0' + 52,
                        b'.' => 62,
                        _ => 63,
                    };
                    w.emit(u64::from(v), 6);
                }
            } else {
                let ops: Vec<u64> = std::iter::once(i as u64).chain(p.bytes().map(u64::from)).collect();
                w.record(4, u64::from(MST_CODE_ENTRY), &ops);
            }
            // HASH [5 words].
            let hash: Vec<u64> = (0..5u64).map(|k| 0xdead_0000 + k + i as u64).collect();
            w.record(4, 2, &hash);
        }
        w.end(4, s);
        // A sub-block after the table, and a record.
        let t = w.enter(3, 20, 3);
        w.record(3, 7, &[99]);
        w.end(3, t);
        w.end(3, m);
        let top = w.enter(2, 23, 3);
        w.end(3, top);
        w.finish()
    }

    /// The module table's (id, path, hash) entries and the shape of the rest.
    fn read(data: &[u8]) -> (Vec<(u64, String, Vec<u64>)>, Vec<u32>) {
        let mut cur = BitstreamCursor::new(data);
        cur.jump_to_bit(32).unwrap();
        let mut table = Vec::new();
        let mut blocks = Vec::new();
        let mut depth = 0;
        let mut entry: Option<(u64, String)> = None;
        loop {
            if depth == 0 && cur.byte_pos() as usize >= data.len() {
                break;
            }
            match cur.advance().unwrap() {
                Entry::SubBlock(id) => {
                    blocks.push(id);
                    cur.enter_block(id).unwrap();
                    depth += 1;
                }
                Entry::EndBlock => depth -= 1,
                Entry::Record(a) => {
                    let r = cur.read_record(a).unwrap();
                    match r.code {
                        1 if blocks.last() == Some(&MODULE_STRTAB_BLOCK_ID) && depth == 2 => {
                            entry = Some((r.ops[0], r.ops[1..].iter().map(|&c| c as u8 as char).collect()));
                        }
                        2 if depth == 2 && entry.is_some() => {
                            let (id, p) = entry.take().unwrap();
                            table.push((id, p, r.ops));
                        }
                        _ => blocks.push(1000 + r.code),
                    }
                }
            }
        }
        (table, blocks)
    }

    #[test]
    fn renames_paths_and_keeps_the_rest() {
        let ids = ["a.o", "b/c.o", "d.o"];
        let before = shard(&ids);
        let (t0, b0) = read(&before);
        assert_eq!(t0.iter().map(|e| e.1.as_str()).collect::<Vec<_>>(), ids);
        let after = rename_modules(&before, &|p| Some(format!("stage/long-directory-name/{}", String::from_utf8_lossy(p)).into_bytes())).unwrap();
        let (t1, b1) = read(&after);
        assert_eq!(b0, b1, "the blocks and records around the table");
        assert_eq!(t1.len(), 3);
        for (x, y) in t0.iter().zip(&t1) {
            assert_eq!(x.0, y.0);
            assert_eq!(format!("stage/long-directory-name/{}", x.1), y.1);
            assert_eq!(x.2, y.2, "hash of {}", x.1);
        }
        // Renaming to shorter paths, and leaving one alone.
        let shorter = rename_modules(&after, &|p| (p != b"stage/long-directory-name/b/c.o").then(|| p[p.len() - 3..].to_vec())).unwrap();
        let (t2, b2) = read(&shorter);
        assert_eq!(b2, b0);
        assert_eq!(t2.iter().map(|e| e.1.as_str()).collect::<Vec<_>>(), ["a.o", "stage/long-directory-name/b/c.o", "d.o"]);
        assert!(rename_modules(b"BC\xC0", &|_| None).is_err());
        assert!(rename_modules(&before[..before.len() / 2], &|_| None).is_err());
    }
}
