package faultline

/*
#include <stdlib.h>
#include <faultline/faultline.h>
*/
import "C"

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// Report is a diagnosis: Go structs mirroring schema/report.schema.json,
// decoded from fl_report_json in one cgo call. incidents[0] is the primary
// diagnosis. The exported fields are plain data; JSON, Text and Evidence
// read the library's report, which the Report holds until Close (a
// finaliser is the safety net).
//
// Unknown in the logs means: an empty string, a zero time.Time, Rank -1.
// The schema's canonical JSON is what JSON returns; json.Marshal of these
// structs writes "" and zero times where the schema has null.
//
// A Report is immutable and safe for concurrent use.
type Report struct {
	FaultlineVersion string                 `json:"faultline_version"`
	Ruleset          RulesetInfo            `json:"ruleset"`
	Input            Input                  `json:"input"`
	JobWindow        Window                 `json:"job_window"`
	ClockOffsets     map[string]ClockOffset `json:"clock_offsets,omitempty"`
	Incidents        []Incident             `json:"incidents"`
	Ignored          []Ignored              `json:"ignored"`
	Attempts         []Attempt              `json:"attempts,omitempty"` // oldest first; empty for one run
	Expectation      *Expectation           `json:"expectation,omitempty"`
	// FlightRecorder is what the NCCL Flight Recorder dumps among the
	// inputs say; nil without dumps.
	FlightRecorder *FlightRecorder `json:"flight_recorder,omitempty"`

	mu  sync.RWMutex
	c   *C.fl_report
	raw []byte
}

// RulesetInfo names the ruleset a report was made with.
type RulesetInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Rules   int    `json:"rules"`
}

// Input totals what was read.
type Input struct {
	Sources  uint64        `json:"sources"`
	Bytes    uint64        `json:"bytes"`
	Lines    uint64        `json:"lines"`
	Seconds  float64       `json:"seconds"`
	Ranks    int           `json:"ranks"`
	Hosts    int           `json:"hosts"`
	Matches  uint64        `json:"matches"`  // matches seen, past the caps too
	Evidence uint64        `json:"evidence"` // evidence records kept
	Errors   []SourceError `json:"errors,omitempty"`
	// Warnings are files passed over on purpose (devices, FIFOs and sockets
	// found in a directory; symlink loops); Status is empty.
	Warnings []SourceError `json:"warnings,omitempty"`
	// Caps says what the counts cover: what was capped, with true counts.
	Caps Caps `json:"caps"`
	// Job is how the job ended as the caller stated it (Options.JobState,
	// JobExitStatus); nil when nothing was stated.
	Job *JobOutcome `json:"job,omitempty"`
}

// JobOutcome is the report's input.job: the stated state (nil when only the
// exit status was stated) and exit status (nil when not stated).
type JobOutcome struct {
	State      *string `json:"state"`
	ExitStatus *int    `json:"exit_status"`
}

// Caps is what a report's counts cover: evidence kept of the matches
// (exact), distinct ranks and hosts seen against those with per-rank
// (per-host) breakdowns, and whether topology records or metric series were
// capped. Truncated is true when anything was.
type Caps struct {
	Truncated             bool         `json:"truncated"`
	Evidence              EvidenceCaps `json:"evidence"`
	Ranks                 CapCount     `json:"ranks"`
	Hosts                 CapCount     `json:"hosts"`
	TopologyTruncated     bool         `json:"topology_truncated"`
	MetricSeriesTruncated bool         `json:"metric_series_truncated"`
}

// EvidenceCaps: Kept records of Matches (all counted). MetricPoints are the
// metric lines (loss, grad norm) kept as points of their series and not as
// records: a record is made for a point a detector reports.
type EvidenceCaps struct {
	Kept         uint64 `json:"kept"`
	Matches      uint64 `json:"matches"`
	Truncated    bool   `json:"truncated"`
	MetricPoints uint64 `json:"metric_points"`
}

