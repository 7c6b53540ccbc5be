#include "evidence/bundle_flightrec.h"

#include <algorithm>

#include "util/strings.h"
#include "util/utf8.h"

namespace faultline {
namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;
using flatbuffers::String;
using flatbuffers::Vector;
using flightrec::FrDump;
using flightrec::FrEntry;

std::string Str(const String* s) { return s ? s->str() : std::string(); }

Offset<Vector<Offset<fb::BFrSizes>>> WriteSizes(FlatBufferBuilder& b,
                                                 const std::vector<std::vector<int64_t>>& sizes) {
  std::vector<Offset<fb::BFrSizes>> out;
  for (const auto& dims : sizes) out.push_back(fb::CreateBFrSizes(b, b.CreateVector(dims)));
  return b.CreateVector(out);
}

Offset<fb::BFrEntry> WriteEntry(FlatBufferBuilder& b, const FrEntry& e) {
  auto pg_name = b.CreateString(e.pg_name), pg_desc = b.CreateString(e.pg_desc);
  auto profiling = b.CreateString(e.profiling_name), op = b.CreateString(e.op), state = b.CreateString(e.state);
  auto in_sizes = WriteSizes(b, e.input_sizes), out_sizes = WriteSizes(b, e.output_sizes);
  auto in_dtypes = b.CreateVectorOfStrings(e.input_dtypes), out_dtypes = b.CreateVectorOfStrings(e.output_dtypes);
  auto thread = b.CreateString(e.thread_name);
  fb::BFrEntryBuilder eb(b);
  eb.add_record_id(e.record_id);
  eb.add_pg_id(e.pg_id);
  eb.add_pg_name(pg_name);
  eb.add_pg_desc(pg_desc);
  eb.add_collective_seq_id(e.collective_seq_id);
  eb.add_p2p_seq_id(e.p2p_seq_id);
  eb.add_op_id(e.op_id);
  eb.add_profiling_name(profiling);
  eb.add_op(op);
  eb.add_is_p2p(e.is_p2p);
  eb.add_state(state);
  eb.add_input_sizes(in_sizes);
  eb.add_output_sizes(out_sizes);
  eb.add_input_dtypes(in_dtypes);
  eb.add_output_dtypes(out_dtypes);
  eb.add_time_created_ns(e.time_created_ns);
  eb.add_has_started_ns(e.time_discovered_started_ns.has_value());
  eb.add_started_ns(e.time_discovered_started_ns.value_or(0));
  eb.add_has_completed_ns(e.time_discovered_completed_ns.has_value());
  eb.add_completed_ns(e.time_discovered_completed_ns.value_or(0));
  eb.add_has_duration_ms(e.duration_ms.has_value());
  eb.add_duration_ms(e.duration_ms.value_or(0));
  eb.add_has_timeout_ms(e.timeout_ms.has_value());
  eb.add_timeout_ms(e.timeout_ms.value_or(0));
  eb.add_retired(e.retired);
  eb.add_thread_name(thread);
  return eb.Finish();
}

Offset<fb::BFrDump> WriteDump(FlatBufferBuilder& b, const FrDump& d) {
  std::vector<Offset<fb::BFrGroup>> groups;
  for (const auto& g : d.groups) {
    groups.push_back(fb::CreateBFrGroup(b, b.CreateString(g.name), b.CreateString(g.desc), b.CreateVector(g.ranks)));
  }
  std::vector<Offset<fb::BFrPgStatus>> status;
  for (const auto& s : d.pg_status) {
    status.push_back(fb::CreateBFrPgStatus(b, s.pg_id, s.last_enqueued, s.last_started, s.last_completed));
  }
  std::vector<Offset<fb::BFrEntry>> entries;
  for (const FrEntry& e : d.entries) entries.push_back(WriteEntry(b, e));
  return fb::CreateBFrDump(b, b.CreateString(d.source), static_cast<uint8_t>(d.format), b.CreateString(d.version),
                           d.version_major, d.version_minor, b.CreateString(d.comm_lib_version), d.rank,
                           static_cast<uint8_t>(d.rank_source), b.CreateVector(groups), b.CreateVector(status),
                           b.CreateVector(entries), d.wrapped);
}

std::vector<std::vector<int64_t>> ReadSizes(const Vector<Offset<fb::BFrSizes>>* v) {
  std::vector<std::vector<int64_t>> out;
  if (!v) return out;
  for (const fb::BFrSizes* s : *v) {
    out.emplace_back();
    if (s->dims()) out.back().assign(s->dims()->begin(), s->dims()->end());
  }
  return out;
}

std::vector<std::string> ReadStrings(const Vector<Offset<String>>* v) {
  std::vector<std::string> out;
  if (v) {
    for (const String* s : *v) out.push_back(Str(s));
  }
  return out;
}

FrEntry ReadEntry(const fb::BFrEntry& e) {
  FrEntry r;
  r.record_id = e.record_id();
  r.pg_id = e.pg_id();
  r.pg_name = Str(e.pg_name());
  r.pg_desc = Str(e.pg_desc());
  r.collective_seq_id = e.collective_seq_id();
  r.p2p_seq_id = e.p2p_seq_id();
  r.op_id = e.op_id();
  r.profiling_name = Str(e.profiling_name());
  r.op = Str(e.op());
  r.is_p2p = e.is_p2p();
  r.state = Str(e.state());
  r.input_sizes = ReadSizes(e.input_sizes());
  r.output_sizes = ReadSizes(e.output_sizes());
  r.input_dtypes = ReadStrings(e.input_dtypes());
  r.output_dtypes = ReadStrings(e.output_dtypes());
  r.time_created_ns = e.time_created_ns();
  if (e.has_started_ns()) r.time_discovered_started_ns = e.started_ns();
  if (e.has_completed_ns()) r.time_discovered_completed_ns = e.completed_ns();
  if (e.has_duration_ms()) r.duration_ms = e.duration_ms();
  if (e.has_timeout_ms()) r.timeout_ms = e.timeout_ms();
  r.retired = e.retired();
  r.thread_name = Str(e.thread_name());
  return r;
}

// The first of `v`'s strings that is not valid UTF-8, or -1.
int64_t BadString(const Vector<Offset<String>>* v) {
  if (!v) return -1;
  for (flatbuffers::uoffset_t i = 0; i < v->size(); ++i) {
    if (!IsValidUtf8(v->Get(i)->string_view())) return i;
  }
  return -1;
}

bool Utf8(const String* s) { return !s || IsValidUtf8(s->string_view()); }

std::string CheckEntry(const fb::BFrEntry& e, const std::string& at) {
  for (auto [name, s] : {std::pair{"pg_name", e.pg_name()}, {"pg_desc", e.pg_desc()},
                         {"profiling_name", e.profiling_name()}, {"op", e.op()}, {"state", e.state()},
                         {"thread_name", e.thread_name()}}) {
    if (!Utf8(s)) return StrCat(at, name, " is not valid UTF-8");
  }
  for (auto [name, v] : {std::pair{"input_dtypes", e.input_dtypes()}, {"output_dtypes", e.output_dtypes()}}) {
    if (int64_t k = BadString(v); k >= 0) return StrCat(at, name, "[", k, "] is not valid UTF-8");
  }
  for (auto [name, v] : {std::pair{"input_sizes", e.input_sizes()}, {"output_sizes", e.output_sizes()}}) {
    if (!v) continue;
    for (flatbuffers::uoffset_t k = 0; k < v->size(); ++k) {
      if (!ElementsAligned(v->Get(k)->dims())) {
        return StrCat(at, name, "[", k, "].dims is not aligned to its 8-byte elements");
      }
    }
  }
  if (e.has_duration_ms() && !(e.duration_ms() >= 0 && e.duration_ms() < 1e15)) {
    return StrCat(at, "duration_ms is out of range");
  }
  return "";
}

std::string CheckDump(const fb::BFrDump& d, const std::string& at) {
  if (d.format() > static_cast<uint8_t>(flightrec::DumpFormat::kJson)) {
    return StrCat(at, "format ", static_cast<unsigned>(d.format()), " is not a dump format");
  }
  if (d.rank_source() > static_cast<uint8_t>(flightrec::RankSource::kFileName)) {
    return StrCat(at, "rank_source ", static_cast<unsigned>(d.rank_source()), " is not a rank source");
  }
  if (d.rank() < -1) return StrCat(at, "rank ", d.rank(), " is negative");
  for (auto [name, s] : {std::pair{"source", d.source()}, {"version", d.version()},
                         {"comm_lib_version", d.comm_lib_version()}}) {
    if (!Utf8(s)) return StrCat(at, name, " is not valid UTF-8");
  }
  if (d.groups()) {
    for (flatbuffers::uoffset_t i = 0; i < d.groups()->size(); ++i) {
      const fb::BFrGroup* g = d.groups()->Get(i);
      const std::string gat = StrCat(at, "groups[", i, "].");
      if (!Utf8(g->name()) || !Utf8(g->desc())) return StrCat(gat, "name or desc is not valid UTF-8");
      if (!ElementsAligned(g->ranks())) return StrCat(gat, "ranks is not aligned to its 8-byte elements");
      if (g->ranks()) {
        for (int64_t r : *g->ranks()) {
          if (r < 0) return StrCat(gat, "ranks holds ", r, ", a negative rank");
        }
      }
    }
  }
  if (d.entries()) {
    for (flatbuffers::uoffset_t i = 0; i < d.entries()->size(); ++i) {
      if (std::string why = CheckEntry(*d.entries()->Get(i), StrCat(at, "entries[", i, "].")); !why.empty()) {
        return why;
      }
    }
  }
  return "";
}

}  // namespace

