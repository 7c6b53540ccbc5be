// Forged pattern databases (issue #17): the input picks bytes of a compiled
// ruleset's serialized Hyperscan database and their new values; the harness
// then recomputes both checksums the file holds (Hyperscan's CRC32C, the
// FlatBuffer's FNV-1a hs_checksum), as anyone who can write the file can,
// and loads it with Ruleset::LoadBuffer. Without the installation's key the
// forged bytecode must never run: the load succeeds by recompiling from the
// patterns, and a scan of every signal's example lines finds exactly what
// the intact ruleset finds. A forged signed file fails its MAC the same way.
//
// Input: byte 0 picks the base ruleset (1: the default, as in the issue;
// anything else: rules-small, whose recompile is ~50x cheaper, so most
// mutations run fast); byte 1 bit 0 signs the base with a per-process key
// first; then 5-byte edits (little-endian 32-bit offset into the bytecode,
// modulo its length, and the new byte value).
// Seeds: tests/fuzz/corpus/ruleset_forged (the 20-byte forgeries).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../faults/ruleset_forge.h"
#include "fuzz_util.h"
#include "ruleset/compiler.h"
#include "ruleset/ruleset_key.h"
#include "scan/scan.h"

using namespace faultline;

namespace {

struct Base {
  std::string unsigned_bytes, signed_bytes;
  std::shared_ptr<const Ruleset> intact;
  std::string examples;  // every signal's example lines
  std::vector<std::pair<uint64_t, uint32_t>> hits;  // (line, signal) on `examples`
};

std::vector<std::pair<uint64_t, uint32_t>> Hits(std::shared_ptr<const Ruleset> rs,
                                                std::string_view text) {
  ScanOptions so;
  so.threads = 1;
  Scanner scanner(rs, so);
  uint32_t id = scanner.OpenStream("examples.log");
  if (!scanner.Feed(id, text).ok()) fuzz::Die("feed failed");
  (void)scanner.CloseStream(id);
  ScanResult r = scanner.Finish();
  fuzz::CheckScanResult(*rs, r, text, true);
  std::vector<std::pair<uint64_t, uint32_t>> out;
  for (const Evidence& ev : r.evidence) out.emplace_back(ev.line, ev.signal);
  return out;
}

Base MakeBase(std::string bytes) {
  Base b;
  auto intact = Ruleset::LoadBuiltIn(bytes, "base");
  if (!intact.ok()) fuzz::Die("base ruleset does not load", intact.status().message());
  b.intact = *intact;
  for (uint32_t g = 0; g < b.intact->signal_count(); ++g) {
    const auto* ex = b.intact->signal(g).signal->examples();
    for (flatbuffers::uoffset_t i = 0; ex && i < ex->size(); ++i) {
      b.examples.append(ex->Get(i)->string_view()).push_back('\n');
    }
  }
  b.hits = Hits(b.intact, b.examples);
  auto key = ReadOrCreateRulesetKey();
  if (!key.ok()) fuzz::Die("no key", key.status().message());
  b.signed_bytes = bytes;
  if (!SignRuleset(&b.signed_bytes, *key).ok()) fuzz::Die("cannot sign");
  b.unsigned_bytes = std::move(bytes);
  return b;
}

const Base& Small() {
  static const Base b = [] {
    auto cr = CompileRuleSource(FL_SOURCE_DIR "/tests/fuzz/rules-small");
    if (!cr.ok()) fuzz::Die("rules-small does not compile", cr.status().message());
    return MakeBase(std::move(cr->buffer));
  }();
  return b;
}

const Base& Default() {
  static const Base b = MakeBase(std::string(fuzz::DefaultRules()->buffer()));
  return b;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // The key that signs the bases: this process's own, never the user's.
  setenv(kRulesetKeyEnv, (fuzz::ScratchDir() + "/ruleset.key").c_str(), 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Choices in(data, size);
  const Base& base = in.Byte() == 1 ? Default() : Small();
  const bool sign = in.Byte() & 1;
  std::string bytes = sign ? base.signed_bytes : base.unsigned_bytes;
  std::vector<std::pair<uint32_t, uint8_t>> edits;
  std::string_view rest = in.Rest();
  for (size_t i = 0; i + 5 <= rest.size() && edits.size() < 4096; i += 5) {
    uint32_t off;
    std::memcpy(&off, rest.data() + i, 4);
    edits.emplace_back(off, static_cast<uint8_t>(rest[i + 4]));
  }
  if (!forge::ForgeDatabase(&bytes, edits)) fuzz::Die("base has no database to forge");
  const bool changed = bytes != (sign ? base.signed_bytes : base.unsigned_bytes);

  auto loaded = Ruleset::LoadBuffer(bytes, "forged");
  // The patterns are intact: a forged database is never a reason to fail.
  FL_FUZZ_CHECK(loaded.ok(), loaded.status().message());
  std::shared_ptr<const Ruleset> rs = *loaded;
  if (changed || !sign) {
    FL_FUZZ_CHECK(rs->trust() == RulesetTrust::kUntrusted, rs->load_note());
    FL_FUZZ_CHECK(rs->recompiled(), rs->load_note());
  }
  // What the patterns say, not what the forged bytecode would do.
  FL_FUZZ_CHECK(Hits(rs, base.examples) == base.hits, "evidence differs from the intact ruleset");
  return 0;
}
