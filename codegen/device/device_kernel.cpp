#include "codegen/device/device_kernel.h"

#include <algorithm>
#include <limits>

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
    case 1: arg.element = DType::kUInt8; break;
    case 2: arg.element = DType::kUInt16; break;
    case 4: arg.element = DType::kUInt32; break;
    default: arg.element = DType::kUInt64; break;
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
  return {name.empty() ? fmt::format("in{}", i) : std::move(name), node.input(i), false};
}

KernelArg DeviceKernelContext::out(int i, std::string name) const {
  return {name.empty() ? fmt::format("out{}", i) : std::move(name), node.output(i), true};
}

const DeviceKernelRegistry& DeviceKernelRegistry::instance() {
  static const DeviceKernelRegistry registry = [] {
    DeviceKernelRegistry r;
    register_elementwise_device_kernels(r);
    register_shape_device_kernels(r);
    register_gather_device_kernels(r);
    return r;
  }();
  return registry;
}

void DeviceKernelRegistry::add(const std::string& op, DeviceKernelEmitter e) {
  AOTC_INTERNAL_ASSERT(!emitters_.count(op), "device kernel for {} registered twice", op);
  emitters_.emplace(op, std::move(e));
}

const DeviceKernelEmitter* DeviceKernelRegistry::find(const std::string& op) const {
  auto it = emitters_.find(op);
  return it == emitters_.end() ? nullptr : &it->second;
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
  DeviceKernelContext k(node, d, facts);
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
  return std::move(k.kernels());
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
