// Command bench feeds a volume of GPU job logs over OTLP/gRPC through the
// otelcol-faultline distribution and reports throughput and the collector's
// memory: with the faultline connector in the pipeline, or with it removed
// (the same receiver straight into the nop exporter).
//
//	go run ./bench -collector PATH [-connector=false] [-mib 1024] [-jobs 8]
//
// The logs are the files of a directory (-logs), cycled: each job reads them
// in order again and again under its own faultline.job.id, with the file's
// path as log.file.path, and successive OTLP requests go to successive jobs.
// bench/gen_logs.py writes a realistic job (64 ranks, rare failures);
// examples/incidents/xid79-two-hosts, the default, is the worst case: nearly
// every line is evidence. RSS is sampled from /proc every 100 ms; VmHWM is
// the peak. run.sh runs both pipelines.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

func main() {
	collector := flag.String("collector", "", "path of the otelcol-faultline binary")
	withConnector := flag.Bool("connector", true, "put the faultline connector in the pipeline")
	mib := flag.Int("mib", 1024, "MiB of log text to send")
	jobs := flag.Int("jobs", 8, "jobs (faultline.job.id values) the logs are spread over")
	batch := flag.Int("batch", 2000, "records per OTLP request")
	interval := flag.Duration("diagnose-interval", 0, "the connector's diagnose_interval (0: its default)")
	maxEvidence := flag.Int("max-evidence-bytes", 0, "the connector's max_evidence_bytes (0: its default)")
	maxSession := flag.Int("max-session-bytes", 0, "the connector's max_session_bytes (0: its default)")
	flag.StringVar(&collectorLog, "log", "", "where the collector's output goes (default: a temporary file)")
	examples := flag.String("logs", "../../examples/incidents/xid79-two-hosts", "directory of logs to cycle through (bench/gen_logs.py writes realistic ones)")
	flag.Parse()
	if *collector == "" {
		fmt.Fprintln(os.Stderr, "bench: -collector is required")
		os.Exit(2)
	}
	if *interval > 0 {
		connectorCfg += fmt.Sprintf("\n    diagnose_interval: %s", *interval)
	}
	if *maxEvidence > 0 {
		connectorCfg += fmt.Sprintf("\n    max_evidence_bytes: %d", *maxEvidence)
	}
	if *maxSession > 0 {
		connectorCfg += fmt.Sprintf("\n    max_session_bytes: %d", *maxSession)
	}
	if connectorCfg == "" {
		connectorCfg = " {}"
	}
	if err := run(*collector, *withConnector, int64(*mib)<<20, *jobs, *batch, *examples); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type file struct {
	rel   string
	lines []string
}

func loadExamples(dir string) ([]file, error) {
	var files []file
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		rel, _ := filepath.Rel(filepath.Dir(dir), p)
		fl := file{rel: rel}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fl.lines = append(fl.lines, sc.Text())
		}
		files = append(files, fl)
		return sc.Err()
	})
	sort.Slice(files, func(i, j int) bool { return files[i].rel < files[j].rel })
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("no files under %s", dir)
	}
	return files, err
}

const configWith = `
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: %[2]s
        max_recv_msg_size_mib: 64
connectors:
  faultline:%[1]s
exporters:
  nop: {}
  file:
    path: %[3]s
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    logs/in: {receivers: [otlp], exporters: [faultline]}
    logs/incidents: {receivers: [faultline], exporters: [file]}
    metrics/faultline: {receivers: [faultline], exporters: [nop]}
`

const configWithout = `
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: %s
        max_recv_msg_size_mib: 64
exporters:
  nop: {}
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    logs/in: {receivers: [otlp], exporters: [nop]}
`

var collectorLog string

// connectorCfg is the connector's settings given on the command line, as
// YAML.
var connectorCfg string

