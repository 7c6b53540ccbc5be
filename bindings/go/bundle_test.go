package faultline_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	faultline "github.com/faultline/faultline/bindings/go"
)

// TestBundlesEqualOneSession scans every file of the incident in three
// ranges cut mid-line, each range on its own session (a "worker") running
// concurrently, and correlates the bundles: the report must equal the one
// a single Diagnose makes.
func TestBundlesEqualOneSession(t *testing.T) {
	dir := t.TempDir()
	writeIncident(t, dir, 4, 3000)
	e := newEngine(t)
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.log"))
	want, err := e.Diagnose(context.Background(), files...)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Close()

	type job struct {
		path       string
		begin, end uint64
	}
	var jobs []job
	for _, f := range files {
		fi, _ := os.Stat(f)
		size := uint64(fi.Size())
		cuts := []uint64{0, size/3 + 7, 2*size/3 + 13, size}
		for i := 0; i+1 < len(cuts); i++ {
			jobs = append(jobs, job{f, cuts[i], cuts[i+1]})
		}
	}
	bundles := make([][]byte, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := e.NewSession(faultline.Options{Threads: 1})
			if err != nil {
				t.Error(err)
				return
			}
			defer s.Close()
			if err := s.AddRange(j.path, j.begin, j.end, 0); err != nil {
				t.Error(err)
				return
			}
			if bundles[i], err = s.ExportBundle(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	got, err := e.ReportFromBundles(faultline.Options{}, bundles...)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	if p := got.Primary(); p == nil || p.Rule != "xid-79-fallen-off-bus" || p.Initiating.Host != "node017" {
		t.Fatalf("primary from bundles: %+v", p)
	}
	g, w := normalise(t, got.JSON()), normalise(t, want.JSON())
	if !reflect.DeepEqual(g["incidents"], w["incidents"]) || !reflect.DeepEqual(g["ignored"], w["ignored"]) {
		t.Errorf("bundles and one session disagree:\n bundles %s\n session %s", got.JSON(), want.JSON())
	}
	gi, wi := g["input"].(map[string]any), w["input"].(map[string]any)
	for _, k := range []string{"bytes", "lines", "evidence", "matches"} {
		if gi[k] != wi[k] {
			t.Errorf("input.%s: bundles %v, session %v", k, gi[k], wi[k])
		}
	}
	gev, _ := got.Evidence()
	wev, _ := want.Evidence()
	if !reflect.DeepEqual(gev, wev) {
		t.Errorf("evidence differs: %d vs %d records", len(gev), len(wev))
	}

	// A damaged bundle is rejected, naming its index.
	bad := append([]byte(nil), bundles[1]...)
	for i := range bad[:min(64, len(bad))] {
		bad[i] ^= 0xff
	}
	_, err = e.ReportFromBundles(faultline.Options{}, bundles[0], bad)
	var fe *faultline.Error
	if !errors.Is(err, faultline.ErrParse) || !errors.As(err, &fe) {
		t.Errorf("damaged bundle: %v", err)
	} else {
		t.Logf("damaged bundle: %v", err)
	}
	if _, err := e.ReportFromBundles(faultline.Options{}, bundles[0], nil); err == nil {
		t.Errorf("empty bundle accepted")
	}
}
