// Format-by-format tests of the timestamp recognisers on realistic line
// prefixes from GPU jobs (Kubernetes CRI, rsyslog, journald, dmesg, glog /
// PyTorch c10, Python logging, DeepSpeed, vLLM, JSON epochs). Expected times
// come from std::chrono's civil calendar, an oracle independent of ours.
#include "timeparse/timeparse.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"

namespace faultline {
namespace {

using std::string_view_literals::operator""sv;

// µs since the epoch of a UTC civil time.
int64_t Us(int y, unsigned mo, unsigned d, int h = 0, int mi = 0, int s = 0,
           int64_t frac_us = 0) {
  using namespace std::chrono;
  const sys_days days = year{y} / month{mo} / day{d};
  return (static_cast<int64_t>(days.time_since_epoch().count()) * 86400 +
          h * 3600 + mi * 60 + s) *
             1'000'000 +
         frac_us;
}

constexpr int64_t kSec = 1'000'000;

TimeContext Ctx(int default_year = 2026, int64_t tz_offset_s = 0) {
  TimeContext c;
  c.default_year = default_year;
  c.tz_offset_s = tz_offset_s;
  return c;
}

// 2026-11-02T13:46:41Z, the instant most fixtures use.
const int64_t kT0 = Us(2026, 11, 2, 13, 46, 41);

// ---------------------------------------------------------------- ISO 8601

TEST(ParseLineTimeIso, KubernetesCriLine) {
  const auto line =
      "2026-11-02T13:46:41.123456789Z stdout F [rank3]:[E1102 13:46:40.000000 "
      "1234 ProcessGroupNCCL.cpp:1234] Watchdog caught collective operation "
      "timeout"sv;
  const auto t = ParseLineTime(line, Ctx());
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->format, TimeFormat::kIso8601);
  EXPECT_EQ(t->wall_us, kT0 + 123456);  // ns truncated to µs
  EXPECT_FALSE(t->monotonic_s.has_value());
  EXPECT_FALSE(t->year_inferred);
  EXPECT_EQ(t->end, 30u);
  EXPECT_EQ(line.substr(t->end, 7), " stdout");
}

TEST(ParseLineTimeIso, Offsets) {
  struct Case {
    std::string_view line;
    int64_t want;
    size_t end;
  };
  const Case cases[] = {
      {"2026-11-02T13:46:41Z x", kT0, 20},
      {"2026-11-02t13:46:41z x", kT0, 20},
      {"2026-11-02T19:16:41+05:30 x", kT0, 25},
      {"2026-11-02T19:16:41+0530 x", kT0, 24},
      {"2026-11-02T05:46:41-08:00 x", kT0, 25},
      {"2026-11-02T05:46:41-0800 x", kT0, 24},
      {"2026-11-02T13:46:41+00 x", kT0, 22},
      {"2026-11-02 13:46:41+00:00 x", kT0, 25},
      // journalctl -o short-iso
      {"2026-11-02T13:46:41+0000 node017 kernel: NVRM: Xid (PCI:0000:3b:00): "
       "79, pid=2345",
       kT0, 24},
      // dmesg --time-format=iso uses a comma before the fraction
      {"2026-11-02T13:46:41,123456+00:00 NVRM: GPU at PCI:0000:3b:00", kT0 + 123456,
       32},
      // a zone detached by one space, then text
      {"2026-11-02 05:46:41 -0800 worker-3 started", kT0, 25},
      {"2026-11-02 13:46:41 UTC node017", kT0, 23},
      // Crossing midnight and the year through the offset.
      {"2026-01-01T01:00:00+02:00 x", Us(2025, 12, 31, 23), 25},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.line);
    const auto t = ParseLineTime(c.line, Ctx(2026, 7200));  // zone ignored
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->format, TimeFormat::kIso8601);
    EXPECT_EQ(t->wall_us, c.want);
    EXPECT_EQ(t->end, c.end);
  }
}

TEST(ParseLineTimeIso, NaiveUsesContextZone) {
  const auto t = ParseLineTime("2026-11-02 14:46:41.5 loguru | INFO | x"sv,
                               Ctx(2026, 3600));
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->format, TimeFormat::kIso8601);
  EXPECT_EQ(t->wall_us, kT0 + 500000);
  EXPECT_EQ(t->end, 21u);
}

TEST(ParseLineTimeIso, DetachedSignWithoutMinutesIsText) {
  const auto t = ParseLineTime("2026-11-02 13:46:41 -12 retries left"sv, Ctx());
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->wall_us, kT0);
  EXPECT_EQ(t->end, 19u);
}

TEST(ParseLineTimeIso, FractionLengths) {
  const std::string base = "2026-11-02T13:46:41.";
  const std::string digits = "123456789012345678";
  for (size_t n = 1; n <= digits.size(); ++n) {
    const std::string line = base + digits.substr(0, n) + "Z msg";
    SCOPED_TRACE(line);
    const auto t = ParseLineTime(line, Ctx());
    ASSERT_TRUE(t.has_value());
    int64_t want = 0;
    for (size_t k = 0; k < 6; ++k) want = want * 10 + (k < n ? digits[k] - '0' : 0);
    EXPECT_EQ(t->wall_us, kT0 + want);
    EXPECT_EQ(t->end, base.size() + n + 1);
  }
  // 19 fraction digits is garbage, not a stamp.
  EXPECT_FALSE(ParseLineTime(base + "1234567890123456789Z", Ctx()).has_value());
}

TEST(ParseLineTimeIso, RsyslogKernelLineCarriesBothClocks) {
  const auto line =
      "2026-11-02T13:46:41.123456+00:00 node017 kernel: [1000001.682554] NVRM: "
      "Xid (PCI:0000:3b:00): 79, pid=2345, name=python, GPU has fallen off the "
      "bus."sv;
  const auto t = ParseLineTime(line, Ctx());
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->format, TimeFormat::kIso8601);
  EXPECT_EQ(t->wall_us, kT0 + 123456);
  ASSERT_TRUE(t->monotonic_s.has_value());
  EXPECT_NEAR(*t->monotonic_s, 1000001.682554, 1e-7);
  EXPECT_EQ(t->end, 32u);
}

TEST(ParseLineTimeIso, GoLogPackage) {
  const auto t =
      ParseLineTime("2026/11/02 13:46:41 http: TLS handshake error"sv, Ctx());
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->format, TimeFormat::kIso8601);
  EXPECT_EQ(t->wall_us, kT0);
  EXPECT_EQ(t->end, 19u);
  EXPECT_FALSE(ParseLineTime("2026/11-02 13:46:41 x"sv, Ctx()).has_value());
}

