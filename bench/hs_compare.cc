// hs_compare: raw block-mode scan throughput of one pattern set, built
// against whichever Hyperscan-API library it is compiled with (Intel
// Hyperscan or Vectorscan), so the two can be compared on the same machine,
// patterns and data. Only <hs/hs.h>: no faultline code, so it links against
// a library extracted from its .deb without installing it (the packages
// conflict). See bench/hyperscan_vs_vectorscan.sh.
//
//   hs_compare PATTERNS.tsv REPEAT FILE...
// PATTERNS.tsv: one "caseless<TAB>pattern" line per signal (caseless 0/1).
#include <fcntl.h>
#include <hs/hs.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

static int OnMatch(unsigned, unsigned long long, unsigned long long, unsigned, void* ctx) {
  ++*static_cast<unsigned long long*>(ctx);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: hs_compare PATTERNS.tsv REPEAT FILE...\n");
    return 1;
  }
  std::ifstream in(argv[1]);
  std::vector<std::string> pats;
  std::vector<unsigned> flags, ids;
  std::string line;
  while (std::getline(in, line)) {
    size_t tab = line.find('\t');
    if (tab == std::string::npos) continue;
    flags.push_back(line.substr(0, tab) == "1" ? HS_FLAG_CASELESS : 0);
    pats.push_back(line.substr(tab + 1));
    ids.push_back(static_cast<unsigned>(ids.size()));
  }
  std::vector<const char*> cp;
  for (auto& p : pats) cp.push_back(p.c_str());
  hs_database_t* db = nullptr;
  hs_compile_error_t* err = nullptr;
  auto c0 = std::chrono::steady_clock::now();
  if (hs_compile_multi(cp.data(), flags.data(), ids.data(), static_cast<unsigned>(cp.size()), HS_MODE_BLOCK,
                       nullptr, &db, &err) != HS_SUCCESS) {
    std::fprintf(stderr, "compile failed: %s (pattern %d)\n", err->message, err->expression);
    return 2;
  }
  double compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
  hs_scratch_t* scratch = nullptr;
  hs_alloc_scratch(db, &scratch);
  int repeat = std::atoi(argv[2]);
  unsigned long long bytes = 0, matches = 0;
  double secs = 0;
  for (int f = 3; f < argc; ++f) {
    int fd = open(argv[f], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) continue;
    size_t len = static_cast<size_t>(st.st_size);
    const char* data = static_cast<const char*>(mmap(nullptr, len, PROT_READ, MAP_PRIVATE, fd, 0));
    close(fd);
    if (data == MAP_FAILED) continue;
    for (int r = 0; r < repeat; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      // 16 MiB line-aligned chunks, as faultline scans.
      size_t pos = 0;
      while (pos < len) {
        size_t end = std::min(len, pos + (size_t{16} << 20));
        while (end < len && data[end - 1] != '\n') ++end;
        hs_scan(db, data + pos, static_cast<unsigned>(end - pos), 0, scratch, OnMatch, &matches);
        pos = end;
      }
      secs += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      bytes += len;
    }
    munmap(const_cast<char*>(data), len);
  }
  std::printf("%s patterns=%zu compile_s=%.3f bytes=%llu seconds=%.3f GB/s=%.3f matches=%llu\n", hs_version(),
              pats.size(), compile_s, bytes, secs, bytes / secs / 1e9, matches);
  return 0;
}
