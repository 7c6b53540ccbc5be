// Rule source compiler. Reads rulesets/ (ruleset.json, references.json,
// <family>/_references.json, <family>/_priors.json, <family>/<rule>.json) with
// simdjson, validates every field (unknown fields are errors, so typos are
// caught), checks that each pattern is single-line, bounded and compiles in
// both Hyperscan and RE2, builds the FlatBuffer, compiles the one Hyperscan
// database and runs every example and counter-example through both engines.
#include "ruleset/compiler.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "ruleset/pattern_check.h"
#include "ruleset/pattern_cost.h"
#include "ruleset/rule_roles.h"
#include "ruleset/ruleset.h"
#include "simdjson.h"
#include "util/status_macros.h"
#include "util/strings.h"

namespace faultline {
namespace {

namespace fs = std::filesystem;
using simdjson::dom::element;

// Where an error is: file, rule id, field path.
struct Ctx {
  std::string file;
  std::string rule;

  absl::Status Error(std::string_view field, std::string_view msg) const {
    std::string where = file;
    if (!rule.empty()) StrAppend(&where, ": rule '", rule, "'");
    if (!field.empty()) StrAppend(&where, ": ", field);
    return absl::InvalidArgumentError(StrCat(where, ": ", msg));
  }
};

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(StrCat(path, ": cannot open: ", std::strerror(errno)));
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return absl::DataLossError(StrCat(path, ": read error"));
  return ss.str();
}

absl::StatusOr<element> ParseJson(simdjson::dom::parser& parser, const std::string& path,
                                  std::string& storage) {
  FL_ASSIGN_OR_RETURN(storage, ReadWholeFile(path));
  element doc;
  auto err = parser.parse(storage).get(doc);
  if (err) {
    return absl::InvalidArgumentError(
        StrCat(path, ": invalid JSON: ", simdjson::error_message(err)));
  }
  return doc;
}

// Typed accessors that report the field path on failure.
absl::StatusOr<std::string> GetString(const Ctx& ctx, element e, std::string_view field,
                                      bool allow_empty = false) {
  std::string_view sv;
  if (e.get_string().get(sv)) return ctx.Error(field, "must be a string");
  if (!allow_empty && sv.empty()) return ctx.Error(field, "must not be empty");
  return std::string(sv);
}

absl::StatusOr<std::vector<std::string>> GetStringArray(const Ctx& ctx, element e,
                                                        std::string_view field,
                                                        size_t min_items) {
  simdjson::dom::array arr;
  if (e.get_array().get(arr)) return ctx.Error(field, "must be an array of strings");
  std::vector<std::string> out;
  size_t i = 0;
  for (element item : arr) {
    FL_ASSIGN_OR_RETURN(std::string s,
                        GetString(ctx, item, StrCat(field, "[", i, "]")));
    out.push_back(std::move(s));
    ++i;
  }
  if (out.size() < min_items) {
    return ctx.Error(field, StrCat("needs at least ", min_items, " entr",
                                         min_items == 1 ? "y" : "ies"));
  }
  return out;
}

absl::StatusOr<double> GetNumber(const Ctx& ctx, element e, std::string_view field) {
  double d;
  if (e.is_double()) {
    if (e.get_double().get(d)) return ctx.Error(field, "must be a number");
  } else if (e.is_int64()) {
    int64_t i;
    if (e.get_int64().get(i)) return ctx.Error(field, "must be a number");
    d = static_cast<double>(i);
  } else if (e.is_uint64()) {
    uint64_t u;
    if (e.get_uint64().get(u)) return ctx.Error(field, "must be a number");
    d = static_cast<double>(u);
  } else {
    return ctx.Error(field, "must be a number");
  }
  return d;
}

absl::StatusOr<bool> GetBool(const Ctx& ctx, element e, std::string_view field) {
  bool b;
  if (e.get_bool().get(b)) return ctx.Error(field, "must be true or false");
  return b;
}

// Checks that an object has only known keys and has every required key.
absl::Status CheckKeys(const Ctx& ctx, simdjson::dom::object obj, std::string_view where,
                       std::initializer_list<std::string_view> required,
                       std::initializer_list<std::string_view> optional) {
  for (auto kv : obj) {
    bool known = std::find(required.begin(), required.end(), kv.key) != required.end() ||
                 std::find(optional.begin(), optional.end(), kv.key) != optional.end();
    if (!known) {
      return ctx.Error(StrCat(where, where.empty() ? "" : ".", kv.key), "unknown field");
    }
  }
  for (std::string_view key : required) {
    element e;
    if (obj.at_key(key).get(e)) {
      return ctx.Error(StrCat(where, where.empty() ? "" : ".", key), "missing field");
    }
  }
  return absl::OkStatus();
}

bool ValidId(std::string_view id, bool allow_underscore) {
  if (id.empty() || id.size() > 128) return false;
  auto ok_first = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!ok_first(id[0])) return false;
  for (char c : id) {
    if (!(ok_first(c) || c == '-' || c == '.' || (allow_underscore && c == '_'))) return false;
  }
  return true;
}

absl::StatusOr<fb::Layer> ParseLayer(std::string_view s) {
  static constexpr std::pair<std::string_view, fb::Layer> kLayers[] = {
      {"hardware", fb::Layer::Hardware}, {"driver", fb::Layer::Driver},
      {"kernel", fb::Layer::Kernel},     {"storage", fb::Layer::Storage},
      {"network", fb::Layer::Network},   {"framework", fb::Layer::Framework},
      {"application", fb::Layer::Application}};
  for (auto& [name, layer] : kLayers) {
    if (s == name) return layer;
  }
  return absl::InvalidArgumentError(
      "must be one of hardware, driver, kernel, storage, network, framework, application");
}

absl::StatusOr<fb::Role> ParseRole(std::string_view s) {
  static constexpr std::pair<std::string_view, fb::Role> kRoles[] = {
      {"initiating", fb::Role::Initiating}, {"symptom", fb::Role::Symptom},
      {"context", fb::Role::Context},       {"progress", fb::Role::Progress},
      {"metric", fb::Role::Metric}};
  for (auto& [name, role] : kRoles) {
    if (s == name) return role;
  }
  return absl::InvalidArgumentError(
      "must be one of initiating, symptom, context, progress, metric");
}

// One of an enum's values by its rule source name (`name` of each value).
template <typename E, size_t N>
absl::Status ParseNamed(const Ctx& ctx, element e, std::string_view field, const E (&values)[N],
                        const char* (*name)(E), E* out) {
  FL_ASSIGN_OR_RETURN(std::string s, GetString(ctx, e, field));
  std::vector<std::string_view> known;
  for (E v : values) {
    if (s == name(v)) {
      *out = v;
      return absl::OkStatus();
    }
    known.push_back(name(v));
  }
  return ctx.Error(field, StrCat("unknown value '", s, "' (one of ", StrJoin(known, ", "), ")"));
}

