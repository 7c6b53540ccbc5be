// Shell prompts above a command's output (prompt.h).

#include "attribution/prompt.h"

#include <cstring>

#include "attribution/lex.h"

namespace faultline {
namespace {

using attribution_internal::IsAlnum;
using attribution_internal::IsAlpha;

// useradd's default NAME_REGEX, with the dot and the capitals other
// systems allow; 32 is its length limit.
constexpr size_t kMaxUser = 32;
// A host name's label (RFC 1123): \h and %m stop at the first dot.
constexpr size_t kMaxLabel = 63;
// A conda environment or virtualenv marker "(name) ".
constexpr size_t kMaxEnv = 64;

bool IsUserChar(char c) { return IsAlnum(c) || c == '_' || c == '.' || c == '-'; }
bool IsLabelChar(char c) { return IsAlnum(c) || c == '-'; }
bool IsPromptEnd(char c) { return c == '$' || c == '#' || c == '%'; }

}  // namespace

bool ParseShellPrompt(std::string_view s, ShellPrompt* out) {
  const size_t n = s.size();
  size_t p = 0;
  if (p < n && s[p] == '(') {
    size_t q = p + 1;
    while (q < n && q - p <= kMaxEnv && IsUserChar(s[q])) ++q;
    if (q == p + 1 || q + 1 >= n || s[q] != ')' || s[q + 1] != ' ') return false;
    p = q + 2;
  }
  const bool bracket = p < n && s[p] == '[';
  if (bracket) ++p;
  const size_t user = p;
  if (p >= n || !(IsAlpha(s[p]) || s[p] == '_')) return false;
  while (p < n && p - user <= kMaxUser && IsUserChar(s[p])) ++p;
  if (p >= n || s[p] != '@' || p - user > kMaxUser) return false;
  const size_t host = ++p;
  if (p >= n || !IsAlnum(s[p])) return false;
  while (p < n && p - host <= kMaxLabel && IsLabelChar(s[p])) ++p;
  if (p - host > kMaxLabel || p >= n) return false;
  const std::string_view h = s.substr(host, p - host);
  if (bracket) {
    // "[user@host dir]$ ": \W, the working directory's last component.
    if (s[p] != ' ') return false;
    const size_t close = s.find(']', p);
    if (close == std::string_view::npos) return false;
    p = close + 1;
  } else if (s[p] == ':') {
    // "user@host:~/dir$ ": \w, under the home (~) or absolute.
    ++p;
    if (p >= n || (s[p] != '~' && s[p] != '/')) return false;
    while (p < n && !IsPromptEnd(s[p])) ++p;
  } else if (s[p] == ' ') {
    // zsh's "user@host ~/dir % ": %~, then a space.
    ++p;
    if (p >= n || (s[p] != '~' && s[p] != '/')) return false;
    while (p < n && s[p] != ' ' && !IsPromptEnd(s[p])) ++p;
    if (p < n && s[p] == ' ') ++p;
  } else {
    return false;
  }
  if (p >= n || !IsPromptEnd(s[p])) return false;
  ++p;
  if (p >= n || s[p] != ' ') return false;
  while (p < n && s[p] == ' ') ++p;
  const size_t cmd = p;
  while (p < n && s[p] != ' ' && s[p] != '\t' && s[p] != '\r') ++p;
  if (p == cmd) return false;
  out->host = h;
  out->command = s.substr(cmd, p - cmd);
  return true;
}

bool RunsElsewhere(std::string_view command) {
  if (size_t slash = command.rfind('/'); slash != std::string_view::npos) command.remove_prefix(slash + 1);
  static constexpr std::string_view kRemote[] = {
      "ssh",    "srun",   "salloc",  "sbatch",  "squeue", "sinfo",   "sacct", "scontrol", "sstat",
      "kubectl", "oc",    "pdsh",    "clush",   "mpirun", "mpiexec", "prun",  "prterun",  "ansible"};
  for (std::string_view r : kRemote) {
    if (command == r) return true;
  }
  return false;
}

bool LastShellPrompt(std::string_view text, ShellPrompt* out) {
  // The prompt's '@' lies within the user's 32 characters and a marker's
  // 66 of the line's start: a line is looked at for its first '@' alone.
  constexpr size_t kAtReach = kMaxEnv + 3 + kMaxUser + 2;
  bool found = false;
  size_t from = 0;
  while (from < text.size()) {
    const void* at = std::memchr(text.data() + from, '@', text.size() - from);
    if (at == nullptr) break;
    const size_t a = static_cast<const char*>(at) - text.data();
    size_t start = a;
    while (start > 0 && text[start - 1] != '\n' && a - start <= kAtReach) --start;
    size_t end = text.find('\n', a);
    if (end == std::string_view::npos) end = text.size();
    if (start == 0 || text[start - 1] == '\n') {
      ShellPrompt sp;
      if (ParseShellPrompt(text.substr(start, end - start), &sp)) {
        *out = sp;
        found = true;
      }
    }
    from = end + 1;
  }
  return found;
}

}  // namespace faultline
