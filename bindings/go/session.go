package faultline

/*
#include <stdint.h>
#include <stdlib.h>
#include <faultline/faultline.h>

void flgo_set_callbacks(fl_session_options *o, uintptr_t handle, int evidence, int progress);
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime"
	"runtime/cgo"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// ChunkSize is how many bytes a Stream gathers before it pushes them to the
// library in one cgo call (fl_session_feed). Writes at least this large go
// through without a copy.
const ChunkSize = 256 << 10

// Options configure a session (fl_session_options). The zero value is the
// library's defaults.
type Options struct {
	// Threads scanning files; 0 is one per core.
	Threads int
	// JobStart and JobEnd bound the job; zero derives them from the logs.
	// Hardware lines before the job are reported as ignored, not diagnosed.
	JobStart, JobEnd time.Time
	// ClockOffsets are seconds added to a host's timestamps to reach true
	// time.
	ClockOffsets map[string]float64
	// TZ is the zone of naive timestamps: "UTC", a fixed offset ("+05:30",
	// "-0800", "UTC+05:30") or "Etc/GMT+8" (POSIX sign: 8 hours west);
	// "" is UTC. Regional names whose offset follows tz database rules
	// ("Europe/Berlin") are rejected with ErrInvalidArg: convert such logs'
	// times with an explicit offset.
	TZ string

	// OnEvidence, when set, is called for each evidence record as it is
	// found, in source then offset order within a source.
	//
	// It runs synchronously on the goroutine (and OS thread) that made the
	// call into the library — Write, Feed, Flush, Scan, Finish — inside that
	// cgo call, and never after the call returns. Keep it short: the scan
	// waits for it. It must not call methods of the same Session or its
	// Streams (they fail with ErrBusy); Cancel and Close are allowed. A
	// panic in it cancels the scan and is re-raised on the calling goroutine
	// once the library has returned.
	OnEvidence func(Evidence)
	// OnProgress, when set, is called as file scanning advances with the
	// bytes done and the total known (0 when unknown); same rules as
	// OnEvidence.
	OnProgress func(done, total uint64)

	// StreamName names the stream that Session.Write and Session.Feed push
	// into; it is the evidence source, and, like a path, can attribute host
	// and rank ("node017/rank-3.log"). Default "stream".
	StreamName string

	// Limits on reading the inputs; 0 is the library's default. A source
	// that hits one is listed in Report.Input.Errors naming the limit; what
	// was read of it is still diagnosed.
	//
	// MaxSourceBytes caps the bytes of log read per source, after
	// decompression (default: none).
	MaxSourceBytes uint64
	// MaxDecompressedBytes caps what one .gz/.zst source may decompress to
	// (default: 1 TiB).
	MaxDecompressedBytes uint64
	// TimeBudget is the wall clock allowed for reading, from the session's
	// creation (default: none). Negative is ErrInvalidArg.
	TimeBudget time.Duration

	// Retry policy; 0 is the library's default. An incident's restart
	// becomes a stop (Incident.Action) once earlier attempts of the job
	// within RestartWindow (default 24 h) were ended by the same rule
	// MaxRestartsPerRule times (default 3) or failed on its host
	// MaxRestartsPerHost times (default 3). A negative RestartWindow is
	// ErrInvalidArg.
	MaxRestartsPerRule uint32
	MaxRestartsPerHost uint32
	RestartWindow      time.Duration

	// How the job ended, when the caller knows (fl_session_options.job_state
	// and job_exit_status). JobState is "" (unknown), "completed", "failed",
	// "timeout", "cancelled", "oom", "node_fail", "preempted", "running"
	// (alive when the logs were taken), or Slurm's State name ("COMPLETED",
	// "OUT_OF_MEMORY", ...); JobExitStatus is nil (unknown), 0 to 255, or a
	// negative signal number. Anything else is ErrInvalidArg. With no
	// incident in the logs, a stated failure gives the state's catalog
	// reference (else the fallback's) on the rank whose log stopped first,
	// "running" the silent hang; "completed" with exit status 0 marks what
	// the logs show as survived. A cause the evidence backs is never
	// overridden. The report echoes it (Input.Job).
	JobState      string
	JobExitStatus *int
}

// jobStates maps JobState to fl_session_options.job_state.
var jobStates = map[string]C.int32_t{
	"completed": C.FL_JOB_COMPLETED, "COMPLETED": C.FL_JOB_COMPLETED,
	"failed": C.FL_JOB_FAILED, "FAILED": C.FL_JOB_FAILED,
	"timeout": C.FL_JOB_TIMEOUT, "TIMEOUT": C.FL_JOB_TIMEOUT,
	"cancelled": C.FL_JOB_CANCELLED, "CANCELLED": C.FL_JOB_CANCELLED,
	"oom": C.FL_JOB_OOM, "OUT_OF_MEMORY": C.FL_JOB_OOM,
	"node_fail": C.FL_JOB_NODE_FAIL, "NODE_FAIL": C.FL_JOB_NODE_FAIL,
	"preempted": C.FL_JOB_PREEMPTED, "PREEMPTED": C.FL_JOB_PREEMPTED,
	"running": C.FL_JOB_RUNNING, "RUNNING": C.FL_JOB_RUNNING,
}

// Session scans sources into evidence and finishes into a Report. Add
// paths, push bytes (Write, Feed, or named streams from OpenStream), then
// call Finish once.
//
// A Session is used by one goroutine at a time, like the fl_session under
// it: a call made while another is in progress fails with ErrBusy instead of
// waiting (this is also what a call from inside OnEvidence gets). Cancel and
// Close may be called from any goroutine at any time.
type Session struct {
	engine *Engine
	mu     sync.Mutex   // held for every call into the session
	life   sync.RWMutex // write-held while freeing, read-held by Cancel
	s      *C.fl_session
	closed atomic.Bool

	cb     *callbackState
	handle cgo.Handle

	finished   bool
	streamName string
	def        *stream
	streams    []*stream // no pointers back to the Session: a cycle would keep the finaliser from running
}

// NewSession opens a session over the Engine's ruleset.
func (e *Engine) NewSession(opts Options) (*Session, error) {
	rs, err := e.acquire()
	if err != nil {
		return nil, err
	}
	s, err := newSession(e, rs, opts)
	if err != nil {
		e.release()
		return nil, err
	}
	return s, nil
}

// cOptions is an fl_session_options and the C memory it points to.
type cOptions struct {
	co    C.fl_session_options
	cfree []unsafe.Pointer
}

// free releases the C copies; the library copied what it keeps.
func (o *cOptions) free() {
	for _, p := range o.cfree {
		freeC(p)
	}
	o.cfree = nil
}

// toC builds the C options (without callbacks). Everything they point to
// lives in C memory; call free once the library call has returned.
func (opts *Options) toC() (*cOptions, error) {
	o := &cOptions{}
	if rc := C.fl_session_options_init(&o.co, C.size_t(unsafe.Sizeof(o.co))); rc != C.FL_OK {
		return nil, &Error{Code: Status(rc), Msg: "fl_session_options_init"}
	}
	if opts.Threads < 0 || opts.Threads > 1<<16 {
		return nil, &Error{Code: StatusInvalidArg, Msg: fmt.Sprintf("Threads %d out of range", opts.Threads)}
	}
	o.co.threads = C.uint32_t(opts.Threads)
	if opts.TimeBudget < 0 {
		return nil, &Error{Code: StatusInvalidArg, Msg: fmt.Sprintf("TimeBudget %v is negative", opts.TimeBudget)}
	}
	o.co.max_source_bytes = C.uint64_t(opts.MaxSourceBytes)
	o.co.max_decompressed_bytes = C.uint64_t(opts.MaxDecompressedBytes)
	o.co.time_budget_s = C.double(opts.TimeBudget.Seconds())
	if opts.RestartWindow < 0 {
		return nil, &Error{Code: StatusInvalidArg, Msg: fmt.Sprintf("RestartWindow %v is negative", opts.RestartWindow)}
	}
	o.co.max_restarts_per_rule = C.uint32_t(opts.MaxRestartsPerRule)
	o.co.max_restarts_per_host = C.uint32_t(opts.MaxRestartsPerHost)
	o.co.restart_window_s = C.double(opts.RestartWindow.Seconds())
	if opts.JobState != "" {
		st, ok := jobStates[opts.JobState]
		if !ok {
			return nil, &Error{Code: StatusInvalidArg, Msg: fmt.Sprintf("JobState %q is not a job state", opts.JobState)}
		}
		o.co.job_state = st
	}
	if opts.JobExitStatus != nil {
		if *opts.JobExitStatus < -64 || *opts.JobExitStatus > 255 {
			return nil, &Error{Code: StatusInvalidArg, Msg: fmt.Sprintf("JobExitStatus %d is not an exit status (0 to 255) nor a negative signal number (-1 to -64)", *opts.JobExitStatus)}
		}
		o.co.job_exit_status = C.int32_t(*opts.JobExitStatus)
	}
	if !opts.JobStart.IsZero() {
		o.co.job_start_us = C.int64_t(opts.JobStart.UnixMicro())
	}
	if !opts.JobEnd.IsZero() {
		o.co.job_end_us = C.int64_t(opts.JobEnd.UnixMicro())
	}
	if opts.TZ != "" {
		tz := cString(opts.TZ)
		o.cfree = append(o.cfree, unsafe.Pointer(tz))
		o.co.tz = tz
	}
	if n := len(opts.ClockOffsets); n > 0 {
		hosts := make([]string, 0, n)
		for h := range opts.ClockOffsets {
			hosts = append(hosts, h)
		}
		sort.Strings(hosts)
		arr := unsafe.Slice((*C.fl_clock_offset)(C.malloc(C.size_t(n)*C.size_t(unsafe.Sizeof(C.fl_clock_offset{})))), n)
		o.cfree = append(o.cfree, unsafe.Pointer(&arr[0]))
		for i, h := range hosts {
			ch := cString(h)
			o.cfree = append(o.cfree, unsafe.Pointer(ch))
			arr[i].host = ch
			arr[i].seconds = C.double(opts.ClockOffsets[h])
		}
		o.co.clock_offsets = &arr[0]
		o.co.clock_offset_count = C.size_t(n)
	}
	return o, nil
}

func newSession(e *Engine, rs *C.fl_ruleset, opts Options) (*Session, error) {
	o, err := opts.toC()
	if err != nil {
		return nil, err
	}
	defer o.free()
	s := &Session{engine: e, streamName: opts.StreamName}
	if s.streamName == "" {
		s.streamName = "stream"
	}
	if opts.OnEvidence != nil || opts.OnProgress != nil {
		s.cb = &callbackState{onEvidence: opts.OnEvidence, onProgress: opts.OnProgress}
		s.handle = cgo.NewHandle(s.cb)
		C.flgo_set_callbacks(&o.co, C.uintptr_t(s.handle), boolInt(opts.OnEvidence != nil), boolInt(opts.OnProgress != nil))
	}
	var cerr *C.fl_error
	rc := C.fl_session_new(&s.s, rs, &o.co, &cerr)
	if err := takeError(rc, cerr); err != nil {
		if s.cb != nil {
			s.handle.Delete()
		}
		return nil, err
	}
	if s.cb != nil {
		s.cb.cs = s.s
	}
	runtime.SetFinalizer(s, (*Session).Close)
	return s, nil
}

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// begin starts a call: the session must be open and idle.
func (s *Session) begin() error {
	if s.closed.Load() {
		return errClosed("session")
	}
	if !s.mu.TryLock() {
		return &Error{Code: StatusBusy, Msg: "another call on this session is in progress"}
	}
	if s.s == nil {
		s.mu.Unlock()
		return errClosed("session")
	}
	return nil
}

// end finishes a call begun with begin. A Close that arrived meanwhile could
// not free the session (the call held it), so the call frees it here.
func (s *Session) end() {
	s.mu.Unlock()
	if s.closed.Load() && s.mu.TryLock() {
		s.freeLocked()
		s.mu.Unlock()
	}
}

// repanic re-raises, on the calling goroutine, a panic recovered in a
// callback during the C call that just returned.
func (s *Session) repanic() {
	if s.cb != nil && s.cb.panicked.Load() {
		v := s.cb.panicVal
		s.cb.panicVal = nil
		s.cb.panicked.Store(false)
		panic(v)
	}
}

// lastError is the handle's error for status rc. On a session, NotFound is
// only ever a path that does not exist, so it also matches fs.ErrNotExist.
func (s *Session) lastError(rc C.fl_status) error {
	e := &Error{Code: Status(rc), Msg: C.GoString(C.fl_session_last_error(s.s))}
	if rc == C.FL_ERR_NOT_FOUND {
		e.cause = fs.ErrNotExist
	}
	return e
}

// AddPath adds a file, a directory (read recursively, each file one
// source), a .gz or .zst file, or "-" for standard input. It is scanned by
// Scan or Finish. A path that does not exist is an error here that matches
// fs.ErrNotExist (and ErrNotFound); the report lists it among its input
// errors too. After Finish it fails with ErrClosed.
func (s *Session) AddPath(path string) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	if s.finished {
		return errFinished()
	}
	cp := cString(path)
	defer freeC(unsafe.Pointer(cp))
	if rc := C.fl_session_add_path(s.s, cp); rc != C.FL_OK {
		return s.lastError(rc)
	}
	return nil
}

// Scan scans every path added so far, using the session's threads. Sources
// that cannot be read do not fail it: ErrorCount counts them and the report
// lists them. Cancelling ctx stops the scan (see Engine.DiagnoseWith), and
// the session then stays cancelled.
func (s *Session) Scan(ctx context.Context) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	return s.withContext(ctx, func() C.fl_status { return C.fl_session_scan(s.s) })
}

// withContext runs a cancellable library call, with a watcher goroutine
// that calls fl_session_cancel if ctx is done first.
func (s *Session) withContext(ctx context.Context, call func() C.fl_status) error {
	if ctx.Err() != nil {
		return cancelledError(ctx, "cancelled before the scan started")
	}
	stop := context.AfterFunc(ctx, s.Cancel)
	rc := call()
	stop()
	s.repanic()
	if rc == C.FL_OK {
		return nil
	}
	err := s.lastError(rc)
	if rc == C.FL_ERR_CANCELLED && ctx.Err() != nil {
		err.(*Error).cause = ctx.Err()
	}
	return err
}

// ErrorCount is the number of sources that could not be read so far (0 on
// a closed or busy session).
func (s *Session) ErrorCount() int {
	if err := s.begin(); err != nil {
		return 0
	}
	defer s.end()
	return int(C.fl_session_error_count(s.s))
}

// Finish is FinishContext with a context that is never cancelled.
func (s *Session) Finish() (*Report, error) { return s.FinishContext(context.Background()) }

// FinishContext pushes what the streams still hold, scans what is left,
// closes open streams, correlates, and returns the report. The session takes
// no more input afterwards; Close it to free it. Cancelling ctx stops the
// scan: the error matches ErrCancelled and ctx.Err().
//
// When some sources could not be read, the report comes with a non-nil
// *InputErrors error naming them. When paths were added but none yielded a
// log (an empty directory, only unreadable files), there is no report and
// the error matches ErrIO.
func (s *Session) FinishContext(ctx context.Context) (*Report, error) {
	return s.correlate(ctx, true)
}

// Snapshot returns a report of everything given so far without ending the
// session, for a caller that follows a live job and re-diagnoses it at a
// cadence (fl_session_snapshot): paths and ranges not yet scanned are
// scanned, streams push their complete lines (a trailing partial line stays
// buffered), and the session goes on taking input; a later Snapshot or
// Finish sees everything. It costs a copy of the evidence kept and a
// correlation: call it at a bounded cadence, not per line. Close the
// report. Unreadable sources come as *InputErrors beside the report, as
// from Finish.
func (s *Session) Snapshot(ctx context.Context) (*Report, error) {
	return s.correlate(ctx, false)
}

// correlate is Finish (finish) or Snapshot: streams push what they hold,
// the library scans and correlates, and a report comes back, with
// *InputErrors beside it when some sources could not be read.
func (s *Session) correlate(ctx context.Context, finish bool) (*Report, error) {
	if err := s.begin(); err != nil {
		return nil, err
	}
	defer s.end()
	if s.finished {
		return nil, errFinished()
	}
	for _, st := range s.streams {
		if err := st.flushLocked(s); err != nil {
			return nil, err
		}
	}
	var r *C.fl_report
	call := func() C.fl_status { return C.fl_session_snapshot(s.s, &r) }
	if finish {
		call = func() C.fl_status { return C.fl_session_finish(s.s, &r) }
	}
	if err := s.withContext(ctx, call); err != nil {
		return nil, err
	}
	if finish {
		s.finished = true
		for _, st := range s.streams {
			st.release()
		}
	}
	rep, err := newReport(r)
	if err != nil {
		return nil, err
	}
	if len(rep.Input.Errors) > 0 {
		return rep, &InputErrors{Errors: rep.Input.Errors}
	}
	return rep, nil
}

// Cancel asks a running Scan or Finish to stop soon; they then fail with
// ErrCancelled. Safe from any goroutine at any time, including from
// callbacks; a cancelled session stays cancelled.
func (s *Session) Cancel() {
	s.life.RLock()
	if s.s != nil {
		C.fl_session_cancel(s.s)
	}
	s.life.RUnlock()
}

// Close frees the session. It is idempotent, never blocks, and clears the
// finaliser. A call in progress on another goroutine is cancelled, and the
// session is freed when that call returns.
func (s *Session) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	runtime.SetFinalizer(s, nil)
	s.Cancel()
	if s.mu.TryLock() {
		s.freeLocked()
		s.mu.Unlock()
	}
	return nil
}

func (s *Session) freeLocked() {
	if s.s == nil {
		return
	}
	s.life.Lock()
	C.fl_session_free(s.s)
	s.s = nil
	s.life.Unlock()
	for _, st := range s.streams {
		st.release()
	}
	s.streams = nil
	s.def = nil
	if s.cb != nil {
		s.handle.Delete()
		s.cb.cs = nil
	}
	s.engine.release()
}

// OpenStream opens a pushed stream named name (the evidence source; a name
// like "node017/dmesg.log" attributes host and rank as a path would). Push
// bytes with Write or ReadFrom, then Close it or let Finish close it.
func (s *Session) OpenStream(name string) (*Stream, error) {
	if err := s.begin(); err != nil {
		return nil, err
	}
	defer s.end()
	st, err := s.openStreamLocked(name)
	if err != nil {
		return nil, err
	}
	return &Stream{s: s, st: st}, nil
}

func (s *Session) openStreamLocked(name string) (*stream, error) {
	if s.finished {
		return nil, errFinished()
	}
	cn := cString(name)
	defer freeC(unsafe.Pointer(cn))
	st := &stream{name: name}
	if rc := C.fl_session_stream_open(s.s, cn, &st.id); rc != C.FL_OK {
		return nil, s.lastError(rc)
	}
	s.streams = append(s.streams, st)
	return st, nil
}

func (s *Session) defaultStreamLocked() (*stream, error) {
	if s.def == nil {
		st, err := s.openStreamLocked(s.streamName)
		if err != nil {
			return nil, err
		}
		s.def = st
	}
	return s.def, nil
}

// Write pushes p into the session's default stream (Options.StreamName),
// making Session an io.Writer. Small writes are gathered into ChunkSize
// chunks, so feeding line by line costs one cgo call per chunk, not per
// line; Flush pushes a partial chunk. Chunk boundaries are arbitrary: a line
// split over two writes matches as one.
func (s *Session) Write(p []byte) (int, error) {
	if err := s.begin(); err != nil {
		return 0, err
	}
	defer s.end()
	st, err := s.defaultStreamLocked()
	if err != nil {
		return 0, err
	}
	return st.writeLocked(s, p)
}

// Feed reads r to EOF into the default stream in chunks of ChunkSize (one
// cgo call per chunk) and pushes everything read before it returns. It reads
// straight into library-allocated memory, so the bytes are copied once.
func (s *Session) Feed(r io.Reader) error {
	_, err := s.ReadFrom(r)
	return err
}

// ReadFrom is Feed that also counts the bytes (io.ReaderFrom, so io.Copy
// into a Session takes this path).
func (s *Session) ReadFrom(r io.Reader) (int64, error) {
	if err := s.begin(); err != nil {
		return 0, err
	}
	defer s.end()
	st, err := s.defaultStreamLocked()
	if err != nil {
		return 0, err
	}
	return st.readFromLocked(s, r)
}

// Flush pushes what the default stream has gathered to the library and has
// it scan every complete line now (fl_session_stream_flush): OnEvidence
// fires for them before Flush returns. The last line stays pending until
// its newline arrives or the stream closes. Feeding batches lines for
// speed; call Flush when a live stream goes quiet.
func (s *Session) Flush() error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	if s.def == nil {
		return nil
	}
	return s.def.scanNowLocked(s)
}

// Stream is a named byte stream pushed into a Session: an io.Writer and
// io.ReaderFrom that gathers bytes into ChunkSize chunks in C memory and
// pushes each with one fl_session_feed call. It shares its Session's
// one-call-at-a-time rule.
type Stream struct {
	s  *Session
	st *stream
}

// stream is a Stream's state, owned by the Session.
type stream struct {
	id     C.uint32_t
	name   string
	buf    unsafe.Pointer // ChunkSize bytes of C memory, allocated on first use
	n      int            // bytes gathered in buf
	closed bool
}

// Name is the stream's name.
func (w *Stream) Name() string { return w.st.name }

// Write gathers p and pushes full chunks; see Session.Write.
func (w *Stream) Write(p []byte) (int, error) {
	if err := w.s.begin(); err != nil {
		return 0, err
	}
	defer w.s.end()
	return w.st.writeLocked(w.s, p)
}

// ReadFrom reads r to EOF and pushes everything read; see Session.Feed.
func (w *Stream) ReadFrom(r io.Reader) (int64, error) {
	if err := w.s.begin(); err != nil {
		return 0, err
	}
	defer w.s.end()
	return w.st.readFromLocked(w.s, r)
}

// Flush pushes what the stream has gathered and scans its complete lines
// now; see Session.Flush.
func (w *Stream) Flush() error {
	if err := w.s.begin(); err != nil {
		return err
	}
	defer w.s.end()
	return w.st.scanNowLocked(w.s)
}

// Close pushes what is gathered and ends the stream: its last line is
// scanned even without a final newline. Idempotent.
func (w *Stream) Close() error {
	s, st := w.s, w.st
	if err := s.begin(); err != nil {
		if errors.Is(err, ErrClosed) {
			return nil
		}
		return err
	}
	defer s.end()
	if st.closed {
		return nil
	}
	err := st.flushLocked(s)
	rc := C.fl_session_stream_close(s.s, st.id)
	s.repanic()
	st.release()
	if err != nil {
		return err
	}
	if rc != C.FL_OK {
		return s.lastError(rc)
	}
	return nil
}

func (st *stream) chunk() []byte {
	if st.buf == nil {
		st.buf = C.malloc(ChunkSize)
	}
	return unsafe.Slice((*byte)(st.buf), ChunkSize)
}

// release frees the buffer once the library takes no more input for it.
func (st *stream) release() {
	if st.buf != nil {
		C.free(st.buf)
		st.buf = nil
	}
	st.n = 0
	st.closed = true
}

func (st *stream) usable(s *Session) error {
	if s.finished {
		return errFinished()
	}
	if st.closed {
		return &Error{Code: StatusInvalidArg, Msg: "stream '" + st.name + "' is closed"}
	}
	return nil
}

func (st *stream) writeLocked(s *Session, p []byte) (int, error) {
	if err := st.usable(s); err != nil {
		return 0, err
	}
	total := len(p)
	for len(p) > 0 {
		if st.n == 0 && len(p) >= ChunkSize {
			// Large write: hand the caller's memory to the library for the
			// duration of the call (it never keeps input buffers).
			err := st.feed(s, unsafe.Pointer(unsafe.SliceData(p)), len(p))
			runtime.KeepAlive(p)
			if err != nil {
				return total - len(p), err
			}
			return total, nil
		}
		c := copy(st.chunk()[st.n:], p)
		st.n += c
		p = p[c:]
		if st.n == ChunkSize {
			if err := st.flushLocked(s); err != nil {
				return total - len(p) - c, err
			}
		}
	}
	return total, nil
}

func (st *stream) readFromLocked(s *Session, r io.Reader) (int64, error) {
	if err := st.usable(s); err != nil {
		return 0, err
	}
	var total int64
	buf := st.chunk()
	for {
		m, err := io.ReadFull(r, buf[st.n:])
		st.n += m
		total += int64(m)
		if st.n == ChunkSize {
			if ferr := st.flushLocked(s); ferr != nil {
				return total, ferr
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return total, err
		}
	}
	return total, st.flushLocked(s)
}

func (st *stream) flushLocked(s *Session) error {
	if st.n == 0 || st.buf == nil {
		return nil
	}
	n := st.n
	st.n = 0
	return st.feed(s, st.buf, n)
}

// scanNowLocked pushes the gathered bytes, then has the library scan the
// stream's complete lines.
func (st *stream) scanNowLocked(s *Session) error {
	if err := st.usable(s); err != nil {
		return err
	}
	if err := st.flushLocked(s); err != nil {
		return err
	}
	rc := C.fl_session_stream_flush(s.s, st.id)
	s.repanic()
	if rc != C.FL_OK {
		return s.lastError(rc)
	}
	return nil
}

// feed is the one cgo call per chunk.
func (st *stream) feed(s *Session, p unsafe.Pointer, n int) error {
	rc := C.fl_session_feed(s.s, st.id, p, C.size_t(n))
	s.repanic()
	if rc != C.FL_OK {
		return s.lastError(rc)
	}
	return nil
}
