// Small rule source trees written into a directory, for the ruleset fault
// and resource-bound tests.
#ifndef FAULTLINE_TESTS_FAULTS_RULE_TREE_H_
#define FAULTLINE_TESTS_FAULTS_RULE_TREE_H_

#include <string>
#include <vector>

#include "faults_util.h"

namespace faultline::faults {

inline constexpr const char* kRefTitle = "A test reference";

struct SignalSpec {
  std::string id, pattern, example, counter = "nothing to see here";
};

// JSON-escapes a string (ASCII input).
inline std::string J(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

inline std::string RuleJson(const std::string& id, const std::vector<SignalSpec>& sigs) {
  std::string s = "{\"id\": " + J(id) + ", \"reference\": " + J(kRefTitle) +
                  ", \"title\": \"t\", \"category\": \"c\", \"tags\": [\"t\"], \"layer\": "
                  "\"hardware\", \"summary\": \"s\", \"root_cause\": [\"r\"], \"symptoms\": "
                  "[{\"symptom\": \"a\", \"why\": \"b\"}], \"confirm\": [\"c\"], \"fix\": \"f\", "
                  "\"verify\": \"v\", \"prevention\": [\"p\"], \"fingerprint\": \"fp\", "
                  "\"related\": [], \"sources\": [\"https://example.org\"], \"signals\": [";
  for (size_t i = 0; i < sigs.size(); ++i) {
    if (i) s += ",";
    s += "{\"id\": " + J(sigs[i].id) + ", \"pattern\": " + J(sigs[i].pattern) +
         ", \"role\": \"initiating\", \"examples\": [" + J(sigs[i].example) +
         "], \"counter_examples\": [" + J(sigs[i].counter) + "]}";
  }
  return s + "]}";
}

// Writes ruleset.json, references.json and the rules (one file each) under
// `dir`, family "fam".
inline void WriteTree(const std::string& dir,
                      const std::vector<std::pair<std::string, std::string>>& rules) {
  WriteFile(dir + "/ruleset.json", R"({"name": "faults", "version": "1"})");
  WriteFile(dir + "/references.json",
            std::string("{\"references\": [{\"title\": ") + J(kRefTitle) + ", \"summary\": \"s\"}]}");
  for (const auto& [name, body] : rules) WriteFile(dir + "/fam/" + name + ".json", body);
}

}  // namespace faultline::faults

#endif  // FAULTLINE_TESTS_FAULTS_RULE_TREE_H_
