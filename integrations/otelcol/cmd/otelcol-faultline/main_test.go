package main

// These tests build the distribution and run it as a process, as a platform
// team would: a real configuration file, real receivers (filelog, OTLP over
// gRPC on 127.0.0.1) and the file exporter writing what comes out.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

var collectorBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "otelcol-faultline-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	collectorBin = filepath.Join(dir, "otelcol-faultline")
	build := exec.Command("go", "build", "-o", collectorBin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the collector:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var exampleDir, _ = filepath.Abs(filepath.Join("..", "..", "..", "..", "examples", "incidents", "xid79-two-hosts"))

type expectation struct {
	PrimaryRule    string `json:"primary_rule"`
	InitiatingRank int64  `json:"initiating_rank"`
	InitiatingHost string `json:"initiating_host"`
}

func loadExpectation(t *testing.T) expectation {
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

// collector runs the distribution with config until the test ends.
func collector(t *testing.T, config string) *exec.Cmd {
	t.Helper()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "collector.yaml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(collectorBin, "--config", cfgPath)
	logFile, err := os.Create(filepath.Join(dir, "collector.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("collector exited with %v", err)
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Errorf("collector did not stop on SIGTERM")
		}
		logFile.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logFile.Name())
			t.Logf("collector log:\n%s", b)
		}
	})
	return cmd
}

// incidentRecords reads the file exporter's output (one OTLP/JSON object a
// line) and returns the faultline incident records in it.
func incidentRecords(t *testing.T, path string) []plog.LogRecord {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []plog.LogRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	var u plog.JSONUnmarshaler
	for sc.Scan() {
		if !bytes.Contains(sc.Bytes(), []byte(`"resourceLogs"`)) {
			continue // metrics
		}
		ld, err := u.UnmarshalLogs(sc.Bytes())
		if err != nil {
			continue // a line being written
		}
		rls := ld.ResourceLogs()
		for i := 0; i < rls.Len(); i++ {
			sls := rls.At(i).ScopeLogs()
			for k := 0; k < sls.Len(); k++ {
				lrs := sls.At(k).LogRecords()
				for n := 0; n < lrs.Len(); n++ {
					if lrs.At(n).EventName() == "faultline.incident" {
						out = append(out, lrs.At(n))
					}
				}
			}
		}
	}
	return out
}

