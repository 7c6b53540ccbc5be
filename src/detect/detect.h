// Numeric detectors over what the scan summarised: per-rank step times
// (stragglers), per-rank last progress (hangs), metric series (SDC drift,
// loss spikes, NaN). Each finding names a rank and a time; the correlator
// turns findings into incidents of the rules whose conditions.detector names
// the detector.
//
// Thread-safety: pure functions.
#ifndef FAULTLINE_DETECT_DETECT_H_
#define FAULTLINE_DETECT_DETECT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "evidence/evidence.h"

namespace faultline {

struct Finding {
  std::string detector;  // "straggler", "hang", "sdc_drift", "loss_spike"
  int64_t rank = -1;
  std::string host;
  int64_t time_us = kNoTime;
  double score = 0;      // z-score, drift fraction, ...
  std::string detail;    // human sentence with the figures
  std::string series;    // metric series key, for metric detectors
};

struct DetectOptions {
  double straggler_z = 3.5;        // robust z-score threshold
  double straggler_ratio = 1.10;   // and at least 10% slower than the median
  uint64_t straggler_min_samples = 20;
  int64_t hang_min_gap_us = 300'000'000;  // 5 min without progress
  double hang_step_factor = 10;           // or 10 median step times
  size_t drift_min_points = 10;
  double drift_increasing_fraction = 0.9;
  double spike_mad_factor = 8;
};

std::vector<Finding> DetectStragglers(const std::map<int64_t, RankSummary>& ranks,
                                      const DetectOptions& opts = {});

// end_us: when the job's logs end (the latest timestamp of any source).
std::vector<Finding> DetectHangs(const std::map<int64_t, RankSummary>& ranks, int64_t end_us,
                                 const DetectOptions& opts = {});

std::vector<Finding> DetectSdcDrift(const std::string& series_key,
                                    const std::vector<MetricPoint>& series,
                                    const DetectOptions& opts = {});

std::vector<Finding> DetectLossSpikes(const std::string& series_key,
                                      const std::vector<MetricPoint>& series,
                                      const DetectOptions& opts = {});

// Median of a copy (empty -> 0).
double Median(std::vector<double> v);

}  // namespace faultline

#endif  // FAULTLINE_DETECT_DETECT_H_