// CapCount: distinct keys Seen (an estimate when SeenEstimated) and Kept,
// those with breakdowns, at most Limit.
type CapCount struct {
	Seen          uint64 `json:"seen"`
	SeenEstimated bool   `json:"seen_estimated"`
	Kept          uint64 `json:"kept"`
	Truncated     bool   `json:"truncated"`
	Limit         uint64 `json:"limit"`
}

// SourceError is a source that could not be read; the diagnosis went on
// without it.
type SourceError struct {
	Source  string `json:"source"`
	Message string `json:"message"`
	Status  string `json:"status"` // "FL_ERR_IO", ...
}

// Window is a time range; zero times are unknown.
type Window struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// ClockOffset is the correction applied to one host's timestamps.
type ClockOffset struct {
	Seconds float64 `json:"seconds"`
	Source  string  `json:"source"` // "given", "estimated", ...
}

// Incident is one diagnosed failure: the initiating event, its collateral,
// and what to do about it.
type Incident struct {
	// ID is stable across re-diagnoses of the same logs as they grow
	// ("inc-" and 12 hex digits): what faultline watch prints.
	ID           string       `json:"id"`
	Rule         string       `json:"rule"`
	Reference    string       `json:"reference"`
	Title        string       `json:"title"`
	Category     string       `json:"category"`
	Layer        string       `json:"layer,omitempty"`
	Confidence   float64      `json:"confidence"`
	Initiating   Initiating   `json:"initiating"`
	Collateral   []Collateral `json:"collateral"`
	Fix          string       `json:"fix"`
	Verify       string       `json:"verify"`
	MissingFacts []string     `json:"missing_facts"`
	Explanation  string       `json:"explanation"`
	Detector     string       `json:"detector,omitempty"`
	Timeline     []Evidence   `json:"timeline,omitempty"`
	// FlightRecorder lists the Flight Recorder findings the incident rests
	// on or that agree with it, its suspects' first.
	FlightRecorder []FlightRecorderFinding `json:"flight_recorder,omitempty"`
	Action         Action                  `json:"action"`
	Step           *int64                  `json:"step,omitempty"`       // training step the failing rank reached
	Attempt        int                     `json:"attempt,omitempty"`    // index into Report.Attempts
	Recurrence     *Recurrence             `json:"recurrence,omitempty"` // nil when the job ran once
}

// FlightRecorder is the report's flight_recorder section: the dumps read,
// each process group across them, and the ranks the dumps suspect (missing
// at a wavefront first, then members without a dump).
type FlightRecorder struct {
	Dumps    []FlightRecorderDump  `json:"dumps"`
	Groups   []FlightRecorderGroup `json:"groups"`
	Suspects []Rank                `json:"suspects"`
	Notes    []string              `json:"notes,omitempty"`
}

// FlightRecorderDump is one dump read; its rank comes from its content.
type FlightRecorderDump struct {
	Source         string `json:"source"`
	Rank           Rank   `json:"rank"`
	RankSource     string `json:"rank_source"` // group-membership | p2p-name | file-name | unknown
	Format         string `json:"format"`      // pickle | json
	Version        string `json:"version"`
	CommLibVersion string `json:"comm_lib_version,omitempty"`
	Entries        int    `json:"entries"`
	Wrapped        bool   `json:"wrapped"`
}

// FlightRecorderGroup is one process group across the dumps. Wavefront is
// the lowest collective sequence id some ranks never entered (nil when all
// reached the same one), with the ranks missing there.
type FlightRecorderGroup struct {
	Name           string `json:"name"`
	Desc           string `json:"desc"`
	Size           int    `json:"size"`
	Dumped         int    `json:"dumped"`
	NoDump         []Rank `json:"no_dump"`
	LowestLastSeq  int64  `json:"lowest_last_seq"`
	HighestLastSeq int64  `json:"highest_last_seq"`
	Wavefront      *struct {
		Seq     int64  `json:"seq"`
		Op      string `json:"op"`
		Missing []Rank `json:"missing"`
	} `json:"wavefront"`
	Mismatches []struct {
		Seq      int64  `json:"seq"`
		Field    string `json:"field"` // op | input_sizes | output_sizes | dtypes
		Expected string `json:"expected"`
		Ranks    []struct {
			Rank Rank   `json:"rank"`
			Got  string `json:"got"`
		} `json:"ranks"`
	} `json:"mismatches"`
}

