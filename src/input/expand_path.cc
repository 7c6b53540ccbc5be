// ExpandPath: a path to the sorted list of files it stands for. Directory
// walks go through readdir's d_type and fstatat() relative to the open
// directory, so a 100k-file archive costs one getdents64 per few hundred
// entries and one path-free stat per file, never a realpath() per file.
// Every file is identified by (device, inode): a hard link or a symlink to a
// file already listed would make the scanner count its evidence twice, and a
// directory reached a second time is a symlink loop or a duplicate.

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "input/input.h"
#include "input/input_internal.h"
#include "util/status_macros.h"

namespace faultline {
namespace {

using internal::ErrnoError;

struct FileId {
  dev_t dev;
  ino_t ino;
  bool operator==(const FileId& o) const { return dev == o.dev && ino == o.ino; }
  template <typename H>
  friend H AbslHashValue(H h, const FileId& id) {
    return H::combine(std::move(h), id.dev, id.ino);
  }
};

FileId IdOf(const struct stat& st) { return {st.st_dev, st.st_ino}; }

// What the walk's stat says of a file, as ListedFile has it.
struct Facts {
  uint64_t size;
  int64_t mtime;
};

// A file found, listed in (via_link, path) order; its Facts stay in a
// vector of their own (an element that grew by its facts was ~1.6 M more
// instructions of the serial walk on 20,736 files).
struct Found {
  std::string path;
  FileId id;
  uint32_t facts;  // index into Walker::facts_
  bool via_link;   // reached through a symlink (to the file or a directory)
};

// A walked directory: its entries are Walker::children_[begin, end), and
// `key` is its own name followed by '/'.
struct DirNode {
  std::string key;
  uint32_t begin = 0;
  uint32_t end = 0;
};

// An entry of a directory: a file (index into Walker::found_, its name at
// `name_off` of its path) or a directory (index into Walker::nodes_).
struct Child {
  std::string_view key;  // set once the walk is over (the vectors moved)
  uint32_t index;
  uint32_t name_off;
  bool dir;
};

ListedFile Listed(std::string path, const struct stat& st) {
  ListedFile f;
  f.path = std::move(path);
  f.regular = S_ISREG(st.st_mode);
  if (f.regular) {
    f.size = static_cast<uint64_t>(st.st_size);
    f.mtime = static_cast<int64_t>(st.st_mtime);
  }
  f.dev = static_cast<uint64_t>(st.st_dev);
  f.ino = static_cast<uint64_t>(st.st_ino);
  return f;
}

struct PendingDir {
  std::string path;
  bool via_link;
  uint32_t node;  // index into Walker::nodes_
};

const char* TypeName(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

class Walker {
 public:
  explicit Walker(std::vector<SkippedPath>* skipped) : skipped_(skipped) {}

  absl::Status Run(std::string root) {
    nodes_.emplace_back();
    FL_RETURN_IF_ERROR(WalkDir({std::move(root), false, 0}, /*is_root=*/true));
    // Real directories first, so a directory's real path wins over a
    // symlink to it; then symlinked directories in sorted order, level by
    // level, so the outcome does not depend on readdir order.
    for (;;) {
      while (!pending_.empty()) {
        PendingDir dir = std::move(pending_.back());
        pending_.pop_back();
        FL_RETURN_IF_ERROR(WalkDir(std::move(dir), /*is_root=*/false));
      }
      if (linked_.empty()) break;
      std::sort(linked_.begin(), linked_.end(),
                [](const PendingDir& a, const PendingDir& b) {
                  return a.path > b.path;  // popped from the back: smallest first
                });
      pending_.swap(linked_);
    }
    return absl::OkStatus();
  }

  std::vector<ListedFile> Finish() {
    // One name per file: the first real path, else the first linked path.
    const std::vector<uint32_t> order = PathOrder();
    absl::flat_hash_map<FileId, size_t> first;
    first.reserve(found_.size());
    std::vector<ListedFile> files;
    files.reserve(found_.size());
    bool any_link = false;
    for (const uint32_t i : order) {
      any_link |= found_[i].via_link;
      auto [it, inserted] = first.try_emplace(found_[i].id, i);
      if (inserted) {
        ListedFile& f = files.emplace_back();
        f.path = std::move(found_[i].path);
        f.regular = true;  // the walk lists regular files only
        f.size = facts_[found_[i].facts].size;
        f.mtime = facts_[found_[i].facts].mtime;
        f.dev = static_cast<uint64_t>(found_[i].id.dev);
        f.ino = static_cast<uint64_t>(found_[i].id.ino);
        it->second = files.size() - 1;
      } else {
        Skip(found_[i].path,
             absl::AlreadyExistsError(absl::StrCat(
                 "'", found_[i].path, "' is the same file as '",
                 files[it->second].path, "' (hard link or symlink); listed once")));
      }
    }
    // Already in order unless a file was reached only through a symlink
    // (listed after every real path): a second sort of 20k sorted paths
    // was ~10 M instructions of the serial walk (bench/README.md, "the
    // serial part of a run").
    auto by_path = [](const ListedFile& a, const ListedFile& b) { return a.path < b.path; };
    if (any_link && !std::is_sorted(files.begin(), files.end(), by_path)) {
      std::sort(files.begin(), files.end(), by_path);
    }
    if (skipped_ != nullptr) {
      std::stable_sort(
          skipped_->begin() + static_cast<std::ptrdiff_t>(skipped_base_),
          skipped_->end(), [](const SkippedPath& a, const SkippedPath& b) {
            return a.path < b.path;
          });
    }
    return files;
  }

  void set_skipped_base(size_t base) { skipped_base_ = base; }

 private:
  // The found files in (via_link, path) order, as a sort of their whole
  // paths would give it, from each directory's entries sorted on their own:
  // every path below a directory D starts with "D/", and the paths with a
  // common prefix are contiguous in byte order, placed among the others as
  // that prefix is. So a directory's entries in the order of their names,
  // a subdirectory's name followed by '/' (it begins every path below it:
  // "a-b" before "a/x", "a" before "ab/x"), each subdirectory's files in its
  // place, is byte order of the whole paths, and the files reached through
  // a link then follow in the same order. The whole-path sort compared long
  // shared prefixes: ~19 M instructions of the serial walk on 20,736 files
  // (bench/README.md, "the serial part, second pass").
  std::vector<uint32_t> PathOrder() {
    for (Child& c : children_) {
      c.key = c.dir ? std::string_view(nodes_[c.index].key)
                    : std::string_view(found_[c.index].path).substr(c.name_off);
    }
    for (const DirNode& n : nodes_) {
      std::sort(children_.begin() + n.begin, children_.begin() + n.end,
                [](const Child& a, const Child& b) { return a.key < b.key; });
    }
    std::vector<uint32_t> order;
    order.reserve(found_.size());
    std::vector<std::pair<uint32_t, uint32_t>> stack;  // (node, next child)
    stack.emplace_back(0, nodes_[0].begin);
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next == nodes_[node].end) {
        stack.pop_back();
        continue;
      }
      const Child& c = children_[next++];
      if (c.dir) {
        stack.emplace_back(c.index, nodes_[c.index].begin);
      } else {
        order.push_back(c.index);
      }
    }
    std::stable_partition(order.begin(), order.end(),
                          [this](uint32_t i) { return !found_[i].via_link; });
    return order;
  }

