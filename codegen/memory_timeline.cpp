#include "codegen/memory_timeline.h"

#include <fmt/format.h>

#include <algorithm>

#include "passes/passes.h"
#include "graph/printable.h"

namespace aotc::codegen {
namespace {

/// A fill colour per buffer: hues spread by the golden angle, so neighbours differ.
std::string colour(size_t i, bool scratch) {
  if (scratch) return "#bbbbbb";
  int hue = static_cast<int>((i * 137) % 360);
  return fmt::format("hsl({}, 55%, 62%)", hue);
}

/// Tick values for an axis from 0 to `max`: 1, 2 or 5 times a power of ten, about five of them.
std::vector<double> ticks(double max) {
  if (max <= 0) return {0};
  double raw = max / 5, power = 1;
  while (power * 10 <= raw) power *= 10;
  while (power > raw) power /= 10;
  double step = raw / power < 2 ? 2 * power : raw / power < 5 ? 5 * power : 10 * power;
  std::vector<double> out;
  for (double v = 0; v <= max + 1e-9; v += step) out.push_back(v);
  return out;
}

}  // namespace

std::string render_memory_timeline(const ArenaPlan& plan, const std::string& title) {
  constexpr double kLeft = 90, kRight = 20, kTop = 60, kBottom = 60, kWidth = 1000, kHeight = 520;
  const int steps = std::max<int>(1, static_cast<int>(plan.schedule.size()));
  const double bytes = static_cast<double>(std::max<int64_t>(1, plan.arena_bytes));
  const double sx = kWidth / steps, sy = kHeight / bytes;
  auto x_of = [&](double step) { return kLeft + step * sx; };
  auto y_of = [&](double offset) { return kTop + kHeight - offset * sy; };

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n",
      kLeft + kWidth + kRight, kTop + kHeight + kBottom);
  svg += fmt::format("<title>{} arena timeline</title>\n", markup_escape(title));
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  double ratio = plan.lower_bound_bytes > 0
                     ? static_cast<double>(plan.arena_bytes) / plan.lower_bound_bytes
                     : 1.0;
  std::string peak_node = plan.peak_step < static_cast<int>(plan.schedule.size())
                              ? plan.schedule[plan.peak_step]->name()
                              : "";
  svg += fmt::format(
      "<text x=\"{}\" y=\"22\" font-size=\"15\">{}: arena {} ({} bytes), lower bound {} ({:.3f}x), "
      "{} buffers</text>\n",
      kLeft, markup_escape(title), format_bytes(plan.arena_bytes), plan.arena_bytes,
      format_bytes(plan.lower_bound_bytes), ratio, plan.buffers.size());
  svg += fmt::format(
      "<text x=\"{}\" y=\"42\" fill=\"#555\">x: kernel step; y: arena offset. Peak at step {} "
      "(node {}); "
      "placement: {}. Hover a buffer for details.</text>\n",
      kLeft, plan.peak_step, markup_escape(peak_node), markup_escape(plan.placement));

  // Axes with ticks.
  svg += fmt::format(
      "<g stroke=\"#333\"><line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>"
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{3}\"/></g>\n",
      kLeft, kTop + kHeight, kLeft + kWidth, kTop);
  for (double t : ticks(steps)) {
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x_of(t),
                       kTop + kHeight + 18, static_cast<int64_t>(t));
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">kernel step</text>\n",
                     kLeft + kWidth / 2, kTop + kHeight + 40);
  for (double t : ticks(bytes)) {
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", kLeft - 6,
                       y_of(t) + 4, format_bytes(static_cast<int64_t>(t)));
  }

  // One rectangle per buffer.
  svg += "<g stroke=\"#222\" stroke-width=\"0.3\">\n";
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const ArenaBuffer& b = plan.buffers[i];
    if (b.bytes == 0) continue;
    double x = x_of(b.first), w = (b.last - b.first + 1) * sx;
    double y = y_of(static_cast<double>(b.offset + b.bytes)), h = std::max(0.5, b.bytes * sy);
    std::string first =
        b.first < static_cast<int>(plan.schedule.size()) ? plan.schedule[b.first]->name() : "";
    std::string last =
        b.last < static_cast<int>(plan.schedule.size()) ? plan.schedule[b.last]->name() : "";
    svg += fmt::format(
        "<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"{}\"><title>{}: "
        "{} bytes at "
        "offset {}, live at steps {}..{} ({} .. {})</title></rect>\n",
        x, y, w, h, colour(i, b.scratch_of != nullptr), markup_escape(b.label()), b.bytes, b.offset,
        b.first, b.last, markup_escape(first), markup_escape(last));
  }
  svg += "</g>\n";

  // The lower bound and the peak step.
  svg += fmt::format(
      "<line x1=\"{0}\" y1=\"{1:.2f}\" x2=\"{2}\" y2=\"{1:.2f}\" stroke=\"#c00\" "
      "stroke-dasharray=\"6 4\"/>"
      "<text x=\"{2}\" y=\"{3:.2f}\" fill=\"#c00\" text-anchor=\"end\">lower bound</text>\n",
      kLeft, y_of(static_cast<double>(plan.lower_bound_bytes)), kLeft + kWidth,
      y_of(static_cast<double>(plan.lower_bound_bytes)) - 4);
  svg += fmt::format(
      "<line x1=\"{0:.2f}\" y1=\"{1}\" x2=\"{0:.2f}\" y2=\"{2}\" stroke=\"#06c\" "
      "stroke-dasharray=\"3 3\"/>\n",
      x_of(plan.peak_step + 0.5), kTop, kTop + kHeight);
  svg += "</svg>\n";
  return svg;
}

std::string render_memory_plan_csv(const ArenaPlan& plan, const std::string& banner) {
  std::string out =
      fmt::format("# {}; arena {} bytes, lower bound {} bytes, {} kernel steps\n", banner,
                  plan.arena_bytes, plan.lower_bound_bytes, plan.schedule.size());
  out += "buffer,bytes,offset,first_step,last_step\n";
  for (const ArenaBuffer& b : plan.buffers) {
    std::string label = "\"";
    for (char c : b.label())
      label += c == '"' ? std::string("\"\"") : std::string(1, c == '\n' ? ' ' : c);
    out += fmt::format("{}\",{},{},{},{}\n", label, b.bytes, b.offset, b.first, b.last);
  }
  return out;
}

}  // namespace aotc::codegen
