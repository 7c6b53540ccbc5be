// ExpandPath over realistic archive layouts: nested per-node directories,
// symlinks (to files, to directories, loops, dangling), hard links, FIFOs,
// empty and unreadable directories, and a few thousand files.

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "input/input.h"
#include "test_util.h"

namespace faultline {
namespace {

using testing::ScratchDir;
using testing::WriteFile;

std::vector<std::string> Rel(const ScratchDir& dir,
                             const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    EXPECT_TRUE(absl::StartsWith(p, dir.path() + "/")) << p;
    out.push_back(p.substr(dir.path().size() + 1));
  }
  return out;
}

std::vector<std::string> SkippedRel(const ScratchDir& dir,
                                     const std::vector<SkippedPath>& skipped) {
  std::vector<std::string> out;
  for (const SkippedPath& s : skipped) {
    EXPECT_TRUE(absl::StrContains(s.reason.message(), s.path)) << s.reason;
    out.push_back(s.path.substr(dir.path().size() + 1));
  }
  return out;
}

TEST(ExpandPathTest, FileAndStdinAreThemselves) {
  ScratchDir dir;
  WriteFile(dir.Sub("a.log"), "x\n");
  auto files = ExpandPath(dir.Sub("a.log"));
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(*files, std::vector<std::string>{dir.Sub("a.log")});
  files = ExpandPath("-");
  ASSERT_TRUE(files.ok());
  EXPECT_EQ(*files, std::vector<std::string>{"-"});
}

TEST(ExpandPathTest, MissingTopPathIsAnError) {
  ScratchDir dir;
  auto files = ExpandPath(dir.Sub("nope"));
  ASSERT_FALSE(files.ok());
  EXPECT_EQ(files.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(files.status().message(), dir.Sub("nope")));
  EXPECT_FALSE(ExpandPath("").ok());
}

TEST(ExpandPathTest, NestedSorted) {
  ScratchDir dir;
  for (const char* rel :
       {"job/node002/rank-3.log", "job/node001/rank-1.log.gz",
        "job/node001/rank-0.log", "job/node010/dmesg.txt", "job/sched.log",
        "job/node001/deep/er/still.zst", "job/.hidden"}) {
    WriteFile(dir.Sub(rel), "line\n");
  }
  std::vector<SkippedPath> skipped;
  auto files = ExpandPath(dir.Sub("job/"), &skipped);  // trailing slash
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(Rel(dir, *files),
            (std::vector<std::string>{
                "job/.hidden", "job/node001/deep/er/still.zst",
                "job/node001/rank-0.log", "job/node001/rank-1.log.gz",
                "job/node002/rank-3.log", "job/node010/dmesg.txt",
                "job/sched.log"}));
  EXPECT_TRUE(skipped.empty());
  EXPECT_TRUE(std::is_sorted(files->begin(), files->end()));
}

// The walk lists each directory's entries sorted on their own, not the
// whole paths: the order must still be the whole paths' byte order, where
// a name sorts against a directory's name followed by '/' ("a-b/x" and
// "a.b" before "a/x", "a" before "ab/x"), and the smallest name of a hard-
// linked file is the one listed. Names of bytes on both sides of '/' (0x2F):
// ' ', '!', '-', '.', '0', 'a', '~', 0xC3.
TEST(ExpandPathTest, ByteOrderOfWholePathsAcrossNestedNames) {
  ScratchDir dir;
  const std::string alphabet = std::string(" !-.0a~") + '\xc3';
  std::mt19937 rng(20);
  std::set<std::string> dirs{"t"};
  std::vector<std::string> files;  // relative to t, each written once
  ASSERT_EQ(mkdir(dir.Sub("t").c_str(), 0755), 0);
  for (int i = 0; i < 600; ++i) {
    // A parent among the directories made so far, a name of 1-3 bytes.
    auto parent = dirs.begin();
    std::advance(parent, rng() % dirs.size());
    std::string name;
    for (size_t n = 1 + rng() % 3; n > 0; --n) name.push_back(alphabet[rng() % alphabet.size()]);
    const std::string path = *parent + "/" + name;
    struct stat st;
    if (lstat(dir.Sub(path).c_str(), &st) == 0) continue;
    if (rng() % 4 == 0) {
      ASSERT_EQ(mkdir(dir.Sub(path).c_str(), 0755), 0) << path;
      dirs.insert(path);
    } else {
      WriteFile(dir.Sub(path), path);
      files.push_back(path);
    }
  }
  // Hard links: of each group of names of one file, the byte-smallest is
  // listed and the others skipped.
  const size_t written = files.size();
  for (int i = 0; i < 60; ++i) {
    const std::string target = files[rng() % written];
    auto parent = dirs.begin();
    std::advance(parent, rng() % dirs.size());
    std::string name;
    for (size_t n = 1 + rng() % 3; n > 0; --n) name.push_back(alphabet[rng() % alphabet.size()]);
    const std::string path = *parent + "/" + name;
    struct stat st;
    if (lstat(dir.Sub(path).c_str(), &st) == 0) continue;
    ASSERT_EQ(link(dir.Sub(target).c_str(), dir.Sub(path).c_str()), 0) << path;
    files.push_back(path + "\n" + target);  // path, then the file it names
  }
  // The expected listing: per file (keyed by its first name), its names sorted.
  std::map<std::string, std::vector<std::string>> names;
  for (const std::string& f : files) {
    const size_t nl = f.find('\n');
    if (nl == std::string::npos) {
      names[f].push_back(f);
    } else {
      names[f.substr(nl + 1)].push_back(f.substr(0, nl));
    }
  }
  std::vector<std::string> want, want_skipped;
  for (auto& [file, its] : names) {
    std::sort(its.begin(), its.end());
    want.push_back(dir.Sub(its[0]));
    for (size_t i = 1; i < its.size(); ++i) want_skipped.push_back(dir.Sub(its[i]));
  }
  std::sort(want.begin(), want.end());
  std::sort(want_skipped.begin(), want_skipped.end());
  ASSERT_GT(want_skipped.size(), 0u);

  std::vector<SkippedPath> skipped;
  auto listed = ListFiles(dir.Sub("t"), &skipped);
  ASSERT_TRUE(listed.ok()) << listed.status();
  std::vector<std::string> got;
  for (const ListedFile& f : *listed) got.push_back(f.path);
  EXPECT_EQ(got, want);
  std::vector<std::string> got_skipped;
  for (const SkippedPath& s : skipped) {
    EXPECT_EQ(s.reason.code(), absl::StatusCode::kAlreadyExists) << s.reason;
    got_skipped.push_back(s.path);
  }
  EXPECT_EQ(got_skipped, want_skipped);
}

TEST(ExpandPathTest, EmptyDirectories) {
  ScratchDir dir;
  ASSERT_EQ(mkdir(dir.Sub("empty").c_str(), 0755), 0);
  ASSERT_EQ(mkdir(dir.Sub("empty/sub").c_str(), 0755), 0);
  std::vector<SkippedPath> skipped;
  auto files = ExpandPath(dir.Sub("empty"), &skipped);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_TRUE(files->empty());
  EXPECT_TRUE(skipped.empty());
}

TEST(ExpandPathTest, SymlinksFollowedLoopsAndDuplicatesReported) {
  ScratchDir dir;
  WriteFile(dir.Sub("job/node1/rank0.log"), "a\n");
  WriteFile(dir.Sub("job/node1/rank1.log"), "b\n");
  WriteFile(dir.Sub("elsewhere/extra.log"), "c\n");
  // A file symlink to a file inside the tree, one to a file outside it, a
  // directory symlink outside the tree, a loop back to the root, a
  // self-loop, a dangling link, and a hard link.
  ASSERT_EQ(symlink("node1/rank0.log", dir.Sub("job/latest.log").c_str()), 0);
  ASSERT_EQ(symlink("../../elsewhere/extra.log",
                    dir.Sub("job/node1/external.log").c_str()),
            0);
  ASSERT_EQ(symlink("../elsewhere", dir.Sub("job/more").c_str()), 0);
  ASSERT_EQ(symlink("..", dir.Sub("job/node1/up").c_str()), 0);
  ASSERT_EQ(symlink("self", dir.Sub("job/self").c_str()), 0);
  ASSERT_EQ(symlink("gone.log", dir.Sub("job/dangling.log").c_str()), 0);
  ASSERT_EQ(link(dir.Sub("job/node1/rank1.log").c_str(),
                 dir.Sub("job/hard.log").c_str()),
            0);
  // A directory and a symlink into it: the real path wins although the
  // symlink sorts first.
  WriteFile(dir.Sub("job/z-real/x.log"), "x\n");
  ASSERT_EQ(symlink("z-real", dir.Sub("job/a-link").c_str()), 0);

  std::vector<SkippedPath> skipped;
  auto files = ExpandPath(dir.Sub("job"), &skipped);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(Rel(dir, *files),
            (std::vector<std::string>{"job/hard.log", "job/more/extra.log",
                                      "job/node1/rank0.log",
                                      "job/z-real/x.log"}));
  // hard.log and rank1.log are one file: the smaller real name is kept.
  // more/extra.log and node1/external.log are both links to one file.
  EXPECT_EQ(SkippedRel(dir, skipped),
            (std::vector<std::string>{"job/a-link", "job/dangling.log",
                                      "job/latest.log", "job/node1/external.log",
                                      "job/node1/rank1.log", "job/node1/up",
                                      "job/self"}));
  for (const SkippedPath& s : skipped) {
    if (absl::EndsWith(s.path, "/up")) {
      EXPECT_TRUE(absl::StrContains(s.reason.message(), "symlink loop"))
          << s.reason;
    }
    if (absl::EndsWith(s.path, "/dangling.log")) {
      EXPECT_EQ(s.reason.code(), absl::StatusCode::kNotFound);
    }
    if (absl::EndsWith(s.path, "/self")) {
      EXPECT_TRUE(absl::StrContains(s.reason.message(), "symlink loop"));
    }
  }
  // The one-argument form lists the same files.
  auto plain = ExpandPath(dir.Sub("job"));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(*plain, *files);
}

TEST(ExpandPathTest, SpecialFilesAreSkippedNotOpened) {
  ScratchDir dir;
  WriteFile(dir.Sub("d/a.log"), "a\n");
  ASSERT_EQ(mkfifo(dir.Sub("d/pipe").c_str(), 0600), 0);
  std::vector<SkippedPath> skipped;
  auto files = ExpandPath(dir.Sub("d"), &skipped);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(Rel(dir, *files), std::vector<std::string>{"d/a.log"});
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_TRUE(absl::StrContains(skipped[0].reason.message(), "FIFO"));
}

// Root reads any directory, so the check runs as "nobody" in a child.
TEST(ExpandPathTest, UnreadableSubdirectoryIsReportedAndTheRestListed) {
  ScratchDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 0755), 0);
  WriteFile(dir.Sub("job/ok/a.log"), "a\n");
  WriteFile(dir.Sub("job/locked/b.log"), "b\n");
  ASSERT_EQ(chmod(dir.Sub("job/locked").c_str(), 0), 0);
  WriteFile(dir.Sub("top-locked/c.log"), "c\n");
  ASSERT_EQ(chmod(dir.Sub("top-locked").c_str(), 0), 0);

  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (geteuid() == 0 && setresuid(65534, 65534, 65534) != 0) _exit(10);
    std::vector<SkippedPath> skipped;
    auto files = ExpandPath(dir.Sub("job"), &skipped);
    if (!files.ok()) _exit(11);
    if (*files != std::vector<std::string>{dir.Sub("job/ok/a.log")}) _exit(12);
    if (skipped.size() != 1 || skipped[0].path != dir.Sub("job/locked") ||
        skipped[0].reason.code() != absl::StatusCode::kPermissionDenied ||
        !absl::StrContains(skipped[0].reason.message(), dir.Sub("job/locked"))) {
      _exit(13);
    }
    // The top path itself unreadable: an error naming it.
    auto top = ExpandPath(dir.Sub("top-locked"), &skipped);
    if (top.ok() || top.status().code() != absl::StatusCode::kPermissionDenied ||
        !absl::StrContains(top.status().message(), "top-locked")) {
      _exit(14);
    }
    _exit(0);
  }
  int wstatus = 0;
  ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
  ASSERT_TRUE(WIFEXITED(wstatus));
  EXPECT_EQ(WEXITSTATUS(wstatus), 0);
}

