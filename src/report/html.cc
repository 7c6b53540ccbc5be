// The HTML page is written by hand, like the JSON: a fixed skeleton, the
// report's values escaped into it, and a timeline computed here (binned, so
// its size depends on ranks x bins, not on the evidence count).
#include "report/html.h"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "correlate/action.h"
#include "report/report.h"
#include "timeparse/timeparse.h"
#include "util/fl_status.h"
#include "util/strings.h"
#include "util/utf8.h"

namespace faultline {
namespace {

// Rows (ranks plus host headings) the per-rank timeline may have; more, and
// the timeline has one row per host instead.
constexpr size_t kMaxRankRows = 80;
constexpr int kBins = 240;           // time bins across the timeline
constexpr double kPlotWidth = 1000;  // SVG user units across the time range
constexpr int kRankRowPx = 16;
constexpr int kHostRowPx = 12;
constexpr size_t kMaxLinesShown = 20;     // initiating lines per incident
constexpr size_t kMaxCellTitles = 4000;   // hover text per cell up to this many cells
constexpr size_t kMaxSecondaryMarks = 12;  // other incidents marked on the timeline
constexpr size_t kMaxTextBytes = 600;      // sample lines in tables

// Steps between time ticks, seconds; the smallest that gives at most
// ~8 ticks per screen width is used. The script holds the same list.
constexpr double kTickSteps[] = {0.001, 0.002, 0.005, 0.01, 0.02,  0.05,  0.1,    0.2,
                                 0.5,   1,     2,     5,    10,    15,    30,     60,
                                 120,   300,   600,   900,  1800,  3600,  7200,   10800,
                                 21600, 43200, 86400, 172800, 604800, 2592000};

// Zoom for the timeline: the plot's width grows (its SVG stretches only
// horizontally; text lives in HTML outside it) and the ticks are redrawn
// for the new width. The page reads the same without it. No report data is
// ever written into this script: it reads numbers from data- attributes,
// and the page's Content-Security-Policy admits this script by its hash
// only.
constexpr std::string_view kScript = R"JS(
(function () {
  "use strict";
  var STEPS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60,
               120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800,
               604800, 2592000];
  function pad(n, w) { n = String(n); while (n.length < (w || 2)) n = "0" + n; return n; }
  function label(us, step, multiDay) {
    var d = new Date(Math.floor(us / 1000));
    var md = pad(d.getUTCMonth() + 1) + "-" + pad(d.getUTCDate());
    var hm = pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes());
    if (step >= 86400) return md;
    if (multiDay) return md + " " + hm;
    if (step >= 60) return hm;
    var s = hm + ":" + pad(d.getUTCSeconds());
    if (step >= 1) return s;
    var digits = step >= 0.1 ? 1 : step >= 0.01 ? 2 : 3;
    var frac = Math.floor((((us % 1e6) + 1e6) % 1e6) / Math.pow(10, 6 - digits));
    return s + "." + pad(frac, digits);
  }
  function ticks(box, t0, t1, zoom) {
    var span = (t1 - t0) / 1e6, step = STEPS[STEPS.length - 1];
    for (var i = 0; i < STEPS.length; i++) {
      if (span / STEPS[i] <= 8 * zoom) { step = STEPS[i]; break; }
    }
    var su = Math.round(step * 1e6), multi = span >= 86400;
    box.textContent = "";
    for (var t = Math.ceil(t0 / su) * su; t <= t1; t += su) {
      var tk = document.createElement("div");
      tk.className = "tk";
      tk.style.left = ((t - t0) / (t1 - t0) * 100) + "%";
      var sp = document.createElement("span");
      sp.textContent = label(t, step, multi);
      tk.appendChild(sp);
      box.appendChild(tk);
    }
  }
  var tls = document.querySelectorAll(".tl[data-t0]");
  Array.prototype.forEach.call(tls, function (tl) {
    var plot = tl.querySelector(".tl-plot"), sc = tl.querySelector(".tl-scroll");
    var box = tl.querySelector(".tl-ticks"), bar = tl.querySelector(".tl-zoom");
    var t0 = +tl.getAttribute("data-t0"), t1 = +tl.getAttribute("data-t1");
    var ti = tl.getAttribute("data-tinit"), zoom = 1;
    function set(z, frac) {
      z = Math.max(1, Math.min(1024, z));
      if (frac === undefined) frac = (sc.scrollLeft + sc.clientWidth / 2) / sc.scrollWidth;
      zoom = z;
      plot.style.width = (z * 100) + "%";
      ticks(box, t0, t1, z);
      sc.scrollLeft = frac * sc.scrollWidth - sc.clientWidth / 2;
      bar.querySelector("output").textContent = z + "\u00d7";
    }
    bar.hidden = false;
    bar.addEventListener("click", function (e) {
      var b = e.target.closest("button");
      if (!b) return;
      var a = b.getAttribute("data-z");
      if (a === "in") set(zoom * 2);
      else if (a === "out") set(zoom / 2);
      else if (a === "fit") set(1, 0.5);
      else if (a === "init" && ti !== null) set(Math.max(zoom, 32), (+ti - t0) / (t1 - t0));
    });
    // A link can open the page zoomed: #zoom=init (on the initiating
    // event) or #zoom=N.
    var m = /^#zoom=(init|[0-9]+)$/.exec(location.hash);
    if (m && m[1] === "init" && ti !== null) set(32, (+ti - t0) / (t1 - t0));
    else if (m && m[1] !== "init") set(+m[1]);
    sc.addEventListener("wheel", function (e) {
      if (!e.ctrlKey && !e.metaKey) return;
      e.preventDefault();
      var r = sc.getBoundingClientRect();
      set(zoom * (e.deltaY < 0 ? 2 : 0.5), (sc.scrollLeft + e.clientX - r.left) / sc.scrollWidth);
    }, { passive: false });
  });
})();
)JS";

