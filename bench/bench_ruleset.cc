// Ruleset load time against compile time. A compiled .flrules loads with the
// FlatBuffers Verifier, hs_deserialize_database and one RE2 per pattern and
// extract; compiling from the rule source adds JSON parsing, validation, the
// self-tests of every example line and the Hyperscan compile. Target: a
// 100-rule ruleset loads in <= 5 ms (the `ms_per_100_rules` counter scales
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

// Load from a compiled file on disk (read + verify + deserialize + RE2).
void BM_LoadCompiledFile(benchmark::State& state) {
  const std::string path = "/tmp/fl_bench_ruleset.flrules";
  {
    std::ofstream f(path, std::ios::binary);
    f << Compiled();
  }
  std::shared_ptr<const Ruleset> rs;
  Stopwatch sw;
  for (auto _ : state) {
    auto r = Ruleset::LoadFile(path);
    if (!r.ok()) state.SkipWithError(std::string(r.status().message()).c_str());
    rs = *r;
    benchmark::DoNotOptimize(rs.get());
  }
  if (rs->recompiled()) state.SetLabel("database was recompiled (built for another CPU)");
  state.counters["bytes"] = static_cast<double>(Compiled().size());
  SetCounters(state, *rs, sw);
}
BENCHMARK(BM_LoadCompiledFile)->Unit(benchmark::kMillisecond);

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
  auto rs = *Ruleset::LoadBuffer(Compiled(), "bench");
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
  auto rs = *Ruleset::LoadBuffer(Compiled(), "bench");
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
  auto rs = *Ruleset::LoadBuffer(Compiled(), "bench");
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
