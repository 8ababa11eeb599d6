// Attention fusion: the scaled dot-product attention exporters write as
// separate nodes becomes one com.switchyard FusedAttention node (4D form:
// Attention-23's inputs, with the chain's answers; schema/fused.cc), which the CPU
// computes head by head with the scores kept in cache instead of written
// out and read back four times:
//
//   s = MatMul(Q, K^T)                     Q [B, H, S, D], K^T a Transpose
//   s = Div(s, c) | Mul(s, c)              optional, c a scalar  -> scale
//   s = Add(s, mask)                       optional float mask   -> attn_mask
//     | Where(cond, fill, s)               fill <= -1e30          -> attn_mask
//   p = Softmax(s, axis = -1)
//   Y = MatMul(p, V)                                              -> FusedAttention(Q, K, V[, mask])
//
// K^T is a Transpose of K's producer; its permutation is changed to give
// K itself (BERT's [0, 2, 3, 1] becomes [0, 2, 1, 3]), or it is dropped
// when that is the identity. A Where mask (GPT-2's causal mask) turns into
// an additive one: the Where now writes fill where cond holds and 0
// elsewhere, which is cond's [S, L] shape instead of the scores'. Adding a
// fill of -inf or of about -3.4e38 (float's lowest, what PyTorch writes)
// to a score gives the fill again, so the softmax sees what it saw before.
//
// A Where mask whose condition is the causal pattern PyTorch exports for
// GPT-2, Equal(Trilu(ConstantOfShape([S, L], c != 0), upper = 0), 0)
// (perhaps through Cast to bool), with S and L provably the query and key
// lengths, becomes is_causal = 1 and no mask at all: the CPU kernel then
// skips the keys past each row block's last query instead of computing
// their scores and letting the fill zero them.
//
// When Q, K and V come from [B, S, H * D] projections split into heads by
// Reshape + Transpose (and the context goes back the same way), the node
// takes Attention's 3D form instead and those layout nodes go as well (see
// match_3d below).
//
// Every intermediate must be read by the next node only. A provider
// rewrite (provider_rewrites.h): it runs on the nodes placed on a provider
// that implements FusedAttention (today the CPU).
#include <cmath>
#include <initializer_list>
#include <vector>

#include "optimizer/optimizer.h"
#include "optimizer/rewrite_util.h"
#include "optimizer/symbolic_dims.h"
#include "schema/fused.h"

