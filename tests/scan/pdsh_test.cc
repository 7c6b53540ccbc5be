// pdsh output (DeepSpeed's multi-node runner): once most lines of a source
// start with "host: ", that prefix names the host of every line, the bare
// messages of a traceback included.
#include <gtest/gtest.h>

#include <string>

#include "scan/line_format.h"

namespace faultline {
namespace {

std::string PdshLog() {
  // The runner's own line, then the remote lines (shapes from
  // huggingface/transformers#22363 and deepspeedai/DeepSpeed launch.py).
  std::string log =
      "[2023-03-24 10:44:57,101] [INFO] [runner.py:540:main] cmd = pdsh -S -f 1024 -w "
      "gpu1504,gpu1505 export NCCL_DEBUG=INFO; cd /work; python -u -m deepspeed.launcher.launch\n";
  for (int i = 0; i < 4; ++i) {
    log += "gpu1505: gpu1505:22060:22174 [0] NCCL INFO Connected all rings\n";
    log += "gpu1504: gpu1504:30024:30241 [0] NCCL INFO Connected all trees\n";
  }
  log += "gpu1505: Traceback (most recent call last):\n";
  log += "gpu1505: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.95 GiB.\n";
  return log;
}

TEST(Pdsh, DetectedFromTheHeadAndNamesTheHostOfBareLines) {
  const std::string log = PdshLog();
  const LineFormat fmt = DetectLineFormat(log);
  EXPECT_TRUE(fmt.pdsh);
  TimeContext tctx;
  const LineView v = SplitLine(
      "gpu1505: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.95 GiB.", fmt,
      tctx);
  EXPECT_EQ(v.attr.host, "gpu1505");
  // Without the file's word the same line names no host.
  EXPECT_TRUE(SplitLine(v.message, LineFormat{}, tctx).attr.host.empty());
}

TEST(Pdsh, DetectedWhenTheHeadHoldsFewLines) {
  // 1,024 ranks: the launcher's rank mapping outgrows a 4 KiB head.
  std::string log =
      "[2024-04-08 19:45:15,000] [INFO] [runner.py:568:main] cmd = pdsh -S -f 1024 -w node0017\n"
      "node0017: [2024-04-08 19:46:26,192] [INFO] [launch.py:163:main] nnodes=128\n"
      "node0017: [2024-04-08 19:46:26,192] [INFO] [launch.py:164:main] global_rank_mapping=";
  log += std::string(8000, '1');
  EXPECT_TRUE(DetectLineFormat(std::string_view(log).substr(0, 4096)).pdsh);
}

TEST(Pdsh, StampBehindThePrefixIsTheLinesTime) {
  TimeContext tctx;
  LineFormat fmt;
  fmt.pdsh = true;
  const LineView v =
      SplitLine("worker-1: [2023-03-24 10:44:59,412] [INFO] [launch.py:142:main] nnodes=2", fmt, tctx);
  EXPECT_EQ(v.attr.host, "worker-1");
  EXPECT_TRUE(v.time.has_value());
}

TEST(Pdsh, MessagesWithAColonAreNotPdsh) {
  std::string log;
  for (int i = 0; i < 8; ++i) {
    log += "Traceback (most recent call last):\n";
    log += "python3: can't open file 'train.py': [Errno 2] No such file or directory\n";
    log += "RuntimeError: CUDA error: an illegal memory access was encountered\n";
  }
  EXPECT_FALSE(DetectLineFormat(log).pdsh);
}

}  // namespace
}  // namespace faultline
