#pragma once
/// Sequence and optional values (ONNX's seq(...) and optional(...) types) in the frontend.
///
/// aotc's IR holds tensors with static shapes only (DESIGN.md §2: a TensorType on every Value),
/// and a sequence is a list of tensors whose length and element shapes are data. aotc compiles
/// the sequences and optionals whose *structure* is known at compile time, which is what models
/// use them for (a list of a fixed number of heads, a split, an optional input that is there):
/// a sequence is the list of its elements, each a tensor value of the graph, and an optional is
/// its value or "none". The ops that build and take them apart run in the graph converter and
/// leave only tensor ops behind:
///   SequenceConstruct, SequenceEmpty, SequenceInsert, SequenceErase, SequenceAt and
///   SequenceLength (positions known at compile time), SplitToSequence (core Split, and Reshape
///   for keepdims = 0), ConcatFromSequence (core Concat, after a Reshape for new_axis),
///   SequenceMap (its body inlined once per element), Optional, OptionalHasElement (a constant),
///   OptionalGetElement, and Identity of either.
/// An If with a sequence or optional result is compiled when its condition is known; a Loop that
/// carries one is unrolled when its trip count is (frontend/control_flow.h). Graph inputs of
/// these types are bound at compile time (--const-input NAME=FILE.pb holding a SequenceProto or
/// an OptionalProto); a graph output becomes one package output per tensor it holds, named
/// NAME.0, NAME.1, ... for a sequence.
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "frontend/function_inliner.h"
#include "graph/dtype.h"
#include "graph/status.h"

namespace aotc::frontend {

class GraphConverter;

/// A sequence or optional whose structure is known at compile time.
struct StaticValue {
  enum class Kind { kSequence, kOptional };
  Kind kind = Kind::kSequence;
  /// Graph value names: a sequence's elements in order; an optional's tensor, or the elements of
  /// the sequence it holds.
  std::vector<std::string> elements;
  bool present = true;          ///< An optional that holds a value.
  bool holds_sequence = false;  ///< An optional of a sequence.
  DType element_dtype = DType::kFloat32;  ///< For an empty sequence or a "none".
};

/// "a sequence of 3 tensors", "an optional tensor", "an empty optional", for messages.
std::string describe(const StaticValue& v);

/// Whether the converter handles the node with the rules above (its op takes or makes sequences
/// or optionals).
bool is_static_value_op(const FlatNode& node);

/// Converts one such node: binds its outputs (static values or tensors) in `gc`.
Status convert_static_value_op(GraphConverter& gc, const FlatNode& node);

/// The static value a TypeProto describes with no elements: an empty sequence or a "none", for
/// Optional's `type` attribute and SequenceEmpty.
Expected<StaticValue> empty_static_value(const onnx::TypeProto& type);

/// Binds graph input `name` of sequence or optional type to the value in a serialized
/// SequenceProto or OptionalProto file (its tensors become constants).
Status bind_static_input(GraphConverter& gc, const onnx::ValueInfoProto& input, const std::string& path);

}  // namespace aotc::frontend