TEST(ParseLineTimeIso, Rejections) {
  for (const std::string_view line : {
           "2026-11-02T13:46:41+0 x"sv,     // truncated offset: would misdate
           "2026-11-02T13:46:41+053 x"sv,   // three-digit offset
           "2026-11-02T13:46:41+24:00 x"sv, // out of range
           "2026-11-02T13:46:412 x"sv,      // glued digit
           "2026-11-02T13:46 x"sv,          // no seconds at a line start
           "2026-11-02 build 7"sv,          // date alone at a line start
           "2026-11-02T24:00:00Z"sv,
           "2026-11-02T13:60:00Z"sv,
           "2026-11-02T13:46:61Z"sv,
           "2026-13-02T13:46:41Z"sv,
           "2026-00-02T13:46:41Z"sv,
           "2026-11-00T13:46:41Z"sv,
           "2026-11-31T13:46:41Z"sv,
           "2026-02-29T13:46:41Z"sv,
           "26-11-02T13:46:41Z"sv,
       }) {
    SCOPED_TRACE(line);
    EXPECT_FALSE(ParseLineTime(line, Ctx()).has_value());
  }
}

// ---------------------------------------------------------- Python logging

TEST(ParseLineTimePython, DefaultAsctime) {
  const auto line =
      "2026-11-02 14:46:41,123 - torch.distributed.elastic.multiprocessing.api "
      "- ERROR - failed (exitcode: 1) local_rank: 3 (pid: 4242)"sv;
  const auto t = ParseLineTime(line, Ctx(2026, 3600));
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->format, TimeFormat::kPythonLogging);
  EXPECT_EQ(t->wall_us, kT0 + 123000);
  EXPECT_FALSE(t->year_inferred);
  EXPECT_EQ(t->end, 23u);
}

TEST(ParseLineTimePython, DeepSpeedBracketed) {
  const auto line =
      "[2026-11-02 13:46:41,123] [INFO] [launch.py:315:sigkill_handler] "
      "Killing subprocess 4242"sv;
  const auto t = ParseLineTime(line, Ctx());
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->format, TimeFormat::kPythonLogging);
  EXPECT_EQ(t->wall_us, kT0 + 123000);
  EXPECT_EQ(t->end, 25u);

  const auto open = ParseLineTime("[2026-11-02T13:46:41.5Z INFO rank 0] x"sv, Ctx());
  ASSERT_TRUE(open.has_value());
  EXPECT_EQ(open->wall_us, kT0 + 500000);
  EXPECT_EQ(open->end, 23u);

  EXPECT_FALSE(ParseLineTime("[2026-11-02 13:46:41,123x] y"sv, Ctx()).has_value());
}

TEST(ParseLineTimePython, VllmLevelPrefixed) {
  const auto line =
      "INFO 11-02 13:46:41 [api_server.py:123] vLLM API server version 0.6.3"sv;
  const auto t = ParseLineTime(line, Ctx(2026));
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->format, TimeFormat::kPythonLogging);
  EXPECT_EQ(t->wall_us, kT0);
  EXPECT_TRUE(t->year_inferred);
  EXPECT_EQ(t->end, 19u);

  const auto err = ParseLineTime(
      "ERROR 11-02 13:46:41 engine.py:135] CUDA error: an illegal memory access"sv,
      Ctx(2026));
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(err->wall_us, kT0);
  EXPECT_EQ(err->end, 20u);

  const auto full = ParseLineTime("WARNING 2026-11-02 13:46:41,250 x"sv, Ctx());
  ASSERT_TRUE(full.has_value());
  EXPECT_EQ(full->format, TimeFormat::kPythonLogging);
  EXPECT_FALSE(full->year_inferred);
  EXPECT_EQ(full->wall_us, kT0 + 250000);

  EXPECT_FALSE(ParseLineTime("INFO starting worker 3"sv, Ctx()).has_value());
  EXPECT_FALSE(ParseLineTime("INFO 13-02 13:46:41 x"sv, Ctx()).has_value());
}

// -------------------------------------------------------------------- glog

TEST(ParseLineTimeGlog, NcclWatchdogLine) {
  const auto line =
      "E1102 13:46:41.123456 1234 ProcessGroupNCCL.cpp:1234] [PG 0 Rank 3] "
      "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, "
      "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for "
      "600012 milliseconds before timing out."sv;
  const auto t = ParseLineTime(line, Ctx(2026));
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->format, TimeFormat::kGlog);
  EXPECT_EQ(t->wall_us, kT0 + 123456);
  EXPECT_TRUE(t->year_inferred);
  EXPECT_EQ(t->end, 21u);
}

TEST(ParseLineTimeGlog, Variants) {
  // Local time in the context zone, default year used.
  const auto w = ParseLineTime("W1102 05:46:41.000001  77 x.cc:1] y"sv,
                               Ctx(2026, -8 * 3600));
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->wall_us, kT0 + 1);

  const auto y = ParseLineTime("I20261102 13:46:41.123456 1 main.cc:1] hi"sv,
                               Ctx(1999));
  ASSERT_TRUE(y.has_value());
  EXPECT_EQ(y->format, TimeFormat::kGlog);
  EXPECT_FALSE(y->year_inferred);
  EXPECT_EQ(y->wall_us, kT0 + 123456);
  EXPECT_EQ(y->end, 25u);

  // PyTorch c10 logging wraps the glog header in brackets.
  const auto c10 = ParseLineTime(
      "[E1102 13:46:41.123456 1234 ProcessGroupNCCL.cpp:1234] [PG 0 Rank 3] "
      "Timeout"sv,
      Ctx(2026));
  ASSERT_TRUE(c10.has_value());
  EXPECT_EQ(c10->format, TimeFormat::kGlog);
  EXPECT_EQ(c10->wall_us, kT0 + 123456);
  EXPECT_EQ(c10->end, 22u);

  // At the very end of the buffer, no fraction.
  const auto bare = ParseLineTime("F1102 13:46:41"sv, Ctx(2026));
  ASSERT_TRUE(bare.has_value());
  EXPECT_EQ(bare->wall_us, kT0);
  EXPECT_EQ(bare->end, 14u);
}

