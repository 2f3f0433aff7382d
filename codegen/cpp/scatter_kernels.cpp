// Portable C++ kernel bodies for the 'scatter' op family (graph/ops/scatter.cpp):
// ScatterElements, ScatterND and OneHot.
//
// The scatters copy `data` to the output and then apply the updates in row-major order of the
// indices. A run-time index outside its axis (after wrapping negative ones) is a model error the
// generated code cannot report; its update is skipped, which keeps every write inside the output
// and leaves the other elements as the spec defines them (clamping would overwrite an element
// the model never addressed). Constant indices were range-checked at compile time.
//
// OneHot's out-of-range rule is part of the spec: such an index leaves its row all off_value.
#include "codegen/cpp/cpp_kernel.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen {
namespace {

/// The statement that combines output element `at` with update element `u` under `reduction`.
/// Integer add and mul run in uint64_t, whose wrap-around is defined (a signed overflow, or an
/// int promotion of two uint16_t, would be undefined behaviour); NaN propagates through max and
/// min as numpy's maximum and minimum do.
std::string combine(const std::string& reduction, DType t, const std::string& out,
                    const std::string& at, const std::string& upd, const std::string& u) {
  std::string a = load(t, out, at), b = load(t, upd, u);
  std::string ct = compute_type(t);
  if (reduction == "none") return fmt::format("{}[{}] = {}[{}];", out, at, upd, u);
  if (is_float(t)) {
    std::string r;
    if (reduction == "add")
      r = fmt::format("{} + {}", a, b);
    else if (reduction == "mul")
      r = fmt::format("{} * {}", a, b);
    else
      r = fmt::format("(a != a || b != b) ? a + b : (b {} a ? b : a)",
                      reduction == "max" ? ">" : "<");
    if (reduction == "max" || reduction == "min")
      return fmt::format("{{ const {0} a = {1}, b = {2}; {3} }}", ct, a, b, store(t, out, at, r));
    return store(t, out, at, r);
  }
  if (reduction == "add" || reduction == "mul")
    return fmt::format(
        "{}[{}] = static_cast<{}>(static_cast<uint64_t>({}) {} static_cast<uint64_t>({}));", out,
        at, ct, a, reduction == "add" ? "+" : "*", b);
  return fmt::format("if ({2} {3} {1}) {0}[{4}] = {2};", out, a, b, reduction == "max" ? ">" : "<",
                     at);
}

void emit_copy_data(CppKernel& k, int64_t count) {
  if (count > 0)
    k.w.line("std::memcpy({}, {}, {} * sizeof({}[0]));", k.out[0], k.in[0], count, k.out[0]);
}

Status emit_scatter_elements(CppKernel& k) {
  const Node& node = k.node;
  const Value* data = node.input(0);
  const Value* indices = node.input(1);
  std::vector<int64_t> dims = static_dims(data->shape());
  std::vector<int64_t> idims = static_dims(indices->shape());
  std::vector<int64_t> strides = row_major_strides(dims);
  int axis = *normalize_axis(node.attrs().get_int("axis", 0), data->rank());
  std::string reduction = node.attrs().get_string("reduction", "none");
  CodeWriter& w = k.w;
  w.line("// ScatterElements along axis {} into {} at {} indices {}, reduction {}.", axis,
         data->type().to_string(), dtype_name(indices->dtype()), shape_to_string(indices->shape()),
         reduction);
  emit_copy_data(k, product(dims));
  if (product(idims) == 0) return Status::ok();
  w.line("constexpr int64_t kAxisExtent = {};", dims[axis]);
  w.line("int64_t u = 0;");
  std::string offset = "index * " + std::to_string(strides[axis]);
  // `u` counts update elements in row-major order; the innermost loop advances it, also past
  // skipped updates.
  for (size_t d = 0; d < idims.size(); ++d) {
    w.open("for (int64_t i{0} = 0; i{0} < {1}; ++i{0}{2})", d, idims[d],
           d + 1 == idims.size() ? ", ++u" : "");
    if (static_cast<int>(d) != axis) offset += fmt::format(" + i{} * {}", d, strides[d]);
  }
  w.line("int64_t index = static_cast<int64_t>({}[u]);", k.in[1]);
  w.line("if (index < 0) index += kAxisExtent;  // negative indices count from the end");
  w.line("if (index < 0 || index >= kAxisExtent) continue;  // out of range: skip the update");
  w.line("const int64_t at = {};", offset);
  w.line("{}", combine(reduction, data->dtype(), k.out[0], "at", k.in[2], "u"));
  for (size_t d = 0; d < idims.size(); ++d) w.close();
  return Status::ok();
}

Status emit_scatter_nd(CppKernel& k) {
  const Node& node = k.node;
  const Value* data = node.input(0);
  const Value* indices = node.input(1);
  std::vector<int64_t> dims = static_dims(data->shape());
  std::vector<int64_t> idims = static_dims(indices->shape());
  std::vector<int64_t> strides = row_major_strides(dims);
  int m = static_cast<int>(idims.back());
  std::string reduction = node.attrs().get_string("reduction", "none");
  int64_t tuples = product(idims, 0, idims.size() - 1), slice = product(dims, m);
  CodeWriter& w = k.w;
  w.line("// ScatterND into {} at {} index tuples {}, reduction {}.", data->type().to_string(),
         dtype_name(indices->dtype()), shape_to_string(indices->shape()), reduction);
  emit_copy_data(k, product(dims));
  if (tuples == 0 || slice == 0) return Status::ok();
  w.line("constexpr int64_t kTuples = {}, kSlice = {};", tuples, slice);
  if (m > 0) {
    w.line("constexpr int64_t kM = {};", m);
    w.line("static constexpr int64_t kExtents[kM] = {};",
           int_list(std::vector<int64_t>(dims.begin(), dims.begin() + m)));
    w.line("static constexpr int64_t kStrides[kM] = {};",
           int_list(std::vector<int64_t>(strides.begin(), strides.begin() + m)));
  }
  w.open("for (int64_t t = 0; t < kTuples; ++t)");
  if (m == 0) {
    w.line("const int64_t dst = 0;  // empty index tuples address the whole tensor");
  } else {
    w.line("int64_t dst = 0;");
    w.line("bool in_range = true;");
    w.open("for (int64_t c = 0; c < kM && in_range; ++c)");
    w.line("int64_t index = static_cast<int64_t>({}[t * kM + c]);", k.in[1]);
    w.line("if (index < 0) index += kExtents[c];  // negative indices count from the end");
    w.line("in_range = index >= 0 && index < kExtents[c];");
    w.line("dst += in_range ? index * kStrides[c] : 0;");
    w.close();
    w.line("if (!in_range) continue;  // out of range: skip the update");
  }
  w.open("for (int64_t s = 0; s < kSlice; ++s)");
  w.line("{}", combine(reduction, data->dtype(), k.out[0], "dst + s", k.in[2], "t * kSlice + s"));
  w.close();
  w.close();
  return Status::ok();
}

Status emit_one_hot(CppKernel& k) {
  const Node& node = k.node;
  const TensorType& indices = node.input(0)->type();
  const TensorType& y = node.output(0)->type();
  std::vector<int64_t> idims = static_dims(indices.shape);
  int axis = *normalize_axis(node.attrs().get_int("axis", -1), indices.rank() + 1);
  int64_t depth = static_dims(y.shape)[axis];
  CodeWriter& w = k.w;
  w.line("// OneHot of {} indices {} with depth {} on axis {}.", dtype_name(indices.dtype),
         shape_to_string(indices.shape), depth, axis);
  w.line("// An index outside [-depth, depth) leaves its row all off_value, as the spec says.");
  int64_t count = product(static_dims(y.shape));
  if (count == 0) return Status::ok();
  w.line("constexpr int64_t kOuter = {}, kDepth = {}, kInner = {}, kCount = {};",
         product(idims, 0, axis), depth, product(idims, axis), count);
  w.line("for (int64_t e = 0; e < kCount; ++e) {}[e] = {}[0];", k.out[0], k.in[2]);
  w.open("for (int64_t o = 0; o < kOuter; ++o)");
  w.open("for (int64_t i = 0; i < kInner; ++i)");
  std::string v = load(indices.dtype, k.in[0], "o * kInner + i");
  if (is_float(indices.dtype)) {
    // A cast of NaN or of a value outside int64 is undefined: range-check in floating point
    // first. Truncation toward zero is what makes -depth - 0.5 the index -depth.
    w.line("const double v = {};", v);
    w.line("const double depth = static_cast<double>(kDepth);");
    w.line("if (!(v > -depth - 1.0 && v < depth)) continue;");
    w.line("int64_t index = static_cast<int64_t>(v);");
  } else if (is_unsigned_integer(indices.dtype)) {
    w.line("if ({} >= static_cast<uint64_t>(kDepth)) continue;", v);
    w.line("int64_t index = static_cast<int64_t>({});", v);
  } else {
    w.line("int64_t index = static_cast<int64_t>({});", v);
    w.line("if (index < -kDepth || index >= kDepth) continue;");
  }
  w.line("if (index < 0) index += kDepth;");
  w.line("{}[(o * kDepth + index) * kInner + i] = {}[1];", k.out[0], k.in[2]);
  w.close();
  w.close();
  return Status::ok();
}

}  // namespace

void register_scatter_cpp_kernels(CppKernelRegistry& r) {
  r.add("ScatterElements", emit_scatter_elements);
  r.add("ScatterND", emit_scatter_nd);
  r.add("OneHot", emit_one_hot);
}

}  // namespace aotc::codegen
