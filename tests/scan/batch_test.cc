// The per-file shortcuts of a many-file archive must not change what a scan
// finds: small files scanned in batch tasks give the same result as each
// file a task of its own (ScanOptions::batch_files = 1), on a directory
// mixing every line format, kernel logs, empty and unterminated files, a
// file too large for a batch, a compressed file and Flight Recorder dumps
// between them; and the hard-wrap detection that measures only the lines
// that can be the widest gives the width that measuring every line gives.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "scan/line_format.h"
#include "scan/scan_impl.h"
#include "scan_test_util.h"

namespace faultline {
namespace {

using scantest::BigCaps;
using scantest::DefaultRules;
using scantest::Gzip;
using scantest::JobLog;
using scantest::ReadFile;
using scantest::TempDir;
using scantest::WriteFile;

// `text` cut into lines of `width` bytes, as a terminal of that width shows
// ASCII text.
std::string HardWrapped(std::string_view text, size_t width) {
  std::string out;
  size_t col = 0;
  for (char c : text) {
    if (c == '\n') {
      out += '\n';
      col = 0;
      continue;
    }
    if (col == width) {
      out += '\n';
      col = 0;
    }
    out += c;
    ++col;
  }
  return out;
}

std::string JsonLines(std::string_view text, int rank) {
  std::string out;
  for (size_t at = 0; at < text.size();) {
    size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) nl = text.size();
    std::string msg;
    for (char c : text.substr(at, nl - at)) {
      if (c == '"' || c == '\\') msg += '\\';
      if (static_cast<unsigned char>(c) >= 0x20) msg += c;
    }
    out += "{\"time\": \"2026-11-02T13:46:41.123Z\", \"rank\": " + std::to_string(rank) + ", \"message\": \"" + msg +
           "\"}\n";
    at = nl + 1;
  }
  return out;
}

// CRI records, every fourth split into two partial lines.
std::string CriLines(std::string_view text) {
  std::string out;
  int k = 0;
  for (size_t at = 0; at < text.size(); ++k) {
    size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(at, nl - at);
    const std::string stamp = "2026-11-02T13:46:41.123456789Z stdout ";
    if (k % 4 == 0 && line.size() > 10) {
      out += stamp + "P " + std::string(line.substr(0, 10)) + "\n";
      out += stamp + "F " + std::string(line.substr(10)) + "\n";
    } else {
      out += stamp + "F " + std::string(line) + "\n";
    }
    at = nl + 1;
  }
  return out;
}

std::string KernelLog(int host, bool syslog) {
  std::string out;
  for (int i = 0; i < 40; ++i) {
    const std::string mono = "[" + std::to_string(1000 + i) + ".682554] ";
    const std::string body = i == 30 ? "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen "
                                       "off the bus."
                                     : "mlx5_core 0000:3b:00.0: port " + std::to_string(i % 2) + " link up";
    out += syslog ? "Nov  2 13:46:" + std::to_string(10 + i) + " node" + std::to_string(host) + " kernel: " + mono + body
                  : mono + body;
    out += '\n';
  }
  return out;
}

// A job archive with every kind of small file, in an order that puts each
// kind next to each other kind within and across batches.
void WriteMixedArchive(const std::string& dir) {
  for (int host = 0; host < 6; ++host) {
    const std::string h = dir + "/node" + std::to_string(host) + "/";
    for (int rank = 0; rank < 8; ++rank) {
      const std::string text = JobLog(100 * host + rank, 2000 + 997 * rank);
      const std::string r = h + "rank-" + std::to_string(rank);
      switch ((host + rank) % 7) {
        case 0: WriteFile(r + ".log", text); break;
        case 1: WriteFile(r + ".json", JsonLines(text, rank)); break;
        case 2: WriteFile(r + ".cri.log", CriLines(text)); break;
        case 3: WriteFile(r + ".tty.log", HardWrapped(text, 80)); break;
        case 4: WriteFile(r + ".log", text.substr(0, text.size() - 1 - text.size() / 3)); break;  // unterminated
        case 5: WriteFile(r + ".log", ""); break;
        default: WriteFile(r + ".log", text.substr(0, 1500) + "\n\n\r\n" + text.substr(1500)); break;
      }
    }
    WriteFile(h + "kern.log", KernelLog(host, host % 2 == 0));
    WriteFile(h + "dmesg.txt", KernelLog(host, false));
    if (host == 2) WriteFile(h + "big.log", JobLog(7, 300 << 10));  // a task of its own
    if (host == 3) WriteFile(h + "old.log.gz", Gzip(JobLog(8, 20 << 10)));
  }
  // Flight Recorder dumps, good and broken, plain and compressed, among logs.
  const std::string cmd = std::string("python3 ") + FL_SOURCE_DIR + "/tests/flightrec/make_dumps.py '" + dir +
                          "/node4/fr' --only broken > /dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::filesystem::remove(dir + "/node4/fr/DONE");
  // A compressed dump that fails while planning, after the small ones in
  // file order: their errors must stay before its.
  WriteFile(dir + "/node4/zz_hostile.p2.gz", Gzip(ReadFile(dir + "/node4/fr/broken/hostile/nccl_trace_rank_0.p2")));
}

ScanResult ScanDir(const std::string& dir, unsigned threads, size_t batch_files) {
  ScanOptions o = BigCaps(threads);
  o.batch_files = batch_files;
  Scanner s(DefaultRules(), o);
  EXPECT_TRUE(s.ScanPaths({dir}).ok());
  return s.Finish();
}

// What a scan found, readably: per source its summary and evidence, the
// input errors and Flight Recorder dumps in order, the per-rank summaries.
std::vector<std::string> Facts(const ScanResult& r) {
  std::vector<std::string> out;
  for (size_t i = 0; i < r.sources.size(); ++i) {
    const SourceSummary& s = r.sources[i];
    out.push_back(s.name + ": bytes " + std::to_string(s.bytes) + " lines " + std::to_string(s.lines) + " times " +
                  std::to_string(s.first_time_us) + "/" + std::to_string(s.first_time_inferred) + " " +
                  std::to_string(s.last_time_us) + "/" + std::to_string(s.last_time_inferred) + " at " +
                  std::to_string(s.last_time_offset) + " dated " + std::to_string(s.dated_us) + " rank " +
                  std::to_string(s.rank) + " host " + s.host + " json " + std::to_string(s.json_lines) +
                  " kernel " + std::to_string(s.kernel_log) + " anchor " +
                  std::to_string(s.monotonic_anchor_us.value_or(-1)) + " failed " + std::to_string(s.failed) +
                  " delta " + std::to_string(s.unanchored_delta_us));
    for (const scantest::EvKey& k : scantest::Keys(r, static_cast<uint32_t>(i))) {
      out.push_back("  " + scantest::Describe(k));
    }
  }
  for (const InputError& e : r.errors) out.push_back("error " + e.source + ": " + e.message);
  for (const auto& d : r.flight_recorder) out.push_back("dump of rank " + std::to_string(d.rank));
  for (const auto& [rank, rs] : r.ranks) {
    out.push_back("rank " + std::to_string(rank) + " progress " + std::to_string(rs.progress_lines) + " " +
                  std::to_string(rs.first_progress_us) + "-" + std::to_string(rs.last_progress_us) + " step " +
                  std::to_string(rs.last_step));
  }
  for (const auto& [signal, n] : r.signal_hits) out.push_back("signal " + std::to_string(signal) + ": " + std::to_string(n));
  for (const auto& [name, points] : r.metrics) {
    for (const MetricPoint& p : points) {
      out.push_back("metric " + name + " rank " + std::to_string(p.rank) + " step " + std::to_string(p.step) + " at " +
                    std::to_string(p.time_us) + ": " + std::to_string(p.value));
    }
  }
  for (const InputError& w : r.warnings) out.push_back("warning " + w.source + ": " + w.message);
  out.push_back("matches " + std::to_string(r.matches) + " lines " + std::to_string(r.lines) + " bytes " +
                std::to_string(r.bytes));
  return out;
}

TEST(SmallFileBatch, SameResultAsATaskPerFile) {
  if (std::system("python3 -c 'import sys' > /dev/null 2>&1") != 0) GTEST_SKIP() << "python3 is not available";
  TempDir dir;
  ASSERT_NO_FATAL_FAILURE(WriteMixedArchive(dir.path()));
  const ScanResult alone = ScanDir(dir.path(), 1, 1);
  ASSERT_GE(alone.sources.size(), 60u);
  ASSERT_FALSE(alone.flight_recorder.empty());
  ASSERT_FALSE(alone.errors.empty());
  ASSERT_GT(alone.matches, 0u);
  const std::vector<std::string> want = Facts(alone);
  for (unsigned threads : {1u, 2u}) {
    for (size_t batch : {size_t{2}, size_t{5}, size_t{64}}) {
      const std::vector<std::string> got = Facts(ScanDir(dir.path(), threads, batch));
      ASSERT_EQ(got.size(), want.size()) << threads << " threads, batches of " << batch;
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], want[i]) << threads << " threads, batches of " << batch;
      }
    }
  }
}

