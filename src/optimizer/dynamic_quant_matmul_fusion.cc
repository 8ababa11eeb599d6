// Dynamic quantization fusion: what ONNX Runtime's quantize_dynamic (and
// switchyard.quantization.quantize_dynamic) writes for a MatMul with
// constant weights,
//   DynamicQuantizeLinear(x) -> (x_q, x_scale, x_zp)
//   MatMulInteger(x_q, B, x_zp[, B_zp]) -> Cast(to float)
//   -> Mul(., Mul(x_scale, B_scale)) [-> Add(., bias)]
// becomes one com.switchyard DynamicQuantizeMatMul(x, B, B_scale[, B_zp[,
// bias]]) (schema/fused.cc), whose kernel quantizes x, runs the 8-bit
// GEMM and writes float from each tile: no uint8 copy of x, int32 product
// or float copies in between.
//
// Matched only where the fused op computes exactly what the graph does:
// B a constant int8 / uint8 [K, N]; B_scale a constant float of 1 or N
// values (rank <= 1) and B_zp absent or a constant of B's type and as many
// values (so each broadcasts as a vector of the last dim); x_zp the same
// DynamicQuantizeLinear's; Cast to float; the Mul's other factor exactly
// Mul(x_scale, B_scale) of that DynamicQuantizeLinear; the Add taken only
// with a constant float bias [N]. The product order stays the graph's
// (schema/fused.cc), so the result is the same to the bit.
//
// A DynamicQuantizeLinear feeding several MatMulIntegers (a layer's Q, K
// and V) gives each its own fused node, which quantizes x again: a pass
// over x per node, small beside the GEMM. The DynamicQuantizeLinear and the
// scale Mul stay for any other reader; the dead-node pass removes them
// once the fused nodes were their only readers.
#include <vector>

#include "optimizer/optimizer.h"
#include "optimizer/rewrite_util.h"
#include "schema/quantize.h"

namespace sy {
namespace {

// A constant of `type`, rank <= 1, holding 1 or `n` values: a per-tensor
// or per-column parameter that broadcasts along the product's last dim.
const Tensor* column_parameter(const Graph& g, ValueId v, DataType type, int64_t n) {
  const Tensor* t = v == kNoValue ? nullptr : g.constant(v);
  if (t == nullptr || !t->is_tensor() || t->dtype() != type || t->shape().rank() > 1 || t->raw_data() == nullptr)
    return nullptr;
  return t->num_elements() == 1 || t->num_elements() == n ? t : nullptr;
}

// The consumer of `v` when it is its only reader and an ai.onnx `op_type`
// with one output.
Node* only_reader(Graph& g, ValueId v, const char* op_type) {
  Node* next = rewrite::single_consumer(g, v);
  return next != nullptr && rewrite::is_op(*next, op_type) && next->outputs.size() == 1 ? next : nullptr;
}

bool fuse_one(Graph& g, Node& mm) {
  // MatMulInteger(x_q, B, x_zp[, B_zp]) of a DynamicQuantizeLinear's outputs.
  if (!rewrite::is_op(mm, "MatMulInteger") || mm.outputs.size() != 1 || !mm.has_input(0) || !mm.has_input(1) ||
      !mm.has_input(2))
    return false;
  Node* dq = rewrite::producer(g, mm.inputs[0]);
  if (dq == nullptr || !rewrite::is_op(*dq, "DynamicQuantizeLinear") || dq->outputs.size() != 3 ||
      dq->outputs[0] != mm.inputs[0] || dq->outputs[2] != mm.inputs[2] || !dq->has_input(0))
    return false;
  const Tensor* b = g.constant(mm.inputs[1]);
  if (b == nullptr || !b->is_tensor() || !is_8bit_type(b->dtype()) || b->shape().rank() != 2 || b->raw_data() == nullptr)
    return false;
  const int64_t n = b->shape()[1];
  const Tensor* b_zp = mm.has_input(3) ? column_parameter(g, mm.inputs[3], b->dtype(), n) : nullptr;
  if (mm.has_input(3) && b_zp == nullptr) return false;

  // -> Cast(to float) -> Mul(., Mul(x_scale, B_scale)).
  Node* cast = only_reader(g, mm.outputs[0], "Cast");
  if (cast == nullptr || cast->attr_int("to", 0) != static_cast<int64_t>(DataType::kFloat)) return false;
  Node* mul = only_reader(g, cast->outputs[0], "Mul");
  if (mul == nullptr || mul->inputs.size() != 2) return false;
  const ValueId scales = rewrite::other_input(*mul, cast->outputs[0]);
  const Node* scale_mul = rewrite::producer(g, scales);
  if (scale_mul == nullptr || !rewrite::is_op(*scale_mul, "Mul")) return false;
  // kNoValue unless one factor is x_scale (and then not constant if both are).
  const ValueId b_scale = rewrite::other_input(*scale_mul, dq->outputs[1]);
  const Tensor* bs = column_parameter(g, b_scale, DataType::kFloat, n);
  if (bs == nullptr) return false;
  // Scale and zero point go in with one count (the kernel's rule).
  if (b_zp != nullptr && b_zp->num_elements() != bs->num_elements()) return false;

  // [-> Add(., bias float [N])]
  Node* add = only_reader(g, mul->outputs[0], "Add");
  ValueId bias = add != nullptr && add->inputs.size() == 2 ? rewrite::other_input(*add, mul->outputs[0]) : kNoValue;
  const Tensor* bt = bias == kNoValue ? nullptr : g.constant(bias);
  if (bt == nullptr || !bt->is_tensor() || bt->dtype() != DataType::kFloat || bt->shape().rank() != 1 ||
      bt->shape()[0] != n)
    add = nullptr;

  const ValueId x = dq->inputs[0];
  std::vector<ValueId> inputs = {x, mm.inputs[1], b_scale};
  if (mm.has_input(3) || add != nullptr) inputs.push_back(mm.has_input(3) ? mm.inputs[3] : kNoValue);
  if (add != nullptr) inputs.push_back(bias);
  rewrite::make_switchyard_op(g, mm, kDynamicQuantizeMatMulOp);
  mm.inputs = std::move(inputs);
  mm.attributes.clear();
  rewrite::absorb_consumer(g, mm, *cast);
  rewrite::absorb_consumer(g, mm, *mul);
  if (add != nullptr) rewrite::absorb_consumer(g, mm, *add);
  return true;
}

}  // namespace

Status fuse_dynamic_quant_matmul(Graph& graph, int* fused) {
  rewrite::rewrite_each_node(graph, fuse_one, fused);
  return ok_status();
}

}  // namespace sy
