// Which GPUs the logs show to have no NVLink, so that a report of their
// links going down is no hardware evidence. DCGM reports every NvLink link
// of a GPU with no NVLink hardware (a PCIe board with no bridge) as
// 'currently down' (its health watch and diag's PCIe test: DCGM#49,
// NVSentinel#1481), while NVML answers NOT_SUPPORTED for such a GPU's links
// and SUCCESS for a GPU whose links exist, up or down. A link-down verdict
// needs a GPU that has links; the logs say which GPUs have them in the
// words of the tools that print the topology (the context signals of the
// rule that reads the link-down line):
//
//   dcgmi nvlink --link-status  `gpuId N:` over its states line; a line of
//                               only `_` (Not Supported) is a GPU with no
//                               links, any U, D or X one with links
//   nvidia-smi nvlink -s        `GPU N: <name> (UUID: ...)` over its
//                               `Link K: <speed>` / `Link K: <inactive>`
//                               lines: a GPU with links
//   nvidia-smi topo -m          a GPU row with an NV# cell: a GPU with links;
//                               a matrix of two or more GPUs with no NV# cell
//                               anywhere: a host with no NVLink
//   nvidia-smi -L, its table,   a PCIe board's name (`A100-PCIE-40GB`,
//   nvidia-smi -q               `A100 80GB PCIe`): no links unless a bridge
//                               shows in the lines above
//
// What the logs show of one GPU's links wins over what they show of its
// host, and links shown on a host win over a topology matrix or a board
// name that says none (a matrix prints links that went down as PCIe paths,
// and a PCIe board may carry a bridge).
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "correlate/state.h"
#include "util/strings.h"

