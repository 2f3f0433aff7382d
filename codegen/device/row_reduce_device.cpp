#include "codegen/device/row_reduce_device.h"

#include <algorithm>

namespace aotc::codegen {

LaunchSize RowReduce::launch() const {
  int64_t groups = (rows + rows_per_group - 1) / rows_per_group;
  return launch_groups(groups, group_items());
}

RowReduce plan_row_reduce(int64_t rows, int64_t len, const TargetFacts& facts) {
  RowReduce p;
  p.rows = rows;
  p.len = len;
  // Four elements per lane at least: below that the tree costs more than it saves.
  p.lanes = std::min<int64_t>(pow2_floor(facts.tiling.reduce_group_size),
                              pow2_floor(std::max<int64_t>(1, len / 4)));
  p.rows_per_group = std::max<int64_t>(
      1, std::min(pow2_floor(facts.tiling.work_group_size) / p.lanes, pow2_ceil(rows)));
  return p;
}

void emit_row_header(CodeWriter& w, const RowReduce& p, const KernelDialect& d,
                     const std::string& idx, const std::string& type) {
  w.line("// {} rows of {}: {} lane{} per row, {} row{} per work-group.", p.rows, p.len, p.lanes,
         p.lanes == 1 ? "" : "s", p.rows_per_group, p.rows_per_group == 1 ? "" : "s");
  w.line("const int lid = {};", d.local_id(0));
  w.line("const int lane = {};", p.lanes == 1 ? "0" : fmt::format("lid % {}", p.lanes));
  std::string in_group = p.rows_per_group == 1 ? "" : fmt::format(" + lid / {}", p.lanes);
  w.line("const {} row = {} * {}{};", idx, d.group_id(0), p.rows_per_group, in_group);
  w.line("const int active = row < {};", p.rows);
  if (p.lanes > 1) w.raw_line(d.local_array(type, "red", p.group_items()));
}

void emit_lane_reduce(
    CodeWriter& w, const RowReduce& p, const KernelDialect& d, const std::string& var,
    const std::function<std::string(const std::string&, const std::string&)>& combine) {
  if (p.lanes == 1) return;
  w.line("red[lid] = {};", var);
  w.raw_line(d.barrier());
  for (int64_t s = p.lanes / 2; s > 0; s /= 2) {
    w.line("if (lane < {}) red[lid] = {};", s,
           combine("red[lid]", fmt::format("red[lid + {}]", s)));
    w.raw_line(d.barrier());
  }
  w.line("{} = red[lid - lane];", var);
  w.raw_line(d.barrier());  // the array is reused by the next reduction
}

int64_t row_reduce_local_bytes(const RowReduce& p, int64_t bytes) {
  return p.lanes > 1 ? p.group_items() * bytes : 0;
}

}  // namespace aotc::codegen
