// fl_hs_raw: the ceiling of a faultline scan -- the ruleset's own Hyperscan
// database (every signal, the same flags) run with hs_scan over the same
// files and nothing else: no line attribution, no RE2, no evidence. The
// callback only counts. Files are mapped and cut at line boundaries into
// --chunk-mb chunks that --threads threads scan, as faultline does.
//
// It also answers "which signals cost the most": --per-signal times each
// signal's pattern alone over a sample of the input (`alone`), and the full
// database minus that one signal (`minus`: what dropping it would save), and
// --dump-patterns writes the patterns for the peer tools (grep, rg, Python).
//
//   fl_hs_raw [--rules PATH] [--threads N] [--chunk-mb N] PATH...
//   fl_hs_raw [--rules PATH] --dump-patterns OUT.tsv
//   fl_hs_raw [--rules PATH] --per-signal alone|minus|re2 [--sample-mb N] PATH...
//
// `re2` times phase B's regex work instead: RE2 confirm + extract of each
// signal on the lines it matched in the sample.
//
// Without --rules the embedded default ruleset is used.
#include <fcntl.h>
#include <hs/hs.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "input/input.h"
#include "ruleset/ruleset.h"
#include "scan/signal_cost.h"

namespace {

using faultline::Ruleset;

struct Mapped {
  std::string path;
  const char* data = nullptr;
  size_t size = 0;
};

struct Chunk {
  const char* data;
  size_t size;
};

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// CPU seconds of the calling thread: on a shared machine wall time mostly
// measures the neighbours.
double ThreadCpu() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

bool MapFile(const std::string& path, Mapped& m) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return false;
  }
  m.path = path;
  m.size = static_cast<size_t>(st.st_size);
  if (m.size > 0) {
    void* p = ::mmap(nullptr, m.size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      return false;
    }
    ::madvise(p, m.size, MADV_SEQUENTIAL);
    m.data = static_cast<const char*>(p);
  }
  ::close(fd);
  return true;
}

std::vector<Chunk> Cut(const Mapped& m, size_t chunk) {
  std::vector<Chunk> out;
  size_t pos = 0;
  while (pos < m.size) {
    size_t end = std::min(m.size, pos + chunk);
    if (end < m.size) {
      const void* nl = std::memchr(m.data + end, '\n', m.size - end);
      end = nl ? static_cast<size_t>(static_cast<const char*>(nl) - m.data) + 1 : m.size;
    }
    out.push_back({m.data + pos, end - pos});
    pos = end;
  }
  return out;
}

struct Counts {
  std::vector<uint64_t> per_id;
  uint64_t total = 0;
};

int OnMatch(unsigned id, unsigned long long, unsigned long long, unsigned, void* ctx) {
  auto* c = static_cast<Counts*>(ctx);
  if (id < c->per_id.size()) ++c->per_id[id];
  ++c->total;
  return 0;
}

struct Times {
  double wall = 0, cpu = 0;  // cpu: summed over the scanning threads
};

// Scans the chunks on `threads` threads.
Times ScanAll(const hs_database_t* db, const std::vector<Chunk>& chunks, unsigned threads,
              size_t nids, Counts& total) {
  std::atomic<size_t> next{0};
  std::vector<Counts> per(threads);
  std::vector<double> cpu(threads, 0);
  std::vector<std::thread> ts;
  double t0 = Now();
  for (unsigned t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      hs_scratch_t* scratch = nullptr;
      if (hs_alloc_scratch(db, &scratch) != HS_SUCCESS) std::abort();
      per[t].per_id.assign(nids, 0);
      double c0 = ThreadCpu();
      for (size_t i; (i = next++) < chunks.size();) {
        hs_scan(db, chunks[i].data, static_cast<unsigned>(chunks[i].size), 0, scratch, OnMatch,
                &per[t]);
      }
      cpu[t] = ThreadCpu() - c0;
      hs_free_scratch(scratch);
    });
  }
  for (auto& th : ts) th.join();
  Times secs;
  secs.wall = Now() - t0;
  for (double c : cpu) secs.cpu += c;
  total.per_id.assign(nids, 0);
  for (const Counts& c : per) {
    total.total += c.total;
    for (size_t i = 0; i < nids && i < c.per_id.size(); ++i) total.per_id[i] += c.per_id[i];
  }
  return secs;
}

