// Python tracebacks folded into the exception line that ends them: the
// frames land on its evidence as `raised_at` and `traceback`, only from the
// exception's own rank, and the same whatever the chunking or the source.
#include "scan/traceback.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <iterator>
#include <utility>
#include <vector>

#include "evidence/bundle.h"
#include "scan_test_util.h"
#include "util/strings.h"

namespace faultline {
namespace {

using ::testing::HasSubstr;
using scantest::BigCaps;
using scantest::Diff;
using scantest::Keys;

std::optional<TracebackFold> Fold(std::string_view window, std::string_view line) {
  return FoldTraceback(window, true, line, LineFormat{}, TimeContext{});
}

constexpr std::string_view kOom =
    "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has "
    "a total capacity of 79.15 GiB of which 1.23 GiB is free.";

std::string Traceback(int rank) {
  std::string p = "[rank" + std::to_string(rank) + "]: ";
  return p + "Traceback (most recent call last):\n" +
         p + "  File \"/workspace/train.py\", line 212, in <module>\n" +
         p + "    main()\n" +
         p + "  File \"/workspace/train.py\", line 180, in main\n" +
         p + "    loss.backward()\n" +
         p + "  File \"/usr/lib/python3/site-packages/torch/_tensor.py\", line 521, in backward\n" +
         p + "    torch.autograd.backward(\n" +
         p + "    ^^^^^^^^^^^^^^^^^^^^^^^^\n";
}

TEST(Traceback, FramesOutermostFirstInnermostRaisedAt) {
  auto f = Fold("[rank3]: step 10 done\n" + Traceback(3), kOom);
  ASSERT_TRUE(f.has_value());
  EXPECT_TRUE(f->complete);
  EXPECT_EQ(f->frame_count, 3u);
  EXPECT_EQ(f->raised_at, "/usr/lib/python3/site-packages/torch/_tensor.py:521 in backward");
  EXPECT_EQ(f->frames,
            "/workspace/train.py:212 in <module> > /workspace/train.py:180 in main > "
            "/usr/lib/python3/site-packages/torch/_tensor.py:521 in backward");
}

// A frame's `File "` seen only once its colour codes are gone (each line is
// read without its escapes): the window's bytes do not hold the words, and
// the frames still fold, as they do uncoloured.
TEST(Traceback, FramesWhoseWordsOnlyEscapesSplitStillFold) {
  const std::string plain = "[rank3]: step 10 done\n" + Traceback(3);
  for (std::string_view code : {std::string_view("\x1b[1m"), std::string_view("#033[0m"), std::string_view("[0m")}) {
    std::string coloured = plain;
    for (size_t pos = 0; (pos = coloured.find("File \"", pos)) != std::string::npos;) {
      coloured.replace(pos, 6, "Fi" + std::string(code) + "le \"");
      pos += 6 + code.size();
    }
    ASSERT_EQ(coloured.find("File \""), std::string::npos);
    auto want = Fold(plain, kOom), got = Fold(coloured, kOom);
    ASSERT_TRUE(want.has_value());
    ASSERT_TRUE(got.has_value()) << code;
    EXPECT_EQ(got->frames, want->frames) << code;
    EXPECT_EQ(got->raised_at, want->raised_at) << code;
    EXPECT_EQ(got->frame_count, want->frame_count) << code;
  }
}

TEST(Traceback, InterleavedRanksKeepTheirOwnFrames) {
  // Rank 5's traceback printed at the same moment, line by line between
  // rank 3's; rank 5's frames name another file.
  std::string a = Traceback(3), b = Traceback(5);
  for (size_t pos; (pos = b.find("train.py")) != std::string::npos;) b.replace(pos, 8, "other.py");
  std::string mixed;
  size_t ia = 0, ib = 0;
  while (ia < a.size() || ib < b.size()) {
    size_t na = a.find('\n', ia), nb = b.find('\n', ib);
    if (ia < a.size()) mixed += a.substr(ia, na + 1 - ia), ia = na + 1;
    if (ib < b.size()) mixed += b.substr(ib, nb + 1 - ib), ib = nb + 1;
  }
  auto f = Fold(mixed, kOom);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->frame_count, 3u);
  EXPECT_THAT(f->frames, ::testing::Not(HasSubstr("other.py")));
  EXPECT_THAT(f->frames, HasSubstr("train.py:180 in main"));
}

// A logger record holding a traceback in its message (SGLang's "Scheduler
// hit an exception: {traceback}") prints its prefix on the header line only:
// the bare exception line is that record's and takes the header's rank.
TEST(Traceback, BareExceptionTakesItsRecordHeadersRank) {
  const std::string record =
      "[2025-02-21 22:59:28 TP3] Scheduler hit an exception: Traceback (most recent call last):\n"
      "  File \"/sgl/python/sglang/srt/managers/scheduler.py\", line 1825, in run_scheduler_process\n"
      "    scheduler.event_loop_overlap()\n"
      "  File \"/usr/lib/python3/site-packages/torch/cuda/streams.py\", line 100, in synchronize\n"
      "    super().synchronize()\n";
  constexpr std::string_view kBare = "RuntimeError: CUDA error: an illegal memory access was encountered";
  auto f = Fold(record, kBare);
  ASSERT_TRUE(f.has_value());
  EXPECT_TRUE(f->complete);
  EXPECT_EQ(f->frame_count, 2u);
  ASSERT_TRUE(f->header_attr.has_value());
  EXPECT_EQ(f->header_attr->rank, 3);
  // An exception line with its own prefix keeps it: no header is adopted.
  f = Fold(Traceback(3), kOom);
  ASSERT_TRUE(f.has_value());
  EXPECT_FALSE(f->header_attr.has_value());
  // Another stream's line between the header and the frames: the header is
  // not the bare line's record.
  std::string split = record;
  split.insert(split.find('\n') + 1, "[rank5]: step 11 done\n");
  f = Fold(split, kBare);
  ASSERT_TRUE(f.has_value());
  EXPECT_FALSE(f->header_attr.has_value());
}

// Ray's RayTaskError prints each task's traceback under the task's header
// (ray/exceptions.py puts "ray::<title> (pid=N, ip=A, ...)" where the
// task's "Traceback (most recent call last):" was), and the driver prints
// a nested one's inside the outer's message. The trainer on the head node
// (10.0.0.78) only passed on the error its worker on 10.0.0.19 raised:
// the outer header's line and the exception at the bottom both name the
// worker, the innermost header. The same for any chunking.
TEST(Traceback, NestedRayTaskHeadersNameTheInnermostTask) {
  scantest::TempDir dir;
  std::string log =
      "Traceback (most recent call last):\n"
      "  File \"/opt/job/train.py\", line 96, in <module>\n"
      "    result = trainer.fit()\n"
      "  File \"/opt/ray/_private/worker.py\", line 2547, in get\n"
      "    raise value.as_instanceof_cause()\n";
  const size_t outer_at = log.size();
  log += "ray.exceptions.RayTaskError(DistBackendError): ray::_Inner.train() (pid=249, ip=10.0.0.78, "
         "actor_id=37a2771439edeb1576a519a301000000, repr=TorchTrainer)\n"
         "  File \"/opt/ray/train/_internal/utils.py\", line 54, in check_for_failure\n"
         "    ray.get(object_ref)\n";
  const size_t inner_at = log.size();
  log += "ray.exceptions.RayTaskError(DistBackendError): ray::_RayTrainWorker__execute.get_next() (pid=192, "
         "ip=10.0.0.19, actor_id=a3e4eb7bfa5c10d44e303ba301000000, repr=<RayTrainWorker object at 0x7fbf>)\n"
         "  File \"/opt/ray/train/_internal/worker_group.py\", line 33, in __execute\n"
         "    raise skipped from exception_cause(skipped)\n"
         "  File \"/opt/job/train.py\", line 61, in train_func\n"
         "    dist.all_reduce(t)\n";
  const size_t cause_at = log.size();
  log += "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
         "ProcessGroupNCCL.cpp:1970, unhandled system error, NCCL version 2.18.1\n";
  const std::string path = dir / "driver.log";
  scantest::WriteFile(path, log);
  auto rs = scantest::DefaultRules();
  ScanResult whole = scantest::ScanFiles(rs, {path}, BigCaps(1));
  int outer = 0, inner = 0, cause = 0;
  for (const Evidence& e : whole.evidence) {
    if (e.offset != outer_at && e.offset != inner_at && e.offset != cause_at) continue;
    (e.offset == outer_at ? outer : e.offset == inner_at ? inner : cause)++;
    EXPECT_EQ(e.host, "10.0.0.19") << e.offset;
    EXPECT_EQ(e.pid, 192) << e.offset;
  }
  EXPECT_GT(outer, 0);
  EXPECT_GT(inner, 0);
  EXPECT_GT(cause, 0);
  auto want = Keys(whole);
  for (size_t chunk : {size_t{4096}, inner_at + 10, cause_at - 10}) {
    EXPECT_EQ(Diff(want, Keys(scantest::ScanFiles(rs, {path}, BigCaps(2, chunk)))), "") << chunk;
  }
  // One header alone: its task is the one that raised.
  const std::string single = log.substr(inner_at);
  auto f = Fold(single.substr(0, cause_at - inner_at), log.substr(cause_at, log.size() - cause_at - 1));
  ASSERT_TRUE(f.has_value());
  EXPECT_TRUE(f->complete);
  EXPECT_EQ(f->frame_count, 2u);
}

TEST(Traceback, NoFoldWithoutATracebackRightAbove) {
  EXPECT_FALSE(Fold("[rank3]: step 10 done\n[rank3]: step 11 done\n", kOom).has_value());
  // Frames, then four unrelated lines: they do not end at this line.
  std::string t = Traceback(3) + "[rank3]: x\n[rank3]: y\n[rank3]: z\n[rank3]: w\n";
  EXPECT_FALSE(Fold(t, kOom).has_value());
  // A header with no frame.
  EXPECT_FALSE(Fold("[rank3]: Traceback (most recent call last):\n", kOom).has_value());
}

TEST(Traceback, ChainedExceptionsTakeTheLastTraceback) {
  std::string t = Traceback(3) +
                  "[rank3]: KeyError: 'x'\n[rank3]: \n"
                  "[rank3]: During handling of the above exception, another exception occurred:\n"
                  "[rank3]: \n[rank3]: Traceback (most recent call last):\n"
                  "[rank3]:   File \"/workspace/handler.py\", line 9, in recover\n"
                  "[rank3]:     retry()\n";
  auto f = Fold(t, kOom);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->frames, "/workspace/handler.py:9 in recover");
}

