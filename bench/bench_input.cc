// Decompression throughput of the input module on realistic GPU-job log
// text: gzip through zlib and through ISA-L, zstd, and a mapped plain file
// for reference -- each through the real Source path (read() of compressed
// bytes, decode into the caller's 4 MiB buffer), next to the bare library
// call over an in-memory buffer, so the wrapper's overhead shows.
//
// The corpus (~200 MB by default, FL_BENCH_INPUT_MB to change) is generated
// once into $FL_BENCH_DIR (default /tmp/fl_bench_input) and reused; the gzip
// copy is written by zlib level 6, as gzip and logrotate do, the zstd copy at
// level 3, zstd's default. Throughput is decompressed bytes per second.
//
//   bench_input --benchmark_min_time=2

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <string>

#if defined(FL_HAVE_ISAL)
#if __has_include(<isa-l/igzip_lib.h>)
#include <isa-l/igzip_lib.h>
#else
#include <igzip_lib.h>
#endif
#endif

#include "benchmark/benchmark.h"
#include "input/input.h"
#include "input/input_internal.h"

namespace faultline {
namespace {

// Lines as a 64-rank training job leaves them: step lines with slowly
// drifting numbers, NCCL setup and ring lines, watchdog timeouts with stack
// frames, kernel Xid lines, Python logging. Repetitive like real logs (gzip
// shrinks it about 6-8x), not random noise.
std::string MakeLogText(size_t bytes) {
  std::mt19937 engine(20261102);
  auto rng = [&engine](unsigned n) {
    return static_cast<unsigned>(engine() % n);
  };
  std::string out;
  out.reserve(bytes + 1024);
  char line[640];
  double loss = 11.0;
  unsigned step = 0;
  unsigned sec = 0;
  unsigned usec = 0;
  while (out.size() < bytes) {
    usec += 1 + rng(400000);
    if (usec >= 1000000) {
      usec -= 1000000;
      ++sec;
    }
    const unsigned h = 13 + sec / 3600 % 10;
    const unsigned m = sec / 60 % 60;
    const unsigned s = sec % 60;
    const unsigned rank = rng(64);
    const unsigned kind = rng(100);
    int n = 0;
    if (kind < 45) {
      loss = loss * 0.99995 + (static_cast<int>(rng(1000)) - 500) * 1e-5;
      step += rank == 0 ? 1 : 0;
      n = std::snprintf(
          line, sizeof line,
          "[rank%u]:2026-11-02 %02u:%02u:%02u,%03u - INFO - train.py:412 - "
          "step %u | loss %.4f | lr 3.0000e-04 | grad_norm %.3f | "
          "tokens/s %u | mem 71.%u GiB\n",
          rank, h, m, s, usec / 1000, step, loss, 0.8 + rng(400) / 1000.0,
          182000 + rng(9000), rng(10));
    } else if (kind < 75) {
      n = std::snprintf(
          line, sizeof line,
          "node%03u:%u:%u [%u] NCCL INFO Channel %02u/0 : %u[%u] -> %u[%u] "
          "via P2P/IPC/read\n",
          rank / 8, 41000 + rank, 41100 + rank, rank % 8, rng(32), rank,
          rank % 8, (rank + 1) % 64, (rank + 1) % 8);
    } else if (kind < 88) {
      n = std::snprintf(
          line, sizeof line,
          "node%03u:%u:%u [%u] NCCL INFO comm 0x%x rank %u nranks 64 "
          "cudaDev %u busId %x000 commId 0x5f2a91c3e4b7d806 - Init COMPLETE\n",
          rank / 8, 41000 + rank, 41100 + rank, rank % 8,
          0x55d3a000 + rank * 0x40, rank, rank % 8, 0x18 + (rank % 8) * 0x11);
    } else if (kind < 95) {
      n = std::snprintf(
          line, sizeof line,
          "[rank%u]:[E %02u%02u %02u:%02u:%02u.%06u ProcessGroupNCCL.cpp:1316] "
          "[PG 0 Rank %u] Watchdog caught collective operation timeout: "
          "WorkNCCL(SeqNum=%u, OpType=ALLREDUCE, NumelIn=%u, NumelOut=%u, "
          "Timeout(ms)=600000) ran for %u milliseconds before timing out.\n"
          "  frame #0: c10::Error::Error(c10::SourceLocation, std::string) + "
          "0x57 (0x7f%x in /usr/lib/python3/dist-packages/torch/lib/"
          "libc10.so)\n",
          rank, 11, 2, h, m, s, usec, rank, 182331 + step, 262144 << rng(4),
          262144 << rng(4), 600000 + rng(200), 0x3a8b0000 + rng(65536));
    } else {
      n = std::snprintf(
          line, sizeof line,
          "Nov  2 %02u:%02u:%02u node%03u kernel: [%u.%06u] NVRM: Xid "
          "(PCI:0000:%02x:00): %u, pid=%u, name=python3, Ch %08x\n",
          h, m, s, rank / 8, 1000000 + sec, usec, 0x18 + (rank % 8) * 0x11,
          rng(3) == 0 ? 79 : 31, 41000 + rank, rng(64));
    }
    out.append(line, static_cast<size_t>(n));
  }
  out.resize(bytes);
  return out;
}

std::string ReadWholeFile(const std::string& path) {
  std::string out;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return out;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  std::fclose(f);
  return out;
}

void WriteWholeFile(const std::string& path, const std::string& data) {
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (std::fwrite(data.data(), 1, data.size(), f) != data.size()) std::abort();
  std::fclose(f);
  std::filesystem::rename(tmp, path);
}

std::string GzipLevel6(const std::string& text) {
  z_stream zs{};
  deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, text.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = static_cast<uInt>(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  if (deflate(&zs, Z_FINISH) != Z_STREAM_END) std::abort();
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

std::string Zstd3(const std::string& text) {
  std::string out(ZSTD_compressBound(text.size()), '\0');
  const size_t n =
      ZSTD_compress(out.data(), out.size(), text.data(), text.size(), 3);
  if (ZSTD_isError(n)) std::abort();
  out.resize(n);
  return out;
}

struct Corpus {
  std::string dir;
  std::string plain_path, gz_path, zst_path;
  size_t plain_bytes = 0;
};

const Corpus& GetCorpus() {
  static const Corpus corpus = [] {
    Corpus c;
    const char* dir = std::getenv("FL_BENCH_DIR");
    c.dir = dir != nullptr ? dir : "/tmp/fl_bench_input";
    const char* mb = std::getenv("FL_BENCH_INPUT_MB");
    const size_t bytes = size_t{mb != nullptr ? std::strtoul(mb, nullptr, 10)
                                              : 200} << 20;
    std::filesystem::create_directories(c.dir);
    const std::string stem = c.dir + "/job-" + std::to_string(bytes >> 20);
    c.plain_path = stem + ".log";
    c.gz_path = stem + ".log.gz";
    c.zst_path = stem + ".log.zst";
    std::error_code ec;
    if (std::filesystem::file_size(c.plain_path, ec) != bytes ||
        !std::filesystem::exists(c.gz_path) ||
        !std::filesystem::exists(c.zst_path)) {
      std::fprintf(stderr, "generating %zu MiB corpus in %s ...\n",
                   bytes >> 20, c.dir.c_str());
      const std::string text = MakeLogText(bytes);
      WriteWholeFile(c.gz_path, GzipLevel6(text));
      WriteWholeFile(c.zst_path, Zstd3(text));
      WriteWholeFile(c.plain_path, text);
    }
    c.plain_bytes = bytes;
    std::fprintf(stderr, "corpus: %zu bytes; gzip -6 %ju bytes (%.2fx); "
                 "zstd -3 %ju bytes (%.2fx)\n",
                 bytes, std::filesystem::file_size(c.gz_path),
                 double(bytes) / std::filesystem::file_size(c.gz_path),
                 std::filesystem::file_size(c.zst_path),
                 double(bytes) / std::filesystem::file_size(c.zst_path));
    return c;
  }();
  return corpus;
}

constexpr size_t kReadPiece = 4 << 20;  // what the scanner asks for

void DrainSource(benchmark::State& state, Source& src, char* buf) {
  size_t total = 0;
  for (;;) {
    absl::StatusOr<size_t> n = src.Read(buf, kReadPiece);
    if (!n.ok()) {
      state.SkipWithError(std::string(n.status().message()).c_str());
      return;
    }
    if (*n == 0) break;
    benchmark::DoNotOptimize(buf[*n - 1]);
    total += *n;
  }
  if (total != GetCorpus().plain_bytes) state.SkipWithError("size mismatch");
}

void BM_SourceGzip(benchmark::State& state) {
  const auto backend = static_cast<internal::GzipBackend>(state.range(0));
  if (backend == internal::GzipBackend::kIsal && !internal::HaveIsal()) {
    state.SkipWithError("built without ISA-L");
    return;
  }
  const Corpus& c = GetCorpus();
  auto buf = std::make_unique_for_overwrite<char[]>(kReadPiece);
  for (auto _ : state) {
    auto src = internal::OpenGzipFile(c.gz_path, {}, backend);
    if (!src.ok()) {
      state.SkipWithError(std::string(src.status().message()).c_str());
      return;
    }
    DrainSource(state, **src, buf.get());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(c.plain_bytes));
  state.SetLabel(backend == internal::GzipBackend::kIsal ? "isa-l" : "zlib");
}
BENCHMARK(BM_SourceGzip)
    ->Arg(static_cast<int>(internal::GzipBackend::kZlib))
    ->Arg(static_cast<int>(internal::GzipBackend::kIsal))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_SourceZstd(benchmark::State& state) {
  const Corpus& c = GetCorpus();
  auto buf = std::make_unique_for_overwrite<char[]>(kReadPiece);
  for (auto _ : state) {
    auto src = OpenSource(c.zst_path);
    if (!src.ok()) {
      state.SkipWithError(std::string(src.status().message()).c_str());
      return;
    }
    DrainSource(state, **src, buf.get());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(c.plain_bytes));
}
BENCHMARK(BM_SourceZstd)->Unit(benchmark::kMillisecond)->UseRealTime();

// Reference: touching every cache line of a mapped plain file inside one
// GuardedRead (page-cache hot), i.e. what a plain file costs the scanner.
void BM_SourceMapped(benchmark::State& state) {
  const Corpus& c = GetCorpus();
  for (auto _ : state) {
    auto src = OpenSource(c.plain_path);
    if (!src.ok() || (*src)->kind() != SourceKind::kMapped) {
      state.SkipWithError("not mapped");
      return;
    }
    const std::string_view v = (*src)->mapped();
    uint64_t sum = 0;
    GuardedRead(v.data(), v.size(), [&] {
      for (size_t i = 0; i < v.size(); i += 64) {
        sum += static_cast<unsigned char>(v[i]);
      }
    });
    benchmark::DoNotOptimize(sum);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(c.plain_bytes));
}
BENCHMARK(BM_SourceMapped)->Unit(benchmark::kMillisecond)->UseRealTime();

// Bare library calls, whole compressed file in memory, 4 MiB output pieces:
// the ceiling the Source path is measured against.
void BM_RawZlibInflate(benchmark::State& state) {
  const Corpus& c = GetCorpus();
  const std::string gz = ReadWholeFile(c.gz_path);
  auto out = std::make_unique_for_overwrite<unsigned char[]>(kReadPiece);
  for (auto _ : state) {
    z_stream zs{};
    inflateInit2(&zs, 15 + 32);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
    zs.avail_in = static_cast<uInt>(gz.size());
    int rc = Z_OK;
    while (rc == Z_OK) {
      zs.next_out = out.get();
      zs.avail_out = kReadPiece;
      rc = inflate(&zs, Z_NO_FLUSH);
      benchmark::DoNotOptimize(out[0]);
    }
    if (rc != Z_STREAM_END) state.SkipWithError("inflate failed");
    inflateEnd(&zs);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(c.plain_bytes));
}
BENCHMARK(BM_RawZlibInflate)->Unit(benchmark::kMillisecond)->UseRealTime();

#if defined(FL_HAVE_ISAL)
void BM_RawIsalInflate(benchmark::State& state) {
  const Corpus& c = GetCorpus();
  std::string gz = ReadWholeFile(c.gz_path);
  auto out = std::make_unique_for_overwrite<unsigned char[]>(kReadPiece);
  auto st = std::make_unique<inflate_state>();
  for (auto _ : state) {
    isal_inflate_init(st.get());
    st->crc_flag = ISAL_GZIP;
    st->next_in = reinterpret_cast<uint8_t*>(gz.data());
    st->avail_in = static_cast<uint32_t>(gz.size());
    while (st->block_state != ISAL_BLOCK_FINISH) {
      st->next_out = out.get();
      st->avail_out = kReadPiece;
      if (isal_inflate(st.get()) != ISAL_DECOMP_OK) {
        state.SkipWithError("isal_inflate failed");
        break;
      }
      benchmark::DoNotOptimize(out[0]);
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(c.plain_bytes));
}
BENCHMARK(BM_RawIsalInflate)->Unit(benchmark::kMillisecond)->UseRealTime();
#endif

void BM_RawZstdDecompress(benchmark::State& state) {
  const Corpus& c = GetCorpus();
  const std::string zst = ReadWholeFile(c.zst_path);
  auto out = std::make_unique_for_overwrite<char[]>(kReadPiece);
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  for (auto _ : state) {
    ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
    ZSTD_inBuffer ib{zst.data(), zst.size(), 0};
    size_t rc = 1;
    while (rc != 0) {
      ZSTD_outBuffer ob{out.get(), kReadPiece, 0};
      rc = ZSTD_decompressStream(dctx, &ob, &ib);
      if (ZSTD_isError(rc)) {
        state.SkipWithError(ZSTD_getErrorName(rc));
        break;
      }
      benchmark::DoNotOptimize(out[0]);
    }
  }
  ZSTD_freeDCtx(dctx);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(c.plain_bytes));
}
BENCHMARK(BM_RawZstdDecompress)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace faultline

BENCHMARK_MAIN();
