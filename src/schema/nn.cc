// Conv, pooling (max, average, Lp, global) and Attention schemas. Output
// spatial dims follow the ONNX formulas (explicit pads with floor or ceil,
// SAME_UPPER/SAME_LOWER, VALID); a dim is computed when the input's is
// known, the batch dim (symbolic or not) is carried over.
#include <string>
#include <vector>

#include "schema/schema.h"

namespace sy {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Spatial output dims for input `x` (rank >= 3). `kernel` holds -1 where
// the kernel size is unknown.
Status infer_window_dims(InferenceContext& ctx, const ValueType& x, const std::vector<int64_t>& kernel,
                         bool has_ceil_mode, std::vector<Dim>& out) {
  const Node& n = ctx.node();
  const size_t rank = x.rank() - 2;
  if (kernel.size() != rank)
    return ctx.error("the kernel has " + std::to_string(kernel.size()) + " dims but input " + x.shape_string() +
                     " has " + std::to_string(rank) + " spatial dims");
  const std::vector<int64_t> strides = n.attr_ints("strides");
  const std::vector<int64_t> dilations = n.attr_ints("dilations");
  const std::vector<int64_t> pads = n.attr_ints("pads");
  const std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  const bool ceil_mode = has_ceil_mode && n.attr_int("ceil_mode", 0) != 0;
  if (!strides.empty() && strides.size() != rank)
    return ctx.error("strides " + ints_string(strides) + " must have " + std::to_string(rank) + " values");
  if (!dilations.empty() && dilations.size() != rank)
    return ctx.error("dilations " + ints_string(dilations) + " must have " + std::to_string(rank) + " values");
  if (!pads.empty() && pads.size() != 2 * rank)
    return ctx.error("pads " + ints_string(pads) + " must have " + std::to_string(2 * rank) + " values");
  if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" && auto_pad != "VALID" &&
      !auto_pad.empty())
    return ctx.error("auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID; got \"" + auto_pad + "\"");
  for (int64_t s : strides)
    if (s <= 0) return ctx.error("strides must be positive; got " + ints_string(strides));
  for (int64_t d : dilations)
    if (d <= 0) return ctx.error("dilations must be positive; got " + ints_string(dilations));
  for (int64_t p : pads)
    if (p < 0) return ctx.error("pads must be >= 0; got " + ints_string(pads));
  for (size_t i = 0; i < rank; ++i) {
    const Dim& in = x.dims[i + 2];
    const int64_t s = strides.empty() ? 1 : strides[i];
    if (!in.is_known()) {
      out.push_back(Dim::unknown());
      continue;
    }
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out.push_back(Dim::known(ceil_div(in.value, s)));
      continue;
    }
    if (kernel[i] < 0) {
      out.push_back(Dim::unknown());
      continue;
    }
    const int64_t d = dilations.empty() ? 1 : dilations[i];
    const int64_t ek = (kernel[i] - 1) * d + 1;
    const int64_t pb = auto_pad == "VALID" || pads.empty() ? 0 : pads[i];
    const int64_t pe = auto_pad == "VALID" || pads.empty() ? 0 : pads[i + rank];
    const int64_t avail = in.value + pb + pe - ek;
    if (avail < 0)
      return ctx.error("the window (" + std::to_string(ek) + " after dilation) is larger than spatial dim " +
                       std::to_string(i) + " of input " + x.shape_string() + " plus padding");
    int64_t o = ceil_mode ? ceil_div(avail, s) + 1 : avail / s + 1;
    if (ceil_mode && (o - 1) * s >= in.value + pb) --o;
    out.push_back(Dim::known(o));
  }
  return ok_status();
}

// X must be a tensor of rank >= 3 when its rank is known.
Status check_image_input(InferenceContext& ctx, const ValueType* x) {
  if (x == nullptr) return ctx.error("input X is required");
  if (x->has_shape && x->rank() < 3)
    return ctx.error("X must have rank >= 3 (N, C, spatial...); got " + x->shape_string());
  return ok_status();
}

}  // namespace

