// hs_serialized_speed: the database alone, without its compile. `ser`
// compiles a pattern list (as hs_set_speed reads it: FLAGS<TAB>PATTERN, i
// caseless, s single-match, m multiline) and writes the serialized block-mode
// database; `scan` maps a file (MAP_POPULATE) and scans it with each of the
// serialized databases in turn, ROUNDS times, interleaved (every database
// once per round), in 16 MiB pieces, and prints per database the median,
// slowest and fastest GB per CPU-s of the scanning thread. Under callgrind
// (--toggle-collect='*hs_scan') one round counts the scan's instructions
// only (bench/README.md, "the database alone, second pass" and "third pass").
//
//   g++ -O2 -o hs_serialized_speed hs_serialized_speed.cc $(pkg-config --cflags --libs libhs)
//   hs_serialized_speed ser PATTERNS.tsv OUT.db
//   hs_serialized_speed scan ROUNDS FILE A.db B.db ...
#include <hs/hs.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
static int cb(unsigned, unsigned long long, unsigned long long, unsigned, void* c) { ++*(size_t*)c; return 0; }
static double cpu() { timespec ts; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); return ts.tv_sec + ts.tv_nsec * 1e-9; }
int main(int argc, char** argv) {
  if (argc < 4 || (strcmp(argv[1], "ser") != 0 && (strcmp(argv[1], "scan") != 0 || argc < 5))) {
    fprintf(stderr, "usage: %s ser PATTERNS.tsv OUT.db | %s scan ROUNDS FILE DB...\n", argv[0], argv[0]);
    return 2;
  }
  if (!strcmp(argv[1], "ser")) {
    std::ifstream in(argv[2]); std::string line; std::vector<std::string> pats; std::vector<unsigned> flags, ids;
    while (std::getline(in, line)) { auto t = line.find('\t'); std::string f = line.substr(0, t); pats.push_back(line.substr(t+1));
      unsigned fl = 0; if (f.find('i')!=std::string::npos) fl|=HS_FLAG_CASELESS; if (f.find('s')!=std::string::npos) fl|=HS_FLAG_SINGLEMATCH; if (f.find('m')!=std::string::npos) fl|=HS_FLAG_MULTILINE;
      flags.push_back(fl); ids.push_back(ids.size()); }
    std::vector<const char*> ex; for (auto& p: pats) ex.push_back(p.c_str());
    hs_database_t* db; hs_compile_error_t* err;
    if (hs_compile_multi(ex.data(), flags.data(), ids.data(), ex.size(), HS_MODE_BLOCK, nullptr, &db, &err) != HS_SUCCESS) { fprintf(stderr, "compile: %s (expr %d)\n", err->message, err->expression); return 1; }
    char* bytes; size_t n; hs_serialize_database(db, &bytes, &n);
    std::ofstream(argv[3], std::ios::binary).write(bytes, n); return 0;
  }
  int rounds = atoi(argv[2]);
  int fd = open(argv[3], O_RDONLY); struct stat st; fstat(fd, &st);
  const char* p = (const char*)mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE|MAP_POPULATE, fd, 0); size_t total = st.st_size;
  std::vector<hs_database_t*> dbs; std::vector<hs_scratch_t*> ss;
  for (int i = 4; i < argc; ++i) { std::ifstream f(argv[i], std::ios::binary); std::stringstream b; b << f.rdbuf(); std::string s = b.str();
    hs_database_t* db = nullptr; if (hs_deserialize_database(s.data(), s.size(), &db) != HS_SUCCESS) { fprintf(stderr, "bad %s\n", argv[i]); return 1; }
    hs_scratch_t* sc = nullptr; hs_alloc_scratch(db, &sc); dbs.push_back(db); ss.push_back(sc); }
  std::vector<std::vector<double>> t(dbs.size()); std::vector<size_t> m(dbs.size());
  for (int r = 0; r < rounds; ++r) for (size_t d = 0; d < dbs.size(); ++d) {
    size_t c = 0; double c0 = cpu();
    for (size_t off = 0; off < total;) { size_t n = std::min<size_t>(16 << 20, total - off); hs_scan(dbs[d], p + off, n, 0, ss[d], cb, &c); off += n; }
    t[d].push_back(cpu() - c0); m[d] = c; }
  for (size_t d = 0; d < dbs.size(); ++d) { auto v = t[d]; std::sort(v.begin(), v.end());
    printf("%-40s median %.3f GB per CPU-s (min %.3f max %.3f)  matches %zu\n", argv[4 + d], total / v[v.size()/2] / 1e9, total / v.back() / 1e9, total / v.front() / 1e9, m[d]); }
}
