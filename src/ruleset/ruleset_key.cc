// The ruleset key file and HMAC-SHA-256 through OpenSSL's EVP_MAC (see
// ruleset_key.h). Nothing here is hand-made crypto: OpenSSL computes the MAC,
// draws the key and compares MACs in constant time.
#include "ruleset/ruleset_key.h"

#include <fcntl.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "util/strings.h"

namespace faultline {
namespace {

struct MacDeleter {
  void operator()(EVP_MAC* m) const { EVP_MAC_free(m); }
};
struct MacCtxDeleter {
  void operator()(EVP_MAC_CTX* c) const { EVP_MAC_CTX_free(c); }
};

// HMAC-SHA-256 over the concatenation of `parts`.
absl::StatusOr<std::array<uint8_t, kRulesetMacBytes>> Hmac(
    const RulesetKey& key, std::initializer_list<std::string_view> parts) {
  std::unique_ptr<EVP_MAC, MacDeleter> mac(EVP_MAC_fetch(nullptr, "HMAC", nullptr));
  if (!mac) return absl::InternalError("OpenSSL: HMAC is not available");
  std::unique_ptr<EVP_MAC_CTX, MacCtxDeleter> ctx(EVP_MAC_CTX_new(mac.get()));
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_end()};
  if (!ctx || EVP_MAC_init(ctx.get(), key.bytes.data(), key.bytes.size(), params) != 1) {
    return absl::InternalError("OpenSSL: HMAC-SHA-256 init failed");
  }
  for (std::string_view p : parts) {
    if (!p.empty() &&
        EVP_MAC_update(ctx.get(), reinterpret_cast<const unsigned char*>(p.data()), p.size()) != 1) {
      return absl::InternalError("OpenSSL: HMAC-SHA-256 update failed");
    }
  }
  std::array<uint8_t, kRulesetMacBytes> out{};
  size_t len = 0;
  if (EVP_MAC_final(ctx.get(), out.data(), &len, out.size()) != 1 || len != out.size()) {
    return absl::InternalError("OpenSSL: HMAC-SHA-256 final failed");
  }
  return out;
}

// Makes each missing directory of `dir` with mode 0700 (the XDG base
// directory rule for $XDG_CONFIG_HOME, and right for a key's folder).
bool MakeDirs(const std::string& dir, std::string* why) {
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    std::string part = dir.substr(0, pos);
    if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) {
      *why = StrCat("cannot create ", part, ": ", std::strerror(errno));
      return false;
    }
  }
  return true;
}

}  // namespace

std::array<uint8_t, kRulesetKeyIdBytes> RulesetKey::Id() const {
  std::array<uint8_t, kRulesetKeyIdBytes> id{};
  auto mac = Hmac(*this, {"faultline ruleset key id"});
  if (mac.ok()) std::memcpy(id.data(), mac->data(), id.size());
  return id;
}

std::string RulesetKeyPath() {
  if (const char* f = std::getenv(kRulesetKeyEnv); f && *f) return f;
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x == '/') {
    return StrCat(x, "/faultline/ruleset.key");
  }
  if (const char* h = std::getenv("HOME"); h && *h) return StrCat(h, "/.config/faultline/ruleset.key");
  return "";
}

std::optional<RulesetKey> ReadRulesetKey(std::string* why) {
  RulesetKey key;
  key.path = RulesetKeyPath();
  if (key.path.empty()) {
    *why = StrCat("no ruleset key (neither ", kRulesetKeyEnv, " nor HOME is set)");
    return std::nullopt;
  }
  int fd = ::open(key.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *why = StrCat("no ruleset key at ", key.path, " (", std::strerror(errno), ")");
    return std::nullopt;
  }
  struct stat st;
  bool ok = false;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    *why = StrCat("ruleset key ", key.path, " is not a regular file");
  } else if ((st.st_mode & 077) != 0) {
    *why = StrCat("ruleset key ", key.path, " is ignored: group or others may access it (chmod 600)");
  } else if (st.st_size != static_cast<off_t>(kRulesetKeyBytes)) {
    *why = StrCat("ruleset key ", key.path, " is not ", kRulesetKeyBytes, " bytes");
  } else {
    size_t done = 0;
    while (done < key.bytes.size()) {
      ssize_t n = ::read(fd, key.bytes.data() + done, key.bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ok = done == key.bytes.size();
    if (!ok) *why = StrCat("cannot read the ruleset key ", key.path);
  }
  ::close(fd);
  if (!ok) return std::nullopt;
  return key;
}

absl::StatusOr<RulesetKey> ReadOrCreateRulesetKey() {
  std::string why;
  if (auto key = ReadRulesetKey(&why)) return *std::move(key);
  const std::string path = RulesetKeyPath();
  if (path.empty()) return absl::FailedPreconditionError(why);
  if (::access(path.c_str(), F_OK) == 0) return absl::FailedPreconditionError(why);  // bad, not absent
  size_t slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0 && !MakeDirs(path.substr(0, slash), &why)) {
    return absl::PermissionDeniedError(why);
  }
  std::string tmp = StrCat(path, ".tmp.XXXXXX");
  int fd = ::mkstemp(tmp.data());  // mode 0600
  if (fd < 0) {
    return absl::PermissionDeniedError(
        StrCat("cannot create the ruleset key ", path, ": ", std::strerror(errno)));
  }
  std::array<uint8_t, kRulesetKeyBytes> bytes{};
  std::string failed;
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
    failed = "OpenSSL's RAND_bytes failed";
  } else if (::write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size()) ||
             ::fsync(fd) != 0) {
    failed = std::strerror(errno);
  }
  OPENSSL_cleanse(bytes.data(), bytes.size());
  ::close(fd);
  // link() fails with EEXIST if another process published its key first:
  // then both use that one.
  if (failed.empty() && ::link(tmp.c_str(), path.c_str()) != 0 && errno != EEXIST) {
    failed = std::strerror(errno);
  }
  ::unlink(tmp.c_str());
  if (!failed.empty()) {
    return absl::PermissionDeniedError(StrCat("cannot create the ruleset key ", path, ": ", failed));
  }
  auto key = ReadRulesetKey(&why);
  if (!key) return absl::FailedPreconditionError(why);
  return *std::move(key);
}

absl::StatusOr<std::array<uint8_t, kRulesetMacBytes>> RulesetMac(const RulesetKey& key,
                                                                 std::string_view buffer,
                                                                 size_t mac_offset) {
  if (mac_offset > buffer.size() || buffer.size() - mac_offset < kRulesetMacBytes) {
    return absl::InvalidArgumentError("MAC field outside the buffer");
  }
  static constexpr char kZeros[kRulesetMacBytes] = {};
  return Hmac(key, {buffer.substr(0, mac_offset), std::string_view(kZeros, kRulesetMacBytes),
                    buffer.substr(mac_offset + kRulesetMacBytes)});
}

bool MacEqual(const uint8_t* a, const uint8_t* b, size_t n) { return CRYPTO_memcmp(a, b, n) == 0; }

}  // namespace faultline
