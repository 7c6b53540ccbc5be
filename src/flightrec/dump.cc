#include "flightrec/dump.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "util/strings.h"
#include "flightrec/pickle.h"
#include "simdjson.h"
#include "util/status_macros.h"

namespace faultline::flightrec {

const char* DumpFormatName(DumpFormat f) { return f == DumpFormat::kJson ? "json" : "pickle"; }

const char* RankSourceName(RankSource s) {
  switch (s) {
    case RankSource::kUnknown: return "unknown";
    case RankSource::kGroupMembership: return "group-membership";
    case RankSource::kP2pName: return "p2p-name";
    case RankSource::kFileName: return "file-name";
  }
  return "?";
}

const FrGroup* FrDump::FindGroup(std::string_view name) const {
  for (const FrGroup& g : groups) {
    if (g.name == name) return &g;
  }
  return nullptr;
}

DumpSniff SniffFlightRecorderDump(std::string_view head) {
  head = head.substr(0, kSniffBytes);
  auto names_keys = [&] {
    return head.find("pg_config") != std::string_view::npos ||
           head.find("collective_seq_id") != std::string_view::npos;
  };
  if (LooksLikeBinaryPickle(head) || LooksLikeUnframedPickle(head)) {
    return names_keys() ? DumpSniff::kPickle : DumpSniff::kNo;
  }
  size_t i = head.find_first_not_of(" \t\r\n");
  if (i != std::string_view::npos && head[i] == '{' &&
      (head.find("\"pg_config\"") != std::string_view::npos ||
       head.find("\"collective_seq_id\"") != std::string_view::npos)) {
    return DumpSniff::kJson;
  }
  return DumpSniff::kNo;
}

namespace {

using Id = DataTree::Id;

// JSON lands in the same tree as pickles so one converter serves both.
// simdjson bounds the nesting (kJsonMaxDepth), which bounds this recursion.
constexpr size_t kJsonMaxDepth = 64;

Id JsonToTree(simdjson::dom::element el, DataTree& tree) {
  using simdjson::dom::element_type;
  switch (el.type()) {
    case element_type::ARRAY: {
      std::vector<Id> items;
      for (simdjson::dom::element child : simdjson::dom::array(el)) {
        items.push_back(JsonToTree(child, tree));
      }
      return tree.AddContainer(ValueKind::kList, std::move(items));
    }
    case element_type::OBJECT: {
      std::vector<Id> items;
      for (simdjson::dom::key_value_pair kv : simdjson::dom::object(el)) {
        items.push_back(tree.AddString(ValueKind::kString, std::string(kv.key)));
        items.push_back(JsonToTree(kv.value, tree));
      }
      return tree.AddContainer(ValueKind::kDict, std::move(items));
    }
    case element_type::INT64: return tree.AddScalar(ValueKind::kInt, int64_t(el));
    case element_type::UINT64: return tree.AddFloat(static_cast<double>(uint64_t(el)));
    case element_type::DOUBLE: return tree.AddFloat(double(el));
    case element_type::STRING:
      return tree.AddString(ValueKind::kString, std::string(std::string_view(el)));
    case element_type::BOOL: return tree.AddScalar(ValueKind::kBool, bool(el) ? 1 : 0);
    case element_type::NULL_VALUE: return tree.AddScalar(ValueKind::kNone, 0);
  }
  return tree.AddScalar(ValueKind::kNone, 0);
}

absl::StatusOr<DataTree> ParseJson(std::string_view data) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(data);
  if (auto err = parser.allocate(std::max<size_t>(padded.size(), 64), kJsonMaxDepth); err) {
    return absl::InvalidArgumentError(StrCat("json: ", simdjson::error_message(err)));
  }
  simdjson::dom::element doc;
  if (auto err = parser.parse(padded).get(doc); err) {
    return absl::InvalidArgumentError(StrCat("json: ", simdjson::error_message(err)));
  }
  DataTree tree;
  tree.set_root(JsonToTree(doc, tree));
  return tree;
}

// Reads the typed dump out of a tree. Every value read costs one unit of a
// budget proportional to the tree: a pickle can share one big list among a
// million entries through the memo, and converting that would take time
// quadratic in the file's size.
class Converter {
 public:
  Converter(const DataTree& t, std::string_view source)
      : t_(t), source_(source), budget_(8 * t.size() + (1u << 20)) {}