constexpr fb::ActionDefault kActionDefaults[] = {fb::ActionDefault::Restart, fb::ActionDefault::RestartExcluding,
                                                 fb::ActionDefault::Stop, fb::ActionDefault::Unknown};
constexpr fb::Drain kDrains[] = {fb::Drain::Host, fb::Drain::Gpu};
constexpr fb::RecurrenceScope kRecurrenceScopes[] = {
    fb::RecurrenceScope::SameStep, fb::RecurrenceScope::SameHost, fb::RecurrenceScope::Any};

// Source model, kept as plain structs until everything validated.
struct SignalSrc {
  std::string id, pattern;
  std::vector<std::string> extracts;  // `extract`: one string, or an array
  fb::Role role = fb::Role::Context;
  bool caseless = false;
  bool unconditional = false;  // the rule's conditions do not gate it
  bool detail_next_line = false;  // the evidence is the next line
  bool detail_exception_line = false;  // the evidence is the traceback's exception line
  bool detail_line_above = false;  // the evidence is an error line right above
  std::vector<std::string> examples, counter_examples;
  std::string cost_exempt;  // why the signal may cost more than the budget
  std::string prefilter;    // what Hyperscan looks for instead (CheckSignalCosts)
};
struct EdgeSrc {
  std::string rule;
  double min_lag_s = -5, max_lag_s = 3600;
};
struct ActionSrc {
  bool present = false;
  fb::ActionDefault kind = fb::ActionDefault::Unknown;
  fb::Drain drain = fb::Drain::None;
  fb::RecurrenceScope stop_on_recurrence = fb::RecurrenceScope::Never;
  fb::Drain drain_on_recurrence = fb::Drain::None;
  std::string why;
};
struct RuleSrc {
  std::string file;
  ActionSrc action;
  std::string id, reference, title, category, summary, fix, verify, fingerprint, missing_fact;
  std::vector<std::string> tags, root_cause, confirm, prevention, related, sources;
  std::vector<std::pair<std::string, std::string>> symptoms;
  fb::Layer layer = fb::Layer::Application;
  double weight = 0.8;
  std::vector<SignalSrc> signals;
  std::vector<EdgeSrc> explains;
  bool has_conditions = false;
  double min_uptime_days = -1, max_uptime_days = -1;
  std::string requires_rule, excludes_rule, after_rule, detector, before_rule;
};
struct ReferenceSrc {
  std::string title, summary, origin, prior_json, file;
};

constexpr std::string_view kDetectors[] = {
    "straggler", "hang", "sdc_drift", "loss_spike", "throughput_drift",
    "missing_checkpoint_after_sigterm", "stale_checkpoint", "partial_checkpoint_save",
    "flight_recorder", "flight_recorder_mismatch"};

absl::Status ParseSignal(const Ctx& ctx, element e, const std::string& where,
                         const CompileOptions& opts, SignalSrc& sig) {
  simdjson::dom::object obj;
  if (e.get_object().get(obj)) return ctx.Error(where, "must be an object");
  FL_RETURN_IF_ERROR(CheckKeys(ctx, obj, where, {"id", "pattern", "role", "examples", "counter_examples"},
                               {"extract", "caseless", "description", "cost_exempt", "unconditional",
                                "detail_next_line", "detail_exception_line", "detail_line_above"}));
  FL_ASSIGN_OR_RETURN(sig.id, GetString(ctx, obj["id"], where + ".id"));
  if (!ValidId(sig.id, true)) return ctx.Error(where + ".id", "must match [a-z0-9][a-z0-9_.-]*");
  FL_ASSIGN_OR_RETURN(sig.pattern, GetString(ctx, obj["pattern"], where + ".pattern"));
  if (sig.pattern.size() > opts.max_pattern_length) {
    return ctx.Error(where + ".pattern",
                     StrCat("longer than ", opts.max_pattern_length, " bytes"));
  }
  if (absl::Status s = CheckPatternSingleLine(sig.pattern, opts.max_bounded_repeat); !s.ok()) {
    return ctx.Error(where + ".pattern", StatusMessage(s));
  }
  if (size_t total = BoundedRepeatTotal(sig.pattern); total > opts.max_repeat_total) {
    return ctx.Error(where + ".pattern",
                     StrCat("bounded repeats add up to ", total, ", above ", opts.max_repeat_total,
                            " (use + or *: each one is unrolled by Hyperscan)"));
  }
  FL_ASSIGN_OR_RETURN(std::string role, GetString(ctx, obj["role"], where + ".role"));
  auto r = ParseRole(role);
  if (!r.ok()) return ctx.Error(where + ".role", StatusMessage(r.status()));
  sig.role = *r;
  element x;
  bool extract_is_array = false;
  if (!obj.at_key("extract").get(x)) {
    extract_is_array = x.is_array();
    if (extract_is_array) {
      FL_ASSIGN_OR_RETURN(sig.extracts, GetStringArray(ctx, x, where + ".extract", 1));
    } else {
      FL_ASSIGN_OR_RETURN(std::string one, GetString(ctx, x, where + ".extract"));
      sig.extracts.push_back(std::move(one));
    }
  }
  if (!obj.at_key("caseless").get(x)) {
    FL_ASSIGN_OR_RETURN(sig.caseless, GetBool(ctx, x, where + ".caseless"));
  }
  if (!obj.at_key("unconditional").get(x)) {
    FL_ASSIGN_OR_RETURN(sig.unconditional, GetBool(ctx, x, where + ".unconditional"));
  }
  if (!obj.at_key("detail_next_line").get(x)) {
    FL_ASSIGN_OR_RETURN(sig.detail_next_line, GetBool(ctx, x, where + ".detail_next_line"));
  }
  if (!obj.at_key("detail_exception_line").get(x)) {
    FL_ASSIGN_OR_RETURN(sig.detail_exception_line, GetBool(ctx, x, where + ".detail_exception_line"));
  }
  if (!obj.at_key("detail_line_above").get(x)) {
    FL_ASSIGN_OR_RETURN(sig.detail_line_above, GetBool(ctx, x, where + ".detail_line_above"));
  }
  if (!obj.at_key("cost_exempt").get(x)) {
    FL_ASSIGN_OR_RETURN(sig.cost_exempt, GetString(ctx, x, where + ".cost_exempt"));
    if (sig.cost_exempt.find_first_not_of(" \t") == std::string::npos) {
      return ctx.Error(where + ".cost_exempt", "must give a reason, not blanks");
    }
  }
  FL_ASSIGN_OR_RETURN(sig.examples, GetStringArray(ctx, obj["examples"], where + ".examples", 1));
  FL_ASSIGN_OR_RETURN(sig.counter_examples,
                      GetStringArray(ctx, obj["counter_examples"], where + ".counter_examples", 1));
  for (size_t i = 0; i < sig.examples.size(); ++i) {
    if (sig.examples[i].find('\n') != std::string::npos) {
      return ctx.Error(StrCat(where, ".examples[", i, "]"), "an example is one line");
    }
  }
  // Hyperscan must accept the pattern even where a prefilter stands in for
  // it in the database (CheckSignalCosts): the file stays recompilable
  // without one, and the error names the signal either way.
  hs_expr_info_t* info = nullptr;
  hs_compile_error_t* hs_err = nullptr;
  if (hs_expression_info(sig.pattern.c_str(), sig.caseless ? HS_FLAG_CASELESS : 0, &info, &hs_err) !=
      HS_SUCCESS) {
    std::string msg = hs_err && hs_err->message ? hs_err->message : "unknown error";
    hs_free_compile_error(hs_err);
    return ctx.Error(where + ".pattern", StrCat("Hyperscan rejects it: ", msg));
  }
  const bool matches_empty = info->min_width == 0;
  std::free(info);
  if (matches_empty) return ctx.Error(where + ".pattern", "Hyperscan rejects it: it matches the empty string");
  // RE2 must accept both the pattern (confirmation) and the extractor.
  RE2::Options ro;
  ro.set_log_errors(false);
  ro.set_case_sensitive(!sig.caseless);
  ro.set_max_mem(opts.re2_max_mem);
  RE2 confirm(sig.pattern, ro);
  if (!confirm.ok()) {
    return ctx.Error(where + ".pattern", StrCat("RE2 rejects it: ", confirm.error()));
  }
  for (size_t i = 0; i < sig.extracts.size(); ++i) {
    std::string field = extract_is_array
                            ? StrCat(where, ".extract[", i, "]")
                            : where + ".extract";
    if (sig.extracts[i].empty()) return ctx.Error(field, "is empty");
    RE2 ex(sig.extracts[i], ro);
    if (!ex.ok()) return ctx.Error(field, StrCat("RE2 rejects it: ", ex.error()));
    if (ex.NamedCapturingGroups().empty()) {
      return ctx.Error(field, "has no named group (?P<name>...)");
    }
    if (static_cast<size_t>(ex.NumberOfCapturingGroups()) != ex.NamedCapturingGroups().size()) {
      return ctx.Error(field, "every group must be named; use (?:...) otherwise");
    }
  }
  return absl::OkStatus();
}