// Python's logging prints a record's exc_info right under its message: a
// traceback under a WARNING record was caught and logged (xFormers' import
// probe, as a Wan2.2 run on Windows printed it); one under an ERROR record,
// an INFO step line (the last progress before an uncaught exception) or an
// ordinary line keeps no level.
TEST(Traceback, WarningRecordAboveTheHeaderMarksItLogged) {
  const std::string frames =
      "Traceback (most recent call last):\n"
      "  File \"C:\\Python312\\Lib\\site-packages\\xformers\\__init__.py\", line 57, in _is_triton_available\n"
      "    import triton  # noqa\n"
      "    ^^^^^^^^^^^^^\n";
  constexpr std::string_view kExc = "ModuleNotFoundError: No module named 'triton'";
  auto logged = Fold(
      "[2025-08-29 12:21:03,962] WARNING: A matching Triton is not available, some optimizations "
      "will not be enabled\n" + frames, kExc);
  ASSERT_TRUE(logged.has_value());
  EXPECT_EQ(logged->logged_level, "WARNING");
  auto error = Fold("2024-05-02 10:11:12,345 - ERROR - could not load the plugin\n" + frames, kExc);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->logged_level, "");
  auto info = Fold(
      "[rank3]:[titan] 2025-06-04 11:39:01,988 - root - INFO - step: 390  loss:  8.9482\n" + frames, kExc);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->logged_level, "");
  auto plain = Fold("Loading checkpoint shards: 100%| 3/3 [00:00<00:00, 37.14it/s]\n" + frames, kExc);
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->logged_level, "");
  // A level name inside a word ("NOWARNING") or far into the line is no level.
  auto word = Fold("NOWARNING: probe\n" + frames, kExc);
  ASSERT_TRUE(word.has_value());
  EXPECT_EQ(word->logged_level, "");
}

