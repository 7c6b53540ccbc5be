package faultline

// Scale-out: scan ranges of big files on many workers, export what each
// found as an evidence bundle, and correlate the bundles once.

/*
#include <stdlib.h>
#include <faultline/faultline.h>
*/
import "C"

import (
	"context"
	"runtime"
	"unsafe"
)

// AddRange adds bytes [begin, end) of a regular, uncompressed file,
// line-aligned at both ends (a range starting inside a line skips to the
// next line start; one ending inside a line runs to that line's end), so
// ranges cut at any offsets partition the file's lines exactly. firstLine is
// the 1-based number of the line at begin when known; 0 has the library
// count the newlines before begin.
func (s *Session) AddRange(path string, begin, end, firstLine uint64) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	if s.finished {
		return errFinished()
	}
	cp := cString(path)
	defer freeC(unsafe.Pointer(cp))
	if rc := C.fl_session_add_range(s.s, cp, C.uint64_t(begin), C.uint64_t(end), C.uint64_t(firstLine)); rc != C.FL_OK {
		return s.lastError(rc)
	}
	return nil
}

// ExportBundle scans what is left and returns everything the session found
// as an evidence bundle, instead of correlating; pass bundles from many
// sessions to Engine.ReportFromBundles. The session takes no more input
// afterwards. Cancelling ctx stops the scan as in FinishContext.
func (s *Session) ExportBundle(ctx context.Context) ([]byte, error) {
	if err := s.begin(); err != nil {
		return nil, err
	}
	defer s.end()
	if s.finished {
		return nil, &Error{Code: StatusInvalidArg, Msg: "the session is finished"}
	}
	for _, st := range s.streams {
		if err := st.flushLocked(s); err != nil {
			return nil, err
		}
	}
	var p unsafe.Pointer
	var n C.size_t
	if err := s.withContext(ctx, func() C.fl_status { return C.fl_session_export_bundle(s.s, &p, &n) }); err != nil {
		return nil, err
	}
	s.finished = true
	for _, st := range s.streams {
		st.release()
	}
	defer C.fl_free(p)
	return C.GoBytes(p, C.int(n)), nil
}

// ReportFromBundles correlates bundles exported by sessions over this
// Engine's ruleset into one report, as if one session had scanned
// everything. Give them in source order (ranges of one file in file order).
// opts supplies the job window, clock offsets and time zone; threads and
// callbacks are unused. A bundle that fails verification is ErrParse, its
// message naming the bundle's index.
func (e *Engine) ReportFromBundles(opts Options, bundles ...[]byte) (*Report, error) {
	rs, err := e.acquire()
	if err != nil {
		return nil, err
	}
	defer e.release()
	o, err := opts.toC()
	if err != nil {
		return nil, err
	}
	defer o.free()
	// The library reads the bundles during the call only. Their pointers sit
	// in a C array, so the Go memory they point to is pinned (the cgo rules
	// allow Go pointers in C memory only when pinned), not copied.
	n := len(bundles)
	count := max(n, 1)
	ptrs := unsafe.Slice((*unsafe.Pointer)(C.malloc(C.size_t(count)*C.size_t(unsafe.Sizeof(unsafe.Pointer(nil))))), count)
	defer C.free(unsafe.Pointer(&ptrs[0]))
	lens := unsafe.Slice((*C.size_t)(C.malloc(C.size_t(count)*C.size_t(unsafe.Sizeof(C.size_t(0))))), count)
	defer C.free(unsafe.Pointer(&lens[0]))
	var pin runtime.Pinner
	defer pin.Unpin()
	for i, b := range bundles {
		ptrs[i], lens[i] = nil, C.size_t(len(b))
		if len(b) > 0 {
			p := unsafe.SliceData(b)
			pin.Pin(p)
			ptrs[i] = unsafe.Pointer(p)
		}
	}
	var r *C.fl_report
	var cerr *C.fl_error
	rc := C.fl_report_from_bundles(&r, rs, &o.co, &ptrs[0], &lens[0], C.size_t(n), &cerr)
	if err := takeError(rc, cerr); err != nil {
		return nil, err
	}
	return newReport(r)
}
