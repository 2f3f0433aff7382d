// Device kernels of the elementwise family: one work-item per output element, operands read at
// broadcast strides baked in as constants, the op's element expression (device_expressions.h)
// computed in the compute type and stored. Dims that every operand walks contiguously are merged
// first, so a broadcast add of a [64] bias to [1x64x56x56] decomposes the index over two dims.
// One-element operands are read once per item, or baked in when they are constants.
#include <cmath>

#include "codegen/device/elementwise_device.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen {
namespace {

const char* operand_name(size_t k) {
  static const char* kNames[] = {"a", "b", "c", "d", "f", "g", "h"};
  return k < std::size(kNames) ? kNames[k] : nullptr;
}

/// A literal for a one-element constant when the dialect can spell it exactly.
std::optional<std::string> constant_literal(const KernelDialect& d, const TensorData& c) {
  DType t = c.dtype();
  if (is_storage_only(t)) return std::nullopt;  // read as its code
  if (is_float(t)) return d.literal(t, c.get_double(0));
  if (t == DType::kBool) return std::string(c.get_int64(0) ? "1" : "0");
  int64_t v = c.get_int64(0);
  if (is_unsigned_integer(t) && static_cast<uint64_t>(v) > INT32_MAX) return std::nullopt;
  if (v > INT32_MAX || v < -INT32_MAX) return std::nullopt;
  return d.cast(d.compute_type(t), std::to_string(v));
}

Status emit_node_kernel(DeviceKernelContext& k) {
  const Node& node = k.node;
  ElementwiseSpec spec;
  spec.out = k.out(0, "y");
  std::vector<int> operand_of_input(node.num_inputs(), -1);
  for (int i = 0; i < node.num_inputs(); ++i) {
    const Value* v = node.input(i);
    if (!v) continue;
    ElementwiseOperand op;
    op.arg = k.in(i, "x" + std::to_string(i));
    op.scalar = node.op() == "Clip" && i > 0;  // Clip's bounds are scalars whatever their rank
    if (const TensorData* c = v->constant_data(); c && c->num_elements() == 1)
      op.literal = constant_literal(k.d, *c);
    operand_of_input[i] = static_cast<int>(spec.operands.size());
    spec.operands.push_back(std::move(op));
  }
  return emit_elementwise_kernel(k, spec, "map",
                                 [&](DeviceExprBuilder& b, const std::vector<std::string>& names) {
                                   std::vector<std::string> args(node.num_inputs());
                                   for (int i = 0; i < node.num_inputs(); ++i)
                                     if (operand_of_input[i] >= 0)
                                       args[i] = names[operand_of_input[i]];
                                   return device_expression(b, node, args);
                                 });
}

}  // namespace

Status emit_elementwise_kernel(DeviceKernelContext& k, const ElementwiseSpec& spec,
                               const std::string& what, const DeviceElementCompute& compute) {
  const KernelDialect& d = k.d;
  const std::vector<int64_t> out_dims = dims_of(spec.out.value);
  const DType out_dtype = spec.out.value->dtype();
  const int64_t count = product(out_dims);
  const size_t n = spec.operands.size();
  if (n > 7) return unsupported("device elementwise kernels take at most 7 operands, not {}", n);
  if (count == 0) return Status::ok();  // nothing to compute: no launch

  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i) names.push_back(operand_name(i));
  DeviceExprBuilder builder(d);
  AOTC_ASSIGN_OR_RETURN(std::string value, compute(builder, names));

  // Merge adjacent output dims that every streamed operand walks contiguously and drop unit dims.
  std::vector<bool> single(n);
  std::vector<std::vector<int64_t>> full(n), strides(n);
  std::vector<int64_t> dims;
  for (size_t i = 0; i < n; ++i) {
    const ElementwiseOperand& op = spec.operands[i];
    single[i] = op.scalar || product(dims_of(op.arg.value)) == 1;
    if (!single[i]) full[i] = broadcast_strides(dims_of(op.arg.value), out_dims);
  }
  for (size_t a = 0; a < out_dims.size(); ++a) {
    int64_t extent = out_dims[a];
    if (extent == 1) continue;
    bool merge = !dims.empty();
    for (size_t i = 0; i < n && merge; ++i)
      if (!single[i] && strides[i].back() != full[i][a] * extent) merge = false;
    if (merge) {
      dims.back() *= extent;
      for (size_t i = 0; i < n; ++i)
        if (!single[i]) strides[i].back() = full[i][a];
    } else {
      dims.push_back(extent);
      for (size_t i = 0; i < n; ++i)
        if (!single[i]) strides[i].push_back(full[i][a]);
    }
  }

  std::vector<KernelArg> args;
  for (size_t i = 0; i < n; ++i)
    if (!spec.operands[i].literal) args.push_back(spec.operands[i].arg);
  args.push_back(spec.out);
  const std::string& idx = k.index();
  CodeWriter& w = k.add_kernel(what, args, launch_1d(count, k.tiling().work_group_size));
  for (const auto& [name, text] : builder.helpers())
    k.kernels().back()->helpers.emplace(name, text);
  w.line("const {} i = {};", idx, d.global_id(0));
  w.line("if (i >= {}) return;", count);
  std::vector<std::string> index_names;
  bool flat = dims.size() <= 1;
  if (!flat) {
    for (const std::string& line : unflatten(idx, "i", dims, "i")) w.raw_line(line);
    for (size_t a = 0; a < dims.size(); ++a) index_names.push_back(fmt::format("i{}", a));
  }
  for (size_t i = 0; i < n; ++i) {
    const ElementwiseOperand& op = spec.operands[i];
    DType t = op.arg.value->dtype();
    std::string ct = d.compute_type(t);
    if (op.literal) {
      w.line("const {} {} = {};", ct, names[i], *op.literal);
    } else {
      std::string at = single[i] ? "0" : flat ? "i" : offset_expr(index_names, strides[i]);
      w.line("const {} {} = {};", ct, names[i], d.load(t, op.arg.name, at));
    }
  }
  for (const std::string& s : builder.statements()) w.raw_line(s);
  w.raw_line(d.store(out_dtype, spec.out.name, "i", value));
  return Status::ok();
}

void register_elementwise_device_kernels(DeviceKernelRegistry& r) {
  // Identity is a copy (shape_device_kernels.cpp); its expression serves fused chains.
  for (const std::string& op : device_expression_ops())
    if (op != "Identity") r.add(op, emit_node_kernel, {.storage_only_too = op == "Cast"});
}

}  // namespace aotc::codegen
