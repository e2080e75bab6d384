//! Symbol names as lld shows them (`llvm::demangle`): Itanium C++ (also Rust's legacy
//! mangling, which is Itanium-shaped), Rust v0 (`_R...`) and Microsoft C++ (`?...`). One module,
//! so that diagnostics, maps and version-script `extern "C++"` patterns of both formats agree.

/// Demangles an Itanium C++ name; anything else (or a name that fails to demangle) is
/// returned unchanged, as `llvm::demangle` does.
pub fn itanium(name: &[u8]) -> Vec<u8> {
    if !(name.starts_with(b"_Z") || name.starts_with(b"__Z") || name.starts_with(b"___Z")) {
        return name.to_vec();
    }
    if let Some(s) = special(name) {
        return s.into_bytes();
    }
    let r = std::panic::catch_unwind(|| {
        let sym = cpp_demangle::Symbol::new(name).ok()?;
        sym.demangle().ok()
    });
    match r {
        Ok(Some(s)) => llvm_spelling(&s).into_bytes(),
        _ => name.to_vec(),
    }
}

/// Special names cpp_demangle prints in its own notation (`{vtable(X)}`), in LLVM's words:
/// vtables, VTTs, thunks and TLS wrapper and init functions.
fn special(name: &[u8]) -> Option<String> {
    let rest = name.strip_prefix(b"_ZT")?;
    let typed = |prefix: &str, ty: &[u8]| {
        // A type alone is demangled through its typeinfo name.
        let ti = itanium(&[b"_ZTI", ty].concat());
        let ti = String::from_utf8_lossy(&ti).into_owned();
        ti.strip_prefix("typeinfo for ").map(|t| format!("{prefix}{t}"))
    };
    let encoded = |prefix: &str, enc: &[u8]| {
        let full = [b"_Z", enc].concat();
        let d = itanium(&full);
        (d != full).then(|| format!("{prefix}{}", String::from_utf8_lossy(&d)))
    };
    match rest.first()? {
        b'V' => typed("vtable for ", &rest[1..]),
        b'T' => typed("VTT for ", &rest[1..]),
        b'W' => encoded("thread-local wrapper routine for ", &rest[1..]),
        b'H' => encoded("thread-local initialization routine for ", &rest[1..]),
        b'h' => {
            let at = rest.iter().position(|&c| c == b'_')?;
            encoded("non-virtual thunk to ", &rest[at + 1..])
        }
        b'v' => {
            let first = rest.iter().position(|&c| c == b'_')?;
            let second = rest[first + 1..].iter().position(|&c| c == b'_')? + first + 1;
            encoded("virtual thunk to ", &rest[second + 1..])
        }
        _ => None,
    }
}

/// Rewrites cpp_demangle's (libiberty-style) output into llvm's `ItaniumDemangle` spelling,
/// which is what lld matches against: adjacent template closings print as `>>`, not `> >`,
/// and clone suffixes as `foo() (.cold)`, not `foo() [clone .cold]`.
fn llvm_spelling(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    for (i, ch) in s.char_indices() {
        if ch == ' ' && out.ends_with('>') && b.get(i + 1) == Some(&b'>') {
            continue;
        }
        out.push(ch);
    }
    const CLONE: &str = " [clone ";
    if let Some(pos) = out.find(CLONE) {
        // Only when the whole tail is a run of ` [clone X]` groups.
        let mut raw = String::new();
        let mut tail = &out[pos..];
        let mut ok = true;
        while !tail.is_empty() {
            let Some(rest) = tail.strip_prefix(CLONE) else {
                ok = false;
                break;
            };
            let Some(end) = rest.find(']') else {
                ok = false;
                break;
            };
            raw.push_str(&rest[..end]);
            tail = &rest[end + 1..];
        }
        if ok {
            out.truncate(pos);
            out.push_str(" (");
            out.push_str(&raw);
            out.push(')');
        }
    }
    out
}

/// LLVM's `demangle`: whichever mangling `name` uses; anything else (or a name that fails to
/// demangle) as it is.
pub fn demangle(name: &str) -> String {
    if name.starts_with('?') {
        return match msvc_demangler::demangle(name, msvc_demangler::DemangleFlags::llvm()) {
            Ok(d) => d,
            Err(_) => name.to_string(),
        };
    }
    if name.starts_with("_R") {
        if let Ok(d) = rustc_demangle::try_demangle(name) {
            // LLVM's Rust demangler prints no hash suffix.
            return format!("{d:#}");
        }
        return name.to_string();
    }
    String::from_utf8_lossy(&itanium(name.as_bytes())).into_owned()
}

/// `demangle` for a name that may carry a version suffix (`foo@V`, `foo@@V`, kept as written).
pub fn demangle_versioned(name: &[u8]) -> String {
    let (base, suffix) = match name.iter().position(|&c| c == b'@') {
        Some(p) => name.split_at(p),
        None => (name, &b""[..]),
    };
    let mut s = demangle(&String::from_utf8_lossy(base));
    s.push_str(&String::from_utf8_lossy(suffix));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mangling() {
        assert_eq!(demangle("_Z3fooi"), "foo(int)");
        assert_eq!(demangle("?foo@@YAHXZ"), "int __cdecl foo(void)");
        assert_eq!(demangle("_RNvCs1234_7mycrate3foo"), "mycrate::foo");
        assert_eq!(demangle("main"), "main");
        assert_eq!(demangle_versioned(b"_Z3fooi@@V1"), "foo(int)@@V1");
        assert_eq!(demangle("_ZN1AIS_IiEEC1Ev"), "A<A<int>>::A()");
        assert_eq!(demangle("_ZTV5Shape"), "vtable for Shape");
        assert_eq!(demangle("_ZTT5Shape"), "VTT for Shape");
        assert_eq!(demangle("_ZThn8_N1C1fEv"), "non-virtual thunk to C::f()");
        assert_eq!(demangle("_ZTv0_n24_N1C1fEv"), "virtual thunk to C::f()");
        assert_eq!(demangle("_ZTW1x"), "thread-local wrapper routine for x");
    }
}
