// Rulesets that are not what they claim: a newer format version, a pattern
// database from another Hyperscan version or build, one from another ruleset
// (right checksum, wrong patterns), and a disk that fills while a compiled
// ruleset is written. Loading never trusts what it cannot check; writing
// never leaves a half-written file behind.
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <filesystem>

#include "faultline/faultline.h"
#include "faults_util.h"
#include "gmock/gmock.h"
#include "rule_tree.h"
#include "ruleset/compiler.h"
#include "ruleset/pattern_check.h"
#include "ruleset/ruleset_key.h"

namespace faultline::faults {
namespace {

using ::testing::HasSubstr;

std::string Compile(const std::string& dir) {
  auto r = CompileRuleSource(dir);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r->buffer : std::string();
}

// Three signals in two rules, and a one-signal ruleset with other patterns.
std::string ThreeSignals(const TempDir& d) {
  WriteTree(d.Sub("three"),
            {{"a", RuleJson("rule-a", {{"alpha", "ALPHA-FAILURE [0-9]+", "ALPHA-FAILURE 42"},
                                       {"beta", "BETA-FAILURE [a-z]+", "BETA-FAILURE abc"}})},
             {"b", RuleJson("rule-b", {{"gamma", "GAMMA-FAILURE!", "x GAMMA-FAILURE! y"}})}});
  return Compile(d.Sub("three"));
}
std::string OneSignal(const TempDir& d) {
  WriteTree(d.Sub("one"), {{"z", RuleJson("rule-z", {{"zeta", "ZETA-FAILURE", "ZETA-FAILURE"}})}});
  return Compile(d.Sub("one"));
}

// Points the ruleset's hs_database at new bytes appended to the buffer and
// fixes the checksum, so only the database differs.
std::string WithDatabase(std::string buf, std::string_view db) {
  const fb::Ruleset* root = fb::GetRuleset(buf.data());
  const uint8_t* field =
      reinterpret_cast<const flatbuffers::Table*>(root)->GetAddressOf(fb::Ruleset::VT_HS_DATABASE);
  EXPECT_NE(field, nullptr);
  size_t field_pos = static_cast<size_t>(field - reinterpret_cast<const uint8_t*>(buf.data()));
  while (buf.size() % 8) buf.push_back('\0');
  size_t vec_pos = buf.size();
  uint32_t len = static_cast<uint32_t>(db.size());
  buf.append(reinterpret_cast<const char*>(&len), 4);
  buf.append(db.data(), db.size());
  while (buf.size() % 8) buf.push_back('\0');
  uint32_t rel = static_cast<uint32_t>(vec_pos - field_pos);
  std::memcpy(buf.data() + field_pos, &rel, 4);
  EXPECT_TRUE(fb::GetMutableRuleset(buf.data())->mutate_hs_checksum(Fnv1a64(db)));
  return buf;
}

std::string DatabaseOf(const std::string& buf) {
  const auto* v = fb::GetRuleset(buf.data())->hs_database();
  return std::string(reinterpret_cast<const char*>(v->data()), v->size());
}

ScanResult ScanText(std::shared_ptr<const Ruleset> rs, std::string_view text) {
  Scanner scanner(rs, ScanOptions{.threads = 1});
  uint32_t id = scanner.OpenStream("s");
  EXPECT_TRUE(scanner.Feed(id, text).ok());
  EXPECT_TRUE(scanner.CloseStream(id).ok());
  return scanner.Finish();
}

constexpr std::string_view kThreeLines =
    "ALPHA-FAILURE 42\nBETA-FAILURE abc\nx GAMMA-FAILURE! y\nZETA-FAILURE\n";

TEST(RulesetFaults, NewerFormatVersionThroughTheCApi) {
  TempDir d;
  std::string buf = ThreeSignals(d);
  ASSERT_TRUE(fb::GetMutableRuleset(buf.data())->mutate_format_version(kRulesetFormatVersion + 1));
  fl_ruleset* rs = nullptr;
  fl_error* err = nullptr;
  EXPECT_EQ(fl_ruleset_load_memory(&rs, buf.data(), buf.size(), &err), FL_ERR_RULESET_VERSION);
  EXPECT_EQ(rs, nullptr);
  EXPECT_THAT(fl_error_message(err), HasSubstr("format version " + std::to_string(kRulesetFormatVersion + 1)));
  fl_error_free(err);
  const std::string path = d.Sub("future.flrules");
  WriteFile(path, buf);
  err = nullptr;
  EXPECT_EQ(fl_ruleset_load_file(&rs, path.c_str(), &err), FL_ERR_RULESET_VERSION);
  EXPECT_THAT(fl_error_message(err), HasSubstr(path));
  fl_error_free(err);
}

// The serialized database claims another Hyperscan version (in the
// FlatBuffer's hs_version, or inside the database's own header with a fixed
// checksum): rebuilt from the patterns, and it finds what it should.
TEST(RulesetFaults, DatabaseFromAnotherLibraryVersionIsRecompiled) {
  TempDir d;
  std::string good = ThreeSignals(d);
  std::string db = DatabaseOf(good);
  ASSERT_GT(db.size(), 16u);
  // hs's serialized header: magic, then the version word.
  std::string other = db;
  other[4] ^= 0x01;
  other[5] ^= 0x01;
  std::string buf = WithDatabase(good, other);
  auto rs = Ruleset::LoadBuffer(buf, "other-version.flrules");
  ASSERT_TRUE(rs.ok()) << rs.status().message();
  EXPECT_TRUE((*rs)->recompiled());
  ScanResult r = ScanText(*rs, kThreeLines);
  EXPECT_EQ(r.evidence.size(), 3u);
  // Garbage that hs_deserialize refuses outright.
  auto rs2 = Ruleset::LoadBuffer(WithDatabase(good, std::string(4096, '\x5a')), "junk-db.flrules");
  ASSERT_TRUE(rs2.ok()) << rs2.status().message();
  EXPECT_TRUE((*rs2)->recompiled());
  EXPECT_EQ(ScanText(*rs2, kThreeLines).evidence.size(), 3u);
}

// A database that deserializes fine -- right version, right checksum -- but
// was compiled from another ruleset's patterns: its match ids name signals
// this ruleset does not have (or the wrong ones). It must not be trusted.
TEST(RulesetFaults, DatabaseOfAnotherRulesetIsNotTrusted) {
  TempDir d;
  std::string three = ThreeSignals(d);
  std::string one = OneSignal(d);
  // One signal, three-signal database: ids 1 and 2 are out of range.
  auto small = Ruleset::LoadBuffer(WithDatabase(one, DatabaseOf(three)), "mixed-1.flrules");
  ASSERT_TRUE(small.ok()) << small.status().message();
  EXPECT_TRUE((*small)->recompiled());
  ScanResult r = ScanText(*small, kThreeLines);
  ASSERT_EQ(r.evidence.size(), 1u);
  EXPECT_EQ(r.evidence[0].line, 4u);
  // Three signals, one-signal database: misses all but one.
  auto big = Ruleset::LoadBuffer(WithDatabase(three, DatabaseOf(one)), "mixed-3.flrules");
  ASSERT_TRUE(big.ok()) << big.status().message();
  EXPECT_TRUE((*big)->recompiled());
  EXPECT_EQ(ScanText(*big, kThreeLines).evidence.size(), 3u);
}

// Rewrites bytes of a stored pattern in place (same length), as a flipped
// byte or a hand edit would.
std::string WithPattern(std::string buf, std::string_view from, std::string_view to) {
  EXPECT_EQ(from.size(), to.size());
  size_t at = buf.find(from);
  EXPECT_NE(at, std::string::npos);
  if (at != std::string::npos) buf.replace(at, from.size(), to);
  return buf;
}

uint64_t PatternsChecksumOf(const std::string& buf) {
  uint64_t h = kFnvOffset;
  for (const fb::Rule* rule : *fb::GetRuleset(buf.data())->rules()) {
    for (const fb::Signal* sig : *rule->signals()) {
      h = SignalsChecksumStep(h, sig->pattern()->string_view(), ExtractsOf(*sig), sig->caseless());
    }
  }
  return h;
}

// RE2 objects are built on first use only when the patterns are the ones the
// compiler checked: a changed pattern byte is a corrupt file.
TEST(RulesetFaults, ChangedPatternIsACorruptFile) {
  TempDir d;
  std::string buf = WithPattern(ThreeSignals(d), "ALPHA-FAILURE [0-9]+", "ALPHA-FAILURE [0-9]*");
  auto rs = Ruleset::LoadBuffer(buf, "edited.flrules");
  ASSERT_FALSE(rs.ok());
  EXPECT_THAT(rs.status().message(), HasSubstr("edited.flrules"));
  EXPECT_THAT(rs.status().message(), HasSubstr("pattern checksum mismatch"));
}

// A file without the checksum (written before it existed) has every pattern
// checked in RE2 at load, as before.
TEST(RulesetFaults, FileWithoutPatternsChecksumIsCheckedAtLoad) {
  TempDir d;
  std::string good = ThreeSignals(d);
  ASSERT_TRUE(fb::GetMutableRuleset(good.data())->mutate_patterns_checksum(0));
  auto ok = Ruleset::LoadBuffer(good, "old.flrules");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ScanText(*ok, kThreeLines).evidence.size(), 3u);

