#include "codegen/cpp/cpp_emitter.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "codegen/code_writer.h"
#include "codegen/cpp/cpp_kernel.h"
#include "codegen/package_api.h"
#include "codegen/package_writer.h"
#include "graph/ops/control_flow.h"

namespace aotc::codegen {
namespace {

/// The SIMD kernels' headers, copied into the packages of SIMD targets and included by their
/// model source: the vectors and the GEMM, then the convolutions and the depthwise kernel on it.
constexpr const char* kSimdHeaders[] = {"aotc_simd.h", "aotc_simd_conv.h", "aotc_simd_depthwise.h"};

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

/// Where the values of one graph live while its nodes run: a schedule's graph (its arena plan at
/// offset 0 of the arena, inputs and outputs in the caller's buffers) or a region body of a
/// control-flow node (its arena plan inside the node's scratch, its inputs and outputs bound to
/// the node's buffers by emit_body).
struct Scope {
  const Graph* graph = nullptr;
  const ArenaPlan* plan = nullptr;
  int64_t base = 0;  ///< Arena offset of the plan's offset 0.
  /// Values whose buffer is given: graph inputs (read-only) and the graph outputs that a node of
  /// this graph writes (first slot only), as typed pointer expressions.
  std::unordered_map<const Value*, std::string> inputs;
  std::unordered_map<const Value*, std::string> outputs;
};

/// Renders one module. Owns the naming of kernel functions and the two code streams (kernel
/// definitions and the body of <name>_run).
class CppModuleEmitter {
 public:
  CppModuleEmitter(const ModuleSpec& spec, const TargetFacts& facts)
      : spec_(spec), facts_(facts), uname_(upper_identifier(spec.name)) {}

  Expected<EmittedModule> emit() {
    if (spec_.buckets.empty()) {
      AOTC_ASSIGN_OR_RETURN(run_body_, emit_schedule(spec_.graph, spec_.arena, ""));
    } else {
      AOTC_RETURN_IF_ERROR(emit_bucket_schedules());
    }

    EmittedModule m;
    m.bucket_schedules = static_cast<int>(spec_.buckets.size());
    const std::string& name = spec_.name;
    m.files.push_back({"include/" + name + ".h", header(), {}});
    m.files.push_back({"src/" + name + ".cpp", source(), {}});
    m.library_sources.push_back("src/" + name + ".cpp");
    if (embedded()) {
      auto blob = spec_.weights_blob;
      std::string banner = spec_.banner, symbol = name + "_weights";
      m.files.push_back({"src/" + name + "_weights.cpp", "", [blob, banner, symbol](std::ostream& os) {
                           return write_embedded_bytes(os, banner, symbol, *blob);
                         }});
      m.library_sources.push_back("src/" + name + "_weights.cpp");
    }
    m.files.push_back({"runner/main.cpp", runner(), {}});
    m.runner_source = "runner/main.cpp";
    m.kernel_functions = static_cast<int>(function_by_text_.size());
    if (!facts_.simd.empty())
      for (const char* header : kSimdHeaders)
        m.files.push_back({std::string("src/") + header,
                           std::string(embedded_file(std::string("codegen/templates/cpp/") + header)), {}});
    m.cxx_flags = facts_.cxx_flags;
    m.uses_threads = threaded();
    return m;
  }

