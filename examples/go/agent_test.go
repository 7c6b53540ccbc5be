package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	xidLine      = "Nov  2 03:12:05 node017 kernel: [1000001.682554] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
	watchdogLine = "[rank%d]:[E1102 03:42:10.123456 1234 ProcessGroupNCCL.cpp:616] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4711, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800085 milliseconds before timing out.\n"
	stepLine     = "[rank%d]:[I1102 03:%02d:%02d.000000 1234 train.py:412] step %d loss 2.31 lr 3.0e-04\n"
)

// syncBuffer is the agent's stdout, read by the test while the agent runs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// waitFor polls the agent's output until it has n occurrences of want.
func waitFor(t *testing.T, out *syncBuffer, want string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Count(out.String(), want) >= n {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %d x %q in the agent's output:\n%s", n, want, out.String())
}

// incidentLines are the output's INCIDENT headers.
func incidentLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "INCIDENT ") {
			lines = append(lines, l)
		}
	}
	return lines
}

func TestAgentFollowsAppendsTruncationAndRotation(t *testing.T) {
	dir := t.TempDir()
	dmesg := filepath.Join(dir, "node017", "dmesg.log")
	ranks := []string{filepath.Join(dir, "node018", "rank-0.log"), filepath.Join(dir, "node018", "rank-1.log")}
	os.MkdirAll(filepath.Dir(dmesg), 0o755)
	os.MkdirAll(filepath.Dir(ranks[0]), 0o755)
	appendFile(t, dmesg, "Nov  2 03:00:00 node017 kernel: [999236.100000] nvidia-nvlink: Nvlink Core is being initialized\n")
	for k, r := range ranks {
		appendFile(t, r, fmt.Sprintf(stepLine, k, 10, 0, 1))
	}

	out := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, config{
			files:    append([]string{dmesg}, ranks...),
			interval: 150 * time.Millisecond,
			poll:     30 * time.Millisecond,
			window:   1 << 20,
			threads:  1,
		}, out)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("agent: %v", err)
		}
	}()
	waitFor(t, out, "faultline-agent: following", 1)

	// Training goes on, then node017's GPU falls off the bus; half an hour
	// later every rank on node018 times out.
	for i := 2; i < 200; i++ {
		for k, r := range ranks {
			appendFile(t, r, fmt.Sprintf(stepLine, k, 10+i/60, i%60, i))
		}
	}
	appendFile(t, dmesg, xidLine)
	// The incident is printed when the Xid arrives, with the Xid line as its
	// evidence...
	waitFor(t, out, "xid-79-fallen-off-bus on node017 rank ?, GPU 0000:3b:00.0", 1)
	waitFor(t, out, "  evidence: "+dmesg+":2 Nov  2 03:12:05 node017 kernel:", 1)
	first := incidentLines(out.String())
	if len(first) != 1 || !strings.Contains(first[0], "(primary)") {
		t.Fatalf("incident lines after the Xid: %q", first)
	}
	id := strings.Fields(first[0])[1]
	for k, r := range ranks {
		appendFile(t, r, fmt.Sprintf(watchdogLine, k, k))
	}
	// ...and again, updated and under the same id, once the timeouts it
	// explains have arrived.
	waitFor(t, out, "  collateral: 2 x nccl-watchdog-timeout on ranks [0 1]", 1)
	before := out.String()
	time.Sleep(400 * time.Millisecond) // more snapshots would run if logs grew; nothing is reprinted
	if after := out.String(); after != before {
		t.Errorf("output grew without new log lines:\n%s", after[len(before):])
	}
	lines := incidentLines(before)
	if len(lines) != 2 || !strings.HasPrefix(lines[1], "INCIDENT "+id+" (primary) (updated) ") {
		t.Errorf("incident lines %q, want the incident and one update of %s", lines, id)
	}
	if strings.Contains(before, "EVIDENCE") {
		t.Errorf("evidence lines printed on their own:\n%s", before)
	}

	// copytruncate and rotation by rename are followed (the tailer's test
	// checks the bytes read).
	if err := os.Truncate(ranks[0], 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	appendFile(t, ranks[0], fmt.Sprintf(stepLine, 0, 40, 0, 300))
	waitFor(t, out, "TRUNCATED "+ranks[0], 1)
	if err := os.Rename(dmesg, dmesg+".1"); err != nil {
		t.Fatal(err)
	}
	appendFile(t, dmesg, "Nov  2 03:50:00 node017 kernel: [1002000.000000] nvidia-nvlink: Nvlink Core is being initialized\n")
	waitFor(t, out, "ROTATED "+dmesg, 1)
	t.Logf("agent output:\n%s", out.String())
}

