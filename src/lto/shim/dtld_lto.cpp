// dtld's in-process thin link: a small C interface over LLVM's resolution-based LTO API
// (`llvm::lto::LTO`), built against the user's libLLVM and loaded by dtld at run time
// (src/lto/inproc.rs).
//
// Why it exists: issue 15 measured that the thin link run in another process (`llvm-lto2`,
// or LLVMgold.so in a fork) cannot reach ld.lld's speed: every module is handed over and
// parsed again, the child tears down the combined index before it exits, and `llvm-lto2`
// writes every (cached) object to a file that dtld reads back. lld runs `lto::LTO` in its
// own process over the buffers it already has; this library lets dtld do the same with
// exactly the configuration `llvm-lto2 run` gets from dtld's command line (so outputs and
// ThinLTO cache entries are those of the `llvm-lto2` path, which the tests compare with
// lld's).
//
// The interface is plain C so that the Rust side needs no C++ ABI: opaque handles, byte
// buffers, one resolution byte per symbol, callbacks for diagnostics and objects. Nothing
// here owns dtld's buffers; they outlive every call. Errors come back as malloc'ed strings.

#include "llvm/ADT/SmallString.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/CodeGen/CommandFlags.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/ModuleSummaryIndex.h"
#include "llvm/LTO/LTO.h"
#include "llvm/LTO/LTOBackend.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Remarks/HotnessThresholdParser.h"
#include "llvm/Support/Caching.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/Timer.h"
#include "llvm/Pass.h"
#include "llvm/Support/TimeProfiler.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/IPO/FunctionImport.h"

#include "cache_key.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

using namespace llvm;

#define DTLD_API __attribute__((visibility("default")))

// The summaries `module` defines (none for a module LLVM has no entry for).
static const GVSummaryMapTy &defined_in(const DenseMap<StringRef, GVSummaryMapTy> &by_module, StringRef module) {
  static const GVSummaryMapTy none;
  auto found = by_module.find(module);
  return found == by_module.end() ? none : found->second;
}

