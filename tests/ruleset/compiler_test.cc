// Every compiler error names the file, the rule id and the field.
#include "ruleset/compiler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <filesystem>
#include <map>

#include "ruleset/pattern_cost.h"
#include "ruleset/ruleset.h"
#include "test_rules.h"

namespace faultline {
namespace {

using ::testing::HasSubstr;
using testing::MakeRuleTree;
using testing::Replace;
using testing::WriteFile;

std::string CompileError(const std::string& dir) {
  auto r = CompileRuleSource(dir);
  return r.ok() ? std::string("OK") : std::string(r.status().message());
}

TEST(Compiler, CompilesValidTreeAndLoadsIt) {
  std::string dir = MakeRuleTree("ok");
  auto r = CompileRuleSource(dir);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->rules, 2u);
  EXPECT_EQ(r->signals, 2u);
  // Compiled by this process: its database is used as it is.
  auto rs = Ruleset::LoadBuiltIn(r->buffer, "test");
  ASSERT_TRUE(rs.ok()) << rs.status().message();
  EXPECT_EQ((*rs)->rule_count(), 2u);
  EXPECT_FALSE((*rs)->recompiled());
  EXPECT_EQ((*rs)->trust(), RulesetTrust::kBuiltIn);
  EXPECT_GE((*rs)->FindRule("nccl-watchdog-timeout"), 0);
  EXPECT_EQ((*rs)->FindRule("nope"), -1);
  // The same bytes from outside (unsigned) are not trusted: recompiled.
  auto foreign = Ruleset::LoadBuffer(r->buffer, "test");
  ASSERT_TRUE(foreign.ok()) << foreign.status().message();
  EXPECT_TRUE((*foreign)->recompiled());
  EXPECT_EQ((*foreign)->trust(), RulesetTrust::kUntrusted);
}

TEST(Compiler, BadRegexNamesFileRuleAndField) {
  std::string dir = MakeRuleTree("badre");
  WriteFile(dir + "/gpu/xid-79.json",
            Replace(testing::kXidRule, R"J(NVRM: Xid \\(PCI)J", R"J(NVRM: Xid \\(PCI(()J"));
  std::string err = CompileError(dir);
  EXPECT_THAT(err, HasSubstr("gpu/xid-79.json"));
  EXPECT_THAT(err, HasSubstr("rule 'xid-79-fallen-off-bus'"));
  EXPECT_THAT(err, HasSubstr("signals[0].pattern"));
}

TEST(Compiler, MissingField) {
  std::string dir = MakeRuleTree("missing");
  WriteFile(dir + "/gpu/xid-79.json", Replace(testing::kXidRule, R"J("fix": "f",)J", ""));
  std::string err = CompileError(dir);
  EXPECT_THAT(err, HasSubstr("gpu/xid-79.json: rule 'xid-79-fallen-off-bus': fix: missing field"));
}

TEST(Compiler, UnknownFieldIsATypo) {
  std::string dir = MakeRuleTree("typo");
  WriteFile(dir + "/gpu/xid-79.json", Replace(testing::kXidRule, R"J("fix": "f",)J", R"J("fixx": "f", "fix": "f",)J"));
  EXPECT_THAT(CompileError(dir), HasSubstr("fixx: unknown field"));
}

TEST(Compiler, FailingExample) {
  std::string dir = MakeRuleTree("example");
  WriteFile(dir + "/gpu/xid-79.json", Replace(testing::kXidRule, "Xid (PCI:0000:3b:00): 79, pid='<unknown>'",
                                               "Xid (PCI:0000:3b:00): 78, pid='<unknown>'"));
  std::string err = CompileError(dir);
  EXPECT_THAT(err, HasSubstr("rule 'xid-79-fallen-off-bus': signals[0].examples[0]: does not match"));
}

TEST(Compiler, CounterExampleThatMatches) {
  std::string dir = MakeRuleTree("counter");
  WriteFile(dir + "/gpu/xid-79.json", Replace(testing::kXidRule, "Xid (PCI:0000:3b:00): 31, pid=1234",
                                               "Xid (PCI:0000:3b:00): 79, pid=1234"));
  EXPECT_THAT(CompileError(dir), HasSubstr("signals[0].counter_examples[0]: matches in"));
}

TEST(Compiler, ExtractThatDoesNotMatch) {
  std::string dir = MakeRuleTree("extract");
  WriteFile(dir + "/nccl/watchdog.json", Replace(testing::kNcclRule, R"J(Rank (?P<rank>[0-9]+)\\])J",
                                                  R"J(Rank (?P<rank>[a-z]+)\\])J"));
  EXPECT_THAT(CompileError(dir), HasSubstr("examples[0]: matches, but `extract` does not"));
}

// `extract` as an array: each extractor runs on its own over the line, and
// the fields of all of them land on the evidence.
TEST(Compiler, ExtractArrayRunsEachExtractor) {
  std::string dir = MakeRuleTree("extract-array");
  WriteFile(dir + "/nccl/watchdog.json",
            Replace(testing::kNcclRule, R"J("extract": "Rank (?P<rank>[0-9]+)\\]")J",
                    R"J("extract": ["Rank (?P<rank>[0-9]+)\\]", "SeqNum=(?P<seq>[0-9]+)", "Timeout\\(ms\\)=(?P<timeout_ms>[0-9]+)"])J"));
  auto r = CompileRuleSource(dir);
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto rs = Ruleset::LoadBuffer(r->buffer, "test");
  ASSERT_TRUE(rs.ok()) << rs.status().message();
  const SignalInfo& si = (*rs)->signal((*rs)->first_signal((*rs)->FindRule("nccl-watchdog-timeout")));
  ASSERT_EQ(si.extracts().size(), 3u);
  std::vector<std::pair<std::string_view, std::string_view>> got;
  EXPECT_TRUE(si.ExtractFields(
      "[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4711, "
      "OpType=ALLREDUCE, Timeout(ms)=600000)",
      &got));
  using P = std::pair<std::string_view, std::string_view>;
  EXPECT_THAT(got, ::testing::ElementsAre(P{"rank", "3"}, P{"seq", "4711"}, P{"timeout_ms", "600000"}));
  // One extractor that does not match leaves the others' fields.
  got.clear();
  EXPECT_TRUE(si.ExtractFields("Watchdog caught collective operation timeout: SeqNum=9", &got));
  EXPECT_THAT(got, ::testing::ElementsAre(P{"seq", "9"}));
}

