#include "cli/watch.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "flightrec/dump.h"
#include "flightrec/pickle.h"
#include "util/json.h"

namespace faultline::cli {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitInput = 2;
constexpr int kExitIncident = 3;

// A partial line longer than this is passed on without its end (the library
// cuts lines at its own maximum anyway), so one endless line cannot grow the
// buffer without bound.
constexpr size_t kMaxPartial = size_t{4} << 20;
// Initiating evidence records printed per incident event.
constexpr size_t kMaxPrintedEvidence = 8;
// A compressed file whose first kHeadBytes (decompressed) are those of a
// file already followed is that file rotated and compressed (logrotate's
// compress), and is not read again: its lines would form the same
// incidents again under another source, hence other ids.
constexpr size_t kHeadBytes = 4096;
constexpr size_t kMaxRetiredHeads = 256;

volatile sig_atomic_t g_stop = 0;
int g_wake_fd = -1;  // write end of the self-pipe that wakes poll()

extern "C" void OnStopSignal(int) {
  g_stop = 1;
  if (g_wake_fd >= 0) {
    char c = 0;
    ssize_t n = write(g_wake_fd, &c, 1);
    (void)n;
  }
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string Rfc3339(int64_t us) {
  time_t secs = static_cast<time_t>(us / 1000000);
  struct tm tm;
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(us % 1000000));
  return buf;
}

int64_t WallNowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void AppendJsonStringOrNull(std::string& out, const char* s) {
  if (s) {
    AppendJsonString(out, s);
  } else {
    out += "null";
  }
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool Compressed(std::string_view name) { return EndsWith(name, ".gz") || EndsWith(name, ".zst"); }

// Up to kHeadBytes of a compressed file, decompressed; empty when it cannot
// be read (the library reports why when it reads the file).
std::string DecompressedHead(const std::string& path) {
  std::string out;
  if (EndsWith(path, ".gz")) {
    gzFile f = gzopen(path.c_str(), "rb");
    if (!f) return out;
    out.resize(kHeadBytes);
    int n = gzread(f, out.data(), static_cast<unsigned>(out.size()));
    gzclose(f);
    out.resize(n > 0 ? static_cast<size_t>(n) : 0);
    return out;
  }
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return out;
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  std::string in(16384, '\0');
  out.resize(kHeadBytes);
  ZSTD_outBuffer ob{out.data(), out.size(), 0};
  size_t got;
  while (ob.pos < ob.size && (got = std::fread(in.data(), 1, in.size(), f)) > 0) {
    ZSTD_inBuffer ib{in.data(), got, 0};
    while (ib.pos < ib.size && ob.pos < ob.size) {
      if (ZSTD_isError(ZSTD_decompressStream(dctx, &ob, &ib))) {
        ob.pos = 0;
        ob.size = 0;
        break;
      }
    }
  }
  ZSTD_freeDCtx(dctx);
  std::fclose(f);
  out.resize(ob.pos);
  return out;
}

struct FileKey {
  dev_t dev = 0;
  ino_t ino = 0;
  auto operator<=>(const FileKey&) const = default;
};

FileKey KeyOf(const struct stat& st) { return {st.st_dev, st.st_ino}; }

// One followed input. A plain file or standard input yields one logical
// stream that goes on across rotation and truncation: line numbers count in
// it from where the watch started. A compressed file is handed whole to the
// library once.
struct Input {
  std::string name;  // the source name: the path as given or found, "-"
  bool is_stdin = false;
  bool once = false;  // .gz/.zst, or a Flight Recorder dump
  // Plain files: whether the head has been looked at for a Flight Recorder
  // dump yet (Classify), and the size at the last look while undecided.
  bool classified = false;
  bool dump = false;
  int64_t sniff_size = -1;
  uint64_t dump_size = 0;  // dumps: the size read
  int fd = -1;
  FileKey key;
  uint64_t pos = 0;     // read position in the open file
  std::string partial;  // bytes after the last newline read
  std::string head;     // the open file's first kHeadBytes bytes
  uint64_t fed_bytes = 0, fed_lines = 0;  // complete lines passed on so far
  bool eof = false;                       // standard input ended
  int64_t last_size = -1;                 // once-files: size at the last look
  bool done = false;                      // once-files: read
  bool error_reported = false;
};

// A session and where each input's stream in it starts in the input's
// logical stream, to map the report's line numbers back.
struct Generation {
  fl_session* s = nullptr;
  uint64_t bytes = 0;
  struct Stream {
    uint32_t id;
    uint64_t base_lines, base_bytes;
  };
  std::map<const Input*, Stream> streams;
  ~Generation() { fl_session_free(s); }
};

// What was last printed of an incident: it is printed again only when one
// of these grows.
struct Printed {
  double confidence;
  size_t initiating;
  size_t collateral;  // clusters
  size_t collateral_ranks;
  // What a consumer acts on: the initiating rank and host, learned as
  // lines arrive, and the action they decide ("" when none).
  int64_t rank;
  std::string host;
  std::string action;
};

struct Job {
  std::string name;
  std::vector<std::string> roots;
  std::vector<std::unique_ptr<Input>> inputs;
  std::map<std::string, Input*> by_name;
  std::set<FileKey> seen;  // every file followed or read, by identity
  std::deque<std::pair<std::string, std::string>> retired_heads;  // name, head
  std::vector<std::unique_ptr<Generation>> gens;  // [0] is the one reported
  uint64_t sessions_started = 0, bytes = 0, rotations = 0, truncations = 0;
  bool dirty = false;
  double last_correlate = -1e300;
  std::map<std::string, Printed> incidents;
  bool any_incident = false;
};

class Watcher {
 public:
  Watcher(const fl_ruleset* rs, const WatchOptions& o) : rs_(rs), o_(o) {}
  ~Watcher() {
    for (auto& j : jobs_) {
      for (auto& in : j->inputs) {
        if (in->fd >= 0 && !in->is_stdin) close(in->fd);
      }
    }
    if (inotify_fd_ >= 0) close(inotify_fd_);
  }
  int Run();

 private:
  bool Start();
  void Pass(bool first, bool correlate = true);
  void Discover(Job& j);
  void WalkDir(Job& j, const std::string& dir, int depth);
  Input* AddInput(Job& j, const std::string& name, const struct stat& st);
  void ReadFile(Job& j, Input& in);
  void ReadStdin(Job& j, Input& in);
  void ReadOnce(Job& j, Input& in, bool first);
  bool Classify(Input& in, bool first);
  void AddOnce(Generation& g, Input& in, uint64_t size);
  bool OpenFile(Job& j, Input& in);
  void ReadToEof(Job& j, Input& in);
  void Take(Job& j, Input& in, std::string_view data);
  void EndLine(Job& j, Input& in);
  void Feed(Job& j, Input& in, std::string_view lines);
  bool NewGeneration(Job& j);
  void Recycle(Job& j);
  void Correlate(Job& j, bool final);
  void Emit(const std::string& s);
  void InputError(Input& in, const std::string& msg);
  void Watch(const std::string& dir);
  // Keeps the head of the file an input leaves (rotation, truncation) to
  // recognise its compressed copy.
  void Retire(Job& j, Input& in) {
    if (!in.head.empty()) j.retired_heads.emplace_back(in.name, std::move(in.head));
    if (j.retired_heads.size() > kMaxRetiredHeads) j.retired_heads.pop_front();
    in.head.clear();
  }
  // The input whose file a compressed file is a copy of, or nullptr.
  const std::string* CopyOf(const Job& j, const std::string& head) const {
    if (head.empty()) return nullptr;
    for (const auto& in : j.inputs) {
      if (!in->once && in->head == head) return &in->name;
    }
    for (const auto& [name, h] : j.retired_heads) {
      if (h == head) return &name;
    }
    return nullptr;
  }
  void Notice(const std::string& name, const char* what) {
    std::fprintf(stderr, "faultline watch: %s: %s\n", name.c_str(), what);
  }

  const fl_ruleset* rs_;
  const WatchOptions& o_;
  std::vector<std::unique_ptr<Job>> jobs_;
  int inotify_fd_ = -1;
  std::set<std::string> watched_dirs_;
  bool input_errors_ = false;
  bool output_error_ = false;
  bool have_stdin_ = false;
  bool started_ = false;  // the first pass is done: inputs found now are new
  int stdin_flags_ = -1;  // standard input's flags before the watch
  size_t chunk_ = 0;
};

void Watcher::Emit(const std::string& s) {
  if (output_error_) return;
  if (std::fwrite(s.data(), 1, s.size(), stdout) != s.size() || std::fflush(stdout) != 0) {
    std::fprintf(stderr, "faultline watch: cannot write standard output: %s\n", std::strerror(errno));
    output_error_ = true;
    g_stop = 1;
  }
}

void Watcher::InputError(Input& in, const std::string& msg) {
  input_errors_ = true;
  if (in.error_reported) return;
  in.error_reported = true;
  std::fprintf(stderr, "faultline watch: %s: %s\n", in.name.c_str(), msg.c_str());
}

void Watcher::Watch(const std::string& dir) {
  if (inotify_fd_ < 0 || !watched_dirs_.insert(dir).second) return;
  // Events on a directory cover the files in it: writes, creations, renames.
  // A failure (the watch limit) leaves that directory to the polling.
  (void)inotify_add_watch(inotify_fd_, dir.c_str(),
                          IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE |
                              IN_CLOSE_WRITE | IN_ATTRIB);
}

Input* Watcher::AddInput(Job& j, const std::string& name, const struct stat& st) {
  if (started_) Notice(name, Compressed(name) ? "new file, compressed: read once" : "new file: following");
  auto in = std::make_unique<Input>();
  in->name = name;
  in->once = Compressed(name);
  in->key = KeyOf(st);
  Input* p = in.get();
  j.by_name[name] = p;
  j.inputs.push_back(std::move(in));
  return p;
}

void Watcher::WalkDir(Job& j, const std::string& dir, int depth) {
  Watch(dir);
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> names;
  while (struct dirent* e = readdir(d)) {
    std::string_view n = e->d_name;
    if (n == "." || n == "..") continue;
    names.emplace_back(n);
  }
  closedir(d);
  std::sort(names.begin(), names.end());  // diagnose's order
  for (const std::string& n : names) {
    std::string path = dir + (EndsWith(dir, "/") ? "" : "/") + n;
    struct stat st;
    if (stat(path.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      if (depth < 64) WalkDir(j, path, depth + 1);
      continue;
    }
    if (!S_ISREG(st.st_mode)) continue;
    // A file already followed under another name (app.log rotated to
    // app.log.1) is not read twice; the input that followed it finishes it.
    if (j.by_name.count(path) || j.seen.count(KeyOf(st))) continue;
    AddInput(j, path, st);
  }
}

void Watcher::Discover(Job& j) {
  for (const std::string& root : j.roots) {
    if (root == "-") continue;
    struct stat st;
    if (stat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    WalkDir(j, root, 0);
  }
}

bool Watcher::OpenFile(Job& j, Input& in) {
  int fd = open(in.name.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT) InputError(in, std::strerror(errno));
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    InputError(in, std::strerror(errno));
    close(fd);
    return false;
  }
  in.fd = fd;
  in.key = KeyOf(st);
  in.pos = 0;
  j.seen.insert(in.key);
  return true;
}

void Watcher::ReadToEof(Job& j, Input& in) {
  std::string buf(chunk_, '\0');
  for (;;) {
    ssize_t n = pread(in.fd, buf.data(), buf.size(), static_cast<off_t>(in.pos));
    if (n < 0) {
      if (errno == EINTR) continue;
      InputError(in, std::strerror(errno));
      return;
    }
    if (n == 0) return;
    if (in.pos < kHeadBytes && in.head.size() == in.pos) {
      in.head.append(buf.data(), std::min<size_t>(static_cast<size_t>(n), kHeadBytes - in.pos));
    }
    in.pos += static_cast<uint64_t>(n);
    Take(j, in, std::string_view(buf.data(), static_cast<size_t>(n)));
  }
}

void Watcher::ReadFile(Job& j, Input& in) {
  if (in.fd < 0 && !OpenFile(j, in)) return;
  struct stat st;
  int named = stat(in.name.c_str(), &st);
  if (named != 0 && errno == ENOENT && fstat(in.fd, &st) == 0 && st.st_nlink == 0) {
    // Deleted: read what is left and let it go (an open descriptor would
    // keep its disk space); should the name come back, it is read anew.
    // A file renamed away keeps its descriptor: its writer may still
    // append to it until the new file appears.
    ReadToEof(j, in);
    EndLine(j, in);
    close(in.fd);
    in.fd = -1;
    Retire(j, in);
    return;
  }
  if (named == 0 && KeyOf(st) != in.key) {
    // Rotated: the name is another file now. Finish the old one, then
    // follow the new one from its start.
    ReadToEof(j, in);
    EndLine(j, in);
    close(in.fd);
    in.fd = -1;
    Retire(j, in);
    ++j.rotations;
    Notice(in.name, "rotated: finished the old file, following the new one");
    if (!OpenFile(j, in)) return;
  } else if (fstat(in.fd, &st) == 0 && static_cast<uint64_t>(st.st_size) < in.pos) {
    // Truncated in place (copytruncate): start over at 0.
    in.pos = 0;
    EndLine(j, in);
    Retire(j, in);
    ++j.truncations;
    Notice(in.name, "truncated: reading again from the start");
  }
  ReadToEof(j, in);
}

void Watcher::ReadStdin(Job& j, Input& in) {
  if (in.eof) return;
  std::string buf(chunk_, '\0');
  // A bounded number of reads per pass, so that a producer faster than the
  // scan still lets the loop re-correlate and see signals.
  for (int reads = 0; reads < 256; ++reads) {
    ssize_t n = read(0, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      InputError(in, std::strerror(errno));
      in.eof = true;
      return;
    }
    if (n == 0) {
      in.eof = true;
      EndLine(j, in);
      return;
    }
    Take(j, in, std::string_view(buf.data(), static_cast<size_t>(n)));
    if (g_stop) return;
  }
}

// A compressed file is read once, whole, by the library; one that appears
// while the watch runs is read once its size has stayed the same from one
// look to the next (a compressor may still be writing it).
void Watcher::ReadOnce(Job& j, Input& in, bool first) {
  if (in.done) return;
  struct stat st;
  if (stat(in.name.c_str(), &st) != 0) return;
  int64_t size = static_cast<int64_t>(st.st_size);
  if (size == 0) return;  // nothing yet, or a compressor that has just begun
  if (!first && size != in.last_size) {
    in.last_size = size;
    return;
  }
  in.done = true;
  j.seen.insert(KeyOf(st));
  const std::string* of = in.dump ? nullptr : CopyOf(j, DecompressedHead(in.name));
  if (of) {
    Notice(in.name, ("a compressed copy of " + *of + ", already read: skipped").c_str());
    return;
  }
  in.dump_size = static_cast<uint64_t>(size);
  for (auto& g : j.gens) AddOnce(*g, in, static_cast<uint64_t>(size));
  j.bytes += static_cast<uint64_t>(size);
  j.dirty = true;
  Recycle(j);
}

// Up to flightrec::kSniffBytes of a plain file's first bytes; empty when it
// cannot be read (the log path says why).
std::string PlainHead(const std::string& path) {
  std::string out;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  out.resize(flightrec::kSniffBytes);
  size_t have = 0;
  while (have < out.size()) {
    ssize_t n = pread(fd, out.data() + have, out.size() - have, static_cast<off_t>(have));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    have += static_cast<size_t>(n);
  }
  close(fd);
  out.resize(have);
  return out;
}

// Whether a head the sniff turned down may still be the start of a dump
// that is being written: a pickle's header before its keys, or a JSON
// object whose first line ("{" of a pretty-printed dump, or one long line)
// is not complete yet. A complete first line of JSON lines is a log's.
bool MayBeDumpBeingWritten(std::string_view head) {
  if (flightrec::LooksLikeBinaryPickle(head) || flightrec::LooksLikeUnframedPickle(head)) return true;
  size_t i = head.find_first_not_of(" \t\r\n");
  if (i == std::string_view::npos || head[i] != '{') return false;
  size_t nl = head.find('\n', i);
  if (nl == std::string_view::npos) return true;
  std::string_view first = head.substr(i, nl - i);
  while (!first.empty() && (first.back() == '\r' || first.back() == ' ')) first.remove_suffix(1);
  return first == "{";
}

// A plain file is a Flight Recorder dump when its content says so (PyTorch
// writes them without an extension, as TORCH_NCCL_DEBUG_INFO_TEMP_FILE +
// rank): such a file is handed whole to the library once, as diagnose reads
// it, instead of being followed as a log. Returns whether the file is
// decided; an undecided one (empty, or a head that may be a dump still
// being written) is looked at again on the next pass, until its size stays
// the same from one look to the next or the head is long enough to tell.
bool Watcher::Classify(Input& in, bool first) {
  if (in.classified) return true;
  std::string head = PlainHead(in.name);
  if (head.empty()) return false;
  flightrec::DumpSniff sniff = flightrec::SniffFlightRecorderDump(head);
  if (sniff == flightrec::DumpSniff::kNo && !first && head.size() < flightrec::kSniffBytes &&
      MayBeDumpBeingWritten(head)) {
    struct stat st;
    int64_t size = stat(in.name.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : -1;
    if (size != in.sniff_size) {
      in.sniff_size = size;
      return false;
    }
  }
  in.classified = true;
  if (sniff == flightrec::DumpSniff::kNo) return true;
  in.dump = true;
  in.once = true;
  if (started_) Notice(in.name, "a Flight Recorder dump: read once when complete");
  return true;
}

// Hands a read-once file to one session whole.
void Watcher::AddOnce(Generation& g, Input& in, uint64_t size) {
  size_t errors = fl_session_error_count(g.s);
  if (fl_session_add_path(g.s, in.name.c_str()) != FL_OK || fl_session_scan(g.s) != FL_OK ||
      fl_session_error_count(g.s) > errors) {
    InputError(in, fl_session_last_error(g.s));
  }
  g.bytes += size;
}

void Watcher::Take(Job& j, Input& in, std::string_view data) {
  in.partial.append(data);
  size_t nl = in.partial.rfind('\n');
  if (nl == std::string::npos) {
    if (in.partial.size() > kMaxPartial) {
      in.partial += '\n';
      Feed(j, in, in.partial);
      in.partial.clear();
    }
    return;
  }
  Feed(j, in, std::string_view(in.partial).substr(0, nl + 1));
  in.partial.erase(0, nl + 1);
}

// Ends a last line left without its newline when the bytes it came from end
// (rotation, truncation, end of input), so it does not merge with the first
// line of what follows.
void Watcher::EndLine(Job& j, Input& in) {
  if (in.partial.empty()) return;
  in.partial += '\n';
  Feed(j, in, in.partial);
  in.partial.clear();
}

bool Watcher::NewGeneration(Job& j) {
  auto g = std::make_unique<Generation>();
  fl_error* err = nullptr;
  if (fl_session_new(&g->s, rs_, &o_.session, &err) != FL_OK) {
    std::fprintf(stderr, "faultline watch: %s\n", fl_error_message(err));
    fl_error_free(err);
    return false;
  }
  // The dumps read so far describe the job's state, not a stretch of its
  // logs: the new session gets them too, so the report keeps them when the
  // older session goes.
  for (auto& in : j.inputs) {
    if (in->dump && in->done) AddOnce(*g, *in, in->dump_size);
  }
  j.gens.push_back(std::move(g));
  ++j.sessions_started;
  return true;
}

// The two overlapping sessions of a job: the younger starts when the older
// has taken half a window, and the older goes when it has taken a whole
// one, so the session reported always holds the last half window to whole
// window of input, and nothing is lost at a switch.
void Watcher::Recycle(Job& j) {
  if (j.gens.size() == 1 && j.gens[0]->bytes >= o_.window_bytes / 2) NewGeneration(j);
  if (j.gens.size() == 2 && j.gens[0]->bytes >= o_.window_bytes) j.gens.erase(j.gens.begin());
}

void Watcher::Feed(Job& j, Input& in, std::string_view lines) {
  uint64_t newlines = static_cast<uint64_t>(std::count(lines.begin(), lines.end(), '\n'));
  for (auto& g : j.gens) {
    auto it = g->streams.find(&in);
    if (it == g->streams.end()) {
      uint32_t id = 0;
      if (fl_session_stream_open(g->s, in.name.c_str(), &id) != FL_OK) {
        InputError(in, fl_session_last_error(g->s));
        continue;
      }
      it = g->streams.emplace(&in, Generation::Stream{id, in.fed_lines, in.fed_bytes}).first;
    }
    if (fl_session_feed(g->s, it->second.id, lines.data(), lines.size()) != FL_OK) {
      InputError(in, fl_session_last_error(g->s));
    }
    g->bytes += lines.size();
  }
  in.fed_bytes += lines.size();
  in.fed_lines += newlines;
  j.bytes += lines.size();
  j.dirty = true;
  Recycle(j);
}

// The incident's id (the report's incidents[].id) at its first initiating
// line's place in the logical stream, the same in every re-correlation and
// across the switch between sessions.
std::string IncidentId(const fl_incident_view& v, const fl_evidence_view* ev, uint64_t line) {
  char buf[FL_INCIDENT_ID_SIZE];
  if (fl_incident_id(v.reference, ev ? ev->source : nullptr, line, v.host, v.rank, buf) != FL_OK) return "";
  return buf;
}

// The action's NDJSON fields: ,"action":{...} as the report writes it.
void AppendActionJson(std::string& out, const fl_action_view& a) {
  out += ",\"action\":{\"kind\":";
  AppendJsonString(out, a.kind);
  for (auto [key, list, n] : {std::tuple{",\"exclude_hosts\":[", a.exclude_hosts, a.exclude_host_count},
                              std::tuple{",\"exclude_gpus\":[", a.exclude_gpus, a.exclude_gpu_count}}) {
    out += key;
    for (size_t k = 0; k < n; ++k) {
      if (k) out += ',';
      AppendJsonString(out, list[k]);
    }
    out += ']';
  }
  out += ",\"reason\":";
  AppendJsonString(out, a.reason);
  out += ",\"set_by\":";
  AppendJsonString(out, a.set_by);
  if (a.missing_fact) {
    out += ",\"missing_fact\":";
    AppendJsonString(out, a.missing_fact);
  }
  out += '}';
}

// What an action decides, for telling when it changed: its kind and what it
// excludes (its reason's wording may grow with the evidence).
std::string ActionKey(const fl_action_view& a) {
  std::string key = a.kind;
  for (size_t k = 0; k < a.exclude_host_count; ++k) key.append(" host:").append(a.exclude_hosts[k]);
  for (size_t k = 0; k < a.exclude_gpu_count; ++k) key.append(" gpu:").append(a.exclude_gpus[k]);
  return key;
}

// "restart without node017 (GPU 0000:3b:00.0)", as the text report says it.
std::string ActionText(const fl_action_view& a) {
  if (std::string_view(a.kind) != "restart_excluding") return a.kind;
  std::string out = "restart without";
  for (size_t k = 0; k < a.exclude_host_count; ++k) out += (k ? ", " : " ") + std::string(a.exclude_hosts[k]);
  for (size_t k = 0; k < a.exclude_gpu_count; ++k) {
    out += k ? ", " : (a.exclude_host_count ? " (GPU " : " GPU ");
    out += a.exclude_gpus[k];
  }
  if (a.exclude_host_count && a.exclude_gpu_count) out += ')';
  return out;
}

void Watcher::Correlate(Job& j, bool final) {
  j.dirty = false;
  j.last_correlate = Now();
  Generation& g = *j.gens[0];
  fl_report* r = nullptr;
  fl_status rc = final ? fl_session_finish(g.s, &r) : fl_session_snapshot(g.s, &r);
  if (rc != FL_OK) {
    std::fprintf(stderr, "faultline watch: %s\n", fl_session_last_error(g.s));
    input_errors_ = true;
    return;
  }
  // Logical line and offset of an evidence record of this session.
  auto logical = [&](const fl_evidence_view& ev, uint64_t* line, uint64_t* offset) {
    *line = ev.line;
    *offset = ev.offset;
    auto in = j.by_name.find(ev.source);
    if (in == j.by_name.end()) return;
    auto st = g.streams.find(in->second);
    if (st == g.streams.end()) return;
    *line += st->second.base_lines;
    *offset += st->second.base_bytes;
  };
  std::vector<std::string> ids;
  for (size_t i = 0, n = fl_report_incident_count(r); i < n; ++i) {
    fl_incident_view v;
    if (fl_report_incident(r, i, &v) != FL_OK) continue;
    std::vector<fl_evidence_view> evs(std::max<size_t>(v.initiating_evidence, 1));
    size_t got = 0;
    if (v.initiating_evidence == 0 ||
        fl_report_incident_evidence(r, i, 0, evs.data(), evs.size(), &got) != FL_OK) {
      got = 0;
    }
    uint64_t line0 = 0, off0 = 0;
    if (got) logical(evs[0], &line0, &off0);
    std::string id = IncidentId(v, got ? &evs[0] : nullptr, line0);
    ids.push_back(id);
    size_t ranks = 0;
    std::vector<fl_collateral_view> clusters(v.collateral);
    for (size_t k = 0; k < v.collateral; ++k) {
      clusters[k].size = sizeof clusters[k];
      if (fl_report_incident_collateral(r, i, k, &clusters[k]) == FL_OK) ranks += clusters[k].rank_count;
    }
    fl_action_view action{};
    action.size = sizeof action;
    const bool has_action = fl_report_incident_action(r, i, &action) == FL_OK;
    const std::string host = v.host ? v.host : "";
    const std::string act = has_action ? ActionKey(action) : "";
    const char* event = nullptr;
    std::vector<const char*> why;
    auto it = j.incidents.find(id);
    if (it == j.incidents.end()) {
      event = "formed";
      it = j.incidents.emplace(id, Printed{v.confidence, got, v.collateral, ranks, v.rank, host, act}).first;
    } else {
      Printed& p = it->second;
      if (v.confidence > p.confidence + 1e-9) why.push_back("confidence");
      if (got > p.initiating) why.push_back("initiating");
      if (v.collateral > p.collateral || ranks > p.collateral_ranks) why.push_back("collateral");
      if (v.rank != p.rank) why.push_back("rank");
      if (host != p.host) why.push_back("host");
      if (act != p.action) why.push_back("action");
      if (!why.empty()) event = "changed";
      p.rank = v.rank;
      p.host = host;
      p.action = act;
      p.confidence = std::max(p.confidence, v.confidence);
      p.initiating = std::max(p.initiating, got);
      p.collateral = std::max(p.collateral, v.collateral);
      p.collateral_ranks = std::max(p.collateral_ranks, ranks);
    }
    j.any_incident = true;
    if (!event) continue;
    std::string out;
    if (o_.json) {
      out = "{\"event\":";
      AppendJsonString(out, event);
      out += ",\"id\":";
      AppendJsonString(out, id);
      out += ",\"job\":";
      AppendJsonString(out, j.name);
      out += ",\"at\":";
      AppendJsonString(out, Rfc3339(WallNowUs()));
      out += ",\"primary\":";
      out += i == 0 ? "true" : "false";
      out += ",\"changes\":[";
      for (size_t k = 0; k < why.size(); ++k) {
        if (k) out += ',';
        AppendJsonString(out, why[k]);
      }
      out += "],\"rule\":";
      AppendJsonString(out, v.rule);
      out += ",\"reference\":";
      AppendJsonString(out, v.reference);
      out += ",\"title\":";
      AppendJsonString(out, v.title);
      out += ",\"category\":";
      AppendJsonString(out, v.category);
      char num[64];
      std::snprintf(num, sizeof num, ",\"confidence\":%.4g,\"rank\":%" PRId64, v.confidence, v.rank);
      out += num;
      out += ",\"host\":";
      AppendJsonStringOrNull(out, v.host);
      out += ",\"gpu\":";
      AppendJsonStringOrNull(out, v.gpu);
      out += ",\"time\":";
      if (v.time_us == FL_TIME_UNSET) {
        out += "null";
      } else {
        AppendJsonString(out, Rfc3339(v.time_us));
      }
      out += ",\"inferred\":";
      out += v.inferred ? "true" : "false";
      std::snprintf(num, sizeof num, ",\"initiating_count\":%zu,\"initiating\":[", got);
      out += num;
      for (size_t k = 0; k < got && k < kMaxPrintedEvidence; ++k) {
        uint64_t line = 0, off = 0;
        logical(evs[k], &line, &off);
        if (k) out += ',';
        out += "{\"source\":";
        AppendJsonString(out, evs[k].source);
        std::snprintf(num, sizeof num, ",\"line\":%" PRIu64 ",\"offset\":%" PRIu64 ",\"rank\":%" PRId64,
                      line, off, evs[k].rank);
        out += num;
        out += ",\"host\":";
        AppendJsonStringOrNull(out, evs[k].host);
        out += ",\"rule\":";
        AppendJsonString(out, evs[k].rule);
        out += ",\"text\":";
        AppendJsonString(out, evs[k].text);
        out += '}';
      }
      out += "],\"collateral\":[";
      for (size_t k = 0; k < clusters.size(); ++k) {
        if (k) out += ',';
        out += "{\"rule\":";
        AppendJsonString(out, clusters[k].rule ? clusters[k].rule : "");
        out += ",\"reference\":";
        AppendJsonString(out, clusters[k].reference ? clusters[k].reference : "");
        std::snprintf(num, sizeof num, ",\"count\":%" PRIu64 ",\"ranks\":%zu,\"hosts\":%zu}", clusters[k].count,
                      clusters[k].rank_count, clusters[k].host_count);
        out += num;
      }
      out += "],\"fix\":";
      AppendJsonString(out, v.fix ? v.fix : "");
      out += ",\"verify\":";
      AppendJsonString(out, v.verify ? v.verify : "");
      if (has_action) AppendActionJson(out, action);
      out += "}\n";
    } else {
      char head[160];
      std::snprintf(head, sizeof head, "[%s] %s %s (%s, confidence %.2f)%s", Rfc3339(WallNowUs()).c_str(),
                    event, id.c_str(), j.name.c_str(), v.confidence, i == 0 ? " PRIMARY" : "");
      out = head;
      if (!why.empty()) {
        out += " more ";
        for (size_t k = 0; k < why.size(); ++k) out += std::string(k ? ", " : "") + why[k];
      }
      out += "\n  ";
      out += v.title;
      out += " [";
      out += v.reference;
      out += "]\n  initiating:";
      if (v.rank >= 0) out += " rank " + std::to_string(v.rank);
      if (v.host) out += std::string(" on ") + v.host;
      if (v.gpu) out += std::string(", GPU ") + v.gpu;
      if (v.time_us != FL_TIME_UNSET) out += ", at " + Rfc3339(v.time_us);
      if (v.inferred) out += " (inferred)";
      out += '\n';
      for (size_t k = 0; k < got && k < kMaxPrintedEvidence; ++k) {
        uint64_t line = 0, off = 0;
        logical(evs[k], &line, &off);
        out += "    " + std::string(evs[k].source) + ":" + std::to_string(line) + ": " + evs[k].text + "\n";
      }
      for (const auto& c : clusters) {
        out += "  collateral: " + std::string(c.rule ? c.rule : "") + " x" + std::to_string(c.count) + " on " +
               std::to_string(c.rank_count) + " ranks\n";
      }
      if (v.fix && *v.fix) out += std::string("  fix: ") + v.fix + "\n";
      if (has_action) out += "  action: " + ActionText(action) + " - " + action.reason + "\n";
    }
    Emit(out);
  }
  if (final) {
    const char* rep = nullptr;
    size_t len = 0;
    std::string out;
    if (o_.json) {
      fl_report_json(r, &rep, &len);
      out = "{\"event\":\"report\",\"job\":";
      AppendJsonString(out, j.name);
      out += ",\"incident_ids\":[";
      for (size_t k = 0; k < ids.size(); ++k) {
        if (k) out += ',';
        AppendJsonString(out, ids[k]);
      }
      char num[256];
      std::snprintf(num, sizeof num,
                    "],\"watch\":{\"sessions\":%" PRIu64 ",\"window_bytes\":%" PRIu64 ",\"bytes\":%" PRIu64
                    ",\"rotations\":%" PRIu64 ",\"truncations\":%" PRIu64 ",\"inputs\":%zu},\"report\":",
                    j.sessions_started, o_.window_bytes, j.bytes, j.rotations, j.truncations, j.inputs.size());
      out += num;
      std::string_view body(rep, len);
      while (!body.empty() && (body.back() == '\n' || body.back() == ' ')) body.remove_suffix(1);
      out += body;
      out += "}\n";
    } else {
      fl_report_text(r, &rep, &len);
      out = "==== faultline watch: final report (" + j.name + ") ====\n";
      out.append(rep, len);
    }
    Emit(out);
  }
  fl_report_free(r);
}

void Watcher::Pass(bool first, bool correlate) {
  for (auto& jp : jobs_) {
    Job& j = *jp;
    Discover(j);
    // Plain files first, so that a compressed copy of one is known as such.
    for (auto& in : j.inputs) {
      if (g_stop) break;
      if (in->is_stdin) {
        ReadStdin(j, *in);
      } else if (!in->once && Classify(*in, first) && !in->once) {
        ReadFile(j, *in);
      }
    }
    for (auto& in : j.inputs) {
      if (in->once && !g_stop) ReadOnce(j, *in, first);
    }
    if (correlate && j.dirty && Now() - j.last_correlate >= o_.interval_s) Correlate(j, /*final=*/false);
  }
}

bool Watcher::Start() {
  chunk_ = static_cast<size_t>(std::clamp<uint64_t>(o_.window_bytes / 8, 4096, 256 << 10));
  if (!o_.no_inotify) inotify_fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  auto make_job = [&](std::string name) {
    jobs_.push_back(std::make_unique<Job>());
    jobs_.back()->name = std::move(name);
    return jobs_.back().get();
  };
  Job* all = o_.job_per_path ? nullptr : make_job("watch");
  bool any = false;
  for (const std::string& p : o_.paths) {
    if (p == "-") {
      if (have_stdin_) continue;  // one reader of standard input
      have_stdin_ = true;
      Job* j = all ? all : make_job(p);
      // The flag is on the open file description, which a terminal shares
      // with the shell: Run puts the old flags back.
      stdin_flags_ = fcntl(0, F_GETFL);
      if (stdin_flags_ >= 0) (void)fcntl(0, F_SETFL, stdin_flags_ | O_NONBLOCK);
      auto in = std::make_unique<Input>();
      in->name = "-";
      in->is_stdin = true;
      j->by_name["-"] = in.get();
      j->inputs.push_back(std::move(in));
      j->roots.push_back(p);
      any = true;
      continue;
    }
    struct stat st;
    if (stat(p.c_str(), &st) != 0) {
      std::fprintf(stderr, "faultline watch: %s: %s\n", p.c_str(), std::strerror(errno));
      input_errors_ = true;
      continue;
    }
    if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
      std::fprintf(stderr, "faultline watch: %s: not a regular file or a directory (pipe it into -)\n",
                   p.c_str());
      input_errors_ = true;
      continue;
    }
    Job* j = all ? all : make_job(p);
    j->roots.push_back(p);
    any = true;
    if (S_ISDIR(st.st_mode)) continue;  // walked by Discover
    // A file named on the command line is followed by its name, even
    // when it is rotated away and comes back.
    std::string parent = p.find('/') == std::string::npos ? "." : p.substr(0, p.rfind('/') + 1);
    Watch(parent);
    if (!j->by_name.count(p)) AddInput(*j, p, st);
  }
  if (!any) return false;
  for (auto& j : jobs_) {
    if (!NewGeneration(*j)) return false;
  }
  return true;
}

int Watcher::Run() {
  int pipefd[2];
  if (pipe2(pipefd, O_NONBLOCK | O_CLOEXEC) != 0) {
    std::fprintf(stderr, "faultline watch: pipe: %s\n", std::strerror(errno));
    return kExitInput;
  }
  g_stop = 0;
  g_wake_fd = pipefd[1];
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  struct sigaction old_int {}, old_term {}, old_pipe {};
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ign, &old_pipe);  // a closed stdout is a write error

  int status = kExitOk;
  if (!Start()) {
    status = kExitInput;
  } else {
    bool first = true;
    while (!g_stop) {
      Pass(first);
      if (first) {
        // Said once the inputs there at the start have been read, so that
        // a script knows what follows is news.
        first = false;
        started_ = true;
        size_t files = 0;
        for (auto& j : jobs_) files += j->inputs.size();
        std::fprintf(stderr,
                     "faultline watch: %zu job%s, %zu input%s read; watching with %s; re-correlating at "
                     "most every %gs; window %" PRIu64 " bytes\n",
                     jobs_.size(), jobs_.size() == 1 ? "" : "s", files, files == 1 ? "" : "s",
                     inotify_fd_ >= 0 ? "inotify" : "polling", o_.interval_s, o_.window_bytes);
      }
      if (g_stop) break;
      // Standard input alone: its end is the end of the watch.
      bool only_stdin_done = true;
      for (auto& j : jobs_) {
        for (const std::string& r : j->roots) {
          if (r != "-") only_stdin_done = false;
        }
        for (auto& in : j->inputs) {
          if (in->is_stdin && !in->eof) only_stdin_done = false;
        }
      }
      if (only_stdin_done) break;
      double timeout = o_.poll_s;
      for (auto& j : jobs_) {
        if (j->dirty) timeout = std::min(timeout, j->last_correlate + o_.interval_s - Now());
      }
      timeout = std::max(timeout, 0.0);
      struct pollfd fds[3];
      nfds_t nfds = 0;
      fds[nfds++] = {pipefd[0], POLLIN, 0};
      if (inotify_fd_ >= 0) fds[nfds++] = {inotify_fd_, POLLIN, 0};
      bool stdin_open = false;
      for (auto& j : jobs_) {
        for (auto& in : j->inputs) stdin_open = stdin_open || (in->is_stdin && !in->eof);
      }
      if (stdin_open) fds[nfds++] = {0, POLLIN, 0};
      int n = poll(fds, nfds, static_cast<int>(timeout * 1000 + 0.5));
      if (n < 0 && errno != EINTR) break;
      if (inotify_fd_ >= 0) {
        // The events only wake the loop: each pass looks at every input.
        char buf[16384];
        while (read(inotify_fd_, buf, sizeof buf) > 0) {
        }
      }
    }
    // What arrived since the last pass (compressed files found but not yet
    // read included), the last lines, then each job's final report.
    g_stop = 0;
    Pass(/*first=*/true, /*correlate=*/false);
    for (auto& j : jobs_) {
      for (auto& in : j->inputs) EndLine(*j, *in);
      Correlate(*j, /*final=*/true);
    }
    bool incident = false;
    for (auto& j : jobs_) incident = incident || j->any_incident;
    if (input_errors_ || output_error_) {
      status = kExitInput;
    } else if (o_.exit_code && incident) {
      status = kExitIncident;
    }
  }
  if (stdin_flags_ >= 0) (void)fcntl(0, F_SETFL, stdin_flags_);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGPIPE, &old_pipe, nullptr);
  g_wake_fd = -1;
  close(pipefd[0]);
  close(pipefd[1]);
  return status;
}

}  // namespace

int RunWatch(const fl_ruleset* rs, const WatchOptions& o) {
  Watcher w(rs, o);
  return w.Run();
}

}  // namespace faultline::cli
