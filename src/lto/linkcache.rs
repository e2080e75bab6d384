//! The link cache: a relink whose LTO inputs did not change at all skips the thin link.
//!
//! Why: every ThinLTO relink reruns the thin link (lld does too): start `llvm-lto2`, load
//! libLLVM, read every module, write every shard, and only then find that every backend is
//! cached. When nothing that enters the LTO step changed, its result cannot change either, so
//! dtld keeps the previous link's result — the native objects LTO handed to the link — in the
//! ThinLTO cache directory (`--thinlto-cache-dir=`, in-process ThinLTO and DTLTO alike) under a
//! key over everything that determines them:
//!
//! * every module's lld name, its content digest and its symbols' resolutions, in link order;
//! * every LTO option (`LtoOptions`, whole), the code generation settings, the mode (in-process
//!   or DTLTO with which distributor), the backend command line, the output format;
//! * the identity of the tools (path, size, modification time, inode of `llvm-lto2`, the
//!   libLLVM it loads and clang; of dtld itself), and the contents of the sample profile.
//!
//! An object that LLVM's own cache holds (in-process ThinLTO in dtld's process, `inproc.rs`) is
//! recorded by reference: the name of LLVM's cache file, its length and its XXH3-128 digest,
//! read back and checked on a hit (a relink after one change then writes a few kilobytes, not
//! every object again: 18 MB for OpenSSL); any other object is stored in the entry itself.
//! A hit is verified before use (magic, a checksum over the whole entry, every referenced file's
//! digest, every object a valid object) and is byte for byte what the thin link and backends
//! returned the first time; a referenced file that is gone (pruned) or changed is a miss; a
//! damaged entry is removed and the link takes the normal path, then stores a fresh one. Links
//! that write side files (`--save-temps`, index or imports files, `--lto-obj-path=`) or print
//! LLVM's diagnostics (`--debug-pass-manager`) always take the normal path. Entries are named
//! `.dtld/link-<key>` in the cache directory and pruned with the backend entries by
//! `--thinlto-cache-policy`.

use std::io::Write as _;
use std::path::PathBuf;

use sha1::{Digest, Sha1};

use crate::input::InputFile;

const MAGIC: &[u8] = b"dtld-link-cache 3\n";

/// One object of a link's result, for `LinkCache::store`: what it was compiled from (which
/// names it; a hit is named for the link that uses it), its bytes, and the file of LLVM's cache
/// in the cache directory that holds exactly those bytes, if any.
pub struct Stored<'a> {
    pub of: super::request::ObjectOf,
    pub data: &'a [u8],
    pub cache_file: Option<String>,
}

/// The link cache entry of one link, when the link may use one.
pub struct LinkCache {
    dir: PathBuf,
    key: String,
}

/// What the key covers besides the modules (see the module comment).
pub struct KeyParts<'a> {
    /// The SHA-1 of each profile the backends read (`None`: unreadable, no entry is used).
    pub profiles: &'a [Option<[u8; 20]>],
    pub mode: String,
    pub backend_command: &'a [String],
    pub tools: &'a str,
    pub format: &'a str,
    pub pic: bool,
    pub opts: &'a super::options::LtoOptions,
    pub cg: &'a super::thinlink::CodegenSettings,
}

/// Whether a link with options `o` may use the link cache (it has a cache directory and writes
/// no side file that an entry would not reproduce).
fn applies(o: &super::options::LtoOptions) -> bool {
    o.cache_dir.is_some()
        && !(o.index_only
            || o.save_temps
            || o.emit_index_files
            || o.emit_imports_files
            || o.obj_path.is_some()
            || o.debug_pass_manager
            || o.emit_asm
            || o.emit_llvm)
}