TEST(Compiler, ExtractArrayErrorsNameTheEntry) {
  std::string dir = MakeRuleTree("extract-array-bad");
  WriteFile(dir + "/nccl/watchdog.json",
            Replace(testing::kNcclRule, R"J("extract": "Rank (?P<rank>[0-9]+)\\]")J",
                    R"J("extract": ["Rank (?P<rank>[0-9]+)\\]", "SeqNum=(?P<seq>[0-9]+"])J"));
  EXPECT_THAT(CompileError(dir), HasSubstr("signals[0].extract[1]: RE2 rejects it"));
  WriteFile(dir + "/nccl/watchdog.json",
            Replace(testing::kNcclRule, R"J("extract": "Rank (?P<rank>[0-9]+)\\]")J",
                    R"J("extract": ["Rank (?P<rank>[0-9]+)\\]", "SeqNum=(?P<seq>[a-z]+)"])J"));
  EXPECT_THAT(CompileError(dir), HasSubstr("examples[0]: matches, but `extract[1]` does not"));
  WriteFile(dir + "/nccl/watchdog.json",
            Replace(testing::kNcclRule, R"J("extract": "Rank (?P<rank>[0-9]+)\\]")J",
                    R"J("extract": [])J"));
  EXPECT_THAT(CompileError(dir), HasSubstr("signals[0].extract: needs at least 1 entry"));
}

TEST(Compiler, DuplicateRuleId) {
  std::string dir = MakeRuleTree("dup");
  WriteFile(dir + "/nccl/again.json", testing::kNcclRule);
  std::string err = CompileError(dir);
  EXPECT_THAT(err, HasSubstr("rule 'nccl-watchdog-timeout': id: duplicate rule id"));
}

