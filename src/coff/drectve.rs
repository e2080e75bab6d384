//! Linker directives embedded in COFF objects (`.drectve`) and the
//! `/export:` argument syntax.
//!
//! Compilers pass linker options through an object's `.drectve` section:
//! MSVC-style `/DEFAULTLIB:foo.lib /EXPORT:f,DATA`, and clang/gcc for
//! MinGW `-export:foo -export:var,data -exclude-symbols:hidden` (what
//! clang-22 `--target=x86_64-w64-mingw32` emits for `dllexport` functions,
//! variables and hidden-visibility definitions). This module turns the
//! section contents into a list of [`Directive`]s the way lld-link does
//! (`ArgParser::parseDirectives` in lld/COFF/DriverUtils.cpp and
//! `LinkerDriver::parseDirectives` in lld/COFF/Driver.cpp):
//!
//! * tokenization with the Windows command-line rules
//!   (`cl::TokenizeWindowsCommandLineNoCopy`): whitespace and NUL separate
//!   tokens, `"` toggles quoting (`""` inside quotes is a literal quote),
//!   backslashes are literal except before a quote (2n backslashes + `"`
//!   give n backslashes and a quote toggle, 2n+1 give n backslashes and a
//!   literal quote);
//! * `/` or `-` (also `/?`, `-?`) option prefixes, option names
//!   case-insensitive, values case-preserved;
//! * the option set lld accepts in `.drectve`; the known-but-ignored ones
//!   (`/editandcontinue`, `/guardsym:`, `/throwingnew`, `/inferasanlibs`,
//!   `/inferasanlibs:no`, and `/arm64xsameaddress:` which only means
//!   something on ARM64EC) become [`Directive::Ignored`].
//!
//! [`parse_export`] is lld's `parseExport`, also used for `/export:` on the
//! lld-link command line.
//!
//! Pure: no I/O, no global state, deterministic.

use object::pe::{
    IMAGE_SCN_MEM_DISCARDABLE, IMAGE_SCN_MEM_EXECUTE, IMAGE_SCN_MEM_NOT_CACHED, IMAGE_SCN_MEM_NOT_PAGED, IMAGE_SCN_MEM_READ, IMAGE_SCN_MEM_SHARED,
    IMAGE_SCN_MEM_WRITE,
};

/// One directive from a `.drectve` section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Directive {
    /// `/defaultlib:name` — link this library (lld appends `.lib` if the
    /// name has no extension and, for MinGW, falls back to `lib<name>.a`).
    DefaultLib(String),
    /// `/nodefaultlib:name` — ignore this default library.
    NoDefaultLib(String),
    /// `/export:...` (`-export:...` from MinGW compilers).
    Export(ExportSpec),
    /// `/include:symbol` — make the symbol a GC root / force it undefined.
    Include(String),
    /// `/alternatename:from=to` — weak alias used if `from` stays undefined.
    AlternateName { from: String, to: String },
    /// `-exclude-symbols:a,b` — keep these out of MinGW auto-export.
    /// Empty names (from `a,,b`) are dropped.
    ExcludeSymbols(Vec<String>),
    /// `/aligncomm:name,N` — common symbol `name` needs `2^N` alignment;
    /// `alignment` is `1 << N` (what lld stores).
    AlignComm { name: String, alignment: u32 },
    /// `/entry:symbol`.
    Entry(String),
    /// `/failifmismatch:key=value`; all objects must agree per key.
    FailIfMismatch { key: String, value: String },
    /// `/manifestdependency:...`.
    ManifestDependency(String),
    /// `/merge:from=to`.
    Merge { from: String, to: String },
    /// `/release` — set the PE checksum.
    Release,
    /// `/section:name,attrs`; `characteristics` holds the `IMAGE_SCN_MEM_*`
    /// bits for the letters `d e k p r s w`.
    Section { name: String, characteristics: u32 },
    /// `/stack:reserve[,commit]`.
    Stack { reserve: u64, commit: Option<u64> },
    /// `/subsystem:name[,major[.minor]]`, unparsed (lld validates the name
    /// and version with the same code as the command line).
    Subsystem(String),
    /// Accepted and ignored by lld (the token is kept for diagnostics).
    Ignored(String),
    /// Not an option lld accepts in `.drectve`. lld warns
    /// `ignoring unknown argument: <token>` for unknown options (and
    /// errors `<opt> is not allowed in .drectve` for lld-link options it
    /// knows but does not accept here; this module does not carry lld's
    /// full option table, so both end up here).
    Unknown(String),
}

