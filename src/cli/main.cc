// The faultline command (docs/cli.md), built on the public C ABI only.
// Exit status: 0 success, 1 usage error, 2 input or ruleset error with a
// one-line message naming the file; with diagnose --exit-code, 3 when an
// incident was found.
#include <fcntl.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/args.h"
#include "cli/watch.h"
#include "faultline/faultline.h"
#include "util/utf8.h"

extern char** environ;

namespace {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 1;
constexpr int kExitInput = 2;
constexpr int kExitIncident = 3;  // diagnose --exit-code: an incident was found

const char kUsage[] =
    "usage:\n"
    "  faultline diagnose [--json] [--rules PATH] [--threads N]\n"
    "                     [--job-start TIME] [--job-end TIME]\n"
    "                     [--clock-offset HOST=SECONDS]... [--tz ZONE]\n"
    "                     [--prior-bundle FILE]...\n"
    "                     [-o FILE] [--html FILE] [--exit-code [-q]] PATH...\n"
    "  faultline scan (--json | --bundle FILE) [--rules PATH] [--threads N]\n"
    "                 [--clock-offset HOST=SECONDS]... [--tz ZONE] [-o FILE] PATH...\n"
    "  faultline watch [--json] [--rules PATH] [--interval DURATION] [--poll DURATION]\n"
    "                  [--window SIZE] [--job-per-path] [--exit-code] PATH...\n"
    "  faultline compile SRC_DIR -o OUT.flrules\n"
    "  faultline rules list [--json] [--rules PATH]\n"
    "  faultline rules show ID [--json] [--rules PATH]\n"
    "  faultline bench [--rules PATH] [--threads N] [--runs N] [--warmup N] [--json]\n"
    "                  [--peers DIR] [--costs [--sample-mb N]] PATH...\n"
    "  faultline --version\n"
    "  faultline COMMAND --help\n";

// One option of a command. Every option has a long form (--name VALUE or
// --name=VALUE); some also a letter (-x VALUE or -xVALUE). --help prints
// `help` as its one line.
struct Option {
  const char* name;
  char letter;        // 0: none
  const char* value;  // the value's placeholder; nullptr for a flag
  const char* help;
};

constexpr Option kHelpOption{"help", 'h', nullptr, "print this help and exit"};
constexpr Option kRulesOption{
    "rules", 0, "PATH",
    "a compiled .flrules file or a rule source directory (default: the embedded ruleset)"};
constexpr Option kThreadsOption{"threads", 'j', "N",
                                "scan threads, 1 to 1024 (default: one per core)"};

constexpr Option kClockOffsetOption{"clock-offset", 0, "HOST=SECONDS",
    "add SECONDS to HOST's timestamps, e.g. node017=-42.5 (repeatable)"};
constexpr Option kTzOption{"tz", 0, "ZONE",
                           "zone of timestamps that name none: UTC, +05:30, Etc/GMT+8 (default: UTC)"};
constexpr Option kMaxSourceBytesOption{"max-source-bytes", 0, "N",
    "read at most N bytes of log per source (K/M/G/T suffixes); past it, an input error"};
constexpr Option kMaxDecompressedBytesOption{"max-decompressed-bytes", 0, "N",
    "a .gz/.zst source may decompress to at most N bytes (default 1T); past it, an input error"};
constexpr Option kTimeBudgetOption{"time-budget", 0, "SECONDS",
    "stop reading inputs after SECONDS of wall clock; what was not read is an input error"};

// The retry policy (fl_session_options; docs/cli.md, "Actions").
constexpr Option kMaxRestartsPerRuleOption{"max-restarts-per-rule", 0, "N",
    "restarts one root cause (rule) may use within --restart-window before its action is stop (default 3)"};
constexpr Option kMaxRestartsPerHostOption{"max-restarts-per-host", 0, "N",
    "restarts after failures on one host within --restart-window before its action is stop (default 3)"};
constexpr Option kRestartWindowOption{"restart-window", 0, "DURATION",
    "how far back earlier attempts count against the restart limits, 1s to 10000h (default 24h; s, m, h)"};

// How the job ended, when the caller knows (fl_session_options; docs/cli.md,
// "How the job ended").
constexpr Option kJobStateOption{"job-state", 0, "STATE",
    "how the job ended: completed, failed, timeout, cancelled, oom, node_fail, preempted, running "
    "(the process was alive when the logs were taken), or Slurm's State name (COMPLETED, OUT_OF_MEMORY, ...)"};
constexpr Option kJobExitStatusOption{"job-exit-status", 0, "N",
    "the job's exit status, 0 to 255, or a negative signal number (-9: killed by SIGKILL)"};

constexpr Option kDiagnoseOptions[] = {
    {"json", 0, nullptr, "print the report as JSON (schema/report.schema.json) instead of text"},
    kRulesOption,
    kThreadsOption,
    {"job-start", 0, "TIME",
     "job start, RFC 3339 or epoch seconds (default: derived from the logs)"},
    {"job-end", 0, "TIME", "job end, RFC 3339 or epoch seconds (default: derived from the logs)"},
    kJobStateOption,
    kJobExitStatusOption,
    kClockOffsetOption,
    kTzOption,
    kMaxSourceBytesOption,
    kMaxDecompressedBytesOption,
    kTimeBudgetOption,
    kMaxRestartsPerRuleOption,
    kMaxRestartsPerHostOption,
    kRestartWindowOption,
    {"output", 'o', "FILE", "write the report to FILE instead of standard output"},
    {"html", 0, "FILE",
     "also write the report as one self-contained HTML page to FILE ('-': standard output, "
     "in place of the text report)"},
    {"prior-bundle", 0, "FILE",
     "an earlier attempt of the job, as `scan --bundle` wrote it: the report compares the attempts "
     "(repeatable, oldest first; at most 16 of 64 MiB each)"},
    {"exit-code", 0, nullptr,
     "exit 3 when an incident was found, 0 when none (scripts; see below)"},
    {"quiet", 'q', nullptr,
     "print no report on standard output (with --exit-code: the status answers)"},
    kHelpOption,
};
constexpr Option kScanOptions[] = {
    {"json", 0, nullptr, "print the evidence as JSON lines (required: the only format)"},
    kRulesOption,
    kThreadsOption,
    kClockOffsetOption,
    kTzOption,
    kMaxSourceBytesOption,
    kMaxDecompressedBytesOption,
    kTimeBudgetOption,
    {"output", 'o', "FILE", "write the evidence to FILE instead of standard output"},
    {"bundle", 0, "FILE",
     "write the evidence as a bundle to FILE instead (for diagnose --prior-bundle of a later attempt)"},
    kHelpOption,
};
constexpr Option kWatchOptions[] = {
    {"json", 0, nullptr,
     "print NDJSON: one object per incident event, and the final report object at exit"},
    kRulesOption,
    {"threads", 'j', "N",
     "scan threads per session, 1 to 1024 (default 1: lines arrive a little at a time)"},
    {"interval", 0, "DURATION",
     "re-correlate each job at most this often, 10ms to 1h (default 2s; ms, s, m, h)"},
    {"poll", 0, "DURATION",
     "look at the inputs at least this often, 10ms to 1h (default 1s; inotify wakes sooner)"},
    {"window", 0, "SIZE",
     "bytes of input a job's diagnosis remembers, 64K to 64G (default 256M; K, M, G)"},
    {"job-per-path", 0, nullptr, "one job per PATH operand (default: one job for all of them)"},
    {"no-inotify", 0, nullptr, "do not use inotify: find changes by polling only"},
    {"job-start", 0, "TIME",
     "job start, RFC 3339 or epoch seconds (default: derived from the logs)"},
    {"job-end", 0, "TIME", "job end, RFC 3339 or epoch seconds (default: derived from the logs)"},
    kJobStateOption,
    kJobExitStatusOption,
    kClockOffsetOption,
    kTzOption,
    kMaxRestartsPerRuleOption,
    kMaxRestartsPerHostOption,
    kRestartWindowOption,
    {"exit-code", 0, nullptr, "exit 3 when an incident formed, 0 when none (2 still wins)"},
    kHelpOption,
};
constexpr Option kCompileOptions[] = {
    {"output", 'o', "FILE", "the compiled ruleset to write (required; written atomically)"},
    kHelpOption,
};
constexpr Option kRulesListOptions[] = {
    {"json", 0, nullptr, "print a JSON array of rule summaries instead of a table"},
    kRulesOption,
    kHelpOption,
};
constexpr Option kRulesShowOptions[] = {
    {"json", 0, nullptr, "print the rule's full entry as JSON instead of text"},
    kRulesOption,
    kHelpOption,
};
constexpr Option kBenchOptions[] = {
    kRulesOption,
    kThreadsOption,
    {"runs", 0, "N", "timed runs, 1 to 1000 (default 1): min, median and max are reported"},
    {"warmup", 0, "N", "untimed runs first, 0 to 1000 (default 0), e.g. to fill the page cache"},
    {"json", 0, nullptr, "print one JSON object (docs/cli.md) instead of text"},
    {"peers", 0, "DIR",
     "also time rg, grep -E (DIR/patterns.{rg,ere}.txt) and fl_hs_raw on the same inputs"},
    {"costs", 0, nullptr,
     "add each signal's cost on a sample: Hyperscan alone, matched lines, confirm + extract"},
    {"sample-mb", 0, "N", "--costs sample size in MiB, decompressed, 1 to 65536 (default 32)"},
    kHelpOption,
};

struct Command {
  const char* name;      // as typed after `faultline`
  const char* operands;  // after the options in the synopsis
  const char* about;     // one line
  std::span<const Option> options;
  const char* notes;  // printed after the options; may be empty
};

const Command kDiagnose{
    "diagnose", "PATH...",
    "Diagnose a job's logs: the initiating failure apart from its collateral.", kDiagnoseOptions,
    "PATH: a file, a directory (recursive), a .gz or .zst file, or - for standard input.\n"
    "exit status: 0 success, 1 usage error, 2 input or ruleset error (the others are still\n"
    "diagnosed); with --exit-code, 0 means no incident and 3 an incident (2 still wins).\n"};
const Command kScan{"scan", "(--json | --bundle FILE) PATH...",
                    "Print the evidence records as JSON lines, in source then offset order.",
                    kScanOptions, ""};
const Command kWatch{
    "watch", "PATH...",
    "Follow logs as they are written and print each incident when it forms or changes.",
    kWatchOptions,
    "PATH: a file (followed by name across rotation and truncation), a directory (recursive;\n"
    "new files are picked up), a .gz or .zst file (read once), or - for standard input.\n"
    "Runs until SIGINT or SIGTERM (or the end of standard input when it is the only PATH),\n"
    "then prints the final report of each job. Text shows one block per incident event;\n"
    "--json prints {\"event\":\"formed\"|\"changed\",\"id\":...} lines and a last\n"
    "{\"event\":\"report\",...,\"report\":{...}} line per job (docs/cli.md).\n"
    "exit status: 0 after a signal or the end of input, 1 usage error, 2 an input could not\n"
    "be read (the others are still followed); with --exit-code, 3 when an incident formed.\n"};
const Command kCompile{"compile", "SRC_DIR -o OUT.flrules",
                       "Compile a rule source directory; errors name the file, rule and field.",
                       kCompileOptions, ""};
const Command kRulesList{"rules list", "", "List the rules: id, layer, title.", kRulesListOptions,
                         ""};
const Command kRulesShow{"rules show", "ID",
                         "Show one rule's full entry (faultline rules list gives the ids).",
                         kRulesShowOptions, ""};
const Command kBench{
    "bench", "PATH...",
    "Scan throughput and per-signal hit counts, with the peers side by side if asked.",
    kBenchOptions,
    "--peers DIR: DIR holds the ruleset's patterns converted by bench/export_patterns.py\n"
    "(bench/peers.sh writes them). rg and grep -E run with them as commands, timed like\n"
    "hyperfine times them; so does fl_hs_raw (raw Hyperscan, the ceiling) when found next to\n"
    "faultline, in the build tree's bench/ or on PATH. A peer that is missing or cannot read\n"
    "the inputs (grep and fl_hs_raw: .gz/.zst) is named, not run. The full peer harness,\n"
    "with Python re and memory: bench/peers.sh.\n"};
const Command* const kCommands[] = {&kDiagnose,  &kScan,      &kWatch, &kCompile,
                                    &kRulesList, &kRulesShow, &kBench};

void PrintHelp(const Command& c, FILE* f) {
  std::fprintf(f, "usage: faultline %s [OPTION]...%s%s\n%s\n\noptions:\n", c.name,
               *c.operands ? " " : "", c.operands, c.about);
  for (const Option& o : c.options) {
    std::string left = o.letter ? std::string("  -") + o.letter + ", --" : std::string("      --");
    left += o.name;
    if (o.value) left.append(" ").append(o.value);
    std::fprintf(f, "%-34s %s\n", left.c_str(), o.help);
  }
  if (*c.notes) std::fprintf(f, "\n%s", c.notes);
}

void PrintMainHelp(FILE* f) {
  std::fputs(kUsage, f);
  std::fputs("\ncommands:\n", f);
  for (const Command* c : kCommands) std::fprintf(f, "  %-12s %s\n", c->name, c->about);
  std::fputs(
      "\n`faultline COMMAND --help` lists the options of COMMAND (one line each); every option\n"
      "takes its value as --opt VALUE or --opt=VALUE; -j N is --threads N.\n"
      "exit status: 0 success, 1 usage error, 2 input or ruleset error;\n"
      "diagnose --exit-code: 3 when an incident was found.\n",
      f);
}

int Usage(const char* msg) {
  if (msg) std::fprintf(stderr, "faultline: %s\n", msg);
  std::fputs(kUsage, stderr);
  return kExitUsage;
}

// A usage error of one command: the message and where to look.
int CommandUsage(const Command& c, const std::string& msg) {
  std::fprintf(stderr, "faultline %s: %s\nTry 'faultline %s --help'.\n", c.name, msg.c_str(),
               c.name);
  return kExitUsage;
}

struct Args {
  bool json = false;
  const char* rules = nullptr;
  unsigned threads = 0;
  int64_t job_start = FL_TIME_UNSET, job_end = FL_TIME_UNSET;
  int32_t job_state = FL_JOB_UNKNOWN;
  int32_t job_exit_status = FL_EXIT_STATUS_UNSET;
  std::vector<std::string> offset_hosts;
  std::vector<double> offset_secs;
  const char* tz = nullptr;
  const char* out = nullptr;
  const char* html = nullptr;   // diagnose: the HTML page's file, "-" for stdout
  bool exit_code = false;       // diagnose: 3 when an incident was found
  bool quiet = false;           // diagnose: no report
  unsigned runs = 1;            // bench
  unsigned warmup = 0;          // bench
  const char* peers = nullptr;  // bench: the directory of exported patterns
  bool costs = false;           // bench: each signal's added cost
  bool sample_mb_given = false;
  uint64_t sample_bytes = 32ull << 20;
  double interval_s = 2.0;                // watch
  double poll_s = 1.0;                    // watch
  uint64_t window_bytes = 256ull << 20;   // watch
  bool job_per_path = false;              // watch
  bool no_inotify = false;                // watch
  uint64_t max_source_bytes = 0;        // 0: no limit
  uint64_t max_decompressed_bytes = 0;  // 0: the library's default
  double time_budget_s = 0;             // 0: none
  uint32_t max_restarts_per_rule = 0;   // 0: the library's default
  uint32_t max_restarts_per_host = 0;
  double restart_window_s = 0;
  std::vector<const char*> prior_bundles;  // diagnose: earlier attempts, oldest first
  const char* bundle = nullptr;            // scan: write a bundle here
  std::vector<const char*> positional;
};

// A whole number in [lo, hi] and nothing else.
bool WholeNumber(const char* v, long lo, long hi, long* n) {
  char* end = nullptr;
  *n = std::strtol(v, &end, 10);
  return end != v && !*end && *n >= lo && *n <= hi;
}

// Sets what option `o` (written `as`, value v or nullptr) asks for; returns
// -1, or the exit status of a bad value.
int Apply(const Command& c, const Option& o, const std::string& as, const char* v, Args& a) {
  std::string_view name = o.name;
  long n = 0;
  auto number = [&](long lo, long hi) {
    if (WholeNumber(v, lo, hi, &n)) return true;
    CommandUsage(c,
                 as + " takes a number from " + std::to_string(lo) + " to " + std::to_string(hi));
    return false;
  };
  if (name == "json") {
    a.json = true;
  } else if (name == "rules") {
    a.rules = v;
  } else if (name == "threads") {
    if (!number(1, 1024)) return kExitUsage;
    a.threads = static_cast<unsigned>(n);
  } else if (name == "job-start" || name == "job-end") {
    int64_t t;
    if (fl_time_parse(v, &t) != FL_OK) {
      return CommandUsage(c, as + ": '" + v + "' is not an RFC 3339 time or epoch seconds");
    }
    (name == "job-start" ? a.job_start : a.job_end) = t;
  } else if (name == "job-state") {
    if (!faultline::cli::ParseJobState(v, &a.job_state)) {
      return CommandUsage(c, as + ": '" + v +
                                 "' is not a job state (completed, failed, timeout, cancelled, oom, node_fail, "
                                 "preempted, running, or Slurm's COMPLETED, FAILED, TIMEOUT, CANCELLED, "
                                 "OUT_OF_MEMORY, NODE_FAIL, PREEMPTED, RUNNING)");
    }
  } else if (name == "job-exit-status") {
    if (!WholeNumber(v, -64, 255, &n)) {
      return CommandUsage(c, as + ": '" + v + "' is not an exit status (0 to 255) nor a negative signal number (-1 to -64)");
    }
    a.job_exit_status = static_cast<int32_t>(n);
  } else if (name == "clock-offset") {
    std::string host;
    double secs = 0;
    if (!faultline::cli::ParseClockOffset(v, &host, &secs)) {
      return CommandUsage(c, as + " takes HOST=SECONDS, e.g. node017=-42.5");
    }
    a.offset_hosts.push_back(std::move(host));
    a.offset_secs.push_back(secs);
  } else if (name == "tz") {
    a.tz = v;
  } else if (name == "max-source-bytes" || name == "max-decompressed-bytes") {
    if (!faultline::cli::ParseByteSize(v, name == "max-source-bytes" ? &a.max_source_bytes
                                                                      : &a.max_decompressed_bytes)) {
      return CommandUsage(c, as + " takes a number of bytes from 1, with an optional K, M, G or T, e.g. 500M");
    }
  } else if (name == "time-budget") {
    if (!faultline::cli::ParseSeconds(v, &a.time_budget_s)) {
      return CommandUsage(c, as + " takes a number of seconds above 0, e.g. 30 or 0.5");
    }
  } else if (name == "max-restarts-per-rule" || name == "max-restarts-per-host") {
    if (!number(1, 1000000)) return kExitUsage;
    (name == "max-restarts-per-rule" ? a.max_restarts_per_rule : a.max_restarts_per_host) =
        static_cast<uint32_t>(n);
  } else if (name == "restart-window") {
    if (!faultline::cli::ParseDuration(v, 1, 36'000'000, &a.restart_window_s)) {
      return CommandUsage(c, as + " takes a duration from 1s to 10000h, e.g. 24h, 90m");
    }
  } else if (name == "output") {
    a.out = v;
  } else if (name == "html") {
    a.html = v;
  } else if (name == "prior-bundle") {
    a.prior_bundles.push_back(v);
  } else if (name == "bundle") {
    a.bundle = v;
  } else if (name == "exit-code") {
    a.exit_code = true;
  } else if (name == "quiet") {
    a.quiet = true;
  } else if (name == "runs") {
    if (!number(1, 1000)) return kExitUsage;
    a.runs = static_cast<unsigned>(n);
  } else if (name == "warmup") {
    if (!number(0, 1000)) return kExitUsage;
    a.warmup = static_cast<unsigned>(n);
  } else if (name == "peers") {
    a.peers = v;
  } else if (name == "costs") {
    a.costs = true;
  } else if (name == "interval" || name == "poll") {
    double secs = 0;
    if (!faultline::cli::ParseDuration(v, 0.01, 3600, &secs)) {
      return CommandUsage(c, as + " takes a duration from 10ms to 1h, e.g. 500ms, 2s, 1m");
    }
    (name == "interval" ? a.interval_s : a.poll_s) = secs;
  } else if (name == "window") {
    if (!faultline::cli::ParseSize(v, uint64_t{64} << 10, uint64_t{64} << 30, &a.window_bytes)) {
      return CommandUsage(c, as + " takes a size from 64K to 64G, e.g. 256M");
    }
  } else if (name == "job-per-path") {
    a.job_per_path = true;
  } else if (name == "no-inotify") {
    a.no_inotify = true;
  } else if (name == "sample-mb") {
    if (!number(1, 65536)) return kExitUsage;
    a.sample_bytes = static_cast<uint64_t>(n) << 20;
    a.sample_mb_given = true;
  }
  return -1;
}

const Option* FindOption(const Command& c, std::string_view name, char letter) {
  for (const Option& o : c.options) {
    if (letter ? o.letter == letter : name == o.name) return &o;
  }
  return nullptr;
}

// Parses the options of command c from argv[start]; operands go to
// a.positional. Returns -1 to go on, else the exit status (0 after --help).
int ParseArgs(const Command& c, int argc, char** argv, int start, Args& a) {
  for (int i = start; i < argc && std::string_view(argv[i]) != "--"; ++i) {
    if (std::string_view(argv[i]) == "--help" || std::string_view(argv[i]) == "-h") {
      PrintHelp(c, stdout);
      return kExitOk;
    }
  }
  bool operands_only = false;
  for (int i = start; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (operands_only || arg.size() < 2 || arg[0] != '-') {
      a.positional.push_back(argv[i]);  // includes "-", standard input
      continue;
    }
    if (arg == "--") {
      operands_only = true;
      continue;
    }
    const Option* o = nullptr;
    std::string as;
    const char* attached = nullptr;  // --opt=VALUE, -xVALUE
    if (arg.starts_with("--")) {
      size_t eq = arg.find('=');
      std::string_view name =
          arg.substr(2, eq == std::string_view::npos ? std::string_view::npos : eq - 2);
      o = FindOption(c, name, 0);
      as = "--" + std::string(name);
      if (eq != std::string_view::npos) attached = argv[i] + eq + 1;
    } else {
      o = FindOption(c, {}, arg[1]);
      as = std::string(arg.substr(0, 2));
      if (arg.size() > 2) attached = argv[i] + 2;
    }
    if (!o) {
      for (const Command* other : kCommands) {
        if (other == &c) continue;
        const Option* there = as.starts_with("--") ? FindOption(*other, as.substr(2), 0) : nullptr;
        if (there)
          return CommandUsage(c, as + " is an option of " + other->name + ", not " + c.name);
      }
      return CommandUsage(c, "unknown option " + std::string(arg));
    }
    const char* v = nullptr;
    if (!o->value) {
      if (attached) return CommandUsage(c, as + " takes no value");
    } else if (attached) {
      v = attached;
    } else if (i + 1 < argc) {
      v = argv[++i];
    } else {
      return CommandUsage(c, as + " needs a value (" + o->value + ")");
    }
    if (int rc = Apply(c, *o, as, v, a); rc >= 0) return rc;
  }
  if (a.sample_mb_given && !a.costs)
    return CommandUsage(c, "--sample-mb sizes the --costs sample: add --costs");
  return -1;
}

fl_ruleset* LoadRules(const char* path) {
  fl_ruleset* rs = nullptr;
  fl_error* err = nullptr;
  fl_status rc = path ? fl_ruleset_load_file(&rs, path, &err) : fl_ruleset_load_default(&rs, &err);
  if (rc != FL_OK) {
    std::fprintf(stderr, "faultline: %s\n", faultline::EscapeControls(fl_error_message(err)).c_str());
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

void SetRetryPolicy(const Args& a, fl_session_options& o) {
  o.max_restarts_per_rule = a.max_restarts_per_rule;
  o.max_restarts_per_host = a.max_restarts_per_host;
  o.restart_window_s = a.restart_window_s;
}

// A session over the paths, or nullptr after saying why; sets
// *input_errors when a path was refused.
fl_session* OpenSession(const fl_ruleset* rs, const Args& a, bool tty, bool* input_errors) {
  fl_session_options opts;
  fl_session_options_init(&opts, sizeof opts);
  opts.threads = a.threads;
  opts.job_start_us = a.job_start;
  opts.job_end_us = a.job_end;
  opts.job_state = a.job_state;
  opts.job_exit_status = a.job_exit_status;
  std::vector<fl_clock_offset> offsets;
  for (size_t i = 0; i < a.offset_hosts.size(); ++i) {
    offsets.push_back({a.offset_hosts[i].c_str(), a.offset_secs[i]});
  }
  opts.clock_offsets = offsets.data();
  opts.clock_offset_count = offsets.size();
  opts.tz = a.tz;
  opts.max_source_bytes = a.max_source_bytes;
  opts.max_decompressed_bytes = a.max_decompressed_bytes;
  opts.time_budget_s = a.time_budget_s;
  SetRetryPolicy(a, opts);
  if (tty) opts.on_progress = Progress;
  fl_session* s = nullptr;
  fl_error* err = nullptr;
  if (fl_session_new(&s, rs, &opts, &err) != FL_OK) {
    std::fprintf(stderr, "faultline: %s\n", faultline::EscapeControls(fl_error_message(err)).c_str());
    fl_error_free(err);
    return nullptr;
  }
  // A path that does not exist is an input error (exit 2); the report lists
  // it with the others, so only other refusals are printed here.
  for (const char* p : a.positional) {
    fl_status rc = fl_session_add_path(s, p);
    if (rc == FL_OK) continue;
    if (rc != FL_ERR_NOT_FOUND) {
      std::fprintf(stderr, "faultline: %s: %s\n", faultline::EscapeControls(p).c_str(),
                   faultline::EscapeControls(fl_session_last_error(s)).c_str());
    }
    *input_errors = true;
  }
  return s;
}

// Reads each prior bundle FILE into the session; false after saying why
// (a file over the bound is refused before it is read).
bool AddPriorBundles(fl_session* s, const Args& a) {
  for (const char* path : a.prior_bundles) {
    const std::string name = faultline::EscapeControls(path);
    struct stat st {};
    if (stat(path, &st) != 0) {
      std::fprintf(stderr, "faultline: --prior-bundle %s: %s\n", name.c_str(), std::strerror(errno));
      return false;
    }
    if (static_cast<uint64_t>(st.st_size) > FL_MAX_PRIOR_BUNDLE_BYTES) {
      std::fprintf(stderr,
                   "faultline: --prior-bundle %s: %lld bytes, over the %u-byte (64 MiB) bound on a prior bundle\n",
                   name.c_str(), static_cast<long long>(st.st_size), FL_MAX_PRIOR_BUNDLE_BYTES);
      return false;
    }
    std::ifstream in(path, std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      std::fprintf(stderr, "faultline: --prior-bundle %s: cannot read it\n", name.c_str());
      return false;
    }
    if (fl_session_add_prior_bundle(s, data.data(), data.size()) != FL_OK) {
      std::fprintf(stderr, "faultline: --prior-bundle %s: %s\n", name.c_str(),
                   faultline::EscapeControls(fl_session_last_error(s)).c_str());
      return false;
    }
  }
  return true;
}

// What a one-shot command holds to its end -- a finished session's scan
// state (every source's lines and evidence), the report, the ruleset's
// Hyperscan database and RE2 objects -- is left for the process's exit to
// return at once instead of being freed object by object, serial work after
// the scan (bench/README.md, "the serial part of a run"). The pointers stay
// listed here, never freed, so that a leak checker (LeakSanitizer) finds
// them reachable.
struct LeftToExit {
  std::vector<fl_session*> sessions;
  std::vector<fl_report*> reports;
  std::vector<fl_ruleset*> rulesets;
};

LeftToExit& Left() {
  static LeftToExit* left = new LeftToExit;
  return *left;
}

void LeaveToExit(fl_session* s) {
  if (s) Left().sessions.push_back(s);
}
void LeaveToExit(fl_report* r) {
  if (r) Left().reports.push_back(r);
}
void LeaveToExit(fl_ruleset* rs) {
  if (rs) Left().rulesets.push_back(rs);
}

// Runs a session over the paths; returns the report (or nullptr) and sets
// *input_errors when some source could not be read. A finished session is
// freed, or with last_session left to the exit (LeftToExit).
fl_report* RunSession(const fl_ruleset* rs, const Args& a, bool* input_errors, bool last_session) {
  bool tty = isatty(2);
  fl_session* s = OpenSession(rs, a, tty, input_errors);
  if (!s) return nullptr;
  if (!AddPriorBundles(s, a)) {
    fl_session_free(s);
    return nullptr;
  }
  fl_report* r = nullptr;
  fl_status rc = fl_session_finish(s, &r);
  if (tty) std::fputs("\r\033[K", stderr);
  if (rc != FL_OK) {
    std::fprintf(stderr, "faultline: %s\n", faultline::EscapeControls(fl_session_last_error(s)).c_str());
    fl_session_free(s);
    return nullptr;
  }
  if (last_session) {
    LeaveToExit(s);
  } else {
    fl_session_free(s);
  }
  fl_report_totals t;
  t.size = sizeof t;
  fl_report_totals_get(r, &t);
  *input_errors = *input_errors || t.errors > 0;
  return r;
}

void PrintInputErrors(const fl_report* r) {
  // The report lists them too; stderr gets one line per source.
  for (size_t i = 0, n = fl_report_input_error_count(r); i < n; ++i) {
    fl_input_error_view e;
    e.size = sizeof e;
    // Messages name files; a newline in a name must not forge a line.
    if (fl_report_input_error(r, i, &e) == FL_OK) {
      std::fprintf(stderr, "faultline: %s\n", faultline::EscapeControls(e.message).c_str());
    }
  }
}

// Where the output goes: standard output, or the file -o names (opened
// before the scan, so a path that cannot be written fails at once).
class Output {
 public:
  // Returns false after printing why the file cannot be written.
  bool Open(const char* path) {
    if (!path) return true;
    path_ = path;
    file_ = std::fopen(path, "wb");
    if (!file_) {
      std::fprintf(stderr, "faultline: cannot write %s: %s\n", path, std::strerror(errno));
    }
    return file_ != nullptr;
  }
  ~Output() {
    if (file_) std::fclose(file_);
  }
  // Returns false after printing why the bytes could not be written.
  bool Write(const char* data, size_t len) {
    FILE* f = file_ ? file_ : stdout;
    bool ok = std::fwrite(data, 1, len, f) == len && std::fflush(f) == 0;
    if (!ok) {
      std::fprintf(stderr, "faultline: cannot write %s: %s\n", file_ ? path_ : "standard output",
                   std::strerror(errno));
    }
    return ok;
  }

 private:
  const char* path_ = nullptr;
  FILE* file_ = nullptr;
};

int CmdDiagnose(int argc, char** argv) {
  Args a;
  if (int rc = ParseArgs(kDiagnose, argc, argv, 2, a); rc >= 0) return rc;
  if (a.positional.empty()) return CommandUsage(kDiagnose, "needs at least one PATH");
  // The page on standard output takes the text report's place there.
  const bool html_stdout = a.html && std::string_view(a.html) == "-";
  if (html_stdout && a.json && !a.out) {
    return CommandUsage(kDiagnose, "--json and --html - both print to standard output: give one a file");
  }
  Output output, html_output;
  if (!output.Open(a.out)) return kExitInput;
  if (a.html && !html_stdout && !html_output.Open(a.html)) return kExitInput;
  fl_ruleset* rs = LoadRules(a.rules);
  if (!rs) return kExitInput;
  bool input_errors = false;
  fl_report* r = RunSession(rs, a, &input_errors, /*last_session=*/true);
  if (!r) {
    fl_ruleset_free(rs);
    return kExitInput;
  }
  const char* out = nullptr;
  size_t len = 0;
  if (a.json) {
    fl_report_json(r, &out, &len);
  } else {
    fl_report_text(r, &out, &len);
  }
  bool written = (a.quiet || html_stdout) && !a.out ? true : output.Write(out, len);
  if (a.html) {
    const char* page = nullptr;
    size_t page_len = 0;
    fl_status hrc = fl_report_html(r, &page, &page_len);
    if (hrc != FL_OK) {
      std::fprintf(stderr, "faultline: cannot build the HTML report: %s\n", fl_status_str(hrc));
      written = false;
    } else if (!(html_stdout && a.quiet)) {
      written = html_output.Write(page, page_len) && written;
    }
  }
  if (input_errors) PrintInputErrors(r);
  int rc = input_errors || !written ? kExitInput : kExitOk;
  // Opt-in, so that 0 keeps meaning success for every existing caller; an
  // input error (2) wins, as in grep: a diagnosis missing inputs may miss
  // the incident.
  if (rc == kExitOk && a.exit_code && fl_report_incident_count(r) > 0) rc = kExitIncident;
  LeaveToExit(r);
  LeaveToExit(rs);
  return rc;
}

// scan --bundle: the session's evidence as a bundle, its input errors in it.
int WriteBundle(const fl_ruleset* rs, const Args& a, Output& output) {
  bool input_errors = false;
  fl_session* s = OpenSession(rs, a, false, &input_errors);
  if (!s) return kExitInput;
  void* data = nullptr;
  size_t len = 0;
  fl_status rc = fl_session_export_bundle(s, &data, &len);
  if (rc != FL_OK) {
    std::fprintf(stderr, "faultline: %s\n", faultline::EscapeControls(fl_session_last_error(s)).c_str());
    fl_session_free(s);
    return kExitInput;
  }
  input_errors = input_errors || fl_session_error_count(s) > 0;
  fl_session_free(s);
  bool written = output.Write(static_cast<const char*>(data), len);
  fl_free(data);
  return input_errors || !written ? kExitInput : kExitOk;
}

int CmdScan(int argc, char** argv) {
  Args a;
  if (int rc = ParseArgs(kScan, argc, argv, 2, a); rc >= 0) return rc;
  if (!a.json && !a.bundle) return CommandUsage(kScan, "prints JSON lines or writes a bundle: pass --json or --bundle");
  if (a.json && a.bundle) return CommandUsage(kScan, "--json and --bundle: give one");
  if (a.positional.empty()) return CommandUsage(kScan, "needs at least one PATH");
  Output output;
  if (!output.Open(a.bundle ? a.bundle : a.out)) return kExitInput;
  fl_ruleset* rs = LoadRules(a.rules);
  if (!rs) return kExitInput;
  if (a.bundle) {
    int rc = WriteBundle(rs, a, output);
    fl_ruleset_free(rs);
    return rc;
  }
  bool input_errors = false;
  fl_report* r = RunSession(rs, a, &input_errors, /*last_session=*/true);
  if (!r) {
    fl_ruleset_free(rs);
    return kExitInput;
  }
  const char* out = nullptr;
  size_t len = 0;
  fl_report_evidence_jsonl(r, &out, &len);
  bool written = output.Write(out, len);
  if (input_errors) PrintInputErrors(r);
  LeaveToExit(r);
  LeaveToExit(rs);
  return input_errors || !written ? kExitInput : kExitOk;
}

int CmdWatch(int argc, char** argv) {
  Args a;
  if (int rc = ParseArgs(kWatch, argc, argv, 2, a); rc >= 0) return rc;
  if (a.positional.empty()) return CommandUsage(kWatch, "needs at least one PATH (- for standard input)");
  faultline::cli::WatchOptions w;
  for (const char* p : a.positional) w.paths.emplace_back(p);
  w.json = a.json;
  w.job_per_path = a.job_per_path;
  w.exit_code = a.exit_code;
  w.no_inotify = a.no_inotify;
  w.interval_s = a.interval_s;
  w.poll_s = a.poll_s;
  w.window_bytes = a.window_bytes;
  fl_session_options_init(&w.session, sizeof w.session);
  w.session.threads = a.threads ? a.threads : 1;  // lines arrive a little at a time
  w.session.job_start_us = a.job_start;
  w.session.job_end_us = a.job_end;
  w.session.job_state = a.job_state;
  w.session.job_exit_status = a.job_exit_status;
  std::vector<fl_clock_offset> offsets;
  for (size_t i = 0; i < a.offset_hosts.size(); ++i) {
    offsets.push_back({a.offset_hosts[i].c_str(), a.offset_secs[i]});
  }
  w.session.clock_offsets = offsets.data();
  w.session.clock_offset_count = offsets.size();
  w.session.tz = a.tz;
  SetRetryPolicy(a, w.session);
  // A zone or offset the library refuses is a usage error before any input.
  fl_session* probe = nullptr;
  fl_ruleset* rs = LoadRules(a.rules);
  if (!rs) return kExitInput;
  fl_error* err = nullptr;
  if (fl_session_new(&probe, rs, &w.session, &err) != FL_OK) {
    int rc = CommandUsage(kWatch, fl_error_message(err));
    fl_error_free(err);
    fl_ruleset_free(rs);
    return rc;
  }
  fl_session_free(probe);
  int rc = faultline::cli::RunWatch(rs, w);
  fl_ruleset_free(rs);
  return rc;
}

int CmdCompile(int argc, char** argv) {
  Args a;
  if (int rc = ParseArgs(kCompile, argc, argv, 2, a); rc >= 0) return rc;
  if (a.positional.size() != 1 || !a.out)
    return CommandUsage(kCompile, "takes SRC_DIR -o OUT.flrules");
  fl_error* err = nullptr;
  if (fl_ruleset_compile(a.positional[0], a.out, &err) != FL_OK) {
    std::fprintf(stderr, "faultline: %s\n", faultline::EscapeControls(fl_error_message(err)).c_str());
    fl_error_free(err);
    return kExitInput;
  }
  fl_ruleset* rs = LoadRules(a.out);
  if (!rs) return kExitInput;
  std::fprintf(stderr, "faultline: compiled %zu rules into %s\n", fl_ruleset_rule_count(rs), a.out);
  // Whether the file is signed, i.e. whether loading it will use its stored
  // pattern database or recompile it (and why not).
  std::fprintf(stderr, "faultline: %s: %s\n", a.out, fl_ruleset_load_info(rs));
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
  std::string_view sub = argc >= 3 ? argv[2] : "";
  if (sub == "--help" || sub == "-h") {
    PrintHelp(kRulesList, stdout);
    std::fputs("\n", stdout);
    PrintHelp(kRulesShow, stdout);
    return kExitOk;
  }
  if (sub != "list" && sub != "show") return Usage("rules takes list or show ID");
  const Command& cmd = sub == "list" ? kRulesList : kRulesShow;
  Args a;
  if (int rc = ParseArgs(cmd, argc, argv, 3, a); rc >= 0) return rc;
  if (sub == "list" && !a.positional.empty()) return CommandUsage(cmd, "takes no operand");
  if (sub == "show" && a.positional.size() != 1) return CommandUsage(cmd, "takes one rule ID");
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
        std::printf("%-40s %-14s %s\n", JsonField(obj, "id").c_str(),
                    JsonField(obj, "layer").c_str(), JsonField(obj, "title").c_str());
        pos = end;
      }
    }
    fl_free(json);
  } else {
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

// ---- bench ----------------------------------------------------------------

std::string Format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Format(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return std::string(buf, n < 0 ? 0 : std::min<size_t>(static_cast<size_t>(n), sizeof buf - 1));
}

// s as a JSON string literal.
std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    auto u = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out.append(1, '\\').append(1, ch);
    } else if (u < 0x20) {
      out += Format("\\u%04x", u);
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

struct Spread {
  double min = 0, median = 0, max = 0;
};

Spread SpreadOf(std::vector<double> v) {
  Spread s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  s.min = v.front();
  s.max = v.back();
  s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  return s;
}

double GBps(uint64_t bytes, double secs) {
  return secs > 0 ? static_cast<double>(bytes) / secs / 1e9 : 0;
}

// {"min":..,"median":..,"max":..,"all":[every run]}
std::string SecondsJson(const std::vector<double>& v) {
  Spread s = SpreadOf(v);
  std::string out =
      Format("{\"min\":%.6f,\"median\":%.6f,\"max\":%.6f,\"all\":[", s.min, s.median, s.max);
  for (size_t i = 0; i < v.size(); ++i) out += Format("%s%.6f", i ? "," : "", v[i]);
  return out + "]}";
}

// The rates of the slowest, the median and the fastest run.
std::string RateJson(uint64_t bytes, const std::vector<double>& v) {
  Spread s = SpreadOf(v);
  return Format("{\"min\":%.6g,\"median\":%.6g,\"max\":%.6g}", GBps(bytes, s.max),
                GBps(bytes, s.median), GBps(bytes, s.min));
}

double Seconds(const timeval& t) {
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
}

// User + system CPU seconds of this process so far (every thread).
double ProcessCpu() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return Seconds(ru.ru_utime) + Seconds(ru.ru_stime);
}

// A command run to completion with its output captured.
struct Ran {
  bool started = false;
  int status = -1;  // exit status; -1 when a signal ended it
  double wall = 0, cpu = 0;
  std::string out, err;
};

std::string ReadBack(FILE* f) {
  std::string s;
  std::rewind(f);
  char buf[65536];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) s.append(buf, n);
  std::fclose(f);
  return s;
}

