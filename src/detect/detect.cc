#include "detect/detect.h"

#include <algorithm>
#include <cmath>

#include "util/strings.h"

namespace faultline {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  double m = v[mid];
  if (v.size() % 2 == 0) {
    double lo = *std::max_element(v.begin(), v.begin() + mid);
    m = (m + lo) / 2;
  }
  return m;
}

namespace {

double Mad(const std::vector<double>& v, double med) {
  std::vector<double> dev;
  dev.reserve(v.size());
  for (double x : v) dev.push_back(std::fabs(x - med));
  return Median(std::move(dev));
}

// Series of one rank, ordered by step (or time).
std::map<int64_t, std::vector<const MetricPoint*>> ByRank(const std::vector<MetricPoint>& series) {
  std::map<int64_t, std::vector<const MetricPoint*>> out;
  for (const MetricPoint& p : series) out[p.rank].push_back(&p);
  for (auto& [rank, pts] : out) {
    std::stable_sort(pts.begin(), pts.end(), [](const MetricPoint* a, const MetricPoint* b) {
      if (a->step >= 0 && b->step >= 0 && a->step != b->step) return a->step < b->step;
      return a->time_us < b->time_us;
    });
  }
  return out;
}

}  // namespace

std::vector<Finding> DetectStragglers(const std::map<int64_t, RankSummary>& ranks,
                                      const DetectOptions& opts) {
  std::vector<std::pair<int64_t, double>> medians;
  for (const auto& [rank, r] : ranks) {
    if (rank < 0 || r.step_samples < opts.straggler_min_samples) continue;
    medians.emplace_back(rank, Median(r.step_time_reservoir));
  }
  std::vector<Finding> out;
  if (medians.size() < 3) return out;
  std::vector<double> vals;
  for (auto& [rank, m] : medians) vals.push_back(m);
  double med = Median(vals);
  double mad = Mad(vals, med);
  // A floor on the spread: identical ranks would make any jitter infinite z.
  double scale = std::max(1.4826 * mad, 0.01 * med);
  if (scale <= 0) return out;
  for (auto& [rank, m] : medians) {
    double z = (m - med) / scale;
    if (z >= opts.straggler_z && m >= opts.straggler_ratio * med) {
      Finding f;
      f.detector = "straggler";
      f.rank = rank;
      f.host = ranks.at(rank).host;
      f.time_us = ranks.at(rank).last_progress_us;
      f.score = z;
      f.detail = StrCat("rank ", rank, " median step time ", std::round(m * 1000) / 1000,
                        " s vs ", std::round(med * 1000) / 1000, " s across ", medians.size(),
                        " ranks (", std::round((m / med - 1) * 1000) / 10, "% slower, robust z ",
                        std::round(z * 10) / 10, ")");
      out.push_back(std::move(f));
    }
  }
  std::sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) { return a.score > b.score; });
  return out;
}

std::vector<Finding> DetectHangs(const std::map<int64_t, RankSummary>& ranks, int64_t end_us,
                                 const DetectOptions& opts) {
  std::vector<Finding> out;
  if (end_us == kNoTime) return out;
  std::vector<double> steps;
  int64_t latest = kNoTime;
  for (const auto& [rank, r] : ranks) {
    if (r.last_progress_us == kNoTime) continue;
    if (!r.step_time_reservoir.empty()) steps.push_back(Median(r.step_time_reservoir));
    latest = std::max(latest, r.last_progress_us);
  }
  if (latest == kNoTime) return out;
  double step = Median(steps);
  int64_t gap = std::max<int64_t>(opts.hang_min_gap_us,
                                  static_cast<int64_t>(step * opts.hang_step_factor * 1e6));
  // The job kept logging long after the last progress of these ranks.
  for (const auto& [rank, r] : ranks) {
    if (r.last_progress_us == kNoTime) continue;
    if (end_us - r.last_progress_us < gap) continue;
    Finding f;
    f.detector = "hang";
    f.rank = rank;
    f.host = r.host;
    f.time_us = r.last_progress_us;
    f.score = static_cast<double>(end_us - r.last_progress_us) / 1e6;
    f.detail = StrCat(rank >= 0 ? StrCat("rank ", rank) : std::string("the job"),
                      " made no progress for ", static_cast<int64_t>(f.score),
                      " s before the logs end (last step ", r.last_step, ")");
    out.push_back(std::move(f));
  }
  // Earliest stop first: the first rank to stop is the likeliest cause.
  std::sort(out.begin(), out.end(),
            [](const Finding& a, const Finding& b) { return a.time_us < b.time_us; });
  return out;
}

