// MatMul epilogue fusion: the element-wise nodes a transformer puts after
// each projection move into the MatMul, which becomes a FusedMatMul
// (com.switchyard, schema/fused.cc) and applies them as the GEMM stores
// each tile:
//   Div(MatMul(a, b), c) / Mul(MatMul(a, b), c), c a scalar constant -> alpha (1/c or c)
//   Add(that, bias)           bias a constant vector over the last axis -> input 2
//   Add(that, z)              z of exactly the output's shape          -> input 3
//                             (dims equal as numbers, symbols or
//                             symbolic::dim_source)
//   Relu(that) / Gelu(that)                                            -> activation
// in that order, each optional: BERT's projections become MatMul+bias, its
// output projections MatMul+bias+residual, its FFN MatMul+bias+Gelu, its
// attention scores Q.K^T / sqrt(d) one scaled MatMul. Each fused node is one
// full pass over the output saved. The scale applies to any float MatMul;
// the rest needs a [K, N] B, so that the output's last axis is N.
//
// A provider rewrite (provider_rewrites.h): it runs on the nodes placed on
// a provider that implements FusedMatMul (today the CPU).
#include <cmath>
#include <string>

#include "optimizer/optimizer.h"
#include "optimizer/rewrite_util.h"
#include "optimizer/symbolic_dims.h"
#include "schema/fused.h"

namespace sy {
namespace {

bool is_float_tensor(const ValueType& t) { return t.is_tensor() && t.dtype == DataType::kFloat; }

// The output's last dimension, when it is a known number.
int64_t last_dim(const ValueType& t) {
  if (!t.has_shape || t.dims.empty() || !t.dims.back().is_known()) return -1;
  return t.dims.back().value;
}

// A constant float of n elements whose dims are all 1 but the last, and
// whose rank is at most the output's: adding it to every row changes
// neither the output's shape nor anything but the last axis.
bool is_row_bias(const Graph& graph, ValueId v, int64_t n, size_t out_rank) {
  const Tensor* t = graph.constant(v);
  if (t == nullptr || !t->is_tensor() || t->dtype() != DataType::kFloat || t->raw_data() == nullptr) return false;
  const Shape& s = t->shape();
  if (s.rank() == 0 || s.rank() > out_rank || s[s.rank() - 1] != n) return false;
  for (size_t i = 0; i + 1 < s.rank(); ++i)
    if (s[i] != 1) return false;
  return true;
}

// The single live Add, Relu or Gelu reading `v` (and nothing else reading it).
Node* next_elementwise(Graph& graph, ValueId v) {
  Node* n = rewrite::single_consumer(graph, v);
  if (n == nullptr || n->outputs.size() != 1) return nullptr;
  return n;
}

// Moves what follows `matmul` into it; true when anything moved.
bool fuse_epilogue(Graph& graph, Node& matmul) {
  if (!rewrite::is_op(matmul, "MatMul") || matmul.inputs.size() != 2 || matmul.outputs.size() != 1) return false;
  const ValueType& a = graph.values[static_cast<size_t>(matmul.inputs[0])].type;
  const ValueType& b = graph.values[static_cast<size_t>(matmul.inputs[1])].type;
  const ValueType& out = graph.values[static_cast<size_t>(matmul.outputs[0])].type;
  if (!is_float_tensor(a) || !is_float_tensor(b) || !is_float_tensor(out)) return false;
  bool changed = false;

  Node* next = next_elementwise(graph, matmul.outputs[0]);
  if (next != nullptr) {
    const auto alpha = static_cast<float>(rewrite::scale_by_constant(graph, *next, matmul.outputs[0]));
    if (alpha != 0.0f) {
      matmul.attributes.push_back(rewrite::float_attribute(kAlphaAttr, alpha));
      rewrite::absorb_consumer(graph, matmul, *next);
      changed = true;
      next = next_elementwise(graph, matmul.outputs[0]);
    }
  }
  // [.., M, K] x [K, N]: the output's last axis is B's columns.
  if (!a.has_shape || a.rank() < 2 || !b.has_shape || b.rank() != 2) return changed;
  const int64_t n = last_dim(out);
  const size_t out_rank = out.has_shape ? out.rank() : 0;

  if (next != nullptr && rewrite::is_op(*next, "Add") && next->since_version >= 7 && n > 0) {
    const ValueId bias = rewrite::other_input(*next, matmul.outputs[0]);
    if (bias != kNoValue && bias != matmul.outputs[0] && is_row_bias(graph, bias, n, out_rank)) {
      matmul.inputs.push_back(bias);
      rewrite::absorb_consumer(graph, matmul, *next);
      changed = true;
      next = next_elementwise(graph, matmul.outputs[0]);
    }
  }
  if (next != nullptr && rewrite::is_op(*next, "Add") && next->since_version >= 7) {
    const ValueId z = rewrite::other_input(*next, matmul.outputs[0]);
    if (z != kNoValue && z != matmul.outputs[0] &&
        is_float_tensor(graph.values[static_cast<size_t>(z)].type) &&
        symbolic::same_shape(graph, matmul.outputs[0], z)) {
      while (matmul.inputs.size() < 3) matmul.inputs.push_back(kNoValue);  // the bias slot, empty
      matmul.inputs.push_back(z);
      rewrite::absorb_consumer(graph, matmul, *next);
      changed = true;
      next = next_elementwise(graph, matmul.outputs[0]);
    }
  }
  if (next != nullptr && next->inputs.size() == 1 && next->inputs[0] == matmul.outputs[0]) {
    std::string kind;
    if (rewrite::is_op(*next, "Relu")) kind = "Relu";
    if (rewrite::is_op(*next, "Gelu")) {
      const std::string approximate = next->attr_string("approximate", "none");
      if (approximate == "none") kind = "Gelu";
      if (approximate == "tanh") kind = "GeluTanh";
    }
    if (!kind.empty()) {
      matmul.attributes.push_back(rewrite::string_attribute(kActivationAttr, kind));
      rewrite::absorb_consumer(graph, matmul, *next);
      changed = true;
    }
  }
  return changed;
}

bool fuse_one(Graph& graph, Node& matmul) {
  if (!fuse_epilogue(graph, matmul)) return false;
  rewrite::make_switchyard_op(graph, matmul, kFusedMatMulOp);
  return true;
}

}  // namespace

Status fuse_matmul_epilogue(Graph& graph, int* fused) {
  rewrite::rewrite_each_node(graph, fuse_one, fused);
  return ok_status();
}

}  // namespace sy
