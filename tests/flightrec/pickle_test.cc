// The data-only pickle reader: every data opcode it accepts, every
// code-bearing opcode refused (one test each), and the bounds that keep a
// hostile pickle from exhausting memory or looping.
#include "flightrec/pickle.h"

#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace faultline::flightrec {
namespace {

using ::testing::HasSubstr;

std::string B(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) s += static_cast<char>(b);
  return s;
}
std::string LE32(uint32_t v) {
  return B({int(v & 0xff), int((v >> 8) & 0xff), int((v >> 16) & 0xff), int(v >> 24)});
}
std::string LE64(uint64_t v) {
  std::string s;
  for (int i = 0; i < 8; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}
std::string BinUnicode(std::string_view s) { return "X" + LE32(uint32_t(s.size())) + std::string(s); }

DataTree Parse(const std::string& p) {
  auto t = ParsePickle(p);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : DataTree();
}
std::string Rendered(const std::string& p) {
  auto t = ParsePickle(p);
  if (!t.ok()) return "ERROR " + std::string(t.status().message());
  return t->Render(t->root(), 16, 4000);
}

TEST(PickleTest, Integers) {
  EXPECT_EQ(Rendered("\x80\x02K\x05."), "5");
  EXPECT_EQ(Rendered("\x80\x02M" + B({0x00, 0x01}) + "."), "256");
  EXPECT_EQ(Rendered("\x80\x02J" + LE32(0xffffffffu) + "."), "-1");
  EXPECT_EQ(Rendered("\x80\x02\x8a\x08" + LE64(0x7fffffffffffffffull) + "."),
            "9223372036854775807");
  EXPECT_EQ(Rendered("\x80\x02\x8a\x02" + B({0x00, 0xff}) + "."), "-256");
  EXPECT_EQ(Rendered(std::string("\x80\x02\x8a\x00.", 5)), "0");
  // CPython pads a positive 2^63-1 to 9 bytes only when the top bit is set.
  EXPECT_EQ(Rendered("\x80\x02\x8a\x09" + LE64(0x8000000000000000ull) + B({0xff}) + "."),
            "-9223372036854775808");
  EXPECT_EQ(Rendered("\x80\x02\x8b" + LE32(2) + B({0x34, 0x12}) + "."), "4660");
  EXPECT_EQ(Rendered("I42\n."), "42");
  EXPECT_EQ(Rendered("I-7\n."), "-7");
  EXPECT_EQ(Rendered("I01\n."), "True");
  EXPECT_EQ(Rendered("I00\n."), "False");
  EXPECT_EQ(Rendered("L123L\n."), "123");
}

TEST(PickleTest, IntegersWiderThan64BitsAreRefused) {
  EXPECT_THAT(Rendered("\x80\x02\x8a\x09" + LE64(0) + B({0x01}) + "."),
              HasSubstr("wider than 64 bits"));
  EXPECT_THAT(Rendered("\x80\x02\x8a\x09" + LE64(0x8000000000000000ull) + B({0x00}) + "."),
              HasSubstr("wider than 64 bits"));
  EXPECT_THAT(Rendered("L99999999999999999999L\n."), HasSubstr("wider than 64 bits"));
  EXPECT_THAT(Rendered("\x80\x02\x8b" + LE32(0x80000000u) + "."), HasSubstr("negative length"));
}

TEST(PickleTest, FloatsBoolsNone) {
  // 1.5 as a big-endian IEEE double.
  EXPECT_EQ(Rendered("\x80\x02G" + B({0x3f, 0xf8, 0, 0, 0, 0, 0, 0}) + "."), "1.5");
  EXPECT_EQ(Rendered("F2.25\n."), "2.25");
  EXPECT_EQ(Rendered("\x80\x02\x88."), "True");
  EXPECT_EQ(Rendered("\x80\x02\x89."), "False");
  EXPECT_EQ(Rendered("\x80\x02N."), "None");
}

TEST(PickleTest, StringsAndBytes) {
  EXPECT_EQ(Rendered("\x80\x02" + BinUnicode("nccl:all_reduce") + "."), "'nccl:all_reduce'");
  EXPECT_EQ(Rendered("\x80\x04\x8c\x03" "abc."), "'abc'");
  EXPECT_EQ(Rendered("\x80\x04\x8d" + LE64(2) + "hi."), "'hi'");
  EXPECT_EQ(Rendered("S'a\\nb\\x41'\n."), "'a\\x0abA'");
  EXPECT_EQ(Rendered("T" + LE32(3) + "xyz."), "'xyz'");
  EXPECT_EQ(Rendered("U\x02ok."), "'ok'");
  EXPECT_EQ(Rendered("U\x01\xff."), "b'\\xff'");
  EXPECT_EQ(Rendered("Vcaf\\u00e9\n."), "'caf\xc3\xa9'");
  EXPECT_EQ(Rendered("\x80\x03" "B" + LE32(2) + "\x01\x02."), "b'\\x01\\x02'");
  EXPECT_EQ(Rendered("\x80\x03\x43\x01z."), "b'z'");
  EXPECT_EQ(Rendered("\x80\x04\x8e" + LE64(1) + "q."), "b'q'");
  EXPECT_EQ(Rendered("\x80\x05\x96" + LE64(1) + "r."), "b'r'");
  // torch::jit::Pickler writes raw std::string bytes: invalid UTF-8 is
  // replaced, not trusted.
  DataTree t = Parse("\x80\x02" + BinUnicode("a\xff") + ".");
  EXPECT_EQ(t.Str(t.root()), "a\xef\xbf\xbd");
}

TEST(PickleTest, Containers) {
  EXPECT_EQ(Rendered("\x80\x02]q" + B({0}) + "(K\x01K\x02" "e."), "[1, 2]");
  EXPECT_EQ(Rendered("\x80\x02]K\x01" "a."), "[1]");
  EXPECT_EQ(Rendered("(K\x01K\x02l."), "[1, 2]");
  EXPECT_EQ(Rendered("(K\x01K\x02t."), "(1, 2)");
  EXPECT_EQ(Rendered("\x80\x02)."), "()");
  EXPECT_EQ(Rendered("\x80\x02K\x01\x85."), "(1,)");
  EXPECT_EQ(Rendered("\x80\x02K\x01K\x02\x86."), "(1, 2)");
  EXPECT_EQ(Rendered("\x80\x02K\x01K\x02K\x03\x87."), "(1, 2, 3)");
  EXPECT_EQ(Rendered("(U\x01kK\x01" "d."), "{'k': 1}");
  EXPECT_EQ(Rendered("\x80\x02}U\x01kK\x01s."), "{'k': 1}");
  EXPECT_EQ(Rendered("\x80\x02}(U\x01" "aK\x01U\x01" "bK\x02u."), "{'a': 1, 'b': 2}");
  EXPECT_EQ(Rendered("\x80\x04\x8f(K\x01\x90."), "{1}");
  EXPECT_EQ(Rendered("\x80\x04(K\x01\x91."), "{1}");
}

TEST(PickleTest, MemoKeepsIdentity) {
  // [x, x] where x = [] memoized, then APPEND to x: both items see it.
  // outer = [inner, inner] through BINGET, then inner.append(7).
  std::string p = B({0x80, 2}) + "]q" + B({0}) + "(]q" + B({1}) + "h" + B({1}) + "e" + "h" +
                  B({1}) + "K" + B({7}) + "a" + "0" + ".";
  DataTree t = Parse(p);
  EXPECT_EQ(t.Render(t.root()), "[[7], [7]]");
  EXPECT_EQ(t.Items(t.root())[0], t.Items(t.root())[1]);
  EXPECT_EQ(Rendered("\x80\x02U\x01zr" + LE32(70000) + "0j" + LE32(70000) + "."), "'z'");
  EXPECT_EQ(Rendered("U\x01zp12\n0g12\n."), "'z'");
  EXPECT_EQ(Rendered("\x80\x04\x8c\x01z\x94" "0h" + B({0}) + "."), "'z'");
  EXPECT_THAT(Rendered("\x80\x02h\x05."), HasSubstr("memo key 5 was never stored"));
}

TEST(PickleTest, FramingStackOpsAndTrailingBytes) {
  EXPECT_EQ(Rendered("\x80\x04\x95" + LE64(3) + "K\x01.garbage after STOP"), "1");
  EXPECT_EQ(Rendered("\x80\x02K\x01K\x02" "0."), "1");    // POP
  EXPECT_EQ(Rendered("\x80\x02K\x01(K\x02K\x03" "1."), "1");  // POP_MARK
  EXPECT_EQ(Rendered("\x80\x02K\x01\x32\x86."), "(1, 1)");  // DUP
}

TEST(PickleTest, MalformedInputFailsCleanly) {
  EXPECT_THAT(Rendered(""), HasSubstr("no STOP"));
  EXPECT_THAT(Rendered("\x80\x02K"), HasSubstr("truncated argument"));
  EXPECT_THAT(Rendered("\x80\x02X" + LE32(1000) + "ab."), HasSubstr("past the end"));
  EXPECT_THAT(Rendered("\x80\x06K\x01."), HasSubstr("unsupported protocol 6"));
  EXPECT_THAT(Rendered("\x80\x02."), HasSubstr("STOP with an empty stack"));
  EXPECT_THAT(Rendered("\x80\x02K\x01K\x02u."), HasSubstr("no MARK"));
  EXPECT_THAT(Rendered("\x80\x02)K\x01" "a."), HasSubstr("the target is a tuple, not a list"));
  EXPECT_THAT(Rendered("\x80\x02\xff."), HasSubstr("unknown opcode 0xff at offset 2"));
  EXPECT_THAT(Rendered("\x80\x02(K\x01\x86."), HasSubstr("stack underflow"));
  EXPECT_THAT(Rendered("\x80\x05\x97."), HasSubstr("out-of-band buffers"));
  EXPECT_THAT(Rendered("S'unterminated\n."), HasSubstr("not quoted"));
}

TEST(PickleTest, LimitsBoundNestingAndValues) {
  std::string deep = "\x80\x02";
  for (int i = 0; i < 300; ++i) deep += "(";
  deep += "K\x01.";
  auto t = ParsePickle(deep);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("nested MARKs"));

  std::string many = "\x80\x02]";
  for (int i = 0; i < 100; ++i) many += "K\x01" "a";
  many += ".";
  PickleLimits small;
  small.max_values = 50;
  t = ParsePickle(many, small);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("more than 50 values"));
  EXPECT_TRUE(ParsePickle(many).ok());

  small = PickleLimits();
  small.max_input_bytes = 10;
  t = ParsePickle(many, small);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("exceed the limit"));
}

