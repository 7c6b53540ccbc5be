// Inputs that would never end or never start: devices and FIFOs found in a
// directory (skipped, with a warning naming them), a FIFO named on the
// command line with no writer (a wait that cancellation and the time budget
// end), /dev/zero and /dev/urandom (binary: refused at their first block),
// and the user's limits on bytes and time. Every limit hit is an input error
// naming the source and the limit; the other sources are still diagnosed.
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "faults_util.h"
#include "gmock/gmock.h"
#include "simdjson.h"

namespace faultline::faults {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

ScanResult Scan(const std::vector<std::string>& paths, ScanOptions so = {}) {
  if (so.threads == 0) so.threads = 2;
  Scanner scanner(Rules(), std::move(so));
  (void)scanner.ScanPaths(paths);
  return scanner.Finish();
}

const InputError* WarningFor(const ScanResult& r, std::string_view source) {
  for (const InputError& w : r.warnings) {
    if (w.source == source) return &w;
  }
  return nullptr;
}

// A listening Unix socket at `path` (closed with the object).
class UnixSocket {
 public:
  explicit UnixSocket(const std::string& path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << path;
  }
  ~UnixSocket() { ::close(fd_); }

 private:
  int fd_ = -1;
};

// Special files met while walking a directory are not opened (a FIFO would
// block, /dev/zero would never end) and not silently dropped either: each is
// an input warning naming it, in the scan result and the report, and the
// regular files beside them are diagnosed.
TEST(HostileInput, SpecialFilesInADirectoryAreWarnings) {
  TempDir dir;
  const std::string fifo = dir.Sub("logs/pipe.log");
  const std::string sock = dir.Sub("logs/agent.sock");
  std::filesystem::create_directories(dir.Sub("logs"));
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  UnixSocket s(sock);
  WriteFile(dir.Sub("logs/good.log"), std::string(kXidLine) + "\n");
  ScanResult r = Scan({dir.Sub("logs")});
  EXPECT_EQ(CountRule(r, kXidRule), 1u);
  EXPECT_TRUE(r.errors.empty());
  const InputError* wf = WarningFor(r, fifo);
  ASSERT_NE(wf, nullptr) << "the FIFO was skipped silently";
  EXPECT_THAT(wf->message, HasSubstr(fifo));
  EXPECT_THAT(wf->message, HasSubstr("FIFO"));
  const InputError* ws = WarningFor(r, sock);
  ASSERT_NE(ws, nullptr) << "the socket was skipped silently";
  EXPECT_THAT(ws->message, HasSubstr("socket"));

  std::string json = ReportOf(r);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_FALSE(parser.parse(json).get(doc));
  simdjson::dom::array warnings;
  ASSERT_FALSE(doc["input"]["warnings"].get_array().get(warnings)) << json.substr(0, 1000);
  EXPECT_EQ(warnings.size(), 2u);
  simdjson::dom::array errors;
  ASSERT_FALSE(doc["input"]["errors"].get_array().get(errors));
  EXPECT_EQ(errors.size(), 0u) << "a skipped special file is not an input error";
}

// A FIFO named on the command line with nobody writing: opening it must not
// block, and the wait for a writer ends when the scan is cancelled.
TEST(HostileInput, FifoWithoutWriterIsCancellable) {
  TempDir dir;
  const std::string fifo = dir.Sub("pipe.log");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  std::atomic<bool> cancel{false};
  ScanOptions so;
  so.cancel = &cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancel = true;
  });
  const auto t0 = Clock::now();
  Scanner scanner(Rules(), so);
  absl::Status st = scanner.ScanPaths({fifo});
  canceller.join();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(10)) << "the FIFO wait ignored the cancel";
  EXPECT_TRUE(absl::IsCancelled(st)) << st;
}

