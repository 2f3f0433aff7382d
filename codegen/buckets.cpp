#include "codegen/buckets.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/ranges.h>

#include "graph/ops/op_registry.h"

namespace aotc {
namespace {

/// One copy of every distinct constant across the graphs of a package.
class ConstantPool {
 public:
  /// Makes every constant of `g` share the storage of an equal one seen before.
  void share(Graph& g) {
    for (Value* v : g.values()) {
      if (!v->is_constant()) continue;
      auto& candidates = by_hash_[v->constant_data()->hash()];
      auto same = std::find_if(candidates.begin(), candidates.end(), [&](const auto& c) {
        return c.get() == v->constant_data() || *c == *v->constant_data();
      });
      if (same == candidates.end()) candidates.push_back(v->shared_constant_data());
      else if (same->get() != v->constant_data()) g.share_constant_data(v, *same);
    }
  }

 private:
  std::unordered_map<uint64_t, std::vector<std::shared_ptr<const TensorData>>> by_hash_;
};

/// Whether shape inference of `n` needs the value of operand `i` (a Reshape target, Slice
/// bounds, Expand's shape): inference of a copy whose operand i is no constant asks for it.
bool shape_inference_reads(const Node& n, int i) {
  Graph scratch;
  std::vector<Value*> operands;
  for (int j = 0; j < n.num_inputs(); ++j) {
    const Value* v = n.input(j);
    if (!v) operands.push_back(nullptr);
    else if (j != i && v->is_constant()) operands.push_back(scratch.add_constant(v->name(), *v->constant_data()));
    else operands.push_back(scratch.add_input(v->name(), TensorType{v->dtype(), v->shape()}));
  }
  std::vector<std::string> outputs;
  for (const Value* o : n.outputs()) outputs.push_back(o->name());
  Node* copy = scratch.add_node(n.op(), n.name(), operands, outputs, n.attrs());
  return infer_node(*copy).kind() == ErrorKind::kNeedsConstant;
}

/// The constants of one graph before mask-padding: their data, and a node that reads their
/// values ("" when only shape inference does).
struct ConstantUse {
  std::shared_ptr<const TensorData> data;
  std::string reader;  ///< "node 'x' (Op)"
};
using ConstantSnapshot = std::map<std::string, ConstantUse>;

ConstantSnapshot snapshot_constants(const Graph& g) {
  ConstantSnapshot snap;
  for (const Value* v : g.values()) {
    if (!v->is_constant() || !v->has_uses()) continue;
    ConstantUse use{v->shared_constant_data(), ""};
    for (const Use& u : v->uses()) {
      if (shape_inference_reads(*u.user, u.operand_index)) continue;
      use.reader = u.user->describe();
      break;
    }
    snap.emplace(v->name(), std::move(use));
  }
  return snap;
}

std::string index_text(const std::vector<int64_t>& dims, int64_t flat) {
  std::vector<int64_t> index(dims.size());
  for (int a = static_cast<int>(dims.size()) - 1; a >= 0; --a) {
    index[a] = flat % dims[a];
    flat /= dims[a];
  }
  return fmt::format("[{}]", fmt::join(index, ", "));
}

/// The constants a graph at smaller sizes reads as values must be the leading part of the same
/// constants at larger sizes: what the model computes from the length (position ids, a causal
/// mask) then agrees at every position both have. A constant that differs there (the length
/// itself as a value, positions counted from the end) would make a bucket compute with the
/// bucket size instead of the actual one.
Status compare_constants(const ConstantSnapshot& small, const std::string& small_label,
                         const ConstantSnapshot& large, const std::string& large_label) {
  for (const auto& [name, s] : small) {
    auto it = large.find(name);
    if (it == large.end()) continue;
    const ConstantUse& l = it->second;
    if (s.reader.empty() && l.reader.empty()) continue;  // only shape inference reads it
    if (s.data == l.data || *s.data == *l.data) continue;
    const TensorData &x = *s.data, &y = *l.data;
    const std::string reader = l.reader.empty() ? s.reader : l.reader;
    bool leading = x.dtype() == y.dtype() && x.rank() == y.rank();
    for (int a = 0; leading && a < x.rank(); ++a) leading = x.dims()[a] <= y.dims()[a];
    if (!leading) {
      return unsupported("constant '{}' ({}, read by {}) is {} at {} but {} at {}: the model computes it "
                         "from the length in a way a bucket cannot reproduce",
                         name, x.type().to_string(), reader, x.type().to_string(), small_label,
                         y.type().to_string(), large_label);
    }
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      int64_t rest = i, at = 0, stride = 1;
      for (int a = x.rank() - 1; a >= 0; --a) {
        at += (rest % x.dims()[a]) * stride;
        rest /= x.dims()[a];
        stride *= y.dims()[a];
      }
      const double u = x.get_double(i), w = y.get_double(at);
      if (u == w || (u != u && w != w)) continue;
      return unsupported("constant '{}' (read by {}) is computed from the length as a value: its element {} "
                         "is {} at {} but {} at {}; a bucket would compute with the bucket size, not the "
                         "actual one",
                         name, reader, index_text(x.dims(), i), u, small_label, w, large_label);
    }
  }
  return Status::ok();
}

}  // namespace

