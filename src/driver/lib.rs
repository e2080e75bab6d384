//! `lld-link /lib`: lld-link acting as llvm-lib (LLVM's `LibDriver`), chosen when lld-link's
//! first argument is `/lib` or `-lib` (any case).
//!
//! Build systems and LLVM's own tests make Windows libraries with `lld-link /lib /out:x.lib
//! a.obj b.obj` (`/llvmlibthin` for thin ones), so a drop-in lld-link has to. This file is
//! llvm-lib's command line (its own option table: `/` `-` `/?` `-?` prefixes, values after a
//! colon, names in any case; an unknown `/x` is an input path, an unknown `-x` is ignored with a
//! warning) and its steps: find each input (the current directory, `/libpath:`, `%LIB%`), check
//! its kind and machine, flatten archives given as inputs into their members, reverse their
//! order (lib.exe's), name them (a thin archive's relative to the output's directory, other
//! archives' as given on the command line), and write the archive
//! (`coff/libinput.rs` reads the inputs, `coff/lib.rs` writes the bytes).
//!
//! llvm-lib prints its messages bare, without a program name; lld-link then adds `lld-link:
//! error: lib failed` when llvm-lib returned failure, but not when llvm-lib exited on its own
//! (a bad input). Both are kept, and so are the exact texts. The output is written through a
//! temporary and renamed, so a failure leaves nothing behind.

use std::io::Write as _;
use std::path::Path;

use crate::coff::lib::{self as writer, NewMember};
use crate::coff::libinput::{self, Magic};
use crate::driver::options::{self, nothing, opt, Arity::*, Opt, Report, Status::*};
use crate::lto::irsymtab::IrFile;

/// Whether lld-link's arguments make it llvm-lib.
pub fn is_lib(argv: &[String]) -> bool {
    argv.first().is_some_and(|a| a.eq_ignore_ascii_case("/lib") || a.eq_ignore_ascii_case("-lib"))
}

/// How an llvm-lib run ends early: a message llvm-lib prints, and whether it then `exit(1)`s
/// by itself (`Exit`) or returns failure, after which lld-link reports `lib failed` (`Fail`).
enum Stop {
    Exit(String),
    Fail(String),
}

/// The parsed command line.
#[derive(Default)]
struct Lib {
    inputs: Vec<String>,
    out: Option<String>,
    machine: Option<String>,
    ignore: Vec<String>,
    libpath: Vec<String>,
    list: bool,
    thin: bool,
    empty: bool,
    no_index: bool,
    wx: bool,
    help: bool,
    errors: Vec<String>,
}

impl Report for Lib {
    fn warning(&mut self, msg: String) {
        say(&format!("warning: {msg}"));
    }
    fn error(&mut self, msg: String) {
        self.errors.push(msg);
    }
    fn separator(&self) -> char {
        ':'
    }
}

/// llvm-lib 22's options (`llvm/lib/ToolDrivers/llvm-lib/Options.td`), in its `/help` order.
/// `Value` rows take their value after a colon.
static OPTIONS: &[Opt<Lib>] = &[
    opt(&["def"], Value, "<value>", "def file to use to generate import library", Unsupported, nothing),
    opt(&["defArm64Native"], Value, "<value>", "def file to use to generate native ARM64 symbols in ARM64EC import library", Noop, nothing),
    opt(&["ignore"], Value, "<value>", "Specify warning codes to ignore", Implemented, |p, v| p.ignore.push(v.str())),
    opt(&["libpath"], Value, "<value>", "Object file search path", Implemented, |p, v| p.libpath.push(v.str())),
    opt(&["list"], Flag, "", "List contents of .lib file on stdout", Implemented, |p, _| p.list = true),
    opt(&["llvmlibempty"], Flag, "", "When given no contents, produce an empty .lib file", Implemented, |p, _| p.empty = true),
    opt(&["llvmlibindex:no"], Flag, "", "Do not write an index to the output", Implemented, |p, _| p.no_index = true),
    opt(&["llvmlibindex"], Flag, "", "Write an index to the output (default)", Implemented, |p, _| p.no_index = false),
    opt(&["llvmlibthin"], Flag, "", "Make .lib point to .obj files instead of copying their contents", Implemented, |p, _| p.thin = true),
    opt(&["machine"], Value, "<value>", "Specify target platform", Implemented, |p, v| p.machine = Some(v.str())),
    opt(&["out"], Value, "<value>", "Path to file to write output", Implemented, |p, v| p.out = Some(v.str())),
    opt(&["WX:no"], Flag, "", "Don't treat warnings as errors (default)", Implemented, |p, _| p.wx = false),
    opt(&["WX"], Flag, "", "Treat warnings as errors", Implemented, |p, _| p.wx = true),
    opt(&["help"], Flag, "", "Display available options (also /?, /??)", Implemented, |p, _| p.help = true),
    // lib.exe compatibility: accepted and ignored by llvm-lib too.
    opt(&["ltcg", "nologo", "verbose", "nodefaultlib"], Flag, "", "", Noop, nothing),
    opt(&["nodefaultlib", "subsystem"], Value, "", "", Noop, nothing),
];

