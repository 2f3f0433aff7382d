// Device kernels of the matmul family (graph/ops/matmul.cpp): MatMul as the tiled GEMM of
// gemm_device.h, one product per entry of the broadcast batch. Each operand's matrix for a batch
// entry is found by broadcasting the entry's index to the operand's own batch dims; a fused
// epilogue (bias, activation, residual) is applied at the store.
#include "codegen/device/gemm_device.h"
#include "graph/ops/matmul_shape.h"
#include "graph/ops/op_helpers.h"

namespace aotc::codegen {
namespace {

/// "batch_offset * matrix + rest", leaving out what is zero.
std::string matrix_at(const std::string& batch_offset, int64_t matrix, const std::string& rest) {
  if (batch_offset == "0") return rest;
  return fmt::format("({}) * {} + {}", batch_offset, matrix, rest);
}

Status emit_matmul(DeviceKernelContext& k) {
  const Node& node = k.node;
  AOTC_ASSIGN_OR_RETURN(MatMulShape ms, matmul_shape(node));
  const DType t = node.input(0)->dtype();
  if (t == DType::kBool) return unsupported("device MatMul kernels do not multiply bool");
  const std::vector<int64_t> batch = static_dims(ms.batch);
  const std::vector<int64_t> a_batch = static_dims(ms.a_batch), b_batch = static_dims(ms.b_batch);
  const int64_t m = ms.m.value, kk = ms.k.value, n = ms.n.value;
  const bool one = product(batch) == 1;
  const std::string a_off = one ? "0" : broadcast_offset("batch", batch, a_batch);
  const std::string b_off = one ? "0" : broadcast_offset("batch", batch, b_batch);
  const KernelDialect& d = k.d;

  GemmSpec s;
  s.what = "gemm";
  s.batches = product(batch);
  s.m = m;
  s.n = n;
  s.k = kk;
  s.dtype = t;
  s.args = {k.in(0, "a"), k.in(1, "b"), k.epilogue ? k.epilogue->out() : k.out(0, "y")};
  s.comments = {fmt::format(
      "MatMul: A {} x B {} -> {}", node.input(0)->type().to_string(),
      node.input(1)->type().to_string(),
      k.epilogue ? fmt::format("{}, with a fused epilogue", dtype_name(k.epilogue->out_dtype()))
                 : node.output(0)->type().to_string())};
  s.a_element = [&](const std::string&, const std::string& row, const std::string& col) {
    return d.load(t, "a", matrix_at(a_off, m * kk, fmt::format("{} * {} + {}", row, kk, col)));
  };
  s.b_element = [&](const std::string&, const std::string& row, const std::string& col) {
    return d.load(t, "b", matrix_at(b_off, kk * n, fmt::format("{} * {} + {}", row, n, col)));
  };
  s.out_index = [&](const std::string& b, const std::string& row, const std::string& col) {
    std::string rc = fmt::format("{} * {} + {}", row, n, col);
    return s.batches == 1 ? rc : fmt::format("{} * {} + {}", b, m * n, rc);
  };
  return emit_gemm_kernel(k, s);
}

}  // namespace

void register_matmul_device_kernels(DeviceKernelRegistry& r) {
  r.add("MatMul", emit_matmul, {.accepts_epilogue = true});
}

}  // namespace aotc::codegen