  absl::StatusOr<FrDump> Run(DumpFormat format) {
    FrDump d;
    d.source = std::string(source_);
    d.format = format;
    Id root = t_.root();
    if (t_.kind(root) != ValueKind::kDict) {
      return absl::NotFoundError(StrCat(source_, ": not a Flight Recorder dump (top level is a ",
                                              ValueKindName(t_.kind(root)), ", not a dict)"));
    }
    auto version = t_.Find(root, "version");
    auto entries = t_.Find(root, "entries");
    auto pg_config = t_.Find(root, "pg_config");
    if (!version || (!entries && !pg_config)) {
      return absl::NotFoundError(StrCat(
          source_, ": not a Flight Recorder dump (no version with entries or pg_config)"));
    }
    FL_ASSIGN_OR_RETURN(d.version, String(*version, "version"));
    if (!ParseVersion(d.version, d.version_major, d.version_minor) || d.version_major != 2) {
      return Bad("version", StrCat("unsupported Flight Recorder dump version '", d.version,
                                         "' (known: 2.0 to 2.10)"));
    }
    for (const char* key : {"comm_lib_version", "nccl_version"}) {
      if (auto v = t_.Find(root, key); v && t_.kind(*v) == ValueKind::kString) {
        d.comm_lib_version = std::string(t_.Str(*v));
      }
    }
    if (pg_config) {
      absl::Status st = Groups(*pg_config, d);
      if (!st.ok()) return st;
    }
    if (auto s = t_.Find(root, "pg_status")) {
      absl::Status st = PgStatus(*s, d);
      if (!st.ok()) return st;
    }
    if (entries) {
      absl::Status st = Entries(*entries, d);
      if (!st.ok()) return st;
    }
    d.wrapped = !d.entries.empty() && d.entries.front().record_id > 0;
    InferRank(d);
    return d;
  }

 private:
  absl::Status Bad(std::string_view field, std::string_view what) const {
    return absl::InvalidArgumentError(
        StrCat(source_, ": Flight Recorder dump: ", field, ": ", what));
  }
  absl::Status Spend(std::string_view field) {
    if (budget_ == 0) return Bad(field, "structure too large for the file (shared references)");
    --budget_;
    return absl::OkStatus();
  }
  absl::Status WrongKind(Id id, std::string_view field, std::string_view want) const {
    return Bad(field, StrCat("expected ", want, ", got ", ValueKindName(t_.kind(id)), " ",
                                   t_.Render(id, 2, 60)));
  }

