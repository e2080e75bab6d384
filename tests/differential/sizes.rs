//! Section sizes of the two outputs (`//#SectionSizes:`): the fingerprint deliberately says
//! nothing about sizes, but a linker that keeps dead code alive through debug information,
//! keeps the FDEs of discarded functions or does not deduplicate `.debug_str` links programs
//! that behave the same and are much bigger. This compares, section by section, the sizes dtld
//! and ld.lld-22 give the sections a fixture names, exactly or within a tolerance, and renders
//! the table a failing trial shows (and `scripts/real-programs/` prints for real programs).

use std::collections::BTreeMap;

use goblin::elf::Elf;

use crate::directives::SectionSizes;

/// Section name → size (`sh_size`; the sizes of sections with the same name are added up).
pub type Sizes = BTreeMap<String, u64>;

/// The sizes of every named section of an ELF file, read with goblin.
pub fn section_sizes(data: &[u8]) -> Result<Sizes, String> {
    let elf = Elf::parse(data).map_err(|e| format!("goblin cannot parse the output: {e}"))?;
    let mut sizes = Sizes::new();
    for sh in &elf.section_headers {
        let Some(name) = elf.shdr_strtab.get_at(sh.sh_name) else {
            continue;
        };
        if name.is_empty() {
            continue;
        }
        *sizes.entry(name.to_string()).or_default() += sh.sh_size;
    }
    Ok(sizes)
}

/// The contents of the section called `name` (None: no such section; NOBITS: empty).
pub fn section_contents(data: &[u8], name: &str) -> Result<Option<Vec<u8>>, String> {
    let elf = Elf::parse(data).map_err(|e| format!("goblin cannot parse the output: {e}"))?;
    for sh in &elf.section_headers {
        if elf.shdr_strtab.get_at(sh.sh_name) != Some(name) {
            continue;
        }
        if sh.sh_type == goblin::elf::section_header::SHT_NOBITS {
            return Ok(Some(Vec::new()));
        }
        let (off, size) = (sh.sh_offset as usize, sh.sh_size as usize);
        let bytes = off.checked_add(size).and_then(|end| data.get(off..end)).ok_or_else(|| format!("{name} lies outside the file"))?;
        return Ok(Some(bytes.to_vec()));
    }
    Ok(None)
}

/// One compared section.
struct Row {
    name: String,
    ours: Option<u64>,
    theirs: Option<u64>,
    permille: u64,
}

impl Row {
    fn ok(&self) -> bool {
        match (self.ours, self.theirs) {
            (Some(a), Some(b)) => a.abs_diff(b) * 1000 <= self.permille * b,
            _ => false,
        }
    }
}

/// Compares the sections `lines` name: every pattern must match a section of ld.lld's output
/// (else the fixture is wrong), each matched section must exist in both outputs, and dtld's
/// size must be within the line's tolerance of ld.lld's (the first line naming a section
/// decides its tolerance). Returns the table of every compared section and the problems.
pub fn compare(ours: &Sizes, theirs: &Sizes, lines: &[SectionSizes]) -> (String, Vec<String>) {
    let mut problems = Vec::new();
    let mut rows: Vec<Row> = Vec::new();
    for line in lines {
        for pattern in &line.patterns {
            let one = SectionSizes { patterns: vec![pattern.clone()], tolerance_permille: 0 };
            if !theirs.keys().any(|n| one.matches(n)) {
                problems.push(format!("SectionSizes: `{pattern}` matches no section of ld.lld's output (fixture bug?)"));
            }
        }
        let names = ours.keys().chain(theirs.keys()).filter(|n| line.matches(n));
        for name in names {
            if rows.iter().any(|r| r.name == *name) {
                continue;
            }
            rows.push(Row { name: name.clone(), ours: ours.get(name).copied(), theirs: theirs.get(name).copied(), permille: line.tolerance_permille });
        }
    }
    let bad: Vec<&Row> = rows.iter().filter(|r| !r.ok()).collect();
    let table = render(&rows);
    if !bad.is_empty() {
        let names: Vec<&str> = bad.iter().map(|r| r.name.as_str()).collect();
        problems.push(format!("section sizes differ from ld.lld's beyond the fixture's tolerance ({}):\n{table}", names.join(", ")));
    }
    (table, problems)
}

/// The table: section, dtld's size, ld.lld's, the difference in % of ld.lld's, the allowed
/// difference, and the verdict.
fn render(rows: &[Row]) -> String {
    let show = |v: Option<u64>| v.map_or("absent".to_string(), |v| v.to_string());
    let width = rows.iter().map(|r| r.name.len()).max().unwrap_or(7).max(7);
    let mut out = format!("  {:width$}  {:>10}  {:>10}  {:>8}  {:>7}\n", "section", "dtld", "ld.lld", "diff", "allowed");
    for r in rows {
        let diff = match (r.ours, r.theirs) {
            (Some(a), Some(b)) if b > 0 => {
                format!("{:+.2}%", (a as f64 - b as f64) * 100.0 / b as f64)
            }
            (Some(a), Some(_)) => format!("{a:+}B"),
            _ => "-".to_string(),
        };
        let allowed = if r.permille == 0 { "exact".to_string() } else { format!("{}.{}%", r.permille / 10, r.permille % 10) };
        out.push_str(&format!(
            "  {:width$}  {:>10}  {:>10}  {:>8}  {:>7}  {}\n",
            r.name,
            show(r.ours),
            show(r.theirs),
            diff,
            allowed,
            if r.ok() { "ok" } else { "DIFFERS" }
        ));
    }
    out
}
