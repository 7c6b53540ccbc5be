// A data-only reader for Python pickles, and the small value tree it (and the
// JSON reader of Flight Recorder dumps) produces.
//
// PyTorch writes its NCCL Flight Recorder dumps with torch::jit::Pickler
// (protocol 2); tools re-pickle them with Python's pickle (protocols 0-5).
// Unpickling runs a little stack machine whose opcodes can import and call
// arbitrary Python (GLOBAL + REDUCE is "call any function"), so a dump from a
// crashed job is untrusted input: this reader implements only the opcodes
// that build plain data (dict, list, tuple, set, str, bytes, int, float,
// bool, None) and refuses every opcode that imports, calls, builds objects
// or reaches outside the stream (GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST,
// OBJ, NEWOBJ, NEWOBJ_EX, EXT1/2/4, PERSID, BINPERSID, NEXT_BUFFER,
// READONLY_BUFFER), with an error naming the opcode and its offset.
//
// Bounded by construction: the machine is iterative (no recursion), every
// length is checked against the bytes left, integers wider than 64 bits are
// refused, and PickleLimits caps the input size, the number of values and the
// container nesting, so a hostile file costs memory linear in its size and
// never deep recursion. The memo keeps identities as Python does (a list
// fetched twice is one list), so the tree is a graph: a value can be shared,
// and a hostile pickle can even make a container contain itself. Readers walk
// it with explicit depth limits (DataTree::Render does).
#ifndef FAULTLINE_FLIGHTREC_PICKLE_H_
#define FAULTLINE_FLIGHTREC_PICKLE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace faultline::flightrec {

enum class ValueKind : uint8_t {
  kNone,
  kBool,
  kInt,
  kFloat,
  kString,  // text (UTF-8)
  kBytes,   // Python bytes / bytearray / protocol-0 byte strings
  kList,
  kTuple,
  kSet,     // set and frozenset
  kDict,
};
const char* ValueKindName(ValueKind k);

// An arena of values addressed by index. Containers hold the indices of their
// items; a dict holds key, value, key, value, ...
class DataTree {
 public:
  using Id = uint32_t;

  Id root() const { return root_; }
  size_t size() const { return nodes_.size(); }

  ValueKind kind(Id id) const { return nodes_[id].kind; }
  bool IsNone(Id id) const { return kind(id) == ValueKind::kNone; }
  // Valid for kBool / kInt (a bool is 0 or 1, as in Python).
  int64_t Int(Id id) const { return nodes_[id].scalar; }
  double Float(Id id) const;
  // Valid for kString / kBytes.
  std::string_view Str(Id id) const { return strings_[nodes_[id].index]; }
  // Valid for containers; a dict's items are key, value, key, value, ...
  std::span<const Id> Items(Id id) const { return children_[nodes_[id].index]; }
  bool IsContainer(Id id) const;

  // The value of `key` (a str) in dict `dict`; the last duplicate wins, as
  // Python's dict does. Empty when absent or when `dict` is not a dict.
  std::optional<Id> Find(Id dict, std::string_view key) const;

  // A short, Python-like rendering bounded in depth and length, for error
  // messages and tests; shared and cyclic values are cut by the bounds.
  std::string Render(Id id, int max_depth = 8, size_t max_chars = 400) const;

  // Building (used by the pickle and JSON readers).
  Id AddScalar(ValueKind k, int64_t v);
  Id AddFloat(double v);
  Id AddString(ValueKind k, std::string s);
  Id AddContainer(ValueKind k, std::vector<Id> items = {});
  std::vector<Id>& MutableItems(Id id) { return children_[nodes_[id].index]; }
  void set_root(Id id) { root_ = id; }

 private:
  struct Node {
    ValueKind kind;
    uint32_t index;  // into strings_ or children_
    int64_t scalar;  // int / bool, or a double's bits
  };
  void RenderTo(Id id, int depth, size_t max_chars, std::string& out) const;

  std::vector<Node> nodes_;
  std::vector<std::string> strings_;
  std::vector<std::vector<Id>> children_;
  Id root_ = 0;
};

struct PickleLimits {
  size_t max_input_bytes = size_t{2} << 30;
  size_t max_values = size_t{1} << 26;  // 64 Mi values (16 bytes each)
  size_t max_mark_depth = 256;          // nested MARKs (containers being built)
};

// Parses one pickle (up to its STOP opcode; trailing bytes are ignored, as
// pickle.loads does). Errors are InvalidArgument and start with
// "pickle: ", naming the opcode and byte offset.
absl::StatusOr<DataTree> ParsePickle(std::string_view data, const PickleLimits& limits = {});

// Whether `head` (the first bytes of a file) starts like a binary pickle:
// PROTO 2..5. Protocol 0/1 pickles have no signature (LooksLikeUnframedPickle).
bool LooksLikeBinaryPickle(std::string_view head);

// Whether `head` starts as Python's protocol 0 or 1 writes a dict (the top
// level of a dump): "(dp<n>\n" (MARK DICT PUT) or "}q<n>" then MARK or a
// string (EMPTY_DICT BINPUT). No signature: text can start so too, which is
// why SniffFlightRecorderDump also wants the dump's keys.
bool LooksLikeUnframedPickle(std::string_view head);

// The name pickletools gives an opcode byte ("BINUNICODE"), or "unknown".
const char* PickleOpcodeName(uint8_t op);

}  // namespace faultline::flightrec

#endif  // FAULTLINE_FLIGHTREC_PICKLE_H_
