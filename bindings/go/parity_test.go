package faultline_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	faultline "github.com/faultline/faultline/bindings/go"
)

// TestFixturesMatchCLI diagnoses every fixture folder under tests/fixtures
// through the binding and through `faultline diagnose --json`, and requires
// the same report: the binding adds nothing and loses nothing. Whether the
// diagnosis is right is the fixtures' own golden test; disagreements with a
// fixture's expect.json are only logged here.
//
// FAULTLINE_CLI names the CLI (default: faultline on PATH); FAULTLINE_FIXTURES
// the fixture root (default: ../../tests/fixtures).
func TestFixturesMatchCLI(t *testing.T) {
	cli := os.Getenv("FAULTLINE_CLI")
	if cli == "" {
		var err error
		if cli, err = exec.LookPath("faultline"); err != nil {
			t.Skip("no faultline CLI: set FAULTLINE_CLI")
		}
	}
	root := os.Getenv("FAULTLINE_FIXTURES")
	if root == "" {
		root = filepath.Join("..", "..", "tests", "fixtures")
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "*", "*"))
	if len(dirs) == 0 {
		t.Skipf("no fixtures under %s", root)
	}
	e := newEngine(t)
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			out, err := exec.Command(cli, "diagnose", "--json", "--threads", "2", dir).Output()
			if err != nil {
				t.Skipf("CLI failed on %s: %v", dir, err)
			}
			rep, err := e.DiagnoseWith(context.Background(), faultline.Options{Threads: 2}, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer rep.Close()
			if g, w := normalise(t, rep.JSON()), normalise(t, out); !reflect.DeepEqual(g, w) {
				t.Errorf("binding and CLI disagree on %s:\nbinding %s\n    CLI %s", dir, rep.JSON(), out)
			}
			var want struct {
				PrimaryRule    string `json:"primary_rule"`
				InitiatingHost string `json:"initiating_host"`
			}
			if b, err := os.ReadFile(filepath.Join(dir, "expect.json")); err == nil && json.Unmarshal(b, &want) == nil {
				got := ""
				host := ""
				if p := rep.Primary(); p != nil {
					got, host = p.Rule, p.Initiating.Host
				}
				if got != want.PrimaryRule || (want.InitiatingHost != "" && host != want.InitiatingHost) {
					t.Logf("expect.json wants %s on %s; the library says %q on %q (not the binding's concern)",
						want.PrimaryRule, want.InitiatingHost, got, host)
				}
			}
		})
	}
}
