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
#include <optional>
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
  // The metric detectors' point (its line, for the incident's evidence).
  std::optional<MetricPoint> point;
  // What the detector could not settle from the logs (a job whose step lines
  // come from one rank only), for the report's missing facts.
  std::string missing;
  // The pattern a straggler finding shows: "slow_device" (one rank, or the
  // ranks of one host, slower at most steps), "periodic" (each rank pauses
  // now and then, one at a time: garbage collection), "moving" (the slowest
  // rank changes from step to step: data imbalance).
  std::string pattern;
};

struct DetectOptions {
  double straggler_z = 3.5;        // robust z-score threshold
  double straggler_ratio = 1.10;   // and at least 10% slower than the median
  uint64_t straggler_min_samples = 12;
  // Per aligned step (RankSummary::aligned_steps), against that step's
  // median over the ranks: a rank is slow at >= slow_step_ratio, a pause
  // (periodic pattern) is >= pause_ratio, and a slow device is slow at
  // >= slow_step_fraction of its steps.
  double slow_step_ratio = 1.05;
  double slow_step_fraction = 0.6;
  double pause_ratio = 1.3;
  // Moving imbalance: the ranks' spread (1.4826 MAD / median) of a step at
  // least this, and the slowest rank >= moving_max_ratio x the median, in
  // at least moving_step_fraction of the steps.
  double moving_min_spread = 0.08;
  double moving_max_ratio = 1.2;
  double moving_step_fraction = 0.5;
  size_t aligned_min_steps = 8;
  int64_t hang_min_gap_us = 300'000'000;  // 5 min without progress
  double hang_step_factor = 10;           // or 10 median step times
  size_t drift_min_points = 10;
  double drift_increasing_fraction = 0.9;
  double spike_mad_factor = 8;
};

// Ranks whose step time (or, for formats that print only a rate, whose
// throughput) is off their peers': one slow device (its median against the
// others', and slow at most of the steps all ranks logged), pauses that hit
// one rank at a time (periodic), or an imbalance whose slowest rank moves.
// world_ranks: how many ranks the job has (from any evidence; 0 unknown):
// when only one of them logs step lines, the finding-less result carries
// nothing, and DetectHangs says what cannot be known.
std::vector<Finding> DetectStragglers(const std::map<int64_t, RankSummary>& ranks,
                                      const DetectOptions& opts = {});

// end_us: when the job's logs end (the latest timestamp of any source).
// Findings come first-stopped first: the lowest last step, then the
// earliest last progress (steps order ranks whatever their hosts' clocks).
std::vector<Finding> DetectHangs(const std::map<int64_t, RankSummary>& ranks, int64_t end_us,
                                 const DetectOptions& opts = {}, int64_t world_ranks = 0);

// Who logs the step lines a summary holds, when one summary holds a job's
// all: "rank N", else "one process per host (naming no rank)" for the
// rankless lines of several hosts, else "one process".
std::string StepLogger(const RankSummary& r);

// The period P (>= 2) of a rank's pauses when every paused step has the
// same remainder modulo P and most sampled steps of that remainder paused;
// 0 when no such period. steps: the rank's sampled steps, ascending;
// paused: which of them paused.
int64_t PausePeriod(const std::vector<int64_t>& steps, const std::vector<bool>& paused);

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
