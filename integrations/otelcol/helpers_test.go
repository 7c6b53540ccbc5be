package faultlineconnector

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
)

// exampleDir is the two-host Xid 79 incident the README walks through.
var exampleDir = filepath.Join("..", "..", "examples", "incidents", "xid79-two-hosts")

// expectation is examples/incidents/<name>.expect.json.
type expectation struct {
	PrimaryRule    string `json:"primary_rule"`
	InitiatingRank int    `json:"initiating_rank"`
	InitiatingHost string `json:"initiating_host"`
}

func loadExpectation(t testing.TB) expectation {
	t.Helper()
	b, err := os.ReadFile(exampleDir + ".expect.json")
	if err != nil {
		t.Fatal(err)
	}
	var e expectation
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

// exampleFiles lists the example's log files, sorted.
func exampleFiles(t testing.TB) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(exampleDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if err != nil || len(files) == 0 {
		t.Fatalf("example files: %v (%d)", err, len(files))
	}
	sort.Strings(files)
	return files
}

// fileBatches turns each file into one batch of records, the way the
// filelog receiver would: one record per line, log.file.path on each.
// decorate may add attributes to each file's resource.
func fileBatches(t testing.TB, decorate func(path string, rl plog.ResourceLogs)) []plog.Logs {
	t.Helper()
	var out []plog.Logs
	for _, f := range exampleFiles(t) {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		ld := plog.NewLogs()
		rl := ld.ResourceLogs().AppendEmpty()
		if decorate != nil {
			decorate(f, rl)
		}
		lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			lr := lrs.AppendEmpty()
			lr.Body().SetStr(sc.Text())
			if decorate == nil {
				lr.Attributes().PutStr("log.file.path", f)
			}
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		out = append(out, ld)
	}
	return out
}
