#include "codegen/device/device_kernel.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "graph/ops/op_helpers.h"

namespace aotc::codegen {

LaunchSize launch_1d(int64_t count, int64_t group) {
  LaunchSize l;
  int64_t g = std::max<int64_t>(1, std::min(group, count));
  l.local[0] = g;
  l.global[0] = (std::max<int64_t>(count, 1) + g - 1) / g * g;
  return l;
}

LaunchSize launch_groups(int64_t groups, int64_t group, int64_t batches) {
  LaunchSize l;
  l.local[0] = group;
  l.global[0] = std::max<int64_t>(groups, 1) * group;
  l.global[1] = std::max<int64_t>(batches, 1);
  return l;
}

std::vector<int64_t> dims_of(const Value* v) { return static_dims(v->shape()); }

KernelArg bits_of(KernelArg arg) {
  switch (dtype_size(arg.value->dtype())) {
    case 1:
      arg.element = DType::kUInt8;
      break;
    case 2:
      arg.element = DType::kUInt16;
      break;
    case 4:
      arg.element = DType::kUInt32;
      break;
    default:
      arg.element = DType::kUInt64;
      break;
  }
  return arg;
}

DeviceKernelContext::DeviceKernelContext(const Node& n, const KernelDialect& dialect,
                                         const TargetFacts& f)
    : node(n), d(dialect), facts(f) {
  int64_t most = 1;
  auto count = [&](const Value* v) {
    if (v && is_static(v->shape())) most = std::max(most, *element_count(v->shape()));
  };
  for (const Value* v : n.inputs()) count(v);
  for (const Value* v : n.outputs()) count(v);
  // Kernels multiply an index by a stride now and then; leave head-room for the largest sum.
  index_type_ = index_type(d, most * 2);
}

CodeWriter& DeviceKernelContext::add_kernel(std::string what, std::vector<KernelArg> args,
                                            LaunchSize launch, int64_t local_bytes) {
  auto k = std::make_unique<KernelText>();
  k->what = std::move(what);
  k->args = std::move(args);
  k->launch = launch;
  k->local_bytes = local_bytes;
  k->body.indent();
  kernels_.push_back(std::move(k));
  return kernels_.back()->body;
}

KernelArg DeviceKernelContext::in(int i, std::string name) const {
  const Value* v = node.input(i);
  if (auto it = outer.find(v); it != outer.end()) v = it->second;
  return {name.empty() ? fmt::format("in{}", i) : std::move(name), v, false};
}

KernelArg DeviceKernelContext::out(int i, std::string name) const {
  const Value* v = node.output(i);
  if (auto it = outer.find(v); it != outer.end()) v = it->second;
  return {name.empty() ? fmt::format("out{}", i) : std::move(name), v, true};
}

const DeviceKernelRegistry& DeviceKernelRegistry::instance() {
  static const DeviceKernelRegistry registry = [] {
    DeviceKernelRegistry r;
    register_elementwise_device_kernels(r);
    register_shape_device_kernels(r);
    register_gather_device_kernels(r);
    register_fused_device_kernels(r);
    register_matmul_device_kernels(r);
    register_conv_device_kernels(r);
    register_pool_device_kernels(r);
    register_reduce_device_kernels(r);
    register_norm_device_kernels(r);
    register_index_device_kernels(r);
    register_pad_device_kernels(r);
    register_resize_device_kernels(r);
    register_conv_transpose_device_kernels(r);
    return r;
  }();
  return registry;
}

void DeviceKernelRegistry::add(const std::string& op, DeviceKernelEmitter e,
                               DeviceKernelTraits traits) {
  AOTC_INTERNAL_ASSERT(!emitters_.count(op), "device kernel for {} registered twice", op);
  emitters_.emplace(op, Entry{std::move(e), traits});
}

const DeviceKernelEmitter* DeviceKernelRegistry::find(const std::string& op) const {
  auto it = emitters_.find(op);
  return it == emitters_.end() ? nullptr : &it->second.emit;
}

bool DeviceKernelRegistry::accepts_epilogue(const std::string& op) const {
  auto it = emitters_.find(op);
  return it != emitters_.end() && it->second.traits.accepts_epilogue;
}

bool DeviceKernelRegistry::handles_storage_only(const std::string& op) const {
  auto it = emitters_.find(op);
  return it != emitters_.end() && it->second.traits.storage_only_too;
}

std::vector<std::string> DeviceKernelRegistry::ops() const {
  std::vector<std::string> out;
  for (const auto& [op, e] : emitters_) out.push_back(op);
  return out;
}

Expected<std::vector<std::unique_ptr<KernelText>>> emit_device_kernels(const Node& node,
                                                                       const KernelDialect& d,
                                                                       const TargetFacts& facts) {
  const DeviceKernelEmitter* emitter = DeviceKernelRegistry::instance().find(node.op());
  if (!emitter) return unsupported("no device kernel for op '{}'", node.op());
  for (const Value* v : node.inputs()) {
    if (v && !is_static(v->shape()))
      return unsupported("device kernels need static shapes, '{}' is {}", v->name(),
                         v->type().to_string());
  }
  if (!DeviceKernelRegistry::instance().handles_storage_only(node.op())) {
    std::vector<const Value*> values(node.inputs().begin(), node.inputs().end());
    values.insert(values.end(), node.outputs().begin(), node.outputs().end());
    for (const Value* v : values) {
      if (v && is_storage_only(v->dtype()))
        return unsupported(
            "op '{}' does not compute on dtype {} (of '{}'): {} types are only converted (Cast) "
            "and moved (Identity, Reshape, Transpose, Concat, Slice, Split, Expand)",
            node.op(), dtype_name(v->dtype()), v->name(),
            is_float(v->dtype()) ? "float8 and float4" : "4- and 2-bit integer");
    }
  }
  DeviceKernelContext k(node, d, facts);
  AOTC_RETURN_IF_ERROR(run_device_emitter(k));
  return std::move(k.kernels());
}

Status run_device_emitter(DeviceKernelContext& k) {
  const DeviceKernelEmitter* emitter = DeviceKernelRegistry::instance().find(k.node.op());
  if (!emitter) return unsupported("no device kernel for op '{}'", k.node.op());
  const TargetFacts& facts = k.facts;
  AOTC_RETURN_IF_ERROR((*emitter)(k));
  for (const auto& kernel : k.kernels()) {
    if (kernel->local_bytes > facts.local_memory_bytes) {
      return unsupported("its {} kernel needs {} bytes of local memory, the target has {}",
                         kernel->what, kernel->local_bytes, facts.local_memory_bytes);
    }
    if (kernel->launch.group_items() > facts.max_work_group_size) {
      return unsupported("its {} kernel needs work-groups of {} items, the target allows {}",
                         kernel->what, kernel->launch.group_items(), facts.max_work_group_size);
    }
  }
  return Status::ok();
}

int64_t pow2_ceil(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

int64_t pow2_floor(int64_t v) {
  int64_t p = 1;
  while (p * 2 <= v) p *= 2;
  return p;
}

std::string broadcast_offset(const std::string& flat, const std::vector<int64_t>& out,
                             const std::vector<int64_t>& operand) {
  if (product(operand) == product(out)) return flat;  // same elements: same order
  if (product(operand) == 1) return "0";
  std::vector<int64_t> strides = broadcast_strides(operand, out);
  // Runs of output dims (outermost first) with the operand's stride of their innermost dim:
  // neighbours merge when the operand steps through them as through one dim.
  struct Run {
    int64_t extent, stride;
  };
  std::vector<Run> runs;
  for (size_t a = 0; a < out.size(); ++a) {
    if (out[a] == 1) continue;
    if (!runs.empty() && runs.back().stride == strides[a] * out[a]) {
      runs.back().extent *= out[a];
      runs.back().stride = strides[a];
    } else if (!runs.empty() && runs.back().stride == 0 && strides[a] == 0) {
      runs.back().extent *= out[a];
    } else {
      runs.push_back({out[a], strides[a]});
    }
  }
  std::string expr;
  int64_t inner = 1;  // output elements per step of the current run
  for (size_t r = runs.size(); r-- > 0;) {
    const Run& run = runs[r];
    if (run.stride != 0) {
      std::string q = inner == 1 ? flat : fmt::format("{} / {}", flat, inner);
      // The outermost run needs no modulo: the quotient is already below its extent.
      std::string c =
          r == 0 ? q : fmt::format("{} % {}", inner == 1 ? q : "(" + q + ")", run.extent);
      std::string term = run.stride == 1 ? c : fmt::format("({}) * {}", c, run.stride);
      expr = expr.empty() ? term : term + " + " + expr;
    }
    inner *= run.extent;
  }
  return expr.empty() ? "0" : expr;
}

/// The smallest and largest values of dtype t as literals of its compute type (infinities for
/// floats), spelled so that no literal overflows.
std::string extreme_literal(const KernelDialect& d, DType t, bool highest) {
  if (is_float(t)) return d.literal(t, highest ? INFINITY : -INFINITY);
  if (t == DType::kBool) return highest ? "1" : "0";
  if (t == DType::kInt64) return highest ? "9223372036854775807L" : "(-9223372036854775807L - 1)";
  if (t == DType::kUInt64) return highest ? "18446744073709551615UL" : "0UL";
  if (t == DType::kInt32) return highest ? "2147483647" : "(-2147483647 - 1)";
  int bits = dtype_size(t) * 8;
  if (is_unsigned_integer(t))
    return highest ? d.literal(t, static_cast<double>((uint64_t{1} << bits) - 1)) : d.literal(t, 0);
  double m = static_cast<double>(int64_t{1} << (bits - 1));
  return d.cast(d.compute_type(t), d.literal(DType::kInt32, highest ? m - 1 : -m));
}

std::string offset_expr(const std::vector<std::string>& index,
                        const std::vector<int64_t>& strides) {
  std::string out;
  for (size_t d = 0; d < strides.size(); ++d) {
    if (strides[d] == 0) continue;
    if (!out.empty()) out += " + ";
    out += strides[d] == 1 ? index[d] : fmt::format("{} * {}", index[d], strides[d]);
  }
  return out.empty() ? "0" : out;
}

std::vector<std::string> unflatten(const std::string& type, const std::string& flat,
                                   const std::vector<int64_t>& dims, const std::string& prefix) {
  std::vector<std::string> lines;
  if (dims.empty()) return lines;
  if (dims.size() == 1) {
    lines.push_back(fmt::format("const {} {}0 = {};", type, prefix, flat));
    return lines;
  }
  // Peel the fastest-varying axis off a running quotient.
  std::string rest = prefix + "_rest";
  lines.push_back(fmt::format("{} {} = {};", type, rest, flat));
  for (size_t k = dims.size(); k-- > 0;) {
    if (k == 0) {
      lines.push_back(fmt::format("const {} {}0 = {};", type, prefix, rest));
    } else {
      lines.push_back(fmt::format("const {} {}{} = {} % {};", type, prefix, k, rest, dims[k]));
      lines.push_back(fmt::format("{} /= {};", rest, dims[k]));
    }
  }
  return lines;
}

}  // namespace aotc::codegen
