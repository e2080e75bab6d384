// The backend cache key of a ThinLTO module for dtld's DTLTO cache: the key LLVM's
// `computeLTOCacheKey` defines (the same bytes hashed in the same order, so the same SHA-1),
// computed in a fraction of its time.
//
// Why it exists: issue 15's profile of an OpenSSL relink after one change put 38% of all
// samples in `computeLTOCacheKey` for the 999 modules, on both cores, after the serial thin
// link: LLVM sorts each module's import list with a comparison that looks both modules' hashes
// up by name (two `StringMap` lookups, XXH3 of the name and a `memcmp`, per comparison:
// 11.8 million for OpenSSL), counts the imports per module in another name-keyed map, finds
// each import's summary through the index's `std::map`, and feeds SHA-1 four bytes at a time.
// Here the module hashes are found once per link by the name's address (the import lists'
// names are the index's own strings), the key's bytes are gathered in one buffer and hashed
// once (by dtld's SHA-1 when it has one: SHA-NI), and nothing else changes: the imports are
// sorted by the same comparison from the same starting order, so even ties (two modules with
// the same hash) come out in LLVM's order.
//
// The first key of a link is also computed by LLVM; if the two differ (an LLVM whose key
// hashes something this file does not know, such as a build revision), every key of the link
// is LLVM's. `DTLD_CHECK_CACHE_KEYS=1` compares every key and reports a difference as an
// error (the tests run a link so).

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/ModuleSummaryIndex.h"
#include "llvm/LTO/Config.h"
#include "llvm/LTO/LTO.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA1.h"
#include "llvm/Transforms/IPO/FunctionImport.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace dtld {

using namespace llvm;

// SHA-1 of a buffer into 20 bytes (dtld's own, or null for LLVM's).
typedef void (*sha1_fn)(const unsigned char *data, size_t len, unsigned char out[20]);

class CacheKeys {
public:
  CacheKeys(const lto::Config &conf, const ModuleSummaryIndex &index, sha1_fn sha1)
      : conf(conf), index(index), sha1(sha1) {
    // The CFI function GUIDs, as LLVM's in-process backend collects them for its keys.
    cfi_defs.insert(index.cfiFunctionDefs().guid_begin(), index.cfiFunctionDefs().guid_end());
    cfi_decls.insert(index.cfiFunctionDecls().guid_begin(), index.cfiFunctionDecls().guid_end());
    for (const auto &m : index.modulePaths())
      hashes[m.getKey().data()] = &m.getValue();
    const char *check = std::getenv("DTLD_CHECK_CACHE_KEYS");
    check_all = check && *check && std::string(check) != "0";
    // The configuration's part of every key.
    add_bytes(prefix, LLVM_VERSION_STRING, sizeof(LLVM_VERSION_STRING) - 1);
    add_str(prefix, conf.CPU);
    add_u32(prefix, conf.Options.MCOptions.X86RelaxRelocations);
    add_u32(prefix, conf.Options.FunctionSections);
    add_u32(prefix, conf.Options.DataSections);
    add_u32(prefix, (unsigned)conf.Options.DebuggerTuning);
    for (const auto &a : conf.MAttrs)
      add_str(prefix, a);
    add_u32(prefix, conf.RelocModel ? (unsigned)*conf.RelocModel : (unsigned)-1);
    add_u32(prefix, conf.CodeModel ? (unsigned)*conf.CodeModel : (unsigned)-1);
    for (const auto &s : conf.MllvmArgs)
      add_str(prefix, s);
    add_u32(prefix, static_cast<int>(conf.CGOptLevel));
    add_u32(prefix, static_cast<int>(conf.CGFileType));
    add_u32(prefix, conf.OptLevel);
    add_u32(prefix, conf.Freestanding);
    add_str(prefix, conf.OptPipeline);
    add_str(prefix, conf.AAPipeline);
    add_str(prefix, conf.OverrideTriple);
    add_str(prefix, conf.DefaultTriple);
    add_str(prefix, conf.DwoDir);
    prefix.push_back(static_cast<char>(conf.Dtlto));
    // A sample profile's contents (and its remapping file's) end every key: read once per link
    // (LLVM reads them for every key).
    if (!conf.SampleProfile.empty()) {
      if (auto f = MemoryBuffer::getFile(conf.SampleProfile)) {
        profile.assign((*f)->getBufferStart(), (*f)->getBufferSize());
        if (!conf.ProfileRemapping.empty())
          if (auto r = MemoryBuffer::getFile(conf.ProfileRemapping))
            profile.append((*r)->getBufferStart(), (*r)->getBufferSize());
      }
    }
  }