extern "C" {

// Interface version: dtld refuses a library whose `dtld_lto_abi()` differs.
enum { DTLD_LTO_ABI = 7 };

// Resolution bits, one byte per symbol in the order `InputFile::symbols()` lists them
// (llvm-lto2's `-r` letters p, l, x, r).
enum {
  DTLD_RES_PREVAILING = 1,
  DTLD_RES_FINAL_IN_LINKAGE_UNIT = 2,
  DTLD_RES_VISIBLE_TO_REGULAR_OBJ = 4,
  DTLD_RES_LINKER_REDEFINED = 8,
};

// Diagnostic severities passed to the diagnostic callback.
enum { DTLD_DIAG_ERROR = 0, DTLD_DIAG_WARNING = 1, DTLD_DIAG_REMARK = 2, DTLD_DIAG_NOTE = 3 };

typedef void (*dtld_lto_diag_fn)(void *ctx, int severity, const char *msg, size_t len);
// `path` (of `path_len` bytes; null for an object not in LLVM's cache) names the cache file
// that holds exactly the object's bytes.
typedef void (*dtld_lto_object_fn)(void *ctx, unsigned task, const char *data, size_t len, const char *path,
                                   size_t path_len);

// One module's index shard (the bytes LLVM writes to `<module>.thinlto.bc`) and its import
// sources (what it writes to `<module>.imports`: one module ID per line). Called from LLVM's
// threads, once per ThinLTO module.
typedef void (*dtld_lto_index_fn)(void *ctx, const char *module, size_t module_len, const char *shard, size_t shard_len,
                                  const char *imports, size_t imports_len);

// DTLTO with dtld's backend cache: LLVM's cache key for a module's backend
// (`computeLTOCacheKey`, what in-process ThinLTO keys its cache with: the module's and its
// import sources' hashes, the import and export lists, the resolutions, the configuration;
// never a module's name) before its shard is written. Returns nonzero when the cache holds
// the module's object: then no shard is written and `index_sink` is not called for it.
// Called from LLVM's threads; only for modules with a module hash.
typedef int (*dtld_lto_probe_fn)(void *ctx, const char *module, size_t module_len, const char *key, size_t key_len);

struct dtld_lto_config {
  // `-O`: 0-3.
  unsigned opt_level;
  // `--cg-opt-level`, or -1 for llvm-lto2's default (2).
  int cg_opt_level;
  // Worker threads for the backends or the index writing.
  unsigned threads;
  unsigned debug_pass_manager;
  // Command-line options for LLVM's own parser, as llvm-lto2 gets them: the code generation
  // flags (`--relocation-model=`, `--function-sections`, `--mcpu=`, ...) and `-mllvm` options.
  const char *const *cl_args;
  size_t cl_argc;
  // Index-only: the thin link only, every module's shard and import list handed to
  // `index_sink` (dtld writes the files: where lld writes them, or for DTLTO only those its
  // backend cache does not hold).
  unsigned index_only;
  dtld_lto_index_fn index_sink;
  void *index_ctx;
  // In-process backends: LLVM's ThinLTO cache directory, or null.
  const char *cache_dir;
  // `key=value` settings of `lto::Config` that lld sets from its options and that have no
  // LLVM command-line flag (`apply_setting` lists the keys).
  const char *const *settings;
  size_t settingc;
  // Index-only for DTLTO: asked for each module before its shard is written (with `index_ctx`),
  // or null.
  dtld_lto_probe_fn probe;
  // SHA-1 of a buffer (dtld's, which uses the CPU's SHA instructions), for the probe's keys
  // (cache_key.h); null: LLVM's.
  dtld::sha1_fn sha1;
};

// An input parsed ahead of `dtld_lto_add` (parsing is independent per module, so dtld does
// it on its own threads).
struct dtld_lto_input {
  std::unique_ptr<lto::InputFile> file;
};

struct dtld_lto {
  std::unique_ptr<lto::LTO> lto;
  dtld_lto_diag_fn diag;
  void *diag_ctx;
  std::mutex diag_lock;
  bool had_error = false;
  std::string cache_dir;
  bool index_only = false;
  // The objects of the last run, which the object callback's pointers refer to.
  std::vector<SmallString<0>> streamed;
  std::vector<std::unique_ptr<MemoryBuffer>> cached;
};

static char *dup_message(const std::string &s) {
  char *p = static_cast<char *>(std::malloc(s.size() + 1));
  if (p) {
    std::memcpy(p, s.data(), s.size());
    p[s.size()] = 0;
  }
  return p;
}

static char *error_message(Error e) {
  std::string msg;
  handleAllErrors(std::move(e), [&](ErrorInfoBase &info) {
    if (!msg.empty())
      msg += "; ";
    msg += info.message();
  });
  return dup_message(msg);
}

DTLD_API unsigned dtld_lto_abi(void) { return DTLD_LTO_ABI; }

DTLD_API const char *dtld_lto_llvm_version(void) { return LLVM_VERSION_STRING; }

DTLD_API void dtld_lto_free_string(char *s) { std::free(s); }

// The runtime library functions code generation may call for `triple` that a module's symbol
// table need not name (`LTO::getRuntimeLibcallSymbols`), one per line; freed with
// dtld_lto_free_string. lld extracts lazy bitcode defining one of them before LTO.
DTLD_API char *dtld_lto_runtime_libcalls(const char *triple) {
  std::string out;
  for (const char *s : lto::LTO::getRuntimeLibcallSymbols(Triple(triple))) {
    out += s;
    out += '\n';
  }
  return strdup(out.c_str());
}

// Registers LLVM's X86 target and the code generation options (`-mcpu`, ...) that lld's
// option parser knows; once per process, before any option is parsed.
static void register_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Only LLVM's X86 target: dtld links x86-64 alone (a module for another machine is refused
    // before it gets here, `lto::check_machine`), and registering every target LLVM was built
    // with touched 2.3 MiB more of libLLVM (peak memory of Lua's thin link: 71.7 -> 69.4 MiB).
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    LLVMInitializeX86AsmParser();
    static codegen::RegisterCodeGenFlags flags;
  });
}

// Registers the targets and parses `cl_args` into LLVM's options; once per process (LLVM's
// option parser accumulates). Returns null, or the parser's complaint.
static char *init_once(const dtld_lto_config *cfg) {
  static std::once_flag once;
  static std::string failure;
  std::call_once(once, [&] {
    register_once();
    std::vector<const char *> argv{"dtld"};
    for (size_t i = 0; i < cfg->cl_argc; ++i)
      argv.push_back(cfg->cl_args[i]);
    std::string text;
    raw_string_ostream os(text);
    if (!cl::ParseCommandLineOptions(static_cast<int>(argv.size()), argv.data(), "", &os))
      failure = text.empty() ? "cannot parse the LLVM options" : text;
  });
  return failure.empty() ? nullptr : dup_message(failure);
}