/// What a link's inputs look like from outside (the command line, the working directory, and
/// each input file's path, size, modification time and inode), recorded per output in the
/// cache directory (`.dtld/inputs-<digest of the output's path>`) after each LTO link: when it
/// matches the previous link's, the link cache will most likely hit, and LLVM is not loaded
/// early (`lto::preload`) for a link that will not use it (a Lua relink with unchanged inputs
/// would take 3 ms longer and three times the memory). Only that guess depends on it; whether
/// the link cache hits is decided by its own key, as before.
pub struct InputsStamp {
    path: PathBuf,
    digest: [u8; 16],
    unchanged: bool,
}

impl InputsStamp {
    /// The stamp of a link writing `out` from `inputs`, when the link cache applies to it.
    pub fn new(o: &super::options::LtoOptions, out: &std::path::Path, inputs: &[InputFile]) -> Option<InputsStamp> {
        use std::os::unix::ffi::OsStrExt;
        use std::os::unix::fs::MetadataExt;
        let dir = o.cache_dir.as_ref().filter(|_| applies(o))?;
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        let mut put = |b: &[u8]| {
            h.update(&(b.len() as u64).to_le_bytes());
            h.update(b);
        };
        for a in std::env::args_os() {
            put(a.as_bytes());
        }
        let cwd = std::env::current_dir().unwrap_or_default();
        put(cwd.as_os_str().as_bytes());
        let mut last: Option<&std::path::Path> = None;
        for i in inputs {
            // An archive's members share its path.
            if last == Some(i.path.as_path()) {
                continue;
            }
            last = Some(&i.path);
            put(i.path.as_os_str().as_bytes());
            if let Ok(m) = std::fs::metadata(&i.path) {
                for v in [m.len(), m.mtime() as u64, m.mtime_nsec() as u64, m.ino(), m.dev()] {
                    put(&v.to_le_bytes());
                }
            }
        }
        let digest = h.digest128().to_le_bytes();
        let out = cwd.join(out);
        let path = super::backend::own_dir(dir).join(format!("inputs-{:032x}", xxhash_rust::xxh3::xxh3_128(out.as_os_str().as_bytes())));
        let unchanged = std::fs::read(&path).is_ok_and(|d| d == digest);
        Some(InputsStamp { path, digest, unchanged })
    }

    /// The previous LTO link of the same output had the same stamp.
    pub fn unchanged(&self) -> bool {
        self.unchanged
    }

    /// Records the stamp once the LTO step has run (best effort: a stamp that cannot be written
    /// only costs the next link its guess).
    pub fn record(&self) {
        if !self.unchanged {
            if let Some(d) = self.path.parent() {
                let _ = std::fs::create_dir_all(d);
            }
            let _ = crate::outfile::write_atomic(&self.path, &self.digest);
        }
    }
}

/// A hit: the objects for pass 2 and the number of modules the previous link reported.
pub struct Hit {
    pub objects: Vec<InputFile>,
    pub modules: usize,
}

impl LinkCache {
    /// The cache entry for this link, or `None` when it has no cache directory or writes side
    /// files an entry would not reproduce.
    pub fn new(req: &super::request::LtoRequest, names: &[String], fingerprints: &[[u8; 16]], parts: &KeyParts) -> Option<LinkCache> {
        let o = req.opts;
        let dir = o.cache_dir.clone().filter(|_| applies(o))?;
        let mut h = Sha1::new();
        let mut put = |b: &[u8]| {
            h.update((b.len() as u64).to_le_bytes());
            h.update(b);
        };
        put(b"dtld-link-cache-v3");
        put(env!("CARGO_PKG_VERSION").as_bytes());
        // A rebuilt dtld may stage or resolve differently.
        if let Ok(exe) = std::env::current_exe() {
            put(super::llvm::file_identity(&exe).as_bytes());
        }
        put(parts.mode.as_bytes());
        put(parts.tools.as_bytes());
        put(parts.format.as_bytes());
        put(&[parts.pic as u8]);
        put(format!("{:?}", parts.opts).as_bytes());
        put(format!("{:?}", parts.cg).as_bytes());
        for a in parts.backend_command {
            put(a.as_bytes());
        }
        // The profiles' contents: a new profile of the same name changes the objects.
        for d in parts.profiles {
            put(d.as_ref()?);
        }
        put(&(req.modules.len() as u64).to_le_bytes());
        for ((m, name), digest) in req.modules.iter().zip(names).zip(fingerprints) {
            put(name.as_bytes());
            put(digest);
            let b = m.bitcode;
            put(&(b.syms.len() as u64).to_le_bytes());
            for (k, flags) in m.flags.iter().enumerate() {
                put(b.sym(k).name);
                put(flags.as_bytes());
            }
        }
        let key: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        Some(LinkCache { dir, key })
    }