TEST(PickleTest, SelfContainingListRendersBounded) {
  // l = []; l.append(l): a cycle through the memo.
  DataTree t = Parse("\x80\x02]q" + B({0}) + "h" + B({0}) + "a.");
  std::string r = t.Render(t.root(), 5, 1000);
  EXPECT_EQ(r, "[[[[[[...]]]]]]");
}

TEST(PickleTest, EveryPrefixOfAValidPickleFailsCleanly) {
  std::string p = "\x80\x02}q" + B({0}) + "(" + BinUnicode("entries") + "]q\x01(}q\x02(" +
                  BinUnicode("collective_seq_id") + "K\x05" + BinUnicode("state") +
                  BinUnicode("started") + "ue" + BinUnicode("x") + "h\x01" + "G" +
                  B({0x3f, 0xf8, 0, 0, 0, 0, 0, 0}) + "\x86u.";
  ASSERT_TRUE(ParsePickle(p).ok());
  for (size_t n = 0; n < p.size(); ++n) {
    EXPECT_FALSE(ParsePickle(p.substr(0, n)).ok()) << n;
  }
}

TEST(PickleTest, Sniffing) {
  EXPECT_TRUE(LooksLikeBinaryPickle("\x80\x02}"));
  EXPECT_TRUE(LooksLikeBinaryPickle("\x80\x05\x95"));
  EXPECT_FALSE(LooksLikeBinaryPickle("\x80\x01"));
  EXPECT_FALSE(LooksLikeBinaryPickle("(dp0"));
  EXPECT_FALSE(LooksLikeBinaryPickle(""));
  EXPECT_TRUE(LooksLikeUnframedPickle("(dp0\nVversion\n"));
  EXPECT_TRUE(LooksLikeUnframedPickle("(dp12\nS'version'\n"));
  EXPECT_TRUE(LooksLikeUnframedPickle(std::string("}q\x00(X\x07\x00", 7)));
  EXPECT_FALSE(LooksLikeUnframedPickle("(dpx\n"));
  EXPECT_FALSE(LooksLikeUnframedPickle("(dp0 pg_config"));
  EXPECT_FALSE(LooksLikeUnframedPickle("}q"));
  EXPECT_FALSE(LooksLikeUnframedPickle("{\"pg_config\": 1}"));
}