// The user's LLVM options (`-mllvm`) as lld reads them with its command line, so that an unknown
// one is an error whether or not the link has bitcode: `prog` is the name LLVM's messages start
// with (lld's argv[0]; lld-link's "lld-link (LLVM option parsing)"). `together` == 0: each
// option parsed on its own, as ld.lld's parseClangOption does; the result lists the failed
// ones as "<index>\x1f<LLVM's words>\x1e". `together` != 0: all in one parse, as lld-link's;
// the result is LLVM's words. Null when every option parsed. Afterwards every option is back to
// its default (`cl::ResetAllOptionOccurrences`, as lld-link does before its parse), so the
// thin link's own parse (`init_once`) starts from scratch.
DTLD_API char *dtld_lto_check_options(const char *prog, const char *const *opts, size_t n, int together) {
  register_once();
  std::string out;
  bool failed = false;
  if (together) {
    std::vector<const char *> argv{prog};
    for (size_t i = 0; i < n; ++i)
      argv.push_back(opts[i]);
    std::string text;
    raw_string_ostream os(text);
    if (!cl::ParseCommandLineOptions(static_cast<int>(argv.size()), argv.data(), "", &os))
      out = text, failed = true;
  } else {
    for (size_t i = 0; i < n; ++i) {
      const char *argv[] = {prog, opts[i]};
      std::string text;
      raw_string_ostream os(text);
      if (!cl::ParseCommandLineOptions(2, argv, "", &os))
        out += std::to_string(i) + "\x1f" + text + "\x1e", failed = true;
    }
  }
  cl::ResetAllOptionOccurrences();
  return failed ? strdup(out.c_str()) : nullptr;
}

namespace {
// The index-writing backend with the files left to dtld: each module's shard is written into
// memory exactly as `ThinBackendProc::emitFiles` writes it to `<module>.thinlto.bc` (the same
// summaries gathered, the same writer), and its import list as the `.imports` file lists it.
class MemoryIndexBackend : public lto::ThinBackendProc {
  dtld_lto_index_fn sink;
  dtld_lto_probe_fn probe;
  void *ctx;
  std::unique_ptr<dtld::CacheKeys> keys;

public:
  MemoryIndexBackend(const lto::Config &conf, ModuleSummaryIndex &index,
                     const DenseMap<StringRef, GVSummaryMapTy> &defined, ThreadPoolStrategy threads,
                     dtld_lto_index_fn sink, dtld_lto_probe_fn probe, dtld::sha1_fn sha1, void *ctx)
      : ThinBackendProc(conf, index, defined, /*OnWrite=*/{}, /*ShouldEmitImportsFiles=*/false, threads), sink(sink),
        probe(probe), ctx(ctx) {
    if (probe)
      keys = std::make_unique<dtld::CacheKeys>(conf, index, sha1);
  }

  Error start(unsigned, BitcodeModule bm, const FunctionImporter::ImportMapTy &imports,
              const FunctionImporter::ExportSetTy &exports,
              const std::map<GlobalValue::GUID, GlobalValue::LinkageTypes> &odr,
              MapVector<StringRef, BitcodeModule> &) override {
    StringRef module = bm.getModuleIdentifier();
    BackendThreadPool.async([this, module, &imports, &exports, &odr] {
      // As the in-process backend: a module without a hash is never cached.
      auto hash = CombinedIndex.getModuleHash(module);
      if (probe && !all_of(hash, [](uint32_t v) { return v == 0; })) {
        std::string key = keys->key(module, imports, exports, odr, defined_in(ModuleToDefinedGVSummaries, module));
        if (probe(ctx, module.data(), module.size(), key.data(), key.size()))
          return;
      }
      ModuleToSummariesForIndexTy summaries;
      GVSummaryPtrSet declarations;
      gatherImportedSummariesForModule(module, ModuleToDefinedGVSummaries, imports, summaries, declarations);
      SmallString<0> shard;
      raw_svector_ostream os(shard);
      writeIndexToFile(CombinedIndex, os, &summaries, &declarations);
      std::string list;
      processImportsFiles(module, summaries, [&](const std::string &m) {
        list += m;
        list += '\n';
      });
      sink(ctx, module.data(), module.size(), shard.data(), shard.size(), list.data(), list.size());
    });
    return Error::success();
  }
};

// The in-process backends with a cache, as LLVM's in-process backend runs them (each module
// parsed in a context of its own and handed to `lto::thinBackend`, on the same thread pool,
// the cache asked with the same key, so the cache's entries are the same files), but with the
// keys of cache_key.h: LLVM's own computation of the 999 keys of an OpenSSL relink took as
// long as its serial thin link. Without a cache, LLVM's backend is used as it is.
class KeyedInProcessBackend : public lto::ThinBackendProc {
  AddStreamFn add_stream;
  FileCache cache;
  dtld::CacheKeys keys;

public:
  KeyedInProcessBackend(const lto::Config &conf, ModuleSummaryIndex &index,
                        const DenseMap<StringRef, GVSummaryMapTy> &defined, ThreadPoolStrategy threads,
                        AddStreamFn add_stream, FileCache cache, dtld::sha1_fn sha1)
      : ThinBackendProc(conf, index, defined, /*OnWrite=*/{}, /*ShouldEmitImportsFiles=*/false, threads),
        add_stream(std::move(add_stream)), cache(std::move(cache)), keys(conf, index, sha1) {}

