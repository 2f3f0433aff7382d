#include "codegen/kernel_dump.h"

#include <fstream>
#include <map>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace aotc::codegen {

std::vector<DumpedValue> expose_kernel_outputs(Graph& graph) {
  std::map<const Value*, int> output_index;
  for (int k = 0; k < static_cast<int>(graph.outputs().size()); ++k) output_index.emplace(graph.outputs()[k], k);
  std::vector<DumpedValue> dumped;
  for (const Node* n : graph.nodes()) {
    std::vector<std::string> operands;
    for (const Value* in : n->inputs())
      if (in != nullptr && !in->is_constant()) operands.push_back(in->name());
    for (Value* v : n->outputs()) {
      if (v == nullptr || v->is_constant()) continue;
      auto [it, added] = output_index.emplace(v, static_cast<int>(graph.outputs().size()));
      if (added) graph.add_output(v);
      dumped.push_back(DumpedValue{it->second, v->name(), n->name(), n->op(), operands, !added});
    }
  }
  return dumped;
}

std::string dump_manifest_json(const std::vector<DumpedValue>& dumped) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const DumpedValue& d : dumped) {
    kernels.push_back({{"file", "output_" + std::to_string(d.output_index) + ".pb"},
                       {"output_index", d.output_index},
                       {"value", d.value},
                       {"node", d.node},
                       {"op", d.op},
                       {"inputs", d.inputs},
                       {"model_output", d.model_output}});
  }
  return nlohmann::json{{"kernels", kernels}}.dump(1) + "\n";
}

Expected<std::vector<DumpedValue>> read_dump_manifest(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    return Status::error(ErrorKind::kIo, fmt::format("{}: cannot read (compile the package with --dump-kernels)", path));
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.contains("kernels") || !j["kernels"].is_array())
    return invalid_model("{}: not a dump manifest", path);
  std::vector<DumpedValue> out;
  try {
    for (const auto& k : j["kernels"])
      out.push_back(DumpedValue{k.at("output_index").get<int>(), k.at("value").get<std::string>(),
                                k.at("node").get<std::string>(), k.at("op").get<std::string>(),
                                k.at("inputs").get<std::vector<std::string>>(), k.at("model_output").get<bool>()});
  } catch (const nlohmann::json::exception& e) {
    return invalid_model("{}: not a dump manifest: {}", path, e.what());
  }
  return out;
}

}  // namespace aotc::codegen
