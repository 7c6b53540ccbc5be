// Scale-out through the C ABI: a file scanned as byte ranges in separate
// sessions, exported as bundles and correlated once, gives the report of one
// session over the whole input -- same incidents, evidence, counts, ignored.
#include <faultline/faultline.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace {

// The report JSON without what legitimately differs (wall-clock seconds).
std::string Comparable(std::string json) {
  size_t p = json.find("\"seconds\":");
  if (p != std::string::npos) {
    size_t e = json.find_first_of(",}", p);
    json.erase(p, e - p);
  }
  return json;
}

struct Reports {
  std::string json, jsonl;
};

Reports Whole(const fl_ruleset* rs, const std::vector<std::string>& paths) {
  fl_session* s = nullptr;
  EXPECT_EQ(fl_session_new(&s, rs, nullptr, nullptr), FL_OK);
  for (const auto& p : paths) EXPECT_EQ(fl_session_add_path(s, p.c_str()), FL_OK);
  fl_report* r = nullptr;
  EXPECT_EQ(fl_session_finish(s, &r), FL_OK);
  Reports out;
  const char* j;
  size_t n;
  fl_report_json(r, &j, &n);
  out.json = Comparable(std::string(j, n));
  fl_report_evidence_jsonl(r, &j, &n);
  out.jsonl = std::string(j, n);
  fl_report_free(r);
  fl_session_free(s);
  return out;
}

// Each path cut into ranges at the given fractions, one session per range.
Reports Sharded(const fl_ruleset* rs, const std::vector<std::string>& paths, int cuts, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> bundles;
  for (const auto& p : paths) {
    uint64_t size = std::filesystem::file_size(p);
    std::vector<uint64_t> at{0};
    for (int i = 0; i < cuts; ++i) at.push_back(size ? rng() % size : 0);
    at.push_back(size);
    std::sort(at.begin(), at.end());
    for (size_t i = 0; i + 1 < at.size(); ++i) {
      fl_session* s = nullptr;
      EXPECT_EQ(fl_session_new(&s, rs, nullptr, nullptr), FL_OK);
      EXPECT_EQ(fl_session_add_range(s, p.c_str(), at[i], at[i + 1], 0), FL_OK);
      void* data = nullptr;
      size_t len = 0;
      EXPECT_EQ(fl_session_export_bundle(s, &data, &len), FL_OK) << fl_session_last_error(s);
      bundles.emplace_back(static_cast<char*>(data), len);
      fl_free(data);
      fl_session_free(s);
    }
  }
  std::vector<const void*> ptrs;
  std::vector<size_t> lens;
  for (const auto& b : bundles) {
    ptrs.push_back(b.data());
    lens.push_back(b.size());
  }
  fl_report* r = nullptr;
  fl_error* err = nullptr;
  EXPECT_EQ(fl_report_from_bundles(&r, rs, nullptr, ptrs.data(), lens.data(), ptrs.size(), &err), FL_OK)
      << fl_error_message(err);
  Reports out;
  if (!r) return out;
  const char* j;
  size_t n;
  fl_report_json(r, &j, &n);
  out.json = Comparable(std::string(j, n));
  fl_report_evidence_jsonl(r, &j, &n);
  out.jsonl = std::string(j, n);
  fl_report_free(r);
  return out;
}

class Bundles : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(fl_ruleset_load_default(&rs_, nullptr), FL_OK); }
  void TearDown() override { fl_ruleset_free(rs_); }
  fl_ruleset* rs_ = nullptr;
};

std::vector<std::string> ExampleFiles() {
  std::vector<std::string> out;
  for (auto& e : std::filesystem::recursive_directory_iterator(
           std::string(FL_SOURCE_DIR) + "/examples/incidents/xid79-two-hosts")) {
    if (e.is_regular_file()) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST_F(Bundles, RangesEqualOneSession) {
  auto files = ExampleFiles();
  Reports whole = Whole(rs_, files);
  ASSERT_NE(whole.json.find("xid-79-fallen-off-bus"), std::string::npos);
  for (uint32_t seed : {1u, 2u, 3u}) {
    for (int cuts : {1, 3, 17}) {
      Reports sharded = Sharded(rs_, files, cuts, seed);
      EXPECT_EQ(sharded.jsonl, whole.jsonl) << "seed " << seed << " cuts " << cuts;
      EXPECT_EQ(sharded.json, whole.json) << "seed " << seed << " cuts " << cuts;
    }
  }
}

TEST_F(Bundles, CutInsideARunOfMatchingLinesAndInheritedTimes) {
  // 200 watchdog lines with no stamp of their own after one stamped line:
  // every cut falls inside the run; times inherit across the cut.
  std::string dir = std::filesystem::temp_directory_path() / "fl-bundle-run";
  std::filesystem::create_directories(dir + "/node001");
  std::string path = dir + "/node001/rank-5.log";
  {
    std::ofstream f(path);
    f << "2026-11-02T03:00:00.000Z [rank5]: starting\n";
    for (int i = 0; i < 200; ++i) {
      f << "[Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=" << 4711 + i
        << ", OpType=ALLREDUCE, NumelIn=8, NumelOut=8, Timeout(ms)=600000) ran for 600005 milliseconds before timing out.\n";
    }
  }
  Reports whole = Whole(rs_, {path});
  ASSERT_NE(whole.jsonl.find("\"time_source\":\"inherited\""), std::string::npos);
  for (uint32_t seed : {7u, 8u}) {
    Reports sharded = Sharded(rs_, {path}, 9, seed);
    EXPECT_EQ(sharded.jsonl, whole.jsonl);
    EXPECT_EQ(sharded.json, whole.json);
  }
  std::filesystem::remove_all(dir);
}

TEST_F(Bundles, CorruptBundleIsRejectedNamingIt) {
  fl_session* s = nullptr;
  ASSERT_EQ(fl_session_new(&s, rs_, nullptr, nullptr), FL_OK);
  auto files = ExampleFiles();
  ASSERT_EQ(fl_session_add_path(s, files[0].c_str()), FL_OK);
  void* data = nullptr;
  size_t len = 0;
  ASSERT_EQ(fl_session_export_bundle(s, &data, &len), FL_OK);
  fl_session_free(s);
  std::string good(static_cast<char*>(data), len);
  fl_free(data);
  // Cuts into data are rejected; cutting only FlatBuffers' trailing alignment
  // padding may load, and is checked below with the random flips.
  for (size_t cut : {size_t{0}, size_t{7}, len / 2}) {
    const void* p = good.data();
    size_t l = cut;
    fl_report* r = nullptr;
    fl_error* err = nullptr;
    EXPECT_EQ(fl_report_from_bundles(&r, rs_, nullptr, &p, &l, 1, &err), FL_ERR_PARSE) << cut;
    EXPECT_NE(std::string(fl_error_message(err)).find("bundle 0"), std::string::npos);
    fl_error_free(err);
    EXPECT_EQ(r, nullptr);
  }
  std::mt19937 rng(5);
  for (int i = 0; i < 500; ++i) {
    std::string b = good;
    b[rng() % b.size()] ^= static_cast<char>(1 + rng() % 255);
    const void* p = b.data();
    size_t l = b.size();
    fl_report* r = nullptr;
    fl_status rc = fl_report_from_bundles(&r, rs_, nullptr, &p, &l, 1, nullptr);
    EXPECT_TRUE(rc == FL_OK || rc == FL_ERR_PARSE);
    fl_report_free(r);
  }
}

}  // namespace