// Progress counts every byte once, in source order, batched or not.
TEST(SmallFileBatch, ProgressCountsEveryByte) {
  if (std::system("python3 -c 'import sys' > /dev/null 2>&1") != 0) GTEST_SKIP() << "python3 is not available";
  TempDir dir;
  ASSERT_NO_FATAL_FAILURE(WriteMixedArchive(dir.path()));
  for (size_t batch : {size_t{1}, size_t{64}}) {
    ScanOptions o = BigCaps(2);
    o.batch_files = batch;
    uint64_t last = 0, total = 0;
    bool monotonic = true;
    o.on_progress = [&](uint64_t done, uint64_t all) {
      monotonic = monotonic && done >= last;
      last = done;
      total = all;
      return true;
    };
    Scanner s(DefaultRules(), o);
    ASSERT_TRUE(s.ScanPaths({dir.path()}).ok());
    s.Finish();
    EXPECT_TRUE(monotonic);
    EXPECT_EQ(last, total) << "batches of " << batch;
  }
}

// Planning takes the walk's facts (ListFiles) instead of a second stat() of
// each file, and a batched file is opened once: files that changed after
// the walk -- one grown past a batch's size, one shrunk into it, one
// deleted, one replaced by a directory, one replaced by a Flight Recorder
// dump -- give what a scan of the tree as it now is gives, plus an input
// error naming each file that went (as a file that cannot be opened does).
TEST(ListedFiles, ChangedSinceTheWalkAsTheirStateNow) {
  if (std::system("python3 -c 'import sys' > /dev/null 2>&1") != 0) GTEST_SKIP() << "python3 is not available";
  TempDir dir;
  const std::string d = dir.path();
  WriteFile(d + "/node0/keep.log", JobLog(1, 20 << 10));
  WriteFile(d + "/node0/gone.log", JobLog(2, 20 << 10));
  WriteFile(d + "/node0/grows.log", JobLog(3, 20 << 10));
  WriteFile(d + "/node1/shrinks.log", JobLog(4, 300 << 10));
  WriteFile(d + "/node1/turned.log", JobLog(5, 20 << 10));
  WriteFile(d + "/node1/undumped.log", JobLog(6, 20 << 10));
  const std::string cmd =
      std::string("python3 ") + FL_SOURCE_DIR + "/tests/flightrec/make_dumps.py '" + d + "/fr' > /dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::string dump;
  for (const auto& e : std::filesystem::recursive_directory_iterator(d + "/fr")) {
    // A good pickle dump, small enough for a batch.
    if (e.is_regular_file() && e.path().filename().string().starts_with("nccl_trace_rank_") &&
        !e.path().has_extension() && e.file_size() < (64 << 10) &&
        e.path().string().find("broken") == std::string::npos) {
      dump = ReadFile(e.path().string());
      break;
    }
  }
  ASSERT_FALSE(dump.empty());
  std::filesystem::remove_all(d + "/fr");

  std::vector<SkippedPath> skipped;
  auto listed = ListFiles(d, &skipped);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 6u);

  WriteFile(d + "/node0/grows.log", JobLog(3, 300 << 10));
  WriteFile(d + "/node1/shrinks.log", JobLog(4, 20 << 10));
  std::filesystem::remove(d + "/node0/gone.log");
  std::filesystem::remove(d + "/node1/turned.log");
  std::filesystem::create_directory(d + "/node1/turned.log");
  WriteFile(d + "/node1/undumped.log", dump);

  for (unsigned threads : {1u, 2u}) {
    Scanner s(DefaultRules(), BigCaps(threads));
    ASSERT_TRUE(s.ScanListed(d, *listed, skipped).ok());
    const ScanResult got = s.Finish();
    ASSERT_EQ(got.errors.size(), 2u) << threads << " threads";
    EXPECT_EQ(got.errors[0].source, d + "/node0/gone.log");
    EXPECT_EQ(got.errors[1].source, d + "/node1/turned.log");
    for (const InputError& e : got.errors) {
      EXPECT_NE(e.message.find(e.source), std::string::npos) << e.message;
      EXPECT_EQ(e.code, -3) << e.message;
    }
    EXPECT_NE(got.errors[0].message.find("No such file"), std::string::npos) << got.errors[0].message;
    EXPECT_NE(got.errors[1].message.find("directory"), std::string::npos) << got.errors[1].message;
    ASSERT_EQ(got.flight_recorder.size(), 1u) << threads << " threads";

    // The rest is what a scan of the tree now finds.
    const ScanResult now = ScanDir(d, threads, 64);
    std::vector<std::string> want = Facts(now), have;
    for (const std::string& line : Facts(got)) {
      if (line.starts_with(d + "/node0/gone.log:") || line.starts_with(d + "/node1/turned.log:") ||
          line.starts_with("error ")) {
        continue;
      }
      have.push_back(line);
    }
    EXPECT_EQ(have, want) << threads << " threads";
  }
}