TEST(ParseLineTimeGlog, AfterTheTerminalsCtrlCEcho) {
  // torchrun's report of the SIGINT a person sent, as a terminal shows it
  // (a Megablocks thread): the "^C" echo runs into the stamped line.
  const auto t = ParseLineTime(
      "^CW1102 13:46:41.123456 140016382740288 torch/distributed/elastic/agent/server/api.py:688] "
      "Received Signals.SIGINT death signal, shutting down workers"sv,
      Ctx(2026));
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->format, TimeFormat::kGlog);
  EXPECT_EQ(t->wall_us, kT0 + 123456);
  EXPECT_EQ(t->end, 23u);
  EXPECT_FALSE(ParseLineTime("^C"sv, Ctx(2026)).has_value());
}

TEST(ParseLineTimeGlog, C10UnpaddedMonth) {
  // PyTorch >= 2.4's c10 prefix prints March 4th as "E304".
  const auto t = ParseLineTime("[E304 10:00:02.123456 99 ProcessGroupNCCL.cpp:616] x"sv, Ctx(2026));
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->format, TimeFormat::kGlog);
  EXPECT_EQ(FormatRfc3339(*t->wall_us), "2026-03-04T10:00:02.123456Z");
  EXPECT_FALSE(ParseLineTime("E1340 10:00:02.1 x"sv, Ctx(2026)).has_value());
  EXPECT_FALSE(ParseLineTime("E999 10:00:02.1 x"sv, Ctx(2026)).has_value());
}

TEST(ParseLineTimeGlog, Rejections) {
  for (const std::string_view line : {
           "[rank3]:[E1102 13:46:41.123456 1234 ProcessGroupNCCL.cpp:1234] x"sv,
           "E1102 is an error code"sv,
           "X1102 13:46:41.123456 1 a.cc:1] x"sv,
           "I1340 13:46:41.123456 1 a.cc:1] x"sv,
           "I1102 13:46:41.123456x"sv,
           "I1102 13:46"sv,
           "I1102"sv,
       }) {
    SCOPED_TRACE(line);
    EXPECT_FALSE(ParseLineTime(line, Ctx()).has_value());
  }
}

// ------------------------------------------------------------------ syslog

TEST(ParseLineTimeSyslog, KernelXidCarriesBothClocks) {
  const auto line =
      "Nov  2 13:46:41 node017 kernel: [1000001.682554] NVRM: Xid "
      "(PCI:0000:3b:00): 79, pid=2345, name=python, GPU has fallen off the "
      "bus."sv;
  const auto t = ParseLineTime(line, Ctx(2026));
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->format, TimeFormat::kSyslog);
  EXPECT_EQ(t->wall_us, kT0);
  EXPECT_TRUE(t->year_inferred);
  ASSERT_TRUE(t->monotonic_s.has_value());
  EXPECT_NEAR(*t->monotonic_s, 1000001.682554, 1e-7);
  EXPECT_EQ(t->end, 15u);
}

TEST(ParseLineTimeSyslog, Variants) {
  const auto two = ParseLineTime("Nov 12 03:04:05 node017 sshd[123]: x"sv, Ctx(2026));
  ASSERT_TRUE(two.has_value());
  EXPECT_EQ(two->wall_us, Us(2026, 11, 12, 3, 4, 5));
  EXPECT_FALSE(two->monotonic_s.has_value());

  // Application text in brackets is not a kernel stamp.
  const auto app = ParseLineTime(
      "Nov  2 13:46:41 node017 python[1234]: [3.141592] loss=nan"sv, Ctx(2026));
  ASSERT_TRUE(app.has_value());
  EXPECT_FALSE(app->monotonic_s.has_value());

  // journalctl -o short-precise
  const auto precise = ParseLineTime(
      "Nov 02 13:46:41.123456 node017 kernel: NVRM: Xid (PCI:0000:3b:00): 79"sv,
      Ctx(2026));
  ASSERT_TRUE(precise.has_value());
  EXPECT_EQ(precise->format, TimeFormat::kSyslog);
  EXPECT_EQ(precise->wall_us, kT0 + 123456);
  EXPECT_EQ(precise->end, 22u);
  EXPECT_FALSE(precise->monotonic_s.has_value());

  // Local time at UTC+1.
  const auto local = ParseLineTime("Nov  2 14:46:41 host x"sv, Ctx(2026, 3600));
  ASSERT_TRUE(local.has_value());
  EXPECT_EQ(local->wall_us, kT0);

  // Syslog priority kept by the collector (RFC 3164 and RFC 5424).
  const auto pri = ParseLineTime("<13>Nov  2 13:46:41 host app: x"sv, Ctx(2026));
  ASSERT_TRUE(pri.has_value());
  EXPECT_EQ(pri->wall_us, kT0);
  EXPECT_EQ(pri->end, 19u);
  const auto rfc5424 = ParseLineTime(
      "<34>1 2026-11-02T13:46:41.003Z mymachine su - ID47 - 'su root' failed"sv,
      Ctx());
  ASSERT_TRUE(rfc5424.has_value());
  EXPECT_EQ(rfc5424->format, TimeFormat::kIso8601);
  EXPECT_EQ(rfc5424->wall_us, kT0 + 3000);
  EXPECT_EQ(rfc5424->end, 30u);

  // With a year (some syslog-ng templates).
  const auto year = ParseLineTime("Nov  2 2026 13:46:41 host x"sv, Ctx(1999));
  ASSERT_TRUE(year.has_value());
  EXPECT_FALSE(year->year_inferred);
  EXPECT_EQ(year->wall_us, kT0);

  // journalctl -o short-full
  const auto full = ParseLineTime(
      "Mon 2026-11-02 13:46:41 UTC node017 kernel: NVRM: Xid 79"sv, Ctx(2026, 3600));
  ASSERT_TRUE(full.has_value());
  EXPECT_EQ(full->format, TimeFormat::kIso8601);
  EXPECT_EQ(full->wall_us, kT0);
  EXPECT_EQ(full->end, 27u);
}

TEST(ParseLineTimeSyslog, LeapDayWithoutYear) {
  const auto leap = ParseLineTime("Feb 29 12:00:00 host x"sv, Ctx(2024));
  ASSERT_TRUE(leap.has_value());
  EXPECT_EQ(leap->wall_us, Us(2024, 2, 29, 12));
  // A wrong default year must not lose the stamp: it rolls to Mar 1.
  const auto common = ParseLineTime("Feb 29 12:00:00 host x"sv, Ctx(2026));
  ASSERT_TRUE(common.has_value());
  EXPECT_EQ(common->wall_us, Us(2026, 3, 1, 12));
  EXPECT_FALSE(ParseLineTime("Feb 30 12:00:00 host x"sv, Ctx(2024)).has_value());
  EXPECT_FALSE(ParseLineTime("Apr 31 12:00:00 host x"sv, Ctx(2024)).has_value());
}

