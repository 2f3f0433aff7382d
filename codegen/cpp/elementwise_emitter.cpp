#include "codegen/cpp/elementwise_emitter.h"

#include <cmath>

#include "codegen/cpp/cpp_kernel.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen {

std::string ExprBuilder::bind(const std::string& type, const std::string& expr) {
  std::string name = fmt::format("t{}", next_temp_++);
  statements_.push_back(fmt::format("const {} {} = {};", type, name, expr));
  return name;
}

void ExprBuilder::add_helper(const std::string& name, std::vector<std::string> lines) {
  helpers_.emplace(name, std::move(lines));
}

std::string element_literal(const TensorData& data, int64_t i) {
  DType t = data.dtype();
  if (is_storage_only(t))
    return fmt::format("static_cast<uint8_t>(0x{:02x})", data.data<uint8_t>()[i]);
  if (t == DType::kBool) return data.get_int64(i) ? "true" : "false";
  if (is_signed_integer(t)) {
    int64_t v = data.get_int64(i);
    return v == INT64_MIN ? "INT64_MIN" : std::to_string(v);
  }
  if (is_unsigned_integer(t)) return std::to_string(static_cast<uint64_t>(data.get_int64(i))) + "u";
  double v = data.get_double(i);
  if (!std::isfinite(v)) return literal(t, v);
  // The shortest decimal that reads back to the same value: exact and easier on the reader than
  // a hex float. It needs a '.' or an exponent to be a floating literal.
  bool single = t != DType::kFloat64;
  std::string s = single ? fmt::format("{}", static_cast<float>(v)) : fmt::format("{}", v);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return single ? s + "f" : s;
}

namespace {

/// Names of the loaded operand values: a, b, c, ... (skipping i and t, which name loop indices
/// and temporaries), then x8, x9, ... for long operand lists (Sum).
std::string operand_name(size_t k) {
  static const char kLetters[] = "abcdefgh";
  if (k < sizeof(kLetters) - 1) return std::string(1, kLetters[k]);
  return fmt::format("x{}", k);
}

/// "i0 * 20 + i1 * 5 + i2", leaving out broadcast (stride 0) axes.
std::string index_expr(const std::vector<int64_t>& strides) {
  std::string out;
  for (size_t d = 0; d < strides.size(); ++d) {
    if (strides[d] == 0) continue;
    if (!out.empty()) out += " + ";
    out += strides[d] == 1 ? fmt::format("i{}", d) : fmt::format("i{} * {}", d, strides[d]);
  }
  return out.empty() ? "0" : out;
}

std::string dims_string(const std::vector<int64_t>& dims) {
  return dims.empty() ? "scalar" : shape_to_string(make_shape(dims));
}

}  // namespace

