// The loader never trusts its input: every truncation and thousands of byte
// flips are rejected or load into a ruleset that passed the Verifier; a
// database from another library version is recompiled; a corrupt one is
// rejected.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "ruleset/compiler.h"
#include "ruleset/pattern_check.h"
#include "ruleset/ruleset.h"
#include "util/strings.h"
#include "test_rules.h"

namespace faultline {
namespace {

using ::testing::HasSubstr;

std::string ValidBuffer() {
  static std::string buf = [] {
    auto r = CompileRuleSource(testing::MakeRuleTree("loader"));
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? r->buffer : std::string();
  }();
  return buf;
}

// A loaded ruleset must be usable: scratch, a scan, every signal's RE2.
void Exercise(const Ruleset& rs) {
  auto scratch = rs.AllocScratch();
  ASSERT_TRUE(scratch.ok());
  const char line[] = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1";
  hs_scan(rs.database(), line, sizeof line - 1, 0, scratch->get(),
          [](unsigned, unsigned long long, unsigned long long, unsigned, void*) { return 0; }, nullptr);
  for (uint32_t i = 0; i < rs.signal_count(); ++i) {
    const RE2* confirm = rs.signal(i).confirm();
    if (confirm) (void)RE2::PartialMatch(line, *confirm);
  }
}

TEST(Loader, EveryTruncationIsRejected) {
  std::string buf = ValidBuffer();
  ASSERT_FALSE(buf.empty());
  // FlatBuffers may end in alignment padding no table points into: cutting
  // only padding may load, and must then be fully usable; any cut into data
  // is rejected.
  for (size_t n = 0; n < buf.size(); ++n) {
    auto rs = Ruleset::LoadBuffer(std::string_view(buf.data(), n), "trunc");
    if (n + 8 <= buf.size()) {
      EXPECT_FALSE(rs.ok()) << "a ruleset truncated to " << n << " of " << buf.size() << " bytes loaded";
    } else if (rs.ok()) {
      Exercise(**rs);
    }
  }
}

TEST(Loader, RandomByteFlipsNeverCrash) {
  std::string buf = ValidBuffer();
  std::mt19937_64 rng(42);
  int loaded = 0, rejected = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string b = buf;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) b[rng() % b.size()] ^= static_cast<char>(1 + rng() % 255);
    auto rs = Ruleset::LoadBuffer(b, "flip");
    if (rs.ok()) {
      ++loaded;
      Exercise(**rs);
    } else {
      ++rejected;
      EXPECT_THAT(std::string(rs.status().message()), HasSubstr("flip"));
    }
  }
  EXPECT_GT(rejected, 0);
  RecordProperty("loaded", loaded);
}

TEST(Loader, NewerFormatVersionIsRefusedWithItsOwnCode) {
  std::string buf = ValidBuffer();
  ASSERT_TRUE(fb::GetMutableRuleset(buf.data())->mutate_format_version(kRulesetFormatVersion + 1));
  auto rs = Ruleset::LoadBuffer(buf, "new.flrules");
  ASSERT_FALSE(rs.ok());
  EXPECT_EQ(rs.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(rs.status().message()),
              HasSubstr(StrCat("format version ", kRulesetFormatVersion + 1)));
  // Version 1 (before prefilters) still loads; version 0 never existed.
  ASSERT_TRUE(fb::GetMutableRuleset(buf.data())->mutate_format_version(1));
  EXPECT_TRUE(Ruleset::LoadBuffer(buf, "v1.flrules").ok());
  ASSERT_TRUE(fb::GetMutableRuleset(buf.data())->mutate_format_version(0));
  EXPECT_FALSE(Ruleset::LoadBuffer(buf, "v0.flrules").ok());
}

TEST(Loader, DatabaseFromAnotherLibraryVersionIsRecompiled) {
  std::string buf = ValidBuffer();
  const fb::Ruleset* root = fb::GetRuleset(buf.data());
  ASSERT_NE(root->hs_version(), nullptr);
  size_t pos = static_cast<size_t>(root->hs_version()->data() - buf.data());
  buf[pos] = buf[pos] == '9' ? '8' : '9';  // same length, different version
  auto rs = Ruleset::LoadBuffer(buf, "old.flrules");
  ASSERT_TRUE(rs.ok()) << rs.status().message();
  EXPECT_TRUE((*rs)->recompiled());
  Exercise(**rs);
}