  Error start(unsigned task, BitcodeModule bm, const FunctionImporter::ImportMapTy &imports,
              const FunctionImporter::ExportSetTy &exports,
              const std::map<GlobalValue::GUID, GlobalValue::LinkageTypes> &odr,
              MapVector<StringRef, BitcodeModule> &modules) override {
    const GVSummaryMapTy &defined = defined_in(ModuleToDefinedGVSummaries, bm.getModuleIdentifier());
    BackendThreadPool.async([this, task, bm, &imports, &exports, &odr, &defined, &modules] {
      if (LLVM_ENABLE_THREADS && Conf.TimeTraceEnabled)
        timeTraceProfilerInitialize(Conf.TimeTraceGranularity, "thin backend");
      Error e = run(task, bm, imports, exports, odr, defined, modules);
      if (e) {
        std::lock_guard<std::mutex> g(ErrMu);
        if (Err)
          Err = joinErrors(std::move(*Err), std::move(e));
        else
          Err = std::move(e);
      }
      if (LLVM_ENABLE_THREADS && Conf.TimeTraceEnabled)
        timeTraceProfilerFinishThread();
    });
    return Error::success();
  }

private:
  Error run(unsigned task, BitcodeModule bm, const FunctionImporter::ImportMapTy &imports,
            const FunctionImporter::ExportSetTy &exports,
            const std::map<GlobalValue::GUID, GlobalValue::LinkageTypes> &odr, const GVSummaryMapTy &defined,
            MapVector<StringRef, BitcodeModule> &modules) {
    StringRef module = bm.getModuleIdentifier();
    TimeTraceScope scope("Run ThinLTO backend thread (in-process)", module);
    auto compile = [&](AddStreamFn to) -> Error {
      lto::LTOLLVMContext context(Conf);
      Expected<std::unique_ptr<Module>> m = bm.parseModule(context);
      if (!m)
        return m.takeError();
      return lto::thinBackend(Conf, task, to, **m, CombinedIndex, imports, defined, &modules, Conf.CodeGenOnly);
    };
    // As LLVM's: without a cache, or for a module without a hash, nothing is cached.
    if (!cache.isValid() || !CombinedIndex.modulePaths().count(module) ||
        all_of(CombinedIndex.getModuleHash(module), [](uint32_t v) { return v == 0; }))
      return compile(add_stream);
    std::string key = keys.key(module, imports, exports, odr, defined);
    Expected<AddStreamFn> to = cache(task, key, module);
    if (!to)
      return to.takeError();
    if (*to)
      return compile(*to);
    return Error::success();
  }
};
} // namespace