// FlightRecorderFinding is what the dumps say about one rank: Kind is
// missing-rank (never entered collective Seq of Group), no-dump, mismatch
// or stalled.
type FlightRecorderFinding struct {
	Kind   string `json:"kind"`
	Rank   Rank   `json:"rank"`
	Group  string `json:"group"`
	Seq    int64  `json:"seq"`
	Op     string `json:"op"`
	Detail string `json:"detail"`
	Source string `json:"source"` // the rank's dump; "" for no-dump
}

// Action kinds (Action.Kind).
const (
	ActionRestart          = "restart"
	ActionRestartExcluding = "restart_excluding"
	ActionStop             = "stop"
	ActionUnknown          = "unknown"
)

// Action is what a platform should do about an incident: restart, restart
// without ExcludeHosts and ExcludeGPUs, stop, or unknown (MissingFact says
// what would settle it). Reason gives the facts; SetBy names what made the
// call: the rule id, "survived" (the job carried on from the incident),
// "recurrence" or "retry-policy".
type Action struct {
	Kind         string   `json:"kind"`
	ExcludeHosts []string `json:"exclude_hosts"`
	ExcludeGPUs  []string `json:"exclude_gpus"`
	Reason       string   `json:"reason"`
	SetBy        string   `json:"set_by"`
	MissingFact  string   `json:"missing_fact,omitempty"`
}

// Initiating is where an incident started.
type Initiating struct {
	Rank     Rank       `json:"rank"`
	Host     string     `json:"host"`
	GPU      string     `json:"gpu"`           // PCI bus id or device index
	HCA      string     `json:"hca,omitempty"` // InfiniBand HCA (mlx5_N) the initiating line names
	Time     time.Time  `json:"time"`
	Inferred bool       `json:"inferred"` // no initiating line seen; suspect inferred
	Suspects []Rank     `json:"suspects,omitempty"`
	Evidence []Evidence `json:"evidence"`
}

// Collateral is a cluster of symptoms the initiating event explains.
type Collateral struct {
	Rule      string    `json:"rule"`
	Reference string    `json:"reference,omitempty"`
	Count     int       `json:"count"`
	Ranks     []Rank    `json:"ranks"`
	Hosts     []string  `json:"hosts,omitempty"`
	FirstTime time.Time `json:"first_time"`
	LastTime  time.Time `json:"last_time"`
	Sample    Evidence  `json:"sample"`
}

// Ignored is evidence that matched but was not used, with why.
type Ignored struct {
	Rule   string   `json:"rule"`
	Reason string   `json:"reason"`
	Count  int      `json:"count"`
	Sample Evidence `json:"sample"`
}

// Expectation is the failure rate the catalog's priors predict for the job.
type Expectation struct {
	GPUs                          float64  `json:"gpus"`
	Hours                         float64  `json:"hours"`
	ExpectedHardwareInterruptions float64  `json:"expected_hardware_interruptions"`
	Basis                         []string `json:"basis"`
}

// Evidence is one matched line.
type Evidence struct {
	Source     string            `json:"source"` // path as given, "-" for stdin, or a stream's name
	Line       uint64            `json:"line"`   // 1-based, in the (decompressed) source
	Offset     uint64            `json:"offset"` // byte offset of the line start
	Time       time.Time         `json:"time"`   // zero when unknown
	TimeSource string            `json:"time_source,omitempty"`
	Rank       Rank              `json:"rank"`
	Host       string            `json:"host"`
	Rule       string            `json:"rule"`
	Signal     string            `json:"signal"`
	Text       string            `json:"text"` // at most 4096 bytes, valid UTF-8
	Fields     map[string]string `json:"fields,omitempty"`
}

