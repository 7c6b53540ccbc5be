package faultline

/*
#include <stdlib.h>
#include <faultline/faultline.h>
*/
import "C"

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"runtime"
	"sync"
	"unsafe"
)

// Engine is a loaded ruleset: the compiled catalog of failure signatures.
// It is immutable and safe for concurrent use: any number of goroutines may
// call Diagnose and NewSession on one Engine at the same time, and every
// session shares its pattern database.
//
// Close releases it. Sessions that are still open keep the underlying
// ruleset alive until they are closed, so Close never pulls the ruleset out
// from under a running scan. A finaliser frees an Engine that is dropped
// without Close; do not rely on it for timely release (a ruleset holds the
// pattern database, megabytes of C memory the Go collector cannot see).
type Engine struct {
	mu     sync.Mutex
	rs     *C.fl_ruleset
	refs   int  // open sessions using rs
	closed bool // Close was called; rs is freed when refs drops to 0

	name, version string
	rules         int
}

// Open loads a compiled .flrules file, or compiles a rule source directory
// on the fly (fl_ruleset_load_file). Errors match ErrIO for a file that
// cannot be read (and fs.ErrNotExist as well when it does not exist) and
// ErrRuleset / ErrRulesetVersion for one that is not a valid ruleset; their
// message names the file (and the rule id and field for rule source
// errors).
func Open(rulesPath string) (*Engine, error) {
	if err := checkLibrary(); err != nil {
		return nil, err
	}
	cpath := cString(rulesPath)
	defer freeC(unsafe.Pointer(cpath))
	var rs *C.fl_ruleset
	var cerr *C.fl_error
	rc := C.fl_ruleset_load_file(&rs, cpath, &cerr)
	if err := takeError(rc, cerr); err != nil {
		if _, serr := os.Stat(rulesPath); errors.Is(serr, fs.ErrNotExist) {
			err.(*Error).cause = fs.ErrNotExist
		}
		return nil, err
	}
	return newEngine(rs), nil
}

// Default loads the ruleset embedded in the library.
func Default() (*Engine, error) {
	if err := checkLibrary(); err != nil {
		return nil, err
	}
	var rs *C.fl_ruleset
	var cerr *C.fl_error
	rc := C.fl_ruleset_load_default(&rs, &cerr)
	if err := takeError(rc, cerr); err != nil {
		return nil, err
	}
	return newEngine(rs), nil
}

// OpenBytes loads a compiled ruleset from memory; the bytes are copied by
// the library and not kept.
func OpenBytes(data []byte) (*Engine, error) {
	if err := checkLibrary(); err != nil {
		return nil, err
	}
	var rs *C.fl_ruleset
	var cerr *C.fl_error
	var p unsafe.Pointer
	if len(data) > 0 {
		p = unsafe.Pointer(unsafe.SliceData(data))
	}
	rc := C.fl_ruleset_load_memory(&rs, p, C.size_t(len(data)), &cerr)
	runtime.KeepAlive(data)
	if err := takeError(rc, cerr); err != nil {
		return nil, err
	}
	return newEngine(rs), nil
}

// Compile compiles the rule source directory srcDir into outPath
// atomically. Errors name the file, rule id and field.
func Compile(srcDir, outPath string) error {
	if err := checkLibrary(); err != nil {
		return err
	}
	csrc, cout := cString(srcDir), cString(outPath)
	defer freeC(unsafe.Pointer(csrc))
	defer freeC(unsafe.Pointer(cout))
	var cerr *C.fl_error
	rc := C.fl_ruleset_compile(csrc, cout, &cerr)
	return takeError(rc, cerr)
}

func newEngine(rs *C.fl_ruleset) *Engine {
	e := &Engine{
		rs:      rs,
		name:    C.GoString(C.fl_ruleset_name(rs)),
		version: C.GoString(C.fl_ruleset_version(rs)),
		rules:   int(C.fl_ruleset_rule_count(rs)),
	}
	runtime.SetFinalizer(e, (*Engine).Close)
	return e
}

// Name is the ruleset's name ("faultline-default").
func (e *Engine) Name() string { return e.name }

// Version is the ruleset's version.
func (e *Engine) Version() string { return e.version }

// RuleCount is the number of rules in the ruleset.
func (e *Engine) RuleCount() int { return e.rules }

// Close releases the ruleset once no session uses it. It is idempotent and
// always returns nil; calls on the Engine afterwards fail with ErrClosed.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	runtime.SetFinalizer(e, nil)
	if e.refs == 0 {
		e.free()
	}
	return nil
}

func (e *Engine) free() {
	C.fl_ruleset_free(e.rs)
	e.rs = nil
}

// acquire pins the ruleset for a new session.
func (e *Engine) acquire() (*C.fl_ruleset, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errClosed("engine")
	}
	e.refs++
	return e.rs, nil
}

// release drops a session's pin; the last one after Close frees the ruleset.
func (e *Engine) release() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.refs--
	if e.closed && e.refs == 0 && e.rs != nil {
		e.free()
	}
}