TEST(ParseLineTimeSyslog, Rejections) {
  for (const std::string_view line : {
           "Nov is cold"sv, "Nov  2 13:46 host"sv, "Nov  2 13:46:41x"sv,
           "November 2 13:46:41 x"sv, "Nov 123 13:46:41 x"sv, "Nov  0 13:46:41 x"sv,
       }) {
    SCOPED_TRACE(line);
    EXPECT_FALSE(ParseLineTime(line, Ctx()).has_value());
  }
}

// -------------------------------------------------------- kernel and dmesg

TEST(ParseLineTimeKernel, Monotonic) {
  const auto big = ParseLineTime(
      "[1000001.682554] NVRM: Xid (PCI:0000:3b:00): 79, pid=2345, GPU has "
      "fallen off the bus."sv,
      Ctx());
  ASSERT_TRUE(big.has_value());
  EXPECT_EQ(big->format, TimeFormat::kKernelMonotonic);
  EXPECT_FALSE(big->wall_us.has_value());
  ASSERT_TRUE(big->monotonic_s.has_value());
  EXPECT_NEAR(*big->monotonic_s, 1000001.682554, 1e-7);
  EXPECT_EQ(big->end, 16u);

  const auto small =
      ParseLineTime("[    5.123456] pci 0000:3b:00.0: [10de:2330] type 00"sv, Ctx());
  ASSERT_TRUE(small.has_value());
  EXPECT_NEAR(*small->monotonic_s, 5.123456, 1e-9);
  EXPECT_EQ(small->end, 14u);

  // journalctl -o short-monotonic
  const auto jm = ParseLineTime("[ 8823.112233] node017 kernel: x"sv, Ctx());
  ASSERT_TRUE(jm.has_value());
  EXPECT_NEAR(*jm->monotonic_s, 8823.112233, 1e-9);
}

TEST(ParseLineTimeKernel, DmesgCtime) {
  const auto line =
      "[Mon Nov  2 14:46:41 2026] NVRM: Xid (PCI:0000:3b:00): 79, pid=2345"sv;
  const auto t = ParseLineTime(line, Ctx(1999, 3600));
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->format, TimeFormat::kDmesgCtime);
  EXPECT_EQ(t->wall_us, kT0);
  EXPECT_FALSE(t->year_inferred);
  EXPECT_EQ(t->end, 26u);

  const auto two = ParseLineTime("[Thu Nov 12 13:46:41 2026] x"sv, Ctx());
  ASSERT_TRUE(two.has_value());
  EXPECT_EQ(two->wall_us, Us(2026, 11, 12, 13, 46, 41));

  EXPECT_FALSE(ParseLineTime("[Mon Nov  2 13:46:41 2026"sv, Ctx()).has_value());
  EXPECT_FALSE(ParseLineTime("[Mon Nov  2 13:46:41] x"sv, Ctx()).has_value());
}

// NVIDIA Fabric Manager's own log: "[Nov 02 2026 06:21:41] [ERROR] [tid 841] ...".
TEST(ParseLineTimeKernel, FabricManagerStamp) {
  const auto fm = ParseLineTime(
      "[Nov 02 2026 06:21:41] [ERROR] [tid 841] detected NVSwitch fatal error 12"sv, Ctx(1999));
  ASSERT_TRUE(fm.has_value());
  EXPECT_EQ(fm->wall_us, Us(2026, 11, 2, 6, 21, 41));
  EXPECT_FALSE(fm->year_inferred);
  EXPECT_EQ(fm->end, 22u);
  const auto one_digit = ParseLineTime("[Jul  4 2021 09:50:49] [INFO] [tid 841] Connected"sv, Ctx());
  ASSERT_TRUE(one_digit.has_value());
  EXPECT_EQ(one_digit->wall_us, Us(2021, 7, 4, 9, 50, 49));
  EXPECT_FALSE(ParseLineTime("[Nov 02 2026 06:21] x"sv, Ctx()).has_value());
  EXPECT_FALSE(ParseLineTime("[Nov 31 2026 06:21:41] x"sv, Ctx()).has_value());
  EXPECT_FALSE(ParseLineTime("[Nov 02 2026 06:21:41 x"sv, Ctx()).has_value());
}

TEST(ParseLineTimeKernel, DmesgHuman) {
  const auto first = ParseLineTime("[Nov 2 13:46] NVRM: loading NVIDIA UNIX"sv,
                                   Ctx(2026));
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->format, TimeFormat::kDmesgCtime);
  EXPECT_EQ(first->wall_us, Us(2026, 11, 2, 13, 46));
  EXPECT_TRUE(first->year_inferred);
  EXPECT_EQ(first->end, 13u);

  const auto glued = ParseLineTime("[Nov12 13:46] x"sv, Ctx(2026));
  ASSERT_TRUE(glued.has_value());
  EXPECT_EQ(glued->wall_us, Us(2026, 11, 12, 13, 46));

  const auto delta = ParseLineTime("[  +0.000316] NVRM: GPU at PCI:0000:3b:00"sv,
                                   Ctx());
  ASSERT_TRUE(delta.has_value());
  EXPECT_EQ(delta->format, TimeFormat::kKernelMonotonic);
  EXPECT_FALSE(delta->wall_us.has_value());
  EXPECT_FALSE(delta->monotonic_s.has_value());
  ASSERT_TRUE(delta->delta_s.has_value());
  EXPECT_DOUBLE_EQ(*delta->delta_s, 0.000316);
  EXPECT_EQ(delta->end, 13u);

  const auto d = ParseDmesgDelta("[  +0.000316] x"sv);
  ASSERT_TRUE(d.has_value());
  EXPECT_NEAR(*d, 0.000316, 1e-12);
  const auto neg = ParseDmesgDelta("  [-1.500000] x"sv);
  ASSERT_TRUE(neg.has_value());
  EXPECT_NEAR(*neg, -1.5, 1e-12);
  EXPECT_FALSE(ParseDmesgDelta("[    5.123456] x"sv).has_value());
  EXPECT_FALSE(ParseDmesgDelta("[  +0.000316"sv).has_value());
}

