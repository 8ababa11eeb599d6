// Op schemas: for (domain, op, since_version), the arity and the type and
// shape inference function. The list of every ONNX op version, even those
// without a schema here, comes from op_versions.h (generated from the spec),
// so an op that ONNX defines but Switchyard lacks is "not implemented",
// while an op ONNX does not define is "unknown".
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/graph.h"
#include "switchyard/status.h"

namespace sy {

// What an inference function sees of one node.
class InferenceContext {
 public:
  InferenceContext(const Graph& graph, const Node& node, std::vector<ValueType>& outputs)
      : graph_(graph), node_(node), outputs_(outputs) {}

  const Node& node() const { return node_; }
  int opset() const { return node_.since_version; }
  size_t num_inputs() const { return node_.inputs.size(); }
  size_t num_outputs() const { return node_.outputs.size(); }
  bool has_input(size_t i) const { return node_.has_input(i); }
  // nullptr when the input is omitted.
  const ValueType* input_type(size_t i) const;
  // The input's constant value when it is an initializer (or folded) or the
  // `value` tensor of the Constant node producing it, else
  // nullptr. Lets Reshape, Slice, Expand ... infer static output shapes.
  const Tensor* input_constant(size_t i) const;
  ValueType& output_type(size_t i) { return outputs_[i]; }

  // Error helpers that name the node.
  Status error(const std::string& message) const { return invalid_graph(node_.describe() + ": " + message); }

 private:
  const Graph& graph_;
  const Node& node_;
  std::vector<ValueType>& outputs_;
};

using InferFn = Status (*)(InferenceContext& ctx);
// Gives a subgraph's inputs the types the node passes them (a Loop body's
// iteration number, condition and loop-carried values), where the body
// leaves them unknown, before the body is inferred.
using SeedBodyFn = void (*)(const Graph& graph, const Node& node, const std::string& attribute, Graph& body);

struct OpSchema {
  std::string_view domain;  // "" for ai.onnx
  std::string_view op_type;
  int since_version;        // this entry applies from here to the next entry's version
  int min_inputs;
  int max_inputs;           // -1: variadic
  int min_outputs;
  int max_outputs;
  InferFn infer;            // may be nullptr: outputs stay unknown
  SeedBodyFn seed_body = nullptr;  // ops with subgraphs whose inputs they feed
};

// The schema for `op_type` in `domain` at `opset`, or nullptr.
const OpSchema* find_schema(std::string_view domain, std::string_view op_type, int64_t opset);

// Highest ai.onnx opset this build knows the ops of.
int max_supported_opset(std::string_view domain);

// ---- common inference helpers, shared by the per-family files ----

// Output 0 gets input 0's type and shape.
Status infer_same_as_input0(InferenceContext& ctx);
// numpy-style broadcast of the given input types; the result's rank is
// unknown if any input's is.
Result<ValueType> broadcast_types(const InferenceContext& ctx, std::span<const ValueType* const> inputs);
// Multidirectional broadcast of every present input, output dtype `dtype`
// (kUndefined: input 0's dtype).
Status infer_broadcast(InferenceContext& ctx, DataType dtype = DataType::kUndefined);
// Reads a constant int64/int32 tensor as int64 values.
bool constant_as_int64s(const Tensor* t, std::vector<int64_t>& out);
// "[1,2,3]", for error messages.
std::string ints_string(const std::vector<int64_t>& v);
// Input i's type; an error naming the node when the input is omitted.
Result<const ValueType*> required_input(const InferenceContext& ctx, size_t i);
// Checks an input's element type, when known, is one of `allowed` (a mask
// of type_bit values).
Status check_input_dtype(const InferenceContext& ctx, size_t i, const char* name, uint64_t allowed);
// The number of elements of a tensor type whose dims are all known, else
// -1 (also for nullptr, an omitted input).
int64_t known_count(const ValueType* t);
// The stash_type attribute of the normalizations that have one (default 1):
// an error unless it is 1 (float), 11 (double) or 16 (bfloat16).
Status check_stash_type(const InferenceContext& ctx);
// Maps `axis` in [-rank, rank) to [0, rank); an error naming `what` when
// out of range.
Status normalize_axis(const InferenceContext& ctx, int64_t& axis, int64_t rank, const char* what = "axis");
// numpy MatMul shape of A x B (1-D operands promoted, batch dims
// broadcast) into `out`, which is left without a shape when A's or B's is
// unknown. Errors on mismatched inner or batch dims.
Status infer_matmul_shape(const InferenceContext& ctx, const ValueType& a, const ValueType& b, ValueType& out);

// Inference functions the fused ops (schema/fused.cc) reuse from the
// standard ones they extend.
Status infer_conv(InferenceContext& ctx);          // schema/nn.cc
// Conv's output type and shape with W at input `w_input` and element type
// `dtype` (kUndefined: X's), for ConvInteger and QLinearConv.
Status infer_conv_output(InferenceContext& ctx, size_t w_input, DataType dtype);  // schema/nn.cc
Status infer_matmul(InferenceContext& ctx);        // schema/matmul.cc
Status infer_attention_op(InferenceContext& ctx);  // schema/nn.cc: Attention's

}  // namespace sy
