// The cross-rank analysis of Flight Recorder dumps (declared in dump.h).
//
// Groups are matched across dumps by name and membership, as PyTorch's
// fr_trace does (split_group can reuse a name for other ranks). Within a
// group only collectives count: a p2p entry carries the group's current
// collective_seq_id without advancing it.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "flightrec/dump.h"
#include "util/strings.h"

namespace faultline::flightrec {

const char* FrFindingKindName(FrFinding::Kind k) {
  switch (k) {
    case FrFinding::Kind::kMissingRank: return "missing-rank";
    case FrFinding::Kind::kNoDump: return "no-dump";
    case FrFinding::Kind::kMismatch: return "mismatch";
    case FrFinding::Kind::kStalled: return "stalled";
  }
  return "?";
}

namespace {

std::string RanksText(const std::vector<int64_t>& ranks, size_t max = 16) {
  std::string out;
  for (size_t i = 0; i < ranks.size() && i < max; ++i) StrAppend(&out, i ? "," : "", ranks[i]);
  if (ranks.size() > max) StrAppend(&out, ",... (", ranks.size(), " ranks)");
  return out;
}

std::string SizesText(const std::vector<std::vector<int64_t>>& sizes) {
  std::string out = "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    StrAppend(&out, i ? ", " : "", "[", StrJoin(sizes[i], ", "), "]");
  }
  return out + "]";
}

// Ops whose sizes legitimately differ across ranks (fr_trace's exemptions).
bool InputSizesVary(const std::string& op) {
  return op == "scatter" || op.find("all_to_all") != std::string::npos ||
         op.find("alltoall") != std::string::npos;
}
bool OutputSizesVary(const std::string& op) {
  return op == "gather" || op.find("all_to_all") != std::string::npos ||
         op.find("alltoall") != std::string::npos;
}

struct Member {
  const FrDump* dump = nullptr;
  // Collective entries of the group, by sequence id, in record order.
  std::map<int64_t, std::vector<const FrEntry*>> by_seq;
};

// One rank's rendering of a field at a sequence id (coalesced ops join).
std::string FieldAt(const std::vector<const FrEntry*>& es, const std::string& field) {
  std::string out;
  for (size_t i = 0; i < es.size(); ++i) {
    const FrEntry& e = *es[i];
    if (i) out += " + ";
    if (field == "op") {
      out += e.op;
    } else if (field == "input_sizes") {
      out += SizesText(e.input_sizes);
    } else if (field == "output_sizes") {
      out += SizesText(e.output_sizes);
    } else {
      StrAppend(&out, "[", StrJoin(e.input_dtypes, ", "), "] -> [",
                      StrJoin(e.output_dtypes, ", "), "]");
    }
  }
  return out;
}

// Compares one field across the ranks that recorded `seq`; appends a
// mismatch (majority value expected; ties go to the lowest rank's value).
bool CompareField(int64_t seq, const std::string& field,
                  const std::vector<std::pair<int64_t, const std::vector<const FrEntry*>*>>& at,
                  FrGroupReport& g) {
  std::map<std::string, std::pair<size_t, int64_t>> counts;  // value -> (ranks, lowest rank)
  std::vector<std::string> values;
  values.reserve(at.size());
  for (const auto& [rank, es] : at) {
    values.push_back(FieldAt(*es, field));
    auto [it, fresh] = counts.try_emplace(values.back(), 0, rank);
    ++it->second.first;
    if (!fresh) it->second.second = std::min(it->second.second, rank);
  }
  if (counts.size() <= 1) return false;
  auto best = counts.begin();
  for (auto it = counts.begin(); it != counts.end(); ++it) {
    if (it->second.first > best->second.first ||
        (it->second.first == best->second.first && it->second.second < best->second.second)) {
      best = it;
    }
  }
  FrMismatch m;
  m.seq = seq;
  m.field = field;
  m.expected = best->first;
  for (size_t i = 0; i < at.size(); ++i) {
    if (values[i] != m.expected) m.odd.push_back({at[i].first, values[i]});
  }
  g.mismatches.push_back(std::move(m));
  return true;
}

void Mismatches(const std::map<int64_t, Member>& members, FrGroupReport& g) {
  std::set<int64_t> seqs;
  for (const auto& [rank, m] : members) {
    for (const auto& [seq, es] : m.by_seq) seqs.insert(seq);
  }
  for (int64_t seq : seqs) {
    if (g.mismatches.size() >= FrGroupReport::kMaxMismatches) break;
    std::vector<std::pair<int64_t, const std::vector<const FrEntry*>*>> at;
    bool inputs_vary = false, outputs_vary = false;
    for (const auto& [rank, m] : members) {
      auto it = m.by_seq.find(seq);
      if (it == m.by_seq.end()) continue;
      at.emplace_back(rank, &it->second);
      for (const FrEntry* e : it->second) {
        inputs_vary |= InputSizesVary(e->op);
        outputs_vary |= OutputSizesVary(e->op);
      }
    }
    if (at.size() < 2) continue;
    // A different op makes the sizes meaningless to compare.
    if (CompareField(seq, "op", at, g)) continue;
    if (!inputs_vary && CompareField(seq, "input_sizes", at, g)) continue;
    if (!outputs_vary && CompareField(seq, "output_sizes", at, g)) continue;
    CompareField(seq, "dtypes", at, g);
  }
}

// The op most ranks recorded at `seq` (ties: the lowest rank's).
std::string OpAt(const std::map<int64_t, Member>& members, int64_t seq) {
  std::map<std::string, size_t> counts;
  std::string best;
  size_t best_n = 0;
  for (const auto& [rank, m] : members) {
    auto it = m.by_seq.find(seq);
    if (it == m.by_seq.end()) continue;
    std::string op = FieldAt(it->second, "op");
    size_t n = ++counts[op];
    if (n > best_n) best = op, best_n = n;
  }
  return best;
}

}  // namespace