constexpr std::string_view kStyle = R"CSS(
:root{color-scheme:light dark;--bg:#ffffff;--fg:#1f2328;--muted:#59636e;--card:#f6f8fa;
--line:#d1d9e0;--code:#eff2f5;--init:#cf222e;--coll:#bf8700;--sec:#8250df;--misc:#0969da;
--prog:#57606a;--ctx:#8c959f;--band:rgba(191,135,0,.14);--rowinit:rgba(207,34,46,.12);--head:rgba(129,139,152,.12);
--ok:#1a7f37}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;
--card:#151b23;--line:#3d444d;--code:#1f2630;--init:#ff7b72;--coll:#e3b341;--sec:#bc8cff;
--misc:#4493f8;--prog:#9198a1;--ctx:#6e7681;--band:rgba(227,179,65,.15);--rowinit:rgba(255,123,114,.16);
--head:rgba(110,118,129,.16);--ok:#3fb950}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1240px;margin:0 auto;padding:18px 22px 40px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:18px;margin:0 0 6px}
h3{font-size:13px;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);margin:16px 0 6px}
section{margin:18px 0}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,"SF Mono",Menlo,Consolas,"Liberation Mono",monospace;font-size:12.5px}
pre{background:var(--code);padding:8px 10px;border-radius:6px;white-space:pre-wrap;overflow-wrap:anywhere;margin:0}
.muted{color:var(--muted)}.small{font-size:12px}
.sum{color:var(--muted);margin:0}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:14px 16px}
.primary{border-left:5px solid var(--init)}
.kicker{font-size:12px;font-weight:600;text-transform:uppercase;letter-spacing:.06em;color:var(--init)}
.noinc .kicker{color:var(--ok)}
.tags{display:flex;flex-wrap:wrap;gap:6px 14px;align-items:center;margin:4px 0 10px;color:var(--muted)}
.tag{border:1px solid var(--line);border-radius:999px;padding:0 8px;background:var(--bg)}
.conf{display:inline-flex;align-items:center;gap:6px}
.conf i{display:inline-block;width:90px;height:7px;border-radius:4px;background:var(--line);overflow:hidden}
.conf i b{display:block;height:100%;background:var(--init)}
dl.who{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:8px;margin:8px 0}
dl.who div{background:var(--bg);border:1px solid var(--line);border-radius:6px;padding:6px 10px}
dl.who dt{font-size:11px;text-transform:uppercase;letter-spacing:.05em;color:var(--muted)}
dl.who dd{margin:0;font-weight:600;overflow-wrap:anywhere}
.why{margin:8px 0}
.action{margin:8px 0;padding:6px 10px;border-left:4px solid #888}
.action-stop{border-color:#c0392b}.action-restart_excluding{border-color:#d68910}.action-restart{border-color:#27ae60}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{text-align:left;vertical-align:top;padding:4px 8px;border-bottom:1px solid var(--line)}
th{font-size:11px;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);font-weight:600}
td.ln{white-space:pre-wrap;overflow-wrap:anywhere;word-break:break-word}
td.nw{white-space:nowrap}
table.attempts tr.current td{font-weight:600}
.fv{display:grid;grid-template-columns:1fr 1fr;gap:14px}
@media (max-width:800px){.fv{grid-template-columns:1fr}}
ul.facts{margin:4px 0;padding-left:20px}
details.inc{margin:10px 0}details.inc>summary{cursor:pointer;font-weight:600}
details.inc>.card{margin-top:8px}
.tl{border:1px solid var(--line);border-radius:8px;background:var(--card);padding:8px}
.tl-bar{display:flex;flex-wrap:wrap;justify-content:space-between;align-items:center;gap:8px;margin-bottom:6px}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;margin:0;padding:0;list-style:none;font-size:12px;color:var(--muted)}
.legend i{display:inline-block;width:12px;height:10px;margin-right:5px;vertical-align:-1px;border-radius:2px}
.sw-init{background:var(--init)}.sw-coll{background:var(--coll)}.sw-sec{background:var(--sec)}
.sw-misc{background:var(--misc)}.sw-ctx{background:var(--ctx);height:5px!important;vertical-align:1px!important}.sw-prog{background:var(--prog);height:3px!important}
.sw-band{background:var(--band);border:1px solid var(--coll)}
.tl-zoom button{font:inherit;font-size:12px;padding:1px 8px;border:1px solid var(--line);border-radius:5px;
background:var(--bg);color:var(--fg);cursor:pointer}
.tl-zoom output{display:inline-block;min-width:3.5em;text-align:center;font-size:12px;color:var(--muted)}
.tl-body{display:flex;max-height:78vh;overflow-y:auto;border-top:1px solid var(--line)}
.tl-labels{flex:0 0 auto;width:13em;padding-top:22px;border-right:1px solid var(--line)}
.rl{white-space:nowrap;overflow:hidden;text-overflow:ellipsis;padding:0 6px 0 4px}
.rank-mode .rl{height:16px;line-height:16px;font-size:11.5px}
.host-mode .rl{height:12px;line-height:12px;font-size:10px}
.rl.k-head{font-weight:600;background:var(--head)}
.rl.k-rank{padding-left:16px}
.rl.init{color:var(--init);font-weight:700;background:var(--rowinit)}
.rl.suspect{color:var(--init)}
.tl-scroll{flex:1 1 auto;min-width:0;overflow-x:auto;overflow-y:hidden}
.tl-plot{position:relative;width:100%;padding-top:22px}
.tl-ticks{position:absolute;left:0;right:0;top:0;bottom:0;pointer-events:none}
.tk{position:absolute;top:0;bottom:0;border-left:1px solid var(--line)}
.tk span{position:absolute;top:3px;left:3px;font-size:11px;color:var(--muted);white-space:nowrap}
svg.tl-svg{display:block;width:100%;position:relative}
.c-init{fill:var(--init)}.c-coll{fill:var(--coll)}.c-sec{fill:var(--sec)}.c-misc{fill:var(--misc)}.c-ctx{fill:var(--ctx)}
.r-head{fill:var(--head)}.r-init{fill:var(--rowinit)}.band{fill:var(--band)}
.prog{stroke:var(--prog);stroke-width:2}.stop{stroke:var(--prog);stroke-width:2}
.m-init{stroke:var(--init);stroke-width:2}.m-sec{stroke:var(--sec);stroke-width:1.5;stroke-dasharray:4 3}
.jw{stroke:var(--muted);stroke-width:1;stroke-dasharray:2 3}
.cc{color:var(--muted)}
footer{margin-top:28px;color:var(--muted);font-size:12px}
)CSS";

std::string Esc(std::string_view s) {
  std::string out;
  AppendHtmlText(out, s);
  return out;
}

std::string_view Str(const flatbuffers::String* s) { return s ? s->string_view() : std::string_view(); }

// s cut to at most n bytes at a character boundary, with an ellipsis.
std::string Cut(std::string_view s, size_t n) {
  if (s.size() <= n) return std::string(s);
  size_t k = n;
  while (k > 0 && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80) --k;
  return StrCat(s.substr(0, k), "\xE2\x80\xA6");
}

std::string Thousands(uint64_t v) {
  std::string d = StrCat(v), out;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i && (d.size() - i) % 3 == 0) out += ',';
    out += d[i];
  }
  return out;
}

std::string Bytes(uint64_t b) {
  char buf[32];
  if (b < 1024) return StrCat(b, " B");
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = -1;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    ++u;
  }
  std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, std::isfinite(v) ? v : 0.0);
  return buf;
}

std::string TimeText(int64_t us) { return us == kNoTime ? std::string("unknown") : FormatRfc3339(us); }

struct Utc {
  int mon = 0, day = 0, hour = 0, min = 0, sec = 0;
  int64_t frac_us = 0;
};

Utc SplitUtc(int64_t us) {
  int64_t s = us / 1'000'000, f = us % 1'000'000;
  if (f < 0) {
    f += 1'000'000;
    --s;
  }
  std::time_t tt = static_cast<std::time_t>(s);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  return {tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, f};
}

// As the script's label(): the same ticks with or without script.
std::string TickLabel(int64_t us, double step, bool multi_day) {
  Utc u = SplitUtc(us);
  char buf[48];
  if (step >= 86400) {
    std::snprintf(buf, sizeof buf, "%02d-%02d", u.mon, u.day);
  } else if (multi_day) {
    std::snprintf(buf, sizeof buf, "%02d-%02d %02d:%02d", u.mon, u.day, u.hour, u.min);
  } else if (step >= 60) {
    std::snprintf(buf, sizeof buf, "%02d:%02d", u.hour, u.min);
  } else if (step >= 1) {
    std::snprintf(buf, sizeof buf, "%02d:%02d:%02d", u.hour, u.min, u.sec);
  } else {
    int digits = step >= 0.1 ? 1 : step >= 0.01 ? 2 : 3;
    int64_t div = digits == 1 ? 100000 : digits == 2 ? 10000 : 1000;
    std::snprintf(buf, sizeof buf, "%02d:%02d:%02d.%0*lld", u.hour, u.min, u.sec, digits,
                  static_cast<long long>(u.frac_us / div));
  }
  return buf;
}

