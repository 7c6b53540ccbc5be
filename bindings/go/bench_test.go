package faultline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	faultline "github.com/faultline/faultline/bindings/go"
)

const benchLines = 100_000

// benchLog is 100k short realistic lines of one rank's training log, with
// a watchdog timeout every 10k lines.
func benchLog() [][]byte {
	lines := make([][]byte, 0, benchLines)
	for i := 0; i < benchLines; i++ {
		if i%10000 == 9999 {
			lines = append(lines, []byte(fmt.Sprintf(watchdogLine, 3, 3)))
			continue
		}
		lines = append(lines, []byte(noiseLine(3, i)))
	}
	return lines
}

// BenchmarkFeed pushes 100k short lines through a Session and finishes it.
//
//	go test -run '^$' -bench Feed -benchtime 20x
func BenchmarkFeed(b *testing.B) {
	e := newEngine(b)
	// The lines are consecutive slices of one buffer, as a reader's would be.
	var all []byte
	for _, l := range benchLog() {
		all = append(all, l...)
	}
	lines := bytes.SplitAfter(all, []byte{'\n'})
	lines = lines[:len(lines)-1] // the empty tail after the last newline
	run := func(b *testing.B, push func(s *faultline.Session, st *faultline.Stream)) {
		b.SetBytes(int64(len(all)))
		b.ReportAllocs()
		var evidence int
		for i := 0; i < b.N; i++ {
			s, err := e.NewSession(faultline.Options{Threads: 1})
			if err != nil {
				b.Fatal(err)
			}
			st, err := s.OpenStream("node018/rank-3.log")
			if err != nil {
				b.Fatal(err)
			}
			push(s, st)
			rep, err := s.Finish()
			if err != nil {
				b.Fatal(err)
			}
			evidence = rep.EvidenceCount()
			rep.Close()
			s.Close()
		}
		if evidence < benchLines/10000 {
			b.Fatalf("%d evidence records, want at least the %d timeouts", evidence, benchLines/10000)
		}
		b.ReportMetric(float64(benchLines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
	}
	// One Write per line; the Stream gathers them into ChunkSize chunks.
	b.Run("Write-per-line", func(b *testing.B) {
		run(b, func(_ *faultline.Session, st *faultline.Stream) {
			for _, l := range lines {
				if _, err := st.Write(l); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	// io.Reader: read straight into the C chunk buffer.
	b.Run("ReadFrom", func(b *testing.B) {
		run(b, func(_ *faultline.Session, st *faultline.Stream) {
			if _, err := st.ReadFrom(bytes.NewReader(all)); err != nil {
				b.Fatal(err)
			}
		})
	})
	// What the chunking saves: one cgo call (fl_session_feed) per line.
	b.Run("cgo-call-per-line", func(b *testing.B) {
		run(b, func(_ *faultline.Session, st *faultline.Stream) {
			for _, l := range lines {
				st.Write(l)
				if err := st.Flush(); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

// BenchmarkDiagnoseVsCLI diagnoses the same ~200 MB file through the
// binding and through the CLI process (FAULTLINE_CLI), so the binding's
// overhead is the difference.
//
//	FAULTLINE_CLI=/path/to/faultline go test -run '^$' -bench DiagnoseVsCLI -benchtime 10x
func BenchmarkDiagnoseVsCLI(b *testing.B) {
	big := bigLog(b)
	fi, err := os.Stat(big)
	if err != nil {
		b.Fatal(err)
	}
	e := newEngine(b)
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("binding/threads=%d", threads), func(b *testing.B) {
			b.SetBytes(fi.Size())
			for i := 0; i < b.N; i++ {
				rep, err := e.DiagnoseWith(context.Background(), faultline.Options{Threads: threads}, big)
				if err != nil {
					b.Fatal(err)
				}
				_ = rep.JSON()
				rep.Close()
			}
		})
		b.Run(fmt.Sprintf("cli/threads=%d", threads), func(b *testing.B) {
			cli := os.Getenv("FAULTLINE_CLI")
			if cli == "" {
				b.Skip("set FAULTLINE_CLI")
			}
			b.SetBytes(fi.Size())
			for i := 0; i < b.N; i++ {
				cmd := exec.Command(cli, "diagnose", "--json", "--threads", fmt.Sprint(threads), big)
				if out, err := cmd.Output(); err != nil || len(out) == 0 {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEvidence pulls every evidence record of a report in batches.
func BenchmarkEvidence(b *testing.B) {
	e := newEngine(b)
	s, _ := e.NewSession(faultline.Options{})
	st, _ := s.OpenStream("node018/rank-0.log")
	for k := 0; k < 20000; k++ {
		fmt.Fprintf(st, watchdogLine, k%64, k%64)
	}
	rep, err := s.Finish()
	if err != nil {
		b.Fatal(err)
	}
	defer rep.Close()
	defer s.Close()
	n := rep.EvidenceCount()
	b.Logf("%d records", n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		evs, err := rep.Evidence()
		if err != nil || len(evs) != n {
			b.Fatal(len(evs), err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// TestMeasureDiagnoseOverhead splits the wall time of diagnosing the ~200 MB
// file into the library's own scan time (input.seconds) and the rest, for
// the binding and for the CLI process, and times loading the engine (which
// the CLI pays on every run). Set FAULTLINE_MEASURE=1 (and FAULTLINE_CLI).
//
//	FAULTLINE_MEASURE=1 FAULTLINE_CLI=... go test -run MeasureDiagnoseOverhead -v
func TestMeasureDiagnoseOverhead(t *testing.T) {
	if os.Getenv("FAULTLINE_MEASURE") == "" {
		t.Skip("set FAULTLINE_MEASURE=1")
	}
	big := bigLog(t)
	const runs = 10
	median := func(d []time.Duration) time.Duration {
		slices.Sort(d)
		return d[len(d)/2]
	}
	var load []time.Duration
	for i := 0; i < runs; i++ {
		start := time.Now()
		e, err := faultline.Default()
		if err != nil {
			t.Fatal(err)
		}
		load = append(load, time.Since(start))
		e.Close()
	}
	t.Logf("Default() (load the embedded ruleset): median %v", median(load))
	e := newEngine(t)
	for _, threads := range []int{1, 2} {
		var wall, lib, cwall, clib []time.Duration
		for i := 0; i < runs; i++ {
			start := time.Now()
			rep, err := e.DiagnoseWith(context.Background(), faultline.Options{Threads: threads}, big)
			if err != nil {
				t.Fatal(err)
			}
			wall = append(wall, time.Since(start))
			lib = append(lib, time.Duration(rep.Input.Seconds*float64(time.Second)))
			rep.Close()
			if cli := os.Getenv("FAULTLINE_CLI"); cli != "" {
				start = time.Now()
				out, err := exec.Command(cli, "diagnose", "--json", "--threads", fmt.Sprint(threads), big).Output()
				if err != nil {
					t.Fatal(err)
				}
				cwall = append(cwall, time.Since(start))
				var doc struct {
					Input struct{ Seconds float64 } `json:"input"`
				}
				json.Unmarshal(out, &doc)
				clib = append(clib, time.Duration(doc.Input.Seconds*float64(time.Second)))
			}
		}
		t.Logf("threads=%d binding Diagnose: wall %v, library scan %v, rest (session, correlate, JSON, decode) %v",
			threads, median(wall), median(lib), median(wall)-median(lib))
		if len(cwall) > 0 {
			t.Logf("threads=%d CLI process:      wall %v, library scan %v, rest (exec, load ruleset, correlate, print) %v",
				threads, median(cwall), median(clib), median(cwall)-median(clib))
		}
	}
}
