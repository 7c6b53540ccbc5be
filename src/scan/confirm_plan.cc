#include "scan/confirm_plan.h"

#include <string>

namespace faultline::internal {
namespace {

bool Printable(char c) { return c >= 0x20 && c <= 0x7e; }
bool Meta(char c) { return std::string_view(".^$|?*+()[]{}\\").find(c) != std::string_view::npos; }
// Punctuation whose escape means the character itself in both engines.
bool EscapedPunct(char c) { return Printable(c) && c != ' ' && !(std::isalnum(static_cast<unsigned char>(c))); }

// Recursive descent over the subset; `p` advances past what was read.
class SubsetParser {
 public:
  explicit SubsetParser(std::string_view s) : s_(s) {}
  bool Whole() { return Alt(0) && p_ == s_.size(); }

 private:
  bool Alt(int depth) {
    if (depth > 16) return false;
    if (!Seq(depth)) return false;
    while (p_ < s_.size() && s_[p_] == '|') {
      ++p_;
      if (!Seq(depth)) return false;
    }
    return true;
  }
  bool Seq(int depth) {
    while (p_ < s_.size() && s_[p_] != '|' && s_[p_] != ')') {
      if (!Atom(depth) || !Quantifier()) return false;
    }
    return true;
  }
  bool Atom(int depth) {
    char c = s_[p_];
    if (c == '(') {
      ++p_;
      if (s_.substr(p_, 2) == "?:") p_ += 2;
      else if (p_ < s_.size() && s_[p_] == '?') return false;  // named, lookaround, flags
      if (!Alt(depth + 1) || p_ >= s_.size() || s_[p_] != ')') return false;
      ++p_;
      return true;
    }
    if (c == '[') return Class();
    if (c == '\\') {
      if (p_ + 1 >= s_.size() || !EscapedPunct(s_[p_ + 1])) return false;
      p_ += 2;
      return true;
    }
    if (!Printable(c) || Meta(c)) return false;  // '.', anchors, stray quantifiers, non-ASCII
    ++p_;
    return true;
  }
  // A non-negated class of printable ASCII characters and ranges.
  bool Class() {
    ++p_;  // '['
    if (p_ >= s_.size() || s_[p_] == '^' || s_[p_] == ']') return false;
    bool any = false;
    while (p_ < s_.size() && s_[p_] != ']') {
      char lo;
      if (!ClassChar(&lo)) return false;
      if (p_ + 1 < s_.size() && s_[p_] == '-' && s_[p_ + 1] != ']') {
        ++p_;
        char hi;
        if (!ClassChar(&hi) || hi < lo) return false;
      }
      any = true;
    }
    if (p_ >= s_.size() || !any) return false;
    ++p_;  // ']'
    return true;
  }
  bool ClassChar(char* out) {
    char c = s_[p_];
    if (c == '\\') {
      if (p_ + 1 >= s_.size() || !EscapedPunct(s_[p_ + 1])) return false;
      *out = s_[p_ + 1];
      p_ += 2;
      return true;
    }
    if (!Printable(c) || c == '[') return false;  // '[:alpha:]' and friends
    *out = c;
    ++p_;
    return true;
  }
  bool Quantifier() {
    if (p_ >= s_.size()) return true;
    char c = s_[p_];
    if (c == '*' || c == '+' || c == '?') {
      ++p_;
    } else if (c == '{') {
      size_t q = p_ + 1, digits = 0;
      while (q < s_.size() && std::isdigit(static_cast<unsigned char>(s_[q]))) ++q, ++digits;
      if (digits == 0) return false;
      if (q < s_.size() && s_[q] == ',') {
        ++q;
        while (q < s_.size() && std::isdigit(static_cast<unsigned char>(s_[q]))) ++q;
      }
      if (q >= s_.size() || s_[q] != '}') return false;
      p_ = q + 1;
    } else {
      return true;
    }
    if (p_ < s_.size() && s_[p_] == '?') ++p_;  // lazy: the same lines match
    // A second quantifier (possessive `a++`, `a**`) is outside the subset.
    return p_ >= s_.size() || (s_[p_] != '*' && s_[p_] != '+' && s_[p_] != '?' && s_[p_] != '{');
  }

  std::string_view s_;
  size_t p_ = 0;
};

// The group names of an extract pattern: (?P<name>...) and (?<name>...).
void CaptureNames(std::string_view re, std::vector<std::string_view>* out) {
  for (size_t i = re.find("(?"); i != std::string_view::npos; i = re.find("(?", i + 2)) {
    if (i > 0 && re[i - 1] == '\\') continue;
    size_t at = i + 2;
    if (at < re.size() && re[at] == 'P') ++at;
    if (at >= re.size() || re[at] != '<') continue;
    size_t end = re.find('>', at);
    if (end == std::string_view::npos) continue;
    out->push_back(re.substr(at + 1, end - at - 1));
  }
}

}  // namespace

bool HsMatchConfirms(std::string_view pattern) {
  return !pattern.empty() && SubsetParser(pattern).Whole();
}

bool IsThinField(std::string_view name) {
  // comm_rank and nranks name the device link of an init line whose rank
  // comes from its communicator (Keep's topology); pod and node place a
  // pod on its node (Keep's host aliases); ib_* and net_dev name the HCAs a
  // process lists and sends through (Keep's NicLinks); block_*, file_*, map_*, section_pod
  // and the rank lists and mapping are what a line states for the lines after it (Keep's
  // LineCarry).
  // By first letter: every capture of every dropped match asks.
  switch (name.empty() ? '\0' : name[0]) {
    case 's': return name == "seq" || name == "section_pod";
    case 'b': return name == "bus_id" || name.starts_with("block_");
    case 'c': return name == "cuda_dev" || name == "comm_id" || name == "comm_rank";
    case 'n': return name == "nranks" || name == "node" || name == "net_dev";
    case 'i': return name == "ib_devs" || name == "ib_dev" || name == "ib_index" || name == "ib_pci" ||
                     name == "ib_netdev";
    case 'p': return name == "pod";
    case 'f': return name.starts_with("file_");
    case 'l': return name == "local_ranks";
    case 'm': return name.starts_with("map_");
    case 'g': return name == "global_ranks";
    case 'r': return name == "rank_mapping";
    default: return false;
  }
}

bool SetsAttribution(std::string_view name) {
  return name == "rank" || name == "pid" || name == "host" || name == "local_rank";
}

std::vector<SignalPlan> PlanSignals(const Ruleset& rs) {
  std::vector<SignalPlan> plans(rs.signal_count());
  for (uint32_t id = 0; id < plans.size(); ++id) {
    const SignalInfo& si = rs.signal(id);
    if (si.signal == nullptr) continue;
    // A prefilter is what Hyperscan searched (ruleset.fbs): RE2 confirms.
    if (si.signal->pattern() && !si.signal->prefilter()) {
      plans[id].hs_confirms = HsMatchConfirms(si.signal->pattern()->string_view());
    }
    std::vector<std::string_view> names;
    if (si.signal->extract()) CaptureNames(si.signal->extract()->string_view(), &names);
    if (si.signal->extract_more()) {
      for (const auto* x : *si.signal->extract_more()) CaptureNames(x->string_view(), &names);
    }
    for (std::string_view n : names) {
      if (IsThinField(n) || SetsAttribution(n)) plans[id].thin_extract = true;
    }
  }
  return plans;
}

}  // namespace faultline::internal
