#include "codegen/device/gemm_kernel_writer.h"

#include "codegen/device/device_epilogue.h"

namespace aotc::codegen {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::string join_and(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : " && ") + p;
  return out;
}

}  // namespace

GemmKernelWriter::GemmKernelWriter(DeviceKernelContext& k, const GemmSpec& s, Block b,
                                   int64_t local_bytes, const std::string& summary)
    : k_(k), d_(k.d), s_(s), b_(b) {
  const int64_t tiles_m = ceil_div(s.m, b.tile_m), tiles_n = ceil_div(s.n, b.tile_n);
  const int64_t groups = tiles_m * tiles_n * s.batches;
  std::vector<KernelArg> args = s.args;
  if (k.epilogue)
    for (const KernelArg& a : k.epilogue->args()) args.push_back(a);
  w_ = &k.add_kernel(s.what, args, launch_groups(groups, b.items), local_bytes);
  if (k.epilogue)
    for (const auto& [name, text] : k.epilogue->helpers())
      k.kernels().back()->helpers.emplace(name, text);
  CodeWriter& w = *w_;
  const std::string& idx = k.index();
  for (const std::string& c : s.comments) w.line("// {}", c);
  w.line("// C[{}][{}] = A * B over K = {}{}: {}", s.m, s.n, s.k,
         s.batches > 1 ? fmt::format(", {} products", s.batches) : "", summary);
  w.line("const int lid = {};", d_.local_id(0));
  if (groups > 1) w.line("const {} group = {};", idx, d_.group_id(0));
  w.line("const {} n0 = {};", idx,
         tiles_n == 1 ? "0" : fmt::format("group % {} * {}", tiles_n, b.tile_n));
  w.line("const {} m0 = {};", idx,
         tiles_m == 1 ? "0" : fmt::format("group / {} % {} * {}", tiles_n, tiles_m, b.tile_m));
  // One product: its index is the constant 0 wherever the operands' expressions use it.
  batch_ = s.batches == 1 ? "0" : "batch";
  if (s.batches > 1) w.line("const {} batch = group / {};", idx, tiles_n * tiles_m);
  // Each item copies the same column of B at every step when the items cover whole rows of the
  // B slice: whatever that column needs (a convolution's pixel position) is worked out once.
  fixed_column_ = b.items % b.tile_n == 0;
}

void GemmKernelWriter::b_column(CodeWriter& out) const {
  const std::string& idx = k_.index();
  out.line("const {} bn = {};", idx,
           fixed_column_ ? fmt::format("lid % {}", b_.tile_n) : fmt::format("e % {}", b_.tile_n));
  out.line("const {} cn = n0 + bn;", idx);
  if (s_.b_column)
    for (const std::string& line : s_.b_column(batch_, "cn")) out.raw_line(line);
}

void GemmKernelWriter::prepare() {
  if (k_.epilogue)
    for (const std::string& line : k_.epilogue->prologue()) w_->raw_line(line);
  if (fixed_column_) b_column(*w_);
}

void GemmKernelWriter::open_k_loop() {
  w_->open("for ({0} k0 = 0; k0 < {1}; k0 += {2})", k_.index(), s_.k, b_.tile_k);
}

void GemmKernelWriter::stage_a(const std::string& array, const std::string& dest,
                               const std::function<std::string(const std::string&)>& convert) {
  // Read along rows: consecutive items, consecutive k.
  CodeWriter& w = *w_;
  const int64_t count = b_.tile_m * b_.tile_k;
  w.open("for (int r = 0; r < {}; ++r)", ceil_div(count, b_.items));
  w.line("const int e = lid + r * {};", b_.items);
  if (count % b_.items != 0) w.line("if (e >= {}) break;", count);
  w.line("const {} cm = m0 + e / {}, ck = k0 + e % {};", k_.index(), b_.tile_k, b_.tile_k);
  std::vector<std::string> in;
  if (s_.m % b_.tile_m != 0) in.push_back(fmt::format("cm < {}", s_.m));
  if (s_.k % b_.tile_k != 0) in.push_back(fmt::format("ck < {}", s_.k));
  std::string v = s_.a_element(batch_, "cm", "ck");
  if (!in.empty()) v = fmt::format("({}) ? {} : {}", join_and(in), v, d_.literal(s_.dtype, 0));
  w.line("{}[{}] = {};", array, dest, convert(v));
  w.close();
}

void GemmKernelWriter::stage_b(const std::string& array, const std::string& dest,
                               const std::function<std::string(const std::string&)>& convert) {
  // Read along rows: consecutive items, consecutive n.
  CodeWriter& w = *w_;
  const int64_t count = b_.tile_k * b_.tile_n;
  w.open("for (int r = 0; r < {}; ++r)", ceil_div(count, b_.items));
  w.line("const int e = lid + r * {};", b_.items);
  if (count % b_.items != 0) w.line("if (e >= {}) break;", count);
  if (!fixed_column_) b_column(w);
  w.line("const {} ck = k0 + e / {};", k_.index(), b_.tile_n);
  if (s_.b_row)
    for (const std::string& line : s_.b_row(batch_, "ck")) w.raw_line(line);
  std::vector<std::string> in;
  if (s_.n % b_.tile_n != 0) in.push_back(fmt::format("cn < {}", s_.n));
  if (s_.k % b_.tile_k != 0) in.push_back(fmt::format("ck < {}", s_.k));
  std::string v = s_.b_element(batch_, "ck", "cn");
  if (!in.empty()) v = fmt::format("({}) ? {} : {}", join_and(in), v, d_.literal(s_.dtype, 0));
  w.line("{}[{}] = {};", array, dest, convert(v));
  w.close();
}

Status GemmKernelWriter::store(const std::string& value, const std::string& acc) {
  CodeWriter& w = *w_;
  const std::string ct = d_.compute_type(s_.dtype);
  w.line("const {} o = {};", k_.index(), s_.out_index(batch_, "om", "on"));
  std::string v = acc == ct ? value : d_.cast(ct, value);
  if (s_.addend) v = fmt::format("{} + {}", v, s_.addend(batch_, "om", "on"));
  if (k_.epilogue) return k_.epilogue->emit_store(w, v, "o");
  w.raw_line(d_.store(s_.dtype, "y", "o", v));
  return Status::ok();
}

}  // namespace aotc::codegen