// One test per opcode that imports, calls or reaches outside the stream:
// each payload is what an attacker would write, and each must be refused at
// the opcode, before anything is looked up.
struct CodeOp {
  const char* name;
  std::string payload;
  size_t offset;  // of the refused opcode
};

void PrintTo(const CodeOp& c, std::ostream* os) { *os << c.name; }

class CodeBearingOpcodeTest : public ::testing::TestWithParam<CodeOp> {};

TEST_P(CodeBearingOpcodeTest, IsRefusedNamingOpcodeAndOffset) {
  const CodeOp& c = GetParam();
  auto t = ParsePickle(c.payload);
  ASSERT_FALSE(t.ok()) << c.name;
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  std::string msg(t.status().message());
  EXPECT_THAT(msg, HasSubstr(std::string("opcode ") + c.name + " ("));
  EXPECT_THAT(msg, HasSubstr("at offset " + std::to_string(c.offset) + " "));
  EXPECT_THAT(msg, HasSubstr("refused"));
  EXPECT_STREQ(PickleOpcodeName(static_cast<uint8_t>(c.payload[c.offset])), c.name);
}

std::string Cmd() { return BinUnicode("echo pwned"); }

INSTANTIATE_TEST_SUITE_P(
    Pickle, CodeBearingOpcodeTest,
    ::testing::Values(
        CodeOp{"GLOBAL", "cos\nsystem\n(S'echo pwned'\ntR.", 0},
        CodeOp{"STACK_GLOBAL", "\x80\x04\x8c\x02os\x8c\x06system\x93" + Cmd() + "\x85R.", 14},
        // REDUCE and BUILD are refused even when what they would call was
        // never imported: the stack holds only data here.
        CodeOp{"REDUCE", "\x80\x02" + Cmd() + ")R.", 18},
        CodeOp{"BUILD", "\x80\x02}}b.", 4},
        CodeOp{"INST", "(S'echo pwned'\nios\nsystem\n.", 15},
        CodeOp{"OBJ", "\x80\x02(" + Cmd() + "o.", 18},
        CodeOp{"NEWOBJ", "\x80\x02)\x29\x81.", 4},
        CodeOp{"NEWOBJ_EX", "\x80\x04))}\x92.", 5},
        CodeOp{"EXT1", "\x80\x02\x82\x01.", 2},
        CodeOp{"EXT2", "\x80\x02\x83" + B({1, 0}) + ".", 2},
        CodeOp{"EXT4", "\x80\x02\x84" + LE32(1) + ".", 2},
        CodeOp{"PERSID", "Pkey\n.", 0},
        CodeOp{"BINPERSID", "\x80\x02" + Cmd() + "Q.", 17}),
    [](const ::testing::TestParamInfo<CodeOp>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace faultline::flightrec
