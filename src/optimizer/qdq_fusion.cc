// QDQ fusion: the pattern a static quantizer writes around a Conv,
//   DequantizeLinear(x_q) ─┐
//   DequantizeLinear(w_q) ─┼─ Conv [-> Relu | Clip] -> QuantizeLinear -> y_q
//   [DequantizeLinear(b)] ─┘
// becomes QLinearConv(x_q, x_scale, x_zp, w_q, w_scale, w_zp, y_scale,
// y_zp[, b]): the int8 GEMM with requantization in its epilogue instead of
// a float Conv between a pass that widens x and one that narrows y, and
// weights prepacked at creation instead of widened to float.
//
// Matched only where the fused op computes what the graph says up to the
// rounding of the float accumulation (the fused sum is exact, the float one
// is not; a result within half a step of a rounding boundary may differ by
// one): scales and zero points constant and per tensor (W's also per
// output channel, axis 0); W constant int8 or uint8; the bias absent or the
// int32 DequantizeLinear quantizers write, zero point 0 and scale exactly
// x_scale * w_scale (anything else would need the bias re-rounded); a Relu
// or Clip between Conv and QuantizeLinear only where QuantizeLinear's own
// saturation already does what it does (Relu: y_zp is the type's lowest
// value; Clip: its bounds quantize to the type's ends), so dropping it is
// exact.
//
// The same around a MatMul whose B is constant [K, N] (per tensor or per
// column) gives QLinearMatMul; with a bias Add in between it stays.
//
// A residual connection, Add(DequantizeLinear(a), DequantizeLinear(b))
// [-> Relu] -> QuantizeLinear, becomes com.switchyard QLinearAdd (schema/
// qlinear.cc), which rounds as the graph does, so exactly: a, b and the
// result of one 8-bit type, every scale and zero point constant and per
// tensor, any broadcast. A Relu becomes its activation, a floor at the
// result's zero point, which is what a Relu before QuantizeLinear does
// whatever that zero point is.
//
// DequantizeLinear(x) -> MaxPool -> QuantizeLinear back to x's type, scale
// and zero point becomes MaxPool on x: dequantizing with a positive scale
// is increasing, so it commutes with the max, and quantizing a dequantized
// value gives it back (|x - zp| <= 255 steps of a normal scale, divided by
// that scale again, lands far within half a step of x - zp). Only from
// MaxPool-12, the first with 8-bit types, and without Indices.
//
// The DequantizeLinear nodes stay for any other reader; the dead-node pass
// removes those the fused node left unread. The generic constant folding
// keeps constant DequantizeLinear nodes read by a Conv, MatMul or Gemm for
// this pass (fold_constants); finish_rewrites folds the ones left.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "optimizer/optimizer.h"
#include "optimizer/rewrite_util.h"
#include "schema/quantize.h"