// "03:12:05" within a day's span, else the full time.
std::string ShortTime(int64_t us) {
  if (us == kNoTime) return "?";
  Utc u = SplitUtc(us);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02d:%02d:%02d", u.hour, u.min, u.sec);
  return buf;
}

// Host names in natural order: node2 before node10.
bool NaturalLess(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t i2 = i, j2 = j;
      while (i2 < a.size() && digit(a[i2])) ++i2;
      while (j2 < b.size() && digit(b[j2])) ++j2;
      std::string_view na(a.data() + i, i2 - i), nb(b.data() + j, j2 - j);
      while (na.size() > 1 && na[0] == '0') na.remove_prefix(1);
      while (nb.size() > 1 && nb[0] == '0') nb.remove_prefix(1);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = i2;
      j = j2;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  if ((a.size() - i) != (b.size() - j)) return a.size() - i < b.size() - j;
  return a < b;
}

uint32_t DecodeUtf8(std::string_view s) {
  auto b = [&](size_t k) { return static_cast<uint32_t>(static_cast<unsigned char>(s[k])); };
  switch (s.size()) {
    case 1: return b(0);
    case 2: return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
    case 3: return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    default: return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
  }
}

bool IsBidiControl(uint32_t cp) {
  return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

// base64 of the SHA-256 of the script, for the page's CSP.
std::string ScriptHash() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_Digest(kScript.data(), kScript.size(), md, &n, EVP_sha256(), nullptr) != 1) return "";
  unsigned char b64[4 * ((EVP_MAX_MD_SIZE + 2) / 3) + 1];
  int len = EVP_EncodeBlock(b64, md, static_cast<int>(n));
  return std::string(reinterpret_cast<const char*>(b64), static_cast<size_t>(len));
}

// ---- the timeline ---------------------------------------------------------

// What a line is to the primary incident, in drawing priority: a cell
// takes the colour of its first class present. Context, progress and metric
// lines (a training loop's loss lines on every rank) are drawn faint and
// thin, under the rest.
enum Class { kInit = 0, kSec = 1, kColl = 2, kMisc = 3, kCtx = 4, kClasses = 5 };
constexpr const char* kClassName[] = {"init", "sec", "coll", "misc", "ctx"};

struct Cell {
  std::array<uint32_t, kClasses> n{};
  std::map<uint32_t, uint32_t> rules;  // rule -> lines
  uint32_t total() const { return n[0] + n[1] + n[2] + n[3] + n[4]; }
  int cls() const {
    for (int k = 0; k < kClasses; ++k) {
      if (n[k]) return k;
    }
    return kCtx;
  }
};

struct Row {
  enum Kind { kHead, kRank, kHostAll } kind = kHead;
  std::string host;  // "" for the rows of what names no host
  int64_t rank = -1;
  std::vector<int64_t> ranks;  // kHead/kHostAll: the ranks on the host
  int64_t prog_first = kNoTime, prog_last = kNoTime;
  int64_t stop_first = kNoTime, stop_rank = -1;  // earliest last progress
  bool initiating = false, suspect = false;
  std::map<int, Cell> cells;
};

struct Timeline {
  bool host_mode = false;
  int row_px = kRankRowPx;
  std::vector<Row> rows;
  int64_t t0 = kNoTime, t1 = kNoTime;
  uint64_t drawn = 0, outside = 0, untimed = 0;
  size_t ranks = 0, hosts = 0;
};

std::string RowName(const Row& r) {
  if (r.kind == Row::kRank) return StrCat("rank ", r.rank);
  return r.host.empty() ? std::string("(no host)") : r.host;
}

using EvKey = std::pair<uint32_t, uint64_t>;  // source, offset

Timeline BuildTimeline(const Ruleset& rs, const ScanResult& scan, const Diagnosis& d) {
  Timeline tl;
  const Incident* primary = d.incidents.empty() ? nullptr : &d.incidents[0];
  std::set<EvKey> init_keys, sec_keys;
  std::set<uint32_t> coll_rules;
  if (primary) {
    for (const Evidence& ev : primary->initiating) init_keys.insert({ev.source, ev.offset});
    for (const Collateral& c : primary->collateral) coll_rules.insert(c.rule);
  }
  for (size_t i = 1; i < d.incidents.size(); ++i) {
    for (const Evidence& ev : d.incidents[i].initiating) sec_keys.insert({ev.source, ev.offset});
  }

  // Ranks and their hosts: from progress summaries, then evidence.
  std::map<int64_t, std::string> rank_host;
  for (const auto& [r, sum] : scan.ranks) {
    if (r >= 0) rank_host[r] = sum.host;
  }
  std::set<std::string> host_set;
  for (const Evidence& ev : scan.evidence) {
    if (ev.rank >= 0) {
      std::string& h = rank_host[ev.rank];
      if (h.empty() && !ev.host.empty()) h = ev.host;
    }
    if (!ev.host.empty()) host_set.insert(ev.host);
  }
  for (const Incident& inc : d.incidents) {
    if (inc.rank >= 0) {
      std::string& h = rank_host[inc.rank];
      if (h.empty()) h = inc.host;
    }
    if (!inc.host.empty()) host_set.insert(inc.host);
  }
  std::map<std::string, std::vector<int64_t>> by_host;  // ranks per host
  for (const auto& [r, h] : rank_host) {
    by_host[h].push_back(r);
    if (!h.empty()) host_set.insert(h);
  }
  bool unattributed = false;
  for (const Evidence& ev : scan.evidence) unattributed |= ev.rank < 0 && ev.host.empty();
  std::vector<std::string> hosts(host_set.begin(), host_set.end());
  std::sort(hosts.begin(), hosts.end(), NaturalLess);
  if (by_host.count("") || unattributed) hosts.push_back("");
  tl.ranks = rank_host.size();
  tl.hosts = host_set.size();
  tl.host_mode = rank_host.size() + hosts.size() > kMaxRankRows;
  tl.row_px = tl.host_mode ? kHostRowPx : kRankRowPx;

  std::map<std::string, size_t> host_row;
  std::map<int64_t, size_t> rank_row;
  for (const std::string& h : hosts) {
    host_row[h] = tl.rows.size();
    Row head;
    head.kind = tl.host_mode ? Row::kHostAll : Row::kHead;
    head.host = h;
    auto it = by_host.find(h);
    if (it != by_host.end()) head.ranks = it->second;
    tl.rows.push_back(head);
    if (tl.host_mode) {
      for (int64_t r : head.ranks) rank_row[r] = host_row[h];
      continue;
    }
    for (int64_t r : head.ranks) {
      rank_row[r] = tl.rows.size();
      Row row;
      row.kind = Row::kRank;
      row.host = h;
      row.rank = r;
      tl.rows.push_back(row);
    }
  }
  auto row_of = [&](int64_t rank, const std::string& host) -> Row* {
    if (rank >= 0) {
      auto it = rank_row.find(rank);
      if (it != rank_row.end()) return &tl.rows[it->second];
    }
    auto it = host_row.find(host);
    return it == host_row.end() ? nullptr : &tl.rows[it->second];
  };

  // Progress spans (already in aligned time).
  for (const auto& [r, sum] : scan.ranks) {
    Row* row = row_of(r, sum.host);
    if (!row || sum.first_progress_us == kNoTime) continue;
    row->prog_first = row->prog_first == kNoTime ? sum.first_progress_us
                                                 : std::min(row->prog_first, sum.first_progress_us);
    row->prog_last = row->prog_last == kNoTime ? sum.last_progress_us
                                               : std::max(row->prog_last, sum.last_progress_us);
    if (row->stop_first == kNoTime || sum.last_progress_us < row->stop_first) {
      row->stop_first = sum.last_progress_us;
      row->stop_rank = r;
    }
  }
  if (primary) {
    if (Row* row = row_of(primary->rank, primary->host)) {
      (primary->inferred ? row->suspect : row->initiating) = true;
    }
    for (int64_t s : primary->suspects) {
      if (Row* row = row_of(s, "")) row->suspect = true;
    }
  }

  // The time range: the job window where it is known (stale lines far
  // outside it would squeeze the job into a sliver), widened to what the
  // diagnosis names.
  auto widen = [&](int64_t t) {
    if (t == kNoTime) return;
    tl.t0 = tl.t0 == kNoTime ? t : std::min(tl.t0, t);
    tl.t1 = tl.t1 == kNoTime ? t : std::max(tl.t1, t);
  };
  auto in_window = [&](int64_t t) {
    return (d.job_start_us == kNoTime || t >= d.job_start_us) &&
           (d.job_end_us == kNoTime || t <= d.job_end_us);
  };
  widen(d.job_start_us);
  widen(d.job_end_us);
  for (const Incident& inc : d.incidents) {
    widen(inc.time_us);
    for (const Collateral& c : inc.collateral) {
      widen(c.first_time_us);
      widen(c.last_time_us);
    }
  }
  for (const Row& row : tl.rows) {
    widen(row.prog_first);
    widen(row.prog_last);
  }
  for (const Evidence& ev : scan.evidence) {
    if (ev.time_us != kNoTime && in_window(ev.time_us)) widen(ev.time_us);
  }
  if (tl.t0 == kNoTime) return tl;
  int64_t span = tl.t1 - tl.t0;
  if (span <= 0) span = 60'000'000;
  int64_t pad = std::max<int64_t>(span / 50, 1'000'000);
  tl.t0 -= pad;
  tl.t1 += pad;

  const double width = static_cast<double>(tl.t1 - tl.t0);
  for (const Evidence& ev : scan.evidence) {
    if (ev.time_us == kNoTime) {
      ++tl.untimed;
      continue;
    }
    if (ev.time_us < tl.t0 || ev.time_us > tl.t1) {
      ++tl.outside;
      continue;
    }
    Row* row = row_of(ev.rank, ev.host);
    if (!row) row = row_of(-1, "");
    if (!row) continue;
    int bin = static_cast<int>(static_cast<double>(ev.time_us - tl.t0) * kBins / width);
    bin = std::clamp(bin, 0, kBins - 1);
    const SignalRole role = rs.signal(ev.signal).role;
    const bool background = role == SignalRole::Context || role == SignalRole::Progress ||
                            role == SignalRole::Metric;
    Class c = init_keys.count({ev.source, ev.offset})  ? kInit
              : sec_keys.count({ev.source, ev.offset}) ? kSec
              : coll_rules.count(ev.rule)              ? kColl
              : background                             ? kCtx
                                                       : kMisc;
    Cell& cell = row->cells[bin];
    ++cell.n[c];
    ++cell.rules[ev.rule];
    ++tl.drawn;
  }
  return tl;
}

