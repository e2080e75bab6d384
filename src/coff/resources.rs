//! Windows resources: `.res` files and the `.rsrc` sections of resource objects, merged into one
//! resource tree and written as a COFF object, as lld does with LLVM's `WindowsResourceParser`
//! and `WindowsResourceCOFFWriter`.
//!
//! A program's icons, version block, string tables and manifests live in its `.rsrc` section:
//! a directory tree type → name → language whose leaves point at the resource bytes, and the
//! image's resource data directory names that section. Compilers hand resources to the linker
//! in two ways: `rc.exe`/`llvm-rc` write `.res` files (a flat list of entries), and
//! `windres`/`llvm-cvtres` write COFF objects holding the finished tree. lld keeps a single
//! resource object as it is; otherwise it parses every `.res` file and resource object into one
//! tree (duplicates are errors, or warnings with `/force:multipleres`; MinGW drops the default
//! manifest in favour of another) and writes the object `llvm-cvtres` would: `.rsrc$01` with the
//! tree, its name strings and one `IMAGE_REL_AMD64_ADDR32NB` relocation per leaf, `.rsrc$02`
//! with the data, 8-byte aligned. That object then links like any other, so the `.rsrc` output
//! section is byte-identical to lld's.
//!
//! Pure: no I/O, no global state, deterministic.

use std::collections::{BTreeMap, VecDeque};

use super::object::ObjFile;

/// The 32-byte empty entry every `.res` file starts with (what LLVM's `identify_magic` and
/// `WindowsResource` check).
const RES_MAGIC: [u8; 16] = [0, 0, 0, 0, 0x20, 0, 0, 0, 0xff, 0xff, 0, 0, 0xff, 0xff, 0, 0];
const LEADING_HEADER: usize = 32;
/// The name lld gives the object it makes (it shows in maps and diagnostics).
pub const INTERNAL_NAME: &str = "internal .obj file created from .res files";

/// Whether `data` is a `.res` file.
pub fn is_res(data: &[u8]) -> bool {
    data.len() >= LEADING_HEADER && data[..16] == RES_MAGIC
}

/// A type, name or language key of the tree.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Key {
    Id(u32),
    Str(Vec<u16>),
}

#[derive(Debug)]
struct Leaf {
    major: u16,
    minor: u16,
    characteristics: u32,
    origin: usize,
    data: usize,
}

/// One directory of the tree (LLVM's `TreeNode`): children by name (ordered by their UTF-8
/// spelling, as LLVM's `std::map<std::string>`) and by ID, or a data leaf.
#[derive(Debug, Default)]
struct Node {
    string_index: usize,
    leaf: Option<Leaf>,
    names: BTreeMap<String, Node>,
    ids: BTreeMap<u32, Node>,
}

impl Node {
    fn child(&mut self, key: &Key, strings: &mut Vec<Vec<u16>>) -> &mut Node {
        match key {
            Key::Id(id) => self.ids.entry(*id).or_default(),
            Key::Str(s) => {
                let utf8 = String::from_utf16_lossy(s);
                if !self.names.contains_key(&utf8) {
                    strings.push(s.clone());
                    self.names.insert(utf8.clone(), Node { string_index: strings.len() - 1, ..Default::default() });
                }
                self.names.get_mut(&utf8).unwrap()
            }
        }
    }

    /// LLVM's `getTreeSize`: tables, entries and data entries (not the strings).
    fn tree_size(&self) -> u32 {
        let mut size = (self.ids.len() + self.names.len()) as u32 * 8;
        if self.leaf.is_some() {
            return size + 16;
        }
        size += 16;
        size + self.names.values().chain(self.ids.values()).map(Node::tree_size).sum::<u32>()
    }

    fn shift_data_down(&mut self, removed: usize) {
        if let Some(l) = &mut self.leaf {
            if l.data >= removed {
                l.data -= 1;
            }
            return;
        }
        for c in self.names.values_mut().chain(self.ids.values_mut()) {
            c.shift_data_down(removed);
        }
    }
}

