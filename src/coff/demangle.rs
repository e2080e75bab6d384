//! Symbol names as lld-link prints them in diagnostics and maps (`maybeDemangleSymbol`).
//!
//! COFF objects carry two manglings: the Microsoft one (`?foo@@YAHXZ`, clang-cl and MSVC) and
//! the Itanium one (`_Z3fooi`, MinGW). lld demangles both with LLVM's demangler unless
//! `/demangle:no`, and spells an import stub's name `__imp_x` as `__declspec(dllimport) x`.
//! This module exists so that every COFF message uses that one rule.

/// lld's `maybeDemangleSymbol` for x86-64.
pub fn display(name: &str, enabled: bool) -> String {
    if !enabled {
        return name.to_string();
    }
    let (prefix, rest) = match name.strip_prefix("__imp_") {
        Some(r) => ("__declspec(dllimport) ", r),
        None => ("", name),
    };
    format!("{prefix}{}", demangle(rest))
}

pub use crate::util::demangle::demangle;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_manglings() {
        assert_eq!(display("?foo@@YAHXZ", true), "int __cdecl foo(void)");
        assert_eq!(display("__imp_?baz@@YAHXZ", true), "__declspec(dllimport) int __cdecl baz(void)");
        assert_eq!(display("_Z3fooi", true), "foo(int)");
        assert_eq!(display("__imp_undecorated", true), "__declspec(dllimport) undecorated");
        assert_eq!(display("?foo@@YAHXZ", false), "?foo@@YAHXZ");
        assert_eq!(display("?g@N@@YAXPEBD@Z", true), "void __cdecl N::g(char const *)");
    }
}