double XPos(const Timeline& tl, int64_t t) {
  double x = static_cast<double>(t - tl.t0) / static_cast<double>(tl.t1 - tl.t0) * kPlotWidth;
  return std::clamp(x, 0.0, kPlotWidth);
}

std::string X(const Timeline& tl, int64_t t) { return Fixed(XPos(tl, t), 2); }

double StepFor(double span_s, double per_width) {
  for (double s : kTickSteps) {
    if (span_s / s <= per_width) return s;
  }
  return kTickSteps[std::size(kTickSteps) - 1];
}

void AppendTicks(std::string& out, const Timeline& tl) {
  double span_s = static_cast<double>(tl.t1 - tl.t0) / 1e6;
  double step = StepFor(span_s, 8);
  bool multi_day = span_s >= 86400;
  int64_t su = static_cast<int64_t>(std::llround(step * 1e6));
  int64_t first = tl.t0 / su * su;
  if (first < tl.t0) first += su;
  for (int64_t t = first; t <= tl.t1; t += su) {
    double pct = static_cast<double>(t - tl.t0) / static_cast<double>(tl.t1 - tl.t0) * 100;
    out += StrCat("<div class=\"tk\" style=\"left:", Fixed(pct, 3), "%\"><span>",
                  Esc(TickLabel(t, step, multi_day)), "</span></div>");
  }
}

class Page {
 public:
  Page(const Ruleset& rs, const ScanResult& scan, const Diagnosis& d) : rs_(rs), scan_(scan), d_(d) {}
  std::string Render();

 private:
  std::string_view RuleId(uint32_t rule) const { return Str(rs_.rule(rule)->id()); }
  std::string Where(const Evidence& ev) const {
    return StrCat(ev.source < scan_.sources.size() ? scan_.sources[ev.source].name : "?", ":", ev.line);
  }
  void Header();
  void IncidentCard(const Incident& inc, size_t index);
  void EvidenceTable(const std::vector<Evidence>& evs);
  void CollateralTable(const Incident& inc);
  void ActionBlock(const Action& a);
  void AttemptsSection();
  void TimelineSection();
  void IgnoredSection();
  void InputErrors();
  void ClockOffsets();

  const Ruleset& rs_;
  const ScanResult& scan_;
  const Diagnosis& d_;
  std::string out_;
};

void Page::Header() {
  std::string& o = out_;
  o += "<header><h1>faultline incident report</h1><p class=\"sum\">";
  o += Esc(StrCat(Thousands(scan_.sources.size()), " source", scan_.sources.size() == 1 ? "" : "s",
                  " \xC2\xB7 ", Thousands(scan_.lines), " lines \xC2\xB7 ", Bytes(scan_.bytes),
                  " \xC2\xB7 ", Thousands(d_.ranks), " rank", d_.ranks == 1 ? "" : "s", " \xC2\xB7 ",
                  Thousands(d_.hosts), " host", d_.hosts == 1 ? "" : "s", " \xC2\xB7 ",
                  Thousands(scan_.evidence.size()), " evidence lines"));
  if (d_.job_start_us != kNoTime || d_.job_end_us != kNoTime) {
    o += Esc(StrCat(" \xC2\xB7 job window ", TimeText(d_.job_start_us), " .. ",
                    d_.job_end_us == kNoTime ? std::string("?") : FormatRfc3339(d_.job_end_us)));
  }
  o += "</p>";
  if (d_.job.Stated()) o += StrCat("<p class=\"small\" id=\"job\">Job end as stated: ", Esc(d_.job.Text()), "</p>");
  for (const std::string& l : d_.limits) o += StrCat("<p class=\"small\" id=\"limit\">Cannot be known: ", Esc(l), "</p>");
  o += "</header>\n";
}

