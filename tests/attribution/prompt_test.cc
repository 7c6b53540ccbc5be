// Shell prompts above a command's output (attribution/prompt.h): the shells'
// default prompts read, and what only looks like one refused.

#include <string>
#include <string_view>

#include "attribution/prompt.h"
#include "gtest/gtest.h"

namespace faultline {
namespace {

struct Read {
  bool ok = false;
  std::string host, command;
};

Read Parse(std::string_view line) {
  ShellPrompt sp;
  Read r;
  r.ok = ParseShellPrompt(line, &sp);
  if (r.ok) {
    r.host = std::string(sp.host);
    r.command = std::string(sp.command);
  }
  return r;
}

TEST(ShellPrompt, DefaultPromptsOfBashRedHatAndZsh) {
  struct Case {
    const char* line;
    const char* host;
    const char* command;
  };
  for (const Case& c : {
           Case{"zeyer@cn-234 ~ % nvidia-smi", "cn-234", "nvidia-smi"},
           Case{"ubuntu@gpu-node-7:~/train$ python train.py --batch-size 64", "gpu-node-7", "python"},
           Case{"root@32a68c302449:/workspace# python finetune.py", "32a68c302449", "python"},
           Case{"[alice@dgx02 megatron]$ bash run.sh", "dgx02", "bash"},
           Case{"[root@node17 ~]# dmesg -T | tail", "node17", "dmesg"},
           Case{"(base) bob@a100-03:~$ nvidia-smi", "a100-03", "nvidia-smi"},
           Case{"(myenv) [bob@login1 ~]$ /usr/bin/srun -N2 python x.py", "login1", "/usr/bin/srun"},
           Case{"root@node4:~# dmesg -T |grep NVRM", "node4", "dmesg"},
           Case{"zeyer@cn-234 ~/setups % ls\r", "cn-234", "ls"},
       }) {
    Read r = Parse(c.line);
    EXPECT_TRUE(r.ok) << c.line;
    EXPECT_EQ(r.host, c.host) << c.line;
    EXPECT_EQ(r.command, c.command) << c.line;
  }
}

TEST(ShellPrompt, WhatOnlyLooksLikeAPromptIsNone) {
  for (const char* no : {
           "git@github.com: Permission denied (publickey).",
           "git@github.com:org/repo.git $ x",
           "alice@example.com wrote: $ 5 for the GPU hour",
           "[rank0]: root@node1:~# python train.py",
           "2024-01-25 15:12:23 root@node1:~# ls",
           "ubuntu@gpu-node-7:~/train$ ",
           "ubuntu@gpu-node-7:~/train$",
           "scp ckpt.pt ubuntu@gpu-node-7:~/ckpt/ $ done",
           "ubuntu@gpu-node-7:relative$ ls",
           "[alice@dgx02 megatron $ ls",
           "@node1:~$ ls",
           "1user@node1:~$ ls",
           "user@node1.cluster:~$ ls",
           "$ nvidia-smi",
       }) {
    EXPECT_FALSE(Parse(no).ok) << no;
  }
}

TEST(ShellPrompt, TheLastPromptOfATextIsInForce) {
  ShellPrompt sp;
  EXPECT_FALSE(LastShellPrompt("no prompt here\nmail me at a@b.org\n", &sp));
  EXPECT_FALSE(LastShellPrompt("", &sp));
  ASSERT_TRUE(LastShellPrompt("x\nalice@n1:~$ ls\nout\nbob@n2 ~ % nvidia-smi\nFailed\n", &sp));
  EXPECT_EQ(sp.host, "n2");
  ASSERT_TRUE(LastShellPrompt("alice@n1:~$ ls", &sp));
  EXPECT_EQ(sp.host, "n1");
  // A prompt quoted inside a log line is not a line's prompt.
  ASSERT_TRUE(LastShellPrompt("alice@n1:~$ ls\n[rank0]: bob@n2:~$ x\n", &sp));
  EXPECT_EQ(sp.host, "n1");
}

TEST(ShellPrompt, CommandsThatRunElsewhere) {
  for (const char* remote : {"ssh", "srun", "/usr/bin/kubectl", "mpirun", "squeue", "pdsh"}) {
    EXPECT_TRUE(RunsElsewhere(remote)) << remote;
  }
  for (const char* local : {"python", "nvidia-smi", "dmesg", "torchrun", "sshd-check", "./run.sh"}) {
    EXPECT_FALSE(RunsElsewhere(local)) << local;
  }
}

}  // namespace
}  // namespace faultline
