// The diagnosis the correlator produces: incidents (one initiating event with
// its evidence, collateral clusters, fix, verify, missing facts), ignored
// evidence with reasons, the job window and the clock offsets used. The
// report module writes it as JSON (schema/report.schema.json) and text.
//
// Thread-safety: plain values.
#ifndef FAULTLINE_CORRELATE_DIAGNOSIS_H_
#define FAULTLINE_CORRELATE_DIAGNOSIS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "evidence/evidence.h"

namespace faultline {

struct Collateral {
  uint32_t rule = 0;
  uint64_t count = 0;
  std::vector<int64_t> ranks;
  std::vector<std::string> hosts;
  int64_t first_time_us = kNoTime;
  int64_t last_time_us = kNoTime;
  Evidence sample;
};

struct Incident {
  uint32_t rule = 0;
  double confidence = 0;
  int64_t rank = -1;
  std::string host;
  std::string gpu;
  int64_t time_us = kNoTime;
  bool inferred = false;
  // Every initiating line was followed by progress on its rank: the job
  // carried on, so this did not end a rank (ranked below those that did).
  bool survived = false;
  std::vector<Evidence> initiating;
  std::vector<Collateral> collateral;
  std::string fix;
  std::string verify;
  std::vector<std::string> missing_facts;
  std::string explanation;
  std::vector<Evidence> timeline;
  std::vector<int64_t> suspects;  // inferred suspect ranks
  std::string detector;           // when a numeric detector made the call
};

struct Ignored {
  uint32_t rule = 0;
  std::string reason;
  uint64_t count = 0;
  Evidence sample;
};

struct Expectation {
  double gpus = 0;
  double hours = 0;
  double expected_interruptions = 0;
  std::vector<std::string> basis;
};

struct Diagnosis {
  std::vector<Incident> incidents;
  std::vector<Ignored> ignored;
  int64_t job_start_us = kNoTime;
  int64_t job_end_us = kNoTime;
  std::map<std::string, double> clock_offsets_s;  // host -> seconds added
  std::map<std::string, std::string> clock_offset_source;  // "user", "estimated"
  uint64_t ranks = 0;
  uint64_t hosts = 0;
  Expectation expectation;
};

}  // namespace faultline

#endif  // FAULTLINE_CORRELATE_DIAGNOSIS_H_
