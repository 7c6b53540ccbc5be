// Path attribution: the rank, local rank and host a log file's location
// implies. Job archives are laid out by whoever collected them, so this is a
// set of conventions plus a deliberately conservative guess:
//
//  - host: a directory named like a cluster node ("node017", "host-a12",
//    "gpu-node-3", "ip-10-0-1-23", "worker-3", "nid001234", an IPv4 address)
//    is preferred; failing that, a file named like one ("node017.log"); then
//    any directory shaped like a host name (starts with a letter, ends with a
//    digit, no underscore) whose leading word is not one of the generic words
//    archives are full of ("run-2026", "exp3", "step100", "v2", "cuda-12.4",
//    "python3.11", "data1", a user's home directory); the host inside a
//    "sosreport-<host>-..." archive name counts as a directory; then a pod
//    name (Kubernetes), since pod logs do not say which node ran them.
//  - rank: "rank-3.log", "rank3.txt", "rank_3.out", "train_rank3.log",
//    "worker-3.log", srun's "<job>.<task>.out" ("train.12.out"), or a
//    "rank_3/" directory. "node_rank3"/"group_rank3" are not global ranks.
//  - local rank: torchelastic's --log-dir tree "attempt_<N>/<local_rank>/",
//    and "local_rank_3.log".
// When two candidates of the same kind exist, the deepest one wins: it is the
// most specific about the file.

#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "attribution/attribution.h"
#include "attribution/lex.h"

