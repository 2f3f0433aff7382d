#pragma once
/// Tuning records: which parameters won, kernel by kernel, when `aotc tune` timed the candidates
/// of a model's kernels on one machine (docs/tuning.md). `aotc compile --tuning FILE` gives them
/// to the target, whose kernel emitters then take the recorded winner instead of the cost
/// model's choice; a kernel without a record keeps the cost model's. The parameters change
/// speed only, never values beyond the order of a sum.
///
/// A record applies where its machine signature matches the compiling target's (the same CPU,
/// ISA extensions, caches, kernel class and aotc version): a file tuned elsewhere is read, and
/// warned about, but not used. Records are keyed by kernel: the op, its operand types and
/// layouts, attributes and fused epilogue (kernel_key), and the thread count, so that a file
/// tuned on one model serves every model that has the same kernels.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "graph/graph.h"
#include "graph/status.h"

namespace aotc {

struct TargetFacts;

/// What must be the same for a record to apply: the target whose kernels were timed (the class
/// `host` resolved to), the CPU as the target's facts name it, its ISA extensions and caches,
/// and the version of aotc (whose kernels the parameters steer).
struct MachineSignature {
  std::string aotc_version;
  std::string kernels;  ///< The class of kernels: "x86-64-avx512", "x86-64-avx2", ...
  std::string cpu;
  std::string isa;
  int64_t l1_bytes = 0, l2_bytes = 0, l3_bytes = 0;

  bool operator==(const MachineSignature&) const = default;
  /// One line: "AMD EPYC (...), x86-64-avx512 kernels, L1 32 KiB / L2 1 MiB / L3 32 MiB, aotc 0.1.0".
  std::string describe() const;
};

/// The JSON object of a signature, as tuning files hold it.
nlohmann::json signature_json(const MachineSignature& signature);

/// The signature of the machine a target's facts describe: its kernels' class (the name of the
/// SIMD instruction set's target, so that `host` and the named class it resolves to share it)
/// and the CPU; for a chip class, which names no CPU, the CPU of the machine running aotc (where
/// its kernels are tuned and its records used).
MachineSignature machine_signature(const TargetFacts& facts);

/// One candidate's time.
struct TunedCandidate {
  std::string params;  ///< KernelParams text; "" is the cost model's own choice.
  double ms = 0;       ///< Median of the rounds' medians.
};

struct TuningRecord {
  std::string kernel;  ///< kernel_key
  int threads = 1;
  std::string params;  ///< The winner ("" when the cost model's choice won).
  double ms = 0;       ///< The winner's time.
  double cost_model_ms = 0;  ///< The cost model's choice's time.
  std::vector<TunedCandidate> candidates;  ///< Every candidate timed, the cost model's first.
};

/// The records of one tuning file, for one or more machines.
class TuningRecords {
 public:
  struct Machine {
    MachineSignature signature;
    /// Facts `aotc tune` measured there (e.g. "fma_gflops_512": 116.2), for the reader.
    std::map<std::string, double> measured;
    std::map<std::pair<std::string, int>, TuningRecord> records;  ///< by (kernel, threads)
  };

  /// Reads a file written by save(). Errors are one line naming the file: unreadable, not JSON
  /// (with the line and column), not a tuning file, or a record that is malformed.
  static Expected<TuningRecords> load(const std::string& path);
  /// Writes the records, machines and kernels in a fixed order (the same records give the same
  /// bytes).
  Status save(const std::string& path) const;

  /// The records measured on the machine `signature` describes (nullptr when none were).
  const Machine* machine(const MachineSignature& signature) const;
  Machine& machine_for(const MachineSignature& signature);
  const std::vector<Machine>& machines() const { return machines_; }
  size_t size() const;

 private:
  std::vector<Machine> machines_;
};

/// The records of one machine that a target's kernels read (TargetFacts::tuning).
struct KernelTuning {
  std::string source;  ///< The file they came from, for messages.
  std::map<std::pair<std::string, int>, TuningRecord> records;
  const TuningRecord* find(const std::string& kernel, int threads) const;
};

/// The records of the tuning file `path` measured on the machine `facts` describe, for
/// TargetFacts::tuning. When the file has none from this machine (another CPU, another aotc
/// version), nullptr and a warning in *warnings naming the file, this machine and the file's.
/// Errors: the file cannot be read or is not a tuning file (TuningRecords::load).
Expected<std::shared_ptr<const KernelTuning>> load_kernel_tuning(const std::string& path, const TargetFacts& facts,
                                                                  std::vector<std::string>* warnings);

/// The key of the kernel computing `node` of a final graph (a Fused node stands for its anchor
/// and epilogue): the op and its attributes, each operand's type and layout (constants marked),
/// the epilogue's ops with their operands, and the result's type ("shared const" for a constant
/// other nodes read too, which kernels read unpacked), e.g.
///   Conv(f32[1x64x56x56]{NCHW8c}, const f32[64x64x3x3], const f32[64]) dilations=[1, 1]
///   group=1 kernel_shape=[3, 3] pads=[1, 1, 1, 1] strides=[1, 1] -> f32[1x64x56x56]{NCHW8c}
///   then Relu
/// `type_of` overrides the types read from the values (the layout pass asks what a kernel's key
/// would be with another layout).
std::string kernel_key(const Node& node,
                       const std::function<TensorType(const Value*)>& type_of = nullptr);

}  // namespace aotc
