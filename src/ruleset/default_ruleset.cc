// The embedded default ruleset (see default_ruleset.S).
#include "ruleset/ruleset.h"

extern "C" const char fl_internal_default_ruleset_begin[];
extern "C" const char fl_internal_default_ruleset_end[];

namespace faultline {

absl::StatusOr<std::shared_ptr<const Ruleset>> Ruleset::LoadDefault() {
  return LoadEmbedded(
      std::string_view(fl_internal_default_ruleset_begin,
                       static_cast<size_t>(fl_internal_default_ruleset_end -
                                           fl_internal_default_ruleset_begin)),
      "<embedded default ruleset>");
}

}  // namespace faultline