/// Matches one argument against the table (LLVM's `OptTable`): the row and its value.
fn lookup(arg: &str) -> Option<(&'static Opt<Lib>, Option<&str>)> {
    for prefix in ["/?", "-?", "/", "-"] {
        let Some(body) = arg.strip_prefix(prefix) else { continue };
        for o in OPTIONS {
            for n in o.names {
                let head = body.get(..n.len()).filter(|h| h.eq_ignore_ascii_case(n));
                match o.arity {
                    Flag if head.is_some() && body.len() == n.len() => return Some((o, None)),
                    Value if head.is_some() && body.as_bytes().get(n.len()) == Some(&b':') => return Some((o, Some(&body[n.len() + 1..]))),
                    _ => {}
                }
            }
        }
    }
    None
}

/// The rows, for docs/options.md.
#[cfg(test)]
pub fn rows() -> Vec<options::RowInfo> {
    options::link_rows(OPTIONS)
}

/// llvm-lib's `/help` text (LLVM's `printHelp` layout), from the table.
fn help_text() -> String {
    let mut s = String::from("OVERVIEW: LLVM Lib\n\nUSAGE: llvm-lib [options] file...\n\nOPTIONS:\n");
    // llvm-lib does not list `/help` itself.
    for o in OPTIONS.iter().filter(|o| !o.help.is_empty() && o.names[0] != "help") {
        let spell = if o.arity == Value { format!("/{}:{}", o.names[0], o.meta) } else { format!("/{}", o.names[0]) };
        if spell.len() < 24 {
            s.push_str(&format!("  {spell:<23} {}\n", o.help));
        } else {
            s.push_str(&format!("  {spell}\n{:26}{}\n", "", o.help));
        }
    }
    s
}

/// Prints one of llvm-lib's messages as it does: bare, on stderr.
fn say(msg: &str) {
    crate::diag::verbatim(msg);
}

/// Runs llvm-lib on lld-link's arguments after `/lib`; returns the exit code.
pub fn main(argv: &[String]) -> i32 {
    match run(argv) {
        Ok(()) => 0,
        Err(Stop::Exit(msg)) => {
            say(&msg);
            1
        }
        Err(Stop::Fail(msg)) => {
            if !msg.is_empty() {
                say(&msg);
            }
            say(&format!("{}: error: lib failed", crate::diag::program()));
            1
        }
    }
}

fn parse(argv: &[String]) -> Result<Lib, Stop> {
    let args = super::link::expand_windows_response_files(argv).map_err(|e| Stop::Fail(e.to_string()))?;
    let mut p = Lib::default();
    let mut unknown = Vec::new();
    for a in &args {
        if matches!(a.as_str(), "/?" | "-?" | "/??" | "-??") {
            p.help = true;
        } else if let Some((o, v)) = lookup(a) {
            let spelling = v.map_or(a.as_str(), |v| &a[..a.len() - v.len() - 1]);
            options::apply(&mut p, o, spelling, v);
        } else if a.starts_with('-') && a != "-" {
            unknown.push(a.clone());
        } else {
            p.inputs.push(a.clone());
        }
    }
    for a in unknown {
        say(&format!("ignoring unknown argument: {a}"));
    }
    if !p.errors.is_empty() {
        return Err(Stop::Fail(std::mem::take(&mut p.errors).join("\n")));
    }
    Ok(p)
}

