// hs_two_stage: the prototype of a two-stage scan. Stage 1 scans with a
// caseless literal database of anchors (one per line of ANCHORS.txt) and
// collects the lines they hit, coalescing hits less than 256 bytes apart;
// stage 2 runs the full signal database on those ranges only. Prints the
// total and stage-1 speeds, the share of bytes stage 2 had to scan and the
// match count (compare it with hs_set_speed on the full list: a cover that
// misses a signal loses matches). Best of 3 over MAP_POPULATE'd files.
//
//   g++ -O2 -o hs_two_stage hs_two_stage.cc $(pkg-config --cflags --libs libhs)
//   hs_two_stage ANCHORS.txt FULL.tsv FILE...
#include <hs/hs.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>
struct Ctx { const char* base; size_t len; size_t cur_end; std::vector<std::pair<size_t,size_t>>* lines; };
static int cb1(unsigned, unsigned long long, unsigned long long to, unsigned, void* v) {
  Ctx* c = (Ctx*)v; size_t last = to - 1;
  if (!c->lines->empty() && last < c->cur_end) return 0;
  const char* b = c->base; const void* p = memrchr(b, '\n', last); size_t s = p ? (const char*)p - b + 1 : 0;
  const void* e = memchr(b + last, '\n', c->len - last); size_t en = e ? (const char*)e - b : c->len;
  if (!c->lines->empty() && s <= c->lines->back().second + 256) c->lines->back().second = en; else c->lines->push_back({s, en});
  c->cur_end = en; return 0; }
static int cb2(unsigned id, unsigned long long, unsigned long long, unsigned, void* ctx) { ++((size_t*)ctx)[id]; return 0; }
hs_database_t* comp(const char* file, bool lit, size_t* n) {
  std::ifstream in(file); std::string line; std::vector<std::string> pats; std::vector<unsigned> flags, ids;
  while (std::getline(in, line)) { if (lit) { pats.push_back(line); flags.push_back(HS_FLAG_CASELESS); } else { auto t = line.find('\t'); pats.push_back(line.substr(t+1)); flags.push_back(line[0]=='i'?HS_FLAG_CASELESS:0);} ids.push_back(ids.size()); }
  std::vector<const char*> ex; std::vector<size_t> lens; for (auto& p: pats) { ex.push_back(p.c_str()); lens.push_back(p.size()); }
  hs_database_t* db; hs_compile_error_t* err; hs_error_t rc;
  if (lit) rc = hs_compile_lit_multi(ex.data(), flags.data(), ids.data(), lens.data(), ex.size(), HS_MODE_BLOCK, nullptr, &db, &err);
  else rc = hs_compile_multi(ex.data(), flags.data(), ids.data(), ex.size(), HS_MODE_BLOCK, nullptr, &db, &err);
  if (rc != HS_SUCCESS) { fprintf(stderr, "compile %s: %s\n", file, err->message); exit(1); }
  *n = pats.size(); return db; }
int main(int argc, char** argv) {
  size_t na, nf; hs_database_t* a = comp(argv[1], true, &na); hs_database_t* f = comp(argv[2], false, &nf);
  hs_scratch_t *sa = nullptr, *sf = nullptr; hs_alloc_scratch(a, &sa); hs_alloc_scratch(f, &sf);
  std::vector<std::pair<const char*, size_t>> files; size_t total = 0;
  for (int i = 3; i < argc; ++i) { int fd = open(argv[i], O_RDONLY); struct stat st; fstat(fd, &st);
    void* p = mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE|MAP_POPULATE, fd, 0); files.push_back({(const char*)p, (size_t)st.st_size}); total += st.st_size; close(fd);}
  std::vector<size_t> counts(nf); double best = 1e9, b1 = 1e9; size_t candb = 0, ranges = 0;
  std::vector<std::pair<size_t,size_t>> lines;
  for (int rep = 0; rep < 3; ++rep) {
    std::fill(counts.begin(), counts.end(), 0); candb = ranges = 0; double t1 = 0;
    auto t0 = std::chrono::steady_clock::now();
    for (auto& fl: files) { size_t off = 0; while (off < fl.second) { size_t n = std::min<size_t>(16<<20, fl.second-off);
      const void* nl = memrchr(fl.first + off, '\n', n); if (nl && off + n < fl.second) n = (const char*)nl - (fl.first+off) + 1;
      lines.clear(); Ctx c{fl.first+off, n, 0, &lines};
      auto x = std::chrono::steady_clock::now();
      hs_scan(a, fl.first+off, n, 0, sa, cb1, &c);
      t1 += std::chrono::duration<double>(std::chrono::steady_clock::now()-x).count();
      for (auto& l: lines) { ++ranges; candb += l.second - l.first; hs_scan(f, fl.first+off+l.first, l.second-l.first, 0, sf, cb2, counts.data()); }
      off += n; } }
    double t = std::chrono::duration<double>(std::chrono::steady_clock::now()-t0).count(); if (t < best) best = t; if (t1 < b1) b1 = t1; }
  size_t m = 0; for (auto c: counts) m += c;
  printf("anchors %zu: total %.3f GB/s, stage1 %.3f GB/s, ranges %zu, cand bytes %.2f%%, matches %zu\n", na, total/best/1e9, total/b1/1e9, ranges, 100.0*candb/total, m);
}