  // The key of `module`'s backend, as `computeLTOCacheKey` with these arguments returns it.
  // Thread-safe. A checked key that differs from LLVM's is reported to the configuration's
  // diagnostic handler as an error.
  std::string key(StringRef module, const FunctionImporter::ImportMapTy &imports,
                  const FunctionImporter::ExportSetTy &exports,
                  const std::map<GlobalValue::GUID, GlobalValue::LinkageTypes> &odr, const GVSummaryMapTy &defined) {
    // 0: not yet checked, 1: being checked by one thread, 2: ours, 3: LLVM's.
    int s = state.load(std::memory_order_acquire);
    if (s == 0) {
      int expected = 0;
      if (state.compare_exchange_strong(expected, 1)) {
        std::string theirs = llvm_key(module, imports, exports, odr, defined);
        std::string ours = own_key(module, imports, exports, odr, defined);
        state.store(ours == theirs ? 2 : 3, std::memory_order_release);
        if (check_all)
          compare(module, ours, theirs);
        return theirs;
      }
      s = expected;
    }
    if (s != 2 || check_all) {
      std::string theirs = llvm_key(module, imports, exports, odr, defined);
      if (s == 2 && check_all) {
        std::string ours = own_key(module, imports, exports, odr, defined);
        compare(module, ours, theirs);
      }
      return theirs;
    }
    return own_key(module, imports, exports, odr, defined);
  }

  // Whether the keys are this file's (the first one agreed with LLVM's).
  bool own() const { return state.load(std::memory_order_acquire) == 2; }

private:
  const lto::Config &conf;
  const ModuleSummaryIndex &index;
  DenseSet<GlobalValue::GUID> cfi_defs, cfi_decls;
  sha1_fn sha1;
  bool check_all = false;
  std::atomic<int> state{0};
  // Each module's hash by the address of its name in the index's module table.
  DenseMap<const char *, const ModuleHash *> hashes;
  std::string prefix;
  // The sample profile's bytes (and the remapping file's), or nothing.
  std::string profile;

  void compare(StringRef module, const std::string &ours, const std::string &theirs) const {
    if (ours != theirs)
      conf.DiagHandler(DiagnosticInfoGeneric(
          "backend cache key of " + module.str() + " differs from LLVM's: " + ours + " != " + theirs, DS_Error));
  }

  static void add_bytes(std::string &b, const void *p, size_t n) { b.append(static_cast<const char *>(p), n); }
  static void add_str(std::string &b, StringRef s) {
    b.append(s.data(), s.size());
    b.push_back(0);
  }
  static void add_u32(std::string &b, unsigned v) {
    uint8_t d[4];
    support::endian::write32le(d, v);
    add_bytes(b, d, 4);
  }
  static void add_u64(std::string &b, uint64_t v) {
    uint8_t d[8];
    support::endian::write64le(d, v);
    add_bytes(b, d, 8);
  }

  const ModuleHash &hash_of(StringRef module) const {
    auto it = hashes.find(module.data());
    if (it != hashes.end() && it->second)
      return *it->second;
    return index.getModule(module)->second;
  }

  std::string llvm_key(StringRef module, const FunctionImporter::ImportMapTy &imports,
                       const FunctionImporter::ExportSetTy &exports,
                       const std::map<GlobalValue::GUID, GlobalValue::LinkageTypes> &odr,
                       const GVSummaryMapTy &defined) const {
    return computeLTOCacheKey(conf, index, module, imports, exports, odr, defined, cfi_defs, cfi_decls);
  }

  struct Import {
    const ModuleHash *hash;
    GlobalValue::GUID guid;
    const char *from;
    size_t from_len;
    uint8_t kind;
  };