/// A parsed `/export:` argument:
/// `name[=internal][,@ordinal[,NONAME]][,DATA][,CONSTANT][,PRIVATE][,EXPORTAS,name]`
/// or `name=otherdll.func` (a forwarder).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ExportSpec {
    /// The exported name (lld's `extName` if given, else `name`).
    pub name: String,
    /// The internal symbol for `name=internal`; `None` when the exported
    /// symbol has the exported name.
    pub internal: Option<String>,
    pub ordinal: Option<u16>,
    pub data: bool,
    pub private: bool,
    pub noname: bool,
    pub constant: bool,
    /// Forwarder target for `name=dll.func` (a right-hand side containing
    /// a `.`).
    pub forward_to: Option<String>,
    /// `EXPORTAS,exportname`: the name the DLL exports.
    pub export_as: Option<String>,
    /// `==name` in a `.def` file: the name the import library imports
    /// (`IMPORT_NAME_EXPORTAS` there); the DLL still exports `name`.
    pub import_name: Option<String>,
    /// Where it was given; set by whoever collects it (the parsers leave the default).
    pub source: ExportSource,
}

/// Where an export was given (lld's `ExportSource`), for the warnings about one name exported
/// twice in different ways.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ExportSource {
    #[default]
    Export,
    Def,
    /// A `.drectve` of an object; `early` when the object was read with the command line's
    /// files, before lld adds `/export` and `/def` to its list.
    Directives {
        early: bool,
    },
}

impl ExportSource {
    fn name(self) -> &'static str {
        match self {
            ExportSource::Export => "/export",
            ExportSource::Def => "/def",
            ExportSource::Directives { .. } => "source file (directives)",
        }
    }

    /// lld's order of its export list: early directives, `/export`, `/def`, later directives.
    fn rank(self) -> u8 {
        match self {
            ExportSource::Directives { early: true } => 0,
            ExportSource::Export => 1,
            ExportSource::Def => 2,
            ExportSource::Directives { early: false } => 3,
        }
    }
}

/// The exports of a link, one per exported name, as lld's `fixupExports` keeps them (with its
/// warnings): a later export of the same symbol in other terms replaces one from directives
/// silently and is otherwise dropped with a warning naming both sources; an export of another
/// symbol under a name already taken is dropped silently. Returns them in lld's list order,
/// and first lld's error for two exports given one ordinal (checked on the whole list).
pub fn unique_exports(mut specs: Vec<ExportSpec>) -> Result<(Vec<ExportSpec>, Vec<String>), String> {
    specs.sort_by_key(|e| e.source.rank());
    let symbol = |e: &ExportSpec| e.internal.clone().unwrap_or_else(|| e.name.clone());
    let mut ordinals = std::collections::HashSet::new();
    for e in &specs {
        if let Some(o) = e.ordinal.filter(|&o| o != 0) {
            if !ordinals.insert(o) {
                return Err(format!("duplicate export ordinal: {}", symbol(e)));
            }
        }
    }
    let mut out: Vec<ExportSpec> = Vec::new();
    let mut at: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut warnings = Vec::new();
    for e in specs {
        let Some(&k) = at.get(e.table_name()) else {
            at.insert(e.table_name().to_string(), out.len());
            out.push(e);
            continue;
        };
        let old = &out[k];
        if (ExportSpec { source: old.source, ..e.clone() }) == *old || symbol(old) != symbol(&e) {
            continue;
        }
        if matches!(old.source, ExportSource::Directives { .. }) {
            out[k] = e;
        } else if old.source == e.source {
            warnings.push(format!("duplicate {} option: {}", e.source.name(), symbol(&e)));
        } else {
            warnings.push(format!("duplicate export: {} first seen in {}, now in {}", symbol(&e), old.source.name(), e.source.name()));
        }
    }
    Ok((out, warnings))
}