// Heads as format detection sees them: the first 4 KiB and 64 KiB of every
// fixture and example, and random lines of ASCII, UTF-8, escapes, tabs and
// carriage returns, some runs cut at one width.
std::vector<std::string> Heads() {
  std::vector<std::string> heads;
  for (const char* root : {"/tests/fixtures", "/examples"}) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(std::string(FL_SOURCE_DIR) + root)) {
      if (!e.is_regular_file()) continue;
      const std::string text = ReadFile(e.path().string());
      heads.push_back(text.substr(0, 4096));
      heads.push_back(text.substr(0, 64 << 10));
    }
  }
  std::mt19937_64 rng(20261204);
  const std::vector<std::string> ascii = {"a", "Z", "0", " ", ":", "-", "error"};
  const std::vector<std::string> mixed = {"a", "Z", "0", " ", ":", "[rank3]:", "\xc3\xa9", "\xe2\x80\x94",
                                          "\x1b[31m", "\x1b[0m", "\t", "\r", "2026-11-02 13:46:41 "};
  for (int h = 0; h < 400; ++h) {
    // Even heads: ASCII lines longer than the width, cut at it (a wrap to
    // find); odd: anything, lines of any length.
    const bool wrap = h % 2 == 0;
    const std::vector<std::string>& pieces = wrap ? ascii : mixed;
    const size_t width = 40 + rng() % 60;
    std::string text;
    for (int l = 0; l < 60; ++l) {
      std::string line;
      const size_t len = wrap ? width + rng() % (3 * width) : rng() % (2 * width);
      while (line.size() < len) line += pieces[rng() % pieces.size()];
      text += (wrap ? HardWrapped(line, width) : line) + "\n";
    }
    heads.push_back(text);
  }
  // Tab-indented lines wrapped at the terminal's width: wider than their
  // bytes, and wider than a longer line without a tab.
  for (size_t width = 48; width < 120; width += 3) {
    std::string text = std::string(width - 3, 'p') + "\n";
    for (int l = 0; l < 8; ++l) text += "\t" + std::string(width - 8, 'a' + l) + "\ncontinued " + std::to_string(l) + "\n";
    heads.push_back(text);
  }
  return heads;
}

