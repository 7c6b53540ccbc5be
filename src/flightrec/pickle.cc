#include "flightrec/pickle.h"

#include <bit>
#include <charconv>
#include <cstring>
#include <unordered_map>
#include <utility>

#include "absl/status/status.h"
#include "util/strings.h"
#include "util/utf8.h"
#include "absl/strings/str_format.h"

namespace faultline::flightrec {

const char* ValueKindName(ValueKind k) {
  switch (k) {
    case ValueKind::kNone: return "None";
    case ValueKind::kBool: return "bool";
    case ValueKind::kInt: return "int";
    case ValueKind::kFloat: return "float";
    case ValueKind::kString: return "str";
    case ValueKind::kBytes: return "bytes";
    case ValueKind::kList: return "list";
    case ValueKind::kTuple: return "tuple";
    case ValueKind::kSet: return "set";
    case ValueKind::kDict: return "dict";
  }
  return "?";
}

double DataTree::Float(Id id) const { return std::bit_cast<double>(nodes_[id].scalar); }

bool DataTree::IsContainer(Id id) const {
  switch (kind(id)) {
    case ValueKind::kList:
    case ValueKind::kTuple:
    case ValueKind::kSet:
    case ValueKind::kDict:
      return true;
    default:
      return false;
  }
}

std::optional<DataTree::Id> DataTree::Find(Id dict, std::string_view key) const {
  if (kind(dict) != ValueKind::kDict) return std::nullopt;
  std::span<const Id> items = Items(dict);
  std::optional<Id> found;
  for (size_t i = 0; i + 1 < items.size(); i += 2) {
    if (kind(items[i]) == ValueKind::kString && Str(items[i]) == key) found = items[i + 1];
  }
  return found;
}

DataTree::Id DataTree::AddScalar(ValueKind k, int64_t v) {
  nodes_.push_back(Node{k, 0, v});
  return static_cast<Id>(nodes_.size() - 1);
}

DataTree::Id DataTree::AddFloat(double v) {
  return AddScalar(ValueKind::kFloat, std::bit_cast<int64_t>(v));
}

DataTree::Id DataTree::AddString(ValueKind k, std::string s) {
  strings_.push_back(std::move(s));
  nodes_.push_back(Node{k, static_cast<uint32_t>(strings_.size() - 1), 0});
  return static_cast<Id>(nodes_.size() - 1);
}

DataTree::Id DataTree::AddContainer(ValueKind k, std::vector<Id> items) {
  children_.push_back(std::move(items));
  nodes_.push_back(Node{k, static_cast<uint32_t>(children_.size() - 1), 0});
  return static_cast<Id>(nodes_.size() - 1);
}

std::string DataTree::Render(Id id, int max_depth, size_t max_chars) const {
  std::string out;
  RenderTo(id, max_depth, max_chars, out);
  if (out.size() > max_chars) {
    out.resize(max_chars);
    out += "...";
  }
  return out;
}

void DataTree::RenderTo(Id id, int depth, size_t max_chars, std::string& out) const {
  if (out.size() > max_chars) return;
  switch (kind(id)) {
    case ValueKind::kNone: out += "None"; return;
    case ValueKind::kBool: out += Int(id) ? "True" : "False"; return;
    case ValueKind::kInt: StrAppend(&out, Int(id)); return;
    case ValueKind::kFloat: StrAppend(&out, Float(id)); return;
    case ValueKind::kString:
    case ValueKind::kBytes: {
      out += kind(id) == ValueKind::kBytes ? "b'" : "'";
      for (unsigned char c : Str(id)) {
        if (out.size() > max_chars) break;
        if (c == '\'' || c == '\\') {
          out += '\\';
          out += static_cast<char>(c);
        } else if (c < 0x20 || c == 0x7f || (c >= 0x80 && kind(id) == ValueKind::kBytes)) {
          absl::StrAppendFormat(&out, "\\x%02x", c);
        } else {
          out += static_cast<char>(c);
        }
      }
      out += '\'';
      return;
    }
    default: break;
  }
  const char* open = "[";
  const char* close = "]";
  if (kind(id) == ValueKind::kTuple) open = "(", close = ")";
  if (kind(id) == ValueKind::kSet || kind(id) == ValueKind::kDict) open = "{", close = "}";
  std::span<const Id> items = Items(id);
  out += open;
  if (depth <= 0 && !items.empty()) {
    out += "...";
  } else {
    bool dict = kind(id) == ValueKind::kDict;
    for (size_t i = 0; i < items.size() && out.size() <= max_chars; ++i) {
      if (i > 0) out += (dict && i % 2 == 1) ? ": " : ", ";
      RenderTo(items[i], depth - 1, max_chars, out);
    }
    if (kind(id) == ValueKind::kTuple && items.size() == 1) out += ",";
  }
  out += close;
}

namespace {

// Opcode bytes, named as in CPython's Lib/pickle.py and pickletools.
enum Op : uint8_t {
  kMark = '(', kStop = '.', kPop = '0', kPopMark = '1', kDup = '2',
  kFloat = 'F', kInt = 'I', kBinInt = 'J', kBinInt1 = 'K', kLong = 'L', kBinInt2 = 'M',
  kNone = 'N', kPersId = 'P', kBinPersId = 'Q', kReduce = 'R', kString = 'S',
  kBinString = 'T', kShortBinString = 'U', kUnicode = 'V', kBinUnicode = 'X',
  kAppend = 'a', kBuild = 'b', kGlobal = 'c', kDict = 'd', kEmptyDict = '}',
  kAppends = 'e', kGet = 'g', kBinGet = 'h', kInst = 'i', kLongBinGet = 'j',
  kList = 'l', kEmptyList = ']', kObj = 'o', kPut = 'p', kBinPut = 'q',
  kLongBinPut = 'r', kSetItem = 's', kTuple = 't', kEmptyTuple = ')', kSetItems = 'u',
  kBinFloat = 'G',
  kProto = 0x80, kNewObj = 0x81, kExt1 = 0x82, kExt2 = 0x83, kExt4 = 0x84,
  kTuple1 = 0x85, kTuple2 = 0x86, kTuple3 = 0x87, kNewTrue = 0x88, kNewFalse = 0x89,
  kLong1 = 0x8a, kLong4 = 0x8b,
  kBinBytes = 'B', kShortBinBytes = 'C',
  kShortBinUnicode = 0x8c, kBinUnicode8 = 0x8d, kBinBytes8 = 0x8e, kEmptySet = 0x8f,
  kAddItems = 0x90, kFrozenSet = 0x91, kNewObjEx = 0x92, kStackGlobal = 0x93,
  kMemoize = 0x94, kFrame = 0x95,
  kByteArray8 = 0x96, kNextBuffer = 0x97, kReadonlyBuffer = 0x98,
};

struct OpInfo {
  uint8_t op;
  const char* name;
};
constexpr OpInfo kOpNames[] = {
    {kMark, "MARK"}, {kStop, "STOP"}, {kPop, "POP"}, {kPopMark, "POP_MARK"}, {kDup, "DUP"},
    {kFloat, "FLOAT"}, {kInt, "INT"}, {kBinInt, "BININT"}, {kBinInt1, "BININT1"},
    {kLong, "LONG"}, {kBinInt2, "BININT2"}, {kNone, "NONE"}, {kPersId, "PERSID"},
    {kBinPersId, "BINPERSID"}, {kReduce, "REDUCE"}, {kString, "STRING"},
    {kBinString, "BINSTRING"}, {kShortBinString, "SHORT_BINSTRING"}, {kUnicode, "UNICODE"},
    {kBinUnicode, "BINUNICODE"}, {kAppend, "APPEND"}, {kBuild, "BUILD"}, {kGlobal, "GLOBAL"},
    {kDict, "DICT"}, {kEmptyDict, "EMPTY_DICT"}, {kAppends, "APPENDS"}, {kGet, "GET"},
    {kBinGet, "BINGET"}, {kInst, "INST"}, {kLongBinGet, "LONG_BINGET"}, {kList, "LIST"},
    {kEmptyList, "EMPTY_LIST"}, {kObj, "OBJ"}, {kPut, "PUT"}, {kBinPut, "BINPUT"},
    {kLongBinPut, "LONG_BINPUT"}, {kSetItem, "SETITEM"}, {kTuple, "TUPLE"},
    {kEmptyTuple, "EMPTY_TUPLE"}, {kSetItems, "SETITEMS"}, {kBinFloat, "BINFLOAT"},
    {kProto, "PROTO"}, {kNewObj, "NEWOBJ"}, {kExt1, "EXT1"}, {kExt2, "EXT2"},
    {kExt4, "EXT4"}, {kTuple1, "TUPLE1"}, {kTuple2, "TUPLE2"}, {kTuple3, "TUPLE3"},
    {kNewTrue, "NEWTRUE"}, {kNewFalse, "NEWFALSE"}, {kLong1, "LONG1"}, {kLong4, "LONG4"},
    {kBinBytes, "BINBYTES"}, {kShortBinBytes, "SHORT_BINBYTES"},
    {kShortBinUnicode, "SHORT_BINUNICODE"}, {kBinUnicode8, "BINUNICODE8"},
    {kBinBytes8, "BINBYTES8"}, {kEmptySet, "EMPTY_SET"}, {kAddItems, "ADDITEMS"},
    {kFrozenSet, "FROZENSET"}, {kNewObjEx, "NEWOBJ_EX"}, {kStackGlobal, "STACK_GLOBAL"},
    {kMemoize, "MEMOIZE"}, {kFrame, "FRAME"}, {kByteArray8, "BYTEARRAY8"},
    {kNextBuffer, "NEXT_BUFFER"}, {kReadonlyBuffer, "READONLY_BUFFER"},
};

// Opcodes that import a name, call it, build an object through it, resolve
// an extension-registry code, or fetch an object from outside the stream.
bool IsCodeBearing(uint8_t op) {
  switch (op) {
    case kGlobal: case kStackGlobal: case kReduce: case kBuild: case kInst: case kObj:
    case kNewObj: case kNewObjEx: case kExt1: case kExt2: case kExt4:
    case kPersId: case kBinPersId:
      return true;
    default:
      return false;
  }
}

// torch::jit::Pickler writes std::string bytes unchecked as BINUNICODE;
// evidence text must be UTF-8, so invalid sequences become U+FFFD.
std::string ToValidUtf8(std::string_view s) {
  if (IsValidUtf8(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      AppendUtf8(0xFFFD, out);
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

int HexVal(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

#define FL_NEED(n)                      \
  do {                                  \
    absl::Status need_ = Need(n);       \
    if (!need_.ok()) return need_;      \
  } while (0)
#define FL_EXPECT_KIND(id, k)                                                       \
  do {                                                                              \
    if (tree_.kind(id) != (k)) {                                                    \
      return Error(StrCat("the target is a ", ValueKindName(tree_.kind(id)), \
                                ", not a ", ValueKindName(k)));                     \
    }                                                                               \
  } while (0)

class Machine {
 public:
  Machine(std::string_view data, const PickleLimits& limits) : data_(data), limits_(limits) {}

  absl::StatusOr<DataTree> Run() {
    if (data_.size() > limits_.max_input_bytes) {
      return absl::InvalidArgumentError(StrCat("pickle: ", data_.size(),
                                                     " bytes exceed the limit of ",
                                                     limits_.max_input_bytes));
    }
    while (pos_ < data_.size()) {
      op_offset_ = pos_;
      op_ = static_cast<uint8_t>(data_[pos_++]);
      if (op_ == kStop) {
        if (stack_.empty()) return Error("STOP with an empty stack");
        tree_.set_root(stack_.back());
        return std::move(tree_);
      }
      absl::Status st = Step();
      if (!st.ok()) return st;
    }
    return absl::InvalidArgumentError(
        StrCat("pickle: truncated: no STOP opcode before the end (", data_.size(),
                     " bytes)"));
  }

 private:
  absl::Status Error(std::string_view what) const {
    return absl::InvalidArgumentError(absl::StrFormat("pickle: %s (opcode %s at offset %d)",
                                                      what, PickleOpcodeName(op_), op_offset_));
  }

  absl::Status Need(size_t n) const {
    if (data_.size() - pos_ < n) return Error("truncated argument");
    return absl::OkStatus();
  }
  uint64_t ReadLE(size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint64_t{static_cast<uint8_t>(data_[pos_ + i])} << (8 * i);
    pos_ += n;
    return v;
  }
  absl::StatusOr<std::string_view> ReadLine() {
    size_t nl = data_.find('\n', pos_);
    if (nl == std::string_view::npos) return Error("truncated line argument");
    std::string_view line = data_.substr(pos_, nl - pos_);
    pos_ = nl + 1;
    return line;
  }
  absl::StatusOr<std::string_view> ReadBytes(uint64_t n) {
    if (n > data_.size() - pos_) return Error("length past the end of the data");
    std::string_view s = data_.substr(pos_, n);
    pos_ += n;
    return s;
  }

  absl::Status Count() {
    if (tree_.size() >= limits_.max_values) {
      return Error(StrCat("more than ", limits_.max_values, " values"));
    }
    return absl::OkStatus();
  }
  absl::Status PushScalar(ValueKind k, int64_t v) {
    absl::Status st = Count();
    if (!st.ok()) return st;
    stack_.push_back(tree_.AddScalar(k, v));
    return absl::OkStatus();
  }
  absl::Status PushString(ValueKind k, std::string s) {
    absl::Status st = Count();
    if (!st.ok()) return st;
    stack_.push_back(tree_.AddString(k, std::move(s)));
    return absl::OkStatus();
  }
  absl::Status PushContainer(ValueKind k, std::vector<DataTree::Id> items = {}) {
    absl::Status st = Count();
    if (!st.ok()) return st;
    stack_.push_back(tree_.AddContainer(k, std::move(items)));
    return absl::OkStatus();
  }
  // Python 2 byte strings: text when they decode (ASCII/UTF-8), else bytes.
  absl::Status PushByteString(std::string_view s) {
    if (IsValidUtf8(s)) return PushString(ValueKind::kString, std::string(s));
    return PushString(ValueKind::kBytes, std::string(s));
  }

  absl::StatusOr<std::vector<DataTree::Id>> PopMark() {
    if (marks_.empty()) return Error("no MARK on the stack");
    size_t m = marks_.back();
    marks_.pop_back();
    std::vector<DataTree::Id> items(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
    stack_.resize(m);
    return items;
  }
  absl::StatusOr<DataTree::Id> Pop() {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) return Error("stack underflow");
    DataTree::Id v = stack_.back();
    stack_.pop_back();
    return v;
  }
  absl::StatusOr<DataTree::Id> Top() const {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) return Error("stack underflow");
    return stack_.back();
  }
  absl::Status Memo(uint64_t index) {
    auto top = Top();
    if (!top.ok()) return top.status();
    memo_[index] = *top;
    return absl::OkStatus();
  }
  absl::Status Fetch(uint64_t index) {
    auto it = memo_.find(index);
    if (it == memo_.end()) return Error(StrCat("memo key ", index, " was never stored"));
    stack_.push_back(it->second);
    return absl::OkStatus();
  }
  absl::StatusOr<uint64_t> ParseDecimalIndex(std::string_view s) {
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size()) return Error("bad memo index");
    return v;
  }
  absl::Status PushLong(std::string_view bytes) {
    // Two's complement, little-endian, minimal length in CPython's encoder.
    if (bytes.empty()) return PushScalar(ValueKind::kInt, 0);
    size_t n = bytes.size();
    bool negative = static_cast<uint8_t>(bytes[n - 1]) & 0x80;
    if (n > 8) {
      uint8_t fill = negative ? 0xFF : 0x00;
      for (size_t i = 8; i < n; ++i) {
        if (static_cast<uint8_t>(bytes[i]) != fill) return Error("integer wider than 64 bits");
      }
      if (((static_cast<uint8_t>(bytes[7]) & 0x80) != 0) != negative) {
        return Error("integer wider than 64 bits");
      }
      n = 8;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint64_t{static_cast<uint8_t>(bytes[i])} << (8 * i);
    if (negative && n < 8) v |= ~uint64_t{0} << (8 * n);
    return PushScalar(ValueKind::kInt, static_cast<int64_t>(v));
  }
  absl::Status PushDecimal(std::string_view s, bool allow_long_suffix) {
    if (allow_long_suffix && !s.empty() && s.back() == 'L') s.remove_suffix(1);
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc::result_out_of_range) return Error("integer wider than 64 bits");
    if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return Error("bad integer");
    return PushScalar(ValueKind::kInt, v);
  }
  // Protocol 0 STRING: a quoted Python 2 repr, decoded as codecs.escape_decode.
  absl::Status PushQuoted(std::string_view s) {
    if (s.size() < 2 || (s.front() != '\'' && s.front() != '"') || s.back() != s.front()) {
      return Error("STRING argument is not quoted");
    }
    s = s.substr(1, s.size() - 2);
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] != '\\' || i + 1 == s.size()) {
        out += s[i];
        continue;
      }
      char c = s[++i];
      switch (c) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'v': out += '\v'; break;
        case '\\': case '\'': case '"': out += c; break;
        case '\n': break;
        case 'x': {
          int hi = i + 1 < s.size() ? HexVal(s[i + 1]) : -1;
          int lo = i + 2 < s.size() ? HexVal(s[i + 2]) : -1;
          if (hi < 0 || lo < 0) return Error("bad \\x escape");
          out += static_cast<char>(hi * 16 + lo);
          i += 2;
          break;
        }
        default:
          if (c >= '0' && c <= '7') {
            int v = c - '0';
            for (int k = 0; k < 2 && i + 1 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '7'; ++k) {
              v = v * 8 + (s[++i] - '0');
            }
            out += static_cast<char>(v & 0xFF);
          } else {
            out += '\\';
            out += c;
          }
      }
    }
    return PushByteString(out);
  }
  // Protocol 0 UNICODE: raw-unicode-escape (Latin-1 bytes, \uXXXX, \UXXXXXXXX).
  absl::Status PushRawUnicode(std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == 'u' || s[i + 1] == 'U')) {
        size_t digits = s[i + 1] == 'u' ? 4 : 8;
        if (i + 2 + digits > s.size()) return Error("truncated \\u escape");
        uint32_t cp = 0;
        for (size_t k = 0; k < digits; ++k) {
          int h = HexVal(s[i + 2 + k]);
          if (h < 0) return Error("bad \\u escape");
          cp = (cp << 4) | static_cast<uint32_t>(h);
        }
        AppendUtf8(cp, out);
        i += 1 + digits;
      } else {
        AppendUtf8(static_cast<uint8_t>(s[i]), out);
      }
    }
    return PushString(ValueKind::kString, std::move(out));
  }

  absl::Status Step() {
    if (IsCodeBearing(op_)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "pickle: opcode %s (0x%02x) at offset %d imports or calls Python code; refused: "
          "a Flight Recorder dump holds data only",
          PickleOpcodeName(op_), op_, op_offset_));
    }
    switch (op_) {
      case kProto: {
        FL_NEED(1);
        uint8_t proto = static_cast<uint8_t>(data_[pos_++]);
        if (proto > 5) return Error(StrCat("unsupported protocol ", proto));
        return absl::OkStatus();
      }
      case kFrame: {
        FL_NEED(8);
        uint64_t n = ReadLE(8);
        if (n > data_.size() - pos_) return Error("frame past the end of the data");
        return absl::OkStatus();
      }
      case kMark:
        if (marks_.size() >= limits_.max_mark_depth) {
          return Error(StrCat("more than ", limits_.max_mark_depth, " nested MARKs"));
        }
        marks_.push_back(stack_.size());
        return absl::OkStatus();
      case kPop:
        if (!marks_.empty() && stack_.size() == marks_.back()) {
          marks_.pop_back();
          return absl::OkStatus();
        }
        return Pop().status();
      case kPopMark: return PopMark().status();
      case kDup: {
        auto top = Top();
        if (!top.ok()) return top.status();
        stack_.push_back(*top);
        return absl::OkStatus();
      }
      case kNone: return PushScalar(ValueKind::kNone, 0);
      case kNewTrue: return PushScalar(ValueKind::kBool, 1);
      case kNewFalse: return PushScalar(ValueKind::kBool, 0);
      case kBinInt: {
        FL_NEED(4);
        return PushScalar(ValueKind::kInt, static_cast<int32_t>(ReadLE(4)));
      }
      case kBinInt1: FL_NEED(1); return PushScalar(ValueKind::kInt, static_cast<int64_t>(ReadLE(1)));
      case kBinInt2: FL_NEED(2); return PushScalar(ValueKind::kInt, static_cast<int64_t>(ReadLE(2)));
      case kLong1: {
        FL_NEED(1);
        uint64_t n = ReadLE(1);
        auto b = ReadBytes(n);
        if (!b.ok()) return b.status();
        return PushLong(*b);
      }
      case kLong4: {
        FL_NEED(4);
        int32_t n = static_cast<int32_t>(ReadLE(4));
        if (n < 0) return Error("negative length");
        auto b = ReadBytes(static_cast<uint64_t>(n));
        if (!b.ok()) return b.status();
        return PushLong(*b);
      }
      case kInt: {
        auto line = ReadLine();
        if (!line.ok()) return line.status();
        if (*line == "01") return PushScalar(ValueKind::kBool, 1);
        if (*line == "00") return PushScalar(ValueKind::kBool, 0);
        return PushDecimal(*line, false);
      }
      case kLong: {
        auto line = ReadLine();
        if (!line.ok()) return line.status();
        return PushDecimal(*line, true);
      }
      case kFloat: {
        auto line = ReadLine();
        if (!line.ok()) return line.status();
        double v = 0;
        auto [p, ec] = std::from_chars(line->data(), line->data() + line->size(), v);
        if (ec != std::errc() || p != line->data() + line->size()) return Error("bad float");
        absl::Status st = Count();
        if (!st.ok()) return st;
        stack_.push_back(tree_.AddFloat(v));
        return absl::OkStatus();
      }
      case kBinFloat: {
        FL_NEED(8);
        uint64_t bits = 0;
        for (int i = 0; i < 8; ++i) bits = (bits << 8) | static_cast<uint8_t>(data_[pos_ + i]);
        pos_ += 8;
        absl::Status st = Count();
        if (!st.ok()) return st;
        stack_.push_back(tree_.AddFloat(std::bit_cast<double>(bits)));
        return absl::OkStatus();
      }
      case kString: {
        auto line = ReadLine();
        if (!line.ok()) return line.status();
        return PushQuoted(*line);
      }
      case kUnicode: {
        auto line = ReadLine();
        if (!line.ok()) return line.status();
        return PushRawUnicode(*line);
      }
      case kBinString: case kShortBinString: case kBinUnicode: case kShortBinUnicode:
      case kBinUnicode8: case kBinBytes: case kShortBinBytes: case kBinBytes8:
      case kByteArray8: {
        size_t width = (op_ == kShortBinString || op_ == kShortBinUnicode || op_ == kShortBinBytes)
                           ? 1
                       : (op_ == kBinUnicode8 || op_ == kBinBytes8 || op_ == kByteArray8) ? 8
                                                                                           : 4;
        FL_NEED(width);
        uint64_t n = ReadLE(width);
        if (op_ == kBinString && (n & 0x80000000u)) return Error("negative length");
        auto b = ReadBytes(n);
        if (!b.ok()) return b.status();
        if (op_ == kBinString || op_ == kShortBinString) return PushByteString(*b);
        if (op_ == kBinUnicode || op_ == kShortBinUnicode || op_ == kBinUnicode8) {
          return PushString(ValueKind::kString, ToValidUtf8(*b));
        }
        return PushString(ValueKind::kBytes, std::string(*b));
      }
      case kEmptyList: return PushContainer(ValueKind::kList);
      case kEmptyDict: return PushContainer(ValueKind::kDict);
      case kEmptyTuple: return PushContainer(ValueKind::kTuple);
      case kEmptySet: return PushContainer(ValueKind::kSet);
      case kList: case kTuple: case kFrozenSet: case kDict: {
        auto items = PopMark();
        if (!items.ok()) return items.status();
        if (op_ == kDict && items->size() % 2 != 0) return Error("odd number of items for a dict");
        ValueKind k = op_ == kList ? ValueKind::kList
                      : op_ == kTuple ? ValueKind::kTuple
                      : op_ == kDict ? ValueKind::kDict
                                     : ValueKind::kSet;
        return PushContainer(k, std::move(*items));
      }
      case kTuple1: case kTuple2: case kTuple3: {
        size_t n = op_ - kTuple1 + 1;
        size_t floor = marks_.empty() ? 0 : marks_.back();
        if (stack_.size() < floor + n) return Error("stack underflow");
        std::vector<DataTree::Id> items(stack_.end() - static_cast<std::ptrdiff_t>(n),
                                        stack_.end());
        stack_.resize(stack_.size() - n);
        return PushContainer(ValueKind::kTuple, std::move(items));
      }
      case kAppend: {
        auto v = Pop();
        if (!v.ok()) return v.status();
        auto target = Top();
        if (!target.ok()) return target.status();
        FL_EXPECT_KIND(*target, ValueKind::kList);
        tree_.MutableItems(*target).push_back(*v);
        return absl::OkStatus();
      }
      case kAppends: case kSetItems: case kAddItems: {
        auto items = PopMark();
        if (!items.ok()) return items.status();
        auto target = Top();
        if (!target.ok()) return target.status();
        ValueKind want = op_ == kAppends ? ValueKind::kList
                         : op_ == kSetItems ? ValueKind::kDict
                                            : ValueKind::kSet;
        FL_EXPECT_KIND(*target, want);
        if (op_ == kSetItems && items->size() % 2 != 0) return Error("odd number of items");
        auto& dst = tree_.MutableItems(*target);
        dst.insert(dst.end(), items->begin(), items->end());
        return absl::OkStatus();
      }
      case kSetItem: {
        auto v = Pop();
        if (!v.ok()) return v.status();
        auto k = Pop();
        if (!k.ok()) return k.status();
        auto target = Top();
        if (!target.ok()) return target.status();
        FL_EXPECT_KIND(*target, ValueKind::kDict);
        auto& dst = tree_.MutableItems(*target);
        dst.push_back(*k);
        dst.push_back(*v);
        return absl::OkStatus();
      }
      case kPut: {
        auto line = ReadLine();
        if (!line.ok()) return line.status();
        auto idx = ParseDecimalIndex(*line);
        if (!idx.ok()) return idx.status();
        return Memo(*idx);
      }
      case kBinPut: FL_NEED(1); return Memo(ReadLE(1));
      case kLongBinPut: FL_NEED(4); return Memo(ReadLE(4));
      case kMemoize: return Memo(memo_.size());
      case kGet: {
        auto line = ReadLine();
        if (!line.ok()) return line.status();
        auto idx = ParseDecimalIndex(*line);
        if (!idx.ok()) return idx.status();
        return Fetch(*idx);
      }
      case kBinGet: FL_NEED(1); return Fetch(ReadLE(1));
      case kLongBinGet: FL_NEED(4); return Fetch(ReadLE(4));
      case kNextBuffer: case kReadonlyBuffer:
        return Error("out-of-band buffers are not supported in a dump file");
      default:
        return absl::InvalidArgumentError(absl::StrFormat(
            "pickle: unknown opcode 0x%02x at offset %d", op_, op_offset_));
    }
  }

  std::string_view data_;
  PickleLimits limits_;
  size_t pos_ = 0;
  size_t op_offset_ = 0;
  uint8_t op_ = 0;
  DataTree tree_;
  std::vector<DataTree::Id> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, DataTree::Id> memo_;
};

#undef FL_NEED
#undef FL_EXPECT_KIND

}  // namespace

const char* PickleOpcodeName(uint8_t op) {
  for (const OpInfo& o : kOpNames) {
    if (o.op == op) return o.name;
  }
  return "unknown";
}

bool LooksLikeBinaryPickle(std::string_view head) {
  return head.size() >= 2 && static_cast<uint8_t>(head[0]) == kProto &&
         static_cast<uint8_t>(head[1]) >= 2 && static_cast<uint8_t>(head[1]) <= 5;
}

bool LooksLikeUnframedPickle(std::string_view head) {
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (head.starts_with("(dp") && head.size() > 3 && digit(head[3])) {
    size_t i = head.find_first_not_of("0123456789", 3);
    return i != std::string_view::npos && head[i] == '\n';
  }
  return head.size() >= 4 && head[0] == kEmptyDict && head[1] == kBinPut &&
         (head[3] == kMark || head[3] == kBinUnicode || head[3] == kShortBinString ||
          head[3] == kBinString);
}

absl::StatusOr<DataTree> ParsePickle(std::string_view data, const PickleLimits& limits) {
  return Machine(data, limits).Run();
}

}  // namespace faultline::flightrec
