// The Flight Recorder part of an evidence bundle (bundle.fbs, format 2):
// the parsed dumps of a scan, written, checked and read back, so that a
// correlation of merged bundles analyses every part's dumps together, as one
// scan of all the files would. Internal to bundle.cc.
#ifndef FAULTLINE_EVIDENCE_BUNDLE_FLIGHTREC_H_
#define FAULTLINE_EVIDENCE_BUNDLE_FLIGHTREC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "bundle_generated.h"
#include "flightrec/dump.h"

namespace faultline {

// Whether vector `v`'s elements sit at their own alignment in memory (the
// buffer read from is 8-byte aligned: ReadBundle). FlatBufferBuilder always
// aligns a vector to its element's size, but the verifier of FlatBuffers
// 2.0 checks only its length field's 4 bytes, so a forged bundle can put
// 8-byte scalars where they cannot be loaded: such a bundle is rejected.
// (An empty vector's data may sit anywhere: nothing is loaded from it.)
template <typename T>
bool ElementsAligned(const flatbuffers::Vector<T>* v) {
  return !v || v->size() == 0 || reinterpret_cast<uintptr_t>(v->Data()) % alignof(T) == 0;
}

flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::BFrDump>>> WriteFlightRecorder(
    flatbuffers::FlatBufferBuilder& b, const std::vector<flightrec::FrDump>& dumps);

// What is wrong with the bundle's dumps, naming the field
// ("flight_recorder[2].entries[5].state ..."), or "" when nothing is.
std::string CheckFlightRecorder(const fb::Bundle& bd);

// The dumps of a checked bundle.
std::vector<flightrec::FrDump> ReadFlightRecorder(const fb::Bundle& bd);

}  // namespace faultline

#endif  // FAULTLINE_EVIDENCE_BUNDLE_FLIGHTREC_H_