TEST(WrapDetection, MeasuringTheWidestLinesOnlyGivesTheSameWidth) {
  size_t wrapped = 0;
  for (const std::string& head : Heads()) {
    const size_t want = WrapWidthEveryLine(head);
    EXPECT_EQ(DetectWrapWidth(head), want) << head.substr(0, 200);
    wrapped += want > 0;
  }
  EXPECT_GT(wrapped, 20u);  // the comparison saw wrapped heads too
}

// A file larger than a chunk is cut into chunks of one size, as many as a
// multiple of the workers and none larger than chunk_bytes; a smaller file
// keeps chunk_bytes (one chunk) on one worker or up to kSplitFile.
TEST(EvenChunkBytes, AMultipleOfTheWorkersNoneLarger) {
  constexpr size_t kMiB = size_t{1} << 20;
  // Under chunk_bytes: one chunk on one worker or up to kSplitFile, a chunk
  // a worker above it.
  EXPECT_EQ(internal::EvenChunkBytes(10 * kMiB, 16 * kMiB, 1), 16 * kMiB);
  EXPECT_EQ(internal::EvenChunkBytes(internal::kSplitFile, 16 * kMiB, 2), 16 * kMiB);
  EXPECT_EQ(internal::EvenChunkBytes(10 * kMiB, 16 * kMiB, 2), 5 * kMiB);
  EXPECT_EQ(internal::EvenChunkBytes(16 * kMiB, 16 * kMiB, 2), 8 * kMiB);
  EXPECT_EQ(internal::EvenChunkBytes(9 * kMiB, 16 * kMiB, 4), 9 * kMiB / 4);
  for (uint64_t bytes : {uint64_t{77390862}, uint64_t{135905781}, uint64_t{16 * kMiB + 1}, uint64_t{100 * kMiB}}) {
    for (unsigned workers : {1u, 2u, 3u, 8u}) {
      const size_t c = internal::EvenChunkBytes(bytes, 16 * kMiB, workers);
      const uint64_t chunks = (bytes + c - 1) / c;
      EXPECT_LE(c, 16 * kMiB) << bytes << " on " << workers;
      EXPECT_EQ(chunks % workers, 0u) << bytes << " on " << workers;
      EXPECT_LT(chunks, (bytes + 16 * kMiB - 1) / (16 * kMiB) + workers) << bytes << " on " << workers;
    }
  }
  EXPECT_EQ(internal::EvenChunkBytes(77390862, 16 * kMiB, 2), 12898477u);  // 6 chunks, not 5
}