// Runs argv (looked up on PATH) with standard input from /dev/null and its
// output in temporary files; times it as hyperfine does: the whole command,
// wall clock, and the child's user + system CPU time.
Ran RunCommand(const std::vector<std::string>& argv) {
  Ran r;
  FILE* out = std::tmpfile();
  FILE* err = std::tmpfile();
  if (!out || !err) {
    r.err = "cannot create a temporary file";
    if (out) std::fclose(out);
    if (err) std::fclose(err);
    return r;
  }
  std::vector<char*> args;
  for (const std::string& s : argv) args.push_back(const_cast<char*>(s.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, fileno(out), 1);
  posix_spawn_file_actions_adddup2(&fa, fileno(err), 2);
  pid_t pid = 0;
  auto t0 = std::chrono::steady_clock::now();
  int e = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (e == 0) {
    int status = 0;
    rusage ru{};
    while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
    }
    r.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.cpu = Seconds(ru.ru_utime) + Seconds(ru.ru_stime);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.started = true;
  }
  r.out = ReadBack(out);
  r.err = e == 0 ? ReadBack(err) : (std::fclose(err), std::string(std::strerror(e)));
  return r;
}

// The executable `name` in a directory of PATH, or "".
std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string_view rest = path ? path : "";
  while (!rest.empty()) {
    size_t colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    std::string full = (dir.empty() ? "." : dir) + "/" + name;
    if (access(full.c_str(), X_OK) == 0 && !std::filesystem::is_directory(full)) return full;
  }
  return "";
}