  std::string own_key(StringRef module, const FunctionImporter::ImportMapTy &imports,
                      const FunctionImporter::ExportSetTy &exports,
                      const std::map<GlobalValue::GUID, GlobalValue::LinkageTypes> &odr,
                      const GVSummaryMapTy &defined) const {
    std::string b;
    b.reserve(prefix.size() + 4096);
    b = prefix;
    const ModuleHash &own_hash = index.getModuleHash(module);
    add_bytes(b, own_hash.data(), sizeof(ModuleHash));

    std::vector<uint64_t> export_guids;
    export_guids.reserve(exports.size());
    for (const auto &vi : exports)
      export_guids.push_back(vi.getGUID());
    std::sort(export_guids.begin(), export_guids.end());
    for (uint64_t g : export_guids)
      add_bytes(b, &g, sizeof(g));

    // The imports in the order of the set LLVM copies, then sorted by (module hash, GUID) with
    // the same algorithm.
    std::vector<Import> list;
    for (const auto &[from, guid, kind] : imports)
      list.push_back({&hash_of(from), guid, from.data(), from.size(), static_cast<uint8_t>(kind)});
    std::sort(list.begin(), list.end(), [](const Import &l, const Import &r) {
      return std::make_pair(*l.hash, l.guid) < std::make_pair(*r.hash, r.guid);
    });
    DenseMap<const char *, uint64_t> per_module;
    for (const Import &i : list)
      ++per_module[i.from];
    const char *last = nullptr;
    size_t last_len = 0;
    bool any = false;
    for (const Import &i : list) {
      if (!any || StringRef(last, last_len) != StringRef(i.from, i.from_len)) {
        any = true;
        last = i.from;
        last_len = i.from_len;
        add_bytes(b, i.hash->data(), sizeof(ModuleHash));
        add_u64(b, per_module[i.from]);
      }
      add_u64(b, i.guid);
      b.push_back(static_cast<char>(i.kind));
    }

    for (const auto &e : odr) {
      add_bytes(b, &e.first, sizeof(GlobalValue::GUID));
      add_bytes(b, &e.second, sizeof(GlobalValue::LinkageTypes));
    }

    std::set<GlobalValue::GUID> cfi_def_used, cfi_decl_used, type_ids;
    bool cfi = !cfi_defs.empty() || !cfi_decls.empty();
    auto note_cfi = [&](GlobalValue::GUID g) {
      if (!cfi)
        return;
      if (cfi_defs.contains(g))
        cfi_def_used.insert(g);
      if (cfi_decls.contains(g))
        cfi_decl_used.insert(g);
    };
    bool propagated = index.withDSOLocalPropagation();
    auto add_used = [&](GlobalValueSummary *gs) {
      if (!gs)
        return;
      add_u32(b, gs->getVisibility());
      add_u32(b, gs->isLive());
      add_u32(b, gs->canAutoHide());
      for (const ValueInfo &vi : gs->refs()) {
        add_u32(b, vi.isDSOLocal(propagated));
        note_cfi(vi.getGUID());
      }
      if (auto *var = dyn_cast<GlobalVarSummary>(gs)) {
        add_u32(b, var->maybeReadOnly());
        add_u32(b, var->maybeWriteOnly());
      }
      if (auto *fn = dyn_cast<FunctionSummary>(gs)) {
        for (auto &t : fn->type_tests())
          type_ids.insert(t);
        for (auto &t : fn->type_test_assume_vcalls())
          type_ids.insert(t.GUID);
        for (auto &t : fn->type_checked_load_vcalls())
          type_ids.insert(t.GUID);
        for (auto &t : fn->type_test_assume_const_vcalls())
          type_ids.insert(t.VFunc.GUID);
        for (auto &t : fn->type_checked_load_const_vcalls())
          type_ids.insert(t.VFunc.GUID);
        for (auto &call : fn->calls()) {
          add_u32(b, call.first.isDSOLocal(propagated));
          note_cfi(call.first.getGUID());
        }
      }
    };
    for (const auto &gs : defined) {
      GlobalValue::LinkageTypes linkage = gs.second->linkage();
      add_bytes(b, &linkage, sizeof(linkage));
      note_cfi(gs.first);
      add_used(gs.second);
    }
    for (const Import &i : list) {
      GlobalValueSummary *s = index.findSummaryInModule(i.guid, StringRef(i.from, i.from_len));
      add_used(s);
      if (auto *alias = dyn_cast_or_null<AliasSummary>(s))
        add_used(alias->getBaseObject());
    }

    for (GlobalValue::GUID t : type_ids) {
      auto range = index.typeIds().equal_range(t);
      for (auto it = range.first; it != range.second; ++it) {
        const TypeIdSummary &s = it->second.second;
        add_str(b, it->second.first);
        add_u32(b, s.TTRes.TheKind);
        add_u32(b, s.TTRes.SizeM1BitWidth);
        add_u64(b, s.TTRes.AlignLog2);
        add_u64(b, s.TTRes.SizeM1);
        add_u64(b, s.TTRes.BitMask);
        add_u64(b, s.TTRes.InlineBits);
        add_u64(b, s.WPDRes.size());
        for (auto &wpd : s.WPDRes) {
          add_u32(b, wpd.first);
          add_u32(b, wpd.second.TheKind);
          add_str(b, wpd.second.SingleImplName);
          add_u64(b, wpd.second.ResByArg.size());
          for (auto &arg : wpd.second.ResByArg) {
            add_u64(b, arg.first.size());
            for (uint64_t a : arg.first)
              add_u64(b, a);
            add_u32(b, arg.second.TheKind);
            add_u64(b, arg.second.Info);
            add_u32(b, arg.second.Byte);
            add_u32(b, arg.second.Bit);
          }
        }
      }
    }
    add_u32(b, cfi_def_used.size());
    for (uint64_t g : cfi_def_used)
      add_u64(b, g);
    add_u32(b, cfi_decl_used.size());
    for (uint64_t g : cfi_decl_used)
      add_u64(b, g);

    b += profile;

    unsigned char digest[20];
    if (sha1) {
      sha1(reinterpret_cast<const unsigned char *>(b.data()), b.size(), digest);
    } else {
      auto d = SHA1::hash(ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(b.data()), b.size()));
      std::copy(d.begin(), d.end(), digest);
    }
    return toHex(ArrayRef<uint8_t>(digest, 20));
  }
};

} // namespace dtld