namespace faultline::internal {
namespace {

// What the logs show of one host's GPUs' NVLink.
struct HostLinks {
  std::set<int64_t> with;       // GPUs shown to have links
  std::set<int64_t> without;    // GPUs whose links DCGM says are not supported
  std::set<int64_t> topo_none;  // GPUs of a topology matrix with no NV# cell
  std::set<int64_t> pcie;       // GPUs named as PCIe boards
  bool pcie_host = false;       // a PCIe board named without its index (nvidia-smi -q)
  bool any_with() const { return !with.empty(); }
};

bool ParseIndex(const std::string* s, int64_t* out) { return s && ParseInt64(*s, out) && *out >= 0; }

// NVIDIA names the PCIe form factor of its data-center boards in the
// product name (`Tesla V100-PCIE-16GB`, `NVIDIA A100 80GB PCIe`, `NVIDIA
// H100 PCIe`); nvidia-smi's table cuts long names (`Tesla V100S-PCI...`).
bool PcieBoard(std::string_view product) {
  std::string up(product);
  for (char& c : up) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return up.find("PCIE") != std::string::npos || up.ends_with("-PCI...");
}

// Whether a topology row's cells (after the GPU's name) hold an NV# cell.
bool HasNvCell(std::string_view cells) {
  size_t i = 0;
  while (i < cells.size()) {
    while (i < cells.size() && (cells[i] == ' ' || cells[i] == '\t')) ++i;
    size_t j = i;
    while (j < cells.size() && cells[j] != ' ' && cells[j] != '\t') ++j;
    std::string_view cell = cells.substr(i, j - i);
    if (cell.size() > 2 && cell.starts_with("NV") &&
        std::all_of(cell.begin() + 2, cell.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return true;
    }
    i = j;
  }
  return false;
}

std::map<std::string, HostLinks> ReadTopology(const CorrelationState& st) {
  std::map<std::string, HostLinks> hosts;
  // Per source, in line order: the facts that pair a header with the lines
  // under it.
  std::map<uint32_t, std::vector<size_t>> by_source;
  for (size_t i = 0; i < st.evs.size(); ++i) {
    const Evidence& ev = st.evs[i];
    if (ev.Field("topo_gpu") || ev.Field("link_status_gpu") || ev.Field("links_unsupported") ||
        ev.Field("smi_gpu") || ev.Field("nvlink_link") || ev.Field("gpu_product")) {
      by_source[ev.source].push_back(i);
    }
  }
  for (auto& [source, idxs] : by_source) {
    std::sort(idxs.begin(), idxs.end(), [&](size_t a, size_t b) { return st.evs[a].line < st.evs[b].line; });
    std::map<uint64_t, std::pair<int64_t, const std::string*>> status_headers;  // line -> gpuId, host
    std::set<uint64_t> unsupported_lines;
    std::map<int64_t, bool> topo_rows;               // GPU -> row holds an NV# cell
    const std::string* topo_host = nullptr;
    int64_t smi_gpu = -1;                            // the nvidia-smi GPU header above
    uint64_t smi_line = 0;
    for (size_t i : idxs) {
      const Evidence& ev = st.evs[i];
      HostLinks& h = hosts[ev.host];
      int64_t g = -1;
      if (ParseIndex(ev.Field("topo_gpu"), &g)) {
        const std::string* cells = ev.Field("topo_cells");
        topo_rows[g] = cells && HasNvCell(*cells);
        topo_host = &ev.host;
      }
      if (ParseIndex(ev.Field("link_status_gpu"), &g)) status_headers[ev.line] = {g, &ev.host};
      if (ev.Field("links_unsupported")) unsupported_lines.insert(ev.line);
      if (ParseIndex(ev.Field("smi_gpu"), &g)) {
        smi_gpu = g;
        smi_line = ev.line;
        const std::string* product = ev.Field("gpu_product");
        if (product && PcieBoard(*product)) h.pcie.insert(g);
      } else if (const std::string* product = ev.Field("gpu_product"); product && PcieBoard(*product)) {
        h.pcie_host = true;
      }
      // nvidia-smi nvlink -s prints each GPU's links under its header.
      if (ev.Field("nvlink_link") && smi_gpu >= 0 && ev.line > smi_line && ev.line - smi_line <= 64) {
        h.with.insert(smi_gpu);
      }
    }
    // dcgmi prints each GPU's states on the line under its `gpuId N:`.
    for (const auto& [line, header] : status_headers) {
      HostLinks& h = hosts[*header.second];
      (unsupported_lines.contains(line + 1) ? h.without : h.with).insert(header.first);
    }
    if (topo_host) {
      HostLinks& h = hosts[*topo_host];
      for (const auto& [g, nv] : topo_rows) {
        if (nv) h.with.insert(g);
        // One GPU's row says nothing of NVLink: it has no peer to link to.
        else if (topo_rows.size() >= 2) h.topo_none.insert(g);
      }
    }
  }
  return hosts;
}

// Whether GPU `g` (-1: the line names none) of host `h` has no links.
bool Linkless(const HostLinks& h, int64_t g) {
  if (g >= 0) {
    if (h.with.contains(g)) return false;
    if (h.without.contains(g)) return true;
    if (h.any_with()) return false;
    return h.topo_none.contains(g) || h.pcie.contains(g) || h.pcie_host;
  }
  if (h.any_with()) return false;
  return !h.without.empty() || !h.topo_none.empty() || !h.pcie.empty() || h.pcie_host;
}

}  // namespace

std::vector<bool> LinkDownOnLinklessGpu(const CorrelationState& st) {
  std::vector<bool> out(st.evs.size(), false);
  bool any = false;
  for (const Evidence& ev : st.evs) {
    if (ev.Field("link_down")) {
      any = true;
      break;
    }
  }
  if (!any) return out;
  const std::map<std::string, HostLinks> hosts = ReadTopology(st);
  for (size_t i = 0; i < st.evs.size(); ++i) {
    const Evidence& ev = st.evs[i];
    if (!ev.Field("link_down")) continue;
    auto it = hosts.find(ev.host);
    if (it == hosts.end()) continue;
    int64_t g = -1;
    if (!ParseIndex(ev.Field("nvlink_gpu"), &g)) g = -1;
    out[i] = Linkless(it->second, g);
  }
  return out;
}

}  // namespace faultline::internal