struct Sig {
  std::string name;  // rule/signal
  std::string pattern;
  std::string hs_expr;  // what the database holds: the prefilter, or the pattern
  unsigned flags = 0;
  std::string role;
};

std::vector<Sig> Signals(const Ruleset& rs) {
  std::vector<Sig> out;
  for (uint32_t i = 0; i < rs.signal_count(); ++i) {
    const auto& si = rs.signal(i);
    Sig s;
    s.name = si.rule->id()->str() + "/" + si.signal->id()->str();
    s.pattern = si.signal->pattern()->str();
    s.hs_expr = si.signal->prefilter() ? si.signal->prefilter()->str() : s.pattern;
    s.flags = faultline::SignalHsFlags(si.signal->caseless());
    s.role = faultline::RoleName(si.role);
    out.push_back(std::move(s));
  }
  return out;
}

hs_database_t* Compile(const std::vector<Sig>& sigs, const std::vector<size_t>& which) {
  std::vector<const char*> exprs;
  std::vector<unsigned> flags, ids;
  for (size_t i : which) {
    exprs.push_back(sigs[i].hs_expr.c_str());
    flags.push_back(sigs[i].flags);
    ids.push_back(static_cast<unsigned>(i));
  }
  hs_database_t* db = nullptr;
  hs_compile_error_t* err = nullptr;
  if (hs_compile_multi(exprs.data(), flags.data(), ids.data(), static_cast<unsigned>(exprs.size()),
                       HS_MODE_BLOCK, nullptr, &db, &err) != HS_SUCCESS) {
    std::fprintf(stderr, "fl_hs_raw: compile failed: %s\n", err ? err->message : "?");
    hs_free_compile_error(err);
    return nullptr;
  }
  return db;
}

