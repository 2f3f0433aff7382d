#pragma once
/// The element expressions of the portable C++ emitter, by op, in one table that the files of
/// the elementwise kernel family fill (elementwise_kernels.cpp: arithmetic and unary math;
/// elementwise_compare_kernels.cpp: bool results; elementwise_activation_kernels.cpp:
/// activations; elementwise_bitwise_kernels.cpp: integer bit operations).
/// `elementwise_expression` (elementwise_emitter.h) looks ops up here, and every op
/// in the table gets the broadcasting loop kernel.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "codegen/cpp/cpp_kernel.h"
#include "codegen/cpp/elementwise_emitter.h"

namespace aotc::codegen {

/// Computes the element expression of `node` from its operand names, as elementwise_expression
/// documents.
using ExpressionFn = std::function<Expected<std::string>(ExprBuilder&, const Node&,
                                                         const std::vector<std::string>&)>;
using ExpressionTable = std::map<std::string, ExpressionFn>;

void add_arithmetic_expressions(ExpressionTable& table);  // elementwise_kernels.cpp
void add_compare_expressions(ExpressionTable& table);     // elementwise_compare_kernels.cpp
void add_activation_expressions(ExpressionTable& table);  // elementwise_activation_kernels.cpp
void add_bitwise_expressions(ExpressionTable& table);     // elementwise_bitwise_kernels.cpp

/// The table with every op's expression.
const ExpressionTable& expression_table();

// Helpers shared by the expression files.

/// 0 / 1 as literals of compute_type(t).
std::string zero(DType t);
std::string one(DType t);
/// The exp function of compute type `ct`: aotc_math.h's aotc_expf for float (a polynomial the
/// compiler vectorizes inside kernel loops on SIMD targets; libm's expf elsewhere), std::exp
/// otherwise. A std::exp call keeps every loop around it scalar.
std::string exp_function(const std::string& ct);
/// A floating literal of compute_type(t) for v, as short as reads back exactly ("0.2f", "1.5").
std::string float_constant(DType t, double v);
/// The unsigned type integer arithmetic on `t` wraps in: 8- and 16-bit operands promote to int
/// anyway, so uint32_t serves them; 64-bit types need uint64_t.
std::string wrap_type(DType t);
/// a * b for integers of dtype t, wrapping modulo 2^bits without signed overflow.
std::string wrapping_product(DType t, const std::string& a, const std::string& b);

}  // namespace aotc::codegen
