// GuardedRead: SIGBUS-safe reads of mapped files. A file truncated while it
// is mapped (logrotate's copytruncate, a job rewriting its log) makes every
// access past the new end raise SIGBUS, which by default kills the process --
// and with it a long-running agent that embeds us. A process-wide handler
// (installed once, chaining to whatever handler was there before) checks the
// faulting address against the guards active on the faulting thread and
// siglongjmps back into GuardedRead, which then returns false.
//
// The signal handler only touches a pointer in initial-exec TLS, plain
// fields of stack frames and async-signal-safe calls, so it is safe whatever
// the interrupted thread was doing; initial-exec keeps TLS access free of
// __tls_get_addr (which may allocate) even when libfaultline.so is dlopen'ed.

#include <signal.h>

#include <atomic>
#include <csetjmp>
#include <cstdint>
#include <functional>

#include "input/input.h"

namespace faultline {
namespace {

// One active GuardedRead on this thread; frames of nested guards are chained
// so an inner guard does not hide an outer one's range.
struct GuardFrame {
  uintptr_t begin;
  uintptr_t end;
  GuardFrame* outer;
  sigjmp_buf env;
};

thread_local GuardFrame* tls_innermost __attribute__((tls_model("initial-exec"))) =
    nullptr;

// The SIGBUS disposition before ours: faults outside every guard go there.
// Written once, before our handler is installed, read-only afterwards.
struct sigaction g_previous;

void RestoreDefaultAndRedeliver(int sig, const siginfo_t* info) {
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  // A fault (si_code > 0) repeats when the faulting instruction restarts on
  // return and now kills the process with the true fault address in the
  // core. A signal sent with kill() or raise() would not repeat: send it
  // again; it is blocked in this handler and lands on return.
  if (info == nullptr || info->si_code <= 0) raise(sig);
}

void OnSigbus(int sig, siginfo_t* info, void* ucontext) {
  if (info != nullptr && info->si_code > 0) {
    const uintptr_t addr = reinterpret_cast<uintptr_t>(info->si_addr);
    for (GuardFrame* f = tls_innermost; f != nullptr; f = f->outer) {
      if (addr >= f->begin && addr < f->end) siglongjmp(f->env, 1);
    }
  }
  // Not a fault on a guarded range: behave as if we were not here.
  if (g_previous.sa_flags & SA_SIGINFO) {
    if (g_previous.sa_sigaction != nullptr) {
      g_previous.sa_sigaction(sig, info, ucontext);
      return;
    }
  } else if (g_previous.sa_handler == SIG_IGN) {
    // The kernel never lets a fault be ignored; a sent signal may be.
    if (info != nullptr && info->si_code <= 0) return;
  } else if (g_previous.sa_handler != SIG_DFL) {
    g_previous.sa_handler(sig);
    return;
  }
  RestoreDefaultAndRedeliver(sig, info);
}

void InstallHandlerOnce() {
  // A function-local static: initialised exactly once even when many
  // threads make their first GuardedRead at the same time.
  [[maybe_unused]] static const bool installed = [] {
    // Read the old disposition first and install second, so g_previous is
    // complete before our handler can run.
    sigaction(SIGBUS, nullptr, &g_previous);
    struct sigaction sa = {};
    sa.sa_sigaction = OnSigbus;
    // SA_ONSTACK: run on the alternate stack where one exists (Go threads
    // require it of every handler).
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, nullptr);
    return true;
  }();
}

void UnblockSigbus() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGBUS);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

}  // namespace

bool GuardedRead(const void* base, size_t len, const std::function<void()>& fn) {
  InstallHandlerOnce();
  GuardFrame frame;
  frame.begin = reinterpret_cast<uintptr_t>(base);
  frame.end = frame.begin + len;
  frame.outer = tls_innermost;
  // savemask=0 keeps the common path free of a sigprocmask() system call;
  // the rare fault path unblocks SIGBUS (blocked while the handler ran) by
  // hand instead.
  if (sigsetjmp(frame.env, 0) != 0) {
    tls_innermost = frame.outer;
    UnblockSigbus();
    return false;
  }
  tls_innermost = &frame;
  // The handler must see the frame published before fn's first access.
  std::atomic_signal_fence(std::memory_order_seq_cst);
  try {
    fn();
  } catch (...) {
    tls_innermost = frame.outer;
    throw;
  }
  std::atomic_signal_fence(std::memory_order_seq_cst);
  tls_innermost = frame.outer;
  return true;
}

}  // namespace faultline
