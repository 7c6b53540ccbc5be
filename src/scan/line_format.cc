#include "scan/line_format.h"

#include <cstring>

#include "simdjson.h"

namespace faultline {
namespace {

constexpr std::string_view kMessageKeys[] = {"message", "msg", "log", "MESSAGE", "text", "event"};
constexpr std::string_view kTimeKeys[] = {"time", "timestamp", "@timestamp", "ts", "asctime",
                                          "created", "__REALTIME_TIMESTAMP", "t"};
constexpr std::string_view kRankKeys[] = {"rank", "RANK", "global_rank"};
constexpr std::string_view kHostKeys[] = {"host", "hostname", "_HOSTNAME", "node", "nodename"};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool LooksJson(std::string_view line) {
  line = Trim(line);
  return line.size() >= 2 && line.front() == '{' && line.back() == '}';
}

// Fields of one JSON line that matter here.
struct JsonFields {
  std::string message;
  bool has_message = false;
  std::optional<int64_t> time_us;
  std::optional<double> monotonic_s;
  std::optional<int64_t> rank;
  std::string host;
};

bool ParseJsonLine(std::string_view line, const TimeContext& tctx, JsonFields& out) {
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(line.data(), line.size(), true).get(doc)) return false;
  simdjson::dom::object obj;
  if (doc.get_object().get(obj)) return false;
  for (std::string_view key : kMessageKeys) {
    std::string_view v;
    if (!obj[key].get_string().get(v)) {
      out.message.assign(v.data(), v.size());
      out.has_message = true;
      break;
    }
  }
  for (std::string_view key : kTimeKeys) {
    simdjson::dom::element e;
    if (obj[key].get(e)) continue;
    std::string_view sv;
    double d;
    if (!e.get_string().get(sv)) {
      if (key == "__REALTIME_TIMESTAMP") {
        // At most 18 digits (31,000 years of microseconds): more would
        // overflow, and is no journal's timestamp.
        int64_t us = 0;
        bool ok = !sv.empty() && sv.size() <= 18;
        for (char c : sv) {
          if (c < '0' || c > '9') ok = false;
          else if (ok) us = us * 10 + (c - '0');
        }
        if (ok) out.time_us = us;
      } else {
        out.time_us = ParseIso8601(sv, tctx);
        if (!out.time_us) {
          auto pt = ParseLineTime(sv, tctx);
          if (pt && pt->wall_us) out.time_us = pt->wall_us;
        }
      }
    } else if (!e.get_double().get(d)) {
      out.time_us = ParseEpochNumber(d);
    } else {
      int64_t i;
      if (!e.get_int64().get(i)) out.time_us = ParseEpochNumber(static_cast<double>(i));
    }
    if (out.time_us) break;
  }
  std::string_view mono;
  if (!obj["__MONOTONIC_TIMESTAMP"].get_string().get(mono)) {
    double us = 0;
    bool ok = !mono.empty() && mono.size() <= 18;  // as above: a sane uptime
    for (char c : mono) {
      if (c < '0' || c > '9') ok = false;
      else us = us * 10 + (c - '0');
    }
    if (ok) out.monotonic_s = us / 1e6;
  }
  for (std::string_view key : kRankKeys) {
    simdjson::dom::element e;
    if (obj[key].get(e)) continue;
    int64_t i;
    std::string_view sv;
    if (!e.get_int64().get(i)) {
      out.rank = i;
    } else if (!e.get_string().get(sv)) {
      int64_t v = 0;
      bool ok = !sv.empty() && sv.size() < 10;
      for (char c : sv) {
        if (c < '0' || c > '9') ok = false;
        else v = v * 10 + (c - '0');
      }
      if (ok) out.rank = v;
    }
    if (out.rank) break;
  }
  for (std::string_view key : kHostKeys) {
    std::string_view v;
    if (!obj[key].get_string().get(v)) {
      out.host.assign(v.data(), v.size());
      break;
    }
  }
  return true;
}

void Flatten(std::string& msg) {
  // A message is one line to the scanner: docker's trailing "\n" goes, inner
  // newlines (a traceback in one record) become spaces.
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == '\r')) msg.pop_back();
  for (char& c : msg) {
    if (c == '\n' || c == '\r') c = ' ';
  }
}

}  // namespace

