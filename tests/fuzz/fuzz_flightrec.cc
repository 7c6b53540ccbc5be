// Flight Recorder dumps: the data-only pickle reader and the dump parser
// (pickle and JSON), then the cross-rank analysis of what parsed.
//
// Input: byte 0 picks the mode; the rest is the file.
//   bit 0 set: ParsePickle alone, with small limits (values, MARK depth) so
//     the fuzzer reaches them; the tree is walked with bounded depth and
//     visits, every id in range, Render bounded.
//   bit 0 clear: SniffFlightRecorderDump and ParseFlightRecorderDump; a
//     parsed dump is analyzed with a copy of itself as another rank.
// Oracles beyond no crash / leak / UB: errors are NotFound or InvalidArgument
// and name the file; a code-bearing opcode is never accepted; parsed strings
// are valid UTF-8; findings name member ranks of their group.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "flightrec/dump.h"
#include "flightrec/pickle.h"

using namespace faultline::flightrec;

namespace {

[[noreturn]] void Die(const char* what, std::string_view detail = {}) {
  std::fprintf(stderr, "FUZZ CHECK FAILED: %s %.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}
#define CHECK(cond, detail)          \
  do {                               \
    if (!(cond)) Die(#cond, detail); \
  } while (0)

bool ValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >= 0xC2 && c <= 0xDF) ? 2 : (c >= 0xE0 && c <= 0xEF) ? 3
             : (c >= 0xF0 && c <= 0xF4) ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

// Each code-bearing opcode right after PROTO is refused (checked once).
void CheckRefusals() {
  static const uint8_t kCode[] = {'c', 0x93, 'R', 'b', 'i', 'o', 0x81, 0x92, 0x82, 0x83, 0x84,
                                  'P', 'Q'};
  for (uint8_t op : kCode) {
    std::string p = "\x80\x02";
    p += static_cast<char>(op);
    p += ".";
    auto t = ParsePickle(p);
    CHECK(!t.ok(), PickleOpcodeName(op));
    CHECK(t.status().message().find("refused") != std::string_view::npos, PickleOpcodeName(op));
  }
}

void Walk(const DataTree& t, DataTree::Id id, int depth, size_t& visits) {
  CHECK(id < t.size(), "id out of range");
  if (++visits > 100000 || depth > 64) return;
  if (t.kind(id) == ValueKind::kString) CHECK(ValidUtf8(t.Str(id)), "str not UTF-8");
  if (!t.IsContainer(id)) return;
  if (t.kind(id) == ValueKind::kDict) CHECK(t.Items(id).size() % 2 == 0, "odd dict");
  for (DataTree::Id c : t.Items(id)) Walk(t, c, depth + 1, visits);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static bool once = (CheckRefusals(), true);
  (void)once;
  if (size == 0) return 0;
  uint8_t mode = data[0];
  std::string_view file(reinterpret_cast<const char*>(data + 1), size - 1);

  if (mode & 1) {
    PickleLimits limits;
    limits.max_values = 4096;
    limits.max_mark_depth = 32;
    auto t = ParsePickle(file, limits);
    if (!t.ok()) {
      CHECK(t.status().code() == absl::StatusCode::kInvalidArgument, "error code");
      CHECK(t.status().message().substr(0, 8) == "pickle: ", std::string(t.status().message()));
      return 0;
    }
    CHECK(t->size() <= limits.max_values, "value limit");
    size_t visits = 0;
    Walk(*t, t->root(), 0, visits);
    std::string r = t->Render(t->root(), 6, 300);
    CHECK(r.size() <= 300 + 3, "render bound");
    return 0;
  }

  DumpSniff sniff = SniffFlightRecorderDump(file.substr(0, kSniffBytes));
  (void)sniff;
  auto d = ParseFlightRecorderDump(file, "rank_dump_7");
  if (!d.ok()) {
    absl::StatusCode c = d.status().code();
    CHECK(c == absl::StatusCode::kInvalidArgument || c == absl::StatusCode::kNotFound,
          std::string(d.status().message()));
    CHECK(d.status().message().substr(0, 11) == "rank_dump_7", std::string(d.status().message()));
    return 0;
  }
  CHECK(d->version_major == 2, d->version);
  for (const FrEntry& e : d->entries) {
    CHECK(ValidUtf8(e.profiling_name) && ValidUtf8(e.pg_name) && ValidUtf8(e.state),
          "entry text not UTF-8");
  }
  for (const FrGroup& g : d->groups) {
    for (size_t i = 1; i < g.ranks.size(); ++i) CHECK(g.ranks[i - 1] < g.ranks[i], "ranks order");
  }
  std::vector<FrDump> job{*d, *d};
  job[1].rank = d->rank < INT64_MAX ? d->rank + 1 : 0;
  job[1].source = "copy";
  FrAnalysis a = AnalyzeFlightRecorder(job);
  for (const FrFinding& f : a.findings) {
    bool member = false;
    for (const FrGroupReport& g : a.groups) {
      if (g.name != f.group) continue;
      for (int64_t r : g.members) member |= r == f.rank;
    }
    CHECK(member, f.detail);
    CHECK(ValidUtf8(f.detail), f.detail);
  }
  for (const FrGroupReport& g : a.groups) {
    CHECK(g.mismatches.size() <= FrGroupReport::kMaxMismatches, g.name);
    if (g.wavefront) CHECK(!g.missing.empty(), g.name);
  }
  return 0;
}
