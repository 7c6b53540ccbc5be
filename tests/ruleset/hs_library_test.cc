// The Hyperscan library faultline links must report every match, on the CPU
// it runs on. Vectorscan 5.4.9 (Debian 12's libvectorscan5) does not on a
// CPU with AVX-512 VBMI: its AVX-512 scan path misses matches that its AVX2
// path, and Intel Hyperscan 5.4.0 on the same CPU, find (README "Hyperscan
// or Vectorscan"). Each case below is one it missed, from the default
// ruleset's patterns and real logs; on a library with the fault they fail.
#include <gtest/gtest.h>
#include <hs/hs.h>

#include <string>
#include <utility>
#include <vector>

#include "ruleset/ruleset.h"

namespace faultline {
namespace {

// Every (pattern id, match end) of `text` scanned as one block with a
// database of `patterns`, compiled as the ruleset compiles its signals.
std::vector<std::pair<unsigned, unsigned long long>> Matches(const std::vector<std::string>& patterns,
                                                             const std::string& text) {
  std::vector<const char*> exprs;
  std::vector<unsigned> flags, ids;
  for (const std::string& p : patterns) {
    exprs.push_back(p.c_str());
    flags.push_back(SignalHsFlags(false));
    ids.push_back(static_cast<unsigned>(ids.size()));
  }
  hs_database_t* db = nullptr;
  hs_compile_error_t* err = nullptr;
  EXPECT_EQ(hs_compile_multi(exprs.data(), flags.data(), ids.data(), static_cast<unsigned>(exprs.size()),
                             HS_MODE_BLOCK, nullptr, &db, &err),
            HS_SUCCESS);
  if (!db) {
    hs_free_compile_error(err);
    return {};
  }
  hs_scratch_t* scratch = nullptr;
  EXPECT_EQ(hs_alloc_scratch(db, &scratch), HS_SUCCESS);
  std::vector<std::pair<unsigned, unsigned long long>> out;
  hs_scan(db, text.data(), static_cast<unsigned>(text.size()), 0, scratch,
          [](unsigned id, unsigned long long, unsigned long long to, unsigned, void* ctx) {
            static_cast<std::vector<std::pair<unsigned, unsigned long long>>*>(ctx)->emplace_back(id, to);
            return 0;
          },
          &out);
  hs_free_scratch(scratch);
  hs_free_database(db);
  return out;
}

TEST(HyperscanLibrary, FindsAPatternBesideAnotherWithTheSamePrefix) {
  // A Docker daemon refusal after `: ` (unrecognised-fatal-error) beside the
  // package-install failures' pattern, which starts with the same
  // alternation; Vectorscan's AVX-512 path reports nothing for the first.
  const std::vector<std::string> patterns = {
      "(?:^[ \\t]*|\\]:[ \\t]*|docker: |: )Error response from daemon: [^ \\t\\n]",
      "(?:^[ \\t]*|\\]:[ \\t]*|: )(?:Error: Unable to find a match: [^ \\t\\n]|ERROR: Could not find a "
      "version that satisfies the requirement [^ \\t\\n]|ERROR: No matching distribution found for "
      "[^ \\t\\n]|E: Unable to locate package [^ \\t\\n]|E: Package '[^'\\n]+' has no installation "
      "candidate)|Could not resolve Linux kernel version"};
  const std::string line =
      "Error: failed to start container \"cuda-vector-add\": Error response from daemon: OCI runtime "
      "create failed: container_linux.go:370: starting container process caused: process_linux.go:459: "
      "container init caused: Running hook #0:: error running hook: exit status 1, stdout: , stderr: "
      "nvidia-container-cli.real: initialization error: driver error: failed to process request: unknown";
  const auto m = Matches(patterns, line);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0], std::make_pair(0u, 81ull));
}

TEST(HyperscanLibrary, EndsAMultilineMatchAtEachLinesEnd) {
  // `$` in multiline mode before each newline: both lines match, each ending
  // before its newline (Vectorscan's AVX-512 path reported one match, ending
  // after the last newline).
  const std::string a =
      "Process 2: Global devices: [CpuDevice(id=0), CpuDevice(id=1), CpuDevice(id=2), CpuDevice(id=3)], "
      "Local devices: [CpuDevice(id=2)]";
  const std::string b =
      "Process 3: Global devices: [CpuDevice(id=0), CpuDevice(id=1), CpuDevice(id=2), CpuDevice(id=3)], "
      "Local devices: [CpuDevice(id=3)]";
  std::string text(512, 'x');
  text += "\n" + a + "\n" + b + "\n";
  const auto m = Matches({"^Process [0-9]+: [^\\n]+$"}, text);
  const unsigned long long end_a = 513 + a.size(), end_b = end_a + 1 + b.size();
  EXPECT_EQ(m, (std::vector<std::pair<unsigned, unsigned long long>>{{0u, end_a}, {0u, end_b}}));
}

}  // namespace
}  // namespace faultline