// A record that ends its own message with the header on one line (a message
// that ends in traceback.format_exc()) logged the traceback: its level is
// the logged level, whatever the line above it is.
TEST(Traceback, RecordThatCarriesTheHeaderIsTheLoggedRecord) {
  const std::string frames =
      "  File \"train.py\", line 141, in main\n"
      "    loss = step(batch)\n";
  constexpr std::string_view kExc = "KeyError: 'x'";
  auto error = Fold("WARNING:root:checkpoint upload took 124 s\n"
                    "ERROR:root:training loop failed: Traceback (most recent call last):\n" + frames, kExc);
  ASSERT_TRUE(error.has_value());
  EXPECT_TRUE(error->complete);
  EXPECT_EQ(error->logged_level, "");
  auto warning = Fold("INFO:root:epoch 3 step 1200 loss 0.41\n"
                      "WARNING:root:skipped a sample: Traceback (most recent call last):\n" + frames, kExc);
  ASSERT_TRUE(warning.has_value());
  EXPECT_EQ(warning->logged_level, "WARNING");
}

TEST(Traceback, WindowCutInsideTheFramesIsMarked) {
  std::string t = Traceback(3);
  // Not at the source's start: the first (partial) line is ignored, and the
  // header is beyond the window.
  std::string cut = t.substr(t.find("line 212"));
  auto f = FoldTraceback(cut, false, kOom, LineFormat{}, TimeContext{});
  ASSERT_TRUE(f.has_value());
  EXPECT_FALSE(f->complete);
  EXPECT_THAT(f->frames, ::testing::StartsWith("... earlier frames > /workspace/train.py:180"));
}

std::optional<ExceptionLine> After(std::string_view header, std::string_view after) {
  return FindExceptionLine(header, after, LineFormat{}, TimeContext{});
}

// FindExceptionLine's answer for `after` under `header`: whether it found
// the exception line, and whether it told the text running out in frames.
std::pair<bool, bool> Told(std::string_view header, std::string_view after) {
  bool in_frames = false;
  bool found = FindExceptionLine(header, after, LineFormat{}, TimeContext{}, &in_frames).has_value();
  return {found, in_frames};
}

// The header's evidence is the exception line after the frames, code and
// caret lines, whatever its class is called; another rank's lines in between
// are skipped.
TEST(Traceback, ExceptionLineAfterTheFramesWhateverItsClass) {
  std::string t = Traceback(3);
  std::string frames = t.substr(t.find('\n') + 1);
  std::string header = t.substr(0, t.find('\n'));
  auto e = After(header, frames + "[rank5]: step 12 done\n[rank3]: _queue.Empty\n[rank3]: after\n");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->index, 8u);
  EXPECT_EQ(e->exception, "_queue.Empty");
  EXPECT_EQ(e->message, "");
  const std::string pool = frames + "[rank3]: concurrent.futures.process.BrokenProcessPool: A process in the pool died\n";
  e = After(header, pool);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->exception, "concurrent.futures.process.BrokenProcessPool");
  EXPECT_EQ(e->message, "A process in the pool died");
  EXPECT_EQ(pool.substr(e->begin, e->end - e->begin), pool.substr(frames.size(), pool.size() - frames.size() - 1));
}

// No exception line: frames that end in a log record (a cut excerpt), in
// the window's end, or an exception chained to the traceback after it
// (that one's header reads the exception the program ended on).
TEST(Traceback, NoExceptionLineForACutOrChainedTraceback) {
  std::string t = Traceback(3);
  std::string frames = t.substr(t.find('\n') + 1);
  std::string header = t.substr(0, t.find('\n'));
  EXPECT_FALSE(After(header, frames + "[rank3]: 2026-11-02 13:46:10 INFO retrying\n").has_value());
  EXPECT_FALSE(After(header, frames).has_value());
  EXPECT_FALSE(After(header, frames + "[rank3]: _queue.Empty").has_value());  // a partial line
  EXPECT_FALSE(After(header, "[rank3]: _queue.Empty\n").has_value());       // no frame
  std::string chained = frames + "[rank3]: _queue.Empty\n[rank3]: \n[rank3]: During handling of the above "
                        "exception, another exception occurred:\n[rank3]: \n" + t + "[rank3]: RuntimeError: x\n";
  EXPECT_FALSE(After(header, chained).has_value());
}

