// compare.html: the targets of `aotc compare` side by side (see tools/compare_html.h).
#include "tools/compare_html.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <vector>

#include <fmt/format.h>

#include "graph/printable.h"

namespace aotc::tools {
namespace {

using nlohmann::json;

std::string bytes_text(const json& v) {
  if (!v.is_number()) return "-";
  const double b = v.get<double>();
  if (b >= 1 << 30) return fmt::format("{:.2f} GiB", b / (1 << 30));
  if (b >= 1 << 20) return fmt::format("{:.2f} MiB", b / (1 << 20));
  if (b >= 1 << 10) return fmt::format("{:.1f} KiB", b / (1 << 10));
  return fmt::format("{:.0f} B", b);
}

std::string time_us_text(double us) {
  if (us >= 1e6) return fmt::format("{:.3g} s", us / 1e6);
  if (us >= 1e3) return fmt::format("{:.3g} ms", us / 1e3);
  return fmt::format("{:.3g} us", us);
}

std::string num_text(const json& v) {
  if (v.is_number()) return fmt::format("{:.3g}", v.get<double>());
  return v.is_string() ? v.get<std::string>() : "-";
}

bool compiled(const json& t) { return t.value("status", "") == "compiled"; }

// A table row: a label and one cell per target.
template <typename Cell>
std::string row(const std::string& label, const json& targets, Cell cell) {
  std::string out = "<tr><th class='what'>" + markup_escape(label) + "</th>";
  for (const json& t : targets) out += "<td data-target='" + markup_escape(t["name"]) + "'>" + cell(t) + "</td>";
  return out + "</tr>\n";
}

std::string summary_table(const json& targets) {
  std::string head = "<tr><th></th>";
  for (const json& t : targets)
    head += fmt::format("<th class='target' id='col-{0}' data-target='{0}'>{0}</th>", markup_escape(t["name"]));
  std::string rows = head + "</tr>\n";
  auto only = [](auto f) {
    return [f](const json& t) { return compiled(t) ? f(t) : std::string("-"); };
  };
  rows += row("status", targets, [](const json& t) {
    if (!compiled(t)) return "<span class='refused'>refused: " + markup_escape(t.value("refusal", "")) + "</span>";
    if (t.contains("run_note")) return "compiled; " + markup_escape(t["run_note"]);
    const bool emulated = t.contains("measured") && t["measured"].value("kind", "").find("emulated") != std::string::npos;
    return std::string(emulated ? "compiled, built and run here on the chip's emulation" : "compiled, built and run here");
  });
  rows += row("kernel language", targets, [](const json& t) { return markup_escape(t["kernel_language"]); });
  rows += row("kernels (distinct functions)", targets, only([](const json& t) {
                return fmt::format("{} ({})", t["kernels"].get<int>(), t["kernel_functions"].get<int>());
              }));
  rows += row("kernels per op", targets, only([](const json& t) {
                std::vector<std::pair<int, std::string>> ops;
                for (auto& [op, n] : t["ops"].items()) ops.push_back({n.get<int>(), op});
                std::sort(ops.begin(), ops.end(), [](auto& a, auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
                std::string s;
                for (auto& [n, op] : ops) s += fmt::format("{}{} {}", s.empty() ? "" : ", ", markup_escape(op), n);
                return s;
              }));
  rows += row("generated source lines", targets, only([](const json& t) {
                std::string s;
                for (auto& [lang, n] : t["source_lines"].items())
                  s += fmt::format("{}{}: {}", s.empty() ? "" : "<br>", markup_escape(lang), n.get<int64_t>());
                return s;
              }));
  rows += row("arena (activations)", targets, only([](const json& t) { return bytes_text(t["memory"]["arena_bytes"]); }));
  rows += row("weights", targets, only([](const json& t) { return bytes_text(t["memory"]["weights_bytes"]); }));
  rows += row("device memory (arena + weights + inputs and outputs)", targets, only([](const json& t) {
                const json& d = t["memory"]["device_memory_bytes"];
                return d.is_null() ? std::string("- (host memory)") : bytes_text(d);
              }));
  rows += row("on-chip memory (most one kernel uses / capacity)", targets, only([](const json& t) {
                std::string s;
                for (const json& o : t["memory"]["on_chip"])
                  s += fmt::format("{}{} {} / {}", s.empty() ? "" : "<br>", markup_escape(o["memory"]), bytes_text(o["bytes"]),
                                   bytes_text(o["capacity"]));
                if (s.empty() && t["memory"]["local_memory_bytes"].get<int64_t>() > 0)
                  s = "local memory up to " + bytes_text(t["memory"]["local_memory_bytes"]) + " per work-group";
                return s.empty() ? std::string("- (caches)") : s;
              }));
  rows += row("peak f32 / memory bandwidth (facts)", targets, [](const json& t) {
    const json& r = t["roofline"];
    if (!r["known"].get<bool>()) return "<span class='unknown'>" + markup_escape(r["bound_if_unknown"]) + "</span>";
    return fmt::format("{:.0f} GFLOP/s / {:.0f} GB/s<br>ridge {:.3g} FLOP/byte", r["peak_gflops"].get<double>(),
                       r["peak_gbps"].get<double>(), r["ridge"].get<double>());
  });
  rows += row("estimated time (roofline, sum of kernels)", targets, only([](const json& t) {
                if (!t["estimate_total_us"].is_number()) return std::string("<span class='unknown'>no estimate: peak rates unknown</span>");
                return fmt::format("<b>{}</b><br>{} compute-bound, {} memory-bound kernels",
                                   time_us_text(t["estimate_total_us"].get<double>()), t["compute_bound_kernels"].get<int>(),
                                   t["memory_bound_kernels"].get<int>());
              }));
  rows += row("measured time (median)", targets, only([](const json& t) {
                if (!t.contains("measured")) return "<span class='unknown'>" + markup_escape(t.value("run_note", "not run")) + "</span>";
                const json& m = t["measured"];
                if (m.contains("error")) return "<span class='refused'>" + markup_escape(m["error"]) + "</span>";
                if (!m["total_ms"].is_number()) return std::string("-");
                return fmt::format("<b>{}</b><br><span class='kind'>{}</span>", time_us_text(m["total_ms"].get<double>() * 1e3),
                                   markup_escape(m["kind"]));
              }));
  rows += row("numeric drift (aotc verify): worst max_rel", targets, only([](const json& t) {
                if (!t.contains("drift")) return std::string("-");
                const json& d = t["drift"];
                if (d.contains("error")) return "<span class='refused'>" + markup_escape(d["error"]) + "</span>";
                return fmt::format("{} at {}", num_text(d["worst_max_rel"]), markup_escape(d.value("worst_node", "")));
              }));
  rows += row("first divergent node (tolerance)", targets, only([](const json& t) {
                if (!t.contains("drift") || t["drift"].contains("error")) return std::string("-");
                const json& d = t["drift"];
                return fmt::format("{} ({})", d["first_divergent_node"].is_string() ? "<b>" + markup_escape(d["first_divergent_node"]) + "</b>" : "none",
                                   num_text(d["tolerance"]));
              }));
  return "<table id='summary'>\n" + rows + "</table>\n";
}

constexpr double kW = 420, kH = 280, kLeft = 55, kBottom = 35, kTop = 12, kRight = 10;

// One target's roofline: attainable GFLOP/s against arithmetic intensity, both log10; every
// kernel with FLOPs at its estimate (on the roof, hollow) and, where timed, at its measured rate.
std::string roofline_plot(const json& t) {
  const std::string name = markup_escape(t["name"]);
  std::string body;
  const json& r = t["roofline"];
  auto frame = [&](const std::string& inner) {
    return fmt::format("<figure class='plot' data-target='{0}'><svg class='roofline' id='roofline-{0}' width='{1}' height='{2}' "
                       "viewBox='0 0 {1} {2}' xmlns='http://www.w3.org/2000/svg'>{3}</svg><figcaption>{0}</figcaption></figure>",
                       name, kW, kH, inner);
  };
  auto message = [&](const std::string& text) {
    return fmt::format("<rect x='0' y='0' width='{}' height='{}' fill='#fafafa'/><text x='{}' y='{}' font-size='12' "
                       "text-anchor='middle'>{}</text>",
                       kW, kH, kW / 2, kH / 2, markup_escape(text));
  };
  if (!compiled(t)) return frame(message("refused: " + t.value("refusal", "").substr(0, 60)));
  if (!r["known"].get<bool>()) return frame(message("no roofline: " + r["bound_if_unknown"].get<std::string>()));
  const double peak = r["peak_gflops"], bw = r["peak_gbps"];
  const double x0 = -2, x1 = 4, y1 = std::ceil(std::log10(peak) + 0.3), y0 = y1 - 7;
  auto X = [&](double ai) { return kLeft + (std::log10(ai) - x0) / (x1 - x0) * (kW - kLeft - kRight); };
  auto Y = [&](double g) { return kTop + (y1 - std::clamp(std::log10(g), y0, y1)) / (y1 - y0) * (kH - kTop - kBottom); };
  for (int e = static_cast<int>(x0); e <= x1; ++e)
    body += fmt::format("<line x1='{0:.1f}' x2='{0:.1f}' y1='{1}' y2='{2}' stroke='#eee'/><text x='{0:.1f}' y='{3}' font-size='10' "
                        "text-anchor='middle'>1e{4}</text>",
                        X(std::pow(10.0, e)), kTop, kH - kBottom, kH - kBottom + 12, e);
  for (int e = static_cast<int>(y0); e <= y1; ++e)
    body += fmt::format("<line x1='{0}' x2='{1}' y1='{2:.1f}' y2='{2:.1f}' stroke='#eee'/><text x='{3}' y='{4:.1f}' font-size='10' "
                        "text-anchor='end'>1e{5}</text>",
                        kLeft, kW - kRight, Y(std::pow(10.0, e)), kLeft - 3, Y(std::pow(10.0, e)) + 3, e);
  const double ridge = peak / bw;
  body += fmt::format("<polyline class='roof' fill='none' stroke='#c0392b' stroke-width='2' points='{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}'/>",
                      X(std::pow(10.0, x0)), Y(bw * std::pow(10.0, x0)), X(ridge), Y(peak), X(std::pow(10.0, x1)), Y(peak));
  int plotted = 0, skipped = 0;
  for (const json& k : t["kernels_detail"]) {
    const double flops = k["flops"].get<double>(), ai = k["intensity"].get<double>();
    if (flops <= 0 || ai <= 0 || !k["estimate_us"].is_number()) {
      ++skipped;
      continue;
    }
    const double x = X(std::clamp(ai, std::pow(10.0, x0), std::pow(10.0, x1)));
    const std::string title = fmt::format("{} ({}): {:.3g} FLOP/byte, {}-bound", k["node"].get<std::string>(),
                                          k["op"].get<std::string>(), ai, k["bound"].get<std::string>());
    body += fmt::format("<circle class='estimate' cx='{:.1f}' cy='{:.1f}' r='3' fill='none' stroke='#2980b9'><title>{} estimate {}</title></circle>",
                        x, Y(flops / (k["estimate_us"].get<double>() * 1e-6) / 1e9), markup_escape(title),
                        time_us_text(k["estimate_us"].get<double>()));
    if (k["measured_us"].is_number() && k["measured_us"].get<double>() > 0)
      body += fmt::format("<circle class='measured' cx='{:.1f}' cy='{:.1f}' r='3' fill='#e67e22'><title>{} measured {}</title></circle>",
                          x, Y(flops / (k["measured_us"].get<double>() * 1e-6) / 1e9), markup_escape(title),
                          time_us_text(k["measured_us"].get<double>()));
    ++plotted;
  }
  body += fmt::format("<line x1='{0}' y1='{1}' x2='{0}' y2='{2}' stroke='#333'/><line x1='{0}' y1='{2}' x2='{3}' y2='{2}' stroke='#333'/>",
                      kLeft, kTop, kH - kBottom, kW - kRight);
  body += fmt::format("<text x='{}' y='{}' font-size='11' text-anchor='middle'>FLOP per byte ({} kernels; {} without FLOPs not shown)</text>",
                      (kLeft + kW) / 2, kH - 4, plotted, skipped);
  body += fmt::format("<text x='12' y='{0}' font-size='11' transform='rotate(-90 12 {0})' text-anchor='middle'>GFLOP/s</text>",
                      kH / 2);
  return frame(body);
}

// Estimated and measured total time per target, horizontal bars on a log scale.
std::string times_plot(const json& targets) {
  double lo = 1e300, hi = 0;
  auto take = [&](const json& v, double scale) {
    if (v.is_number() && v.get<double>() > 0) lo = std::min(lo, v.get<double>() * scale), hi = std::max(hi, v.get<double>() * scale);
  };
  for (const json& t : targets) {
    if (!compiled(t)) continue;
    take(t["estimate_total_us"], 1);
    if (t.contains("measured")) take(t["measured"].value("total_ms", json()), 1e3);
  }
  if (hi <= 0) lo = 1, hi = 10;
  const double l0 = std::floor(std::log10(lo)), l1 = std::ceil(std::log10(hi)) + (lo == hi ? 1 : 0);
  const double left = 120, width = 900, bar = 12, per = 2 * bar + 10;
  const double height = per * static_cast<double>(targets.size()) + 40;
  auto X = [&](double us) { return left + (std::log10(us) - l0) / (l1 - l0) * (width - left - 130); };
  std::string s;
  for (int e = static_cast<int>(l0); e <= l1; ++e)
    s += fmt::format("<line x1='{0:.1f}' x2='{0:.1f}' y1='5' y2='{1}' stroke='#eee'/><text x='{0:.1f}' y='{2}' font-size='10' "
                     "text-anchor='middle'>{3}</text>",
                     X(std::pow(10.0, e)), height - 25, height - 12, time_us_text(std::pow(10.0, e)));
  double y = 8;
  for (const json& t : targets) {
    s += fmt::format("<text x='{}' y='{}' font-size='12' text-anchor='end'>{}</text>", left - 6, y + bar + 3, markup_escape(t["name"]));
    auto draw = [&](const json& v, double scale, const std::string& cls, const std::string& color, const std::string& what) {
      if (v.is_number() && v.get<double>() > 0) {
        const double us = v.get<double>() * scale;
        s += fmt::format("<rect class='{}' x='{}' y='{:.1f}' width='{:.1f}' height='{}' fill='{}'><title>{}</title></rect>"
                         "<text x='{:.1f}' y='{:.1f}' font-size='10'>{} {}</text>",
                         cls, left, y, std::max(1.0, X(us) - left), bar, color, markup_escape(what), X(us) + 4, y + bar - 2,
                         time_us_text(us), markup_escape(what));
      }
    };
    if (compiled(t)) {
      draw(t["estimate_total_us"], 1, "estimate", "#2980b9", "estimate");
      y += bar;
      if (t.contains("measured")) {
        const bool emulated = t["measured"].value("kind", "").find("emulated") != std::string::npos;
        draw(t["measured"].value("total_ms", json()), 1e3, "measured", emulated ? "#bdc3c7" : "#e67e22",
             emulated ? "emulated (not a chip time)" : "measured");
      }
      y += bar + 10;
    } else {
      s += fmt::format("<text x='{}' y='{}' font-size='11' fill='#a00'>refused</text>", left + 4, y + bar + 3);
      y += per;
    }
  }
  return fmt::format("<svg id='times' width='{0}' height='{1}' viewBox='0 0 {0} {1}' xmlns='http://www.w3.org/2000/svg'>{2}</svg>",
                     width, height, s);
}

std::string kernel_tables(const json& targets) {
  std::string out;
  for (const json& t : targets) {
    if (!compiled(t)) continue;
    std::string rows;
    for (const json& k : t["kernels_detail"])
      rows += fmt::format("<tr><td>{}</td><td>{}</td><td>{:.4g}</td><td>{}</td><td>{:.3g}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                          markup_escape(k["node"]), markup_escape(k["op"]), k["flops"].get<double>(), bytes_text(k["bytes"]),
                          k["intensity"].get<double>(), markup_escape(k["bound"]),
                          k["estimate_us"].is_number() ? time_us_text(k["estimate_us"].get<double>()) : "-",
                          k["measured_us"].is_number() ? time_us_text(k["measured_us"].get<double>()) : "-",
                          num_text(k["max_rel"]));
    out += fmt::format("<details class='kernels' data-target='{0}'><summary>{0}: {1} kernels</summary><table><tr><th>node</th><th>op</th>"
                       "<th>FLOPs</th><th>bytes</th><th>FLOP/byte</th><th>bound</th><th>estimate</th><th>measured</th>"
                       "<th>max_rel</th></tr>{2}</table></details>\n",
                       markup_escape(t["name"]), t["kernels_detail"].size(), rows);
  }
  return out;
}

// The node the page opens with: the one with the most FLOPs that has a kernel source.
std::string default_node(const json& targets) {
  std::string best;
  double most = -1;
  for (const json& t : targets) {
    if (!compiled(t)) continue;
    for (const json& k : t["kernels_detail"])
      if (k["flops"].get<double>() > most && t["sources"]["functions_of_node"].contains(k["node"].get<std::string>()))
        most = k["flops"].get<double>(), best = k["node"].get<std::string>();
    if (!best.empty()) return best;
  }
  return best;
}

}  // namespace

Status write_compare_html(const std::string& path, const json& page) {
  const json& targets = page["targets"];
  // The node selector: every kernel's node, in the schedule order of the first target that has it.
  std::vector<std::string> nodes;
  for (const json& t : targets)
    if (compiled(t))
      for (const json& k : t["kernels_detail"])
        if (std::find(nodes.begin(), nodes.end(), k["node"].get<std::string>()) == nodes.end()) nodes.push_back(k["node"].get<std::string>());
  std::string options;
  for (const std::string& n : nodes) options += "<option value='" + markup_escape(n) + "'>" + markup_escape(n) + "</option>";
  std::string plots;
  for (const json& t : targets) plots += roofline_plot(t);
  // What the script needs for the node view; "</" is escaped so the data cannot end the script.
  json data = {{"targets", json::array()}};
  for (const json& t : targets) {
    json d = {{"name", t["name"]}, {"status", t["status"]}, {"refusal", t.value("refusal", "")},
              {"kernel_language", t["kernel_language"]}};
    if (compiled(t)) {
      d["kernels_detail"] = t["kernels_detail"];
      d["sources"] = t["sources"];
      d["measured_kind"] = t.contains("measured") ? t["measured"].value("kind", "") : t.value("run_note", "");
    }
    data["targets"].push_back(d);
  }
  auto script_safe = [](std::string text) {
    for (size_t at = text.find("</"); at != std::string::npos; at = text.find("</", at + 2)) text.replace(at, 2, "<\\/");
    return text;
  };

  std::string targets_text;
  for (const json& t : targets) targets_text += (targets_text.empty() ? "" : ", ") + t["name"].get<std::string>();
  std::ofstream out(path);
  if (!out) return Status::error(ErrorKind::kIo, fmt::format("{}: cannot write", path));
  out << fmt::format(R"(<!DOCTYPE html>
<html><head><meta charset='utf-8'><title>aotc compare: {0}</title>
<style>body{{font-family:sans-serif;margin:20px}} table{{border-collapse:collapse;font-size:12px}}
td,th{{border:1px solid #ccc;padding:3px 6px;vertical-align:top;text-align:left}} #summary{{table-layout:fixed;width:100%}} #summary td{{overflow-wrap:anywhere}} #summary th.what{{width:170px}} th.target{{background:#eef}}
th.what{{background:#f6f6f6;font-weight:normal;max-width:220px}} .refused{{color:#a00}} .unknown{{color:#888}}
.kind{{font-size:11px;color:#555}} .plots{{display:flex;flex-wrap:wrap;gap:8px}} figure{{margin:0}}
figcaption{{text-align:center;font-size:12px}} svg{{background:#fafafa}}
.side{{display:flex;gap:8px;overflow-x:auto;align-items:flex-start}} .node-col{{flex:0 0 440px;max-width:440px;min-width:0;border:1px solid #ddd;padding:4px}}
.node-col h3{{margin:2px 0}} pre.source{{font-size:10px;background:#f6f6f6;max-height:360px;max-width:100%;overflow:auto;margin:2px 0}}
.file{{font-size:11px;color:#555;margin:4px 0 0}} .facts{{font-size:11px}}</style></head>
<body><h1>aotc compare</h1>
<p>model <code>{0}</code> on {1}. Estimates are roofline lower bounds from each target's facts
(peak f32 FLOP/s and memory bandwidth; docs/compare.md); measured times are medians of {2} runs here.
A time measured under an emulator is <b>emulated, not a chip time</b>. Drift: <code>aotc verify</code> against the
float64 reference, tolerance {3}.</p>
<h2>Targets side by side</h2>
{4}
<h2>Time: estimate and measured</h2><p>blue: roofline estimate; orange: measured on this machine; grey: emulated, not a chip time.</p>
{5}
<h2>Roofline per target</h2><p>red: the roof (memory bandwidth x intensity, then peak FLOP/s); hollow blue: each kernel's estimate; orange: its measured rate (C++ CPU targets).</p>
<div class='plots'>{6}</div>
<h2>One node on every target</h2><select id='node' onchange='showNode(this.value)'>{7}</select>
<div id='node-view' class='side'></div>
<h2>Kernels per target</h2>
{8}
<script type='application/json' id='data'>{9}</script>
<script>
const data = JSON.parse(document.getElementById('data').textContent);
function el(tag, cls, text) {{ const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; }}
function us(v) {{ return v === null || v === undefined ? '-' : v >= 1e6 ? (v / 1e6).toPrecision(3) + ' s' : v >= 1e3 ? (v / 1e3).toPrecision(3) + ' ms' : v.toPrecision(3) + ' us'; }}
function showNode(name) {{
  document.getElementById('node').value = name;
  const view = document.getElementById('node-view');
  view.innerHTML = '';
  for (const t of data.targets) {{
    const col = el('div', 'node-col');
    col.dataset.target = t.name;
    col.appendChild(el('h3', '', t.name + ' (' + t.kernel_language + ')'));
    if (t.status !== 'compiled') {{ col.appendChild(el('p', 'refused', 'refused: ' + t.refusal)); view.appendChild(col); continue; }}
    const k = t.kernels_detail.find(k => k.node === name);
    if (k) col.appendChild(el('p', 'facts', k.op + ': ' + k.flops + ' FLOPs, ' + k.bytes + ' bytes, ' + k.intensity.toPrecision(3) +
        ' FLOP/byte, ' + k.bound + '-bound; estimate ' + us(k.estimate_us) + ', measured ' + us(k.measured_us) +
        (k.max_rel === null ? '' : ', max_rel ' + k.max_rel)));
    const functions = t.sources.functions_of_node[name] || [];
    if (functions.length === 0) col.appendChild(el('p', 'unknown', 'no kernel for this node on ' + t.name + ' (fused into another kernel, or a view)'));
    for (const f of functions) {{
      col.appendChild(el('p', 'file', (t.sources.file_of_function[f] || '?') + ': ' + f));
      col.appendChild(el('pre', 'source', t.sources.source_of_function[f] || '(definition not found in the package)'));
    }}
    view.appendChild(col);
  }}
}}
showNode({10});
</script></body></html>
)",
                     markup_escape(page.value("model", "")), markup_escape(targets_text), page.value("runs", 0),
                     page.value("tolerance", 0.0), summary_table(targets), times_plot(targets), plots, options,
                     kernel_tables(targets), script_safe(data.dump()), script_safe(json(default_node(targets)).dump()));
  return out ? Status::ok() : Status::error(ErrorKind::kIo, fmt::format("{}: cannot write", path));
}

}  // namespace aotc::tools