    fn entry(&self) -> PathBuf {
        super::backend::own_dir(&self.dir).join(format!("link-{}", self.key))
    }

    /// The previous result, verified, each object named by `name`; a damaged entry is removed.
    pub fn lookup(&self, name: &(dyn Fn(super::request::ObjectOf) -> String + Sync)) -> Option<Hit> {
        let p = self.entry();
        let (f, data) = crate::lto::backend::read_entry(&p)?;
        match decode(&data, name, Some(&self.dir)) {
            Some(hit) => {
                // A hit counts as a use for pruning.
                let _ = f.set_modified(std::time::SystemTime::now());
                Some(hit)
            }
            None => {
                let _ = std::fs::remove_file(&p);
                None
            }
        }
    }

    /// Records this link's result: `objects` (what each was compiled from in `of`) and the
    /// module count.
    pub fn store(&self, objects: &[InputFile], of: &[super::request::ObjectOf], modules: usize) {
        let parts: Vec<Stored> = objects.iter().zip(of).map(|(o, &of)| Stored { of, data: o.data, cache_file: None }).collect();
        self.store_parts(&parts, modules);
    }

    /// `store`, with each object's bytes or LLVM cache file given (`Stored`).
    pub fn store_parts(&self, objects: &[Stored], modules: usize) {
        use std::os::unix::fs::OpenOptionsExt;
        let own = super::backend::own_dir(&self.dir);
        let _ = std::fs::create_dir_all(&own);
        let tmp = own.join(format!(".tmp-link-{}-{}", self.key, std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        let Ok(f) = std::fs::File::options().write(true).create_new(true).custom_flags(libc::O_NOFOLLOW).mode(0o644).open(&tmp) else { return };
        // Streamed to the file (no copy of every object in memory).
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        if encode_to(objects, modules, &mut w).is_ok() && w.flush().is_ok() && std::fs::rename(&tmp, self.entry()).is_ok() {
            return;
        }
        let _ = std::fs::remove_file(&tmp);
    }
}

fn checksum(data: &[u8]) -> [u8; 16] {
    xxhash_rust::xxh3::xxh3_128(data).to_le_bytes()
}

#[cfg(test)]
fn encode(objects: &[Stored], modules: usize) -> Option<Vec<u8>> {
    let mut d = Vec::new();
    encode_to(objects, modules, &mut d).ok()?;
    Some(d)
}

/// Whether `name` can be a cache file of the cache directory that holds one object: LLVM's or
/// dtld's backend cache's (`llvmcache-<key>`; dtld's own files are in `.dtld/`). A plain file
/// name.
fn cache_file_name(name: &str) -> bool {
    name.starts_with("llvmcache-") && name != "llvmcache.timestamp" && !name.contains('/')
}

/// Writes an entry to `w`: the header, each object's origin (`ObjectOf::code`) and bytes (tag 0)
/// or LLVM cache file, length and digest (tag 1), and the checksum of everything before it.
fn encode_to(objects: &[Stored], modules: usize, w: &mut impl std::io::Write) -> std::io::Result<()> {
    let mut sum = xxhash_rust::xxh3::Xxh3::new();
    let mut put = |b: &[u8]| -> std::io::Result<()> {
        sum.update(b);
        w.write_all(b)
    };
    put(MAGIC)?;
    put(&(modules as u64).to_le_bytes())?;
    put(&(objects.len() as u64).to_le_bytes())?;
    for o in objects {
        put(&o.of.code().to_le_bytes())?;
        match o.cache_file.as_deref().filter(|n| cache_file_name(n)) {
            Some(file) => {
                put(&[1])?;
                put(&(file.len() as u64).to_le_bytes())?;
                put(file.as_bytes())?;
                put(&(o.data.len() as u64).to_le_bytes())?;
                put(&xxhash_rust::xxh3::xxh3_128(o.data).to_le_bytes())?;
            }
            None => {
                put(&[0])?;
                put(&(o.data.len() as u64).to_le_bytes())?;
                put(o.data)?;
            }
        }
    }
    let digest = sum.digest128().to_le_bytes();
    w.write_all(&digest)
}

struct Reader<'a> {
    body: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.body.get(self.pos..self.pos.checked_add(n)?)?;
        self.pos += n;
        Some(s)
    }
    fn num(&mut self) -> Option<usize> {
        usize::try_from(u64::from_le_bytes(self.take(8)?.try_into().ok()?)).ok()
    }
}