 private:
  /// The body of a function running one schedule (graph and arena plan): the kernel calls in
  /// schedule order, then the copies of outputs no kernel writes. `label` prefixes the
  /// --profile labels (the schedule's sizes in a bucketed package).
  Expected<std::string> emit_schedule(const Graph& g, const ArenaPlan& arena, const std::string& label) {
    top_ = Scope{};
    top_.graph = &g;
    top_.plan = &arena;
    for (size_t i = 0; i < g.inputs().size(); ++i) {
      const Value* v = g.inputs()[i];
      top_.inputs.emplace(v, fmt::format("static_cast<const {}*>(inputs[{}])", c_type(*v), i));
    }
    for (size_t j = 0; j < g.outputs().size(); ++j) {
      const Value* v = g.outputs()[j];
      if (v->producer()) top_.outputs.emplace(v, fmt::format("static_cast<{}*>(outputs[{}])", c_type(*v), j));
    }
    scope_ = &top_;
    label_ = label;
    run_ = CodeWriter();
    run_.indent();  // The body sits inside a function.
    run_.line("unsigned char* const arena = ctx->arena;");
    run_.line("const unsigned char* const weights = ctx->weights;");
    run_.line("(void)arena;");
    run_.line("(void)weights;");
    if (threaded()) {
      run_.line("// Kernels take the pool; its state is synchronisation only, not model state.");
      run_.line("aotc_thread_pool* const pool = const_cast<aotc_thread_pool*>(&ctx->pool);");
    }
    if (spec_.profile) {
      run_.line("// --profile: the timings are the only state a run writes into the context.");
      run_.line("{0}_context* const profile = const_cast<{0}_context*>(ctx);", spec_.name);
      run_.line("uint64_t profile_start = 0;");
    }
    for (const Node* n : g.nodes()) AOTC_RETURN_IF_ERROR(emit_node(*n));
    emit_output_copies();
    if (spec_.profile && label.empty()) run_.line("++profile->profile_runs;");
    run_.line("return AOTC_OK;");
    return run_.str();
  }

  /// One function per schedule of a bucketed package, the function that runs schedule k for
  /// the shared dispatcher, and <name>_run as the run at the largest sizes.
  Status emit_bucket_schedules() {
    CodeWriter w;
    std::vector<std::string> functions;
    for (size_t k = 0; k < spec_.buckets.size(); ++k) {
      const BucketSchedule& b = spec_.buckets[k];
      std::string sizes, label;
      for (size_t s = 0; s < spec_.symbols.size(); ++s) {
        sizes += fmt::format("_{}{}", sanitize_identifier(spec_.symbols[s]), b.sizes[s]);
        label += fmt::format("{}{}={}", s ? "," : "", spec_.symbols[s], b.sizes[s]);
      }
      const std::string fn = "run" + sizes;
      AOTC_ASSIGN_OR_RETURN(std::string body, emit_schedule(b.graph, b.arena, "[" + label + "] "));
      w.blank();
      w.line("// Schedule {}: {}; its arena needs {} bytes.", k, label, b.arena.arena_bytes);
      w.raw_line(fmt::format("aotc_status {}(const {}_context* ctx, const void* const* inputs, void* const* outputs) {{",
                             fn, spec_.name));
      w.append(body);
      w.line("}}");
      functions.push_back(fn);
    }
    w.blank();
    w.line("// Runs schedule k for the dispatcher (runtime_stub/aotc_buckets.h).");
    w.raw_line("aotc_status run_schedule(const void* context, int schedule, const void* const* inputs, void* const* outputs) {");
    w.indent();
    w.line("const {0}_context* const ctx = static_cast<const {0}_context*>(context);", spec_.name);
    if (spec_.profile) w.line("++const_cast<{0}_context*>(ctx)->profile_runs;", spec_.name);
    w.line("switch (schedule) {{");
    for (size_t k = 0; k < functions.size(); ++k)
      w.line("  case {}: return {}(ctx, inputs, outputs);", k, functions[k]);
    w.line("  default: return AOTC_ERR_MISMATCH;");
    w.line("}}");
    w.dedent();
    w.line("}}");
    schedules_ = w.str();
    std::string largest_sizes;
    for (int64_t v : spec_.buckets.back().sizes) largest_sizes += (largest_sizes.empty() ? "" : ", ") + std::to_string(v);
    run_body_ = fmt::format("  // The run at the largest sizes.\n  static const int64_t kLargest[] = {{{}}};\n"
                            "  return {}_run_dims(ctx, kLargest, inputs, outputs);\n",
                            largest_sizes, spec_.name);
    return Status::ok();
  }

  /// Arena bytes of the package: the largest schedule's, then the dispatcher's staging copies.
  int64_t arena_bytes() const {
    if (spec_.buckets.empty()) return spec_.arena.arena_bytes;
    return staging().end;
  }

  BucketStaging staging() const {
    int64_t schedules = 0;
    for (const BucketSchedule& b : spec_.buckets) schedules = std::max(schedules, b.arena.arena_bytes);
    return plan_bucket_staging(spec_, schedules, facts_.alignment);
  }