/// The merged resources of a link.
#[derive(Debug, Default)]
pub struct Tree {
    root: Node,
    data: Vec<Vec<u8>>,
    strings: Vec<Vec<u16>>,
    inputs: Vec<String>,
    mingw: bool,
}

fn type_name(id: u32) -> String {
    let n = match id {
        1 => "CURSOR",
        2 => "BITMAP",
        3 => "ICON",
        4 => "MENU",
        5 => "DIALOG",
        6 => "STRINGTABLE",
        7 => "FONTDIR",
        8 => "FONT",
        9 => "ACCELERATOR",
        10 => "RCDATA",
        11 => "MESSAGETABLE",
        12 => "GROUP_CURSOR",
        14 => "GROUP_ICON",
        16 => "VERSIONINFO",
        17 => "DLGINCLUDE",
        19 => "PLUGPLAY",
        20 => "VXD",
        21 => "ANICURSOR",
        22 => "ANIICON",
        23 => "HTML",
        24 => "MANIFEST",
        _ => return format!("ID {id}"),
    };
    format!("{n} (ID {id})")
}

/// LLVM's `makeDuplicateResourceError`.
fn duplicate_message(ty: &Key, name: &Key, lang: u32, first: &str, second: &str) -> String {
    let ty = match ty {
        Key::Id(i) => type_name(*i),
        Key::Str(s) => format!("\"{}\"", String::from_utf16_lossy(s)),
    };
    let name = match name {
        Key::Id(i) => format!("ID {i}"),
        Key::Str(s) => format!("\"{}\"", String::from_utf16_lossy(s)),
    };
    format!("duplicate resource: type {ty}/name {name}/language {lang}, in {first} and in {second}")
}

/// A little-endian reader over one input, failing with LLVM's wording.
struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn u16(&mut self) -> Option<u16> {
        let v = u16::from_le_bytes(self.b.get(self.pos..self.pos + 2)?.try_into().ok()?);
        self.pos += 2;
        Some(v)
    }
    fn u32(&mut self) -> Option<u32> {
        let v = u32::from_le_bytes(self.b.get(self.pos..self.pos + 4)?.try_into().ok()?);
        self.pos += 4;
        Some(v)
    }
    /// An ID (`0xffff id`) or a NUL-terminated UTF-16 string.
    fn key(&mut self) -> Option<Key> {
        let flag = self.u16()?;
        if flag == 0xffff {
            return Some(Key::Id(self.u16()? as u32));
        }
        self.pos -= 2;
        let mut s = Vec::new();
        loop {
            let c = self.u16()?;
            if c == 0 {
                return Some(Key::Str(s));
            }
            s.push(c);
        }
    }
}

fn u16_at(b: &[u8], off: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(off..off.checked_add(2)?)?.try_into().ok()?))
}

fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(off..off.checked_add(4)?)?.try_into().ok()?))
}

impl Tree {
    pub fn new(mingw: bool) -> Tree {
        Tree { mingw, ..Default::default() }
    }

    /// LLVM's `shouldIgnoreDuplicate`: MinGW's default manifest (RT_MANIFEST/1/language 0).
    fn ignore_duplicate(&self, ty: &Key, name: &Key, lang: u32) -> bool {
        self.mingw && *ty == Key::Id(24) && *name == Key::Id(1) && lang == 0
    }

    /// Adds one leaf; `false` (and the existing leaf's origin) if it was already there.
    fn add_leaf(&mut self, path: [&Key; 2], lang: u32, leaf: Leaf, bytes: &[u8]) -> Result<(), usize> {
        let mut strings = std::mem::take(&mut self.strings);
        let node = self.root.child(path[0], &mut strings).child(path[1], &mut strings);
        self.strings = strings;
        if let Some(existing) = node.ids.get(&lang) {
            return Err(existing.leaf.as_ref().map_or(0, |l| l.origin));
        }
        node.ids.insert(lang, Node { leaf: Some(leaf), ..Default::default() });
        self.data.push(bytes.to_vec());
        Ok(())
    }