// A "role:" tag tells the correlator what the rule is (ruleset/rule_roles.h):
// a misspelt one would silently drop that.
absl::Status CheckRoleTags(const Ctx& ctx, const std::vector<std::string>& tags) {
  for (size_t i = 0; i < tags.size(); ++i) {
    if (tags[i].starts_with(kRoleTagPrefix) && !RoleOfTag(tags[i])) {
      return ctx.Error(StrCat("tags[", i, "]"),
                       StrCat("unknown role '", tags[i], "' (rulesets/README.md, \"Roles\")"));
    }
  }
  return absl::OkStatus();
}

// `action`: {"default", "drain", "stop_on_recurrence", "drain_on_recurrence",
// "why"}. A restart_excluding default names what it drains; only it does.
absl::Status ParseAction(const Ctx& ctx, element e, ActionSrc& a) {
  simdjson::dom::object obj;
  if (e.get_object().get(obj)) return ctx.Error("action", "must be an object");
  FL_RETURN_IF_ERROR(CheckKeys(ctx, obj, "action", {"default", "why"},
                               {"drain", "stop_on_recurrence", "drain_on_recurrence"}));
  a.present = true;
  FL_RETURN_IF_ERROR(ParseNamed(ctx, obj["default"], "action.default", kActionDefaults, ActionDefaultName, &a.kind));
  FL_ASSIGN_OR_RETURN(a.why, GetString(ctx, obj["why"], "action.why"));
  element v;
  if (!obj.at_key("drain").get(v)) {
    FL_RETURN_IF_ERROR(ParseNamed(ctx, v, "action.drain", kDrains, DrainName, &a.drain));
  }
  if (!obj.at_key("stop_on_recurrence").get(v)) {
    FL_RETURN_IF_ERROR(ParseNamed(ctx, v, "action.stop_on_recurrence", kRecurrenceScopes,
                                  RecurrenceScopeName, &a.stop_on_recurrence));
  }
  if (!obj.at_key("drain_on_recurrence").get(v)) {
    FL_RETURN_IF_ERROR(ParseNamed(ctx, v, "action.drain_on_recurrence", kDrains, DrainName, &a.drain_on_recurrence));
  }
  const bool excluding = a.kind == fb::ActionDefault::RestartExcluding;
  if (excluding && a.drain == fb::Drain::None) {
    return ctx.Error("action.drain", "restart_excluding needs what it drains: host or gpu");
  }
  if (!excluding && a.drain != fb::Drain::None) {
    return ctx.Error("action.drain", "only a restart_excluding default drains");
  }
  if (a.kind != fb::ActionDefault::Restart && a.drain_on_recurrence != fb::Drain::None) {
    return ctx.Error("action.drain_on_recurrence", "only a restart default is changed into a drain");
  }
  return absl::OkStatus();
}