  std::string bad = WithPattern(good, "BETA-FAILURE [a-z]+", "BETA-FAILURE (a-z]+");
  auto rs = Ruleset::LoadBuffer(bad, "old-bad.flrules");
  ASSERT_FALSE(rs.ok());
  EXPECT_THAT(rs.status().message(), HasSubstr("old-bad.flrules"));
  EXPECT_THAT(rs.status().message(), HasSubstr("RE2 rejects it"));
}

// A hand-made file whose checksum covers a pattern RE2 rejects: unsigned, it
// is checked in RE2 at load and refused, naming the rule and field. Signed
// (only this installation's compile could have written it), the check is
// deferred: it loads, and that signal never confirms; the others still work.
TEST(RulesetFaults, PatternRe2RejectsAtFirstUseDisablesOnlyThatSignal) {
  TempDir d;
  std::string buf = WithPattern(ThreeSignals(d), "BETA-FAILURE [a-z]+", "BETA-FAILURE (a-z]+");
  ASSERT_TRUE(fb::GetMutableRuleset(buf.data())->mutate_patterns_checksum(PatternsChecksumOf(buf)));
  auto unsigned_rs = Ruleset::LoadBuffer(buf, "hand-made.flrules");
  ASSERT_FALSE(unsigned_rs.ok());
  EXPECT_THAT(unsigned_rs.status().message(), HasSubstr("hand-made.flrules"));
  EXPECT_THAT(unsigned_rs.status().message(), HasSubstr("rule-a': signals[1].pattern: RE2 rejects it"));

  const std::string key_file = d.Sub("config/ruleset.key");
  const char* old_key = std::getenv(kRulesetKeyEnv);
  const std::string saved = old_key ? old_key : "";
  ::setenv(kRulesetKeyEnv, key_file.c_str(), 1);
  auto key = ReadOrCreateRulesetKey();
  ASSERT_TRUE(key.ok()) << key.status().message();
  ASSERT_TRUE(SignRuleset(&buf, *key).ok());
  auto rs = Ruleset::LoadBuffer(buf, "hand-made.flrules");
  if (old_key) ::setenv(kRulesetKeyEnv, saved.c_str(), 1); else ::unsetenv(kRulesetKeyEnv);
  ASSERT_TRUE(rs.ok()) << rs.status().message();
  EXPECT_EQ((*rs)->trust(), RulesetTrust::kAuthenticated);
  std::string error;
  EXPECT_FALSE((*rs)->signal(1).BuildRegex(&error));
  EXPECT_THAT(error, HasSubstr("RE2 rejects it"));
  EXPECT_EQ((*rs)->signal(1).confirm(), nullptr);
  ScanResult r = ScanText(*rs, kThreeLines);
  ASSERT_EQ(r.evidence.size(), 2u);
  EXPECT_EQ(r.evidence[0].line, 1u);
  EXPECT_EQ(r.evidence[1].line, 3u);
}

// write() failing part-way (EFBIG under RLIMIT_FSIZE stands in for a full
// disk) through the C ABI: FL_ERR_IO naming the file, the old file intact,
// no temporary left. In a child, so the limit touches nothing else.
TEST(RulesetFaults, DiskFullWhileWritingACompiledRuleset) {
  TempDir d;
  std::string src = d.Sub("src");
  WriteTree(src, {{"a", RuleJson("rule-a", {{"alpha", "ALPHA-FAILURE [0-9]+", "ALPHA-FAILURE 42"}})}});
  const std::string out = d.Sub("out/rules.flrules");
  WriteFile(out, "previous contents");
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = {512, 512};
    if (setrlimit(RLIMIT_FSIZE, &lim) != 0) _exit(10);
    fl_error* err = nullptr;
    fl_status rc = fl_ruleset_compile(src.c_str(), out.c_str(), &err);
    if (rc != FL_ERR_IO) _exit(11);
    if (std::string(fl_error_message(err)).find(out) == std::string::npos) _exit(12);
    fl_error_free(err);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::ifstream in(out);
  std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(body, "previous contents");
  size_t files = 0;
  for (auto& e : std::filesystem::directory_iterator(d.Sub("out"))) (void)e, ++files;
  EXPECT_EQ(files, 1u) << "a temporary file was left behind";
  // And the same compile succeeds without the limit.
  fl_error* err = nullptr;
  EXPECT_EQ(fl_ruleset_compile(src.c_str(), out.c_str(), &err), FL_OK) << fl_error_message(err);
  fl_error_free(err);
}

// A real full file system: a 64 KiB tmpfs, where the kernel lets us mount
// one (root with CAP_SYS_ADMIN); skipped elsewhere.
TEST(RulesetFaults, DiskFullOnATinyTmpfs) {
  TempDir d;
  const std::string mnt = d.Sub("tiny");
  std::filesystem::create_directories(mnt);
  if (::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=64k") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  }
  struct Unmount {
    std::string p;
    ~Unmount() { ::umount2(p.c_str(), MNT_DETACH); }
  } unmount{mnt};
  auto rs = Ruleset::LoadDefault();
  ASSERT_TRUE(rs.ok());
  ASSERT_GT((*rs)->buffer().size(), 64u << 10) << "the default ruleset fits in 64 KiB";
  const std::string out = mnt + "/default.flrules";
  absl::Status st = WriteFileAtomic(out, (*rs)->buffer());
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(std::string(st.message()), HasSubstr(out));
  size_t files = 0;
  for (auto& e : std::filesystem::directory_iterator(mnt)) (void)e, ++files;
  EXPECT_EQ(files, 0u) << "a half-written file was left on the full disk";
}

}  // namespace
}  // namespace faultline::faults