// One `key=value` setting (the keys are the Rust side's `Knob::library_setting`), as lld's
// `createConfig` sets the field from its option. Returns an error message or "".
static std::string apply_setting(lto::Config &conf, StringRef setting) {
  auto [key, value] = setting.split('=');
  if (key == "sample-profile")
    conf.SampleProfile = value.str();
  else if (key == "no-pgo-warn-mismatch")
    conf.PGOWarnMismatch = false;
  else if (key == "relocation-model-from-module")
    conf.RelocModel = std::nullopt;
  else if (key == "cs-profile-generate")
    conf.RunCSIRInstr = true;
  else if (key == "cs-profile-path")
    conf.CSIRProfile = value.str();
  else if (key == "aa-pipeline") {
    // LLVM's backend stops the process on a pipeline it cannot parse (lld crashes so): parsed
    // here first, so that a typo is an error of the link.
    PassBuilder pb;
    AAManager aa;
    if (Error e = pb.parseAAPipeline(aa, value))
      return "unable to parse AA pipeline description '" + value.str() + "': " + toString(std::move(e));
    conf.AAPipeline = value.str();
  } else if (key == "opt-pipeline") {
    PassBuilder pb;
    ModulePassManager mpm;
    if (Error e = pb.parsePassPipeline(mpm, value))
      return "unable to parse pass pipeline description '" + value.str() + "': " + toString(std::move(e));
    conf.OptPipeline = value.str();
  }
  else if (key == "save-temps") {
    // lld's `-save-temps` (the module paths of the thin link's per-module files are the
    // inputs', as lld asks).
    if (Error e = conf.addSaveTemps(value.str(), /*UseInputModulePath=*/true))
      return toString(std::move(e));
  } else if (key == "stats-file")
    conf.StatsFile = value.str();
  else if (key == "remarks-file")
    conf.RemarksFilename = value.str();
  else if (key == "remarks-passes")
    conf.RemarksPasses = value.str();
  else if (key == "remarks-format")
    conf.RemarksFormat = value.str();
  else if (key == "remarks-with-hotness")
    conf.RemarksWithHotness = true;
  else if (key == "remarks-hotness-threshold") {
    auto t = remarks::parseHotnessThresholdOption(value);
    if (!t)
      return "invalid optimization remarks hotness threshold: " + toString(t.takeError());
    conf.RemarksHotnessThreshold = *t;
  } else if (key == "dwo-dir")
    conf.DwoDir = value.str();
  else if (key == "disable-verify")
    conf.DisableVerify = true;
  else if (key == "keep-symbol-names")
    conf.KeepSymbolNameCopies = true;
  else
    return "unknown setting '" + key.str() + "'";
  return "";
}