fn run(argv: &[String]) -> Result<(), Stop> {
    let p = parse(argv)?;
    if p.help {
        print!("{}", help_text());
        return Ok(());
    }
    let mut lib_machine = Machine::default();
    if let Some(m) = &p.machine {
        let Some(v) = libinput::machine_from_name(m) else {
            return Err(Stop::Fail(format!("unknown /machine: arg {m}")));
        };
        if matches!(libinput::machine_name(v), "arm64ec" | "arm64x") {
            return Err(Stop::Fail(format!("/machine:{m} (ARM64EC symbol maps) is not supported by dtld")));
        }
        lib_machine = Machine { value: v, source: format!(" (from '/machine:{m}' flag)") };
    }
    if p.inputs.is_empty() && !p.empty {
        if !p.ignore.iter().any(|c| c == "emptyoutput") {
            say("warning: no input files, not writing output file");
            say("         pass /llvmlibempty to write empty .lib file,");
            say("         pass /ignore:emptyoutput to suppress warning");
            if p.wx {
                return Err(Stop::Fail("treating warning as error due to /WX".into()));
            }
        }
        return Ok(());
    }
    if p.list {
        return list(&p.inputs);
    }
    let mut search = vec![String::new()];
    search.extend(p.libpath.iter().cloned());
    if let Ok(env) = std::env::var("LIB") {
        search.extend(env.split(';').map(str::to_string));
    }
    let mut b = Builder { members: Vec::new(), machine: lib_machine };
    let mut seen = std::collections::HashSet::new();
    for input in &p.inputs {
        let Some(path) = search.iter().map(|d| append(d, input)).find(|c| Path::new(c).exists()) else {
            return Err(Stop::Fail(format!("{input}: no such file or directory")));
        };
        if !seen.insert(path.clone()) {
            continue;
        }
        let data = crate::input::map_file(Path::new(&path)).map_err(|e| Stop::Exit(format!("error opening '{path}': {}", crate::error::io_error(&e))))?;
        b.append(&path, data)?;
    }
    let out = match p.out.as_deref().filter(|o| !o.is_empty()) {
        Some(o) => o.to_string(),
        None => match b.members.first() {
            Some(m) => default_output(&m.name),
            None => return Err(Stop::Fail("no output path given, and cannot infer with no inputs".into())),
        },
    };
    write(&out, b.members, p.thin, !p.no_index)
}

/// The library's machine and where it came from, for the conflict message.
#[derive(Default)]
struct Machine {
    value: u16,
    source: String,
}

/// One member to be: its name (the path it was read from, or its name in an archive given as
/// input), bytes and kind, and the irsymtab of a bitcode file.
struct Input {
    name: String,
    data: &'static [u8],
    magic: Magic,
    ir: Option<IrFile<'static>>,
}

/// LibDriver's `appendFile` state: the members so far and the library's machine.
struct Builder {
    members: Vec<Input>,
    machine: Machine,
}

impl Builder {
    fn append(&mut self, name: &str, data: &'static [u8]) -> Result<(), Stop> {
        let magic = libinput::identify(data);
        let mut ir = None;
        let file_machine = match magic {
            Magic::Other => return Err(Stop::Exit(format!("{name}: not a COFF object, bitcode, archive, import library or resource file"))),
            Magic::Archive => return self.append_archive(name, data),
            Magic::CoffObject => Some(libinput::coff_machine(data).map_err(|e| Stop::Exit(format!("{name}: {e}")))?),
            Magic::Bitcode => {
                let f = libinput::read_bitcode(name, data).map_err(|e| Stop::Exit(format!("{name}: {e}")))?;
                let m = libinput::bitcode_machine(&f).map_err(|e| Stop::Exit(format!("{name}: {e}")))?;
                ir = Some(f);
                Some(m)
            }
            Magic::Resource | Magic::ImportLibrary => None,
        };
        if let Some(m) = file_machine {
            self.check_machine(name, m)?;
        }
        self.members.push(Input { name: name.to_string(), data, magic, ir });
        Ok(())
    }