void Page::EvidenceTable(const std::vector<Evidence>& evs) {
  std::string& o = out_;
  o += "<table class=\"ev\"><thead><tr><th>where</th><th>time (aligned)</th><th>rank</th>"
       "<th>host</th><th>line</th></tr></thead><tbody>";
  for (size_t k = 0; k < evs.size() && k < kMaxLinesShown; ++k) {
    const Evidence& ev = evs[k];
    o += "<tr><td class=\"mono\">";
    AppendHtmlText(o, Where(ev));
    o += "</td><td class=\"nw\">";
    AppendHtmlText(o, TimeText(ev.time_us));
    if (ev.time_us != kNoTime && ev.time_source != TimeSource::kParsed) {
      o += StrCat(" <span class=\"muted small\">(", Esc(TimeSourceName(ev.time_source)), ")</span>");
    }
    o += StrCat("</td><td>", ev.rank >= 0 ? StrCat(ev.rank) : std::string("\xE2\x80\x94"),
                "</td><td>");
    AppendHtmlText(o, ev.host.empty() ? std::string_view("\xE2\x80\x94") : ev.host);
    o += "</td><td class=\"ln mono\">";
    AppendHtmlText(o, ev.text);
    o += "</td></tr>";
  }
  o += "</tbody></table>";
  if (evs.size() > kMaxLinesShown) {
    o += StrCat("<p class=\"muted small\">and ", Thousands(evs.size() - kMaxLinesShown),
                " more (the JSON report has them all)</p>");
  }
}

void Page::CollateralTable(const Incident& inc) {
  std::string& o = out_;
  o += StrCat("<h3>Collateral: ", inc.collateral.size(), " cluster",
              inc.collateral.size() == 1 ? "" : "s", "</h3>");
  o += "<table class=\"coll\"><thead><tr><th>rule</th><th>lines</th><th>ranks</th><th>hosts</th>"
       "<th>when (aligned)</th><th>e.g.</th></tr></thead><tbody>";
  for (const Collateral& c : inc.collateral) {
    o += "<tr><td><code>";
    AppendHtmlText(o, RuleId(c.rule));
    o += "</code><br><span class=\"muted small\">";
    AppendHtmlText(o, Str(rs_.rule(c.rule)->reference()));
    o += StrCat("</span></td><td>", Thousands(c.count), "</td><td class=\"mono ln\">");
    AppendHtmlText(o, c.ranks.empty() ? std::string("\xE2\x80\x94") : Cut(RankRanges(c.ranks), 160));
    o += "</td><td class=\"ln\">";
    std::string hosts;
    for (size_t j = 0; j < c.hosts.size() && j < 4; ++j) hosts += StrCat(j ? ", " : "", c.hosts[j]);
    if (c.hosts.size() > 4) hosts += StrCat(" and ", c.hosts.size() - 4, " more");
    AppendHtmlText(o, hosts.empty() ? std::string("\xE2\x80\x94") : hosts);
    o += "</td><td class=\"nw\">";
    AppendHtmlText(o, TimeText(c.first_time_us));
    if (c.last_time_us != kNoTime && c.last_time_us != c.first_time_us) {
      o += "<br>.. ";
      AppendHtmlText(o, TimeText(c.last_time_us));
    }
    o += "</td><td class=\"ln mono\"><span class=\"muted\">";
    AppendHtmlText(o, Where(c.sample));
    o += "</span> ";
    AppendHtmlText(o, Cut(c.sample.text, kMaxTextBytes));
    o += "</td></tr>";
  }
  o += "</tbody></table>";
}

void Page::IncidentCard(const Incident& inc, size_t index) {
  std::string& o = out_;
  const fb::Rule* rule = rs_.rule(inc.rule);
  const bool primary = index == 0;
  o += StrCat("<section class=\"card incident", primary ? " primary" : "", "\" id=\"incident-",
              index + 1, "\" data-rule=\"", Esc(Str(rule->id())), "\" data-reference=\"",
              Esc(Str(rule->reference())), "\" data-rank=\"", inc.rank >= 0 ? StrCat(inc.rank) : "",
              "\" data-host=\"", Esc(inc.host), "\">");
  o += StrCat("<div class=\"kicker\">", primary ? "Primary diagnosis" : StrCat("Incident ", index + 1),
              "</div><h2>", Esc(Str(rule->title())), "</h2>");
  int pct = static_cast<int>(std::lround(std::clamp(inc.confidence, 0.0, 1.0) * 100));
  o += StrCat("<div class=\"tags\"><span class=\"tag mono\">", Esc(Str(rule->id())),
              "</span><span>reference <b class=\"ref\">", Esc(Str(rule->reference())),
              "</b></span><span>", Esc(Str(rule->category())), " \xC2\xB7 ", Esc(LayerName(rule->layer())),
              " layer</span><span class=\"conf\">confidence <i><b style=\"width:", pct, "%\"></b></i> ",
              pct, "%</span>");
  if (inc.survived) o += "<span class=\"tag\">the job carried on after it</span>";
  if (!inc.detector.empty()) o += StrCat("<span>detector ", Esc(inc.detector), "</span>");
  o += "</div>";

  o += "<dl class=\"who\">";
  auto item = [&](std::string_view k, std::string_view v, const char* cls) {
    o += StrCat("<div><dt>", k, "</dt><dd class=\"", cls, "\">");
    AppendHtmlText(o, v);
    o += "</dd></div>";
  };
  item(inc.inferred ? "Suspect rank (inferred)" : "Initiating rank",
       inc.rank >= 0 ? StrCat(inc.rank) : std::string("unknown"), "rank");
  item("Host", inc.host.empty() ? std::string_view("unknown") : inc.host, "host");
  if (!inc.gpu.empty()) item("GPU", inc.gpu, "gpu mono");
  item("Time (aligned)", TimeText(inc.time_us), "time");
  if (!inc.suspects.empty()) item("Suspect ranks", Cut(RankRanges(inc.suspects), 160), "suspects");
  o += "</dl>";
  if (!inc.explanation.empty()) {
    o += "<p class=\"why\"><b>Why:</b> ";
    AppendHtmlText(o, inc.explanation);
    o += "</p>";
  }
  if (!inc.initiating.empty()) {
    o += StrCat("<h3>Initiating evidence (", Thousands(inc.initiating.size()), " line",
                inc.initiating.size() == 1 ? "" : "s", ")</h3>");
    EvidenceTable(inc.initiating);
  }
  ActionBlock(inc.action);
  o += "<div class=\"fv\"><div><h3>Fix</h3><p>";
  AppendHtmlText(o, inc.fix.empty() ? std::string_view("\xE2\x80\x94") : inc.fix);
  o += "</p></div><div><h3>Verify</h3><pre>";
  AppendHtmlText(o, inc.verify.empty() ? std::string_view("\xE2\x80\x94") : inc.verify);
  o += "</pre></div></div>";
  if (!inc.missing_facts.empty()) {
    o += "<h3>Missing facts</h3><ul class=\"facts\">";
    for (const std::string& m : inc.missing_facts) {
      o += "<li>";
      AppendHtmlText(o, m);
      o += "</li>";
    }
    o += "</ul>";
  }
  if (!inc.collateral.empty()) CollateralTable(inc);
  o += "</section>\n";
}

// The incident's recommended action: what, why, and what made the call.
void Page::ActionBlock(const Action& a) {
  std::string& o = out_;
  o += StrCat("<p class=\"action action-", ActionKindName(a.kind), "\"><b>Action:</b> ");
  AppendHtmlText(o, ActionSummary(a));
  o += " &mdash; ";
  AppendHtmlText(o, a.reason);
  o += " <span class=\"mono\">(set by ";
  AppendHtmlText(o, a.set_by);
  o += ")</span>";
  if (a.kind == ActionKind::kUnknown && !a.missing_fact.empty()) {
    o += "<br><b>Missing:</b> ";
    AppendHtmlText(o, a.missing_fact);
  }
  o += "</p>";
}

