// Return chains. NCCL reports a failed call as a WARN line naming what
// failed and then, from the same thread, one INFO line per frame the error
// code returns through (NCCLCHECK's "misc/socket.cc:561 -> 3"). Most WARN
// lines are survived (an IB port event, a sysfs path NCCL could not
// resolve), so a role:fallback rule's line with the field `warning` is a
// fatal line only when a line of such a rule with the field `returned` (a
// link of the chain) and the same `thread` follows it in its file, within
// kChainReach lines (other threads' lines interleave), before the thread's
// next warning. The other warnings, and the links themselves, which say
// nothing the warning does not, leave the evidence before anything reads it.
// A warning on a line that says its code goes on from it (a line with the
// field `carried_on`: the proxy service thread's "Accept failed", logged
// after the failed accept's own links) is never a head: it leaves, and its
// links find no warning open.
#include <algorithm>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "correlate/state.h"

namespace faultline::internal {
namespace {

// How many lines after its warning a chain's first link may come: it
// follows at once, but other threads of the process log between them.
constexpr uint64_t kChainReach = 64;

}  // namespace

void KeepReturnChainHeads(const Ruleset& rs, ScanResult& scan) {
  std::vector<bool> fallback(rs.rule_count());
  for (size_t r = 0; r < rs.rule_count(); ++r) fallback[r] = RuleHasRole(*rs.rule(r), RuleRole::kFallback);
  std::vector<Evidence>& evs = scan.evidence;
  std::vector<size_t> marked;  // warnings and links, in file order below
  for (size_t i = 0; i < evs.size(); ++i) {
    const Evidence& ev = evs[i];
    if (ev.rule < fallback.size() && fallback[ev.rule] &&
        (ev.Field("warning") || ev.Field("returned") || ev.Field("carried_on"))) {
      marked.push_back(i);
    }
  }
  if (marked.empty()) return;
  std::set<std::pair<uint32_t, uint64_t>> carried_on;  // (file, line)
  for (size_t i : marked) {
    if (evs[i].Field("carried_on")) carried_on.emplace(evs[i].source, evs[i].line);
  }
  std::stable_sort(marked.begin(), marked.end(), [&](size_t a, size_t b) {
    return std::pair(evs[a].source, evs[a].line) < std::pair(evs[b].source, evs[b].line);
  });
  std::vector<bool> drop(evs.size(), false);
  std::map<std::pair<uint32_t, std::string>, size_t> open;  // (file, thread) -> its last warning
  for (size_t i : marked) {
    const Evidence& ev = evs[i];
    const std::string* thread = ev.Field("thread");
    std::pair<uint32_t, std::string> key(ev.source, thread ? *thread : std::string());
    drop[i] = true;
    if (carried_on.contains({ev.source, ev.line})) {
      open.erase(key);
      continue;
    }
    if (!ev.Field("returned")) {
      open[key] = i;
      continue;
    }
    auto it = open.find(key);
    if (it == open.end()) continue;
    // One chain per warning: its later links find none open.
    if (ev.line - evs[it->second].line <= kChainReach) drop[it->second] = false;
    open.erase(it);
  }
  size_t out = 0;
  for (size_t i = 0; i < evs.size(); ++i) {
    if (drop[i]) continue;
    if (out != i) evs[out] = std::move(evs[i]);
    ++out;
  }
  evs.resize(out);
}

}  // namespace faultline::internal