// On more than one worker the last round of chunks is cut in quarters, so
// the worker that takes the last chunk is at most a quarter chunk behind the
// others; the cuts stay on line ends and cover the range once.
TEST(TailChunks, TheLastRoundInQuarters) {
  EXPECT_EQ(internal::TailChunks(100 << 20, 10 << 20, 1), (std::pair<uint64_t, size_t>{0, 0}));
  EXPECT_EQ(internal::TailChunks(10 << 20, 10 << 20, 2), (std::pair<uint64_t, size_t>{0, 0}));
  const auto [span, small] = internal::TailChunks(100 << 20, 10 << 20, 2);
  EXPECT_EQ(span, uint64_t{20} << 20);
  EXPECT_EQ(small, size_t{10} << 18);
  std::string text;
  for (int i = 0; text.size() < (100 << 20); ++i) text += "line " + std::to_string(i) + " of the log\n";
  SourceFraming framing;
  const std::vector<uint64_t> cuts = internal::ChunkCuts(text, 0, text.size(), 10 << 20, framing, span, small);
  ASSERT_GE(cuts.size(), 2u);
  EXPECT_EQ(cuts.front(), 0u);
  EXPECT_EQ(cuts.back(), text.size());
  size_t big = 0, quarter = 0;
  for (size_t k = 0; k + 1 < cuts.size(); ++k) {
    ASSERT_LT(cuts[k], cuts[k + 1]);
    if (k + 2 < cuts.size()) {
      ASSERT_EQ(text[cuts[k + 1] - 1], '\n');
    }
    const uint64_t len = cuts[k + 1] - cuts[k];
    if (len > (10u << 20)) ++big;
    if (len < (3u << 20)) ++quarter;
    // Once in the tail, every chunk is a quarter one.
    if (text.size() - cuts[k] <= span) {
      EXPECT_LT(len, 3u << 20) << k;
    }
  }
  EXPECT_EQ(big, 8u);
  EXPECT_GE(quarter, 8u);
}

