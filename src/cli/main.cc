// The faultline command (contracts/cli.md), built on the public C ABI only.
// Exit status: 0 success (incidents or not), 1 usage error, 2 input or
// ruleset error with a one-line message naming the file.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "faultline/faultline.h"

namespace {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 1;
constexpr int kExitInput = 2;

const char kUsage[] =
    "usage:\n"
    "  faultline diagnose [--json] [--rules PATH] [--threads N]\n"
    "                     [--job-start TIME] [--job-end TIME]\n"
    "                     [--clock-offset HOST=SECONDS]... [--tz ZONE] PATH...\n"
    "  faultline scan --json [--rules PATH] [--threads N] PATH...\n"
    "  faultline compile SRC_DIR -o OUT.flrules\n"
    "  faultline rules list [--json]\n"
    "  faultline rules show ID [--json]\n"
    "  faultline bench [--rules PATH] [--threads N] [--costs [--sample-mb N]] PATH...\n"
    "  faultline --version\n";

int Usage(const char* msg) {
  if (msg) std::fprintf(stderr, "faultline: %s\n", msg);
  std::fputs(kUsage, stderr);
  return kExitUsage;
}

struct Args {
  bool json = false;
  const char* rules = nullptr;
  unsigned threads = 0;
  int64_t job_start = FL_TIME_UNSET, job_end = FL_TIME_UNSET;
  std::vector<std::string> offset_hosts;
  std::vector<double> offset_secs;
  const char* tz = nullptr;
  const char* out = nullptr;
  bool costs = false;            // bench: each signal's added cost
  uint64_t sample_bytes = 32ull << 20;
  std::vector<const char*> positional;
};

// A whole number in [lo, hi] and nothing else.
bool WholeNumber(const char* v, long lo, long hi, long* n) {
  char* end = nullptr;
  *n = std::strtol(v, &end, 10);
  return end != v && !*end && *n >= lo && *n <= hi;
}

// Parses flags common to the subcommands; returns -1 on success, else an exit code.
int ParseArgs(int argc, char** argv, int start, Args& a) {
  for (int i = start; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value = [&](const char* name) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "faultline: %s needs a value\n", name);
        return nullptr;
      }
      return argv[++i];
    };
    if (arg == "--json") {
      a.json = true;
    } else if (arg == "--rules") {
      if (!(a.rules = value("--rules"))) return kExitUsage;
    } else if (arg == "--threads") {
      const char* v = value("--threads");
      long n = 0;
      if (!v) return kExitUsage;
      if (!WholeNumber(v, 1, 1024, &n)) return Usage("--threads takes a number from 1 to 1024");
      a.threads = static_cast<unsigned>(n);
    } else if (arg == "--job-start" || arg == "--job-end") {
      const char* v = value(argv[i]);
      if (!v) return kExitUsage;
      int64_t t;
      if (fl_time_parse(v, &t) != FL_OK) {
        std::fprintf(stderr, "faultline: %s: '%s' is not an RFC 3339 time or epoch seconds\n", argv[i - 1], v);
        return kExitUsage;
      }
      (arg == "--job-start" ? a.job_start : a.job_end) = t;
    } else if (arg == "--clock-offset") {
      const char* v = value("--clock-offset");
      if (!v) return kExitUsage;
      const char* eq = std::strrchr(v, '=');
      char* end = nullptr;
      double secs = eq ? std::strtod(eq + 1, &end) : 0;
      if (!eq || eq == v || !end || *end || end == eq + 1) {
        return Usage("--clock-offset takes HOST=SECONDS, e.g. node017=-42.5");
      }
      a.offset_hosts.emplace_back(v, eq - v);
      a.offset_secs.push_back(secs);
    } else if (arg == "--tz") {
      if (!(a.tz = value("--tz"))) return kExitUsage;
    } else if (arg == "-o") {
      if (!(a.out = value("-o"))) return kExitUsage;
    } else if ((arg == "--costs" || arg == "--sample-mb") && std::string_view(argv[1]) != "bench") {
      return Usage("--costs and --sample-mb are options of bench");
    } else if (arg == "--costs") {
      a.costs = true;
    } else if (arg == "--sample-mb") {
      const char* v = value("--sample-mb");
      long n = 0;
      if (!v) return kExitUsage;
      if (!WholeNumber(v, 1, 65536, &n)) return Usage("--sample-mb takes a number from 1 to 65536");
      a.sample_bytes = static_cast<uint64_t>(n) << 20;
    } else if (arg == "-") {
      a.positional.push_back(argv[i]);
    } else if (arg.size() > 1 && arg[0] == '-') {
      std::fprintf(stderr, "faultline: unknown option %s\n", argv[i]);
      return Usage(nullptr);
    } else {
      a.positional.push_back(argv[i]);
    }
  }
  return -1;
}

