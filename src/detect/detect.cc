#include "detect/detect.h"

#include <algorithm>
#include <cmath>

#include "evidence/merge.h"
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

namespace {

std::string Fixed(double v, int digits) {
  double scale = std::pow(10.0, digits);
  return StrCat(std::round(v * scale) / scale);
}

std::string Percent(double fraction) { return StrCat(std::round(fraction * 1000) / 10, "%"); }

int64_t Gcd(int64_t a, int64_t b) {
  while (b != 0) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a < 0 ? -a : a;
}

// One rank's cost per step of the aligned sample, against the step's median.
struct AlignedView {
  // step -> median cost over the ranks that logged it (steps logged by at
  // least 3 ranks and by half of the ranks that log).
  std::map<int64_t, double> median;
  std::map<int64_t, double> spread;  // 1.4826 MAD / median
  std::map<int64_t, std::pair<int64_t, double>> slowest;  // rank, ratio
};

AlignedView BuildAligned(const std::map<int64_t, RankSummary>& ranks) {
  AlignedView v;
  std::map<int64_t, std::vector<std::pair<double, int64_t>>> by_step;
  size_t logging = 0;
  for (const auto& [rank, r] : ranks) {
    if (rank < 0 || r.aligned_steps.empty()) continue;
    ++logging;
    for (const auto& [step, cost] : AlignedBySteps(r)) by_step[step].emplace_back(cost, rank);
  }
  for (auto& [step, costs] : by_step) {
    if (costs.size() < 3 || costs.size() * 2 < logging) continue;
    std::vector<double> vals;
    vals.reserve(costs.size());
    for (const auto& c : costs) vals.push_back(c.first);
    double med = Median(vals);
    if (med <= 0) continue;
    v.median[step] = med;
    v.spread[step] = 1.4826 * Mad(vals, med) / med;
    auto top = std::max_element(costs.begin(), costs.end());
    v.slowest[step] = {top->second, top->first / med};
  }
  return v;
}

struct RankCost {
  int64_t rank = -1;
  double median = 0;      // of step times (s), or of throughputs
  size_t steps = 0;       // aligned steps compared
  size_t slow_steps = 0;  // at >= slow_step_ratio x the step's median
  std::vector<int64_t> sampled;
  std::vector<bool> paused;
  size_t pauses = 0;
  double pause_ratio_sum = 0;
};

std::string StepRange(const RankSummary& r) {
  if (r.aligned_steps.empty()) return std::string();
  auto [lo, hi] = std::minmax_element(r.aligned_steps.begin(), r.aligned_steps.end(),
                                      [](const auto& a, const auto& b) { return a.step < b.step; });
  return StrCat(", steps ", lo->step, "-", hi->step);
}

}  // namespace

std::string StepLogger(const RankSummary& r) {
  if (r.rank >= 0) return StrCat("rank ", r.rank);
  return r.several_hosts ? "one process per host (naming no rank)" : "one process";
}

int64_t PausePeriod(const std::vector<int64_t>& steps, const std::vector<bool>& paused) {
  int64_t first = -1, g = 0;
  size_t n = 0;
  for (size_t i = 0; i < steps.size() && i < paused.size(); ++i) {
    if (!paused[i]) continue;
    if (first < 0) {
      first = steps[i];
    } else {
      g = Gcd(g, steps[i] - first);
    }
    ++n;
  }
  if (n < 3 || g < 2) return 0;
  // Most sampled steps of the pauses' remainder paused: a period, not the
  // accident of a few pauses a common factor apart.
  size_t same = 0, hit = 0;
  for (size_t i = 0; i < steps.size() && i < paused.size(); ++i) {
    if (((steps[i] - first) % g + g) % g != 0) continue;
    ++same;
    hit += paused[i];
  }
  return same > 0 && hit * 10 >= same * 7 ? g : 0;
}