// waitForIncident polls the output for the expected primary incident.
func waitForIncident(t *testing.T, path string, want expectation) plog.LogRecord {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		for _, lr := range incidentRecords(t, path) {
			rule, _ := lr.Attributes().Get("faultline.rule")
			rank, _ := lr.Attributes().Get("faultline.initiating.rank")
			host, _ := lr.Attributes().Get("faultline.initiating.host")
			if rule.Str() == want.PrimaryRule && rank.Int() == want.InitiatingRank && host.Str() == want.InitiatingHost {
				return lr
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no incident %s on %s rank %d in %s: %d incident records", want.PrimaryRule, want.InitiatingHost,
		want.InitiatingRank, path, len(incidentRecords(t, path)))
	return plog.LogRecord{}
}

func checkIncident(t *testing.T, lr plog.LogRecord) {
	t.Helper()
	for _, k := range []string{"faultline.reference", "faultline.fix", "faultline.verify", "faultline.incident.id", "faultline.initiating.time"} {
		if v, ok := lr.Attributes().Get(k); !ok || v.AsString() == "" {
			t.Errorf("incident record without %s: %v", k, lr.Attributes().AsRaw())
		}
	}
	if ev, ok := lr.Attributes().Get("faultline.evidence"); !ok || ev.Slice().Len() == 0 || !strings.Contains(ev.Slice().At(0).Str(), "Xid") {
		t.Errorf("evidence: %v", lr.Attributes().AsRaw()["faultline.evidence"])
	}
	if lr.SeverityNumber() != plog.SeverityNumberError || !strings.HasPrefix(lr.Body().Str(), "xid-79-fallen-off-bus on node017 rank 2") {
		t.Errorf("severity %v body %q", lr.SeverityNumber(), lr.Body().Str())
	}
}

const telemetryOff = `
  telemetry:
    metrics:
      level: none
`

func TestFilelogToFileExporter(t *testing.T) {
	want := loadExpectation(t)
	out := filepath.Join(t.TempDir(), "incidents.json")
	collector(t, fmt.Sprintf(`
receivers:
  file_log:
    include: [%q]
    start_at: beginning
    include_file_path: true
connectors:
  faultline:
    diagnose_interval: 200ms
exporters:
  file:
    path: %q
    flush_interval: 100ms
service:
  pipelines:
    logs/in: {receivers: [file_log], exporters: [faultline]}
    logs/incidents: {receivers: [faultline], exporters: [file]}
    metrics/faultline: {receivers: [faultline], exporters: [file]}
`+telemetryOff, exampleDir+"/**/*.log", out))
	checkIncident(t, waitForIncident(t, out, want))

	// The metrics pipeline: every line of the example counted once.
	lines := exampleLogs(t).LogRecordCount()
	deadline := time.Now().Add(30 * time.Second)
	for got := int64(-1); got != int64(lines); {
		if time.Now().After(deadline) {
			t.Fatalf("faultline.input.lines = %d, want %d", got, lines)
		}
		time.Sleep(100 * time.Millisecond)
		got = lastSum(out, "faultline.input.lines")
	}
}

// lastSum is the value of the last data point of the sum metric name in the
// file exporter's output, -1 when there is none.
func lastSum(path, name string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	v := int64(-1)
	var u pmetric.JSONUnmarshaler
	for _, line := range bytes.Split(b, []byte("\n")) {
		if !bytes.Contains(line, []byte(`"resourceMetrics"`)) {
			continue
		}
		md, err := u.UnmarshalMetrics(line)
		if err != nil {
			continue
		}
		rms := md.ResourceMetrics()
		for i := 0; i < rms.Len(); i++ {
			sms := rms.At(i).ScopeMetrics()
			for k := 0; k < sms.Len(); k++ {
				ms := sms.At(k).Metrics()
				for n := 0; n < ms.Len(); n++ {
					if m := ms.At(n); m.Name() == name && m.Type() == pmetric.MetricTypeSum && m.Sum().DataPoints().Len() > 0 {
						v = m.Sum().DataPoints().At(0).IntValue()
					}
				}
			}
		}
	}
	return v
}

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// exampleLogs is the example's files as OTLP logs: a resource per file,
// one record per line, log.file.path as the filelog receiver would set it.
func exampleLogs(t *testing.T) plog.Logs {
	var files []string
	filepath.WalkDir(exampleDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	sort.Strings(files)
	ld := plog.NewLogs()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(filepath.Dir(exampleDir), f)
		lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
		for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			lr := lrs.AppendEmpty()
			lr.Body().SetStr(line)
			lr.Attributes().PutStr("log.file.path", rel)
		}
	}
	return ld
}

func TestOTLPGRPCToFileExporter(t *testing.T) {
	want := loadExpectation(t)
	addr := freePort(t)
	out := filepath.Join(t.TempDir(), "incidents.json")
	collector(t, fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: %s
connectors:
  faultline:
    diagnose_interval: 200ms
exporters:
  file:
    path: %q
    flush_interval: 100ms
service:
  pipelines:
    logs/in: {receivers: [otlp], exporters: [faultline]}
    logs/incidents: {receivers: [faultline], exporters: [file]}
`+telemetryOff, addr, out))

	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := plogotlp.NewGRPCClient(conn)
	req := plogotlp.NewExportRequestFromLogs(exampleLogs(t))
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err = client.Export(ctx, req)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("OTLP export to %s: %v", addr, err)
		}
		time.Sleep(100 * time.Millisecond) // the collector is starting
	}
	checkIncident(t, waitForIncident(t, out, want))
}

// The collector itself checks the connector's configuration: an unknown key
// and a bad value each stop it, naming the key.
func TestCollectorRejectsBadConnectorConfig(t *testing.T) {
	for _, tc := range []struct{ setting, want string }{
		{"max_jobz: 3", "invalid keys: max_jobz"},
		{"max_jobs: 0", "max_jobs 0 must be at least 1"},
		{"diagnose_interval: soon", "diagnose_interval"},
	} {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "collector.yaml")
		os.WriteFile(cfg, []byte(`
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:0
connectors:
  faultline:
    `+tc.setting+`
exporters:
  nop: {}
service:
  pipelines:
    logs/in: {receivers: [otlp], exporters: [faultline]}
    logs/out: {receivers: [faultline], exporters: [nop]}
`), 0o644)
		out, err := exec.Command(collectorBin, "validate", "--config", cfg).CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s: exit %v, output:\n%s\nwant an error naming %q", tc.setting, err, out, tc.want)
		}
	}
}
