//! Symbol names as lld shows them (`llvm::demangle`): Itanium C++ (also Rust's legacy
//! mangling, which is Itanium-shaped), Rust v0 (`_R...`) and Microsoft C++ (`?...`). One module,
//! so that diagnostics, maps and version-script `extern "C++"` patterns of both formats agree.

/// Demangles an Itanium C++ name; anything else (or a name that fails to demangle) is
/// returned unchanged, as `llvm::demangle` does.
pub fn itanium(name: &[u8]) -> Vec<u8> {
    if !(name.starts_with(b"_Z") || name.starts_with(b"__Z") || name.starts_with(b"___Z")) {
        return name.to_vec();
    }
    let r = std::panic::catch_unwind(|| {
        let sym = cpp_demangle::Symbol::new(name).ok()?;
        sym.demangle().ok()
    });
    match r {
        Ok(Some(s)) => llvm_spelling(&special_names(name, &s)).into_bytes(),
        _ => name.to_vec(),
    }
}

/// cpp_demangle's spelling of the Itanium special names in LLVM's words, which lld prints
/// (`vtable for A`, not `{vtable(A)}`): decided by the mangled prefix, since cpp_demangle prints
/// thunks with their offsets.
fn special_names(mangled: &[u8], s: &str) -> String {
    let rest = mangled.strip_prefix(b"_Z").unwrap_or(mangled);
    let inner = |open: &str| s.strip_prefix(open).and_then(|x| x.strip_suffix(")}"));
    let prefixed = |words: &str, what: Option<&str>| what.map(|w| format!("{words}{w}"));
    let out = if rest.starts_with(b"TV") {
        prefixed("vtable for ", inner("{vtable("))
    } else if rest.starts_with(b"TT") {
        prefixed("VTT for ", inner("{vtt("))
    } else if rest.starts_with(b"Th") || rest.starts_with(b"Tv") || rest.starts_with(b"Tc") {
        // `{virtual override thunk({offset(-8)}, [{offset(..)}, ]F)}`: the function after the
        // offsets.
        let words = match rest[1] {
            b'h' => "non-virtual thunk to ",
            b'v' => "virtual thunk to ",
            _ => "covariant return thunk to ",
        };
        let mut f = inner("{virtual override thunk(");
        while let Some(x) = f.filter(|x| x.starts_with('{')) {
            f = x.find("}, ").map(|i| &x[i + 3..]);
        }
        prefixed(words, f)
    } else if rest.starts_with(b"TH") {
        prefixed("thread-local initialization routine for ", s.strip_prefix("TLS init function for "))
    } else if rest.starts_with(b"TW") {
        prefixed("thread-local wrapper routine for ", s.strip_prefix("TLS wrapper function for "))
    } else if rest.starts_with(b"TC") {
        // LLVM names the derived class first: `construction vtable for C-in-A::B`.
        s.strip_prefix("construction vtable for ").and_then(|x| x.split_once("-in-")).map(|(a, b)| format!("construction vtable for {b}-in-{a}"))
    } else if rest.starts_with(b"GR") {
        s.strip_prefix("reference temporary #").and_then(|x| x.split_once(" for ")).map(|(_, e)| format!("reference temporary for {e}"))
    } else {
        None
    };
    out.unwrap_or_else(|| s.to_string())
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

/// msvc-demangler spells the compiler's special member functions out (`scalar deleting
/// destructor'); LLVM's `MicrosoftDemangle` (and so lld, and llvm-undname) abbreviates them.
fn llvm_msvc_spelling(mut s: String) -> String {
    const NAMES: [(&str, &str); 12] = [
        ("`vbase destructor'", "`vbase dtor'"),
        ("`vector deleting destructor'", "`vector deleting dtor'"),
        ("`default constructor closure'", "`default ctor closure'"),
        ("`scalar deleting destructor'", "`scalar deleting dtor'"),
        ("`vector constructor iterator'", "`vector ctor iterator'"),
        ("`vector destructor iterator'", "`vector dtor iterator'"),
        ("`vector vbase constructor iterator'", "`vector vbase ctor iterator'"),
        ("`eh vector constructor iterator'", "`eh vector ctor iterator'"),
        ("`eh vector destructor iterator'", "`eh vector dtor iterator'"),
        ("`eh vector vbase constructor iterator'", "`eh vector vbase ctor iterator'"),
        ("`copy constructor closure'", "`copy ctor closure'"),
        ("`local vftable constructor closure'", "`local vftable ctor closure'"),
    ];
    if s.contains("structor") {
        for (long, short) in NAMES {
            s = s.replace(long, short);
        }
    }
    s
}

/// LLVM's `demangle`: whichever mangling `name` uses; anything else (or a name that fails to
/// demangle) as it is.
pub fn demangle(name: &str) -> String {
    if name.starts_with('?') {
        return match msvc_demangler::demangle(name, msvc_demangler::DemangleFlags::llvm()) {
            Ok(d) => llvm_msvc_spelling(d),
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
        // The compiler's special members as llvm-undname-22 prints them.
        assert_eq!(demangle("??_GFoo@@UEAAPEAXI@Z"), "public: virtual void * __cdecl Foo::`scalar deleting dtor'(unsigned int)");
        assert_eq!(demangle("??_FFoo@@QEAAXXZ"), "public: void __cdecl Foo::`default ctor closure'(void)");
        assert_eq!(demangle("??_LFoo@@YAXXZ"), "void __cdecl Foo::`eh vector ctor iterator'(void)");
        // The special names as llvm-cxxfilt-22 prints them.
        for (mangled, llvm) in [
            ("_ZTV1A", "vtable for A"),
            ("_ZTT1C", "VTT for C"),
            ("_ZTI1A", "typeinfo for A"),
            ("_ZTS1A", "typeinfo name for A"),
            ("_ZTIi", "typeinfo for int"),
            ("_ZThn8_N1B1fEv", "non-virtual thunk to B::f()"),
            ("_ZTv0_n24_N1B1fEv", "virtual thunk to B::f()"),
            ("_ZTch0_h16_N1D1gEv", "covariant return thunk to D::g()"),
            ("_ZGVZ1fvE1x", "guard variable for f()::x"),
            ("_ZTH1x", "thread-local initialization routine for x"),
            ("_ZTW1x", "thread-local wrapper routine for x"),
            ("_ZTCN1A1BE0_1C", "construction vtable for C-in-A::B"),
            ("_ZGR1x_", "reference temporary for x"),
            ("_ZTVN3foo3BarIiEE", "vtable for foo::Bar<int>"),
            ("_ZTISt9exception", "typeinfo for std::exception"),
        ] {
            assert_eq!(demangle(mangled), llvm, "{mangled}");
        }
    }
}
