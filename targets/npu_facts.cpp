#include "targets/npu_facts.h"

#include <algorithm>

namespace aotc {
namespace {

bool contains(const std::vector<DType>& v, DType t) {
  return std::find(v.begin(), v.end(), t) != v.end();
}

}  // namespace

bool NpuFacts::vector_computes(DType t) const { return contains(vector_arith_dtypes, t); }
bool NpuFacts::vector_math(DType t) const { return contains(vector_math_dtypes, t); }
bool NpuFacts::vector_reduces(DType t) const { return contains(vector_reduce_dtypes, t); }

bool NpuFacts::vector_casts_between(DType from, DType to) const {
  return std::find(vector_casts.begin(), vector_casts.end(), std::make_pair(from, to)) !=
         vector_casts.end();
}

std::optional<MatrixProduct> NpuFacts::matrix_product(DType operand) const {
  for (const MatrixProduct& p : matrix_products)
    if (p.operand == operand) return p;
  return std::nullopt;
}

}  // namespace aotc