  static std::string Join(const std::string& dir, const char* name) {
    std::string out;
    out.reserve(dir.size() + 1 + std::strlen(name));
    out.append(dir);
    if (out.empty() || out.back() != '/') out.push_back('/');
    out.append(name);
    return out;
  }

  void AddFound(std::string path, size_t name_len, const struct stat& st, bool via_link) {
    children_.push_back({{}, static_cast<uint32_t>(found_.size()),
                         static_cast<uint32_t>(path.size() - name_len), false});
    found_.push_back({std::move(path), IdOf(st), static_cast<uint32_t>(facts_.size()), via_link});
    facts_.push_back({static_cast<uint64_t>(st.st_size), static_cast<int64_t>(st.st_mtime)});
  }

  void Skip(std::string path, absl::Status reason) {
    if (skipped_ != nullptr) {
      skipped_->push_back({std::move(path), std::move(reason)});
    }
  }

  absl::Status WalkDir(PendingDir dir, bool is_root) {
    const int fd =
        open(dir.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
      absl::Status err = ErrnoError(errno, "cannot open directory", dir.path);
      if (is_root) return err;
      Skip(dir.path, std::move(err));
      return absl::OkStatus();
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
      absl::Status err = ErrnoError(errno, "cannot stat directory", dir.path);
      close(fd);
      if (is_root) return err;
      Skip(dir.path, std::move(err));
      return absl::OkStatus();
    }
    auto [it, inserted] = dirs_.try_emplace(IdOf(st), dir.path);
    if (!inserted) {
      close(fd);
      const std::string& first = it->second;
      const bool loop = dir.path.size() > first.size() &&
                        dir.path.compare(0, first.size(), first) == 0 &&
                        (first.back() == '/' || dir.path[first.size()] == '/');
      // A loop is worth a warning; a second name of a directory (a
      // `latest -> run-5` link) is as harmless as a file's hard link.
      std::string msg = absl::StrCat("'", dir.path, "' is directory '", first, "' again (",
                                     loop ? "symlink loop" : "second link to it", "); listed once");
      Skip(dir.path, loop ? absl::FailedPreconditionError(msg) : absl::AlreadyExistsError(msg));
      return absl::OkStatus();
    }
    nodes_[dir.node].begin = static_cast<uint32_t>(children_.size());
    DIR* d = fdopendir(fd);
    if (d == nullptr) {
      absl::Status err = ErrnoError(errno, "cannot read directory", dir.path);
      close(fd);
      if (is_root) return err;
      Skip(dir.path, std::move(err));
      return absl::OkStatus();
    }
    for (;;) {
      errno = 0;
      const dirent* e = readdir(d);
      if (e == nullptr) {
        if (errno != 0) {
          // What was read so far is kept; the rest of the directory is not.
          Skip(dir.path,
               ErrnoError(errno, "error reading directory", dir.path));
        }
        break;
      }
      const char* name = e->d_name;
      if (name[0] == '.' &&
          (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) {
        continue;
      }
      Entry(dirfd(d), dir, name, e->d_type);
    }
    closedir(d);
    nodes_[dir.node].end = static_cast<uint32_t>(children_.size());
    return absl::OkStatus();
  }

  // A subdirectory of `dir` to walk: its node, as an entry of dir's.
  uint32_t NewNode(const char* name, size_t name_len) {
    const auto node = static_cast<uint32_t>(nodes_.size());
    DirNode& n = nodes_.emplace_back();
    n.key.reserve(name_len + 1);
    n.key.append(name, name_len);
    n.key.push_back('/');
    children_.push_back({{}, node, 0, true});
    return node;
  }

  void Entry(int dfd, const PendingDir& dir, const char* name,
             unsigned char type) {
    const size_t name_len = std::strlen(name);
    std::string path = Join(dir.path, name);
    struct stat st;
    if (type == DT_DIR) {
      pending_.push_back({std::move(path), dir.via_link, NewNode(name, name_len)});
      return;
    }
    if (type == DT_REG || type == DT_UNKNOWN) {
      if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        // Deleted since readdir, most likely: say so rather than drop it.
        Skip(path, ErrnoError(errno, "cannot stat", path));
        return;
      }
      if (S_ISREG(st.st_mode)) {
        AddFound(std::move(path), name_len, st, dir.via_link);
        return;
      }
      if (S_ISDIR(st.st_mode)) {
        pending_.push_back({std::move(path), dir.via_link, NewNode(name, name_len)});
        return;
      }
      if (!S_ISLNK(st.st_mode)) {
        Skip(path, absl::FailedPreconditionError(absl::StrCat(
                       "'", path, "' is ", TypeName(st.st_mode), "; skipped")));
        return;
      }
      type = DT_LNK;
    }
    if (type == DT_LNK) {
      if (fstatat(dfd, name, &st, 0) != 0) {
        const int err = errno;
        if (err == ENOENT) {
          Skip(path, absl::NotFoundError(absl::StrCat(
                         "'", path, "' is a dangling symlink; skipped")));
        } else if (err == ELOOP) {
          Skip(path, absl::FailedPreconditionError(absl::StrCat(
                         "'", path, "' is a symlink loop; skipped")));
        } else {
          Skip(path, ErrnoError(err, "cannot follow symlink", path));
        }
        return;
      }
      if (S_ISREG(st.st_mode)) {
        AddFound(std::move(path), name_len, st, true);
      } else if (S_ISDIR(st.st_mode)) {
        linked_.push_back({std::move(path), true, NewNode(name, name_len)});
      } else {
        Skip(path, absl::FailedPreconditionError(
                       absl::StrCat("'", path, "' leads to ",
                                    TypeName(st.st_mode), "; skipped")));
      }
      return;
    }
    // DT_FIFO, DT_SOCK, DT_CHR, DT_BLK: opening a FIFO would block forever.
    const mode_t mode = type == DT_FIFO   ? S_IFIFO
                        : type == DT_SOCK ? S_IFSOCK
                        : type == DT_CHR  ? S_IFCHR
                        : type == DT_BLK  ? S_IFBLK
                                          : 0;
    Skip(path, absl::FailedPreconditionError(absl::StrCat(
                   "'", path, "' is ", TypeName(mode), "; skipped")));
  }