Offset<Vector<Offset<fb::BFrDump>>> WriteFlightRecorder(FlatBufferBuilder& b, const std::vector<FrDump>& dumps) {
  std::vector<Offset<fb::BFrDump>> out;
  for (const FrDump& d : dumps) out.push_back(WriteDump(b, d));
  return b.CreateVector(out);
}

std::string CheckFlightRecorder(const fb::Bundle& bd) {
  if (!bd.flight_recorder()) return "";
  for (flatbuffers::uoffset_t i = 0; i < bd.flight_recorder()->size(); ++i) {
    std::string why = CheckDump(*bd.flight_recorder()->Get(i), StrCat("flight_recorder[", i, "]."));
    if (!why.empty()) return why;
  }
  return "";
}

std::vector<FrDump> ReadFlightRecorder(const fb::Bundle& bd) {
  std::vector<FrDump> out;
  if (!bd.flight_recorder()) return out;
  for (const fb::BFrDump* d : *bd.flight_recorder()) {
    FrDump r;
    r.source = Str(d->source());
    r.format = static_cast<flightrec::DumpFormat>(d->format());
    r.version = Str(d->version());
    r.version_major = d->version_major();
    r.version_minor = d->version_minor();
    r.comm_lib_version = Str(d->comm_lib_version());
    r.rank = d->rank();
    r.rank_source = static_cast<flightrec::RankSource>(d->rank_source());
    if (d->groups()) {
      for (const fb::BFrGroup* g : *d->groups()) {
        flightrec::FrGroup& fg = r.groups.emplace_back();
        fg.name = Str(g->name());
        fg.desc = Str(g->desc());
        if (g->ranks()) fg.ranks.assign(g->ranks()->begin(), g->ranks()->end());
        std::sort(fg.ranks.begin(), fg.ranks.end());  // as the parser leaves them
      }
    }
    if (d->pg_status()) {
      for (const fb::BFrPgStatus* s : *d->pg_status()) {
        r.pg_status.push_back({s->pg_id(), s->last_enqueued(), s->last_started(), s->last_completed()});
      }
    }
    if (d->entries()) {
      for (const fb::BFrEntry* e : *d->entries()) r.entries.push_back(ReadEntry(*e));
    }
    r.wrapped = d->wrapped();
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace faultline