FrAnalysis AnalyzeFlightRecorder(std::span<const FrDump> dumps) {
  FrAnalysis out;
  // One dump per rank; the first wins.
  std::map<int64_t, const FrDump*> by_rank;
  for (const FrDump& d : dumps) {
    if (d.rank < 0) {
      out.notes.push_back(StrCat(d.source, ": rank unknown (no group membership, p2p name ",
                                       "or digits in the name tell it); dump left out"));
      continue;
    }
    auto [it, fresh] = by_rank.emplace(d.rank, &d);
    if (!fresh) {
      out.notes.push_back(StrCat(d.source, ": a second dump of rank ", d.rank, " (first: ",
                                       it->second->source, "); left out"));
    }
  }

  // Groups by (name, members), from every dump's pg_config.
  std::map<std::pair<std::string, std::vector<int64_t>>, FrGroupReport> groups;
  for (const auto& [rank, d] : by_rank) {
    for (const FrGroup& g : d->groups) {
      FrGroupReport& r = groups[{g.name, g.ranks}];
      r.name = g.name;
      r.members = g.ranks;
      if (r.desc.empty()) r.desc = g.desc;
    }
  }

  for (auto& key_group : groups) {
    FrGroupReport& g = key_group.second;  // a plain reference: lambdas capture it
    std::map<int64_t, Member> members;
    for (int64_t r : g.members) {
      auto it = by_rank.find(r);
      if (it == by_rank.end()) {
        g.no_dump.push_back(r);
        continue;
      }
      // A member's own pg_config may list the group under other ranks (a
      // split reusing the name): its entries then belong to that group.
      const FrGroup* mine = it->second->FindGroup(g.name);
      if (mine && mine->ranks != g.members) continue;
      Member& m = members[r];
      m.dump = it->second;
      for (const FrEntry& e : m.dump->entries) {
        if (e.pg_name == g.name && !e.is_p2p) m.by_seq[e.collective_seq_id].push_back(&e);
      }
    }
    if (members.empty()) continue;  // a group known only by name here

    // Last collective entered per member; a wrapped buffer without this
    // group's entries says nothing about it.
    std::map<int64_t, int64_t> last;
    for (const auto& [r, m] : members) {
      if (m.by_seq.empty() && m.dump->wrapped) {
        g.unknown.push_back(r);
        continue;
      }
      g.dumped.push_back(r);
      last[r] = m.by_seq.empty() ? 0 : m.by_seq.rbegin()->first;
    }
    for (int64_t r : g.unknown) members.erase(r);
    if (!last.empty()) {
      g.lowest_last_seq = g.highest_last_seq = last.begin()->second;
      for (const auto& [r, s] : last) {
        g.lowest_last_seq = std::min(g.lowest_last_seq, s);
        g.highest_last_seq = std::max(g.highest_last_seq, s);
      }
    }
    if (g.lowest_last_seq < g.highest_last_seq) {
      g.wavefront = g.lowest_last_seq + 1;
      g.wavefront_op = OpAt(members, *g.wavefront);
      for (const auto& [r, s] : last) {
        if (s < *g.wavefront) g.missing.push_back(r);
      }
    } else if (g.highest_last_seq > 0) {
      for (const auto& [r, m] : members) {
        const std::vector<const FrEntry*>& es = m.by_seq.rbegin()->second;
        bool done = std::all_of(es.begin(), es.end(),
                                [](const FrEntry* e) { return e->state == "completed"; });
        if (!done) g.not_completed.push_back(r);
      }
      if (!g.not_completed.empty()) {
        g.stalled_seq = g.highest_last_seq;
        g.stalled_op = OpAt(members, g.highest_last_seq);
      }
    }
    Mismatches(members, g);

    // Findings.
    auto finding = [&](FrFinding::Kind kind, int64_t rank, int64_t seq, std::string op,
                       std::string detail) {
      FrFinding f;
      f.kind = kind;
      f.rank = rank;
      f.group = g.name;
      f.group_desc = g.desc;
      f.seq = seq;
      f.op = std::move(op);
      f.detail = std::move(detail);
      if (auto it = members.find(rank); it != members.end()) {
        f.rank_source = it->second.dump->rank_source;
        f.source = it->second.dump->source;
      }
      out.findings.push_back(std::move(f));
    };
    std::string where = StrCat("process group ", g.name, g.desc.empty() ? "" : " (",
                                     g.desc, g.desc.empty() ? "" : ")");
    if (g.wavefront) {
      for (int64_t r : g.missing) {
        finding(FrFinding::Kind::kMissingRank, r, *g.wavefront, g.wavefront_op,
                StrCat("rank ", r, " never entered collective #", *g.wavefront, " (",
                             g.wavefront_op, ") of ", where, "; its last was #", last[r],
                             "; ranks reached up to #", g.highest_last_seq));
      }
    }
    for (int64_t r : g.no_dump) {
      finding(FrFinding::Kind::kNoDump, r, g.wavefront.value_or(g.highest_last_seq),
              g.wavefront ? g.wavefront_op : OpAt(members, g.highest_last_seq),
              StrCat("rank ", r, " of ", where, " left no Flight Recorder dump; ",
                           members.size(), " of ", g.members.size(), " members did"));
    }
    for (const FrMismatch& m : g.mismatches) {
      for (const FrMismatch::Odd& o : m.odd) {
        finding(FrFinding::Kind::kMismatch, o.rank, m.seq, OpAt(members, m.seq),
                StrCat("rank ", o.rank, " recorded ", m.field, " ", o.got,
                             " at collective #", m.seq, " of ", where, " where the others have ",
                             m.expected));
      }
    }
    if (g.stalled_seq) {
      for (int64_t r : g.not_completed) {
        finding(FrFinding::Kind::kStalled, r, *g.stalled_seq, g.stalled_op,
                StrCat("every dumped member of ", where, " entered collective #",
                             *g.stalled_seq, " (", g.stalled_op, "); it had not completed on rank ",
                             r, " (not completed on ", RanksText(g.not_completed), ")"));
      }
    }
  }
  for (auto& [key, g] : groups) {
    if (!g.dumped.empty() || !g.unknown.empty()) out.groups.push_back(std::move(g));
  }
  return out;
}

}  // namespace faultline::flightrec
