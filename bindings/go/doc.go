// Package faultline is the Go binding of libfaultline, an embeddable
// diagnosis engine for GPU training and inference failure logs. It names the
// initiating failure of an incident (the rank whose GPU fell off the bus)
// apart from its collateral (the NCCL watchdog timeouts healthy ranks print
// minutes later), with the evidence lines, a fix and a verify command.
//
// The binding sits on the stable C ABI (faultline/faultline.h) and nothing
// else. It is built with cgo and finds the library with pkg-config:
//
//	PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig LD_LIBRARY_PATH=$PREFIX/lib go test ./...
//
// # Use
//
// Load a ruleset once and share it:
//
//	eng, err := faultline.Default() // or faultline.Open("rules.flrules")
//	defer eng.Close()
//	rep, err := eng.Diagnose(ctx, "/archive/job-1234/")
//	defer rep.Close()
//	if inc := rep.Primary(); inc != nil {
//		fmt.Println(inc.Rule, inc.Initiating.Host, inc.Fix)
//	}
//
// Or push live bytes through a Session:
//
//	s, err := eng.NewSession(faultline.Options{OnEvidence: func(ev faultline.Evidence) { ... }})
//	defer s.Close()
//	st, err := s.OpenStream("node017/dmesg.log")
//	st.Write(newBytes) // io.Writer; or st.ReadFrom(r), s.Feed(r)
//	rep, err := s.Finish()
//
// Scale out by scanning ranges of big files on many workers and
// correlating once: Session.AddRange, Session.ExportBundle and
// Engine.ReportFromBundles.
//
// # Concurrency
//
// An Engine is immutable and shared by any number of goroutines and
// sessions. A Session (and its Streams) is used by one goroutine at a time;
// overlapping calls fail with ErrBusy rather than wait. Session.Cancel and
// Close may be called from any goroutine. A Report is immutable.
//
// # Crossing into C
//
// Bytes go in by the chunk (ChunkSize, one cgo call each), results come out
// by the batch (Report.Evidence pulls 4096 records per call); nothing costs
// a cgo call per line. The library never keeps Go memory: chunks are
// gathered in C memory or passed for the duration of one call. Callbacks
// (Options.OnEvidence, OnProgress) reach Go through C trampolines and a
// runtime/cgo.Handle; they run on the calling goroutine, inside the cgo call
// that triggered them.
//
// # Errors
//
// Failures are *Error values carrying the library's status code and the
// message from the handle; errors.Is(err, ErrRuleset) and the other
// sentinels match on the code. A call stopped by its context matches both
// ErrCancelled and ctx.Err().
//
// Engine, Session and Report hold C memory: Close them. Close is idempotent,
// and a finaliser frees what is dropped without Close.
package faultline
