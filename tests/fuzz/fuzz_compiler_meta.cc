// The rule compiler's metadata files: the input is ruleset.json, a NUL, and
// references.json (no NUL: all of it is ruleset.json), written into a copy
// of tests/fuzz/rules-small whose two rules cite one catalog reference;
// CompileRuleSource then reads both (simdjson, keys, types, duplicate
// titles, priors) before it compiles the rules. Oracles beyond no crash/UB:
//  - an error has a message naming ruleset.json, references.json or a rule
//    file of the tree (a rule whose reference the catalog lost);
//  - a compile that succeeds gives a buffer that loads, with its database
//    trusted, whose name and version are the strings of ruleset.json.
#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "fuzz_util.h"
#include "ruleset/compiler.h"
#include "ruleset/ruleset.h"

using namespace faultline;
namespace fs = std::filesystem;

namespace {

const std::string& Tree() {
  static const std::string tree = [] {
    std::string dir = fuzz::ScratchDir() + "/meta";
    fs::copy(FL_SOURCE_DIR "/tests/fuzz/rules-small", dir, fs::copy_options::recursive);
    return dir;
  }();
  return tree;
}

// The string at `key` of a JSON object, if the text is one.
bool JsonString(simdjson::dom::parser& p, const std::string& json, const char* key, std::string* out) {
  simdjson::dom::element doc;
  if (p.parse(json).get(doc)) return false;
  std::string_view v;
  if (doc[key].get_string().get(v)) return false;
  out->assign(v);
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t nul = in.find('\0');
  const std::string ruleset(in.substr(0, nul));
  const std::string refs(nul == std::string_view::npos ? std::string_view() : in.substr(nul + 1));
  const std::string& tree = Tree();
  fuzz::WriteWholeFile(tree + "/ruleset.json", ruleset);
  fuzz::WriteWholeFile(tree + "/references.json", refs);

  auto r = CompileRuleSource(tree);
  if (!r.ok()) {
    std::string msg(r.status().message());
    FL_FUZZ_CHECK(msg.find("ruleset.json") != std::string::npos ||
                      msg.find("references.json") != std::string::npos ||
                      msg.find(tree + "/gpu/") != std::string::npos,
                  msg);
    return 0;
  }
  auto loaded = Ruleset::LoadBuiltIn(r->buffer, "compiled");  // just compiled here: no MAC
  FL_FUZZ_CHECK(loaded.ok(), loaded.status().message());
  FL_FUZZ_CHECK(!(*loaded)->recompiled(), "a fresh database was not trusted");
  simdjson::dom::parser p;
  std::string name, version;
  FL_FUZZ_CHECK(JsonString(p, ruleset, "name", &name) && JsonString(p, ruleset, "version", &version),
                "compiled a ruleset.json without string name and version");
  FL_FUZZ_CHECK((*loaded)->name() == name, "name differs from ruleset.json: " + name);
  FL_FUZZ_CHECK((*loaded)->version() == version, "version differs from ruleset.json: " + version);
  return 0;
}
