#include "codegen/device/device_module.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "codegen/cpp/cpp_emitter.h"
#include "codegen/package_api.h"
#include "codegen/package_writer.h"

namespace aotc::codegen {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}


int count_lines(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

/// "f32[2x3], f32[3] -> f32[2x3]" for comments.
std::string signature(const Node& n) {
  auto describe = [](const Value* v) {
    return v ? v->type().to_string() : std::string("(absent)");
  };
  std::string ins, outs;
  for (const Value* v : n.inputs()) ins += (ins.empty() ? "" : ", ") + describe(v);
  for (const Value* v : n.outputs()) outs += (outs.empty() ? "" : ", ") + describe(v);
  return ins + " -> " + outs;
}

class DeviceModuleBuilder {
 public:
  DeviceModuleBuilder(const ModuleSpec& spec, const KernelDialect& d, const TargetFacts& facts)
      : spec_(spec), d_(d), facts_(facts) {}

  Expected<DeviceModule> build() {
    m_.buffer_bytes[static_cast<int>(DeviceBuffer::kWeights)] = spec_.weights.total_bytes;
    if (spec_.buckets.empty()) {
      AOTC_RETURN_IF_ERROR(build_schedule(spec_.graph, spec_.arena));
    } else {
      for (const BucketSchedule& b : spec_.buckets) AOTC_RETURN_IF_ERROR(build_schedule(b.graph, b.arena));
    }
    size_t launches = 0;
    for (const DeviceModule::Schedule& s : m_.schedules) launches += s.launches.size();

    std::string head = fmt::format(
        "// {}\n//\n// The {} kernels of the model `{}`: {} distinct kernels for {} launches{}.\n"
        "// Shapes, strides and tile sizes are constants; each buffer argument points at its\n"
        "// tensor's first element.\n\n",
        spec_.banner, d_.language(), spec_.name, m_.kernels.size(), launches,
        m_.schedules.size() > 1 ? fmt::format(" in {} schedules", m_.schedules.size()) : "");
    head += d_.prelude(dtypes_);
    if (!head.empty() && head.back() != '\n') head += '\n';
    int offset = count_lines(head);
    for (auto& k : m_.kernels) k.line += offset;
    m_.source = head + body_;
    return std::move(m_);
  }

 private:
  /// The launches of one schedule (graph and arena plan); the buffers grow to hold it.
  Status build_schedule(const Graph& g, const ArenaPlan& arena) {
    placement_.emplace(g, arena, spec_.weights, facts_.alignment);
    m_.schedules.emplace_back();
    schedule_ = &m_.schedules.back();
    schedule_->inputs = placement_->inputs();
    int64_t& io_bytes = m_.buffer_bytes[static_cast<int>(DeviceBuffer::kIo)];
    io_bytes = std::max(io_bytes, placement_->io_bytes());
    int64_t& arena_bytes = m_.buffer_bytes[static_cast<int>(DeviceBuffer::kArena)];
    arena_bytes = std::max(arena_bytes, arena.arena_bytes);
    for (const Node* n : g.nodes()) {
      if (n->num_outputs() == 1 && arena.views.count(n->output(0))) continue;  // no code
      auto kernels = emit_device_kernels(*n, d_, facts_);
      if (!kernels.has_value()) return kernels.status().with_context(n->describe());
      for (auto& k : *kernels) AOTC_RETURN_IF_ERROR(add_launch(*n, *k));
    }
    schedule_->outputs = placement_->outputs();
    return Status::ok();
  }

  Status add_launch(const Node& n, const KernelText& k) {
    // The signature and body without the name decide whether the kernel exists already.
    std::vector<std::string> params, prologue;
    std::vector<DeviceSpan> spans;
    for (const KernelArg& a : k.args) {
      AOTC_INTERNAL_ASSERT(a.value, "{}: kernel argument '{}' has no value", n.describe(), a.name);
      DeviceSpan span = placement_->span_of(*a.value);
      const int64_t skip = a.element_offset * dtype_size(a.element_type());
      span.offset += skip;
      span.bytes -= skip;
      spans.push_back(span);
    }
    for (size_t i = 0; i < k.args.size(); ++i) {
      const KernelArg& a = k.args[i];
      DType t = a.element_type();
      dtypes_.insert(t);
      if (t == DType::kFloat64) m_.needs_fp64 = true;
      // An output written over an input (in-place reuse of the arena) shares its bytes.
      bool exclusive = true;
      for (size_t j = 0; j < k.args.size(); ++j) {
        if (j == i || !(a.writable || k.args[j].writable)) continue;
        const DeviceSpan& p = spans[i];
        const DeviceSpan& q = spans[j];
        if (p.buffer == q.buffer && p.offset < q.offset + q.bytes && q.offset < p.offset + p.bytes)
          exclusive = false;
      }
      for (std::string& p : d_.buffer_params(a.name, t, a.writable, exclusive))
        params.push_back(std::move(p));
      for (std::string& p : d_.buffer_prologue(a.name, t, a.writable, exclusive))
        prologue.push_back(std::move(p));
    }
    std::string param_list;
    for (size_t i = 0; i < params.size(); ++i) param_list += (i ? ", " : "") + params[i];
    std::string key = fmt::format("{}\n{}\n{}", k.launch.group_items(), param_list, k.body.str());
    auto [it, inserted] = kernel_by_text_.emplace(key, static_cast<int>(m_.kernels.size()));
    if (inserted) {
      for (const auto& [name, text] : k.helpers) {
        if (helpers_.insert(name).second) {
          std::string qualified = qualify_helper(text, d_.helper_qualifier());
          body_ += qualified + (qualified.ends_with("\n") ? "\n" : "\n\n");
        }
      }
      DeviceModule::Kernel kernel;
      kernel.name = fmt::format("k{}_{}_{}", m_.kernels.size(), lower(n.op()), k.what);
      kernel.local_bytes = k.local_bytes;
      CodeWriter w;
      w.line("// {}: {}", n.op(), signature(n));
      kernel.line = count_lines(body_) + count_lines(w.str()) + 1;
      std::string head =
          fmt::format("{} {}(", d_.kernel_prefix(k.launch.group_items()), kernel.name);
      if (head.size() + param_list.size() + 3 <= 100) {
        w.raw_line(head + param_list + ") {");
      } else {  // One parameter per line, aligned after the parenthesis.
        std::string pad(head.size(), ' ');
        std::string joined;
        for (size_t i = 0; i < params.size(); ++i) joined += (i ? ",\n" + pad : "") + params[i];
        w.raw_line(head + joined + ") {");
      }
      w.indent();
      for (const std::string& line : prologue) w.raw_line(line);
      w.dedent();
      w.append(k.body.str());
      w.line("}}");
      w.blank();
      body_ += w.str();
      m_.kernels.push_back(std::move(kernel));
    }
    DeviceModule::Launch launch;
    launch.kernel = it->second;
    launch.node = &n;
    launch.size = k.launch;
    launch.args = std::move(spans);
    schedule_->launches.push_back(std::move(launch));
    return Status::ok();
  }

  const ModuleSpec& spec_;
  const KernelDialect& d_;
  const TargetFacts& facts_;
  DeviceModule m_;
  /// The schedule being built and the placement of its tensors.
  DeviceModule::Schedule* schedule_ = nullptr;
  std::optional<DevicePlacement> placement_;
  std::map<std::string, int> kernel_by_text_;
  std::set<std::string> helpers_;
  std::set<DType> dtypes_;
  std::string body_;
};

const char* buffer_macro(DeviceBuffer b) {
  switch (b) {
    case DeviceBuffer::kArena:
      return "AOTC_DEVICE_ARENA";
    case DeviceBuffer::kWeights:
      return "AOTC_DEVICE_WEIGHTS";
    case DeviceBuffer::kIo:
      return "AOTC_DEVICE_IO";
  }
  return "?";
}

std::string span_row(const DeviceSpan& s) {
  return fmt::format("{{{}, {}u, {}u}}", buffer_macro(s.buffer), s.offset, s.bytes);
}

}  // namespace