// The per-byte newline count of every chunk against a byte loop: lengths
// around the 32- and 128-byte blocks and the 252-block flush, newline runs longer
// than a counter holds, offsets off alignment.
TEST(CountNewlines, SameAsAByteLoop) {
  std::mt19937_64 rng(7);
  std::string text(40000, 'x');
  for (char& c : text) c = rng() % 5 == 0 ? '\n' : 'a';
  text.replace(9000, 20000, std::string(20000, '\n'));
  for (size_t len : {size_t{0}, size_t{1}, size_t{31}, size_t{32}, size_t{33}, size_t{128}, size_t{252 * 32}, size_t{252 * 32 + 7}, size_t{255 * 32},
                     size_t{20000}, size_t{39990}}) {
    for (size_t off : {size_t{0}, size_t{3}}) {
      const char* p = text.data() + off;
      const uint64_t want = static_cast<uint64_t>(std::count(p, p + len, '\n'));
      EXPECT_EQ(internal::CountNewlines(p, len), want) << len << " at " << off;
    }
  }
  // Every tail length past the 32-byte steps (read again as the last 32).
  for (size_t len = 0; len < 300; ++len) {
    const char* p = text.data() + 5;
    const uint64_t want = static_cast<uint64_t>(std::count(p, p + len, '\n'));
    EXPECT_EQ(internal::CountNewlines(p, len), want) << len;
  }
}

// Phase A numbers a chunk's matched lines from the escape test's newline
// index (the block before each line, not a second pass over the chunk) as
// it does by counting on from the last matched line: the same line numbers
// and chunk newlines on texts whose matched lines fall at random places --
// several in a block, blocks apart, at a block's first byte, the last line
// without its newline.
TEST(PhaseA, NewlineIndexNumbersLinesAsCountingDoes) {
  const std::shared_ptr<const Ruleset> rs = DefaultRules();
  hs_scratch_t* scratch = nullptr;
  ASSERT_EQ(hs_alloc_scratch(rs->database(), &scratch), HS_SUCCESS);
  const std::string matched = "[rank3]:[2026-11-02 13:00:05] iteration        7/  100000 | consumed samples:          896 |";
  std::mt19937 rng(17);
  int lines_seen = 0;
  for (int round = 0; round < 200; ++round) {
    std::string text;
    const size_t size = 129 + rng() % 60000;
    while (text.size() < size) {
      const size_t r = rng() % 100;
      if (r < 3) {
        text += matched;
      } else if (r < 6) {
        // Filler up to the next block start, so a matched line begins one.
        const size_t to = (text.size() / NewlineIndex::kBlock + 1) * NewlineIndex::kBlock;
        if (to - text.size() > 1) text += std::string(to - text.size() - 1, 'y');
      } else {
        text += std::string(rng() % 300, 'x');
      }
      text += '\n';
      if (rng() % 20 == 0) text += '\n';
    }
    if (round % 2 == 1) text += matched;  // a last line without its newline
    NewlineIndex index;
    ASSERT_FALSE(HasEscapes(text, &index));
    internal::ChunkOut counted, indexed;
    std::vector<internal::HsCtx::Hit> hits;
    internal::PhaseA(*rs, scratch, text.data(), text.size(), 0, counted, hits);
    internal::PhaseA(*rs, scratch, text.data(), text.size(), 0, indexed, hits, 0, true, 0, &index);
    ASSERT_EQ(indexed.newlines, counted.newlines) << round;
    ASSERT_EQ(counted.newlines, static_cast<uint64_t>(std::count(text.begin(), text.end(), '\n')));
    ASSERT_EQ(indexed.pending.size(), counted.pending.size()) << round;
    for (size_t i = 0; i < counted.pending.size(); ++i) {
      const uint64_t at = counted.pending[i].offset;
      ASSERT_EQ(indexed.pending[i].line_rel, counted.pending[i].line_rel) << round << " line at " << at;
      ASSERT_EQ(counted.pending[i].line_rel,
                static_cast<uint64_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n')));
    }
    lines_seen += static_cast<int>(counted.pending.size());
  }
  EXPECT_GT(lines_seen, 500);
  hs_free_scratch(scratch);
}

}  // namespace
}  // namespace faultline