absl::Status ParseRule(simdjson::dom::parser& parser, const std::string& path,
                       const CompileOptions& opts, RuleSrc& rule) {
  Ctx ctx{path, ""};
  std::error_code size_ec;
  if (uintmax_t size = fs::file_size(path, size_ec); !size_ec && size > opts.max_file_bytes) {
    return ctx.Error("", StrCat(size, " bytes, more than the cap of ", opts.max_file_bytes,
                                " for one rule file"));
  }
  std::string storage;
  FL_ASSIGN_OR_RETURN(element doc, ParseJson(parser, path, storage));
  simdjson::dom::object obj;
  if (doc.get_object().get(obj)) return ctx.Error("", "a rule file holds one JSON object");
  element id_el;
  if (!obj.at_key("id").get(id_el)) {
    std::string_view sv;
    if (!id_el.get_string().get(sv)) ctx.rule = std::string(sv);
  }
  FL_RETURN_IF_ERROR(CheckKeys(
      ctx, obj, "",
      {"id", "reference", "title", "category", "tags", "layer", "summary", "root_cause",
       "symptoms", "confirm", "fix", "verify", "prevention", "fingerprint", "related", "sources",
       "signals"},
      {"missing_fact", "weight", "explains", "conditions", "notes", "action"}));
  rule.file = path;
  FL_ASSIGN_OR_RETURN(rule.id, GetString(ctx, obj["id"], "id"));
  if (!ValidId(rule.id, false)) return ctx.Error("id", "must match [a-z0-9][a-z0-9.-]*");
  FL_ASSIGN_OR_RETURN(rule.reference, GetString(ctx, obj["reference"], "reference"));
  FL_ASSIGN_OR_RETURN(rule.title, GetString(ctx, obj["title"], "title"));
  FL_ASSIGN_OR_RETURN(rule.category, GetString(ctx, obj["category"], "category"));
  FL_ASSIGN_OR_RETURN(rule.tags, GetStringArray(ctx, obj["tags"], "tags", 1));
  FL_RETURN_IF_ERROR(CheckRoleTags(ctx, rule.tags));
  FL_ASSIGN_OR_RETURN(std::string layer, GetString(ctx, obj["layer"], "layer"));
  auto l = ParseLayer(layer);
  if (!l.ok()) return ctx.Error("layer", StatusMessage(l.status()));
  rule.layer = *l;
  element action;
  if (!obj.at_key("action").get(action)) FL_RETURN_IF_ERROR(ParseAction(ctx, action, rule.action));
  FL_ASSIGN_OR_RETURN(rule.summary, GetString(ctx, obj["summary"], "summary"));
  FL_ASSIGN_OR_RETURN(rule.root_cause, GetStringArray(ctx, obj["root_cause"], "root_cause", 1));
  FL_ASSIGN_OR_RETURN(rule.confirm, GetStringArray(ctx, obj["confirm"], "confirm", 1));
  FL_ASSIGN_OR_RETURN(rule.fix, GetString(ctx, obj["fix"], "fix"));
  FL_ASSIGN_OR_RETURN(rule.verify, GetString(ctx, obj["verify"], "verify"));
  FL_ASSIGN_OR_RETURN(rule.prevention, GetStringArray(ctx, obj["prevention"], "prevention", 1));
  FL_ASSIGN_OR_RETURN(rule.fingerprint, GetString(ctx, obj["fingerprint"], "fingerprint"));
  FL_ASSIGN_OR_RETURN(rule.related, GetStringArray(ctx, obj["related"], "related", 0));
  FL_ASSIGN_OR_RETURN(rule.sources, GetStringArray(ctx, obj["sources"], "sources", 1));
  element x;
  if (!obj.at_key("missing_fact").get(x)) {
    FL_ASSIGN_OR_RETURN(rule.missing_fact, GetString(ctx, x, "missing_fact"));
  }
  if (!obj.at_key("weight").get(x)) {
    FL_ASSIGN_OR_RETURN(rule.weight, GetNumber(ctx, x, "weight"));
    if (!(rule.weight >= 0 && rule.weight <= 1)) return ctx.Error("weight", "must be within 0..1");
  }
  // symptoms: [{symptom, why}]
  simdjson::dom::array arr;
  if (obj["symptoms"].get_array().get(arr)) return ctx.Error("symptoms", "must be an array");
  size_t i = 0;
  for (element s : arr) {
    std::string where = StrCat("symptoms[", i++, "]");
    simdjson::dom::object so;
    if (s.get_object().get(so)) return ctx.Error(where, "must be an object {symptom, why}");
    FL_RETURN_IF_ERROR(CheckKeys(ctx, so, where, {"symptom", "why"}, {}));
    FL_ASSIGN_OR_RETURN(std::string sym, GetString(ctx, so["symptom"], where + ".symptom"));
    FL_ASSIGN_OR_RETURN(std::string why, GetString(ctx, so["why"], where + ".why"));
    rule.symptoms.emplace_back(std::move(sym), std::move(why));
  }
  if (rule.symptoms.empty()) return ctx.Error("symptoms", "needs at least 1 entry");
  // signals
  if (obj["signals"].get_array().get(arr)) return ctx.Error("signals", "must be an array");
  i = 0;
  std::set<std::string> sig_ids;
  for (element s : arr) {
    if (i >= opts.max_signals) {
      return ctx.Error("signals", StrCat("more than the cap of ", opts.max_signals, " signals"));
    }
    std::string where = StrCat("signals[", i++, "]");
    SignalSrc sig;
    FL_RETURN_IF_ERROR(ParseSignal(ctx, s, where, opts, sig));
    if (!sig_ids.insert(sig.id).second) {
      return ctx.Error(where + ".id", StrCat("duplicate signal id '", sig.id, "'"));
    }
    rule.signals.push_back(std::move(sig));
  }
  // explains
  if (!obj.at_key("explains").get(x)) {
    if (x.get_array().get(arr)) return ctx.Error("explains", "must be an array");
    i = 0;
    for (element s : arr) {
      std::string where = StrCat("explains[", i++, "]");
      simdjson::dom::object eo;
      if (s.get_object().get(eo)) return ctx.Error(where, "must be an object {rule, min_lag_s, max_lag_s}");
      FL_RETURN_IF_ERROR(CheckKeys(ctx, eo, where, {"rule"}, {"min_lag_s", "max_lag_s"}));
      EdgeSrc edge;
      FL_ASSIGN_OR_RETURN(edge.rule, GetString(ctx, eo["rule"], where + ".rule"));
      element v;
      if (!eo.at_key("min_lag_s").get(v)) {
        FL_ASSIGN_OR_RETURN(edge.min_lag_s, GetNumber(ctx, v, where + ".min_lag_s"));
      }
      if (!eo.at_key("max_lag_s").get(v)) {
        FL_ASSIGN_OR_RETURN(edge.max_lag_s, GetNumber(ctx, v, where + ".max_lag_s"));
      }
      if (edge.max_lag_s < edge.min_lag_s) {
        return ctx.Error(where + ".max_lag_s", "must not be below min_lag_s");
      }
      rule.explains.push_back(std::move(edge));
    }
  }
  // conditions
  if (!obj.at_key("conditions").get(x)) {
    simdjson::dom::object co;
    if (x.get_object().get(co)) return ctx.Error("conditions", "must be an object");
    FL_RETURN_IF_ERROR(CheckKeys(ctx, co, "conditions", {},
                                 {"min_uptime_days", "max_uptime_days", "requires_rule",
                                  "excludes_rule", "after_rule", "before_rule", "detector"}));
    rule.has_conditions = true;
    element v;
    if (!co.at_key("min_uptime_days").get(v)) {
      FL_ASSIGN_OR_RETURN(rule.min_uptime_days, GetNumber(ctx, v, "conditions.min_uptime_days"));
    }
    if (!co.at_key("max_uptime_days").get(v)) {
      FL_ASSIGN_OR_RETURN(rule.max_uptime_days, GetNumber(ctx, v, "conditions.max_uptime_days"));
    }
    if (!co.at_key("requires_rule").get(v)) {
      FL_ASSIGN_OR_RETURN(rule.requires_rule, GetString(ctx, v, "conditions.requires_rule"));
    }
    if (!co.at_key("excludes_rule").get(v)) {
      FL_ASSIGN_OR_RETURN(rule.excludes_rule, GetString(ctx, v, "conditions.excludes_rule"));
    }
    if (!co.at_key("after_rule").get(v)) {
      FL_ASSIGN_OR_RETURN(rule.after_rule, GetString(ctx, v, "conditions.after_rule"));
    }
    if (!co.at_key("before_rule").get(v)) {
      FL_ASSIGN_OR_RETURN(rule.before_rule, GetString(ctx, v, "conditions.before_rule"));
    }
    if (!co.at_key("detector").get(v)) {
      FL_ASSIGN_OR_RETURN(rule.detector, GetString(ctx, v, "conditions.detector"));
      if (std::find(std::begin(kDetectors), std::end(kDetectors), rule.detector) ==
          std::end(kDetectors)) {
        return ctx.Error("conditions.detector",
                         StrCat("unknown detector '", rule.detector, "' (known: ",
                                      StrJoin(kDetectors, ", "), ")"));
      }
    }
  }
  for (size_t i = 0; i < rule.signals.size(); ++i) {
    if (rule.signals[i].unconditional && (!rule.has_conditions || !rule.detector.empty())) {
      return ctx.Error(StrCat("signals[", i, "].unconditional"),
                       "only for a rule with conditions and no detector (nothing to be free of)");
    }
  }
  if (rule.signals.empty() && rule.detector.empty()) {
    return ctx.Error("signals", "needs at least 1 signal (or conditions.detector)");
  }
  return absl::OkStatus();
}