impl ExportSpec {
    /// The name in the DLL's export table (lld's `exportName`): `EXPORTAS` wins.
    pub fn table_name(&self) -> &str {
        self.export_as.as_deref().filter(|s| !s.is_empty()).unwrap_or(&self.name)
    }
}

/// Windows command-line tokenizer (LLVM's `tokenizeWindowsCommandLineImpl`
/// without the initial-command-name special case).
pub fn tokenize(src: &str) -> Vec<String> {
    fn is_ws(c: char) -> bool {
        matches!(c, ' ' | '\t' | '\r' | '\n' | '\0')
    }
    let chars: Vec<char> = src.chars().collect();
    let mut tokens = Vec::new();
    let mut tok = String::new();
    // Whether we are inside a token (possibly an empty quoted one).
    let mut in_token = false;
    let mut quoted = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if !quoted && is_ws(c) {
            if in_token {
                tokens.push(std::mem::take(&mut tok));
                in_token = false;
            }
            i += 1;
            continue;
        }
        in_token = true;
        match c {
            '\\' => {
                let start = i;
                while i < chars.len() && chars[i] == '\\' {
                    i += 1;
                }
                let n = i - start;
                if i < chars.len() && chars[i] == '"' {
                    tok.extend(std::iter::repeat_n('\\', n / 2));
                    if n % 2 == 1 {
                        tok.push('"');
                        i += 1;
                    }
                    // Even: the quote is handled by the next iteration.
                } else {
                    tok.extend(std::iter::repeat_n('\\', n));
                }
                continue;
            }
            '"' if quoted => {
                if i + 1 < chars.len() && chars[i + 1] == '"' {
                    tok.push('"');
                    i += 1;
                } else {
                    quoted = false;
                }
            }
            '"' => quoted = true,
            _ => tok.push(c),
        }
        i += 1;
    }
    if in_token {
        tokens.push(tok);
    }
    tokens
}

/// `s` without `prefix` if it starts with it, ASCII case-insensitively.
fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    if s.len() >= prefix.len() && s.is_char_boundary(prefix.len()) && s[..prefix.len()].eq_ignore_ascii_case(prefix) {
        Some(&s[prefix.len()..])
    } else {
        None
    }
}

/// LLVM's `StringRef::getAsInteger` with radix 0 (auto-detected: `0x`,
/// `0b`, `0o`, leading `0` for octal), for a signed result: an optional
/// `-`, no `+`, the whole string must be consumed.
fn get_as_integer(s: &str) -> Option<i128> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s),
    };
    let v = get_as_unsigned(body)?;
    Some(if neg { -(v as i128) } else { v as i128 })
}

fn get_as_unsigned(s: &str) -> Option<u64> {
    let (radix, digits) = if let Some(d) = strip_prefix_ci(s, "0x") {
        (16, d)
    } else if let Some(d) = strip_prefix_ci(s, "0b") {
        (2, d)
    } else if let Some(d) = s.strip_prefix("0o") {
        (8, d)
    } else if s.len() > 1 && s.as_bytes()[0] == b'0' && s.as_bytes()[1].is_ascii_digit() {
        (8, &s[1..])
    } else {
        (10, s)
    };
    if digits.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for c in digits.chars() {
        let d = c.to_digit(36)?;
        if d >= radix {
            return None;
        }
        v = v.checked_mul(u64::from(radix))?.checked_add(u64::from(d))?;
    }
    Some(v)
}

