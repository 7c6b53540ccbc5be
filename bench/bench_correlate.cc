// Correlation time and memory at scale: a synthetic ScanResult of a 1,024
// rank job (128 hosts x 8) with 1M evidence records -- NCCL init lines and
// their sync points and device map, per-rank progress summaries, the NCCL
// watchdog timeouts every rank but one prints after a GPU falls off the
// bus (several signals and process groups per rank), a few initiating
// lines (the Xid 79, stale Xids from an archive, an ECC line), and host
// clocks skewed by up to 90 s -- through Correlate() on the default ruleset.
//
// Reported per case: wall time per Correlate() call (the ScanResult is copied
// outside the timed region, since Correlate aligns times in place), and the
// counters peak_rss_mb (the process's peak resident set) and
// correlate_extra_mb (the peak during Correlate() above the resident set it
// started with; Linux /proc/self/clear_refs + VmHWM).
//
//   bench_correlate --benchmark_filter='BM_Correlate/1024/1000000'

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>

#include "benchmark/benchmark.h"
#include "correlate/correlate.h"
#include "ruleset/ruleset.h"
#include "util/strings.h"

namespace faultline {
namespace {

constexpr int64_t kS = 1'000'000;
constexpr int64_t kT0 = 1'793'081'600LL * kS;
const char* const kBus[8] = {"18000", "2a000", "3a000", "5d000", "9a000", "ab000", "ba000", "db000"};

const Ruleset& Rules() {
  static const std::shared_ptr<const Ruleset> rs = [] {
    auto r = Ruleset::LoadDefault();
    if (!r.ok()) {
      std::fprintf(stderr, "default ruleset: %s\n", std::string(r.status().message()).c_str());
      std::exit(2);
    }
    return *r;
  }();
  return *rs;
}

uint32_t Signal(const Ruleset& rs, std::string_view rule, std::string_view sig, uint32_t* rule_out) {
  int r = rs.FindRule(rule);
  if (r < 0) {
    std::fprintf(stderr, "no rule %s\n", std::string(rule).c_str());
    std::exit(2);
  }
  *rule_out = static_cast<uint32_t>(r);
  const fb::Rule* ru = rs.rule(static_cast<size_t>(r));
  for (flatbuffers::uoffset_t i = 0; i < ru->signals()->size(); ++i) {
    if (ru->signals()->Get(i)->id()->string_view() == sig) return rs.first_signal(static_cast<size_t>(r)) + i;
  }
  std::fprintf(stderr, "no signal %s/%s\n", std::string(rule).c_str(), std::string(sig).c_str());
  std::exit(2);
}

std::string Host(int64_t h) { return StrCat("node", 1000 + h); }

// The job: `ranks` ranks, about `records` evidence records.
ScanResult MakeScan(int64_t ranks, int64_t records) {
  const Ruleset& rs = Rules();
  std::mt19937_64 rng(20261102);
  ScanResult scan;
  int64_t hosts = (ranks + 7) / 8;
  std::vector<double> skew(static_cast<size_t>(hosts));
  for (double& s : skew) s = static_cast<double>(rng() % 180'000) / 1000.0 - 90.0;
  auto clock = [&](int64_t rank, int64_t t) { return t + static_cast<int64_t>(skew[rank / 8] * 1e6); };
  const int64_t victim = ranks / 3;
  const int64_t t_fault = kT0 + 40 * 60 * kS;

  uint32_t r_init, r_wd, r_prog, r_xid, r_ecc;
  uint32_t s_start = Signal(rs, "nccl-init", "init_commid", &r_init);
  uint32_t s_boot = Signal(rs, "nccl-init", "nccl_bootstrap_iface", &r_init);
  uint32_t s_prog = Signal(rs, "training-progress", "megatron_iteration", &r_prog);
  uint32_t s_wd[4] = {Signal(rs, "nccl-watchdog-timeout", "watchdog_timeout", &r_wd),
                      Signal(rs, "nccl-watchdog-timeout", "timeout_at_work", &r_wd),
                      Signal(rs, "nccl-watchdog-timeout", "taking_process_down", &r_wd),
                      Signal(rs, "nccl-watchdog-timeout", "watchdog_detected_at_work", &r_wd)};
  uint32_t s_xid = Signal(rs, "xid-79-fallen-off-bus", "xid79", &r_xid);
  uint32_t s_ecc = Signal(rs, "xid-ecc-uncorrectable", "cuda-ecc-uncorrectable", &r_ecc);

  int64_t per_rank = std::max<int64_t>(8, records / ranks);
  scan.evidence.reserve(static_cast<size_t>(records + hosts * 4 + 16));
  for (int64_t r = 0; r < ranks; ++r) {
    SourceSummary src;
    src.name = StrCat("/archive/job-1234/", Host(r / 8), "/rank-", r, ".log");
    src.host = Host(r / 8);
    src.rank = r;
    src.first_time_us = clock(r, kT0);
    src.last_time_us = clock(r, t_fault + 31 * 60 * kS);
    src.lines = 40'000;
    src.bytes = 9'000'000;
    scan.sources.push_back(src);
  }
  for (int64_t h = 0; h < hosts; ++h) {
    SourceSummary src;
    src.name = StrCat("/archive/job-1234/", Host(h), "/kern.log");
    src.host = Host(h);
    src.kernel_log = true;
    scan.sources.push_back(src);
  }
  auto add = [&](uint32_t source, uint32_t rule, uint32_t signal, int64_t t, int64_t rank, std::string text,
                 std::vector<std::pair<std::string, std::string>> fields, uint64_t line) {
    Evidence ev;
    ev.source = source;
    ev.line = line;
    ev.offset = line * 230;
    ev.time_us = t;
    ev.time_source = TimeSource::kParsed;
    ev.rank = rank;
    ev.host = scan.sources[source].host;
    ev.rule = rule;
    ev.signal = signal;
    ev.text = std::move(text);
    ev.fields = std::move(fields);
    RuleStats& st = scan.rule_stats[rule];
    ++st.count;
    if (rank >= 0) ++st.ranks[rank];
    if (!ev.host.empty()) ++st.hosts[ev.host];
    if (st.first_time_us == kNoTime || t < st.first_time_us) st.first_time_us = t;
    if (st.last_time_us == kNoTime || t > st.last_time_us) st.last_time_us = t;
    scan.evidence.push_back(std::move(ev));
  };
  const std::string comm = "1a2b3c4d5e6f7081";
  for (int64_t r = 0; r < ranks; ++r) {
    uint32_t src = static_cast<uint32_t>(r);
    std::string h = Host(r / 8);
    int64_t lr = r % 8;
    int64_t pid = 20000 + r;
    int64_t t_init = kT0 + 12 * kS + static_cast<int64_t>(rng() % 50'000);
    uint64_t line = 3;
    add(src, r_init, s_boot, clock(r, t_init - 4 * kS), r,
        StrCat(h, ":", pid, ":", pid, " [", lr, "] NCCL INFO Bootstrap : Using ib0:10.8.", r / 8 / 200, ".",
               10 + (r / 8) % 200, "<0>"),
        {{"iface", "ib0"}, {"addr", StrCat("10.8.", r / 8 / 200, ".", 10 + (r / 8) % 200)}}, line++);
    for (const char* what : {"Init START", "Init COMPLETE"}) {
      add(src, r_init, s_start, clock(r, t_init), r,
          StrCat(h, ":", pid, ":", pid, " [", lr, "] NCCL INFO comm 0x55d0c0a0", r, " rank ", r, " nranks ", ranks,
                 " cudaDev ", lr, " nvmlDev ", lr, " busId ", kBus[lr], " commId 0x", comm, " - ", what),
          {{"rank", StrCat(r)}, {"nranks", StrCat(ranks)}, {"cuda_dev", StrCat(lr)}, {"bus_id", kBus[lr]},
           {"comm_id", comm}},
          line++);
    }
    scan.devices.push_back({h, r, lr, kBus[lr]});
    scan.pids.push_back({h, pid, r});
    scan.sync_points.push_back({"nccl-init:" + comm, h, r, clock(r, t_init)});
    // Progress until the fault: a summary and the last line as evidence.
    RankSummary& rsum = scan.ranks[r];
    rsum.rank = r;
    rsum.host = h;
    rsum.progress_lines = 2400;
    rsum.first_progress_us = clock(r, kT0 + 60 * kS);
    rsum.last_progress_us = clock(r, t_fault - static_cast<int64_t>(rng() % 900'000));
    rsum.last_step = 24000;
    rsum.step_samples = 2400;
    for (int i = 0; i < 512; ++i) {
      double x = 0.98 + static_cast<double>(rng() % 4000) / 100000.0;
      rsum.step_time_reservoir.push_back(x);
      rsum.step_time_sum += x;
      rsum.step_time_sumsq += x * x;
    }
    add(src, r_prog, s_prog, rsum.last_progress_us, r,
        StrCat("[rank", r, "]:[2026-10-27 06:53:19] iteration    24000/  500000 | consumed samples:     24576000 | "
               "elapsed time per iteration (ms): 1001.3 | learning rate: 2.998E-04 | global batch size:  1024 | "
               "lm loss: 2.345678E+00 | loss scale: 1.0 | grad norm: 0.812 |"),
        {{"step", "24000"}, {"elapsed_ms", "1001.3"}}, line++ + 2400);
    if (r == victim) continue;  // the rank whose GPU fell off the bus prints nothing more
    // Watchdog timeouts of every process group (TP, PP, DP, EP, default)
    // and their follow-up lines, 30 minutes after the fault.
    int64_t wd_lines = per_rank - 4;
    for (int64_t k = 0; k < wd_lines; ++k) {
      int64_t pg = k / 4;
      int64_t seq = 4711 + pg;
      int64_t t = clock(r, t_fault + 1800 * kS + static_cast<int64_t>(rng() % 3'000'000) + pg * 1000);
      uint32_t sig = s_wd[k % 4];
      std::string text = StrCat("[rank", r, "]:[E1027 07:23:19.", 100000 + k, " ", pid,
                                " ProcessGroupNCCL.cpp:632] [PG ID ", pg, " PG GUID ", pg, " Rank ", r,
                                "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=", seq,
                                ", OpType=ALLREDUCE, NumelIn=50331648, NumelOut=50331648, Timeout(ms)=1800000) ran "
                                "for 1800085 milliseconds before timing out.");
      std::vector<std::pair<std::string, std::string>> f;
      if (k % 4 == 0) f = {{"seq", StrCat(seq)}, {"op", "ALLREDUCE"}, {"numel", "50331648"}, {"timeout_ms", "1800000"}};
      if (k % 4 == 1 || k % 4 == 3) f = {{"seq", StrCat(seq)}};
      add(src, r_wd, sig, t, r, std::move(text), std::move(f), 2410 + static_cast<uint64_t>(k));
      auto [it, fresh] = scan.rule_stats[r_wd].rank_min_seq.emplace(r, seq);
      if (!fresh) it->second = std::min(it->second, seq);
    }
  }
  // The initiating lines: the Xid 79 of the victim's GPU, stale Xids pasted
  // from an archive on two hosts, an ECC line on another rank.
  uint32_t vk = static_cast<uint32_t>(ranks + victim / 8);
  Evidence& x = (add(vk, r_xid, s_xid, clock(victim, t_fault + 2 * kS), -1,
                     StrCat("Oct 27 06:53:21 ", Host(victim / 8), " kernel: [1000000.000412] NVRM: Xid (PCI:0000:",
                            std::string(kBus[victim % 8]).substr(0, 2),
                            ":00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."),
                     {{"pci", "0000:" + std::string(kBus[victim % 8]).substr(0, 2) + ":00"}, {"xid", "79"}}, 40),
                 scan.evidence.back());
  x.gpu = "0000:" + std::string(kBus[victim % 8]).substr(0, 2) + ":00.0";
  x.monotonic_s = 1000000.000412;
  for (int64_t h : {int64_t{1}, hosts - 2}) {
    add(static_cast<uint32_t>(ranks + h), r_xid, s_xid, kT0 - 24 * 86400 * kS, -1,
        StrCat("Oct  3 02:11:09 ", Host(h), " kernel: [31337.000001] NVRM: Xid (PCI:0000:3a:00): 79, GPU has fallen "
               "off the bus."),
        {{"xid", "79"}}, 1);
    scan.evidence.back().gpu = "0000:3a:00.0";
  }
  add(static_cast<uint32_t>(ranks / 2), r_ecc, s_ecc, clock(ranks / 2, t_fault + 1801 * kS), ranks / 2,
      StrCat("[rank", ranks / 2, "]: RuntimeError: CUDA error: uncorrectable ECC error encountered"), {}, 99999);
  std::stable_sort(scan.evidence.begin(), scan.evidence.end(), [](const Evidence& a, const Evidence& b) {
    return a.source != b.source ? a.source < b.source : a.offset < b.offset;
  });
  scan.matches = scan.evidence.size();
  scan.lines = static_cast<uint64_t>(ranks) * 40'000;
  scan.bytes = static_cast<uint64_t>(ranks) * 9'000'000;
  return scan;
}

int64_t StatusKb(const char* key) {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  int64_t v = -1;
  size_t n = std::strlen(key);
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, key, n) == 0) v = std::strtoll(line + n, nullptr, 10);
  }
  std::fclose(f);
  return v;
}

// Resets VmHWM (the peak resident set) to the current resident set.
void ResetPeak() {
  int fd = ::open("/proc/self/clear_refs", O_WRONLY);
  if (fd < 0) return;
  (void)!::write(fd, "5", 1);
  ::close(fd);
}

void BM_Correlate(benchmark::State& state) {
  const int64_t ranks = state.range(0), records = state.range(1);
  const ScanResult base = MakeScan(ranks, records);
  size_t incidents = 0, collateral = 0;
  int64_t extra_kb = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto scan = std::make_unique<ScanResult>(base);
    int64_t rss0 = StatusKb("VmRSS:");
    ResetPeak();
    state.ResumeTiming();
    Diagnosis d = Correlate(Rules(), *scan, CorrelateOptions{});
    benchmark::DoNotOptimize(d);
    state.PauseTiming();
    extra_kb = std::max(extra_kb, StatusKb("VmHWM:") - rss0);
    incidents = d.incidents.size();
    collateral = d.incidents.empty() ? 0 : d.incidents[0].collateral.size();
    if (d.incidents.empty() || Rules().rule(d.incidents[0].rule)->id()->string_view() != "xid-79-fallen-off-bus" ||
        d.incidents[0].rank != ranks / 3) {
      state.SkipWithError("wrong diagnosis");
    }
    scan.reset();
    state.ResumeTiming();
  }
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  state.counters["evidence"] = static_cast<double>(base.evidence.size());
  state.counters["incidents"] = static_cast<double>(incidents);
  state.counters["collateral_rules"] = static_cast<double>(collateral);
  state.counters["peak_rss_mb"] = static_cast<double>(ru.ru_maxrss) / 1024.0;
  state.counters["correlate_extra_mb"] = static_cast<double>(extra_kb) / 1024.0;
  state.counters["records_per_s"] =
      benchmark::Counter(static_cast<double>(base.evidence.size()), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Correlate)->Args({128, 100'000})->Args({1024, 1'000'000})->Unit(benchmark::kMillisecond)
    ->UseRealTime()->Iterations(3);

}  // namespace
}  // namespace faultline

BENCHMARK_MAIN();