// The lines running out inside the frames (an excerpt or a log cut before
// the exception line) is told apart from frames that end in something else;
// a traceback whose outermost frame is a __del__ was printed and dropped.
TEST(Traceback, FramesRunningOutAreTold) {
  std::string t = Traceback(3);
  std::string frames = t.substr(t.find('\n') + 1);
  std::string header = t.substr(0, t.find('\n'));
  EXPECT_EQ(Told(header, frames), std::pair(false, true));
  EXPECT_EQ(Told(header, frames + "[rank3]: 2026-11-02 13:46:10 INFO retrying\n"), std::pair(false, false));
  EXPECT_EQ(Told(header, frames + "[rank3]: _queue.Empty\n"), std::pair(true, false));
  // No frame: the traceback was cut right below its bare header.
  EXPECT_EQ(Told(header, ""), std::pair(false, true));
  EXPECT_EQ(Told(header, "[rank3]: 2026-11-02 13:46:10 INFO retrying\n"), std::pair(false, false));
  const std::string finalizer =
      "  File \"/opt/vllm/engine/llm_engine.py\", line 520, in __del__\n"
      "  File \"/opt/vllm/executor/uniproc_executor.py\", line 71, in shutdown\n";
  EXPECT_EQ(Told("Traceback (most recent call last):", finalizer), std::pair(false, false));
}

// threading's and multiprocessing's lines above the traceback of an
// exception that ended a thread or a child process, also behind a prefix the
// format does not split off but the header's line has as well.
// A Ray task's header alone on its line (Tune's failure report, Ray Train
// v2) heads the task's frames as Python's header would: the exception after
// them is read, and frames running out are told, though the header names a
// host the bare frames do not print.
TEST(Traceback, RayTaskHeaderAloneHeadsItsFrames) {
  const std::string header = "ray::ImplicitFunc.train() (pid=33261, ip=10.10.8.10, repr=train_model_raytune)";
  const std::string frames =
      "  File \"/opt/ray/tune/trainable.py\", line 360, in train\n"
      "    result = self.step()\n"
      "  File \"/opt/ray/tune/function_runner.py\", line 645, in _trainable_func\n"
      "    output = fn()\n";
  EXPECT_EQ(Told(header, frames), std::pair(false, true));
  EXPECT_EQ(Told(header, frames + "RuntimeError: CUDA error: invalid device ordinal\n"), std::pair(true, false));
  auto e = FindExceptionLine(header, frames + "RuntimeError: CUDA error: invalid device ordinal\n", LineFormat{},
                             TimeContext{});
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->exception, "RuntimeError");
  EXPECT_EQ(e->index, 4u);
}

TEST(Traceback, ChildHeaders) {
  constexpr std::string_view kHeader = "Traceback (most recent call last):";
  auto under = [&](std::string_view header, std::string_view above) {
    return UnderChildHeader(header, above, LineFormat{}, TimeContext{});
  };
  EXPECT_TRUE(under(kHeader, "Exception in thread Thread-1:\n"));
  EXPECT_TRUE(under(kHeader, "Exception in thread Thread-1 (load_and_enqueue):\n"));
  EXPECT_TRUE(under(kHeader, "Process Process-1:7:\n"));
  EXPECT_TRUE(under(kHeader, "Process SpawnProcess-3:"));
  EXPECT_TRUE(under("2024-06-07T11:43:12.485653172Z Traceback (most recent call last):",
                    "2024-06-07T11:43:12.483401697Z Process Process-2:\n"));
  EXPECT_FALSE(under(kHeader, "Process finished with exit code 1\n"));
  EXPECT_FALSE(under(kHeader, "Processing batch 12:\n"));
  EXPECT_FALSE(under(kHeader, "Exception in worker process 3\n"));
  EXPECT_FALSE(under(kHeader, ""));
}

// IPython's header names the exception's class and has no colon; its
// frames are its own (numbered code lines, "---->" arrows): the exception
// line is the first that starts with that class (a StopIteration with an
// empty message, as a notebook prints it). CPython's header never takes
// this path, nor does a progress bar's redraw before a header.
TEST(Traceback, IPythonHeaderNamesTheExceptionLine) {
  const std::string header = "StopIteration                             Traceback (most recent call last)";
  const std::string frames =
      "<ipython-input-13-6f755a42859a> in batch_step(self)\n"
      "    274 \n"
      "--> 276         t_cur = self.t_epoch + next(self.batch_increment)\n"
      "    277         for param_group, (lr, weight_decay) in zip(self.optimizer.param_groups,\n"
      "\n";
  auto e = After(header, frames + "StopIteration: \n");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->exception, "StopIteration");
  EXPECT_EQ(e->index, 5u);
  EXPECT_FALSE(After(header, frames).has_value());  // cut before its exception line
  EXPECT_FALSE(After(header, frames + "StopIteration: \n\nDuring handling of the above exception, another "
                             "exception occurred:\n").has_value());
  EXPECT_FALSE(After("Training progress:   0%|  | 70/60000 Traceback (most recent call last)",
                     frames + "StopIteration: \n").has_value());
  EXPECT_FALSE(After("Traceback (most recent call last):", frames + "StopIteration: \n").has_value());
}

// IPython's traceback whose text runs out in its frames (an arrow line
// seen, or a frame's heading right below the header; no exception line) is
// told as one cut in its frames; not one whose text goes on past them, nor
// a header with no frame marked after it.
TEST(Traceback, IPythonFramesRunningOutAreTold) {
  const std::string header = "OutOfMemoryError                          Traceback (most recent call last)";
  const std::string frames =
      "Cell In[23], line 1\n"
      "----> 1 mod.train(\n"
      "      2     max_epochs=30000,\n";
  EXPECT_EQ(Told(header, frames), std::pair(false, true));
  EXPECT_EQ(Told(header, frames + "OutOfMemoryError: CUDA out of memory.\n"), std::pair(true, false));
  // No arrow line yet: ultratb writes a frame's heading first, its code
  // lines (the arrow among them) after it.
  EXPECT_EQ(Told(header, "Cell In[23], line 1\n      2     max_epochs=30000,\n"), std::pair(false, true));
  EXPECT_EQ(Told(header, "Input In [3], in <module>\n      1 import torch\n"), std::pair(false, true));
  // Code lines with no heading nor arrow, and a heading that is not the
  // first line under the header, mark no frame.
  EXPECT_EQ(Told(header, "      2     max_epochs=30000,\n"), std::pair(false, false));
  EXPECT_EQ(Told(header, "epoch 3 step 200 loss 1.41\nCell In[23], line 1\n      2     x = 1\n"),
            std::pair(false, false));
  EXPECT_EQ(Told(header, frames + "partial"), std::pair(false, false));  // a partial line: the text goes on
  // The text goes on past the frames.
  EXPECT_EQ(Told(header, frames + "\nepoch 3 step 200 loss 1.41\n"), std::pair(false, false));
  EXPECT_EQ(Told(header, frames + "   (...)\n     12 mod.plot_history(1000)\n\n"), std::pair(false, true));
}

