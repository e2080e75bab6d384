//! Where the files that keep their job-file path go in the Action's input root, and which
//! directory the command runs in, without the absolute build directory ever entering the Action.
//!
//! Most files of a job enter the Action under names derived from their content (`action`): the
//! module, its import sources, its summary shard and the output, named `m/<sha256>.o`,
//! `s/<sha256>.thinlto.bc` and `out.o` relative to the working directory, so their paths in the
//! job file (relative or absolute, with the link's process id) never matter. Only `common.inputs`
//! (a sample profile) keep their path, because `common.args` names them
//! (`-fprofile-sample-use=<path>`), relative to the linker's working directory. A remote worker
//! has no such directory, so the input root is a root R that contains every such path, and the
//! command runs in `working_directory` = cwd relative to R. R is the lowest ancestor of the cwd
//! that contains every path: the cwd itself when no path climbs out of it (always, without
//! `common.inputs`), else its n-th parent when some path starts with n `..` components
//! (`--lto-sample-profile=../prof/x.prof`). Then `working_directory` is the last n names of the
//! cwd, the only part of the build directory that enters the Action, and only in that case.
//!
//! R itself is the directory `dtld` of the input root, not the input root: chroot-style workers
//! (buildbox-run, the sandbox of buildbox-casd and BuildGrid) make the input root the sandbox's
//! `/` and bind-mount the host's `/usr`, `/lib`, `/bin` over it, which would hide a job's own
//! `lib/` directory. A constant name keeps the Action the same everywhere.
//!
//! Absolute paths in `common.inputs` are refused: they would only work on workers whose input
//! root is `/`, and they would tie the cache key to one checkout.

use std::path::{Component, Path};

/// The directory of the input root that stands for R.
pub const ROOT_DIR: &str = "dtld";

/// The layout shared by every job of one job file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// How many levels R is above the cwd.
    pub up: usize,
    /// The cwd relative to the input root (`dtld` when R is the cwd), with `/` separators.
    pub working_directory: String,
}

/// Lexically normalizes a relative path: drops `.`, folds `name/..`, keeps leading `..`.
pub fn normalize(p: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in Path::new(p).components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if out.last().is_some_and(|l| l != "..") {
                    out.pop();
                } else {
                    out.push("..".into());
                }
            }
            Component::Normal(n) => out.push(n.to_string_lossy().into_owned()),
            Component::RootDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// Computes the layout for `paths` (the job file's `common.inputs`), relative to `cwd` (the
/// absolute working directory, as `getcwd` returns it: only its last names are used).
pub fn compute<'a>(cwd: &Path, paths: impl IntoIterator<Item = &'a str>) -> Result<Layout, String> {
    let mut up = 0;
    for p in paths {
        if p.is_empty() {
            return Err("the job file has an empty common input path".into());
        }
        if Path::new(p).is_absolute() {
            return Err(format!(
                "absolute path '{p}' in the job file's common inputs: the compile command names it, and remote actions need \
                 it relative to the linker's directory (give the linker a relative path, e.g. --lto-sample-profile=prof/x.prof)"
            ));
        }
        let n = normalize(p);
        let lead = n.iter().take_while(|c| *c == "..").count();
        if lead == n.len() {
            return Err(format!("path '{p}' in the job file's common inputs names a directory above the working directory, not a file"));
        }
        up = up.max(lead);
    }
    let names: Vec<String> =
        cwd.components().filter_map(|c| if let Component::Normal(n) = c { Some(n.to_string_lossy().into_owned()) } else { None }).collect();
    if up > names.len() {
        return Err(format!("a path in the job file's common inputs climbs {up} levels above {}, past the file system root", cwd.display()));
    }
    let working_directory = std::iter::once(ROOT_DIR.to_string()).chain(names[names.len() - up..].iter().cloned()).collect::<Vec<_>>().join("/");
    Ok(Layout { up, working_directory })
}

impl Layout {
    /// `p` (relative to the cwd) relative to the input root, as path components.
    pub fn in_root(&self, p: &str) -> Vec<String> {
        normalize(&format!("{}/{p}", self.working_directory))
    }

    /// The working directory as components.
    pub fn working_directory_components(&self) -> Vec<String> {
        normalize(&self.working_directory)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inside_cwd() {
        let l = compute(Path::new("/home/u/build"), ["prof/app.prof", "./x.prof"]).unwrap();
        assert_eq!(l, Layout { up: 0, working_directory: "dtld".into() });
        assert_eq!(l.in_root("./prof/app.prof"), ["dtld", "prof", "app.prof"]);
        assert_eq!(l.in_root("m/00ff.o"), ["dtld", "m", "00ff.o"]);
        // No common inputs: the same layout in every directory.
        assert_eq!(compute(Path::new("/srv/ci/x"), std::iter::empty()).unwrap(), l);
    }

    #[test]
    fn output_outside_cwd() {
        let l = compute(Path::new("/home/u/src/work"), ["../prof/app.prof", "a/../x.prof"]).unwrap();
        assert_eq!(l, Layout { up: 1, working_directory: "dtld/work".into() });
        assert_eq!(l.in_root("../prof/app.prof"), ["dtld", "prof", "app.prof"]);
        assert_eq!(l.in_root("m/00ff.o"), ["dtld", "work", "m", "00ff.o"]);
        let l = compute(Path::new("/a/b/c"), ["../../x.o"]).unwrap();
        assert_eq!(l.working_directory, "dtld/b/c");
        assert_eq!(l.working_directory_components(), ["dtld", "b", "c"]);
    }

    #[test]
    fn refused() {
        assert!(compute(Path::new("/w"), ["/tmp/x.prof"]).unwrap_err().contains("absolute path '/tmp/x.prof'"));
        assert!(compute(Path::new("/w"), ["../../x.o"]).unwrap_err().contains("past the file system root"));
        assert!(compute(Path::new("/w"), [".."]).unwrap_err().contains("not a file"));
        assert!(compute(Path::new("/w"), [""]).is_err());
    }

    #[test]
    fn normalizing() {
        assert_eq!(normalize("a/./b/../c"), ["a", "c"]);
        assert_eq!(normalize("../x/../../y"), ["..", "..", "y"]);
    }
}