  bool embedded() const { return spec_.embed_weights && spec_.weights.total_bytes > 0; }
  bool threaded() const { return spec_.threads > 1; }
  /// Length of the --profile arrays (C has no empty arrays).
  size_t profile_slots() const { return std::max<size_t>(1, profile_labels_.size()); }

  static std::string c_type(const Value& v) { return std::string(dtype_c_type(v.dtype())); }

  /// The C++ expression of the buffer holding `v` (a value of the current scope's graph), typed
  /// as a (const) pointer to its element.
  std::string pointer(const Value& v, bool writable) const {
    const Scope& scope = *scope_;
    if (auto it = scope.plan->views.find(&v); it != scope.plan->views.end()) {
      AOTC_INTERNAL_ASSERT(!writable, "view '{}' is written", v.name());
      return pointer(*it->second, false);  // Views keep the dtype: only the shape differs.
    }
    if (auto it = scope.outputs.find(&v); it != scope.outputs.end()) return it->second;
    if (auto it = scope.inputs.find(&v); it != scope.inputs.end()) {
      AOTC_INTERNAL_ASSERT(!writable, "input '{}' is written", v.name());
      return it->second;
    }
    std::string type = (writable ? "" : "const ") + c_type(v) + "*";
    if (v.is_constant()) {
      return fmt::format("reinterpret_cast<{}>(weights + {})", type, spec_.weights.offsets.at(&v));
    }
    auto it = scope.plan->offsets.find(&v);
    AOTC_INTERNAL_ASSERT(it != scope.plan->offsets.end(), "value '{}' has no buffer", v.name());
    return fmt::format("reinterpret_cast<{}>(arena + {})", type, scope.base + it->second);
  }

  /// The arena bytes [begin, end) holding `v` (views resolved), or nullopt outside the current
  /// scope's arena plan.
  std::optional<std::pair<int64_t, int64_t>> arena_range(const Value& v) const {
    const ArenaPlan& plan = *scope_->plan;
    const Value* root = &v;
    if (auto it = plan.views.find(&v); it != plan.views.end()) root = it->second;
    auto it = plan.offsets.find(root);
    if (it == plan.offsets.end()) return std::nullopt;
    auto bytes = value_bytes(*root);
    return std::make_pair(it->second, it->second + (bytes ? *bytes : 0));
  }

  bool shares_arena_bytes(const Value& a, const Value& b) const {
    auto ra = arena_range(a), rb = arena_range(b);
    return ra && rb && ra->first < rb->second && rb->first < ra->second;
  }

  /// "x f32[3x4], w f32[4] -> y f32[3x4]" for comments.
  static std::string signature_comment(const Node& n, bool with_names) {
    auto describe = [&](const Value* v) {
      if (!v) return std::string("(absent)");
      std::string t = v->type().to_string();
      return with_names ? comment_text(v->name()) + " " + t : t;
    };
    std::vector<std::string> ins, outs;
    for (const Value* v : n.inputs()) ins.push_back(describe(v));
    for (const Value* v : n.outputs()) outs.push_back(describe(v));
    return join(ins, ", ") + " -> " + join(outs, ", ");
  }