TEST(ExpandPathTest, ThousandsOfFiles) {
  ScratchDir dir;
  std::vector<std::string> want;
  for (int n = 0; n < 40; ++n) {
    for (int r = 0; r < 100; ++r) {
      const std::string rel =
          absl::StrCat("big/node", n, "/rank", r, ".log");
      WriteFile(dir.Sub(rel), "");
      want.push_back(dir.Sub(rel));
    }
  }
  std::sort(want.begin(), want.end());
  auto files = ExpandPath(dir.Sub("big"));
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(*files, want);
}

// ListFiles hands the walk's stat of each file to the scan's planning, which
// no longer stats it again: its facts must be what stat() of the listed path
// says (symlinks followed), for files below a directory, a file symlink,
// files of several sizes, and a top-level file; "-" is not regular.
TEST(ListFilesTest, FactsAreTheListedPathsStat) {
  ScratchDir dir;
  WriteFile(dir.Sub("job/node0/rank0.log"), std::string(1000, 'a'));
  WriteFile(dir.Sub("job/node0/empty.log"), "");
  WriteFile(dir.Sub("job/node1/rank1.log"), std::string(300 << 10, 'b'));
  WriteFile(dir.Sub("outside/big.log"), std::string(70000, 'c'));
  ASSERT_EQ(symlink("../outside/big.log", dir.Sub("job/linked.log").c_str()), 0);
  struct timespec times[2] = {{1700000000, 0}, {1700000000, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, dir.Sub("job/node0/rank0.log").c_str(), times, 0), 0);

  std::vector<SkippedPath> skipped;
  auto listed = ListFiles(dir.Sub("job"), &skipped);
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_TRUE(skipped.empty());
  auto paths = ExpandPath(dir.Sub("job"));
  ASSERT_TRUE(paths.ok()) << paths.status();
  ASSERT_EQ(listed->size(), paths->size());
  for (size_t i = 0; i < listed->size(); ++i) {
    const ListedFile& f = (*listed)[i];
    EXPECT_EQ(f.path, (*paths)[i]);
    struct stat st;
    ASSERT_EQ(stat(f.path.c_str(), &st), 0) << f.path;
    EXPECT_TRUE(f.regular) << f.path;
    EXPECT_EQ(f.size, static_cast<uint64_t>(st.st_size)) << f.path;
    EXPECT_EQ(f.mtime, static_cast<int64_t>(st.st_mtime)) << f.path;
    EXPECT_EQ(f.dev, static_cast<uint64_t>(st.st_dev)) << f.path;
    EXPECT_EQ(f.ino, static_cast<uint64_t>(st.st_ino)) << f.path;
  }
  EXPECT_EQ(Rel(dir, *paths), (std::vector<std::string>{"job/linked.log", "job/node0/empty.log",
                                                         "job/node0/rank0.log", "job/node1/rank1.log"}));
  EXPECT_EQ((*listed)[0].size, 70000u);  // the symlink's target
  EXPECT_EQ((*listed)[2].mtime, 1700000000);

  listed = ListFiles(dir.Sub("job/node1/rank1.log"), nullptr);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_TRUE((*listed)[0].regular);
  EXPECT_EQ((*listed)[0].size, uint64_t{300} << 10);

  listed = ListFiles("-", nullptr);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].path, "-");
  EXPECT_FALSE((*listed)[0].regular);
  EXPECT_EQ((*listed)[0].mtime, 0);

  listed = ListFiles(dir.Sub("nope"), nullptr);
  ASSERT_FALSE(listed.ok());
  EXPECT_TRUE(absl::StrContains(listed.status().message(), dir.Sub("nope")));
}

}  // namespace
}  // namespace faultline
