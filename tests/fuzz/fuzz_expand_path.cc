// ExpandPath over arbitrary directory trees: the input is a little program
// that builds a tree in a fresh temporary directory -- directories (nested
// up to 8 deep), regular files, hard links, FIFOs, and symlinks to files,
// to directories, to an ancestor (loops), to themselves and to nothing --
// with names taken from the input bytes (any byte but '/' and NUL). Then
// ExpandPath(root, &skipped) walks it. Oracles beyond no crash/UB:
//  - no hang (libFuzzer -timeout): symlink loops end, and FIFOs are never
//    opened (opening one for reading blocks forever);
//  - the walk succeeds, the list is sorted and without duplicates, every
//    name in it lies below the root and is a regular file, and no file
//    (device, inode) appears twice;
//  - every regular file reachable without a symlink is listed, under its
//    smallest such name (the real path wins over one through a link);
//  - every FIFO is in `skipped`, with a reason naming its path;
//  - `skipped` is sorted by path and every reason is an error naming it.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "fuzz_util.h"
#include "input/input.h"

using namespace faultline;
namespace fs = std::filesystem;

namespace {

struct Node {
  std::vector<std::string> comps;  // path below the root
  bool dir;
};

std::string Join(const std::vector<std::string>& comps, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    if (i) out += '/';
    out += comps[i];
  }
  return out;
}

// The relative path from directory `from` to `to` (both below the root).
std::string Relative(const std::vector<std::string>& from, const std::vector<std::string>& to) {
  size_t common = 0;
  while (common < from.size() && common < to.size() && from[common] == to[common]) ++common;
  std::string out;
  for (size_t i = common; i < from.size(); ++i) out += "../";
  for (size_t i = common; i < to.size(); ++i) {
    out += to[i];
    if (i + 1 < to.size()) out += '/';
  }
  if (out.empty()) out = ".";
  return out;
}

std::string Name(fuzz::Choices& c) {
  size_t len = 1 + c.Byte() % 12;
  std::string name;
  for (size_t i = 0; i < len; ++i) {
    char ch = static_cast<char>(c.Byte());
    name += (ch == '/' || ch == '\0') ? '_' : ch;
  }
  if (name == "." || name == "..") name += 'x';
  return name;
}

