#include "targets/tuning.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "graph/ir_text.h"
#include "graph/ops/fused.h"
#include "targets/target.h"

namespace aotc {
namespace {

using nlohmann::json;

/// The format written by save(); load() refuses others.
constexpr const char* kFormat = "aotc-tuning-1";

std::string bytes_text(int64_t b) {
  if (b <= 0) return "?";
  if (b % (1024 * 1024) == 0) return fmt::format("{} MiB", b / (1024 * 1024));
  if (b % 1024 == 0) return fmt::format("{} KiB", b / 1024);
  return fmt::format("{} B", b);
}

Status file_error(const std::string& path, const std::string& what) {
  return Status::error(ErrorKind::kInvalidModel, fmt::format("{}: {}", path, what));
}

}  // namespace

json signature_json(const MachineSignature& s) {
  return json{{"aotc", s.aotc_version}, {"kernels", s.kernels}, {"cpu", s.cpu}, {"isa", s.isa},
              {"l1_bytes", s.l1_bytes}, {"l2_bytes", s.l2_bytes}, {"l3_bytes", s.l3_bytes}};
}

namespace {

/// The value of `key` in object `j` as T; throws json::exception (caught by load) naming it.
template <typename T>
T field(const json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key))
    throw std::runtime_error(fmt::format("{} has no \"{}\"", where, key));
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    throw std::runtime_error(fmt::format("\"{}\" of {} has the wrong type", key, where));
  }
}

}  // namespace

std::string MachineSignature::describe() const {
  return fmt::format("{}, {} kernels, ISA {}, L1 {} / L2 {} / L3 {}, aotc {}", cpu.empty() ? "(no CPU named)" : cpu,
                     kernels, isa.empty() ? "(none)" : isa, bytes_text(l1_bytes), bytes_text(l2_bytes),
                     bytes_text(l3_bytes), aotc_version);
}

MachineSignature machine_signature(const TargetFacts& facts) {
  MachineSignature s;
  s.aotc_version = AOTC_VERSION;
  s.kernels = facts.simd == "avx512" ? "x86-64-avx512" : facts.simd == "avx2" ? "x86-64-avx2" : facts.name;
  // A chip class names no CPU: its kernels are timed, and their records used, on the machine
  // running aotc, whose facts the host target has.
  const TargetFacts* machine = &facts;
  if (facts.cpu.empty())
    if (const Target* host = TargetRegistry::instance().find("host")) machine = &host->facts();
  s.cpu = machine->cpu;
  for (const std::string& e : machine->isa) s.isa += (s.isa.empty() ? "" : " ") + e;
  s.l1_bytes = machine->l1_bytes;
  s.l2_bytes = machine->l2_bytes;
  s.l3_bytes = machine->l3_bytes;
  return s;
}