  Status emit_node(const Node& n) {
    const ArenaPlan& plan = *scope_->plan;
    if (n.num_outputs() == 1 && plan.views.count(n.output(0))) {
      run_.line("// node '{}' ({}): {}: a view of '{}', no code", comment_text(n.name()), n.op(),
                signature_comment(n, true), comment_text(plan.views.at(n.output(0))->name()));
      return Status::ok();
    }
    if (is_control_flow(n)) return emit_control_flow(n);
    const CppKernelEmitter* emitter = CppKernelRegistry::instance().find(n.op());
    if (!emitter) return unsupported("{}: no C++ kernel for op '{}'", n.describe(), n.op());

    // Pointers that share bytes with a result (an operand the memory plan writes over in place)
    // must not be declared restrict.
    std::vector<bool> aliased_in(n.num_inputs(), false), aliased_out(n.num_outputs(), false);
    for (int i = 0; i < n.num_inputs(); ++i) {
      for (int o = 0; o < n.num_outputs(); ++o) {
        if (n.input(i) && shares_arena_bytes(*n.input(i), *n.output(o)))
          aliased_in[i] = aliased_out[o] = true;
      }
    }
    std::vector<std::string> params, in, out;
    for (int i = 0; i < n.num_inputs(); ++i) {
      const Value* v = n.input(i);
      in.push_back(v ? fmt::format("in{}", i) : "");
      params.push_back(
          v ? fmt::format("const {}* {}in{}", c_type(*v), aliased_in[i] ? "" : "AOTC_RESTRICT ", i)
            : fmt::format("const void* /* in{}: absent */", i));
    }
    for (int i = 0; i < n.num_outputs(); ++i) {
      out.push_back(fmt::format("out{}", i));
      params.push_back(fmt::format("{}* {}out{}", c_type(*n.output(i)),
                                   aliased_out[i] ? "" : "AOTC_RESTRICT ", i));
    }
    CodeWriter body;
    body.indent();
    CppKernel kernel{n, in, out, body};
    kernel.ctx = KernelContext{&facts_, spec_.threads};
    Status s = (*emitter)(kernel);
    if (!s.is_ok()) return s.with_context(n.describe());
    if (kernel.scratch_bytes > 0) {
      AOTC_INTERNAL_ASSERT(plan.scratch_offsets.count(&n), "{} uses scratch the plan lacks",
                           n.describe());
      params.push_back("unsigned char* AOTC_RESTRICT scratch");
    }
    AOTC_INTERNAL_ASSERT(!kernel.uses_pool || threaded(), "{} asks for threads in a one-thread build",
                         n.describe());
    if (kernel.uses_pool) params.push_back("aotc_thread_pool* pool");

    // Nodes with the same op, attributes and types get the same body: emit it once.
    std::string param_list = join(params, ", ");
    std::string key = param_list + "\n" + body.str();
    auto [it, inserted] = function_by_text_.emplace(key, "");
    if (inserted) {
      it->second = function_name(n);
      kernels_.blank();
      kernels_.line("// {}: {}", n.op(), signature_comment(n, false));
      kernels_.raw_line(fmt::format("AOTC_KERNEL void {}({}) {{", it->second, param_list));
      kernels_.append(body.str());
      kernels_.line("}}");
    }

    std::vector<std::string> args;
    for (const Value* v : n.inputs()) args.push_back(v ? pointer(*v, false) : "nullptr");
    for (const Value* v : n.outputs()) args.push_back(pointer(*v, true));
    if (kernel.scratch_bytes > 0)
      args.push_back(fmt::format("arena + {}", scope_->base + plan.scratch_offsets.at(&n)));
    if (kernel.uses_pool) args.push_back("pool");
    run_.line("// node '{}' ({}): {}", comment_text(n.name()), n.op(), signature_comment(n, true));
    std::string call = it->second + "(" + join(args, ", ") + ");";
    if (spec_.profile) run_.line("profile_start = aotc_profile_clock();");
    if (call.size() + 2 <= 100) {
      run_.raw_line(call);
    } else {  // One argument per line, aligned after the parenthesis.
      std::string pad(it->second.size() + 1, ' ');
      run_.raw_line(it->second + "(" + join(args, ",\n  " + pad) + ");");
    }
    if (spec_.profile) {
      run_.line("profile->profile_ns[{}] += aotc_profile_clock() - profile_start;", profile_labels_.size());
      profile_labels_.push_back(label_ + n.name() + " (" + n.op() + ")");
    }
    return Status::ok();
  }

  // ---- Control flow: region bodies run in a branch or a loop of <name>_run ----

  /// A control-flow node: the nodes of its bodies in an if / else or a for loop, their arenas
  /// inside the node's scratch (passes/plan_memory.h RegionPlan).
  Status emit_control_flow(const Node& n) {
    const ArenaPlan& plan = *scope_->plan;
    const RegionPlan& region = plan.regions.at(&n);
    auto it = plan.scratch_offsets.find(&n);
    const int64_t base = scope_->base + (it == plan.scratch_offsets.end() ? 0 : it->second);
    run_.line("// node '{}' ({}): {}", comment_text(n.name()), n.op(), signature_comment(n, true));
    return n.op() == kIfOp ? emit_if(n, region, base) : emit_loop(n, region, base);
  }

