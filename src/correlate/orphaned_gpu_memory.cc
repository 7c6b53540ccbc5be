// Orphaned GPU memory: an nvidia-smi table in a log where nothing failed,
// with a GPU's memory well above an idle GPU's while the table's Processes
// section names no process. NVML lists every compute context it can see;
// memory held with none listed belongs to a process nvidia-smi cannot name:
// a leftover of an interrupted or killed job (an orphaned worker, a process
// whose teardown is stuck in the driver) or, inside a container, a process
// in another PID namespace. The table's lines are context facts of the rule
// that carries the fields below (rulesets/ops/zombie-gpu-process.json):
//
//   smi_mem_used / smi_mem_total   a GPU row's `<used>MiB / <total>MiB`
//   smi_procs                      the `| Processes:` header
//   smi_rule                       the `|====|` rule under its column header
//   smi_border                     a table's closing `+----+`
//   smi_none                       `No running processes found`
//
// Every driver's table (384/410-era columns, 450+ with `GI CI` ids under a
// two-line column header, 525+ and 555+ widths) has that shape. The section
// is empty when the line under its rule is the closing border, or `No running
// processes found` over it; a section whose rows run on, or that the log cuts
// after its rule, or before it (a posted table that stops on the section's
// column header), is no evidence.
// Progress or a served request after the table in its file is a job that
// runs on the GPU (a container's nvidia-smi lists nothing while its own
// training holds the memory): no verdict.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "correlate/state.h"
#include "util/strings.h"

namespace faultline::internal {

namespace {

// An idle GPU holds its driver's and display's reservations: tens to a few
// hundred MiB. Memory above both bars is an application's.
constexpr int64_t kHeldMiB = 2048;
constexpr int64_t kHeldShare = 20;  // and over 1/20 of the board's memory

bool ParseMiB(const std::string* s, int64_t* v) {
  if (!s || s->empty() || s->size() > 9) return false;
  int64_t n = 0;
  for (char c : *s) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + (c - '0');
  }
  *v = n;
  return true;
}

struct TableLine {
  uint64_t line;
  size_t idx;
};

// The section under the header at `h`: the line its rows end on when it
// lists none, nullopt when it lists a process or cannot be read whole.
std::optional<uint64_t> EmptySectionEnd(const std::map<uint64_t, size_t>& at, const Evidence& header,
                                        const CorrelationState& st) {
  auto has = [&](uint64_t line, const char* field) {
    auto it = at.find(line);
    return it != at.end() && st.evs[it->second].Field(field) != nullptr;
  };
  const uint64_t h = header.line;
  // The rule comes after one column header line (before 450) or two.
  for (uint64_t r = h + 2; r <= h + 3; ++r) {
    if (!has(r, "smi_rule")) continue;
    if (has(r + 1, "smi_border")) return r + 1;
    if (has(r + 1, "smi_none") && has(r + 2, "smi_border")) return r + 2;
    return std::nullopt;
  }
  // No rule under the column header (a file that stops there included): the section
  // is cut, and a cut section shows neither a process nor its absence.
  return std::nullopt;
}

bool RunsAfter(const CorrelationState& st, uint32_t source, uint64_t line) {
  for (const auto& [rank, idxs] : st.index.progress) {
    for (size_t i : idxs) {
      if (st.evs[i].source == source && st.evs[i].line > line) return true;
    }
  }
  auto s = st.index.last_served.find(source);
  return s != st.index.last_served.end() && st.evs[s->second].line > line;
}

}  // namespace

void AddOrphanedGpuMemory(CorrelationState& st) {
  if (!st.diag.incidents.empty()) return;
  // source -> line -> evidence of the table's facts
  std::map<uint32_t, std::map<uint64_t, size_t>> tables;
  for (size_t i = 0; i < st.evs.size(); ++i) {
    const Evidence& ev = st.evs[i];
    if (ev.Field("smi_mem_used") || ev.Field("smi_procs") || ev.Field("smi_rule") ||
        ev.Field("smi_border") || ev.Field("smi_none")) {
      tables[ev.source].emplace(ev.line, i);
    }
  }
  for (const auto& [source, at] : tables) {
    uint64_t after_previous = 0;  // the line the previous section ended on
    for (const auto& [line, idx] : at) {
      const Evidence& header = st.evs[idx];
      if (!header.Field("smi_procs")) continue;
      std::optional<uint64_t> end = EmptySectionEnd(at, header, st);
      // The GPU rows of this table: above its header, below the section before.
      const Evidence* held = nullptr;
      int64_t held_used = 0, held_total = 0;
      for (auto it = at.lower_bound(std::max(after_previous + 1, line > 64 ? line - 64 : 1));
           it != at.end() && it->first < line; ++it) {
        const Evidence& row = st.evs[it->second];
        int64_t used = 0, total = 0;
        if (!ParseMiB(row.Field("smi_mem_used"), &used) || !ParseMiB(row.Field("smi_mem_total"), &total)) continue;
        if (used >= kHeldMiB && used * kHeldShare >= total && used > held_used) {
          held = &row;
          held_used = used;
          held_total = total;
        }
      }
      after_previous = end.value_or(line);
      if (!end || !held || RunsAfter(st, source, *end)) continue;
      int r = static_cast<int>(held->rule);
      const fb::Rule& rule = *st.rs.rule(r);
      Incident inc;
      inc.rule = static_cast<uint32_t>(r);
      inc.rank = held->rank;
      inc.host = held->host;
      inc.time_us = held->time_us;
      inc.inferred = true;
      inc.confidence = 0.5;
      inc.initiating.push_back(*held);
      inc.timeline = inc.initiating;
      inc.explanation = StrCat(
          "nvidia-smi shows ", held_used, " MiB of ", held_total,
          " MiB in use on a GPU while its Processes section names no process, and nothing in the "
          "logs failed: the memory is held by a process nvidia-smi cannot see, a leftover of an "
          "interrupted or killed job (an orphaned worker, a process stuck in the driver) or a "
          "process in another container's PID namespace.");
      std::map<std::string, std::string> vars = TemplateVars(inc, inc.time_us, st.diag.job_end_us);
      FillFixAndVerify(rule, vars, inc);
      inc.missing_facts.push_back(
          "which process holds the memory: inside a container nvidia-smi cannot see other PID "
          "namespaces' processes; run nvidia-smi --query-compute-apps=pid,used_memory --format=csv "
          "on the host, or fuser -v /dev/nvidia*");
      if (rule.missing_fact() && rule.missing_fact()->size()) {
        inc.missing_facts.push_back(FillTemplate(rule.missing_fact()->str(), vars));
      }
      st.diag.incidents.push_back(std::move(inc));
      return;
    }
  }
}

}  // namespace faultline::internal