absl::Status ParseReferences(simdjson::dom::parser& parser, const std::string& path,
                             std::vector<ReferenceSrc>& out) {
  Ctx ctx{path, ""};
  std::string storage;
  FL_ASSIGN_OR_RETURN(element doc, ParseJson(parser, path, storage));
  simdjson::dom::object obj;
  if (doc.get_object().get(obj)) return ctx.Error("", "must be an object {\"references\": [...]}");
  FL_RETURN_IF_ERROR(CheckKeys(ctx, obj, "", {"references"}, {}));
  simdjson::dom::array arr;
  if (obj["references"].get_array().get(arr)) return ctx.Error("references", "must be an array");
  size_t i = 0;
  for (element e : arr) {
    std::string where = StrCat("references[", i++, "]");
    simdjson::dom::object ro;
    if (e.get_object().get(ro)) return ctx.Error(where, "must be an object");
    FL_RETURN_IF_ERROR(CheckKeys(ctx, ro, where, {"title", "summary"},
                                 {"origin", "prior", "category", "tags"}));
    ReferenceSrc ref;
    ref.file = path;
    FL_ASSIGN_OR_RETURN(ref.title, GetString(ctx, ro["title"], where + ".title"));
    FL_ASSIGN_OR_RETURN(ref.summary, GetString(ctx, ro["summary"], where + ".summary"));
    element v;
    if (!ro.at_key("origin").get(v)) {
      FL_ASSIGN_OR_RETURN(ref.origin, GetString(ctx, v, where + ".origin"));
    } else {
      ref.origin = "faultline";
    }
    if (!ro.at_key("prior").get(v)) {
      if (!v.is_object()) return ctx.Error(where + ".prior", "must be an object");
      ref.prior_json = simdjson::minify(v);
    }
    out.push_back(std::move(ref));
  }
  return absl::OkStatus();
}

// _priors.json: {"priors": [{"reference": title, ...figures}]}
absl::Status ParsePriors(simdjson::dom::parser& parser, const std::string& path,
                         std::map<std::string, std::string>& priors) {
  Ctx ctx{path, ""};
  std::string storage;
  FL_ASSIGN_OR_RETURN(element doc, ParseJson(parser, path, storage));
  simdjson::dom::array arr;
  if (doc["priors"].get_array().get(arr)) return ctx.Error("priors", "must be an array");
  size_t i = 0;
  for (element e : arr) {
    std::string where = StrCat("priors[", i++, "]");
    if (!e.is_object()) return ctx.Error(where, "must be an object");
    FL_ASSIGN_OR_RETURN(std::string ref, GetString(ctx, e["reference"], where + ".reference"));
    if (!priors.emplace(ref, simdjson::minify(e)).second) {
      return ctx.Error(where + ".reference", StrCat("a prior for '", ref, "' is defined twice"));
    }
  }
  return absl::OkStatus();
}

flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>> StrVec(
    flatbuffers::FlatBufferBuilder& b, const std::vector<std::string>& v) {
  return b.CreateVectorOfStrings(v);
}

