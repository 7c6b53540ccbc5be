// faultline-agent tails GPU job logs and prints failure evidence and
// diagnoses as they appear: the way a log shipper or node agent embeds
// faultline through the Go binding.
//
//	faultline-agent [-interval 5s] [-poll 250ms] [-window 64MiB] [-rules PATH] [-json] FILE...
//
// Each FILE is followed like `tail -F` (appends, truncation, rotation by
// rename). Every -interval, when something was appended, the agent opens a
// snapshot Session, pushes each file's window (its last -window bytes) as a
// stream named after the file, and finishes it: evidence lines not printed
// before are printed from the OnEvidence callback as the library finds them,
// then each new incident (primary diagnosis first) with its fix. Naming the
// streams after the paths lets the library attribute hosts and ranks from
// them (node017/dmesg.log, node018/rank-3.log) as it would for files.
//
// Why snapshots over a window rather than one endless session: a diagnosis
// needs the symptoms' context (the Xid half an hour before the timeouts),
// a session ends when it is finished, and the window keeps memory bounded.
//
// Build: go build -o faultline-agent .  (needs PKG_CONFIG_PATH for
// faultline.pc, LD_LIBRARY_PATH for libfaultline.so at run time).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	faultline "github.com/faultline/faultline/bindings/go"
)

type config struct {
	files    []string
	interval time.Duration
	poll     time.Duration
	window   int
	rules    string
	threads  int
	json     bool
	once     bool
}

func main() {
	var cfg config
	var window string
	flag.DurationVar(&cfg.interval, "interval", 5*time.Second, "how often to diagnose the window when logs grew")
	flag.DurationVar(&cfg.poll, "poll", 250*time.Millisecond, "how often to check the files for new bytes")
	flag.StringVar(&window, "window", "64MiB", "bytes of each file kept for diagnosis (KiB, MiB, GiB suffixes)")
	flag.StringVar(&cfg.rules, "rules", "", "compiled .flrules file or rule source directory (default: embedded)")
	flag.IntVar(&cfg.threads, "threads", 1, "scan threads per snapshot (0: one per core)")
	flag.BoolVar(&cfg.json, "json", false, "print one JSON object per event")
	flag.BoolVar(&cfg.once, "once", false, "read the files, diagnose once, and exit")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: %s [flags] FILE...\n", os.Args[0])
		flag.PrintDefaults()
	}
	flag.Parse()
	cfg.files = flag.Args()
	w, err := parseSize(window)
	if err != nil || len(cfg.files) == 0 {
		flag.Usage()
		os.Exit(1)
	}
	cfg.window = w
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "faultline-agent:", err)
		os.Exit(2)
	}
}