Expected<DeviceModule> build_device_module(const ModuleSpec& spec, const KernelDialect& dialect,
                                           const TargetFacts& facts) {
  return DeviceModuleBuilder(spec, dialect, facts).build();
}

std::string render_device_tables(const DeviceModule& m, const ModuleSpec& spec,
                                 const std::string& symbol, const std::string& source_symbol,
                                 const std::string& source_file) {
  CodeWriter w;
  if (!source_symbol.empty()) {
    w.line("// The kernel source, {}, compiled into the library as a string by the build.",
           source_file);
    w.line("extern \"C\" const char {}[];", source_symbol);
    w.blank();
  }
  w.line("namespace {{");
  w.blank();
  auto table = [&](const std::string& type, const std::string& name,
                   const std::vector<std::string>& rows,
                   const std::vector<std::string>& comments = {}) {
    if (rows.empty()) return std::string("nullptr");
    w.line("const {} {}[] = {{", type, name);
    w.indent();
    for (size_t i = 0; i < rows.size(); ++i) {
      if (i < comments.size() && !comments[i].empty()) w.raw_line(comments[i]);
      w.raw_line(rows[i] + ",");
    }
    w.dedent();
    w.line("}};");
    w.blank();
    return name;
  };
  std::vector<std::string> rows;
  for (const auto& k : m.kernels) rows.push_back(fmt::format("{{\"{}\", {}}}", k.name, k.line));
  std::string kernels = table("aotc_device_kernel", "kKernels", rows);

  std::vector<std::string> schedule_rows;
  for (size_t k = 0; k < m.schedules.size(); ++k) {
    const DeviceModule::Schedule& sch = m.schedules[k];
    // A package of one size keeps the plain names; a bucketed one numbers its schedules.
    const std::string suffix = m.schedules.size() > 1 ? std::to_string(k) : "";
    rows.clear();
    std::vector<std::string> comments;
    std::vector<std::string> launch_rows, launch_comments;
    int arg = 0;
    for (const auto& l : sch.launches) {
      const LaunchSize& s = l.size;
      launch_comments.push_back(
          fmt::format("// node '{}' ({})", comment_text(l.node->name()), l.node->op()));
      launch_rows.push_back(fmt::format("{{{}, {}, {{{}u, {}u, {}u}}, {{{}u, {}u, {}u}}, {}, {}}}",
                                        l.kernel, c_string_literal(l.node->name()), s.global[0],
                                        s.global[1], s.global[2], s.local[0], s.local[1], s.local[2],
                                        arg, l.args.size()));
      for (size_t i = 0; i < l.args.size(); ++i) {
        comments.push_back(i == 0 ? fmt::format("// launch {}: {}", &l - sch.launches.data(),
                                                m.kernels[l.kernel].name)
                                  : "");
        rows.push_back(span_row(l.args[i]));
      }
      arg += static_cast<int>(l.args.size());
    }
    std::string args = table("aotc_device_span", "kArgs" + suffix, rows, comments);
    std::string launches = table("aotc_device_launch", "kLaunches" + suffix, launch_rows, launch_comments);
    rows.clear();
    for (const auto& s : sch.inputs) rows.push_back(span_row(s));
    std::string inputs = table("aotc_device_span", "kInputs" + suffix, rows);
    rows.clear();
    for (const auto& s : sch.outputs) rows.push_back(span_row(s));
    std::string outputs = table("aotc_device_span", "kOutputs" + suffix, rows);
    schedule_rows.push_back(fmt::format("{{{}, {}, {}, {}, {}, {}, {}}}", sch.launches.size(), launches,
                                        args, sch.inputs.size(), inputs, sch.outputs.size(), outputs));
  }
  std::string schedules = table("aotc_device_schedule", "kSchedules", schedule_rows);

  w.line("const aotc_device_module {} = {{", symbol);
  w.indent();
  w.line("\"{}\",", spec.name);
  w.line("{},", c_string_literal(source_file));
  w.line("{},", source_symbol.empty() ? "nullptr" : source_symbol);
  w.line("{{{}u, {}u, {}u}},  // arena, weights, io bytes", m.buffer_bytes[0], m.buffer_bytes[1],
         m.buffer_bytes[2]);
  w.line("{},  // needs fp64", m.needs_fp64 ? 1 : 0);
  w.line("{}, {},", m.kernels.size(), kernels);
  w.line("{}, {},", m.schedules.size(), schedules);
  w.dedent();
  w.line("}};");
  w.blank();
  w.line("}}  // namespace");
  return w.str();
}

