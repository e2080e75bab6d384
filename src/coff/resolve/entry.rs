//! Entry point and subsystem inference, and lld's C++ name matching for them (`findMangle`,
//! `mangleMaybe`, `inferSubsystem`, `findDefaultEntry`).
//!
//! It exists because these rules only look at the resolved symbol table to choose defaults that
//! the command line left open; they are not part of binding symbols.

use super::Resolver;
use crate::coff::symtab::{Def, SymId};

impl Resolver<'_> {
    /// lld's `findMangle` for x86-64: the symbol itself if it is not undefined (an undefined
    /// one counts through its weak alias), else a C++ function of that name (`?name@@Y...`).
    pub(super) fn find_mangle(&self, name: &str) -> Option<SymId> {
        if let Some(id) = self.r.find(name) {
            if self.r.symbols[id].def != Def::Undefined {
                return Some(id);
            }
            let mut cur = self.r.symbols[id].weak_alias;
            for _ in 0..100 {
                let Some(t) = cur else { break };
                if self.r.symbols[t].def != Def::Undefined {
                    return Some(t);
                }
                cur = self.r.symbols[t].weak_alias;
            }
            // An undefined symbol without a defined alias: look for its C++ mangling.
        }
        let prefix = format!("?{name}@@Y");
        self.r.symbols.iter().position(|s| s.name.starts_with(&prefix))
    }

    /// lld's `findUnderscoreMangle`: a definition (or lazy archive symbol) exists.
    pub(super) fn find_underscore_mangle(&self, name: &str) -> bool {
        self.find_mangle(name).is_some_and(|id| self.r.symbols[id].def != Def::Undefined)
    }

    /// lld's `mangleMaybe`: an undefined symbol with a C++-mangled definition gets it as weak
    /// alias.
    pub(super) fn mangle_maybe(&mut self, id: SymId) {
        if self.r.symbols[id].def != Def::Undefined || self.r.symbols[id].weak_alias.is_some() {
            return;
        }
        let Some(m) = self.find_mangle(self.r.symbols[id].name) else { return };
        if m == id {
            return;
        }
        let mname = self.r.symbols[m].name;
        self.log(&format!("{} aliased to {mname}", self.r.symbols[id].name));
        let t = self.add_undefined(mname, false);
        self.r.symbols[id].weak_alias = Some(t);
    }

    /// lld-link's `inferSubsystem`; `None`: nothing to infer it from.
    pub(super) fn infer_subsystem(&self) -> Option<u16> {
        if self.config.dll {
            return Some(2);
        }
        if self.config.mingw {
            return Some(3);
        }
        let main = self.find_underscore_mangle("main");
        let wmain = self.find_underscore_mangle("wmain");
        let winmain = self.find_underscore_mangle("WinMain");
        let wwinmain = self.find_underscore_mangle("wWinMain");
        if main || wmain {
            if winmain || wwinmain {
                self.config.diag.warn(&format!(
                    "found {} and {}; defaulting to /subsystem:console",
                    if main { "main" } else { "wmain" },
                    if winmain { "WinMain" } else { "wWinMain" }
                ));
            }
            return Some(3);
        }
        (winmain || wwinmain).then_some(2)
    }

    /// lld-link's `findDefaultEntry`.
    pub(super) fn find_default_entry(&self) -> &'static str {
        if self.config.mingw {
            return if self.r.subsystem == 2 { "WinMainCRTStartup" } else { "mainCRTStartup" };
        }
        if self.r.subsystem == 2 {
            if self.find_underscore_mangle("wWinMain") {
                if !self.find_underscore_mangle("WinMain") {
                    return "wWinMainCRTStartup";
                }
                self.config.diag.warn("found both wWinMain and WinMain; using latter");
            }
            return "WinMainCRTStartup";
        }
        if self.find_underscore_mangle("wmain") {
            if !self.find_underscore_mangle("main") {
                return "wmainCRTStartup";
            }
            self.config.diag.warn("found both wmain and main; using latter");
        }
        "mainCRTStartup"
    }
}