namespace sy {
namespace {

int32_t type_min(DataType t) { return t == DataType::kInt8 ? -128 : 0; }
int32_t type_max(DataType t) { return t == DataType::kInt8 ? 127 : 255; }

DataType value_dtype(const Graph& g, ValueId v) { return g.values[static_cast<size_t>(v)].type.dtype; }

// A constant float tensor of rank <= 1 and its values, all finite and
// non-zero (a scale).
bool scale_values(const Graph& g, ValueId v, std::vector<float>* out) {
  const Tensor* t = v == kNoValue ? nullptr : g.constant(v);
  if (t == nullptr || !t->is_tensor() || t->dtype() != DataType::kFloat || t->shape().rank() > 1 ||
      t->num_elements() < 1 || t->raw_data() == nullptr)
    return false;
  out->assign(t->data<float>(), t->data<float>() + t->num_elements());
  for (float s : *out)
    if (!std::isfinite(s) || s == 0.0f) return false;
  return true;
}

// The zero points of a DequantizeLinear / QuantizeLinear input: a constant
// of type `type`, rank <= 1 and `count` values; or absent (all zeros).
bool zero_point_values(const Graph& g, const Node& n, size_t i, DataType type, int64_t count,
                       std::vector<int32_t>* out) {
  if (!n.has_input(i)) {
    out->assign(static_cast<size_t>(count), 0);
    return true;
  }
  const Tensor* t = g.constant(n.inputs[i]);
  if (t == nullptr || !t->is_tensor() || t->dtype() != type || t->shape().rank() > 1 || t->num_elements() != count ||
      t->raw_data() == nullptr)
    return false;
  out->resize(static_cast<size_t>(count));
  for (int64_t k = 0; k < count; ++k) {
    switch (type) {
      case DataType::kInt8: (*out)[static_cast<size_t>(k)] = t->data<int8_t>()[k]; break;
      case DataType::kUint8: (*out)[static_cast<size_t>(k)] = t->data<uint8_t>()[k]; break;
      case DataType::kInt32: (*out)[static_cast<size_t>(k)] = t->data<int32_t>()[k]; break;
      default: return false;
    }
  }
  return true;
}

// The zero point input to hand the fused node: the node's own, or a new
// scalar zero of `type` when it has none (the QLinear ops require one).
ValueId zero_point_input(Graph& g, const Node& n, size_t i, DataType type, const char* base) {
  if (n.has_input(i)) return n.inputs[i];
  auto t = Tensor::allocate(type, Shape{});
  if (!t.ok()) return kNoValue;
  std::memset(t->raw_data(), 0, 1);
  return rewrite::add_constant(g, base, std::move(t).value());
}

// The inputs of a QLinear op of two operands, in their order: a, a_scale,
// a_zero_point, b, b_scale, b_zero_point (from the DequantizeLinear nodes
// `a` and `b`, of 8-bit types `at` and `bt`), y_scale, y_zero_point (from
// QuantizeLinear `q`, of type `yt`), with zero points made where absent.
bool qlinear_inputs(Graph& g, const Node& a, DataType at, const Node& b, DataType bt, const Node& q, DataType yt,
                    std::vector<ValueId>* inputs) {
  const ValueId a_zp = zero_point_input(g, a, 2, at, "a_zero_point");
  const ValueId b_zp = zero_point_input(g, b, 2, bt, "b_zero_point");
  const ValueId y_zp = zero_point_input(g, q, 2, yt, "y_zero_point");
  if (a_zp == kNoValue || b_zp == kNoValue || y_zp == kNoValue) return false;
  *inputs = {a.inputs[0], a.inputs[1], a_zp, b.inputs[0], b.inputs[1], b_zp, q.inputs[1], y_zp};
  return true;
}

// Attributes a DequantizeLinear / QuantizeLinear may carry for the fusion:
// no blocks, and no precision other than float's.
bool plain_quant_attributes(const Node& n) {
  if (n.attr_int("block_size", 0) != 0) return false;
  const int64_t precision = n.attr_int("precision", 0);
  return precision == 0 || precision == static_cast<int64_t>(DataType::kFloat);
}

// A DequantizeLinear of this rewrite scope producing `v` as float.
Node* dequantize_producing(Graph& g, ValueId v) {
  Node* dq = rewrite::producer(g, v);
  if (dq == nullptr || !rewrite::is_op(*dq, "DequantizeLinear") || dq->outputs.size() != 1 || !dq->has_input(0) ||
      !dq->has_input(1) || !plain_quant_attributes(*dq) || value_dtype(g, v) != DataType::kFloat)
    return nullptr;
  return dq;
}

// Per-tensor quantized activation: DequantizeLinear(x_q uint8/int8, scale, zp).
struct Activation {
  Node* dq = nullptr;
  DataType type = DataType::kUndefined;
  float scale = 0;
  int32_t zero_point = 0;
};

bool match_activation(Graph& g, ValueId v, Activation* a) {
  a->dq = dequantize_producing(g, v);
  if (a->dq == nullptr) return false;
  a->type = value_dtype(g, a->dq->inputs[0]);
  std::vector<float> s;
  std::vector<int32_t> z;
  if (!is_8bit_type(a->type) || !scale_values(g, a->dq->inputs[1], &s) || s.size() != 1 ||
      !zero_point_values(g, *a->dq, 2, a->type, 1, &z))
    return false;
  a->scale = s[0];
  a->zero_point = z[0];
  return true;
}

// Constant weights: DequantizeLinear(w_q constant uint8/int8, scale, zp),
// per tensor or one scale per slice along `axis`.
struct Weights {
  Node* dq = nullptr;
  DataType type = DataType::kUndefined;
  std::vector<float> scales;  // 1, or one per slice along the axis
};

bool match_weights(Graph& g, ValueId v, int64_t axis, Weights* w) {
  w->dq = dequantize_producing(g, v);
  if (w->dq == nullptr) return false;
  const Tensor* q = g.constant(w->dq->inputs[0]);
  if (q == nullptr || !q->is_tensor() || !is_8bit_type(q->dtype())) return false;
  w->type = q->dtype();
  if (!scale_values(g, w->dq->inputs[1], &w->scales)) return false;
  const auto rank = static_cast<int64_t>(q->shape().rank());
  if (w->scales.size() > 1) {
    int64_t dq_axis = w->dq->attr_int("axis", 1);
    if (dq_axis < 0) dq_axis += rank;
    if (dq_axis != axis || axis >= rank || q->shape()[static_cast<size_t>(axis)] != std::ssize(w->scales))
      return false;
  }
  std::vector<int32_t> z;
  return zero_point_values(g, *w->dq, 2, w->type, std::ssize(w->scales), &z);
}

// A bias the QLinear ops take as it is: DequantizeLinear(b int32 constant
// [n], scale == x_scale * w_scale per element, zero point 0).
bool match_bias(Graph& g, ValueId v, int64_t n, float x_scale, const std::vector<float>& w_scales, Node** out) {
  Node* dq = dequantize_producing(g, v);
  if (dq == nullptr) return false;
  const Tensor* b = g.constant(dq->inputs[0]);
  if (b == nullptr || !b->is_tensor() || b->dtype() != DataType::kInt32 || b->shape().rank() != 1 ||
      b->shape()[0] != n)
    return false;
  std::vector<float> s;
  std::vector<int32_t> z;
  if (!scale_values(g, dq->inputs[1], &s) || (s.size() != 1 && std::ssize(s) != n)) return false;
  if (!zero_point_values(g, *dq, 2, DataType::kInt32, std::ssize(s), &z)) return false;
  for (int32_t zp : z)
    if (zp != 0) return false;
  if (s.size() > 1) {
    int64_t axis = dq->attr_int("axis", 1);
    if (axis != 0 && axis != -1) return false;
  }
  for (int64_t i = 0; i < n; ++i) {
    const float want = x_scale * w_scales[w_scales.size() == 1 ? 0 : static_cast<size_t>(i)];
    if (s[s.size() == 1 ? 0 : static_cast<size_t>(i)] != want) return false;
  }
  *out = dq;
  return true;
}

// The output side: [Relu | Clip ->] QuantizeLinear(., y_scale, y_zp) per
// tensor, to uint8 or int8.
struct Output {
  Node* act = nullptr;  // dropped, exactly (see the file comment)
  Node* q = nullptr;
  DataType type = DataType::kUndefined;
};

// QuantizeLinear's value for v: saturate(round_half_even(v / scale) + zp).
int32_t quantize_value(float v, float scale, int32_t zp, DataType t) {
  const double r = std::nearbyint(static_cast<double>(v / scale)) + zp;
  return static_cast<int32_t>(std::clamp<double>(r, type_min(t), type_max(t)));
}

// The single reader of `v`, taking it as its first input and having one
// output; nullptr otherwise.
Node* sole_reader(Graph& g, ValueId v) {
  Node* next = rewrite::single_consumer(g, v);
  if (next == nullptr || next->inputs.empty() || next->inputs[0] != v || next->outputs.size() != 1) return nullptr;
  return next;
}

// `next` is QuantizeLinear(., y_scale, y_zp) per tensor to uint8 or int8:
// fills o->q and o->type, and the scale and zero point.
bool match_quantize(Graph& g, Node* next, Output* o, float* scale, int32_t* zp) {
  if (next == nullptr || !rewrite::is_op(*next, "QuantizeLinear") || !next->has_input(1) ||
      !plain_quant_attributes(*next))
    return false;
  o->q = next;
  o->type = value_dtype(g, next->outputs[0]);
  std::vector<float> s;
  std::vector<int32_t> z;
  if (!is_8bit_type(o->type) || !scale_values(g, next->inputs[1], &s) || s.size() != 1 ||
      !zero_point_values(g, *next, 2, o->type, 1, &z))
    return false;
  *scale = s[0];
  *zp = z[0];
  return true;
}

bool match_output(Graph& g, ValueId v, Output* o) {
  Node* next = sole_reader(g, v);
  if (next != nullptr && (rewrite::is_op(*next, "Relu") || rewrite::is_op(*next, "Clip"))) {
    o->act = next;
    next = sole_reader(g, next->outputs[0]);
  }
  float scale = 0;
  int32_t zp = 0;
  if (!match_quantize(g, next, o, &scale, &zp)) return false;
  if (o->act == nullptr) return true;
  // Dropping the activation is exact when QuantizeLinear maps everything
  // it would change to the value it would change it to.
  float lo = 0, hi = 0;
  if (rewrite::is_op(*o->act, "Relu")) {
    lo = 0.0f;
    hi = std::numeric_limits<float>::infinity();
  } else if (!rewrite::clip_bounds(g, *o->act, &lo, &hi)) {
    return false;
  }
  const bool lo_ok = std::isinf(lo) ? lo < 0 : quantize_value(lo, scale, zp, o->type) == type_min(o->type);
  const bool hi_ok = std::isinf(hi) ? hi > 0 : quantize_value(hi, scale, zp, o->type) == type_max(o->type);
  return lo_ok && hi_ok;
}

// Marks `dq` removed when the fused node was its only reader.
void drop_if_unread(Graph& g, Node* dq, ValueId v) {
  if (dq != nullptr && rewrite::has_single_consumer(g, v)) dq->removed = true;
}

bool fuse_conv(Graph& g, Node& conv) {
  if (!rewrite::is_op(conv, "Conv") || conv.outputs.size() != 1 || conv.inputs.size() < 2) return false;
  Activation x;
  Weights w;
  Output o;
  if (!match_activation(g, conv.inputs[0], &x) || !match_weights(g, conv.inputs[1], 0, &w)) return false;
  const Tensor* wq = g.constant(w.dq->inputs[0]);
  if (wq->shape().rank() < 3) return false;
  const int64_t m = wq->shape()[0];
  Node* bias = nullptr;
  if (conv.has_input(2) && !match_bias(g, conv.inputs[2], m, x.scale, w.scales, &bias)) return false;
  if (!match_output(g, conv.outputs[0], &o)) return false;

  std::vector<ValueId> inputs;
  if (!qlinear_inputs(g, *x.dq, x.type, *w.dq, w.type, *o.q, o.type, &inputs)) return false;
  const ValueId x_in = conv.inputs[0], w_in = conv.inputs[1];
  const ValueId b_in = conv.has_input(2) ? conv.inputs[2] : kNoValue;
  if (bias != nullptr) inputs.push_back(bias->inputs[0]);
  drop_if_unread(g, x.dq, x_in);
  drop_if_unread(g, w.dq, w_in);
  if (bias != nullptr) drop_if_unread(g, bias, b_in);
  conv.op_type = "QLinearConv";
  conv.since_version = 10;
  conv.inputs = std::move(inputs);
  if (o.act != nullptr) rewrite::absorb_consumer(g, conv, *o.act);
  rewrite::absorb_consumer(g, conv, *o.q);
  return true;
}

// MatMul(DQ(a), DQ(b constant [K, N])) -> QuantizeLinear: QLinearMatMul,
// b per tensor or per column (axis 1). No bias: QLinearMatMul has none,
// and a bias Add between MatMul and QuantizeLinear leaves the MatMul be.
bool fuse_matmul(Graph& g, Node& mm) {
  if (!rewrite::is_op(mm, "MatMul") || mm.outputs.size() != 1 || mm.inputs.size() != 2) return false;
  Activation a;
  Weights b;
  Output o;
  if (!match_activation(g, mm.inputs[0], &a) || !match_weights(g, mm.inputs[1], 1, &b)) return false;
  if (g.constant(b.dq->inputs[0])->shape().rank() != 2) return false;
  const ValueType& at = g.values[static_cast<size_t>(a.dq->inputs[0])].type;
  if (!at.has_shape || at.rank() < 2) return false;  // a vector A drops an axis the scales do not see
  if (!match_output(g, mm.outputs[0], &o)) return false;
  std::vector<ValueId> inputs;
  if (!qlinear_inputs(g, *a.dq, a.type, *b.dq, b.type, *o.q, o.type, &inputs)) return false;
  drop_if_unread(g, a.dq, mm.inputs[0]);
  drop_if_unread(g, b.dq, mm.inputs[1]);
  const auto opset = g.opsets.find("");
  mm.op_type = "QLinearMatMul";
  mm.since_version = opset != g.opsets.end() && opset->second >= 21 ? 21 : 10;
  mm.inputs = std::move(inputs);
  if (o.act != nullptr) rewrite::absorb_consumer(g, mm, *o.act);
  rewrite::absorb_consumer(g, mm, *o.q);
  return true;
}

// Add(DQ(a), DQ(b)) [-> Relu] -> QuantizeLinear: QLinearAdd (see the file
// comment).
bool fuse_add(Graph& g, Node& add) {
  if (!rewrite::is_op(add, "Add") || add.outputs.size() != 1 || add.inputs.size() != 2) return false;
  Activation a, b;
  if (!match_activation(g, add.inputs[0], &a) || !match_activation(g, add.inputs[1], &b) || b.type != a.type)
    return false;
  Node* next = sole_reader(g, add.outputs[0]);
  Node* relu = nullptr;
  if (next != nullptr && rewrite::is_op(*next, "Relu")) {
    relu = next;
    next = sole_reader(g, relu->outputs[0]);
  }
  Output o;
  float y_scale = 0;
  int32_t y_zero_point = 0;
  if (!match_quantize(g, next, &o, &y_scale, &y_zero_point) || o.type != a.type) return false;
  std::vector<ValueId> inputs;
  if (!qlinear_inputs(g, *a.dq, a.type, *b.dq, b.type, *o.q, o.type, &inputs)) return false;
  drop_if_unread(g, a.dq, add.inputs[0]);
  drop_if_unread(g, b.dq, add.inputs[1]);
  rewrite::make_switchyard_op(g, add, kQLinearAddOp);
  add.inputs = std::move(inputs);
  add.attributes.clear();
  if (relu != nullptr) {
    add.attributes.push_back(rewrite::string_attribute(kActivationAttr, "Relu"));
    rewrite::absorb_consumer(g, add, *relu);
  }
  rewrite::absorb_consumer(g, add, *o.q);
  return true;
}

// DQ(x) -> MaxPool -> QuantizeLinear to x's type, scale and zero point:
// MaxPool on x (see the file comment).
bool fuse_max_pool(Graph& g, Node& pool) {
  if (!rewrite::is_op(pool, "MaxPool") || pool.since_version < 12 || pool.inputs.size() != 1 || pool.outputs.empty())
    return false;
  for (size_t i = 1; i < pool.outputs.size(); ++i)
    if (pool.outputs[i] != kNoValue) return false;  // Indices: left as it is
  Activation x;
  if (!match_activation(g, pool.inputs[0], &x) || !(x.scale > 0) || !std::isnormal(x.scale) ||
      !std::isfinite(x.scale * 256.0f))
    return false;
  Output o;
  float y_scale = 0;
  int32_t y_zero_point = 0;
  if (!match_quantize(g, sole_reader(g, pool.outputs[0]), &o, &y_scale, &y_zero_point)) return false;
  if (o.type != x.type || y_scale != x.scale || y_zero_point != x.zero_point) return false;
  drop_if_unread(g, x.dq, pool.inputs[0]);
  pool.inputs[0] = x.dq->inputs[0];
  pool.outputs.resize(1);
  rewrite::absorb_consumer(g, pool, *o.q);
  return true;
}

bool fuse_one(Graph& g, Node& node) {
  return fuse_conv(g, node) || fuse_matmul(g, node) || fuse_add(g, node) || fuse_max_pool(g, node);
}

}  // namespace

Status fuse_qdq(Graph& graph, int* fused) {
  rewrite::rewrite_each_node(graph, fuse_one, fused);
  return ok_status();
}

}  // namespace sy
