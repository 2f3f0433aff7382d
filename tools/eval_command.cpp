// `aotc eval`: runs a model on the reference interpreter and writes output_<k>.pb, the format of
// the ONNX conformance data and of every package's runner, so their outputs compare directly.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>

#include <onnx/onnx_pb.h>

#include "frontend/tensor_proto.h"
#include "graph/interpreter.h"
#include "graph/printable.h"
#include "tools/commands.h"
#include "tools/import_flags.h"

namespace aotc::tools {
namespace {

namespace fs = std::filesystem;

struct EvalArgs {
  std::string model;
  std::vector<std::string> inputs;
  std::string output_dir = ".";
  ImportFlags flags;
};

// The same deterministic data a package runner generates without --input (see
// runtime_stub/aotc_runner.cpp): floats arange(n)/n, integers i % 7 (2-bit ones i % 2), bools
// i % 2.
TensorData generated_input(const Value& v) {
  TensorData t(v.dtype(), static_dims(v.shape()));
  const int64_t n = t.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    if (v.dtype() == DType::kFloat64) {
      t.set_double(i, static_cast<double>(i) / static_cast<double>(n));
    } else if (is_float(v.dtype())) {
      t.set_double(i, static_cast<float>(i) / static_cast<float>(n));
    } else if (v.dtype() == DType::kBool || dtype_bits(v.dtype()) == 2) {
      t.set_int64(i, i % 2);
    } else {
      t.set_int64(i, i % 7);
    }
  }
  return t;
}

// The graph inputs that are fed at run time, in order: those without an initializer (which makes
// an input a constant with a default) and not bound by --const-input.
std::vector<const onnx::ValueInfoProto*> runtime_inputs(const onnx::ModelProto& model,
                                                        const frontend::ImportOptions& options) {
  std::set<std::string> initializers;
  for (const auto& t : model.graph().initializer()) initializers.insert(t.name());
  std::vector<const onnx::ValueInfoProto*> out;
  for (const auto& vi : model.graph().input()) {
    bool defaulted = initializers.count(vi.name()) && !options.input_shapes.count(vi.name());
    if (!defaulted && !options.const_inputs.count(vi.name()) && !options.const_input_files.count(vi.name()))
      out.push_back(&vi);
  }
  return out;
}

bool has_static_shape(const onnx::ValueInfoProto& vi) {
  if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return false;
  for (const auto& d : vi.type().tensor_type().shape().dim())
    if (!d.has_dim_value()) return false;
  return true;
}

void run_eval(const EvalArgs& args) {
  auto options = args.flags.resolve();
  if (!options) fail(options.status());
  auto model = frontend::read_onnx_model(args.model);
  if (!model) fail(model.status());

  std::vector<const onnx::ValueInfoProto*> fed = runtime_inputs(**model, *options);
  // Sequence and optional inputs would be misread as tensors below; the importer refuses them too.
  for (const onnx::ValueInfoProto* vi : fed)
    if (!vi->type().has_tensor_type())
      fail(unsupported("{}: input '{}' is not a tensor (sequence, map or optional); only tensors are supported",
                       args.model, vi->name()));

  std::vector<TensorData> inputs;
  for (const std::string& path : args.inputs) {
    auto t = frontend::read_tensor_file(path);
    if (!t) fail(t.status());
    inputs.push_back(std::move(t->data));
  }
  // Inputs whose shapes the model leaves open take the shapes of the given tensors, so that shape
  // inference (and the folding of shape computations) works on concrete dims.
  if (!args.inputs.empty() && args.inputs.size() != fed.size())
    fail(invalid_model("{}: the model has {} run-time inputs but {} --input files were given", args.model,
                       fed.size(), args.inputs.size()));
  for (size_t k = 0; k < inputs.size(); ++k)
    if (!has_static_shape(*fed[k]) && !options->input_shapes.count(fed[k]->name()))
      options->input_shapes[fed[k]->name()] = inputs[k].dims();

  auto graph = frontend::import_onnx_model(**model, args.model, *options);
  if (!graph) fail(graph.status());
  if (inputs.empty()) {
    for (const Value* v : (*graph)->inputs()) {
      if (!is_static(v->shape()))
        fail(invalid_model("{}: input '{}' has shape {}; pass --input files or --shape {}=DIMS", args.model,
                           v->name(), shape_to_string(v->shape()), v->name()));
      Status fits = check_interpretable_size(v->type(), fmt::format("input '{}'", v->name()));
      if (!fits.is_ok()) fail(fits.with_context(args.model));
      inputs.push_back(generated_input(*v));
    }
  }
  auto outputs = interpret(**graph, inputs);
  if (!outputs) fail(outputs.status().with_context(args.model));

  std::error_code ec;
  fs::create_directories(args.output_dir, ec);
  if (ec) fail(Status::error(ErrorKind::kIo, fmt::format("{}: cannot create folder: {}", args.output_dir, ec.message())));
  for (size_t k = 0; k < outputs->size(); ++k) {
    // The ONNX output name, which differs from the value's name when the output aliases another.
    const std::string& name = (**model).graph().output(static_cast<int>(k)).name();
    std::string path = (fs::path(args.output_dir) / fmt::format("output_{}.pb", k)).string();
    Status s = frontend::write_tensor_file(path, (*outputs)[k], name);
    if (!s.is_ok()) fail(s);
    std::printf("%s  %s  %s\n", path.c_str(), printable(name).c_str(), (*outputs)[k].type().to_string().c_str());
  }
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto args = std::make_shared<EvalArgs>();
  CLI::App* cmd = app.add_subcommand("eval", "Run a model on the reference interpreter and write output_<k>.pb");
  cmd->add_option("model", args->model, "The .onnx model file")->required();
  cmd->add_option("--input,-i", args->inputs,
                  "TensorProto file for the next run-time input, in graph-input order (repeatable); "
                  "without any, deterministic inputs are generated as package runners do");
  cmd->add_option("--output-dir,-o", args->output_dir, "Folder for output_<k>.pb (default: .)");
  args->flags.add_to(cmd);
  cmd->footer(
      "Examples:\n"
      "  aotc eval model.onnx --input test_data_set_0/input_0.pb -o out\n"
      "  aotc eval model.onnx --shape x=1x3x224x224   # generated input\n"
      "\n"
      "Exit status: 0 on success, 2 when the model uses something aotc does not support, 1 otherwise.");
  cmd->callback([args] { run_eval(*args); });
}

}  // namespace aotc::tools
