//! A concrete case in the differential harness's own model (fixtures/README.md): a primary
//! source, `Object` groups, archives, shared libraries with their link arguments, `LinkArgs`,
//! one mode and one driver. The fuzzer compiles and links a case exactly as the harness would
//! compile and link the fixture written from it (same default flags, same order on the link
//! line, same directories), so every divergence becomes a fixture that reproduces it.

use std::fmt::Write as _;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Pie,
    NoPie,
    Static,
    StaticPie,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Pie => "pie",
            Mode::NoPie => "nopie",
            Mode::Static => "static",
            Mode::StaticPie => "static-pie",
        }
    }

    pub fn compile_flag(self) -> &'static str {
        match self {
            Mode::Pie | Mode::StaticPie => "-fPIE",
            Mode::NoPie | Mode::Static => "-fno-pic",
        }
    }

    pub fn link_flag(self) -> &'static str {
        match self {
            Mode::Pie => "-pie",
            Mode::NoPie => "-no-pie",
            Mode::Static => "-static",
            Mode::StaticPie => "-static-pie",
        }
    }

    pub fn is_static(self) -> bool {
        matches!(self, Mode::Static | Mode::StaticPie)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArchiveKind {
    Regular,
    Thin,
    NoIndex,
}

impl ArchiveKind {
    pub fn ar_flags(self) -> &'static str {
        match self {
            ArchiveKind::Regular => "rcs",
            ArchiveKind::Thin => "rcsT",
            ArchiveKind::NoIndex => "rcS",
        }
    }

    pub fn directive(self) -> &'static str {
        match self {
            ArchiveKind::Regular => "Archive",
            ArchiveKind::Thin => "ThinArchive",
            ArchiveKind::NoIndex => "NoIndexArchive",
        }
    }
}

/// Sources compiled with the same extra flags.
#[derive(Clone, Debug)]
pub struct Group {
    pub files: Vec<String>,
    pub cflags: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct LibCase {
    pub name: String,
    pub group: Group,
    /// `$SRC` stands for the sources' directory.
    pub link_args: Vec<String>,
    /// On the program's link line as a `Shared` library (else a `Dlopen` one named in
    /// `LinkArgs`).
    pub linked: bool,
}

#[derive(Clone, Debug)]
pub struct Case {
    pub mode: Mode,
    pub gcc_driver: bool,
    pub gcc_compile: bool,
    /// `Lto: thin`.
    pub lto: bool,
    pub cflags: Vec<String>,
    pub primary: String,
    pub objects: Vec<Group>,
    pub archives: Vec<(String, ArchiveKind, Group)>,
    pub libs: Vec<LibCase>,
    /// `$SRC` stands for the sources' directory.
    pub link_args: Vec<String>,
    /// Every source and script: (file name, contents).
    pub files: Vec<(String, String)>,
}

pub fn is_cxx(file: &str) -> bool {
    file.ends_with(".cc")
}

impl Case {
    /// The harness's compile flags for a source: `-g0 -O1 <PIC>`, `-flto=thin` for program
    /// sources of an `Lto` case, `CFlags`, then the group's own.
    pub fn compile_flags(&self, lib: bool, group: &[String]) -> Vec<String> {
        let pic = if lib { "-fPIC" } else { self.mode.compile_flag() };
        let mut f: Vec<String> = ["-g0", "-O1", pic].iter().map(|s| s.to_string()).collect();
        if self.lto && !lib {
            f.push("-flto=thin".to_string());
        }
        f.extend(self.cflags.iter().cloned());
        f.extend(group.iter().cloned());
        f
    }

    pub fn compiler(&self, file: &str) -> &'static str {
        match (self.gcc_compile, is_cxx(file)) {
            (false, false) => dtld_tests::CLANG,
            (false, true) => dtld_tests::CLANGXX,
            (true, false) => dtld_tests::GCC,
            (true, true) => dtld_tests::GXX,
        }
    }

    pub fn program_is_cxx(&self) -> bool {
        is_cxx(&self.primary) || self.objects.iter().chain(self.archives.iter().map(|a| &a.2)).any(|g| g.files.iter().any(|f| is_cxx(f)))
    }

    /// The fixture text: `main.c` (or `main.cc`) with the directives on top; the other files
    /// are written as they are.
    /// `lld_error`: ld.lld's first error when it refuses a link of the case (the fixture
    /// then says `ExpectError`, with the paths in the message left open).
    pub fn fixture_files(&self, title: &str, note: &str, lld_error: Option<&str>) -> Vec<(String, String)> {
        let mut d = String::new();
        let _ = writeln!(d, "// {title}");
        for line in note.lines() {
            let _ = writeln!(d, "// {line}");
        }
        let _ = writeln!(d, "//#Modes: {}", self.mode.name());
        if let Some(e) = lld_error {
            let path = regex::Regex::new(r"(/[^ :']+)+").expect("valid regex");
            let parts: Vec<String> = path.split(e).map(regex::escape).collect();
            let _ = writeln!(d, "//#ExpectError: {}", parts.join(".*"));
        }
        if self.gcc_driver {
            d.push_str("//#Drivers: gcc\n");
        }
        if self.gcc_compile {
            d.push_str("//#Compiler: gcc\n");
        }
        if self.lto {
            d.push_str("//#Lto: thin\n");
        }
        if !self.cflags.is_empty() {
            let _ = writeln!(d, "//#CFlags: {}", self.cflags.join(" "));
        }
        for g in &self.objects {
            let _ = writeln!(d, "//#Object: {}", words(&g.files, &g.cflags));
        }
        for (name, kind, g) in &self.archives {
            let _ = writeln!(d, "//#{}: {name}: {}", kind.directive(), words(&g.files, &g.cflags));
        }
        for l in &self.libs {
            let key = if l.linked { "Shared" } else { "Dlopen" };
            let mut line = format!("//#{key}: {}: {}", l.name, words(&l.group.files, &l.group.cflags));
            if !l.link_args.is_empty() {
                line.push_str(" -- ");
                line.push_str(&l.link_args.join(" "));
            }
            let _ = writeln!(d, "{line}");
        }
        if !self.link_args.is_empty() {
            let _ = writeln!(d, "//#LinkArgs: {}", self.link_args.join(" "));
        }
        let mut out = Vec::new();
        for (name, text) in &self.files {
            if *name == self.primary {
                out.push((name.clone(), format!("{d}{text}")));
            } else {
                out.push((name.clone(), text.clone()));
            }
        }
        out
    }
}

fn words(files: &[String], flags: &[String]) -> String {
    files.iter().chain(flags).cloned().collect::<Vec<_>>().join(" ")
}
