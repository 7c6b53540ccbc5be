package faultline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	faultline "github.com/faultline/faultline/bindings/go"
)

func TestVersion(t *testing.T) {
	if got := faultline.LibraryVersionNumber(); got/10000 != faultline.HeaderVersion/10000 || got < faultline.HeaderVersion {
		t.Fatalf("library %d, header %d", got, faultline.HeaderVersion)
	}
	v := faultline.LibraryVersion()
	n := faultline.LibraryVersionNumber()
	if want := fmt.Sprintf("%d.%d.%d", n/10000, n/100%100, n%100); v != want {
		t.Errorf("LibraryVersion %q, number says %q", v, want)
	}
}

func TestStatusStringsMatchLibrary(t *testing.T) {
	for s := faultline.StatusNotFound; s <= faultline.StatusDone; s++ {
		if got, want := s.String(), faultline.CStatusString(s); got != want {
			t.Errorf("Status(%d).String() = %q, fl_status_str says %q", int(s), got, want)
		}
	}
}

func TestDiagnoseIncident(t *testing.T) {
	dir := t.TempDir()
	writeIncident(t, dir, 4, 50)
	e := newEngine(t)
	rep, err := e.Diagnose(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Close()
	p := rep.Primary()
	if p == nil {
		t.Fatalf("no incident; report:\n%s", rep.JSON())
	}
	if p.Rule != "xid-79-fallen-off-bus" || p.Initiating.Host != "node017" {
		t.Fatalf("primary %s on %q, want xid-79-fallen-off-bus on node017", p.Rule, p.Initiating.Host)
	}
	if p.Initiating.GPU != "0000:3b:00.0" || p.Initiating.Inferred {
		t.Errorf("initiating %+v", p.Initiating)
	}
	if want := time.Date(2026, 11, 2, 3, 12, 5, 0, time.UTC); !p.Initiating.Time.Equal(want) {
		t.Errorf("initiating time %v, want %v", p.Initiating.Time, want)
	}
	if len(p.Initiating.Evidence) != 1 || !strings.HasSuffix(p.Initiating.Evidence[0].Source, "node017/dmesg.log") ||
		p.Initiating.Evidence[0].Line != 2 || p.Initiating.Evidence[0].Rank != faultline.NoRank {
		t.Errorf("initiating evidence %+v", p.Initiating.Evidence)
	}
	// The ruleset grows; assert what this incident must show, not the exact
	// set of rules that match its noise.
	var wd *faultline.Collateral
	for i := range p.Collateral {
		if p.Collateral[i].Rule == "nccl-watchdog-timeout" {
			wd = &p.Collateral[i]
		}
	}
	if wd == nil || wd.Count != 4 || !reflect.DeepEqual(wd.Ranks, []faultline.Rank{0, 1, 2, 3}) ||
		!reflect.DeepEqual(wd.Hosts, []string{"node018"}) || wd.Sample.Rule != "nccl-watchdog-timeout" {
		t.Errorf("collateral %+v", p.Collateral)
	}
	if p.Fix == "" || p.Verify == "" || p.Explanation == "" {
		t.Errorf("fix %q verify %q explanation %q", p.Fix, p.Verify, p.Explanation)
	}
	if rep.Input.Sources != 5 || rep.Input.Hosts != 2 || rep.Input.Lines != 2+4*51 {
		t.Errorf("input %+v", rep.Input)
	}
	if rep.Ruleset.Name != e.Name() || rep.Ruleset.Rules != e.RuleCount() {
		t.Errorf("ruleset %+v vs engine %s/%d", rep.Ruleset, e.Name(), e.RuleCount())
	}

	// Evidence pulled in batches agrees with the report's count and with the
	// library's own JSON lines, record for record.
	evs, err := rep.Evidence()
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) < 5 || len(evs) != rep.EvidenceCount() || uint64(len(evs)) != rep.Input.Evidence {
		t.Fatalf("%d evidence records, count %d, input.evidence %d", len(evs), rep.EvidenceCount(), rep.Input.Evidence)
	}
	jsonl, err := rep.EvidenceJSONL()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(jsonl), "\n"), "\n")
	if len(lines) != len(evs) {
		t.Fatalf("%d JSON lines, %d records", len(lines), len(evs))
	}
	var xid, watchdogs int
	for i, line := range lines {
		var want faultline.Evidence
		if err := json.Unmarshal([]byte(line), &want); err != nil {
			t.Fatal(err)
		}
		if got := evs[i]; !sameEvidence(got, want) {
			t.Errorf("record %d:\nbatch %+v\njsonl %+v", i, got, want)
		}
		switch ev := evs[i]; ev.Rule {
		case "xid-79-fallen-off-bus":
			xid++
			if ev.Host != "node017" || ev.Fields["xid"] != "79" || ev.TimeSource != "inferred_year" || ev.Rank.Known() {
				t.Errorf("xid record %+v", ev)
			}
		case "nccl-watchdog-timeout":
			if ev.Host != "node018" || ev.Rank != faultline.Rank(watchdogs) || ev.Fields["seq"] != "4711" {
				t.Errorf("watchdog record %+v", ev)
			}
			watchdogs++
		}
	}
	if xid != 1 || watchdogs != 4 {
		t.Errorf("%d xid and %d watchdog records, want 1 and 4", xid, watchdogs)
	}
	n := 0
	for ev, err := range rep.AllEvidence() {
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ev, evs[n]) {
			t.Errorf("AllEvidence[%d] differs", n)
		}
		n++
	}
	if n != len(evs) {
		t.Errorf("AllEvidence yielded %d", n)
	}

	text, err := rep.Text()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "PRIMARY DIAGNOSIS") || !strings.Contains(text, "xid-79-fallen-off-bus") {
		t.Errorf("text report:\n%s", text)
	}
	var doc map[string]any
	if err := json.Unmarshal(rep.JSON(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"faultline_version", "ruleset", "input", "job_window", "incidents", "ignored"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	hits, err := rep.SignalHits()
	if err != nil {
		t.Fatal(err)
	}
	var xidHits, wdHits uint64
	for k, v := range hits {
		switch {
		case strings.HasPrefix(k, "xid-79-fallen-off-bus/"):
			xidHits += v
		case strings.HasPrefix(k, "nccl-watchdog-timeout/"):
			wdHits += v
		}
	}
	if xidHits != 1 || wdHits != 4 {
		t.Errorf("signal hits %v", hits)
	}
}

// sameEvidence compares a record from fl_report_evidence with one from the
// library's JSON lines. The JSON adds derived fields (gpu, monotonic_s, pid)
// that the C views' fields_json lacks (a library inconsistency, reported);
// every other field must agree.
func sameEvidence(view, js faultline.Evidence) bool {
	for k, v := range js.Fields {
		w, ok := view.Fields[k]
		if ok && w != v || !ok && k != "gpu" && k != "monotonic_s" && k != "pid" {
			return false
		}
	}
	for k := range view.Fields {
		if _, ok := js.Fields[k]; !ok {
			return false
		}
	}
	view.Fields, js.Fields = nil, nil
	return reflect.DeepEqual(view, js)
}

// oddReader returns its data in pieces of awkward sizes.
type oddReader struct {
	data  []byte
	sizes []int
	i     int
}

func (r *oddReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := r.sizes[r.i%len(r.sizes)]
	r.i++
	n = min(n, len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

var oddSizes = []int{1, 7, 4093, 65537, 3, 300001, 127}

// normalise drops what legitimately differs between two runs over the same
// bytes (scan time) so reports can be compared.
func normalise(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc["input"].(map[string]any), "seconds")
	return doc
}

func TestFeedOddChunksEqualsFileResult(t *testing.T) {
	dir := t.TempDir()
	// Enough noise that every rank file spans several ChunkSize chunks, so
	// chunk boundaries fall inside lines.
	writeIncident(t, dir, 4, 12000)
	e := newEngine(t)
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.log"))
	want, err := e.Diagnose(context.Background(), files...)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Close()
	if p := want.Primary(); p == nil || p.Rule != "xid-79-fallen-off-bus" {
		t.Fatalf("file result: %s", want.JSON())
	}
	wantEv, _ := want.Evidence()

	type feeder func(t *testing.T, s *faultline.Session, name string, data []byte)
	feeders := map[string]feeder{
		"Stream.ReadFrom(oddReader)": func(t *testing.T, s *faultline.Session, name string, data []byte) {
			st, err := s.OpenStream(name)
			if err != nil {
				t.Fatal(err)
			}
			n, err := st.ReadFrom(&oddReader{data: data, sizes: oddSizes})
			if err != nil || n != int64(len(data)) {
				t.Fatalf("ReadFrom %d, %v", n, err)
			}
		},
		"Stream.Write+Flush odd pieces": func(t *testing.T, s *faultline.Session, name string, data []byte) {
			st, err := s.OpenStream(name)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; len(data) > 0; i++ {
				n := min(oddSizes[i%len(oddSizes)], len(data))
				if _, err := st.Write(data[:n]); err != nil {
					t.Fatal(err)
				}
				// Flushing every piece pushes lines split at arbitrary
				// bytes across fl_session_feed calls.
				if err := st.Flush(); err != nil {
					t.Fatal(err)
				}
				data = data[n:]
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
		},
		"io.Copy into Session": func(t *testing.T, s *faultline.Session, name string, data []byte) {
			// One session per file here: the default stream takes the name.
			if _, err := io.Copy(s, &oddReader{data: data, sizes: oddSizes}); err != nil {
				t.Fatal(err)
			}
		},
	}
	for fname, feed := range feeders {
		t.Run(fname, func(t *testing.T) {
			if fname == "io.Copy into Session" {
				// Default streams: one session per source is not the same
				// incident, so compare evidence per file instead.
				var got []faultline.Evidence
				for _, f := range files {
					s, err := e.NewSession(faultline.Options{StreamName: f})
					if err != nil {
						t.Fatal(err)
					}
					data, _ := os.ReadFile(f)
					feed(t, s, f, data)
					r, err := s.Finish()
					if err != nil {
						t.Fatal(err)
					}
					ev, _ := r.Evidence()
					got = append(got, ev...)
					r.Close()
					s.Close()
				}
				if !reflect.DeepEqual(stripEnriched(got), stripEnriched(wantEv)) {
					t.Errorf("evidence differs:\n got %+v\nwant %+v", got, wantEv)
				}
				return
			}
			s, err := e.NewSession(faultline.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				feed(t, s, f, data)
			}
			got, err := s.Finish()
			if err != nil {
				t.Fatal(err)
			}
			defer got.Close()
			if g, w := normalise(t, got.JSON()), normalise(t, want.JSON()); !reflect.DeepEqual(g, w) {
				t.Errorf("fed report differs from the file report:\n got %s\nwant %s", got.JSON(), want.JSON())
			}
			gotEv, _ := got.Evidence()
			if !reflect.DeepEqual(gotEv, wantEv) {
				t.Errorf("evidence differs")
			}
		})
	}
}

// stripEnriched drops fields the correlator adds across sources (the GPU a
// rank maps to, say), which a single-source session cannot know.
func stripEnriched(evs []faultline.Evidence) []faultline.Evidence {
	out := make([]faultline.Evidence, len(evs))
	for i, ev := range evs {
		ev.Fields = nil
		out[i] = ev
	}
	return out
}

func TestOnEvidenceCountEqualsReport(t *testing.T) {
	dir := t.TempDir()
	writeIncident(t, dir, 8, 200)
	e := newEngine(t)

	var seen []faultline.Evidence
	rep, err := e.DiagnoseWith(context.Background(), faultline.Options{
		Threads:    2,
		OnEvidence: func(ev faultline.Evidence) { seen = append(seen, ev) },
	}, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Close()
	if len(seen) == 0 || len(seen) != rep.EvidenceCount() {
		t.Fatalf("callback saw %d records, report kept %d", len(seen), rep.EvidenceCount())
	}
	evs, _ := rep.Evidence()
	for i := range evs {
		if seen[i].Source != evs[i].Source || seen[i].Line != evs[i].Line || seen[i].Text != evs[i].Text {
			t.Errorf("record %d: callback %+v, report %+v", i, seen[i], evs[i])
		}
	}

	// Pushed streams: the callback fires inside the call that makes the
	// library scan the lines (here Stream.Close; with more data, Write).
	var live atomic.Int64
	s, err := e.NewSession(faultline.Options{OnEvidence: func(faultline.Evidence) { live.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st, _ := s.OpenStream("node017/dmesg.log")
	st.Write([]byte(xidLine))
	if live.Load() != 0 {
		t.Errorf("callback before the chunk was pushed")
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if live.Load() != 1 {
		t.Errorf("after Close the callback ran %d times, want 1", live.Load())
	}
	st2, _ := s.OpenStream("node018/rank-0.log")
	for i := 0; i < 30000; i++ { // a few MiB: scanned while writing
		io.WriteString(st2, noiseLine(0, i))
	}
	fmt.Fprintf(st2, watchdogLine, 0, 0)
	r2, err := s.Finish()
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if int(live.Load()) != r2.EvidenceCount() || live.Load() < 2 {
		t.Errorf("live callback %d, report %d", live.Load(), r2.EvidenceCount())
	}
}

func TestCallbackCannotReenterSession(t *testing.T) {
	e := newEngine(t)
	var s *faultline.Session
	var inner error
	s, err := e.NewSession(faultline.Options{OnEvidence: func(faultline.Evidence) {
		_, inner = s.Write([]byte("x\n"))
		s.Cancel() // allowed from a callback
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st, _ := s.OpenStream("node017/dmesg.log")
	if _, err := st.Write([]byte(xidLine)); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(inner, faultline.ErrBusy) {
		t.Errorf("Write from the callback: %v, want ErrBusy", inner)
	}
}

func TestCallbackPanicIsRaisedOnCaller(t *testing.T) {
	dir := t.TempDir()
	writeIncident(t, dir, 2, 10)
	e := newEngine(t)
	calls := 0
	s, err := e.NewSession(faultline.Options{OnEvidence: func(faultline.Evidence) {
		calls++
		panic("boom")
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddPath(dir); err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want boom", r)
			}
		}()
		s.Finish()
		t.Error("Finish returned instead of panicking")
	}()
	if calls != 1 {
		t.Errorf("callback ran %d times after panicking", calls)
	}
	// The session is still consistent: closing it works, twice.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s.Close()
}

func TestCancel(t *testing.T) {
	e := newEngine(t)
	t.Run("before", func(t *testing.T) {
		dir := t.TempDir()
		writeIncident(t, dir, 2, 10)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		rep, err := e.Diagnose(ctx, dir)
		checkCancelled(t, rep, err, context.Canceled)
	})
	t.Run("deadline", func(t *testing.T) {
		big := bigLog(t)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		// The first progress report holds the scan until the deadline has
		// passed, so the deadline lands inside the scan however fast it is.
		var once sync.Once
		rep, err := e.DiagnoseWith(ctx, faultline.Options{
			Threads:    2,
			OnProgress: func(uint64, uint64) { once.Do(func() { <-ctx.Done() }) },
		}, big)
		checkCancelled(t, rep, err, context.DeadlineExceeded)
	})
	t.Run("during", func(t *testing.T) {
		big := bigLog(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var first, last uint64
		var total uint64
		start := time.Now()
		var cancelledAt time.Duration
		rep, err := e.DiagnoseWith(ctx, faultline.Options{
			Threads: 2,
			OnProgress: func(done, tot uint64) {
				if first == 0 {
					first, total = done, tot
					cancelledAt = time.Since(start)
					cancel() // the watcher goroutine calls fl_session_cancel
				}
				last = done
			},
		}, big)
		elapsed := time.Since(start)
		checkCancelled(t, rep, err, context.Canceled)
		if first == 0 || total == 0 || last >= total {
			t.Errorf("progress first %d last %d total %d: scan was not stopped part way", first, last, total)
		}
		t.Logf("cancelled at %v after %d/%d bytes; returned after %v having merged %d bytes", cancelledAt, first, total, elapsed, last)
	})
	t.Run("during, by wall clock", func(t *testing.T) {
		// Not deterministic (a warm 200 MB file may scan in under 20 ms);
		// logs what happened rather than failing.
		big := bigLog(t)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(5*time.Millisecond, cancel)
		start := time.Now()
		rep, err := e.DiagnoseWith(ctx, faultline.Options{Threads: 2}, big)
		if rep != nil {
			t.Logf("scan finished (%v, %.1f ms in the library) before the 5 ms cancel", time.Since(start), rep.Input.Seconds*1000)
			rep.Close()
		} else {
			checkCancelled(t, rep, err, context.Canceled)
			t.Logf("cancelled; returned after %v", time.Since(start))
		}
	})
	t.Run("Session.Cancel from another goroutine", func(t *testing.T) {
		big := bigLog(t)
		inScan, cancelled := make(chan struct{}), make(chan struct{})
		var once sync.Once
		s, err := e.NewSession(faultline.Options{Threads: 2, OnProgress: func(uint64, uint64) {
			once.Do(func() { close(inScan); <-cancelled })
		}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		s.AddPath(big)
		go func() {
			<-inScan
			s.Cancel()
			close(cancelled)
		}()
		rep, err := s.Finish()
		if rep != nil || !errors.Is(err, faultline.ErrCancelled) {
			t.Fatalf("Finish after Cancel: report %v, err %v", rep != nil, err)
		}
		if errors.Is(err, context.Canceled) {
			t.Errorf("no context was involved, yet %v matches context.Canceled", err)
		}
	})
}

func checkCancelled(t *testing.T, rep *faultline.Report, err, ctxErr error) {
	t.Helper()
	if rep != nil {
		t.Fatalf("got a report (%d incidents) from a cancelled diagnosis", len(rep.Incidents))
	}
	if !errors.Is(err, ctxErr) || !errors.Is(err, faultline.ErrCancelled) {
		t.Fatalf("err %v: want it to match %v and ErrCancelled", err, ctxErr)
	}
	var fe *faultline.Error
	if !errors.As(err, &fe) || fe.Code != faultline.StatusCancelled {
		t.Fatalf("err %v is not a *faultline.Error with StatusCancelled", err)
	}
}

func TestRulesetErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := faultline.Open(filepath.Join(dir, "missing.flrules"))
	if !errors.Is(err, faultline.ErrIO) || errors.Is(err, faultline.ErrRuleset) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want ErrIO and fs.ErrNotExist", err)
	}
	bad := filepath.Join(dir, "corrupt.flrules")
	os.WriteFile(bad, bytes.Repeat([]byte("not a ruleset "), 100), 0o644)
	_, err = faultline.Open(bad)
	if !errors.Is(err, faultline.ErrRuleset) {
		t.Errorf("corrupt file: %v, want ErrRuleset", err)
	}
	var fe *faultline.Error
	if !errors.As(err, &fe) || !strings.Contains(fe.Msg, bad) {
		t.Errorf("message %v should name %s", err, bad)
	}
	if errors.Is(err, faultline.ErrIO) || errors.Is(err, &faultline.Error{Code: faultline.StatusRuleset, Msg: "other"}) {
		t.Errorf("Is matched too much: %v", err)
	}
	// A truncated copy of a valid compiled ruleset is caught by the verifier.
	good := filepath.Join(dir, "good.flrules")
	if src := os.Getenv("FAULTLINE_RULES_SRC"); src != "" {
		if err := faultline.Compile(src, good); err != nil {
			t.Fatal(err)
		}
		e, err := faultline.Open(good)
		if err != nil {
			t.Fatal(err)
		}
		e.Close()
		b, _ := os.ReadFile(good)
		os.WriteFile(bad, b[:len(b)/2], 0o644)
		if _, err := faultline.Open(bad); !errors.Is(err, faultline.ErrRuleset) {
			t.Errorf("truncated ruleset: %v", err)
		}
	}
	_, err = faultline.OpenBytes([]byte("garbage"))
	if !errors.Is(err, faultline.ErrRuleset) {
		t.Errorf("OpenBytes(garbage): %v", err)
	}
	e := newEngine(t)
	if _, err := e.NewSession(faultline.Options{TZ: "Not/AZone"}); !errors.Is(err, faultline.ErrInvalidArg) {
		t.Errorf("bad TZ: %v", err)
	}
	if _, err := e.RuleJSON("no-such-rule"); !errors.Is(err, faultline.ErrNotFound) {
		t.Errorf("RuleJSON(no-such-rule): %v", err)
	}
	if b, err := e.RuleJSON("xid-79-fallen-off-bus"); err != nil || !json.Valid(b) {
		t.Errorf("RuleJSON: %v", err)
	}
	if txt, err := e.RuleText("xid-79-fallen-off-bus"); err != nil || txt == "" {
		t.Errorf("RuleText: %v", err)
	}
	if b, err := e.RulesJSON(); err != nil || !json.Valid(b) {
		t.Errorf("RulesJSON: %v", err)
	}
}

func TestUnreadableSourceIsReported(t *testing.T) {
	e := newEngine(t)
	dir := t.TempDir()
	writeIncident(t, dir, 1, 1)
	bad := filepath.Join(dir, "node099", "rank-9.log.gz")
	os.MkdirAll(filepath.Dir(bad), 0o755)
	os.WriteFile(bad, []byte("\x1f\x8b\x08\x00garbage-not-gzip"), 0o644)
	rep, err := e.Diagnose(context.Background(), dir)
	var partial *faultline.InputErrors
	if !errors.As(err, &partial) || rep == nil {
		t.Fatalf("report %v, err %v: want the report and an *InputErrors", rep, err)
	}
	defer rep.Close()
	if len(partial.Errors) != 1 || partial.Errors[0].Source != bad || !strings.Contains(err.Error(), "rank-9.log.gz") {
		t.Errorf("InputErrors %+v", partial.Errors)
	}
	if len(rep.Input.Errors) != 1 || rep.Input.Errors[0].Source != bad || rep.Input.Errors[0].Status != "FL_ERR_IO" {
		t.Errorf("input errors %+v", rep.Input.Errors)
	}
	if rep.Primary() == nil {
		t.Error("the readable inputs were not diagnosed")
	}
}

func TestMissingOrEmptyInputIsAnError(t *testing.T) {
	e := newEngine(t)
	dir := t.TempDir()
	writeIncident(t, dir, 1, 1)
	missing := filepath.Join(dir, "nope.log")
	rep, err := e.Diagnose(context.Background(), dir, missing)
	if rep != nil || !errors.Is(err, fs.ErrNotExist) || !errors.Is(err, faultline.ErrNotFound) || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing path: report %v, err %v; want fs.ErrNotExist naming it", rep, err)
	}
	if _, err := e.Diagnose(context.Background(), "/does/not/exist"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing path alone: %v", err)
	}
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	rep, err = e.Diagnose(context.Background(), empty)
	if rep != nil || !errors.Is(err, faultline.ErrIO) || !strings.Contains(err.Error(), empty) {
		t.Errorf("empty directory: report %v, err %v; want ErrIO naming it", rep, err)
	}
}

func TestFlushScansCompleteLines(t *testing.T) {
	e := newEngine(t)
	var seen atomic.Int32
	s, err := e.NewSession(faultline.Options{OnEvidence: func(faultline.Evidence) { seen.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Write([]byte(xidLine)); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if seen.Load() == 0 {
		t.Error("Flush returned before the complete line was scanned (fl_session_stream_flush not called)")
	}
}

func TestAllEvidenceReportsItsError(t *testing.T) {
	e := newEngine(t)
	dir := t.TempDir()
	writeIncident(t, dir, 1, 1)
	rep, err := e.Diagnose(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	rep.Close()
	n := 0
	for _, err := range rep.AllEvidence() {
		n++
		if !errors.Is(err, faultline.ErrClosed) {
			t.Errorf("AllEvidence on a closed report: %v, want ErrClosed", err)
		}
	}
	if n != 1 {
		t.Errorf("AllEvidence on a closed report yielded %d times, want one error", n)
	}
}

func TestCloseTwice(t *testing.T) {
	e, err := faultline.Default()
	if err != nil {
		t.Fatal(err)
	}
	s, err := e.NewSession(faultline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Closing the engine while a session uses it defers freeing the
	// ruleset until the session is closed.
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.NewSession(faultline.Options{}); !errors.Is(err, faultline.ErrClosed) || !errors.Is(err, faultline.ErrInvalidArg) {
		t.Errorf("NewSession on a closed engine: %v", err)
	}
	if _, err := e.Diagnose(context.Background(), "/dev/null"); !errors.Is(err, faultline.ErrClosed) {
		t.Errorf("Diagnose on a closed engine: %v", err)
	}
	if _, err := s.Write([]byte(xidLine)); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Finish(); !errors.Is(err, faultline.ErrInvalidArg) {
		t.Errorf("second Finish: %v", err)
	}
	if _, err := s.Write([]byte("more\n")); !errors.Is(err, faultline.ErrInvalidArg) || !errors.Is(err, faultline.ErrClosed) {
		t.Errorf("Write after Finish: %v, want ErrClosed", err)
	}
	if err := s.AddPath("-"); !errors.Is(err, faultline.ErrClosed) {
		t.Errorf("AddPath after Finish: %v, want ErrClosed", err)
	}
	if _, err := s.OpenStream("late"); !errors.Is(err, faultline.ErrClosed) {
		t.Errorf("OpenStream after Finish: %v, want ErrClosed", err)
	}
	for i := 0; i < 2; i++ {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := rep.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Write([]byte("x")); !errors.Is(err, faultline.ErrClosed) {
		t.Errorf("Write on a closed session: %v", err)
	}
	if err := s.AddPath("x"); !errors.Is(err, faultline.ErrClosed) {
		t.Errorf("AddPath on a closed session: %v", err)
	}
	s.Cancel() // harmless on a closed session
	if _, err := rep.Text(); !errors.Is(err, faultline.ErrClosed) {
		t.Errorf("Text on a closed report: %v", err)
	}
	if _, err := rep.Evidence(); !errors.Is(err, faultline.ErrClosed) {
		t.Errorf("Evidence on a closed report: %v", err)
	}
	if len(rep.JSON()) == 0 || len(rep.Incidents) != 1 {
		t.Errorf("decoded report lost on Close")
	}
}

func TestCloseDuringFinish(t *testing.T) {
	big := bigLog(t)
	e := newEngine(t)
	inScan, closed := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s, err := e.NewSession(faultline.Options{Threads: 2, OnProgress: func(uint64, uint64) {
		once.Do(func() { close(inScan); <-closed })
	}})
	if err != nil {
		t.Fatal(err)
	}
	s.AddPath(big)
	done := make(chan error)
	go func() {
		_, err := s.Finish()
		done <- err
	}()
	<-inScan
	// Close from another goroutine while Finish runs: it cancels and returns
	// at once; the session is freed when Finish returns.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	close(closed)
	if err := <-done; !errors.Is(err, faultline.ErrCancelled) {
		t.Fatalf("Finish: %v", err)
	}
	if err := s.AddPath("x"); !errors.Is(err, faultline.ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}

func TestConcurrentDiagnose(t *testing.T) {
	dir := t.TempDir()
	writeIncident(t, dir, 4, 2000)
	e := newEngine(t)
	const goroutines, rounds = 4, 5
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*rounds)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				var n int
				rep, err := e.DiagnoseWith(context.Background(), faultline.Options{
					Threads:    1,
					OnEvidence: func(faultline.Evidence) { n++ },
				}, dir)
				if err != nil {
					errs <- err
					return
				}
				p := rep.Primary()
				if p == nil || p.Rule != "xid-79-fallen-off-bus" || p.Initiating.Host != "node017" || n != rep.EvidenceCount() {
					errs <- fmt.Errorf("goroutine %d round %d: %s", g, i, rep.JSON())
				}
				if _, err := rep.Evidence(); err != nil {
					errs <- err
				}
				rep.Close()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestOptionsReachTheLibrary(t *testing.T) {
	dir := t.TempDir()
	writeIncident(t, dir, 2, 5)
	e := newEngine(t)
	// A job that started hours after the Xid: the hardware line is stale,
	// so it is ignored rather than diagnosed.
	rep, err := e.DiagnoseWith(context.Background(), faultline.Options{
		JobStart:     time.Date(2026, 11, 2, 5, 30, 0, 0, time.UTC),
		JobEnd:       time.Date(2026, 11, 2, 6, 0, 0, 0, time.UTC),
		ClockOffsets: map[string]float64{"node017": 1.5, "node018": -0.25},
		TZ:           "+00:00",
	}, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Close()
	if got := rep.JobWindow.Start; !got.Equal(time.Date(2026, 11, 2, 5, 30, 0, 0, time.UTC)) {
		t.Errorf("job window %+v", rep.JobWindow)
	}
	if rep.ClockOffsets["node017"].Seconds != 1.5 || rep.ClockOffsets["node018"].Seconds != -0.25 {
		t.Errorf("clock offsets %+v", rep.ClockOffsets)
	}
	for _, inc := range rep.Incidents {
		if inc.Rule == "xid-79-fallen-off-bus" {
			t.Errorf("stale Xid diagnosed: %+v", inc.Initiating)
		}
	}
	found := false
	for _, ig := range rep.Ignored {
		found = found || (ig.Rule == "xid-79-fallen-off-bus" && strings.HasPrefix(ig.Reason, "stale") && ig.Count == 1)
	}
	if !found {
		t.Errorf("stale Xid not listed as ignored: %+v", rep.Ignored)
	}
	if _, err := e.NewSession(faultline.Options{Threads: -1}); !errors.Is(err, faultline.ErrInvalidArg) {
		t.Errorf("Threads -1: %v", err)
	}
}

func TestBusyWhileFinishRuns(t *testing.T) {
	big := bigLog(t)
	e := newEngine(t)
	started := make(chan struct{})
	var once sync.Once
	s, err := e.NewSession(faultline.Options{Threads: 1, OnProgress: func(uint64, uint64) { once.Do(func() { close(started) }) }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.AddPath(big)
	done := make(chan struct{})
	go func() {
		s.Finish()
		close(done)
	}()
	<-started
	if err := s.AddPath("x"); !errors.Is(err, faultline.ErrBusy) {
		t.Errorf("AddPath while Finish runs: %v", err)
	}
	s.Cancel()
	<-done
}

func TestRankJSON(t *testing.T) {
	var v struct{ A, B faultline.Rank }
	if err := json.Unmarshal([]byte(`{"A":null,"B":7}`), &v); err != nil || v.A != faultline.NoRank || v.B != 7 || v.A.Known() {
		t.Fatalf("%+v %v", v, err)
	}
	b, _ := json.Marshal(v)
	if string(b) != `{"A":null,"B":7}` {
		t.Errorf("marshal %s", b)
	}
}

func TestParseFields(t *testing.T) {
	for in, want := range map[string]map[string]string{
		`{}`:                                   nil,
		``:                                     nil,
		`{"a":"1"}`:                            {"a": "1"},
		`{"pci":"0000:3b:00","xid":"79"}`:      {"pci": "0000:3b:00", "xid": "79"},
		`{"msg":"say \"hi\"\\n","b":"\u00e9"}`: {"msg": "say \"hi\"\\n", "b": "é"},
		`{"a":"x,y:z","b":""}`:                 {"a": "x,y:z", "b": ""},
		`{"a":1}`:                              nil, // not strings: dropped
	} {
		if got := faultline.ParseFields(in); !reflect.DeepEqual(got, want) {
			t.Errorf("ParseFields(%s) = %#v, want %#v", in, got, want)
		}
	}
}

func TestReportSharedByGoroutines(t *testing.T) {
	dir := t.TempDir()
	writeIncident(t, dir, 4, 100)
	e := newEngine(t)
	rep, err := e.Diagnose(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := rep.Evidence()
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				evs, err := rep.Evidence()
				if err != nil || !reflect.DeepEqual(evs, want) {
					t.Errorf("Evidence: %v", err)
					return
				}
				if _, err := rep.Text(); err != nil {
					t.Error(err)
				}
				if _, err := rep.SignalHits(); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	// Close while nobody reads; later reads fail cleanly.
	rep.Close()
	if _, err := rep.SignalHits(); !errors.Is(err, faultline.ErrClosed) {
		t.Errorf("SignalHits after Close: %v", err)
	}
}

func TestFinalizersFreeDroppedSessions(t *testing.T) {
	e := newEngine(t)
	func() {
		for i := 0; i < 10; i++ {
			// With a callback: its cgo.Handle must not keep the Session
			// reachable, or the finaliser would never run.
			s, err := e.NewSession(faultline.Options{OnEvidence: func(faultline.Evidence) {}})
			if err != nil {
				t.Fatal(err)
			}
			s.Write([]byte(xidLine))
		}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for faultline.EngineRefs(e) > 0 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := faultline.EngineRefs(e); n != 0 {
		t.Fatalf("%d dropped sessions were never finalised", n)
	}
}

func TestSignalCosts(t *testing.T) {
	dir := t.TempDir()
	writeIncident(t, dir, 4, 50)
	e := newEngine(t)
	b, err := e.SignalCostsJSON(1<<20, dir, filepath.Join(dir, "missing.log"))
	if err != nil {
		t.Fatal(err)
	}
	var costs struct {
		SampleBytes int64    `json:"sample_bytes"`
		Skipped     []string `json:"skipped"`
		Signals     []struct {
			Signal string  `json:"signal"`
			Alone  float64 `json:"alone_s_per_gb"`
			Lines  int64   `json:"lines"`
		} `json:"signals"`
	}
	if err := json.Unmarshal(b, &costs); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if costs.SampleBytes <= 0 || len(costs.Skipped) != 1 || !strings.Contains(costs.Skipped[0], "missing.log") {
		t.Errorf("sample %d bytes, skipped %q", costs.SampleBytes, costs.Skipped)
	}
	found := false
	for i, s := range costs.Signals {
		if i > 0 && s.Alone > costs.Signals[i-1].Alone {
			t.Errorf("not costliest first at %s", s.Signal)
		}
		if s.Signal == "xid-79-fallen-off-bus/xid79" {
			found = s.Lines >= 1
		}
	}
	if !found {
		t.Errorf("xid79 not measured on the incident: %s", b)
	}
	if _, err := e.SignalCostsJSON(1<<20, filepath.Join(dir, "missing.log")); !errors.Is(err, faultline.ErrInvalidArg) {
		t.Errorf("nothing to sample: %v, want ErrInvalidArg", err)
	}
}

func TestVersionCompatibility(t *testing.T) {
	for _, c := range []struct {
		lib, hdr int
		ok       bool
	}{
		{300, 300, true}, {301, 300, true}, // 0.3.1 serves a 0.3.0 binding
		{400, 300, false}, {200, 300, false}, // 0.x: another minor may have another ABI
		{300, 301, false}, // older patch than the header
		{10200, 10100, true}, {10100, 10200, false}, {20000, 10000, false},
	} {
		if err := faultline.Compatible(c.lib, c.hdr); (err == nil) != c.ok {
			t.Errorf("compatible(%d, %d) = %v, want ok=%v", c.lib, c.hdr, err, c.ok)
		}
	}
}

func TestLimitsAndCaps(t *testing.T) {
	e := newEngine(t)
	dir := t.TempDir()
	big := filepath.Join(dir, "big.log")
	small := filepath.Join(dir, "small.log")
	os.WriteFile(big, []byte(strings.Repeat(strings.Repeat("filler line that matches nothing\n", 99)+xidLine, 40)), 0o644)
	os.WriteFile(small, []byte(xidLine), 0o644)
	rep, err := e.DiagnoseWith(context.Background(), faultline.Options{MaxSourceBytes: 16 << 10}, big, small)
	var partial *faultline.InputErrors
	if !errors.As(err, &partial) || rep == nil {
		t.Fatalf("report %v, err %v: want the report and an *InputErrors", rep, err)
	}
	defer rep.Close()
	if len(rep.Input.Errors) != 1 || rep.Input.Errors[0].Source != big ||
		!strings.Contains(rep.Input.Errors[0].Message, "16384") {
		t.Errorf("input errors %+v", rep.Input.Errors)
	}
	if rep.Primary() == nil {
		t.Error("the lines under the limit and the other file were not diagnosed")
	}
	if c := rep.Input.Caps; c.Truncated || c.Ranks.Truncated || c.Evidence.Matches != rep.Input.Matches || c.Ranks.Limit == 0 {
		t.Errorf("caps %+v", c)
	}
	if _, err := e.NewSession(faultline.Options{TimeBudget: -time.Second}); !errors.Is(err, faultline.ErrInvalidArg) {
		t.Errorf("negative TimeBudget: %v", err)
	}
	ok, err := e.DiagnoseWith(context.Background(), faultline.Options{TimeBudget: time.Minute, MaxDecompressedBytes: 1 << 20}, small)
	if err != nil {
		t.Fatalf("under the limits: %v", err)
	}
	ok.Close()
}

// A job's loss lines are counted as points of their series, not kept as
// evidence records: every line is still a match.
func TestMetricPointsCounted(t *testing.T) {
	e := newEngine(t)
	log := filepath.Join(t.TempDir(), "train.log")
	var b strings.Builder
	const steps = 300
	for i := 1; i <= steps; i++ {
		fmt.Fprintf(&b, "2026-11-02T03:%02d:%02d.000000Z [rank0]: {'loss': 2.%04d, 'grad_norm': 1.2345, 'learning_rate': 4.9e-05, 'epoch': 0.01}\n", i/60, i%60, i)
	}
	os.WriteFile(log, []byte(b.String()), 0o644)
	rep, err := e.Diagnose(context.Background(), log)
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Close()
	c := rep.Input.Caps.Evidence
	if c.MetricPoints < steps || c.Kept+c.MetricPoints > c.Matches {
		t.Errorf("evidence caps %+v: want at least %d metric points, kept + points within the matches", c, steps)
	}
}

// Snapshot diagnoses a live session and leaves it taking input: the xid
// incident is there before the stream is closed, and Finish still sees the
// lines written after the snapshot.
func TestSnapshotKeepsTheSessionOpen(t *testing.T) {
	e := newEngine(t)
	s, err := e.NewSession(faultline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st, err := s.OpenStream("node017/dmesg.log")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Write([]byte(xidLine)); err != nil {
		t.Fatal(err)
	}
	snap, err := s.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if p := snap.Primary(); p == nil || p.Rule != "xid-79-fallen-off-bus" {
		t.Fatalf("snapshot primary: %+v", p)
	}
	first := snap.EvidenceCount()
	st2, err := s.OpenStream("node018/rank-0.log")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(st2, watchdogLine, 0, 0)
	final, err := s.Finish()
	if err != nil {
		t.Fatal(err)
	}
	defer final.Close()
	if final.EvidenceCount() <= first {
		t.Errorf("Finish after Snapshot: %d evidence, the snapshot had %d", final.EvidenceCount(), first)
	}
	if _, err := s.Snapshot(context.Background()); err == nil {
		t.Error("Snapshot after Finish: no error")
	}
}

// ChangeKey: equal for the same incident, different when its confidence or
// collateral changes.
func TestIncidentChangeKey(t *testing.T) {
	inc := faultline.Incident{Rule: "xid-79-fallen-off-bus", Confidence: 0.9}
	inc.Initiating.Host, inc.Initiating.Rank = "node017", 2
	same := inc
	if inc.ChangeKey() != same.ChangeKey() {
		t.Fatal("the same incident gave two keys")
	}
	more := inc
	more.Confidence = 0.99
	if more.ChangeKey() == inc.ChangeKey() {
		t.Error("a higher confidence kept the key")
	}
	coll := inc
	coll.Collateral = append(coll.Collateral, faultline.Collateral{Rule: "nccl-watchdog-timeout", Count: 3})
	if coll.ChangeKey() == inc.ChangeKey() {
		t.Error("new collateral kept the key")
	}
}

// Logs plus the NCCL Flight Recorder dumps of a watchdog-timeout job,
// written by tests/flightrec/make_dumps.py: the report's FlightRecorder and
// the primary incident's findings name rank 5.
func TestDiagnoseFlightRecorderDumps(t *testing.T) {
	dir := t.TempDir()
	make := filepath.Join("..", "..", "tests", "flightrec", "make_dumps.py")
	if out, err := exec.Command("python3", make, dir, "--only", "job").CombinedOutput(); err != nil {
		t.Skipf("make_dumps.py: %v: %s", err, out)
	}
	rep, err := newEngine(t).Diagnose(context.Background(), filepath.Join(dir, "job"))
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Close()
	fr := rep.FlightRecorder
	if fr == nil || len(fr.Dumps) != 8 || !reflect.DeepEqual(fr.Suspects, []faultline.Rank{5}) {
		t.Fatalf("flight recorder %+v", fr)
	}
	for _, g := range fr.Groups {
		if g.Name == "0" && (g.Wavefront == nil || g.Wavefront.Seq != 6 ||
			!reflect.DeepEqual(g.Wavefront.Missing, []faultline.Rank{5})) {
			t.Errorf("world group %+v", g)
		}
	}
	p := rep.Primary()
	if p == nil || p.Initiating.Rank != 5 || len(p.FlightRecorder) != 1 ||
		p.FlightRecorder[0].Kind != "missing-rank" || p.FlightRecorder[0].Seq != 6 {
		t.Fatalf("primary %+v", p)
	}
}

// The report's optional initiating.hca (the InfiniBand HCA the initiating
// line names) reaches Initiating.HCA; absent, it is empty.
func TestInitiatingHCA(t *testing.T) {
	var with, without faultline.Initiating
	if err := json.Unmarshal([]byte(`{"rank":2,"host":"node1","gpu":null,"hca":"mlx5_3","time":null,"evidence":[]}`), &with); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`{"rank":2,"host":"node1","gpu":null,"time":null,"evidence":[]}`), &without); err != nil {
		t.Fatal(err)
	}
	if with.HCA != "mlx5_3" || without.HCA != "" {
		t.Fatalf("HCA %q / %q, want mlx5_3 / empty", with.HCA, without.HCA)
	}
}