int Usage() {
  std::fputs(
      "usage: fl_hs_raw [--rules PATH] [--threads N] [--chunk-mb N] [--repeat N] PATH...\n"
      "       fl_hs_raw [--rules PATH] --dump-patterns OUT.tsv\n"
      "       fl_hs_raw [--rules PATH] --dump-database OUT.tsv\n"
      "       fl_hs_raw [--rules PATH] --per-signal alone|minus|re2 [--sample-mb N] PATH...\n",
      stderr);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string rules, dump, dump_db, per_signal;
  unsigned threads = 1;
  size_t chunk_mb = 16, sample_mb = 256;
  int repeat = 1;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto val = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "--rules" && (v = val())) rules = v;
    else if (a == "--threads" && (v = val())) threads = static_cast<unsigned>(std::atoi(v));
    else if (a == "--chunk-mb" && (v = val())) chunk_mb = std::strtoul(v, nullptr, 10);
    else if (a == "--sample-mb" && (v = val())) sample_mb = std::strtoul(v, nullptr, 10);
    else if (a == "--repeat" && (v = val())) repeat = std::atoi(v);
    else if (a == "--dump-patterns" && (v = val())) dump = v;
    else if (a == "--dump-database" && (v = val())) dump_db = v;
    else if (a == "--per-signal" && (v = val())) per_signal = v;
    else if (!a.empty() && a[0] == '-' && a != "-") return Usage();
    else paths.emplace_back(a);
  }
  if (threads < 1 || chunk_mb < 1 || repeat < 1) return Usage();
  if (!per_signal.empty() && per_signal != "alone" && per_signal != "minus" && per_signal != "re2") return Usage();
  auto loaded = rules.empty() ? Ruleset::LoadDefault() : Ruleset::LoadFile(rules);
  if (!loaded.ok()) {
    std::fprintf(stderr, "fl_hs_raw: %s\n", std::string(loaded.status().message()).c_str());
    return 2;
  }
  const Ruleset& rs = **loaded;
  std::vector<Sig> sigs = Signals(rs);

  if (!dump.empty()) {
    FILE* f = std::fopen(dump.c_str(), "w");
    if (!f) return 2;
    std::fprintf(f, "id\tsignal\trole\tcaseless\tpattern\n");
    for (size_t i = 0; i < sigs.size(); ++i) {
      std::fprintf(f, "%zu\t%s\t%s\t%d\t%s\n", i, sigs[i].name.c_str(), sigs[i].role.c_str(),
                   (sigs[i].flags & HS_FLAG_CASELESS) ? 1 : 0, sigs[i].pattern.c_str());
    }
    std::fclose(f);
    std::fprintf(stderr, "wrote %zu patterns to %s\n", sigs.size(), dump.c_str());
    return 0;
  }
  if (!dump_db.empty()) {
    // bench/prefilter/hs_set_speed's input: FLAGS<TAB>EXPRESSION, one line
    // per signal, as the database holds it (prefilters included).
    FILE* f = std::fopen(dump_db.c_str(), "w");
    if (!f) return 2;
    // Every signal is multiline (SignalHsFlags); "i" marks the caseless ones.
    for (const Sig& s : sigs) {
      std::fprintf(f, "%s\t%s\n", (s.flags & HS_FLAG_CASELESS) ? "im" : "m", s.hs_expr.c_str());
    }
    std::fclose(f);
    std::fprintf(stderr, "wrote %zu expressions to %s\n", sigs.size(), dump_db.c_str());
    return 0;
  }
  if (paths.empty()) return Usage();

  std::vector<Mapped> maps;
  uint64_t bytes = 0;
  for (const std::string& p : paths) {
    auto files = faultline::ExpandPath(p);
    if (!files.ok()) {
      std::fprintf(stderr, "fl_hs_raw: %s\n", std::string(files.status().message()).c_str());
      return 2;
    }
    for (const std::string& f : *files) {
      Mapped m;
      if (!MapFile(f, m)) {
        std::fprintf(stderr, "fl_hs_raw: %s: cannot map\n", f.c_str());
        return 2;
      }
      bytes += m.size;
      maps.push_back(m);
    }
  }

  if (per_signal == "alone" || per_signal == "re2") {
    // The library's measurement, as `faultline bench --costs` prints it:
    // each pattern alone in Hyperscan, and phase B's RE2 confirm + extract
    // on the lines each signal matched.
    auto costs = faultline::MeasureSignalCosts(rs, paths, static_cast<uint64_t>(sample_mb) << 20);
    if (!costs.ok()) {
      std::fprintf(stderr, "fl_hs_raw: %s\n", std::string(costs.status().message()).c_str());
      return 2;
    }
    const double gb = static_cast<double>(costs->sample_bytes) / 1e9;
    std::vector<faultline::SignalCost> rows = costs->signals;
    if (per_signal == "re2") {
      auto total = [](const faultline::SignalCost& c) { return c.confirm_us_per_line * 1e-6 * c.lines; };
      std::stable_sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) { return total(a) > total(b); });
      double sum = 0;
      for (const auto& c : rows) sum += total(c);
      std::printf("sample: %llu bytes; RE2 confirm + extract on matched lines: %.4f CPU s (%.3f s/GB)\n"
                  "per signal, costliest first (CPU s, s/GB, matched lines, us per line):\n",
                  static_cast<unsigned long long>(costs->sample_bytes), sum, sum / gb);
      for (const auto& c : rows) {
        if (c.lines == 0) break;
        std::printf("  %8.4f s  %7.3f s/GB  %9llu lines  %6.2f us  %-10s %s\n", total(c), total(c) / gb,
                    static_cast<unsigned long long>(c.lines), c.confirm_us_per_line,
                    sigs[c.signal].role.c_str(), sigs[c.signal].name.c_str());
      }
      return 0;
    }
    std::printf("sample: %llu bytes; full database: %.4f CPU s (%.3f GB/s)\n"
                "CPU seconds (s/GB) scanning the sample with the signal alone, costliest first:\n",
                static_cast<unsigned long long>(costs->sample_bytes), costs->full_s_per_gb * gb,
                1 / costs->full_s_per_gb);
    for (const auto& c : rows) {
      std::printf("  %8.4f s  %7.3f s/GB  %9llu lines  %-10s %s\n", c.alone_s_per_gb * gb, c.alone_s_per_gb,
                  static_cast<unsigned long long>(c.lines), sigs[c.signal].role.c_str(),
                  sigs[c.signal].name.c_str());
    }
    return 0;
  }
  if (per_signal == "minus") {
    // A line-aligned sample of the input, copied into one buffer: the same
    // share of every file (from its start), so a directory's mix of files
    // is kept.
    std::string sample;
    size_t cap = sample_mb << 20;
    double share = bytes > cap ? static_cast<double>(cap) / static_cast<double>(bytes) : 1.0;
    for (const Mapped& m : maps) {
      size_t take = std::min(m.size, static_cast<size_t>(static_cast<double>(m.size) * share) + 1);
      if (take < m.size) {
        const void* nl = std::memchr(m.data + take, '\n', m.size - take);
        take = nl ? static_cast<size_t>(static_cast<const char*>(nl) - m.data) + 1 : m.size;
      }
      sample.append(m.data, take);
    }
    std::vector<Chunk> chunks = Cut(Mapped{"sample", sample.data(), sample.size()}, chunk_mb << 20);
    auto time_db = [&](hs_database_t* db) {
      Counts c;
      double best = 1e30;
      for (int r = 0; r < 3; ++r) {
        Counts cc;
        best = std::min(best, ScanAll(db, chunks, 1, sigs.size(), cc).cpu);
        c = cc;
      }
      return std::make_pair(best, c);
    };
    std::vector<size_t> all(sigs.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    hs_database_t* full = Compile(sigs, all);
    if (!full) return 2;
    auto [full_s, full_c] = time_db(full);
    hs_free_database(full);
    std::printf("sample: %zu bytes; full database: %.4f CPU s (%.3f GB/s), %llu callbacks\n",
                sample.size(), full_s, sample.size() / full_s / 1e9,
                static_cast<unsigned long long>(full_c.total));
    struct Row {
      size_t id;
      double secs;
      uint64_t hits;
    };
    std::vector<Row> rows;
    for (size_t i = 0; i < sigs.size(); ++i) {
      std::vector<size_t> which;
      for (size_t k = 0; k < sigs.size(); ++k) {
        if (k != i) which.push_back(k);
      }
      hs_database_t* db = Compile(sigs, which);
      if (!db) return 2;
      auto [s, c] = time_db(db);
      hs_free_database(db);
      rows.push_back({i, full_s - s, full_c.per_id[i]});
      std::fprintf(stderr, "\r%zu/%zu", i + 1, sigs.size());
    }
    std::fprintf(stderr, "\n");
    std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.secs > b.secs; });
    std::printf("CPU seconds saved (s/GB) by removing the signal from the full database (best of 3; "
                "noise ~ +-3%% of the full time), costliest first:\n");
    for (const Row& r : rows) {
      std::printf("  %8.4f s  %7.3f s/GB  %9llu hits  %-10s %s\n", r.secs, r.secs / sample.size() * 1e9,
                  static_cast<unsigned long long>(r.hits), sigs[r.id].role.c_str(),
                  sigs[r.id].name.c_str());
    }
    return 0;
  }

  std::vector<Chunk> chunks;
  for (const Mapped& m : maps) {
    for (const Chunk& c : Cut(m, chunk_mb << 20)) chunks.push_back(c);
  }
  Counts c;
  Times secs;
  for (int r = 0; r < repeat; ++r) {
    Counts cc;
    Times t = ScanAll(rs.database(), chunks, threads, sigs.size(), cc);
    secs.wall += t.wall;
    secs.cpu += t.cpu;
    c = cc;
  }
  double total = static_cast<double>(bytes) * repeat;
  std::printf("bytes:     %.0f\nseconds:   %.3f\nGB/s:      %.3f\ncpu s:     %.3f\n"
              "GB/cpu-s:  %.3f\nthreads:   %u\ncallbacks: %llu\n",
              total, secs.wall, total / secs.wall / 1e9, secs.cpu, total / secs.cpu / 1e9, threads,
              static_cast<unsigned long long>(c.total));
  std::vector<size_t> order(sigs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return c.per_id[a] > c.per_id[b]; });
  std::printf("callbacks per signal (most first):\n");
  for (size_t i : order) {
    if (c.per_id[i] == 0) break;
    std::printf("  %12llu  %s\n", static_cast<unsigned long long>(c.per_id[i]), sigs[i].name.c_str());
  }
  return 0;
}