// Declared in schema.h: the quantized convolutions (schema/qlinear.cc) reuse it.
Status infer_conv_output(InferenceContext& ctx, size_t w_input, DataType dtype) {
  const ValueType* x = ctx.input_type(0);
  const ValueType* w = ctx.input_type(w_input);
  SY_RETURN_IF_ERROR(check_image_input(ctx, x));
  if (w == nullptr) return ctx.error("input W is required");
  ValueType out = ValueType::tensor(dtype == DataType::kUndefined ? x->dtype : dtype);
  const int64_t group = ctx.node().attr_int("group", 1);
  if (group <= 0) return ctx.error("group must be positive; got " + std::to_string(group));
  if (x->has_shape && w->has_shape && w->rank() != x->rank())
    return ctx.error("W " + w->shape_string() + " must have the rank of X " + x->shape_string());
  if (x->has_shape && w->has_shape) {
    const Dim& c = x->dims[1];
    const Dim& wc = w->dims[1];
    if (c.is_known() && wc.is_known() && c.value != wc.value * group)
      return ctx.error("X has " + c.to_string() + " channels but W " + w->shape_string() + " with group " +
                       std::to_string(group) + " expects " + std::to_string(wc.value * group));
  }
  if (!x->has_shape) {
    ctx.output_type(0) = std::move(out);
    return ok_status();
  }
  std::vector<int64_t> kernel = ctx.node().attr_ints("kernel_shape");
  if (kernel.empty()) {
    for (size_t i = 2; i < x->rank(); ++i)
      kernel.push_back(w->has_shape && w->dims[i].is_known() ? w->dims[i].value : -1);
  }
  out.has_shape = true;
  out.dims.push_back(x->dims[0]);
  out.dims.push_back(w->has_shape ? w->dims[0] : Dim::unknown());
  SY_RETURN_IF_ERROR(infer_window_dims(ctx, *x, kernel, false, out.dims));
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

// Declared in schema.h: FusedConv (schema/fused.cc) reuses it.
Status infer_conv(InferenceContext& ctx) { return infer_conv_output(ctx, 1, DataType::kUndefined); }

namespace {

Status infer_pool(InferenceContext& ctx, bool has_ceil_mode) {
  const ValueType* x = ctx.input_type(0);
  SY_RETURN_IF_ERROR(check_image_input(ctx, x));
  const std::vector<int64_t> kernel = ctx.node().attr_ints("kernel_shape");
  if (kernel.empty()) return ctx.error("attribute kernel_shape is required");
  for (int64_t k : kernel)
    if (k <= 0) return ctx.error("kernel_shape must be positive; got " + ints_string(kernel));
  ValueType out = ValueType::tensor(x->dtype);
  if (x->has_shape) {
    out.has_shape = true;
    out.dims.push_back(x->dims[0]);
    out.dims.push_back(x->dims[1]);
    SY_RETURN_IF_ERROR(infer_window_dims(ctx, *x, kernel, has_ceil_mode, out.dims));
  }
  if (ctx.num_outputs() > 1) {
    ValueType indices = out;
    indices.dtype = DataType::kInt64;
    ctx.output_type(1) = std::move(indices);
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

Status infer_max_pool(InferenceContext& ctx) {
  const int64_t order = ctx.node().attr_int("storage_order", 0);
  if (order != 0 && order != 1) return ctx.error("storage_order must be 0 or 1; got " + std::to_string(order));
  return infer_pool(ctx, ctx.opset() >= 10);
}

Status infer_average_pool(InferenceContext& ctx) { return infer_pool(ctx, ctx.opset() >= 10); }

Status infer_lp_pool(InferenceContext& ctx) {
  // p is a float in version 1 and an int from 2 on.
  const Node& n = ctx.node();
  const double p = ctx.opset() < 2 ? static_cast<double>(n.attr_float("p", 2.0f))
                                   : static_cast<double>(n.attr_int("p", 2));
  if (!(p > 0)) return ctx.error("attribute p must be positive, got " + std::to_string(p));
  return infer_pool(ctx, ctx.opset() >= 18);
}

Status infer_global_pool(InferenceContext& ctx) {
  const ValueType* x = ctx.input_type(0);
  SY_RETURN_IF_ERROR(check_image_input(ctx, x));
  ValueType out = ValueType::tensor(x->dtype);
  if (x->has_shape) {
    out.has_shape = true;
    out.dims = {x->dims[0], x->dims[1]};
    for (size_t i = 2; i < x->rank(); ++i) out.dims.push_back(Dim::known(1));
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

// ---- Attention ----

// a + b when both are known; the other one when one is a known 0.
Dim dim_sum(const Dim& a, const Dim& b) {
  if (a.is_known() && b.is_known()) return Dim::known(a.value + b.value);
  if (a.is_known() && a.value == 0) return b;
  if (b.is_known() && b.value == 0) return a;
  return Dim::unknown();
}

bool dims_differ(const Dim& a, const Dim& b) { return a.is_known() && b.is_known() && a.value != b.value; }

// Q, K or V seen as [batch, heads, sequence, head size], from its 4-D shape
// or from its 3-D [batch, sequence, heads * head size] shape and the heads
// attribute. `rank` is 0 when the input's shape is unknown.
struct HeadedDims {
  size_t rank = 0;
  Dim batch, heads, seq, head_size;
  Dim hidden;  // dim 2 of a 3-D input
};

Status headed_dims(const InferenceContext& ctx, size_t input, const char* name, const char* heads_attr,
                   HeadedDims& out) {
  const ValueType* t = ctx.input_type(input);
  const Node& n = ctx.node();
  const int64_t attr_heads = n.attr_int(heads_attr, 0);
  if (n.has_attr(heads_attr) && attr_heads <= 0)
    return ctx.error(std::string("attribute ") + heads_attr + " must be positive; got " + std::to_string(attr_heads));
  if (t == nullptr || !t->has_shape) {
    if (attr_heads > 0) out.heads = Dim::known(attr_heads);
    return ok_status();
  }
  out.rank = t->rank();
  if (out.rank == 4) {
    out.batch = t->dims[0];
    out.heads = t->dims[1];
    out.seq = t->dims[2];
    out.head_size = t->dims[3];
    if (attr_heads > 0 && dims_differ(out.heads, Dim::known(attr_heads)))
      return ctx.error(std::string(name) + " " + t->shape_string() + " has " + out.heads.to_string() +
                       " heads but attribute " + heads_attr + " is " + std::to_string(attr_heads));
    return ok_status();
  }
  if (out.rank != 3)
    return ctx.error(std::string(name) + " must be 3-D or 4-D; got " + t->shape_string());
  if (attr_heads <= 0)
    return ctx.error(std::string(name) + " " + t->shape_string() + " is 3-D, so attribute " + heads_attr +
                     " is required");
  out.batch = t->dims[0];
  out.seq = t->dims[1];
  out.hidden = t->dims[2];
  out.heads = Dim::known(attr_heads);
  if (out.hidden.is_known()) {
    if (out.hidden.value % attr_heads != 0)
      return ctx.error(std::string(name) + " " + t->shape_string() + ": hidden size " + out.hidden.to_string() +
                       " is not a multiple of " + heads_attr + " " + std::to_string(attr_heads));
    out.head_size = Dim::known(out.hidden.value / attr_heads);
  }
  return ok_status();
}

Status check_attention_attributes(const InferenceContext& ctx) {
  const Node& n = ctx.node();
  const int64_t mode = n.attr_int("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3)
    return ctx.error("attribute qk_matmul_output_mode must be 0, 1, 2 or 3; got " + std::to_string(mode));
  if (n.has_attr("softmax_precision")) {
    const int64_t p = n.attr_int("softmax_precision", 0);
    if (p != 1 && p != 10 && p != 11 && p != 16)
      return ctx.error("attribute softmax_precision must be 1 (float), 10 (float16), 11 (double) or 16 (bfloat16); got " +
                       std::to_string(p));
  }
  if (ctx.opset() >= 25) {
    for (const char* w : {"left_window_size", "right_window_size"}) {
      const int64_t v = n.attr_int(w, -1);
      if (v < -1) return ctx.error(std::string("attribute ") + w + " must be -1 (unbounded) or >= 0; got " + std::to_string(v));
    }
  }
  return ok_status();
}

// Y [B, Hq, S, Dv] (or [B, S, Hq * Dv] for a 3-D Q), present_key
// [B, Hkv, P + L, D], present_value [B, Hkv, P + L, Dv] and qk_matmul_output
// [B, Hq, S, P + L]. Dims that cannot be derived stay unknown; only known
// dims that contradict each other are errors.
Status infer_attention(InferenceContext& ctx) {
  SY_RETURN_IF_ERROR(check_attention_attributes(ctx));
  SY_ASSIGN_OR_RETURN(const ValueType* q_type, required_input(ctx, 0));
  SY_ASSIGN_OR_RETURN(const ValueType* k_type, required_input(ctx, 1));
  SY_ASSIGN_OR_RETURN(const ValueType* v_type, required_input(ctx, 2));
  constexpr uint64_t kFloats = type_bit(DataType::kFloat) | type_bit(DataType::kDouble) |
                               type_bit(DataType::kFloat16) | type_bit(DataType::kBfloat16);
  SY_RETURN_IF_ERROR(check_input_dtype(ctx, 0, "Q", kFloats));
  SY_RETURN_IF_ERROR(check_input_dtype(ctx, 1, "K", kFloats));
  SY_RETURN_IF_ERROR(check_input_dtype(ctx, 2, "V", kFloats));
  SY_RETURN_IF_ERROR(check_input_dtype(ctx, 6, "nonpad_kv_seqlen", type_bit(DataType::kInt64)));
  if (ctx.has_input(4) != ctx.has_input(5))
    return ctx.error("past_key and past_value must be given together");

  HeadedDims q, k, v;
  SY_RETURN_IF_ERROR(headed_dims(ctx, 0, "Q", "q_num_heads", q));
  SY_RETURN_IF_ERROR(headed_dims(ctx, 1, "K", "kv_num_heads", k));
  SY_RETURN_IF_ERROR(headed_dims(ctx, 2, "V", "kv_num_heads", v));
  if (dims_differ(q.batch, k.batch) || dims_differ(q.batch, v.batch))
    return ctx.error("Q, K and V have different batch sizes: " + q.batch.to_string() + ", " + k.batch.to_string() +
                     ", " + v.batch.to_string());
  if (dims_differ(q.head_size, k.head_size))
    return ctx.error("Q and K have different head sizes: " + q.head_size.to_string() + " and " +
                     k.head_size.to_string());
  if (dims_differ(k.heads, v.heads) || dims_differ(k.seq, v.seq))
    return ctx.error("K and V disagree on heads or sequence length: K " + k_type->shape_string() + ", V " +
                     v_type->shape_string());
  const Dim kv_heads = k.heads.is_known() ? k.heads : v.heads;
  if (q.heads.is_known() && kv_heads.is_known() &&
      (kv_heads.value == 0 || q.heads.value % kv_heads.value != 0))
    return ctx.error("the number of query heads (" + q.heads.to_string() +
                     ") must be a multiple of the number of key/value heads (" + kv_heads.to_string() + ")");
  const Dim batch = q.batch.is_known() || q.batch.is_symbolic() ? q.batch : k.batch;

  Dim past = Dim::known(0);
  if (const ValueType* pk = ctx.input_type(4); pk != nullptr) {
    past = Dim::unknown();
    if (pk->has_shape) {
      if (pk->rank() != 4) return ctx.error("past_key must be 4-D; got " + pk->shape_string());
      past = pk->dims[2];
    }
  }
  const Dim total = dim_sum(past, k.seq);

  if (ctx.num_outputs() > 0) {
    ValueType y = ValueType::tensor(q_type->dtype);
    if (q.rank == 4) {
      y.has_shape = true;
      y.dims = {batch, q.heads, q.seq, v.head_size};
    } else if (q.rank == 3) {
      Dim hidden = Dim::unknown();
      if (q.heads.is_known() && v.head_size.is_known()) {
        hidden = Dim::known(q.heads.value * v.head_size.value);
      } else if (v.rank == 3 && q.heads.is_known() && kv_heads.is_known() && q.heads.value == kv_heads.value) {
        hidden = v.hidden;  // as many query heads as value heads: V's hidden size, even symbolic
      }
      y.has_shape = true;
      y.dims = {batch, q.seq, hidden};
    }
    ctx.output_type(0) = std::move(y);
  }
  if (ctx.num_outputs() > 1) {
    ValueType pk = ValueType::tensor(k_type->dtype);
    pk.has_shape = true;
    pk.dims = {batch, kv_heads, total, k.head_size};
    ctx.output_type(1) = std::move(pk);
  }
  if (ctx.num_outputs() > 2) {
    ValueType pv = ValueType::tensor(v_type->dtype);
    pv.has_shape = true;
    pv.dims = {batch, kv_heads, total, v.head_size};
    ctx.output_type(2) = std::move(pv);
  }
  if (ctx.num_outputs() > 3) {
    ValueType qk = ValueType::tensor(q_type->dtype);
    qk.has_shape = true;
    qk.dims = {batch, q.heads, q.seq, total};
    ctx.output_type(3) = std::move(qk);
  }
  return ok_status();
}

const OpSchema kNnSchemas[] = {
    {"", "Conv", 1, 2, 3, 1, 1, &infer_conv},
    {"", "MaxPool", 1, 1, 1, 1, 1, &infer_max_pool},
    {"", "MaxPool", 8, 1, 1, 1, 2, &infer_max_pool},
    {"", "AveragePool", 1, 1, 1, 1, 1, &infer_average_pool},
    // 2 makes p an int; 18 adds ceil_mode and dilations; 22 adds bfloat16.
    {"", "LpPool", 1, 1, 1, 1, 1, &infer_lp_pool},
    {"", "LpPool", 2, 1, 1, 1, 1, &infer_lp_pool},
    {"", "LpPool", 11, 1, 1, 1, 1, &infer_lp_pool},
    {"", "LpPool", 18, 1, 1, 1, 1, &infer_lp_pool},
    {"", "LpPool", 22, 1, 1, 1, 1, &infer_lp_pool},
    {"", "GlobalAveragePool", 1, 1, 1, 1, 1, &infer_global_pool},
    {"", "GlobalMaxPool", 1, 1, 1, 1, 1, &infer_global_pool},
    {"", "GlobalLpPool", 1, 1, 1, 1, 1, &infer_global_pool},
    // 24 adds nonpad_kv_seqlen (input 6); 25 adds left/right_window_size.
    {"", "Attention", 23, 3, 6, 1, 4, &infer_attention},
    {"", "Attention", 24, 3, 7, 1, 4, &infer_attention},
    {"", "Attention", 25, 3, 7, 1, 4, &infer_attention},
};

}  // namespace

std::span<const OpSchema> nn_schemas() { return kNnSchemas; }

Status infer_attention_op(InferenceContext& ctx) { return infer_attention(ctx); }

}  // namespace sy
