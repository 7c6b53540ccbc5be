// Builds small rule source trees in a temp dir for compiler and loader tests.
#ifndef FAULTLINE_TESTS_RULESET_TEST_RULES_H_
#define FAULTLINE_TESTS_RULESET_TEST_RULES_H_

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace faultline::testing {

inline std::string MakeTempDir(const std::string& tag) {
  std::string tmpl = (std::filesystem::temp_directory_path() / ("fl-" + tag + "-XXXXXX")).string();
  char* d = mkdtemp(tmpl.data());
  return d ? std::string(d) : std::string();
}

inline void WriteFile(const std::string& path, const std::string& body) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << body;
}

inline const char* kXidRule = R"J({
  "id": "xid-79-fallen-off-bus",
  "reference": "A worker loses its GPU mid-run and the job hangs until a collective times out",
  "title": "GPU has fallen off the bus (Xid 79)",
  "category": "GPU Hardware", "tags": ["xid"], "layer": "hardware",
  "summary": "s", "root_cause": ["r"], "symptoms": [{"symptom": "a", "why": "b"}],
  "confirm": ["c"], "fix": "f", "verify": "nvidia-smi -q", "prevention": ["p"],
  "fingerprint": "fp", "related": [], "sources": ["https://docs.nvidia.com/deploy/xid-errors/"],
  "signals": [{"id": "xid79", "pattern": "NVRM: Xid \\(PCI:[0-9a-fA-F:.]+\\): 79,",
    "extract": "Xid \\(PCI:(?P<pci>[0-9a-fA-F:.]+)\\): (?P<xid>[0-9]+)", "role": "initiating",
    "examples": ["[1000001.682554] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."],
    "counter_examples": ["[1000001.682554] NVRM: Xid (PCI:0000:3b:00): 31, pid=1234, name=python"]}],
  "explains": [{"rule": "nccl-watchdog-timeout", "min_lag_s": -5, "max_lag_s": 3600}]
})J";

inline const char* kNcclRule = R"J({
  "id": "nccl-watchdog-timeout",
  "reference": "A worker loses its GPU mid-run and the job hangs until a collective times out",
  "title": "NCCL watchdog collective timeout", "category": "Distributed", "tags": ["nccl"],
  "layer": "framework", "summary": "s", "root_cause": ["r"],
  "symptoms": [{"symptom": "a", "why": "b"}], "confirm": ["c"], "fix": "f", "verify": "v",
  "prevention": ["p"], "fingerprint": "fp", "related": [], "sources": ["https://github.com/pytorch/pytorch"],
  "signals": [{"id": "watchdog", "pattern": "Watchdog caught collective operation timeout",
    "extract": "Rank (?P<rank>[0-9]+)\\]", "role": "symptom",
    "examples": ["[rank3]:[E1102 13:46:41.123456 1234 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4711, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600005 milliseconds before timing out."],
    "counter_examples": ["node017:1:1 [3] NCCL INFO comm 0x1 rank 3"]}]
})J";

// A valid two-rule source tree; returns its root.
inline std::string MakeRuleTree(const std::string& tag) {
  std::string dir = MakeTempDir(tag);
  WriteFile(dir + "/ruleset.json", R"J({"name": "test", "version": "1"})J");
  WriteFile(dir + "/references.json",
            R"J({"references": [{"title": "A worker loses its GPU mid-run and the job hangs until a collective times out", "summary": "s"}]})J");
  WriteFile(dir + "/gpu/xid-79.json", kXidRule);
  WriteFile(dir + "/nccl/watchdog.json", kNcclRule);
  return dir;
}

// Replaces the first occurrence of `from` in `s`.
inline std::string Replace(std::string s, const std::string& from, const std::string& to) {
  size_t pos = s.find(from);
  if (pos != std::string::npos) s.replace(pos, from.size(), to);
  return s;
}

}  // namespace faultline::testing

#endif  // FAULTLINE_TESTS_RULESET_TEST_RULES_H_
