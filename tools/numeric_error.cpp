#include "tools/numeric_error.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

namespace aotc::tools {
namespace {

constexpr double kHistogramLow = -12.0, kHistogramStep = 0.5;
constexpr int kHistogramBuckets = 29;  // -12 .. 2

// Distance in float32 representable numbers (NaN: infinite).
double ulp_distance(double a, double b) {
  float fa = static_cast<float>(a), fb = static_cast<float>(b);
  if (std::isnan(fa) || std::isnan(fb)) return std::isnan(fa) && std::isnan(fb) ? 0 : INFINITY;
  auto ordered = [](float f) {
    int32_t i;
    std::memcpy(&i, &f, sizeof i);
    return i < 0 ? static_cast<int64_t>(INT32_MIN) - i : static_cast<int64_t>(i);
  };
  return static_cast<double>(std::llabs(ordered(fa) - ordered(fb)));
}

double quantile(std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  size_t at = std::min(sorted.size() - 1, static_cast<size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5));
  return sorted[at];
}

}  // namespace

NodeError compare_tensors(const TensorData& actual, const TensorData& reference) {
  NodeError e;
  if (actual.num_elements() != reference.num_elements()) {
    e.note = "the package wrote " + std::to_string(actual.num_elements()) + " elements, the reference has " +
             std::to_string(reference.num_elements());
    return e;
  }
  const int64_t n = reference.num_elements();
  e.compared = true;
  e.elements = n;
  double sum_sq = 0;
  for (int64_t i = 0; i < n; ++i) {
    double r = reference.get_double(i);
    if (std::isfinite(r)) sum_sq += r * r;
  }
  const double floor = std::max({0.1 * std::sqrt(sum_sq / std::max<int64_t>(n, 1)),
                                 static_cast<double>(std::numeric_limits<float>::denorm_min())});
  std::vector<double> rel(static_cast<size_t>(n));
  e.histogram.assign(kHistogramBuckets, 0);
  double sum_abs = 0, sum_rel = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double a = actual.get_double(i), r = reference.get_double(i);
    e.actual_nan += std::isnan(a);
    e.actual_inf += std::isinf(a);
    e.reference_nan += std::isnan(r);
    e.reference_inf += std::isinf(r);
    double abs_err, rel_err;
    if (std::isnan(a) || std::isnan(r) || std::isinf(a) || std::isinf(r)) {
      const bool same = (std::isnan(a) && std::isnan(r)) || a == r;
      abs_err = rel_err = same ? 0 : INFINITY;
    } else {
      abs_err = std::fabs(a - r);
      rel_err = abs_err / std::max(std::fabs(r), floor);
    }
    rel[static_cast<size_t>(i)] = rel_err;
    e.max_abs = std::max(e.max_abs, abs_err);
    e.max_rel = std::max(e.max_rel, rel_err);
    e.max_ulp = std::max(e.max_ulp, is_float(reference.dtype()) ? ulp_distance(a, r) : abs_err);
    sum_abs += abs_err;
    sum_rel += rel_err;
    int bucket = rel_err > 0 ? static_cast<int>(std::floor((std::log10(rel_err) - kHistogramLow) / kHistogramStep)) : 0;
    e.histogram[static_cast<size_t>(std::clamp(bucket, 0, kHistogramBuckets - 1))]++;
    // The ten worst, largest first.
    if (e.worst.size() < 10 || rel_err > e.worst.back().rel) {
      WorstElement w{i, a, r, abs_err, rel_err};
      auto at = std::upper_bound(e.worst.begin(), e.worst.end(), w,
                                 [](const WorstElement& x, const WorstElement& y) { return x.rel > y.rel; });
      e.worst.insert(at, w);
      if (e.worst.size() > 10) e.worst.pop_back();
    }
  }
  if (n > 0) {
    e.mean_abs = sum_abs / static_cast<double>(n);
    e.mean_rel = sum_rel / static_cast<double>(n);
  }
  std::sort(rel.begin(), rel.end());
  e.p50_rel = quantile(rel, 0.5);
  e.p90_rel = quantile(rel, 0.9);
  e.p99_rel = quantile(rel, 0.99);
  e.p999_rel = quantile(rel, 0.999);
  return e;
}

double amplification(double output_rel, double input_rel) {
  return output_rel / std::max(input_rel, std::ldexp(1.0, -24));
}

namespace {
nlohmann::json num(double v) {
  if (std::isfinite(v)) return v;
  return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
}
double from_json(const nlohmann::json& j) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) return j == "nan" ? NAN : (j == "-inf" ? -INFINITY : INFINITY);
  return 0;
}
}  // namespace

nlohmann::json to_json(const NodeError& e) {
  nlohmann::json j = {{"node", e.node}, {"op", e.op}, {"value", e.value}, {"compared", e.compared}};
  if (!e.compared) {
    j["note"] = e.note;
    return j;
  }
  nlohmann::json worst = nlohmann::json::array();
  for (const WorstElement& w : e.worst)
    worst.push_back({{"index", w.index}, {"actual", num(w.actual)}, {"reference", num(w.reference)},
                     {"abs", num(w.abs)}, {"rel", num(w.rel)}});
  j.update({{"elements", e.elements},       {"max_abs", num(e.max_abs)},       {"mean_abs", num(e.mean_abs)},
            {"max_rel", num(e.max_rel)},     {"mean_rel", num(e.mean_rel)},     {"max_ulp", num(e.max_ulp)},
            {"p50_rel", num(e.p50_rel)},     {"p90_rel", num(e.p90_rel)},       {"p99_rel", num(e.p99_rel)},
            {"p999_rel", num(e.p999_rel)},   {"nan", e.actual_nan},             {"inf", e.actual_inf},
            {"reference_nan", e.reference_nan}, {"reference_inf", e.reference_inf},
            {"input_max_rel", num(e.input_max_rel)}, {"amplification", num(e.amplification)},
            {"worst", worst},                {"histogram_log10_rel", e.histogram}});
  return j;
}

std::vector<std::string> regressions(const nlohmann::json& old, const nlohmann::json& now, double factor) {
  std::map<std::string, double> before;
  for (const auto& n : old["nodes"])
    if (n.value("compared", false)) before[n.value("node", "") + "/" + n.value("value", "")] = from_json(n["max_rel"]);
  std::vector<std::string> out;
  for (const auto& n : now["nodes"]) {
    if (!n.value("compared", false)) continue;
    auto it = before.find(n.value("node", "") + "/" + n.value("value", ""));
    if (it == before.end()) continue;
    double was = it->second, is = from_json(n["max_rel"]);
    if (!(is <= factor * std::max(was, 1e-7)))
      out.push_back(n.value("node", "") + " (" + n.value("value", "") + "): max_rel " + std::to_string(is) +
                    ", baseline " + std::to_string(was));
  }
  return out;
}

}  // namespace aotc::tools