// The job's attempts, oldest first, each with how it was recognised and
// its primary incident; the primary's own attempt is marked. Only when the
// job ran more than once.
void Page::AttemptsSection() {
  std::string& o = out_;
  if (d_.attempts.size() < 2) return;
  const int64_t current = d_.incidents.empty() ? -1 : static_cast<int64_t>(d_.incidents[0].attempt);
  o += StrCat("<section id=\"attempts\"><h2>Attempts (", d_.attempts.size(),
              ", oldest first)</h2><table class=\"attempts\"><thead><tr><th>#</th><th>attempt</th>"
              "<th>recognised by</th><th>started (aligned)</th><th>primary rule</th><th>host</th>"
              "<th>step</th></tr></thead><tbody>");
  for (const Attempt& at : d_.attempts) {
    o += StrCat("<tr", static_cast<int64_t>(at.index) == current ? " class=\"current\"" : "", "><td>",
                at.index + 1, "</td><td>");
    AppendHtmlText(o, at.label);
    o += "</td><td>";
    AppendHtmlText(o, at.recognised);
    o += "</td><td class=\"nw\">";
    AppendHtmlText(o, TimeText(at.start_us));
    o += "</td><td>";
    if (at.primary_rule >= 0) {
      o += "<code>";
      AppendHtmlText(o, RuleId(static_cast<uint32_t>(at.primary_rule)));
      o += "</code>";
    } else {
      o += "<span class=\"muted\">no failure</span>";
    }
    o += "</td><td>";
    AppendHtmlText(o, at.host.empty() ? std::string_view("\xE2\x80\x94") : at.host);
    o += StrCat("</td><td>", at.step >= 0 ? StrCat(at.step) : std::string("\xE2\x80\x94"), "</td></tr>");
  }
  o += "</tbody></table></section>\n";
}

