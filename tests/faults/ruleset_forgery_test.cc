// Forged rulesets (issue #17): the serialized Hyperscan database is bytecode
// Hyperscan runs without validating it, and both checksums a .flrules file
// holds can be recomputed by whoever changes it. A file's database is used
// only when it is built in or its MAC verifies under this installation's key;
// anything else is recompiled from its patterns and matches what they say.
// Also: the key file (where, who creates it, what makes it unusable) and
// files written before the FNV-1a offset basis was corrected.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>

#include "faultline/faultline.h"
#include "faults_util.h"
#include "gmock/gmock.h"
#include "rule_tree.h"
#include "ruleset/compiler.h"
#include "ruleset/pattern_check.h"
#include "ruleset/ruleset_key.h"
#include "ruleset_forge.h"

namespace faultline::faults {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Sets (or unsets, with nullopt) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string DefaultBuffer() { return std::string(Rules()->buffer()); }

// One stream of every signal's first example line: what the ruleset's
// patterns say must match, signal by signal.
std::string AllExamples(const Ruleset& rs) {
  std::string text;
  for (uint32_t g = 0; g < rs.signal_count(); ++g) {
    const auto* ex = rs.signal(g).signal->examples();
    if (ex && ex->size() > 0) text.append(ex->Get(0)->string_view()).push_back('\n');
  }
  return text;
}

ScanResult ScanText(std::shared_ptr<const Ruleset> rs, std::string_view text) {
  Scanner scanner(rs, ScanOptions{.threads = 1});
  uint32_t id = scanner.OpenStream("s");
  EXPECT_TRUE(scanner.Feed(id, text).ok());
  EXPECT_TRUE(scanner.CloseStream(id).ok());
  return scanner.Finish();
}

std::vector<std::pair<uint64_t, uint32_t>> Hits(const ScanResult& r) {
  std::vector<std::pair<uint64_t, uint32_t>> out;
  for (const Evidence& ev : r.evidence) out.emplace_back(ev.line, ev.signal);
  return out;
}

// The loaded ruleset finds, on every example line, exactly what the
// embedded default finds.
void ExpectMatchesDefault(std::shared_ptr<const Ruleset> rs) {
  const std::string text = AllExamples(*Rules());
  EXPECT_EQ(Hits(ScanText(rs, text)), Hits(ScanText(Rules(), text)));
  ScanResult xid = ScanText(rs, std::string(kXidLine) + "\n");
  ASSERT_EQ(xid.evidence.size(), 1u);
  EXPECT_EQ(rs->rule(xid.evidence[0].rule)->id()->string_view(), kXidRule);
}

struct OldCheck {
  uint32_t want = 0, signal_count = 0;
  bool found = false, foreign = false;
};

// What the loader did before the fix with a database whose checksums hold:
// deserialize it, then DatabaseFitsSignals -- scan each signal's first
// example until one does not match as that signal -- and, when it fits,
// scan the log. Run in a child: true when the child crashed or hung.
bool OldLoaderCrashes(const std::string& forged) {
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    int devnull = ::open("/dev/null", O_WRONLY);
    if (devnull >= 0) ::dup2(devnull, 2);  // ASan's report of the crash is expected
    ::alarm(20);
    const fb::Ruleset* root = fb::GetRuleset(forged.data());
    hs_database_t* db = nullptr;
    if (hs_deserialize_database(reinterpret_cast<const char*>(root->hs_database()->data()),
                                root->hs_database()->size(), &db) != HS_SUCCESS) {
      _exit(3);
    }
    hs_scratch_t* scratch = nullptr;
    if (hs_alloc_scratch(db, &scratch) != HS_SUCCESS) _exit(3);
    auto on_match = [](unsigned id, unsigned long long, unsigned long long, unsigned, void* ctx) {
      auto* c = static_cast<OldCheck*>(ctx);
      if (id >= c->signal_count) c->foreign = true;
      if (id == c->want) c->found = true;
      return 0;
    };
    OldCheck check;
    check.signal_count = static_cast<uint32_t>(Rules()->signal_count());
    for (uint32_t g = 0; g < check.signal_count; ++g) {
      const auto* examples = Rules()->signal(g).signal->examples();
      if (!examples || examples->size() == 0) continue;
      std::string_view line = examples->Get(0)->string_view();
      check.want = g;
      check.found = false;
      if (hs_scan(db, line.data(), static_cast<unsigned>(line.size()), 0, scratch, on_match,
                  &check) != HS_SUCCESS ||
          check.foreign || !check.found) {
        _exit(3);  // the old loader recompiled here
      }
    }
    check.want = UINT32_MAX;
    hs_scan(db, kXidLine.data(), static_cast<unsigned>(kXidLine.size()), 0, scratch, on_match,
            &check);
    _exit(0);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return false;
  return WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0 &&
                                 WEXITSTATUS(status) != 3);
}