/// Parses an `/export:` argument like lld's `parseExport`.
///
/// Errors: `invalid /export: <spec>` for an empty name, an empty internal
/// name, an unknown flag, `NONAME` before the ordinal, or an ordinal
/// outside 1..=65535; `invalid EXPORTAS value: <rest>` when `EXPORTAS` is
/// not followed by exactly one more comma-separated token.
pub fn parse_export(spec: &str) -> Result<ExportSpec, String> {
    let err = || format!("invalid /export: {spec}");
    let (head, mut rest) = spec.split_once(',').unwrap_or((spec, ""));
    if head.is_empty() {
        return Err(err());
    }
    let mut e = ExportSpec::default();
    match head.split_once('=') {
        Some((x, y)) if y.contains('.') => {
            // "<name>=<dllname>.<name>": a forwarder.
            if x.is_empty() {
                return Err(err());
            }
            e.name = x.to_string();
            e.forward_to = Some(y.to_string());
        }
        Some((x, y)) => {
            if y.is_empty() {
                return Err(err());
            }
            if x.is_empty() {
                e.name = y.to_string();
            } else {
                e.name = x.to_string();
                e.internal = Some(y.to_string());
            }
        }
        None => e.name = head.to_string(),
    }

    while !rest.is_empty() {
        let (tok, r) = rest.split_once(',').unwrap_or((rest, ""));
        rest = r;
        if tok.eq_ignore_ascii_case("noname") {
            if e.ordinal.is_none() {
                return Err(err());
            }
            e.noname = true;
        } else if tok.eq_ignore_ascii_case("data") {
            e.data = true;
        } else if tok.eq_ignore_ascii_case("constant") {
            e.constant = true;
        } else if tok.eq_ignore_ascii_case("private") {
            e.private = true;
        } else if tok.eq_ignore_ascii_case("exportas") {
            if !rest.is_empty() && !rest.contains(',') {
                e.export_as = Some(rest.to_string());
                break;
            }
            return Err(format!("invalid EXPORTAS value: {rest}"));
        } else if let Some(num) = tok.strip_prefix('@') {
            match get_as_integer(num) {
                Some(ord) if (1..=65535).contains(&ord) && ord <= i128::from(i32::MAX) => e.ordinal = Some(ord as u16),
                _ => return Err(err()),
            }
        } else {
            return Err(err());
        }
    }
    Ok(e)
}

/// Splits `s` at the first `=` into two non-empty halves.
fn split_pair(s: &str) -> Option<(String, String)> {
    match s.split_once('=') {
        Some((a, b)) if !a.is_empty() && !b.is_empty() => Some((a.to_string(), b.to_string())),
        _ => None,
    }
}

/// lld's `parseNumbers`: `<integer>[,<integer>]`.
pub fn parse_numbers(arg: &str) -> Result<(u64, Option<u64>), String> {
    let (s1, s2) = arg.split_once(',').unwrap_or((arg, ""));
    let a = get_as_unsigned(s1).ok_or_else(|| format!("invalid number: {s1}"))?;
    let b = if s2.is_empty() { None } else { Some(get_as_unsigned(s2).ok_or_else(|| format!("invalid number: {s2}"))?) };
    Ok((a, b))
}

