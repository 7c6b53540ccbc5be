package faultline

// The cgo boundary: build flags, the header version check, and the small
// helpers every other file uses to cross into C. The C ABI in
// faultline/faultline.h is the only thing this package relies on.

/*
#cgo pkg-config: faultline
#include <stdlib.h>
#include <faultline/faultline.h>

#if FL_VERSION_MAJOR != 0
#error "this Go binding is written against faultline 0.x; faultline.h has another major version"
#endif
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// HeaderVersion is the FL_VERSION_NUMBER of the faultline.h this package was
// compiled against (MAJOR*10000 + MINOR*100 + PATCH).
const HeaderVersion = C.FL_VERSION_NUMBER

// LibraryVersion is the version of the libfaultline loaded at run time,
// "MAJOR.MINOR.PATCH".
func LibraryVersion() string { return C.GoString(C.fl_version_string()) }

// LibraryVersionNumber is the loaded library's FL_VERSION_NUMBER.
func LibraryVersionNumber() int { return int(C.fl_version_number()) }

// checkLibrary verifies, once, that the loaded library can serve this
// binding. From 1.0 on: the same major (the ABI is frozen within a major)
// and at least the header's minor, since functions a newer header declares
// would be missing from an older library. While the major is 0 a minor
// release may change the ABI, so the minor must match too (faultline.h,
// "ABI and versions").
var checkLibrary = sync.OnceValue(func() error {
	if err := compatible(LibraryVersionNumber(), HeaderVersion); err != nil {
		return fmt.Errorf("%w: libfaultline %s loaded, %v", ErrLibraryVersion, LibraryVersion(), err)
	}
	return nil
})

// compatible says whether a library of version number lib can serve a
// binding built against header version number hdr.
func compatible(lib, hdr int) error {
	switch {
	case lib/10000 != hdr/10000:
		return fmt.Errorf("library %d, binding built against faultline.h %d: another major", lib, hdr)
	case hdr/10000 == 0 && lib/100 != hdr/100:
		return fmt.Errorf("library %d, binding built against faultline.h %d: 0.x needs the same minor", lib, hdr)
	case lib < hdr:
		return fmt.Errorf("library %d older than the binding's faultline.h %d", lib, hdr)
	}
	return nil
}

// cString returns a C copy of s that the caller frees with C.free.
func cString(s string) *C.char { return C.CString(s) }

// freeC releases memory allocated with C.malloc/C.CString.
func freeC(p unsafe.Pointer) { C.free(p) }

// takeError turns a constructor's fl_error into a Go *Error and frees it.
func takeError(rc C.fl_status, err *C.fl_error) error {
	if rc == C.FL_OK {
		C.fl_error_free(err)
		return nil
	}
	msg := ""
	code := Status(rc)
	if err != nil {
		msg = C.GoString(C.fl_error_message(err))
		if c := Status(C.fl_error_code(err)); c < 0 {
			code = c
		}
		C.fl_error_free(err)
	}
	return &Error{Code: code, Msg: msg}
}

// cStatusString is the library's own name for a status code, so tests can
// check that Status.String agrees with fl_status_str.
func cStatusString(s Status) string { return C.GoString(C.fl_status_str(C.fl_status(s))) }
