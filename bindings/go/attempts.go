package faultline

// A job's history: the attempts of one job the report lists (restart
// directories, torchelastic restarts, Slurm requeues, prior attempts'
// bundles) and how an incident repeats the attempts before it.

/*
#include <faultline/faultline.h>
*/
import "C"

import (
	"runtime"
	"time"
	"unsafe"
)

// Bounds on a session's history (fl_session_add_prior_bundle).
const (
	MaxPriorBundles     = C.FL_MAX_PRIOR_BUNDLES
	MaxPriorBundleBytes = C.FL_MAX_PRIOR_BUNDLE_BYTES
)

// Attempt is one run of the job (the report's attempts[i], oldest first).
type Attempt struct {
	Index      int             `json:"index"`
	Label      string          `json:"label"`      // "attempt_2", "restart 1", "requeue 1", "prior bundle 1", ...
	Recognised string          `json:"recognised"` // "directory", "elastic-restart", "slurm-requeue", "bundle", "session"
	Start      time.Time       `json:"start"`
	End        time.Time       `json:"end"`
	Primary    *AttemptPrimary `json:"primary"` // nil when the attempt has no incident
}

// AttemptPrimary is an attempt's primary incident, in brief.
type AttemptPrimary struct {
	Rule string `json:"rule"`
	Host string `json:"host"`
	Rank Rank   `json:"rank"`
	Step *int64 `json:"step"` // nil when no line says
}

// Recurrence is how an incident repeats earlier attempts of its job: the
// earlier attempts (indices into Report.Attempts) that failed with the same
// rule, of those how many on its host and at its step, and whether it fails
// on the checkpoint the previous attempt saved. It raised the confidence.
type Recurrence struct {
	Attempts                         []int `json:"attempts"`
	SameHost                         int   `json:"same_host"`
	SameStep                         int   `json:"same_step"`
	ResumeFailedOnPreviousCheckpoint bool  `json:"resume_failed_on_previous_checkpoint"`
}

// Recurred reports whether anything recurred.
func (r *Recurrence) Recurred() bool {
	return r != nil && (len(r.Attempts) > 0 || r.ResumeFailedOnPreviousCheckpoint)
}

// AddPriorBundle gives the session an earlier attempt of the same job, as
// ExportBundle returned it from that attempt's session: call it once per
// attempt, oldest first, before Finish. The report then lists the attempts
// (Report.Attempts) and what recurs (Incident.Recurrence). At most
// MaxPriorBundles bundles of MaxPriorBundleBytes each; past that, or for
// bytes that are not a bundle of this ruleset, an *Error (StatusInvalidArg,
// StatusParse) with the library's message. The library reads the bytes
// during the call only.
func (s *Session) AddPriorBundle(data []byte) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	if s.finished {
		return errFinished()
	}
	if len(data) == 0 {
		return &Error{Code: StatusInvalidArg, Msg: "empty prior bundle"}
	}
	rc := C.fl_session_add_prior_bundle(s.s, unsafe.Pointer(&data[0]), C.size_t(len(data)))
	runtime.KeepAlive(data)
	if rc != C.FL_OK {
		return s.lastError(rc)
	}
	return nil
}
