package faultline

// Status codes and the error type. The numeric values come from faultline.h,
// where negative codes are pinned forever.

/*
#include <faultline/faultline.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// Status is an fl_status: 0 success, 1 end of an iteration, negative an error.
type Status int

// The status codes of faultline.h.
const (
	StatusOK             Status = C.FL_OK
	StatusDone           Status = C.FL_DONE
	StatusInvalidArg     Status = C.FL_ERR_INVALID_ARG
	StatusNoMem          Status = C.FL_ERR_NOMEM
	StatusIO             Status = C.FL_ERR_IO
	StatusParse          Status = C.FL_ERR_PARSE
	StatusRuleset        Status = C.FL_ERR_RULESET
	StatusRulesetVersion Status = C.FL_ERR_RULESET_VERSION
	StatusBusy           Status = C.FL_ERR_BUSY
	StatusBufferTooSmall Status = C.FL_ERR_BUFFER_TOO_SMALL
	StatusCancelled      Status = C.FL_ERR_CANCELLED
	StatusInternal       Status = C.FL_ERR_INTERNAL
	StatusNotFound       Status = C.FL_ERR_NOT_FOUND
)

var statusNames = map[Status]string{
	StatusOK:             "FL_OK",
	StatusDone:           "FL_DONE",
	StatusInvalidArg:     "FL_ERR_INVALID_ARG",
	StatusNoMem:          "FL_ERR_NOMEM",
	StatusIO:             "FL_ERR_IO",
	StatusParse:          "FL_ERR_PARSE",
	StatusRuleset:        "FL_ERR_RULESET",
	StatusRulesetVersion: "FL_ERR_RULESET_VERSION",
	StatusBusy:           "FL_ERR_BUSY",
	StatusBufferTooSmall: "FL_ERR_BUFFER_TOO_SMALL",
	StatusCancelled:      "FL_ERR_CANCELLED",
	StatusInternal:       "FL_ERR_INTERNAL",
	StatusNotFound:       "FL_ERR_NOT_FOUND",
}

// String is the constant's name in faultline.h, as fl_status_str returns it.
// It is computed in Go so that formatting an error never calls into C.
func (s Status) String() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return fmt.Sprintf("fl_status(%d)", int(s))
}

// Error is a failure reported by libfaultline: the status code and the
// message the library left on the handle (fl_session_last_error,
// fl_error_message).
//
// Compare with the sentinels using errors.Is; it matches on the code:
//
//	if errors.Is(err, faultline.ErrRuleset) { ... }
//
// Use errors.As to get at the message. An Error may also wrap a cause: a
// call stopped by its context wraps ctx.Err() (errors.Is(err,
// context.Canceled) holds as well as errors.Is(err, ErrCancelled)), and a
// call on a closed handle wraps ErrClosed.
type Error struct {
	Code  Status
	Msg   string
	cause error
}

func (e *Error) Error() string {
	s := "faultline: " + e.Code.String()
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	if e.cause != nil && e.cause != ErrClosed && e.cause != fs.ErrNotExist {
		s += " (" + e.cause.Error() + ")"
	}
	return s
}

// Is reports whether target is an *Error with the same code and either no
// message (a sentinel) or the same message.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok || e == nil || t == nil {
		return false
	}
	return t.Code == e.Code && (t.Msg == "" || t.Msg == e.Msg)
}

// Unwrap returns the cause, if any (ctx.Err(), ErrClosed, fs.ErrNotExist
// for a path or ruleset file that does not exist).
func (e *Error) Unwrap() error { return e.cause }

// Sentinels, one per status code, for errors.Is.
var (
	ErrInvalidArg     = &Error{Code: StatusInvalidArg}
	ErrNoMem          = &Error{Code: StatusNoMem}
	ErrIO             = &Error{Code: StatusIO}
	ErrParse          = &Error{Code: StatusParse}
	ErrRuleset        = &Error{Code: StatusRuleset}
	ErrRulesetVersion = &Error{Code: StatusRulesetVersion}
	ErrBusy           = &Error{Code: StatusBusy}
	ErrBufferTooSmall = &Error{Code: StatusBufferTooSmall}
	ErrCancelled      = &Error{Code: StatusCancelled}
	ErrInternal       = &Error{Code: StatusInternal}
	ErrNotFound       = &Error{Code: StatusNotFound}
)

// ErrLibraryVersion is returned by Open and Default when the libfaultline
// loaded at run time is not compatible with the faultline.h this package was
// built against.
var ErrLibraryVersion = errors.New("faultline: incompatible libfaultline version")

// ErrClosed is wrapped by the *Error returned for calls on a closed Engine,
// Session or Report (its Code is StatusInvalidArg).
var ErrClosed = errors.New("faultline: use of a closed handle")

// errFinished is what input calls after Finish (or ExportBundle) return:
// the session is closed to input, so the error matches ErrClosed.
func errFinished() error {
	return &Error{Code: StatusInvalidArg, Msg: "the session is finished", cause: ErrClosed}
}

// InputErrors is returned together with a Report, not instead of it, when
// some inputs could not be read: the report covers the others and lists
// these in Report.Input.Errors as well. Input that yields no log at all is
// an *Error (ErrIO) with no report, and a path that does not exist fails the
// call that names it (errors.Is(err, fs.ErrNotExist)).
//
//	rep, err := engine.Diagnose(ctx, paths...)
//	var partial *faultline.InputErrors
//	if errors.As(err, &partial) { log.Print(err) } else if err != nil { return err }
type InputErrors struct {
	Errors []SourceError
}

func (e *InputErrors) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "faultline: %d input(s) could not be read, the report covers the rest", len(e.Errors))
	for i, se := range e.Errors {
		if i == 5 {
			fmt.Fprintf(&b, "; and %d more", len(e.Errors)-5)
			break
		}
		fmt.Fprintf(&b, "; %s: %s", se.Source, se.Message)
	}
	return b.String()
}

// errClosed is what calls on a closed object return: StatusInvalidArg (what
// the C API answers for a NULL handle), matching ErrClosed too.
func errClosed(what string) error {
	return &Error{Code: StatusInvalidArg, Msg: what + " is closed", cause: ErrClosed}
}
