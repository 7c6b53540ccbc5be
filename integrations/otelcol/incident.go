package faultlineconnector

import (
	"context"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	faultline "github.com/faultline/faultline/bindings/go"
)

// scopeName is the instrumentation scope of what the connector emits.
const scopeName = "github.com/faultline/faultline/integrations/otelcol"

// maxRemembered bounds the incidents a job remembers past the latest
// report (ones that fell out of the re-diagnosis window), so that one
// coming back is not announced as new.
const maxRemembered = 1024

// diagnoseLocked closes the job's live session into a bundle, correlates
// the job's bundles, and emits a log record for each incident that is new
// or changed since it was last emitted.
func (c *core) diagnoseLocked(ctx context.Context, j *job, now time.Time) error {
	if !j.dirty {
		return nil
	}
	j.dirty = false
	j.lastDiag = now
	if err := c.rotateLocked(ctx, j); err != nil {
		return err
	}
	if len(j.bundles) == 0 {
		return nil
	}
	rep, err := c.eng.ReportFromBundles(faultline.Options{TZ: c.cfg.TZ}, j.bundles...)
	if err != nil {
		return fmt.Errorf("faultline: correlating job %q: %w", j.key, err)
	}
	defer rep.Close()
	c.stats.diagnoses++

	ld := plog.NewLogs()
	var records plog.LogRecordSlice
	emitted := 0
	latest := make(map[string]incidentState, len(rep.Incidents))
	for i := range rep.Incidents {
		inc := &rep.Incidents[i]
		lines := initiatingLines(inc)
		id := identify(inc, lines, j.incidents, latest)
		sig := inc.ChangeKey()
		prev, known := j.incidents[id]
		st := incidentState{rule: inc.Rule, lines: lines, signature: sig, revision: prev.revision}
		if !known || prev.signature != sig {
			st.revision++
			if !known {
				c.stats.countIncident(inc)
			}
			if emitted == 0 {
				rl := ld.ResourceLogs().AppendEmpty()
				ra := rl.Resource().Attributes()
				ra.PutStr("faultline.job", j.key)
				for k, v := range j.attrs {
					ra.PutStr(k, v)
				}
				sl := rl.ScopeLogs().AppendEmpty()
				sl.Scope().SetName(scopeName)
				sl.Scope().SetVersion(faultline.LibraryVersion())
				records = sl.LogRecords()
			}
			fillRecord(records.AppendEmpty(), inc, id, st.revision, i == 0, now)
			emitted++
		}
		latest[id] = st
	}
	for id, st := range j.incidents {
		if len(latest) >= maxRemembered {
			break
		}
		if _, ok := latest[id]; !ok {
			latest[id] = st
		}
	}
	j.incidents = latest
	if emitted == 0 || c.logsNext == nil {
		return nil
	}
	c.stats.incidentRecords += uint64(emitted)
	return c.logsNext.ConsumeLogs(ctx, ld)
}

// maxLines bounds the initiating lines remembered per incident.
const maxLines = 64