// Rank is a distributed rank; NoRank (-1) when unknown, which is null in the
// report's JSON.
type Rank int

// NoRank is the Rank of a line whose rank is unknown.
const NoRank Rank = -1

// Known reports whether the rank is known.
func (r Rank) Known() bool { return r >= 0 }

// UnmarshalJSON reads an integer, or null as NoRank.
func (r *Rank) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*r = NoRank
		return nil
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return fmt.Errorf("faultline: rank %s: %w", b, err)
	}
	*r = Rank(n)
	return nil
}

// MarshalJSON writes NoRank as null.
func (r Rank) MarshalJSON() ([]byte, error) {
	if r < 0 {
		return []byte("null"), nil
	}
	return strconv.AppendInt(nil, int64(r), 10), nil
}

// newReport takes ownership of r: the JSON is copied and decoded now.
func newReport(r *C.fl_report) (*Report, error) {
	var p *C.char
	var n C.size_t
	if rc := C.fl_report_json(r, &p, &n); rc != C.FL_OK {
		C.fl_report_free(r)
		return nil, &Error{Code: Status(rc), Msg: "fl_report_json"}
	}
	raw := C.GoBytes(unsafe.Pointer(p), C.int(n))
	rep := &Report{c: r, raw: raw}
	if err := json.Unmarshal(raw, rep); err != nil {
		// A field whose JSON type changed (the schema pins only its own
		// fields) is skipped and the rest decoded; JSON() still has it all.
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			C.fl_report_free(r)
			return nil, &Error{Code: StatusInternal, Msg: "decoding the report: " + err.Error()}
		}
	}
	runtime.SetFinalizer(rep, (*Report).Close)
	return rep, nil
}

// Primary is the primary diagnosis, or nil when nothing in the catalog
// applies.
// ChangeKey changes when the incident changes in a way worth reporting
// again to someone following a live job: its attribution, confidence,
// initiating evidence, collateral, missing facts or action. Equal keys:
// nothing new. (ID names the incident; ChangeKey tells its versions apart.)
func (inc *Incident) ChangeKey() string {
	in := inc.Initiating
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%d|%s|%.2f|%t|%d|%d", in.Host, in.Rank, in.GPU, inc.Confidence, in.Inferred, len(in.Evidence), len(inc.MissingFacts))
	for _, c := range inc.Collateral {
		fmt.Fprintf(&b, "|%s:%d:%d", c.Rule, c.Count, len(c.Ranks))
	}
	a := inc.Action
	fmt.Fprintf(&b, "|%s:%s:%s", a.Kind, strings.Join(a.ExcludeHosts, ","), strings.Join(a.ExcludeGPUs, ","))
	return b.String()
}

func (r *Report) Primary() *Incident {
	if len(r.Incidents) == 0 {
		return nil
	}
	return &r.Incidents[0]
}

// JSON is the report exactly as the library wrote it
// (schema/report.schema.json); it stays valid after Close.
func (r *Report) JSON() []byte { return r.raw }

// Text is the human-readable report: primary diagnosis first, evidence with
// file:line, collateral summarised, fix, verify command, missing facts.
func (r *Report) Text() (string, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.c == nil {
		return "", errClosed("report")
	}
	var p *C.char
	var n C.size_t
	if rc := C.fl_report_text(r.c, &p, &n); rc != C.FL_OK {
		return "", &Error{Code: Status(rc), Msg: "fl_report_text"}
	}
	return C.GoStringN(p, C.int(n)), nil
}

