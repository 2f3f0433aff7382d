// verify.html: one self-contained page (inline SVG, no scripts from elsewhere) with the error
// along the depth of the model, and each node's histogram and CDF of relative errors.
#include <cmath>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "tools/numeric_error.h"
#include "graph/printable.h"

namespace aotc::tools {
namespace {

using nlohmann::json;

double value_of(const json& j) {
  if (j.is_number()) return j.get<double>();
  return j.is_string() && j != "nan" ? INFINITY : NAN;
}

constexpr double kW = 900, kH = 260, kLeft = 60, kBottom = 30, kTop = 10;

// log10 of a relative error placed on [-12, 2]; exact is drawn at the bottom, infinite at the top.
double y_of_log(double rel) {
  double l = rel > 0 ? std::log10(rel) : -12;
  if (!std::isfinite(l)) l = 2;
  l = std::clamp(l, -12.0, 2.0);
  return kTop + (2 - l) / 14 * (kH - kTop - kBottom);
}

std::string axes(const std::string& xlabel, const std::string& ylabel, bool log_y) {
  std::string s = fmt::format("<line x1='{0}' y1='{1}' x2='{0}' y2='{2}' stroke='#333'/>"
                              "<line x1='{0}' y1='{2}' x2='{3}' y2='{2}' stroke='#333'/>",
                              kLeft, kTop, kH - kBottom, kW - 10);
  if (log_y) {
    for (int l = -12; l <= 2; l += 2)
      s += fmt::format("<text x='{}' y='{}' font-size='10' text-anchor='end'>1e{}</text>"
                       "<line x1='{}' y1='{}' x2='{}' y2='{}' stroke='#eee'/>",
                       kLeft - 4, y_of_log(std::pow(10.0, l)) + 3, l, kLeft, y_of_log(std::pow(10.0, l)), kW - 10,
                       y_of_log(std::pow(10.0, l)));
  }
  s += fmt::format("<text x='{}' y='{}' font-size='11' text-anchor='middle'>{}</text>", (kLeft + kW) / 2, kH - 5,
                   markup_escape(xlabel));
  s += fmt::format("<text x='12' y='{}' font-size='11' transform='rotate(-90 12 {})' text-anchor='middle'>{}</text>",
                   kH / 2, kH / 2, markup_escape(ylabel));
  return s;
}

std::string depth_plot(const json& nodes, double tolerance) {
  std::string max_line, p99_line, dots;
  const size_t n = nodes.size();
  for (size_t i = 0; i < n; ++i) {
    const json& e = nodes[i];
    if (!e.value("compared", false)) continue;
    double x = kLeft + (n > 1 ? static_cast<double>(i) / static_cast<double>(n - 1) : 0.5) * (kW - 10 - kLeft);
    max_line += fmt::format("{:.1f},{:.1f} ", x, y_of_log(value_of(e["max_rel"])));
    p99_line += fmt::format("{:.1f},{:.1f} ", x, y_of_log(value_of(e["p99_rel"])));
    dots += fmt::format("<circle cx='{:.1f}' cy='{:.1f}' r='2.5' fill='#c0392b'><title>{} ({}): max_rel {}</title></circle>",
                        x, y_of_log(value_of(e["max_rel"])), markup_escape(e.value("node", "")), markup_escape(e.value("op", "")),
                        e["max_rel"].dump());
  }
  return fmt::format("<svg id='depth' width='{0}' height='{1}' viewBox='0 0 {0} {1}' xmlns='http://www.w3.org/2000/svg'>{2}"
                     "<line x1='{3}' x2='{4}' y1='{5:.1f}' y2='{5:.1f}' stroke='#e67e22' stroke-dasharray='4 3'/>"
                     "<polyline fill='none' stroke='#c0392b' points='{6}'/>"
                     "<polyline fill='none' stroke='#2980b9' points='{7}'/>{8}</svg>",
                     kW, kH, axes("kernels in schedule order", "relative error", true), kLeft, kW - 10,
                     y_of_log(tolerance), max_line, p99_line, dots);
}

std::string histogram_plot(const json& e, int k) {
  const json& h = e["histogram_log10_rel"];
  int64_t total = 0, peak = 1;
  for (const auto& c : h) total += c.get<int64_t>(), peak = std::max<int64_t>(peak, c.get<int64_t>());
  const double bw = (kW - 10 - kLeft) / static_cast<double>(h.size());
  std::string bars, cdf;
  int64_t seen = 0;
  for (size_t b = 0; b < h.size(); ++b) {
    const int64_t c = h[b].get<int64_t>();
    const double height = static_cast<double>(c) / static_cast<double>(peak) * (kH - kTop - kBottom);
    bars += fmt::format("<rect x='{:.1f}' y='{:.1f}' width='{:.1f}' height='{:.1f}' fill='#2980b9'><title>1e{} .. 1e{}: {}</title></rect>",
                        kLeft + bw * b, kH - kBottom - height, bw - 1, height, -12 + 0.5 * b, -11.5 + 0.5 * b, c);
    seen += c;
    cdf += fmt::format("{:.1f},{:.1f} ", kLeft + bw * (b + 1),
                       kH - kBottom - (total ? static_cast<double>(seen) / total : 0) * (kH - kTop - kBottom));
  }
  std::string ticks;
  for (int l = -12; l <= 2; l += 2)
    ticks += fmt::format("<text x='{:.1f}' y='{}' font-size='10' text-anchor='middle'>1e{}</text>",
                         kLeft + bw * (l + 12) * 2, kH - kBottom + 12, l);
  return fmt::format("<div class='node-plots' id='plots-{0}' style='display:none'>"
                     "<svg class='hist' width='{1}' height='{2}' viewBox='0 0 {1} {2}' xmlns='http://www.w3.org/2000/svg'>{3}{4}{5}</svg>"
                     "<svg class='cdf' width='{1}' height='{2}' viewBox='0 0 {1} {2}' xmlns='http://www.w3.org/2000/svg'>{6}{5}"
                     "<polyline fill='none' stroke='#27ae60' stroke-width='2' points='{7:.1f},{8:.1f} {9}'/></svg></div>",
                     k, kW, kH, axes("relative error (log10 buckets)", "elements", false), bars, ticks,
                     axes("relative error", "fraction of elements at or below", false), kLeft, kH - kBottom, cdf);
}

}  // namespace

Status write_verify_html(const std::string& path, const json& report) {
  const json& nodes = report["nodes"];
  const double tolerance = report["tolerance"].get<double>();
  std::string rows, plots, options;
  int selected = -1, worst = -1;
  double worst_rel = -1;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const json& e = nodes[i];
    const bool first = report["first_divergent_node"].is_string() && e["node"] == report["first_divergent_node"] &&
                       e["value"] == report["first_divergent_value"];
    if (!e.value("compared", false)) {
      rows += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td colspan='6'>{}</td></tr>", i,
                          markup_escape(e.value("node", "")), markup_escape(e.value("op", "")), markup_escape(e.value("note", "")));
      continue;
    }
    if (first) selected = static_cast<int>(i);
    if (value_of(e["max_rel"]) > worst_rel || std::isnan(value_of(e["max_rel"]))) worst_rel = value_of(e["max_rel"]), worst = static_cast<int>(i);
    rows += fmt::format("<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                        first ? " class='first'" : "", i, markup_escape(e.value("node", "")), markup_escape(e.value("op", "")),
                        markup_escape(e.value("value", "")), e["max_abs"].dump(), e["max_rel"].dump(), e["p99_rel"].dump(),
                        e["max_ulp"].dump(), e["amplification"].dump());
    plots += histogram_plot(e, static_cast<int>(i));
    options += fmt::format("<option value='{}'>{}: {} ({})</option>", i, i, markup_escape(e.value("node", "")),
                           markup_escape(e.value("op", "")));
  }
  if (selected < 0) selected = worst;
  const std::string first = report["first_divergent_node"].is_string()
                                ? "first divergent node: <b>" + markup_escape(report["first_divergent_node"].get<std::string>()) + "</b>"
                                : "no node diverges";
  std::ofstream out(path);
  if (!out) return Status::error(ErrorKind::kIo, fmt::format("{}: cannot write", path));
  out << fmt::format(R"(<!DOCTYPE html>
<html><head><meta charset='utf-8'><title>aotc verify: {0} on {1}</title>
<style>body{{font-family:sans-serif;margin:20px}} table{{border-collapse:collapse;font-size:12px}}
td,th{{border:1px solid #ccc;padding:2px 6px}} tr.first{{background:#fdd}} svg{{background:#fafafa;margin:4px 0}}</style></head>
<body><h1>aotc verify</h1>
<p>model <code>{0}</code>, target <b id='target'>{1}</b>, precision {2}, tolerance {3}: {4}</p>
<h2>Error along depth</h2><p>max (red) and P99 (blue) relative error of each kernel's output; dashed: the tolerance.</p>
{5}
<h2>Errors of one node</h2><select id='node' onchange='show(this.value)'>{6}</select>
{7}
<h2>All kernels</h2><table><tr><th>#</th><th>node</th><th>op</th><th>value</th><th>max_abs</th><th>max_rel</th><th>p99_rel</th><th>max_ulp</th><th>amplification</th></tr>
{8}</table>
<script>function show(k){{for(const d of document.querySelectorAll('.node-plots'))d.style.display='none';
const p=document.getElementById('plots-'+k);if(p)p.style.display='block';document.getElementById('node').value=k;}}
show({9});</script></body></html>
)",
                     markup_escape(report.value("model", "")), markup_escape(report.value("target", "")),
                     markup_escape(report.value("precision", "")), tolerance, first, depth_plot(nodes, tolerance), options, plots,
                     rows, selected);
  return out ? Status::ok() : Status::error(ErrorKind::kIo, fmt::format("{}: cannot write", path));
}

}  // namespace aotc::tools