    /// An archive among the inputs adds its members, as lib.exe does.
    fn append_archive(&mut self, name: &str, data: &'static [u8]) -> Result<(), Stop> {
        let children = crate::archive::parse(data).map_err(|e| Stop::Exit(format!("error opening '{name}': {e}")))?;
        for c in children {
            match c.data {
                Some(d) => self.append(&c.name, d)?,
                None => {
                    // A thin archive's member: a file beside the archive, which keeps the name
                    // it has in the archive. (lld-link-22 frees these files' bytes before it
                    // writes them, and writes whatever the memory then holds; dtld writes the
                    // files.)
                    let full = if c.name.starts_with('/') {
                        c.name.clone()
                    } else {
                        append(Path::new(name).parent().map_or("", |p| p.to_str().unwrap_or("")), &c.name)
                    };
                    let d =
                        crate::input::map_file(Path::new(&full)).map_err(|e| Stop::Exit(format!("{name}: '{}': {}", c.name, crate::error::io_error(&e))))?;
                    self.append(&c.name, d)?;
                }
            }
        }
        Ok(())
    }

    fn check_machine(&mut self, name: &str, m: u16) -> Result<(), Stop> {
        let lib = self.machine.value;
        if lib == 0 {
            if m == object::pe::IMAGE_FILE_MACHINE_ARM64EC {
                return Err(Stop::Exit(format!(
                    "{name}: file machine type arm64ec conflicts with inferred library machine type, use /machine:arm64ec or /machine:arm64x"
                )));
            }
            self.machine = Machine { value: m, source: format!(" (inferred from earlier file '{name}')") };
        } else if !machine_matches(lib, m) {
            return Err(Stop::Exit(format!(
                "{name}: file machine type {} conflicts with library machine type {}{}",
                libinput::machine_name(m),
                libinput::machine_name(lib),
                self.machine.source
            )));
        }
        Ok(())
    }
}

/// LibDriver's `machineMatches`: ARM64 takes ARM64X objects too (ARM64EC and ARM64X libraries
/// are refused before any input is read).
fn machine_matches(lib: u16, file: u16) -> bool {
    lib == file || (lib == object::pe::IMAGE_FILE_MACHINE_ARM64 && file == object::pe::IMAGE_FILE_MACHINE_ARM64X)
}

/// Reverses the members, names them (in a thin archive, relative to the output's directory;
/// otherwise as given), reads their symbols and writes the archive.
fn write(out: &str, inputs: Vec<Input>, thin: bool, symtab: bool) -> Result<(), Stop> {
    let mut members = Vec::with_capacity(inputs.len());
    for i in inputs.iter().rev() {
        let name = if !thin || i.name.starts_with('/') { i.name.clone() } else { archive_relative_path(out, &i.name).unwrap_or_else(|| i.name.clone()) };
        let symbols = if !symtab {
            None
        } else {
            match (i.magic, &i.ir) {
                (Magic::CoffObject, _) => Some(libinput::coff_symbols(i.data).map_err(|e| Stop::Fail(format!("{out}: '{name}': {e}")))?),
                (Magic::ImportLibrary, _) => Some(libinput::import_symbols(i.data)),
                (Magic::Bitcode, Some(ir)) => Some(libinput::bitcode_symbols(ir)),
                _ => None,
            }
        };
        members.push(NewMember { name, data: i.data, symbols });
    }
    let format = if thin { writer::Format::Gnu } else { writer::Format::Coff };
    let bytes = writer::write(&members, writer::Options { format, thin, symtab });
    crate::outfile::write_atomic(Path::new(out), &bytes).map_err(|e| Stop::Fail(format!("{out}: {}", crate::error::io_error(&e))))
}

/// `/list`: the members of the first archive among the inputs, last first (as lib.exe).
fn list(inputs: &[String]) -> Result<(), Stop> {
    for input in inputs {
        let data = crate::input::map_file(Path::new(input)).map_err(|e| Stop::Exit(format!("error opening '{input}': {}", crate::error::io_error(&e))))?;
        if libinput::identify(data) != Magic::Archive {
            continue;
        }
        let members = crate::archive::parse(data).map_err(|e| Stop::Exit(format!("error opening '{input}': {e}")))?;
        let mut stdout = std::io::stdout().lock();
        for m in members.iter().rev() {
            let _ = writeln!(stdout, "{}", m.name);
        }
        break;
    }
    Ok(())
}