// HTML is the report as one self-contained HTML page, the same bytes as
// `faultline diagnose --html FILE` on the same input: primary incident,
// initiating evidence, fix, verify, collateral, ignored lines, missing facts
// and a timeline of ranks by time, with inline CSS and SVG and nothing
// fetched from the network.
func (r *Report) HTML() (string, error) {
	// Exclusive, as SignalHits: the library builds the page inside the
	// report on first use.
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.c == nil {
		return "", errClosed("report")
	}
	var p *C.char
	var n C.size_t
	if rc := C.fl_report_html(r.c, &p, &n); rc != C.FL_OK {
		return "", &Error{Code: Status(rc), Msg: "fl_report_html"}
	}
	return C.GoStringN(p, C.int(n)), nil
}

// SignalHits counts matches per signal ("rule/signal": count), for rule
// tuning.
func (r *Report) SignalHits() (map[string]uint64, error) {
	// Exclusive: the library builds this JSON lazily inside the report on
	// first use, so concurrent first calls would race in C.
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.c == nil {
		return nil, errClosed("report")
	}
	var p *C.char
	var n C.size_t
	if rc := C.fl_report_signal_hits_json(r.c, &p, &n); rc != C.FL_OK {
		return nil, &Error{Code: Status(rc), Msg: "fl_report_signal_hits_json"}
	}
	hits := map[string]uint64{}
	if err := json.Unmarshal(C.GoBytes(unsafe.Pointer(p), C.int(n)), &hits); err != nil {
		return nil, &Error{Code: StatusInternal, Msg: "decoding signal hits: " + err.Error()}
	}
	return hits, nil
}

// EvidenceJSONL is every evidence record kept as JSON lines (the report
// schema's evidence object), in source then offset order: what `faultline
// scan --json` prints, ready to ship.
func (r *Report) EvidenceJSONL() ([]byte, error) {
	// Exclusive: the library builds this text lazily on first use.
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.c == nil {
		return nil, errClosed("report")
	}
	var p *C.char
	var n C.size_t
	if rc := C.fl_report_evidence_jsonl(r.c, &p, &n); rc != C.FL_OK {
		return nil, &Error{Code: Status(rc), Msg: "fl_report_evidence_jsonl"}
	}
	return C.GoBytes(unsafe.Pointer(p), C.int(n)), nil
}

// EvidenceCount is the number of evidence records the report kept.
func (r *Report) EvidenceCount() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.c == nil {
		return 0
	}
	return int(C.fl_report_evidence_count(r.c))
}

// evidenceBatch is how many records one fl_report_evidence call copies.
const evidenceBatch = 4096

// Evidence returns every evidence record kept, in source then offset order,
// pulled through fl_report_evidence in batches of 4096 (one cgo call per
// batch, not per record).
func (r *Report) Evidence() ([]Evidence, error) {
	out := make([]Evidence, 0, r.EvidenceCount())
	err := r.eachEvidenceBatch(func(b []Evidence) bool {
		out = append(out, b...)
		return true
	})
	return out, err
}

// AllEvidence iterates over the evidence records like Evidence, a batch at
// a time, without holding them all. An error (a closed report) is yielded
// once, with a zero Evidence, and ends the iteration:
//
//	for ev, err := range rep.AllEvidence() {
//		if err != nil { return err }
//		...
//	}
func (r *Report) AllEvidence() iter.Seq2[Evidence, error] {
	return func(yield func(Evidence, error) bool) {
		stopped := false
		err := r.eachEvidenceBatch(func(b []Evidence) bool {
			for _, ev := range b {
				if !yield(ev, nil) {
					stopped = true
					return false
				}
			}
			return true
		})
		if err != nil && !stopped {
			yield(Evidence{}, err)
		}
	}
}

