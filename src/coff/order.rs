//! Chunk order inside a section: `/order:@file` and the `.CRT` rule.
//!
//! lld-link's `/order:@file` lists COMDAT leader symbols (static ones too), one a line; their
//! sections come first in each partial section, in the file's order, everything else after in
//! input order (lld's `parseOrderFile` and `sortBySectionOrder`). A name no read COMDAT section is led by
//! gets lld's LNK4037 warning. `.CRT$*` partial sections keep each object's sections in section
//! number order (`sortCRTSectionChunks`: cl.exe's dynamic initializers rely on it).

use std::collections::HashMap;

use super::config::CoffConfig;
use super::symtab::{ChunkSrc, Kind, Resolved};
use crate::error::{Error, Result};

/// The priority of every symbol named in the order file (lld: `INT_MIN + position`; a name
/// listed twice takes its later position). Unlisted sections have priority 0.
pub fn read_order_file(config: &CoffConfig, r: &Resolved) -> Result<HashMap<String, i64>> {
    let mut order = HashMap::new();
    let Some(path) = &config.order_file else { return Ok(order) };
    // Leaders of every COMDAT section read (prevailing copies, live or not).
    let mut leaders = std::collections::HashSet::new();
    for &f in &r.obj_order {
        let file = &r.files[f];
        let Kind::Obj(obj) = &file.kind else { continue };
        for c in &file.chunks {
            if let ChunkSrc::Sec(k) = *c {
                if let Some(&i) = file.leaders.get(&k) {
                    // Static leaders too (a `static` function compiled with `/Gy`).
                    leaders.insert(obj.symbols[i as usize].name);
                }
            }
        }
    }
    let text = std::fs::read(path).map_err(|e| Error::new(format!("could not open {}: {}", path.display(), crate::error::io_error(&e))))?;
    if let Some(r) = &config.repro {
        r.read_owned(path, text.clone());
    }
    for line in String::from_utf8_lossy(&text).split('\n') {
        let s = line.trim();
        if s.is_empty() || s.starts_with('#') {
            continue;
        }
        if !leaders.contains(s) {
            config.diag.warn_code("4037", &format!("/order:{s}: missing symbol: {s} [LNK4037]"));
            continue;
        }
        let p = i32::MIN as i64 + order.len() as i64;
        order.insert(s.to_string(), p);
    }
    Ok(order)
}

/// The `/order` priority of a section chunk: its COMDAT leader's, else 0.
pub fn priority(order: &HashMap<String, i64>, r: &Resolved, file: usize, sec: u32) -> i64 {
    let f = &r.files[file];
    match f.leaders.get(&sec) {
        Some(&i) => order.get(r.obj(file).symbols[i as usize].name).copied().unwrap_or(0),
        None => 0,
    }
}

/// lld's `sortCRTSectionChunks`: within each run of chunks from one object, section number
/// order. `key(c)` is (file, section number) for a section chunk.
pub fn sort_crt(chunks: &mut [usize], key: impl Fn(usize) -> Option<(usize, u32)>) {
    let mut start = 0;
    while start < chunks.len() {
        let file = key(chunks[start]).map(|k| k.0);
        let mut end = start + 1;
        while end < chunks.len() && key(chunks[end]).map(|k| k.0) == file {
            end += 1;
        }
        chunks[start..end].sort_by_key(|&c| key(c).map_or(0, |k| k.1));
        start = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crt_sorts_within_each_object_only() {
        // (file, section) per chunk index.
        let keys = [(0, 4), (0, 2), (1, 3), (1, 1), (0, 1)];
        let mut v: Vec<usize> = (0..keys.len()).collect();
        sort_crt(&mut v, |c| Some(keys[c]));
        assert_eq!(v, vec![1, 0, 3, 2, 4]);
    }
}
