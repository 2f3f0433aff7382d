#pragma once
/// The base of the scalar-C spellings tile dialects give for their scalar element loops
/// (TileDialect::scalar_c): the element expressions of codegen/device/device_expressions.h need
/// types, literals, casts and loads; the work-item, buffer-parameter and local-memory hooks of
/// GPU kernels have no meaning on an NPU's scalar unit and are answered empty here.
#include <set>
#include <string>
#include <vector>

#include "codegen/device/kernel_dialect.h"

namespace aotc::codegen::tile {

class ScalarCDialect : public KernelDialect {
 public:
  std::string source_extension() const override { return ""; }
  std::string kernel_prefix(int64_t) const override { return ""; }
  std::vector<std::string> buffer_params(const std::string&, DType, bool, bool) const override {
    return {};
  }
  std::vector<std::string> buffer_prologue(const std::string&, DType, bool, bool) const override {
    return {};
  }
  std::string prelude(const std::set<DType>&) const override { return ""; }
  std::string global_id(int) const override { return "0"; }
  std::string local_id(int) const override { return "0"; }
  std::string group_id(int) const override { return "0"; }
  std::string barrier() const override { return ""; }
  std::string local_array(const std::string&, const std::string&, int64_t,
                          int64_t) const override {
    return "";
  }
};

}  // namespace aotc::codegen::tile
