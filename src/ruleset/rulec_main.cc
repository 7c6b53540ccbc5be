// fl_rulec SRC_DIR OUT: the build's own rule compiler, so the library can
// embed the default ruleset without depending on the CLI it is part of.
#include <cstdio>

#include "ruleset/compiler.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: fl_rulec SRC_DIR OUT.flrules\n");
    return 1;
  }
  auto result = faultline::CompileRuleSource(argv[1]);
  if (!result.ok()) {
    std::fprintf(stderr, "fl_rulec: %s\n", std::string(result.status().message()).c_str());
    return 2;
  }
  for (const std::string& w : result->warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  if (auto st = faultline::WriteFileAtomic(argv[2], result->buffer); !st.ok()) {
    std::fprintf(stderr, "fl_rulec: %s\n", std::string(st.message()).c_str());
    return 2;
  }
  return 0;
}
