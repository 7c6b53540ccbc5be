// Decodes files through the input module's Source (ISA-L or zlib for .gz,
// libzstd for .zst, a mapping for plain files) into a 16 MiB buffer (or
// one of --buffer BYTES: the scanner's stream path reads into 2 MiB
// pieces), and prints the bytes and seconds: the decompression stage
// alone, for bench/stage_cpu.py to set next to a scan.
//
//   fl_decode_file [--buffer BYTES] FILE...
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "input/input.h"

int main(int argc, char** argv) {
  size_t size = size_t{16} << 20;
  int first = 1;
  if (argc > 2 && std::strcmp(argv[1], "--buffer") == 0) {
    size = std::strtoull(argv[2], nullptr, 10);
    first = 3;
  }
  if (size == 0) {
    std::fprintf(stderr, "--buffer: a size in bytes\n");
    return 2;
  }
  std::string buf(size, '\0');
  int rc = 0;
  for (int i = first; i < argc; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto src = faultline::OpenSource(argv[i]);
    if (!src.ok()) {
      std::fprintf(stderr, "%s\n", std::string(src.status().message()).c_str());
      rc = 2;
      continue;
    }
    uint64_t total = 0;
    if ((*src)->kind() == faultline::SourceKind::kMapped) {
      total = (*src)->mapped().size();
    } else {
      for (;;) {
        auto n = (*src)->Read(buf.data(), buf.size());
        if (!n.ok()) {
          std::fprintf(stderr, "%s\n", std::string(n.status().message()).c_str());
          rc = 2;
          break;
        }
        if (*n == 0) break;
        total += *n;
      }
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%s: %llu bytes in %.3f s wall\n", argv[i], static_cast<unsigned long long>(total),
                s);
  }
  return rc;
}
