//! Turning one DTLTO job into a REAPI Action, byte-for-byte deterministically.
//!
//! The action cache is keyed by the digest of the Action, which covers the Command (argv,
//! environment, output paths, working directory, platform), the Merkle tree of the input root,
//! the platform and the salt. So everything here is canonical: directory entries sorted by name,
//! no mtimes or node properties, `is_executable` always false, environment and platform
//! properties sorted, no timeout in the Action (it is a client-side deadline instead, so changing
//! it does not change any key), and the compiler's identity in the salt, so a compiler upgrade
//! invalidates every key while the compiler's path stays the same. Identical inputs then give an
//! identical Action digest in any directory and on any machine.

use std::collections::BTreeMap;

use bazel_remote_apis::build::bazel::remote::execution::v2 as re;
use prost::Message;
use sha2::{Digest as _, Sha256};

use crate::layout::Layout;

/// A blob's digest (SHA-256, the function every REAPI server supports).
pub fn digest(data: &[u8]) -> re::Digest {
    let hash = Sha256::digest(data);
    re::Digest { hash: hash.iter().map(|b| format!("{b:02x}")).collect(), size_bytes: data.len() as i64 }
}

/// A key for maps of digests.
pub fn key(d: &re::Digest) -> (String, i64) {
    (d.hash.clone(), d.size_bytes)
}

/// Where the bytes of a blob come from when it must be uploaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A serialized message (Command, Action, Directory).
    Bytes(Vec<u8>),
    /// A local file (relative to the cwd), read again at upload time and checked against the
    /// digest.
    File(String),
}

/// What one job becomes.
#[derive(Debug, Clone)]
pub struct Built {
    pub action_digest: re::Digest,
    /// Every blob the Action needs in the CAS (the Action, Command, every Directory and every
    /// input file), deduplicated.
    pub blobs: Vec<(re::Digest, Source)>,
}

/// The fixed parts of every Action of one link.
pub struct Settings<'a> {
    pub layout: &'a Layout,
    /// `common.args` of the job file.
    pub common_args: &'a [String],
    /// `common.inputs` of the job file.
    pub common_inputs: &'a [String],
    /// Platform properties, sorted by name then value.
    pub platform: &'a [(String, String)],
    /// The compiler's identity (and anything else that must separate cache namespaces).
    pub salt: &'a [u8],
}

/// A directory being assembled: subdirectories and files by name (sorted by the map).
#[derive(Default)]
struct Dir {
    dirs: BTreeMap<String, Dir>,
    files: BTreeMap<String, re::Digest>,
}

impl Dir {
    fn add_file(&mut self, path: &[String], d: re::Digest, shown: &str) -> Result<(), String> {
        let (name, parents) = path.split_last().ok_or_else(|| format!("'{shown}' is not a file path"))?;
        let mut dir = self;
        for p in parents {
            if dir.files.contains_key(p) {
                return Err(format!("'{shown}': '{p}' is both a file and a directory in the input root"));
            }
            dir = dir.dirs.entry(p.clone()).or_default();
        }
        if dir.dirs.contains_key(name) {
            return Err(format!("'{shown}' is both a file and a directory in the input root"));
        }
        match dir.files.get(name) {
            Some(old) if old != &d => Err(format!("'{shown}' names two different files in the input root")),
            _ => {
                dir.files.insert(name.clone(), d);
                Ok(())
            }
        }
    }

    fn add_dir(&mut self, path: &[String]) {
        let mut dir = self;
        for p in path {
            dir = dir.dirs.entry(p.clone()).or_default();
        }
    }

    /// Serializes this directory and its children (children first); returns its digest.
    fn seal(&self, blobs: &mut Vec<(re::Digest, Source)>) -> re::Digest {
        let directories = self.dirs.iter().map(|(name, d)| re::DirectoryNode { name: name.clone(), digest: Some(d.seal(blobs)) }).collect();
        let files = self
            .files
            .iter()
            .map(|(name, d)| re::FileNode { name: name.clone(), digest: Some(d.clone()), is_executable: false, node_properties: None })
            .collect();
        let bytes = re::Directory { files, directories, symlinks: Vec::new(), node_properties: None }.encode_to_vec();
        let d = digest(&bytes);
        blobs.push((d.clone(), Source::Bytes(bytes)));
        d
    }
}

