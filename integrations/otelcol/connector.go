package faultlineconnector

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"

	faultline "github.com/faultline/faultline/bindings/go"
)

// How the connector keeps memory bounded over days of input:
//
//   - Records are scanned as they arrive, inside ConsumeLogs, by a live push
//     session per job (one stream per source). Nothing is queued: a slow
//     scan makes ConsumeLogs slow, which is the collector's back-pressure.
//   - Log bytes are not kept. Every DiagnoseInterval a job that received
//     records closes its live session into an evidence bundle (what the
//     rules matched, not the lines), and the job is correlated from its
//     bundles. A job keeps at most MaxEvidenceBytes of bundles: older ones
//     are dropped, which bounds the re-diagnosis window.
//   - A live session holds the evidence of what it scanned (several times
//     the bytes of the matching lines) and a line buffer per stream (up to
//     about 1.3 MiB): it is closed into a bundle early once it has scanned
//     MaxSessionBytes, or would open more than MaxStreamsPerJob streams.
//   - At most MaxJobs jobs are held; a job idle for JobIdleTimeout, or the
//     least recently active one when a new job would pass MaxJobs, is
//     diagnosed one last time and forgotten.

// core is the diagnosing state shared by a connector ID's instances.
type core struct {
	id        component.ID
	cfg       *Config
	logger    *zap.Logger
	instances int // guarded by coresMu

	mu          sync.Mutex // guards everything below
	logsNext    consumer.Logs
	metricsNext consumer.Metrics
	starts      int
	eng         *faultline.Engine
	jobs        map[string]*job
	stats       stats
	startTime   pcommon.Timestamp
	stopped     bool
	seq         uint64 // counts ConsumeLogs batches

	cancel context.CancelFunc // of the background loop's context
	done   chan struct{}      // closed when the background loop returns
}

// job is one job's diagnosis state.
type job struct {
	key        string
	attrs      map[string]string // the job attributes that named it
	live       *faultline.Session
	streams    map[string]*jstream
	touched    []*faultline.Stream // streams written in the current batch
	seq        uint64              // the batch that last touched the job
	liveBytes  int                 // log bytes the live session has scanned
	bundles    [][]byte
	bundleSize int
	dirty      bool // records arrived since the last correlation
	lastInput  time.Time
	lastDiag   time.Time
	incidents  map[string]incidentState // by incident id, as last emitted
}

// jstream is a stream of the job's live session.
type jstream struct {
	st  *faultline.Stream
	seq uint64 // the batch that last wrote to it
}

// incidentState is an incident as last emitted.
type incidentState struct {
	rule      string
	lines     []uint64 // its initiating lines (see initiatingLines)
	signature string
	revision  int
}

func newCore(set connector.Settings, cfg *Config) *core {
	return &core{id: set.ID, cfg: cfg, logger: set.Logger, jobs: map[string]*job{}, stats: newStats()}
}

func (c *core) setLogsNext(n consumer.Logs) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.logsNext = n
}

func (c *core) setMetricsNext(n consumer.Metrics) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.metricsNext = n
}

func (c *core) hasLogsNext() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.logsNext != nil
}

func (c *core) start(_ context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.starts++
	if c.starts > 1 {
		return nil
	}
	var err error
	if c.cfg.Rules != "" {
		c.eng, err = faultline.Open(c.cfg.Rules)
	} else {
		c.eng, err = faultline.Default()
	}
	if err != nil {
		c.starts--
		return fmt.Errorf("faultline: loading the ruleset: %w", err)
	}
	c.startTime = pcommon.NewTimestampFromTime(time.Now())
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.done = make(chan struct{})
	go c.loop(ctx)
	return nil
}