// The forgery: 20 random bytes of the default ruleset's database
// changed, Hyperscan's CRC32C and the file's FNV-1a fixed up. The test first
// finds one that crashes the old trust path (about 1 in 8 does), then loads
// that one: no crash, the database is recompiled, and every example line
// matches as the patterns say.
TEST(RulesetForgery, ForgedDatabaseThatCrashedTheOldLoaderIsRecompiled) {
  const std::string good = DefaultBuffer();
  ASSERT_TRUE(forge::CrcMatches(good)) << "Hyperscan's CRC convention changed; fix ruleset_forge.h";
  std::string crashing;
  uint64_t seed = 0;
  for (; seed < 64 && crashing.empty(); ++seed) {
    std::string forged = good;
    ASSERT_TRUE(forge::ForgeDatabase(&forged, forge::RandomEdits(seed, 20)));
    ASSERT_TRUE(forge::CrcMatches(forged));
    if (OldLoaderCrashes(forged)) crashing = std::move(forged);
  }
  ASSERT_FALSE(crashing.empty()) << "no forgery of 64 crashed the old loader's path";
  RecordProperty("crashing_seed", static_cast<int>(seed - 1));
  auto rs = Ruleset::LoadBuffer(crashing, "forged.flrules");
  ASSERT_TRUE(rs.ok()) << rs.status().message();
  EXPECT_EQ((*rs)->trust(), RulesetTrust::kUntrusted);
  EXPECT_TRUE((*rs)->recompiled());
  EXPECT_THAT((*rs)->load_note(), HasSubstr("not signed"));
  ExpectMatchesDefault(*rs);

  // The same through the C ABI and a file, as `faultline diagnose --rules`.
  TempDir d;
  const std::string path = d.Sub("forged.flrules");
  WriteFile(path, crashing);
  fl_ruleset* crs = nullptr;
  fl_error* err = nullptr;
  ASSERT_EQ(fl_ruleset_load_file(&crs, path.c_str(), &err), FL_OK) << fl_error_message(err);
  EXPECT_THAT(fl_ruleset_load_info(crs), StartsWith("untrusted: pattern database recompiled"));
  fl_ruleset_free(crs);
}

// Even a database that would not crash is never deserialized from an
// unsigned file: an intact default ruleset read as a file is recompiled.
TEST(RulesetForgery, UnsignedFileIsNeverDeserialized) {
  auto rs = Ruleset::LoadBuffer(DefaultBuffer(), "default.flrules");
  ASSERT_TRUE(rs.ok()) << rs.status().message();
  EXPECT_EQ((*rs)->trust(), RulesetTrust::kUntrusted);
  EXPECT_TRUE((*rs)->recompiled());
  // A database that matches nothing and claims the right CRC and checksum:
  // were it used, no example would match.
  std::string forged = DefaultBuffer();
  std::vector<std::pair<uint32_t, uint8_t>> zero_all;
  uint32_t len = 0;
  ASSERT_NE(forge::Database(&forged, &len), nullptr);
  for (uint32_t i = 0; i < len; i += 7) zero_all.emplace_back(i, 0);
  ASSERT_TRUE(forge::ForgeDatabase(&forged, zero_all));
  auto rs2 = Ruleset::LoadBuffer(forged, "zeroed.flrules");
  ASSERT_TRUE(rs2.ok()) << rs2.status().message();
  EXPECT_TRUE((*rs2)->recompiled());
  ExpectMatchesDefault(*rs2);
}