TEST(ParseLineTimeKernel, Rejections) {
  for (const std::string_view line : {
           "[rank3]: Traceback (most recent call last):"sv, "[rank3]:"sv,
           "[12345] worker started"sv, "[  5.] x"sv, "[] x"sv, "["sv,
           "[    5.123456"sv, "[ 5 .1]"sv, "[Rank 3] NCCL INFO"sv,
           "[INFO] starting"sv, "[Nov 2 13:46 x"sv,
       }) {
    SCOPED_TRACE(line);
    EXPECT_FALSE(ParseLineTime(line, Ctx()).has_value());
  }
}

// ------------------------------------------------------------------- epoch

TEST(ParseLineTimeEpoch, ScalesByMagnitude) {
  struct Case {
    std::string_view line;
    int64_t want;
    size_t end;
  };
  const int64_t t = Us(2025, 11, 2, 13, 46, 41);  // 1762091201
  const Case cases[] = {
      {"1762091201.123 INFO step=10 loss=2.1", t + 123000, 14},
      {"1762091201", t, 10},
      {"1762091201123 x", t + 123000, 13},
      {"1762091201123.5 x", t + 123500, 15},
      {"1762091201123456 x", t + 123456, 16},
      {"1762091201123456789 x", t + 123456, 19},
      {"1762091201,level=info", t, 10},
      {"946684800 x", Us(2000, 1, 1), 9},
      {"4102444799.999999 x", Us(2099, 12, 31, 23, 59, 59, 999999), 17},
      {"[1762091201.123] x", t + 123000, 16},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.line);
    const auto p = ParseLineTime(c.line, Ctx(2026, 3600));  // zone ignored
    ASSERT_TRUE(p.has_value());
    EXPECT_EQ(p->format, TimeFormat::kEpoch);
    EXPECT_EQ(p->wall_us, c.want);
    EXPECT_EQ(p->end, c.end);
  }
}

TEST(ParseLineTimeEpoch, SmallIntegersAreNotEpochs) {
  for (const std::string_view line : {
           "3: hello"sv, "0: [rank0]: step 10"sv, "12: NCCL INFO"sv,
           "42 steps done"sv, "12345678 foo"sv, "946684799 x"sv,
           "4102444800 x"sv, "1762091201abc"sv, "1762091201-foo"sv,
           "1762091201/1"sv, "99999999999999999999999 x"sv,
           "10.1.2.3 - - [02/Nov/2026:13:46:41 +0000]"sv, "1762091201."sv,
       }) {
    SCOPED_TRACE(line);
    EXPECT_FALSE(ParseLineTime(line, Ctx()).has_value());
  }
}

// ---------------------------------------------------------- general rules

TEST(ParseLineTime, Rejections) {
  for (const std::string_view line : {
           ""sv, " "sv, "\t\t"sv, "step 1234"sv, "hello world"sv,
           "Traceback (most recent call last):"sv, "  File \"train.py\", line 3"sv,
           "node017:4242:4300 [3] NCCL INFO cudaDev 3 busId 3b000"sv,
           "RuntimeError: CUDA error: an illegal memory access"sv, "E"sv, "I1"sv,
           "2026"sv, "2026-11-"sv, "Mon"sv, "<13>"sv, "<13>hello"sv, "<1234>Nov  2"sv,
       }) {
    SCOPED_TRACE(line);
    EXPECT_FALSE(ParseLineTime(line, Ctx()).has_value());
  }
}

TEST(ParseLineTime, LeadingWhitespaceAndBom) {
  const auto t = ParseLineTime("  \t2026-11-02T13:46:41Z x"sv, Ctx());
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->wall_us, kT0);
  EXPECT_EQ(t->end, 23u);

  const auto bom = ParseLineTime("\xEF\xBB\xBF" "2026-11-02T13:46:41Z x"sv, Ctx());
  ASSERT_TRUE(bom.has_value());
  EXPECT_EQ(bom->end, 23u);

  const std::string far = std::string(300, ' ') + "2026-11-02T13:46:41Z";
  EXPECT_FALSE(ParseLineTime(far, Ctx()).has_value());
}

TEST(ParseLineTime, StackedStampsFirstWins) {
  const auto cri = ParseLineTime(
      "2026-11-02T13:46:41.000000Z stdout F 2026-11-02 13:46:40,000 - root - "
      "INFO - x"sv,
      Ctx());
  ASSERT_TRUE(cri.has_value());
  EXPECT_EQ(cri->format, TimeFormat::kIso8601);
  EXPECT_EQ(cri->wall_us, kT0);
  EXPECT_EQ(cri->end, 27u);

  const auto sys = ParseLineTime(
      "Nov  2 13:46:41 node017 deepspeed: [2026-11-02 13:46:40,000] [INFO] x"sv,
      Ctx(2026));
  ASSERT_TRUE(sys.has_value());
  EXPECT_EQ(sys->format, TimeFormat::kSyslog);
  EXPECT_EQ(sys->wall_us, kT0);

  const auto kernel = ParseLineTime("[ 1234.000001] [Mon Nov  2 13:46:41 2026] x"sv,
                                    Ctx());
  ASSERT_TRUE(kernel.has_value());
  EXPECT_EQ(kernel->format, TimeFormat::kKernelMonotonic);
}

// ---------------------------------------------------------- ParseIso8601

TEST(ParseIso8601, CalendarEdges) {
  const TimeContext c = Ctx();
  EXPECT_EQ(ParseIso8601("2024-02-29T00:00:00Z", c), Us(2024, 2, 29));
  EXPECT_EQ(ParseIso8601("2000-02-29T00:00:00Z", c), Us(2000, 2, 29));
  EXPECT_FALSE(ParseIso8601("2026-02-29T00:00:00Z", c).has_value());
  EXPECT_FALSE(ParseIso8601("1900-02-29T00:00:00Z", c).has_value());
  EXPECT_FALSE(ParseIso8601("2100-02-29T00:00:00Z", c).has_value());
  EXPECT_FALSE(ParseIso8601("2026-04-31T00:00:00Z", c).has_value());
  EXPECT_EQ(*ParseIso8601("2026-12-31T23:59:59Z", c) + kSec,
            *ParseIso8601("2027-01-01T00:00:00Z", c));
  EXPECT_EQ(*ParseIso8601("2026-01-31T12:00:00Z", c) + 86400 * kSec,
            *ParseIso8601("2026-02-01T12:00:00Z", c));
  EXPECT_EQ(*ParseIso8601("2024-02-28T12:00:00Z", c) + 2 * 86400 * kSec,
            *ParseIso8601("2024-03-01T12:00:00Z", c));
  EXPECT_EQ(*ParseIso8601("2026-02-28T12:00:00Z", c) + 86400 * kSec,
            *ParseIso8601("2026-03-01T12:00:00Z", c));
  // A leap second rolls into the next minute.
  EXPECT_EQ(ParseIso8601("2026-12-31T23:59:60Z", c), Us(2027, 1, 1));
  EXPECT_EQ(ParseIso8601("1970-01-01T00:00:00Z", c), 0);
  EXPECT_EQ(ParseIso8601("1969-12-31T23:59:59.5Z", c), -kSec / 2);
}