/// LLVM's `sys::path::append` of one component to a directory (possibly empty).
fn append(dir: &str, file: &str) -> String {
    if dir.is_empty() {
        file.to_string()
    } else if dir.ends_with('/') {
        format!("{dir}{}", file.trim_start_matches('/'))
    } else if file.starts_with('/') {
        format!("{dir}{file}")
    } else {
        format!("{dir}/{file}")
    }
}

/// The output's name without `/out:`: the first member's name with the extension `.lib`.
fn default_output(first: &str) -> String {
    let file_start = first.rfind('/').map_or(0, |p| p + 1);
    let stem = match first.rfind('.') {
        Some(dot) if dot >= file_start => &first[..dot],
        _ => first,
    };
    format!("{stem}.lib")
}

/// LLVM's `sys::fs::current_path`: `$PWD` when it names the current directory, else getcwd.
fn current_dir() -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let dot = std::fs::metadata(".").ok()?;
    if let Ok(pwd) = std::env::var("PWD") {
        if pwd.starts_with('/') && std::fs::metadata(&pwd).is_ok_and(|m| m.dev() == dot.dev() && m.ino() == dot.ino()) {
            return Some(pwd);
        }
    }
    std::env::current_dir().ok().and_then(|p| p.to_str().map(str::to_string))
}

/// An absolute path's components after LLVM's `remove_dots(.., remove_dot_dot = true)`.
fn canonical_components(path: &str, cwd: &str) -> Vec<String> {
    let abs = if path.starts_with('/') { path.to_string() } else { format!("{cwd}/{path}") };
    let mut comps: Vec<String> = Vec::new();
    for c in abs.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                comps.pop();
            }
            _ => comps.push(c.to_string()),
        }
    }
    comps
}

/// LLVM's `computeArchiveRelativePath(out, member)`: the member's path relative to the output's
/// directory, both made absolute and without `.` and `..`. `None` without a current directory.
fn archive_relative_path(out: &str, member: &str) -> Option<String> {
    let cwd = current_dir()?;
    let to = canonical_components(member, &cwd);
    let mut from = canonical_components(out, &cwd);
    from.pop();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut rel: Vec<&str> = vec![".."; from.len() - common];
    rel.extend(to[common..].iter().map(String::as_str));
    Some(rel.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_as_llvm_lib() {
        assert_eq!(lookup("/OUT:x.lib").map(|(o, v)| (o.names[0], v)), Some(("out", Some("x.lib"))));
        assert_eq!(lookup("-llvmlibthin").map(|(o, _)| o.names[0]), Some("llvmlibthin"));
        assert_eq!(lookup("/?list").map(|(o, _)| o.names[0]), Some("list"));
        assert_eq!(lookup("/wx:NO").map(|(o, _)| o.names[0]), Some("WX:no"));
        assert!(lookup("/out").is_none());
        assert!(lookup("/bogus:1").is_none());
        assert_eq!(lookup("/nodefaultlib:x").map(|(o, _)| o.arity), Some(Value));
    }

    #[test]
    fn help_matches_llvm_lib_layout() {
        let h = help_text();
        assert!(h.contains("\n  /def:<value>            def file to use to generate import library\n"));
        assert!(h.contains("\n  /defArm64Native:<value> def file"));
        assert!(h.ends_with("  /WX                     Treat warnings as errors\n"));
    }

    #[test]
    fn names_and_paths() {
        assert_eq!(default_output("dir.x/a.o"), "dir.x/a.lib");
        assert_eq!(default_output("dir.x/a"), "dir.x/a.lib");
        assert_eq!(default_output("a.b.obj"), "a.b.lib");
        assert_eq!(append("", "a.o"), "a.o");
        assert_eq!(append("d", "a.o"), "d/a.o");
        assert_eq!(append("d/", "/a.o"), "d/a.o");
        let cwd = current_dir().unwrap();
        assert_eq!(archive_relative_path("lib/x.lib", "a.o").unwrap(), "../a.o");
        assert_eq!(archive_relative_path("x.lib", "lib/../a.o").unwrap(), "a.o");
        assert_eq!(archive_relative_path("/x.lib", "a.o").unwrap(), format!("{}/a.o", cwd.trim_start_matches('/')));
        assert_eq!(archive_relative_path("sub/x.lib", "sub/a.o").unwrap(), "a.o");
    }
}