// Lists every regular file and FIFO reachable from root without following
// a symlink, by real path.
void WalkReal(const std::string& root, const std::string& rel,
              std::map<std::pair<dev_t, ino_t>, std::string>* smallest, std::set<std::string>* fifos) {
  std::error_code ec;
  for (fs::directory_iterator it(root + (rel.empty() ? "" : "/" + rel), ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    std::string sub = rel.empty() ? name : rel + "/" + name;
    struct stat st;
    if (lstat((root + "/" + sub).c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      WalkReal(root, sub, smallest, fifos);
    } else if (S_ISREG(st.st_mode)) {
      auto key = std::make_pair(st.st_dev, st.st_ino);
      std::string full = root + "/" + sub;
      auto [p, fresh] = smallest->emplace(key, full);
      if (!fresh && full < p->second) p->second = full;
    } else if (S_ISFIFO(st.st_mode)) {
      fifos->insert(root + "/" + sub);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static unsigned serial = 0;
  const std::string root = fuzz::ScratchDir() + "/t" + std::to_string(serial++);
  std::error_code ec;
  fs::create_directory(root, ec);
  if (ec) fuzz::Die("cannot create the tree root", root);

  fuzz::Choices c(data, size);
  std::vector<Node> nodes{{{}, true}};  // 0: the root
  std::vector<std::string> cur;
  for (int op = 0; op < 48 && !c.Rest().empty(); ++op) {
    const uint8_t kind = c.Byte() % 8;
    std::string name = Name(c);
    std::vector<std::string> comps = cur;
    comps.push_back(name);
    const std::string path = root + "/" + Join(comps, comps.size());
    switch (kind) {
      case 0:
      case 1:  // a directory; 1 also enters it
        if (cur.size() < 8 && ::mkdir(path.c_str(), 0755) == 0) {
          nodes.push_back({comps, true});
          if (kind == 1) cur = comps;
        }
        break;
      case 2: {  // a regular file; O_EXCL: never open what is there (a FIFO would block)
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd >= 0) {
          (void)!::write(fd, name.data(), name.size());
          ::close(fd);
          nodes.push_back({comps, false});
        }
        break;
      }
      case 3:  // a FIFO
        if (::mkfifo(path.c_str(), 0644) == 0) nodes.push_back({comps, false});
        break;
      case 4: {  // a hard link to an earlier node that is a regular file
        // Never to a symlink: link() links the symlink itself, and a relative
        // target read from another directory can leave the tree (seen: a
        // "../.." link moved one level up reached the scratch dir's parent,
        // where other fuzz targets' corpora come and go).
        const Node& n = nodes[c.Byte() % nodes.size()];
        const std::string from = root + "/" + Join(n.comps, n.comps.size());
        struct stat st;
        if (!n.dir && ::lstat(from.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
          (void)::link(from.c_str(), path.c_str());
        }
        break;
      }
      case 5: {  // a symlink
        const uint8_t how = c.Byte();
        std::string target;
        switch (how % 4) {
          case 0: target = Relative(cur, nodes[c.Byte() % nodes.size()].comps); break;
          case 1: target = Relative(cur, std::vector<std::string>(cur.begin(), cur.begin() + (c.Byte() % (cur.size() + 1)))); break;
          case 2: target = "missing-" + name; break;
          default: target = name; break;  // itself: ELOOP
        }
        if (::symlink(target.c_str(), path.c_str()) == 0) nodes.push_back({comps, false});
        break;
      }
      case 6:  // back to the parent
        if (!cur.empty()) cur.pop_back();
        break;
      default:  // back to the root
        cur.clear();
        break;
    }
  }

  std::vector<SkippedPath> skipped;
  auto files = ExpandPath(root, &skipped);
  FL_FUZZ_CHECK(files.ok(), files.status().message());
  FL_FUZZ_CHECK(std::is_sorted(files->begin(), files->end()), "list not sorted");
  FL_FUZZ_CHECK(std::adjacent_find(files->begin(), files->end()) == files->end(), "a name listed twice");
  std::set<std::pair<dev_t, ino_t>> ids;
  for (const std::string& f : *files) {
    FL_FUZZ_CHECK(f.compare(0, root.size() + 1, root + "/") == 0, "a name outside the root: " + f);
    struct stat st;
    FL_FUZZ_CHECK(::stat(f.c_str(), &st) == 0 && S_ISREG(st.st_mode), "not a regular file: " + f);
    FL_FUZZ_CHECK(ids.emplace(st.st_dev, st.st_ino).second, "a file listed under two names: " + f);
  }
  std::map<std::pair<dev_t, ino_t>, std::string> smallest;
  std::set<std::string> fifos;
  WalkReal(root, "", &smallest, &fifos);
  const std::set<std::string> listed(files->begin(), files->end());
  for (const auto& [id, p] : smallest) {
    FL_FUZZ_CHECK(listed.count(p) == 1, "a reachable file not listed by its smallest real name: " + p);
  }
  std::set<std::string> skipped_paths;
  for (size_t i = 0; i < skipped.size(); ++i) {
    const SkippedPath& s = skipped[i];
    FL_FUZZ_CHECK(!s.reason.ok(), "skipped without a reason: " + s.path);
    FL_FUZZ_CHECK(std::string(s.reason.message()).find(s.path) != std::string::npos,
                  "reason does not name the path: " + s.path);
    FL_FUZZ_CHECK(i == 0 || skipped[i - 1].path <= s.path, "skipped not sorted");
    skipped_paths.insert(s.path);
  }
  for (const std::string& f : fifos) {
    FL_FUZZ_CHECK(skipped_paths.count(f) == 1, "a FIFO not reported as skipped: " + f);
  }
  fs::remove_all(root, ec);
  return 0;
}