std::string BuildFlatBuffer(const std::string& name, const std::string& version,
                            const std::vector<RuleSrc>& rules,
                            const std::vector<ReferenceSrc>& refs,
                            std::string_view hs_db, const std::string& hs_info,
                            uint64_t checksum) {
  uint64_t patterns_checksum = kFnvOffset;
  for (const RuleSrc& r : rules) {
    for (const SignalSrc& s : r.signals) {
      std::vector<std::string_view> xs(s.extracts.begin(), s.extracts.end());
      patterns_checksum = SignalsChecksumStep(patterns_checksum, s.pattern, xs, s.caseless);
    }
  }
  flatbuffers::FlatBufferBuilder b(1 << 20);
  std::vector<flatbuffers::Offset<fb::Rule>> rule_offs;
  for (const RuleSrc& r : rules) {
    std::vector<flatbuffers::Offset<fb::Symptom>> syms;
    for (auto& [s, w] : r.symptoms) {
      syms.push_back(fb::CreateSymptom(b, b.CreateString(s), b.CreateString(w)));
    }
    std::vector<flatbuffers::Offset<fb::Signal>> sigs;
    for (const SignalSrc& s : r.signals) {
      sigs.push_back(fb::CreateSignal(b, b.CreateString(s.id), b.CreateString(s.pattern),
                                      b.CreateString(s.extracts.empty() ? std::string() : s.extracts[0]),
                                      s.role, s.caseless, StrVec(b, s.examples),
                                      StrVec(b, s.counter_examples),
                                      s.extracts.size() > 1
                                          ? StrVec(b, std::vector<std::string>(s.extracts.begin() + 1,
                                                                               s.extracts.end()))
                                          : 0,
                                      s.prefilter.empty() ? 0 : b.CreateString(s.prefilter),
                                      s.unconditional, s.detail_next_line,
                                      s.detail_exception_line, s.detail_line_above));
    }
    std::vector<flatbuffers::Offset<fb::Edge>> edges;
    for (const EdgeSrc& e : r.explains) {
      edges.push_back(fb::CreateEdge(b, b.CreateString(e.rule), e.min_lag_s, e.max_lag_s));
    }
    flatbuffers::Offset<fb::Conditions> cond;
    if (r.has_conditions) {
      cond = fb::CreateConditions(b, r.min_uptime_days, r.max_uptime_days,
                                  b.CreateString(r.requires_rule), b.CreateString(r.excludes_rule),
                                  b.CreateString(r.after_rule), b.CreateString(r.detector),
                                  b.CreateString(r.before_rule));
    }
    flatbuffers::Offset<fb::ActionDecl> action;
    if (r.action.present) {
      action = fb::CreateActionDecl(b, r.action.kind, r.action.drain, r.action.stop_on_recurrence,
                                    r.action.drain_on_recurrence, b.CreateString(r.action.why));
    }
    rule_offs.push_back(fb::CreateRule(
        b, b.CreateString(r.id), b.CreateString(r.reference), b.CreateString(r.title),
        b.CreateString(r.category), StrVec(b, r.tags), r.layer, b.CreateString(r.summary),
        StrVec(b, r.root_cause), b.CreateVector(syms), StrVec(b, r.confirm),
        b.CreateString(r.fix), b.CreateString(r.verify), StrVec(b, r.prevention),
        b.CreateString(r.fingerprint), StrVec(b, r.related), StrVec(b, r.sources),
        b.CreateString(r.missing_fact), r.weight, b.CreateVector(sigs), b.CreateVector(edges),
        cond, b.CreateString(r.file), action));
  }
  std::vector<flatbuffers::Offset<fb::Reference>> ref_offs;
  for (const ReferenceSrc& r : refs) {
    ref_offs.push_back(fb::CreateReference(b, b.CreateString(r.title), b.CreateString(r.summary),
                                           b.CreateString(r.origin), b.CreateString(r.prior_json)));
  }
  auto db = b.CreateVector(reinterpret_cast<const uint8_t*>(hs_db.data()), hs_db.size());
  // Zeroed room for the MAC and its key id, filled in place by SignRuleset
  // (the MAC covers every other byte, so it cannot be added by a rebuild).
  const std::vector<uint8_t> no_key_id(kRulesetKeyIdBytes, 0), no_mac(kRulesetMacBytes, 0);
  auto key_id = b.CreateVector(no_key_id);
  auto mac = b.CreateVector(no_mac);
  auto root = fb::CreateRuleset(b, kRulesetFormatVersion, b.CreateString(name),
                                b.CreateString(version), b.CreateVector(rule_offs),
                                b.CreateVector(ref_offs), db, b.CreateString(hs_info),
                                b.CreateString(hs_version()), checksum,
                                patterns_checksum, key_id, mac);
  b.Finish(root, fb::RulesetIdentifier());
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

struct MatchSet {
  std::vector<unsigned> ids;
};

int CollectIds(unsigned id, unsigned long long, unsigned long long, unsigned, void* ctx) {
  static_cast<MatchSet*>(ctx)->ids.push_back(id);
  return 0;
}

// Runs every example and counter-example through Hyperscan (the whole
// database, as the scanner does) and RE2 (as the confirmer does).
absl::Status SelfTest(const Ruleset& rs) {
  FL_ASSIGN_OR_RETURN(HsScratchPtr scratch, rs.AllocScratch());
  for (uint32_t g = 0; g < rs.signal_count(); ++g) {
    const SignalInfo& si = rs.signal(g);
    Ctx ctx{si.rule->file()->str(), si.rule->id()->str()};
    if (std::string error; !si.BuildRegex(&error)) {
      return ctx.Error(StrCat("signals[", si.signal_index, "]"), error);
    }
    auto run = [&](std::string_view line) -> absl::StatusOr<bool> {
      MatchSet ms;
      hs_error_t err = hs_scan(rs.database(), line.data(), static_cast<unsigned>(line.size()), 0,
                               scratch.get(), CollectIds, &ms);
      if (err != HS_SUCCESS) return absl::InternalError(StrCat("hs_scan failed: ", err));
      return std::find(ms.ids.begin(), ms.ids.end(), g) != ms.ids.end();
    };
    const auto* examples = si.signal->examples();
    for (flatbuffers::uoffset_t i = 0; examples && i < examples->size(); ++i) {
      std::string_view line = examples->Get(i)->string_view();
      std::string field = StrCat("signals[", si.signal_index, "].examples[", i, "]");
      FL_ASSIGN_OR_RETURN(bool hs_hit, run(line));
      if (!hs_hit) return ctx.Error(field, "does not match in Hyperscan");
      if (!RE2::PartialMatch(line, *si.confirm())) return ctx.Error(field, "does not match in RE2");
      for (size_t k = 0; k < si.extracts().size(); ++k) {
        if (RE2::PartialMatch(line, *si.extracts()[k].re)) continue;
        return ctx.Error(field, si.extracts().size() > 1
                                    ? StrCat("matches, but `extract[", k, "]` does not")
                                    : std::string("matches, but `extract` does not"));
      }
    }
    const auto* counters = si.signal->counter_examples();
    for (flatbuffers::uoffset_t i = 0; counters && i < counters->size(); ++i) {
      std::string_view line = counters->Get(i)->string_view();
      std::string field = StrCat("signals[", si.signal_index, "].counter_examples[", i, "]");
      FL_ASSIGN_OR_RETURN(bool hs_hit, run(line));
      // A prefilter may find its literal in a near miss: RE2 decides.
      if (hs_hit && !si.signal->prefilter()) return ctx.Error(field, "matches in Hyperscan, but must not");
      if (RE2::PartialMatch(line, *si.confirm())) return ctx.Error(field, "matches in RE2, but must not");
    }
  }
  return absl::OkStatus();
}

std::vector<std::string> ListJson(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().extension() == ".json") {
      out.push_back(it->path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

namespace {

// ruleset.json: the name and version of the ruleset.
absl::Status ReadRulesetMeta(simdjson::dom::parser& parser, const fs::path& root, std::string* name,
                             std::string* version) {
  std::string path = (root / "ruleset.json").string();
  Ctx ctx{path, ""};
  std::string storage;
  FL_ASSIGN_OR_RETURN(element doc, ParseJson(parser, path, storage));
  simdjson::dom::object obj;
  if (doc.get_object().get(obj)) return ctx.Error("", "must be an object {name, version}");
  FL_RETURN_IF_ERROR(CheckKeys(ctx, obj, "", {"name", "version"}, {"description"}));
  FL_ASSIGN_OR_RETURN(*name, GetString(ctx, obj["name"], "name"));
  FL_ASSIGN_OR_RETURN(*version, GetString(ctx, obj["version"], "version"));
  return absl::OkStatus();
}

// The rule families: every directory under the source root, in name order.
std::vector<fs::path> Families(const fs::path& root) {
  std::error_code ec;
  std::vector<fs::path> families;
  for (auto it = fs::directory_iterator(root, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    if (it->is_directory(ec)) families.push_back(it->path());
  }
  std::sort(families.begin(), families.end());
  return families;
}

// The references: the catalog, then each family's additions, with their
// priors; ref_index maps each title to its place.
absl::Status ReadReferences(simdjson::dom::parser& parser, const fs::path& root, const std::string& src_dir,
                            const std::vector<fs::path>& families, std::vector<ReferenceSrc>& refs,
                            std::map<std::string, size_t>& ref_index) {
  std::error_code ec;
  FL_RETURN_IF_ERROR(ParseReferences(parser, (root / "references.json").string(), refs));
  std::map<std::string, std::string> priors;
  for (const fs::path& fam : families) {
    if (fs::exists(fam / "_references.json", ec)) {
      FL_RETURN_IF_ERROR(ParseReferences(parser, (fam / "_references.json").string(), refs));
    }
    if (fs::exists(fam / "_priors.json", ec)) {
      FL_RETURN_IF_ERROR(ParsePriors(parser, (fam / "_priors.json").string(), priors));
    }
  }
  for (size_t i = 0; i < refs.size(); ++i) {
    if (!ref_index.emplace(refs[i].title, i).second) {
      return Ctx{refs[i].file, ""}.Error(
          "references", StrCat("reference '", refs[i].title, "' is defined twice"));
    }
  }
  for (auto& [title, json] : priors) {
    auto it = ref_index.find(title);
    if (it == ref_index.end()) {
      return absl::InvalidArgumentError(
          StrCat(src_dir, ": _priors.json: prior for unknown reference '", title, "'"));
    }
    if (refs[it->second].prior_json.empty()) refs[it->second].prior_json = json;
  }
  return absl::OkStatus();
}

// Every rule file of every family, with the caps over the whole source
// checked as it is read.
absl::Status ReadRules(simdjson::dom::parser& parser, const std::vector<fs::path>& families,
                       const CompileOptions& opts, std::vector<RuleSrc>& rules) {
  size_t running_signals = 0, running_bytes = 0, running_repeats = 0;
  for (const fs::path& fam : families) {
    for (const std::string& file : ListJson(fam)) {
      if (fs::path(file).filename().string().starts_with("_")) continue;
      RuleSrc rule;
      FL_RETURN_IF_ERROR(ParseRule(parser, file, opts, rule));
      // Caps over the whole source, checked as it is read: a source of a
      // million signals is refused at the cap, not after parsing them all.
      for (const SignalSrc& sig : rule.signals) {
        ++running_signals;
        running_bytes += sig.pattern.size();
        for (const std::string& x : sig.extracts) running_bytes += x.size();
        running_repeats += BoundedRepeatTotal(sig.pattern);
      }
      if (running_signals > opts.max_signals) {
        return absl::InvalidArgumentError(StrCat(file, ": the source has more than the cap of ",
                                                 opts.max_signals, " signals"));
      }
      if (running_bytes > opts.max_total_pattern_bytes) {
        return absl::InvalidArgumentError(
            StrCat(file, ": patterns and extractors add up to more than the cap of ",
                   opts.max_total_pattern_bytes, " bytes"));
      }
      if (running_repeats > opts.max_source_repeat_total) {
        return absl::InvalidArgumentError(
            StrCat(file, ": bounded repeats of all patterns add up to more than the cap of ",
                   opts.max_source_repeat_total));
      }
      rules.push_back(std::move(rule));
    }
  }
  return absl::OkStatus();
}

// What rules say of each other and of the catalog: ids unique, references
// and linked rules known; warnings for loose ends and slow patterns.
absl::StatusOr<size_t> CheckRuleLinks(const std::vector<RuleSrc>& rules,
                                      const std::map<std::string, size_t>& ref_index,
                                      const CompileOptions& opts, const std::string& src_dir,
                                      CompileResult& result) {
  if (rules.empty()) return absl::InvalidArgumentError(StrCat(src_dir, ": no rules"));
  std::map<std::string, const RuleSrc*> by_id;
  size_t nsignals = 0;
  for (const RuleSrc& r : rules) {
    Ctx ctx{r.file, r.id};
    auto [it, fresh] = by_id.emplace(r.id, &r);
    if (!fresh) return ctx.Error("id", StrCat("duplicate rule id (also in ", it->second->file, ")"));
    if (!ref_index.count(r.reference)) {
      return ctx.Error("reference", StrCat("'", r.reference,
                                                 "' is not a catalog title (references.json)"));
    }
    nsignals += r.signals.size();
  }
  if (nsignals > opts.max_signals) {
    return absl::InvalidArgumentError(
        StrCat(src_dir, ": ", nsignals, " signals, more than the cap of ", opts.max_signals));
  }
  for (const RuleSrc& r : rules) {
    Ctx ctx{r.file, r.id};
    for (size_t i = 0; i < r.explains.size(); ++i) {
      if (!by_id.count(r.explains[i].rule)) {
        return ctx.Error(StrCat("explains[", i, "].rule"),
                         StrCat("unknown rule id '", r.explains[i].rule, "'"));
      }
    }
    for (const std::string* cond : {&r.requires_rule, &r.excludes_rule, &r.after_rule, &r.before_rule}) {
      if (!cond->empty() && !by_id.count(*cond)) {
        return ctx.Error("conditions", StrCat("unknown rule id '", *cond, "'"));
      }
    }
    for (const std::string& rel : r.related) {
      if (!by_id.count(rel) && !ref_index.count(rel)) {
        result.warnings.push_back(StrCat(r.file, ": rule '", r.id, "': related: '", rel,
                                               "' is neither a rule id nor a reference title"));
      }
    }
    for (size_t i = 0; i < r.signals.size(); ++i) {
      const SignalSrc& s = r.signals[i];
      if (s.role != fb::Role::Progress && s.role != fb::Role::Metric &&
          LongestLiteral(s.pattern) < 4) {
        result.warnings.push_back(StrCat(
            r.file, ": rule '", r.id, "': signals[", i,
            "].pattern: no literal of 4+ characters; it will slow every scan"));
      }
    }
  }

  return nsignals;
}

// What Hyperscan searches for a signal instead of its pattern: one of the
// estimate's literal options, when RE2 will confirm the line anyway -- the
// pattern is beyond what Hyperscan's match confirms, or the signal is not
// context (failures are rare lines; progress and metric lines run RE2 for
// their fields and newest update), or its literal is in no line of the
// reference sample (a context line that is rare: a job's last lines, a
// checkpoint saved, a scheduler's placement). A plain context pattern whose
// literal the sample holds stays whole: such signals read ordinary lines by
// design (NCCL init, process-group options, on most lines of a dense log),
// where Hyperscan's own match spares RE2. Kept whole, a plain pattern is
// searched as Hyperscan chooses, which is not always by its rarest literal;
// 49 of them cost the database a sixth of its time on the sparse bench log
// (bench/README.md, "2026-12-05: the database alone"). Of the options, the
// fewest sample lines, then the fewest sample lines holding its end (what
// Hyperscan's literal matcher searches a literal by: its last 8 bytes; the
// estimate has already cut each literal where that end is rarest), then
// the literal fewest other signals could take (`shared`: the 25 Xid
// signals all hold "NVRM: Xid (", each its own "): 79,"), then the longest.
std::string PrefilterFor(const SignalSrc& s, const CostEstimate& est,
                         const std::map<std::string, size_t>& shared) {
  if (est.options.empty()) return "";
  const CostEstimate::Option* best = nullptr;
  auto key = [&](const CostEstimate::Option& o) {
    return std::make_tuple(o.sample_lines, o.tail_lines, shared.at(o.literals), -static_cast<long>(o.length));
  };
  for (const CostEstimate::Option& o : est.options) {
    if (!best || key(o) < key(*best)) best = &o;
  }
  if (!est.re2_confirms && s.role == fb::Role::Context && best->sample_lines > 0) return "";
  return best->literals;
}

// The cost budget (pattern_cost.h): a signal whose pattern alone is
// estimated above it fails the compile unless its rule says why
// (`cost_exempt`); an exemption the signal no longer needs is a warning.
// Sets each signal's prefilter (PrefilterFor).
absl::Status CheckSignalCosts(std::vector<RuleSrc>& rules, const CompileOptions& opts,
                              CompileResult& result) {
  CostModel model = DefaultCostModel();
  if (opts.cost_budget >= 0) model.budget = opts.cost_budget;
  PatternCostEstimator estimator(CostReferenceSample(), model);
  std::vector<CostEstimate> estimates;
  std::map<std::string, size_t> shared;  // literal options -> signals that have them
  for (const RuleSrc& r : rules) {
    for (const SignalSrc& s : r.signals) {
      estimates.push_back(estimator.Estimate(s.pattern, s.caseless));
      for (const CostEstimate::Option& o : estimates.back().options) ++shared[o.literals];
    }
  }
  size_t next = 0;
  for (RuleSrc& r : rules) {
    Ctx ctx{r.file, r.id};
    for (size_t i = 0; i < r.signals.size(); ++i) {
      SignalSrc& s = r.signals[i];
      const CostEstimate& est = estimates[next++];
      s.prefilter = PrefilterFor(s, est, shared);
      const bool over = est.cost > model.budget;
      if (over && s.cost_exempt.empty()) {
        return ctx.Error(
            StrCat("signals[", i, "].pattern"),
            StrCat("estimated cost ", static_cast<long>(est.cost + 0.5), ", above the budget of ",
                   static_cast<long>(model.budget), " (", est.Explain(model),
                   "); give it a rarer literal, or say why in \"cost_exempt\" (rulesets/README.md, "
                   "\"Cost budget\")"));
      }
      if (!over && !s.cost_exempt.empty()) {
        result.warnings.push_back(StrCat(r.file, ": rule '", r.id, "': signals[", i,
                                         "].cost_exempt: the signal is within the budget (estimated cost ",
                                         static_cast<long>(est.cost + 0.5), "); drop the exemption"));
      }
    }
  }
  return absl::OkStatus();
}

// The FlatBuffer with its Hyperscan database, loaded back and self-tested.
absl::Status BuildRuleset(const std::string& name, const std::string& version, const std::vector<RuleSrc>& rules,
                          const std::vector<ReferenceSrc>& refs, size_t nsignals, const std::string& src_dir,
                          CompileResult& result) {
  // Build once without a database to compile the database from the same
  // bytes the loader will see, then again with it.
  std::string meta = BuildFlatBuffer(name, version, rules, refs, {}, "", 0);
  const fb::Ruleset* meta_root = fb::GetRuleset(meta.data());
  if (nsignals == 0) {
    return absl::InvalidArgumentError(
        StrCat(src_dir, ": no rule has a signal (rules with only a detector need at least one "
                        "rule with signals beside them)"));
  }
  auto db = CompileDatabase(*meta_root);
  if (!db.ok()) return db.status();
  char* bytes = nullptr;
  size_t len = 0;
  if (hs_serialize_database(db->get(), &bytes, &len) != HS_SUCCESS) {
    return absl::InternalError("hs_serialize_database failed");
  }
  std::string serialized(bytes, len);
  std::free(bytes);
  char* info = nullptr;
  std::string info_str;
  if (hs_serialized_database_info(serialized.data(), serialized.size(), &info) == HS_SUCCESS) {
    info_str = info;
    std::free(info);
  }
  result.buffer =
      BuildFlatBuffer(name, version, rules, refs, serialized, info_str, Fnv1a64(serialized));
  FL_ASSIGN_OR_RETURN(auto loaded, Ruleset::LoadBuiltIn(result.buffer, src_dir));
  return SelfTest(*loaded);
}

}  // namespace

absl::StatusOr<CompileResult> CompileRuleSource(const std::string& src_dir,
                                                const CompileOptions& opts) {
  fs::path root(src_dir);
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    return absl::NotFoundError(StrCat(src_dir, ": not a rule source directory"));
  }
  simdjson::dom::parser parser;
  CompileResult result;
  std::string name = "unnamed", version = "0";
  FL_RETURN_IF_ERROR(ReadRulesetMeta(parser, root, &name, &version));
  const std::vector<fs::path> families = Families(root);
  std::vector<ReferenceSrc> refs;
  std::map<std::string, size_t> ref_index;
  FL_RETURN_IF_ERROR(ReadReferences(parser, root, src_dir, families, refs, ref_index));
  std::vector<RuleSrc> rules;
  FL_RETURN_IF_ERROR(ReadRules(parser, families, opts, rules));
  FL_ASSIGN_OR_RETURN(size_t nsignals, CheckRuleLinks(rules, ref_index, opts, src_dir, result));
  FL_RETURN_IF_ERROR(CheckSignalCosts(rules, opts, result));
  FL_RETURN_IF_ERROR(BuildRuleset(name, version, rules, refs, nsignals, src_dir, result));
  result.rules = rules.size();
  result.signals = nsignals;
  return result;
}

absl::Status SignRuleset(std::string* buffer, const RulesetKey& key) {
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(buffer->data()), buffer->size(),
                                 /*max_depth=*/64, /*max_tables=*/10'000'000);
  if (!fb::VerifyRulesetBuffer(verifier)) {
    return absl::InvalidArgumentError("cannot sign: not a valid ruleset");
  }
  fb::Ruleset* root = fb::GetMutableRuleset(buffer->data());
  auto* key_id = root->mutable_mac_key_id();
  auto* mac = root->mutable_mac();
  if (!key_id || key_id->size() != kRulesetKeyIdBytes || !mac || mac->size() != kRulesetMacBytes) {
    return absl::InvalidArgumentError("cannot sign: the ruleset has no room for a MAC");
  }
  const auto id = key.Id();
  std::memcpy(key_id->data(), id.data(), id.size());
  const size_t mac_offset = static_cast<size_t>(mac->data() - reinterpret_cast<uint8_t*>(buffer->data()));
  FL_ASSIGN_OR_RETURN(auto sum, RulesetMac(key, *buffer, mac_offset));
  std::memcpy(mac->data(), sum.data(), sum.size());
  return absl::OkStatus();
}

absl::Status WriteFileAtomic(const std::string& path, std::string_view bytes) {
  std::string tmp = StrCat(path, ".tmp.", getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::PermissionDeniedError(
        StrCat(path, ": cannot create ", tmp, ": ", std::strerror(errno)));
  }
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int e = n < 0 ? errno : ENOSPC;
      ::close(fd);
      ::unlink(tmp.c_str());
      return absl::ResourceExhaustedError(StrCat(path, ": write failed: ", std::strerror(e)));
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 && errno != EINVAL) {
    int e = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return absl::DataLossError(StrCat(path, ": fsync failed: ", std::strerror(e)));
  }
  if (::close(fd) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return absl::DataLossError(StrCat(path, ": close failed: ", std::strerror(e)));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return absl::PermissionDeniedError(StrCat(path, ": rename failed: ", std::strerror(e)));
  }
  return absl::OkStatus();
}

}  // namespace faultline