  Status emit_if(const Node& n, const RegionPlan& region, int64_t base) {
    std::vector<std::string> captures, results;
    for (int i = 1; i < n.num_inputs(); ++i) captures.push_back(pointer(*n.input(i), false));
    for (const Value* v : n.outputs()) results.push_back(pointer(*v, true));
    run_.open("if ({}[0])", pointer(*n.input(0), false));
    AOTC_RETURN_IF_ERROR(emit_body(region.bodies[0], base, captures, results));
    run_.dedent();
    run_.line("}} else {{");
    run_.indent();
    AOTC_RETURN_IF_ERROR(emit_body(region.bodies[1], base, captures, results));
    run_.close();
    return Status::ok();
  }

  /// The loop keeps each carried value in the node's result buffer; the body reads it there and
  /// writes the next value into the region's next-state buffer, copied back after the body.
  /// Scan values go straight into their slice of the stacked result. The loop stops at the trip
  /// count whatever the condition says, so it never writes past a stacked result.
  Status emit_loop(const Node& n, const RegionPlan& region, int64_t base) {
    AOTC_ASSIGN_OR_RETURN(LoopSignature sig, loop_signature(n));
    const int id = loop_counter_++;
    const std::string iteration = fmt::format("iteration_{}", id), trips = fmt::format("trips_{}", id),
                      cond = fmt::format("cond_{}", id), next_cond = fmt::format("next_cond_{}", id);
    run_.raw_line("{");
    run_.indent();
    std::vector<std::string> body_in{"&" + iteration, "&" + cond}, body_out{"&" + next_cond};
    std::vector<int64_t> state_bytes;
    for (int k = 0; k < sig.carried; ++k) {
      const Value& result = *n.output(k);
      AOTC_ASSIGN_OR_RETURN(int64_t bytes, value_bytes(result));
      state_bytes.push_back(bytes);
      const std::string state = pointer(result, true);
      if (bytes > 0) run_.line("std::memcpy({}, {}, {});", state, pointer(*n.input(2 + k), false), bytes);
      body_in.push_back(state);
      body_out.push_back(fmt::format("reinterpret_cast<{}*>(arena + {})", c_type(result),
                                     base + region.next_state_offsets[static_cast<size_t>(k)]));
    }
    for (int i = 2 + sig.carried; i < n.num_inputs(); ++i) body_in.push_back(pointer(*n.input(i), false));
    for (int k = 0; k < sig.scans; ++k) {
      const Value& result = *n.output(sig.carried + k);
      const int64_t slice = *element_count(result.shape()) / std::max<int64_t>(1, result.shape()[0].value);
      body_out.push_back(fmt::format("({} + {} * {})", pointer(result, true), iteration, slice));
    }
    const Value* m = n.input(0);
    run_.line("const int64_t {} = {};", trips,
              !m                 ? std::string("INT64_MAX")
              : m->is_constant() ? fmt::format("INT64_C({})", m->constant_data()->get_int64(0))
                                 : fmt::format("{}[0]", pointer(*m, false)));
    run_.line("bool {} = {};", cond, n.input(1) ? fmt::format("{}[0]", pointer(*n.input(1), false)) : "true");
    run_.open("for (int64_t {0} = 0; {0} < {1} && {2}; ++{0})", iteration, trips, cond);
    run_.line("bool {} = false;", next_cond);
    AOTC_RETURN_IF_ERROR(emit_body(region.bodies[0], base, body_in, body_out));
    for (int k = 0; k < sig.carried; ++k)
      if (state_bytes[k] > 0) run_.line("std::memcpy({}, {}, {});", body_in[2 + k], body_out[1 + k], state_bytes[k]);
    run_.line("{} = {};", cond, next_cond);
    run_.close();
    run_.close();
    return Status::ok();
  }

