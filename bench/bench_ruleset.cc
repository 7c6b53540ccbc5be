// Ruleset load time against compile time. A compiled .flrules that this
// installation signed loads with the FlatBuffers Verifier, the checksums, an
// HMAC-SHA-256 of the file and hs_deserialize_database (RE2 on first use); the
// embedded default skips the MAC; any other file recompiles its Hyperscan
// database and builds every RE2 at load. Compiling from the rule source adds
// JSON parsing, validation and the self-tests of every example line. Target:
// a 100-rule ruleset loads in <= 5 ms (the `ms_per_100_rules` counter scales
// the measured load to 100 rules).
//
//   bench_ruleset                       # the build's default ruleset
//   FL_BENCH_RULES_DIR=dir bench_ruleset  # another rule source directory
#include <hs/hs.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "benchmark/benchmark.h"
#include "re2/re2.h"
#include "ruleset/compiler.h"
#include "ruleset/ruleset.h"
#include "ruleset/ruleset_key.h"

namespace faultline {
namespace {

std::string RulesDir() {
  const char* d = std::getenv("FL_BENCH_RULES_DIR");
  return d ? d : FL_DEFAULT_RULES_DIR;
}

// The compiled ruleset: the build's default.flrules, or compiled once from
// FL_BENCH_RULES_DIR.
const std::string& Compiled() {
  static const std::string bytes = [] {
    if (std::getenv("FL_BENCH_RULES_DIR") == nullptr) {
      std::ifstream f(FL_DEFAULT_RULESET_FILE, std::ios::binary);
      std::stringstream ss;
      ss << f.rdbuf();
      if (!ss.str().empty()) return ss.str();
    }
    auto cr = CompileRuleSource(RulesDir());
    if (!cr.ok()) {
      std::fprintf(stderr, "bench_ruleset: %s\n", std::string(cr.status().message()).c_str());
      std::abort();
    }
    return cr->buffer;
  }();
  return bytes;
}

// Wall time of the timed loop, for the per-100-rules figure.
struct Stopwatch {
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  double Seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
};

void SetCounters(benchmark::State& state, const Ruleset& rs, const Stopwatch& sw) {
  state.counters["rules"] = static_cast<double>(rs.rule_count());
  state.counters["signals"] = static_cast<double>(rs.signal_count());
  // Mean wall time per iteration scaled to 100 rules, in milliseconds.
  state.counters["ms_per_100_rules"] = sw.Seconds() * 1e3 / static_cast<double>(state.iterations()) *
                                       100.0 / static_cast<double>(rs.rule_count());
}

// The key that signs the benchmark's file: a scratch one in /tmp unless
// FAULTLINE_RULESET_KEY_FILE names one (never the user's own).
const RulesetKey& BenchKey() {
  static const RulesetKey key = [] {
    if (std::getenv(kRulesetKeyEnv) == nullptr) {
      setenv(kRulesetKeyEnv, "/tmp/fl_bench_ruleset_key/ruleset.key", 1);
    }
    auto k = ReadOrCreateRulesetKey();
    if (!k.ok()) {
      std::fprintf(stderr, "bench_ruleset: %s\n", std::string(k.status().message()).c_str());
      std::abort();
    }
    return *k;
  }();
  return key;
}

void LoadFileLoop(benchmark::State& state, const std::string& bytes, const char* path) {
  {
    std::ofstream f(path, std::ios::binary);
    f << bytes;
  }
  std::shared_ptr<const Ruleset> rs;
  Stopwatch sw;
  for (auto _ : state) {
    auto r = Ruleset::LoadFile(path);
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
    rs = *r;
    benchmark::DoNotOptimize(rs.get());
  }
  state.SetLabel(rs->load_note());
  state.counters["bytes"] = static_cast<double>(bytes.size());
  SetCounters(state, *rs, sw);
}

// A file `faultline compile` wrote here: read + verify + checksums + MAC +
// deserialize (RE2 on first use).
void BM_LoadSignedFile(benchmark::State& state) {
  std::string bytes = Compiled();
  if (auto st = SignRuleset(&bytes, BenchKey()); !st.ok()) {
    state.SkipWithError(std::string(st.message()).c_str());
    return;
  }
  LoadFileLoop(state, bytes, "/tmp/fl_bench_ruleset_signed.flrules");
}
BENCHMARK(BM_LoadSignedFile)->Unit(benchmark::kMillisecond);

// Any other file (not signed here, or by another installation): the
// Hyperscan database is recompiled from the stored patterns and every RE2
// built at load.
void BM_LoadForeignFile(benchmark::State& state) {
  BenchKey();  // the same key setting as above, so only the MAC differs
  LoadFileLoop(state, Compiled(), "/tmp/fl_bench_ruleset_foreign.flrules");
}
BENCHMARK(BM_LoadForeignFile)->Unit(benchmark::kMillisecond)->Iterations(5);

// The MAC alone: HMAC-SHA-256 over the whole file.
void BM_LoadPart_Mac(benchmark::State& state) {
  std::string bytes = Compiled();
  for (auto _ : state) {
    auto mac = RulesetMac(BenchKey(), bytes, 0);
    benchmark::DoNotOptimize(mac);
  }
  state.counters["bytes"] = static_cast<double>(bytes.size());
}
BENCHMARK(BM_LoadPart_Mac)->Unit(benchmark::kMillisecond);

// The embedded default ruleset (no file I/O).
void BM_LoadDefault(benchmark::State& state) {
  std::shared_ptr<const Ruleset> rs;
  Stopwatch sw;
  for (auto _ : state) {
    auto r = Ruleset::LoadDefault();
    if (!r.ok()) state.SkipWithError(std::string(r.status().message()).c_str());
    rs = *r;
    benchmark::DoNotOptimize(rs.get());
  }
  SetCounters(state, *rs, sw);
}
BENCHMARK(BM_LoadDefault)->Unit(benchmark::kMillisecond);

// The parts of a load: Hyperscan deserialization and scratch.
void BM_LoadPart_HsDeserialize(benchmark::State& state) {
  auto rs = *Ruleset::LoadBuiltIn(Compiled(), "bench");
  const auto* blob = rs->fb()->hs_database();
  for (auto _ : state) {
    hs_database_t* db = nullptr;
    if (hs_deserialize_database(reinterpret_cast<const char*>(blob->data()), blob->size(), &db) !=
        HS_SUCCESS) {
      state.SkipWithError("hs_deserialize_database failed");
      break;
    }
    hs_scratch_t* scratch = nullptr;
    hs_alloc_scratch(db, &scratch);
    hs_free_scratch(scratch);
    hs_free_database(db);
  }
  state.counters["hs_bytes"] = static_cast<double>(blob->size());
}
BENCHMARK(BM_LoadPart_HsDeserialize)->Unit(benchmark::kMillisecond);

// ... and building the RE2 objects of every pattern and extract.
void BM_LoadPart_Re2(benchmark::State& state) {
  auto rs = *Ruleset::LoadBuiltIn(Compiled(), "bench");
  for (auto _ : state) {
    for (uint32_t i = 0; i < rs->signal_count(); ++i) {
      const fb::Signal* sig = rs->signal(i).signal;
      RE2::Options ro;
      ro.set_log_errors(false);
      ro.set_case_sensitive(!sig->caseless());
      RE2 confirm(sig->pattern()->string_view(), ro);
      benchmark::DoNotOptimize(confirm.ok());
      for (std::string_view src : ExtractsOf(*sig)) {
        RE2 extract(src, ro);
        benchmark::DoNotOptimize(extract.ok());
      }
    }
  }
}
BENCHMARK(BM_LoadPart_Re2)->Unit(benchmark::kMillisecond);

// Compile from the rule source directory (what `--rules DIR` does).
void BM_CompileFromSource(benchmark::State& state) {
  std::shared_ptr<const Ruleset> rs;
  Stopwatch sw;
  for (auto _ : state) {
    auto r = Ruleset::LoadFile(RulesDir());
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      break;
    }
    rs = *r;
  }
  if (rs) SetCounters(state, *rs, sw);
}
BENCHMARK(BM_CompileFromSource)->Unit(benchmark::kMillisecond)->Iterations(3);

// Just the Hyperscan compile of all patterns (the bulk of a source compile).
void BM_CompilePart_Hyperscan(benchmark::State& state) {
  auto rs = *Ruleset::LoadBuiltIn(Compiled(), "bench");
  for (auto _ : state) {
    auto db = CompileDatabase(*rs->fb());
    if (!db.ok()) {
      state.SkipWithError(std::string(db.status().message()).c_str());
      break;
    }
  }
}
BENCHMARK(BM_CompilePart_Hyperscan)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace faultline

BENCHMARK_MAIN();