namespace faultline {
namespace {

// FinishLine parses a dropped record's rank where it lies when
// CleansToItself says CleanText would not change it: it must say so only
// when CleanText keeps the text, and for every ASCII text CleanText keeps
// (texts with NUL, '\r' anywhere, DEL, UTF-8 and invalid bytes, around the
// size cap).
TEST(CleansToItself, OnlyWhereCleanTextKeepsTheText) {
  std::mt19937 rng(5);
  static constexpr std::string_view kBytes = std::string_view("09az \r\n\t\0\x7f\x80\xc3\xa9\xff", 14);
  int kept = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string s;
    const size_t n = round % 50 == 0 ? kMaxEvidenceText - 2 + rng() % 4 : rng() % 12;
    for (size_t i = 0; i < n; ++i) s.push_back(round % 50 == 0 && i + 2 < n ? '7' : kBytes[rng() % kBytes.size()]);
    const bool ascii = std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
    const bool same = internal::CleanText(s) == s;
    if (internal::CleansToItself(s)) {
      ASSERT_TRUE(same) << round;
      ++kept;
    } else {
      ASSERT_FALSE(ascii && same) << round;
    }
  }
  EXPECT_GT(kept, 1000);
  EXPECT_TRUE(internal::CleansToItself("1023"));
  EXPECT_FALSE(internal::CleansToItself("12\r"));
  EXPECT_FALSE(internal::CleansToItself(std::string(kMaxEvidenceText + 1, '1')));
}

}  // namespace
}  // namespace faultline

namespace faultline {
namespace {

using scantest::Diff;
using scantest::Keys;

// MarkThin marks thin, past the records of the chunks the merge has already
// counted, what the caps drop whatever the merge's timing: many small
// chunks on one and two threads, with caps small enough that later chunks
// start past keep_first, give the one-chunk scan's evidence, counts, drops,
// rule statistics, links and progress.
TEST(MarkThin, CapsAcrossChunksKeepTheOneChunkResult) {
  TempDir dir;
  const std::string path = dir.path() + "/job.log";
  scantest::FixtureOptions fo;
  fo.match_permille = 400;
  WriteFile(path, JobLog(3, size_t{3} << 20, fo));
  auto caps = [](unsigned threads, size_t chunk) {
    ScanOptions o;
    o.threads = threads;
    o.chunk_bytes = chunk;
    o.keep_first = 5;
    o.keep_last = 3;
    return o;
  };
  const ScanResult want = scantest::ScanFiles(DefaultRules(), {path}, caps(1, size_t{64} << 20));
  ASSERT_GT(want.matches, 5000u);
  ASSERT_FALSE(want.dropped.empty());
  for (unsigned threads : {1u, 2u}) {
    for (size_t chunk : {size_t{4} << 10, size_t{64} << 10}) {
      const std::string what = "threads " + std::to_string(threads) + " chunk " + std::to_string(chunk);
      const ScanResult got = scantest::ScanFiles(DefaultRules(), {path}, caps(threads, chunk));
      EXPECT_EQ(Diff(Keys(want), Keys(got)), "") << what;
      EXPECT_EQ(want.matches, got.matches) << what;
      EXPECT_EQ(want.signal_hits, got.signal_hits) << what;
      EXPECT_EQ(want.dropped, got.dropped) << what;
      ASSERT_EQ(want.rule_stats.size(), got.rule_stats.size()) << what;
      for (const auto& [rule, w] : want.rule_stats) {
        const RuleStats& g = got.rule_stats.at(rule);
        EXPECT_EQ(w.count, g.count) << what << " rule " << rule;
        EXPECT_EQ(w.ranks, g.ranks) << what << " rule " << rule;
        EXPECT_EQ(w.hosts, g.hosts) << what << " rule " << rule;
        EXPECT_EQ(w.rank_min_seq, g.rank_min_seq) << what << " rule " << rule;
        EXPECT_EQ(w.first_time_us, g.first_time_us) << what << " rule " << rule;
        EXPECT_EQ(w.last_time_us, g.last_time_us) << what << " rule " << rule;
      }
      EXPECT_EQ(want.devices.size(), got.devices.size()) << what;
      EXPECT_EQ(want.pids.size(), got.pids.size()) << what;
      EXPECT_EQ(want.nics.size(), got.nics.size()) << what;
      EXPECT_EQ(want.sync_points.size(), got.sync_points.size()) << what;
      ASSERT_EQ(want.ranks.size(), got.ranks.size()) << what;
      for (const auto& [rank, w] : want.ranks) {
        EXPECT_EQ(w.progress_lines, got.ranks.at(rank).progress_lines) << what << " rank " << rank;
        EXPECT_EQ(w.last_step, got.ranks.at(rank).last_step) << what << " rank " << rank;
      }
    }
  }
}

}  // namespace
}  // namespace faultline