namespace sy {
namespace {

// A Where fill at or below this replaces a score as adding it does.
constexpr double kMaskFillLimit = -1e30;

const ValueType& type_of(const Graph& graph, ValueId v) { return graph.values[static_cast<size_t>(v)].type; }

bool float_rank(const Graph& graph, ValueId v, size_t rank) {
  const ValueType& t = type_of(graph, v);
  return t.is_tensor() && t.dtype == DataType::kFloat && t.has_shape && t.rank() == rank;
}

// Softmax over the last axis of a rank-4 tensor. Before opset 13 Softmax
// flattens to [prod(dims[:axis]), prod(dims[axis:])]; for the last axis
// that is the same thing.
bool softmax_over_last_axis(const Node& softmax) {
  const int64_t axis = softmax.attr_int("axis", softmax.since_version >= 13 ? -1 : 1);
  return axis == -1 || axis == 3;
}

// Div(s, c), Mul(s, c) or Mul(c, s) (rewrite::scale_by_constant): sets the
// scores operand s and the scale. False otherwise.
bool match_scale(const Graph& graph, const Node& node, ValueId* scores, double* scale) {
  for (ValueId s : node.inputs) {
    const double factor = rewrite::scale_by_constant(graph, node, s);
    if (factor == 0.0) continue;
    *scores = s;
    *scale = factor;
    return true;
  }
  return false;
}

// The permutation of a rank-4 Transpose (absent: reversed axes).
std::vector<int64_t> permutation4(const Node& transpose) {
  if (const Attribute* a = transpose.attr("perm")) return a->ints;
  return {3, 2, 1, 0};
}

bool is_permutation4(const std::vector<int64_t>& p) {
  if (p.size() != 4) return false;
  bool seen[4] = {false, false, false, false};
  for (int64_t i : p) {
    if (i < 0 || i > 3 || seen[i]) return false;
    seen[i] = true;
  }
  return true;
}

// Known dims that say Q [B, Hq, S, D], K [B, Hkv, L, D] and V [B, Hkv, L, Dv]
// cannot be one Attention (MatMul broadcasts batch dims; Attention only
// shares K/V heads among query heads).
bool heads_incompatible(const ValueType& q, const ValueType& v) {
  const Dim& bq = q.dims[0];
  const Dim& bv = v.dims[0];
  if (bq.is_known() && bv.is_known() && bq.value != bv.value) return true;
  const Dim& hq = q.dims[1];
  const Dim& hv = v.dims[1];
  if (hq.is_known() && hv.is_known() && (hv.value == 0 || hq.value % hv.value != 0)) return true;
  return false;
}

struct Match {
  Node* scores = nullptr;     // MatMul(Q, K^T)
  Node* k_transpose = nullptr;
  std::vector<int64_t> k_perm;  // K = Transpose(k_source, k_perm); identity: K = k_source
  ValueId k_source = kNoValue;
  Node* scale_node = nullptr;
  double scale = 1.0;
  Node* mask_add = nullptr;
  Node* mask_where = nullptr;
  double where_fill = 0.0;  // the Where's fill, at or below kMaskFillLimit
  ValueId mask = kNoValue;
  Node* softmax = nullptr;
  Node* context = nullptr;    // MatMul(P, V): becomes the Attention node
};

// From the Softmax's input back to the scores MatMul.
bool match_before_softmax(Graph& graph, ValueId x, Match& m) {
  Node* node = rewrite::producer(graph, x);
  if (node == nullptr || !rewrite::has_single_consumer(graph, x)) return false;
  ValueId s = x;
  if (rewrite::is_op(*node, "Add") && node->inputs.size() == 2 && node->since_version >= 7) {
    // Either operand may be the scores; the other must be a float mask of
    // rank <= 4 that does not come from the same chain.
    for (int i = 0; i < 2 && m.mask_add == nullptr; ++i) {
      const ValueId cand = node->inputs[static_cast<size_t>(i)];
      const ValueId other = node->inputs[static_cast<size_t>(1 - i)];
      Node* p = rewrite::producer(graph, cand);
      if (p == nullptr || cand == other || !rewrite::has_single_consumer(graph, cand)) continue;
      const ValueType& mt = type_of(graph, other);
      if (!mt.is_tensor() || mt.dtype != DataType::kFloat || !mt.has_shape || mt.rank() > 4) continue;
      if (!(rewrite::is_op(*p, "MatMul") || rewrite::is_op(*p, "Div") || rewrite::is_op(*p, "Mul"))) continue;
      m.mask_add = node;
      m.mask = other;
      s = cand;
    }
    if (m.mask_add == nullptr) return false;
  } else if (rewrite::is_op(*node, "Where") && node->inputs.size() == 3) {
    const ValueId cond = node->inputs[0];
    const ValueType& ct = type_of(graph, cond);
    double fill = 0.0;
    if (!ct.has_shape || ct.rank() > 4 || node->inputs[2] == cond || node->inputs[1] == node->inputs[2]) return false;
    // The fill's rank is at most cond's, so Where(cond, fill, 0) has cond's shape.
    if (!rewrite::constant_scalar(graph, node->inputs[1], cond, &fill) || !(fill <= kMaskFillLimit)) return false;
    m.mask_where = node;
    m.where_fill = fill;
    s = node->inputs[2];
    if (!rewrite::has_single_consumer(graph, s)) return false;
  }
  node = rewrite::producer(graph, s);
  if (node == nullptr) return false;
  if (!rewrite::is_op(*node, "MatMul")) {
    ValueId scores = kNoValue;
    if (!match_scale(graph, *node, &scores, &m.scale) || !rewrite::has_single_consumer(graph, scores)) return false;
    m.scale_node = node;
    node = rewrite::producer(graph, scores);
    if (node == nullptr || !rewrite::is_op(*node, "MatMul")) return false;
  }
  if (node->inputs.size() != 2 || node->outputs.size() != 1) return false;
  m.scores = node;
  return true;
}

// K^T must be a Transpose read only by the scores MatMul; K is its input
// with the last two axes of the permutation swapped back.
bool match_key(Graph& graph, Match& m) {
  const ValueId kt = m.scores->inputs[1];
  Node* t = rewrite::producer(graph, kt);
  if (t == nullptr || !rewrite::is_op(*t, "Transpose") || t->inputs.size() != 1 ||
      !rewrite::has_single_consumer(graph, kt))
    return false;
  std::vector<int64_t> p = permutation4(*t);
  if (!is_permutation4(p) || !float_rank(graph, t->inputs[0], 4)) return false;
  std::swap(p[2], p[3]);
  m.k_transpose = t;
  m.k_perm = p;
  m.k_source = t->inputs[0];
  return true;
}

// Whether `cond` is true exactly where key j > query i of an [S, L] score
// matrix, S = q_len and L = kv_len: Attention's is_causal without a past
// (upper-left aligned). Trilu's lower triangle (k = 0) of a matrix of
// c != 0 is c where j <= i and 0 elsewhere, so Equal(., 0) is j > i.
bool causal_condition(Graph& graph, ValueId cond, const symbolic::DimRef& q_len, const symbolic::DimRef& kv_len) {
  Node* node = rewrite::producer(graph, cond);
  if (node != nullptr && rewrite::is_op(*node, "Cast") && node->inputs.size() == 1) {
    if (node->attr_int("to", 0) != static_cast<int64_t>(DataType::kBool)) return false;
    node = rewrite::producer(graph, node->inputs[0]);
  }
  if (node == nullptr || !rewrite::is_op(*node, "Equal") || node->inputs.size() != 2) return false;
  ValueId lower = kNoValue;
  for (int i = 0; i < 2 && lower == kNoValue; ++i) {
    const ValueId x = node->inputs[static_cast<size_t>(i)];
    double zero = 1.0;
    if (rewrite::constant_scalar(graph, node->inputs[static_cast<size_t>(1 - i)], x, &zero) && zero == 0.0)
      lower = x;
  }
  Node* trilu = lower == kNoValue ? nullptr : rewrite::producer(graph, lower);
  if (trilu == nullptr || !rewrite::is_op(*trilu, "Trilu") || trilu->attr_int("upper", 1) != 0 ||
      !trilu->has_input(0))
    return false;
  std::vector<int64_t> k;  // the diagonal's offset, 0 when absent
  if (trilu->has_input(1) && !(rewrite::int64_constant(graph, trilu->inputs[1], &k) && k == std::vector<int64_t>{0}))
    return false;
  Node* fill = rewrite::producer(graph, trilu->inputs[0]);
  if (fill == nullptr || !rewrite::is_op(*fill, "ConstantOfShape") || fill->inputs.size() != 1) return false;
  const Attribute* value = fill->attr("value");
  double c = 0.0;  // ConstantOfShape's default is a float 0: all masked, not causal
  if (value == nullptr || !rewrite::tensor_scalar(value->t, &c) || c == 0.0 || std::isnan(c)) return false;
  std::vector<symbolic::DimRef> shape;
  return symbolic::shape_elements(graph, fill->inputs[0], &shape) && shape.size() == 2 && shape[0] == q_len &&
         shape[1] == kv_len;
}

bool is_identity4(const std::vector<int64_t>& p) { return p[0] == 0 && p[1] == 1 && p[2] == 2 && p[3] == 3; }

// ---- The 3D form: heads split by the Attention node itself.
//
// Q, K and V usually reach the chain as Transpose(Reshape(x, [B, S, H, D]))
// of a [B, S, H * D] projection, and the context leaves as
// Reshape(Transpose(Y), [B, S, H * Dv]). Attention's 3D form (q_num_heads,
// kv_num_heads) does exactly those splits and merges itself, reading the
// projections in place, so all eight layout nodes go.

bool is_perm(const Node& node, std::initializer_list<int64_t> perm) {
  const Attribute* a = node.attr("perm");
  return a != nullptr && a->ints == std::vector<int64_t>(perm);
}

// Reshape(x3, shape) where x3 is [B, S, N] (N known) and shape is
// [B or 0, S or 0, H, D] with H * D = N (one of them may be -1): x3, H, D.
bool split_heads(const Graph& graph, ValueId x4, ValueId* x3, int64_t* heads, int64_t* head_size) {
  const NodeId id = graph.values[static_cast<size_t>(x4)].producer;
  if (id == kNoNode || !rewrite::has_single_consumer(graph, x4)) return false;
  const Node& reshape = graph.nodes[static_cast<size_t>(id)];
  if (!rewrite::in_scope(graph, reshape)) return false;
  if (!rewrite::is_op(reshape, "Reshape") || reshape.since_version < 5 || reshape.inputs.size() != 2) return false;
  const ValueId x = reshape.inputs[0];
  if (!float_rank(graph, x, 3)) return false;
  const Dim& n = type_of(graph, x).dims[2];
  std::vector<symbolic::DimRef> e;
  if (!n.is_known() || !symbolic::shape_elements(graph, reshape.inputs[1], &e) || e.size() != 4) return false;
  const bool zero_copies = reshape.attr_int("allowzero", 0) == 0;
  for (int64_t axis = 0; axis < 2; ++axis) {
    const symbolic::DimRef& d = e[static_cast<size_t>(axis)];
    if (d.is_number() && d.number == 0 && zero_copies) continue;
    if (!(d == symbolic::dim_source(graph, x, axis))) return false;
  }
  if (!e[2].is_number() || !e[3].is_number()) return false;
  int64_t h = e[2].number;
  int64_t dh = e[3].number;
  if (h == -1 && dh > 0 && n.value % dh == 0) h = n.value / dh;
  if (dh == -1 && h > 0 && n.value % h == 0) dh = n.value / h;
  if (h <= 0 || dh <= 0 || h * dh != n.value) return false;
  *x3 = x;
  *heads = h;
  *head_size = dh;
  return true;
}

// Transpose(Reshape(x3, [B, S, H, D]), perm) read by the chain only.
bool heads_of(Graph& graph, ValueId x4t, std::initializer_list<int64_t> perm, ValueId* x3, int64_t* heads,
              int64_t* head_size) {
  Node* t = rewrite::producer(graph, x4t);
  return t != nullptr && rewrite::is_op(*t, "Transpose") && t->inputs.size() == 1 && is_perm(*t, perm) &&
         rewrite::has_single_consumer(graph, x4t) && split_heads(graph, t->inputs[0], x3, heads, head_size);
}

struct Plan3d {
  ValueId q = kNoValue, k = kNoValue, v = kNoValue;
  int64_t q_heads = 0, kv_heads = 0, v_head_size = 0;
  std::vector<Node*> layout;    // the Reshapes and Transposes that go
  Node* out_reshape = nullptr;  // reads Y; dropped too when it only merges the heads
  bool out_reshape_merges = false;
};

void add_layout_pair(Graph& graph, ValueId x4t, Plan3d& p) {
  Node* t = rewrite::producer(graph, x4t);
  p.layout.push_back(t);
  p.layout.push_back(rewrite::producer(graph, t->inputs[0]));
}

bool match_3d(Graph& graph, const Match& m, Plan3d& p) {
  int64_t dq = 0, dk = 0, kv_heads_v = 0;
  const ValueId kt = m.scores->inputs[1];
  if (!heads_of(graph, m.scores->inputs[0], {0, 2, 1, 3}, &p.q, &p.q_heads, &dq) ||
      !heads_of(graph, kt, {0, 2, 3, 1}, &p.k, &p.kv_heads, &dk) ||
      !heads_of(graph, m.context->inputs[1], {0, 2, 1, 3}, &p.v, &kv_heads_v, &p.v_head_size))
    return false;
  if (dq != dk || kv_heads_v != p.kv_heads || p.q_heads % p.kv_heads != 0) return false;
  const ValueId y4 = m.context->outputs[0];
  Node* out_t = rewrite::single_consumer(graph, y4);
  if (out_t == nullptr || !rewrite::is_op(*out_t, "Transpose") || !is_perm(*out_t, {0, 2, 1, 3})) return false;
  Node* out_r = rewrite::single_consumer(graph, out_t->outputs[0]);
  if (out_r == nullptr || !rewrite::is_op(*out_r, "Reshape") || out_r->since_version < 5 ||
      out_r->inputs.size() != 2 || out_r->inputs[0] != out_t->outputs[0] || out_r->inputs[1] == out_t->outputs[0])
    return false;
  add_layout_pair(graph, m.scores->inputs[0], p);
  add_layout_pair(graph, kt, p);
  add_layout_pair(graph, m.context->inputs[1], p);
  p.layout.push_back(out_t);
  p.out_reshape = out_r;
  // [B, S, H * Dv] again: dims 0 and 1 are Q's (or 0, copying them).
  std::vector<symbolic::DimRef> e;
  if (symbolic::shape_elements(graph, out_r->inputs[1], &e) && e.size() == 3 &&
      out_r->attr_int("allowzero", 0) == 0) {
    bool merges = e[2].is_number() && (e[2].number == p.q_heads * p.v_head_size || e[2].number == -1);
    for (int64_t axis = 0; axis < 2; ++axis) {
      const symbolic::DimRef& d = e[static_cast<size_t>(axis)];
      merges = merges && ((d.is_number() && d.number == 0) || d == symbolic::dim_source(graph, p.q, axis));
    }
    p.out_reshape_merges = merges;
  }
  return true;
}

// Rewrites the chain into the 3D Attention. The context MatMul becomes it.
void apply_3d(Graph& graph, Node& context, const Plan3d& p) {
  for (Node* n : p.layout) n->removed = true;
  if (p.out_reshape_merges) {
    rewrite::absorb_consumer(graph, context, *p.out_reshape);
  } else {
    std::vector<Dim> dims = type_of(graph, p.q).dims;
    dims[2] = Dim::known(p.q_heads * p.v_head_size);
    const ValueId y = graph.add_value(rewrite::unique_value_name(graph, context.name + "_attention"),
                                      ValueType::tensor(DataType::kFloat, dims));
    context.outputs[0] = y;
    p.out_reshape->inputs[0] = y;
  }
  context.inputs[0] = p.q;
  context.inputs[1] = p.k;
  context.inputs[2] = p.v;
  context.attributes.push_back(rewrite::int_attribute("q_num_heads", p.q_heads));
  context.attributes.push_back(rewrite::int_attribute("kv_num_heads", p.kv_heads));
}

bool fuse_one(Graph& graph, Node& softmax) {
  if (!rewrite::is_op(softmax, "Softmax") || softmax.inputs.size() != 1 || softmax.outputs.size() != 1 ||
      !softmax_over_last_axis(softmax))
    return false;
  Match m;
  m.softmax = &softmax;
  const ValueId p = softmax.outputs[0];
  Node* context = rewrite::single_consumer(graph, p);
  if (context == nullptr || !rewrite::is_op(*context, "MatMul") || context->inputs.size() != 2 ||
      context->inputs[0] != p || context->inputs[1] == p || context->outputs.size() != 1)
    return false;
  m.context = context;
  if (!match_before_softmax(graph, softmax.inputs[0], m) || !match_key(graph, m)) return false;

  const ValueId q = m.scores->inputs[0];
  const ValueId v = context->inputs[1];
  if (!float_rank(graph, q, 4) || !float_rank(graph, m.scores->inputs[1], 4) || !float_rank(graph, v, 4) ||
      !float_rank(graph, softmax.outputs[0], 4) || q == m.scores->inputs[1])
    return false;
  if (heads_incompatible(type_of(graph, q), type_of(graph, v))) return false;

  auto zero = Tensor::allocate(DataType::kFloat, Shape{});  // for a Where mask
  if (!zero.ok()) return false;
  // Q [B, H, S, D] and V [B, H, L, Dv]: the lengths a causal condition must have.
  const bool causal = m.mask_where != nullptr &&
                      causal_condition(graph, m.mask_where->inputs[0], symbolic::dim_source(graph, q, 2),
                                       symbolic::dim_source(graph, v, 2));
  Plan3d plan;
  const bool three_d = match_3d(graph, m, plan);

  // K: the Transpose gives K itself now, or goes (or, 3D, goes with its Reshape).
  ValueId k = m.k_source;
  if (three_d) {
    // apply_3d() below
  } else if (is_identity4(m.k_perm)) {
    m.k_transpose->removed = true;
  } else {
    m.k_transpose->attributes.clear();
    m.k_transpose->attributes.push_back(rewrite::ints_attribute("perm", m.k_perm));
    k = m.k_transpose->outputs[0];
    ValueType& kt = graph.values[static_cast<size_t>(k)].type;
    const ValueType& src = type_of(graph, m.k_source);
    std::vector<Dim> dims;
    for (int64_t i : m.k_perm) dims.push_back(src.dims[static_cast<size_t>(i)]);
    kt = ValueType::tensor(DataType::kFloat, dims);
  }

  ValueId mask = m.mask;
  if (causal) {
    m.mask_where->removed = true;  // the condition's nodes go as dead nodes
  } else if (m.mask_where != nullptr) {
    // Where(cond, fill, 0): the fill where cond holds, 0 elsewhere, in a new
    // value of cond's shape (the old output had the scores' shape).
    const ValueId z = rewrite::add_constant(graph, softmax.name + "_mask_zero", std::move(zero).value());
    const std::vector<Dim> cond_dims = type_of(graph, m.mask_where->inputs[0]).dims;  // add_value moves values
    mask = graph.add_value(rewrite::unique_value_name(graph, softmax.name + "_additive_mask"),
                           ValueType::tensor(DataType::kFloat, cond_dims));
    m.mask_where->inputs[2] = z;
    m.mask_where->outputs[0] = mask;
  }
  if (m.mask_add != nullptr) m.mask_add->removed = true;
  if (m.scale_node != nullptr) m.scale_node->removed = true;
  m.scores->removed = true;
  softmax.removed = true;

  // com.switchyard's FusedAttention, not ai.onnx Attention: it keeps the
  // chain's answers where Attention's text differs (schema/fused.cc). A
  // Where mask replaced the masked scores by its fill; the additive mask it
  // became adds the fill, so the node says "replace".
  rewrite::make_switchyard_op(graph, *context, kFusedAttentionOp);
  context->inputs = {q, k, v};
  if (mask != kNoValue) context->inputs.push_back(mask);
  context->attributes.clear();
  context->attributes.push_back(rewrite::float_attribute("scale", static_cast<float>(m.scale)));
  if (causal) context->attributes.push_back(rewrite::int_attribute("is_causal", 1));
  if (m.mask_where != nullptr) {
    context->attributes.push_back(rewrite::string_attribute(kMaskedScoresAttr, "replace"));
    if (causal) context->attributes.push_back(rewrite::float_attribute(kCausalFillAttr, static_cast<float>(m.where_fill)));
  }
  if (three_d) apply_3d(graph, *context, plan);
  return true;
}

}  // namespace

Status fuse_attention(Graph& graph, int* fused) {
  rewrite::rewrite_each_node(graph, fuse_one, fused);
  return ok_status();
}

}  // namespace sy
