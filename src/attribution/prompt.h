// Shell prompts pasted above a command's output. A terminal session shows
// the prompt, the command typed after it and the command's output, which
// names no host: the prompt's host is the host of the lines below it, up to
// the next prompt.
//
// The shapes are the shells' default prompts:
//   - bash's PS1 as Debian/Ubuntu set it, '${debian_chroot:+($debian_chroot)}
//     \u@\h:\w\$ ': "alice@gpu-node-7:~/train$ python train.py", root's
//     "root@32a68c302449:/workspace# ...";
//   - Red Hat's (bashrc), '[\u@\h \W]\$ ': "[alice@dgx02 megatron]$ ...";
//   - zsh's '%n@%m %~ %# ' form: "zeyer@cn-234 ~ % nvidia-smi";
// each possibly after a conda or virtualenv marker "(base) ". \h and %m are
// the host name up to its first '.', so the host holds no dot: an e-mail
// address or "git@github.com:org/repo" is no prompt. A prompt starts its
// line (a log prefix before it makes the line a log line that quotes one)
// and holds the command typed after it.
//
// Thread-safety: pure functions.
#ifndef FAULTLINE_ATTRIBUTION_PROMPT_H_
#define FAULTLINE_ATTRIBUTION_PROMPT_H_

#include <string_view>

namespace faultline {

struct ShellPrompt {
  std::string_view host;     // as the prompt prints it (no dot)
  std::string_view command;  // the first word typed after the prompt
};

// Whether `line` (without its newline) is a shell prompt with a command
// after it; then *out holds its host and command.
bool ParseShellPrompt(std::string_view line, ShellPrompt* out);

// Whether the output of `command` (a prompt's first word; a path's last
// component counts) is another machine's: a remote shell, a launcher that
// starts the program on allocated nodes (srun, mpirun), a scheduler's or a
// cluster's client reporting on its nodes (squeue, sinfo, kubectl), a
// parallel shell. The lines under such a prompt are not its host's.
bool RunsElsewhere(std::string_view command);

// The prompt in force at the end of `text`: the last of its lines that is
// a prompt (into *out), or false when none is. Only the lines holding an
// '@' are read.
bool LastShellPrompt(std::string_view text, ShellPrompt* out);

}  // namespace faultline

#endif  // FAULTLINE_ATTRIBUTION_PROMPT_H_