  /// Emits a region body's nodes with its inputs and outputs at the given pointer expressions
  /// and its arena at `base` + its offset; results no node of the body writes are copied.
  Status emit_body(const RegionPlan::Body& body, int64_t base, const std::vector<std::string>& inputs,
                   const std::vector<std::string>& outputs) {
    const Graph& g = *body.graph;
    Scope scope;
    scope.graph = &g;
    scope.plan = body.plan.get();
    scope.base = base + body.offset;
    for (size_t i = 0; i < g.inputs().size(); ++i) scope.inputs.emplace(g.inputs()[i], inputs[i]);
    std::vector<bool> written(g.outputs().size(), false);
    for (size_t j = 0; j < g.outputs().size(); ++j) {
      const Value* v = g.outputs()[j];
      if (v->producer() && scope.outputs.emplace(v, outputs[j]).second) written[j] = true;
    }
    const Scope* outer = scope_;
    scope_ = &scope;
    Status s = Status::ok();
    for (const Node* n : g.nodes()) {
      s = emit_node(*n);
      if (!s.is_ok()) break;
    }
    for (size_t j = 0; s.is_ok() && j < g.outputs().size(); ++j) {
      if (written[j]) continue;
      const Value* v = g.outputs()[j];
      auto bytes = value_bytes(*v);
      if (!bytes) {
        s = bytes.status();
        break;
      }
      if (*bytes > 0) run_.line("std::memcpy({}, {}, {});  // result {} is '{}'", outputs[j], pointer(*v, false), *bytes,
                                j, comment_text(v->name()));
    }
    scope_ = outer;
    return s;
  }

  // Graph outputs that no node writes into the caller's buffer directly: graph inputs,
  // constants and repeated outputs are copied at the end of the run.
  void emit_output_copies() {
    const auto& outs = scope_->graph->outputs();
    for (size_t j = 0; j < outs.size(); ++j) {
      const Value* v = outs[j];
      bool written = v->producer() && std::find(outs.begin(), outs.end(), v) - outs.begin() == static_cast<long>(j);
      if (written) continue;
      auto bytes = value_bytes(*v);
      AOTC_INTERNAL_ASSERT(bytes.has_value(), "output '{}' has no static size", v->name());
      run_.line("// output {} '{}' is {}: copy it", j, comment_text(v->name()),
                v->producer()       ? "also an earlier output"
                : v->is_constant()  ? "a constant"
                                    : "a graph input");
      run_.line("std::memcpy(outputs[{}], {}, {});", j, pointer(*v, false), *bytes);
    }
  }

  std::string function_name(const Node& n) {
    std::string base = sanitize_identifier(n.name());
    if (base.size() > 40) base.resize(40);
    std::string name = fmt::format("k{}_{}", function_by_text_.size() - 1, base);
    AOTC_INTERNAL_ASSERT(function_names_.insert(name).second, "kernel name {} taken", name);
    return name;
  }

  std::string header() const {
    const Graph& g = spec_.graph;
    const std::vector<Value*> inputs = interface_inputs(g);
    std::string weights_source =
        spec_.weights.total_bytes == 0 ? std::string("empty (this model has none)")
        : embedded() ? "compiled into the library as " + spec_.name + "_weights"
                     : "the bytes of the package's file " + spec_.weights_file;
    std::string embedded_decl;
    if (embedded()) {
      embedded_decl = fmt::format(
          "\n/* The weights, compiled into the library (64-byte aligned). */\n"
          "extern const unsigned char {}_weights[];\n",
          spec_.name);
    }
    return render_template("cpp/model.h.in",
                           {{"BANNER", spec_.banner},
                            {"NAME", spec_.name},
                            {"UNAME", uname_},
                            {"WEIGHTS_SOURCE", weights_source},
                            {"ARENA_BYTES", std::to_string(arena_bytes())},
                            {"WEIGHTS_BYTES", std::to_string(spec_.weights.total_bytes)},
                            {"NUM_INPUTS", std::to_string(inputs.size())},
                            {"NUM_OUTPUTS", std::to_string(g.outputs().size())},
                            {"TENSOR_DEFINES", tensor_defines(uname_, "input", inputs) +
                                                   tensor_defines(uname_, "output", g.outputs())},
                            {"BUCKETS", bucket_header(spec_)},
                            {"EMBEDDED_WEIGHTS_DECL", embedded_decl},
                            {"CONTEXT_INCLUDES", threaded() ? "#include \"aotc_threads.h\"\n" : ""},
                            {"CONTEXT_FIELDS",
                             (threaded() ? fmt::format("\n  aotc_thread_pool pool; /* {} threads, started by init */",
                                                       spec_.threads)
                                         : "") +
                                 (spec_.profile
                                      ? fmt::format("\n  /* --profile: nanoseconds spent in each timed node over profile_runs runs\n"
                                                    "   * (zeroed by init; read them with {}_profile). */\n"
                                                    "  uint64_t profile_ns[{}];\n  uint64_t profile_runs;",
                                                    spec_.name, profile_slots())
                                      : "")},
                            {"PROFILE_DECL",
                             spec_.profile
                                 ? fmt::format(
                                       "\n/* Compiled with --profile: sets *nodes to the timed nodes' labels (\"name (Op)\",\n"
                                       " * in run order), *ns to the nanoseconds each took over all runs of ctx since\n"
                                       " * init and *runs to the number of runs; returns the number of nodes (-1 for a\n"
                                       " * NULL ctx). Any out-pointer may be NULL. Each kernel call is timed on the\n"
                                       " * monotonic clock (a few tens of ns per call). */\n"
                                       "int {0}_profile(const {0}_context* ctx, const char* const** nodes, const uint64_t** ns,\n"
                                       "                uint64_t* runs);\n",
                                       spec_.name)
                                 : ""},
                            {"INIT_DOC", threaded() ? fmt::format(
                                                          "\n * Starts the {} - 1 worker threads kernels share their "
                                                          "work with\n * (AOTC_ERR_UNSUPPORTED when the system "
                                                          "refuses one).",
                                                          spec_.threads)
                                                    : ""},
                            {"RELEASE_DOC", threaded() ? "stops the worker threads" : "nothing for this model"}});
  }

