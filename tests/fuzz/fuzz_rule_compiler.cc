// The rule source compiler on one hostile rule file: the input is written as
// <tree>/fuzz/rule.json next to a valid ruleset.json and the repository's
// references (so real rule files, the seeds, compile), then
// CompileRuleSource parses it with simdjson, validates every field, checks
// the patterns (single line, bounded repeats, length caps), compiles them in
// Hyperscan and RE2 and runs the self-test. A compile that succeeds must give
// a buffer that loads. Errors must name the file.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "fuzz_util.h"
#include "ruleset/compiler.h"
#include "ruleset/ruleset.h"

using namespace faultline;
namespace fs = std::filesystem;

namespace {

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Merges every family's _references.json into one, so a rule of any family
// finds its reference.
std::string FamilyReferences() {
  std::string out = "{\"references\": [";
  bool first = true;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(FL_SOURCE_DIR "/rulesets", ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().filename() != "_references.json") continue;
    std::string body = ReadFile(it->path());
    size_t open = body.find('[');
    size_t close = body.rfind(']');
    if (open == std::string::npos || close == std::string::npos || close <= open) continue;
    std::string inner = body.substr(open + 1, close - open - 1);
    if (inner.find_first_not_of(" \t\r\n") == std::string::npos) continue;
    if (!first) out += ",";
    first = false;
    out += inner;
  }
  out += "]}";
  return out;
}

const std::string& Tree() {
  static const std::string tree = [] {
    std::string dir = fuzz::ScratchDir() + "/rules";
    fs::create_directories(dir + "/fuzz");
    fuzz::WriteWholeFile(dir + "/ruleset.json", R"({"name": "fuzz", "version": "1"})");
    fuzz::WriteWholeFile(dir + "/references.json",
                         ReadFile(FL_SOURCE_DIR "/rulesets/references.json"));
    fuzz::WriteWholeFile(dir + "/fuzz/_references.json", FamilyReferences());
    return dir;
  }();
  return tree;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& tree = Tree();
  const std::string file = tree + "/fuzz/rule.json";
  fuzz::WriteWholeFile(file, std::string_view(reinterpret_cast<const char*>(data), size));
  auto r = CompileRuleSource(tree);
  if (!r.ok()) {
    std::string msg(r.status().message());
    FL_FUZZ_CHECK(!msg.empty(), "an error without a message");
    FL_FUZZ_CHECK(msg.find("rule.json") != std::string::npos ||
                      msg.find(tree) != std::string::npos,
                  msg);
    return 0;
  }
  auto loaded = Ruleset::LoadBuiltIn(r->buffer, "compiled");
  FL_FUZZ_CHECK(loaded.ok(), loaded.status().message());
  FL_FUZZ_CHECK(!(*loaded)->recompiled(), "a fresh database was not trusted");
  return 0;
}