  absl::StatusOr<std::string> String(Id id, std::string_view field) {
    FL_RETURN_IF_ERROR(Spend(field));
    if (t_.kind(id) != ValueKind::kString) return WrongKind(id, field, "str");
    return std::string(t_.Str(id));
  }
  // Ints; JSON dumps write some as strings (pg_status) and a float is taken
  // when it is integral (JSON writers differ).
  absl::StatusOr<int64_t> Int(Id id, std::string_view field) {
    FL_RETURN_IF_ERROR(Spend(field));
    switch (t_.kind(id)) {
      case ValueKind::kInt:
      case ValueKind::kBool:
        return t_.Int(id);
      case ValueKind::kFloat: {
        double v = t_.Float(id);
        if (v >= -9.2e18 && v <= 9.2e18 && v == static_cast<double>(static_cast<int64_t>(v))) {
          return static_cast<int64_t>(v);
        }
        break;
      }
      case ValueKind::kString: {
        std::string_view s = t_.Str(id);
        int64_t v = 0;
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec == std::errc() && p == s.data() + s.size() && !s.empty()) return v;
        break;
      }
      default: break;
    }
    return WrongKind(id, field, "int");
  }
  absl::StatusOr<std::optional<int64_t>> OptionalTime(Id dict, const char* key,
                                                      std::string_view field, bool zero_is_none) {
    auto v = t_.Find(dict, key);
    if (!v || t_.IsNone(*v)) return std::optional<int64_t>();
    auto i = Int(*v, field);
    if (!i.ok()) return i.status();
    if (zero_is_none && *i == 0) return std::optional<int64_t>();
    return std::optional<int64_t>(*i);
  }
  absl::StatusOr<std::vector<Id>> Sequence(Id id, std::string_view field) {
    FL_RETURN_IF_ERROR(Spend(field));
    ValueKind k = t_.kind(id);
    if (k != ValueKind::kList && k != ValueKind::kTuple) return WrongKind(id, field, "list");
    std::span<const Id> items = t_.Items(id);
    return std::vector<Id>(items.begin(), items.end());
  }
  absl::StatusOr<std::vector<std::vector<int64_t>>> Sizes(Id id, const std::string& field) {
    std::vector<std::vector<int64_t>> out;
    FL_ASSIGN_OR_RETURN(auto outer, Sequence(id, field));
    for (size_t i = 0; i < outer.size(); ++i) {
      std::string f = StrCat(field, "[", i, "]");
      FL_ASSIGN_OR_RETURN(auto inner, Sequence(outer[i], f));
      std::vector<int64_t> dims;
      for (Id d : inner) {
        FL_ASSIGN_OR_RETURN(int64_t v, Int(d, f));
        dims.push_back(v);
      }
      out.push_back(std::move(dims));
    }
    return out;
  }
  absl::StatusOr<std::vector<std::string>> Strings(Id id, const std::string& field) {
    std::vector<std::string> out;
    FL_ASSIGN_OR_RETURN(auto items, Sequence(id, field));
    for (Id s : items) {
      FL_ASSIGN_OR_RETURN(std::string v, String(s, field));
      out.push_back(std::move(v));
    }
    return out;
  }

  static bool ParseVersion(std::string_view v, int& major, int& minor) {
    size_t dot = v.find('.');
    if (dot == std::string_view::npos) return false;
    auto [p1, e1] = std::from_chars(v.data(), v.data() + dot, major);
    auto [p2, e2] = std::from_chars(v.data() + dot + 1, v.data() + v.size(), minor);
    return e1 == std::errc() && p1 == v.data() + dot && e2 == std::errc() &&
           p2 == v.data() + v.size() && dot > 0 && dot + 1 < v.size();
  }

