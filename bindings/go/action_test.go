package faultline_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	faultline "github.com/faultline/faultline/bindings/go"
)

// Incident.ID and Incident.Action: the hardware fault drains its host, the
// id is the report's, and the retry policy's options reach the library.
func TestIncidentActionAndID(t *testing.T) {
	e := newEngine(t)
	dir := t.TempDir()
	writeIncident(t, dir, 4, 0)
	rep, err := e.DiagnoseWith(context.Background(), faultline.Options{
		MaxRestartsPerRule: 1, MaxRestartsPerHost: 2, RestartWindow: 6 * time.Hour,
	}, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Close()
	p := rep.Primary()
	if p == nil {
		t.Fatal("no incident")
	}
	a := p.Action
	if a.Kind != faultline.ActionRestartExcluding || len(a.ExcludeHosts) != 1 || a.ExcludeHosts[0] != "node017" ||
		a.SetBy != p.Rule || !strings.Contains(a.Reason, "node017") || a.MissingFact != "" {
		t.Errorf("action %+v", a)
	}
	var raw struct {
		Incidents []struct {
			ID string `json:"id"`
		} `json:"incidents"`
	}
	if err := json.Unmarshal(rep.JSON(), &raw); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.ID, "inc-") || raw.Incidents[0].ID != p.ID {
		t.Errorf("id %q, report %q", p.ID, raw.Incidents[0].ID)
	}
	for _, inc := range rep.Incidents {
		if inc.Action.Kind == "" || inc.Action.Reason == "" {
			t.Errorf("%s: no action", inc.Rule)
		}
	}
	if _, err := e.NewSession(faultline.Options{RestartWindow: -time.Second}); !errors.Is(err, faultline.ErrInvalidArg) {
		t.Errorf("negative RestartWindow: %v", err)
	}
}

// ChangeKey: a changed action is news to someone following the job.
func TestIncidentChangeKeyAction(t *testing.T) {
	inc := faultline.Incident{Rule: "cuda-oom", Confidence: 0.9}
	inc.Action.Kind = faultline.ActionRestart
	stop := inc
	stop.Action.Kind = faultline.ActionStop
	if stop.ChangeKey() == inc.ChangeKey() {
		t.Error("a restart that became a stop kept the key")
	}
}