  std::string source() const {
    std::string includes;
    if (!facts_.simd.empty()) {
      includes += "\n";
      for (const char* header : kSimdHeaders) includes += fmt::format("#include \"{}\"\n", header);
    }
    return render_template(
        "cpp/model.cpp.in",
        {{"BANNER", spec_.banner},
         {"NAME", spec_.name},
         {"UNAME", uname_},
         {"KERNELS", kernels_.str()},
         {"RUN_BODY", run_body_},
         {"SCHEDULES", schedules_.empty() ? "" : "\n\nnamespace {\n" + schedules_ + "\n}  // namespace"},
         {"BUCKET_DISPATCH",
          bucket_dispatch_source(spec_, staging(), "run_schedule", fmt::format("ctx->arena + {}", staging().base))},
         {"KERNEL_INCLUDES", includes + (spec_.profile ? "#include <chrono>\n" : "")},
         {"INIT_THREADS", (spec_.profile ? "  std::memset(ctx->profile_ns, 0, sizeof ctx->profile_ns);\n"
                                           "  ctx->profile_runs = 0;\n"
                                         : "") +
                              (threaded() ? fmt::format("  const aotc_status started = aotc_pool_start(&ctx->pool, {});\n"
                                                        "  if (started != AOTC_OK) return started;\n",
                                                        spec_.threads)
                                          : "")},
         {"PROFILE_DEFS", profile_definitions()},
         {"RELEASE_BODY", threaded() ? "  if (ctx != nullptr) aotc_pool_stop(&ctx->pool);\n" : "  (void)ctx;\n"}});
  }

  /// The --profile labels, clock and <name>_profile ("" without --profile).
  std::string profile_definitions() const {
    if (!spec_.profile) return "";
    std::string labels;
    for (const std::string& l : profile_labels_) labels += "    " + c_string_literal(l) + ",\n";
    if (profile_labels_.empty()) labels = "    \"\",  // no node runs a kernel\n";
    // Its own anonymous namespace after the kernels', before <name>_init (model.cpp.in).
    return fmt::format(
        "\n\nnamespace {{\n\n"
        "// --profile: the label of each timed kernel call, in run order.\n"
        "const char* const kProfileNodes[{0}] = {{\n{1}}};\n\n"
        "uint64_t aotc_profile_clock() {{\n"
        "  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(\n"
        "      std::chrono::steady_clock::now().time_since_epoch()).count());\n"
        "}}\n\n"
        "}}  // namespace\n\n"
        "extern \"C\" int {2}_profile(const {2}_context* ctx, const char* const** nodes, const uint64_t** ns,\n"
        "                          uint64_t* runs) {{\n"
        "  if (ctx == nullptr) return -1;\n"
        "  if (nodes != nullptr) *nodes = kProfileNodes;\n"
        "  if (ns != nullptr) *ns = ctx->profile_ns;\n"
        "  if (runs != nullptr) *runs = ctx->profile_runs;\n"
        "  return {3};\n"
        "}}",
        profile_slots(), labels, spec_.name, profile_labels_.size());
  }