/// Builds the Action for a job: `args` = `job.args`, `inputs`/`outputs` as in the job file;
/// `file_digest` gives the digest of every input file (they were hashed once per link).
pub fn build(s: &Settings, args: &[String], inputs: &[String], outputs: &[String], file_digest: &dyn Fn(&str) -> re::Digest) -> Result<Built, String> {
    let mut root = Dir::default();
    root.add_dir(&s.layout.working_directory_components());
    let mut blobs = Vec::new();
    for p in s.common_inputs.iter().chain(inputs) {
        let d = file_digest(p);
        root.add_file(&s.layout.in_root(p), d.clone(), p)?;
        blobs.push((d, Source::File(p.clone())));
    }
    // Output paths are relative to the working directory; `..` stays only where the output is
    // really above it.
    let mut output_paths: Vec<String> = outputs.iter().map(|o| crate::layout::normalize(o).join("/")).collect();
    output_paths.sort();
    output_paths.dedup();
    let platform = (!s.platform.is_empty())
        .then(|| re::Platform { properties: s.platform.iter().map(|(n, v)| re::platform::Property { name: n.clone(), value: v.clone() }).collect() });
    // `Command.platform` is deprecated since v2.2 in favour of `Action.platform`; older engines
    // read only the former, so both are set.
    #[allow(deprecated)]
    let command = re::Command {
        arguments: s.common_args.iter().chain(args).cloned().collect(),
        // The backend needs no environment; a fixed PATH keeps a bare compiler name resolvable.
        environment_variables: vec![re::command::EnvironmentVariable { name: "PATH".into(), value: "/usr/bin:/bin".into() }],
        output_paths,
        platform: platform.clone(),
        working_directory: s.layout.working_directory.clone(),
        ..Default::default()
    };
    let command_bytes = command.encode_to_vec();
    let command_digest = digest(&command_bytes);
    blobs.push((command_digest.clone(), Source::Bytes(command_bytes)));
    let input_root_digest = root.seal(&mut blobs);
    let action = re::Action {
        command_digest: Some(command_digest),
        input_root_digest: Some(input_root_digest),
        timeout: None,
        do_not_cache: false,
        salt: s.salt.to_vec(),
        platform,
    };
    let action_bytes = action.encode_to_vec();
    let action_digest = digest(&action_bytes);
    blobs.push((action_digest.clone(), Source::Bytes(action_bytes)));
    let mut seen = std::collections::HashSet::new();
    blobs.retain(|(d, _)| seen.insert(key(d)));
    Ok(Built { action_digest, blobs })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn build_in(cwd: &str, out: &str) -> Built {
        let inputs = strings(&[&format!("{out}/ab/m.o"), &format!("{out}/ab/m.o.thinlto.bc"), &format!("{out}/cd/n.o")]);
        let outputs = strings(&[&format!("{out}/ab/m.o.native.o")]);
        let layout = crate::layout::compute(std::path::Path::new(cwd), inputs.iter().chain(&outputs).map(String::as_str)).unwrap();
        let common = strings(&["/usr/lib/llvm-22/bin/clang", "-c", "-O2"]);
        let platform = vec![("OSFamily".to_string(), "linux".to_string())];
        let s = Settings { layout: &layout, common_args: &common, common_inputs: &[], platform: &platform, salt: b"clang 22" };
        let args = strings(&[&inputs[0], &format!("-fthinlto-index={}", inputs[1]), "-o", &outputs[0]]);
        build(&s, &args, &inputs, &outputs, &|p: &str| digest(p.rsplit('/').next().unwrap().as_bytes())).unwrap()
    }

    #[test]
    fn same_inputs_same_action_in_any_directory() {
        let a = build_in("/home/a/build", "prog.dtld-lto");
        let b = build_in("/srv/ci/other/checkout", "prog.dtld-lto");
        assert_eq!(a.action_digest, b.action_digest);
        // Blobs: 3 files, Command, 5 directories (root, dtld, prog.dtld-lto, ab, cd), Action.
        assert_eq!(a.blobs.len(), 10);
        // Above the cwd, only the cwd's own name enters the Action.
        let c = build_in("/x/y/work", "../out/prog.dtld-lto");
        let d = build_in("/elsewhere/work", "../out/prog.dtld-lto");
        assert_eq!(c.action_digest, d.action_digest);
        assert_ne!(a.action_digest, c.action_digest);
    }

    #[test]
    fn input_root_conflicts() {
        let mut root = Dir::default();
        root.add_file(&strings(&["a", "b"]), digest(b"1"), "a/b").unwrap();
        root.add_file(&strings(&["a", "b"]), digest(b"1"), "./a/b").unwrap();
        assert!(root.add_file(&strings(&["a", "b"]), digest(b"2"), "a/b").unwrap_err().contains("two different files"));
        assert!(root.add_file(&strings(&["a"]), digest(b"1"), "a").unwrap_err().contains("both a file and a directory"));
        assert!(root.add_file(&strings(&["a", "b", "c"]), digest(b"1"), "a/b/c").unwrap_err().contains("both a file and a directory"));
    }

    #[test]
    fn known_digest() {
        assert_eq!(digest(b"").hash, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }
}