DeviceHostParts device_host_parts(const ModuleSpec& spec, const std::string& run_fn,
                                  int64_t alignment) {
  DeviceHostParts p;
  if (spec.buckets.empty()) {
    p.run_body = fmt::format("  return {}(ctx->device, 0, inputs, outputs);\n", run_fn);
    return p;
  }
  // The host arena holds only the dispatcher's staging copies: activations live on the device.
  const BucketStaging staging = plan_bucket_staging(spec, 0, alignment);
  p.arena_bytes = staging.end;
  std::string largest;
  for (int64_t v : spec.buckets.back().sizes) largest += (largest.empty() ? "" : ", ") + std::to_string(v);
  p.run_body = fmt::format(
      "  // The run at the largest sizes.\n  static const int64_t kLargest[] = {{{}}};\n"
      "  return {}_run_dims(ctx, kLargest, inputs, outputs);\n",
      largest, spec.name);
  p.dispatch = fmt::format(
      "\nnamespace {{\n\n"
      "// Runs schedule k for the dispatcher (runtime_stub/aotc_buckets.h).\n"
      "aotc_status run_schedule(const void* context, int schedule, const void* const* inputs,\n"
      "                         void* const* outputs) {{\n"
      "  const {0}_context* const ctx = static_cast<const {0}_context*>(context);\n"
      "  if (ctx->device == nullptr) return AOTC_ERR_NULL_ARGUMENT;\n"
      "  return {1}(ctx->device, schedule, inputs, outputs);\n"
      "}}\n\n"
      "}}  // namespace\n",
      spec.name, run_fn);
  p.dispatch += bucket_dispatch_source(spec, staging, "run_schedule", "ctx->staging");
  p.header = bucket_header(spec);
  return p;
}

}  // namespace aotc::codegen