fl_ruleset* LoadRules(const char* path) {
  fl_ruleset* rs = nullptr;
  fl_error* err = nullptr;
  fl_status rc = path ? fl_ruleset_load_file(&rs, path, &err) : fl_ruleset_load_default(&rs, &err);
  if (rc != FL_OK) {
    std::fprintf(stderr, "faultline: %s\n", fl_error_message(err));
    fl_error_free(err);
    return nullptr;
  }
  return rs;
}

int Progress(void*, uint64_t done, uint64_t total) {
  if (total) {
    std::fprintf(stderr, "\rscanned %.1f%% (%llu MB)", 100.0 * static_cast<double>(done) / static_cast<double>(total),
                 static_cast<unsigned long long>(done >> 20));
  } else {
    std::fprintf(stderr, "\rscanned %llu MB", static_cast<unsigned long long>(done >> 20));
  }
  return 0;
}

// Runs a session over the paths; returns the report (or nullptr) and sets
// *input_errors when some source could not be read.
fl_report* RunSession(const fl_ruleset* rs, const Args& a, bool* input_errors) {
  fl_session_options opts;
  fl_session_options_init(&opts);
  opts.threads = a.threads;
  opts.job_start_us = a.job_start;
  opts.job_end_us = a.job_end;
  std::vector<fl_clock_offset> offsets;
  for (size_t i = 0; i < a.offset_hosts.size(); ++i) {
    offsets.push_back({a.offset_hosts[i].c_str(), a.offset_secs[i]});
  }
  opts.clock_offsets = offsets.data();
  opts.clock_offset_count = offsets.size();
  opts.tz = a.tz;
  bool tty = isatty(2);
  if (tty) opts.on_progress = Progress;
  fl_session* s = nullptr;
  fl_error* err = nullptr;
  if (fl_session_new(&s, rs, &opts, &err) != FL_OK) {
    std::fprintf(stderr, "faultline: %s\n", fl_error_message(err));
    fl_error_free(err);
    return nullptr;
  }
  for (const char* p : a.positional) {
    if (fl_session_add_path(s, p) != FL_OK) {
      std::fprintf(stderr, "faultline: %s: %s\n", p, fl_session_last_error(s));
    }
  }
  fl_report* r = nullptr;
  fl_status rc = fl_session_finish(s, &r);
  if (tty) std::fputs("\r\033[K", stderr);
  if (rc != FL_OK) {
    std::fprintf(stderr, "faultline: %s\n", fl_session_last_error(s));
    fl_session_free(s);
    return nullptr;
  }
  fl_session_free(s);
  fl_report_totals t;
  t.size = sizeof t;
  fl_report_totals_get(r, &t);
  *input_errors = t.errors > 0;
  return r;
}

void PrintInputErrors(const fl_report* r) {
  // The report lists them too; stderr gets one line per source.
  const char* json = nullptr;
  size_t len = 0;
  fl_report_json(r, &json, &len);
  std::string_view j(json, len);
  size_t pos = j.find("\"errors\":[");
  if (pos == std::string_view::npos) return;
  size_t p = pos;
  while ((p = j.find("\"message\":\"", p)) != std::string_view::npos) {
    p += 11;
    std::string msg;
    while (p < j.size() && j[p] != '"') {
      if (j[p] == '\\' && p + 1 < j.size()) ++p;
      msg += j[p++];
    }
    std::fprintf(stderr, "faultline: %s\n", msg.c_str());
    size_t end = j.find("]}", pos);
    if (end != std::string_view::npos && p > end) break;
  }
}

int CmdDiagnose(int argc, char** argv) {
  Args a;
  if (int rc = ParseArgs(argc, argv, 2, a); rc >= 0) return rc;
  if (a.positional.empty()) return Usage("diagnose needs at least one PATH");
  fl_ruleset* rs = LoadRules(a.rules);
  if (!rs) return kExitInput;
  bool input_errors = false;
  fl_report* r = RunSession(rs, a, &input_errors);
  if (!r) {
    fl_ruleset_free(rs);
    return kExitInput;
  }
  const char* out = nullptr;
  size_t len = 0;
  if (a.json) fl_report_json(r, &out, &len); else fl_report_text(r, &out, &len);
  std::fwrite(out, 1, len, stdout);
  if (input_errors) PrintInputErrors(r);
  fl_report_free(r);
  fl_ruleset_free(rs);
  return input_errors ? kExitInput : kExitOk;
}