Status emit_elementwise_loop(CodeWriter& w, const ElementwiseLoop& loop,
                             const ElementCompute& compute) {
  const size_t n = loop.operands.size();
  std::vector<std::string> names;
  for (size_t k = 0; k < n; ++k) names.push_back(operand_name(k));

  int64_t count = product(loop.out_dims);
  if (count == 0) {
    w.line("// The output has no elements: nothing to compute.");
    for (const LoopOperand& op : loop.operands) w.line("(void){};", op.ptr);
    w.line("(void){};", loop.out_ptr);
    return Status::ok();
  }

  // The body is built first so that helpers it asks for can be written before the loop.
  ExprBuilder builder;
  AOTC_ASSIGN_OR_RETURN(std::string value, compute(builder, names));
  for (const auto& [name, lines] : builder.helpers()) {
    for (const std::string& l : lines) w.raw_line(l);
  }

  // One-element operands are read once, outside the loop, or baked in when known.
  std::vector<bool> hoisted(n, false);
  for (size_t k = 0; k < n; ++k) {
    const LoopOperand& op = loop.operands[k];
    AOTC_INTERNAL_ASSERT(op.dims.size() <= loop.out_dims.size() || op.scalar,
                         "operand {} has higher rank than the output", k);
    if (!op.scalar && product(op.dims) != 1) continue;
    hoisted[k] = true;
    std::string type = compute_type(op.dtype);
    if (op.literal) {
      w.line("constexpr {} {} = {};", type, names[k], *op.literal);
      w.line("(void){};  // the value is known at compile time", op.ptr);
    } else {
      w.line("const {} {} = {};", type, names[k], load(op.dtype, op.ptr, "0"));
    }
  }

  // Merge adjacent output dims that every streamed operand walks contiguously (outer stride ==
  // inner stride * inner extent), and drop extent-1 dims: [2x3x4x5] + [5] loops as [24x5].
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> strides(n);
  std::vector<std::vector<int64_t>> full(n);
  for (size_t k = 0; k < n; ++k)
    if (!hoisted[k]) full[k] = broadcast_strides(loop.operands[k].dims, loop.out_dims);
  for (size_t d = 0; d < loop.out_dims.size(); ++d) {
    int64_t extent = loop.out_dims[d];
    if (extent == 1) continue;
    bool merge = !dims.empty();
    for (size_t k = 0; k < n && merge; ++k)
      if (!hoisted[k] && strides[k].back() != full[k][d] * extent) merge = false;
    if (merge) {
      dims.back() *= extent;
      for (size_t k = 0; k < n; ++k)
        if (!hoisted[k]) strides[k].back() = full[k][d];
    } else {
      dims.push_back(extent);
      for (size_t k = 0; k < n; ++k)
        if (!hoisted[k]) strides[k].push_back(full[k][d]);
    }
  }

  auto write_body = [&](const std::vector<std::string>& index, const std::string& out_index) {
    for (size_t k = 0; k < n; ++k) {
      if (hoisted[k]) continue;
      const LoopOperand& op = loop.operands[k];
      w.line("const {} {} = {};", compute_type(op.dtype), names[k], load(op.dtype, op.ptr, index[k]));
    }
    for (const std::string& s : builder.statements()) w.raw_line(s);
    w.raw_line(store(loop.out_dtype, loop.out_ptr, out_index, value));
  };

  if (dims.size() <= 1) {
    // No operand is broadcast along a loop dim: every streamed operand has the output's layout.
    w.line("constexpr int64_t kCount = {};", count);
    w.open("for (int64_t i = 0; i < kCount; ++i)");
    write_body(std::vector<std::string>(n, "i"), "i");
    w.close();
    return Status::ok();
  }

  std::string broadcast_note;
  for (size_t k = 0; k < n; ++k) {
    if (hoisted[k] || loop.operands[k].dims == loop.out_dims) continue;
    broadcast_note += fmt::format("{}{} [{}]", broadcast_note.empty() ? "" : ", ",
                                  loop.operands[k].ptr, dims_string(loop.operands[k].dims));
  }
  if (dims == loop.out_dims) {
    w.line("// Broadcasts {} to [{}].", broadcast_note, dims_string(loop.out_dims));
  } else {
    w.line("// Broadcasts {} to [{}], looping over it as [{}].", broadcast_note,
           dims_string(loop.out_dims), dims_string(dims));
  }
  for (size_t d = 0; d < dims.size(); ++d) w.line("constexpr int64_t kDim{} = {};", d, dims[d]);
  for (size_t d = 0; d < dims.size(); ++d)
    w.open("for (int64_t i{0} = 0; i{0} < kDim{0}; ++i{0})", d);
  std::vector<std::string> index(n);
  for (size_t k = 0; k < n; ++k)
    if (!hoisted[k]) index[k] = index_expr(strides[k]);
  write_body(index, index_expr(row_major_strides(dims)));
  for (size_t d = 0; d < dims.size(); ++d) w.close();
  return Status::ok();
}

}  // namespace aotc::codegen