TEST(ParseIso8601, EveryDayMatchesChrono) {
  // Every day of 1970..2100 (and a few centuries around), at one time of day.
  using namespace std::chrono;
  const TimeContext c = Ctx();
  char buf[40];
  for (int y : {1600, 1899, 1900, 1969, 1970, 1999, 2000, 2024, 2025, 2026,
                2099, 2100, 2400, 9999}) {
    for (unsigned m = 1; m <= 12; ++m) {
      const unsigned days_in = static_cast<unsigned>(
          year_month_day_last(year{y} / month{m} / std::chrono::last).day());
      for (unsigned d = 1; d <= days_in; ++d) {
        std::snprintf(buf, sizeof(buf), "%04d-%02u-%02uT07:08:09Z", y, m, d);
        ASSERT_EQ(ParseIso8601(buf, c), Us(y, m, d, 7, 8, 9)) << buf;
      }
    }
  }
}

TEST(ParseIso8601, ZonesNameTheSameInstant) {
  const TimeContext c = Ctx(2026, 12345);
  for (const char* s : {"2026-11-02T13:46:41Z", "2026-11-02T19:16:41+05:30",
                        "2026-11-02T05:46:41-08:00", "2026-11-02T05:46:41-0800",
                        "2026-11-02 13:46:41+00:00", "2026-11-02T14:46:41+01"}) {
    EXPECT_EQ(ParseIso8601(s, c), kT0) << s;
  }
}

TEST(ParseIso8601, WholeStringForms) {
  const TimeContext utc1 = Ctx(2026, 3600);
  EXPECT_EQ(ParseIso8601("2026-11-02", utc1), Us(2026, 11, 1, 23));
  EXPECT_EQ(ParseIso8601("2026-11-02T13:46Z", utc1), Us(2026, 11, 2, 13, 46));
  EXPECT_EQ(ParseIso8601("2026-11-02T14:46:41", utc1), kT0);
  EXPECT_EQ(ParseIso8601("2026-11-02 14:46:41,250", utc1), kT0 + 250000);
  EXPECT_EQ(ParseIso8601(" 2026-11-02T13:46:41.000001Z\n", utc1), kT0 + 1);
  EXPECT_FALSE(ParseIso8601("2026-11-02T13:46:41Zx", utc1).has_value());
  EXPECT_FALSE(ParseIso8601("2026-11-02T13:46:41Z stdout", utc1).has_value());
  EXPECT_FALSE(ParseIso8601("2026-11-02T13", utc1).has_value());
  EXPECT_FALSE(ParseIso8601("", utc1).has_value());
  EXPECT_FALSE(ParseIso8601("1762091201", utc1).has_value());
}

// --------------------------------------------------------- FormatRfc3339

TEST(FormatRfc3339, KnownValues) {
  EXPECT_EQ(FormatRfc3339(0), "1970-01-01T00:00:00.000000Z");
  EXPECT_EQ(FormatRfc3339(-1), "1969-12-31T23:59:59.999999Z");
  EXPECT_EQ(FormatRfc3339(kT0 + 123456), "2026-11-02T13:46:41.123456Z");
  EXPECT_EQ(FormatRfc3339(Us(2024, 2, 29, 23, 59, 59, 999999)),
            "2024-02-29T23:59:59.999999Z");
  EXPECT_EQ(FormatRfc3339(Us(2000, 3, 1)), "2000-03-01T00:00:00.000000Z");
}

TEST(FormatRfc3339, RoundTripsThroughParse) {
  const TimeContext c = Ctx();
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (int k = 0; k < 20000; ++k) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    // Spread over years 1900..2199.
    const int64_t lo = Us(1900, 1, 1);
    const int64_t span = Us(2200, 1, 1) - lo;
    const int64_t us = lo + static_cast<int64_t>(x % static_cast<uint64_t>(span));
    const std::string s = FormatRfc3339(us);
    ASSERT_EQ(ParseIso8601(s, c), us) << s;
    const auto line = ParseLineTime(s + " msg", c);
    ASSERT_TRUE(line.has_value()) << s;
    ASSERT_EQ(line->wall_us, us) << s;
  }
}

// ------------------------------------------------------ ParseEpochNumber

TEST(ParseEpochNumber, ScalesByMagnitude) {
  const int64_t t = Us(2025, 11, 2, 13, 46, 41);
  EXPECT_EQ(ParseEpochNumber(1762091201.123), t + 123000);
  EXPECT_EQ(ParseEpochNumber(1762091201.0), t);
  EXPECT_EQ(ParseEpochNumber(1762091201123.0), t + 123000);
  EXPECT_EQ(ParseEpochNumber(1762091201123456.0), t + 123456);
  const auto ns = ParseEpochNumber(1762091201123456789.0);
  ASSERT_TRUE(ns.has_value());
  EXPECT_NEAR(static_cast<double>(*ns), static_cast<double>(t + 123456), 1.0);
  EXPECT_EQ(ParseEpochNumber(946684800.0), Us(2000, 1, 1));
  for (double v : {0.0, -1762091201.0, 3.0, 1234.0, 946684799.0, 4102444800.0,
                   1e25, std::nan(""), std::numeric_limits<double>::infinity()}) {
    EXPECT_FALSE(ParseEpochNumber(v).has_value()) << v;
  }
}

// --------------------------------------------------------- ParseTzOffset

