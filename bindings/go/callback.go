package faultline

// Go ends of the C trampolines in shim.c. This file exports functions to C,
// so its preamble may hold declarations only.

/*
#include <stdint.h>
#include <faultline/faultline.h>
*/
import "C"

import (
	"runtime/cgo"
	"sync/atomic"
)

// callbackState is what a session's cgo.Handle refers to. It holds no
// pointer back to the Session, so a Session nobody references can still be
// finalised while its handle is registered.
type callbackState struct {
	onEvidence func(Evidence)
	onProgress func(done, total uint64)
	cs         *C.fl_session // set once fl_session_new returns

	// A panic in a callback is recovered here (it must not unwind through
	// C++ frames), the scan is cancelled, and the panic is raised again on
	// the calling goroutine once the library has returned.
	panicked atomic.Bool
	panicVal any
}

func (st *callbackState) recoverPanic() {
	if r := recover(); r != nil {
		st.panicVal = r
		st.panicked.Store(true)
		if st.cs != nil {
			C.fl_session_cancel(st.cs)
		}
	}
}

//export flgoEvidence
func flgoEvidence(h C.uintptr_t, v *C.fl_evidence_view) {
	st := cgo.Handle(h).Value().(*callbackState)
	if st.panicked.Load() || st.onEvidence == nil {
		return
	}
	defer st.recoverPanic()
	st.onEvidence(evidenceFromView(v, nil))
}

//export flgoProgress
func flgoProgress(h C.uintptr_t, done, total C.uint64_t) C.int {
	st := cgo.Handle(h).Value().(*callbackState)
	if st.panicked.Load() {
		return 1
	}
	if st.onProgress == nil {
		return 0
	}
	defer st.recoverPanic()
	st.onProgress(uint64(done), uint64(total))
	return 0
}