    /// LLVM's `WindowsResourceParser::parse(WindowsResource *)`: the entries of a `.res` file.
    /// Duplicates go to `dups`; a malformed file is an error.
    pub fn add_res(&mut self, name: &str, data: &[u8], dups: &mut Vec<String>) -> Result<(), String> {
        if !is_res(data) {
            return Err(format!("{name}: not a .res file"));
        }
        // LLVM's `getHeadEntry`: less than an entry header's fixed parts (prefix and suffix, 24
        // bytes) after the leading header is a file without entries, not a truncated one.
        if data.len() < LEADING_HEADER + 24 {
            return Ok(());
        }
        let origin = self.inputs.len();
        self.inputs.push(name.to_string());
        let bad = || format!("{name}: Stream Error: The stream is too short to perform the requested operation.");
        let mut r = Reader { b: data, pos: LEADING_HEADER };
        while r.pos < data.len() {
            let data_size = r.u32().ok_or_else(bad)? as usize;
            let header_size = r.u32().ok_or_else(bad)?;
            if header_size < 16 {
                return Err(format!("{name}: header size too small"));
            }
            let ty = r.key().ok_or_else(bad)?;
            let rname = r.key().ok_or_else(bad)?;
            r.pos = r.pos.next_multiple_of(4);
            let _data_version = r.u32().ok_or_else(bad)?;
            let _memory_flags = r.u16().ok_or_else(bad)?;
            let lang = r.u16().ok_or_else(bad)? as u32;
            let version = r.u32().ok_or_else(bad)?;
            let characteristics = r.u32().ok_or_else(bad)?;
            let bytes = data.get(r.pos..r.pos + data_size).ok_or_else(bad)?;
            r.pos = (r.pos + data_size).next_multiple_of(4);
            let leaf = Leaf { major: (version >> 16) as u16, minor: version as u16, characteristics, origin, data: self.data.len() };
            if let Err(first) = self.add_leaf([&ty, &rname], lang, leaf, bytes) {
                if !self.ignore_duplicate(&ty, &rname, lang) {
                    dups.push(duplicate_message(&ty, &rname, lang, &self.inputs[first], name));
                }
            }
        }
        Ok(())
    }