DTLD_API dtld_lto *dtld_lto_create(const dtld_lto_config *cfg, dtld_lto_diag_fn diag, void *diag_ctx, char **err) {
  if (cfg->index_only && !cfg->index_sink) {
    *err = dup_message("an index-only thin link needs an index sink");
    return nullptr;
  }
  if (char *e = init_once(cfg)) {
    *err = e;
    return nullptr;
  }
  auto *h = new dtld_lto;
  h->diag = diag;
  h->diag_ctx = diag_ctx;
  h->index_only = cfg->index_only != 0;
  if (cfg->cache_dir)
    h->cache_dir = cfg->cache_dir;

  // llvm-lto2 run's configuration for the options dtld passes it (thinlink.rs).
  lto::Config conf;
  conf.CPU = codegen::getMCPU();
  conf.Options = codegen::InitTargetOptionsFromCodeGenFlags(Triple());
  conf.MAttrs = codegen::getMAttrs();
  if (auto rm = codegen::getExplicitRelocModel())
    conf.RelocModel = *rm;
  conf.CodeModel = codegen::getExplicitCodeModel();
  conf.DebugPassManager = cfg->debug_pass_manager != 0;
  conf.OptLevel = cfg->opt_level;
  switch (cfg->cg_opt_level < 0 ? 2 : cfg->cg_opt_level) {
  case 0: conf.CGOptLevel = CodeGenOptLevel::None; break;
  case 1: conf.CGOptLevel = CodeGenOptLevel::Less; break;
  case 3: conf.CGOptLevel = CodeGenOptLevel::Aggressive; break;
  default: conf.CGOptLevel = CodeGenOptLevel::Default; break;
  }
  if (auto ft = codegen::getExplicitFileType())
    conf.CGFileType = *ft;
  // The symbol names live in dtld's mapped inputs for the whole link (as lld's do), unless a
  // module's symbol table is one LLVM rebuilds: its names then live in the InputFile, which
  // `LTO::add` frees, and dtld asks for copies (`keep-symbol-names`, inproc.rs).
  conf.KeepSymbolNameCopies = false;
  for (size_t i = 0; i < cfg->settingc; ++i) {
    std::string e = apply_setting(conf, cfg->settings[i]);
    if (!e.empty()) {
      *err = dup_message(e);
      delete h;
      return nullptr;
    }
  }
  conf.PTO.LoopVectorization = conf.OptLevel > 1;
  conf.PTO.SLPVectorization = conf.OptLevel > 1;
  conf.DiagHandler = [h](const DiagnosticInfo &di) {
    std::string text;
    raw_string_ostream os(text);
    DiagnosticPrinterRawOStream printer(os);
    di.print(printer);
    int sev = DTLD_DIAG_NOTE;
    switch (di.getSeverity()) {
    case DS_Error: sev = DTLD_DIAG_ERROR; break;
    case DS_Warning: sev = DTLD_DIAG_WARNING; break;
    case DS_Remark: sev = DTLD_DIAG_REMARK; break;
    case DS_Note: sev = DTLD_DIAG_NOTE; break;
    }
    std::lock_guard<std::mutex> g(h->diag_lock);
    if (sev == DTLD_DIAG_ERROR)
      h->had_error = true;
    h->diag(h->diag_ctx, sev, text.data(), text.size());
  };

  lto::ThinBackend backend;
  if (cfg->index_only) {
    dtld_lto_index_fn sink = cfg->index_sink;
    dtld_lto_probe_fn probe = cfg->probe;
    dtld::sha1_fn sha1 = cfg->sha1;
    void *ctx = cfg->index_ctx;
    ThreadPoolStrategy threads = heavyweight_hardware_concurrency(cfg->threads);
    backend = lto::ThinBackend(
        [=](const lto::Config &c, ModuleSummaryIndex &index, const DenseMap<StringRef, GVSummaryMapTy> &defined,
            AddStreamFn, FileCache) {
          return std::make_unique<MemoryIndexBackend>(c, index, defined, threads, sink, probe, sha1, ctx);
        },
        threads);
  } else if (cfg->cache_dir) {
    ThreadPoolStrategy threads = heavyweight_hardware_concurrency(cfg->threads);
    dtld::sha1_fn sha1 = cfg->sha1;
    backend = lto::ThinBackend(
        [=](const lto::Config &c, ModuleSummaryIndex &index, const DenseMap<StringRef, GVSummaryMapTy> &defined,
            AddStreamFn add_stream, FileCache cache) -> std::unique_ptr<lto::ThinBackendProc> {
          return std::make_unique<KeyedInProcessBackend>(c, index, defined, threads, std::move(add_stream),
                                                         std::move(cache), sha1);
        },
        threads);
  } else
    backend = lto::createInProcessThinBackend(heavyweight_hardware_concurrency(cfg->threads));
  h->lto = std::make_unique<lto::LTO>(std::move(conf), std::move(backend));
  return h;
}

// Parses one module (thread-safe: nothing shared). `name` is its module ID (lld's name).
DTLD_API dtld_lto_input *dtld_lto_parse(const char *data, size_t len, const char *name, size_t name_len, char **err) {
  MemoryBufferRef ref(StringRef(data, len), StringRef(name, name_len));
  auto f = lto::InputFile::create(ref);
  if (!f) {
    *err = error_message(f.takeError());
    return nullptr;
  }
  auto *in = new dtld_lto_input;
  in->file = std::move(*f);
  return in;
}

// The number of symbols of a parsed input (`InputFile::symbols()`).
DTLD_API size_t dtld_lto_symbol_count(const dtld_lto_input *in) { return in->file->symbols().size(); }

// Symbol `i`'s name, to check that dtld's symbol table lists the same symbols.
DTLD_API const char *dtld_lto_symbol_name(const dtld_lto_input *in, size_t i, size_t *len) {
  StringRef n = in->file->symbols()[i].getName();
  *len = n.size();
  return n.data();
}

DTLD_API void dtld_lto_input_free(dtld_lto_input *in) { delete in; }