TEST(ParseTzOffset, Forms) {
  EXPECT_EQ(ParseTzOffset("UTC"), 0);
  EXPECT_EQ(ParseTzOffset("utc"), 0);
  EXPECT_EQ(ParseTzOffset("Z"), 0);
  EXPECT_EQ(ParseTzOffset("GMT"), 0);
  EXPECT_EQ(ParseTzOffset("Etc/UTC"), 0);
  EXPECT_EQ(ParseTzOffset("Zulu"), 0);
  EXPECT_EQ(ParseTzOffset("+05:30"), 19800);
  EXPECT_EQ(ParseTzOffset("-0800"), -28800);
  EXPECT_EQ(ParseTzOffset("+05"), 18000);
  EXPECT_EQ(ParseTzOffset("-8"), -28800);
  EXPECT_EQ(ParseTzOffset("UTC+05:30"), 19800);
  EXPECT_EQ(ParseTzOffset("GMT-8"), -28800);
  EXPECT_EQ(ParseTzOffset("Etc/GMT+8"), -28800);  // POSIX sign inversion
  EXPECT_EQ(ParseTzOffset(" +01:00 "), 3600);
  for (const std::string_view bad :
       {"Europe/Berlin"sv, "America/Los_Angeles"sv, "PST"sv, "CET"sv, ""sv,
        "+"sv, "+5:30"sv, "+053"sv, "+05300"sv, "+24:00"sv, "+05:60"sv,
        "05:30"sv, "UTC+"sv, "+05:3"sv}) {
    EXPECT_FALSE(ParseTzOffset(bad).has_value()) << bad;
  }
}

// --------------------------------------------------------- FindMonotonic

TEST(FindMonotonic, AfterSyslogHeader) {
  const auto m = FindMonotonic(
      "Nov  2 13:46:41 node017 kernel: [1000001.682554] NVRM: Xid 79"sv);
  ASSERT_TRUE(m.has_value());
  EXPECT_NEAR(*m, 1000001.682554, 1e-7);
  const auto start = FindMonotonic("[    5.123456] pci 0000:3b:00.0"sv);
  ASSERT_TRUE(start.has_value());
  EXPECT_NEAR(*start, 5.123456, 1e-9);
  // The first bracket that is not a stamp does not hide a later one.
  const auto later = FindMonotonic("[rank3]: [  12.000001] x"sv);
  ASSERT_TRUE(later.has_value());
  EXPECT_NEAR(*later, 12.000001, 1e-9);
}

TEST(FindMonotonic, Rejections) {
  EXPECT_FALSE(FindMonotonic("[rank3]:[E1102 13:46:41.123456 1234 x]"sv));
  EXPECT_FALSE(FindMonotonic("loss [0.5] lr [3.14]"sv));
  EXPECT_FALSE(FindMonotonic("[  +0.000316] x"sv));
  EXPECT_FALSE(FindMonotonic("[1762091201.123456] epoch, not uptime"sv));
  EXPECT_FALSE(FindMonotonic("[    5.123456"sv));
  EXPECT_FALSE(FindMonotonic(""sv));
  const std::string far = std::string(130, 'x') + "[    5.123456] x";
  EXPECT_FALSE(FindMonotonic(far));
}

// ------------------------------------------------------- TimeSourceName

TEST(TimeSourceName, SchemaNames) {
  EXPECT_STREQ(TimeSourceName(TimeSource::kNone), "none");
  EXPECT_STREQ(TimeSourceName(TimeSource::kParsed), "parsed");
  EXPECT_STREQ(TimeSourceName(TimeSource::kInherited), "inherited");
  EXPECT_STREQ(TimeSourceName(TimeSource::kInferredYear), "inferred_year");
  EXPECT_STREQ(TimeSourceName(TimeSource::kMonotonicAnchored), "monotonic_anchored");
  EXPECT_STREQ(TimeSourceName(static_cast<TimeSource>(200)), "none");
}

// Found by fuzz_timeparse (tests/fuzz/regressions/fuzz_timeparse): a date of
// year 0000 or 9999 pushed past the RFC 3339 range by its zone or a leap
// second was accepted, and FormatRfc3339 wrote "-001-12-31T23:32:00.000000Z",
// which nothing reads back. The edges themselves still parse and round-trip.
TEST(TimeRange, InstantsOutsideYears0000To9999AreNotTimes) {
  TimeContext east;
  east.tz_offset_s = 28 * 60;
  EXPECT_FALSE(ParseIso8601("0000-01-01", east).has_value());
  EXPECT_FALSE(ParseIso8601("0000-01-01T00:10:00+00:28", TimeContext{}).has_value());
  EXPECT_FALSE(ParseIso8601("9999-12-31T23:59:60Z", TimeContext{}).has_value());
  EXPECT_FALSE(ParseIso8601("9999-12-31T23:30:00-01:00", TimeContext{}).has_value());
  EXPECT_FALSE(ParseLineTime("0000-01-01 00:00:00,000 INFO x", east).has_value());
  EXPECT_FALSE(ParseLineTime("9999-12-31T23:59:59-00:01 x", TimeContext{}).has_value());
  for (const char* edge : {"0000-01-01T00:00:00.000000Z", "9999-12-31T23:59:59.999999Z"}) {
    auto us = ParseIso8601(edge, TimeContext{});
    ASSERT_TRUE(us.has_value()) << edge;
    EXPECT_EQ(FormatRfc3339(*us), edge);
    auto line = ParseLineTime(std::string(edge) + " x", TimeContext{});
    ASSERT_TRUE(line.has_value() && line->wall_us.has_value()) << edge;
    EXPECT_EQ(*line->wall_us, *us);
  }
}