Expected<TuningRecords> TuningRecords::load(const std::string& path) {
  std::ifstream is(path, std::ios::binary);
  if (!is) return Status::error(ErrorKind::kIo, fmt::format("{}: cannot open the tuning file", path));
  std::ostringstream text;
  text << is.rdbuf();
  json doc;
  try {
    doc = json::parse(text.str());
  } catch (const json::parse_error& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 3, column 5: ...".
    std::string what = e.what();
    if (auto at = what.find("] "); at != std::string::npos) what = what.substr(at + 2);
    return file_error(path, "not a tuning file: " + what);
  }
  TuningRecords out;
  try {
    if (!doc.is_object() || !doc.contains("format") || !doc["format"].is_string())
      throw std::runtime_error("not a tuning file (no \"format\": \"" + std::string(kFormat) + "\")");
    const std::string format = doc["format"].get<std::string>();
    if (format != kFormat)
      throw std::runtime_error(fmt::format("format \"{}\", this aotc reads \"{}\"", format, kFormat));
    const json& machines = doc.contains("machines") ? doc["machines"] : json();
    if (!machines.is_array()) throw std::runtime_error("\"machines\" is not a list");
    for (size_t m = 0; m < machines.size(); ++m) {
      const std::string where = fmt::format("machine {}", m + 1);
      const json& jm = machines[m];
      const json sig = field<json>(jm, "signature", where);
      Machine machine;
      machine.signature.aotc_version = field<std::string>(sig, "aotc", where + "'s signature");
      machine.signature.kernels = field<std::string>(sig, "kernels", where + "'s signature");
      machine.signature.cpu = field<std::string>(sig, "cpu", where + "'s signature");
      machine.signature.isa = field<std::string>(sig, "isa", where + "'s signature");
      machine.signature.l1_bytes = field<int64_t>(sig, "l1_bytes", where + "'s signature");
      machine.signature.l2_bytes = field<int64_t>(sig, "l2_bytes", where + "'s signature");
      machine.signature.l3_bytes = field<int64_t>(sig, "l3_bytes", where + "'s signature");
      if (jm.contains("measured")) machine.measured = field<std::map<std::string, double>>(jm, "measured", where);
      const json kernels = field<json>(jm, "kernels", where);
      if (!kernels.is_array()) throw std::runtime_error(where + ": \"kernels\" is not a list");
      for (size_t k = 0; k < kernels.size(); ++k) {
        const std::string at = fmt::format("{}, kernel record {}", where, k + 1);
        const json& jr = kernels[k];
        TuningRecord r;
        r.kernel = field<std::string>(jr, "kernel", at);
        r.threads = field<int>(jr, "threads", at);
        r.params = field<std::string>(jr, "params", at);
        r.ms = field<double>(jr, "ms", at);
        r.cost_model_ms = field<double>(jr, "cost_model_ms", at);
        if (r.threads < 1 || r.ms < 0 || r.cost_model_ms < 0)
          throw std::runtime_error(at + ": threads below 1 or a negative time");
        if (jr.contains("candidates")) {
          for (const json& jc : field<json>(jr, "candidates", at))
            r.candidates.push_back({field<std::string>(jc, "params", at + "'s candidate"),
                                    field<double>(jc, "ms", at + "'s candidate")});
        }
        auto key = std::make_pair(r.kernel, r.threads);
        if (machine.records.count(key))
          throw std::runtime_error(fmt::format("{}: a second record for the same kernel at {} threads", at, r.threads));
        machine.records.emplace(std::move(key), std::move(r));
      }
      if (out.machine(machine.signature))
        throw std::runtime_error(fmt::format("{} has the signature of an earlier one", where));
      out.machines_.push_back(std::move(machine));
    }
  } catch (const std::exception& e) {
    return file_error(path, e.what());
  }
  return out;
}