int CmdScan(int argc, char** argv) {
  Args a;
  if (int rc = ParseArgs(argc, argv, 2, a); rc >= 0) return rc;
  if (!a.json) return Usage("scan prints JSON lines: pass --json");
  if (a.positional.empty()) return Usage("scan needs at least one PATH");
  fl_ruleset* rs = LoadRules(a.rules);
  if (!rs) return kExitInput;
  bool input_errors = false;
  fl_report* r = RunSession(rs, a, &input_errors);
  if (!r) {
    fl_ruleset_free(rs);
    return kExitInput;
  }
  const char* out = nullptr;
  size_t len = 0;
  fl_report_evidence_jsonl(r, &out, &len);
  std::fwrite(out, 1, len, stdout);
  if (input_errors) PrintInputErrors(r);
  fl_report_free(r);
  fl_ruleset_free(rs);
  return input_errors ? kExitInput : kExitOk;
}

int CmdCompile(int argc, char** argv) {
  Args a;
  if (int rc = ParseArgs(argc, argv, 2, a); rc >= 0) return rc;
  if (a.positional.size() != 1 || !a.out) return Usage("compile takes SRC_DIR -o OUT.flrules");
  fl_error* err = nullptr;
  if (fl_ruleset_compile(a.positional[0], a.out, &err) != FL_OK) {
    std::fprintf(stderr, "faultline: %s\n", fl_error_message(err));
    fl_error_free(err);
    return kExitInput;
  }
  fl_ruleset* rs = LoadRules(a.out);
  if (!rs) return kExitInput;
  std::fprintf(stderr, "faultline: compiled %zu rules into %s\n", fl_ruleset_rule_count(rs), a.out);
  fl_ruleset_free(rs);
  return kExitOk;
}

// Pulls a string field out of a flat JSON object (for the text listing).
std::string JsonField(std::string_view obj, std::string_view key) {
  // Built by append: GCC 12 at -O3 warns (-Wrestrict, a false positive) on
  // operator+ of a literal and a temporary.
  std::string pat;
  pat.reserve(key.size() + 4);
  pat.append("\"").append(key).append("\":\"");
  size_t p = obj.find(pat);
  if (p == std::string_view::npos) return "";
  p += pat.size();
  std::string out;
  while (p < obj.size() && obj[p] != '"') {
    if (obj[p] == '\\' && p + 1 < obj.size()) ++p;
    out += obj[p++];
  }
  return out;
}

int CmdRules(int argc, char** argv) {
  if (argc < 3) return Usage("rules takes list or show ID");
  std::string_view sub = argv[2];
  Args a;
  if (int rc = ParseArgs(argc, argv, 3, a); rc >= 0) return rc;
  fl_ruleset* rs = LoadRules(a.rules);
  if (!rs) return kExitInput;
  int result = kExitOk;
  if (sub == "list") {
    char* json = nullptr;
    size_t len = 0;
    fl_ruleset_rules_json(rs, &json, &len);
    if (a.json) {
      std::fwrite(json, 1, len, stdout);
    } else {
      std::string_view j(json, len);
      size_t pos = 0;
      while ((pos = j.find("{\"id\":", pos)) != std::string_view::npos) {
        size_t end = j.find('}', pos);
        std::string_view obj = j.substr(pos, end - pos);
        std::printf("%-40s %-14s %s\n", JsonField(obj, "id").c_str(), JsonField(obj, "layer").c_str(),
                    JsonField(obj, "title").c_str());
        pos = end;
      }
    }
    fl_free(json);
  } else if (sub == "show") {
    if (a.positional.size() != 1) {
      fl_ruleset_free(rs);
      return Usage("rules show takes one rule ID");
    }
    char* json = nullptr;
    size_t len = 0;
    fl_status rc = a.json ? fl_ruleset_rule_json(rs, a.positional[0], &json, &len)
                          : fl_ruleset_rule_text(rs, a.positional[0], &json, &len);
    if (rc == FL_ERR_NOT_FOUND) {
      std::fprintf(stderr, "faultline: no rule '%s' (see faultline rules list)\n", a.positional[0]);
      result = kExitInput;
    } else {
      std::fwrite(json, 1, len, stdout);
    }
    fl_free(json);
  } else {
    result = Usage("rules takes list or show ID");
  }
  fl_ruleset_free(rs);
  return result;
}

// The number after `"key":` in s at or after pos (0 when absent).
double JsonNumber(std::string_view s, size_t pos, std::string_view key) {
  std::string k = "\"" + std::string(key) + "\":";
  size_t at = s.find(k, pos);
  return at == std::string_view::npos ? 0 : std::strtod(s.data() + at + k.size(), nullptr);
}