std::vector<std::vector<int64_t>> bucket_combinations(const std::vector<BucketAxis>& axes) {
  std::vector<std::vector<int64_t>> out(1);
  for (const BucketAxis& axis : axes) {
    std::vector<std::vector<int64_t>> next;
    for (const std::vector<int64_t>& prefix : out)
      for (int64_t size : axis.sizes) {
        next.push_back(prefix);
        next.back().push_back(size);
      }
    out = std::move(next);
  }
  return out;
}

std::string bucket_sizes_text(const std::vector<std::string>& symbols, const std::vector<int64_t>& sizes) {
  std::vector<std::string> parts;
  for (size_t s = 0; s < symbols.size(); ++s) parts.push_back(fmt::format("{}={}", symbols[s], sizes[s]));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string buckets_flag_text(const std::vector<BucketAxis>& axes) {
  std::vector<std::string> parts;
  for (const BucketAxis& a : axes) parts.push_back(fmt::format("{}={}", a.symbol, fmt::join(a.sizes, ",")));
  return fmt::format("{}", fmt::join(parts, " --buckets "));
}

Status check_bucket_axes(const std::vector<BucketAxis>& axes, const onnx::ModelProto& model) {
  std::set<std::string> seen, params;
  for (const onnx::ValueInfoProto& vi : model.graph().input()) {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) continue;
    for (const auto& d : vi.type().tensor_type().shape().dim())
      if (d.has_dim_param() && !d.dim_param().empty()) params.insert(d.dim_param());
  }
  size_t schedules = 1;
  for (const BucketAxis& a : axes) {
    const std::string flag = fmt::format("--buckets {}={}", a.symbol, fmt::join(a.sizes, ","));
    if (!seen.insert(a.symbol).second) return invalid_model("--buckets given twice for symbol '{}'", a.symbol);
    if (a.sizes.empty()) return invalid_model("{}: no bucket sizes", flag);
    for (size_t i = 0; i < a.sizes.size(); ++i) {
      if (a.sizes[i] < 1) return invalid_model("{}: bucket sizes must be at least 1, got {}", flag, a.sizes[i]);
      if (i > 0 && a.sizes[i] <= a.sizes[i - 1])
        return invalid_model("{}: bucket sizes must increase, but {} follows {}", flag, a.sizes[i], a.sizes[i - 1]);
    }
    if (!params.count(a.symbol)) {
      return invalid_model("{}: no graph input has a dimension named '{}' (symbolic dims of the inputs: {})", flag,
                           a.symbol, params.empty() ? std::string("none") : fmt::format("{}", fmt::join(params, ", ")));
    }
    schedules *= a.sizes.size();
    if (schedules > kMaxBucketSchedules)
      return invalid_model("--buckets: {} combinations of sizes, more than the {} a package holds", schedules,
                           kMaxBucketSchedules);
  }
  return Status::ok();
}

