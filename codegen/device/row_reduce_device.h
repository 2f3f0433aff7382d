#pragma once
/// Work-group layout and code pieces for kernels that reduce rows: `rows` independent rows of
/// `len` elements each (reductions, softmax, normalisations, global pooling). `lanes` work-items
/// (a power of two) cooperate on one row, each striding through it and keeping a partial result,
/// which a tree in local memory then combines; `rows_per_group` rows share a work-group, so short
/// rows still fill groups. Work-group item l serves row l / lanes of the group, at lane l % lanes.
///
/// Kernels using it must not return early: every item reaches every barrier, rows past the end
/// included (they compute on the neutral element and store nothing).
#include <functional>
#include <string>

#include "codegen/device/device_kernel.h"

namespace aotc::codegen {

struct RowReduce {
  int64_t rows = 1, len = 1;
  int64_t lanes = 1, rows_per_group = 1;
  int64_t group_items() const { return lanes * rows_per_group; }
  LaunchSize launch() const;
};

/// Lanes sized so each takes at least a few elements (at most the target's reduce group), and
/// rows per group to fill the target's work-group size.
RowReduce plan_row_reduce(int64_t rows, int64_t len, const TargetFacts& facts);

/// Declares `lane` (int), `row` (the row index, of type idx) and `active` (row < rows), and the
/// local array `red` of `type` the lane reductions use (when lanes > 1).
void emit_row_header(CodeWriter& w, const RowReduce& p, const KernelDialect& d,
                     const std::string& idx, const std::string& type);

/// Combines variable `var` (of the `type` given to emit_row_header) over the lanes of each row
/// with `combine` (an expression of two operands); afterwards every lane holds the result. No-op
/// for one lane.
void emit_lane_reduce(
    CodeWriter& w, const RowReduce& p, const KernelDialect& d, const std::string& var,
    const std::function<std::string(const std::string&, const std::string&)>& combine);

/// Bytes of local memory the header's array takes for elements of `bytes` each.
int64_t row_reduce_local_bytes(const RowReduce& p, int64_t bytes);

}  // namespace aotc::codegen
