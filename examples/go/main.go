// faultline-agent tails GPU job logs and prints each incident once when it
// forms and again only when it changes, under a stable id: the way a log
// shipper or node agent embeds faultline through the Go binding.
//
//	faultline-agent [-interval 5s] [-poll 250ms] [-window 64MiB] [-rules PATH] [-json] FILE...
//
// Each FILE is followed like `tail -F` (appends, truncation, rotation by
// rename); a FILE that does not exist when the agent starts is an error
// (exit status 2). Every -interval, when something was appended, the agent
// opens a snapshot Session, pushes each file's window (its last -window
// bytes) as a stream named after the file, and finishes it. Each incident
// of the report is printed when it first appears, with its initiating
// evidence, collateral and fix, and again (marked "updated") only when it
// changes: its attribution, confidence, initiating evidence, collateral or
// missing facts. Evidence lines on their own are not printed: most are
// context the diagnosis weighs (progress lines, collateral timeouts), not
// news. Naming the streams after the paths lets the library attribute hosts
// and ranks from them (node017/dmesg.log, node018/rank-3.log) as it would
// for files.
//
// The incident id is stable across snapshots: a new incident takes the
// library's id (Incident.ID: its reference and first initiating line, or its
// suspect when it was inferred), and a later one of the same rule that
// shares an initiating line with it keeps that name.
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
	"hash/fnv"
	"io"
	"os"
	"os/signal"
	"slices"
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
	seen    map[string]seenIncident // by incident id, as last printed
	dirty   bool                    // bytes arrived since the last snapshot
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
	// A path that is not there is a mistake to report, not a file to wait
	// for: rotation is handled once a file has been opened.
	for _, f := range cfg.files {
		fi, err := os.Stat(f)
		if err != nil {
			return err // *fs.PathError names the path
		}
		if fi.IsDir() {
			return fmt.Errorf("%s: is a directory; name the log files", f)
		}
	}
	a := &agent{cfg: cfg, eng: eng, out: out, byName: map[string]*tailer{}, seen: map[string]seenIncident{}}
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
		for _, t := range a.tails {
			if _, err := t.poll(); err != nil {
				return fmt.Errorf("%s: %w", t.path, err)
			}
		}
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
	s, err := a.eng.NewSession(faultline.Options{Threads: a.cfg.threads})
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
	claimed := map[string]bool{}
	for i := range rep.Incidents {
		inc := &rep.Incidents[i]
		lines := initiatingLines(inc)
		id := a.identify(inc, lines, claimed)
		claimed[id] = true
		// An incident grows as symptoms arrive (the timeouts come half an
		// hour after the Xid): print it again when it changes.
		sig := inc.ChangeKey()
		prev, known := a.seen[id]
		a.seen[id] = seenIncident{rule: inc.Rule, lines: lines, signature: sig}
		if known && prev.signature == sig {
			continue
		}
		a.printIncident(inc, id, i == 0, known)
	}
	return nil
}

// seenIncident is an incident as last printed.
type seenIncident struct {
	rule      string
	lines     []uint64 // hashes of its initiating lines
	signature string
}

// initiatingLines are hashes of the lines (file and text) that initiated
// the incident, or of its suspect when it was inferred from no line.
func initiatingLines(inc *faultline.Incident) []uint64 {
	in := inc.Initiating
	var out []uint64
	for _, e := range in.Evidence {
		h := fnv.New64a()
		fmt.Fprintf(h, "%s\x00%s", e.Source, e.Text)
		out = append(out, h.Sum64())
	}
	if len(out) == 0 {
		h := fnv.New64a()
		fmt.Fprintf(h, "inferred\x00%s\x00%d\x00%s", in.Host, in.Rank, in.GPU)
		out = append(out, h.Sum64())
	}
	return out
}

// identify keeps an incident's id while what is known of it changes (an
// earlier initiating line arrives, its rank is learned from the rank's NCCL
// init lines): an incident of the same rule that shares an initiating line
// with one printed before is that one. A new one is named after its rule
// and first initiating line.
func (a *agent) identify(inc *faultline.Incident, lines []uint64, claimed map[string]bool) string {
	best := ""
	for id, s := range a.seen {
		if s.rule != inc.Rule || claimed[id] || (best != "" && id > best) {
			continue
		}
		for _, x := range s.lines {
			if slices.Contains(lines, x) {
				best = id
				break
			}
		}
	}
	if best != "" {
		return best
	}
	id := inc.ID // the library's id: its reference and first initiating line
	for n := 2; claimed[id]; n++ {
		id = fmt.Sprintf("%s-%d", inc.ID, n)
	}
	return id
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

func (a *agent) printIncident(inc *faultline.Incident, id string, primary, update bool) {
	if a.cfg.json {
		b, _ := json.Marshal(struct {
			Type    string `json:"type"`
			ID      string `json:"id"`
			Primary bool   `json:"primary"`
			Update  bool   `json:"update"`
			*faultline.Incident
		}{"incident", id, primary, update, inc})
		fmt.Fprintf(a.out, "%s\n", b)
		return
	}
	tag := "INCIDENT " + id
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
	for _, ev := range in.Evidence {
		line := ev.Line
		if t := a.byName[ev.Source]; t != nil {
			line += t.baseLine // the snapshot held the file's window
		}
		fmt.Fprintf(a.out, "  evidence: %s:%d %s\n", ev.Source, line, ev.Text)
	}
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
