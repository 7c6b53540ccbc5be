// The HTML report (report/html.h) on diagnoses built by hand: what a log
// line or file name can smuggle into the page (markup, control and bidi
// characters, invalid UTF-8) comes out as text; the timeline switches to one
// row per host past its row budget and stays small at 1,024 ranks even when
// every rank has lines in every time bin.
#include "report/html.h"

#include <cstdio>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ruleset/ruleset.h"
#include "util/strings.h"

namespace faultline {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kS = 1'000'000;
constexpr int64_t kT0 = 1'793'081'600LL * kS;  // 2026-10-27T06:13:20Z

const Ruleset& Rules() {
  static const std::shared_ptr<const Ruleset> rs = [] {
    auto r = Ruleset::LoadDefault();
    if (!r.ok()) {
      ADD_FAILURE() << r.status();
      return std::shared_ptr<const Ruleset>();
    }
    return *r;
  }();
  return *rs;
}

uint32_t Signal(std::string_view rule, std::string_view signal) {
  const Ruleset& rs = Rules();
  int r = rs.FindRule(rule);
  EXPECT_GE(r, 0) << rule;
  const fb::Rule* ru = rs.rule(static_cast<size_t>(r));
  for (flatbuffers::uoffset_t i = 0; i < ru->signals()->size(); ++i) {
    if (ru->signals()->Get(i)->id()->string_view() == signal) return rs.first_signal(r) + i;
  }
  ADD_FAILURE() << rule << " has no signal " << signal;
  return 0;
}

Evidence Ev(uint32_t source, uint64_t line, std::string_view rule, std::string_view signal, int64_t t,
            int64_t rank, std::string host, std::string text) {
  Evidence ev;
  ev.source = source;
  ev.line = line;
  ev.offset = line * 100;
  ev.time_us = t;
  ev.time_source = TimeSource::kParsed;
  ev.rank = rank;
  ev.host = std::move(host);
  ev.rule = static_cast<uint32_t>(Rules().FindRule(rule));
  ev.signal = Signal(rule, signal);
  ev.text = std::move(text);
  return ev;
}

size_t Count(const std::string& s, std::string_view what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

std::string Escaped(std::string_view s) {
  std::string out;
  AppendHtmlText(out, s);
  return out;
}

TEST(HtmlText, MarkupBecomesText) {
  EXPECT_EQ(Escaped("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;");
}

TEST(HtmlText, ControlCharactersAreShownNotObeyed) {
  // ESC (a terminal colour), CR, NUL, BS, DEL: their Control Pictures.
  EXPECT_EQ(Escaped("a\x1b[31mb\rc"), "a\xE2\x90\x9B[31mb\xE2\x90\x8D" "c");
  EXPECT_EQ(Escaped(std::string_view("\0\b\x7f", 3)), "\xE2\x90\x80\xE2\x90\x88\xE2\x90\xA1");
  EXPECT_EQ(Escaped("tab\tnl\n"), "tab\tnl\n");
}

TEST(HtmlText, InvalidUtf8C1AndBidiOverrides) {
  EXPECT_EQ(Escaped("a\xff\xc3(b"), "a\xEF\xBF\xBD\xEF\xBF\xBD(b");
  EXPECT_EQ(Escaped("\xC2\x85"), "\xEF\xBF\xBD");                   // NEL, a C1 control
  EXPECT_EQ(Escaped("\xEF\xBF\xBE"), "\xEF\xBF\xBD");               // U+FFFE
  EXPECT_EQ(Escaped("x\xE2\x80\xAEgpj.exe"), "x[U+202E]gpj.exe");   // RIGHT-TO-LEFT OVERRIDE
  EXPECT_EQ(Escaped("\xE2\x81\xA6i\xE2\x81\xA9"), "[U+2066]i[U+2069]");
  EXPECT_EQ(Escaped("n\xC3\xB6" "de \xE6\x97\xA5"), "n\xC3\xB6" "de \xE6\x97\xA5");  // kept
}

// A one-incident job: an Xid 79 line on `victim`, watchdog timeouts on
// every other rank 30 minutes later, and (dense) metric lines on every rank.
struct Job {
  ScanResult scan;
  Diagnosis diag;
};

Job MakeJob(int hosts, int64_t victim, bool dense, const std::string& hostile = "") {
  Job j;
  const int ranks = hosts * 8;
  auto host = [](int64_t r) { return StrCat("node", 100 + r / 8); };
  for (int64_t r = 0; r < ranks; ++r) {
    SourceSummary s;
    s.name = StrCat(host(r), "/rank-", r, ".log");
    s.host = host(r);
    s.rank = r;
    j.scan.sources.push_back(s);
    RankSummary rsum;
    rsum.rank = r;
    rsum.host = host(r);
    rsum.first_progress_us = kT0;
    rsum.last_progress_us = kT0 + (r == victim ? 700 : 720) * kS;
    j.scan.ranks[r] = rsum;
  }
  SourceSummary kern;
  kern.name = hostile.empty() ? StrCat(host(victim), "/kern.log") : hostile;
  kern.host = host(victim);
  j.scan.sources.push_back(kern);
  const uint32_t kern_src = static_cast<uint32_t>(j.scan.sources.size() - 1);

  Evidence xid = Ev(kern_src, 5, "xid-79-fallen-off-bus", "xid79", kT0 + 700 * kS, victim, host(victim),
                    StrCat("NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.", hostile));
  for (int64_t r = 0; r < ranks; ++r) {
    uint64_t line = 1;
    if (dense) {
      // A line in each of the timeline's 240 bins (the job window padded by
      // 2% each side), alternating a collateral and an unrelated rule, so
      // no two neighbouring cells merge: the worst case for the page's size.
      const int64_t start = kT0 - 10 * kS, end = kT0 + 2510 * kS, pad = (end - start) / 50;
      const int64_t bin = (end - start + 2 * pad) / 240;
      for (int k = 0; k < 240; ++k) {
        int64_t t = start - pad + k * bin + bin / 2;
        j.scan.evidence.push_back(k % 2 ? Ev(static_cast<uint32_t>(r), line++, "xid-79-fallen-off-bus", "xid79",
                                             t, r, host(r), "NVRM: Xid (PCI:0000:18:00): 79")
                                        : Ev(static_cast<uint32_t>(r), line++, "nccl-watchdog-timeout",
                                             "watchdog_timeout", t, r, host(r), "Watchdog caught"));
      }
    }
    if (r != victim) {
      j.scan.evidence.push_back(Ev(static_cast<uint32_t>(r), line++, "nccl-watchdog-timeout", "watchdog_timeout",
                                   kT0 + 2500 * kS, r, host(r), "Watchdog caught collective operation timeout"));
    }
  }
  j.scan.evidence.push_back(xid);

  Incident inc;
  inc.rule = xid.rule;
  inc.confidence = 0.99;
  inc.rank = victim;
  inc.host = host(victim);
  inc.gpu = "0000:3b:00.0";
  inc.time_us = xid.time_us;
  inc.initiating = {xid};
  inc.fix = "Drain the node.";
  inc.verify = "nvidia-smi -q";
  inc.missing_facts = {StrCat("the kernel log of ", hostile, "node0")};
  inc.explanation = "earliest hardware-layer event";
  Collateral c;
  c.rule = static_cast<uint32_t>(Rules().FindRule("nccl-watchdog-timeout"));
  for (int64_t r = 0; r < ranks; ++r) {
    if (r != victim) c.ranks.push_back(r);
  }
  for (int h = 0; h < hosts; ++h) c.hosts.push_back(StrCat("node", 100 + h));
  c.count = c.ranks.size();
  c.first_time_us = kT0 + 2500 * kS;
  c.last_time_us = kT0 + 2501 * kS;
  c.sample = j.scan.evidence.front();
  inc.collateral = {c};
  j.diag.incidents = {inc};
  j.diag.job_start_us = kT0 - 10 * kS;
  j.diag.job_end_us = kT0 + 2510 * kS;
  j.diag.ranks = static_cast<uint64_t>(ranks);
  j.diag.hosts = static_cast<uint64_t>(hosts);
  j.diag.clock_offsets_s[host(0)] = 42.5;
  j.diag.clock_offset_source[host(0)] = "user";
  return j;
}

TEST(ReportHtml, HostileLineAndFileNameStayText) {
  const std::string hostile = "<script>alert(1)</script>\x1b[2J\r<img src=x onerror=alert(2)>\xE2\x80\xAE";
  Job j = MakeJob(2, 2, false, hostile);
  std::string page = ReportHtml(Rules(), j.scan, j.diag);
  EXPECT_EQ(Count(page, "<script"), 1u);  // the page's own
  EXPECT_THAT(page, Not(HasSubstr("<img")));
  EXPECT_THAT(page, Not(HasSubstr("\x1b")));
  EXPECT_THAT(page, Not(HasSubstr("\r")));
  EXPECT_THAT(page, Not(HasSubstr("\xE2\x80\xAE")));
  EXPECT_THAT(page, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;\xE2\x90\x9B[2J\xE2\x90\x8D&lt;img"));
  EXPECT_GE(Count(page, "&lt;script&gt;alert(1)"), 3u);  // the line, its file name, a missing fact
}

TEST(ReportHtml, ShowsTheJobEndTheCallerStated) {
  Job j = MakeJob(1, 2, false);
  EXPECT_THAT(ReportHtml(Rules(), j.scan, j.diag), Not(HasSubstr("Job end as stated")));
  j.diag.job.state = JobState::kFailed;
  j.diag.job.has_exit_status = true;
  j.diag.job.exit_status = 137;
  EXPECT_THAT(ReportHtml(Rules(), j.scan, j.diag), HasSubstr("Job end as stated: failed, exit status 137</p>"));
  j.diag.job.state = JobState::kUnknown;
  j.diag.job.exit_status = -9;
  EXPECT_THAT(ReportHtml(Rules(), j.scan, j.diag), HasSubstr("Job end as stated: exit status -9</p>"));
}

TEST(ReportHtml, SelfContained) {
  Job j = MakeJob(2, 2, false);
  std::string page = ReportHtml(Rules(), j.scan, j.diag);
  EXPECT_THAT(page, HasSubstr("default-src 'none'"));
  EXPECT_THAT(page, HasSubstr("script-src 'sha256-"));
  // Nothing to fetch: the SVG namespace is the only URL, and no src/href.
  EXPECT_EQ(Count(page, "http"), Count(page, "http://www.w3.org/2000/svg") + Count(page, "http-equiv"));
  EXPECT_THAT(page, Not(HasSubstr(" src=")));
  EXPECT_THAT(page, Not(HasSubstr("href=")));
  EXPECT_THAT(page, Not(HasSubstr("@import")));
  EXPECT_THAT(page, Not(HasSubstr("url(")));
  EXPECT_THAT(page, HasSubstr("prefers-color-scheme:dark"));
  EXPECT_EQ(page, ReportHtml(Rules(), j.scan, j.diag));  // deterministic
}

TEST(ReportHtml, SmallJobHasARowPerRankUnderItsHost) {
  Job j = MakeJob(2, 2, false);
  std::string page = ReportHtml(Rules(), j.scan, j.diag);
  EXPECT_THAT(page, HasSubstr("class=\"tl rank-mode\""));
  EXPECT_EQ(Count(page, "class=\"rl k-rank"), 16u);
  EXPECT_EQ(Count(page, "class=\"rl k-head"), 2u);
  EXPECT_THAT(page, HasSubstr("class=\"rl k-rank init\" title=\"rank 2 (initiating)"));
  EXPECT_THAT(page, HasSubstr("data-reference=\""));
  EXPECT_THAT(page, HasSubstr("data-rank=\"2\" data-host=\"node100\""));
  EXPECT_THAT(page, HasSubstr("node100 +42.500 s (user)"));
  EXPECT_THAT(page, HasSubstr("class=\"band\""));   // the collateral cluster's span
  EXPECT_THAT(page, HasSubstr("class=\"m-init\""));  // the initiating event's marker
}

TEST(ReportHtml, ThousandRanksGroupByHostWithinTwoMegabytes) {
  Job j = MakeJob(128, 351, true);
  ASSERT_GT(j.scan.evidence.size(), 240'000u);
  std::string page = ReportHtml(Rules(), j.scan, j.diag);
  EXPECT_LT(page.size(), 2u << 20) << page.size();
  std::printf("dense 1,024-rank page: %zu bytes\n", page.size());
  // Cells too many to title each: drawn as paths, one per class and level.
  EXPECT_GE(Count(page, "<path class=\"c-coll\""), 1u);
  EXPECT_GE(Count(page, "<path class=\"c-misc\""), 1u);
  EXPECT_THAT(page, HasSubstr("class=\"tl host-mode\""));
  EXPECT_EQ(Count(page, "class=\"rl k-host"), 128u);
  EXPECT_EQ(Count(page, "class=\"rl k-rank"), 0u);
  EXPECT_THAT(page, HasSubstr("class=\"rl k-host init\" title=\"node143: ranks 344-351 (initiating)"));
  EXPECT_THAT(page, HasSubstr("1,024 ranks on 128 hosts"));
}

// The incident's action, with its reason and what set it; markup in the
// reason stays text.
TEST(ReportHtml, ShowsTheAction) {
  Job j = MakeJob(2, 3, false);
  Action& a = j.diag.incidents[0].action;
  a.kind = ActionKind::kRestartExcluding;
  a.exclude_hosts = {"node100"};
  a.exclude_gpus = {"0000:3b:00.0"};
  a.reason = "xid-79 on node100: <b>gone</b>.";
  a.set_by = "recurrence";
  std::string page = ReportHtml(Rules(), j.scan, j.diag);
  EXPECT_NE(page.find("class=\"action action-restart_excluding\"><b>Action:</b> restart without node100 "
                      "(GPU 0000:3b:00.0) &mdash; xid-79 on node100: &lt;b&gt;gone&lt;/b&gt;."),
            std::string::npos);
  EXPECT_NE(page.find("(set by recurrence)"), std::string::npos);
  a.kind = ActionKind::kUnknown;
  a.missing_fact = "the host to drain";
  page = ReportHtml(Rules(), j.scan, j.diag);
  EXPECT_NE(page.find("<b>Missing:</b> the host to drain"), std::string::npos);
}

// Several attempts: a table of them, oldest first, each with how it was
// recognised and its primary rule, host and step; the primary's attempt
// marked. One attempt: no table.
TEST(ReportHtml, ListsTheAttempts) {
  Job j = MakeJob(2, 3, false);
  std::string page = ReportHtml(Rules(), j.scan, j.diag);
  EXPECT_THAT(page, Not(HasSubstr("id=\"attempts\"")));
  const auto xid = static_cast<int64_t>(Rules().FindRule("xid-79-fallen-off-bus"));
  j.diag.attempts = {
      Attempt{0, "prior bundle 1", "bundle", kT0 - 3600 * kS, kT0 - 1800 * kS, xid, "node<b>", -1, 1200},
      Attempt{1, "attempt_2", "directory", kT0, kNoTime, -1, "", -1, -1},
      Attempt{2, "attempt_3", "directory", kT0 + 10 * kS, kNoTime, xid, "node100", 3, -1}};
  j.diag.incidents[0].attempt = 2;
  page = ReportHtml(Rules(), j.scan, j.diag);
  EXPECT_THAT(page, HasSubstr("<section id=\"attempts\"><h2>Attempts (3, oldest first)</h2>"));
  EXPECT_THAT(page, HasSubstr("<tr><td>1</td><td>prior bundle 1</td><td>bundle</td>"));
  EXPECT_THAT(page, HasSubstr("<code>xid-79-fallen-off-bus</code></td><td>node&lt;b&gt;</td><td>1200</td></tr>"));
  EXPECT_THAT(page, HasSubstr("<tr><td>2</td><td>attempt_2</td><td>directory</td>"));
  EXPECT_THAT(page, HasSubstr("<span class=\"muted\">no failure</span>"));
  EXPECT_THAT(page, HasSubstr("<tr class=\"current\"><td>3</td><td>attempt_3</td>"));
  EXPECT_EQ(Count(page, "class=\"current\""), 1u);
  // After the primary card (and its action), before the timeline.
  EXPECT_LT(page.find("<b>Action:</b>"), page.find("id=\"attempts\""));
  EXPECT_LT(page.find("id=\"attempts\""), page.find("id=\"timeline\""));
}

}  // namespace
}  // namespace faultline