// bench --costs: each signal's added cost on a sample of the inputs,
// costliest first (fl_ruleset_signal_costs_json).
int PrintSignalCosts(fl_ruleset* rs, const Args& a) {
  std::vector<const char*> paths(a.positional.begin(), a.positional.end());
  char* json = nullptr;
  size_t len = 0;
  fl_error* err = nullptr;
  if (fl_ruleset_signal_costs_json(rs, paths.data(), paths.size(), a.sample_bytes, &json, &len, &err) != FL_OK) {
    std::fprintf(stderr, "faultline: bench --costs: %s\n", err ? fl_error_message(err) : "failed");
    fl_error_free(err);
    return kExitInput;
  }
  std::string_view s(json, len);
  std::printf("signal costs on a %.1f MB sample (full database %.3f s/GB; CPU, best of 3), costliest first:\n"
              "  %10s  %9s  %12s  %-10s  %s\n",
              JsonNumber(s, 0, "sample_bytes") / 1e6, JsonNumber(s, 0, "full_s_per_gb"), "alone s/GB",
              "lines", "RE2 us/line", "role", "signal");
  constexpr std::string_view kSig = "{\"signal\":\"";
  for (size_t p = s.find(kSig); p != std::string_view::npos; p = s.find(kSig, p + 1)) {
    size_t q = s.find('"', p + kSig.size());
    size_t r = s.find("\"role\":\"", p);
    if (q == std::string_view::npos || r == std::string_view::npos) break;
    size_t re = s.find('"', r + 8);
    std::printf("  %10.4f  %9.0f  %12.3f  %-10.*s  %.*s\n", JsonNumber(s, p, "alone_s_per_gb"),
                JsonNumber(s, p, "lines"), JsonNumber(s, p, "confirm_us_per_line"),
                static_cast<int>(re - r - 8), s.data() + r + 8, static_cast<int>(q - p - kSig.size()),
                s.data() + p + kSig.size());
  }
  fl_free(json);
  return kExitOk;
}

int CmdBench(int argc, char** argv) {
  Args a;
  if (int rc = ParseArgs(argc, argv, 2, a); rc >= 0) return rc;
  if (a.positional.empty()) return Usage("bench needs at least one PATH");
  fl_ruleset* rs = LoadRules(a.rules);
  if (!rs) return kExitInput;
  bool input_errors = false;
  auto t0 = std::chrono::steady_clock::now();
  fl_report* r = RunSession(rs, a, &input_errors);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!r) {
    fl_ruleset_free(rs);
    return kExitInput;
  }
  fl_report_totals t;
  t.size = sizeof t;
  fl_report_totals_get(r, &t);
  unsigned threads = a.threads ? a.threads : static_cast<unsigned>(sysconf(_SC_NPROCESSORS_ONLN));
  std::printf("bytes:    %llu\nlines:    %llu\nseconds:  %.3f\nGB/s:     %.3f\nthreads:  %u\nmatches:  %llu\n",
              static_cast<unsigned long long>(t.bytes), static_cast<unsigned long long>(t.lines), secs,
              secs > 0 ? static_cast<double>(t.bytes) / secs / 1e9 : 0.0, threads,
              static_cast<unsigned long long>(t.matches));
  const char* hits = nullptr;
  size_t len = 0;
  fl_report_signal_hits_json(r, &hits, &len);
  std::printf("signal hits (most first):\n");
  std::vector<std::pair<unsigned long long, std::string>> rows;
  std::string_view h(hits, len);
  size_t p = 0;
  while ((p = h.find('"', p)) != std::string_view::npos) {
    size_t q = h.find('"', p + 1);
    if (q == std::string_view::npos) break;
    std::string name(h.substr(p + 1, q - p - 1));
    unsigned long long n = std::strtoull(h.data() + q + 2, nullptr, 10);
    rows.emplace_back(n, name);
    p = q + 1;
  }
  std::sort(rows.begin(), rows.end(), [](auto& x, auto& y) { return x.first > y.first; });
  for (auto& [n, name] : rows) std::printf("  %12llu  %s\n", n, name.c_str());
  if (input_errors) PrintInputErrors(r);
  fl_report_free(r);
  int rc = input_errors ? kExitInput : kExitOk;
  if (a.costs && PrintSignalCosts(rs, a) != kExitOk) rc = kExitInput;
  fl_ruleset_free(rs);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage(nullptr);
  std::string_view cmd = argv[1];
  if (cmd == "--version" || cmd == "version") {
    std::printf("faultline %s\n", fl_version_string());
    return kExitOk;
  }
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  if (cmd == "diagnose") return CmdDiagnose(argc, argv);
  if (cmd == "scan") return CmdScan(argc, argv);
  if (cmd == "compile") return CmdCompile(argc, argv);
  if (cmd == "rules") return CmdRules(argc, argv);
  if (cmd == "bench") return CmdBench(argc, argv);
  return Usage(("unknown command " + std::string(cmd)).c_str());
}