/// An object of an entry: its bytes, or the LLVM cache file (name, length, digest) holding them.
enum Body<'a> {
    Bytes(&'a [u8]),
    File(&'a str, usize, &'a [u8]),
}

/// The hit an entry records, its objects read (referenced ones from `dir`) and checked.
fn decode(data: &[u8], name: &(dyn Fn(super::request::ObjectOf) -> String + Sync), dir: Option<&std::path::Path>) -> Option<Hit> {
    use rayon::prelude::*;
    let body_len = data.len().checked_sub(16)?;
    let (body, sum) = data.split_at(body_len);
    if !body.starts_with(MAGIC) || checksum(body) != sum {
        return None;
    }
    let mut r = Reader { body, pos: MAGIC.len() };
    let modules = r.num()?;
    let count = r.num()?;
    let mut records = Vec::with_capacity(count.min(1 << 20));
    for _ in 0..count {
        let of = super::request::ObjectOf::from_code(u64::from_le_bytes(r.take(8)?.try_into().ok()?))?;
        let b = match r.take(1)?[0] {
            0 => {
                let n = r.num()?;
                Body::Bytes(r.take(n)?)
            }
            1 => {
                let n = r.num()?;
                let file = std::str::from_utf8(r.take(n)?).ok().filter(|f| cache_file_name(f))?;
                let len = r.num()?;
                Body::File(file, len, r.take(16)?)
            }
            _ => return None,
        };
        records.push((of, b));
    }
    if r.pos != body.len() {
        return None;
    }
    // The cache files, read in parallel (998 for an OpenSSL relink).
    let objects: Option<Vec<InputFile>> = records
        .into_par_iter()
        .map(|(of, b)| {
            let obj: std::borrow::Cow<'static, [u8]> = match b {
                Body::Bytes(d) => d.to_vec().into(),
                Body::File(file, len, digest) => {
                    let (_, _, d) = super::backend::map_entry(&dir?.join(file))?;
                    (d.len() == len && xxhash_rust::xxh3::xxh3_128(d).to_le_bytes() == digest).then_some(d)?.into()
                }
            };
            super::backend::check_object(&obj).ok()?;
            Some(super::files::lto_input_bytes(name(of), obj))
        })
        .collect();
    Some(Hit { objects: objects?, modules })
}