// A text that runs out on the line ultratb heads a frame with, its code
// lines not yet printed, ends in the frames too: "<file> in <function>(<args>)"
// before IPython 8, "File <file>:<line>, in <function>(<args>)" and "Cell
// In[n], line m" since. A sentence with " in " after the frames is no frame's.
TEST(Traceback, IPythonFrameHeadersEndTheFrames) {
  const std::string header = "OutOfMemoryError                          Traceback (most recent call last)";
  const std::string frames =
      "/opt/ipykernel_36/773422404.py in <cell line: 0>()\n"
      "----> 1 trainer_stats = trainer.train()\n"
      "\n";
  EXPECT_EQ(Told(header, frames + "/usr/lib/python3/site-packages/transformers/trainer.py in train(self, "
                                  "resume_from_checkpoint, trial, **kwargs)\n"),
            std::pair(false, true));
  EXPECT_EQ(Told(header, frames + "<ipython-input-4-2f1c0e> in <module>\n"), std::pair(false, true));
  EXPECT_EQ(Told(header, frames + "File ~/lib/trainer.py:2245, in Trainer.train(self, trial)\n"),
            std::pair(false, true));
  EXPECT_EQ(Told(header, frames + "Cell In[8], line 14\n"), std::pair(false, true));
  EXPECT_EQ(Told(header, frames + "Saving checkpoint in /opt/ckpt\n"), std::pair(false, false));
  EXPECT_EQ(Told(header, frames + "Epoch 3 done in 41.2s (loss 1.41)\n"), std::pair(false, false));
  EXPECT_EQ(Told(header, frames + "Epoch 3 done in 41s\n"), std::pair(false, false));
}

// A traceback joined onto its header's line: the source ends in it when no
// more line of its stream follows.
TEST(Traceback, FlattenedTracebackEndingTheSourceIsTold) {
  const std::string header =
      "Traceback (most recent call last): File \"train.py\", line 178, in <module> train() File \"train.py\", "
      "line 134, in train images, targets = next(batch_iterator)";
  EXPECT_EQ(Told(header, ""), std::pair(false, true));
  EXPECT_EQ(Told(header, "\n\n"), std::pair(false, true));
  EXPECT_EQ(Told(header, "epoch 3 step 200 loss 1.41\n"), std::pair(false, false));
  // No frame on the line.
  EXPECT_EQ(Told("Traceback (most recent call last): see below", ""), std::pair(false, false));
}

// A stream's cut waits for a traceback whose header is in its last window.
TEST(Traceback, StreamCutMovesBeforeARecentHeader) {
  std::string noise = "step 1 done\n";
  std::string t = Traceback(3);
  std::string buf = noise + t;
  EXPECT_EQ(CutBeforeTraceback(buf, buf.size()), noise.size());
  EXPECT_EQ(CutBeforeTraceback(t, t.size()), 0u);
  EXPECT_EQ(CutBeforeTraceback(noise, noise.size()), noise.size());
  std::string far = t + std::string(kTracebackWindow, 'x') + "\n";
  EXPECT_EQ(CutBeforeTraceback(far, far.size()), far.size());
}

// A job log with a traceback deep enough to straddle small chunks; the OOM
// evidence must carry the same folded frames for a file in one chunk, a
// file cut in 4 KiB chunks, a .gz, and a stream fed in random pieces. So
// must an exception whose class no exception signal reads (_queue.Empty):
// the traceback header's evidence, the exception line after the frames.
void ExpectSameFoldForEveryChunking(std::string_view exception) {
  scantest::TempDir dir;
  std::string log;
  for (int i = 0; i < 300; ++i) {
    log += "[rank3]: [2026-11-02 13:46:" + std::to_string(10 + i % 50) + "] step " +
           std::to_string(i) + " loss 2.31 throughput 412.0 samples/s\n";
  }
  log += Traceback(3);
  log += std::string(exception) + "\n";
  for (int i = 0; i < 40; ++i) log += "[rank3]: shutting down worker " + std::to_string(i) + "\n";
  scantest::WriteFile(dir / "node017/rank-3.log", log);
  scantest::WriteFile(dir / "gz/node017/rank-3.log.gz", scantest::Gzip(log));
  auto rs = scantest::DefaultRules();

  ScanResult whole = scantest::ScanFiles(rs, {dir / "node017/rank-3.log"}, BigCaps(1));
  const Evidence* oom = nullptr;
  for (const Evidence& e : whole.evidence) {
    if (e.Field("raised_at")) oom = &e;
  }
  ASSERT_NE(oom, nullptr) << "no evidence carries the folded traceback";
  EXPECT_EQ(*oom->Field("raised_at"),
            "/usr/lib/python3/site-packages/torch/_tensor.py:521 in backward");
  EXPECT_THAT(*oom->Field("traceback"), HasSubstr("/workspace/train.py:180 in main"));

  auto want = Keys(whole);
  EXPECT_EQ(Diff(want, Keys(scantest::ScanFiles(rs, {dir / "node017/rank-3.log"}, BigCaps(2, 4096)))), "");
  auto gz = Keys(scantest::ScanFiles(rs, {dir / "gz/node017/rank-3.log.gz"}, BigCaps(1)));
  EXPECT_EQ(gz.size(), want.size());
  for (size_t i = 0; i < gz.size() && i < want.size(); ++i) EXPECT_EQ(gz[i].fields, want[i].fields);
  // A stream flushed after every random piece: each flush scans the whole
  // lines buffered so far as one chunk, so tracebacks straddle chunks and
  // the merge completes their windows.
  for (uint32_t round = 0; round < 4; ++round) {
    auto got = Keys(scantest::ScanStreamFlushed(rs, dir / "node017/rank-3.log", log, BigCaps(1),
                                                7 + round, 700));
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].fields, want[i].fields) << i;
  }
}