// The same wait ends at the time budget: an input error naming the FIFO
// and the budget; the file beside it is diagnosed.
TEST(HostileInput, FifoWithoutWriterMeetsTheTimeBudget) {
  TempDir dir;
  const std::string fifo = dir.Sub("a-pipe.log");
  const std::string good = dir.Sub("b-good.log");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  WriteFile(good, std::string(kXidLine) + "\n");
  ScanOptions so;
  so.time_budget_s = 0.5;
  so.threads = 1;  // the good file waits behind the FIFO, and is still read
  const auto t0 = Clock::now();
  ScanResult r = Scan({fifo, good}, so);
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(10));
  const InputError* e = ErrorFor(r, fifo);
  ASSERT_NE(e, nullptr);
  EXPECT_THAT(e->message, HasSubstr(fifo));
  EXPECT_THAT(e->message, HasSubstr("time budget"));
  // The budget ran out while the FIFO waited: the good file, not started
  // yet, is an error too, naming the budget -- never a silent omission.
  if (const InputError* g = ErrorFor(r, good)) {
    EXPECT_THAT(g->message, HasSubstr("time budget"));
  } else {
    EXPECT_EQ(CountRule(r, kXidRule, SourceIndex(r, good)), 1u);
  }
}

// A FIFO named on the command line whose writer comes later is read whole:
// naming it is asking for it.
TEST(HostileInput, FifoWithALateWriterIsRead) {
  TempDir dir;
  const std::string fifo = dir.Sub("pipe.log");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    int fd = ::open(fifo.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    std::string text = LogWithMatches(1000, 10);
    EXPECT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    ::close(fd);
  });
  ScanResult r = Scan({fifo});
  writer.join();
  EXPECT_TRUE(r.errors.empty()) << r.errors[0].message;
  EXPECT_EQ(r.rule_stats[static_cast<uint32_t>(Rules()->FindRule(kXidRule))].count, 100u);
  EXPECT_EQ(r.sources[0].lines, 1000u);
}

// /dev/zero and /dev/urandom never end: their first block holds NUL bytes,
// so they are refused as binary at once, naming the device.
TEST(HostileInput, EndlessDevicesAreRefusedAsBinary) {
  TempDir dir;
  const std::string good = dir.Sub("good.log");
  WriteFile(good, std::string(kXidLine) + "\n");
  for (const char* dev : {"/dev/zero", "/dev/urandom"}) {
    if (::access(dev, R_OK) != 0) continue;
    const auto t0 = Clock::now();
    ScanResult r = Scan({dev, good});
    EXPECT_LT(Clock::now() - t0, std::chrono::seconds(20)) << dev;
    const InputError* e = ErrorFor(r, dev);
    ASSERT_NE(e, nullptr) << dev;
    EXPECT_THAT(e->message, HasSubstr(dev));
    EXPECT_THAT(e->message, HasSubstr("binary"));
    EXPECT_EQ(CountRule(r, kXidRule, SourceIndex(r, good)), 1u);
  }
}

// max_source_bytes on a mapped file (small and chunked) and on a stream: the
// lines before the cap are diagnosed, the source is an input error naming
// the cap, and a file under the cap is untouched.
TEST(HostileInput, PerSourceByteCap) {
  TempDir dir;
  const std::string big = dir.Sub("big.log");
  const std::string small = dir.Sub("small.log");
  const std::string text = LogWithMatches(20'000, 100);  // 200 matches, ~1.7 MB
  WriteFile(big, text);
  WriteFile(small, std::string(kXidLine) + "\n");
  const uint64_t cap = text.size() / 4;
  size_t lines_under_cap = 0, matches_under_cap = 0;
  for (size_t pos = 0, line = 0; pos < text.size(); ++line) {
    size_t nl = text.find('\n', pos);
    if (nl + 1 > cap) break;
    ++lines_under_cap;
    if (line % 100 == 0) ++matches_under_cap;
    pos = nl + 1;
  }
  for (size_t chunk : {size_t{16} << 20, size_t{64} << 10}) {
    ScanOptions so;
    so.chunk_bytes = chunk;
    so.limits.max_source_bytes = cap;
    ScanResult r = Scan({big, small}, so);
    SCOPED_TRACE(chunk);
    const InputError* e = ErrorFor(r, big);
    ASSERT_NE(e, nullptr);
    EXPECT_THAT(e->message, HasSubstr(big));
    EXPECT_THAT(e->message, HasSubstr(std::to_string(cap)));
    EXPECT_THAT(e->message, HasSubstr("--max-source-bytes"));
    EXPECT_EQ(r.sources[SourceIndex(r, big)].lines, lines_under_cap);
    EXPECT_EQ(r.rule_stats[static_cast<uint32_t>(Rules()->FindRule(kXidRule))].count,
              matches_under_cap + 1);
    EXPECT_EQ(ErrorFor(r, small), nullptr);
  }
  // A stream (a FIFO): the reader closes at the cap, so the writer gets
  // EPIPE, not a SIGPIPE that would end the test.
  ::signal(SIGPIPE, SIG_IGN);
  const std::string fifo = dir.Sub("pipe.log");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  std::thread writer([&] {
    int fd = ::open(fifo.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    size_t done = 0;
    while (done < text.size()) {
      ssize_t n = ::write(fd, text.data() + done, text.size() - done);
      if (n <= 0) break;  // the reader stopped at the cap and closed
      done += static_cast<size_t>(n);
    }
    ::close(fd);
  });
  ScanOptions so;
  so.limits.max_source_bytes = cap;
  ScanResult r = Scan({fifo}, so);
  writer.join();
  const InputError* e = ErrorFor(r, fifo);
  ASSERT_NE(e, nullptr);
  EXPECT_THAT(e->message, HasSubstr("--max-source-bytes"));
  EXPECT_EQ(r.sources[0].lines, lines_under_cap);
  // A file of exactly the cap is within it.
  ScanOptions exact;
  exact.limits.max_source_bytes = text.size();
  ScanResult rx = Scan({big}, exact);
  EXPECT_TRUE(rx.errors.empty());
}

// Undoes EscapeBytes: "\\\\" is a backslash, "\\xHH" the byte HH.
std::string UnescapeBytes(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == '\\') {
      out += '\\';
      ++i;
    } else if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] == 'x') {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 2, 2)), nullptr, 16));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