namespace faultline {
namespace {

using attribution_internal::AtIgnoreCase;
using attribution_internal::EqualsIgnoreCase;
using attribution_internal::IsAlnum;
using attribution_internal::IsAlpha;
using attribution_internal::IsDigit;
using attribution_internal::IsHex;
using attribution_internal::IsIpv4;
using attribution_internal::kNpos;
using attribution_internal::ParseUint;
using attribution_internal::ParseUintWhole;
using attribution_internal::ToLower;

// Deeper components than this are dropped from the front: the conventions
// all sit near the file.
constexpr size_t kMaxComponents = 64;

struct PathParts {
  std::array<std::string_view, kMaxComponents> comp;
  size_t count = 0;
  size_t dirs = 0;  // comp[0, dirs) are directories
  std::string_view file;
};

PathParts Split(std::string_view path) {
  PathParts parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = start;
    while (end < path.size() && path[end] != '/' && path[end] != '\\') ++end;
    std::string_view c = path.substr(start, end - start);
    if (!c.empty() && c != "." && c != "..") {
      if (parts.count == kMaxComponents) {
        for (size_t i = 1; i < kMaxComponents; ++i) parts.comp[i - 1] = parts.comp[i];
        --parts.count;
      }
      parts.comp[parts.count++] = c;
    }
    start = end + 1;
  }
  bool trailing_sep = !path.empty() && (path.back() == '/' || path.back() == '\\');
  parts.dirs = parts.count;
  if (parts.count > 0 && !trailing_sep) {
    parts.dirs = parts.count - 1;
    parts.file = parts.comp[parts.count - 1];
  }
  return parts;
}

bool EndsWithIgnoreCase(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         EqualsIgnoreCase(s.substr(s.size() - suffix.size()), suffix);
}

// "rank-3.log.gz" is still rank 3's log; "kern.log.1" stays a rotation.
std::string_view StripCompression(std::string_view name) {
  static constexpr std::string_view kExts[] = {
      ".gz", ".zst", ".zstd", ".xz", ".bz2", ".lz4", ".z"};
  for (int round = 0; round < 2; ++round) {
    for (std::string_view ext : kExts) {
      if (name.size() > ext.size() && EndsWithIgnoreCase(name, ext)) {
        name.remove_suffix(ext.size());
        break;
      }
    }
  }
  return name;
}

// The alphabetic word just before s[i], past one '-', '_' or '.'.
std::string_view WordBefore(std::string_view s, size_t i) {
  size_t end = i;
  if (end > 0 && (s[end - 1] == '-' || s[end - 1] == '_' || s[end - 1] == '.')) --end;
  size_t start = end;
  while (start > 0 && IsAlpha(s[start - 1])) --start;
  return s.substr(start, end - start);
}

// "rank3", "rank-3", "rank_3", "rank.3" as a token of a name. Sets *local
// for "local_rank3". Returns nullopt for node/group ranks.
std::optional<int64_t> RankToken(std::string_view name, bool* local) {
  *local = false;
  for (size_t i = 0; i + 4 < name.size(); ++i) {
    if (!AtIgnoreCase(name, i, "rank")) continue;
    if (i > 0 && IsAlnum(name[i - 1])) {
      // "localrank3" is fine, "frank3" is not.
      if (!(i >= 5 && AtIgnoreCase(name, i - 5, "local"))) continue;
    }
    size_t q = i + 4;
    if (q + 1 < name.size() && (name[q] == '-' || name[q] == '_' || name[q] == '.') &&
        IsDigit(name[q + 1])) {
      ++q;
    }
    std::optional<int64_t> v = ParseUint(name, &q, 7);
    if (!v || (q < name.size() && IsAlnum(name[q]))) continue;
    std::string_view before = WordBefore(name, i);
    if (i >= 5 && AtIgnoreCase(name, i - 5, "local")) before = "local";
    if (EqualsIgnoreCase(before, "node") || EqualsIgnoreCase(before, "group")) {
      return std::nullopt;
    }
    *local = EqualsIgnoreCase(before, "local");
    return v;
  }
  return std::nullopt;
}

// srun --output=%x.%t.out: "<job>.<task>.<ext>". The part before the task must
// not end in a digit ("python3.11.log" is a version), unless it is a job id.
std::optional<int64_t> JobTaskRank(std::string_view name) {
  static constexpr std::string_view kExts[] = {
      "out", "err", "log", "txt", "stdout", "stderr"};
  size_t last_dot = name.rfind('.');
  if (last_dot == kNpos || last_dot == 0) return std::nullopt;
  std::string_view ext = name.substr(last_dot + 1);
  bool known = false;
  for (std::string_view e : kExts) known |= EqualsIgnoreCase(ext, e);
  if (!known) return std::nullopt;
  size_t task_dot = name.rfind('.', last_dot - 1);
  if (task_dot == kNpos || task_dot == 0) {
    // --output=%x-%j-%t.out, %j-%t.out: "<job id>-<task>.out", the job id
    // of five digits or more (so "app-2026-11.out" stays a date); "_" is an
    // array's %A_%a, no task.
    size_t dash = name.rfind('-', last_dot - 1);
    if (dash == kNpos || dash == 0 || !(EqualsIgnoreCase(ext, "out") || EqualsIgnoreCase(ext, "err"))) {
      return std::nullopt;
    }
    std::string_view task = name.substr(dash + 1, last_dot - dash - 1);
    std::string_view before = name.substr(0, dash);
    std::string_view job = before.substr(before.find_last_of("-_.") == kNpos ? 0 : before.find_last_of("-_.") + 1);
    std::optional<int64_t> v = ParseUintWhole(task, 6);
    if (!v || (task.size() > 1 && task[0] == '0') || job.size() < 5 || !ParseUintWhole(job, 12)) {
      return std::nullopt;
    }
    return v;
  }
  std::string_view task = name.substr(task_dot + 1, last_dot - task_dot - 1);
  std::string_view before = name.substr(0, task_dot);
  size_t job_dot = before.rfind('.');
  std::string_view job = job_dot == kNpos ? before : before.substr(job_dot + 1);
  std::optional<int64_t> v = ParseUintWhole(task, 6);
  if (!v || (task.size() > 1 && task[0] == '0') || job.empty()) return std::nullopt;
  bool job_is_id = ParseUintWhole(job, 12).has_value() && job.size() >= 3;
  if (IsDigit(job.back()) && !job_is_id) return std::nullopt;
  // "app.2026.log" is dated; srun's task files end in .out/.err.
  bool srun_ext = EqualsIgnoreCase(ext, "out") || EqualsIgnoreCase(ext, "err");
  if (!srun_ext && *v >= 1970 && *v <= 2099) return std::nullopt;
  return v;
}

// "worker-3.log", "worker_3.txt", "worker3.out": one file per rank.
std::optional<int64_t> WorkerFileRank(std::string_view name) {
  if (!AtIgnoreCase(name, 0, "worker")) return std::nullopt;
  size_t q = 6;
  if (q < name.size() && (name[q] == '-' || name[q] == '_')) ++q;
  std::optional<int64_t> v = ParseUint(name, &q, 7);
  if (!v || (q < name.size() && IsAlnum(name[q]))) return std::nullopt;
  return v;
}

enum class HostClass { kNo, kGeneric, kPreferred };

// Leading words of directory names that are never hosts, though shaped like
// one ("run-2026", "exp3", "cuda-12"). Compared against the component's
// leading letters, lowercased.
bool IsGenericWord(std::string_view w) {
  static constexpr std::string_view kWords[] = {
      "run",     "runs",     "job",      "jobs",     "exp",       "exps",
      "expt",    "experiment", "experiments", "trial", "trials",  "attempt",
      "rank",    "ranks",    "step",     "steps",    "epoch",     "epochs",
      "iter",    "iters",    "iteration", "ckpt",    "ckpts",     "checkpoint",
      "checkpoints", "version", "ver",   "rel",      "release",   "python",
      "py",      "cuda",     "cudnn",    "cu",       "lib",       "libs",
      "log",     "logs",     "out",      "output",   "outputs",   "test",
      "tests",   "tmp",      "temp",     "batch",    "shard",     "shards",
      "part",    "chunk",    "seed",     "fold",     "split",     "stage",
      "phase",   "round",    "day",      "week",     "build",     "task",
      "tasks",   "array",    "data",     "dataset",  "disk",      "vol",
      "volume",  "nvme",     "mnt",      "scratch",  "fs",        "share",
      "storage", "raid",     "md",       "sd",       "sda",       "sdb",
      "lustre",  "gpfs",     "nfs",      "user",     "users",     "usr",
      "home",    "gpt",      "llama",    "bert",     "mistral",   "mixtral",
      "qwen",    "gemma",    "phi",      "opt",      "bloom",     "falcon",
      "resnet",  "vit",      "model",    "models",   "config",    "cfg",
      "gpus",    "dev",      "device",   "cpu",      "cpus",      "tp",
      "pp",      "dp",       "ep",       "world",    "bs",        "lr",
      "fp",      "bf",       "int",      "sm",       "el",        "rhel",
      "ubuntu",  "debian",   "linux",    "kernel",   "nccl",      "torch",
      "sweep",   "eval",     "train",    "val",      "snapshot",  "backup",
      "archive", "results",  "cluster",  "clusters", "partition", "queue",
      "region",  "zone",     "rack",     "retry",    "restart",   "try",
  };
  for (std::string_view x : kWords) {
    if (EqualsIgnoreCase(w, x)) return true;
  }
  return false;
}

bool HasPreferredName(std::string_view label) {
  static constexpr std::string_view kPrefixes[] = {
      "node", "host", "worker", "compute", "nid", "ip-", "dgx"};
  for (std::string_view p : kPrefixes) {
    if (AtIgnoreCase(label, 0, p)) return true;
  }
  // "gpu-node-3", "a100-node12".
  for (size_t i = 1; i + 4 <= label.size(); ++i) {
    if (label[i - 1] == '-' && AtIgnoreCase(label, i, "node")) return true;
  }
  return false;
}

// A folder whose subfolders are hosts: "nodes/<host>/", "hosts/<host>/".
// Its files are not: "hosts/slurm-task-bus-error.log" names no host.
bool IsHostsFolder(std::string_view c) {
  static constexpr std::string_view kNames[] = {"nodes", "hosts", "machines", "instances", "servers"};
  for (std::string_view n : kNames) {
    if (EqualsIgnoreCase(c, n)) return true;
  }
  return false;
}

HostClass ClassifyHost(std::string_view c, std::string_view parent, bool folder) {
  if (c.empty() || c.size() > 253) return HostClass::kNo;
  if (EqualsIgnoreCase(parent, "home") || EqualsIgnoreCase(parent, "users") ||
      EqualsIgnoreCase(parent, "u")) {
    return HostClass::kNo;  // a user name, however host-like
  }
  if (IsIpv4(c)) return HostClass::kPreferred;
  if (!IsAlpha(c[0])) return HostClass::kNo;
  for (char ch : c) {
    if (!IsAlnum(ch) && ch != '-' && ch != '.') return HostClass::kNo;
  }
  size_t dot = c.find('.');
  std::string_view label = c.substr(0, dot);
  if (label.size() > 63) return HostClass::kNo;
  if (!IsDigit(label.back())) {
    // A folder of per-host folders ("nodes/<name>/kern.log") names hosts
    // whatever their last character: a GKE node is
    // gke-<cluster>-<pool>-<hash>-<4 letters or digits>.
    if (!folder || !IsHostsFolder(parent) || label.find('-') == kNpos) return HostClass::kNo;
    size_t lead = 0;
    while (lead < label.size() && IsAlpha(label[lead])) ++lead;
    if (IsGenericWord(label.substr(0, lead))) return HostClass::kNo;
    return HostClass::kPreferred;
  }
  // "node017.cluster.local" is a FQDN; "cuda-12.4" is a version.
  if (dot != kNpos && (dot + 1 >= c.size() || !IsAlpha(c[dot + 1]))) {
    return HostClass::kNo;
  }
  if (HasPreferredName(label)) return HostClass::kPreferred;

  size_t hex = 0;
  bool all_hex = true;
  for (char ch : label) {
    if (IsHex(ch)) {
      ++hex;
    } else if (ch != '-') {
      all_hex = false;
    }
  }
  if (all_hex && hex >= 8) return HostClass::kNo;  // hashes, UUIDs
  size_t letters = 0;
  while (letters < label.size() && IsAlpha(label[letters])) ++letters;
  std::string_view word = label.substr(0, letters);
  if (IsGenericWord(word)) return HostClass::kNo;
  if (letters == 1 && label.find('-') == kNpos) return HostClass::kNo;  // v2, t5
  if (EqualsIgnoreCase(word, "gpu") && label.size() - letters < 3) {
    return HostClass::kNo;  // "gpu3" is a device; "gpu017" a node
  }
  return HostClass::kGeneric;
}

// Kubernetes: "pods/<pod>/<container>.log" (as collected), kubelet's
// "pods/<namespace>_<pod>_<uid>/<container>/<restart>.log" and
// "containers/<pod>_<namespace>_<container>-<id>.log".
std::string_view PodName(const PathParts& parts) {
  for (size_t i = 0; i < parts.dirs; ++i) {
    std::string_view c = parts.comp[i];
    if (c == "pods" && i + 1 < parts.dirs) {
      std::string_view pod = parts.comp[i + 1];
      size_t first = pod.find('_');
      size_t last = pod.rfind('_');
      if (first != kNpos && last != first) pod = pod.substr(first + 1, last - first - 1);
      return pod;
    }
    if (c == "containers" && i + 1 == parts.dirs && !parts.file.empty()) {
      std::string_view f = parts.file;
      size_t first = f.find('_');
      if (first != kNpos && f.find('_', first + 1) != kNpos) return f.substr(0, first);
    }
  }
  return {};
}

}  // namespace