  std::string runner() const {
    RunnerTables tables = runner_tables(uname_, spec_.graph);
    bool has_file = !embedded() && spec_.weights.total_bytes > 0;
    return render_template(
        "cpp/runner_main.cpp.in",
        {{"BANNER", spec_.banner},
         {"NAME", spec_.name},
         {"UNAME", uname_},
         {"TENSOR_TABLES", tables.definitions},
         {"INPUTS_TABLE", tables.inputs},
         {"OUTPUTS_TABLE", tables.outputs},
         {"EMBEDDED_WEIGHTS", embedded() ? spec_.name + "_weights" : "nullptr"},
         {"PROFILE_FN", spec_.profile ? fmt::format("\nint profile(const void* ctx, const char* const** nodes, const uint64_t** ns, uint64_t* runs) {{\n"
                                                    "  return {0}_profile(static_cast<const {0}_context*>(ctx), nodes, ns, runs);\n}}\n",
                                                    spec_.name)
                                      : ""},
         {"PROFILE", spec_.profile ? "profile" : "nullptr"},
         {"BUCKETS", runner_buckets(spec_)},
         {"WEIGHTS_FILE", has_file ? c_string_literal(spec_.weights_file) : "nullptr"}});
  }

  const ModuleSpec& spec_;
  const TargetFacts& facts_;
  std::string uname_;
  Scope top_;                     ///< The schedule's graph.
  int loop_counter_ = 0;          ///< Names the variables of each Loop apart.
  const Scope* scope_ = nullptr;  ///< The graph whose nodes are being emitted.
  CodeWriter kernels_;
  CodeWriter run_;  ///< The body of the schedule being emitted.
  std::string label_;  ///< The --profile label prefix of the schedule being emitted.
  std::string run_body_;   ///< The body of <name>_run.
  std::string schedules_;  ///< A bucketed package's schedule functions ("" otherwise).
  std::map<std::string, std::string> function_by_text_;  ///< Signature + body -> function name.
  std::vector<std::string> profile_labels_;  ///< --profile: "node (Op)" per timed kernel call.
  std::set<std::string> function_names_;
};

}  // namespace

Expected<EmittedModule> emit_cpp_module(const ModuleSpec& spec, const TargetFacts& facts) {
  return CppModuleEmitter(spec, facts).emit();
}

std::string c_string_literal(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f || c == '?') {  // '?' could start a trigraph
      out += fmt::format("\\{:03o}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

Status write_embedded_bytes(std::ostream& os, const std::string& banner, const std::string& symbol,
                            const std::vector<uint8_t>& bytes) {
  // Each byte's spelling inside a string literal. Octal escapes always take three digits, so a
  // digit that follows one is never read as part of it (hex escapes have no such limit).
  static const std::array<std::string, 256> spelling = [] {
    std::array<std::string, 256> t;
    for (int c = 0; c < 256; ++c) {
      bool plain = c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '?';
      t[c] = plain ? std::string(1, static_cast<char>(c)) : fmt::format("\\{:03o}", c);
    }
    return t;
  }();
  os << "// " << banner << "\n//\n// The weights (" << bytes.size()
     << " bytes), compiled into the library by --embed-weights.\n\n"
     << "extern \"C\" {\n\n// One more byte than the weights: the string literal's terminator.\n"
     << "alignas(64) extern const unsigned char " << symbol << "[" << bytes.size() + 1 << "] =\n";
  constexpr size_t kBytesPerLine = 64;
  std::string chunk;
  chunk.reserve(1 << 20);
  for (size_t i = 0; i < bytes.size(); i += kBytesPerLine) {
    chunk += "    \"";
    size_t end = std::min(bytes.size(), i + kBytesPerLine);
    for (size_t k = i; k < end; ++k) chunk += spelling[bytes[k]];
    chunk += "\"\n";
    if (chunk.size() > (1 << 20) - 512) {
      os.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      chunk.clear();
    }
  }
  if (bytes.empty()) chunk += "    \"\"\n";
  chunk += ";\n\n}  // extern \"C\"\n";
  os.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
  return os ? Status::ok() : Status::error(ErrorKind::kIo, "cannot write the embedded weights");
}

}  // namespace aotc::codegen