/// One option token (after the fast paths) → directive.
pub fn parse_option(tok: &str) -> Result<Directive, String> {
    let body = ["/?", "-?", "/", "-"].iter().find_map(|p| tok.strip_prefix(p));
    let Some(body) = body else {
        // A bare word is an input file to lld's option parser, which
        // .drectve does not accept (the caller says so, naming the object).
        return Ok(Directive::Unknown(tok.to_string()));
    };
    let flag = |name: &str| body.eq_ignore_ascii_case(name);
    let joined = |name: &str| strip_prefix_ci(body, name);

    if flag("release") {
        return Ok(Directive::Release);
    }
    if flag("editandcontinue") || flag("throwingnew") || flag("inferasanlibs") || flag("inferasanlibs:no") {
        return Ok(Directive::Ignored(tok.to_string()));
    }
    if joined("guardsym:").is_some() || joined("arm64xsameaddress:").is_some() {
        return Ok(Directive::Ignored(tok.to_string()));
    }
    if let Some(v) = joined("defaultlib:") {
        return Ok(Directive::DefaultLib(v.to_string()));
    }
    if let Some(v) = joined("nodefaultlib:") {
        return Ok(Directive::NoDefaultLib(v.to_string()));
    }
    if let Some(v) = joined("export:") {
        return Ok(Directive::Export(parse_export(v)?));
    }
    if let Some(v) = joined("include:") {
        return Ok(Directive::Include(v.to_string()));
    }
    if let Some(v) = joined("exclude-symbols:") {
        return Ok(exclude_symbols(v));
    }
    if let Some(v) = joined("alternatename:") {
        let (from, to) = split_pair(v).ok_or_else(|| format!("/alternatename: invalid argument: {v}"))?;
        return Ok(Directive::AlternateName { from, to });
    }
    if let Some(v) = joined("aligncomm:") {
        let bad = || format!("/aligncomm: invalid argument: {v}");
        let (name, align) = v.split_once(',').unwrap_or((v, ""));
        if name.is_empty() || align.is_empty() {
            return Err(bad());
        }
        let n = get_as_integer(align).filter(|n| (0..31).contains(n)).ok_or_else(bad)?;
        return Ok(Directive::AlignComm { name: name.to_string(), alignment: 1u32 << n });
    }
    if let Some(v) = joined("entry:") {
        if v.is_empty() {
            return Err("missing entry point symbol name".into());
        }
        return Ok(Directive::Entry(v.to_string()));
    }
    if let Some(v) = joined("failifmismatch:") {
        let (key, value) = split_pair(v).ok_or_else(|| format!("/failifmismatch: invalid argument: {v}"))?;
        return Ok(Directive::FailIfMismatch { key, value });
    }
    if let Some(v) = joined("manifestdependency:") {
        return Ok(Directive::ManifestDependency(v.to_string()));
    }
    if let Some(v) = joined("merge:") {
        let (from, to) = split_pair(v).ok_or_else(|| format!("/merge: invalid argument: {v}"))?;
        if from == ".rsrc" || to == ".rsrc" {
            return Err("/merge: cannot merge '.rsrc' with any section".into());
        }
        if from == ".reloc" || to == ".reloc" {
            return Err("/merge: cannot merge '.reloc' with any section".into());
        }
        return Ok(Directive::Merge { from, to });
    }
    if let Some(v) = joined("section:") {
        let bad = || format!("/section: invalid argument: {v}");
        let (name, attrs) = v.split_once(',').unwrap_or((v, ""));
        if name.is_empty() || attrs.is_empty() {
            return Err(bad());
        }
        let mut characteristics = 0;
        for c in attrs.chars() {
            characteristics |= match c.to_ascii_lowercase() {
                'd' => IMAGE_SCN_MEM_DISCARDABLE,
                'e' => IMAGE_SCN_MEM_EXECUTE,
                'k' => IMAGE_SCN_MEM_NOT_CACHED,
                'p' => IMAGE_SCN_MEM_NOT_PAGED,
                'r' => IMAGE_SCN_MEM_READ,
                's' => IMAGE_SCN_MEM_SHARED,
                'w' => IMAGE_SCN_MEM_WRITE,
                // lld's `parseSectionAttributes` names the attributes alone.
                _ => return Err(format!("/section: invalid argument: {attrs}")),
            };
        }
        return Ok(Directive::Section { name: name.to_string(), characteristics });
    }
    if let Some(v) = joined("stack:") {
        let (reserve, commit) = parse_numbers(v)?;
        return Ok(Directive::Stack { reserve, commit });
    }
    if let Some(v) = joined("subsystem:") {
        return Ok(Directive::Subsystem(v.to_string()));
    }
    Ok(Directive::Unknown(tok.to_string()))
}

fn exclude_symbols(v: &str) -> Directive {
    Directive::ExcludeSymbols(v.split(',').filter(|s| !s.is_empty()).map(String::from).collect())
}