// A small compiled ruleset, signed with the key at `key_file`.
std::string SignedRuleset(const TempDir& d) {
  WriteTree(d.Sub("src"),
            {{"a", RuleJson("rule-a", {{"alpha", "ALPHA-FAILURE [0-9]+", "ALPHA-FAILURE 42"},
                                       {"beta", "BETA-FAILURE [a-z]+", "BETA-FAILURE abc"}})}});
  auto cr = CompileRuleSource(d.Sub("src"));
  EXPECT_TRUE(cr.ok()) << cr.status().message();
  if (!cr.ok()) return "";
  auto key = ReadOrCreateRulesetKey();
  EXPECT_TRUE(key.ok()) << key.status().message();
  if (!key.ok()) return "";
  EXPECT_TRUE(SignRuleset(&cr->buffer, *key).ok());
  return cr->buffer;
}

TEST(RulesetForgery, SignedFileLoadsItsStoredDatabase) {
  TempDir d;
  ScopedEnv env(kRulesetKeyEnv, d.Sub("config/ruleset.key"));
  const std::string buf = SignedRuleset(d);
  ASSERT_FALSE(buf.empty());
  auto rs = Ruleset::LoadBuffer(buf, "signed.flrules");
  ASSERT_TRUE(rs.ok()) << rs.status().message();
  EXPECT_EQ((*rs)->trust(), RulesetTrust::kAuthenticated);
  EXPECT_FALSE((*rs)->recompiled());
  EXPECT_THAT((*rs)->load_note(), StartsWith("authenticated: stored pattern database used"));
  EXPECT_EQ(ScanText(*rs, "ALPHA-FAILURE 7\nBETA-FAILURE xyz\n").evidence.size(), 2u);
}

// A signed file whose database is forged (both checksums fixed up): the MAC
// no longer verifies, so the forged bytecode is not run.
TEST(RulesetForgery, ForgedSignedFileFailsItsMacAndIsRecompiled) {
  TempDir d;
  ScopedEnv env(kRulesetKeyEnv, d.Sub("config/ruleset.key"));
  std::string buf = SignedRuleset(d);
  ASSERT_FALSE(buf.empty());
  uint32_t len = 0;
  ASSERT_NE(forge::Database(&buf, &len), nullptr);
  std::vector<std::pair<uint32_t, uint8_t>> zero_all;
  for (uint32_t i = 0; i < len; ++i) zero_all.emplace_back(i, 0);
  ASSERT_TRUE(forge::ForgeDatabase(&buf, zero_all));
  auto rs = Ruleset::LoadBuffer(buf, "forged-signed.flrules");
  ASSERT_TRUE(rs.ok()) << rs.status().message();
  EXPECT_EQ((*rs)->trust(), RulesetTrust::kUntrusted);
  EXPECT_TRUE((*rs)->recompiled());
  EXPECT_THAT((*rs)->load_note(), HasSubstr("MAC does not verify"));
  EXPECT_EQ(ScanText(*rs, "ALPHA-FAILURE 7\nBETA-FAILURE xyz\n").evidence.size(), 2u);
}

// A byte changed outside the database and the checksums (a rule's text) also
// breaks the MAC: it covers the whole file.
TEST(RulesetForgery, MacCoversTheWholeFile) {
  TempDir d;
  ScopedEnv env(kRulesetKeyEnv, d.Sub("config/ruleset.key"));
  std::string buf = SignedRuleset(d);
  ASSERT_FALSE(buf.empty());
  size_t at = buf.find("rule-a");
  ASSERT_NE(at, std::string::npos);
  buf[at + 5] = 'b';
  auto rs = Ruleset::LoadBuffer(buf, "edited.flrules");
  ASSERT_TRUE(rs.ok()) << rs.status().message();
  EXPECT_EQ((*rs)->trust(), RulesetTrust::kUntrusted);
  EXPECT_THAT((*rs)->load_note(), HasSubstr("MAC does not verify"));
}