// initiatingLines are hashes of the lines (source and text) that initiated
// the incident, or of its suspect when it was inferred from no line.
func initiatingLines(inc *faultline.Incident) []uint64 {
	in := inc.Initiating
	var out []uint64
	for _, e := range in.Evidence {
		if len(out) == maxLines {
			break
		}
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

// identify keeps an incident's id stable across re-diagnoses, while what
// is known of it changes: more initiating lines as they arrive (an earlier
// one may come first), its rank once the rank's NCCL init lines arrive, its
// collateral. An incident continues a remembered one (not already claimed
// in this round) with the same rule and an initiating line in common;
// otherwise it is new and takes the library's id (Incident.ID), within the
// job (the record's faultline.job).
func identify(inc *faultline.Incident, lines []uint64, known, claimed map[string]incidentState) string {
	best := ""
	for id, st := range known {
		if st.rule != inc.Rule || (best != "" && id > best) {
			continue
		}
		if _, taken := claimed[id]; taken {
			continue
		}
		if overlap(st.lines, lines) {
			best = id
		}
	}
	if best != "" {
		return best
	}
	id := inc.ID // the library's id: its reference and first initiating line
	for n := 2; ; n++ { // the same first line twice in one report
		if _, taken := claimed[id]; !taken {
			return id
		}
		id = fmt.Sprintf("%s-%d", inc.ID, n)
	}
}

func overlap(a, b []uint64) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

// Summary is the one-line diagnosis used as the record's body.
func Summary(inc *faultline.Incident) string {
	in := inc.Initiating
	var b strings.Builder
	b.WriteString(inc.Rule)
	b.WriteString(" on ")
	b.WriteString(orUnknown(in.Host))
	b.WriteString(" rank ")
	if in.Rank.Known() {
		b.WriteString(strconv.Itoa(int(in.Rank)))
	} else {
		b.WriteString("?")
	}
	if in.GPU != "" {
		b.WriteString(" GPU " + in.GPU)
	}
	if !in.Time.IsZero() {
		b.WriteString(" at " + in.Time.UTC().Format(time.RFC3339))
	}
	if in.Inferred {
		b.WriteString(" (inferred)")
	}
	fmt.Fprintf(&b, ": %s, confidence %.0f%%", inc.Title, inc.Confidence*100)
	n := 0
	for _, cl := range inc.Collateral {
		n += cl.Count
	}
	if n > 0 {
		fmt.Fprintf(&b, "; %d collateral lines explained", n)
	}
	return b.String()
}

func orUnknown(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

// Attribute names of an incident record; README.md documents them.
const (
	attrID         = "faultline.incident.id"
	attrRevision   = "faultline.incident.revision"
	attrPrimary    = "faultline.incident.primary"
	attrReference  = "faultline.reference"
	attrRule       = "faultline.rule"
	attrTitle      = "faultline.title"
	attrCategory   = "faultline.category"
	attrConfidence = "faultline.confidence"
	attrRank       = "faultline.initiating.rank"
	attrHost       = "faultline.initiating.host"
	attrGPU        = "faultline.initiating.gpu"
	attrTime       = "faultline.initiating.time"
	attrInferred   = "faultline.initiating.inferred"
	attrEvidence   = "faultline.evidence"
	attrCollateral = "faultline.collateral"
	attrFix        = "faultline.fix"
	attrVerify     = "faultline.verify"
	attrMissing    = "faultline.missing_facts"

	attrActionKind         = "faultline.action.kind"
	attrActionExcludeHosts = "faultline.action.exclude_hosts"
	attrActionExcludeGPUs  = "faultline.action.exclude_gpus"
	attrActionReason       = "faultline.action.reason"
	attrActionSetBy        = "faultline.action.set_by"
	attrActionMissingFact  = "faultline.action.missing_fact"
)

// maxEvidenceLines bounds the evidence lines carried on one record.
const maxEvidenceLines = 16

func fillRecord(lr plog.LogRecord, inc *faultline.Incident, id string, revision int, primary bool, now time.Time) {
	in := inc.Initiating
	lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(now))
	if !in.Time.IsZero() {
		lr.SetTimestamp(pcommon.NewTimestampFromTime(in.Time))
	}
	lr.SetSeverityNumber(plog.SeverityNumberError)
	lr.SetSeverityText("ERROR")
	lr.SetEventName("faultline.incident")
	lr.Body().SetStr(Summary(inc))
	a := lr.Attributes()
	a.PutStr(attrID, id)
	a.PutInt(attrRevision, int64(revision))
	a.PutBool(attrPrimary, primary)
	a.PutStr(attrReference, inc.Reference)
	a.PutStr(attrRule, inc.Rule)
	a.PutStr(attrTitle, inc.Title)
	a.PutStr(attrCategory, inc.Category)
	a.PutDouble(attrConfidence, inc.Confidence)
	if in.Rank.Known() {
		a.PutInt(attrRank, int64(in.Rank))
	}
	if in.Host != "" {
		a.PutStr(attrHost, in.Host)
	}
	if in.GPU != "" {
		a.PutStr(attrGPU, in.GPU)
	}
	if !in.Time.IsZero() {
		a.PutStr(attrTime, in.Time.UTC().Format(time.RFC3339Nano))
	}
	a.PutBool(attrInferred, in.Inferred)
	ev := a.PutEmptySlice(attrEvidence)
	for i, e := range in.Evidence {
		if i == maxEvidenceLines {
			break
		}
		// No line number: a job's stream is scanned by successive sessions,
		// and a session counts lines from the start of what it was fed.
		ev.AppendEmpty().SetStr(e.Source + ": " + e.Text)
	}
	col := a.PutEmptySlice(attrCollateral)
	for _, cl := range inc.Collateral {
		col.AppendEmpty().SetStr(fmt.Sprintf("%d x %s on ranks %v hosts %v", cl.Count, cl.Rule, cl.Ranks, cl.Hosts))
	}
	a.PutStr(attrFix, inc.Fix)
	a.PutStr(attrVerify, inc.Verify)
	if len(inc.MissingFacts) > 0 {
		mf := a.PutEmptySlice(attrMissing)
		for _, m := range inc.MissingFacts {
			mf.AppendEmpty().SetStr(m)
		}
	}
	putAction(a, inc.Action)
}

// putAction sets the incident's recommended action on the record.
func putAction(a pcommon.Map, act faultline.Action) {
	if act.Kind == "" {
		return
	}
	a.PutStr(attrActionKind, act.Kind)
	for key, list := range map[string][]string{attrActionExcludeHosts: act.ExcludeHosts, attrActionExcludeGPUs: act.ExcludeGPUs} {
		if len(list) == 0 {
			continue
		}
		s := a.PutEmptySlice(key)
		for _, v := range list {
			s.AppendEmpty().SetStr(v)
		}
	}
	a.PutStr(attrActionReason, act.Reason)
	a.PutStr(attrActionSetBy, act.SetBy)
	if act.MissingFact != "" {
		a.PutStr(attrActionMissingFact, act.MissingFact)
	}
}