// stop is called by each started instance's Shutdown. The first one stops
// the background loop and has every job with new records diagnosed one
// last time, emitting with ctx: the collector shuts a component down before
// the components it feeds, so at the first Shutdown every output is still
// up. An instance's output is not used after its own Shutdown. The last
// one frees the C memory.
func (c *core) stop(ctx context.Context, logsOut, metricsOut bool) error {
	c.mu.Lock()
	first := !c.stopped
	c.stopped = true
	c.mu.Unlock()
	var errs []error
	if first {
		c.cancel()
		<-c.done
		c.mu.Lock()
		for _, key := range c.jobKeysLocked() {
			errs = append(errs, c.diagnoseLocked(ctx, c.jobs[key], time.Now()))
			c.dropJobLocked(key)
		}
		errs = append(errs, c.emitMetricsLocked(ctx))
		c.mu.Unlock()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if logsOut {
		c.logsNext = nil
	}
	if metricsOut {
		c.metricsNext = nil
	}
	c.starts--
	if c.starts == 0 {
		c.eng.Close()
		c.eng = nil
	}
	return errors.Join(errs...)
}

func (c *core) jobKeysLocked() []string {
	keys := make([]string, 0, len(c.jobs))
	for k := range c.jobs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// loop correlates jobs with new records every DiagnoseInterval and forgets
// idle ones, until ctx is cancelled.
func (c *core) loop(ctx context.Context) {
	defer close(c.done)
	tick := c.cfg.DiagnoseInterval / 4
	tick = max(tick, 5*time.Millisecond)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			c.mu.Lock()
			err := c.tickLocked(ctx, now)
			c.mu.Unlock()
			if err != nil && ctx.Err() == nil {
				c.logger.Warn("faultline: diagnosing", zap.Error(err))
			}
		}
	}
}

func (c *core) tickLocked(ctx context.Context, now time.Time) error {
	var errs []error
	changed := false
	for _, key := range c.jobKeysLocked() {
		j := c.jobs[key]
		idle := now.Sub(j.lastInput) >= c.cfg.JobIdleTimeout
		if j.dirty && (idle || now.Sub(j.lastDiag) >= c.cfg.DiagnoseInterval) {
			errs = append(errs, c.diagnoseLocked(ctx, j, now))
			changed = true
		}
		if idle {
			c.dropJobLocked(key)
		}
	}
	if changed {
		errs = append(errs, c.emitMetricsLocked(ctx))
	}
	return errors.Join(errs...)
}

// consume scans a batch of records in the calling goroutine.
func (c *core) consume(ctx context.Context, ld plog.Logs) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.eng == nil || c.stopped {
		return errors.New("faultline connector is not running")
	}
	now := time.Now()
	c.seq++
	var touched []*job
	var line []byte
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		res := rl.Resource().Attributes()
		sls := rl.ScopeLogs()
		for k := 0; k < sls.Len(); k++ {
			lrs := sls.At(k).LogRecords()
			for n := 0; n < lrs.Len(); n++ {
				if err := ctx.Err(); err != nil {
					return err
				}
				lr := lrs.At(n)
				attrs := lr.Attributes()
				j, err := c.jobForLocked(ctx, res, attrs, now)
				if err != nil {
					return err
				}
				if j.seq != c.seq {
					j.seq = c.seq
					touched = append(touched, j)
				}
				st, err := c.streamLocked(ctx, j, res, attrs)
				if err != nil {
					return err
				}
				line = appendBody(line[:0], lr.Body())
				if _, err := st.Write(line); err != nil {
					return fmt.Errorf("faultline: scanning: %w", err)
				}
				c.stats.bytes += uint64(len(line))
				j.liveBytes += len(line)
				c.stats.lines++
				j.dirty = true
				j.lastInput = now
			}
		}
	}
	// Scan what this batch brought now rather than when a stream's buffer
	// fills, so evidence (and the diagnosis) does not wait for more input.
	for _, j := range touched {
		for _, st := range j.touched {
			if err := st.Flush(); err != nil {
				return fmt.Errorf("faultline: scanning: %w", err)
			}
		}
		j.touched = j.touched[:0]
		if j.liveBytes >= c.cfg.MaxSessionBytes {
			if err := c.rotateLocked(ctx, j); err != nil {
				return err
			}
		}
	}
	return nil
}

// appendBody appends the record's text and one newline: records are lines
// for the library, and a multi-line body stays several lines.
func appendBody(b []byte, v pcommon.Value) []byte {
	if v.Type() == pcommon.ValueTypeStr {
		b = append(b, v.Str()...)
	} else if v.Type() != pcommon.ValueTypeEmpty {
		b = append(b, v.AsString()...)
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		b = append(b, '\n')
	}
	return b
}

// lookup returns the first of names present on the resource, then on the
// record.
func lookup(names []string, res, rec pcommon.Map) (string, string, bool) {
	for _, m := range []pcommon.Map{res, rec} {
		for _, n := range names {
			if v, ok := m.Get(n); ok {
				if s := v.AsString(); s != "" {
					return n, s, true
				}
			}
		}
	}
	return "", "", false
}

