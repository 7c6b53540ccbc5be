package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
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
	waitFor(t, out, "EVIDENCE "+dmesg+":2", 1)
	for k, r := range ranks {
		appendFile(t, r, fmt.Sprintf(watchdogLine, k, k))
	}
	// The incident is printed when the Xid arrives, and again, updated,
	// once the timeouts it explains have arrived.
	waitFor(t, out, "INCIDENT (primary", 1)
	waitFor(t, out, "xid-79-fallen-off-bus on node017 rank ?, GPU 0000:3b:00.0", 1)
	waitFor(t, out, "  collateral: 2 x nccl-watchdog-timeout on ranks [0 1]", 1)
	before := out.String()
	time.Sleep(400 * time.Millisecond) // more snapshots would run if logs grew; nothing is reprinted
	if after := out.String(); after != before {
		t.Errorf("output grew without new log lines:\n%s", after[len(before):])
	}
	if n := strings.Count(before, "EVIDENCE "); n != 3 {
		t.Errorf("%d evidence lines printed, want 3 (each once):\n%s", n, before)
	}

	// copytruncate: rank-0.log starts over; its new lines are still seen.
	if err := os.Truncate(ranks[0], 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	appendFile(t, ranks[0], fmt.Sprintf(watchdogLine, 0, 0))
	waitFor(t, out, "TRUNCATED "+ranks[0], 1)
	waitFor(t, out, "EVIDENCE "+ranks[0], 2)

	// Rotation by rename: dmesg.log becomes dmesg.log.1 and a new file
	// takes its name; lines written to the old file before the switch and
	// to the new one are both read.
	if err := os.Rename(dmesg, dmesg+".1"); err != nil {
		t.Fatal(err)
	}
	appendFile(t, dmesg+".1", strings.Replace(xidLine, "03:12:05", "03:12:06", 1))
	appendFile(t, dmesg, strings.Replace(xidLine, "03:12:05", "03:50:00", 1))
	waitFor(t, out, "ROTATED "+dmesg, 1)
	waitFor(t, out, "EVIDENCE "+dmesg, 3)
	if !strings.Contains(out.String(), "03:12:06") || !strings.Contains(out.String(), "03:50:00") {
		t.Errorf("lines around the rotation missing:\n%s", out.String())
	}
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
	for _, want := range []string{`"type":"start"`, `"type":"evidence"`, `"type":"incident"`, `"primary":true`, `"rule":"xid-79-fallen-off-bus"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %s in:\n%s", want, out.String())
		}
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