void Page::TimelineSection() {
  std::string& o = out_;
  Timeline tl = BuildTimeline(rs_, scan_, d_);
  o += "<section id=\"timeline\"><h2>Timeline</h2>";
  if (tl.t0 == kNoTime) {
    o += "<p class=\"muted\">No line carries a time: there is no timeline to draw.</p></section>\n";
    return;
  }
  o += "<p class=\"muted small\">";
  o += tl.host_mode
           ? Esc(StrCat("One row per host (", Thousands(tl.ranks), " ranks on ", Thousands(tl.hosts),
                        " hosts): a heat strip of the evidence lines of all its ranks; hover a cell "
                        "for its rules. "))
           : std::string("One row per rank under its host; a host's own row holds its lines that "
                         "name no rank (kernel logs). ");
  o += "Times are UTC, aligned: ";
  if (d_.clock_offsets_s.empty()) {
    o += "no host clock needed an offset.";
  } else {
    std::string offs;
    size_t k = 0;
    for (const auto& [h, off] : d_.clock_offsets_s) {
      if (k == 6) {
        offs += StrCat(" and ", d_.clock_offsets_s.size() - 6, " more");
        break;
      }
      auto it = d_.clock_offset_source.find(h);
      offs += StrCat(k++ ? ", " : "", h, " ", off > 0 ? "+" : "", Fixed(off, 3), " s (",
                     it == d_.clock_offset_source.end() ? "estimated" : it->second, ")");
    }
    o += StrCat("clock offsets applied: ", Esc(offs), ".");
  }
  if (tl.outside) {
    o += StrCat(" ", Thousands(tl.outside), " line", tl.outside == 1 ? "" : "s",
                " outside the job window not drawn (see Ignored).");
  }
  if (tl.untimed) o += StrCat(" ", Thousands(tl.untimed), " untimed line", tl.untimed == 1 ? "" : "s", " not drawn.");
  o += "</p>";

  const Incident* primary = d_.incidents.empty() ? nullptr : &d_.incidents[0];
  o += StrCat("<div class=\"tl ", tl.host_mode ? "host-mode" : "rank-mode", "\" data-t0=\"", tl.t0,
              "\" data-t1=\"", tl.t1, "\"");
  if (primary && primary->time_us != kNoTime) o += StrCat(" data-tinit=\"", primary->time_us, "\"");
  o += "><div class=\"tl-bar\"><ul class=\"legend\">"
       "<li><i class=\"sw-init\"></i>initiating</li>"
       "<li><i class=\"sw-coll\"></i>collateral</li>"
       "<li><i class=\"sw-band\"></i>collateral cluster span</li>"
       "<li><i class=\"sw-sec\"></i>other incidents</li>"
       "<li><i class=\"sw-misc\"></i>other evidence</li>"
       "<li><i class=\"sw-ctx\"></i>context, progress, metric lines</li>"
       "<li><i class=\"sw-prog\"></i>training progress (tick: last)</li></ul>"
       "<span class=\"tl-zoom\" hidden><button type=\"button\" data-z=\"out\" title=\"zoom out\">\xE2\x88\x92</button>"
       "<output>1\xC3\x97</output><button type=\"button\" data-z=\"in\" title=\"zoom in (or ctrl+wheel)\">+</button> "
       "<button type=\"button\" data-z=\"fit\">fit</button> ";
  if (primary && primary->time_us != kNoTime) o += "<button type=\"button\" data-z=\"init\">initiating event</button>";
  o += "</span></div><div class=\"tl-body\"><div class=\"tl-labels\">";
  for (const Row& row : tl.rows) {
    std::string label = RowName(row), title = label;
    if (row.kind != Row::kRank && !row.ranks.empty()) {
      std::string rr = Cut(RankRanges(row.ranks), 80);
      label += StrCat(" \xC2\xB7 r", rr);
      title += StrCat(": ranks ", rr);
    }
    if (row.initiating) {
      label = StrCat("\xE2\x96\xB6 ", label);
      title += " (initiating)";
    } else if (row.suspect) {
      label = StrCat("? ", label);
      title += " (suspect)";
    }
    if (row.stop_first != kNoTime) {
      title += StrCat("; progress ", TimeText(row.prog_first), " .. ", TimeText(row.prog_last));
      if (row.kind != Row::kRank) title += StrCat("; first to stop: rank ", row.stop_rank, " at ", TimeText(row.stop_first));
    }
    o += StrCat("<div class=\"rl k-",
                row.kind == Row::kRank ? "rank" : row.kind == Row::kHead ? "head" : "host",
                row.initiating ? " init" : "", row.suspect ? " suspect" : "", "\" title=\"", Esc(title),
                "\">", Esc(label), "</div>");
  }
  const int h = static_cast<int>(tl.rows.size()) * tl.row_px;
  o += "</div><div class=\"tl-scroll\"><div class=\"tl-plot\"><div class=\"tl-ticks\">";
  AppendTicks(o, tl);
  o += StrCat("</div><svg class=\"tl-svg\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 ",
              kPlotWidth, " ", h, "\" preserveAspectRatio=\"none\" style=\"height:", h,
              "px\" role=\"img\" aria-label=\"evidence lines by ", tl.host_mode ? "host" : "rank",
              " and time\">");
  // Row backgrounds: host headings, the initiating row.
  for (size_t i = 0; i < tl.rows.size(); ++i) {
    const Row& row = tl.rows[i];
    const char* cls = row.initiating || row.suspect ? "r-init" : row.kind == Row::kHead ? "r-head" : nullptr;
    if (cls) {
      o += StrCat("<rect class=\"", cls, "\" x=\"0\" y=\"", i * tl.row_px, "\" width=\"", kPlotWidth,
                  "\" height=\"", tl.row_px, "\"/>");
    }
  }
  // Collateral clusters of the primary: shaded over their time span.
  if (primary) {
    for (const Collateral& c : primary->collateral) {
      if (c.first_time_us == kNoTime) continue;
      int64_t last = c.last_time_us == kNoTime ? c.first_time_us : c.last_time_us;
      double x0 = XPos(tl, c.first_time_us), x1 = XPos(tl, last);
      o += StrCat("<rect class=\"band\" x=\"", Fixed(x0, 2), "\" y=\"0\" width=\"",
                  Fixed(std::max(x1 - x0, 1.5), 2), "\" height=\"", h, "\"><title>",
                  Esc(StrCat("collateral: ", Thousands(c.count), " x ", RuleId(c.rule), " on ",
                             c.ranks.size(), " rank", c.ranks.size() == 1 ? "" : "s", ", ",
                             TimeText(c.first_time_us), " .. ", TimeText(last))),
                  "</title></rect>");
    }
  }
  auto vline = [&](int64_t t, const char* cls, const std::string& title) {
    o += StrCat("<line class=\"", cls, "\" x1=\"", X(tl, t), "\" x2=\"", X(tl, t), "\" y1=\"0\" y2=\"", h,
                "\" vector-effect=\"non-scaling-stroke\">");
    if (!title.empty()) o += StrCat("<title>", Esc(title), "</title>");
    o += "</line>";
  };
  if (d_.job_start_us != kNoTime) vline(d_.job_start_us, "jw", "job start " + TimeText(d_.job_start_us));
  if (d_.job_end_us != kNoTime) vline(d_.job_end_us, "jw", "job end " + TimeText(d_.job_end_us));
  // Progress: a line over each row's span and a tick where it stopped.
  for (size_t i = 0; i < tl.rows.size(); ++i) {
    const Row& row = tl.rows[i];
    if (row.prog_first == kNoTime) continue;
    int mid = static_cast<int>(i) * tl.row_px + tl.row_px / 2;
    o += StrCat("<line class=\"prog\" x1=\"", X(tl, row.prog_first), "\" x2=\"", X(tl, row.prog_last),
                "\" y1=\"", mid, "\" y2=\"", mid, "\" vector-effect=\"non-scaling-stroke\"/>");
    std::string xs = X(tl, row.kind == Row::kRank ? row.prog_last : row.stop_first);
    o += StrCat("<line class=\"stop\" x1=\"", xs, "\" x2=\"", xs, "\" y1=\"", i * tl.row_px + 2,
                "\" y2=\"", (i + 1) * tl.row_px - 2, "\" vector-effect=\"non-scaling-stroke\"/>");
  }
  // Evidence cells, opacity by count (log scale against the busiest cell,
  // five levels), adjacent cells of one class and level merged into one
  // rect: a rank busy for an hour is one element, not 240.
  struct Run {
    size_t row;
    int first, last, cls, level;
    std::map<uint32_t, uint32_t> rules;
    uint64_t lines = 0;
  };
  uint32_t max_n = 1;
  for (const Row& row : tl.rows) {
    for (const auto& [b, c] : row.cells) max_n = std::max(max_n, c.total());
  }
  std::vector<Run> runs;
  for (size_t i = 0; i < tl.rows.size(); ++i) {
    for (const auto& [b, c] : tl.rows[i].cells) {
      int level = static_cast<int>(std::lround(4 * std::log1p(c.total()) / std::log1p(max_n)));
      int cls = c.cls();
      // Context lines come every few steps: short gaps between them are
      // bridged (the span of a busy loop), and their level is the run's most.
      const int gap = cls == kCtx ? 4 : 1;
      if (runs.empty() || runs.back().row != i || b - runs.back().last > gap || runs.back().cls != cls ||
          (cls != kCtx && runs.back().level != level)) {
        runs.push_back({i, b, b, cls, level, {}, 0});
      }
      Run& r = runs.back();
      r.level = std::max(r.level, level);
      r.last = b;
      r.lines += c.total();
      for (const auto& [rule, n] : c.rules) r.rules[rule] += n;
    }
  }
  const bool titles = runs.size() <= kMaxCellTitles;
  const double bin_w = kPlotWidth / kBins;
  const double bin_us = static_cast<double>(tl.t1 - tl.t0) / kBins;
  // Faint thin context first, so the rest is drawn over it.
  std::stable_partition(runs.begin(), runs.end(), [](const Run& r) { return r.cls == kCtx; });
  auto opacity = [](int cls, int level) { return cls == kCtx ? 0.25 + 0.1 * level : 0.4 + 0.15 * level; };
  auto inset = [&](int cls) { return cls == kCtx ? tl.row_px / 3 : 1; };
  if (!titles) {
    // Too many cells to say what each holds: one path per class and level
    // (~25 bytes a cell), so even a job with lines in every bin of every
    // row stays a page of bounded size.
    std::map<std::pair<int, int>, std::string> paths;
    for (const Run& r : runs) {
      StrAppend(&paths[{r.cls, r.level}], "M", Fixed(r.first * bin_w, 1), " ",
                r.row * tl.row_px + inset(r.cls), "h", Fixed((r.last - r.first + 1) * bin_w, 1), "v",
                tl.row_px - 2 * inset(r.cls), "h-", Fixed((r.last - r.first + 1) * bin_w, 1), "z");
    }
    for (int pass = 0; pass < 2; ++pass) {  // context first, under the rest
      for (const auto& [key, d] : paths) {
        if ((key.first == kCtx) != (pass == 0)) continue;
        o += StrCat("<path class=\"c-", kClassName[key.first], "\" fill-opacity=\"",
                    Fixed(opacity(key.first, key.second), 2), "\" d=\"", d, "\"/>");
      }
    }
  }
  for (const Run& r : runs) {
    if (!titles) break;
    o += StrCat("<rect class=\"c-", kClassName[r.cls], "\" x=\"", Fixed(r.first * bin_w, 1), "\" y=\"",
                r.row * tl.row_px + inset(r.cls), "\" width=\"", Fixed((r.last - r.first + 1) * bin_w, 1),
                "\" height=\"", tl.row_px - 2 * inset(r.cls), "\" fill-opacity=\"",
                Fixed(opacity(r.cls, r.level), 2), "\"");
    std::vector<std::pair<uint32_t, uint32_t>> rules(r.rules.begin(), r.rules.end());
    std::stable_sort(rules.begin(), rules.end(), [](auto& a, auto& b) { return a.second > b.second; });
    std::string t = StrCat(RowName(tl.rows[r.row]), " \xC2\xB7 ",
                           ShortTime(tl.t0 + static_cast<int64_t>(r.first * bin_us)), "\xE2\x80\x93",
                           ShortTime(tl.t0 + static_cast<int64_t>((r.last + 1) * bin_us)), " \xC2\xB7 ");
    for (size_t k = 0; k < rules.size() && k < 3; ++k) {
      t += StrCat(k ? ", " : "", RuleId(rules[k].first), " \xC3\x97", rules[k].second);
    }
    if (rules.size() > 3) t += ", \xE2\x80\xA6";
    o += StrCat("><title>", Esc(t), "</title></rect>");
  }
  for (size_t i = 1; i < d_.incidents.size() && i <= kMaxSecondaryMarks; ++i) {
    const Incident& inc = d_.incidents[i];
    if (inc.time_us == kNoTime) continue;
    vline(inc.time_us, "m-sec", StrCat("incident ", i + 1, ": ", RuleId(inc.rule), " at ", TimeText(inc.time_us)));
  }
  if (primary && primary->time_us != kNoTime) {
    vline(primary->time_us, "m-init",
          StrCat(primary->inferred ? "suspect: " : "initiating: ", RuleId(primary->rule),
                 primary->rank >= 0 ? StrCat(" on rank ", primary->rank) : std::string(),
                 primary->host.empty() ? std::string() : StrCat(" (", primary->host, ")"), " at ",
                 TimeText(primary->time_us)));
  }
  o += "</svg></div></div></div></div></section>\n";
}

