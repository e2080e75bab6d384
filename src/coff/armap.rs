//! An archive's symbol table as lld/COFF iterates it (`Archive::symbols()`).
//!
//! This exists because the order matters: lld enqueues archive members in the order it walks
//! the archive's symbol table, so the order of `.text` chunks in the output follows it. A GNU
//! archive has one symbol table (`/`, big-endian offsets, symbols in member order). A COFF
//! archive — what `llvm-ar` and `lib.exe` write for COFF members — has a second linker member,
//! also named `/`, with little-endian member offsets and the symbols sorted by name; LLVM's
//! `Archive` reader uses that one when it is present, and so does dtld. Malformed tables give
//! `None` (the caller then reads the members' own symbols).

fn rd32be(b: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(off..off.checked_add(4)?)?.try_into().ok()?))
}

fn rd32le(b: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(off..off.checked_add(4)?)?.try_into().ok()?))
}

fn rd16le(b: &[u8], off: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(off..off.checked_add(2)?)?.try_into().ok()?))
}

/// The member at `off` (a header): (name field, body).
fn member(data: &[u8], off: usize) -> Option<(&[u8], &[u8])> {
    let h = data.get(off..off.checked_add(60)?)?;
    let size: usize = std::str::from_utf8(&h[48..58]).ok()?.trim().parse().ok()?;
    let start = off + 60;
    Some((&h[..16], data.get(start..start.checked_add(size)?)?))
}

/// (symbol name, member header offset) in lld's iteration order.
pub fn symbols(data: &[u8]) -> Option<Vec<(&str, usize)>> {
    let (name, first) = member(data, 8)?;
    if &name[..2] != b"/ " {
        return None;
    }
    // A second linker member right after the first one: the COFF table.
    let next = 8 + 60 + first.len() + (first.len() & 1);
    if let Some((name2, second)) = member(data, next) {
        if &name2[..2] == b"/ " {
            if let Some(v) = coff_table(second) {
                return Some(v);
            }
        }
    }
    gnu_table(first)
}

/// The first linker member: count, big-endian offsets, NUL-terminated names in member order.
fn gnu_table(body: &[u8]) -> Option<Vec<(&str, usize)>> {
    let n = rd32be(body, 0)? as usize;
    let names_at = n.checked_mul(4)?.checked_add(4)?;
    let mut names = body.get(names_at..)?.split(|&b| b == 0);
    let mut out = Vec::with_capacity(n.min(body.len() / 4));
    for i in 0..n {
        let off = rd32be(body, 4 + 4 * i)? as usize;
        out.push((std::str::from_utf8(names.next()?).ok()?, off));
    }
    Some(out)
}

/// The second linker member: member count, little-endian member offsets, symbol count, 1-based
/// 16-bit member indices, NUL-terminated names (sorted).
fn coff_table(body: &[u8]) -> Option<Vec<(&str, usize)>> {
    let members = rd32le(body, 0)? as usize;
    let count_at = members.checked_mul(4)?.checked_add(4)?;
    let n = rd32le(body, count_at)? as usize;
    let idx_at = count_at + 4;
    let names_at = n.checked_mul(2)?.checked_add(idx_at)?;
    let mut names = body.get(names_at..)?.split(|&b| b == 0);
    let mut out = Vec::with_capacity(n.min(body.len() / 2));
    for i in 0..n {
        let k = (rd16le(body, idx_at + 2 * i)? as usize).checked_sub(1)?;
        if k >= members {
            return None;
        }
        let off = rd32le(body, 4 + 4 * k)? as usize;
        out.push((std::str::from_utf8(names.next()?).ok()?, off));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hdr(name: &str, size: usize) -> Vec<u8> {
        format!("{name:<16}{:<12}{:<6}{:<6}{:<8}{size:<10}`\n", 0, 0, 0, 644).into_bytes()
    }

    #[test]
    fn prefers_the_sorted_coff_table() {
        // GNU table: b@100, a@200 (member order); COFF table: a, b sorted.
        let mut gnu = Vec::new();
        gnu.extend(2u32.to_be_bytes());
        gnu.extend(100u32.to_be_bytes());
        gnu.extend(200u32.to_be_bytes());
        gnu.extend(b"b\0a\0");
        let mut coff = Vec::new();
        coff.extend(2u32.to_le_bytes());
        coff.extend(100u32.to_le_bytes());
        coff.extend(200u32.to_le_bytes());
        coff.extend(2u32.to_le_bytes());
        coff.extend(2u16.to_le_bytes());
        coff.extend(1u16.to_le_bytes());
        coff.extend(b"a\0b\0");
        let mut ar = b"!<arch>\n".to_vec();
        ar.extend(hdr("/", gnu.len()));
        ar.extend(&gnu);
        let only_gnu = ar.clone();
        ar.extend(hdr("/", coff.len()));
        ar.extend(&coff);
        assert_eq!(symbols(&ar).unwrap(), vec![("a", 200), ("b", 100)]);
        assert_eq!(symbols(&only_gnu).unwrap(), vec![("b", 100), ("a", 200)]);
        // A broken COFF table falls back to the GNU one; a broken GNU one is None.
        let mut bad = only_gnu.clone();
        bad.extend(hdr("/", 4));
        bad.extend(9u32.to_le_bytes());
        assert_eq!(symbols(&bad).unwrap(), vec![("b", 100), ("a", 200)]);
        assert!(symbols(&only_gnu[..only_gnu.len() - 3]).is_none());
    }
}
