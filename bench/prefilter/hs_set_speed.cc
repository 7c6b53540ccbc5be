// hs_set_speed: scan speed of one Hyperscan block-mode database compiled from
// a list of patterns, over files mapped with MAP_POPULATE (page faults are
// kept out of the figure), in 16 MiB pieces, best of 3 by wall and by CPU
// time of the thread (on a shared machine the CPU figure is the one to read). Used to measure how
// the literal matcher's speed depends on the number and kind of literals
// (bench/README.md, "Literal anchors").
//
//   g++ -O2 -o hs_set_speed hs_set_speed.cc $(pkg-config --cflags --libs libhs)
//   hs_set_speed PATTERNS.tsv FILE...     # lines: FLAGS<TAB>PATTERN, FLAGS i=caseless s=singlematch m=multiline, '-' for none
//   PER=1 hs_set_speed ...                # also the match count of each pattern
#include <hs/hs.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>
#include <cstring>
#include <ctime>
static int cb(unsigned id, unsigned long long, unsigned long long, unsigned, void* ctx) { ++((size_t*)ctx)[id]; return 0; }
int main(int argc, char** argv) {
  std::ifstream in(argv[1]); std::string line; std::vector<std::string> pats; std::vector<unsigned> flags, ids;
  while (std::getline(in, line)) { auto t = line.find('\t'); std::string f = line.substr(0, t); pats.push_back(line.substr(t+1));
    unsigned fl = 0; if (f.find('i')!=std::string::npos) fl|=HS_FLAG_CASELESS; if (f.find('s')!=std::string::npos) fl|=HS_FLAG_SINGLEMATCH; if (f.find('m')!=std::string::npos) fl|=HS_FLAG_MULTILINE;
    flags.push_back(fl); ids.push_back(ids.size()); }
  std::vector<const char*> ex; for (auto& p: pats) ex.push_back(p.c_str());
  hs_database_t* db; hs_compile_error_t* err;
  auto t0 = std::chrono::steady_clock::now();
  if (hs_compile_multi(ex.data(), flags.data(), ids.data(), ex.size(), HS_MODE_BLOCK, nullptr, &db, &err) != HS_SUCCESS) { fprintf(stderr, "compile: %s (expr %d)\n", err->message, err->expression); return 1; }
  double ct = std::chrono::duration<double>(std::chrono::steady_clock::now()-t0).count();
  hs_scratch_t* s = nullptr; hs_alloc_scratch(db, &s);
  std::vector<std::pair<const char*, size_t>> files;
  size_t total = 0;
  for (int i = 2; i < argc; ++i) { int fd = open(argv[i], O_RDONLY); struct stat st; fstat(fd, &st);
    void* p = mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE|MAP_POPULATE, fd, 0); files.push_back({(const char*)p, (size_t)st.st_size}); total += st.st_size; close(fd);}
  std::vector<size_t> counts(pats.size());
  double best = 1e9, best_cpu = 1e9;
  auto cpu = [] { timespec ts; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); return ts.tv_sec + ts.tv_nsec * 1e-9; };
  for (int rep = 0; rep < 3; ++rep) {
    std::fill(counts.begin(), counts.end(), 0);
    auto a = std::chrono::steady_clock::now();
    double c0 = cpu();
    for (auto& f: files) { size_t off = 0; while (off < f.second) { size_t n = std::min<size_t>(16<<20, f.second-off); hs_scan(db, f.first+off, n, 0, s, cb, counts.data()); off += n; } }
    double t = std::chrono::duration<double>(std::chrono::steady_clock::now()-a).count(); if (t < best) best = t;
    best_cpu = std::min(best_cpu, cpu() - c0); }
  size_t m = 0; for (auto c: counts) m += c;
  printf("%zu patterns  compile %.2fs  %.3f GB/s  %.3f GB per CPU-s  matches %zu\n", pats.size(), ct, total/best/1e9,
         total/best_cpu/1e9, m);
  if (getenv("PER")) for (size_t i = 0; i < pats.size(); ++i) if (counts[i]) printf("%10zu  %s\n", counts[i], pats[i].c_str());
}
