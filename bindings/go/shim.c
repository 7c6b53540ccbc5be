// C trampolines for the Go callbacks. The library calls these C functions;
// they forward to the exported Go functions in callback.go, passing the
// cgo.Handle of the session's callback state through the user pointer. A
// handle is an integer, so no Go pointer is ever stored in C memory.
#include <stdint.h>

#include <faultline/faultline.h>

#include "_cgo_export.h"

static void flgo_evidence_trampoline(void *user, const fl_evidence_view *ev) {
  flgoEvidence((uintptr_t)user, (fl_evidence_view *)ev);
}

static int flgo_progress_trampoline(void *user, uint64_t done, uint64_t total) {
  return flgoProgress((uintptr_t)user, done, total);
}

void flgo_set_callbacks(fl_session_options *o, uintptr_t handle, int evidence,
                        int progress) {
  if (evidence) {
    o->on_evidence = flgo_evidence_trampoline;
    o->evidence_user = (void *)handle;
  }
  if (progress) {
    o->on_progress = flgo_progress_trampoline;
    o->progress_user = (void *)handle;
  }
}