TEST(Compiler, CrossLinePatternIsRejected) {
  for (const char* bad : {R"J(Watchdog\\s+caught)J", R"J(Watchdog[^x]+caught)J", R"J((?s)Watchdog.caught)J",
                          R"J(Watchdog\\ncaught)J", R"J(Watchdog\\Wcaught)J"}) {
    std::string dir = MakeRuleTree("xline");
    WriteFile(dir + "/nccl/watchdog.json",
              Replace(testing::kNcclRule, R"J("pattern": "Watchdog caught collective operation timeout")J",
                      std::string(R"J("pattern": ")J") + bad + "\""));
    std::string err = CompileError(dir);
    EXPECT_THAT(err, HasSubstr("signals[0].pattern: "));
    EXPECT_THAT(err, HasSubstr("newline")) << bad;
  }
}

TEST(Compiler, BigBoundedRepeatIsRejected) {
  std::string dir = MakeRuleTree("repeat");
  WriteFile(dir + "/nccl/watchdog.json",
            Replace(testing::kNcclRule, R"J("pattern": "Watchdog caught)J", R"J("pattern": "Watchdog[a-z ]{2,100}caught)J"));
  EXPECT_THAT(CompileError(dir), HasSubstr("bounded repeat"));
}

TEST(Compiler, UnknownReferenceAndEdge) {
  std::string dir = MakeRuleTree("ref");
  WriteFile(dir + "/nccl/watchdog.json",
            Replace(testing::kNcclRule, "A worker loses its GPU mid-run", "A worker loses its CPU mid-run"));
  EXPECT_THAT(CompileError(dir), HasSubstr("reference: 'A worker loses its CPU"));
  dir = MakeRuleTree("edge");
  WriteFile(dir + "/gpu/xid-79.json", Replace(testing::kXidRule, R"J("rule": "nccl-watchdog-timeout")J",
                                               R"J("rule": "nccl-watchdog-timeouts")J"));
  EXPECT_THAT(CompileError(dir), HasSubstr("explains[0].rule: unknown rule id 'nccl-watchdog-timeouts'"));
}

TEST(Compiler, BadLayerRoleAndJson) {
  std::string dir = MakeRuleTree("layer");
  WriteFile(dir + "/gpu/xid-79.json", Replace(testing::kXidRule, R"J("layer": "hardware")J", R"J("layer": "firmware")J"));
  EXPECT_THAT(CompileError(dir), HasSubstr("layer: must be one of"));
  dir = MakeRuleTree("role");
  WriteFile(dir + "/gpu/xid-79.json", Replace(testing::kXidRule, R"J("role": "initiating")J", R"J("role": "cause")J"));
  EXPECT_THAT(CompileError(dir), HasSubstr("signals[0].role: must be one of"));
  dir = MakeRuleTree("json");
  WriteFile(dir + "/gpu/xid-79.json", "{\"id\": ");
  EXPECT_THAT(CompileError(dir), HasSubstr("gpu/xid-79.json: invalid JSON"));
}

TEST(Compiler, HyperscanOnlyRejection) {
  // RE2 accepts \Z-free patterns Hyperscan rejects: an empty-matching pattern.
  std::string dir = MakeRuleTree("empty");
  WriteFile(dir + "/nccl/watchdog.json",
            Replace(testing::kNcclRule, R"J("pattern": "Watchdog caught collective operation timeout")J",
                    R"J("pattern": "(Watchdog caught collective operation timeout)?")J"));
  std::string err = CompileError(dir);
  EXPECT_THAT(err, HasSubstr("rule 'nccl-watchdog-timeout': signals[0].pattern: Hyperscan rejects it"));
}

TEST(WriteFileAtomic, LeavesNoHalfWrittenFileWhenTheDiskIsFull) {
  std::string dir = testing::MakeTempDir("atomic");
  std::string path = dir + "/out.flrules";
  ASSERT_TRUE(WriteFileAtomic(path, "old contents").ok());
  // A file-size limit stands in for a full disk: write() fails with EFBIG.
  struct rlimit old;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = {1024, old.rlim_max};
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  absl::Status st = WriteFileAtomic(path, std::string(1 << 20, 'x'));
  setrlimit(RLIMIT_FSIZE, &old);
  EXPECT_FALSE(st.ok());
  EXPECT_THAT(std::string(st.message()), HasSubstr("out.flrules"));
  std::ifstream in(path);
  std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(body, "old contents");
  size_t files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 1u) << "the temporary file was left behind";
}

