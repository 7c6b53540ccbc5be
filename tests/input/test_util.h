// Helpers shared by the input module's tests: a scratch directory removed at
// the end of each test, files written in one call, gzip and zstd produced
// with the libraries (not with command-line tools a fresh Debian may lack),
// and a log-like text generator.
#ifndef FAULTLINE_TESTS_INPUT_TEST_UTIL_H_
#define FAULTLINE_TESTS_INPUT_TEST_UTIL_H_

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "input/input.h"

namespace faultline::testing {

class ScratchDir {
 public:
  ScratchDir() {
    char tmpl[] = "/tmp/fl_input_test.XXXXXX";
    const char* dir = mkdtemp(tmpl);
    EXPECT_NE(dir, nullptr);
    path_ = dir != nullptr ? dir : "/tmp";
  }
  ~ScratchDir() {
    std::error_code ec;
    // Undo chmod 000 from tests so removal can descend.
    for (auto it = std::filesystem::recursive_directory_iterator(
             path_, std::filesystem::directory_options::skip_permission_denied,
             ec);
         !ec && it != std::filesystem::recursive_directory_iterator();
         it.increment(ec)) {
      if (it->is_directory(ec) && !it->is_symlink(ec)) {
        chmod(it->path().c_str(), 0755);
      }
    }
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  std::string Sub(const std::string& rel) const {
    return absl::StrCat(path_, "/", rel);
  }

 private:
  std::string path_;
};

inline void WriteFile(const std::string& path, std::string_view data) {
  std::filesystem::create_directories(
      std::filesystem::path(path).parent_path());
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  ASSERT_EQ(std::fwrite(data.data(), 1, data.size(), f), data.size());
  ASSERT_EQ(std::fclose(f), 0);
}

// Log-like lines (timestamps, ranks, NCCL and Xid messages, varying
// numbers), so compressors see realistic entropy.
inline std::string LogText(size_t bytes, uint32_t seed = 1) {
  std::mt19937 engine(seed);
  auto rng = [&engine]() { return static_cast<unsigned>(engine()); };
  std::string out;
  out.reserve(bytes + 256);
  static constexpr const char* kTemplates[] = {
      "[rank%u]:[W %s ProcessGroupNCCL.cpp:%u] Watchdog caught collective "
      "operation timeout: WorkNCCL(SeqNum=%u, OpType=ALLREDUCE, "
      "NumelIn=%u, Timeout(ms)=600000) ran for %u milliseconds\n",
      "node%03u:%u:%u [%u] NCCL INFO Channel %02u/0 : %u[%u] -> %u[%u] via "
      "P2P/IPC/read busId %x000 step %s\n",
      "%s node%03u kernel: NVRM: Xid (PCI:0000:%02x:00): %u, pid=%u, "
      "name=python, Ch %08x\n",
      "%s INFO train.py:%u step=%u loss=%u.%04u lr=%u.%06u tokens/s=%u\n",
  };
  char ts[64];
  char line[512];
  while (out.size() < bytes) {
    const uint32_t r = rng();
    std::snprintf(ts, sizeof ts, "2026-11-02T13:%02u:%02u.%06u",
                  (r >> 8) % 60, (r >> 16) % 60, rng() % 1000000);
    int n = 0;
    switch (r % 4) {
      case 0:
        n = std::snprintf(line, sizeof line, kTemplates[0], rng() % 64, ts,
                          rng() % 2000, rng() % 100000, rng() % (1u << 24),
                          600000 + rng() % 1000);
        break;
      case 1:
        n = std::snprintf(line, sizeof line, kTemplates[1], rng() % 128,
                          rng() % 99999, rng() % 99999, rng() % 8, rng() % 32,
                          rng() % 64, rng() % 8, rng() % 64, rng() % 8,
                          rng() % 256, ts);
        break;
      case 2:
        n = std::snprintf(line, sizeof line, kTemplates[2], ts, rng() % 128,
                          rng() % 256, 79 + rng() % 3, rng() % 99999, rng());
        break;
      default:
        n = std::snprintf(line, sizeof line, kTemplates[3], ts, rng() % 900,
                          rng() % 100000, rng() % 10, rng() % 10000,
                          rng() % 10, rng() % 1000000, rng() % 100000);
        break;
    }
    out.append(line, static_cast<size_t>(n));
  }
  out.resize(bytes);
  return out;
}

// One gzip member (RFC 1952) made with zlib.
inline std::string GzipMember(std::string_view data, int level = 6) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8,
                         Z_DEFAULT_STRATEGY),
            Z_OK);
  std::string out(deflateBound(&zs, data.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// One zstd frame, with a content checksum so corruption is detectable.
inline std::string ZstdFrame(std::string_view data, int level = 3) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  std::string out(ZSTD_compressBound(data.size()), '\0');
  const size_t n =
      ZSTD_compress2(cctx, out.data(), out.size(), data.data(), data.size());
  EXPECT_FALSE(ZSTD_isError(n)) << ZSTD_getErrorName(n);
  ZSTD_freeCCtx(cctx);
  out.resize(ZSTD_isError(n) ? 0 : n);
  return out;
}

// Reads a stream source to the end in pieces of `piece` bytes.
inline absl::StatusOr<std::string> ReadAll(Source& src,
                                           size_t piece = 4 << 20) {
  std::string out;
  std::string buf(piece, '\0');
  for (;;) {
    absl::StatusOr<size_t> n = src.Read(buf.data(), buf.size());
    if (!n.ok()) return n.status();
    if (*n == 0) return out;
    out.append(buf.data(), *n);
  }
}

}  // namespace faultline::testing

#endif  // FAULTLINE_TESTS_INPUT_TEST_UTIL_H_