size_t PathBelowRoot(std::string_view root, std::string_view file) {
  auto is_sep = [](char c) { return c == '/' || c == '\\'; };
  if (root.empty() || root == "-") return 0;
  if (file == root) {
    size_t sep = file.find_last_of("/\\");
    return sep == kNpos ? 0 : sep + 1;
  }
  if (file.size() <= root.size() || file.compare(0, root.size(), root) != 0) return 0;
  // "logs" must not claim "logs2/x": the root ends at a separator.
  if (!is_sep(root.back()) && !is_sep(file[root.size()])) return 0;
  return root.size();
}

Attribution AttributeFromPath(std::string_view path, size_t below) {
  Attribution a;
  below = std::min(below, path.size());
  // The root's own name (the folder the user named, or a file's folder),
  // with its parent: a user's home folder is no host.
  std::string_view root_name, root_parent;
  if (below > 0) {
    PathParts above = Split(path.substr(0, below));
    if (above.count > 0) root_name = above.comp[above.count - 1];
    if (above.count > 1) root_parent = above.comp[above.count - 2];
    path.remove_prefix(below);
  }
  PathParts parts = Split(path);
  if (parts.count == 0) return a;

  std::string_view name = StripCompression(parts.file);
  if (!name.empty()) {
    bool local = false;
    std::optional<int64_t> v = RankToken(name, &local);
    if (v && local) {
      a.local_rank = v;
    } else if (v) {
      a.rank = v;
    } else if ((v = WorkerFileRank(name))) {
      a.rank = v;
    } else if ((v = JobTaskRank(name))) {
      a.rank = v;
    }
  }

  std::string_view preferred, generic;
  for (size_t i = 0; i < parts.dirs; ++i) {
    std::string_view c = parts.comp[i];
    std::string_view parent = i > 0 ? parts.comp[i - 1] : std::string_view();
    // sos report archives: "sosreport-<host>-<case>-<date>-<id>".
    std::string_view host_part = c;
    if (AtIgnoreCase(c, 0, "sosreport-")) {
      host_part = c.substr(10);
      host_part = host_part.substr(0, host_part.find('-'));
    }
    HostClass k = ClassifyHost(host_part, parent, /*folder=*/true);
    if (k == HostClass::kPreferred) preferred = host_part;
    if (k == HostClass::kGeneric) generic = host_part;

    // torchelastic: <log_dir>/<run_id>/attempt_<N>/<local_rank>/stdout.log
    if (AtIgnoreCase(c, 0, "attempt_") && ParseUintWhole(c.substr(8), 4) &&
        i + 1 < parts.dirs) {
      if (std::optional<int64_t> lr = ParseUintWhole(parts.comp[i + 1], 5)) {
        a.local_rank = lr;
      }
    }
    if (!a.rank) {
      bool local = false;
      std::optional<int64_t> v = RankToken(c, &local);
      // Only a whole "rank_3" directory: "exp_rank3_sweep" says less.
      // Open MPI's --output-filename: "<dir>/1/rank.<N>/stdout".
      bool mpi = c.size() > 5 && AtIgnoreCase(c, 0, "rank.") && ParseUintWhole(c.substr(5), 7);
      if (v && !local && AtIgnoreCase(c, 0, "rank") && (c.find('.') == kNpos || mpi) &&
          i + 1 == parts.dirs) {
        a.rank = v;
      }
    }
  }
  std::string_view host = preferred;
  if (host.empty() && !name.empty()) {
    std::string_view stem = name.substr(0, name.find('.'));
    std::string_view parent = parts.dirs > 0 ? parts.comp[parts.dirs - 1] : root_name;
    if (!AtIgnoreCase(stem, 0, "worker") &&
        ClassifyHost(stem, parent, /*folder=*/false) == HostClass::kPreferred) {
      host = stem;
    }
  }
  if (host.empty()) host = generic;
  if (host.empty()) host = PodName(parts);
  // `diagnose node055/ gpu-b02/`: the root's own name counts when shaped
  // like a host ("c016", "run-7" are not), and last: anything below it is
  // more specific about the file.
  if (host.empty() && !root_name.empty() &&
      ClassifyHost(root_name, root_parent, /*folder=*/true) != HostClass::kNo) {
    host = root_name;
  }
  a.host = NormalizeHost(host);
  return a;
}

}  // namespace faultline
