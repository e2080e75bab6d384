//! Turning one DTLTO job into a REAPI Action, byte-for-byte deterministically, and independent of
//! the paths and process ids in the job file.
//!
//! The action cache is keyed by the digest of the Action, which covers the Command (argv,
//! environment, output paths, working directory, platform), the Merkle tree of the input root
//! (every file's name and content), the platform and the salt. A linker's job file names its
//! files by where they are on this machine: lld 22 (and dtld, which writes the same temporaries)
//! names the summary shard and the native object with the link's process id
//! (`main.1.4711.native.o.thinlto.bc`), a regular-archive member written out for the backend with
//! it in hex (`libx.a(m.o at 86).4.1267.o`), and plain inputs by the path they were given on the
//! command line, absolute or relative. None of that may enter the Action, or no relink would ever
//! hit. So inside an Action every file of the job has a name derived from its content alone:
//!
//! - the module and every import source (`inputs[0]` and `inputs[2..]`): `m/<sha256>.o` (`.o`
//!   as lld's own jobs name modules: `-fthinlto-index=` makes clang read the input as IR);
//! - the summary shard (`inputs[1]`), renamed first: the backend finds its module and the import
//!   sources through the module paths written inside the shard (its MODULE_STRTAB, the job
//!   file's module IDs), so every path there that names a job input is replaced by that input's
//!   content name (`dtld_bitcode::shardpaths`), and the renamed shard is uploaded as a blob of its
//!   own, `s/<sha256 of the renamed shard>.thinlto.bc`;
//! - the output: `out.o` (further outputs `out.<n>.o`), written locally to the job's real
//!   `outputs[n]` when it comes back;
//! - the command: `common.args` then `job.args` with each argument that names one of these files
//!   replaced by its name in the Action (`<module> -fthinlto-index=<shard> -o <object>` becomes
//!   `m/<sha>.o -fthinlto-index=s/<sha>.thinlto.bc -o out.o`); other arguments stay as they are.
//!
//! Only `common.inputs` (a sample profile, which `common.args` names by its path) keep their
//! job-file path in the input root (`layout`). Everything else is canonical: directory entries
//! sorted by name, no mtimes or node properties, `is_executable` always false, environment and
//! platform properties sorted, no timeout in the Action (it is a client-side deadline instead, so
//! changing it does not change any key), and the compiler's identity in the salt, so a compiler
//! upgrade invalidates every key while the compiler's path stays the same. Identical inputs then
//! give an identical Action digest in any directory, for any output name, in any process, on any
//! machine.
//!
//! Two job inputs with the same content (two copies of one module) get `m/<sha>.o` and
//! `m/<sha>.1.o`, in job-file order: the backend sees two modules, as the linker does.

use std::collections::{BTreeMap, HashMap};

use bazel_remote_apis::build::bazel::remote::execution::v2 as re;
use dtld_distributor::jobfile::Job;
use prost::Message;
use sha2::{Digest as _, Sha256};

use crate::layout::{self, Layout};

/// The option that names a job's summary shard.
const INDEX_OPTION: &str = "-fthinlto-index=";

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
    /// A local file (as the job file names it), read again at upload time and checked against the
    /// digest.
    File(String),
    /// A local summary shard with its module paths renamed (`rename_shard` with `names` and
    /// `module`), made again at upload time and checked against the digest: only the shards of
    /// jobs that miss are ever uploaded, so their bytes are not kept.
    Shard { path: String, names: Vec<(String, String)>, module: String },
}

/// What one job becomes.
#[derive(Debug, Clone)]
pub struct Built {
    pub action_digest: re::Digest,
    /// Every blob the Action needs in the CAS (the Action, Command, every Directory and every
    /// input file), deduplicated.
    pub blobs: Vec<(re::Digest, Source)>,
    /// The Action's output paths (relative to its working directory), in the order of the job's
    /// `outputs`.
    pub outputs: Vec<String>,
    /// Each input file of the job (its path in the job file) and its content name in the Action,
    /// for messages. (Not the outputs: `out.o` is too likely to occur in other words.)
    pub names: Vec<(String, String)>,
}