Status TuningRecords::save(const std::string& path) const {
  // Machines as they came (a file keeps its order); kernels by key, then threads (std::map).
  json machines = json::array();
  for (const Machine& m : machines_) {
    json kernels = json::array();
    for (const auto& [key, r] : m.records) {
      json candidates = json::array();
      for (const TunedCandidate& c : r.candidates) candidates.push_back(json{{"params", c.params}, {"ms", c.ms}});
      kernels.push_back(json{{"kernel", r.kernel},
                             {"threads", r.threads},
                             {"params", r.params},
                             {"ms", r.ms},
                             {"cost_model_ms", r.cost_model_ms},
                             {"candidates", candidates}});
    }
    json jm{{"signature", signature_json(m.signature)}, {"kernels", kernels}};
    if (!m.measured.empty()) jm["measured"] = m.measured;
    machines.push_back(std::move(jm));
  }
  const json doc{{"format", kFormat}, {"machines", machines}};
  const std::string tmp = path + ".tmp";
  {
    std::ofstream os(tmp, std::ios::binary | std::ios::trunc);
    if (!os) return Status::error(ErrorKind::kIo, fmt::format("{}: cannot write the tuning file", path));
    os << doc.dump(1) << "\n";
    if (!os.flush()) return Status::error(ErrorKind::kIo, fmt::format("{}: cannot write the tuning file", path));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Status::error(ErrorKind::kIo, fmt::format("{}: cannot write the tuning file: {}", path, ec.message()));
  return Status::ok();
}

const TuningRecords::Machine* TuningRecords::machine(const MachineSignature& signature) const {
  for (const Machine& m : machines_)
    if (m.signature == signature) return &m;
  return nullptr;
}

TuningRecords::Machine& TuningRecords::machine_for(const MachineSignature& signature) {
  for (Machine& m : machines_)
    if (m.signature == signature) return m;
  machines_.push_back(Machine{signature, {}, {}});
  return machines_.back();
}

size_t TuningRecords::size() const {
  size_t n = 0;
  for (const Machine& m : machines_) n += m.records.size();
  return n;
}

const TuningRecord* KernelTuning::find(const std::string& kernel, int threads) const {
  auto it = records.find({kernel, threads});
  return it == records.end() ? nullptr : &it->second;
}

Expected<std::shared_ptr<const KernelTuning>> load_kernel_tuning(const std::string& path, const TargetFacts& facts,
                                                                  std::vector<std::string>* warnings) {
  AOTC_ASSIGN_OR_RETURN(TuningRecords file, TuningRecords::load(path));
  const MachineSignature here = machine_signature(facts);
  const TuningRecords::Machine* machine = file.machine(here);
  if (!machine) {
    std::string theirs;
    for (const TuningRecords::Machine& m : file.machines())
      theirs += fmt::format("{}{}", theirs.empty() ? "" : "; ", m.signature.describe());
    warnings->push_back(fmt::format(
        "{}: no records measured on this machine ({}); the file's are from: {}. Compiling with the cost model "
        "alone (tune here with `aotc tune`)",
        path, here.describe(), theirs.empty() ? "no machine" : theirs));
    return std::shared_ptr<const KernelTuning>();
  }
  auto tuning = std::make_shared<KernelTuning>();
  tuning->source = path;
  tuning->records = machine->records;
  return std::shared_ptr<const KernelTuning>(std::move(tuning));
}

std::string kernel_key(const Node& node, const std::function<TensorType(const Value*)>& type_of) {
  auto type = [&](const Value* v) {
    if (!v) return std::string("_");
    const std::string t = print_type(type_of ? type_of(v) : v->type());
    // A constant other nodes read too stays unpacked (codegen's packed_weight): another kernel.
    if (v->is_constant()) return (v->uses().size() > 1 ? "shared const " : "const ") + t;
    return t;
  };
  // Attributes as given, but those that say what their absence says (ONNX's defaults of the
  // window ops: group 1, unit strides and dilations, no pads; kernel_shape, which the weights
  // give), so that exporters that write them and those that do not give the same key.
  auto attributes = [](const Node& n) {
    std::string out;
    for (const auto& [name, value] : n.attrs().all()) {
      if (name == "body" || name == "kernel_shape") continue;
      const std::string text = print_attribute(value);
      if ((name == "group" && text == "1") || (name == "auto_pad" && text == "\"NOTSET\"")) continue;
      if (name == "strides" || name == "dilations" || name == "pads") {
        const std::vector<int64_t> v = n.attrs().get_ints(name);
        const int64_t identity = name == "pads" ? 0 : 1;
        if (std::all_of(v.begin(), v.end(), [&](int64_t x) { return x == identity; })) continue;
      }
      out += fmt::format(" {}={}", name, text);
    }
    return out;
  };
  const Node* anchor = &node;
  std::vector<const Value*> operands(node.inputs().begin(), node.inputs().end());
  Expected<FusedBody> body = node.op() == kFusedOp ? fused_body(node) : Expected<FusedBody>(FusedBody{});
  std::map<const Value*, const Value*> outer;  // body input -> the node's operand
  if (body.has_value() && body->graph) {
    const auto& params = body->graph->inputs();
    for (size_t i = 0; i < params.size(); ++i) outer[params[i]] = node.input(static_cast<int>(i));
    if (body->anchor) {
      anchor = body->anchor;
      operands.clear();
      for (const Value* v : anchor->inputs()) operands.push_back(v ? outer.at(v) : nullptr);
    }
  }
  std::string key = anchor->op() + "(";
  for (size_t i = 0; i < operands.size(); ++i) key += (i ? ", " : "") + type(operands[i]);
  key += ")" + attributes(*anchor) + " -> " + type(node.output(0));
  if (body.has_value() && body->graph) {
    // The epilogue, or an elementwise body: each node with the operands it reads beyond the
    // value flowing through ("v").
    std::string chain;
    for (const Node* n : body->elementwise) {
      std::string args;
      for (const Value* v : n->inputs()) {
        auto it = outer.find(v);
        args += (args.empty() ? "" : ", ") + (it == outer.end() ? std::string("v") : type(it->second));
      }
      chain += fmt::format("{}{}({}){}", chain.empty() ? "" : ", ", n->op(), args, attributes(*n));
    }
    if (!chain.empty()) key += " then " + chain;
  }
  return key;
}

}  // namespace aotc