// A pattern whose best literal is in every NCCL channel line of an ordinary
// job: far above the cost budget on the reference sample.
std::string CostlyNcclRule(const std::string& exempt_field) {
  return Replace(testing::kNcclRule, R"J("pattern": "Watchdog caught collective operation timeout",)J",
                 R"J("pattern": "(?:Watchdog caught collective operation timeout|NCCL INFO Channel [0-9]+)",)J" +
                     exempt_field);
}

TEST(Compiler, OverBudgetSignalFailsWithoutCostExempt) {
  std::string dir = MakeRuleTree("cost-over");
  WriteFile(dir + "/nccl/watchdog.json", CostlyNcclRule(""));
  std::string err = CompileError(dir);
  EXPECT_THAT(err, HasSubstr("nccl/watchdog.json: rule 'nccl-watchdog-timeout': signals[0].pattern: "
                             "estimated cost "));
  EXPECT_THAT(err, HasSubstr("above the budget of"));
  EXPECT_THAT(err, HasSubstr("cost_exempt"));
  // The same source, the same verdict: no clock in the estimate.
  EXPECT_EQ(CompileError(dir), err);
}

TEST(Compiler, CostExemptWithAReasonCompiles) {
  std::string dir = MakeRuleTree("cost-exempt");
  WriteFile(dir + "/nccl/watchdog.json",
            CostlyNcclRule(R"J("cost_exempt": "reads every channel line of the init burst by design",)J"));
  auto r = CompileRuleSource(dir);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (const std::string& w : r->warnings) EXPECT_THAT(w, ::testing::Not(HasSubstr("cost_exempt")));
}

TEST(Compiler, UnconditionalWantsARuleWithConditions) {
  // The test rule has no conditions: nothing for the signal to be free of.
  std::string dir = MakeRuleTree("unconditional");
  WriteFile(dir + "/nccl/watchdog.json",
            Replace(testing::kNcclRule, R"J("pattern": "Watchdog caught collective operation timeout",)J",
                    R"J("pattern": "Watchdog caught collective operation timeout", "unconditional": true,)J"));
  EXPECT_THAT(CompileError(dir), HasSubstr("nccl/watchdog.json: rule 'nccl-watchdog-timeout': "
                                           "signals[0].unconditional: only for a rule with conditions"));
}

TEST(Compiler, EmptyCostExemptNamesFileRuleAndField) {
  for (const char* reason : {R"J("cost_exempt": "",)J", R"J("cost_exempt": "  ",)J"}) {
    std::string dir = MakeRuleTree("cost-empty");
    WriteFile(dir + "/nccl/watchdog.json", CostlyNcclRule(reason));
    EXPECT_THAT(CompileError(dir),
                HasSubstr("nccl/watchdog.json: rule 'nccl-watchdog-timeout': signals[0].cost_exempt: must"))
        << reason;
  }
  std::string dir = MakeRuleTree("cost-type");
  WriteFile(dir + "/nccl/watchdog.json", CostlyNcclRule(R"J("cost_exempt": true,)J"));
  EXPECT_THAT(CompileError(dir), HasSubstr("signals[0].cost_exempt: must be a string"));
}

TEST(Compiler, NeedlessCostExemptIsAWarning) {
  std::string dir = MakeRuleTree("cost-stale");
  WriteFile(dir + "/nccl/watchdog.json",
            Replace(testing::kNcclRule, R"J("role": "symptom",)J",
                    R"J("role": "symptom", "cost_exempt": "was slow once",)J"));
  auto r = CompileRuleSource(dir);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_THAT(r->warnings[0], HasSubstr("signals[0].cost_exempt: the signal is within the budget"));
}

TEST(Compiler, CostBudgetOption) {
  // The budget is an option (negative: the default model's).
  std::string dir = MakeRuleTree("cost-budget");
  CompileOptions o;
  o.cost_budget = -1;
  EXPECT_TRUE(CompileRuleSource(dir, o).ok());
  WriteFile(dir + "/nccl/watchdog.json", CostlyNcclRule(""));
  o.cost_budget = 1e9;
  EXPECT_TRUE(CompileRuleSource(dir, o).ok());
}

