// Shared pieces of the scanner tests: a small rule source written and
// compiled in a temp dir (so the tests do not move when the default rules
// do), realistic job-log fixtures, compression helpers, a strict UTF-8
// check, and a source-independent view of evidence for comparisons.
#ifndef FAULTLINE_TESTS_SCAN_SCAN_TEST_UTIL_H_
#define FAULTLINE_TESTS_SCAN_SCAN_TEST_UTIL_H_

#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "evidence/bundle.h"
#include "evidence/evidence.h"
#include "ruleset/ruleset.h"
#include "scan/scan.h"

namespace faultline::scantest {

// A temp directory removed with everything in it when the object dies.
class TempDir {
 public:
  TempDir() {
    // Underscores: a random name must never be shaped like a host name, which
    // a file's own folder may give its evidence (attribution/path.cc).
    std::string tmpl = (std::filesystem::temp_directory_path() / "fl_scan_XXXXXX").string();
    char* d = mkdtemp(tmpl.data());
    path_ = d ? d : "";
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

inline void WriteFile(const std::string& path, std::string_view body) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream f(path, std::ios::binary);
  f.write(body.data(), static_cast<std::streamsize>(body.size()));
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// gzip (zlib, level 6, one member), as gzip and logrotate write it.
inline std::string Gzip(std::string_view text) {
  z_stream zs{};
  deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, text.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = static_cast<uInt>(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// zstd level 3, written as several frames of `frame` bytes each (zstd -T0 and
// streaming writers produce multi-frame files).
inline std::string Zstd(std::string_view text, size_t frame = size_t{1} << 20) {
  std::string out;
  for (size_t pos = 0; pos < text.size() || pos == 0; pos += frame) {
    std::string_view part = text.substr(pos, frame);
    std::string buf(ZSTD_compressBound(part.size()), '\0');
    size_t n = ZSTD_compress(buf.data(), buf.size(), part.data(), part.size(), 3);
    buf.resize(ZSTD_isError(n) ? 0 : n);
    out += buf;
    if (text.empty()) break;
  }
  return out;
}

// Strict UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF, no NUL).
inline bool ValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == 0) return false;
    size_t n = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3
                                                   : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    unsigned char c1 = n > 1 ? static_cast<unsigned char>(s[i + 1]) : 0;
    if (n == 3 && ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0))) return false;
    if (n == 4 && ((c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 >= 0x90))) return false;
    i += n;
  }
  return true;
}

// ---------------------------------------------------------------------------
// The test ruleset.

inline constexpr const char* kRef = "Scanner test reference";

inline std::string Rule(const std::string& id, const std::string& layer,
                        const std::string& signals) {
  return R"J({"id": ")J" + id + R"J(", "reference": ")J" + kRef + R"J(", "title": ")J" + id +
         R"J(", "category": "Test", "tags": ["test"], "layer": ")J" + layer +
         R"J(", "summary": "s", "root_cause": ["r"], "symptoms": [{"symptom": "a", "why": "b"}],
  "confirm": ["c"], "fix": "f", "verify": "v", "prevention": ["p"], "fingerprint": "fp",
  "related": [], "sources": ["https://example.org/"], "signals": [)J" +
         signals + "]}";
}