impl Built {
    /// `text` (the compiler's messages on the engine) with the Action's names of the job's files
    /// replaced by their paths in the job file.
    pub fn unname(&self, text: &str) -> String {
        self.names.iter().fold(text.to_string(), |t, (path, name)| t.replace(name.as_str(), path))
    }
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

/// A path as a lookup key: `.` and `name/..` folded, absolute paths keeping their `/`.
fn lexical(p: &str) -> String {
    let rel = layout::normalize(p).join("/");
    if p.starts_with('/') {
        format!("/{rel}")
    } else {
        rel
    }
}

/// The Action's name of every module of a job (`inputs[0]` and `inputs[2..]`): `m/<sha256>.o`,
/// `m/<sha256>.<n>.o` for the n-th further path with the same content. A path listed twice gets
/// one name.
fn module_names(job: &Job, file_digest: &dyn Fn(&str) -> re::Digest) -> Vec<(String, String, re::Digest)> {
    let mut out: Vec<(String, String, re::Digest)> = Vec::new();
    let mut copies: HashMap<String, usize> = HashMap::new();
    for p in job.inputs.iter().take(1).chain(job.inputs.iter().skip(2)) {
        if out.iter().any(|(q, _, _)| q == p) {
            continue;
        }
        let d = file_digest(p);
        let n = copies.entry(d.hash.clone()).or_insert(0);
        let name = if *n == 0 { format!("m/{}.o", d.hash) } else { format!("m/{}.{n}.o", d.hash) };
        *n += 1;
        out.push((p.clone(), name, d));
    }
    out
}

/// `shard` with every module path that names a file of `names` (job-file path, name in the
/// Action), exactly or after folding `.` and `..`, renamed to that file's name in the Action.
/// Fails if the shard does not name `module` (the job's own module): the backend would find none
/// of its summaries, and compile it wrongly instead of failing. Paths that name no file of the
/// job stay as they are.
pub fn rename_shard(shard: &[u8], names: &[(String, String)], module: &str) -> Result<Vec<u8>, String> {
    let mut by_path: HashMap<String, &str> = HashMap::new();
    for (path, name) in names {
        by_path.entry(lexical(path)).or_insert(name);
    }
    for (path, name) in names {
        by_path.insert(path.clone(), name);
    }
    let found = std::cell::Cell::new(false);
    let module_name = by_path.get(module).copied();
    let renamed = dtld_bitcode::shardpaths::rename_modules(shard, &|p| {
        let p = String::from_utf8_lossy(p);
        let name = by_path.get(p.as_ref()).or_else(|| by_path.get(&lexical(&p))).copied()?;
        if Some(name) == module_name {
            found.set(true);
        }
        Some(name.as_bytes().to_vec())
    })?;
    if !found.get() {
        return Err(format!("the summary shard does not name the module '{module}' in its module table"));
    }
    Ok(renamed)
}

/// Builds the Action for `job`: `file_digest` gives the digest of every input file but the shard
/// (they were hashed once per link), `shard` is the bytes of the job's summary shard
/// (`inputs[1]`).
pub fn build(s: &Settings, job: &Job, file_digest: &dyn Fn(&str) -> re::Digest, shard: &[u8]) -> Result<Built, String> {
    let mut root = Dir::default();
    root.add_dir(&s.layout.working_directory_components());
    let mut blobs = Vec::new();
    for p in s.common_inputs {
        let d = file_digest(p);
        root.add_file(&s.layout.in_root(p), d.clone(), p)?;
        blobs.push((d, Source::File(p.clone())));
    }

    // The modules, then the shard naming them, under their content names.
    let modules = module_names(job, file_digest);
    let mut names: Vec<(String, String)> = modules.iter().map(|(p, n, _)| (p.clone(), n.clone())).collect();
    for (p, name, d) in &modules {
        root.add_file(&s.layout.in_root(name), d.clone(), p)?;
        blobs.push((d.clone(), Source::File(p.clone())));
    }
    let shard_path = &job.inputs[1];
    let renamed = rename_shard(shard, &names, job.module()).map_err(|e| format!("'{shard_path}': {e}"))?;
    let shard_digest = digest(&renamed);
    let shard_name = format!("s/{}.thinlto.bc", shard_digest.hash);
    root.add_file(&s.layout.in_root(&shard_name), shard_digest.clone(), shard_path)?;
    blobs.push((shard_digest, Source::Shard { path: shard_path.clone(), names: names.clone(), module: job.module().to_string() }));
    names.push((shard_path.clone(), shard_name));

    // The outputs under fixed names, which no input may have.
    let outputs: Vec<String> = (0..job.outputs.len()).map(|k| if k == 0 { "out.o".to_string() } else { format!("out.{k}.o") }).collect();
    if let Some(p) = s.common_inputs.iter().find(|p| outputs.iter().any(|o| s.layout.in_root(p) == s.layout.in_root(o))) {
        return Err(format!("the common input '{p}' has the name of the Action's output; rename it"));
    }
    let mut subst: HashMap<&str, &str> = names.iter().map(|(p, n)| (p.as_str(), n.as_str())).collect();
    for (local, remote) in job.outputs.iter().zip(&outputs) {
        subst.insert(local, remote);
    }
    let args: Vec<String> = job
        .args
        .iter()
        .map(|a| match (subst.get(a.as_str()), a.strip_prefix(INDEX_OPTION).and_then(|v| subst.get(v))) {
            (Some(n), _) => n.to_string(),
            (None, Some(n)) => format!("{INDEX_OPTION}{n}"),
            (None, None) => a.clone(),
        })
        .collect();

    let mut output_paths = outputs.clone();
    output_paths.sort();
    let platform = (!s.platform.is_empty())
        .then(|| re::Platform { properties: s.platform.iter().map(|(n, v)| re::platform::Property { name: n.clone(), value: v.clone() }).collect() });
    // `Command.platform` is deprecated since v2.2 in favour of `Action.platform`; older engines
    // read only the former, so both are set.
    #[allow(deprecated)]
    let command = re::Command {
        arguments: s.common_args.iter().cloned().chain(args).collect(),
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
    Ok(Built { action_digest, blobs, outputs, names })
}

#[cfg(test)]
mod tests {
    use super::*;
    use dtld_bitcode::bitstream::BitWriter;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// A summary shard as LLVM writes one for a distributed backend, reduced to what matters
    /// here: MODULE_BLOCK { VERSION, MODULE_STRTAB { ENTRY [id, path], HASH [5 words] per
    /// module }, a GLOBALVAL_SUMMARY_BLOCK standing for the summaries }.
    fn shard(paths: &[&str]) -> Vec<u8> {
        let mut w = BitWriter::default();
        w.bytes(b"BC\xC0\xDE");
        let m = w.enter(2, 8, 3);
        w.record(3, 1, &[2]);
        let t = w.enter(3, 19, 3);
        for (i, p) in paths.iter().enumerate() {
            let ops: Vec<u64> = std::iter::once(i as u64).chain(p.bytes().map(u64::from)).collect();
            w.record(3, 1, &ops);
            w.record(3, 2, &[7, 8, 9, 10, i as u64]);
        }
        w.end(3, t);
        let g = w.enter(3, 20, 4);
        w.record(4, 1, &[12]);
        w.end(4, g);
        w.end(3, m);
        w.finish()
    }

    /// The module paths a shard names, in its order.
    fn shard_paths(data: &[u8]) -> Vec<String> {
        let seen = std::cell::RefCell::new(Vec::new());
        dtld_bitcode::shardpaths::rename_modules(data, &|p| {
            seen.borrow_mut().push(String::from_utf8_lossy(p).into_owned());
            None
        })
        .unwrap();
        seen.into_inner()
    }

    /// One job of a link as lld 22 (or dtld) writes it in `cwd` with process id `pid`: the
    /// module `main` imports from `util` and from a regular-archive member written out.
    struct Link {
        job: Job,
        layout: Layout,
        contents: HashMap<String, Vec<u8>>,
        shard: Vec<u8>,
    }

    fn link(cwd: &str, main: &str, util: &str, out_dir: &str, pid: u32) -> Link {
        let member = format!("{out_dir}libp.a(p.o at 86).4.{pid:X}.o");
        let shard_path = format!("{out_dir}main.1.{pid}.native.o.thinlto.bc");
        let object = format!("{out_dir}main.1.{pid}.native.o");
        let mut imports = vec![util.to_string(), member.clone()];
        imports.sort();
        let inputs: Vec<String> = [main.to_string(), shard_path.clone()].into_iter().chain(imports).collect();
        let job = Job { args: vec![main.to_string(), format!("-fthinlto-index={shard_path}"), "-o".into(), object.clone()], inputs, outputs: vec![object] };
        let contents = HashMap::from([(main.to_string(), b"main".to_vec()), (util.to_string(), b"util".to_vec()), (member.clone(), b"part".to_vec())]);
        let mut in_shard = vec![main, util, member.as_str()];
        in_shard.sort();
        let layout = crate::layout::compute(std::path::Path::new(cwd), std::iter::empty()).unwrap();
        Link { job, layout, contents, shard: shard(&in_shard) }
    }

    fn build_link(l: &Link) -> Built {
        let common = strings(&["/usr/lib/llvm-22/bin/clang", "-c", "-O2"]);
        let platform = vec![("OSFamily".to_string(), "linux".to_string())];
        let s = Settings { layout: &l.layout, common_args: &common, common_inputs: &[], platform: &platform, salt: b"clang 22" };
        build(&s, &l.job, &|p: &str| digest(&l.contents[p]), &l.shard).unwrap()
    }

    #[test]
    fn same_contents_same_action_in_any_directory_and_process() {
        let a = build_link(&link("/home/a/build", "main.o", "util.o", "", 4711));
        // Another directory, another output directory, another process, absolute inputs.
        let b = build_link(&link("/srv/ci/checkout", "/srv/ci/checkout/main.o", "/srv/ci/checkout/util.o", "../out/", 123));
        assert_eq!(a.action_digest, b.action_digest);
        // Blobs: 3 modules, the shard, Command, 4 directories (root, dtld, m, s), Action.
        assert_eq!(a.blobs.len(), 10);
        assert_eq!(a.outputs, ["out.o"]);
        // Another content changes the key.
        let mut l = link("/home/a/build", "main.o", "util.o", "", 4711);
        l.contents.insert("util.o".into(), b"util, changed".to_vec());
        assert_ne!(build_link(&l).action_digest, a.action_digest);
    }

    #[test]
    fn command_and_shard_name_the_contents() {
        let l = link("/w", "/abs/main.o", "./util.o", "bin/", 99);
        let b = build_link(&l);
        let name = |p: &str| b.names.iter().find(|(q, _)| q == p).map(|(_, n)| n.clone()).unwrap();
        let (main, util, member) = (name("/abs/main.o"), name("./util.o"), name("bin/libp.a(p.o at 86).4.63.o"));
        assert_eq!(main, format!("m/{}.o", digest(b"main").hash));
        let shard_name = name("bin/main.1.99.native.o.thinlto.bc");
        let command = b.blobs.iter().find_map(|(_, s)| match s {
            Source::Bytes(bytes) => re::Command::decode(bytes.as_slice()).ok().filter(|c| !c.arguments.is_empty()),
            _ => None,
        });
        let command = command.unwrap();
        assert_eq!(command.arguments[3..], [main.clone(), format!("-fthinlto-index={shard_name}"), "-o".into(), "out.o".into()]);
        assert_eq!(command.output_paths, ["out.o"]);
        assert_eq!(command.working_directory, "dtld");
        // The uploaded shard: its own digest, and the content names in place of the paths.
        let Some((d, Source::Shard { path, names, module })) = b.blobs.iter().find(|(_, s)| matches!(s, Source::Shard { .. })) else { panic!("no shard blob") };
        assert_eq!(path, "bin/main.1.99.native.o.thinlto.bc");
        assert_eq!(module, "/abs/main.o");
        let renamed = rename_shard(&l.shard, names, module).unwrap();
        assert_eq!(&digest(&renamed), d);
        assert_eq!(shard_name, format!("s/{}.thinlto.bc", d.hash));
        let mut want = vec![main, util, member];
        let before = shard_paths(&l.shard);
        assert_eq!(before, ["./util.o", "/abs/main.o", "bin/libp.a(p.o at 86).4.63.o"]);
        // In the shard's own order: util, main, member.
        want.swap(0, 1);
        assert_eq!(shard_paths(&renamed), want);
        assert!(b.unname(&format!("error: {}: bad", want[1])).contains("error: /abs/main.o: bad"));
    }

    #[test]
    fn common_inputs_keep_their_path() {
        let common = strings(&["/usr/lib/llvm-22/bin/clang", "-c", "-fprofile-sample-use=../prof/app.prof"]);
        let with = |cwd: &str, profile: &str| {
            let mut l = link(cwd, "main.o", "util.o", "", 7);
            let common_inputs = strings(&[profile]);
            l.layout = crate::layout::compute(std::path::Path::new(cwd), common_inputs.iter().map(String::as_str)).unwrap();
            l.contents.insert(profile.to_string(), b"main:1:1".to_vec());
            let s = Settings { layout: &l.layout, common_args: &common, common_inputs: &common_inputs, platform: &[], salt: b"" };
            build(&s, &l.job, &|p: &str| digest(&l.contents[p]), &l.shard).map(|b| (b, l.layout.clone()))
        };
        let (a, layout) = with("/home/a/work", "../prof/app.prof").unwrap();
        assert_eq!(layout.working_directory, "dtld/work");
        let (b, _) = with("/srv/b/work", "../prof/app.prof").unwrap();
        assert_eq!(a.action_digest, b.action_digest);
        assert!(a.blobs.iter().any(|(_, s)| s == &Source::File("../prof/app.prof".into())));
        // The profile is named by the command: another name is another Action.
        let (c, _) = with("/srv/b/work", "../prof/other.prof").unwrap();
        assert_ne!(a.action_digest, c.action_digest);
        assert!(with("/w", "out.o").unwrap_err().contains("has the name of the Action's output"));
    }

    #[test]
    fn shard_paths_matched_lexically_and_module_required() {
        let names = vec![("a/./m.o".to_string(), "m/1.o".to_string()), ("x/../n.o".to_string(), "m/2.o".to_string())];
        let renamed = rename_shard(&shard(&["a/m.o", "n.o", "other.o"]), &names, "a/./m.o").unwrap();
        assert_eq!(shard_paths(&renamed), ["m/1.o", "m/2.o", "other.o"]);
        let e = rename_shard(&shard(&["n.o"]), &names, "a/./m.o").unwrap_err();
        assert!(e.contains("does not name the module 'a/./m.o'"), "{e}");
        assert!(rename_shard(b"not bitcode", &names, "a/./m.o").is_err());
    }

    #[test]
    fn copies_of_one_module_get_two_names() {
        let job = Job { args: vec![], inputs: strings(&["a.o", "s.bc", "b.o", "c.o", "b.o"]), outputs: strings(&["o"]) };
        let names = module_names(&job, &|p| digest(if p == "c.o" { b"c" } else { b"same" }));
        let h = digest(b"same").hash;
        let got: Vec<(&str, &str)> = names.iter().map(|(p, n, _)| (p.as_str(), n.as_str())).collect();
        assert_eq!(got, [("a.o", format!("m/{h}.o").as_str()), ("b.o", format!("m/{h}.1.o").as_str()), ("c.o", format!("m/{}.o", digest(b"c").hash).as_str())]);
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