LineFormat DetectLineFormat(std::string_view head) {
  LineFormat f;
  size_t pos = 0;
  int looked = 0, json = 0;
  while (pos < head.size() && looked < 8) {
    size_t nl = head.find('\n', pos);
    if (nl == std::string_view::npos) break;  // a partial last line says nothing
    std::string_view line = Trim(head.substr(pos, nl - pos));
    pos = nl + 1;
    if (line.empty()) continue;
    ++looked;
    if (LooksJson(line)) ++json;
  }
  if (looked == 0 && pos < head.size()) {
    std::string_view line = Trim(head.substr(pos));
    if (LooksJson(line)) {
      looked = 1;
      json = 1;
    }
  }
  f.json = looked > 0 && json * 2 > looked;
  return f;
}

LineView SplitLine(std::string_view line, const LineFormat& fmt, const TimeContext& tctx) {
  LineView v;
  if (fmt.json && LooksJson(line)) {
    JsonFields jf;
    if (ParseJsonLine(line, tctx, jf)) {
      if (jf.has_message) {
        Flatten(jf.message);
        v.storage = std::move(jf.message);
        v.message = v.storage;
      } else {
        v.message = line;
      }
      // The message may carry its own prefixes (docker json-file wraps whole
      // launcher lines).
      size_t mb = 0;
      v.attr = AttributeLine(v.message, &mb);
      if (jf.time_us) {
        ParsedTime pt;
        pt.format = TimeFormat::kIso8601;
        pt.wall_us = jf.time_us;
        pt.monotonic_s = jf.monotonic_s;
        v.time = pt;
      } else {
        v.time = ParseLineTime(v.message, tctx);
      }
      if (jf.rank) v.attr.rank = jf.rank;
      if (!jf.host.empty()) v.attr.host = jf.host;
      return v;
    }
  }
  v.message = line;
  size_t mb = 0;
  v.attr = AttributeLine(line, &mb);
  v.time = ParseLineTime(line, tctx);
  if (!v.time && mb < line.size()) {
    // The stamp may follow a launcher prefix: "[rank3]:[E1102 13:46:41.12 ...".
    std::string_view rest = line.substr(mb);
    // "[E1102 13:46:41 ...": a glog stamp in brackets; "[titan] 2025-...":
    // a short tag before the stamp. Try both, two tags deep at most.
    for (int k = 0; k < 3 && !v.time && !rest.empty(); ++k) {
      if (rest.front() == '[') rest.remove_prefix(1);
      v.time = ParseLineTime(rest, tctx);
      if (v.time) break;
      size_t close = rest.find(']');
      if (close == std::string_view::npos || close > 32) break;
      rest.remove_prefix(close + 1);
      while (!rest.empty() && (rest.front() == ' ' || rest.front() == ':')) rest.remove_prefix(1);
    }
  }
  if (!v.time && line.find('\r') != std::string_view::npos) {
    // tqdm bars glued to a record with carriage returns: the record's own
    // stamp and prefix follow the last '\r' that starts one.
    for (size_t cr = line.rfind('\r'); cr != std::string_view::npos && !v.time;
         cr = cr == 0 ? std::string_view::npos : line.rfind('\r', cr - 1)) {
      std::string_view seg = line.substr(cr + 1);
      if (auto t = ParseLineTime(seg, tctx)) {
        v.time = t;
        size_t seg_mb = 0;
        Attribution a = AttributeLine(seg, &seg_mb);
        MergeAttribution(a, v.attr);
        v.attr = a;
      }
    }
  }
  if (v.time && !v.time->monotonic_s) {
    // A syslog or collector header before a kernel stamp.
    v.time->monotonic_s = FindMonotonic(line);
  }
  return v;
}

JsonChunk ExtractJsonMessages(std::string_view chunk) {
  JsonChunk jc;
  TimeContext tctx;
  size_t pos = 0;
  uint64_t line_no = 0;
  while (pos < chunk.size()) {
    size_t nl = chunk.find('\n', pos);
    size_t end = nl == std::string_view::npos ? chunk.size() : nl;
    std::string_view line = chunk.substr(pos, end - pos);
    JsonFields jf;
    std::string msg;
    if (LooksJson(line) && ParseJsonLine(line, tctx, jf) && jf.has_message) {
      msg = std::move(jf.message);
    } else {
      msg.assign(line.data(), line.size());
    }
    Flatten(msg);
    for (char& c : msg) {
      if (c == '\0') c = ' ';
    }
    jc.messages.append(msg);
    jc.messages.push_back('\n');
    jc.lines.push_back({pos, end - pos, line_no});
    ++line_no;
    pos = end + 1;
  }
  return jc;
}

}  // namespace faultline
