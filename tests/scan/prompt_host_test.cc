// A shell prompt's host given by the scan to the matched lines under it that
// name no host (attribution/prompt.h, phase B): up to the next prompt, not
// under a command that runs elsewhere, never over a host the path names.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scan_test_util.h"

namespace faultline {
namespace {

const char kXid[] = "[Wed Jul 31 23:14:18 2024] NVRM: Xid (PCI:0000:00:05): 79, pid=1045, GPU has fallen off the bus.\n";

std::vector<std::string> XidHosts(const std::string& rel, const std::string& log, unsigned threads = 1) {
  scantest::TempDir dir;
  const std::string path = dir / rel;
  scantest::WriteFile(path, log);
  auto rs = scantest::DefaultRules();
  ScanResult r = scantest::ScanFiles(rs, {path}, scantest::BigCaps(threads));
  std::vector<std::string> hosts;
  for (const Evidence* e : scantest::OfRule(r, *rs, "xid-79-fallen-off-bus")) hosts.push_back(e->host);
  return hosts;
}

TEST(PromptHost, OutputUnderAPromptIsItsHosts) {
  const std::string log = std::string("root@node4:~# dmesg -T | grep NVRM\n") + kXid + "noise\n" + kXid;
  for (unsigned threads : {1u, 2u}) {
    EXPECT_EQ(XidHosts("dmesg.txt", log, threads), (std::vector<std::string>{"node4", "node4"}));
  }
  // The next prompt takes over, however far below.
  std::string two = std::string("[root@node17 ~]# dmesg\n") + kXid;
  for (int i = 0; i < 2000; ++i) two += "filler line without a host\n";
  two += std::string("zeyer@cn-234 ~ % dmesg\n") + kXid;
  EXPECT_EQ(XidHosts("dmesg.txt", two), (std::vector<std::string>{"node17", "cn-234"}));
}

TEST(PromptHost, NoHostFromAPromptThatIsNotThisMachines) {
  // A command run elsewhere; a prompt quoted in a log line; an address.
  for (const char* above : {"ubuntu@login1:~$ ssh node4 dmesg\n", "[rank0]: root@node4:~# dmesg\n",
                            "git@github.com: Permission denied (publickey).\n", "$ dmesg\n"}) {
    EXPECT_EQ(XidHosts("dmesg.txt", std::string(above) + kXid), (std::vector<std::string>{""})) << above;
  }
  // A prompt of a command run elsewhere ends the one above it.
  EXPECT_EQ(XidHosts("dmesg.txt", std::string("root@node4:~# ls\nroot@node4:~# ssh node5 dmesg\n") + kXid),
            (std::vector<std::string>{""}));
}

TEST(PromptHost, ThePathsHostWins) {
  EXPECT_EQ(XidHosts("gpu-b02/dmesg.txt", std::string("root@node4:~# dmesg\n") + kXid),
            (std::vector<std::string>{"gpu-b02"}));
}

}  // namespace
}  // namespace faultline
