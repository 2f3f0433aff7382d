// Portable C++ kernel bodies for the 'shape' op family (graph/ops/shape.cpp).
//
// Every data-movement op is one or more box copies (graph/ops/shape_ops.h: the same description
// the reference implementation runs). Each box is first simplified (unit axes dropped, axes that
// are contiguous in both tensors merged), so a Reshape or a Concat/Split along the leading axis
// becomes one std::memcpy per operand, and a Transpose that keeps the innermost axis copies whole
// rows. What is left is a loop nest with every extent and stride baked in. Copies are bytewise
// (element assignments or memcpy), so every dtype is exact, f16/bf16 and bool included.
#include <fmt/ranges.h>

#include "codegen/cpp/cpp_kernel.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/op_registry.h"
#include "graph/ops/shape_ops.h"

namespace aotc::codegen {
namespace {

/// "kName0 = 4, kName1 = 6" for a constexpr line.
std::string named_constants(const std::string& name, const std::vector<int64_t>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i)
    out += fmt::format("{}k{}{} = {}", i ? ", " : "", name, i, values[i]);
  return out;
}

/// "base + i0 * kSrcStride0 + i1 * kSrcStride1" over the first `depth` loop indices.
std::string offset_expr(const std::string& offset, const std::string& stride_name, int depth) {
  std::string out = offset;
  for (int i = 0; i < depth; ++i) {
    out += fmt::format("{}i{} * k{}{}", out.empty() ? "" : " + ", i, stride_name, i);
  }
  return out.empty() ? "0" : out;
}

/// Writes the loop nest for one box copy from `src` to `dst`.
void emit_box_copy(CodeWriter& w, const CopyBox& original, const std::string& src, const std::string& dst) {
  CopyBox box = original.simplified();
  if (box.num_elements() == 0) {
    w.line("// Nothing to copy: the tensor is empty.");
    return;
  }
  int rank = static_cast<int>(box.dims.size());
  // The innermost axis is handled as one block when the destination is contiguous along it and
  // the source is too (memcpy) or repeats one element (a broadcast: fill).
  bool dst_run = box.dst_strides.back() == 1;
  bool copy_run = dst_run && box.src_strides.back() == 1;
  bool fill_run = dst_run && box.src_strides.back() == 0 && box.dims.back() > 1;
  bool block = copy_run || fill_run;
  int loops = block ? rank - 1 : rank;
  if (copy_run && loops == 0) w.line("// One contiguous run.");
  else if (copy_run) w.line("// Runs of kBlock contiguous elements.");
  else if (fill_run) w.line("// Each source element fills a run of kBlock destination elements.");
  else w.line("// Element by element: no axis is contiguous in both tensors.");

  std::string src_base = box.src_offset ? "kSrcOffset" : "";
  std::string dst_base = box.dst_offset ? "kDstOffset" : "";
  if (box.src_offset || box.dst_offset) {
    std::vector<std::string> parts;
    if (box.src_offset) parts.push_back(fmt::format("kSrcOffset = {}", box.src_offset));
    if (box.dst_offset) parts.push_back(fmt::format("kDstOffset = {}", box.dst_offset));
    w.line("constexpr int64_t {};", fmt::join(parts, ", "));
  }
  if (block) w.line("constexpr int64_t kBlock = {};", box.dims.back());
  if (loops > 0) {
    std::vector<int64_t> extents(box.dims.begin(), box.dims.begin() + loops);
    std::vector<int64_t> src_strides(box.src_strides.begin(), box.src_strides.begin() + loops);
    std::vector<int64_t> dst_strides(box.dst_strides.begin(), box.dst_strides.begin() + loops);
    w.line("constexpr int64_t {};", named_constants("Extent", extents));
    w.line("constexpr int64_t {};", named_constants("SrcStride", src_strides));
    w.line("constexpr int64_t {};", named_constants("DstStride", dst_strides));
  }
  for (int i = 0; i < loops; ++i) w.open("for (int64_t i{0} = 0; i{0} < kExtent{0}; ++i{0})", i);
  std::string s = offset_expr(src_base, "SrcStride", loops);
  std::string d = offset_expr(dst_base, "DstStride", loops);
  if (copy_run) {
    w.line("std::memcpy({} + {}, {} + {}, kBlock * sizeof({}[0]));", dst, d, src, s, dst);
  } else if (fill_run) {
    w.line("std::fill_n({} + {}, kBlock, {}[{}]);", dst, d, src, s);
  } else {
    w.line("{}[{}] = {}[{}];", dst, d, src, s);
  }
  for (int i = 0; i < loops; ++i) w.close();
}

/// The copies are computed on row-major shapes. An NCHWc image appears here only as an operand
/// or result of a Concat along the channels whose operands all have whole blocks (legalize-
/// layout's nchwc_concat_forms): per image each operand is then one contiguous run at the
/// row-major offset, so the same copies are right. Anything else is the layout pass's error.
Status check_blocked_data_movement(const CppKernel& k) {
  const Node& node = k.node;
  bool any_blocked = false;
  int block = 0;
  for (int i = 0; i < node.num_inputs(); ++i)
    if (node.input(i) && k.operand(i)->type().layout == Layout::kNCHWc) any_blocked = true, block = k.operand(i)->type().channel_block;
  for (int i = 0; i < node.num_outputs(); ++i)
    if (node.output(i) && k.result(i)->type().layout == Layout::kNCHWc) any_blocked = true, block = k.result(i)->type().channel_block;
  if (!any_blocked) return Status::ok();
  bool ok = node.op() == "Concat" && normalized_axis_attr(node) == 1 && block > 0;
  auto whole_blocks = [&](const Value* v) {
    return v->type().layout == Layout::kNCHWc && v->type().channel_block == block && v->rank() == 4 &&
           static_dims(v->shape())[1] % block == 0;
  };
  for (int i = 0; ok && i < node.num_inputs(); ++i) ok = node.input(i) && whole_blocks(k.operand(i));
  ok = ok && whole_blocks(k.result(0));
  if (!ok) return internal_error("{}: NCHWc images in a copy other than a Concat of whole channel blocks", node.describe());
  return Status::ok();
}

Status emit_data_movement(CppKernel& k) {
  const Node& node = k.node;
  AOTC_RETURN_IF_ERROR(check_blocked_data_movement(k));
  AOTC_ASSIGN_OR_RETURN(std::vector<NodeCopy> copies, data_movement_copies(node));
  CodeWriter& w = k.w;
  // The op and the types are in the comment above the function; add what they do not say.
  if (node.op() == "Transpose") w.line("// Output axis i is input axis perm[i], perm = {}.", int_list(transpose_perm(node)));
  if (node.op() == "Concat" || node.op() == "Split") w.line("// Along axis {}.", normalized_axis_attr(node));
  if (copies.size() == 1) {
    emit_box_copy(w, copies[0].box, k.in[copies[0].input], k.out[copies[0].output]);
    return Status::ok();
  }
  // One block per operand keeps the constants of each copy in their own scope.
  for (const NodeCopy& c : copies) {
    w.line("// {} -> {}", k.in[c.input], k.out[c.output]);
    w.line("{{");
    w.indent();
    emit_box_copy(w, c.box, k.in[c.input], k.out[c.output]);
    w.close();
  }
  return Status::ok();
}

/// Shape is normally folded away; when it is not (it is still a cheap kernel), the dims are
/// compile-time constants written out directly.
Status emit_shape(CppKernel& k) {
  const Node& node = k.node;
  AOTC_ASSIGN_OR_RETURN(std::vector<TensorData> out, evaluate_node(node, {nullptr}));
  std::vector<int64_t> dims = out[0].to_int64_vector();
  k.w.line("// Shape of {}.", node.input(0)->type().to_string());
  if (dims.empty()) {
    k.w.line("// The requested range of dims is empty: nothing to write.");
    return Status::ok();
  }
  k.w.line("static constexpr int64_t kDims[{}] = {};", dims.size(), int_list(dims));
  k.w.line("std::memcpy({}, kDims, sizeof(kDims));", k.out[0]);
  return Status::ok();
}

/// Size, like Shape, is normally folded away; its kernel writes the compile-time count.
Status emit_size(CppKernel& k) {
  AOTC_ASSIGN_OR_RETURN(std::vector<TensorData> out, evaluate_node(k.node, {nullptr}));
  k.w.line("// Size of {}.", k.node.input(0)->type().to_string());
  k.w.line("{}[0] = INT64_C({});", k.out[0], out[0].get_int64(0));
  return Status::ok();
}

/// A C++ expression of dtype t's storage type holding element 0 of `value` bit for bit.
std::string storage_literal(const TensorData& value) {
  DType t = value.dtype();
  std::string c_type(dtype_c_type(t));
  if (t == DType::kFloat16 || t == DType::kBFloat16) {
    return fmt::format("static_cast<uint16_t>(0x{:04x})", value.data<uint16_t>()[0]);
  }
  if (is_storage_only(t))
    return fmt::format("static_cast<uint8_t>(0x{:02x})", value.data<uint8_t>()[0]);
  if (is_float(t) || t == DType::kBool) return literal(t, value.get_double(0));
  int64_t v = value.get_int64(0);
  if (v == INT64_MIN) return fmt::format("static_cast<{}>(INT64_MIN)", c_type);
  // Unsigned 64-bit values above INT64_MAX come back from get_int64 wrapped; the cast restores them.
  return fmt::format("static_cast<{}>(INT64_C({}))", c_type, v);
}

Status emit_constant_of_shape(CppKernel& k) {
  const Node& node = k.node;
  const TensorType& type = node.output(0)->type();
  int64_t count = product(static_dims(type.shape));
  const TensorData* value = node.attrs().get_tensor("value");
  TensorData zero(DType::kFloat32, {1});
  if (!value) value = &zero;
  k.w.line("// ConstantOfShape: {} filled with {}.", type.to_string(),
           is_float(value->dtype()) ? fmt::format("{}", value->get_double(0)) : fmt::format("{}", value->get_int64(0)));
  if (count == 0) {
    k.w.line("// Nothing to fill: the tensor is empty.");
    return Status::ok();
  }
  k.w.line("constexpr int64_t kCount = {};", count);
  k.w.line("std::fill_n({}, kCount, {});", k.out[0], storage_literal(*value));
  return Status::ok();
}

}  // namespace

void register_shape_cpp_kernels(CppKernelRegistry& r) {
  // Data movement copies elements unchanged, so the storage-only types' codes move as they are.
  for (const char* op : {"Reshape", "Transpose", "Concat", "Slice", "Split", "Expand"})
    r.add(op, emit_data_movement, KernelDTypes::kStorageOnlyToo);
  r.add("Shape", emit_shape);
  r.add("Size", emit_size);
  r.add("ConstantOfShape", emit_constant_of_shape);
}

}  // namespace aotc::codegen