// Without this installation's key a signed file is foreign: another key, no
// key file, or a key file others may read. Loading never creates a key.
TEST(RulesetForgery, SignedFileWithoutTheKeyIsRecompiled) {
  TempDir d;
  std::string buf;
  {
    ScopedEnv env(kRulesetKeyEnv, d.Sub("one/ruleset.key"));
    buf = SignedRuleset(d);
  }
  ASSERT_FALSE(buf.empty());
  {
    ScopedEnv env(kRulesetKeyEnv, d.Sub("two/ruleset.key"));
    ASSERT_TRUE(ReadOrCreateRulesetKey().ok());
    auto rs = Ruleset::LoadBuffer(buf, "other.flrules");
    ASSERT_TRUE(rs.ok()) << rs.status().message();
    EXPECT_TRUE((*rs)->recompiled());
    EXPECT_THAT((*rs)->load_note(), HasSubstr("another installation's key"));
  }
  {
    const std::string none = d.Sub("none/ruleset.key");
    ScopedEnv env(kRulesetKeyEnv, none);
    auto rs = Ruleset::LoadBuffer(buf, "nokey.flrules");
    ASSERT_TRUE(rs.ok()) << rs.status().message();
    EXPECT_TRUE((*rs)->recompiled());
    EXPECT_THAT((*rs)->load_note(), HasSubstr("no ruleset key at " + none));
    EXPECT_FALSE(std::filesystem::exists(none)) << "loading created a key";
    EXPECT_FALSE(std::filesystem::exists(d.Sub("none"))) << "loading created the key's folder";
  }
  {
    const std::string key = d.Sub("one/ruleset.key");
    ScopedEnv env(kRulesetKeyEnv, key);
    ASSERT_EQ(::chmod(key.c_str(), 0644), 0);
    auto rs = Ruleset::LoadBuffer(buf, "shared-key.flrules");
    ASSERT_TRUE(rs.ok()) << rs.status().message();
    EXPECT_TRUE((*rs)->recompiled());
    EXPECT_THAT((*rs)->load_note(), HasSubstr("group or others may access it"));
    ASSERT_EQ(::chmod(key.c_str(), 0600), 0);
    auto again = Ruleset::LoadBuffer(buf, "own-key.flrules");
    ASSERT_TRUE(again.ok());
    EXPECT_EQ((*again)->trust(), RulesetTrust::kAuthenticated);
  }
}