func (r *Report) eachEvidenceBatch(fn func([]Evidence) bool) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.c == nil {
		return errClosed("report")
	}
	views := (*[evidenceBatch]C.fl_evidence_view)(C.malloc(C.size_t(unsafe.Sizeof(C.fl_evidence_view{})) * evidenceBatch))
	defer C.free(unsafe.Pointer(views))
	// The views' strings live as long as the report, so equal pointers are
	// equal strings: convert each distinct source, rule, signal and host once.
	in := interner{}
	batch := make([]Evidence, 0, evidenceBatch)
	for first := 0; ; {
		var n C.size_t
		rc := C.fl_report_evidence(r.c, C.size_t(first), &views[0], evidenceBatch, &n)
		if rc == C.FL_DONE || (rc == C.FL_OK && n == 0) {
			return nil
		}
		if rc != C.FL_OK {
			return &Error{Code: Status(rc), Msg: "fl_report_evidence"}
		}
		batch = batch[:0]
		for i := 0; i < int(n); i++ {
			batch = append(batch, evidenceFromView(&views[i], in))
		}
		if !fn(batch) {
			return nil
		}
		first += int(n)
	}
}

// Close frees the library's report. JSON and the decoded fields stay
// usable; Text, SignalHits and Evidence fail with ErrClosed afterwards.
// Idempotent.
func (r *Report) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.c != nil {
		C.fl_report_free(r.c)
		r.c = nil
		runtime.SetFinalizer(r, nil)
	}
	return nil
}

// interner converts borrowed C strings that outlive the conversion,
// keyed by address.
type interner map[*C.char]string

func (in interner) str(p *C.char) string {
	if p == nil {
		return ""
	}
	if in == nil {
		return C.GoString(p)
	}
	if s, ok := in[p]; ok {
		return s
	}
	s := C.GoString(p)
	in[p] = s
	return s
}

// evidenceFromView copies an fl_evidence_view into Go memory. in may be nil
// when the view's strings do not outlive the call (callbacks).
func evidenceFromView(v *C.fl_evidence_view, in interner) Evidence {
	ev := Evidence{
		Source:     in.str(v.source),
		Line:       uint64(v.line),
		Offset:     uint64(v.offset),
		TimeSource: in.str(v.time_source),
		Rank:       NoRank,
		Host:       in.str(v.host),
		Rule:       in.str(v.rule),
		Signal:     in.str(v.signal),
		Text:       C.GoString(v.text),
	}
	if t := int64(v.time_us); t != C.FL_TIME_UNSET {
		ev.Time = time.UnixMicro(t).UTC()
	}
	if v.rank >= 0 {
		ev.Rank = Rank(v.rank)
	}
	if v.fields_json != nil {
		ev.Fields = parseFields(C.GoString(v.fields_json))
	}
	return ev
}

// parseFields decodes a fields_json object ({"name":"value",...}, strings
// only). The common case, with no escapes, is split by hand: encoding/json
// costs more than the rest of a record's conversion. Anything else goes
// through encoding/json.
func parseFields(f string) map[string]string {
	if len(f) <= 2 {
		return nil
	}
	if m, ok := parseSimpleFields(f); ok {
		return m
	}
	var m map[string]string
	if json.Unmarshal([]byte(f), &m) != nil {
		return nil
	}
	return m
}

func parseSimpleFields(f string) (map[string]string, bool) {
	if strings.IndexByte(f, '\\') >= 0 || f[0] != '{' || f[len(f)-1] != '}' {
		return nil, false
	}
	m := make(map[string]string, 4)
	rest := f[1 : len(f)-1]
	str := func() (string, bool) {
		if len(rest) < 2 || rest[0] != '"' {
			return "", false
		}
		end := strings.IndexByte(rest[1:], '"')
		if end < 0 {
			return "", false
		}
		s := rest[1 : 1+end]
		rest = rest[end+2:]
		return s, true
	}
	for len(rest) > 0 {
		k, ok := str()
		if !ok || len(rest) == 0 || rest[0] != ':' {
			return nil, false
		}
		rest = rest[1:]
		v, ok := str()
		if !ok {
			return nil, false
		}
		m[k] = v
		if len(rest) > 0 {
			if rest[0] != ',' {
				return nil, false
			}
			rest = rest[1:]
		}
	}
	return m, true
}
