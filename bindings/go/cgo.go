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
// binding: the same major version (the ABI is frozen within a major) and at
// least the header's minor, since functions a newer header declares would
// be missing from an older library.
var checkLibrary = sync.OnceValue(func() error {
	lib := LibraryVersionNumber()
	if lib/10000 != HeaderVersion/10000 || lib < HeaderVersion {
		return fmt.Errorf("%w: libfaultline %s (%d) loaded, binding built against faultline.h %d (need the same major and at least that minor)",
			ErrLibraryVersion, LibraryVersion(), lib, HeaderVersion)
	}
	return nil
})

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
