package faultlineconnector

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/goleak"

	faultline "github.com/faultline/faultline/bindings/go"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// pair creates the connector as the collector does when it is used in a
// logs pipeline (logs->logs) and a metrics pipeline (logs->metrics).
type pair struct {
	logs, metrics connector.Logs
	logSink       *consumertest.LogsSink
	metricSink    *consumertest.MetricsSink
}

func newPair(t *testing.T, cfg *Config, logsNext consumer.Logs) *pair {
	t.Helper()
	f := NewFactory()
	set := connectortest.NewNopSettings(f.Type())
	p := &pair{logSink: &consumertest.LogsSink{}, metricSink: &consumertest.MetricsSink{}}
	if logsNext == nil {
		logsNext = p.logSink
	}
	var err error
	if p.logs, err = f.CreateLogsToLogs(context.Background(), set, cfg, logsNext); err != nil {
		t.Fatal(err)
	}
	if p.metrics, err = f.CreateLogsToMetrics(context.Background(), set, cfg, p.metricSink); err != nil {
		t.Fatal(err)
	}
	for _, c := range []connector.Logs{p.logs, p.metrics} {
		if err := c.Start(context.Background(), componenttest.NewNopHost()); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// consume feeds a batch to both instances, as the collector's fan-out does.
func (p *pair) consume(t *testing.T, ld plog.Logs) {
	t.Helper()
	for _, c := range []connector.Logs{p.logs, p.metrics} {
		if err := c.ConsumeLogs(context.Background(), ld); err != nil {
			t.Fatal(err)
		}
	}
}

func (p *pair) shutdown(t *testing.T) {
	t.Helper()
	for _, c := range []connector.Logs{p.logs, p.metrics} {
		if err := c.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// incident is an emitted incident record, flattened for tests.
type incident struct {
	body  string
	attrs map[string]any
}

func incidents(sink *consumertest.LogsSink) []incident {
	var out []incident
	for _, ld := range sink.AllLogs() {
		rls := ld.ResourceLogs()
		for i := 0; i < rls.Len(); i++ {
			sls := rls.At(i).ScopeLogs()
			for k := 0; k < sls.Len(); k++ {
				lrs := sls.At(k).LogRecords()
				for n := 0; n < lrs.Len(); n++ {
					lr := lrs.At(n)
					out = append(out, incident{body: lr.Body().Str(), attrs: lr.Attributes().AsRaw()})
				}
			}
		}
	}
	return out
}

func waitIncident(t *testing.T, sink *consumertest.LogsSink, ok func(incident) bool) incident {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, inc := range incidents(sink) {
			if ok(inc) {
				return inc
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no such incident among %d emitted: %+v", sink.LogRecordCount(), incidents(sink))
	return incident{}
}

// waitDiagnosed waits until every record fed has been diagnosed.
func waitDiagnosed(t *testing.T, p *pair) {
	t.Helper()
	c := p.logs.(*instance).core
	deadline := time.Now().Add(20 * time.Second)
	for {
		c.mu.Lock()
		dirty := 0
		for _, j := range c.jobs {
			if j.dirty {
				dirty++
			}
		}
		c.mu.Unlock()
		if dirty == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d jobs still not diagnosed", dirty)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func fastConfig() *Config {
	cfg := createDefaultConfig()
	cfg.DiagnoseInterval = 50 * time.Millisecond
	return cfg
}

// metricValue sums the last batch's data points of a metric whose
// attributes include attrs.
func metricValue(sink *consumertest.MetricsSink, name string, attrs map[string]string) (int64, bool) {
	all := sink.AllMetrics()
	if len(all) == 0 {
		return 0, false
	}
	md := all[len(all)-1]
	var v int64
	found := false
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		sms := rms.At(i).ScopeMetrics()
		for k := 0; k < sms.Len(); k++ {
			ms := sms.At(k).Metrics()
			for n := 0; n < ms.Len(); n++ {
				m := ms.At(n)
				if m.Name() != name || m.Type() != pmetric.MetricTypeSum {
					continue
				}
				dps := m.Sum().DataPoints()
			points:
				for d := 0; d < dps.Len(); d++ {
					dp := dps.At(d)
					for k, want := range attrs {
						if got, ok := dp.Attributes().Get(k); !ok || got.Str() != want {
							continue points
						}
					}
					v += dp.IntValue()
					found = true
				}
			}
		}
	}
	return v, found
}

func TestConnectorDiagnosesTheExampleIncident(t *testing.T) {
	want := loadExpectation(t)
	p := newPair(t, fastConfig(), nil)
	batches := fileBatches(t, nil)
	lines, bytes := 0, 0
	for _, ld := range batches {
		p.consume(t, ld)
		lines += ld.LogRecordCount()
		lrs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
		for i := 0; i < lrs.Len(); i++ {
			bytes += len(lrs.At(i).Body().Str()) + 1
		}
	}
	// Diagnoses run while the files arrive: the rank of the GPU may be
	// learned after the Xid line (from the rank's NCCL init lines), and the
	// incident is then emitted again with it.
	inc := waitIncident(t, p.logSink, func(i incident) bool {
		return i.attrs[attrRule] == want.PrimaryRule && i.attrs[attrRank] == int64(want.InitiatingRank)
	})
	p.shutdown(t)

	if inc.attrs[attrRank] != int64(want.InitiatingRank) || inc.attrs[attrHost] != want.InitiatingHost {
		t.Errorf("initiating rank %v host %v, want %d %s", inc.attrs[attrRank], inc.attrs[attrHost], want.InitiatingRank, want.InitiatingHost)
	}
	if inc.attrs[attrPrimary] != true || inc.attrs[attrReference] == "" || inc.attrs[attrFix] == "" || inc.attrs[attrVerify] == "" {
		t.Errorf("incomplete incident: %+v", inc.attrs)
	}
	ev, _ := inc.attrs[attrEvidence].([]any)
	if len(ev) == 0 || !strings.Contains(ev[0].(string), "Xid") {
		t.Errorf("evidence lines: %v", inc.attrs[attrEvidence])
	}
	if !strings.HasPrefix(inc.body, want.PrimaryRule+" on "+want.InitiatingHost+" rank 2 ") {
		t.Errorf("body %q", inc.body)
	}
	// Each line was diagnosed once although both instances were fed.
	if v, _ := metricValue(p.metricSink, metricLines, nil); v != int64(lines) {
		t.Errorf("%s = %d, want %d", metricLines, v, lines)
	}
	if v, _ := metricValue(p.metricSink, metricBytes, nil); v != int64(bytes) {
		t.Errorf("%s = %d, want %d", metricBytes, v, bytes)
	}
	if v, _ := metricValue(p.metricSink, metricIncidents, map[string]string{"faultline.rule": want.PrimaryRule, "host.name": want.InitiatingHost}); v != 1 {
		t.Errorf("%s for %s = %d, want 1", metricIncidents, want.PrimaryRule, v)
	}
	if v, _ := metricValue(p.metricSink, metricEvidence, map[string]string{"faultline.rule": want.PrimaryRule}); v < 1 {
		t.Errorf("%s for %s = %d", metricEvidence, want.PrimaryRule, v)
	}
}

// Host and rank given as attributes (a k8s or journald source with no
// telling path) reach the library through the stream name.
func TestConnectorTakesHostAndRankFromAttributes(t *testing.T) {
	want := loadExpectation(t)
	p := newPair(t, fastConfig(), nil)
	for _, ld := range fileBatches(t, func(path string, rl plog.ResourceLogs) {
		parts := strings.Split(path, "/")
		host, base := parts[len(parts)-2], parts[len(parts)-1]
		a := rl.Resource().Attributes()
		a.PutStr("host.name", host)
		a.PutStr("k8s.pod.name", "trainer-"+strings.TrimSuffix(base, ".log"))
		if r, ok := strings.CutPrefix(strings.TrimSuffix(base, ".log"), "rank-"); ok {
			a.PutStr("faultline.rank", r)
		}
	}) {
		p.consume(t, ld)
	}
	inc := waitIncident(t, p.logSink, func(i incident) bool {
		return i.attrs[attrRule] == want.PrimaryRule && i.attrs[attrRank] == int64(want.InitiatingRank)
	})
	p.shutdown(t)
	if inc.attrs[attrRank] != int64(want.InitiatingRank) || inc.attrs[attrHost] != want.InitiatingHost {
		t.Errorf("initiating rank %v host %v, want %d %s", inc.attrs[attrRank], inc.attrs[attrHost], want.InitiatingRank, want.InitiatingHost)
	}
}

// An incident is emitted when it forms and again, with the same id and a
// higher revision, only when it changes: here the Xid comes first (rank
// unknown), then the ranks' logs (the rank of the GPU, the collateral).
func TestConnectorEmitsIncidentOncePerChange(t *testing.T) {
	p := newPair(t, fastConfig(), nil)
	batches := fileBatches(t, nil)
	var kern, ranks []plog.Logs
	for _, ld := range batches {
		path, _ := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes().Get("log.file.path")
		if strings.HasSuffix(path.Str(), "node017/kern.log") {
			kern = append(kern, ld)
		} else {
			ranks = append(ranks, ld)
		}
	}
	for _, ld := range kern {
		p.consume(t, ld)
	}
	first := waitIncident(t, p.logSink, func(i incident) bool { return i.attrs[attrRule] == "xid-79-fallen-off-bus" })
	time.Sleep(300 * time.Millisecond) // several diagnose intervals, no new input
	if n := len(incidents(p.logSink)); n != 1 {
		t.Fatalf("%d incident records without new input, want 1: %+v", n, incidents(p.logSink))
	}
	for _, ld := range ranks {
		p.consume(t, ld)
	}
	waitIncident(t, p.logSink, func(i incident) bool { return i.attrs[attrRevision] == int64(2) })
	waitDiagnosed(t, p)
	settled := len(incidents(p.logSink))
	time.Sleep(300 * time.Millisecond) // no new input: nothing more
	all := incidents(p.logSink)
	p.shutdown(t)
	if len(all) != settled {
		t.Errorf("%d incident records without new input after %d", len(all), settled)
	}
	// The timeouts may arrive over several diagnoses: each record is a new
	// revision of the same incident, and the last one has the collateral.
	for i, inc := range all {
		if inc.attrs[attrID] != first.attrs[attrID] || inc.attrs[attrRevision] != int64(i+1) {
			t.Errorf("record %d: id %v revision %v, want id %v revision %d", i, inc.attrs[attrID], inc.attrs[attrRevision], first.attrs[attrID], i+1)
		}
	}
	if first.attrs[attrRank] != nil {
		t.Errorf("rank %v known from the kernel log alone", first.attrs[attrRank])
	}
	if r := all[len(all)-1].attrs[attrRank]; r != int64(2) {
		t.Errorf("rank %v in the last revision, want 2", r)
	}
	if c, _ := all[len(all)-1].attrs[attrCollateral].([]any); len(c) == 0 {
		t.Errorf("the update carries no collateral: %+v", all[len(all)-1].attrs)
	}
	if v, _ := metricValue(p.metricSink, metricIncidents, nil); v != 1 {
		t.Errorf("%s = %d, want 1", metricIncidents, v)
	}
}

// Jobs are kept apart by the job attribute, and a job idle past
// job_idle_timeout is diagnosed and forgotten.
func TestConnectorSeparatesAndEvictsJobs(t *testing.T) {
	cfg := fastConfig()
	cfg.JobIdleTimeout = 200 * time.Millisecond
	p := newPair(t, cfg, nil)
	for _, jobID := range []string{"job-a", "job-b"} {
		for _, ld := range fileBatches(t, nil) {
			ld.ResourceLogs().At(0).Resource().Attributes().PutStr("faultline.job.id", jobID)
			p.consume(t, ld)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	c := p.logs.(*instance).core
	for {
		c.mu.Lock()
		n := len(c.jobs)
		c.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d jobs still held after the idle timeout", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.shutdown(t)
	jobs := map[string]bool{}
	for _, ld := range p.logSink.AllLogs() {
		v, _ := ld.ResourceLogs().At(0).Resource().Attributes().Get("faultline.job.id")
		jobs[v.Str()] = true
	}
	if !jobs["job-a"] || !jobs["job-b"] || len(jobs) != 2 {
		t.Errorf("incidents by job: %v", jobs)
	}
}

// blockingLogs holds every ConsumeLogs until released: a slow exporter.
type blockingLogs struct {
	release chan struct{}
	once    sync.Once
	entered chan struct{}
}

func (b *blockingLogs) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (b *blockingLogs) ConsumeLogs(ctx context.Context, _ plog.Logs) error {
	b.once.Do(func() { close(b.entered) })
	select {
	case <-b.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// A slow downstream slows ConsumeLogs down instead of letting records pile
// up in the connector, and Shutdown does not hang on it.
func TestConnectorBackPressure(t *testing.T) {
	next := &blockingLogs{release: make(chan struct{}), entered: make(chan struct{})}
	p := newPair(t, fastConfig(), next)
	batches := fileBatches(t, nil)
	// Fed from a goroutine: a diagnosis tick may block on the downstream
	// before every batch is in (a loaded machine), and that is the point.
	fed := make(chan error, 1)
	go func() {
		for _, ld := range batches {
			for _, c := range []connector.Logs{p.logs, p.metrics} {
				if err := c.ConsumeLogs(context.Background(), ld); err != nil {
					fed <- err
					return
				}
			}
		}
		fed <- nil
	}()
	select {
	case <-next.entered:
	case <-time.After(60 * time.Second):
		t.Fatal("no incident was emitted")
	}
	done := make(chan error, 1)
	go func() { done <- p.logs.ConsumeLogs(context.Background(), batches[0]) }()
	select {
	case err := <-done:
		t.Fatalf("ConsumeLogs returned (%v) while the downstream was blocked", err)
	case <-time.After(300 * time.Millisecond):
	}
	close(next.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := <-fed; err != nil {
		t.Fatal(err)
	}
	p.shutdown(t)
}

// A cancelled context stops ConsumeLogs with its error.
func TestConnectorHonoursContext(t *testing.T) {
	p := newPair(t, fastConfig(), nil)
	defer p.shutdown(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := p.logs.ConsumeLogs(ctx, fileBatches(t, nil)[0])
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestSummaryAndStreamNames(t *testing.T) {
	c := &core{cfg: createDefaultConfig()}
	for _, tc := range []struct {
		res, rec map[string]any
		want     string
	}{
		{map[string]any{"host.name": "node017", "faultline.rank": "3"}, nil, "node017/rank-3.log"},
		{map[string]any{"host.name": "node017"}, map[string]any{"log.file.path": "/var/log/kern.log"}, "node017/kern.log"},
		{nil, map[string]any{"log.file.path": "/logs/node018/rank-9.log"}, "/logs/node018/rank-9.log"},
		{map[string]any{"k8s.pod.name": "trainer-worker-3"}, nil, "trainer-worker-3"},
		{map[string]any{"faultline.rank": "not-a-rank"}, nil, "stream"},
		{nil, nil, "stream"},
	} {
		res, rec := pcommon.NewMap(), pcommon.NewMap()
		_ = res.FromRaw(tc.res)
		_ = rec.FromRaw(tc.rec)
		if got := c.streamName(res, rec); got != tc.want {
			t.Errorf("streamName(%v, %v) = %q, want %q", tc.res, tc.rec, got, tc.want)
		}
	}
}

// An incident keeps its id when an earlier initiating line joins it or its
// rank becomes known; another rule, or another initiating line, is another
// incident.
func TestIncidentIdentity(t *testing.T) {
	ev := func(src, text string) faultline.Evidence { return faultline.Evidence{Source: src, Text: text} }
	xid := ev("node017/kern.log", "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.")
	cuda := ev("node017/rank-2.log", "CUDA error: unspecified launch failure")
	// The library names an incident by its reference and first line; here
	// by the rule and the first line's text.
	inc := func(rule string, rank faultline.Rank, evs ...faultline.Evidence) *faultline.Incident {
		return &faultline.Incident{ID: rule + "|" + evs[0].Text, Rule: rule, Initiating: faultline.Initiating{Rank: rank, Evidence: evs}}
	}
	known := map[string]incidentState{}
	remember := func(i *faultline.Incident) string {
		lines := initiatingLines(i)
		id := identify(i, lines, known, map[string]incidentState{})
		known[id] = incidentState{rule: i.Rule, lines: lines}
		return id
	}
	first := remember(inc("xid-79-fallen-off-bus", faultline.NoRank, xid))
	if got := remember(inc("xid-79-fallen-off-bus", 2, cuda, xid)); got != first {
		t.Errorf("an earlier line and the rank changed the id: %s -> %s", first, got)
	}
	if got := remember(inc("cuda-launch-failure", 2, cuda)); got == first {
		t.Errorf("another rule got the same id %s", got)
	}
	other := ev("node018/kern.log", "NVRM: Xid (PCI:0000:5e:00): 79, GPU has fallen off the bus.")
	if got := remember(inc("xid-79-fallen-off-bus", faultline.NoRank, other)); got == first {
		t.Errorf("another GPU's Xid got the same id %s", got)
	}
	// Two incidents of one report never share an id.
	claimed := map[string]incidentState{}
	a := inc("xid-79-fallen-off-bus", 2, xid)
	idA := identify(a, initiatingLines(a), known, claimed)
	claimed[idA] = incidentState{}
	if idB := identify(a, initiatingLines(a), known, claimed); idB == idA {
		t.Errorf("two incidents of one report share id %s", idA)
	}
}

// The record carries the incident's recommended action.
func TestRecordCarriesTheAction(t *testing.T) {
	inc := &faultline.Incident{ID: "inc-000000000001", Rule: "xid-79-fallen-off-bus"}
	inc.Action = faultline.Action{Kind: faultline.ActionRestartExcluding, ExcludeHosts: []string{"node017"},
		ExcludeGPUs: []string{"0000:3b:00.0"}, Reason: "xid-79-fallen-off-bus on node017: the GPU is gone.", SetBy: "xid-79-fallen-off-bus"}
	lr := plog.NewLogRecord()
	fillRecord(lr, inc, inc.ID, 1, true, time.Now())
	a := lr.Attributes()
	get := func(k string) string {
		v, ok := a.Get(k)
		if !ok {
			return "<absent>"
		}
		return v.AsString()
	}
	if get(attrActionKind) != "restart_excluding" || get(attrActionExcludeHosts) != `["node017"]` ||
		get(attrActionExcludeGPUs) != `["0000:3b:00.0"]` || get(attrActionSetBy) != "xid-79-fallen-off-bus" ||
		get(attrActionReason) != inc.Action.Reason || get(attrActionMissingFact) != "<absent>" || get(attrID) != inc.ID {
		t.Errorf("attributes %v", a.AsRaw())
	}
}
