// Portable C++ kernel bodies for the 'placement' op family (graph/ops/placement.cpp).
//
// Run-time indices never address memory out of bounds: MaxUnpool skips an index outside the
// unpooled tensor, ReverseSequence clamps each length to [0, steps], and TensorScatter skips a
// linear write outside the cache (circular writes wrap, as the spec says).
#include <algorithm>

#include <fmt/ranges.h>

#include "codegen/cpp/cpp_kernel.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/placement_ops.h"

namespace aotc::codegen {
namespace {

Status emit_col2im(CppKernel& k) {
  AOTC_ASSIGN_OR_RETURN(Col2ImParams p, resolve_col2im(k.node));
  const DType t = k.node.output(0)->dtype();
  const int nd = static_cast<int>(p.image.size());
  const int64_t image = product(p.image), kk = product(p.block), l = product(p.blocks);
  CodeWriter& w = k.w;
  w.line("// Col2Im: {} x {} images of {} from blocks of {}.", p.n, p.c,
         shape_to_string(make_shape(p.image)), shape_to_string(make_shape(p.block)));
  if (p.n * p.c * image == 0) return Status::ok();
  w.line("constexpr int64_t kImages = {}, kImage = {}, kK = {}, kL = {};", p.n * p.c, image, kk, l);
  w.line("constexpr int kD = {};", nd);
  w.line("static const int64_t kImageDims[kD] = {}, kBlock[kD] = {}, kBlocks[kD] = {};",
         int_list(p.image), int_list(p.block), int_list(p.blocks));
  w.line("static const int64_t kStrides[kD] = {}, kDilations[kD] = {}, kPads[kD] = {};",
         int_list(p.strides), int_list(p.dilations), int_list(p.pads_begin));
  w.line("double* acc = reinterpret_cast<double*>({});", k.scratch(image * 8));
  w.open("for (int64_t m = 0; m < kImages; ++m)");
  w.line("for (int64_t i = 0; i < kImage; ++i) acc[i] = 0;");
  w.open("for (int64_t kk = 0; kk < kK; ++kk)");
  w.open("for (int64_t bb = 0; bb < kL; ++bb)");
  w.line("int64_t kr = kk, br = bb, at = 0, scale = 1;");
  w.line("bool inside = true;");
  w.open("for (int d = kD - 1; d >= 0; --d)");
  w.line("const int64_t ki = kr % kBlock[d], bi = br % kBlocks[d];");
  w.line("kr /= kBlock[d];");
  w.line("br /= kBlocks[d];");
  w.line("const int64_t pos = bi * kStrides[d] - kPads[d] + ki * kDilations[d];");
  w.line("inside = inside && pos >= 0 && pos < kImageDims[d];");
  w.line("at += pos * scale;");
  w.line("scale *= kImageDims[d];");
  w.close();
  w.line("if (inside) acc[at] += static_cast<double>({});",
         load(k.node.input(0)->dtype(), k.in[0], "(m * kK + kk) * kL + bb"));
  w.close();
  w.close();
  w.line("for (int64_t i = 0; i < kImage; ++i) {}",
         store(t, k.out[0], "m * kImage + i", fmt::format("static_cast<{}>(acc[i])", compute_type(t))));
  w.close();
  return Status::ok();
}

Status emit_max_unpool(CppKernel& k) {
  AOTC_ASSIGN_OR_RETURN(MaxUnpoolParams p, resolve_max_unpool(k.node));
  const DType t = k.node.output(0)->dtype();
  const int64_t count = k.node.input(0)->type().shape.empty() ? 1 : product(static_dims(k.node.input(0)->shape()));
  CodeWriter& w = k.w;
  w.line("// MaxUnpool: {} values into the corner [{}] of [{}].", count,
         fmt::join(p.inferred, ", "), fmt::join(p.output, ", "));
  w.line("std::fill_n({}, {}, {}());", k.out[0], product(p.output), dtype_c_type(t));
  if (count == 0 || product(p.inferred) == 0) return Status::ok();
  const int rank = static_cast<int>(p.inferred.size());
  w.line("constexpr int kRank = {};", rank);
  w.line("constexpr int64_t kTotal = {};", product(p.inferred));
  w.line("static const int64_t kInferred[kRank] = {}, kOutput[kRank] = {};", int_list(p.inferred),
         int_list(p.output));
  w.open("for (int64_t e = 0; e < {}; ++e)", count);
  w.line("int64_t i = static_cast<int64_t>({}[e]);", k.in[1]);
  w.line("if (i < 0 || i >= kTotal) continue;  // out of range: nothing written");
  w.line("int64_t at = 0, stride = 1;");
  w.open("for (int d = kRank - 1; d >= 0; --d)");
  w.line("at += (i % kInferred[d]) * stride;");
  w.line("i /= kInferred[d];");
  w.line("stride *= kOutput[d];");
  w.close();
  w.line("{}[at] = {}[e];", k.out[0], k.in[0]);
  w.close();
  return Status::ok();
}

Status emit_reverse_sequence(CppKernel& k) {
  const TensorType& x = k.node.input(0)->type();
  if (!is_static(x.shape))
    return unsupported("{}: needs a static shape, got {}", k.node.describe(), x.to_string());
  const std::vector<int64_t> dims = static_dims(x.shape);
  const int b_axis = static_cast<int>(k.node.attrs().get_int("batch_axis", 1));
  const int64_t inner = product(dims, 2), steps = dims[1 - b_axis], batch = dims[b_axis];
  CodeWriter& w = k.w;
  w.line("// ReverseSequence: {} sequence(s) of up to {} steps of {} element(s), batch axis {}.",
         batch, steps, inner, b_axis);
  if (product(dims) == 0) return Status::ok();
  w.line("constexpr int64_t kBatch = {}, kSteps = {}, kInner = {};", batch, steps, inner);
  w.line("std::memcpy({}, {}, {} * sizeof({}[0]));", k.out[0], k.in[0], product(dims), k.out[0]);
  w.open("for (int64_t b = 0; b < kBatch; ++b)");
  w.line("int64_t len = static_cast<int64_t>({}[b]);", k.in[1]);
  w.line("len = len < 0 ? 0 : (len > kSteps ? kSteps : len);");
  w.open("for (int64_t t = 0; t < len; ++t)");
  if (b_axis == 0) {
    w.line("const int64_t dst = (b * kSteps + t) * kInner, src = (b * kSteps + len - 1 - t) * kInner;");
  } else {
    w.line("const int64_t dst = (t * kBatch + b) * kInner, src = ((len - 1 - t) * kBatch + b) * kInner;");
  }
  w.line("std::memcpy({0} + dst, {1} + src, kInner * sizeof({0}[0]));", k.out[0], k.in[0]);
  w.close();
  w.close();
  return Status::ok();
}

Status emit_tensor_scatter(CppKernel& k) {
  AOTC_ASSIGN_OR_RETURN(TensorScatterParams p, resolve_tensor_scatter(k.node));
  CodeWriter& w = k.w;
  w.line("// TensorScatter: {} update(s) of {} step(s) into caches of {} ({}).", p.prefix,
         p.update_len, p.cache_len, p.circular ? "circular" : "linear");
  const int64_t total = p.prefix * p.cache_len * p.suffix;
  if (total == 0) return Status::ok();
  w.line("std::memcpy({}, {}, {} * sizeof({}[0]));", k.out[0], k.in[0], total, k.out[0]);
  if (p.update_len * p.suffix == 0) return Status::ok();
  w.line("constexpr int64_t kPrefix = {}, kPerBatch = {}, kCache = {}, kUpdate = {}, kSuffix = {};",
         p.prefix, p.prefix / std::max<int64_t>(p.batch, 1), p.cache_len, p.update_len, p.suffix);
  w.open("for (int64_t q = 0; q < kPrefix; ++q)");
  w.line("const int64_t start = {};",
         k.in.size() > 2 && !k.in[2].empty() ? fmt::format("static_cast<int64_t>({}[q / kPerBatch])", k.in[2])
                                               : std::string("0"));
  w.open("for (int64_t j = 0; j < kUpdate; ++j)");
  if (p.circular) {
    w.line("const int64_t at = ((start + j) % kCache + kCache) % kCache;");
  } else {
    w.line("const int64_t at = start + j;");
    w.line("if (at < 0 || at >= kCache) continue;  // outside the cache: nothing written");
  }
  w.line("std::memcpy({0} + (q * kCache + at) * kSuffix, {1} + (q * kUpdate + j) * kSuffix, kSuffix * sizeof({0}[0]));",
         k.out[0], k.in[1]);
  w.close();
  w.close();
  return Status::ok();
}

}  // namespace

void register_placement_cpp_kernels(CppKernelRegistry& r) {
  r.add("Col2Im", emit_col2im);
  r.add("MaxUnpool", emit_max_unpool, KernelDTypes::kStorageOnlyToo);
  r.add("ReverseSequence", emit_reverse_sequence, KernelDTypes::kStorageOnlyToo);
  r.add("TensorScatter", emit_tensor_scatter, KernelDTypes::kStorageOnlyToo);
}

}  // namespace aotc::codegen