    /// LLVM's `parse(ResourceSectionRef &)`: the tree in a resource object's `.rsrc` (or
    /// `.rsrc$01`) section, each leaf's bytes found through its `ADDR32NB` relocation.
    pub fn add_object(&mut self, name: &str, obj: &ObjFile, dups: &mut Vec<String>) -> Result<(), String> {
        let Some(k) = obj.sections.iter().position(|s| s.name == ".rsrc" || s.name == ".rsrc$01") else { return Ok(()) };
        let origin = self.inputs.len();
        self.inputs.push(name.to_string());
        let sec = &obj.sections[k];
        let b = sec.data;
        let err = |m: &str| format!("{name}: {m}");
        let mut stack: Vec<(u32, Vec<Key>)> = vec![(0, Vec::new())];
        let mut depth_guard = 0;
        while let Some((table, ctx)) = stack.pop() {
            depth_guard += 1;
            if depth_guard > 100_000 || ctx.len() > 2 {
                return Err(err("resource tree too deep"));
            }
            let t = table as usize;
            let (major, minor, chars) = (u16_at(b, t + 8), u16_at(b, t + 10), u32_at(b, t));
            let (nnames, nids) = (u16_at(b, t + 12), u16_at(b, t + 14));
            let (Some(major), Some(minor), Some(chars), Some(nnames), Some(nids)) = (major, minor, chars, nnames, nids) else {
                return Err(err("invalid resource table"));
            };
            let mut subdirs = Vec::new();
            for i in 0..(nnames as usize + nids as usize) {
                let e = t + 16 + 8 * i;
                let (Some(ident), Some(off)) = (u32_at(b, e), u32_at(b, e + 4)) else { return Err(err("invalid resource entry")) };
                let key = if i < nnames as usize {
                    let so = (ident & 0x7fff_ffff) as usize;
                    let len = u16_at(b, so).ok_or_else(|| err("invalid resource name"))? as usize;
                    let s = (0..len).map(|j| u16_at(b, so + 2 + 2 * j)).collect::<Option<Vec<u16>>>().ok_or_else(|| err("invalid resource name"))?;
                    Key::Str(s)
                } else {
                    Key::Id(ident & 0xffff)
                };
                let mut c = ctx.clone();
                c.push(key);
                if off & 0x8000_0000 != 0 {
                    subdirs.push((off & 0x7fff_ffff, c));
                    continue;
                }
                if nnames > 0 || c.len() != 3 {
                    return Err(err("unexpected string key for data object"));
                }
                let d = off as usize;
                let (Some(rva), Some(size)) = (u32_at(b, d), u32_at(b, d + 4)) else { return Err(err("invalid resource data entry")) };
                let reloc = sec
                    .relocs
                    .iter()
                    .find(|r| r.virtual_address.get(object::LittleEndian) as usize == d)
                    .ok_or_else(|| err("no relocation found for DataRVA"))?;
                if reloc.typ.get(object::LittleEndian) != object::pe::IMAGE_REL_AMD64_ADDR32NB {
                    return Err(err("unexpected relocation type"));
                }
                let sym = &obj.symbols[reloc.symbol_table_index.get(object::LittleEndian) as usize];
                let target = usize::try_from(sym.section)
                    .ok()
                    .and_then(|s| s.checked_sub(1))
                    .and_then(|s| obj.sections.get(s))
                    .ok_or_else(|| err("invalid relocation symbol"))?;
                let start = rva as usize + sym.value as usize;
                let bytes = target.data.get(start..start + size as usize).ok_or_else(|| err("data outside of section"))?;
                let Key::Id(lang) = c[2] else { unreachable!() };
                let leaf = Leaf { major, minor, characteristics: chars, origin, data: self.data.len() };
                if let Err(first) = self.add_leaf([&c[0], &c[1]], lang, leaf, bytes) {
                    if !self.ignore_duplicate(&c[0], &c[1], lang) {
                        dups.push(duplicate_message(&c[0], &c[1], lang, &self.inputs[first], name));
                    }
                }
            }
            // Depth first, in entry order, as LLVM's recursive `addChildren`.
            stack.extend(subdirs.into_iter().rev());
        }
        Ok(())
    }

    /// LLVM's `cleanUpManifests` (MinGW): a default manifest (language 0) gives way to another;
    /// two others are an error.
    pub fn clean_up_manifests(&mut self, dups: &mut Vec<String>) {
        let Some(names) = self.root.ids.get_mut(&24).and_then(|t| t.ids.get_mut(&1)) else { return };
        if names.ids.len() <= 1 {
            return;
        }
        if let Some(removed) = names.ids.get(&0).and_then(|n| n.leaf.as_ref()).map(|l| l.data) {
            names.ids.remove(&0);
            self.data.remove(removed);
            self.root.shift_data_down(removed);
            let names = &self.root.ids[&24].ids[&1];
            if names.ids.len() <= 1 {
                return;
            }
        }
        let names = &self.root.ids[&24].ids[&1];
        let (first_lang, first) = names.ids.iter().next().unwrap();
        let (last_lang, last) = names.ids.iter().next_back().unwrap();
        let origin = |n: &Node| n.leaf.as_ref().map_or(0, |l| l.origin);
        dups.push(format!(
            "duplicate non-default manifests with languages {first_lang} in {} and {last_lang} in {}",
            self.inputs[origin(first)],
            self.inputs[origin(last)]
        ));
    }