// Compiles the rule tree `dir` and loads it; `prefilters` gets each
// signal's prefilter ("" for none), keyed by its rule's id when `by_rule`
// (the last prefiltered signal of a rule), else by the signal's id.
void CompiledPrefilters(const std::string& dir, const CompileOptions& o, bool by_rule,
                        std::map<std::string, std::string>* prefilters) {
  auto r = CompileRuleSource(dir, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto rs = Ruleset::LoadBuiltIn(r->buffer, "test");
  ASSERT_TRUE(rs.ok()) << rs.status().message();
  for (uint32_t g = 0; g < (*rs)->signal_count(); ++g) {
    const SignalInfo& si = (*rs)->signal(g);
    const std::string p = si.signal->prefilter() ? si.signal->prefilter()->str() : "";
    if (by_rule && p.empty()) continue;
    (*prefilters)[by_rule ? si.rule->id()->str() : si.signal->id()->str()] = p;
  }
}

// A signal's prefilter is the literal that is its own: the Xid signals all
// hold "NVRM: Xid (PCI:", each its own "): 79," -- the shared one would
// make every Xid line a candidate of every Xid signal.
TEST(Compiler, PrefilterPrefersALiteralOfItsOwn) {
  std::string dir = MakeRuleTree("prefilter-own");
  std::string xid31 = Replace(testing::kXidRule, "xid-79-fallen-off-bus", "xid-31-app-fault");
  xid31 = Replace(xid31, "\\\\): 79,\"", "\\\\): 31,\"");
  xid31 = Replace(xid31, "): 31, pid=1234", "): 13, pid=1234");
  xid31 = Replace(xid31, "): 79, pid='<unknown>'", "): 31, pid='<unknown>'");
  WriteFile(dir + "/gpu/xid-31.json", xid31);
  std::map<std::string, std::string> prefilters;
  ASSERT_NO_FATAL_FAILURE(CompiledPrefilters(dir, CompileOptions{}, true, &prefilters));
  EXPECT_EQ(prefilters["xid-79-fallen-off-bus"], "(?:\\x29\\x3a 79\\x2c)");
  EXPECT_EQ(prefilters["xid-31-app-fault"], "(?:\\x29\\x3a 31\\x2c)");
}

// A plain context pattern stays whole where its literal is on ordinary
// lines (the reference sample holds it: such signals read many lines of a
// log by design, and Hyperscan's own match spares RE2 on each), and is
// searched by its literal where the sample never holds it (a rare line:
// Hyperscan does not always search a whole pattern by its rarest literal).
TEST(Compiler, ContextPatternPrefilteredOnlyWhereItsLiteralIsRare) {
  std::string dir = MakeRuleTree("prefilter-context");
  WriteFile(dir + "/nccl/watchdog.json",
            Replace(testing::kNcclRule, R"J("counter_examples": ["node017:1:1 [3] NCCL INFO comm 0x1 rank 3"]})J",
                    R"J("counter_examples": ["node017:1:1 [3] NCCL INFO comm 0x1 rank 3"]},
    {"id": "proxy", "pattern": "NCCL INFO Connected to proxy localRank [0-9]+", "role": "context",
     "examples": ["node000:41097:41308 [1] NCCL INFO Connected to proxy localRank 0 -> connection 0x7f2d5c000000"],
     "counter_examples": ["node000:41097:41308 [1] NCCL INFO Connected to proxy service"]},
    {"id": "pg_options", "pattern": "ProcessGroupNCCL initialization options: size: [0-9]+", "role": "context",
     "examples": ["[I311 09:27:52.118 ProcessGroupNCCL.cpp:913] [PG ID 0 PG GUID 0(default_pg) Rank 13] ProcessGroupNCCL initialization options: size: 32, global rank: 13"],
     "counter_examples": ["ProcessGroupNCCL environments: NCCL version: 2.21.5"]})J"));
  CompileOptions o;
  o.cost_budget = 1e9;  // the ordinary literal is over the budget; this test is not about it
  std::map<std::string, std::string> prefilters;
  ASSERT_NO_FATAL_FAILURE(CompiledPrefilters(dir, o, false, &prefilters));
  ASSERT_EQ(prefilters.count("proxy"), 1u);
  EXPECT_EQ(prefilters["proxy"], "");
  EXPECT_THAT(prefilters["pg_options"], HasSubstr("initialization options"));
}

// Hyperscan's literal matcher stops wherever the text holds a literal's
// last 8 bytes: "saving checkpoint at iteration" ends in "teration", on a
// line in 40 of the reference sample (every progress line of a trainer
// that logs "iteration"), so the prefilter is the literal cut where its end
// is rare. The self-tests (run by the compile) still find the examples.
TEST(Compiler, PrefilterEndsWhereTheSampleRarelyHoldsItsLastBytes) {
  std::string dir = MakeRuleTree("prefilter-tail");
  WriteFile(dir + "/nccl/watchdog.json",
            Replace(testing::kNcclRule, R"J("counter_examples": ["node017:1:1 [3] NCCL INFO comm 0x1 rank 3"]})J",
                    R"J("counter_examples": ["node017:1:1 [3] NCCL INFO comm 0x1 rank 3"]},
    {"id": "megatron-saving", "pattern": "saving checkpoint at iteration +[0-9]+ to [^ \\n]+", "role": "context",
     "examples": ["  saving checkpoint at iteration    1000 to /lustre/ckpt/gpt3-175b in torch_dist format"],
     "counter_examples": [" loading checkpoint from /lustre/ckpt/gpt3-175b at iteration 1000"]})J"));
  std::map<std::string, std::string> prefilters;
  ASSERT_NO_FATAL_FAILURE(CompiledPrefilters(dir, CompileOptions{}, false, &prefilters));
  ASSERT_EQ(prefilters.count("megatron-saving"), 1u);
  const std::string& p = prefilters["megatron-saving"];
  EXPECT_THAT(p, HasSubstr("saving checkpoint at"));
  EXPECT_THAT(p, ::testing::Not(HasSubstr("iteration")));
  // Its last 8 bytes are in no line of the sample.
  ASSERT_GE(p.size(), 12u);
  EXPECT_EQ(CostReferenceSample().find(p.substr(p.size() - 9, 8)), std::string_view::npos) << p;
}

TEST(Compiler, DefaultRulesetCompiles) {
  auto rs = Ruleset::LoadDefault();
  ASSERT_TRUE(rs.ok()) << rs.status().message();
  EXPECT_GE((*rs)->rule_count(), 1u);
}

// A signal the hand parser confirms and extracts never builds its RE2
// objects; they are built when asked for, and answer the same.
TEST(Compiler, HandParsedSignalBuildsNoRe2) {
  auto rs = Ruleset::LoadDefault();
  ASSERT_TRUE(rs.ok()) << rs.status().message();
  const int rule = (*rs)->FindRule("sdc-loss-spike-divergence");
  ASSERT_GE(rule, 0);
  const SignalInfo* loss = nullptr;
  for (uint32_t g = (*rs)->first_signal(rule); g < (*rs)->signal_count(); ++g) {
    const SignalInfo& si = (*rs)->signal(g);
    if (si.rule_index != static_cast<uint32_t>(rule)) break;
    if (si.signal->id()->string_view() == "megatron-lm-loss") loss = &si;
  }
  ASSERT_NE(loss, nullptr);
  const std::string line =
      " iteration     6502/  159576 | consumed samples:       216960 | lm loss: 3.876781E+00 | grad norm: 3.2 |";
  EXPECT_TRUE(loss->Confirms(line));
  EXPECT_FALSE(loss->Confirms(" iteration     6502/  159576 | lm loss: none |"));
  std::vector<std::pair<std::string_view, std::string_view>> got;
  EXPECT_TRUE(loss->ExtractFields(line, &got));
  EXPECT_FALSE(loss->regex->confirm_built.load());
  EXPECT_FALSE(loss->regex->extracts_built.load());
  EXPECT_TRUE(loss->Usable());
  using P = std::pair<std::string_view, std::string_view>;
  EXPECT_THAT(got, ::testing::ElementsAre(P{"step", "6502"}, P{"metric", "lm loss"}, P{"value", "3.876781E+00"}));
  ASSERT_NE(loss->confirm(), nullptr);
  EXPECT_TRUE(loss->regex->confirm_built.load());
  EXPECT_TRUE(RE2::PartialMatch(line, *loss->confirm()));
  EXPECT_FALSE(loss->regex->extracts_built.load());
  EXPECT_TRUE(loss->BuildRegex(nullptr));
  EXPECT_NE(loss->extracts()[0].re, nullptr);
}

}  // namespace
}  // namespace faultline