void Page::IgnoredSection() {
  std::string& o = out_;
  o += "<section id=\"ignored\"><h2>Ignored lines</h2>";
  if (d_.ignored.empty()) {
    o += "<p class=\"muted\">None: the correlator set no evidence aside.</p></section>\n";
    return;
  }
  o += "<p class=\"muted small\">Evidence the correlator set aside, and why (stale hardware lines "
       "from before the job, for example).</p><table><thead><tr><th>rule</th><th>lines</th>"
       "<th>why</th><th>e.g.</th></tr></thead><tbody>";
  for (const Ignored& ig : d_.ignored) {
    o += "<tr><td><code>";
    AppendHtmlText(o, RuleId(ig.rule));
    o += StrCat("</code></td><td>", Thousands(ig.count), "</td><td>");
    AppendHtmlText(o, ig.reason);
    o += "</td><td class=\"ln mono\"><span class=\"muted\">";
    AppendHtmlText(o, Where(ig.sample));
    o += "</span> ";
    AppendHtmlText(o, Cut(ig.sample.text, kMaxTextBytes));
    o += "</td></tr>";
  }
  o += "</tbody></table></section>\n";
}

void Page::InputErrors() {
  if (scan_.errors.empty()) return;
  std::string& o = out_;
  o += "<section id=\"input-errors\"><h2>Inputs that could not be read</h2><ul>";
  for (const InputError& e : scan_.errors) {
    o += "<li>";
    AppendHtmlText(o, e.message);
    o += "</li>";
  }
  o += "</ul></section>\n";
}

void Page::ClockOffsets() {
  if (d_.clock_offsets_s.empty()) return;
  std::string& o = out_;
  o += "<section id=\"clocks\"><h2>Clock offsets</h2><p class=\"muted small\">Added to each host's "
       "timestamps to reach aligned time; every time on this page has them applied.</p><table>"
       "<thead><tr><th>host</th><th>seconds</th><th>source</th></tr></thead><tbody>";
  for (const auto& [h, off] : d_.clock_offsets_s) {
    auto it = d_.clock_offset_source.find(h);
    o += "<tr><td>";
    AppendHtmlText(o, h);
    o += StrCat("</td><td>", off > 0 ? "+" : "", Fixed(off, 3), "</td><td>",
                Esc(it == d_.clock_offset_source.end() ? "estimated" : it->second), "</td></tr>");
  }
  o += "</tbody></table></section>\n";
}

std::string Page::Render() {
  std::string& o = out_;
  o.reserve(64 << 10);
  const Incident* primary = d_.incidents.empty() ? nullptr : &d_.incidents[0];
  std::string title = "faultline: ";
  if (primary) {
    title += StrCat(Str(rs_.rule(primary->rule)->title()),
                    primary->rank >= 0 ? StrCat(" \xE2\x80\x94 rank ", primary->rank) : std::string(),
                    primary->host.empty() ? std::string() : StrCat(" on ", primary->host));
  } else {
    title += "no incident";
  }
  o += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
       "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
       "<meta name=\"color-scheme\" content=\"light dark\">";
  // Nothing may be fetched, and only the page's own script runs.
  o += StrCat("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
              "style-src 'unsafe-inline'; img-src data:; script-src 'sha256-",
              ScriptHash(), "'; base-uri 'none'; form-action 'none'\">");
  o += StrCat("<meta name=\"generator\" content=\"faultline ", Esc(kVersionString), "\">");
  o += StrCat("<title>", Esc(title), "</title><style>", kStyle, "</style></head>\n<body><main>\n");
  Header();
  if (primary) {
    IncidentCard(*primary, 0);
  } else {
    o += "<section class=\"card noinc\" id=\"incident-none\"><div class=\"kicker\">No incident</div>"
         "<h2>Nothing in the catalog applies to these logs</h2></section>\n";
  }
  AttemptsSection();
  TimelineSection();
  if (d_.incidents.size() > 1) {
    o += StrCat("<section id=\"other-incidents\"><h2>Other incidents (", d_.incidents.size() - 1,
                ")</h2>");
    for (size_t i = 1; i < d_.incidents.size(); ++i) {
      const Incident& inc = d_.incidents[i];
      o += StrCat("<details class=\"inc\"><summary>", i + 1, ". ", Esc(Str(rs_.rule(inc.rule)->title())),
                  " <span class=\"muted\">(", Esc(RuleId(inc.rule)), ", ",
                  std::lround(std::clamp(inc.confidence, 0.0, 1.0) * 100), "%",
                  inc.rank >= 0 ? StrCat(", rank ", inc.rank) : std::string(),
                  inc.host.empty() ? std::string() : StrCat(", ", Esc(inc.host)), ")</span></summary>");
      IncidentCard(inc, i);
      o += "</details>\n";
    }
    o += "</section>\n";
  }
  IgnoredSection();
  InputErrors();
  ClockOffsets();
  if (d_.expectation.gpus > 0) {
    o += StrCat("<section id=\"expectation\"><h2>Expected hardware interruptions</h2><p>",
                Esc(StrCat(Fixed(d_.expectation.expected_interruptions, 2), " for ",
                           Fixed(d_.expectation.gpus, 0), " GPUs over ", Fixed(d_.expectation.hours, 1),
                           " h")),
                "</p><ul class=\"facts small muted\">");
    for (const std::string& b : d_.expectation.basis) o += StrCat("<li>", Esc(b), "</li>");
    o += "</ul></section>\n";
  }
  o += StrCat("<footer>faultline ", Esc(kVersionString), " \xC2\xB7 ruleset ", Esc(rs_.name()), " ",
              Esc(rs_.version()), " (", rs_.rule_count(),
              " rules) \xC2\xB7 times are UTC; every value on this page comes from the report "
              "(schema/report.schema.json)</footer>\n</main>\n<script>",
              kScript, "</script>\n</body></html>\n");
  return std::move(o);
}

}  // namespace

void AppendHtmlText(std::string& out, std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        case '\t':
        case '\n': out += static_cast<char>(c); break;
        default:
          if (c < 0x20 || c == 0x7f) {
            // Shown, not obeyed: ESC, CR, BS... as their Control Pictures.
            AppendUtf8(c == 0x7f ? 0x2421 : 0x2400 + c, out);
          } else {
            out += static_cast<char>(c);
          }
      }
      continue;
    }
    const size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      continue;
    }
    const uint32_t cp = DecodeUtf8(s.substr(i, n));
    if ((cp >= 0x80 && cp <= 0x9F) || (cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE) {
      out += "\xEF\xBF\xBD";
    } else if (IsBidiControl(cp)) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "[U+%04X]", cp);
      out += buf;
    } else {
      out.append(s.data() + i, n);
    }
    i += n - 1;
  }
}

std::string ReportHtml(const Ruleset& rs, const ScanResult& scan, const Diagnosis& d) {
  return Page(rs, scan, d).Render();
}

}  // namespace faultline
