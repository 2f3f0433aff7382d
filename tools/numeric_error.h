#pragma once
/// The error statistics of `aotc verify`: one tensor a kernel wrote against the reference
/// interpreter's value, the error amplification of a node, baseline comparison and the HTML page.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "graph/status.h"
#include "graph/tensor_data.h"

namespace aotc::tools {

struct WorstElement {
  int64_t index = 0;  ///< Flat (row-major) index.
  double actual = 0, reference = 0, abs = 0, rel = 0;
};

struct NodeError {
  std::string node, op, value;
  bool compared = false;
  std::string note;  ///< Why it was not compared.
  int64_t elements = 0;
  double max_abs = 0, mean_abs = 0, max_rel = 0, mean_rel = 0, max_ulp = 0;
  double p50_rel = 0, p90_rel = 0, p99_rel = 0, p999_rel = 0;
  int64_t actual_nan = 0, actual_inf = 0, reference_nan = 0, reference_inf = 0;
  double input_max_rel = 0, amplification = 0;
  std::vector<WorstElement> worst;
  /// log10 of the relative error of each element, bucketed: [-12, 2] in steps of 0.5, the first
  /// bucket holding exact elements too (the HTML page's histogram and CDF).
  std::vector<int64_t> histogram;
};

/// The relative error of an element: |a - r| / max(|r|, 0.1 rms(r), smallest subnormal), so that
/// elements near zero in a tensor of larger values (a sum that cancels, a pre-activation) do not
/// dominate; NaN or Inf where the
/// reference has none is an infinite error.
NodeError compare_tensors(const TensorData& actual, const TensorData& reference);

/// How much a node multiplies the error of its inputs: its max relative error over the largest
/// of its inputs', the latter at least the float32 unit roundoff (exact inputs).
double amplification(double output_rel, double input_rel);

nlohmann::json to_json(const NodeError& e);

/// The nodes (by node and value) whose max_rel in `now` exceeds `factor` times the one in `old`
/// (at least 1e-7, so that exact nodes may take rounding), one line each.
std::vector<std::string> regressions(const nlohmann::json& old, const nlohmann::json& now, double factor);

/// The self-contained verify.html of a verify.json.
Status write_verify_html(const std::string& path, const nlohmann::json& report);

}  // namespace aotc::tools
