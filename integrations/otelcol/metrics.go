package faultlineconnector

import (
	"context"
	"sort"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	faultline "github.com/faultline/faultline/bindings/go"
)

// stats are the connector's cumulative counters, guarded by core.mu (the
// evidence callback runs inside a session call made under it).
type stats struct {
	bytes, lines    uint64
	diagnoses       uint64
	incidentRecords uint64
	bundlesDropped  uint64
	evidence        map[string]uint64      // by rule
	incidents       map[incidentKey]uint64 // new incidents
}

type incidentKey struct{ reference, rule, host string }

// maxSeries bounds the incident series (reference x rule x host): past it
// new combinations are counted under host "other".
const maxSeries = 4096

func newStats() stats {
	return stats{evidence: map[string]uint64{}, incidents: map[incidentKey]uint64{}}
}

func (s *stats) countEvidence(ev faultline.Evidence) { s.evidence[ev.Rule]++ }

func (s *stats) countIncident(inc *faultline.Incident) {
	k := incidentKey{inc.Reference, inc.Rule, inc.Initiating.Host}
	if _, ok := s.incidents[k]; !ok && len(s.incidents) >= maxSeries {
		k.host = "other"
	}
	s.incidents[k]++
}

// Metric names; README.md documents them.
const (
	metricIncidents = "faultline.incidents"
	metricEvidence  = "faultline.evidence"
	metricBytes     = "faultline.input.bytes"
	metricLines     = "faultline.input.lines"
)

// emitMetricsLocked sends every counter (cumulative sums since start).
func (c *core) emitMetricsLocked(ctx context.Context) error {
	if c.metricsNext == nil {
		return nil
	}
	md := pmetric.NewMetrics()
	sm := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(scopeName)
	sm.Scope().SetVersion(faultline.LibraryVersion())
	now := pcommon.NewTimestampFromTime(time.Now())
	sum := func(name, unit, desc string) pmetric.NumberDataPointSlice {
		m := sm.Metrics().AppendEmpty()
		m.SetName(name)
		m.SetUnit(unit)
		m.SetDescription(desc)
		s := m.SetEmptySum()
		s.SetIsMonotonic(true)
		s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		return s.DataPoints()
	}
	point := func(dps pmetric.NumberDataPointSlice, v uint64) pmetric.NumberDataPoint {
		dp := dps.AppendEmpty()
		dp.SetStartTimestamp(c.startTime)
		dp.SetTimestamp(now)
		dp.SetIntValue(int64(v))
		return dp
	}

	dps := sum(metricIncidents, "{incident}", "Incidents diagnosed, by catalog reference, rule and initiating host.")
	keys := make([]incidentKey, 0, len(c.stats.incidents))
	for k := range c.stats.incidents {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		return strings.Join([]string{a.reference, a.rule, a.host}, "\x00") < strings.Join([]string{b.reference, b.rule, b.host}, "\x00")
	})
	for _, k := range keys {
		dp := point(dps, c.stats.incidents[k])
		dp.Attributes().PutStr("faultline.reference", k.reference)
		dp.Attributes().PutStr("faultline.rule", k.rule)
		dp.Attributes().PutStr("host.name", k.host)
	}

	dps = sum(metricEvidence, "{line}", "Evidence lines found, by rule.")
	rules := make([]string, 0, len(c.stats.evidence))
	for r := range c.stats.evidence {
		rules = append(rules, r)
	}
	sort.Strings(rules)
	for _, r := range rules {
		point(dps, c.stats.evidence[r]).Attributes().PutStr("faultline.rule", r)
	}
	point(sum(metricBytes, "By", "Log bytes diagnosed."), c.stats.bytes)
	point(sum(metricLines, "{line}", "Log lines diagnosed."), c.stats.lines)
	return c.metricsNext.ConsumeMetrics(ctx, md)
}
