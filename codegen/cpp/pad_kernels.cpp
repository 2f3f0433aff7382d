// Portable C++ kernel body for Pad (graph/ops/pad.cpp), every mode and dtype.
//
// Neighbouring axes that are neither padded nor cropped merge into one, so padding H and W of
// an NCHW tensor loops over N*C planes. The output is written one row (innermost axis) at a time:
// the kept part of the row is one std::memcpy, the padding on either side a fill (constant mode)
// or a gather through a small table of source columns (edge, reflect, wrap). Outer padded axes
// read their source index from a table baked from PadPlan::source, -1 marking a row or block of
// the constant. Copies are bytewise, so every dtype is exact.
#include <string>
#include <vector>

#include "codegen/cpp/cpp_kernel.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/pad_ops.h"

namespace aotc::codegen {
namespace {

/// One loop axis after merging: `orig` is the model axis (the innermost of a merged run).
struct LoopAxis {
  int orig = 0;
  int64_t extent = 0;  // output extent
  int64_t in_stride = 0;
  bool identity = true;
};

std::vector<LoopAxis> merge_axes(const PadPlan& plan) {
  const std::vector<int64_t> strides = row_major_strides(plan.in_dims);
  std::vector<LoopAxis> axes;
  for (int a = 0; a < static_cast<int>(plan.out_dims.size()); ++a) {
    bool identity = plan.identity(a);
    if (identity && !axes.empty() && axes.back().identity) {
      axes.back().extent *= plan.out_dims[a];
      axes.back().orig = a;
      axes.back().in_stride = strides[a];
      continue;
    }
    axes.push_back({a, plan.out_dims[a], strides[a], identity});
  }
  return axes;
}

/// Source offsets (input index times stride, or -1) for output positions [from, to) of `axis`.
std::vector<int64_t> source_table(const PadPlan& plan, const LoopAxis& axis, int64_t from,
                                  int64_t to) {
  std::vector<int64_t> table;
  for (int64_t o = from; o < to; ++o) {
    int64_t s = plan.source(axis.orig, o);
    table.push_back(s < 0 ? -1 : s * axis.in_stride);
  }
  return table;
}

const char* mode_name(PadMode m) {
  switch (m) {
    case PadMode::kConstant:
      return "constant";
    case PadMode::kReflect:
      return "reflect";
    case PadMode::kEdge:
      return "edge";
    case PadMode::kWrap:
      return "wrap";
  }
  return "?";
}

/// Writes one output row at `row` from the input row at `src`; its gather tables are declared
/// by emit_row_tables.
void emit_row(CodeWriter& w, const PadPlan& plan, const LoopAxis& axis) {
  if (axis.identity) {
    w.line("std::memcpy(row, src, kRow * sizeof(row[0]));");
    return;
  }
  const int a = axis.orig;
  const int64_t left = plan.first_copied(a), copied = plan.copied_count(a);
  const int64_t right = axis.extent - left - copied;
  // "row + 3", or "row" for offset 0.
  auto at = [](const char* base, int64_t offset) {
    return offset ? fmt::format("{} + {}", base, offset) : std::string(base);
  };
  auto side = [&](const char* name, int64_t from, int64_t count) {
    if (count == 0) return;
    if (plan.mode == PadMode::kConstant)
      w.line("std::fill_n({}, {}, fill);", at("row", from), count);
    else
      w.line("for (int64_t i = 0; i < {}; ++i) row[{}] = src[k{}Source[i]];", count,
             from ? fmt::format("{} + i", from) : "i", name);
  };
  side("Left", 0, left);
  if (copied > 0)
    w.line("std::memcpy({}, {}, {} * sizeof(row[0]));", at("row", left),
           at("src", plan.kept_begin(a)), copied);
  side("Right", left + copied, right);
}

void emit_row_tables(CodeWriter& w, const PadPlan& plan, const LoopAxis& axis) {
  if (axis.identity || plan.mode == PadMode::kConstant) return;
  const int a = axis.orig;
  const int64_t left = plan.first_copied(a), copied = plan.copied_count(a);
  const int64_t right = axis.extent - left - copied;
  if (left > 0)
    w.line("static const int64_t kLeftSource[{}] = {};", left,
           int_list(source_table(plan, axis, 0, left)));
  if (right > 0)
    w.line("static const int64_t kRightSource[{}] = {};", right,
           int_list(source_table(plan, axis, left + copied, axis.extent)));
}

/// True when the row code reads the input (a constant-mode row may be all padding).
bool row_reads_input(const PadPlan& plan, const LoopAxis& axis) {
  return axis.identity || plan.mode != PadMode::kConstant || plan.copied_count(axis.orig) > 0;
}

Status emit_pad(CppKernel& k) {
  const Node& node = k.node;
  AOTC_ASSIGN_OR_RETURN(PadPlan plan, resolve_pad(node));
  CodeWriter& w = k.w;
  const std::string ct(dtype_c_type(node.input(0)->dtype()));
  w.line("// Pad, mode {}: leading pads {}, trailing pads {} (negative pads crop).",
         mode_name(plan.mode), int_list(plan.begin), int_list(plan.end));
  if (product(plan.out_dims) == 0) {
    w.line("// Nothing to write: the output is empty.");
    return Status::ok();
  }
  std::vector<LoopAxis> axes = merge_axes(plan);
  const LoopAxis row_axis = axes.back();
  axes.pop_back();

  // Source offsets of the padded outer axes (-1: the constant) and of the row's padding.
  for (size_t i = 0; i < axes.size(); ++i)
    if (!axes[i].identity)
      w.line("static const int64_t kSource{}[{}] = {};", i, axes[i].extent,
             int_list(source_table(plan, axes[i], 0, axes[i].extent)));
  emit_row_tables(w, plan, row_axis);
  w.line("constexpr int64_t kRow = {};", row_axis.extent);
  w.line("{}* row = {};", ct, k.out[0]);
  if (plan.mode == PadMode::kConstant) {
    if (k.in.size() > 2 && !k.in[2].empty())
      w.line("const {} fill = {}[0];", ct, k.in[2]);
    else
      w.line("const {} fill = {}();  // no constant_value: zero", ct, ct);
  }

  // Elements of the output under one index of loop axis i (the rows below it).
  std::vector<int64_t> block(axes.size(), row_axis.extent);
  for (int i = static_cast<int>(axes.size()) - 2; i >= 0; --i)
    block[i] = block[i + 1] * axes[i + 1].extent;

  const bool reads = row_reads_input(plan, row_axis);
  std::string src_offset;
  for (size_t i = 0; i < axes.size(); ++i) {
    const LoopAxis& a = axes[i];
    w.open("for (int64_t i{0} = 0; i{0} < {1}; ++i{0})", i, a.extent);
    if (a.identity) {
      if (reads) w.line("const int64_t s{0} = i{0} * {1};", i, a.in_stride);
    } else {
      w.line("const int64_t s{0} = kSource{0}[i{0}];", i);
      if (plan.mode == PadMode::kConstant) {
        w.open("if (s{} < 0)", i);
        w.line("std::fill_n(row, {}, fill);", block[i]);
        w.line("row += {};", block[i]);
        w.line("continue;");
        w.close();
      }
    }
    src_offset += fmt::format("{}s{}", i ? " + " : "", i);
  }
  if (reads)
    w.line("const {}* src = {}{};", ct, k.in[0], src_offset.empty() ? "" : " + " + src_offset);
  emit_row(w, plan, row_axis);
  if (!axes.empty()) w.line("row += kRow;");
  for (size_t i = 0; i < axes.size(); ++i) w.close();
  return Status::ok();
}

}  // namespace

void register_pad_cpp_kernels(CppKernelRegistry& r) { r.add("Pad", emit_pad); }

}  // namespace aotc::codegen
