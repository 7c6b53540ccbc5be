#include "evidence/bundle.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <map>
#include <set>

#include "bundle_generated.h"
#include "evidence/bundle_flightrec.h"
#include "evidence/distinct.h"
#include "evidence/finalize.h"
#include "evidence/merge.h"
#include "util/strings.h"
#include "util/utf8.h"

namespace faultline {
namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

std::string SignalKey(const Ruleset& rs, uint32_t g) {
  const SignalInfo& si = rs.signal(g);
  return StrCat(si.rule->id()->string_view(), "/", si.signal->id()->string_view());
}

std::string Str(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

// The parts of a verified bundle, mapped onto the loading ruleset.
void ReadSources(const fb::Bundle* bd, ScanResult& r) {
  if (bd->sources()) {
    for (const fb::BSource* s : *bd->sources()) {
      SourceSummary ss;
      ss.name = Str(s->name());
      ss.bytes = s->bytes();
      ss.lines = s->lines();
      ss.first_time_us = s->first_time_us();
      ss.last_time_us = s->last_time_us();
      ss.rank = s->rank();
      ss.host = Str(s->host());
      ss.json_lines = s->json_lines();
      if (s->has_anchor()) ss.monotonic_anchor_us = s->anchor_us();
      ss.dated_us = s->dated_us();
      ss.failed = s->failed();
      ss.range_begin = s->range_begin();
      ss.range_end = s->range_end();
      ss.last_time_offset = s->last_time_offset();
      ss.first_time_inferred = s->first_time_inferred();
      ss.last_time_inferred = s->last_time_inferred();
      ss.unanchored_delta_us = s->unanchored_delta_us();
      ss.kernel_log = s->kernel_log();
      r.sources.push_back(std::move(ss));
    }
  }
}

void ReadEvidence(const Ruleset& rs, const fb::Bundle* bd, const std::vector<int64_t>& rule_map,
                  const std::vector<int64_t>& sig_map, std::string_view name, ScanResult& r) {
  size_t skipped = 0;
  if (bd->evidence()) {
    r.evidence.reserve(bd->evidence()->size());
    for (const fb::BEvidence* e : *bd->evidence()) {
      if (e->rule() >= rule_map.size() || rule_map[e->rule()] < 0 || e->signal() >= sig_map.size() ||
          sig_map[e->signal()] < 0 || e->source() >= r.sources.size() || e->time_source() > 4) {
        ++skipped;
        continue;
      }
      Evidence ev;
      ev.source = e->source();
      ev.line = e->line();
      ev.offset = e->offset();
      ev.time_us = e->time_us();
      ev.time_source = static_cast<TimeSource>(e->time_source());
      if (e->has_monotonic()) ev.monotonic_s = e->monotonic_s();
      ev.rank = e->rank();
      ev.local_rank = e->local_rank();
      ev.pid = e->pid();
      ev.host = Str(e->host());
      ev.gpu = Str(e->gpu());
      ev.rule = static_cast<uint32_t>(rule_map[e->rule()]);
      ev.signal = static_cast<uint32_t>(sig_map[e->signal()]);
      if (rs.signal(ev.signal).rule_index != ev.rule) {
        ++skipped;
        continue;
      }
      ev.text = Str(e->text());
      if (e->fields()) {
        for (const fb::BField* f : *e->fields()) ev.fields.emplace_back(Str(f->key()), Str(f->value()));
      }
      ev.needs_prev_time = e->needs_prev_time();
      ev.prev_delta_us = e->prev_delta_us();
      ev.dmesg_delta = e->dmesg_delta();
      ev.traceback_span = e->traceback_span();
      ev.year_inferred = e->year_inferred();
      ev.run_end = e->run_end();
      r.evidence.push_back(std::move(ev));
    }
  }
  if (skipped > 0) {
    r.errors.push_back({std::string(name),
                        StrCat(name, ": ", skipped, " evidence record(s) name rules this ruleset does not have"), -5});
  }
}

void ReadStatistics(const fb::Bundle* bd, const std::vector<int64_t>& rule_map,
                    const std::vector<int64_t>& sig_map, ScanResult& r) {
  if (bd->ranks()) {
    for (const fb::BRank* k : *bd->ranks()) {
      RankSummary rk;
      rk.rank = k->rank();
      rk.host = Str(k->host());
      rk.several_hosts = k->several_hosts();
      rk.progress_lines = k->progress_lines();
      rk.first_progress_us = k->first_progress_us();
      rk.last_progress_us = k->last_progress_us();
      rk.last_step = k->last_step();
      rk.step_samples = k->step_samples();
      rk.step_time_sum = k->step_time_sum();
      rk.step_time_sumsq = k->step_time_sumsq();
      if (k->reservoir()) rk.step_time_reservoir.assign(k->reservoir()->begin(), k->reservoir()->end());
      if (k->reservoir_keys() && k->reservoir_keys()->size() == rk.step_time_reservoir.size()) {
        rk.step_time_keys.assign(k->reservoir_keys()->begin(), k->reservoir_keys()->end());
      }
      rk.throughput_samples = k->throughput_samples();
      if (k->throughput_reservoir()) {
        rk.throughput_reservoir.assign(k->throughput_reservoir()->begin(), k->throughput_reservoir()->end());
      }
      if (k->throughput_keys() && k->throughput_keys()->size() == rk.throughput_reservoir.size()) {
        rk.throughput_keys.assign(k->throughput_keys()->begin(), k->throughput_keys()->end());
      }
      if (k->aligned_steps() && k->aligned_costs() &&
          k->aligned_steps()->size() == k->aligned_costs()->size()) {
        for (size_t i = 0; i < k->aligned_steps()->size(); ++i) {
          AddAlignedStep(rk, k->aligned_steps()->Get(i), k->aligned_costs()->Get(i));
        }
      }
      r.ranks[rk.rank] = std::move(rk);
    }
  }
  if (bd->metrics()) {
    for (const fb::BSeries* s : *bd->metrics()) {
      auto& series = r.metrics[Str(s->key())];
      if (!s->points()) continue;
      for (const fb::BMetricPoint* p : *s->points()) {
        if (p->rule() >= rule_map.size() || rule_map[p->rule()] < 0) continue;
        MetricPoint mp{p->rank(), p->step(), p->time_us(), p->value(), static_cast<uint32_t>(rule_map[p->rule()]), 0};
        // The line of the point, when the bundle names one this ruleset knows.
        if (p->line() > 0 && p->source() < r.sources.size() && p->signal() < sig_map.size() &&
            sig_map[p->signal()] >= 0) {
          mp.source = p->source();
          mp.signal = static_cast<uint32_t>(sig_map[p->signal()]);
          mp.line = p->line();
          mp.offset = p->offset();
        }
        series.push_back(mp);
      }
    }
  }
  if (bd->errors()) {
    for (const fb::BError* e : *bd->errors()) r.errors.push_back({Str(e->source()), Str(e->message()), e->code()});
  }
  if (bd->warnings()) {
    for (const fb::BError* e : *bd->warnings()) r.warnings.push_back({Str(e->source()), Str(e->message()), 0});
  }
  // Kept ranks and hosts beyond the bound are not trusted from a bundle:
  // the same cap as a scan's applies.
  if (bd->ranks_kept()) {
    for (int64_t rank : *bd->ranks_kept()) {
      if (r.distinct_ranks.kept.size() >= kMaxKeptRanks) break;
      r.distinct_ranks.kept.insert(rank);
    }
  }
  r.distinct_ranks.truncated = bd->ranks_truncated() ||
                               (bd->ranks_kept() && bd->ranks_kept()->size() > kMaxKeptRanks);
  if (bd->ranks_sketch() && bd->ranks_sketch()->size() == kSketchRegisters) {
    r.distinct_ranks.sketch.assign(bd->ranks_sketch()->begin(), bd->ranks_sketch()->end());
  }
  if (bd->hosts_kept()) {
    for (const flatbuffers::String* h : *bd->hosts_kept()) {
      if (r.distinct_hosts.kept.size() >= kMaxKeptHosts) break;
      r.distinct_hosts.kept.insert(Str(h));
    }
  }
  r.distinct_hosts.truncated = bd->hosts_truncated() ||
                               (bd->hosts_kept() && bd->hosts_kept()->size() > kMaxKeptHosts);
  if (bd->hosts_sketch() && bd->hosts_sketch()->size() == kSketchRegisters) {
    r.distinct_hosts.sketch.assign(bd->hosts_sketch()->begin(), bd->hosts_sketch()->end());
  }
  r.topology_truncated = bd->topology_truncated();
  r.metric_series_truncated = bd->metric_series_truncated();
  r.metric_points = bd->metric_points();
  if (bd->devices()) {
    for (const fb::BDevice* d : *bd->devices()) {
      r.devices.push_back({Str(d->host()), d->rank(), d->cuda_dev(), Str(d->bus_id()), d->nranks(), d->global()});
    }
  }
  if (bd->pids()) {
    for (const fb::BPid* p : *bd->pids()) {
      r.pids.push_back({Str(p->host()), p->pid(), p->rank(), p->local_rank()});
    }
  }
  if (bd->nics()) {
    for (const fb::BNic* n : *bd->nics()) {
      r.nics.push_back({Str(n->host()), n->pid(), n->rank(), n->index(), Str(n->hca()), Str(n->pci()), n->sends(),
                        Str(n->netdev())});
    }
  }
  if (bd->host_aliases()) {
    for (const fb::BHostAlias* a : *bd->host_aliases()) {
      r.host_aliases.push_back({Str(a->alias()), Str(a->host())});
    }
  }
  if (bd->sync_points()) {
    for (const fb::BSync* p : *bd->sync_points()) r.sync_points.push_back({Str(p->key()), Str(p->host()), p->rank(), p->time_us()});
  }
  if (bd->rule_stats()) {
    for (const fb::BRuleStats* st : *bd->rule_stats()) {
      if (st->rule() >= rule_map.size() || rule_map[st->rule()] < 0) continue;
      RuleStats& rst = r.rule_stats[static_cast<uint32_t>(rule_map[st->rule()])];
      rst.count = st->count();
      if (st->ranks()) for (const auto* c : *st->ranks()) rst.ranks[c->rank()] = c->count();
      if (st->hosts()) for (const auto* c : *st->hosts()) rst.hosts[Str(c->host())] = c->count();
      if (st->min_seq_ranks() && st->min_seq_values() &&
          st->min_seq_ranks()->size() == st->min_seq_values()->size()) {
        for (flatbuffers::uoffset_t i = 0; i < st->min_seq_ranks()->size(); ++i) {
          rst.rank_min_seq[st->min_seq_ranks()->Get(i)] = st->min_seq_values()->Get(i);
        }
      }
      rst.first_time_us = st->first_time_us();
      rst.last_time_us = st->last_time_us();
    }
  }
  if (bd->signal_hits()) {
    for (const fb::BCount* c : *bd->signal_hits()) {
      if (c->index() < sig_map.size() && sig_map[c->index()] >= 0) r.signal_hits[static_cast<uint32_t>(sig_map[c->index()])] += c->count();
    }
  }
  if (bd->dropped()) {
    for (const fb::BCount* c : *bd->dropped()) {
      if (c->index() < rule_map.size() && rule_map[c->index()] >= 0) r.dropped[static_cast<uint32_t>(rule_map[c->index()])] += c->count();
    }
  }
}

// Times a scan can produce (year 9999 is 2.5e17 us) with room for the sums
// and differences the merge and correlator take, far from int64 overflow.
constexpr int64_t kMaxAbsTimeUs = 400'000'000'000'000'000;
constexpr size_t kMaxReservoir = 512;  // scan.cc's step-time reservoir

bool TimeOk(int64_t t) { return t == kNoTime || (t >= -kMaxAbsTimeUs && t <= kMaxAbsTimeUs); }
bool DeltaOk(int64_t d) { return d >= -kMaxAbsTimeUs && d <= kMaxAbsTimeUs; }

// What a scanner writes: valid UTF-8 (evidence.h), checked here because a
// report prints it into JSON as is.
std::string_view View(const flatbuffers::String* s) { return s ? s->string_view() : std::string_view(); }

// Everything the reader, the merge and the correlator take on trust: indexes
// into the bundle's own tables, counts that must agree, times and numbers the
// arithmetic downstream assumes sane, text the report prints. FlatBuffers
// verification only proves the buffer is well formed; a bundle that crossed
// machines may still have been damaged or forged. Returns what is wrong,
// naming the field ("evidence[3].source ..."), or "" when nothing is.
std::string CheckBundle(const fb::Bundle& bd) {
  const size_t n_rules = bd.rules() ? bd.rules()->size() : 0;
  const size_t n_signals = bd.signals() ? bd.signals()->size() : 0;
  const size_t n_sources = bd.sources() ? bd.sources()->size() : 0;
  if (bd.sources()) {
    for (flatbuffers::uoffset_t i = 0; i < n_sources; ++i) {
      const fb::BSource* s = bd.sources()->Get(i);
      const std::string at = StrCat("sources[", i, "].");
      if (s->range_end() < s->range_begin()) {
        return StrCat(at, "range_end ", s->range_end(), " is before range_begin ", s->range_begin());
      }
      if (!TimeOk(s->first_time_us())) return StrCat(at, "first_time_us ", s->first_time_us(), " is out of range");
      if (!TimeOk(s->last_time_us())) return StrCat(at, "last_time_us ", s->last_time_us(), " is out of range");
      if (!TimeOk(s->dated_us())) return StrCat(at, "dated_us ", s->dated_us(), " is out of range");
      if (s->has_anchor() && !DeltaOk(s->anchor_us())) return StrCat(at, "anchor_us ", s->anchor_us(), " is out of range");
      if (!DeltaOk(s->unanchored_delta_us())) {
        return StrCat(at, "unanchored_delta_us ", s->unanchored_delta_us(), " is out of range");
      }
      if (s->last_time_offset() < -1) return StrCat(at, "last_time_offset ", s->last_time_offset(), " is negative");
    }
  }
  uint64_t hits = 0;
  if (bd.signal_hits()) {
    for (flatbuffers::uoffset_t i = 0; i < bd.signal_hits()->size(); ++i) {
      const fb::BCount* c = bd.signal_hits()->Get(i);
      if (c->index() >= n_signals) {
        return StrCat("signal_hits[", i, "].index ", c->index(), " is not a signal of the bundle (", n_signals,
                      " signals)");
      }
      if (__builtin_add_overflow(hits, c->count(), &hits)) return StrCat("signal_hits[", i, "].count overflows");
    }
  }
  if (hits != bd.matches()) return StrCat("matches ", bd.matches(), " is not the sum of signal_hits (", hits, ")");
  for (const auto& [name, sketch] : {std::pair{"ranks_sketch", bd.ranks_sketch()}, {"hosts_sketch", bd.hosts_sketch()}}) {
    if (!sketch || sketch->size() == 0) continue;
    if (sketch->size() != kSketchRegisters) {
      return StrCat(name, " has ", sketch->size(), " registers (", kSketchRegisters, " or none)");
    }
    for (uint8_t r : *sketch) {
      if (r > 64 - kSketchBits + 1) return StrCat(name, " has a register of ", static_cast<unsigned>(r), " (at most ", 64 - kSketchBits + 1, ")");
    }
  }
  if (bd.hosts_kept()) {
    for (flatbuffers::uoffset_t i = 0; i < bd.hosts_kept()->size(); ++i) {
      if (!IsValidUtf8(View(bd.hosts_kept()->Get(i)))) return StrCat("hosts_kept[", i, "] is not valid UTF-8");
    }
  }
  const size_t n_evidence = bd.evidence() ? bd.evidence()->size() : 0;
  if (n_evidence > bd.matches()) {
    return StrCat("evidence has ", n_evidence, " records but matches is ", bd.matches());
  }
  for (flatbuffers::uoffset_t i = 0; i < n_evidence; ++i) {
    const fb::BEvidence* e = bd.evidence()->Get(i);
    const std::string at = StrCat("evidence[", i, "].");
    if (e->source() >= n_sources) {
      return StrCat(at, "source ", e->source(), " is not a source of the bundle (", n_sources, " sources)");
    }
    if (e->rule() >= n_rules) return StrCat(at, "rule ", e->rule(), " is not a rule of the bundle (", n_rules, " rules)");
    if (e->signal() >= n_signals) {
      return StrCat(at, "signal ", e->signal(), " is not a signal of the bundle (", n_signals, " signals)");
    }
    const std::string_view rule = View(bd.rules()->Get(e->rule()));
    const std::string_view sig = View(bd.signals()->Get(e->signal()));
    if (sig.size() <= rule.size() || sig.substr(0, rule.size()) != rule || sig[rule.size()] != '/') {
      return StrCat(at, "signal '", sig, "' is not a signal of its rule '", rule, "'");
    }
    if (e->time_source() > static_cast<uint8_t>(TimeSource::kMonotonicAnchored)) {
      return StrCat(at, "time_source ", static_cast<unsigned>(e->time_source()), " is not a time source");
    }
    if (e->line() == 0) return StrCat(at, "line is 0 (lines count from 1)");
    if (!TimeOk(e->time_us())) return StrCat(at, "time_us ", e->time_us(), " is out of range");
    if (e->has_monotonic() && !std::isfinite(e->monotonic_s())) return StrCat(at, "monotonic_s is not finite");
    if (!DeltaOk(e->prev_delta_us())) return StrCat(at, "prev_delta_us ", e->prev_delta_us(), " is out of range");
    const std::string_view text = View(e->text());
    if (text.size() > kMaxEvidenceText) {
      return StrCat(at, "text is ", text.size(), " bytes (at most ", kMaxEvidenceText, ")");
    }
    if (!IsValidUtf8(text)) return StrCat(at, "text is not valid UTF-8");
    if (e->fields()) {
      for (flatbuffers::uoffset_t k = 0; k < e->fields()->size(); ++k) {
        const fb::BField* f = e->fields()->Get(k);
        if (View(f->value()).size() > kMaxEvidenceText || !IsValidUtf8(View(f->value())) || !IsValidUtf8(View(f->key()))) {
          return StrCat(at, "fields[", k, "] is not valid UTF-8 of at most ", kMaxEvidenceText, " bytes");
        }
      }
    }
    if (!IsValidUtf8(View(e->host())) || !IsValidUtf8(View(e->gpu()))) return StrCat(at, "host or gpu is not valid UTF-8");
  }
  if (!ElementsAligned(bd.ranks_kept())) return "ranks_kept is not aligned to its 8-byte elements";
  if (bd.rule_stats()) {
    for (flatbuffers::uoffset_t i = 0; i < bd.rule_stats()->size(); ++i) {
      const fb::BRuleStats* st = bd.rule_stats()->Get(i);
      if (!ElementsAligned(st->min_seq_ranks()) || !ElementsAligned(st->min_seq_values())) {
        return StrCat("rule_stats[", i, "].min_seq_ranks or min_seq_values is not aligned to its 8-byte elements");
      }
    }
  }
  if (bd.ranks()) {
    for (flatbuffers::uoffset_t i = 0; i < bd.ranks()->size(); ++i) {
      const fb::BRank* k = bd.ranks()->Get(i);
      const std::string at = StrCat("ranks[", i, "].");
      if (!ElementsAligned(k->reservoir()) || !ElementsAligned(k->reservoir_keys()) ||
          !ElementsAligned(k->throughput_reservoir()) || !ElementsAligned(k->throughput_keys()) ||
          !ElementsAligned(k->aligned_steps()) || !ElementsAligned(k->aligned_costs())) {
        return StrCat(at, "a vector of 8-byte values is not aligned to them");
      }
      if (!TimeOk(k->first_progress_us()) || !TimeOk(k->last_progress_us())) {
        return StrCat(at, "progress time is out of range");
      }
      if (!std::isfinite(k->step_time_sum()) || !std::isfinite(k->step_time_sumsq())) {
        return StrCat(at, "step_time_sum is not finite");
      }
      if (k->reservoir()) {
        if (k->reservoir()->size() > kMaxReservoir) {
          return StrCat(at, "reservoir has ", k->reservoir()->size(), " samples (at most ", kMaxReservoir, ")");
        }
        for (double x : *k->reservoir()) {
          if (!std::isfinite(x)) return StrCat(at, "reservoir has a sample that is not finite");
        }
      }
      if (k->throughput_reservoir()) {
        if (k->throughput_reservoir()->size() > kMaxReservoir) {
          return StrCat(at, "throughput_reservoir has ", k->throughput_reservoir()->size(), " samples (at most ",
                        kMaxReservoir, ")");
        }
        for (double x : *k->throughput_reservoir()) {
          if (!std::isfinite(x)) return StrCat(at, "throughput_reservoir has a sample that is not finite");
        }
      }
      if (k->aligned_costs()) {
        if (k->aligned_costs()->size() > kAlignedSteps) {
          return StrCat(at, "aligned_costs has ", k->aligned_costs()->size(), " steps (at most ", kAlignedSteps, ")");
        }
        for (double x : *k->aligned_costs()) {
          if (!std::isfinite(x)) return StrCat(at, "aligned_costs has a value that is not finite");
        }
      }
    }
  }
  if (bd.metrics()) {
    for (flatbuffers::uoffset_t i = 0; i < bd.metrics()->size(); ++i) {
      const fb::BSeries* s = bd.metrics()->Get(i);
      if (!s->points()) continue;
      for (flatbuffers::uoffset_t j = 0; j < s->points()->size(); ++j) {
        const fb::BMetricPoint* p = s->points()->Get(j);
        const std::string at = StrCat("metrics[", i, "].points[", j, "].");
        if (p->rule() >= n_rules) return StrCat(at, "rule ", p->rule(), " is not a rule of the bundle (", n_rules, " rules)");
        if (!TimeOk(p->time_us())) return StrCat(at, "time_us ", p->time_us(), " is out of range");
        if (!std::isfinite(p->value())) return StrCat(at, "value is not finite");
      }
    }
  }
  if (bd.sync_points()) {
    for (flatbuffers::uoffset_t i = 0; i < bd.sync_points()->size(); ++i) {
      if (!TimeOk(bd.sync_points()->Get(i)->time_us())) return StrCat("sync_points[", i, "].time_us is out of range");
    }
  }
  if (bd.rule_stats()) {
    for (flatbuffers::uoffset_t i = 0; i < bd.rule_stats()->size(); ++i) {
      const fb::BRuleStats* st = bd.rule_stats()->Get(i);
      const std::string at = StrCat("rule_stats[", i, "].");
      if (st->rule() >= n_rules) return StrCat(at, "rule ", st->rule(), " is not a rule of the bundle (", n_rules, " rules)");
      const size_t nr = st->min_seq_ranks() ? st->min_seq_ranks()->size() : 0;
      const size_t nv = st->min_seq_values() ? st->min_seq_values()->size() : 0;
      if (nr != nv) return StrCat(at, "min_seq_ranks has ", nr, " entries but min_seq_values ", nv);
      if (!TimeOk(st->first_time_us()) || !TimeOk(st->last_time_us())) return StrCat(at, "time is out of range");
    }
  }
  if (bd.dropped()) {
    for (flatbuffers::uoffset_t i = 0; i < bd.dropped()->size(); ++i) {
      if (bd.dropped()->Get(i)->index() >= n_rules) {
        return StrCat("dropped[", i, "].index ", bd.dropped()->Get(i)->index(), " is not a rule of the bundle (",
                      n_rules, " rules)");
      }
    }
  }
  if (!std::isfinite(bd.seconds()) || bd.seconds() < 0) return StrCat("seconds ", bd.seconds(), " is not a duration");
  return "";
}

}  // namespace

std::string SerializeBundle(const Ruleset& rs, const ScanResult& scan) {
  FlatBufferBuilder b(1 << 16);
  std::vector<std::string> rule_ids, signal_ids;
  for (size_t i = 0; i < rs.rule_count(); ++i) rule_ids.push_back(rs.rule(i)->id()->str());
  for (uint32_t g = 0; g < rs.signal_count(); ++g) signal_ids.push_back(SignalKey(rs, g));

  std::vector<Offset<fb::BSource>> sources;
  for (const SourceSummary& s : scan.sources) {
    sources.push_back(fb::CreateBSource(b, b.CreateString(s.name), s.bytes, s.lines, s.first_time_us,
                                        s.last_time_us, s.rank, b.CreateString(s.host), s.json_lines,
                                        s.monotonic_anchor_us.has_value(), s.monotonic_anchor_us.value_or(0),
                                        s.dated_us, s.failed, s.range_begin, s.range_end,
                                        s.last_time_offset, s.first_time_inferred, s.last_time_inferred,
                                        s.unanchored_delta_us, s.kernel_log));
  }
  std::vector<Offset<fb::BEvidence>> evs;
  evs.reserve(scan.evidence.size());
  for (const Evidence& ev : scan.evidence) {
    std::vector<Offset<fb::BField>> fields;
    for (const auto& [k, v] : ev.fields) fields.push_back(fb::CreateBField(b, b.CreateString(k), b.CreateString(v)));
    evs.push_back(fb::CreateBEvidence(b, ev.source, ev.line, ev.offset, ev.time_us,
                                      static_cast<uint8_t>(ev.time_source), ev.monotonic_s.has_value(),
                                      ev.monotonic_s.value_or(0), ev.rank, ev.local_rank, ev.pid,
                                      b.CreateString(ev.host), b.CreateString(ev.gpu), ev.rule, ev.signal,
                                      b.CreateString(ev.text), b.CreateVector(fields), ev.needs_prev_time,
                                      ev.prev_delta_us, ev.dmesg_delta, ev.traceback_span,
                                      ev.year_inferred, ev.run_end));
  }
  std::vector<Offset<fb::BRank>> ranks;
  for (const auto& [rank, r] : scan.ranks) {
    std::vector<int64_t> aligned_steps;
    std::vector<double> aligned_costs;
    for (const auto& [step, cost] : AlignedBySteps(r)) {
      aligned_steps.push_back(step);
      aligned_costs.push_back(cost);
    }
    ranks.push_back(fb::CreateBRank(b, r.rank, b.CreateString(r.host), r.progress_lines, r.first_progress_us,
                                    r.last_progress_us, r.last_step, r.step_samples, r.step_time_sum,
                                    r.step_time_sumsq, b.CreateVector(r.step_time_reservoir),
                                    b.CreateVector(r.step_time_keys), r.throughput_samples,
                                    b.CreateVector(r.throughput_reservoir), b.CreateVector(r.throughput_keys),
                                    b.CreateVector(aligned_steps), b.CreateVector(aligned_costs),
                                    r.several_hosts));
  }
  std::vector<Offset<fb::BSeries>> metrics;
  for (const auto& [key, series] : scan.metrics) {
    std::vector<fb::BMetricPoint> pts;  // struct-like table: build offsets
    std::vector<Offset<fb::BMetricPoint>> po;
    for (const MetricPoint& p : series) {
      po.push_back(fb::CreateBMetricPoint(b, p.rank, p.step, p.time_us, p.value, p.rule, p.source, p.signal, p.line,
                                          p.offset));
    }
    metrics.push_back(fb::CreateBSeries(b, b.CreateString(key), b.CreateVector(po)));
  }
  std::vector<Offset<fb::BError>> errors;
  for (const InputError& e : scan.errors) {
    errors.push_back(fb::CreateBError(b, b.CreateString(e.source), b.CreateString(e.message), e.code));
  }
  std::vector<Offset<fb::BError>> warnings;
  for (const InputError& e : scan.warnings) {
    warnings.push_back(fb::CreateBError(b, b.CreateString(e.source), b.CreateString(e.message), 0));
  }
  // Sorted, so that a bundle's bytes do not depend on hashing.
  std::vector<int64_t> ranks_kept(scan.distinct_ranks.kept.begin(), scan.distinct_ranks.kept.end());
  std::sort(ranks_kept.begin(), ranks_kept.end());
  std::vector<std::string> hosts_kept(scan.distinct_hosts.kept.begin(), scan.distinct_hosts.kept.end());
  std::sort(hosts_kept.begin(), hosts_kept.end());
  std::vector<Offset<fb::BDevice>> devices;
  for (const DeviceLink& d : scan.devices) {
    devices.push_back(fb::CreateBDevice(b, b.CreateString(d.host), d.rank, d.cuda_dev, b.CreateString(d.bus_id),
                                        d.nranks, d.global));
  }
  std::vector<Offset<fb::BPid>> pids;
  for (const PidLink& p : scan.pids) {
    pids.push_back(fb::CreateBPid(b, b.CreateString(p.host), p.pid, p.rank, p.local_rank));
  }
  std::vector<Offset<fb::BNic>> nics;
  for (const NicLink& n : scan.nics) {
    nics.push_back(fb::CreateBNic(b, b.CreateString(n.host), n.pid, n.rank, n.index, b.CreateString(n.hca),
                                  b.CreateString(n.pci), n.sends, b.CreateString(n.netdev)));
  }
  std::vector<Offset<fb::BHostAlias>> aliases;
  for (const HostAlias& a : scan.host_aliases) {
    aliases.push_back(fb::CreateBHostAlias(b, b.CreateString(a.alias), b.CreateString(a.host)));
  }
  std::vector<Offset<fb::BSync>> syncs;
  for (const SyncPoint& p : scan.sync_points) {
    syncs.push_back(fb::CreateBSync(b, b.CreateString(p.key), b.CreateString(p.host), p.rank, p.time_us));
  }
  std::vector<Offset<fb::BRuleStats>> stats;
  for (const auto& [rule, st] : scan.rule_stats) {
    std::vector<Offset<fb::BRankCount>> rc;
    for (const auto& [rank, n] : st.ranks) rc.push_back(fb::CreateBRankCount(b, rank, n));
    std::vector<Offset<fb::BHostCount>> hc;
    for (const auto& [host, n] : st.hosts) hc.push_back(fb::CreateBHostCount(b, b.CreateString(host), n));
    std::vector<int64_t> sr, sv;
    for (const auto& [rank, seq] : st.rank_min_seq) {
      sr.push_back(rank);
      sv.push_back(seq);
    }
    stats.push_back(fb::CreateBRuleStats(b, rule, st.count, b.CreateVector(rc), b.CreateVector(hc),
                                         b.CreateVector(sr), b.CreateVector(sv), st.first_time_us,
                                         st.last_time_us));
  }
  std::vector<Offset<fb::BCount>> hits, dropped;
  for (const auto& [g, n] : scan.signal_hits) hits.push_back(fb::CreateBCount(b, g, n));
  for (const auto& [r, n] : scan.dropped) dropped.push_back(fb::CreateBCount(b, r, n));
  auto root = fb::CreateBundle(
      b, kBundleFormatVersion, b.CreateString(rs.name()), b.CreateString(rs.version()),
      b.CreateVectorOfStrings(rule_ids), b.CreateVectorOfStrings(signal_ids), b.CreateVector(sources),
      b.CreateVector(evs), b.CreateVector(ranks), b.CreateVector(metrics), b.CreateVector(errors),
      b.CreateVector(devices), b.CreateVector(pids), b.CreateVector(syncs), b.CreateVector(stats),
      b.CreateVector(hits), b.CreateVector(dropped), scan.bytes, scan.lines, scan.matches, scan.seconds,
      b.CreateVector(aliases), b.CreateVector(warnings), b.CreateVector(ranks_kept), scan.distinct_ranks.truncated,
      b.CreateVector(scan.distinct_ranks.sketch), b.CreateVectorOfStrings(hosts_kept),
      scan.distinct_hosts.truncated, b.CreateVector(scan.distinct_hosts.sketch), scan.topology_truncated,
      scan.metric_series_truncated, WriteFlightRecorder(b, scan.flight_recorder), b.CreateVector(nics),
      scan.metric_points);
  b.Finish(root, fb::BundleIdentifier());
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

absl::StatusOr<ScanResult> ReadBundle(const Ruleset& rs, std::string_view data, std::string_view name) {
  auto fail = [&](std::string_view why) {
    return absl::InvalidArgumentError(StrCat(name, ": not a valid evidence bundle: ", why));
  };
  if (data.size() < 8 || !flatbuffers::BufferHasIdentifier(data.data(), fb::BundleIdentifier())) {
    return fail("wrong file identifier (expected FLEB)");
  }
  // The buffer at 8-byte alignment, as FlatBufferBuilder wrote it: a
  // bundle passed at another address (a C caller's bytes, a slice of a
  // larger read) is read from an aligned copy, so that its vectors' 8-byte
  // elements load where they were written (ElementsAligned).
  std::unique_ptr<uint64_t[]> aligned;
  if (reinterpret_cast<uintptr_t>(data.data()) % alignof(uint64_t) != 0) {
    aligned = std::make_unique_for_overwrite<uint64_t[]>((data.size() + 7) / 8);
    std::memcpy(aligned.get(), data.data(), data.size());
    data = std::string_view(reinterpret_cast<const char*>(aligned.get()), data.size());
  }
  flatbuffers::Verifier v(reinterpret_cast<const uint8_t*>(data.data()), data.size(), 64, 100'000'000);
  if (!fb::VerifyBundleBuffer(v)) return fail("FlatBuffers verification failed");
  const fb::Bundle* bd = fb::GetBundle(data.data());
  if (bd->format_version() < kOldestBundleFormatVersion || bd->format_version() > kBundleFormatVersion) {
    return absl::FailedPreconditionError(
        StrCat(name, ": bundle format version ", bd->format_version(), " is not supported (this library reads ",
               kOldestBundleFormatVersion, " to ", kBundleFormatVersion, ")"));
  }
  if (std::string why = CheckBundle(*bd); !why.empty()) return fail(why);
  if (std::string why = CheckFlightRecorder(*bd); !why.empty()) return fail(why);
  // Rules and signals by id onto this ruleset.
  std::vector<int64_t> rule_map, sig_map;
  if (bd->rules()) {
    for (const auto* id : *bd->rules()) rule_map.push_back(rs.FindRule(id->string_view()));
  }
  std::map<std::string, uint32_t> sig_index;
  for (uint32_t g = 0; g < rs.signal_count(); ++g) sig_index.emplace(SignalKey(rs, g), g);
  if (bd->signals()) {
    for (const auto* id : *bd->signals()) {
      auto it = sig_index.find(id->str());
      sig_map.push_back(it == sig_index.end() ? -1 : static_cast<int64_t>(it->second));
    }
  }
  ScanResult r;
  ReadSources(bd, r);
  ReadEvidence(rs, bd, rule_map, sig_map, name, r);
  ReadStatistics(bd, rule_map, sig_map, r);
  r.flight_recorder = ReadFlightRecorder(*bd);
  r.bytes = bd->bytes();
  r.lines = bd->lines();
  r.matches = bd->matches();
  r.seconds = bd->seconds();
  if (!bd->ranks_kept() && !bd->hosts_kept()) {
    // A bundle from before the bound: its ranks and hosts are those its
    // statistics name (sorted, so the admission order is fixed).
    std::set<int64_t> ranks;
    std::set<std::string> hosts;
    for (const auto& [rule, st] : r.rule_stats) {
      for (const auto& [rank, n] : st.ranks) ranks.insert(rank);
      for (const auto& [host, n] : st.hosts) hosts.insert(host);
    }
    for (const auto& [rank, sum] : r.ranks) {
      if (rank >= 0) ranks.insert(rank);
    }
    for (int64_t rank : ranks) Admit(r.distinct_ranks, rank);
    for (const std::string& host : hosts) Admit(r.distinct_hosts, host);
  }
  return r;
}

ScanResult MergeScans(const Ruleset& rs, std::vector<ScanResult> parts, EvidenceCaps caps) {
  ScanResult out;
  std::map<std::string, uint32_t> source_index;
  std::set<std::tuple<std::string, int64_t, std::string, int64_t, bool>> device_seen;
  std::set<std::pair<std::string, int64_t>> pid_seen;
  std::set<std::tuple<std::string, int64_t, int64_t, int64_t, std::string, std::string, bool, std::string>> nic_seen;
  std::set<std::string> alias_seen;
  for (ScanResult& p : parts) {
    // Sources: a new one, or the next byte range of one already seen, whose
    // evidence then inherits the time the ranges before it ended on.
    std::vector<uint32_t> map(p.sources.size());
    std::vector<TimeCarry> carry(p.sources.size());
    for (size_t i = 0; i < p.sources.size(); ++i) {
      SourceSummary& s = p.sources[i];
      auto [it, fresh] = source_index.emplace(s.name, static_cast<uint32_t>(out.sources.size()));
      map[i] = it->second;
      if (fresh) {
        out.sources.push_back(s);
        continue;
      }
      SourceSummary& m = out.sources[it->second];
      carry[i] = TimeCarry::AtEndOf(m);
      m.lines += s.lines;
      AppendFollowing(m, s);
    }
    for (Evidence& ev : p.evidence) {
      carry[ev.source].Give(ev);
      ev.source = map[ev.source];
      out.evidence.push_back(std::move(ev));
    }
    for (auto& [rank, r] : p.ranks) {
      auto [it, fresh] = out.ranks.emplace(rank, r);
      if (!fresh) MergeFrom(it->second, r);
    }
    for (auto& [key, series] : p.metrics) {
      auto& m = out.metrics[key];
      for (MetricPoint& mp : series) {
        if (mp.source < map.size()) mp.source = map[mp.source];
      }
      m.insert(m.end(), series.begin(), series.end());
    }
    for (auto& d : p.flight_recorder) out.flight_recorder.push_back(std::move(d));
    for (InputError& e : p.errors) out.errors.push_back(std::move(e));
    for (InputError& e : p.warnings) out.warnings.push_back(std::move(e));
    MergeFrom(out.distinct_ranks, p.distinct_ranks);
    MergeFrom(out.distinct_hosts, p.distinct_hosts);
    out.topology_truncated = out.topology_truncated || p.topology_truncated;
    out.metric_series_truncated = out.metric_series_truncated || p.metric_series_truncated;
    for (DeviceLink& d : p.devices) {
      if (out.devices.size() >= kMaxTopologyRecords) {
        out.topology_truncated = true;
        break;
      }
      if (device_seen.emplace(d.host, d.rank, d.bus_id, d.nranks, d.global).second) out.devices.push_back(std::move(d));
    }
    for (PidLink& l : p.pids) {
      if (out.pids.size() >= kMaxTopologyRecords) {
        out.topology_truncated = true;
        break;
      }
      if (pid_seen.emplace(l.host, l.pid).second) out.pids.push_back(std::move(l));
    }
    for (NicLink& n : p.nics) {
      if (out.nics.size() >= kMaxTopologyRecords) {
        out.topology_truncated = true;
        break;
      }
      if (nic_seen.emplace(n.host, n.pid, n.rank, n.index, n.hca, n.pci, n.sends, n.netdev).second) out.nics.push_back(std::move(n));
    }
    for (HostAlias& a : p.host_aliases) {
      if (alias_seen.insert(a.alias).second) out.host_aliases.push_back(std::move(a));
    }
    for (SyncPoint& sp : p.sync_points) {
      if (out.sync_points.size() >= kMaxTopologyRecords) {
        out.topology_truncated = true;
        break;
      }
      out.sync_points.push_back(std::move(sp));
    }
    for (auto& [rule, st] : p.rule_stats) MergeFrom(out.rule_stats[rule], st);
    for (auto& [g, n] : p.signal_hits) out.signal_hits[g] += n;
    for (auto& [r, n] : p.dropped) out.dropped[r] += n;
    out.bytes += p.bytes;
    out.lines += p.lines;
    out.matches += p.matches;
    out.metric_points += p.metric_points;
    out.seconds = std::max(out.seconds, p.seconds);
  }
  // Per-rank and per-host breakdowns only for the ranks and hosts kept in
  // the merge: each part kept its own first ones, and together they may
  // name more.
  if (out.distinct_ranks.truncated || out.distinct_hosts.truncated) {
    const auto& kr = out.distinct_ranks.kept;
    const auto& kh = out.distinct_hosts.kept;
    for (auto& [rule, st] : out.rule_stats) {
      std::erase_if(st.ranks, [&](const auto& e) { return !kr.contains(e.first); });
      std::erase_if(st.rank_min_seq, [&](const auto& e) { return !kr.contains(e.first); });
      std::erase_if(st.hosts, [&](const auto& e) { return !kh.contains(e.first); });
    }
    std::erase_if(out.ranks, [&](const auto& e) { return e.first >= 0 && !kr.contains(e.first); });
  }
  std::stable_sort(out.evidence.begin(), out.evidence.end(), [](const Evidence& a, const Evidence& b) {
    return a.source != b.source ? a.source < b.source : a.offset < b.offset;
  });
  // The caps again, over each whole source: every part kept the first and
  // last records of its own bytes, which include those of the source, so
  // this keeps what one scan of the source keeps. One scan keeps each
  // rank's last progress line; the parts each kept theirs.
  // Untimed, it also keeps the last line of each run before the rank's step
  // goes back (Evidence::run_end), which the merge keeps as well.
  std::map<int64_t, size_t> last_progress;
  for (size_t i = 0; i < out.evidence.size(); ++i) {
    if (rs.signal(out.evidence[i].signal).role == SignalRole::Progress) last_progress[out.evidence[i].rank] = i;
  }
  std::vector<Evidence> kept, progress;
  kept.reserve(out.evidence.size());
  EvidenceKeeper keeper(caps);
  for (size_t i = 0; i < out.evidence.size(); ++i) {
    Evidence& ev = out.evidence[i];
    if (i > 0 && ev.source != out.evidence[i - 1].source) keeper.TakeInto(kept);
    if (rs.signal(ev.signal).role == SignalRole::Progress) {
      if (last_progress[ev.rank] == i || ev.run_end) progress.push_back(std::move(ev));
      continue;
    }
    keeper.Add(std::move(ev), out.dropped);
  }
  keeper.TakeInto(kept);
  // After the capped records, as Scanner::Finish adds them.
  for (Evidence& ev : progress) kept.push_back(std::move(ev));
  std::stable_sort(kept.begin(), kept.end(), [](const Evidence& a, const Evidence& b) {
    return a.source != b.source ? a.source < b.source : a.offset < b.offset;
  });
  out.evidence = std::move(kept);
  FinalizeTimes(out);
  return out;
}

}  // namespace faultline