TEST(RulesetKeyFile, CreatedOnceWithOwnerOnlyModes) {
  TempDir d;
  const std::string path = d.Sub("cfg/faultline/ruleset.key");
  ScopedEnv env(kRulesetKeyEnv, path);
  std::string why;
  EXPECT_FALSE(ReadRulesetKey(&why).has_value());
  EXPECT_FALSE(std::filesystem::exists(path));
  auto k1 = ReadOrCreateRulesetKey();
  ASSERT_TRUE(k1.ok()) << k1.status().message();
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_size, static_cast<off_t>(kRulesetKeyBytes));
  ASSERT_EQ(::stat(d.Sub("cfg/faultline").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  auto k2 = ReadOrCreateRulesetKey();
  ASSERT_TRUE(k2.ok());
  EXPECT_EQ(k1->bytes, k2->bytes);
  // No temporary left beside it.
  size_t files = 0;
  for (auto& e : std::filesystem::directory_iterator(d.Sub("cfg/faultline"))) (void)e, ++files;
  EXPECT_EQ(files, 1u);
}

TEST(RulesetKeyFile, PathFromVariableXdgOrHome) {
  ScopedEnv home("HOME", "/home/someone");
  {
    ScopedEnv var(kRulesetKeyEnv, "/etc/fl/key");
    ScopedEnv xdg("XDG_CONFIG_HOME", "/xdg");
    EXPECT_EQ(RulesetKeyPath(), "/etc/fl/key");
  }
  {
    ScopedEnv var(kRulesetKeyEnv, std::nullopt);
    ScopedEnv xdg("XDG_CONFIG_HOME", "/xdg");
    EXPECT_EQ(RulesetKeyPath(), "/xdg/faultline/ruleset.key");
  }
  {
    ScopedEnv var(kRulesetKeyEnv, std::nullopt);
    ScopedEnv xdg("XDG_CONFIG_HOME", "relative/ignored");  // the XDG spec: absolute only
    EXPECT_EQ(RulesetKeyPath(), "/home/someone/.config/faultline/ruleset.key");
  }
}

// fl_ruleset_compile (`faultline compile`) signs what it writes; the file
// then loads its stored database, through the C ABI.
TEST(RulesetForgery, CompileThroughTheCApiSigns) {
  TempDir d;
  ScopedEnv env(kRulesetKeyEnv, d.Sub("config/ruleset.key"));
  WriteTree(d.Sub("src"),
            {{"a", RuleJson("rule-a", {{"alpha", "ALPHA-FAILURE [0-9]+", "ALPHA-FAILURE 42"}})}});
  const std::string out = d.Sub("rules.flrules");
  fl_error* err = nullptr;
  ASSERT_EQ(fl_ruleset_compile(d.Sub("src").c_str(), out.c_str(), &err), FL_OK)
      << fl_error_message(err);
  EXPECT_TRUE(std::filesystem::exists(d.Sub("config/ruleset.key")));
  fl_ruleset* rs = nullptr;
  ASSERT_EQ(fl_ruleset_load_file(&rs, out.c_str(), &err), FL_OK) << fl_error_message(err);
  EXPECT_THAT(fl_ruleset_load_info(rs), StartsWith("authenticated:"));
  fl_ruleset_free(rs);
  fl_ruleset* def = nullptr;
  ASSERT_EQ(fl_ruleset_load_default(&def, &err), FL_OK);
  EXPECT_THAT(fl_ruleset_load_info(def), StartsWith("built-in:"));
  fl_ruleset_free(def);
}

// A file written before kFnvOffset was corrected carries both checksums
// under the old, one-digit-short basis: it still loads (recompiled, with a
// note saying why), and matches as before. A checksum that fits neither
// basis is a corrupt file, named with the field.
TEST(RulesetForgery, FileWithLegacyFnvChecksumsStillLoads) {
  std::string buf = DefaultBuffer();
  fb::Ruleset* root = fb::GetMutableRuleset(buf.data());
  uint64_t sum = kLegacyFnvOffset;
  for (const fb::Rule* rule : *root->rules()) {
    for (const fb::Signal* sig : *rule->signals()) {
      sum = SignalsChecksumStep(sum, sig->pattern()->string_view(), ExtractsOf(*sig), sig->caseless());
    }
  }
  ASSERT_TRUE(root->mutate_patterns_checksum(sum));
  const auto* db = root->hs_database();
  ASSERT_TRUE(root->mutate_hs_checksum(Fnv1a64(
      std::string_view(reinterpret_cast<const char*>(db->data()), db->size()), kLegacyFnvOffset)));
  auto rs = Ruleset::LoadBuffer(buf, "old.flrules");
  ASSERT_TRUE(rs.ok()) << rs.status().message();
  EXPECT_TRUE((*rs)->recompiled());
  EXPECT_THAT((*rs)->load_note(), HasSubstr("older faultline"));
  ExpectMatchesDefault(*rs);

  ASSERT_TRUE(root->mutate_hs_checksum(root->hs_checksum() ^ 1));
  auto bad = Ruleset::LoadBuffer(buf, "damaged.flrules");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("damaged.flrules"));
  EXPECT_THAT(bad.status().message(), HasSubstr("hs_checksum"));
}

}  // namespace
}  // namespace faultline::faults