// Writes the rule source of the scanner tests into dir.
inline void WriteTestRuleSource(const std::string& dir) {
  WriteFile(dir + "/ruleset.json", R"J({"name": "scan-test", "version": "1"})J");
  WriteFile(dir + "/references.json",
            std::string(R"J({"references": [{"title": ")J") + kRef + R"J(", "summary": "s"}]})J");
  WriteFile(dir + "/gpu/test-xid.json",
            Rule("test-xid", "hardware", R"J({"id": "xid",
    "pattern": "NVRM: Xid \\(PCI:[0-9a-fA-F:.]+\\): [0-9]+,",
    "extract": "Xid \\(PCI:(?P<pci>[0-9a-fA-F:.]+)\\): (?P<xid>[0-9]+),",
    "role": "initiating",
    "examples": ["[1000001.682554] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."],
    "counter_examples": ["NVRM: GPU at PCI:0000:3b:00: GPU-6f1c2a9e"]})J"));
  WriteFile(dir + "/nccl/test-watchdog.json",
            Rule("test-watchdog", "framework", R"J({"id": "watchdog",
    "pattern": "Watchdog caught collective operation timeout: WorkNCCL\\(SeqNum=[0-9]+",
    "extract": "\\[Rank (?P<rank>[0-9]+)\\][^\\n]*SeqNum=(?P<seq>[0-9]+)",
    "role": "symptom",
    "examples": ["[rank3]:[E1102 13:46:41.123456 1234 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4711, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600005 milliseconds before timing out."],
    "counter_examples": ["node017:1:1 [3] NCCL INFO comm 0x1 rank 3"]},
   {"id": "dump-flag", "pattern": "Failed to check the \"should dump\" flag", "role": "symptom",
    "examples": ["[W1102 13:46:41.1 ProcessGroupNCCL.cpp:1234] Failed to check the \"should dump\" flag on TCPStore"],
    "counter_examples": ["Failed to check the flag"]})J"));
  WriteFile(dir + "/nccl/test-nccl-init.json",
            Rule("test-nccl-init", "network", R"J({"id": "init",
    "pattern": "ncclCommInitRank comm 0x[0-9a-f]+ rank [0-9]+ nranks [0-9]+ cudaDev [0-9]+ busId [0-9a-f]+",
    "extract": "rank (?P<rank>[0-9]+) nranks [0-9]+ cudaDev (?P<cuda_dev>[0-9]+) busId (?P<bus_id>[0-9a-f]+)",
    "role": "context",
    "examples": ["node017:41000:41211 [3] NCCL INFO ncclCommInitRank comm 0x55d3a0001234 rank 3 nranks 64 cudaDev 3 busId 3a000 commId 0x5f - Init COMPLETE"],
    "counter_examples": ["node017:41000:41211 [3] NCCL INFO Channel 00/32 : 3[3a000] -> 4[5d000] via P2P/IPC"]})J"));
  WriteFile(dir + "/nccl/test-progress.json",
            Rule("test-progress", "application", R"J({"id": "iteration",
    "pattern": "iteration +[0-9]+/ *[0-9]+ \\| consumed samples:",
    "extract": "iteration +(?P<step>[0-9]+)/[^|]*\\|[^|]*\\| elapsed time per iteration \\(ms\\): (?P<step_time_ms>[0-9.]+)",
    "role": "progress",
    "examples": ["[2026-11-02 13:46:41] iteration      100/  100000 | consumed samples:        12800 | elapsed time per iteration (ms): 812.3 | lm loss: 2.345E+00 |"],
    "counter_examples": ["iteration time 3"]},
   {"id": "lm-loss", "pattern": "iteration +[0-9]+/ *[0-9]+ \\|[^\\n]* lm loss: [0-9.]+E[-+][0-9]+",
    "extract": "iteration +(?P<step>[0-9]+)/[^\\n]* lm loss: (?P<value>[0-9.]+E[-+][0-9]+)",
    "role": "metric",
    "examples": ["[2026-11-02 13:46:41] iteration      100/  100000 | consumed samples:        12800 | elapsed time per iteration (ms): 812.3 | lm loss: 2.345E+00 |"],
    "counter_examples": ["lm loss: 2.3"]})J"));
  WriteFile(dir + "/gpu/test-misc.json",
            Rule("test-misc", "application", R"J({"id": "utf8",
    "pattern": "checkpoint \u2713 saved to /ckpt/[a-z0-9_-]+",
    "role": "context",
    "examples": ["2026-11-02 13:46:41,123 - INFO - checkpoint \u2713 saved to /ckpt/step-100"],
    "counter_examples": ["checkpoint saved to /ckpt/x"]},
   {"id": "gpu-lost", "pattern": "gpu is lost\\. +reboot the system", "caseless": true, "role": "symptom",
    "examples": ["Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost.  Reboot the system to recover this GPU"],
    "counter_examples": ["GPU is fine"]})J"));
}

inline std::shared_ptr<const Ruleset> TestRules() {
  static const std::shared_ptr<const Ruleset> rs = [] {
    TempDir dir;
    WriteTestRuleSource(dir.path());
    auto r = Ruleset::LoadFile(dir.path());
    if (!r.ok()) {
      std::fprintf(stderr, "test rules: %s\n", std::string(r.status().message()).c_str());
      std::abort();
    }
    return *r;
  }();
  return rs;
}

inline std::shared_ptr<const Ruleset> DefaultRules() {
  static const std::shared_ptr<const Ruleset> rs = [] {
    auto r = Ruleset::LoadDefault();
    if (!r.ok()) {
      std::fprintf(stderr, "default rules: %s\n", std::string(r.status().message()).c_str());
      std::abort();
    }
    return *r;
  }();
  return rs;
}

// ---------------------------------------------------------------------------
// Fixtures.

struct FixtureOptions {
  bool crlf = true;            // some lines end in \r\n
  bool long_lines = true;      // some 5-20 KiB lines
  bool utf8 = true;            // multi-byte UTF-8 in messages
  bool junk = false;           // NULs and invalid UTF-8 in some lines
  int match_permille = 60;     // matching lines per thousand
};

// The interleaved output of a few ranks: NCCL INFO chatter (no stamp: its
// matches inherit the time of the line before), Python logging, Megatron
// iteration lines (progress + metric), watchdog timeouts, NCCL init lines,
// kernel Xid lines with syslog and monotonic stamps, the odd long line,
// CRLF line, multi-byte text and empty line. Deterministic in seed.
inline std::string JobLog(uint64_t seed, size_t bytes, const FixtureOptions& o = {}) {
  std::mt19937_64 rng(seed);
  auto R = [&](uint64_t n) { return static_cast<unsigned>(rng() % n); };
  std::string out;
  out.reserve(bytes + 32768);
  unsigned sec = 13 * 3600 + 46 * 60;
  unsigned iter = 100;
  char buf[1024];
  static const char* kUtf8[] = {"durée 3 µs — ok ✓", "数据加载完成", "Größe 4 KiB", "emoji 🚀 launch",
                                "naïve café", "Ελληνικά"};
  while (out.size() < bytes) {
    if (R(7) == 0) ++sec;
    unsigned h = sec / 3600 % 24, m = sec / 60 % 60, s = sec % 60, ms = R(1000);
    unsigned rank = R(8);
    std::string pre = "[rank" + std::to_string(rank) + "]:";
    unsigned k = R(1000);
    int n = 0;
    if (k < static_cast<unsigned>(o.match_permille)) {
      switch (R(6)) {
        case 0:
          n = std::snprintf(buf, sizeof buf,
                            "%s[E1102 %02u:%02u:%02u.%06u 41000 ProcessGroupNCCL.cpp:616] [Rank %u] "
                            "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%u, "
                            "OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, Timeout(ms)=600000) ran "
                            "for 600%03u milliseconds before timing out.",
                            pre.c_str(), h, m, s, ms * 1000 + R(1000), rank, 4000 + R(100000), R(1000));
          break;
        case 1:  // no stamp: inherits
          n = std::snprintf(buf, sizeof buf,
                            "%snode%03u:%u:%u [%u] NCCL INFO ncclCommInitRank comm 0x55d3a%07x rank %u "
                            "nranks 8 cudaDev %u busId %x000 commId 0x5f2a91c3 - Init COMPLETE",
                            pre.c_str(), rank / 4, 41000 + rank, 41211 + rank, rank % 4, R(1 << 24), rank,
                            rank % 4, 0x18 + 0x11 * (rank % 4));
          break;
        case 2:
          n = std::snprintf(buf, sizeof buf,
                            "Nov  2 %02u:%02u:%02u node%03u kernel: [%u.%06u] NVRM: Xid (PCI:0000:%02x:00): "
                            "%u, pid=%u, name=python3, Ch 00000008",
                            h, m, s, rank / 4, 1000000 + sec, R(1000000), 0x18 + 0x11 * (rank % 4),
                            R(3) ? 79 : 31, 41000 + rank);
          break;
        case 3:
          n = std::snprintf(buf, sizeof buf,
                            "%s[2026-11-02 %02u:%02u:%02u] iteration %8u/  100000 | consumed samples: "
                            "%12u | elapsed time per iteration (ms): %u.%u | learning rate: 2.999E-04 | "
                            "global batch size:   128 | lm loss: %u.%06uE+00 | loss scale: 1.0 | grad "
                            "norm: 0.%03u |",
                            pre.c_str(), h, m, s, iter, iter * 128, 800 + R(40), R(10), 1 + R(3),
                            R(1000000), R(1000));
          ++iter;
          break;
        case 4:
          n = std::snprintf(buf, sizeof buf,
                            "%s2026-11-02 %02u:%02u:%02u,%03u - INFO - checkpointing.py:88 - checkpoint "
                            "\xE2\x9C\x93 saved to /ckpt/step-%u",
                            pre.c_str(), h, m, s, ms, iter);
          break;
        default:
          n = std::snprintf(buf, sizeof buf,
                            "%s[W1102 %02u:%02u:%02u.%06u 41000 ProcessGroupNCCL.cpp:1234] Failed to check "
                            "the \"should dump\" flag on TCPStore, (maybe TCPStore server has shut down "
                            "too early), with error: Broken pipe",
                            pre.c_str(), h, m, s, ms * 1000);
          break;
      }
    } else if (k < 500) {
      n = std::snprintf(buf, sizeof buf,
                        "%snode%03u:%u:%u [%u] NCCL INFO Channel %02u/32 : %u[%x000] -> %u[%x000] via "
                        "P2P/IPC",
                        pre.c_str(), rank / 4, 41000 + rank, 41211 + rank, rank % 4, R(32), rank,
                        0x18 + 0x11 * (rank % 4), (rank + 1) % 8, 0x18 + 0x11 * ((rank + 1) % 4));
    } else if (k < 900) {
      n = std::snprintf(buf, sizeof buf,
                        "%s2026-11-02 %02u:%02u:%02u,%03u - INFO - data_loader.py:211 - worker %u "
                        "prefetched %u samples from shard %05u-of-01024 %s",
                        pre.c_str(), h, m, s, ms, R(8), 256u << R(3), R(1024),
                        o.utf8 && R(4) == 0 ? kUtf8[R(6)] : "");
    } else if (k < 960) {
      n = std::snprintf(buf, sizeof buf,
                        "%s2026-11-02 %02u:%02u:%02u,%03u - WARNING - py.warnings - UserWarning: None of "
                        "the inputs have requires_grad=True. Gradients will be None",
                        pre.c_str(), h, m, s, ms);
    } else if (k < 985) {
      n = 0;  // empty line
    } else if (o.long_lines && k < 990) {
      // A long dump line (tensor repr), sometimes with a match at its end.
      std::string line = pre + "tensor([";
      size_t len = 5000 + R(15000);
      while (line.size() < len) line += std::to_string(R(100000)) + ".0, ";
      line += "])";
      if (R(2) == 0) line += " Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, x";
      out += line;
      out += '\n';
      continue;
    } else if (o.junk && k < 995) {
      std::string line = pre + "junk \x01\x02";
      line.push_back('\0');
      line += "\xFF\xFE bad \xC3 ( \xE2\x82 ) \xED\xA0\x80 \xF4\x90\x80\x80 \xC0\xAF ";
      if (R(2) == 0) {
        line += "[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=77";
        line.push_back('\0');
        line += "\xFF";
      }
      out += line;
      out += '\n';
      continue;
    } else {
      n = std::snprintf(buf, sizeof buf, "%s2026-11-02 %02u:%02u:%02u,%03u - DEBUG - prefetch.py:96 - ok",
                        pre.c_str(), h, m, s, ms);
    }
    out.append(buf, static_cast<size_t>(std::max(n, 0)));
    if (o.crlf && R(100) == 0) out += '\r';
    out += '\n';
  }
  return out;
}

// ---------------------------------------------------------------------------
// Evidence without its source index, for comparisons across sources.

struct EvKey {
  uint64_t line = 0, offset = 0;
  uint32_t rule = 0, signal = 0;
  std::string text;
  std::vector<std::pair<std::string, std::string>> fields;
  int64_t time_us = kNoTime;
  int time_source = 0;
  std::optional<double> monotonic_s;
  int64_t rank = -1, local_rank = -1, pid = -1;
  std::string host, gpu;

  auto Tie() const {
    return std::tie(offset, signal, line, rule, text, fields, time_us, time_source, monotonic_s,
                    rank, local_rank, pid, host, gpu);
  }
  bool operator==(const EvKey& o) const { return Tie() == o.Tie(); }
  bool operator<(const EvKey& o) const { return Tie() < o.Tie(); }
};

inline EvKey Key(const Evidence& e) {
  EvKey k;
  k.line = e.line;
  k.offset = e.offset;
  k.rule = e.rule;
  k.signal = e.signal;
  k.text = e.text;
  k.fields = e.fields;
  k.time_us = e.time_us;
  k.time_source = static_cast<int>(e.time_source);
  k.monotonic_s = e.monotonic_s;
  k.rank = e.rank;
  k.local_rank = e.local_rank;
  k.pid = e.pid;
  k.host = e.host;
  k.gpu = e.gpu;
  return k;
}

inline std::string Describe(const EvKey& k) {
  std::string s = "line " + std::to_string(k.line) + " offset " + std::to_string(k.offset) +
                  " signal " + std::to_string(k.signal) + " time " + std::to_string(k.time_us) +
                  "/" + std::to_string(k.time_source) + " rank " + std::to_string(k.rank) + " host '" +
                  k.host + "' gpu '" + k.gpu + "' fields {";
  for (const auto& [a, b] : k.fields) s += a + "=" + b + " ";
  s += "} text '" + k.text.substr(0, 160) + "'";
  return s;
}

inline std::vector<EvKey> Keys(const ScanResult& r, std::optional<uint32_t> source = std::nullopt) {
  std::vector<EvKey> out;
  for (const Evidence& e : r.evidence) {
    if (!source || e.source == *source) out.push_back(Key(e));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Empty when equal; else the first difference.
inline std::string Diff(const std::vector<EvKey>& want, const std::vector<EvKey>& got) {
  size_t n = std::min(want.size(), got.size());
  for (size_t i = 0; i < n; ++i) {
    if (!(want[i] == got[i])) {
      return "first difference at #" + std::to_string(i) + ":\n  want " + Describe(want[i]) +
             "\n  got  " + Describe(got[i]);
    }
  }
  if (want.size() != got.size()) {
    const EvKey& extra = want.size() > got.size() ? want[n] : got[n];
    return "sizes differ: want " + std::to_string(want.size()) + ", got " +
           std::to_string(got.size()) + "; first extra: " + Describe(extra);
  }
  return "";
}

inline ScanOptions BigCaps(unsigned threads = 1, size_t chunk = size_t{16} << 20) {
  ScanOptions o;
  o.threads = threads;
  o.chunk_bytes = chunk;
  o.keep_first = size_t{1} << 40;
  o.keep_last = 0;
  return o;
}

inline ScanResult ScanFiles(std::shared_ptr<const Ruleset> rs, const std::vector<std::string>& paths,
                            const ScanOptions& opts) {
  Scanner s(std::move(rs), opts);
  absl::Status st = s.ScanPaths(paths);
  if (!st.ok()) std::fprintf(stderr, "ScanPaths: %s\n", std::string(st.message()).c_str());
  return s.Finish();
}

// Feeds data as a push stream in pieces whose sizes come from `sizes`
// (called with the bytes left).
template <typename SizeFn>
ScanResult ScanStream(std::shared_ptr<const Ruleset> rs, const std::string& name,
                      std::string_view data, const ScanOptions& opts, SizeFn sizes) {
  Scanner s(std::move(rs), opts);
  uint32_t id = s.OpenStream(name);
  size_t pos = 0;
  while (pos < data.size()) {
    size_t n = std::min(std::max<size_t>(1, sizes(data.size() - pos)), data.size() - pos);
    absl::Status st = s.Feed(id, data.substr(pos, n));
    if (!st.ok()) std::fprintf(stderr, "Feed: %s\n", std::string(st.message()).c_str());
    pos += n;
  }
  absl::Status st = s.CloseStream(id);
  if (!st.ok()) std::fprintf(stderr, "CloseStream: %s\n", std::string(st.message()).c_str());
  return s.Finish();
}

// The evidence of one rule, in scan order.
inline std::vector<const Evidence*> OfRule(const ScanResult& r, const Ruleset& rs, std::string_view rule) {
  std::vector<const Evidence*> out;
  for (const Evidence& e : r.evidence) {
    if (rs.rule(e.rule)->id()->string_view() == rule) out.push_back(&e);
  }
  return out;
}

// The file scanned as byte ranges cut at `cuts` (a scale-out's partitions;
// the first line of each is not given, the range finds it), each range's
// result optionally sent through a serialized bundle, merged.
inline ScanResult ScanRangesMerged(std::shared_ptr<const Ruleset> rs, const std::string& path,
                                   std::vector<uint64_t> cuts, bool through_bundles) {
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  cuts.insert(cuts.begin(), 0);
  cuts.push_back(size);
  std::vector<ScanResult> parts;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    Scanner s(rs, BigCaps(1));
    absl::Status st = s.ScanRange(path, cuts[i], cuts[i + 1], 0);
    if (!st.ok()) std::fprintf(stderr, "ScanRange: %s\n", std::string(st.message()).c_str());
    parts.push_back(s.Finish());
    if (through_bundles) {
      auto back = ReadBundle(*rs, SerializeBundle(*rs, parts.back()), "part");
      if (!back.ok()) std::fprintf(stderr, "ReadBundle: %s\n", std::string(back.status().message()).c_str());
      parts.back() = back.ok() ? std::move(*back) : ScanResult{};
    }
  }
  return MergeScans(*rs, std::move(parts));
}

// A push stream fed in random pieces of 1..max_piece bytes and flushed after
// each one, so every flush scans the whole lines buffered so far as a chunk.
inline ScanResult ScanStreamFlushed(std::shared_ptr<const Ruleset> rs, const std::string& name,
                                    std::string_view data, const ScanOptions& opts,
                                    uint32_t seed, size_t max_piece) {
  Scanner s(std::move(rs), opts);
  uint32_t id = s.OpenStream(name);
  std::mt19937 rng(seed);
  for (size_t pos = 0; pos < data.size();) {
    size_t n = std::min<size_t>(1 + rng() % max_piece, data.size() - pos);
    absl::Status st = s.Feed(id, data.substr(pos, n));
    if (st.ok()) st = s.FlushStream(id);
    if (!st.ok()) std::fprintf(stderr, "Feed/FlushStream: %s\n", std::string(st.message()).c_str());
    pos += n;
  }
  absl::Status st = s.CloseStream(id);
  if (!st.ok()) std::fprintf(stderr, "CloseStream: %s\n", std::string(st.message()).c_str());
  return s.Finish();
}

}  // namespace faultline::scantest

#endif  // FAULTLINE_TESTS_SCAN_SCAN_TEST_UTIL_H_