// fl_hs_raw (bench/hs_raw.cc): next to this binary, in the build tree's
// bench/ (build/src/cli/faultline, build/bench/fl_hs_raw), or on PATH.
std::string FindHsRaw() {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const auto& p :
         {self.parent_path() / "fl_hs_raw", self.parent_path() / "../../bench/fl_hs_raw"}) {
      if (access(p.c_str(), X_OK) == 0) return p.lexically_normal().string();
    }
  }
  return FindOnPath("fl_hs_raw");
}

bool IsCompressedName(const std::string& name) {
  auto ends = [&](std::string_view ext) {
    return name.size() >= ext.size() &&
           std::equal(ext.rbegin(), ext.rend(), name.rbegin(),
                      [](char x, char y) { return x == std::tolower(y); });
  };
  return ends(".gz") || ends(".zst");
}

// Whether any file the paths stand for is compressed (grep and fl_hs_raw
// would read it as bytes).
bool AnyCompressed(const std::vector<const char*>& paths) {
  for (const char* p : paths) {
    if (IsCompressedName(p)) return true;
    std::error_code ec;
    if (!std::filesystem::is_directory(p, ec)) continue;
    for (auto it = std::filesystem::recursive_directory_iterator(
             p, std::filesystem::directory_options::skip_permission_denied, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (IsCompressedName(it->path().filename().string())) return true;
    }
  }
  return false;
}

// The non-empty lines of a pattern file; -1 when it cannot be read.
long CountPatterns(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return -1;
  long n = 0;
  int prev = '\n';
  for (int ch; (ch = std::fgetc(f)) != EOF; prev = ch) {
    if (prev == '\n' && ch != '\n') ++n;
  }
  std::fclose(f);
  return n;
}

// The sum of the counts `rg -c -H` and `grep -c -H` print, one "path:N" a line.
uint64_t SumCounts(std::string_view out) {
  uint64_t sum = 0;
  for (size_t p = 0; p < out.size();) {
    size_t nl = out.find('\n', p);
    std::string_view line =
        out.substr(p, nl == std::string_view::npos ? std::string_view::npos : nl - p);
    size_t colon = line.rfind(':');
    sum += std::strtoull(
        std::string(line.substr(colon == std::string_view::npos ? 0 : colon + 1)).c_str(), nullptr,
        10);
    if (nl == std::string_view::npos) break;
    p = nl + 1;
  }
  return sum;
}

// Another tool over the same inputs, run as a command.
struct Peer {
  std::string name;
  std::vector<std::string> argv;  // empty: not run, see reason
  std::string reason;
  std::string error;             // how it failed, when it did
  bool one_is_success = true;    // rg and grep exit 1 when nothing matched
  long patterns = 0;             // patterns it was given; 0 for the ruleset's database
  const char* counts = "lines";  // what `matched` counts
  uint64_t matched = 0;
  std::vector<double> wall, cpu;
};

std::vector<Peer> PlanPeers(const Args& a, unsigned threads) {
  const std::string dir = a.peers;
  const std::string jn = std::to_string(threads);
  const bool compressed = AnyCompressed(a.positional);
  auto with_paths = [&](std::vector<std::string> argv) {
    argv.insert(argv.end(), a.positional.begin(), a.positional.end());
    return argv;
  };
  std::vector<Peer> peers(3);
  Peer& rg = peers[0];
  rg.name = "rg -j" + jn;
  const std::string rg_pats = dir + "/patterns.rg.txt";
  if (FindOnPath("rg").empty()) {
    rg.reason = "ripgrep (rg) is not installed: not on PATH";
  } else if ((rg.patterns = CountPatterns(rg_pats)) < 0) {
    rg.reason = "no " + rg_pats + " (bench/export_patterns.py writes it)";
  } else {
    // -z: rg decompresses .gz/.zst itself, like faultline.
    rg.argv = with_paths(
        {"rg", "--no-config", "-uuu", "-a", "-c", "-H", "-z", "-j", jn, "-f", rg_pats, "--"});
  }
  Peer& grep = peers[1];
  grep.name = "grep -E";
  const std::string ere_pats = dir + "/patterns.ere.txt";
  if (FindOnPath("grep").empty()) {
    grep.reason = "grep is not installed: not on PATH";
  } else if (compressed) {
    grep.reason = "grep -E does not decompress .gz/.zst inputs";
  } else if ((grep.patterns = CountPatterns(ere_pats)) < 0) {
    grep.reason = "no " + ere_pats + " (bench/export_patterns.py writes it)";
  } else {
    grep.argv = with_paths({"grep", "-E", "-c", "-r", "-H", "-f", ere_pats, "--"});
  }
  Peer& hs = peers[2];
  hs.name = "fl_hs_raw -j" + jn;
  hs.counts = "callbacks";
  hs.one_is_success = false;
  const std::string hs_raw = FindHsRaw();
  if (hs_raw.empty()) {
    hs.reason =
        "fl_hs_raw (raw Hyperscan) not found next to faultline, in the build tree's bench/ or on "
        "PATH "
        "(build the fl_hs_raw target, or see bench/peers.sh)";
  } else if (compressed) {
    hs.reason = "fl_hs_raw maps plain files only: the inputs include .gz/.zst";
  } else {
    hs.argv = {hs_raw, "--threads", jn};
    if (a.rules) hs.argv.insert(hs.argv.end(), {"--rules", a.rules});
    hs.argv = with_paths(hs.argv);
  }
  return peers;
}

void RunPeer(Peer& p, const Args& a) {
  if (p.argv.empty()) return;
  for (unsigned i = 0; i < a.warmup + a.runs; ++i) {
    Ran r = RunCommand(p.argv);
    bool ok = r.started && (r.status == 0 || (r.status == 1 && p.one_is_success));
    if (!ok) {
      std::string first = r.err.substr(0, r.err.find('\n'));
      p.error = r.started ? Format("exit status %d", r.status) + (first.empty() ? "" : ": " + first)
                          : "cannot run: " + first;
      p.wall.clear();
      p.cpu.clear();
      return;
    }
    if (i < a.warmup) continue;
    p.wall.push_back(r.wall);
    p.cpu.push_back(r.cpu);
    if (std::string_view(p.counts) == "callbacks") {
      size_t at = r.out.find("callbacks:");
      p.matched = at == std::string::npos ? 0 : std::strtoull(r.out.c_str() + at + 10, nullptr, 10);
    } else {
      p.matched = SumCounts(r.out);
    }
  }
}

// The number of signals of the ruleset (the sum of its rules' "signals").
uint64_t SignalCount(const fl_ruleset* rs) {
  char* json = nullptr;
  size_t len = 0;
  uint64_t n = 0;
  if (fl_ruleset_rules_json(rs, &json, &len) != FL_OK) return 0;
  std::string_view s(json, len);
  for (size_t p = s.find("\"signals\":"); p != std::string_view::npos;
       p = s.find("\"signals\":", p + 1)) {
    n += static_cast<uint64_t>(JsonNumber(s, p, "signals"));
  }
  fl_free(json);
  return n;
}

// bench --costs: each signal's added cost on a sample of the inputs
// (fl_x_ruleset_signal_costs_json). False after printing why it failed.
bool SignalCosts(const fl_ruleset* rs, const Args& a, std::string* out) {
  std::vector<const char*> paths(a.positional.begin(), a.positional.end());
  char* json = nullptr;
  size_t len = 0;
  fl_error* err = nullptr;
  if (fl_x_ruleset_signal_costs_json(rs, paths.data(), paths.size(), a.sample_bytes, &json, &len,
                                   &err) != FL_OK) {
    std::fprintf(stderr, "faultline: bench --costs: %s\n", err ? fl_error_message(err) : "failed");
    fl_error_free(err);
    return false;
  }
  out->assign(json, len);
  fl_free(json);
  return true;
}

// The costs as a table, costliest first.
void PrintSignalCosts(std::string_view s) {
  std::printf(
      "signal costs on a %.1f MB sample (full database %.3f s/GB; CPU, best of 3), costliest "
      "first:\n"
      "  %10s  %9s  %12s  %-10s  %s\n",
      JsonNumber(s, 0, "sample_bytes") / 1e6, JsonNumber(s, 0, "full_s_per_gb"), "alone s/GB",
      "lines", "B us/line", "role", "signal");
  constexpr std::string_view kSig = "{\"signal\":\"";
  for (size_t p = s.find(kSig); p != std::string_view::npos; p = s.find(kSig, p + 1)) {
    size_t q = s.find('"', p + kSig.size());
    size_t r = s.find("\"role\":\"", p);
    if (q == std::string_view::npos || r == std::string_view::npos) break;
    size_t re = s.find('"', r + 8);
    std::printf("  %10.4f  %9.0f  %12.3f  %-10.*s  %.*s\n", JsonNumber(s, p, "alone_s_per_gb"),
                JsonNumber(s, p, "lines"), JsonNumber(s, p, "confirm_us_per_line"),
                static_cast<int>(re - r - 8), s.data() + r + 8,
                static_cast<int>(q - p - kSig.size()), s.data() + p + kSig.size());
  }
}

// The report's {"rule/signal": count} as rows, most first.
std::vector<std::pair<unsigned long long, std::string>> HitRows(std::string_view h) {
  std::vector<std::pair<unsigned long long, std::string>> rows;
  size_t p = 0;
  while ((p = h.find('"', p)) != std::string_view::npos) {
    size_t q = h.find('"', p + 1);
    if (q == std::string_view::npos) break;
    std::string name(h.substr(p + 1, q - p - 1));
    unsigned long long n = std::strtoull(h.data() + q + 2, nullptr, 10);
    rows.emplace_back(n, name);
    p = q + 1;
  }
  std::stable_sort(rows.begin(), rows.end(), [](auto& x, auto& y) { return x.first > y.first; });
  return rows;
}

int CmdBench(int argc, char** argv) {
  Args a;
  if (int rc = ParseArgs(kBench, argc, argv, 2, a); rc >= 0) return rc;
  if (a.positional.empty()) return CommandUsage(kBench, "needs at least one PATH");
  bool from_stdin = std::any_of(a.positional.begin(), a.positional.end(),
                                [](const char* p) { return std::string_view(p) == "-"; });
  if (from_stdin && (a.runs > 1 || a.warmup > 0 || a.peers)) {
    return CommandUsage(kBench,
                        "standard input (-) is read once: no --runs, --warmup or --peers with it");
  }
  fl_ruleset* rs = LoadRules(a.rules);
  if (!rs) return kExitInput;
  // Every run is a new session over the same inputs; the last report gives
  // the totals and hits (the same for every run).
  bool input_errors = false;
  fl_report* r = nullptr;
  std::vector<double> wall, cpu;
  for (unsigned i = 0; i < a.warmup + a.runs; ++i) {
    fl_report_free(r);
    double c0 = ProcessCpu();
    auto t0 = std::chrono::steady_clock::now();
    // Every run's session is freed in its timed part, as a library caller's.
    r = RunSession(rs, a, &input_errors, /*last_session=*/false);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double cpu_secs = ProcessCpu() - c0;
    if (!r) {
      fl_ruleset_free(rs);
      return kExitInput;
    }
    if (i >= a.warmup) {
      wall.push_back(secs);
      cpu.push_back(cpu_secs);
    }
  }
  fl_report_totals t;
  t.size = sizeof t;
  fl_report_totals_get(r, &t);
  unsigned threads = a.threads ? a.threads : static_cast<unsigned>(sysconf(_SC_NPROCESSORS_ONLN));
  const char* hits = nullptr;
  size_t hits_len = 0;
  fl_report_signal_hits_json(r, &hits, &hits_len);
  std::vector<Peer> peers;
  if (a.peers) {
    peers = PlanPeers(a, threads);
    for (Peer& p : peers) RunPeer(p, a);
  }
  if (input_errors) PrintInputErrors(r);
  int rc = input_errors ? kExitInput : kExitOk;
  std::string costs;
  bool have_costs = a.costs && SignalCosts(rs, a, &costs);
  if (a.costs && !have_costs) rc = kExitInput;
  const uint64_t signals = SignalCount(rs);
  const Spread s = SpreadOf(wall);

  if (a.json) {
    std::string j = "{\"faultline\":" + JsonString(fl_version_string());
    j += ",\"ruleset\":{\"name\":" + JsonString(fl_ruleset_name(rs)) +
         ",\"version\":" + JsonString(fl_ruleset_version(rs)) +
         Format(",\"rules\":%zu,\"signals\":%llu}", fl_ruleset_rule_count(rs),
                static_cast<unsigned long long>(signals));
    j += ",\"paths\":[";
    for (size_t i = 0; i < a.positional.size(); ++i)
      j += (i ? "," : "") + JsonString(a.positional[i]);
    j += Format("],\"threads\":%u,\"warmup\":%u,\"runs\":%u", threads, a.warmup, a.runs);
    j += Format(
        ",\"bytes\":%llu,\"lines\":%llu,\"matches\":%llu,\"evidence\":%llu,\"incidents\":%llu"
        ",\"input_errors\":%llu",
        static_cast<unsigned long long>(t.bytes), static_cast<unsigned long long>(t.lines),
        static_cast<unsigned long long>(t.matches), static_cast<unsigned long long>(t.evidence),
        static_cast<unsigned long long>(t.incidents), static_cast<unsigned long long>(t.errors));
    j += ",\"seconds\":" + SecondsJson(wall) + ",\"cpu_seconds\":" + SecondsJson(cpu) +
         ",\"gb_per_s\":" + RateJson(t.bytes, wall);
    j += ",\"signal_hits\":" + std::string(hits, hits_len) + ",\"peers\":[";
    for (size_t i = 0; i < peers.size(); ++i) {
      const Peer& p = peers[i];
      j += (i ? ",{\"name\":" : "{\"name\":") + JsonString(p.name);
      j += Format(",\"available\":%s", p.argv.empty() ? "false" : "true");
      if (p.argv.empty()) {
        j += ",\"reason\":" + JsonString(p.reason) + "}";
        continue;
      }
      j += ",\"command\":[";
      for (size_t k = 0; k < p.argv.size(); ++k) j += (k ? "," : "") + JsonString(p.argv[k]);
      j += Format("],\"patterns\":%ld", p.patterns);
      if (!p.error.empty()) {
        j += ",\"error\":" + JsonString(p.error) + "}";
        continue;
      }
      j += ",\"seconds\":" + SecondsJson(p.wall) + ",\"cpu_seconds\":" + SecondsJson(p.cpu) +
           ",\"gb_per_s\":" + RateJson(t.bytes, p.wall) + ",\"counts\":" + JsonString(p.counts) +
           Format(",\"matched\":%llu}", static_cast<unsigned long long>(p.matched));
    }
    j += "]";
    if (have_costs) j += ",\"costs\":" + costs;
    j += "}\n";
    std::fwrite(j.data(), 1, j.size(), stdout);
  } else {
    std::printf("bytes:    %llu\nlines:    %llu\n", static_cast<unsigned long long>(t.bytes),
                static_cast<unsigned long long>(t.lines));
    if (a.runs > 1 || a.warmup > 0) {
      std::printf("seconds:  %.3f  (median of %u runs: min %.3f, max %.3f; %u warmup)\n", s.median,
                  a.runs, s.min, s.max, a.warmup);
      std::printf("cpu s:    %.3f  (median)\nGB/s:     %.3f  (median; best %.3f)\n",
                  SpreadOf(cpu).median, GBps(t.bytes, s.median), GBps(t.bytes, s.min));
    } else {
      std::printf("seconds:  %.3f\ncpu s:    %.3f\nGB/s:     %.3f\n", s.median,
                  SpreadOf(cpu).median, GBps(t.bytes, s.median));
    }
    std::printf("threads:  %u\nmatches:  %llu\n", threads,
                static_cast<unsigned long long>(t.matches));
    std::printf("signal hits (most first):\n");
    for (auto& [n, name] : HitRows(std::string_view(hits, hits_len)))
      std::printf("  %12llu  %s\n", n, name.c_str());
    if (a.peers) {
      std::printf(
          "side by side, %u run%s each (peers: the whole command, like hyperfine; cpu s: user + "
          "system, median):\n"
          "  %-16s %9s %9s %9s %8s %8s %12s  %s\n",
          a.runs, a.runs > 1 ? "s" : "", "tool", "median s", "min s", "max s", "cpu s", "GB/s",
          "matched", "counts");
      std::printf("  %-16s %9.3f %9.3f %9.3f %8.3f %8.3f %12llu  matches (%llu signals)\n",
                  Format("faultline -j%u", threads).c_str(), s.median, s.min, s.max,
                  SpreadOf(cpu).median, GBps(t.bytes, s.median),
                  static_cast<unsigned long long>(t.matches),
                  static_cast<unsigned long long>(signals));
      for (const Peer& p : peers) {
        if (p.argv.empty() || !p.error.empty()) {
          std::printf("  %-16s %s: %s\n", p.name.c_str(), p.argv.empty() ? "not run" : "failed",
                      (p.argv.empty() ? p.reason : p.error).c_str());
          continue;
        }
        Spread ps = SpreadOf(p.wall);
        std::string what = p.patterns > 0 ? Format("%s (%ld/%llu patterns)", p.counts, p.patterns,
                                                   static_cast<unsigned long long>(signals))
                                          : std::string(p.counts);
        std::printf("  %-16s %9.3f %9.3f %9.3f %8.3f %8.3f %12llu  %s\n", p.name.c_str(), ps.median,
                    ps.min, ps.max, SpreadOf(p.cpu).median, GBps(t.bytes, ps.median),
                    static_cast<unsigned long long>(p.matched), what.c_str());
      }
    }
    if (have_costs) PrintSignalCosts(costs);
  }
  LeaveToExit(r);
  LeaveToExit(rs);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
#if defined(__GLIBC__)
  // A scan's chunks each fill buffers of up to a chunk's size (the matched
  // lines and their context, the evidence) that are freed when the chunk is
  // merged. glibc hands a worker thread's freed heap top back to the kernel
  // (MADV_DONTNEED) down to M_TOP_PAD bytes, so the next chunk faulted the
  // same pages in again, zeroed: 22k page faults on a dense 77 MB log where
  // Hyperscan alone takes 2.2k, ~8% of its CPU (bench/README.md, "the
  // escape test counts the newlines"). A heap keeps 64 MiB of its top now:
  // a bound on what stays resident, not a growth with the input. The
  // library leaves its host's allocator alone; this is the CLI's own.
  mallopt(M_TOP_PAD, 64 << 20);
#endif
  if (argc < 2) return Usage(nullptr);
  std::string_view cmd = argv[1];
  if (cmd == "--version" || cmd == "-V" || cmd == "version") {
    std::printf("faultline %s\n", fl_version_string());
    return kExitOk;
  }
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::string_view topic = argc > 2 ? argv[2] : "";
    if (topic == "rules") {
      PrintHelp(kRulesList, stdout);
      std::fputs("\n", stdout);
      PrintHelp(kRulesShow, stdout);
      return kExitOk;
    }
    for (const Command* c : kCommands) {
      if (!topic.empty() && std::string_view(c->name).starts_with(topic)) {
        PrintHelp(*c, stdout);
        return kExitOk;
      }
    }
    if (!topic.empty()) return Usage(("no command " + std::string(topic)).c_str());
    PrintMainHelp(stdout);
    return kExitOk;
  }
  if (cmd == "diagnose") return CmdDiagnose(argc, argv);
  if (cmd == "scan") return CmdScan(argc, argv);
  if (cmd == "watch") return CmdWatch(argc, argv);
  if (cmd == "compile") return CmdCompile(argc, argv);
  if (cmd == "rules") return CmdRules(argc, argv);
  if (cmd == "bench") return CmdBench(argc, argv);
  return Usage(("unknown command " + std::string(cmd)).c_str());
}