func rssKiB(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

func run(collector string, withConnector bool, total int64, jobs, batch int, examples string) error {
	files, err := loadExamples(examples)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "otelcol-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := l.Addr().String()
	l.Close()
	out := filepath.Join(dir, "incidents.json")
	cfg := fmt.Sprintf(configWithout, addr)
	if withConnector {
		cfg = fmt.Sprintf(configWith, connectorCfg, addr, out)
	}
	cfgPath := filepath.Join(dir, "collector.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return err
	}
	logPath := filepath.Join(dir, "collector.log")
	if collectorLog != "" {
		logPath = collectorLog
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := exec.Command(collector, "--config", cfgPath)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	pid := cmd.Process.Pid

	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(64<<20)))
	if err != nil {
		return err
	}
	defer conn.Close()
	client := plogotlp.NewGRPCClient(conn)

	// Wait for the receiver with an empty request.
	for deadline := time.Now().Add(60 * time.Second); ; {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := client.Export(ctx, plogotlp.NewExportRequestFromLogs(plog.NewLogs()))
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("collector not reachable at %s: %v", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	startRSS := rssKiB(pid, "VmRSS")

	var mu sync.Mutex
	var samples []int64 // VmRSS by tenth of the volume sent
	var sent int64
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stopSampling:
				return
			case <-t.C:
				r := rssKiB(pid, "VmRSS")
				mu.Lock()
				for int64(len(samples)) < sent*10/total {
					samples = append(samples, r)
				}
				mu.Unlock()
			}
		}
	}()

	// Each job reads the directory's files in order, from its own cursor;
	// successive requests go to successive jobs, so all of them are active
	// at once.
	type cursor struct{ file, line int }
	curs := make([]cursor, jobs)
	var records int64
	t0 := time.Now()
	for req := 0; sent < total; req++ {
		job := req % jobs
		cur := &curs[job]
		ld := plog.NewLogs()
		n := 0
		var bytes int64
		for n < batch && sent+bytes < total {
			f := files[cur.file]
			rl := ld.ResourceLogs().AppendEmpty()
			rl.Resource().Attributes().PutStr("faultline.job.id", "job-"+strconv.Itoa(job))
			lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
			for n < batch && sent+bytes < total {
				line := f.lines[cur.line]
				lr := lrs.AppendEmpty()
				lr.Body().SetStr(line)
				lr.Attributes().PutStr("log.file.path", f.rel)
				bytes += int64(len(line)) + 1
				n++
				cur.line++
				if cur.line == len(f.lines) {
					cur.line = 0
					cur.file = (cur.file + 1) % len(files)
					break
				}
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		_, err := client.Export(ctx, plogotlp.NewExportRequestFromLogs(ld))
		cancel()
		if err != nil {
			return fmt.Errorf("export after %d records: %w", records, err)
		}
		records += int64(n)
		mu.Lock()
		sent += bytes
		mu.Unlock()
	}
	secs := time.Since(t0).Seconds()
	close(stopSampling)
	<-sampled
	peak := rssKiB(pid, "VmHWM")
	endRSS := rssKiB(pid, "VmRSS")

	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			return fmt.Errorf("collector exited with %v (log: %s)", err, logPath)
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		return fmt.Errorf("collector did not stop")
	}
	incidents := 0
	if b, err := os.ReadFile(out); err == nil {
		incidents = strings.Count(string(b), `"faultline.incident.id"`)
	}
	mode := "without connector (otlp -> nop)"
	if withConnector {
		mode = "with faultline connector"
	}
	var rs []string
	for _, s := range samples {
		rs = append(rs, strconv.FormatInt(s>>10, 10))
	}
	fmt.Printf("%s: %d MiB, %d records, %d jobs in %.1f s: %.0f records/s, %.1f MiB/s; collector RSS start %d MiB, by tenth of the volume [%s] MiB, end %d MiB, peak (VmHWM) %d MiB; incident records written: %d\n",
		mode, sent>>20, records, jobs, secs, float64(records)/secs, float64(sent)/(1<<20)/secs,
		startRSS>>10, strings.Join(rs, " "), endRSS>>10, peak>>10, incidents)
	return nil
}