    /// LLVM's `writeWindowsResourceCOFF` for x86-64: the object `llvm-cvtres` writes.
    pub fn write_coff(&self, timestamp: u32) -> Vec<u8> {
        const ALIGN: usize = 8;
        let ndata = self.data.len();
        // Section one: tree, strings, then its relocations.
        let tree = self.root.tree_size() as usize;
        let mut string_offsets = Vec::with_capacity(self.strings.len());
        let mut cur = tree;
        for s in &self.strings {
            string_offsets.push(cur as u32);
            cur += 2 * s.len() + 2;
        }
        let one_size = tree + (cur - tree).next_multiple_of(4);
        let one_off = 20 + 2 * 40;
        let one_relocs = one_off + one_size;
        let two_off = (one_relocs + 10 * ndata).next_multiple_of(ALIGN);
        let mut data_offsets = Vec::with_capacity(ndata);
        let mut two_size = 0;
        for d in &self.data {
            data_offsets.push(two_size as u32);
            two_size += d.len().next_multiple_of(8);
        }
        let symtab = (two_off + two_size).next_multiple_of(ALIGN);
        let file_size = symtab + 18 * (5 + ndata) + 4;
        let mut out = vec![0u8; file_size];
        let put16 = |o: &mut Vec<u8>, at: usize, v: u16| o[at..at + 2].copy_from_slice(&v.to_le_bytes());
        let put32 = |o: &mut Vec<u8>, at: usize, v: u32| o[at..at + 4].copy_from_slice(&v.to_le_bytes());
        // COFF header.
        put16(&mut out, 0, object::pe::IMAGE_FILE_MACHINE_AMD64);
        put16(&mut out, 2, 2);
        put32(&mut out, 4, timestamp);
        put32(&mut out, 8, symtab as u32);
        put32(&mut out, 12, (ndata + 5) as u32);
        put16(&mut out, 18, object::pe::IMAGE_FILE_32BIT_MACHINE);
        // Section headers.
        let chars = object::pe::IMAGE_SCN_CNT_INITIALIZED_DATA | object::pe::IMAGE_SCN_MEM_READ;
        for (i, (name, size, off, relocs, nrel)) in
            [(b".rsrc$01", one_size, one_off, one_relocs, ndata), (b".rsrc$02", two_size, two_off, 0, 0)].into_iter().enumerate()
        {
            let h = 20 + 40 * i;
            out[h..h + 8].copy_from_slice(name);
            put32(&mut out, h + 16, size as u32);
            put32(&mut out, h + 20, off as u32);
            put32(&mut out, h + 24, relocs as u32);
            put16(&mut out, h + 32, nrel as u16);
            put32(&mut out, h + 36, chars);
        }
        // The directory tree, breadth first.
        let mut queue: VecDeque<&Node> = VecDeque::from([&self.root]);
        let mut next_level = 16 + 8 * (self.root.names.len() + self.root.ids.len()) as u32;
        let mut leaves: Vec<&Node> = Vec::new();
        let mut at = one_off;
        let mut rel = 0u32;
        while let Some(node) = queue.pop_front() {
            let (major, minor, c) = node.leaf.as_ref().map_or((0, 0, 0), |l| (l.major, l.minor, l.characteristics));
            put32(&mut out, at, c);
            put16(&mut out, at + 8, major);
            put16(&mut out, at + 10, minor);
            put16(&mut out, at + 12, node.names.len() as u16);
            put16(&mut out, at + 14, node.ids.len() as u16);
            at += 16;
            rel += 16;
            let children = node.names.values().map(|c| (0x8000_0000 | string_offsets[c.string_index], c)).chain(node.ids.iter().map(|(id, c)| (*id, c)));
            for (ident, child) in children {
                put32(&mut out, at, ident);
                if child.leaf.is_some() {
                    put32(&mut out, at + 4, next_level);
                    next_level += 16;
                    leaves.push(child);
                } else {
                    put32(&mut out, at + 4, next_level | 0x8000_0000);
                    next_level += 16 + 8 * (child.names.len() + child.ids.len()) as u32;
                    queue.push_back(child);
                }
                at += 8;
                rel += 8;
            }
        }
        let mut reloc_addr = vec![0u32; ndata];
        for leaf in leaves {
            let l = leaf.leaf.as_ref().unwrap();
            reloc_addr[l.data] = rel;
            put32(&mut out, at + 4, self.data[l.data].len() as u32);
            at += 16;
            rel += 16;
        }
        for s in &self.strings {
            put16(&mut out, at, s.len() as u16);
            at += 2;
            for &c in s {
                put16(&mut out, at, c);
                at += 2;
            }
        }
        for (i, addr) in reloc_addr.iter().enumerate() {
            let r = one_relocs + 10 * i;
            put32(&mut out, r, *addr);
            put32(&mut out, r + 4, 5 + i as u32);
            put16(&mut out, r + 8, object::pe::IMAGE_REL_AMD64_ADDR32NB);
        }
        // Section two.
        for (d, off) in self.data.iter().zip(&data_offsets) {
            let o = two_off + *off as usize;
            out[o..o + d.len()].copy_from_slice(d);
        }
        // Symbols: @feat.00, the two sections (each with an aux section definition), one per leaf.
        fn sym(out: &mut [u8], at: usize, name: &[u8], value: u32, section: u16, naux: u8) {
            out[at..at + name.len()].copy_from_slice(name);
            out[at + 8..at + 12].copy_from_slice(&value.to_le_bytes());
            out[at + 12..at + 14].copy_from_slice(&section.to_le_bytes());
            out[at + 16] = object::pe::IMAGE_SYM_CLASS_STATIC;
            out[at + 17] = naux;
        }
        fn aux(out: &mut [u8], at: usize, size: usize, nrel: usize) {
            out[at..at + 4].copy_from_slice(&(size as u32).to_le_bytes());
            out[at + 4..at + 6].copy_from_slice(&(nrel as u16).to_le_bytes());
        }
        sym(&mut out, symtab, b"@feat.00", 0x11, 0xffff, 0);
        sym(&mut out, symtab + 18, b".rsrc$01", 0, 1, 1);
        aux(&mut out, symtab + 36, one_size, ndata);
        sym(&mut out, symtab + 54, b".rsrc$02", 0, 2, 1);
        aux(&mut out, symtab + 72, two_size, 0);
        for (i, off) in data_offsets.iter().enumerate() {
            sym(&mut out, symtab + 90 + 18 * i, format!("$R{:06X}", i & 0xff_ffff).as_bytes(), *off, 2, 0);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(out: &mut Vec<u8>, ty: Key, name: Key, lang: u16, data: &[u8]) {
        let mut hdr = Vec::new();
        for k in [ty, name] {
            match k {
                Key::Id(i) => {
                    hdr.extend_from_slice(&0xffffu16.to_le_bytes());
                    hdr.extend_from_slice(&(i as u16).to_le_bytes());
                }
                Key::Str(s) => {
                    for c in s {
                        hdr.extend_from_slice(&c.to_le_bytes());
                    }
                    hdr.extend_from_slice(&[0, 0]);
                }
            }
        }
        while (8 + hdr.len()) % 4 != 0 {
            hdr.push(0);
        }
        hdr.extend_from_slice(&[0; 4]);
        hdr.extend_from_slice(&0x1030u16.to_le_bytes());
        hdr.extend_from_slice(&lang.to_le_bytes());
        hdr.extend_from_slice(&[0; 8]);
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&(8 + hdr.len() as u32).to_le_bytes());
        out.extend_from_slice(&hdr);
        out.extend_from_slice(data);
        while !out.len().is_multiple_of(4) {
            out.push(0);
        }
    }

    fn res(entries: &[(Key, Key, u16, &[u8])]) -> Vec<u8> {
        let mut out = RES_MAGIC.to_vec();
        out.resize(32, 0);
        for (t, n, l, d) in entries {
            entry(&mut out, t.clone(), n.clone(), *l, d);
        }
        out
    }

    fn w(s: &str) -> Key {
        Key::Str(s.encode_utf16().collect())
    }

    #[test]
    fn tree_object_round_trips_through_the_object_parser() {
        let a = res(&[(Key::Id(6), Key::Id(1), 1033, b"strings"), (w("MYTYPE"), w("NAME"), 0, b"abc"), (Key::Id(16), Key::Id(1), 1033, b"version")]);
        let mut t = Tree::new(false);
        let mut dups = Vec::new();
        t.add_res("a.res", &a, &mut dups).unwrap();
        assert!(dups.is_empty());
        let bytes: &'static [u8] = crate::util::keep::slice(t.write_coff(0));
        let obj = crate::coff::object::parse(bytes).unwrap();
        assert_eq!(obj.sections.len(), 2);
        assert_eq!(obj.sections[0].relocs.len(), 3);
        // Reading the object back gives the same leaves.
        let mut t2 = Tree::new(false);
        t2.add_object("x.obj", &obj, &mut dups).unwrap();
        assert!(dups.is_empty());
        let sorted = |v: &Vec<Vec<u8>>| {
            let mut v = v.clone();
            v.sort();
            v
        };
        assert_eq!(sorted(&t2.data), sorted(&t.data));
        // The leaves come back in tree order; from then on the object is a fixed point.
        let b2: &'static [u8] = crate::util::keep::slice(t2.write_coff(0));
        let mut t3 = Tree::new(false);
        t3.add_object("y.obj", &crate::coff::object::parse(b2).unwrap(), &mut dups).unwrap();
        assert_eq!(t3.write_coff(0), b2);
    }

    #[test]
    fn duplicates_in_llvm_wording() {
        let a = res(&[(Key::Id(6), Key::Id(1), 1033, b"x")]);
        let b = res(&[(Key::Id(6), Key::Id(1), 1033, b"y"), (w("T"), w("N"), 7, b"z")]);
        let c = res(&[(w("T"), w("N"), 7, b"z")]);
        let mut t = Tree::new(false);
        let mut dups = Vec::new();
        t.add_res("a.res", &a, &mut dups).unwrap();
        t.add_res("b.res", &b, &mut dups).unwrap();
        t.add_res("c.res", &c, &mut dups).unwrap();
        assert_eq!(
            dups,
            vec![
                "duplicate resource: type STRINGTABLE (ID 6)/name ID 1/language 1033, in a.res and in b.res".to_string(),
                "duplicate resource: type \"T\"/name \"N\"/language 7, in b.res and in c.res".to_string(),
            ]
        );
    }

    #[test]
    fn mingw_default_manifest_gives_way() {
        let a = res(&[(Key::Id(24), Key::Id(1), 0, b"default")]);
        let b = res(&[(Key::Id(24), Key::Id(1), 1033, b"user")]);
        let mut t = Tree::new(true);
        let mut dups = Vec::new();
        t.add_res("a.res", &a, &mut dups).unwrap();
        t.add_res("b.res", &b, &mut dups).unwrap();
        t.clean_up_manifests(&mut dups);
        assert!(dups.is_empty());
        assert_eq!(t.data, vec![b"user".to_vec()]);
    }

    #[test]
    fn truncated_res_is_an_error() {
        let mut a = res(&[(Key::Id(6), Key::Id(1), 1033, b"strings")]);
        a.truncate(a.len() - 6);
        assert!(Tree::new(false).add_res("a.res", &a, &mut Vec::new()).is_err());
    }
}
