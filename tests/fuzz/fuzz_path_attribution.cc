// Path attribution (src/attribution/path.cc) on arbitrary paths: the input
// is one path, tried as given, under a prefix of generic directories, with
// a compression suffix, and with its separators doubled. Oracles beyond no
// crash/UB:
//  - rank and local rank, when set, are non-negative;
//  - the host is what NormalizeHost makes of itself (already normalised),
//    and its text occurs in the path (case-insensitively): attribution
//    never invents a name;
//  - a ".gz"/".zst" suffix on the file changes nothing;
//  - empty components ("a//b") change nothing;
//  - generic leading directories ("/data/logs/run-2026/") change nothing
//    about the rank and local rank (they sit at the file's end).
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>

#include "attribution/attribution.h"
#include "fuzz_util.h"

using namespace faultline;

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool Same(const Attribution& a, const Attribution& b) {
  return a.rank == b.rank && a.local_rank == b.local_rank && a.pid == b.pid && a.host == b.host &&
         a.gpu == b.gpu;
}

std::string Describe(const std::string& path, const Attribution& a, const Attribution& b) {
  auto one = [](const Attribution& x) {
    return "rank=" + (x.rank ? std::to_string(*x.rank) : std::string("-")) +
           " local=" + (x.local_rank ? std::to_string(*x.local_rank) : std::string("-")) +
           " host=" + x.host;
  };
  return path + " : " + one(a) + " vs " + one(b);
}

// The file name (after the last separator), when the path has one that
// carries no compression suffix yet: only then is adding one a no-op.
bool PlainFileName(const std::string& path) {
  size_t sep = path.find_last_of("/\\");
  std::string name = Lower(sep == std::string::npos ? path : path.substr(sep + 1));
  if (name.empty() || name == "." || name == "..") return false;
  for (const char* ext : {".gz", ".zst", ".zstd", ".xz", ".bz2", ".lz4", ".z"}) {
    std::string e(ext);
    if (name.size() >= e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path(reinterpret_cast<const char*>(data), size);
  const Attribution a = AttributeFromPath(path);
  if (a.rank) FL_FUZZ_CHECK(*a.rank >= 0, "negative rank");
  if (a.local_rank) FL_FUZZ_CHECK(*a.local_rank >= 0, "negative local rank");
  FL_FUZZ_CHECK(!a.pid && a.gpu.empty(), "a path named a pid or GPU");
  if (!a.host.empty()) {
    FL_FUZZ_CHECK(NormalizeHost(a.host) == a.host, "host not normalised: " + a.host);
    FL_FUZZ_CHECK(Lower(path).find(Lower(a.host)) != std::string::npos, "host not in the path: " + a.host);
  }

  // A compression suffix on a file (not on a directory path ending in '/').
  if (PlainFileName(path)) {
    for (const char* ext : {".gz", ".zst"}) {
      const Attribution z = AttributeFromPath(path + ext);
      FL_FUZZ_CHECK(Same(a, z), Describe(path + ext, a, z));
    }
  }
  // Doubled separators are empty components.
  if (path.find('/') != std::string::npos) {
    std::string doubled;
    for (char ch : path) {
      doubled += ch;
      if (ch == '/') doubled += '/';
    }
    const Attribution d = AttributeFromPath(doubled);
    FL_FUZZ_CHECK(Same(a, d), Describe(doubled, a, d));
  }
  // Generic directories in front (a relative path only: an absolute one
  // would not be under them).
  if (!path.empty() && path.front() != '/' && path.front() != '\\' &&
      std::count(path.begin(), path.end(), '/') + std::count(path.begin(), path.end(), '\\') < 56) {
    const std::string deep = "data/logs/run-2026/" + path;
    const Attribution g = AttributeFromPath(deep);
    FL_FUZZ_CHECK(g.rank == a.rank && g.local_rank == a.local_rank, Describe(deep, a, g));
  }
  return 0;
}