/// Parses the contents of a `.drectve` section.
///
/// The text must be UTF-8 (a leading UTF-8 byte-order mark is skipped);
/// NUL bytes count as whitespace. Directives are returned in order.
/// lld additionally deduplicates identical `/export:` strings across the
/// objects of a link before parsing them; that is left to the caller.
///
/// Errors are the messages lld reports for the same input (invalid
/// `/export:`, `/alternatename:`, `/aligncomm:`, `/failifmismatch:`,
/// `/merge:`, `/section:`, `/stack:` arguments, an empty `/entry:`, a bare
/// non-option word), plus `.drectve is not valid UTF-8`.
pub fn parse(text: &[u8]) -> Result<Vec<Directive>, String> {
    let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
    let text = std::str::from_utf8(text).map_err(|_| ".drectve is not valid UTF-8".to_string())?;
    let mut out = Vec::new();
    for tok in tokenize(text) {
        // lld's fast paths, for "/" and "-" prefixes only.
        let fast = |name: &str| strip_prefix_ci(&tok, &format!("/{name}")).or_else(|| strip_prefix_ci(&tok, &format!("-{name}")));
        if let Some(v) = fast("export:") {
            out.push(Directive::Export(parse_export(v)?));
        } else if let Some(v) = fast("include:") {
            out.push(Directive::Include(v.to_string()));
        } else if let Some(v) = fast("exclude-symbols:") {
            out.push(exclude_symbols(v));
        } else {
            out.push(parse_option(&tok)?);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exp(name: &str) -> ExportSpec {
        ExportSpec { name: name.into(), ..Default::default() }
    }

    /// Exactly what clang-22 --target=x86_64-w64-mingw32 wrote for
    /// dllexport functions and variables (x.c).
    #[test]
    fn clang_mingw_dllexport() {
        let d = parse(b" -export:foo -export:bar -export:var,data -export:zeta_str,data").unwrap();
        assert_eq!(
            d,
            [
                Directive::Export(exp("foo")),
                Directive::Export(exp("bar")),
                Directive::Export(ExportSpec { data: true, ..exp("var") }),
                Directive::Export(ExportSpec { data: true, ..exp("zeta_str") }),
            ]
        );
    }

    /// clang-22 (MinGW, C++) with a hidden-visibility definition, C++
    /// mangled names and an asm label containing a quote and a space, which
    /// clang does not escape: the Windows tokenizer then splits it oddly and
    /// the rest of the section becomes one quoted bare word, which lld
    /// rejects as well.
    #[test]
    fn clang_mingw_cxx_and_exclude_symbols() {
        let text: &[u8] = b" -export:_Z2fni -export:_ZN2ns3cxxEd -export:\"we\"ird name\" -exclude-symbols:_Z3hidv \
              -export:_ZN1S1mEv -export:vv,data -export:cst,data -export:_ZN1S2svE,data";
        let toks = tokenize(std::str::from_utf8(text).unwrap());
        assert_eq!(toks[..3], ["-export:_Z2fni", "-export:_ZN2ns3cxxEd", "-export:weird"]);
        assert_eq!(toks.len(), 4);
        assert!(toks[3].starts_with("name -exclude-symbols:_Z3hidv"));
        assert!(matches!(parse(text).unwrap().last(), Some(Directive::Unknown(_))));

        let d = parse(b" -export:_Z2fni -exclude-symbols:_Z3hidv -export:_ZN1S1mEv -export:_ZN1S2svE,data").unwrap();
        assert_eq!(
            d,
            [
                Directive::Export(exp("_Z2fni")),
                Directive::ExcludeSymbols(vec!["_Z3hidv".into()]),
                Directive::Export(exp("_ZN1S1mEv")),
                Directive::Export(ExportSpec { data: true, ..exp("_ZN1S2svE") }),
            ]
        );
        assert_eq!(parse(b"-exclude-symbols:a,,b").unwrap(), [Directive::ExcludeSymbols(vec!["a".into(), "b".into()])]);
    }

    /// What clang-22 (MSVC target, or MinGW with -fms-extensions) writes
    /// for `#pragma comment(lib/linker, ...)` and dllexport.
    #[test]
    fn clang_msvc_style() {
        let d = parse(b" /DEFAULTLIB:foo.lib /DEFAULTLIB:\"bar baz.lib\" /alternatename:aa=bb /include:incsym").unwrap();
        assert_eq!(
            d,
            [
                Directive::DefaultLib("foo.lib".into()),
                Directive::DefaultLib("bar baz.lib".into()),
                Directive::AlternateName { from: "aa".into(), to: "bb".into() },
                Directive::Include("incsym".into()),
            ]
        );
        let d = parse(b" /EXPORT:foo /EXPORT:bar /EXPORT:var,DATA /EXPORT:zeta_str,DATA").unwrap();
        assert_eq!(d[2], Directive::Export(ExportSpec { data: true, ..exp("var") }));
    }

    #[test]
    fn other_options() {
        let d = parse(
            b"/nodefaultlib:libcmt /ENTRY:start /failifmismatch:_MSC_VER=1900 /manifestdependency:type='win32' \
              /merge:.a=.b /release /section:.shr,RWS /stack:0x100000,4096 /subsystem:console,6.0 \
              /aligncomm:cv,4 /guardsym:x /editandcontinue /throwingnew /inferasanlibs /inferasanlibs:no \
              /?include:q -frobnicate /arm64xsameaddress:f\0\0",
        )
        .unwrap();
        assert_eq!(
            d,
            [
                Directive::NoDefaultLib("libcmt".into()),
                Directive::Entry("start".into()),
                Directive::FailIfMismatch { key: "_MSC_VER".into(), value: "1900".into() },
                Directive::ManifestDependency("type='win32'".into()),
                Directive::Merge { from: ".a".into(), to: ".b".into() },
                Directive::Release,
                Directive::Section { name: ".shr".into(), characteristics: IMAGE_SCN_MEM_READ | IMAGE_SCN_MEM_WRITE | IMAGE_SCN_MEM_SHARED },
                Directive::Stack { reserve: 0x100000, commit: Some(4096) },
                Directive::Subsystem("console,6.0".into()),
                Directive::AlignComm { name: "cv".into(), alignment: 16 },
                Directive::Ignored("/guardsym:x".into()),
                Directive::Ignored("/editandcontinue".into()),
                Directive::Ignored("/throwingnew".into()),
                Directive::Ignored("/inferasanlibs".into()),
                Directive::Ignored("/inferasanlibs:no".into()),
                Directive::Include("q".into()),
                Directive::Unknown("-frobnicate".into()),
                Directive::Ignored("/arm64xsameaddress:f".into()),
            ]
        );
    }

    #[test]
    fn directive_errors() {
        assert_eq!(parse(b"/alternatename:a=").unwrap_err(), "/alternatename: invalid argument: a=");
        assert_eq!(parse(b"/entry:").unwrap_err(), "missing entry point symbol name");
        assert_eq!(parse(b"/merge:.rsrc=.text").unwrap_err(), "/merge: cannot merge '.rsrc' with any section");
        assert_eq!(parse(b"/section:.x,q").unwrap_err(), "/section: invalid argument: q");
        assert_eq!(parse(b"/stack:zz").unwrap_err(), "invalid number: zz");
        assert_eq!(parse(b"/aligncomm:x").unwrap_err(), "/aligncomm: invalid argument: x");
        assert_eq!(parse(b"foo.lib").unwrap(), [Directive::Unknown("foo.lib".into())]);
        assert_eq!(parse(b"-export:").unwrap_err(), "invalid /export: ");
        assert!(parse(b"\xff").is_err());
        assert_eq!(parse(b"\xEF\xBB\xBF/DEFAULTLIB:x").unwrap(), [Directive::DefaultLib("x".into())]);
        assert!(parse(b"  \0 ").unwrap().is_empty());
    }

    #[test]
    fn tokenizer_rules() {
        assert_eq!(tokenize(r#"a "b c" d"#), ["a", "b c", "d"]);
        assert_eq!(tokenize(r#""a""b""#), ["a\"b"]);
        assert_eq!(tokenize(r#"a\\\"b"#), ["a\\\"b"]);
        assert_eq!(tokenize(r#"a\\"b c""#), ["a\\b c"]);
        assert_eq!(tokenize(r"a\b\\c"), [r"a\b\\c"]);
        assert_eq!(tokenize(r#""""#), [""]);
        assert_eq!(tokenize("x\ty\r\nz\0w"), ["x", "y", "z", "w"]);
        assert_eq!(tokenize(r#"-export:"a b",DATA"#), ["-export:a b,DATA"]);
    }

    #[test]
    fn export_specs() {
        assert_eq!(
            parse_export("name=internal,@5,NONAME,DATA,PRIVATE").unwrap(),
            ExportSpec {
                name: "name".into(),
                internal: Some("internal".into()),
                ordinal: Some(5),
                data: true,
                private: true,
                noname: true,
                ..Default::default()
            }
        );
        assert_eq!(parse_export("f=kernel32.Sleep").unwrap(), ExportSpec { name: "f".into(), forward_to: Some("kernel32.Sleep".into()), ..Default::default() });
        assert_eq!(parse_export("=g").unwrap(), exp("g"));
        assert_eq!(parse_export("f,constant").unwrap(), ExportSpec { constant: true, ..exp("f") });
        assert_eq!(parse_export("f,EXPORTAS,g").unwrap(), ExportSpec { export_as: Some("g".into()), ..exp("f") });
        assert_eq!(parse_export("f,@0x10").unwrap().ordinal, Some(16));
        assert_eq!(parse_export("f,@010").unwrap().ordinal, Some(8));
        assert_eq!(parse_export("f,@65535").unwrap().ordinal, Some(65535));
        assert_eq!(parse_export("f,").unwrap(), exp("f"));
        for bad in ["", ",data", "f=", "f,NONAME,@1", "f,@0", "f,@65536", "f,@-1", "f,@+1", "f,@08", "f,@", "f,bogus", "f,,data"] {
            assert_eq!(parse_export(bad).unwrap_err(), format!("invalid /export: {bad}"), "{bad}");
        }
        assert_eq!(parse_export("f,EXPORTAS").unwrap_err(), "invalid EXPORTAS value: ");
        assert_eq!(parse_export("f,EXPORTAS,a,b").unwrap_err(), "invalid EXPORTAS value: a,b");
    }

    /// Compiles a MinGW C file with clang-22 and parses the `.drectve` it
    /// emits (read with the `object` crate). Needs clang-22 on PATH.
    #[test]
    fn parses_clang22_output() {
        use object::{Object, ObjectSection};
        let dir = std::env::temp_dir().join(format!("dtld-drectve-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("d.c"),
            "__declspec(dllexport) int fn(int a) { return a; }\n__declspec(dllexport) int vv = 1;\n\
             __attribute__((visibility(\"hidden\"))) int hid(void) { return 1; }\n",
        )
        .unwrap();
        let st = std::process::Command::new("clang-22")
            .args(["--target=x86_64-w64-mingw32", "-c", "d.c", "-o", "d.o"])
            .current_dir(&dir)
            .status()
            .expect("clang-22 must be installed");
        assert!(st.success());
        let data = std::fs::read(dir.join("d.o")).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let obj = object::File::parse(&*data).unwrap();
        let sec = obj.section_by_name(".drectve").expect(".drectve");
        let d = parse(sec.data().unwrap()).unwrap();
        assert!(d.contains(&Directive::Export(exp("fn"))), "{d:?}");
        assert!(d.contains(&Directive::Export(ExportSpec { data: true, ..exp("vv") })), "{d:?}");
        assert!(d.contains(&Directive::ExcludeSymbols(vec!["hid".into()])), "{d:?}");
    }
}
