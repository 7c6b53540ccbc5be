// Scanner throughput on a realistic generated job log (bench/gen_logs.py
// --single: the interleaved output of 64 ranks, NCCL INFO chatter, Python
// logging, Megatron iteration lines, one CUDA OOM and the watchdog timeouts
// at the end), with the build's default ruleset:
//
//   BM_ScanPaths/threads:N   Scanner::ScanPaths over the file, which lives in
//                            memory (tmpfs /dev/shm, page cache warm): the
//                            mapped-file path with N worker threads.
//   BM_FeedStream            the same bytes pushed from an in-memory buffer
//                            through OpenStream/Feed (4 MiB pieces)/Close.
//   BM_HyperscanOnly/N       hs_scan of the same database over the same
//                            buffer, 16 MiB line-aligned chunks, N threads:
//                            the ceiling (no lines, no RE2, no evidence).
//
// Throughput is bytes_per_second (wall clock; every benchmark uses real
// time) and GB_per_cpu_s (bytes over the process's CPU time, all threads). The corpus (FL_BENCH_SCAN_MB, default 256) is generated once into
// FL_BENCH_DIR (default /dev/shm, else /tmp) and reused; FL_BENCH_SCAN_FILE
// scans an existing file instead.
//
//   bench_scan --benchmark_min_time=1 --benchmark_repetitions=3
#include <hs/hs.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "benchmark/benchmark.h"
#include "ruleset/ruleset.h"
#include "scan/scan.h"

namespace faultline {
namespace {

struct Corpus {
  std::string path;
  std::string bytes;
};

const Corpus& GetCorpus() {
  static const Corpus corpus = [] {
    Corpus c;
    if (const char* f = std::getenv("FL_BENCH_SCAN_FILE")) {
      c.path = f;
    } else {
      const char* dir = std::getenv("FL_BENCH_DIR");
      std::string d = dir ? dir : (access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
      const char* mb = std::getenv("FL_BENCH_SCAN_MB");
      std::string size = std::string(mb ? mb : "256") + "M";
      c.path = d + "/fl_bench_scan_" + size + "_seed1.log";
      struct stat st;
      if (::stat(c.path.c_str(), &st) != 0) {
        std::string cmd = "python3 " FL_SOURCE_DIR "/bench/gen_logs.py --single '" + c.path +
                          ".tmp' --size " + size + " --seed 1 --manifest /dev/null && mv '" +
                          c.path + ".tmp' '" + c.path + "'";
        std::fprintf(stderr, "generating: %s\n", cmd.c_str());
        if (std::system(cmd.c_str()) != 0) {
          std::fprintf(stderr, "bench_scan: generating the corpus failed\n");
          std::abort();
        }
      }
    }
    std::ifstream in(c.path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    c.bytes = ss.str();
    if (c.bytes.empty()) {
      std::fprintf(stderr, "bench_scan: %s is empty or unreadable\n", c.path.c_str());
      std::abort();
    }
    std::fprintf(stderr, "corpus: %s, %zu bytes\n", c.path.c_str(), c.bytes.size());
    return c;
  }();
  return corpus;
}

std::shared_ptr<const Ruleset> Rules() {
  static const std::shared_ptr<const Ruleset> rs = [] {
    auto r = Ruleset::LoadDefault();
    if (!r.ok()) std::abort();
    return *r;
  }();
  return rs;
}

// CPU seconds of the whole process (every worker thread): on a shared
// machine wall time also measures the neighbours; GB per CPU-second does not.
double ProcessCpu() {
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

void SetCpu(benchmark::State& state, double cpu0, size_t bytes) {
  double cpu = ProcessCpu() - cpu0;
  state.counters["GB_per_cpu_s"] =
      cpu > 0 ? static_cast<double>(state.iterations()) * static_cast<double>(bytes) / cpu / 1e9 : 0;
}

void Report(benchmark::State& state, const ScanResult& r, size_t bytes) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["matches"] = static_cast<double>(r.matches);
  state.counters["evidence"] = static_cast<double>(r.evidence.size());
  state.counters["lines"] = static_cast<double>(r.lines);
}

void BM_ScanPaths(benchmark::State& state) {
  const Corpus& c = GetCorpus();
  ScanOptions opts;
  opts.threads = static_cast<unsigned>(state.range(0));
  ScanResult last;
  double cpu0 = ProcessCpu();
  for (auto _ : state) {
    Scanner s(Rules(), opts);
    absl::Status st = s.ScanPaths({c.path});
    if (!st.ok()) state.SkipWithError(std::string(st.message()).c_str());
    last = s.Finish();
  }
  SetCpu(state, cpu0, c.bytes.size());
  Report(state, last, c.bytes.size());
}
BENCHMARK(BM_ScanPaths)->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_FeedStream(benchmark::State& state) {
  const Corpus& c = GetCorpus();
  ScanOptions opts;
  opts.threads = 1;
  constexpr size_t kPiece = 4 << 20;
  ScanResult last;
  double cpu0 = ProcessCpu();
  for (auto _ : state) {
    Scanner s(Rules(), opts);
    uint32_t id = s.OpenStream("bench");
    std::string_view all = c.bytes;
    for (size_t pos = 0; pos < all.size(); pos += kPiece) {
      (void)s.Feed(id, all.substr(pos, kPiece));
    }
    (void)s.CloseStream(id);
    last = s.Finish();
  }
  SetCpu(state, cpu0, c.bytes.size());
  Report(state, last, c.bytes.size());
}
BENCHMARK(BM_FeedStream)->UseRealTime()->Unit(benchmark::kMillisecond);

int CountMatch(unsigned, unsigned long long, unsigned long long, unsigned, void* ctx) {
  ++*static_cast<uint64_t*>(ctx);
  return 0;
}

void BM_HyperscanOnly(benchmark::State& state) {
  const Corpus& c = GetCorpus();
  auto rs = Rules();
  const unsigned nthreads = static_cast<unsigned>(state.range(0));
  std::vector<std::pair<size_t, size_t>> chunks;
  constexpr size_t kChunk = 16 << 20;
  for (size_t pos = 0; pos < c.bytes.size();) {
    size_t end = std::min(c.bytes.size(), pos + kChunk);
    size_t nl = c.bytes.find('\n', end);
    end = nl == std::string::npos ? c.bytes.size() : nl + 1;
    chunks.emplace_back(pos, end - pos);
    pos = end;
  }
  std::vector<HsScratchPtr> scratch;
  for (unsigned t = 0; t < nthreads; ++t) scratch.push_back(*rs->AllocScratch());
  uint64_t matches = 0;
  double cpu0 = ProcessCpu();
  for (auto _ : state) {
    std::atomic<size_t> next{0};
    std::vector<uint64_t> counts(nthreads, 0);
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < nthreads; ++t) {
      ts.emplace_back([&, t] {
        for (size_t i; (i = next++) < chunks.size();) {
          hs_scan(rs->database(), c.bytes.data() + chunks[i].first,
                  static_cast<unsigned>(chunks[i].second), 0, scratch[t].get(), CountMatch,
                  &counts[t]);
        }
      });
    }
    for (auto& th : ts) th.join();
    matches = 0;
    for (uint64_t n : counts) matches += n;
  }
  SetCpu(state, cpu0, c.bytes.size());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * c.bytes.size()));
  state.counters["callbacks"] = static_cast<double>(matches);
}
BENCHMARK(BM_HyperscanOnly)->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace faultline

BENCHMARK_MAIN();