TEST(Loader, CorruptDatabaseIsRejected) {
  std::string buf = ValidBuffer();
  const fb::Ruleset* root = fb::GetRuleset(buf.data());
  size_t off = static_cast<size_t>(root->hs_database()->data() - reinterpret_cast<const uint8_t*>(buf.data()));
  buf[off + root->hs_database()->size() / 2] ^= 0x5a;
  auto rs = Ruleset::LoadBuffer(buf, "corrupt.flrules");
  ASSERT_FALSE(rs.ok());
  EXPECT_THAT(std::string(rs.status().message()), HasSubstr("checksum"));
}

// Built-in bytes skip the database's FNV-1a at load (src/ruleset, every
// start-up), so the checksums the build embedded are checked here: both
// hold for the embedded default ruleset and for a buffer just compiled.
void ExpectChecksumsHold(const fb::Ruleset* root) {
  const auto* db = root->hs_database();
  ASSERT_NE(db, nullptr);
  ASSERT_GT(db->size(), 0u);
  EXPECT_EQ(root->hs_checksum(),
            Fnv1a64(std::string_view(reinterpret_cast<const char*>(db->data()), db->size())));
  uint64_t sum = kFnvOffset;
  for (const fb::Rule* rule : *root->rules()) {
    for (const fb::Signal* sig : *rule->signals()) {
      sum = SignalsChecksumStep(sum, sig->pattern()->string_view(), ExtractsOf(*sig), sig->caseless());
    }
  }
  EXPECT_EQ(root->patterns_checksum(), sum);
}

TEST(Loader, EmbeddedDefaultChecksumsHold) {
  auto rs = Ruleset::LoadDefault();
  ASSERT_TRUE(rs.ok()) << rs.status().message();
  ExpectChecksumsHold((*rs)->fb());
  std::string buf = ValidBuffer();
  ExpectChecksumsHold(fb::GetRuleset(buf.data()));
}

// The same damaged hs_checksum: refused from a file, not looked at in bytes
// this process compiled (Hyperscan's CRC32C of the database still holds, and
// the database is used).
TEST(Loader, DatabaseChecksumIsCheckedOnlyInBytesReadFromOutside) {
  std::string buf = ValidBuffer();
  fb::Ruleset* root = fb::GetMutableRuleset(buf.data());
  ASSERT_TRUE(root->mutate_hs_checksum(root->hs_checksum() ^ 1));
  auto file = Ruleset::LoadBuffer(buf, "damaged.flrules");
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(std::string(file.status().message()), HasSubstr("hs_checksum"));
  auto built = Ruleset::LoadBuiltIn(buf, "compiled");
  ASSERT_TRUE(built.ok()) << built.status().message();
  EXPECT_FALSE((*built)->recompiled());
  Exercise(**built);
}

TEST(Loader, NotARuleset) {
  for (std::string junk : {std::string(), std::string("hello"), std::string(4096, '\0'),
                           std::string("{\"id\": \"x\"}")}) {
    auto rs = Ruleset::LoadBuffer(junk, "junk.flrules");
    ASSERT_FALSE(rs.ok());
    EXPECT_THAT(std::string(rs.status().message()), HasSubstr("junk.flrules"));
  }
  auto rs = Ruleset::LoadFile("/nonexistent/x.flrules");
  ASSERT_FALSE(rs.ok());
  EXPECT_THAT(std::string(rs.status().message()), HasSubstr("/nonexistent/x.flrules"));
}

TEST(Loader, SourceDirectoryCompilesOnTheFly) {
  auto rs = Ruleset::LoadFile(testing::MakeRuleTree("dir"));
  ASSERT_TRUE(rs.ok()) << rs.status().message();
  EXPECT_EQ((*rs)->rule_count(), 2u);
}

}  // namespace
}  // namespace faultline
