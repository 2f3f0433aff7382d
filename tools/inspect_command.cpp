// `aotc inspect`: a compact summary of an ONNX model (versions, I/O, op histogram, parameters)
// and the ops aotc cannot compile yet. It reads the ModelProto directly instead of importing, so
// it works on any model, including ones the importer rejects.
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <set>

#include <fmt/ranges.h>
#include <onnx/onnx_pb.h>

#include "frontend/function_inliner.h"
#include "frontend/onnx_importer.h"
#include "frontend/tensor_proto.h"
#include "graph/printable.h"
#include "tools/commands.h"
#include "tools/import_flags.h"

namespace aotc::tools {
namespace {

std::string with_commas(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string human_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", v, units[u]);
}

std::string dtype_label(int onnx_type) {
  auto d = frontend::dtype_from_onnx(onnx_type);
  return d ? std::string(dtype_name(*d)) : frontend::onnx_dtype_name(onnx_type);
}

// "f32[Nx3x224x224]"; "?" for an unnamed unknown dim.
std::string type_label(const onnx::ValueInfoProto& vi) {
  const onnx::TypeProto& t = vi.type();
  if (t.has_sequence_type()) return "sequence";
  if (t.has_map_type()) return "map";
  if (t.has_optional_type()) return "optional";
  if (!t.has_tensor_type()) return "(no type)";
  const auto& tt = t.tensor_type();
  std::string dt = dtype_label(tt.elem_type());
  if (!tt.has_shape()) return dt + "[unknown rank]";
  std::vector<std::string> dims;
  for (const auto& d : tt.shape().dim())
    dims.push_back(d.has_dim_value() ? std::to_string(d.dim_value()) : d.dim_param().empty() ? "?" : d.dim_param());
  return fmt::format("{}[{}]", dt, fmt::join(dims, "x"));
}

// One line of the report: names, op types and strings come from the model and may hold newlines
// or terminal escapes, so the line is printed escaped.
void say(const char* format, ...) __attribute__((format(printf, 1, 2)));
void say(const char* format, ...) {
  va_list args;
  va_start(args, format);
  char* line = nullptr;
  int n = vasprintf(&line, format, args);
  va_end(args);
  if (n < 0) return;
  std::string text(line, static_cast<size_t>(n));
  std::free(line);
  bool newline = !text.empty() && text.back() == '\n';
  if (newline) text.pop_back();
  std::fputs(printable(text).c_str(), stdout);
  if (newline) std::fputc('\n', stdout);
}

std::string domain_label(const std::string& d) { return frontend::is_ai_onnx_domain(d) ? "ai.onnx" : d; }

void print_values(const char* heading, const std::vector<const onnx::ValueInfoProto*>& values) {
  size_t width = 0;
  for (const auto* v : values) width = std::max(width, v->name().size());
  if (values.empty()) say("%-10s (none)\n", heading);
  for (size_t i = 0; i < values.size(); ++i)
    say("%-10s %-*s  %s\n", i == 0 ? heading : "", static_cast<int>(width), values[i]->name().c_str(),
                type_label(*values[i]).c_str());
}

void run_inspect(const std::string& path) {
  auto loaded = frontend::read_onnx_model(path);
  if (!loaded) fail(loaded.status());
  const onnx::ModelProto& m = **loaded;
  const onnx::GraphProto& g = m.graph();

  std::vector<std::string> opsets;
  for (const auto& o : m.opset_import()) opsets.push_back(fmt::format("{} {}", domain_label(o.domain()), o.version()));
  std::string producer = m.producer_name().empty() ? "unknown" : m.producer_name();
  if (!m.producer_version().empty()) producer += " " + m.producer_version();
  say("%-10s %s\n", "model", path.c_str());
  say("%-10s IR %lld, producer %s, opsets %s\n", "versions", static_cast<long long>(m.ir_version()),
              producer.c_str(), fmt::format("{}", fmt::join(opsets, ", ")).c_str());

  std::set<std::string> initializer_names;
  uint64_t params = 0, weight_bytes = 0;
  for (const auto& t : g.initializer()) {
    initializer_names.insert(t.name());
    uint64_t n = 1;
    for (int64_t d : t.dims()) n *= static_cast<uint64_t>(std::max<int64_t>(d, 0));
    auto dt = frontend::dtype_from_onnx(t.data_type());
    if (!dt) continue;
    if (is_float(*dt)) params += n;
    weight_bytes += n * dtype_size(*dt);
  }
  std::vector<const onnx::ValueInfoProto*> inputs, outputs;
  for (const auto& vi : g.input())
    if (!initializer_names.count(vi.name())) inputs.push_back(&vi);
  for (const auto& vi : g.output()) outputs.push_back(&vi);
  print_values("inputs", inputs);
  print_values("outputs", outputs);
  say("%-10s %s parameters, %s of weights in %d initializers\n", "params", with_commas(params).c_str(),
              human_bytes(weight_bytes).c_str(), g.initializer_size());

  // Histogram of the model's own nodes and of the nodes of their subgraphs (If branches, Loop
  // and Scan bodies, nested), most frequent first.
  std::map<std::string, int> histogram;
  std::set<std::string> local_functions;
  for (const auto& f : m.functions()) local_functions.insert(f.domain() + "." + f.name());
  int nested = 0, total = 0;
  std::function<void(const onnx::GraphProto&, bool)> count = [&](const onnx::GraphProto& graph, bool inside) {
    for (const auto& n : graph.node()) {
      histogram[frontend::is_ai_onnx_domain(n.domain()) ? n.op_type() : n.domain() + "." + n.op_type()]++;
      ++total;
      if (inside) ++nested;
      for (const auto& a : n.attribute()) {
        if (a.has_g()) count(a.g(), true);
        for (const auto& sub : a.graphs()) count(sub, true);
      }
    }
  };
  count(g, false);
  std::vector<std::pair<std::string, int>> rows(histogram.begin(), histogram.end());
  std::stable_sort(rows.begin(), rows.end(), [](auto& a, auto& b) { return a.second > b.second; });
  size_t width = 0;
  for (auto& [op, count] : rows) width = std::max(width, op.size());
  say("%-10s %d nodes%s, %zu op types%s\n", "ops", total,
              nested ? fmt::format(" ({} inside subgraphs)", nested).c_str() : "", rows.size(),
              m.functions_size() ? fmt::format(", {} model-local function{}", m.functions_size(), m.functions_size() == 1 ? "" : "s").c_str() : "");
  for (auto& [op, count] : rows)
    say("%-10s %-*s %6d%s\n", "", static_cast<int>(width), op.c_str(), count,
                local_functions.count(op) ? "  (function, inlined)" : "");

  // What the importer would reject, looked up on the nodes as the importer sees them (functions
  // inlined, each with the opset in effect for it).
  auto flat = frontend::flatten_model_nodes(m);
  if (!flat) {
    say("%-10s cannot inline functions: %s\n", "support", flat.status().message().c_str());
    return;
  }
  std::vector<std::pair<std::string, std::vector<std::string>>> missing;
  // Subgraph nodes are named by where they sit ("If_3/then_branch/Add_1") and see the opsets
  // of the node that holds them.
  std::function<void(const frontend::FlatNode&)> check = [&](const frontend::FlatNode& n) {
    std::string key = frontend::unsupported_op_key(n);
    if (!key.empty()) {
      auto it = std::find_if(missing.begin(), missing.end(), [&](auto& e) { return e.first == key; });
      if (it == missing.end()) it = missing.insert(missing.end(), {key, {}});
      it->second.push_back(n.name);
    }
    for (const auto& a : n.proto.attribute()) {
      std::vector<const onnx::GraphProto*> subs;
      if (a.has_g()) subs.push_back(&a.g());
      for (const auto& sub : a.graphs()) subs.push_back(&sub);
      for (const onnx::GraphProto* sub : subs)
        for (int i = 0; i < sub->node_size(); ++i) {
          const onnx::NodeProto& p = sub->node(i);
          std::string inner = p.name().empty() ? fmt::format("{}_{}", p.op_type(), i) : p.name();
          check(frontend::make_flat_node(p, fmt::format("{}/{}/{}", n.name, a.name(), inner), n.opsets));
        }
    }
  };
  for (const frontend::FlatNode& n : *flat) check(n);
  if (missing.empty()) {
    say("%-10s every op has a converter\n", "support");
    return;
  }
  say("%-10s %zu op type%s cannot be compiled yet:\n", "support", missing.size(),
              missing.size() == 1 ? "" : "s");
  for (const auto& [op, nodes] : missing) {
    std::vector<std::string> shown(nodes.begin(), nodes.begin() + std::min<size_t>(nodes.size(), 4));
    std::string more = nodes.size() > shown.size() ? fmt::format(", ... ({} nodes)", nodes.size()) : "";
    say("%-10s %s: %s%s\n", "", op.c_str(), fmt::format("{}", fmt::join(shown, ", ")).c_str(), more.c_str());
  }
}

}  // namespace

void add_inspect_command(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("inspect", "Summarise an ONNX model and list the ops aotc cannot compile yet");
  cmd->add_option("model", *path, "The .onnx model file")->required();
  cmd->footer("Example:\n  aotc inspect resnet50.onnx");
  cmd->callback([path] { run_inspect(*path); });
}

}  // namespace aotc::tools