TEST(Traceback, SameFoldForEveryChunkingAndSource) {
  ExpectSameFoldForEveryChunking(kOom);
  ExpectSameFoldForEveryChunking("[rank3]: _queue.Empty");
}

// Evidence on a traceback's own lines (here the frame in TensorBoard's
// event_file_writer.py) belongs to the exception that ends it: it names the
// exception's line in `in_traceback_of` and takes its time and rank. A frame
// of another rank printed into the middle is not taken. The same for any
// chunking and for byte ranges merged from bundles.
TEST(Traceback, LinesOfTheTracebackBelongToTheException) {
  scantest::TempDir dir;
  std::string log;
  for (int i = 0; i < 200; ++i) {
    log += "[rank0]: [2026-11-02 13:46:" + std::to_string(10 + i % 50) + "] step " +
           std::to_string(i) + " loss 2.31\n";
  }
  const std::string writer =
      "  File \"/usr/lib/python3/site-packages/tensorboard/summary/writer/event_file_writer.py\", "
      "line 117, in add_event\n";
  log += "[rank0]: Traceback (most recent call last):\n";
  log += "[rank0]:   File \"/workspace/train.py\", line 88, in <module>\n";
  log += "[rank0]:     writer.add_scalar(\"loss\", loss, step)\n";
  const size_t frame_at = log.size();
  log += "[rank0]: " + writer;
  log += "[rank0]:     self._async_writer.write(event.SerializeToString())\n";
  const size_t other_at = log.size();
  log += "[rank5]: " + writer;  // another rank's line, interleaved
  const size_t exc_at = log.size();
  log += "[rank0]: OSError: [Errno 28] No space left on device\n";
  for (int i = 0; i < 30; ++i) log += "[rank0]: shutting down " + std::to_string(i) + "\n";
  const std::string path = dir / "node003/rank-0.log";
  scantest::WriteFile(path, log);
  auto rs = scantest::DefaultRules();

  ScanResult whole = scantest::ScanFiles(rs, {path}, BigCaps(1));
  const Evidence *frame = nullptr, *other = nullptr, *exc = nullptr;
  for (const Evidence& e : whole.evidence) {
    if (e.offset == frame_at) frame = &e;
    if (e.offset == other_at) other = &e;
    if (e.offset == exc_at && rs->rule(e.rule)->id()->string_view() == "disk-full-enospc") exc = &e;
  }
  ASSERT_TRUE(frame && other && exc);
  EXPECT_EQ(rs->rule(frame->rule)->id()->string_view(), "wandb-tracking-failure");
  ASSERT_NE(exc->Field("raised_at"), nullptr);
  ASSERT_NE(frame->Field("in_traceback_of"), nullptr);
  EXPECT_EQ(*frame->Field("in_traceback_of"), std::to_string(exc->line));
  EXPECT_EQ(frame->rank, 0);
  EXPECT_EQ(frame->time_us, exc->time_us);
  EXPECT_EQ(other->Field("in_traceback_of"), nullptr);
  EXPECT_EQ(other->rank, 5);

  auto want = Keys(whole);
  for (size_t chunk : {size_t{4096}, exc_at - 100, exc_at + 10}) {
    EXPECT_EQ(Diff(want, Keys(scantest::ScanFiles(rs, {path}, BigCaps(2, chunk)))), "") << chunk;
  }
  for (uint64_t at : {frame_at + 20, exc_at - 5, log.size() / 2}) {
    EXPECT_EQ(Diff(want, Keys(scantest::ScanRangesMerged(rs, path, {at}, true))), "") << "cut at " << at;
  }
}

// A traceback pasted into an issue with its indentation lost: frames, code
// lines and Python 3.11's caret lines all at the prefix's column. The line
// under a flat frame is its code line, whatever it reads as (`main()`,
// `loss.backward()`); the first line after a frame's code (and carets)
// that is neither is the exception line.
std::string FlatTraceback(std::string_view p, bool carets) {
  std::string c = carets ? std::string(p) + "^^^^^^^^^^^^^^^^^^^^^^^^\n" : "";
  return std::string(p) + "File \"/workspace/train.py\", line 212, in <module>\n" +
         std::string(p) + "main()\n" + c +
         std::string(p) + "File \"/workspace/train.py\", line 180, in main\n" +
         std::string(p) + "loss.backward()\n" + c +
         std::string(p) + "File \"/usr/lib/python3/site-packages/torch/_tensor.py\", line 521, in backward\n" +
         std::string(p) + "torch.autograd.backward(self, gradient, retain_graph, create_graph)\n" + c;
}