  // pg_config ranks: ranks_str() writes "[0, 1, 2]"; a list is taken too.
  absl::StatusOr<std::vector<int64_t>> Ranks(Id id, const std::string& field) {
    std::vector<int64_t> out;
    if (t_.kind(id) == ValueKind::kString) {
      std::string_view s = t_.Str(id);
      size_t b = s.find_first_not_of(" \t");
      size_t e = s.find_last_not_of(" \t");
      if (b == std::string_view::npos || s[b] != '[' || s[e] != ']') {
        return Bad(field, StrCat("expected \"[r, r, ...]\", got '", s.substr(0, 60), "'"));
      }
      s = s.substr(b + 1, e - b - 1);
      size_t pos = 0;
      while (pos < s.size()) {
        size_t comma = s.find(',', pos);
        std::string_view tok = s.substr(pos, comma == std::string_view::npos ? s.npos : comma - pos);
        size_t tb = tok.find_first_not_of(" \t");
        size_t te = tok.find_last_not_of(" \t");
        if (tb == std::string_view::npos) {
          if (comma == std::string_view::npos && out.empty() && s.find_first_not_of(" \t") ==
                                                                    std::string_view::npos) {
            break;  // "[]"
          }
          return Bad(field, "empty rank in the list");
        }
        tok = tok.substr(tb, te - tb + 1);
        int64_t r = 0;
        auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), r);
        if (ec != std::errc() || p != tok.data() + tok.size() || r < 0) {
          return Bad(field, StrCat("bad rank '", tok.substr(0, 20), "'"));
        }
        FL_RETURN_IF_ERROR(Spend(field));
        out.push_back(r);
        if (comma == std::string_view::npos) break;
        pos = comma + 1;
      }
    } else {
      FL_ASSIGN_OR_RETURN(auto items, Sequence(id, field));
      for (Id r : items) {
        FL_ASSIGN_OR_RETURN(int64_t v, Int(r, field));
        if (v < 0) return Bad(field, "negative rank");
        out.push_back(v);
      }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  absl::Status Groups(Id cfg, FrDump& d) {
    if (t_.kind(cfg) != ValueKind::kDict) return WrongKind(cfg, "pg_config", "dict");
    std::span<const Id> items = t_.Items(cfg);
    for (size_t i = 0; i + 1 < items.size(); i += 2) {
      FL_ASSIGN_OR_RETURN(std::string name, String(items[i], "pg_config key"));
      std::string field = StrCat("pg_config['", name.substr(0, 40), "']");
      Id info = items[i + 1];
      if (t_.kind(info) != ValueKind::kDict) return WrongKind(info, field, "dict");
      FrGroup g;
      g.name = name;
      if (auto desc = t_.Find(info, "desc")) {
        FL_ASSIGN_OR_RETURN(g.desc, String(*desc, field + ".desc"));
      }
      auto ranks = t_.Find(info, "ranks");
      if (!ranks) return Bad(field, "no ranks");
      FL_ASSIGN_OR_RETURN(g.ranks, Ranks(*ranks, field + ".ranks"));
      bool replaced = false;
      for (FrGroup& old : d.groups) {
        if (old.name == g.name) old = g, replaced = true;
      }
      if (!replaced) d.groups.push_back(std::move(g));
    }
    return absl::OkStatus();
  }

  absl::Status PgStatus(Id st, FrDump& d) {
    if (t_.kind(st) != ValueKind::kDict) return WrongKind(st, "pg_status", "dict");
    std::span<const Id> items = t_.Items(st);
    for (size_t i = 0; i + 1 < items.size(); i += 2) {
      FrPgStatus s;
      FL_ASSIGN_OR_RETURN(s.pg_id, Int(items[i], "pg_status key"));
      std::string field = StrCat("pg_status['", s.pg_id, "']");
      Id v = items[i + 1];
      if (t_.kind(v) != ValueKind::kDict) return WrongKind(v, field, "dict");
      struct {
        const char* key;
        int64_t* out;
      } fields[] = {{"last_enqueued_collective", &s.last_enqueued},
                    {"last_started_collective", &s.last_started},
                    {"last_completed_collective", &s.last_completed}};
      for (auto& f : fields) {
        if (auto x = t_.Find(v, f.key)) {
          FL_ASSIGN_OR_RETURN(*f.out, Int(*x, StrCat(field, ".", f.key)));
        }
      }
      d.pg_status.push_back(s);
    }
    return absl::OkStatus();
  }

  absl::Status Entries(Id list, FrDump& d) {
    FL_ASSIGN_OR_RETURN(auto items, Sequence(list, "entries"));
    d.entries.reserve(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
      std::string field = StrCat("entries[", i, "]");
      Id e = items[i];
      if (t_.kind(e) != ValueKind::kDict) return WrongKind(e, field, "dict");
      FrEntry x;
      auto need = [&](const char* key) -> absl::StatusOr<Id> {
        auto v = t_.Find(e, key);
        if (!v) return Bad(field, StrCat("no ", key));
        return *v;
      };
      auto fname = [&](const char* key) { return StrCat(field, ".", key); };
      FL_ASSIGN_OR_RETURN(Id rid, need("record_id"));
      FL_ASSIGN_OR_RETURN(x.record_id, Int(rid, fname("record_id")));
      FL_ASSIGN_OR_RETURN(Id pg, need("process_group"));
      FL_ASSIGN_OR_RETURN(auto pg_items, Sequence(pg, fname("process_group")));
      if (pg_items.size() != 2) return Bad(fname("process_group"), "expected (name, desc)");
      FL_ASSIGN_OR_RETURN(x.pg_name, String(pg_items[0], fname("process_group")));
      FL_ASSIGN_OR_RETURN(x.pg_desc, String(pg_items[1], fname("process_group")));
      FL_ASSIGN_OR_RETURN(Id seq, need("collective_seq_id"));
      FL_ASSIGN_OR_RETURN(x.collective_seq_id, Int(seq, fname("collective_seq_id")));
      FL_ASSIGN_OR_RETURN(Id pn, need("profiling_name"));
      FL_ASSIGN_OR_RETURN(x.profiling_name, String(pn, fname("profiling_name")));
      FL_ASSIGN_OR_RETURN(Id state, need("state"));
      FL_ASSIGN_OR_RETURN(x.state, String(state, fname("state")));
      for (auto [key, out] : {std::pair{"pg_id", &x.pg_id}, std::pair{"p2p_seq_id", &x.p2p_seq_id},
                              std::pair{"op_id", &x.op_id},
                              std::pair{"time_created_ns", &x.time_created_ns}}) {
        if (auto v = t_.Find(e, key)) {
          FL_ASSIGN_OR_RETURN(*out, Int(*v, fname(key)));
        }
      }
      // The JSON writer puts 0 for a time not yet discovered; pickles None.
      FL_ASSIGN_OR_RETURN(x.time_discovered_started_ns,
                                OptionalTime(e, "time_discovered_started_ns",
                                             fname("time_discovered_started_ns"), true));
      FL_ASSIGN_OR_RETURN(x.time_discovered_completed_ns,
                                OptionalTime(e, "time_discovered_completed_ns",
                                             fname("time_discovered_completed_ns"), true));
      FL_ASSIGN_OR_RETURN(x.timeout_ms,
                                OptionalTime(e, "timeout_ms", fname("timeout_ms"), false));
      if (auto v = t_.Find(e, "duration_ms"); v && !t_.IsNone(*v)) {
        FL_RETURN_IF_ERROR(Spend(field));
        if (t_.kind(*v) == ValueKind::kFloat) {
          x.duration_ms = t_.Float(*v);
        } else if (t_.kind(*v) == ValueKind::kInt) {
          x.duration_ms = static_cast<double>(t_.Int(*v));
        } else {
          return WrongKind(*v, fname("duration_ms"), "float");
        }
      }
      for (auto [key, out] : {std::pair{"is_p2p", &x.is_p2p}, std::pair{"retired", &x.retired}}) {
        if (auto v = t_.Find(e, key)) {
          if (t_.kind(*v) != ValueKind::kBool && t_.kind(*v) != ValueKind::kInt) {
            return WrongKind(*v, fname(key), "bool");
          }
          *out = t_.Int(*v) != 0;
        }
      }
      if (auto v = t_.Find(e, "thread_name")) {
        FL_ASSIGN_OR_RETURN(x.thread_name, String(*v, fname("thread_name")));
      }
      if (auto v = t_.Find(e, "input_sizes")) {
        FL_ASSIGN_OR_RETURN(x.input_sizes, Sizes(*v, fname("input_sizes")));
      }
      if (auto v = t_.Find(e, "output_sizes")) {
        FL_ASSIGN_OR_RETURN(x.output_sizes, Sizes(*v, fname("output_sizes")));
      }
      if (auto v = t_.Find(e, "input_dtypes")) {
        FL_ASSIGN_OR_RETURN(x.input_dtypes, Strings(*v, fname("input_dtypes")));
      }
      if (auto v = t_.Find(e, "output_dtypes")) {
        FL_ASSIGN_OR_RETURN(x.output_dtypes, Strings(*v, fname("output_dtypes")));
      }
      // "nccl:all_reduce" -> all_reduce; "nccl:send 0->1" -> send.
      std::string_view name = x.profiling_name;
      if (size_t colon = name.find(':'); colon != std::string_view::npos) {
        name.remove_prefix(colon + 1);
      }
      x.op = std::string(name.substr(0, name.find(' ')));
      if (!t_.Find(e, "is_p2p")) x.is_p2p = x.op == "send" || x.op == "recv";
      d.entries.push_back(std::move(x));
    }
    return absl::OkStatus();
  }

  // The rank from the content: the intersection of the groups' memberships,
  // narrowed by the own side of p2p names; the file name only as a fallback.
  static void InferRank(FrDump& d) {
    std::optional<std::vector<int64_t>> common;
    for (const FrGroup& g : d.groups) {
      if (g.ranks.empty()) continue;
      if (!common) {
        common = g.ranks;
        continue;
      }
      std::vector<int64_t> both;
      std::set_intersection(common->begin(), common->end(), g.ranks.begin(), g.ranks.end(),
                            std::back_inserter(both));
      common = std::move(both);
    }
    if (common && common->size() == 1) {
      d.rank = common->front();
      d.rank_source = RankSource::kGroupMembership;
      return;
    }
    std::set<int64_t> from_p2p;
    for (const FrEntry& e : d.entries) {
      if (e.op != "send" && e.op != "recv") continue;
      std::string_view pn = e.profiling_name;
      size_t sp = pn.find(' ');
      if (sp == std::string_view::npos) continue;
      std::string_view meta = pn.substr(sp + 1);
      // send: "self->peer"; recv: "self<-peer".
      size_t arrow = meta.find(e.op == "send" ? "->" : "<-");
      if (arrow == std::string_view::npos) continue;
      int64_t self = -1;
      auto [p, ec] = std::from_chars(meta.data(), meta.data() + arrow, self);
      if (ec != std::errc() || p != meta.data() + arrow || self < 0) continue;
      const FrGroup* g = d.FindGroup(e.pg_name);
      if (!g || static_cast<size_t>(self) >= g->ranks.size()) continue;
      from_p2p.insert(g->ranks[static_cast<size_t>(self)]);
    }
    if (from_p2p.size() == 1 &&
        (!common || std::binary_search(common->begin(), common->end(), *from_p2p.begin()))) {
      d.rank = *from_p2p.begin();
      d.rank_source = RankSource::kP2pName;
      return;
    }
    // prefix + rank: the last run of digits in the base name.
    std::string_view base = d.source;
    if (size_t slash = base.find_last_of('/'); slash != std::string_view::npos) {
      base.remove_prefix(slash + 1);
    }
    size_t end = base.find_last_of("0123456789");
    if (end == std::string_view::npos) return;
    size_t begin = end;
    while (begin > 0 && base[begin - 1] >= '0' && base[begin - 1] <= '9') --begin;
    int64_t r = -1;
    auto [p, ec] = std::from_chars(base.data() + begin, base.data() + end + 1, r);
    if (ec != std::errc() || r < 0) return;
    if (common && !std::binary_search(common->begin(), common->end(), r)) return;
    d.rank = r;
    d.rank_source = RankSource::kFileName;
  }

  const DataTree& t_;
  std::string_view source_;
  size_t budget_;
};

}  // namespace

absl::StatusOr<FrDump> ParseFlightRecorderDump(std::string_view data, std::string_view source) {
  size_t i = data.find_first_not_of(" \t\r\n");
  bool json = i != std::string_view::npos && data[i] == '{';
  absl::StatusOr<DataTree> tree = json ? ParseJson(data) : ParsePickle(data);
  if (!tree.ok()) {
    return absl::InvalidArgumentError(StrCat(source, ": ", tree.status().message()));
  }
  return Converter(*tree, source).Run(json ? DumpFormat::kJson : DumpFormat::kPickle);
}

}  // namespace faultline::flightrec