std::vector<Finding> DetectSdcDrift(const std::string& key, const std::vector<MetricPoint>& series,
                                    const DetectOptions& opts) {
  std::vector<Finding> out;
  for (auto& [rank, pts] : ByRank(series)) {
    if (pts.size() < opts.drift_min_points) continue;
    // From the first point where the series leaves zero (injection), count
    // increasing steps.
    size_t start = 0;
    while (start + 1 < pts.size() && pts[start]->value <= 0) ++start;
    size_t n = pts.size() - start;
    if (n < opts.drift_min_points) continue;
    size_t up = 0;
    for (size_t i = start + 1; i < pts.size(); ++i) up += pts[i]->value > pts[i - 1]->value;
    double frac = static_cast<double>(up) / static_cast<double>(n - 1);
    if (frac >= opts.drift_increasing_fraction && pts.back()->value > pts[start]->value) {
      Finding f;
      f.detector = "sdc_drift";
      f.rank = rank;
      f.time_us = pts[start]->time_us;
      f.score = frac;
      f.series = key;
      f.detail = StrCat(key, " rose monotonically on ", std::round(frac * 1000) / 10, "% of ",
                        n - 1, " steps from ", pts[start]->value, " to ", pts.back()->value,
                        pts[start]->step >= 0 ? StrCat(" (from step ", pts[start]->step, ")")
                                              : std::string());
      out.push_back(std::move(f));
    }
  }
  return out;
}

std::vector<Finding> DetectLossSpikes(const std::string& key, const std::vector<MetricPoint>& series,
                                      const DetectOptions& opts) {
  std::vector<Finding> out;
  for (auto& [rank, pts] : ByRank(series)) {
    std::vector<double> window;
    for (size_t i = 0; i < pts.size(); ++i) {
      double v = pts[i]->value;
      bool nonfinite = !std::isfinite(v);
      bool spike = false;
      double med = 0;
      // A spike needs v > 1.5 x the window's median, so v > 1.5 x its
      // minimum (min <= median, and x1.5 keeps the order): the two medians
      // (a copy and a selection each) are computed only for points past that.
      if (!nonfinite && window.size() >= 10 &&
          v > 1.5 * *std::min_element(window.begin(), window.end())) {
        med = Median(window);
        double mad = std::max(Mad(window, med), 1e-6 * std::fabs(med) + 1e-12);
        spike = v > med + opts.spike_mad_factor * 1.4826 * mad && v > 1.5 * med;
      }
      if (nonfinite || spike) {
        Finding f;
        f.detector = "loss_spike";
        f.rank = rank;
        f.time_us = pts[i]->time_us;
        f.score = nonfinite ? 1e9 : v / std::max(med, 1e-12);
        f.series = key;
        f.detail = nonfinite ? StrCat(key, " is ", v, pts[i]->step >= 0 ? StrCat(" at step ", pts[i]->step) : "")
                             : StrCat(key, " jumped to ", v, " from a median of ", med,
                                      pts[i]->step >= 0 ? StrCat(" at step ", pts[i]->step) : "");
        out.push_back(std::move(f));
        break;  // the first spike per rank is what matters
      }
      if (std::isfinite(v)) {
        window.push_back(v);
        if (window.size() > 50) window.erase(window.begin());
      }
    }
  }
  std::sort(out.begin(), out.end(),
            [](const Finding& a, const Finding& b) { return a.time_us < b.time_us; });
  return out;
}

}  // namespace faultline