func TestAgentOnceJSON(t *testing.T) {
	dir := t.TempDir()
	dmesg := filepath.Join(dir, "node017", "dmesg.log")
	rank := filepath.Join(dir, "node018", "rank-0.log")
	os.MkdirAll(filepath.Dir(dmesg), 0o755)
	os.MkdirAll(filepath.Dir(rank), 0o755)
	appendFile(t, dmesg, xidLine)
	appendFile(t, rank, fmt.Sprintf(watchdogLine, 0, 0))
	out := &syncBuffer{}
	err := run(context.Background(), config{files: []string{dmesg, rank}, window: 1 << 20, json: true, once: true,
		interval: time.Second, poll: time.Second}, out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"type":"start"`, `"type":"incident"`, `"primary":true`, `"rule":"xid-79-fallen-off-bus"`, `"id":"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %s in:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), `"type":"evidence"`) {
		t.Errorf("evidence records printed on their own:\n%s", out.String())
	}
}

// The example incident's 870 lines, most of them progress and loss lines
// that rules match as context, give incidents, each printed once.
func TestAgentPrintsIncidentsNotEvidence(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "incidents", "xid79-two-hosts", "*", "*.log"))
	if err != nil || len(files) == 0 {
		t.Fatalf("example files: %v", err)
	}
	out := &syncBuffer{}
	if err := run(context.Background(), config{files: files, window: 1 << 20, once: true, threads: 1,
		interval: time.Second, poll: time.Second}, out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if strings.Contains(text, "EVIDENCE") {
		t.Errorf("evidence lines printed on their own:\n%s", text)
	}
	lines := incidentLines(text)
	if len(lines) == 0 || !strings.Contains(lines[0], "(primary) xid-79-fallen-off-bus on node017 rank 2, GPU 0000:3b:00.0") {
		t.Fatalf("incident lines %q:\n%s", lines, text)
	}
	ids := map[string]bool{}
	for _, l := range lines {
		id := strings.Fields(l)[1]
		if ids[id] {
			t.Errorf("incident %s printed twice:\n%s", id, text)
		}
		ids[id] = true
	}
	if n := strings.Count(text, "\n"); n > 40 {
		t.Errorf("%d output lines for %d incidents:\n%s", n, len(lines), text)
	}
}

func TestAgentFailsOnMissingPath(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "rank-0.log")
	appendFile(t, ok, fmt.Sprintf(stepLine, 0, 10, 0, 1))
	for _, once := range []bool{true, false} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := run(ctx, config{files: []string{ok, "/no/such/file"}, window: 1 << 20, once: once,
			interval: time.Second, poll: 50 * time.Millisecond}, &syncBuffer{})
		cancel()
		if err == nil || !strings.Contains(err.Error(), "/no/such/file") {
			t.Errorf("once=%v: got %v, want an error naming /no/such/file", once, err)
		}
	}
}

// The command itself: a message naming the path and exit status 2.
func TestAgentCommandMissingPathExitStatus(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FL_AGENT_MAIN_ARGS=-once /no/such/file")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("exit: %v, want status 2; stderr: %s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "faultline-agent: ") || !strings.Contains(stderr.String(), "/no/such/file") {
		t.Errorf("stderr %q does not name the path", stderr.String())
	}
}

// TestMain runs the agent's main instead of the tests when
// FL_AGENT_MAIN_ARGS is set (TestAgentCommandMissingPathExitStatus).
func TestMain(m *testing.M) {
	if args := os.Getenv("FL_AGENT_MAIN_ARGS"); args != "" {
		os.Args = append([]string{"faultline-agent"}, strings.Fields(args)...)
		flag.CommandLine = flag.NewFlagSet(os.Args[0], flag.ExitOnError)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestTailerTruncationAndRotation(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "dmesg.log")
	appendFile(t, p, "one\n")
	tl := newTailer(p, 1<<20)
	defer tl.close()
	poll := func() {
		t.Helper()
		if _, err := tl.poll(); err != nil {
			t.Fatal(err)
		}
	}
	poll()
	appendFile(t, p, "two\n")
	poll()
	if err := os.Truncate(p, 0); err != nil {
		t.Fatal(err)
	}
	poll()
	appendFile(t, p, "three\n")
	poll()
	if err := os.Rename(p, p+".1"); err != nil {
		t.Fatal(err)
	}
	appendFile(t, p+".1", "four") // written to the old file before the switch, no newline
	appendFile(t, p, "five\n")
	poll()
	if got, want := string(tl.buf), "one\ntwo\nthree\nfour\nfive\n"; got != want {
		t.Errorf("read %q, want %q", got, want)
	}
	if got := strings.Join(tl.events, ","); got != "truncated,rotated" {
		t.Errorf("events %q", got)
	}
}

func TestTailerWindow(t *testing.T) {
	tl := newTailer("x", 100)
	for i := 0; i < 50; i++ {
		tl.append([]byte(fmt.Sprintf("line %02d\n", i)))
	}
	if len(tl.buf) > 125 || !bytes.HasPrefix(tl.buf, []byte("line ")) || tl.total != 400 {
		t.Fatalf("window %q total %d", tl.buf, tl.total)
	}
	if got := tl.base + int64(len(tl.buf)); got != tl.total {
		t.Errorf("base %d + window %d != total %d", tl.base, len(tl.buf), tl.total)
	}
	if first := string(tl.buf[:7]); first != fmt.Sprintf("line %02d", tl.baseLine) {
		t.Errorf("window starts at %q, baseLine %d", first, tl.baseLine)
	}
}