/// The XXH3-128 of every module's bytes, in parallel, for the link cache key: a relink through
/// the in-process library needs nothing else of the modules' contents, and hashing OpenSSL's
/// 16 MB of bitcode took SHA-1 8-15 ms of the relink (XXH3: under 2 ms). The cache entry's
/// own references to LLVM's cache files use the same digest, and it names the modules staged
/// for DTLTO and the member store's entries.
pub fn fingerprints(inputs: &[&InputFile]) -> Vec<[u8; 16]> {
    use rayon::prelude::*;
    inputs.par_iter().map(|i| checksum(i.data)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj() -> Vec<u8> {
        let mut d = vec![0u8; 64];
        d[..4].copy_from_slice(b"\x7fELF");
        d[4] = 2;
        d[5] = 1;
        d[16] = 1;
        d[18] = 62;
        d
    }

    use super::super::request::ObjectOf;

    /// Names as a link writing `q` gives them.
    fn q(of: ObjectOf) -> String {
        match of {
            ObjectOf::Regular => "q.lto.o".into(),
            ObjectOf::Module(i) => format!("q.lto.m{i}.o"),
            ObjectOf::Task(k) => format!("q.lto.{}.o", k + 1),
        }
    }

    #[test]
    fn round_trip_and_damage() {
        let (a, b) = (obj(), obj());
        let parts = [Stored { of: ObjectOf::Regular, data: &a, cache_file: None }, Stored { of: ObjectOf::Module(3), data: &b, cache_file: None }];
        let e = encode(&parts, 7).unwrap();
        let hit = decode(&e, &q, None).unwrap();
        assert_eq!(hit.modules, 7);
        let names: Vec<&str> = hit.objects.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["q.lto.o", "q.lto.m3.o"]);
        assert_eq!(hit.objects[1].data, &obj()[..]);
        // Any flipped byte, truncation or extension is refused.
        for i in [0, MAGIC.len() + 3, e.len() / 2, e.len() - 1] {
            let mut bad = e.clone();
            bad[i] ^= 0x40;
            assert!(decode(&bad, &q, None).is_none(), "byte {i}");
        }
        assert!(decode(&e[..e.len() - 1], &q, None).is_none());
        assert!(decode(&[e.clone(), vec![0]].concat(), &q, None).is_none());
        assert!(decode(b"", &q, None).is_none());
        for of in [ObjectOf::Regular, ObjectOf::Module(0), ObjectOf::Module(9), ObjectOf::Task(0), ObjectOf::Task(4)] {
            assert_eq!(ObjectOf::from_code(of.code()), Some(of));
        }
    }

    #[test]
    fn objects_by_reference() {
        let dir = std::env::temp_dir().join(format!("dtld-linkcache-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b) = (obj(), [obj(), vec![7; 8]].concat());
        std::fs::write(dir.join("llvmcache-1"), &b).unwrap();
        let parts =
            [Stored { of: ObjectOf::Regular, data: &a, cache_file: None }, Stored { of: ObjectOf::Task(0), data: &b, cache_file: Some("llvmcache-1".into()) }];
        let e = encode(&parts, 2).unwrap();
        // The referenced bytes are not in the entry.
        assert!(!e.windows(b.len()).any(|w| w == &b[..]));
        let hit = decode(&e, &q, Some(&dir)).unwrap();
        assert_eq!(hit.objects[0].data, &a[..]);
        assert_eq!(hit.objects[1].data, &b[..]);
        // A changed or missing cache file is a miss.
        std::fs::write(dir.join("llvmcache-1"), [obj(), vec![8; 8]].concat()).unwrap();
        assert!(decode(&e, &q, Some(&dir)).is_none());
        std::fs::remove_file(dir.join("llvmcache-1")).unwrap();
        assert!(decode(&e, &q, Some(&dir)).is_none());
        // dtld's backend cache files are referenced alike (DTLTO); other names are copied.
        let backend = format!("llvmcache-{}", "0A".repeat(20));
        std::fs::write(dir.join(&backend), &b).unwrap();
        let parts = [Stored { of: ObjectOf::Module(1), data: &b, cache_file: Some(backend.clone()) }];
        let e = encode(&parts, 1).unwrap();
        assert!(!e.windows(b.len()).any(|w| w == &b[..]));
        assert_eq!(decode(&e, &q, Some(&dir)).unwrap().objects[0].data, &b[..]);
        for name in [".dtld/link-0a", ".dtld/member-0a", "../llvmcache-1", "llvmcache.timestamp", "dtld-0a"] {
            assert!(!cache_file_name(name), "{name}");
            let parts = [Stored { of: ObjectOf::Module(1), data: &b, cache_file: Some(name.into()) }];
            assert!(encode(&parts, 1).unwrap().windows(b.len()).any(|w| w == &b[..]), "{name}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
