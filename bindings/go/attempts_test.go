package faultline_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	faultline "github.com/faultline/faultline/bindings/go"
)

// feedAttempt: rank 3 on node02 logs steps 1100-1200 and runs out of memory.
func feedAttempt(t *testing.T, s *faultline.Session, hour int) {
	t.Helper()
	st, err := s.OpenStream("node02/train.log")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for k := 0; k < 3; k++ {
		fmt.Fprintf(&b, "[rank3]:[titan] 2026-11-02 %02d:%02d:00,000 - root - INFO - step: %d  loss:  2.1000  "+
			"memory: 61.20GiB(77.32%%)  tps: 6,321  tflops: 366.06  mfu: 37.01%%\n", hour, k, 1100+50*k)
	}
	b.WriteString("[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a " +
		"total capacity of 79.15 GiB of which 1.23 GiB is free.\n")
	if _, err := st.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestPriorBundleHistory: the first attempt's bundle given to the second
// attempt's session gives both attempts, oldest first, and the recurrence.
func TestPriorBundleHistory(t *testing.T) {
	e := newEngine(t)
	s, err := e.NewSession(faultline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	feedAttempt(t, s, 9)
	first, err := s.ExportBundle(context.Background())
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	s, err = e.NewSession(faultline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.AddPriorBundle(first); err != nil {
		t.Fatal(err)
	}
	feedAttempt(t, s, 11)
	r, err := s.Finish()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if len(r.Attempts) != 2 || r.Attempts[0].Recognised != "bundle" || r.Attempts[1].Recognised != "session" {
		t.Fatalf("attempts %+v", r.Attempts)
	}
	for _, a := range r.Attempts {
		if a.Primary == nil || a.Primary.Rule != "cuda-oom" || a.Primary.Step == nil || *a.Primary.Step != 1200 {
			t.Errorf("attempt %d primary %+v", a.Index, a.Primary)
		}
	}
	p := r.Incidents[0]
	if p.Attempt != 1 || p.Step == nil || *p.Step != 1200 {
		t.Errorf("primary attempt %d step %v", p.Attempt, p.Step)
	}
	rec := p.Recurrence
	if !rec.Recurred() || len(rec.Attempts) != 1 || rec.Attempts[0] != 0 || rec.SameHost != 1 || rec.SameStep != 1 {
		t.Errorf("recurrence %+v", rec)
	}
}

func TestPriorBundleRefused(t *testing.T) {
	e := newEngine(t)
	s, err := e.NewSession(faultline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.AddPriorBundle([]byte("not a bundle"))
	if !errors.Is(err, faultline.ErrParse) || !strings.Contains(err.Error(), "prior bundle 1") {
		t.Errorf("junk bundle: %v", err)
	}
	if err := s.AddPriorBundle(nil); err == nil {
		t.Errorf("empty bundle accepted")
	}
}