Expected<std::vector<BucketGraph>> compile_buckets(const std::vector<BucketAxis>& axes,
                                                   const onnx::ModelProto& model, const std::string& model_path,
                                                   const frontend::ImportOptions& import,
                                                   const PipelineOptions& pipeline) {
  std::vector<std::string> symbols;
  for (const BucketAxis& a : axes) symbols.push_back(a.symbol);
  const std::string flag = "--buckets " + buckets_flag_text(axes);
  ConstantPool pool;

  // Compiles the model at `sizes`, each symbol serving min[s]..sizes[s]; `snapshot` receives the
  // constants before mask-padding.
  auto compile_at = [&](const std::vector<int64_t>& sizes, const std::vector<int64_t>& min,
                        ConstantSnapshot& snapshot, bool probe) -> Expected<std::unique_ptr<Graph>> {
    frontend::ImportOptions options = import;
    std::string label;
    for (size_t s = 0; s < sizes.size(); ++s) {
      options.buckets.push_back(frontend::SymbolBucket{symbols[s], sizes[s], min[s]});
      label += fmt::format("{}{} = {} (sizes {}..{})", s ? ", " : "", symbols[s], sizes[s], min[s], sizes[s]);
    }
    // Errors name the model, the flag and the sizes, then what went wrong.
    auto at_sizes = [&](const Status& st) {
      std::string message = st.message();
      if (message.rfind(model_path + ": ", 0) == 0) message = message.substr(model_path.size() + 2);
      return Status::error(st.kind(), fmt::format("{}: {}: at {}: {}", model_path, flag, label, message));
    };
    auto graph = frontend::import_onnx_model(model, model_path, options);
    if (!graph) return at_sizes(graph.status());
    PipelineOptions p = pipeline;
    p.label = bucket_sizes_text(symbols, sizes);
    if (probe) p.print_ir_after.clear();  // not a schedule of the package: nothing to show
    p.before_pass = [&](Graph& g, std::string_view pass) {
      if (pipeline.before_pass) AOTC_RETURN_IF_ERROR(pipeline.before_pass(g, pass));
      if (pass == "mask-padding") {
        pool.share(g);
        snapshot = snapshot_constants(g);
      }
      return Status::ok();
    };
    if (Status st = run_pipeline(**graph, p); !st.is_ok()) return at_sizes(st);
    pool.share(**graph);
    return std::move(*graph);
  };

  const std::vector<std::vector<int64_t>> combinations = bucket_combinations(axes);
  std::vector<BucketGraph> graphs;
  std::vector<ConstantSnapshot> snapshots;
  std::map<std::vector<int64_t>, size_t> index;
  for (const std::vector<int64_t>& sizes : combinations) {
    std::vector<int64_t> min;
    for (size_t s = 0; s < sizes.size(); ++s) {
      const std::vector<int64_t>& all = axes[s].sizes;
      const auto at = std::find(all.begin(), all.end(), sizes[s]);
      min.push_back(at == all.begin() ? 1 : *(at - 1) + 1);
    }
    snapshots.emplace_back();
    AOTC_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, compile_at(sizes, min, snapshots.back(), false));
    index[sizes] = graphs.size();
    graphs.push_back(BucketGraph{sizes, std::move(graph)});
  }

  // Constants computed from the lengths: each schedule against the next smaller size of each
  // symbol, and the smallest against a compile at size 1 of that symbol (the smallest bucket
  // serves it too), when the model compiles there.
  auto label = [&](const std::vector<int64_t>& sizes) { return bucket_sizes_text(symbols, sizes); };
  auto fail = [&](const Status& st) { return st.with_context(fmt::format("{}: {}", model_path, flag)); };
  for (size_t k = 0; k < graphs.size(); ++k) {
    for (size_t s = 0; s < axes.size(); ++s) {
      std::vector<int64_t> smaller = graphs[k].sizes;
      const std::vector<int64_t>& all = axes[s].sizes;
      const auto at = std::find(all.begin(), all.end(), smaller[s]);
      if (at != all.begin()) {
        smaller[s] = *(at - 1);
        const size_t j = index.at(smaller);
        if (Status st = compare_constants(snapshots[j], label(smaller), snapshots[k], label(graphs[k].sizes));
            !st.is_ok())
          return fail(st);
        continue;
      }
      if (smaller[s] == 1) continue;
      smaller[s] = 1;
      std::vector<int64_t> ones(smaller.size(), 1);
      ConstantSnapshot probe;
      if (!compile_at(smaller, ones, probe, true).has_value() || probe.empty()) continue;
      if (Status st = compare_constants(probe, label(smaller), snapshots[k], label(graphs[k].sizes)); !st.is_ok())
        return fail(st);
    }
  }
  return graphs;
}

}  // namespace aotc