func parseSize(s string) (int, error) {
	mult := 1
	for suf, m := range map[string]int{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30} {
		if strings.HasSuffix(s, suf) {
			mult, s = m, strings.TrimSuffix(s, suf)
			break
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mult, nil
}

// agent holds the engine, the followed files and what was printed already.
type agent struct {
	cfg     config
	eng     *faultline.Engine
	out     io.Writer
	tails   []*tailer
	byName  map[string]*tailer
	seen    map[string]string // incident identity -> summary last printed
	dirty   bool              // bytes arrived since the last snapshot
	snapSeq int
}

func run(ctx context.Context, cfg config, out io.Writer) error {
	var eng *faultline.Engine
	var err error
	if cfg.rules != "" {
		eng, err = faultline.Open(cfg.rules)
	} else {
		eng, err = faultline.Default()
	}
	if err != nil {
		return err
	}
	defer eng.Close()
	a := &agent{cfg: cfg, eng: eng, out: out, byName: map[string]*tailer{}, seen: map[string]string{}}
	for _, f := range cfg.files {
		t := newTailer(f, cfg.window)
		a.tails = append(a.tails, t)
		a.byName[f] = t
	}
	defer func() {
		for _, t := range a.tails {
			t.close()
		}
	}()
	a.emit("start", map[string]any{"files": cfg.files, "faultline": faultline.LibraryVersion(),
		"ruleset": eng.Name() + " " + eng.Version(), "rules": eng.RuleCount()})

	if cfg.once {
		a.pollAll()
		return a.snapshot(ctx)
	}
	poll := time.NewTicker(cfg.poll)
	defer poll.Stop()
	diag := time.NewTicker(cfg.interval)
	defer diag.Stop()
	a.pollAll()
	for {
		select {
		case <-ctx.Done():
			// One last look at what arrived, then stop.
			a.pollAll()
			if a.dirty {
				return a.snapshot(context.Background())
			}
			return nil
		case <-poll.C:
			a.pollAll()
		case <-diag.C:
			if a.dirty {
				if err := a.snapshot(ctx); err != nil && !errors.Is(err, context.Canceled) {
					return err
				}
			}
		}
	}
}

func (a *agent) pollAll() {
	for _, t := range a.tails {
		grew, err := t.poll()
		if err != nil {
			a.emit("error", map[string]any{"file": t.path, "error": err.Error()})
		}
		for _, ev := range t.events {
			a.emit(ev, map[string]any{"file": t.path})
		}
		t.events = t.events[:0]
		a.dirty = a.dirty || grew
	}
}

// snapshot diagnoses the current windows in a fresh session.
func (a *agent) snapshot(ctx context.Context) error {
	a.dirty = false
	a.snapSeq++
	// The callback runs on this goroutine, inside the Write/Close/Finish
	// calls below, so it may touch the agent's state without locking.
	bases := map[string]*tailer{}
	s, err := a.eng.NewSession(faultline.Options{
		Threads: a.cfg.threads,
		OnEvidence: func(ev faultline.Evidence) {
			t := bases[ev.Source]
			if t == nil {
				return
			}
			abs := t.base + int64(ev.Offset)
			if abs < t.printed {
				return // printed by an earlier snapshot
			}
			t.printed = abs + 1
			ev.Line += t.baseLine
			a.printEvidence(ev)
		},
	})
	if err != nil {
		return err
	}
	defer s.Close()
	for _, t := range a.tails {
		if len(t.buf) == 0 {
			continue
		}
		st, err := s.OpenStream(t.path)
		if err != nil {
			return err
		}
		bases[t.path] = t
		if _, err := st.Write(t.buf); err != nil {
			return err
		}
		if err := st.Close(); err != nil {
			return err
		}
	}
	rep, err := s.FinishContext(ctx)
	if err != nil {
		return err
	}
	defer rep.Close()
	for i := range rep.Incidents {
		inc := &rep.Incidents[i]
		key := fmt.Sprintf("%s|%s|%d|%s|%s", inc.Rule, inc.Initiating.Host, inc.Initiating.Rank, inc.Initiating.GPU,
			inc.Initiating.Time.Format(time.RFC3339Nano))
		// An incident grows as symptoms arrive (the timeouts come half an
		// hour after the Xid): print it again when its summary changes.
		summary := fmt.Sprintf("%.2f|%v|%d", inc.Confidence, inc.Collateral, len(inc.MissingFacts))
		prev, known := a.seen[key]
		if known && prev == summary {
			continue
		}
		a.seen[key] = summary
		a.printIncident(inc, i == 0, known)
	}
	return nil
}

func (a *agent) emit(kind string, fields map[string]any) {
	if a.cfg.json {
		fields["type"] = kind
		b, _ := json.Marshal(fields)
		fmt.Fprintf(a.out, "%s\n", b)
		return
	}
	switch kind {
	case "start":
		fmt.Fprintf(a.out, "faultline-agent: following %s (faultline %s, %s, %d rules)\n",
			strings.Join(a.cfg.files, " "), fields["faultline"], fields["ruleset"], fields["rules"])
	case "error":
		fmt.Fprintf(a.out, "ERROR %s: %s\n", fields["file"], fields["error"])
	default: // "truncated", "rotated"
		fmt.Fprintf(a.out, "%s %s\n", strings.ToUpper(kind), fields["file"])
	}
}

func (a *agent) printEvidence(ev faultline.Evidence) {
	if a.cfg.json {
		b, _ := json.Marshal(struct {
			Type string `json:"type"`
			faultline.Evidence
		}{"evidence", ev})
		fmt.Fprintf(a.out, "%s\n", b)
		return
	}
	fmt.Fprintf(a.out, "EVIDENCE %s:%d %s host=%s rank=%s %s: %s\n", ev.Source, ev.Line, timeStr(ev.Time),
		orQ(ev.Host), rankStr(ev.Rank), ev.Rule, ev.Text)
}

func (a *agent) printIncident(inc *faultline.Incident, primary, update bool) {
	if a.cfg.json {
		b, _ := json.Marshal(struct {
			Type    string `json:"type"`
			Primary bool   `json:"primary"`
			Update  bool   `json:"update"`
			*faultline.Incident
		}{"incident", primary, update, inc})
		fmt.Fprintf(a.out, "%s\n", b)
		return
	}
	tag := "INCIDENT"
	if primary {
		tag += " (primary)"
	}
	if update {
		tag += " (updated)"
	}
	in := inc.Initiating
	gpu := ""
	if in.GPU != "" {
		gpu = ", GPU " + in.GPU
	}
	inferred := ""
	if in.Inferred {
		inferred = " (inferred)"
	}
	fmt.Fprintf(a.out, "%s %s on %s rank %s%s at %s%s, confidence %.0f%%: %s\n", tag, inc.Rule, orQ(in.Host),
		rankStr(in.Rank), gpu, timeStr(in.Time), inferred, inc.Confidence*100, inc.Title)
	for _, c := range inc.Collateral {
		fmt.Fprintf(a.out, "  collateral: %d x %s on ranks %v hosts %v\n", c.Count, c.Rule, c.Ranks, c.Hosts)
	}
	fmt.Fprintf(a.out, "  fix: %s\n  verify: %s\n", inc.Fix, inc.Verify)
	for _, m := range inc.MissingFacts {
		fmt.Fprintf(a.out, "  missing: %s\n", m)
	}
}

func timeStr(t time.Time) string {
	if t.IsZero() {
		return "time=?"
	}
	return t.Format(time.RFC3339Nano)
}

func rankStr(r faultline.Rank) string {
	if !r.Known() {
		return "?"
	}
	return strconv.Itoa(int(r))
}

func orQ(s string) string {
	if s == "" {
		return "?"
	}
	return s
}