// ReadBracketed turns a line away at the byte after its '[' when no
// recogniser can start there (MayStartBracketedStamp): launcher prefixes
// such as "[rank3]:" no longer run the whole chain. Every bracketed form
// still parses, and the bytes turned away are exactly those no recogniser
// starts with: with any other byte in that place, no form parses.
TEST(ParseLineTime, BracketedFormsAndTheBytesTurnedAway) {
  const std::string_view forms[] = {
      "[2026-11-02 13:46:41,123] [INFO] msg",       // DeepSpeed
      "[E1102 13:46:41.123456 1234 pg.cpp:12] msg",  // c10 glog
      "[W1102 13:46:41.123456 1234 pg.cpp:12] msg",
      "[I1102 13:46:41.123456 1234 pg.cpp:12] msg",
      "[F1102 13:46:41.123456 1234 pg.cpp:12] msg",
      "[Mon Nov  2 13:46:41 2026] msg",              // ctime
      "[tue Nov  3 13:46:41 2026] msg",
      "[Nov  2 13:46:41] msg",                       // short ctime
      "[Nov 2 2026 13:46:41] msg",                   // month day year
      "[  123.456789] msg",                          // kernel monotonic
      "[1793713601.5] msg",                          // epoch
      "[  +0.000316] msg",                           // dmesg -H delta
      "[-1.5] msg",
  };
  for (std::string_view f : forms) EXPECT_TRUE(ParseLineTime(f, Ctx()).has_value()) << f;
  auto admitted = [](unsigned char c) {
    return (c >= '0' && c <= '9') || c == ' ' || c == '+' || c == '-' || c == 'I' || c == 'W' || c == 'E' ||
           c == 'F' || std::string_view("jfmasondtwJFMASONDTW").find(static_cast<char>(c)) != std::string_view::npos;
  };
  for (int c = 1; c < 256; ++c) {
    if (admitted(static_cast<unsigned char>(c))) continue;
    for (std::string_view f : forms) {
      std::string line = "[" + std::string(1, static_cast<char>(c)) + std::string(f.substr(2));
      EXPECT_FALSE(ParseLineTime(line, Ctx()).has_value()) << line;
      // The same stamp with the byte inserted, not replacing one.
      line = "[" + std::string(1, static_cast<char>(c)) + std::string(f.substr(1));
      EXPECT_FALSE(ParseLineTime(line, Ctx()).has_value()) << line;
    }
  }
  EXPECT_FALSE(ParseLineTime("[rank3]:[E1102 13:46:41.123456 1234 pg.cpp:12] msg", Ctx()).has_value());
  EXPECT_FALSE(ParseLineTime("[default0]:[2026-11-02 13:46:41,123] msg", Ctx()).has_value());
}

// MayHoldLineTime is a necessary condition: it holds on one line of every
// form ParseLineTime accepts (each of its three patterns is the only one
// some form has: dmesg -H's "[Nov 2 13:46]", the kernel's "[secs.frac]",
// a bare epoch), and on a line where it fails no position starts a time.
TEST(MayHoldLineTime, EveryFormHoldsOne) {
  const std::string_view forms[] = {
      "2026-11-02T13:46:41.123456Z msg",          // RFC 3339
      "2026-11-02 13:46:41,123 - INFO - msg",     // Python logging
      "2026/11/02 13:46:41 msg",                  // Go log
      "I1102 13:46:41.123456 1234 pg.cpp:12] msg",  // glog
      "E20261102 13:46:41.123456 1234 x.cc:1] msg",
      "E304 10:00:02.123456 1234 x.cc:1] msg",
      "Nov  2 13:46:41 node017 kernel: [1000001.682554] NVRM: Xid",  // syslog
      "Nov  2 2026 13:46:41 msg",
      "<13>Nov  2 13:46:41 host app: msg",
      "<34>1 2026-11-02T13:46:41Z host app - - - msg",
      "Mon 2026-11-02 13:46:41 UTC host app: msg",  // journalctl short-full
      "Mon Nov  2 13:46:41 UTC 2026 msg",           // date
      "INFO 11-02 13:46:41 [api_server.py:123] msg",  // vLLM
      "ERROR 2026-11-02 13:46:41,123 msg",
      "[2026-11-02 13:46:41,123] [INFO] msg",       // DeepSpeed
      "[E1102 13:46:41.123456 1234 pg.cpp:12] msg",  // c10
      "[Mon Nov  2 13:46:41 2026] msg",              // dmesg -T
      "[Nov 2 13:46] msg",                           // dmesg -H, minute only
      "[Nov12 13:46] msg",
      "[Nov 02 2026 06:21:41] msg",                  // Fabric Manager
      "[  123.456789] msg",                           // kernel monotonic
      "[1793713601.5] msg",                          // bracketed epoch
      "[  +0.000316] msg",                           // dmesg -H delta
      "[-1.5] msg",
      "1762091201 msg",                              // bare epochs
      "1762091201123: msg",
      "  1762091201.5|msg",
  };
  for (std::string_view f : forms) {
    ASSERT_TRUE(ParseLineTime(f, Ctx()).has_value()) << f;
    EXPECT_TRUE(MayHoldLineTime(f)) << f;
    const std::string behind = "[rank3]:node07:4242:4250 [3] " + std::string(f);
    EXPECT_TRUE(MayHoldLineTime(behind)) << behind;
  }
  // What the archive's unstamped lines look like: no clock, fraction or
  // nine-digit run among their digits and colons.
  for (std::string_view no : {
           "[rank607]:node075:42654:42865 [7] NCCL INFO Channel 11/32 : 607[db000] -> 608[18000] via P2P/IPC",
           "[rank607]:node075:42654:42865 [7] NCCL INFO AllReduce: opCount fdc0b sendbuff 0x7fe67a3f5c count "
           "1048576 datatype 7 op 0 root 0 comm 0x55d3a026a9f4 [nranks=1024] stream 0x55d3b007",
           "12:34 done", "12:345:67", "1.", ".5", "17620912 x", "",
       }) {
    EXPECT_FALSE(MayHoldLineTime(no)) << no;
  }
}

TEST(MayHoldLineTime, NoPositionParsesWhereItFails) {
  // Fragments of every form and near misses, glued at random.
  const std::vector<std::string> parts = {
      "2026-11-02", "2026/11/02", "T", " ", "  ", "13:46", ":41", ":4", "1:46", "]", "[", ".5", ",123", "5.",
      "+", "-", "Nov", "Mon", "I1102", "E304", "INFO", "<13>", "1762091201", "17620912", "176209120", "0",
      "12", ":", ".", "Z", "UTC", "kernel:", "\r", "\t", "x", "rank3", "\xEF\xBB\xBF", "^C"};
  std::mt19937 rng(20261205);
  int rejected = 0;
  int held = 0;
  for (int round = 0; round < 200000; ++round) {
    std::string line;
    const int n = 1 + static_cast<int>(rng() % 8);
    for (int k = 0; k < n; ++k) line += parts[rng() % parts.size()];
    if (MayHoldLineTime(line)) {
      ++held;
      continue;
    }
    ++rejected;
    for (size_t k = 0; k <= line.size(); ++k) {
      ASSERT_FALSE(ParseLineTime(std::string_view(line).substr(k), Ctx()).has_value()) << line << " at " << k;
    }
  }
  EXPECT_GT(rejected, 10000);
  EXPECT_GT(held, 10000);
}

}  // namespace
}  // namespace faultline