// A file name that is not UTF-8 keeps its bytes in JSON (source_escaped
// beside the display form), and a newline in a file name cannot forge a
// line of the text report: it is escaped there, in evidence locations and
// input error messages alike.
TEST(HostileInput, FileNamesAreRecoverableAndCannotForgeLines) {
  TempDir dir;
  const std::string latin1 = dir.Sub("caf\xe9\\x41-\xff.log");
  const std::string forged = dir.Sub("x.log\ninput error: forged\n== PRIMARY DIAGNOSIS ==\nz.log");
  WriteFile(latin1, std::string(kXidLine) + "\n");
  WriteFile(forged, std::string(kXidLine) + "\n" + LogWithMatches(5000, 1000));
  ScanOptions so;
  so.limits.max_source_bytes = 4096;  // the forged name gets an input error too
  ScanResult r = Scan({latin1, forged}, so);
  ASSERT_NE(ErrorFor(r, forged), nullptr);

  std::string json = ReportOf(r);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_FALSE(parser.parse(json).get(doc));
  bool found = false;
  // input.errors names the forged file: valid UTF-8, no escaped form.
  for (simdjson::dom::element e : doc["input"]["errors"].get_array()) {
    std::string_view escaped;
    EXPECT_TRUE(e["source_escaped"].get_string().get(escaped)) << "escaped form for a UTF-8 name";
  }
  std::string jsonl = EvidenceJsonLines(*Rules(), r);
  for (size_t pos = 0; (pos = jsonl.find("\"source_escaped\":\"", pos)) != std::string::npos; ++pos) {
    simdjson::dom::element line;
    size_t end = jsonl.find('\n', pos);
    size_t start = jsonl.rfind('\n', pos);
    start = start == std::string::npos ? 0 : start + 1;
    ASSERT_FALSE(parser.parse(jsonl.substr(start, end - start)).get(line));
    std::string_view escaped;
    ASSERT_FALSE(line["source_escaped"].get_string().get(escaped));
    EXPECT_EQ(UnescapeBytes(escaped), latin1);
    found = true;
  }
  EXPECT_TRUE(found) << "no source_escaped for a name that is not UTF-8";
  EXPECT_NE(jsonl.find("x.log\\ninput"), std::string::npos) << "a valid UTF-8 name is JSON-escaped";

  Diagnosis d = Correlate(*Rules(), r, CorrelateOptions{});
  std::string text = ReportText(*Rules(), r, d);
  EXPECT_EQ(text.find("\ninput error: forged"), std::string::npos) << text;
  EXPECT_EQ(text.find("\n== PRIMARY DIAGNOSIS ==\nz.log"), std::string::npos) << text;
  EXPECT_NE(text.find("x.log\\ninput error: forged"), std::string::npos) << text;
}

}  // namespace
}  // namespace faultline::faults