// RulesJSON is a JSON array with every rule's summary (id, title,
// reference, category, tags, layer, signals).
func (e *Engine) RulesJSON() ([]byte, error) {
	return e.withRuleset(func(rs *C.fl_ruleset) ([]byte, error) {
		var p *C.char
		var n C.size_t
		if rc := C.fl_ruleset_rules_json(rs, &p, &n); rc != C.FL_OK {
			return nil, &Error{Code: Status(rc), Msg: "listing rules"}
		}
		defer C.fl_free(unsafe.Pointer(p))
		return C.GoBytes(unsafe.Pointer(p), C.int(n)), nil
	})
}

// RuleJSON is the full entry of one rule as a JSON object; ErrNotFound when
// no rule has that id.
func (e *Engine) RuleJSON(id string) ([]byte, error) {
	return e.ruleDoc(id, false)
}

// RuleText is the full entry of one rule as text: root cause, symptoms,
// how to confirm, fix, verify, prevention, fingerprint, related, sources.
func (e *Engine) RuleText(id string) (string, error) {
	b, err := e.ruleDoc(id, true)
	return string(b), err
}

func (e *Engine) ruleDoc(id string, text bool) ([]byte, error) {
	return e.withRuleset(func(rs *C.fl_ruleset) ([]byte, error) {
		cid := cString(id)
		defer freeC(unsafe.Pointer(cid))
		var p *C.char
		var n C.size_t
		var rc C.fl_status
		if text {
			rc = C.fl_ruleset_rule_text(rs, cid, &p, &n)
		} else {
			rc = C.fl_ruleset_rule_json(rs, cid, &p, &n)
		}
		if rc != C.FL_OK {
			return nil, &Error{Code: Status(rc), Msg: "rule '" + id + "'"}
		}
		defer C.fl_free(unsafe.Pointer(p))
		return C.GoBytes(unsafe.Pointer(p), C.int(n)), nil
	})
}

// SignalCostsJSON measures what each signal adds to a scan on a sample of
// paths (up to sampleBytes from their starts): its pattern alone in
// Hyperscan, the lines it matches and phase B's confirm + extract time, as the
// JSON object fl_x_ruleset_signal_costs_json documents, costliest first. It
// takes seconds; `faultline bench --costs` prints the same.
func (e *Engine) SignalCostsJSON(sampleBytes uint64, paths ...string) ([]byte, error) {
	return e.withRuleset(func(rs *C.fl_ruleset) ([]byte, error) {
		count := max(len(paths), 1)
		cpaths := unsafe.Slice((**C.char)(C.malloc(C.size_t(count)*C.size_t(unsafe.Sizeof((*C.char)(nil))))), count)
		defer freeC(unsafe.Pointer(&cpaths[0]))
		for i, p := range paths {
			cpaths[i] = cString(p)
			defer freeC(unsafe.Pointer(cpaths[i]))
		}
		var out *C.char
		var n C.size_t
		var cerr *C.fl_error
		rc := C.fl_x_ruleset_signal_costs_json(rs, &cpaths[0], C.size_t(len(paths)), C.uint64_t(sampleBytes), &out, &n, &cerr)
		if err := takeError(rc, cerr); err != nil {
			return nil, err
		}
		defer C.fl_free(unsafe.Pointer(out))
		return C.GoBytes(unsafe.Pointer(out), C.int(n)), nil
	})
}

func (e *Engine) withRuleset(fn func(*C.fl_ruleset) ([]byte, error)) ([]byte, error) {
	rs, err := e.acquire()
	if err != nil {
		return nil, err
	}
	defer e.release()
	return fn(rs)
}

// Diagnose scans paths (files, directories read recursively, .gz/.zst files,
// or "-" for standard input) with the default Options and returns the
// report. See DiagnoseWith.
func (e *Engine) Diagnose(ctx context.Context, paths ...string) (*Report, error) {
	return e.DiagnoseWith(ctx, Options{}, paths...)
}

// DiagnoseWith scans paths with opts and correlates the evidence into a
// report. A path that does not exist fails the call (errors.Is(err,
// fs.ErrNotExist)), as does input that yields no log at all (ErrIO). Sources
// that exist but cannot be read do not: the report covers the others, lists
// them in Report.Input.Errors, and comes with an *InputErrors error.
//
// Cancelling ctx stops the scan soon (fl_session_cancel from a watcher
// goroutine); the error then matches both ErrCancelled and ctx.Err()
// (context.Canceled or context.DeadlineExceeded) under errors.Is.
func (e *Engine) DiagnoseWith(ctx context.Context, opts Options, paths ...string) (*Report, error) {
	if err := ctx.Err(); err != nil {
		return nil, cancelledError(ctx, "not started")
	}
	s, err := e.NewSession(opts)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	for _, p := range paths {
		if err := s.AddPath(p); err != nil {
			return nil, err
		}
	}
	return s.FinishContext(ctx)
}

// cancelledError is the error of a call stopped by ctx.
func cancelledError(ctx context.Context, msg string) error {
	cause := ctx.Err()
	if cause == nil {
		cause = context.Canceled
	}
	return &Error{Code: StatusCancelled, Msg: msg, cause: cause}
}
