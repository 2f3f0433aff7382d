#include "codegen/cpp/kernel_params.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <memory>

#include "codegen/cpp/simd_gemm.h"
#include "graph/ops/fused.h"

#include "targets/tuning.h"

namespace aotc::codegen {
namespace {

const char* form_name(KernelParams::ConvForm f) {
  switch (f) {
    case KernelParams::ConvForm::kIm2col: return "im2col";
    case KernelParams::ConvForm::kShifted: return "shifted";
    case KernelParams::ConvForm::kPixelRows: return "pixel-rows";
    case KernelParams::ConvForm::kCostModel: break;
  }
  return "";
}

bool parse_int(std::string_view text, int64_t* out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

}  // namespace

std::string KernelParams::text() const {
  std::string out;
  auto add = [&](const std::string& pair) { out += (out.empty() ? "" : " ") + pair; };
  if (form != ConvForm::kCostModel) add(fmt::format("form={}", form_name(form)));
  if (mr > 0) add(fmt::format("mr={}", mr));
  if (kc == kWholeK) add("kc=whole");
  if (kc > 0) add(fmt::format("kc={}", kc));
  if (group > 0) add(fmt::format("group={}", group));
  if (split != Split::kCostModel) add(split == Split::kPanels ? "split=panels" : "split=rows");
  if (lanes > 0) add(fmt::format("lanes={}", lanes));
  return out;
}

Expected<KernelParams> KernelParams::parse(std::string_view text) {
  KernelParams p;
  size_t at = 0;
  while (at < text.size()) {
    if (text[at] == ' ') {
      ++at;
      continue;
    }
    size_t end = text.find(' ', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view pair = text.substr(at, end - at);
    at = end;
    const size_t eq = pair.find('=');
    auto bad = [&](const char* why) {
      return invalid_model("kernel parameters '{}': '{}' {}", text, pair, why);
    };
    if (eq == std::string_view::npos) return bad("is not name=value");
    const std::string_view name = pair.substr(0, eq), value = pair.substr(eq + 1);
    int64_t n = 0;
    if (name == "form") {
      if (value == "im2col") p.form = ConvForm::kIm2col;
      else if (value == "shifted") p.form = ConvForm::kShifted;
      else if (value == "pixel-rows") p.form = ConvForm::kPixelRows;
      else return bad("is not a conv form (im2col, shifted, pixel-rows)");
    } else if (name == "mr") {
      if (!parse_int(value, &n) || n < 1 || n > 64) return bad("is not a row count");
      p.mr = static_cast<int>(n);
    } else if (name == "kc") {
      if (value == "whole") p.kc = kWholeK;
      else if (parse_int(value, &n) && n >= 8) p.kc = n;
      else return bad("is neither 'whole' nor a block of 8 rows or more");
    } else if (name == "group") {
      if (!parse_int(value, &n) || n < 1) return bad("is not a panel count");
      p.group = n;
    } else if (name == "split") {
      if (value == "panels") p.split = Split::kPanels;
      else if (value == "rows") p.split = Split::kRows;
      else return bad("is neither 'panels' nor 'rows'");
    } else if (name == "lanes") {
      if (!parse_int(value, &n) || (n != 8 && n != 16)) return bad("is neither 8 nor 16");
      p.lanes = static_cast<int>(n);
    } else {
      return bad("names no parameter (form, mr, kc, group, split, lanes)");
    }
  }
  return p;
}

int max_tile_rows(const TargetFacts& facts) {
  // Accumulators MR x 2, two B vectors and a broadcast (aotc_simd::kMaxTileRows).
  return facts.vector_registers >= 32 ? 14 : 6;
}

Status KernelParams::check(const TargetFacts& facts) const {
  if (facts.simd.empty()) return invalid_model("target {} has no SIMD kernels to take parameters", facts.name);
  if (mr > max_tile_rows(facts))
    return invalid_model("mr={}: more rows than the {} the vector registers of {} hold", mr, max_tile_rows(facts),
                         facts.name);
  if (lanes == 16 && facts.vector_bits < 512)
    return invalid_model("lanes=16: {} has {}-bit vectors", facts.name, facts.vector_bits);
  return Status::ok();
}

namespace {

std::map<std::string, KernelAlternativesFn>& alternatives_by_op() {
  static std::map<std::string, KernelAlternativesFn> table;
  return table;
}

/// The kernel's code with `params` forced on it, without the comment naming them: what two
/// candidates must differ in to be worth timing both.
Expected<std::string> code_with(const Node& kernel_node, const KernelContext& ctx, const KernelParams& params) {
  TargetFacts facts = *ctx.facts;
  auto forced = std::make_shared<KernelTuning>();
  TuningRecord r;
  r.kernel = kernel_key(kernel_node);
  r.threads = ctx.threads;
  r.params = params.text();
  forced->records.emplace(std::make_pair(r.kernel, r.threads), r);
  facts.tuning = std::move(forced);
  AOTC_ASSIGN_OR_RETURN(std::string text, cpp_kernel_text(kernel_node, KernelContext{&facts, ctx.threads}));
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + at, end - at);
    if (line.find("// Tuned parameters:") == std::string_view::npos) out.append(line).push_back('\n');
    at = end + 1;
  }
  return out;
}

}  // namespace

void register_kernel_alternatives(const std::string& op, KernelAlternativesFn fn) {
  alternatives_by_op()[op] = std::move(fn);
}

const Value* kernel_operand(const Node& kernel_node, const Node& anchor, int i) {
  if (&kernel_node == &anchor) return kernel_node.input(i);
  Expected<FusedBody> body = fused_body(kernel_node);
  if (!body.has_value()) return nullptr;
  const auto& params = body->graph->inputs();
  for (size_t p = 0; p < params.size(); ++p)
    if (params[p] == anchor.input(i)) return kernel_node.input(static_cast<int>(p));
  return nullptr;
}

std::vector<int> alternative_rows(const TargetFacts& facts, int64_t m, int64_t n, int64_t k) {
  const SimdTile base = simd_tile(facts);
  const int64_t lanes = facts.vector_bits / 32;
  std::vector<std::pair<double, int>> ranked;
  for (int rows = 4; rows <= max_tile_rows(facts); ++rows) {
    const SimdTile tile{rows, base.nr};
    // A tile's store costs about a cycle per vector, and its loop and pointers some 16 more,
    // which the taller tiles spend less often.
    ranked.push_back({gemm_tile_cycles(m, n, k, tile, lanes, 1.0 * rows * base.nr / lanes + 16), rows});
  }
  std::stable_sort(ranked.begin(), ranked.end());
  std::vector<int> out;
  for (const auto& [cycles, rows] : ranked) out.push_back(rows);
  return out;
}

KernelCandidates kernel_candidates(const Node& kernel_node, const KernelContext& ctx, int max_candidates) {
  KernelCandidates out;
  if (!ctx.facts || ctx.facts->simd.empty()) return out;
  const Node* anchor = &kernel_node;
  if (kernel_node.op() == kFusedOp) {
    Expected<FusedBody> body = fused_body(kernel_node);
    if (!body.has_value() || !body->anchor) return out;
    anchor = body->anchor;
  }
  CppKernelRegistry::instance();  // the kernel families register their alternatives with it
  auto it = alternatives_by_op().find(anchor->op());
  if (it == alternatives_by_op().end()) return out;
  const KernelAlternatives alternatives = it->second(*anchor, kernel_node, ctx);
  Expected<std::string> base = code_with(kernel_node, ctx, KernelParams{});
  if (!base.has_value() || alternatives.params.empty()) return out;
  out.multiply_adds = alternatives.multiply_adds;
  out.params.push_back(KernelParams{});
  std::vector<std::string> seen = {*base};
  for (const KernelParams& p : alternatives.params) {
    if (static_cast<int>(out.params.size()) >= max_candidates) break;
    if (!p.check(*ctx.facts).is_ok()) continue;
    Expected<std::string> code = code_with(kernel_node, ctx, p);
    if (!code.has_value() || std::find(seen.begin(), seen.end(), *code) != seen.end()) continue;
    seen.push_back(*code);
    out.params.push_back(p);
  }
  if (out.params.size() == 1) out.params.clear();  // nothing to choose between
  return out;
}

KernelParams kernel_params(const Node& kernel_node, const KernelContext& ctx) {
  if (!ctx.facts || !ctx.facts->tuning) return {};
  const TuningRecord* r = ctx.facts->tuning->find(kernel_key(kernel_node), ctx.threads);
  if (!r) return {};
  // Checked when the records were given to the target (compile_model).
  Expected<KernelParams> p = KernelParams::parse(r->params);
  return p.has_value() ? *p : KernelParams{};
}

}  // namespace aotc::codegen
