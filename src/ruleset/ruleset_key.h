// The per-installation ruleset key and the MAC that lets a compiled ruleset
// skip recompiling its Hyperscan database at load. A serialized Hyperscan
// database is bytecode that Hyperscan runs without validating it: whoever can
// write a .flrules file can make it crash the scan, and the file's own
// checksums (FNV-1a, Hyperscan's CRC32C) are recomputed as easily as the bytes
// are changed. So `faultline compile` stamps the files it writes with
// HMAC-SHA-256 (OpenSSL) under a secret key of this installation, and the
// loader deserializes a stored database only when that MAC verifies; any
// other file is recompiled from its stored patterns.
//
// The key: 32 random bytes in a file that only its owner may read, at
// $FAULTLINE_RULESET_KEY_FILE, else $XDG_CONFIG_HOME/faultline/ruleset.key,
// else ~/.config/faultline/ruleset.key. `faultline compile` creates it (mode
// 0600) when absent; loading never creates it.
//
// Thread-safety: the functions are reentrant.
#ifndef FAULTLINE_RULESET_RULESET_KEY_H_
#define FAULTLINE_RULESET_RULESET_KEY_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace faultline {

inline constexpr size_t kRulesetKeyBytes = 32;
inline constexpr size_t kRulesetMacBytes = 32;    // HMAC-SHA-256
inline constexpr size_t kRulesetKeyIdBytes = 8;   // names the key, reveals nothing of it
inline constexpr const char* kRulesetKeyEnv = "FAULTLINE_RULESET_KEY_FILE";

struct RulesetKey {
  std::array<uint8_t, kRulesetKeyBytes> bytes{};
  std::string path;  // where it was read from (for messages)
  // HMAC-SHA-256(key, a fixed label), cut to 8 bytes: stored beside the MAC
  // so a file signed by another installation is told from a changed one.
  std::array<uint8_t, kRulesetKeyIdBytes> Id() const;
};

// Where the key lives (see the file comment); empty when neither the
// variable nor XDG_CONFIG_HOME nor HOME is set.
std::string RulesetKeyPath();

// The installation's key for verifying. nullopt with *why set when there is
// none usable: no file, unreadable, not 32 bytes, or readable by group or
// others (then anyone on the machine could sign a forgery).
std::optional<RulesetKey> ReadRulesetKey(std::string* why);

// The key for signing: read it, or create it (directory 0700, file 0600,
// random bytes from OpenSSL's CSPRNG, published with link() so a concurrent
// reader never sees half a key and two creators agree on one).
absl::StatusOr<RulesetKey> ReadOrCreateRulesetKey();

// HMAC-SHA-256 of `buffer` with the kRulesetMacBytes at `mac_offset` taken as
// zero (the MAC's own place in the file). Fails only when OpenSSL does.
absl::StatusOr<std::array<uint8_t, kRulesetMacBytes>> RulesetMac(const RulesetKey& key,
                                                                 std::string_view buffer,
                                                                 size_t mac_offset);

// Constant-time comparison of two MACs.
bool MacEqual(const uint8_t* a, const uint8_t* b, size_t n);

}  // namespace faultline

#endif  // FAULTLINE_RULESET_RULESET_KEY_H_
