// Golden tests of the passes (tests/passes/<pass>.aotc) with a numeric-equivalence check of every
// case, plus tests of the pipeline's debugging options.
//
// A golden file holds cases separated by lines `// -----`. Each case starts with a one-line
// comment saying what it tests, then an input graph, then directives:
//   // CHECK: text         the next printed line containing `text` (FileCheck's CHECK)
//   // CHECK-NEXT: text    the line right after the previous match contains `text`
//   // CHECK-NOT: text     no line between the previous and the next match contains `text`
//   // EXPECT-UNCHANGED    the pass must report no change and print the input back unchanged
// The pass is named by the file (fold_constants.aotc runs --pass=fold-constants). Every case is
// also run on the reference implementations before and after the pass, on random inputs, and
// the outputs must agree.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>

#include "graph/interpreter.h"
#include "graph/ir_text.h"
#include "graph/ops/op_registry.h"
#include "passes/passes.h"
#include "passes/pipeline.h"
#include "targets/target.h"

namespace aotc {
namespace {

namespace fs = std::filesystem;

fs::path golden_dir() { return fs::path(AOTC_SOURCE_DIR) / "tests" / "passes"; }

struct Check {
  enum Kind { kCheck, kNext, kNot } kind;
  std::string pattern;
  int line;
};

struct GoldenCase {
  int first_line = 0;    ///< 1-based line of the case's first line in the file.
  std::string text;      ///< The case, preceded by blank lines so parser errors keep file lines.
  std::string summary;   ///< The leading one-line comment.
  std::vector<Check> checks;
  bool expect_unchanged = false;
  /// `// EXPECT-ERROR: text` lines: the pass fails with a message containing every text.
  std::vector<std::string> expect_errors;
};

std::string trim(std::string s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::vector<GoldenCase> read_cases(const fs::path& file) {
  std::ifstream in(file);
  std::vector<GoldenCase> cases(1);
  cases[0].first_line = 1;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    std::string t = trim(line);
    if (t.rfind("// -----", 0) == 0) {
      cases.emplace_back();
      cases.back().first_line = line_no + 1;
      cases.back().text = std::string(line_no, '\n');
      continue;
    }
    GoldenCase& c = cases.back();
    c.text += line + "\n";
    auto directive = [&](const char* prefix, Check::Kind kind) {
      if (t.rfind(prefix, 0) != 0) return false;
      c.checks.push_back({kind, trim(t.substr(strlen(prefix))), line_no});
      return true;
    };
    if (directive("// CHECK:", Check::kCheck) || directive("// CHECK-NEXT:", Check::kNext) ||
        directive("// CHECK-NOT:", Check::kNot))
      continue;
    if (t.rfind("// EXPECT-ERROR:", 0) == 0) {
      c.expect_errors.push_back(trim(t.substr(strlen("// EXPECT-ERROR:"))));
    } else if (t == "// EXPECT-UNCHANGED") {
      c.expect_unchanged = true;
    } else if (c.summary.empty() && !t.empty()) {
      c.summary = t.rfind("//", 0) == 0 ? trim(t.substr(2)) : "";
      if (c.summary.empty()) c.summary = "<missing>";
    }
  }
  std::erase_if(cases, [](const GoldenCase& c) { return trim(c.text).empty(); });
  return cases;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

/// Matches the checks against `output` in order; returns "" or what went wrong.
std::string run_checks(const std::vector<Check>& checks, const std::string& output, const std::string& file) {
  std::vector<std::string> lines = lines_of(output);
  size_t cursor = 0;
  std::vector<const Check*> pending_not;
  auto violated_not = [&](size_t end) -> std::string {
    for (const Check* n : pending_not)
      for (size_t i = cursor; i < end; ++i)
        if (lines[i].find(n->pattern) != std::string::npos)
          return fmt::format("{}:{}: CHECK-NOT '{}' found in line {}: {}", file, n->line, n->pattern, i + 1,
                             lines[i]);
    return "";
  };
  for (const Check& c : checks) {
    if (c.kind == Check::kNot) {
      pending_not.push_back(&c);
      continue;
    }
    size_t found = cursor;
    if (c.kind == Check::kNext) {
      if (cursor == 0 || cursor >= lines.size() || lines[cursor].find(c.pattern) == std::string::npos)
        return fmt::format("{}:{}: CHECK-NEXT '{}' does not match line {}", file, c.line, c.pattern, cursor + 1);
    } else {
      while (found < lines.size() && lines[found].find(c.pattern) == std::string::npos) ++found;
      if (found == lines.size())
        return fmt::format("{}:{}: CHECK '{}' not found after line {}", file, c.line, c.pattern, cursor);
    }
    if (std::string err = violated_not(found); !err.empty()) return err;
    pending_not.clear();
    cursor = found + 1;
  }
  return violated_not(lines.size());
}

/// Relative tolerance for comparing a graph with its rewritten form: rewrites such as folding
/// a BatchNorm into weights legitimately change the rounding of the computation.
double tolerance(DType t) {
  switch (t) {
    case DType::kFloat64: return 1e-12;
    case DType::kFloat32: return 1e-5;
    case DType::kFloat16: return 1e-2;
    case DType::kBFloat16: return 5e-2;
    default: return 0;
  }
}

/// Empty when `before` and `after` compute the same outputs on random inputs (through the
/// reference interpreter); otherwise what went wrong.
std::string compare_numerically(const Graph& before, const Graph& after, uint32_t seed) {
  std::mt19937 rng(seed);
  // Symbolic dims get one extent each, the same wherever the symbol appears.
  std::map<std::string, int64_t> extents;
  std::vector<TensorData> inputs;
  for (const Value* in : before.inputs()) {
    std::vector<int64_t> dims;
    for (const Dim& d : in->shape())
      dims.push_back(d.is_static() ? d.value : extents.emplace(d.symbol, 3 + extents.size()).first->second);
    TensorData data(in->dtype(), dims);
    for (int64_t i = 0; i < data.num_elements(); ++i) {
      if (is_float(in->dtype())) data.set_double(i, std::uniform_real_distribution<double>(-2, 2)(rng));
      else data.set_int64(i, std::uniform_int_distribution<int>(0, in->dtype() == DType::kBool ? 1 : 2)(rng));
    }
    inputs.push_back(std::move(data));
  }
  auto want = interpret(before, inputs);
  if (!want) return "the input graph does not run: " + want.status().message();
  auto got = interpret(after, inputs);
  if (!got) return "the rewritten graph does not run: " + got.status().message();
  for (size_t k = 0; k < want->size(); ++k) {
    const TensorData &w = (*want)[k], &o = (*got)[k];
    if (w.type() != o.type())
      return fmt::format("output {} is {} but was {}", k, o.type().to_string(), w.type().to_string());
    double rtol = tolerance(w.dtype());
    for (int64_t i = 0; i < w.num_elements(); ++i) {
      double a = w.get_double(i), b = o.get_double(i);
      if (std::isnan(a) && std::isnan(b)) continue;
      if (!(std::fabs(a - b) <= rtol * std::max(1.0, std::fabs(a))))
        return fmt::format("output {} element {}: {} before the pass, {} after", k, i, a, b);
    }
  }
  return "";
}

// ---- Bucketed graphs (mask-padding) ----
//
// A graph with a length input `%len: i64[] length(seq=MIN..MAX)` is compiled at bucket MAX and
// runs for every actual size n in MIN..MAX, its inputs padded at the positions their `pad(...)`
// facts name. Its outputs are only defined at their valid positions, so the check differs:
//   - for n in {MIN, the middle, MAX}, the inputs get random valid data and NaN (floats) or
//     random values (integers) in their padded positions, unless a fact names the fill; the
//     rewritten graph's outputs at their valid positions must equal those of the graph run at
//     the exact size n. When the case is written with symbolic dims (`?seq`), the text
//     specialised to n is that exact graph; otherwise the input graph at n = MAX stands in (it
//     then only checks that the masks change nothing when nothing is padded).

/// `text` with every dim `?symbol` replaced by `extent`.
std::string bind_symbol(std::string text, const std::string& symbol, int64_t extent) {
  const std::string token = "?" + symbol;
  for (size_t at = text.find(token); at != std::string::npos; at = text.find(token, at)) {
    const size_t end = at + token.size();
    const bool whole = end < text.size() && (text[end] == 'x' || text[end] == ']');
    if (!whole) {
      at = end;
      continue;
    }
    text.replace(at, token.size(), std::to_string(extent));
  }
  return text;
}

struct LengthDecl {
  std::string symbol;
  int64_t min = 1, max = 1;
};

/// The first `length(SYMBOL=MIN..MAX)` declaration of a case, if any.
std::optional<LengthDecl> length_decl(const std::string& text) {
  const size_t at = text.find(" length(");
  if (at == std::string::npos) return std::nullopt;
  LengthDecl d;
  const size_t eq = text.find('=', at), dots = text.find("..", at), close = text.find(')', at);
  d.symbol = text.substr(at + 8, eq - at - 8);
  d.min = std::stoll(text.substr(eq + 1, dots - eq - 1));
  d.max = std::stoll(text.substr(dots + 2, close - dots - 2));
  return d;
}

/// The valid extent of each axis of `type` at actual size n.
std::vector<int64_t> valid_extents(const TensorType& type, int64_t n) {
  std::vector<int64_t> extents = static_dims(type.shape);
  for (const PaddedAxis& p : type.padding) extents[p.axis] = std::max<int64_t>(0, p.offset + n);
  return extents;
}

/// Element `index` (row-major in `box`) of `data`, whose own dims may be larger.
int64_t flat_index_in(const std::vector<int64_t>& dims, const std::vector<int64_t>& box, int64_t index) {
  int64_t flat = 0, stride = 1;
  for (int a = static_cast<int>(box.size()) - 1; a >= 0; --a) {
    flat += (index % box[a]) * stride;
    index /= box[a];
    stride *= dims[a];
  }
  return flat;
}

std::string compare_bucketed(const std::string& case_text, const Graph& before, const Graph& after,
                             uint32_t seed) {
  const LengthDecl decl = *length_decl(case_text);
  const bool symbolic = case_text.find("?" + decl.symbol) != std::string::npos;
  std::mt19937 rng(seed);
  for (int64_t n : {decl.min, (decl.min + decl.max) / 2, decl.max}) {
    std::unique_ptr<Graph> exact_owner;
    const Graph* exact = &before;
    if (symbolic) {
      auto parsed = parse_graph(bind_symbol(case_text, decl.symbol, n));
      if (!parsed) return fmt::format("the case at {} = {} does not parse: {}", decl.symbol, n, parsed.status().message());
      exact_owner = std::move(*parsed);
      exact = exact_owner.get();
    } else if (n != decl.max) {
      continue;
    }
    std::vector<TensorData> exact_inputs, bucket_inputs;
    for (size_t k = 0; k < after.inputs().size(); ++k) {
      const Value* in = after.inputs()[k];
      if (after.is_length_input(in)) {
        TensorData len(DType::kInt64, {});
        len.set_int64(0, n);
        exact_inputs.push_back(len);
        bucket_inputs.push_back(std::move(len));
        continue;
      }
      const std::vector<int64_t> dims = static_dims(in->shape());
      const std::vector<int64_t> valid = valid_extents(in->type(), n);
      TensorData full(in->dtype(), dims), part(in->dtype(), valid);
      for (int64_t i = 0; i < full.num_elements(); ++i) {
        // Padded positions: NaN for floats (any leak shows), random for integers and booleans.
        if (is_float(in->dtype())) full.set_double(i, std::nan(""));
        else full.set_int64(i, std::uniform_int_distribution<int>(0, in->dtype() == DType::kBool ? 1 : 2)(rng));
      }
      // A fact that names a fill promises that value in the padded positions.
      std::vector<int64_t> index(dims.size(), 0);
      for (int64_t i = 0; i < full.num_elements(); ++i) {
        int64_t rest = i;
        for (int a = static_cast<int>(dims.size()) - 1; a >= 0; --a) {
          index[a] = rest % dims[a];
          rest /= dims[a];
        }
        for (const PaddedAxis& p : in->type().padding)
          if (p.fill && index[p.axis] >= valid[p.axis]) full.set_double(i, *p.fill);
      }
      for (int64_t i = 0; i < part.num_elements(); ++i) {
        const int64_t at = flat_index_in(dims, valid, i);
        if (is_float(in->dtype())) part.set_double(i, std::uniform_real_distribution<double>(-2, 2)(rng));
        else part.set_int64(i, std::uniform_int_distribution<int>(0, in->dtype() == DType::kBool ? 1 : 2)(rng));
        if (is_float(in->dtype())) full.set_double(at, part.get_double(i));
        else full.set_int64(at, part.get_int64(i));
      }
      exact_inputs.push_back(symbolic ? std::move(part) : full);
      bucket_inputs.push_back(std::move(full));
    }
    // The exact graph has no length inputs of its own unless the text declares them.
    std::vector<TensorData> exact_args;
    for (size_t k = 0; k < exact->inputs().size(); ++k) exact_args.push_back(exact_inputs[k]);
    auto want = interpret(*exact, exact_args);
    if (!want) return fmt::format("the graph at {} = {} does not run: {}", decl.symbol, n, want.status().message());
    auto got = interpret(after, bucket_inputs);
    if (!got) return "the rewritten graph does not run: " + got.status().message();
    for (size_t k = 0; k < want->size(); ++k) {
      const TensorData &w = (*want)[k], &o = (*got)[k];
      const std::vector<int64_t> valid = valid_extents(after.outputs()[k]->type(), n);
      if (w.dims() != valid)
        return fmt::format("output {} has valid extents {} at {} = {}, the exact graph {}", k,
                           fmt::join(valid, "x"), decl.symbol, n, fmt::join(w.dims(), "x"));
      const double rtol = tolerance(w.dtype());
      for (int64_t i = 0; i < w.num_elements(); ++i) {
        const double a = w.get_double(i), b = o.get_double(flat_index_in(o.dims(), valid, i));
        if (std::isnan(a) && std::isnan(b)) continue;
        if (!(std::fabs(a - b) <= rtol * std::max(1.0, std::fabs(a))))
          return fmt::format("at {} = {}, output {} valid element {}: {} exactly, {} bucketed",
                             decl.symbol, n, k, i, a, b);
      }
    }
  }
  return "";
}

std::string pass_name_of(const fs::path& file) {
  std::string n = file.stem().string();
  std::replace(n.begin(), n.end(), '_', '-');
  return n;
}

std::vector<std::string> golden_files() {
  std::vector<std::string> files;
  if (fs::exists(golden_dir()))
    for (const auto& e : fs::directory_iterator(golden_dir()))
      if (e.path().extension() == ".aotc") files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  return files;
}

/// A target-aware step (legalize-distribution) runs for the target a case names on a line
/// `// TARGET: <name> [tiles=N]`.
Expected<PassResult> run_target_step(Graph& graph, const std::string& pass, const std::string& text) {
  const size_t at = text.find("// TARGET: ");
  if (at == std::string::npos) return invalid_model("a case of target pass '{}' needs a '// TARGET:' line", pass);
  std::istringstream line(text.substr(at + 11, text.find('\n', at) - at - 11));
  std::string name, option;
  line >> name;
  const Target* target = TargetRegistry::instance().find(name);
  if (target == nullptr) return invalid_model("unknown target '{}'", name);
  std::unique_ptr<Target> tiled;
  while (line >> option)
    if (option.rfind("tiles=", 0) == 0) {
      AOTC_ASSIGN_OR_RETURN(tiled, target->with_tiles(std::stoi(option.substr(6))));
      target = tiled.get();
    }
  PipelineOptions options;
  options.target = &target->facts();
  return run_target_pass(graph, pass, options);
}

class PassGolden : public testing::TestWithParam<std::string> {};

TEST_P(PassGolden, Cases) {
  fs::path file = golden_dir() / GetParam();
  std::string pass = pass_name_of(file);
  const std::vector<std::string> all = pipeline_pass_names();
  ASSERT_TRUE(find_pass(pass) != nullptr || std::find(all.begin(), all.end(), pass) != all.end())
      << file << " names no registered pass '" << pass << "'";
  std::vector<GoldenCase> cases = read_cases(file);
  ASSERT_FALSE(cases.empty()) << file;
  PrintOptions print_options;
  print_options.max_constant_elements = 64;
  for (const GoldenCase& c : cases) {
    std::string where = fmt::format("{}:{}", file.filename().string(), c.first_line);
    SCOPED_TRACE(where + ": " + c.summary);
    EXPECT_NE(c.summary, "<missing>") << where << ": a case starts with a one-line '//' comment";
    // A bucketed case written with symbolic dims runs the pass at its bucket size.
    std::string text = c.text;
    if (auto decl = length_decl(text)) text = bind_symbol(text, decl->symbol, decl->max);
    auto input = parse_graph(text);
    ASSERT_TRUE(input.has_value()) << where << ": " << input.status().message();
    auto graph = parse_graph(text);
    ASSERT_TRUE(graph.has_value());
    auto result = find_pass(pass) ? run_named_pass(**graph, pass) : run_target_step(**graph, pass, c.text);
    if (!c.expect_errors.empty()) {
      ASSERT_FALSE(result.has_value()) << pass << " accepted a case that must fail";
      for (const std::string& e : c.expect_errors)
        EXPECT_NE(result.status().message().find(e), std::string::npos)
            << "expected '" << e << "' in the message: " << result.status().message();
      continue;
    }
    ASSERT_TRUE(result.has_value()) << result.status().message();
    Status verified = (*graph)->verify();
    EXPECT_TRUE(verified.is_ok()) << "invalid graph after " << pass << ": " << verified.message();
    std::string printed = print_graph(**graph, print_options);
    if (c.expect_unchanged) {
      EXPECT_FALSE(result->changed) << pass << " reported a change (" << result->stats.to_string() << ")";
      EXPECT_EQ(printed, print_graph(**input, print_options));
    } else {
      EXPECT_TRUE(result->changed) << pass << " reported no change:\n" << printed;
      EXPECT_FALSE(c.checks.empty()) << where << ": a case that changes the graph needs CHECK lines";
    }
    std::string mismatch = run_checks(c.checks, printed, file.filename().string());
    EXPECT_EQ(mismatch, "") << "output was:\n" << printed;
    std::string numeric = length_decl(c.text) ? compare_bucketed(c.text, **input, **graph, 1234)
                                              : compare_numerically(**input, **graph, 1234);
    EXPECT_EQ(numeric, "") << "output was:\n" << printed;
  }
}

INSTANTIATE_TEST_SUITE_P(Files, PassGolden, testing::ValuesIn(golden_files()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string n = fs::path(info.param).stem().string();
                           return n;
                         });

// The team's rule: every pass has a golden file with at least three cases, one of which checks
// that the pass leaves a graph alone.
TEST(PassGoldenCoverage, EveryPassHasThreeCasesIncludingANegativeOne) {
  for (const PassInfo& p : registered_passes()) {
    std::string file_name(p.name);
    std::replace(file_name.begin(), file_name.end(), '-', '_');
    fs::path file = golden_dir() / (file_name + ".aotc");
    if (!fs::exists(file)) {
      ADD_FAILURE() << "pass '" << p.name << "' has no golden test " << file;
      continue;
    }
    std::vector<GoldenCase> cases = read_cases(file);
    EXPECT_GE(cases.size(), 3u) << file;
    EXPECT_TRUE(std::any_of(cases.begin(), cases.end(), [](const GoldenCase& c) { return c.expect_unchanged; }))
        << file << " has no EXPECT-UNCHANGED case";
  }
}

TEST(PassGoldenRunner, ChecksCanFail) {
  const std::string out = "a\nb\nc\n";
  EXPECT_EQ(run_checks({{Check::kCheck, "a", 1}, {Check::kNext, "b", 2}}, out, "f"), "");
  EXPECT_NE(run_checks({{Check::kCheck, "a", 1}, {Check::kNext, "c", 2}}, out, "f"), "");
  EXPECT_NE(run_checks({{Check::kCheck, "c", 1}, {Check::kCheck, "a", 2}}, out, "f"), "");
  EXPECT_NE(run_checks({{Check::kCheck, "a", 1}, {Check::kNot, "b", 2}, {Check::kCheck, "c", 3}}, out, "f"), "");
  EXPECT_NE(run_checks({{Check::kNot, "c", 1}}, out, "f"), "");
  EXPECT_EQ(run_checks({{Check::kCheck, "b", 1}, {Check::kNot, "a", 2}}, out, "f"), "");
}

TEST(PassGoldenRunner, NumericComparisonCanFail) {
  auto relu = parse_graph("graph @g(%x: f32[8]) -> (%y: f32[8]) {\n  %y = Relu(%x) : f32[8]\n  return %y\n}");
  auto neg = parse_graph("graph @g(%x: f32[8]) -> (%y: f32[8]) {\n  %y = Neg(%x) : f32[8]\n  return %y\n}");
  ASSERT_TRUE(relu.has_value() && neg.has_value());
  EXPECT_EQ(compare_numerically(**relu, **relu, 1), "");
  EXPECT_NE(compare_numerically(**relu, **neg, 1), "");
}

// ---- The pipeline ----

const char* kConvBnModel = R"(
graph @m(%x: f32[1x2x4x4]) -> (%y: f32[1x2x4x4], %d: i64[4]) {
  %wshape = const i64[4] dense<[2, 2, 3, 3]>
  %p = const f32[2] dense<[0.5, 2.0]>
  %w = ConstantOfShape(%wshape) {value = f32[1] dense<[0.25]>} : f32[2x2x3x3]
  %c = Conv(%x, %w) {pads = [1, 1, 1, 1]} : f32[1x2x4x4]
  %n = BatchNormalization(%c, %p, %p, %p, %p) : f32[1x2x4x4]
  %y = Relu(%n) : f32[1x2x4x4]
  %s = Shape(%n) : i64[4]
  %d = Mul(%s, %s) : i64[4]
  return %y, %d
})";

TEST(Pipeline, FoldsAndCleansUpAndStaysEquivalent) {
  auto before = parse_graph(kConvBnModel);
  ASSERT_TRUE(before.has_value()) << before.status().message();
  auto g = parse_graph(kConvBnModel);
  ASSERT_TRUE(g.has_value());
  PipelineOptions options;
  options.verify_each = true;
  ASSERT_TRUE(run_pipeline(**g, options).is_ok());
  std::vector<std::string> ops;
  for (const Node* n : (*g)->nodes()) ops.push_back(n->op());
  // The BatchNorm folds into the Conv, whose Relu then rides on its store.
  EXPECT_EQ(ops, (std::vector<std::string>{"Fused"})) << print_graph(**g);
  EXPECT_EQ(compare_numerically(**before, **g, 7), "");
}

TEST(Pipeline, PrintIrAfterNamesPassStepAndStatistics) {
  auto g = parse_graph(kConvBnModel);
  ASSERT_TRUE(g.has_value());
  std::ostringstream out;
  PipelineOptions options;
  options.print_ir_after = {"fold-constants", "remove-dead-code"};
  options.ir_out = &out;
  ASSERT_TRUE(run_pipeline(**g, options).is_ok());
  std::string text = out.str();
  EXPECT_NE(text.find("// ----- IR after fold-constants (step 2 of 11): 1 nodes folded, 144 B of "
                      "constants created -----\n"
                      "graph @m("),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("// ----- IR after remove-dead-code (step 4 of 11): 4 constants removed"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("IR after fold-shapes"), std::string::npos) << text;
}

TEST(Pipeline, UnknownPrintIrAfterNameListsTheValidOnes) {
  auto g = parse_graph(kConvBnModel);
  ASSERT_TRUE(g.has_value());
  PipelineOptions options;
  options.print_ir_after = {"fold-everything"};
  Status s = run_pipeline(**g, options);
  EXPECT_EQ(
      s.message(),
      "unknown pass 'fold-everything' in --print-ir-after; valid names: all, decompose-for-target, lower-precision, "
      "fold-shapes, fold-constants, fold-batchnorm-into-conv, remove-dead-code, fuse-softmax, fuse-layer-norm, "
      "fuse-rms-norm, fuse-gelu, mask-padding, fuse-epilogues, fuse-elementwise, legalize-layout, "
      "legalize-distribution");
}

TEST(Pipeline, UnknownPassNameListsTheValidOnes) {
  auto g = parse_graph(kConvBnModel);
  ASSERT_TRUE(g.has_value());
  Status s = run_pass(**g, "fold");
  EXPECT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("unknown pass 'fold'; valid passes: fold-shapes, fold-constants"), std::string::npos)
      << s.message();
}

TEST(PassStatistics, FormatsCountsAndBytes) {
  PassStatistics stats;
  EXPECT_EQ(stats.to_string(), "no change");
  stats.add("nodes folded", 12);
  stats.add("nodes skipped", 0);
  stats.add_bytes("of constants created", 3250586);
  EXPECT_EQ(stats.to_string(), "12 nodes folded, 3.1 MB of constants created");
  EXPECT_EQ(stats.get("nodes folded"), 12);
}

}  // namespace
}  // namespace aotc
