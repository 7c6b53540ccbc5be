// The Flight Recorder part of an evidence bundle (bundle.fbs, format 2):
// the parsed dumps of a scan, written, checked and read back, so that a
// correlation of merged bundles analyses every part's dumps together, as one
// scan of all the files would. Internal to bundle.cc.
#ifndef FAULTLINE_EVIDENCE_BUNDLE_FLIGHTREC_H_
#define FAULTLINE_EVIDENCE_BUNDLE_FLIGHTREC_H_

#include <string>
#include <vector>

#include "bundle_generated.h"
#include "flightrec/dump.h"

namespace faultline {

flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::BFrDump>>> WriteFlightRecorder(
    flatbuffers::FlatBufferBuilder& b, const std::vector<flightrec::FrDump>& dumps);

// What is wrong with the bundle's dumps, naming the field
// ("flight_recorder[2].entries[5].state ..."), or "" when nothing is.
std::string CheckFlightRecorder(const fb::Bundle& bd);

// The dumps of a checked bundle.
std::vector<flightrec::FrDump> ReadFlightRecorder(const fb::Bundle& bd);

}  // namespace faultline

#endif  // FAULTLINE_EVIDENCE_BUNDLE_FLIGHTREC_H_