  std::vector<SkippedPath>* skipped_;
  size_t skipped_base_ = 0;
  std::vector<PendingDir> pending_;  // stack of real directories to walk
  std::vector<PendingDir> linked_;   // directories reached through symlinks
  std::vector<Found> found_;
  std::vector<Facts> facts_;
  std::vector<DirNode> nodes_;   // nodes_[0] is the root
  std::vector<Child> children_;  // each directory's entries, one run each
  absl::flat_hash_map<FileId, std::string> dirs_;  // walked, by first path
};

// "dir///" -> "dir"; "/" and "//" stay "/".
std::string StripTrailingSlashes(const std::string& path) {
  size_t end = path.size();
  while (end > 1 && path[end - 1] == '/') --end;
  return path.substr(0, end);
}

}  // namespace

absl::StatusOr<std::vector<ListedFile>> ListFiles(const std::string& path,
                                                  std::vector<SkippedPath>* skipped) {
  if (path == "-") {
    ListedFile in;
    in.path = "-";
    return std::vector<ListedFile>{std::move(in)};
  }
  if (path.empty()) return absl::InvalidArgumentError("empty input path");
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return ErrnoError(errno, "cannot access", path);
  if (!S_ISDIR(st.st_mode)) return std::vector<ListedFile>{Listed(path, st)};
  Walker walker(skipped);
  if (skipped != nullptr) walker.set_skipped_base(skipped->size());
  FL_RETURN_IF_ERROR(walker.Run(StripTrailingSlashes(path)));
  return walker.Finish();
}

absl::StatusOr<std::vector<std::string>> ExpandPath(
    const std::string& path, std::vector<SkippedPath>* skipped) {
  FL_ASSIGN_OR_RETURN(std::vector<ListedFile> listed, ListFiles(path, skipped));
  std::vector<std::string> files;
  files.reserve(listed.size());
  for (ListedFile& f : listed) files.push_back(std::move(f.path));
  return files;
}

absl::StatusOr<std::vector<std::string>> ExpandPath(const std::string& path) {
  return ExpandPath(path, nullptr);
}

}  // namespace faultline
