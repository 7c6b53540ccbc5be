#include "evidence/distinct.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace faultline {
namespace {

uint64_t SplitMix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

void AddToSketch(std::vector<uint8_t>& sketch, uint64_t h) {
  if (sketch.empty()) sketch.assign(kSketchRegisters, 0);
  const size_t idx = static_cast<size_t>(h >> (64 - kSketchBits));
  // The rank of the first 1 bit after the index bits; the guard bit caps it.
  const uint64_t w = (h << kSketchBits) | (uint64_t{1} << (kSketchBits - 1));
  const uint8_t rho = static_cast<uint8_t>(std::countl_zero(w) + 1);
  sketch[idx] = std::max(sketch[idx], rho);
}

uint64_t Estimate(const std::vector<uint8_t>& sketch) {
  if (sketch.size() != kSketchRegisters) return 0;
  constexpr double m = static_cast<double>(kSketchRegisters);
  double sum = 0;
  size_t zeros = 0;
  for (uint8_t r : sketch) {
    sum += std::ldexp(1.0, -r);
    zeros += r == 0;
  }
  const double alpha = 0.7213 / (1 + 1.079 / m);
  double e = alpha * m * m / sum;
  // Small cardinalities: linear counting is the better estimate.
  if (e <= 2.5 * m && zeros > 0) e = m * std::log(m / static_cast<double>(zeros));
  return static_cast<uint64_t>(std::llround(e));
}

void MergeSketch(std::vector<uint8_t>& into, const std::vector<uint8_t>& from) {
  if (from.size() != kSketchRegisters) return;
  if (into.size() != kSketchRegisters) {
    into = from;
    return;
  }
  for (size_t i = 0; i < kSketchRegisters; ++i) into[i] = std::max(into[i], from[i]);
}

template <typename D, typename K>
bool AdmitKey(D& d, const K& key, uint64_t hash, size_t cap) {
  AddToSketch(d.sketch, hash);
  if (d.kept.count(key) != 0) return true;
  if (d.kept.size() < cap) {
    d.kept.insert(key);
    return true;
  }
  d.truncated = true;
  return false;
}

template <typename D>
uint64_t Seen(const D& d) {
  if (!d.truncated) return d.kept.size();
  return std::max<uint64_t>(Estimate(d.sketch), d.kept.size() + 1);
}

template <typename D>
void MergeKeys(D& into, const D& from, size_t cap) {
  MergeSketch(into.sketch, from.sketch);
  into.truncated = into.truncated || from.truncated;
  // Unordered sets carry no order; the keys are added in sorted order so
  // the choice does not depend on hashing when the cap is reached here.
  std::vector<typename decltype(from.kept)::value_type> keys(from.kept.begin(), from.kept.end());
  std::sort(keys.begin(), keys.end());
  for (const auto& k : keys) {
    if (into.kept.count(k) != 0) continue;
    if (into.kept.size() < cap) {
      into.kept.insert(k);
    } else {
      into.truncated = true;
    }
  }
}

}  // namespace

uint64_t DistinctHash(int64_t key) { return SplitMix(static_cast<uint64_t>(key)); }

uint64_t DistinctHash(std::string_view key) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a 64, then mixed
  for (unsigned char c : key) h = (h ^ c) * 1099511628211ull;
  return SplitMix(h);
}

bool Admit(DistinctRanks& d, int64_t rank) { return AdmitKey(d, rank, DistinctHash(rank), kMaxKeptRanks); }
bool Admit(DistinctHosts& d, const std::string& host) {
  return AdmitKey(d, host, DistinctHash(host), kMaxKeptHosts);
}
uint64_t SeenCount(const DistinctRanks& d) { return Seen(d); }
uint64_t SeenCount(const DistinctHosts& d) { return Seen(d); }
void MergeFrom(DistinctRanks& into, const DistinctRanks& from) { MergeKeys(into, from, kMaxKeptRanks); }
void MergeFrom(DistinctHosts& into, const DistinctHosts& from) { MergeKeys(into, from, kMaxKeptHosts); }

}  // namespace faultline
