// Randomised robustness: every entry point on garbage, NUL bytes, invalid
// UTF-8, every truncation of real lines and splices of real prefixes. The
// checks are "no crash, no out-of-range message_begin"; run under
// -DFL_SANITIZE=address,undefined to catch out-of-bounds reads.

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "attribution/attribution.h"
#include "attribution/carry.h"
#include "gtest/gtest.h"

namespace faultline {
namespace {

const std::vector<std::string>& Samples() {
  static const std::vector<std::string> kSamples = {
      "[rank3]:[E1102 13:46:41.123456 1234 ProcessGroupNCCL.cpp:1234] [PG ID 0 PG GUID 0(default_pg) Rank 3] Watchdog caught",
      "[default3]:x", "  3: text", "12: ", "[1,12]<stdout>:x", "[1,12]<stderr>:",
      "node017:12345:12399 [3] NCCL INFO comm 0x55d0c0a0 rank 131 nranks 1024 cudaDev 3 nvmlDev 3 busId 3b000 commId 0x1a2b3c4d5e6f7081 - Init START",
      "[node017:12345:0:12399] Caught signal 7 (Bus error: nonexistent physical address)",
      "(EngineCore_0 pid=1234) ERROR", "(VllmWorker TP0 pid=1234) x",
      "(RayWorkerWrapper pid=1234, ip=10.0.1.23) x",
      "Nov  2 13:46:41 node017 kernel: [1000001.682554] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3",
      "2026-11-02T13:46:41.123456+00:00 node017 kernel: nvidia 0000:3b:00.0: AER",
      "Nov 02 13:46:41.123456 node017 python3[1]: [rank3]: x",
      "<6>Nov  2 13:46:41 h1 kernel: Out of memory: Killed process 4242 (python3)",
      "oom-kill:constraint=CONSTRAINT_MEMCG,task=python3,pid=777,uid=0",
      "2026-11-02T13:46:41.123456789Z stdout F [rank5]: x",
      "I1102 13:46:41.123456  4567 ProcessGroupNCCL.cpp:900] [PG 0 Rank 7] y",
      "[Mon Nov  2 13:46:41 2026] NVRM: GPU at PCI:0000:B1:00: GPU-3f",
      "[2026-11-02 13:46:41,123] [INFO] [Rank 3] step", "global rank: 3", "Rank 3: x",
      R"({"rank":3,"local_rank":"1","hostname":"node017","pid":99,"a":{"b":[1,{"c":"\"}"}]}})",
      "GPU 00000000:3B:00.0: Detected",
      "python3[41234]: segfault at 0 ip 00007f3a1c2b4e10 sp 00007ffd5e0b1c40 error 4",
      "[0, 1, 2, 3]", "[4,5,6,7]",
  };
  return kSamples;
}

void Exercise(std::string_view s) {
  size_t begin = 12345;
  Attribution a = AttributeLine(s, &begin);
  ASSERT_LE(begin, s.size());
  (void)AttributeLine(s);
  (void)AttributeFromPath(s);
  std::string bus = NormalizePciBusId(s);
  if (!bus.empty()) {
    ASSERT_EQ(NormalizePciBusId(bus), bus);  // canonical form is a fixed point
  }
  (void)NormalizeHost(s);
  std::optional<NcclInit> init = ParseNcclInitLine(s);
  TopologyMap t;
  t.Learn(a);
  if (init) t.AddNcclInit(*init);
  t.AddDevice(std::string(s.substr(0, 16)), 1, 2, s);
  (void)t.Resolve(a);
  (void)t.RankForBusAnyHost(s);
  (void)ParseRankList(s);
  // Any text as any capture a rule may name, line after line.
  LineCarry carry;
  std::string v(s);
  uint64_t line = 0;
  for (const char* name : {"block_host", "block_rank", "block_local_rank", "block_pid", "section_pod", "file_host",
                           "file_rank", "file_local_rank", "file_pid", "local_ranks", "global_ranks"}) {
    Attribution b = a;
    std::string pod;
    (void)carry.Apply(++line, {{name, v}}, b, &pod);
  }
}

TEST(AttributionFuzz, EveryTruncationOfRealLines) {
  for (const std::string& line : Samples()) {
    for (size_t n = 0; n <= line.size(); ++n) {
      // A fresh heap copy of exactly n bytes, so ASan sees a read past it.
      std::string copy = line.substr(0, n);
      std::vector<char> exact(copy.begin(), copy.end());
      Exercise(std::string_view(exact.data(), exact.size()));
      // Also the suffixes: a prefix cut away mid-token.
      Exercise(std::string_view(line).substr(n));
    }
  }
}

TEST(AttributionFuzz, RandomBytesAndSplices) {
  std::mt19937 rng(20261102);
  static const char kChars[] =
      "0123456789abcdefABCDEF:[]()<>.,-_= /\\\"{}rRankPGIDdefaultTxid\t\xff\xc3";
  // sizeof keeps the terminating NUL in the alphabet on purpose.
  const std::string_view kAlphabet(kChars, sizeof(kChars));
  const std::vector<std::string>& samples = Samples();
  for (int iter = 0; iter < 20000; ++iter) {
    std::string s;
    int pieces = 1 + static_cast<int>(rng() % 5);
    for (int p = 0; p < pieces; ++p) {
      switch (rng() % 3) {
        case 0: {  // raw bytes including NUL and invalid UTF-8
          int len = static_cast<int>(rng() % 24);
          for (int i = 0; i < len; ++i) s.push_back(static_cast<char>(rng() & 0xff));
          break;
        }
        case 1: {  // characters the parsers care about
          int len = static_cast<int>(rng() % 24);
          for (int i = 0; i < len; ++i) {
            s.push_back(kAlphabet[rng() % (kAlphabet.size())]);
          }
          break;
        }
        default: {  // a slice of a real line
          const std::string& src = samples[rng() % samples.size()];
          size_t from = rng() % (src.size() + 1);
          size_t len = rng() % (src.size() - from + 1);
          s += src.substr(from, len);
        }
      }
    }
    std::vector<char> exact(s.begin(), s.end());
    Exercise(std::string_view(exact.data(), exact.size()));
  }
}

TEST(AttributionFuzz, PathologicalShapes) {
  Exercise(std::string(100000, '['));
  Exercise(std::string(100000, '{'));
  Exercise(std::string(100000, '/'));
  Exercise(std::string(100000, ':'));
  std::string ranks;
  for (int i = 0; i < 5000; ++i) ranks += "[rank1]:";
  Exercise(ranks);
  std::string words;
  for (int i = 0; i < 5000; ++i) words += "rank rank: [Rank ";
  Exercise(words);
  std::string json = "{";
  for (int i = 0; i < 5000; ++i) json += "\"k\":[[[[\"x\"]]]],";
  Exercise(json);
}

}  // namespace
}  // namespace faultline
