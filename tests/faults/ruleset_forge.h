// Forging a compiled ruleset's Hyperscan database the way anyone who can
// write the file can (issue #17): change bytes of the serialized bytecode,
// then recompute both checksums the file holds -- Hyperscan's own CRC32C in
// the database header and the FlatBuffer's unkeyed hs_checksum (FNV-1a). The
// MAC of a signed file cannot be fixed up without the installation's key.
// Shared by tests/faults and the fuzz_ruleset_forged fuzzer.
#ifndef FAULTLINE_TESTS_FAULTS_RULESET_FORGE_H_
#define FAULTLINE_TESTS_FAULTS_RULESET_FORGE_H_

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ruleset/pattern_check.h"
#include "ruleset/ruleset.h"

namespace faultline::forge {

// A serialized Hyperscan database (hs_serialize_database): magic, version,
// bytecode length, platform (8 bytes), CRC32C at offset 20, two reserved
// words, then the bytecode from offset 32.
inline constexpr size_t kHsHeader = 32;
inline constexpr size_t kHsCrcOffset = 20;

// CRC32C (Castagnoli, reflected) with Hyperscan's conventions: initial value
// 0, no final inversion (db_check_crc: Crc32c_ComputeBuf(0, bytecode, len)).
inline uint32_t HsCrc32c(const uint8_t* p, size_t n) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t crc = 0;
  for (size_t i = 0; i < n; ++i) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

// The buffer's serialized database, or nullptr when it has none that looks
// like one (then nothing can be forged).
inline uint8_t* Database(std::string* buf, uint32_t* bytecode_len) {
  fb::Ruleset* root = fb::GetMutableRuleset(buf->data());
  auto* db = root->mutable_hs_database();
  if (!db || db->size() < kHsHeader) return nullptr;
  uint32_t len;
  std::memcpy(&len, db->data() + 8, 4);
  if (len == 0 || len > db->size() - kHsHeader) return nullptr;
  *bytecode_len = len;
  return db->data();
}

// Whether the stored CRC32C is the one HsCrc32c computes (so a forgery that
// recomputes it passes Hyperscan's check).
inline bool CrcMatches(std::string buf) {
  uint32_t len = 0;
  const uint8_t* db = Database(&buf, &len);
  if (!db) return false;
  uint32_t stored;
  std::memcpy(&stored, db + kHsCrcOffset, 4);
  return stored == HsCrc32c(db + kHsHeader, len);
}

// Sets bytecode byte (offset % length) to value for each edit, then fixes up
// Hyperscan's CRC32C and the file's hs_checksum. The buffer must be a
// verified ruleset. Returns false when it has no database to forge.
inline bool ForgeDatabase(std::string* buf,
                          const std::vector<std::pair<uint32_t, uint8_t>>& edits) {
  uint32_t len = 0;
  uint8_t* db = Database(buf, &len);
  if (!db) return false;
  for (const auto& [off, value] : edits) db[kHsHeader + off % len] = value;
  uint32_t crc = HsCrc32c(db + kHsHeader, len);
  std::memcpy(db + kHsCrcOffset, &crc, 4);
  fb::Ruleset* root = fb::GetMutableRuleset(buf->data());
  const auto* vec = root->hs_database();
  root->mutate_hs_checksum(
      Fnv1a64(std::string_view(reinterpret_cast<const char*>(vec->data()), vec->size())));
  return true;
}

// `count` edits drawn from a 64-bit LCG (Knuth's MMIX constants), so a seed
// names the same forgery on every platform and library.
inline std::vector<std::pair<uint32_t, uint8_t>> RandomEdits(uint64_t seed, size_t count) {
  std::vector<std::pair<uint32_t, uint8_t>> out;
  uint64_t x = seed * 2 + 1;
  auto next = [&x] {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(x >> 32);
  };
  for (size_t i = 0; i < count; ++i) {
    uint32_t off = next();
    out.emplace_back(off, static_cast<uint8_t>(next() >> 24));
  }
  return out;
}

}  // namespace faultline::forge

#endif  // FAULTLINE_TESTS_FAULTS_RULESET_FORGE_H_