// Adds a parsed input (consumed) with one resolution byte per symbol. Returns 0 or sets `err`.
DTLD_API int dtld_lto_add(dtld_lto *h, dtld_lto_input *in, const unsigned char *res, size_t nres, char **err) {
  std::unique_ptr<dtld_lto_input> owned(in);
  auto syms = owned->file->symbols();
  if (syms.size() != nres) {
    *err = dup_message("symbol count differs: LLVM lists " + std::to_string(syms.size()) + ", dtld " + std::to_string(nres));
    return 1;
  }
  std::vector<lto::SymbolResolution> rs(nres);
  for (size_t i = 0; i < nres; ++i) {
    rs[i].Prevailing = (res[i] & DTLD_RES_PREVAILING) != 0;
    rs[i].FinalDefinitionInLinkageUnit = (res[i] & DTLD_RES_FINAL_IN_LINKAGE_UNIT) != 0;
    rs[i].VisibleToRegularObj = (res[i] & DTLD_RES_VISIBLE_TO_REGULAR_OBJ) != 0;
    rs[i].LinkerRedefined = (res[i] & DTLD_RES_LINKER_REDEFINED) != 0;
  }
  if (Error e = h->lto->add(std::move(owned->file), rs)) {
    *err = error_message(std::move(e));
    return 1;
  }
  return 0;
}

// Runs the thin link (and, unless index-only, the backends). Each native object is handed to
// `object` after the run, in task order (task 0: the regular-LTO partition), as bytes that stay
// valid until `dtld_lto_destroy` (a cache hit is LLVM's map of the cache file, as in lld).
// Returns 0, or 1 with `err` set (or with an error diagnostic already reported).
DTLD_API int dtld_lto_run(dtld_lto *h, dtld_lto_object_fn object, void *ctx, char **err) {
  unsigned tasks = h->lto->getMaxTasks();
  std::vector<SmallString<0>> &streamed = h->streamed;
  std::vector<std::unique_ptr<MemoryBuffer>> &cached = h->cached;
  streamed.assign(tasks, SmallString<0>());
  cached.clear();
  cached.resize(tasks);
  AddStreamFn add_stream = [&](unsigned task, const Twine &) -> Expected<std::unique_ptr<CachedFileStream>> {
    return std::make_unique<CachedFileStream>(std::make_unique<raw_svector_ostream>(streamed[task]));
  };
  FileCache cache;
  if (!h->cache_dir.empty()) {
    auto c = localCache("ThinLTO", "Thin", h->cache_dir,
                        [&](size_t task, const Twine &, std::unique_ptr<MemoryBuffer> mb) { cached[task] = std::move(mb); });
    if (!c) {
      *err = error_message(c.takeError());
      return 1;
    }
    cache = std::move(*c);
  }
  if (Error e = h->lto->run(add_stream, cache)) {
    *err = error_message(std::move(e));
    return 1;
  }
  if (h->had_error)
    return 1;
  // `-mllvm -time-passes`: LLVM's timing reports, which lld prints once its LTO has run (an
  // LLVM tool prints them when it shuts LLVM down, which dtld never does).
  if (TimePassesIsEnabled)
    TimerGroup::printAll(errs());
  for (unsigned t = 0; t < tasks; ++t) {
    if (cached[t]) {
      StringRef path = cached[t]->getBufferIdentifier();
      object(ctx, t, cached[t]->getBufferStart(), cached[t]->getBufferSize(), path.data(), path.size());
    } else if (!streamed[t].empty()) {
      object(ctx, t, streamed[t].data(), streamed[t].size(), nullptr, 0);
    }
  }
  return 0;
}

// Frees the LTO state (the combined index, the modules): dtld calls it on a thread of its own
// while the link goes on, or not at all before it exits (as lld does not).
DTLD_API void dtld_lto_destroy(dtld_lto *h) { delete h; }

// Frees the thin link's state (the combined index, the modules' symbol tables, LLVM's thread
// pool) but keeps the objects of the last run, which the link still reads: dtld calls it on a
// thread of its own while it links those objects, so that the memory is back before the output
// is written (lld frees its LTO state before its final link too).
DTLD_API void dtld_lto_release(dtld_lto *h) { h->lto.reset(); }

// The index lld writes for a bitcode file the link did not need: an empty summary index that
// tells a distributed backend to skip the module. Returns a malloc'ed buffer of `*len` bytes.
DTLD_API char *dtld_lto_skip_index(size_t *len) {
  ModuleSummaryIndex index(/*HaveGVs=*/false);
  index.setSkipModuleByDistributedBackend();
  SmallString<0> buf;
  raw_svector_ostream os(buf);
  writeIndexToFile(index, os);
  char *p = static_cast<char *>(std::malloc(buf.size() ? buf.size() : 1));
  if (p)
    std::memcpy(p, buf.data(), buf.size());
  *len = buf.size();
  return p;
}

} // extern "C"