TEST(Traceback, FlatPastedFramesEndInTheirExceptionLine) {
  for (bool carets : {false, true}) {
    for (std::string_view p : {std::string_view(""), std::string_view("[rank3]: ")}) {
      const std::string header = std::string(p) + "Traceback (most recent call last):";
      const std::string frames = FlatTraceback(p, carets);
      const std::string text = frames + std::string(p) + "RuntimeError: CUDA error: an illegal memory access was encountered\n" +
                               std::string(p) + "epoch 3 done\n";
      auto e = After(header, text);
      ASSERT_TRUE(e.has_value()) << carets << p;
      EXPECT_EQ(e->index, carets ? 9u : 6u) << p;
      EXPECT_EQ(e->exception, "RuntimeError") << carets << p;
      EXPECT_EQ(e->message, "CUDA error: an illegal memory access was encountered");
      // A bare class, a dotted one.
      e = After(header, frames + std::string(p) + "torch.OutOfMemoryError\n");
      ASSERT_TRUE(e.has_value()) << carets << p;
      EXPECT_EQ(e->exception, "torch.OutOfMemoryError");
      // Cut in its frames: no exception line, told as running out there.
      EXPECT_EQ(Told(header, frames), std::pair(false, true)) << carets << p;
      // Frames that end in a blank line or a log record have none.
      EXPECT_FALSE(After(header, frames + std::string(p) + "\n").has_value());
      EXPECT_FALSE(After(header, frames + std::string(p) + "2026-11-02 13:46:10 INFO retrying\n").has_value());
    }
  }
  // The code line under a flat frame is never the exception line, even when
  // it reads as one; the line after it is.
  auto e = After("Traceback (most recent call last):",
                 "File \"x.py\", line 3, in f\nraise KeyError(k)\nKeyError: 'lr'\n");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->exception, "KeyError");
  EXPECT_EQ(e->message, "'lr'");
  EXPECT_EQ(e->index, 2u);
}

// A flat traceback chained to the next one: the last exception is the one
// the program ended on, the first header has none.
TEST(Traceback, FlatPastedChainedTracebackDefersToTheNext) {
  const std::string header = "Traceback (most recent call last):";
  const std::string text = FlatTraceback("", false) + "KeyError: 'lr'\n\nDuring handling of the above exception, "
                           "another exception occurred:\n\n" + header + "\n" + FlatTraceback("", true) +
                           "RuntimeError: x\n";
  EXPECT_FALSE(After(header, text).has_value());
  const std::string second = text.substr(text.rfind(header) + header.size() + 1);
  auto e = After(header, second);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->exception, "RuntimeError");
}

// The flat frames fold into the exception line's evidence as indented ones do.
TEST(Traceback, FlatPastedFramesFold) {
  for (bool carets : {false, true}) {
    auto flat = Fold("step 10 done\nTraceback (most recent call last):\n" + FlatTraceback("", carets),
                     "RuntimeError: CUDA error: an illegal memory access was encountered");
    ASSERT_TRUE(flat.has_value()) << carets;
    EXPECT_TRUE(flat->complete);
    EXPECT_EQ(flat->frame_count, 3u);
    EXPECT_EQ(flat->raised_at, "/usr/lib/python3/site-packages/torch/_tensor.py:521 in backward");
    EXPECT_EQ(flat->frames,
              "/workspace/train.py:212 in <module> > /workspace/train.py:180 in main > "
              "/usr/lib/python3/site-packages/torch/_tensor.py:521 in backward");
  }
}

// Indented tracebacks read as before: a column-0 line under an indented
// frame's code is the exception line.
TEST(Traceback, IndentedTracebackUnchangedByFlatReading) {
  const std::string text = "  File \"x.py\", line 3, in f\n    main()\n    ^^^^^^\nValueError: bad\n";
  auto e = After("Traceback (most recent call last):", text);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->exception, "ValueError");
  EXPECT_EQ(e->index, 3u);
  e = After("Traceback (most recent call last):", "  File \"x.py\", line 3, in f\nValueError: bad\n");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->index, 1u);
}

// CPython 3.13's display of an instruction that spans several lines
// (traceback.py StackSummary.format_frame_summary): its first, last and
// anchor lines, each with its carets under it, and '...<N lines>...' for
// the lines it leaves out. They are the frame's code, not lines after it:
// the exception line after them is read, walking forwards from the header
// and back from the exception line, and frames running out are told.
constexpr char kPy313MultiLineFrame[] =
    "  File \"/opt/venv/lib/python3.13/site-packages/torch/distributed/run.py\", line 892, in run\n"
    "    elastic_launch(\n"
    "    ~~~~~~~~~~~~~~~\n"
    "        config=config,\n"
    "        ~~~~~~~~~~~~~~\n"
    "    ...<2 lines>...\n"
    "        entrypoint=cmd,\n"
    "        ~~~~~~~~~~~~~~~\n"
    "    )(*cmd_args)\n"
    "    ~^^^^^^^^^^^\n";

TEST(Traceback, MultiLineInstructionDisplayIsTheFramesCode) {
  const std::string header = "Traceback (most recent call last):";
  const std::string frames = kPy313MultiLineFrame;
  const std::string exception = "ValueError: no rendezvous backend";
  auto e = After(header, frames + exception + "\n");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->exception, "ValueError");
  EXPECT_EQ(Told(header, frames), std::pair(false, true));
  auto f = Fold(header + "\n" + frames, exception);
  ASSERT_TRUE(f.has_value());
  EXPECT_TRUE(f->complete);
  EXPECT_EQ(f->frame_count, 1u);
  // Four indented lines after a frame with no caret line among them are
  // not a frame's code: the reader still gives up there.
  const std::string plain =
      "  File \"/opt/x.py\", line 1, in f\n    a\n    b\n    c\n    d\n";
  EXPECT_FALSE(After(header, plain + exception + "\n").has_value());
}

// The walks share one split of a line (traceback_internal::UseSplitMemo, and
// the look ahead's AfterSplits given to the header's fold): what they read
// is what every walk splitting each line itself read, on
// the shapes the walks tell apart -- CPython 3.13's multi-line frames,
// IPython's headers cut in their frames, chained tracebacks, Ray task
// headers, coloured and pdsh-prefixed lines, a tqdm redraw's carriage
// return -- each read twice (the second time from the shared splits), and
// the same bytes read under another format and another time context in
// between (the shared split is the line's under those only).
std::string Described(const std::optional<ExceptionLine>& e, bool cut) {
  if (!e) return StrCat("none cut=", cut);
  return StrCat(e->index, " ", e->begin, "-", e->end, " ", e->exception, ": ", e->message, " cut=", cut);
}

