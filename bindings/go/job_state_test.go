package faultline_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	faultline "github.com/faultline/faultline/bindings/go"
)

// writeCutLogs writes two ranks' logs that just stop (rank 1 two minutes
// before rank 0): torchtitan's step lines under torchrun's [rankN]: prefix.
func writeCutLogs(t *testing.T, dir string) {
	t.Helper()
	for rank, minutes := range [][]int{{0, 1, 2, 3}, {0, 1}} {
		host := fmt.Sprintf("gpu-a0%d", rank+1)
		var b strings.Builder
		fmt.Fprintf(&b, "%s:%d:%d [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n", host, 2100+rank, 2100+rank)
		for n, m := range minutes {
			fmt.Fprintf(&b, "[rank%d]:[titan] 2026-11-20 09:%02d:00,000 - root - INFO - step: %d  loss:  2.%04d  "+
				"memory: 44.10GiB(55.13%%)  tps: 3,101  mfu: 40.10%%\n", rank, m, 100+n, n)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("rank%d.log", rank)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Options.JobState and JobExitStatus: the logs alone give no incident; the
// stated end gives the state's reference on the rank that stopped first,
// and the report echoes it.
func TestJobState(t *testing.T) {
	e := newEngine(t)
	dir := t.TempDir()
	writeCutLogs(t, dir)
	ctx := context.Background()

	rep, err := e.DiagnoseWith(ctx, faultline.Options{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Primary() != nil || rep.Input.Job != nil {
		t.Errorf("unstated: primary %v, job %v", rep.Primary(), rep.Input.Job)
	}
	rep.Close()

	for _, c := range []struct{ state, rule, echo string }{
		{"TIMEOUT", "slurm-time-limit", "timeout"},
		{"oom", "slurm-oom-kill-event", "oom"},
		{"running", "training-silent-hang", "running"},
	} {
		status := -9
		rep, err := e.DiagnoseWith(ctx, faultline.Options{JobState: c.state, JobExitStatus: &status}, dir)
		if err != nil {
			t.Fatal(err)
		}
		p := rep.Primary()
		if p == nil || p.Rule != c.rule || p.Initiating.Rank != 1 {
			t.Errorf("%s: primary %+v", c.state, p)
		}
		j := rep.Input.Job
		if j == nil || j.State == nil || *j.State != c.echo || j.ExitStatus == nil || *j.ExitStatus != -9 {
			t.Errorf("%s: input.job %+v", c.state, j)
		}
		rep.Close()
	}

	zero := 0
	rep, err = e.DiagnoseWith(ctx, faultline.Options{JobState: "completed", JobExitStatus: &zero}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Primary() != nil {
		t.Errorf("completed: primary %+v", rep.Primary())
	}
	rep.Close()

	bad := 256
	for _, o := range []faultline.Options{{JobState: "bogus"}, {JobState: "Failed"}, {JobExitStatus: &bad}} {
		if _, err := e.DiagnoseWith(ctx, o, dir); !errors.Is(err, faultline.ErrInvalidArg) {
			t.Errorf("%+v: %v", o, err)
		}
	}
}
