// LineCarry: what a block, a section or a whole file stated once, given to
// the lines after it (see carry.h for the capture names rules use).

#include "attribution/carry.h"

#include "attribution/lex.h"

namespace faultline {
namespace {

using attribution_internal::ParseUint;
using attribution_internal::ParseUintWhole;
using attribution_internal::SkipSpaces;

// Rank lists stay small: a node has at most a few dozen local workers.
constexpr size_t kMaxRankList = 4096;

// The rendezvous block prints local_ranks two lines above global_ranks.
constexpr uint64_t kRankListLines = 16;

std::optional<int64_t> Int(const std::string& v) { return ParseUintWhole(v, 12); }

// The capture `name` with `prefix` ("block_", "file_"), or nullptr.
const std::string* Stated(const LineCarry::Fields& fields, std::string_view prefix,
                          std::string_view name) {
  for (const auto& [k, v] : fields) {
    if (k.size() == prefix.size() + name.size() && k.starts_with(prefix) &&
        std::string_view(k).substr(prefix.size()) == name) {
      return &v;
    }
  }
  return nullptr;
}

}  // namespace

std::vector<int64_t> ParseRankList(std::string_view s) {
  std::vector<int64_t> out;
  size_t p = SkipSpaces(s, 0);
  if (p >= s.size() || s[p] != '[') return {};
  p = SkipSpaces(s, p + 1);
  if (p < s.size() && s[p] == ']') return out;
  while (p < s.size()) {
    std::optional<int64_t> v = ParseUint(s, &p, 9);
    if (!v || out.size() == kMaxRankList) return {};
    out.push_back(*v);
    p = SkipSpaces(s, p);
    if (p < s.size() && s[p] == ']') return out;
    if (p >= s.size() || s[p] != ',') return {};
    p = SkipSpaces(s, p + 1);
  }
  return {};
}

std::vector<std::pair<std::string, std::vector<int64_t>>> ParseRankMapping(std::string_view s) {
  constexpr size_t kMaxHosts = 65536;
  std::vector<std::pair<std::string, std::vector<int64_t>>> out;
  size_t p = SkipSpaces(s, 0);
  if (p >= s.size() || s[p] != '{') return {};
  p = SkipSpaces(s, p + 1);
  // Text cut short (a capped record) keeps the entries it holds whole.
  while (p < s.size() && s[p] != '}') {
    char quote = s[p];
    if ((quote != '\'' && quote != '"') || out.size() == kMaxHosts) return {};
    size_t end = s.find(quote, p + 1);
    if (end == std::string_view::npos) return out;
    std::string host(s.substr(p + 1, end - p - 1));
    p = SkipSpaces(s, end + 1);
    if (p < s.size() && s[p] != ':') return {};
    p = SkipSpaces(s, p + 1);
    size_t close = s.find(']', p);
    if (close == std::string_view::npos) return out;
    std::vector<int64_t> ranks = ParseRankList(s.substr(p, close + 1 - p));
    if (ranks.empty() || host.empty()) return {};
    out.emplace_back(std::move(host), std::move(ranks));
    p = SkipSpaces(s, close + 1);
    if (p < s.size() && s[p] == ',') p = SkipSpaces(s, p + 1);
  }
  return out;
}

void LineCarry::TakeBlock(uint64_t line, const Fields& fields, Attribution& a) {
  const std::string* host = Stated(fields, "block_", "host");
  const std::string* rank = Stated(fields, "block_", "rank");
  const std::string* local = Stated(fields, "block_", "local_rank");
  const std::string* pid = Stated(fields, "block_", "pid");
  if (!host && !rank && !local && !pid) return;
  // A field the block holds already, restated, opens the next block (the
  // next failure entry, the next process's dump); so does a stale block.
  bool restated = (host && !block_.host.empty()) || (rank && block_.rank) ||
                  (local && block_.local_rank) || (pid && block_.pid);
  if (restated || line > block_.line + kBlockLines) block_ = Block{};
  block_.line = line;
  if (host) {
    block_.host = NormalizeHost(*host);
    if (a.host.empty()) a.host = block_.host;
  }
  if (rank) block_.rank = Int(*rank);
  if (local) block_.local_rank = Int(*local);
  if (pid) block_.pid = Int(*pid);
  if (!a.pid) a.pid = block_.pid;
}

void LineCarry::TakeFile(const Fields& fields, Attribution& a, CarryLinks& out) {
  const std::string* host = Stated(fields, "file_", "host");
  const std::string* rank = Stated(fields, "file_", "rank");
  const std::string* local = Stated(fields, "file_", "local_rank");
  const std::string* pid = Stated(fields, "file_", "pid");
  if (!host && !rank && !local && !pid) return;
  std::string h = host ? NormalizeHost(*host) : std::string();
  std::optional<int64_t> p = pid ? Int(*pid) : std::nullopt;
  if (a.rank) {
    // "3: SLURMD_NODENAME=gpu-003" under srun -l: rank 3's host and pid,
    // not those of a file every task writes to.
    if (!h.empty()) a.host = h;
    if (p) a.pid = p;
    out.rank = a.rank;
    out.host = h;
    out.pid = p;
    return;
  }
  // A dump without labels, in any order: the batch script's or one task's.
  // Its rank and host are links (the pid's, the rank's), never every line's:
  // a batch script's output holds other tasks' lines too, from other hosts.
  // A ranked line takes its rank's host later (TopologyMap::Resolve).
  if (!h.empty()) file_.host = h;
  if (rank) file_.rank = Int(*rank);
  if (local) file_.local_rank = Int(*local);
  if (p) file_.pid = p;
  if (!file_.rank) return;
  out.rank = file_.rank;
  out.local_rank = file_.local_rank;
  out.host = file_.host;
  out.pid = file_.pid;
}

void LineCarry::Inherit(uint64_t line, Attribution& a, std::string* pod) const {
  // A line naming another process than the block's (a worker's own line
  // under "[default0]:" after a failure entry of local rank 3) is not the
  // block's.
  bool other = (a.local_rank && block_.local_rank && *a.local_rank != *block_.local_rank) ||
               (a.pid && block_.pid && *a.pid != *block_.pid);
  if (line <= block_.line + kBlockLines && !other) {
    if (a.host.empty()) a.host = block_.host;
    if (!a.rank) a.rank = block_.rank;
    if (!a.local_rank) a.local_rank = block_.local_rank;
    if (!a.pid) a.pid = block_.pid;
  }
  if (pod != nullptr && pod->empty() && a.host.empty()) *pod = section_pod_;
}

void LineCarry::TakeRanks(uint64_t line, const Fields& fields, const Attribution& a, CarryLinks& out) {
  if (line > local_ranks_line_ + kRankListLines) local_ranks_.clear();
  for (const auto& [k, v] : fields) {
    if (k == "local_ranks") {
      local_ranks_ = ParseRankList(v);
      local_ranks_line_ = line;
    } else if (k == "rank_mapping") {
      for (auto& [host, ranks] : ParseRankMapping(v)) {
        // The single-node form names the machine "localhost": the line's.
        std::string h = NormalizeHost(host == "localhost" ? std::string_view(a.host) : std::string_view(host));
        if (!h.empty()) out.host_ranks.emplace_back(std::move(h), std::move(ranks));
      }
    } else if (k == "global_ranks") {
      std::vector<int64_t> global = ParseRankList(v);
      if (global.empty() || global.size() != local_ranks_.size() || a.host.empty()) continue;
      for (size_t i = 0; i < global.size(); ++i) out.local_global.emplace_back(local_ranks_[i], global[i]);
      out.host = a.host;
      local_ranks_.clear();
    }
  }
}

bool LineCarry::States(const Fields& fields) {
  for (const auto& [k, v] : fields) {
    if (k.starts_with("block_") || k.starts_with("file_") || k == "section_pod" || k == "local_ranks" ||
        k == "global_ranks" || k == "rank_mapping") {
      return true;
    }
  }
  return false;
}

CarryLinks LineCarry::Apply(uint64_t line, const Fields& fields, Attribution& a, std::string* pod) {
  CarryLinks out;
  TakeBlock(line, fields, a);
  TakeFile(fields, a, out);
  for (const auto& [k, v] : fields) {
    if (k == "section_pod") section_pod_ = NormalizeHost(v);
  }
  Inherit(line, a, pod);
  TakeRanks(line, fields, a, out);
  return out;
}

}  // namespace faultline