std::string Described(const std::optional<TracebackFold>& f) {
  if (!f) return "none";
  return StrCat(f->raised_at, " | ", f->frames, " | ", f->frame_count, " ", f->complete, " ", f->span, " ",
                f->logged_level, " ", f->header_attr ? f->header_attr->rank.value_or(-1) : -2, " ",
                f->header_attr ? f->header_attr->host : "", " ", f->task_host, " ", f->task_pid.value_or(-1));
}

// A text read as the scan reads it: each line as a header looking ahead
// and the fold of its exception line's traceback (as TakeExceptionLine
// makes it, given the look ahead's splits when `shared`), and each line's
// own fold of the window above it.
std::string Walked(std::string_view text, const LineFormat& fmt, const TimeContext& tctx, bool shared) {
  std::string out;
  for (size_t at = 0; at < text.size();) {
    size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) break;
    const std::string_view line = text.substr(at, nl - at);
    const std::string_view after = text.substr(nl + 1);
    bool cut = false;
    AfterSplits splits;
    const std::optional<ExceptionLine> e = FindExceptionLine(line, after, fmt, tctx, &cut, shared ? &splits : nullptr);
    out += Described(e, cut) + "\n";
    if (e) {
      const std::string above = "[rank3]: step 9\n";
      const std::string window = StrCat("\n", above, line, "\n", after.substr(0, e->begin));
      const std::string_view exception_line = after.substr(e->begin, e->end - e->begin);
      out += Described(FoldTraceback(window, false, exception_line, fmt, tctx, shared ? &splits : nullptr,
                                     2 + above.size() + line.size())) +
             "\n";
    }
    out += Described(FoldTraceback(text.substr(0, at), true, line, fmt, tctx)) + "\n";
    at = nl + 1;
  }
  return out;
}

TEST(Traceback, SharedSplitsReadAsEveryWalksOwn) {
  const std::string t13 =
      StrCat("Traceback (most recent call last):\n", kPy313MultiLineFrame, "ValueError: no rendezvous backend\n");
  const std::string ipython =
      "OutOfMemoryError                          Traceback (most recent call last)\n"
      "Cell In[23], line 1\n"
      "----> 1 mod.train(\n"
      "      2     max_epochs=30000,\n";
  const std::string chained = Traceback(3) +
                              "[rank3]: KeyError: 'x'\n[rank3]: \n"
                              "[rank3]: During handling of the above exception, another exception occurred:\n"
                              "[rank3]: \n" + Traceback(3) + std::string(kOom) + "\n";
  const std::string interleaved = Traceback(3) + Traceback(5) + "[rank5]: RuntimeError: NCCL error\n" +
                                  std::string(kOom) + "\n";
  const std::string ray =
      "ray::ImplicitFunc.train() (pid=33261, ip=10.10.8.10, repr=train_model_raytune)\n"
      "  File \"/opt/ray/tune/trainable.py\", line 375, in train\n"
      "    raise skipped from exception_cause(skipped)\n"
      "RuntimeError: worker died\n";
  const std::string coloured =
      "\x1b[31m2026-11-02 13:46:10 WARNING retrying\x1b[0m\n"
      "Traceback (most recent call last):\n"
      "\x1b[1m  File \"/w/train.py\", line 3, in f\x1b[0m\n"
      "    f()\n"
      "ValueError: bad\n";
  const std::string pdsh =
      "gpu7: Traceback (most recent call last):\n"
      "gpu7:   File \"/w/train.py\", line 212, in <module>\n"
      "gpu8:   File \"/w/other.py\", line 9, in g\n"
      "gpu7:     main()\n"
      "gpu8:     g()\n"
      "gpu7:   File \"/w/train.py\", line 180, in main\n"
      "gpu7:     loss.backward()\n"
      "gpu7: RuntimeError: CUDA error\n";
  const std::string tqdm =
      "  3%|3         | 70/2000\r2026-11-02 13:46:10 [rank2]: Traceback (most recent call last):\n"
      "[rank2]:   File \"/w/train.py\", line 3, in f\n"
      "  4%|4         | 80/2000\r[rank2]:     f()\n"
      "[rank2]: ValueError: bad\n";
  LineFormat with_pdsh;
  with_pdsh.pdsh = true;
  TimeContext other_zone;
  other_zone.tz_offset_s = 3600;
  other_zone.default_year = 2024;
  const std::pair<LineFormat, TimeContext> contexts[] = {
      {LineFormat{}, TimeContext{}}, {with_pdsh, TimeContext{}}, {LineFormat{}, other_zone}, {with_pdsh, other_zone}};
  for (const std::string& text : {t13, ipython, chained, interleaved, ray, coloured, pdsh, tqdm}) {
    std::vector<std::string> own;
    traceback_internal::UseSplitMemo(false);
    for (const auto& [fmt, tctx] : contexts) own.push_back(Walked(text, fmt, tctx, false));
    traceback_internal::UseSplitMemo(true);
    for (int round = 0; round < 2; ++round) {
      for (size_t c = 0; c < std::size(contexts); ++c) {
        EXPECT_EQ(Walked(text, contexts[c].first, contexts[c].second, true), own[c]) << text << " context " << c;
      }
    }
  }
  // The pdsh prefix names the stream: read without it, the other host's
  // frame is taken (the walks told the two formats apart).
  traceback_internal::UseSplitMemo(true);
  EXPECT_NE(Walked(pdsh, LineFormat{}, TimeContext{}, true), Walked(pdsh, with_pdsh, TimeContext{}, true));
}

}  // namespace
}  // namespace faultline