func (c *core) jobForLocked(ctx context.Context, res, rec pcommon.Map, now time.Time) (*job, error) {
	key := c.cfg.DefaultJob
	var attrs map[string]string
	if n, v, ok := lookup(c.cfg.JobAttributes, res, rec); ok {
		key = v
		attrs = map[string]string{n: v}
	}
	if j := c.jobs[key]; j != nil {
		return j, nil
	}
	var err error
	if len(c.jobs) >= c.cfg.MaxJobs {
		// Make room: the least recently active job has its last word.
		var oldest *job
		for _, j := range c.jobs {
			if oldest == nil || j.lastInput.Before(oldest.lastInput) {
				oldest = j
			}
		}
		err = c.diagnoseLocked(ctx, oldest, now)
		c.dropJobLocked(oldest.key)
	}
	j := &job{key: key, attrs: attrs, streams: map[string]*jstream{},
		incidents: map[string]incidentState{}, lastDiag: now, lastInput: now}
	c.jobs[key] = j
	return j, err
}

func (c *core) dropJobLocked(key string) {
	if j := c.jobs[key]; j != nil {
		j.closeLive()
		delete(c.jobs, key)
	}
}

func (j *job) closeLive() {
	if j.live != nil {
		j.live.Close()
		j.live = nil
	}
	clear(j.streams)
	j.touched = j.touched[:0]
	j.liveBytes = 0
}

// streamName names a record's stream so that the library attributes it as
// it would a file: host and rank from attributes where present
// ("node017/rank-3.log"), else the source's own name (a path like
// ".../node017/rank-3.log" or a pod name), from which the library reads
// what it can; and inside the line the library finds the rest.
func (c *core) streamName(res, rec pcommon.Map) string {
	_, src, _ := lookup(c.cfg.SourceAttributes, res, rec)
	_, host, hasHost := lookup(c.cfg.HostAttributes, res, rec)
	_, rank, hasRank := lookup(c.cfg.RankAttributes, res, rec)
	if hasRank {
		if _, err := strconv.ParseUint(rank, 10, 32); err != nil {
			hasRank = false // not a rank: leave it to the line
		}
	}
	host = strings.ReplaceAll(host, "/", "_")
	switch {
	case hasHost && hasRank:
		return host + "/rank-" + rank + ".log"
	case hasRank:
		if src != "" {
			return path.Dir(src) + "/rank-" + rank + ".log"
		}
		return "rank-" + rank + ".log"
	case hasHost:
		if src == "" {
			return host + "/stream"
		}
		return host + "/" + path.Base(src)
	case src != "":
		return src
	}
	return "stream"
}

func (c *core) streamLocked(ctx context.Context, j *job, res, rec pcommon.Map) (*faultline.Stream, error) {
	name := c.streamName(res, rec)
	if js := j.streams[name]; js != nil {
		if js.seq != c.seq {
			js.seq = c.seq
			j.touched = append(j.touched, js.st)
		}
		return js.st, nil
	}
	if len(j.streams) >= c.cfg.MaxStreamsPerJob {
		if err := c.rotateLocked(ctx, j); err != nil {
			return nil, err
		}
	}
	if j.live == nil {
		s, err := c.eng.NewSession(faultline.Options{Threads: 1, TZ: c.cfg.TZ, OnEvidence: c.stats.countEvidence})
		if err != nil {
			return nil, fmt.Errorf("faultline: opening a session: %w", err)
		}
		j.live = s
	}
	st, err := j.live.OpenStream(name)
	if err != nil {
		return nil, fmt.Errorf("faultline: opening stream %q: %w", name, err)
	}
	j.streams[name] = &jstream{st: st, seq: c.seq}
	j.touched = append(j.touched, st)
	return st, nil
}

// rotateLocked closes the job's live session into an evidence bundle and
// keeps the newest bundles within MaxEvidenceBytes.
func (c *core) rotateLocked(ctx context.Context, j *job) error {
	if j.live == nil {
		return nil
	}
	b, err := j.live.ExportBundle(ctx)
	j.closeLive()
	if err != nil {
		return fmt.Errorf("faultline: closing job %q's session: %w", j.key, err)
	}
	j.bundles = append(j.bundles, b)
	j.bundleSize += len(b)
	drop := 0
	for j.bundleSize > c.cfg.MaxEvidenceBytes && drop < len(j.bundles)-1 {
		j.bundleSize -= len(j.bundles[drop])
		drop++
	}
	if drop > 0 {
		c.stats.bundlesDropped += uint64(drop)
		j.bundles = append(j.bundles[:0], j.bundles[drop:]...)
	}
	return nil
}