namespace {

// The host a summary's findings name: none for the rankless lines of
// several hosts (RankSummary::several_hosts).
std::string HostOf(const RankSummary& r) { return r.several_hosts ? std::string() : r.host; }

// The straggler analysis over step times (rate false) or the rates the
// lines print (higher is faster).
std::vector<Finding> Stragglers(const std::map<int64_t, RankSummary>& ranks, const DetectOptions& opts,
                                bool rate) {
  std::vector<Finding> out;
  std::vector<RankCost> costs;
  for (const auto& [rank, r] : ranks) {
    uint64_t n = rate ? r.throughput_samples : r.step_samples;
    if (rank < 0 || n < opts.straggler_min_samples) continue;
    RankCost c;
    c.rank = rank;
    c.median = Median(rate ? r.throughput_reservoir : r.step_time_reservoir);
    if (c.median > 0) costs.push_back(std::move(c));
  }
  if (costs.size() < 3) return out;
  // "Slowness" is the step time, or the inverse of the rate.
  auto slowness = [&](double m) { return rate ? 1.0 / m : m; };
  std::vector<double> vals;
  for (const RankCost& c : costs) vals.push_back(slowness(c.median));
  const double med = Median(vals);
  const double mad = Mad(vals, med);
  // A floor on the spread: identical ranks would make any jitter infinite z.
  const double scale = std::max(1.4826 * mad, 0.01 * med);
  if (scale <= 0) return out;

  // Step by step over the steps the ranks share.
  AlignedView av = BuildAligned(ranks);
  const bool aligned = av.median.size() >= opts.aligned_min_steps;
  for (RankCost& c : costs) {
    const RankSummary& r = ranks.at(c.rank);
    for (const auto& [step, cost] : AlignedBySteps(r)) {
      auto m = av.median.find(step);
      if (m == av.median.end()) continue;
      double ratio = cost / m->second;
      ++c.steps;
      c.slow_steps += ratio >= opts.slow_step_ratio;
      bool pause = ratio >= opts.pause_ratio;
      c.sampled.push_back(step);
      c.paused.push_back(pause);
      if (pause) {
        ++c.pauses;
        c.pause_ratio_sum += ratio;
      }
    }
  }

  // One slow device: its median is off the others' and, where the ranks
  // share steps, it is slow at most of them. The largest of N ranks' noisy
  // medians sits near sqrt(2 ln N) robust deviations out (3.7 at 1,024
  // ranks), so the bar rises with the rank count.
  const double z_bar =
      std::max(opts.straggler_z, std::sqrt(2 * std::log(static_cast<double>(costs.size()))) + 1.5);
  std::vector<const RankCost*> slow;
  for (const RankCost& c : costs) {
    double x = slowness(c.median);
    double z = (x - med) / scale;
    if (z < z_bar) continue;
    bool consistent = !aligned || c.steps < opts.aligned_min_steps ||
                      static_cast<double>(c.slow_steps) >= opts.slow_step_fraction * static_cast<double>(c.steps);
    if (x >= opts.straggler_ratio * med && consistent) slow.push_back(&c);
  }
  if (!slow.empty()) {
    // The ranks of one host slow together: the host is the straggler.
    std::map<std::string, size_t> slow_on_host, on_host;
    for (const RankCost& c : costs) ++on_host[ranks.at(c.rank).host];
    for (const RankCost* c : slow) ++slow_on_host[ranks.at(c->rank).host];
    for (const RankCost* c : slow) {
      const RankSummary& r = ranks.at(c->rank);
      double x = slowness(c->median);
      std::vector<double> others;
      for (const RankCost& o : costs) {
        if (o.rank != c->rank) others.push_back(o.median);
      }
      double peer = Median(others);
      Finding f;
      f.detector = "straggler";
      f.pattern = "slow_device";
      f.rank = c->rank;
      f.host = HostOf(r);
      f.time_us = r.first_progress_us;
      f.score = (x - med) / scale;
      double slower = rate ? peer / c->median - 1 : c->median / peer - 1;
      f.detail = rate ? StrCat("rank ", c->rank, " median throughput ", Fixed(c->median, 1), " vs ",
                               Fixed(peer, 1), " for the other ", others.size(), " ranks (",
                               Percent(slower), " slower")
                      : StrCat("rank ", c->rank, " median step time ", Fixed(c->median, 3), " s vs ",
                               Fixed(peer, 3), " s for the other ", others.size(), " ranks (",
                               Percent(slower), " slower");
      StrAppend(&f.detail, ", robust z ", Fixed(f.score, 1), ") over ", rate ? r.throughput_samples : r.step_samples,
                " logged steps", StepRange(r));
      if (c->steps > 0) {
        StrAppend(&f.detail, "; slower than the step's median at ", c->slow_steps, " of ", c->steps,
                  " steps all ranks logged");
      }
      size_t host_ranks = on_host[r.host];
      if (!r.host.empty() && host_ranks >= 2 && slow_on_host[r.host] == host_ranks) {
        StrAppend(&f.detail, "; all ", host_ranks, " ranks of host ", r.host, " are this slow");
      }
      out.push_back(std::move(f));
    }
    std::sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) { return a.score > b.score; });
    return out;
  }
  if (!aligned) return out;

  // Pauses that hit one rank at a time: most ranks pause on a few of their
  // steps each.
  size_t pausing = 0, periodic = 0;
  const RankCost* worst = nullptr;
  std::map<int64_t, size_t> periods;
  double pause_ratio_sum = 0;
  size_t pause_count = 0;
  for (const RankCost& c : costs) {
    if (c.steps < opts.aligned_min_steps || c.pauses < 2) continue;
    if (static_cast<double>(c.pauses) > 0.4 * static_cast<double>(c.steps)) continue;
    ++pausing;
    pause_ratio_sum += c.pause_ratio_sum;
    pause_count += c.pauses;
    if (int64_t p = PausePeriod(c.sampled, c.paused)) {
      ++periodic;
      ++periods[p];
    }
    if (!worst || c.pauses > worst->pauses) worst = &c;
  }
  // Moving imbalance: most steps have a wide spread and a far slowest rank,
  // and no rank is that slowest rank at many of them.
  size_t wide = 0;
  std::map<int64_t, size_t> slowest_count;
  for (const auto& [step, m] : av.median) {
    auto [rank, ratio] = av.slowest[step];
    if (av.spread[step] >= opts.moving_min_spread && ratio >= opts.moving_max_ratio) {
      ++wide;
      ++slowest_count[rank];
    }
  }
  size_t top_share = 0;
  int64_t top_rank = -1;
  for (const auto& [rank, n] : slowest_count) {
    if (n > top_share) {
      top_share = n;
      top_rank = rank;
    }
  }
  const size_t n_steps = av.median.size();
  const bool moving = static_cast<double>(wide) >= opts.moving_step_fraction * static_cast<double>(n_steps) &&
                      top_share * 4 < wide;
  const bool pauses = pausing >= 2 && pausing * 3 >= costs.size();
  if (pauses && (periodic * 2 >= pausing || !moving)) {
    Finding f;
    f.detector = "straggler";
    f.pattern = "periodic";
    f.rank = worst->rank;
    f.host = HostOf(ranks.at(worst->rank));
    f.time_us = ranks.at(worst->rank).last_progress_us;
    f.score = static_cast<double>(pausing) / static_cast<double>(costs.size());
    int64_t period = 0;
    size_t period_n = 0;
    for (const auto& [p, n] : periods) {
      if (n > period_n) {
        period = p;
        period_n = n;
      }
    }
    f.detail = StrCat(pausing, " of ", costs.size(), " ranks pause now and then, one rank at a time: ",
                      pause_count, " paused steps of ", n_steps, " compared, each ",
                      Fixed(pause_ratio_sum / static_cast<double>(pause_count), 2),
                      "x the step's median on average, while every rank's median stays within ",
                      Percent(std::max(0.0, *std::max_element(vals.begin(), vals.end()) / med - 1)),
                      " of the others'");
    if (period > 0) {
      StrAppend(&f.detail, "; ", periodic, " ranks pause every ", period,
                " steps (a periodic pause: garbage collection or another timer)");
    }
    StrAppend(&f.detail, "; rank ", worst->rank, " paused most (", worst->pauses, " of ", worst->steps, " steps)");
    out.push_back(std::move(f));
    return out;
  }
  if (moving) {
    Finding f;
    f.detector = "straggler";
    f.pattern = "moving";
    f.rank = -1;
    f.time_us = kNoTime;
    for (const auto& [rank, r] : ranks) f.time_us = std::max(f.time_us, r.last_progress_us);
    f.score = static_cast<double>(wide) / static_cast<double>(n_steps);
    std::vector<double> spreads, ratios;
    for (const auto& [step, sp] : av.spread) spreads.push_back(sp);
    for (const auto& [step, sr] : av.slowest) ratios.push_back(sr.second);
    f.detail = StrCat("the slowest rank changes from step to step: at ", wide, " of ", n_steps,
                      " steps compared the ranks' step times spread by ", Percent(Median(spreads)),
                      " (median) and the slowest rank took ", Fixed(Median(ratios), 2),
                      "x the step's median; ", slowest_count.size(), " different ranks were slowest, rank ",
                      top_rank, " most often (", top_share, " steps), while every rank's median stays within ",
                      Percent(std::max(0.0, *std::max_element(vals.begin(), vals.end()) / med - 1)),
                      " of the others'");
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

std::vector<Finding> DetectStragglers(const std::map<int64_t, RankSummary>& ranks,
                                      const DetectOptions& opts) {
  // Step times first (stated, or the interval between lines); a job whose
  // lines also print a rate (DeepSpeed's timer line after its step line)
  // may show on the rate what the intervals, paced by the slowest rank,
  // hide.
  std::vector<Finding> out = Stragglers(ranks, opts, false);
  if (out.empty()) out = Stragglers(ranks, opts, true);
  return out;
}

namespace {

// Progress lines with no time at all (tqdm's carriage-return bars in a
// stdout without stamps): when the logs end, a few ranks left at a lower
// step than all the others are the ones the others waited for. When they
// stopped, and so whether the rest merely ended mid-step, cannot be known.
std::vector<Finding> UntimedHangs(const std::map<int64_t, RankSummary>& ranks) {
  std::vector<Finding> out;
  int64_t max_step = -1;
  for (const auto& [rank, r] : ranks) {
    if (r.progress_lines == 0 || r.last_step < 0) continue;
    max_step = std::max(max_step, r.last_step);
    Finding f;
    f.detector = "hang";
    f.rank = rank;
    f.host = HostOf(r);
    out.push_back(std::move(f));
  }
  std::sort(out.begin(), out.end(), [&](const Finding& a, const Finding& b) {
    int64_t sa = ranks.at(a.rank).last_step, sb = ranks.at(b.rank).last_step;
    return sa != sb ? sa < sb : a.rank < b.rank;
  });
  size_t behind = 0;
  for (const Finding& f : out) behind += ranks.at(f.rank).last_step < max_step;
  if (out.size() < 2 || behind == 0 || behind > std::max<size_t>(1, out.size() / 4)) return {};
  Finding& first = out.front();
  int64_t step = ranks.at(first.rank).last_step;
  first.detail = StrCat(first.rank >= 0 ? StrCat("rank ", first.rank) : std::string("one process"),
                        " stopped at step ", step, " while ", out.size() - behind, " of the ", out.size(),
                        " ranks that log steps reached step ", max_step,
                        ": the others waited for it (the step lines carry no time)");
  first.missing = StrCat("The step lines carry no time stamps, so when rank ", first.rank,
                         " stopped and how long the others waited cannot be known from these logs; "
                         "stamped step lines or py-spy dumps of every rank would show it");
  return out;
}

}  // namespace

std::vector<Finding> DetectHangs(const std::map<int64_t, RankSummary>& ranks, int64_t end_us,
                                 const DetectOptions& opts, int64_t world_ranks) {
  std::vector<Finding> out;
  std::vector<double> steps;
  int64_t latest = kNoTime, max_step = -1;
  size_t logging = 0;
  for (const auto& [rank, r] : ranks) {
    if (r.last_progress_us == kNoTime) continue;
    ++logging;
    if (!r.step_time_reservoir.empty()) steps.push_back(Median(r.step_time_reservoir));
    latest = std::max(latest, r.last_progress_us);
    max_step = std::max(max_step, r.last_step);
  }
  // Step lines with no time need no end of the logs: the ranks left a step
  // behind tell the hang.
  if (latest == kNoTime) return UntimedHangs(ranks);
  if (end_us == kNoTime) return out;
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
    f.host = HostOf(r);
    f.time_us = r.last_progress_us;
    f.score = static_cast<double>(end_us - r.last_progress_us) / 1e6;
    f.detail = StrCat(rank >= 0 ? StrCat("rank ", rank) : std::string("the job"),
                      " made no progress for ", static_cast<int64_t>(f.score),
                      " s before the logs end (last step ", r.last_step, ")");
    out.push_back(std::move(f));
  }
  // First stopped first: the rank left at the lowest step (whatever its
  // host's clock says), then the earliest stop.
  std::sort(out.begin(), out.end(), [&](const Finding& a, const Finding& b) {
    int64_t sa = ranks.at(a.rank).last_step, sb = ranks.at(b.rank).last_step;
    if (sa != sb) return sa < sb;
    return a.time_us < b.time_us;
  });
  if (out.empty()) return out;
  Finding& first = out.front();
  const RankSummary& fr = ranks.at(first.rank);
  if (out.size() == logging && logging > 1) {
    size_t at_step = 0;
    for (const Finding& f : out) at_step += ranks.at(f.rank).last_step == fr.last_step;
    StrAppend(&first.detail, "; all ", logging, " ranks that log steps stopped",
              fr.last_step < max_step ? StrCat(", the others reached step ", max_step)
                                      : StrCat(", ", at_step, " of them at the same step"));
    if (fr.last_step == max_step && at_step > 1) {
      first.missing = StrCat("All ", at_step,
                             " ranks stopped at the same step, so the step lines cannot tell which one blocked "
                             "the others; py-spy dump (or faulthandler) of every rank shows the one that is not in "
                             "the collective");
    }
  }
  if (logging == 1 && world_ranks > 1) {
    first.missing = StrCat("Only ", StepLogger(fr), " of ", world_ranks,
                           " logs step lines, so which rank stopped first and whether a straggler slowed the job "
                           "before it cannot be known from these logs; per-rank step lines or py-spy dumps of every "
                           "rank would show it");
  }
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
      f.point = *pts[start];
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
        f.point = *pts[i];
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
