package faultline_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestHTMLMatchesCLI: Report.HTML() is the page `faultline diagnose --html`
// writes for the same input, byte for byte, and it names the primary
// incident's reference, rank and host.
func TestHTMLMatchesCLI(t *testing.T) {
	cli := os.Getenv("FAULTLINE_CLI")
	if cli == "" {
		var err error
		if cli, err = exec.LookPath("faultline"); err != nil {
			t.Skip("no faultline CLI: set FAULTLINE_CLI")
		}
	}
	dir, err := filepath.Abs(filepath.Join("..", "..", "examples", "incidents", "xid79-two-hosts"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "cli.html")
	if b, err := exec.Command(cli, "diagnose", "-q", "--html", out, dir).CombinedOutput(); err != nil {
		t.Fatalf("CLI: %v: %s", err, b)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t)
	rep, err := e.Diagnose(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Close()
	page, err := rep.HTML()
	if err != nil {
		t.Fatal(err)
	}
	if page != string(want) {
		t.Fatalf("Report.HTML() (%d bytes) differs from the CLI's page (%d bytes)", len(page), len(want))
	}
	p := rep.Primary()
	if p == nil {
		t.Fatal("no primary incident")
	}
	for _, s := range []string{`data-rank="` + strconv.Itoa(int(p.Initiating.Rank)) + `"`,
		`data-host="` + p.Initiating.Host + `"`, p.Reference} {
		if !strings.Contains(page, s) {
			t.Errorf("page lacks %q", s)
		}
	}
	rep.Close()
	if _, err := rep.HTML(); err == nil {
		t.Error("HTML() on a closed report: no error")
	}
}
