// PyTorch NCCL Flight Recorder dumps as a source kind of their own. PyTorch
// names them TORCH_NCCL_DEBUG_INFO_TEMP_FILE + rank, users and tools rename
// and compress them, so a file is taken for a dump by its content alone:
// its first bytes (decompressed when the name says .gz/.zst) are those of a
// pickle of a dict or a JSON object naming Flight Recorder keys
// (flightrec::SniffFlightRecorderDump). A dump is read whole, parsed by the
// data-only reader and kept in ScanResult::flight_recorder; it is never
// scanned as a log. A dump that fails to parse is an input error naming the
// file (a code-bearing pickle opcode among them); a JSON document that is no
// dump, or JSON lines that merely mention the keys, stay logs.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "faultline/faultline.h"
#include "flightrec/dump.h"
#include "flightrec/pickle.h"
#include "scan/scan_impl.h"
#include "util/strings.h"

namespace faultline {
namespace {

// Bytes a first look needs: the pickle PROTO opcode, or the '{' after
// leading blanks. Logs fail this look without reading further.
constexpr size_t kFirstLook = 64;

// Appends up to `want` more bytes of `src` to `out`. Errors: the stream's
// (a corrupt frame, the decompression cap), or a fault under the mapping.
absl::Status ReadMore(Source& src, size_t want, std::string& out) {
  if (src.kind() == SourceKind::kMapped) {
    std::string_view all = src.mapped();
    size_t have = std::min(out.size(), all.size());
    size_t n = std::min(want, all.size() - have);
    if (!GuardedRead(all.data(), all.size(), [&] { out.append(all.data() + have, n); })) {
      return absl::DataLossError(StrCat(src.name(), ": the file shrank while it was being read"));
    }
    return absl::OkStatus();
  }
  while (want > 0) {
    size_t before = out.size();
    out.resize(before + std::min<size_t>(want, size_t{1} << 20));
    absl::StatusOr<size_t> n = src.Read(out.data() + before, out.size() - before);
    if (!n.ok()) return n.status();
    out.resize(before + *n);
    if (*n == 0) break;
    want -= *n;
  }
  return absl::OkStatus();
}

bool MayBeDump(std::string_view head) {
  if (flightrec::LooksLikeBinaryPickle(head) || flightrec::LooksLikeUnframedPickle(head)) {
    return true;
  }
  size_t i = head.find_first_not_of(" \t\r\n");
  return i == std::string_view::npos ? false : head[i] == '{';
}

// JSON lines (one object per line) may mention the keys; a dump is one
// document, written on one line or pretty-printed with indented members.
bool LooksLikeJsonLines(std::string_view data) {
  size_t nl = data.find("\n{");
  return nl != std::string_view::npos && nl + 2 < data.size();
}

// Whether a regular file's first bytes rule a dump out, read with one read()
// of kFirstLook bytes: what OpenSource's mapping shows of them, without
// its mmap, madvise and munmap (most of the merging thread's system time
// per file of a many-file archive). Compressed names are left to OpenSource.
bool PlainHeadRulesOut(const std::string& path) {
  if (absl::EndsWithIgnoreCase(path, ".gz") || absl::EndsWithIgnoreCase(path, ".zst")) return false;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return false;
  char head[kFirstLook];
  ssize_t n;
  do {
    n = ::read(fd, head, sizeof head);
  } while (n < 0 && errno == EINTR);
  ::close(fd);
  // A short read of a regular file is its end (MayBeDump looks at what
  // there is); an error is left to OpenSource.
  return n >= 0 && !MayBeDump(std::string_view(head, static_cast<size_t>(n)));
}

}  // namespace

bool Scanner::Impl::HeadRulesOutDump(const std::string& path) { return PlainHeadRulesOut(path); }

bool Scanner::Impl::HeadRulesOutDump(std::string_view head) {
  return !MayBeDump(head.substr(0, std::min(head.size(), kFirstLook)));
}

bool Scanner::Impl::TakeDeferredDump(const Task::BatchItem& item, uint64_t& total_bytes) {
  if (!item.maybe_dump) return false;
  const size_t errors = result.errors.size(), dumps = result.flight_recorder.size();
  const bool dump = TakeFlightRecorderDump(item.source, std::string(item.path));
  // Before everything added since this file was planned, after what earlier
  // files put back.
  const size_t errors_at = std::min(item.errors_at + deferred_errors_, errors);
  std::rotate(result.errors.begin() + static_cast<std::ptrdiff_t>(errors_at),
              result.errors.begin() + static_cast<std::ptrdiff_t>(errors), result.errors.end());
  deferred_errors_ += result.errors.size() - errors;
  const size_t dumps_at = std::min(item.dumps_at + deferred_dumps_, dumps);
  std::rotate(result.flight_recorder.begin() + static_cast<std::ptrdiff_t>(dumps_at),
              result.flight_recorder.begin() + static_cast<std::ptrdiff_t>(dumps), result.flight_recorder.end());
  deferred_dumps_ += result.flight_recorder.size() - dumps;
  if (dump) total_bytes -= std::min(total_bytes, item.size);
  return dump;
}

bool Scanner::Impl::TakeFlightRecorderDump(uint32_t src, const std::string& path) {
  if (PlainHeadRulesOut(path)) return false;
  absl::StatusOr<std::unique_ptr<Source>> opened = OpenSource(path, opts.limits);
  if (!opened.ok()) return false;  // the log path opens it again and says why
  Source& s = **opened;
  std::string data;
  // A head that cannot be read is left to the log path, which says why.
  if (!ReadMore(s, kFirstLook, data).ok() || !MayBeDump(data)) return false;
  if (!ReadMore(s, flightrec::kSniffBytes - data.size(), data).ok()) return false;
  flightrec::DumpSniff sniff = flightrec::SniffFlightRecorderDump(data);
  if (sniff == flightrec::DumpSniff::kNo) return false;
  if (sniff == flightrec::DumpSniff::kJson && LooksLikeJsonLines(data)) return false;
  // The rest, bounded by --max-source-bytes (one byte past it tells), the
  // decompression cap and the pickle reader's own limit.
  const uint64_t cap = opts.limits.max_source_bytes;
  size_t limit = flightrec::PickleLimits{}.max_input_bytes;
  if (cap > 0 && cap < limit) limit = static_cast<size_t>(cap);
  if (data.size() == flightrec::kSniffBytes && data.size() <= limit) {
    if (absl::Status st = ReadMore(s, limit + 1 - data.size(), data); !st.ok()) {
      Fail(src, StrCat(path, ": Flight Recorder dump: ", StatusMessage(st)), FL_ERR_IO);
      return true;
    }
  }
  if (data.size() > limit) {
    Fail(src,
         StrCat(path, ": a Flight Recorder dump longer than the limit of ", limit,
                " bytes per source", cap > 0 ? " (--max-source-bytes)" : "", "; not read"),
         FL_ERR_IO);
    return true;
  }
  absl::StatusOr<flightrec::FrDump> dump = flightrec::ParseFlightRecorderDump(data, path);
  if (absl::IsNotFound(dump.status())) return false;  // well-formed, but no dump: a log
  result.sources[src].bytes = data.size();
  if (!dump.ok()) {
    // "<path>: pickle: ..." / "<path>: json: ...": say what the file was taken for.
    std::string msg = StatusMessage(dump.status());
    if (msg.find("Flight Recorder") == std::string::npos && msg.starts_with(path + ": ")) {
      msg.insert(path.size() + 2, "Flight Recorder dump: ");
    }
    Fail(src, std::move(msg), FL_ERR_PARSE);
    return true;
  }
  if (dump->rank >= 0) result.sources[src].rank = dump->rank;
  result.flight_recorder.push_back(std::move(*dump));
  return true;
}

}  // namespace faultline
