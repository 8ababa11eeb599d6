// Schema of LinearAttention (opset 27): output [B, T, q_num_heads * d_v] of
// query's type and present_state [B, kv_num_heads, d_k, d_v] of past_state's
// type (query's when past_state is omitted).
#include <string>

#include "schema/schema.h"

namespace sy {
namespace {

Status infer_linear_attention(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* q, required_input(ctx, 0));
  SY_RETURN_IF_ERROR(required_input(ctx, 1).status());
  SY_ASSIGN_OR_RETURN(const ValueType* v, required_input(ctx, 2));
  const int64_t q_heads = ctx.node().attr_int("q_num_heads", 0);
  const int64_t kv_heads = ctx.node().attr_int("kv_num_heads", 0);
  if (q_heads <= 0 || kv_heads <= 0 || q_heads % kv_heads != 0)
    return ctx.error("q_num_heads (" + std::to_string(q_heads) + ") must be a positive multiple of kv_num_heads (" +
                     std::to_string(kv_heads) + ")");
  const std::string rule = ctx.node().attr_string("update_rule", "gated_delta");
  if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta")
    return ctx.error("update_rule must be 'linear', 'gated', 'delta' or 'gated_delta', got '" + rule + "'");
  const ValueType* past = ctx.input_type(3);
  ValueType out = ValueType::tensor(q->dtype);
  ValueType present = ValueType::tensor(past != nullptr ? past->dtype : q->dtype);
  if (q->has_shape && v->has_shape && q->rank() == 3 && v->rank() == 3) {
    Dim dk = Dim::unknown();
    Dim dv = Dim::unknown();
    if (q->dims[2].is_known()) {
      if (q->dims[2].value % q_heads != 0)
        return ctx.error("query's last dim must be a multiple of q_num_heads, got " + q->shape_string());
      dk = Dim::known(q->dims[2].value / q_heads);
    }
    if (v->dims[2].is_known()) {
      if (v->dims[2].value % kv_heads != 0)
        return ctx.error("value's last dim must be a multiple of kv_num_heads, got " + v->shape_string());
      dv = Dim::known(v->dims[2].value / kv_heads);
    }
    const Dim width = dv.is_known() ? Dim::known(dv.value * q_heads) : Dim::unknown();
    out = ValueType::tensor(q->dtype, {q->dims[0], q->dims[1], width});
    present = ValueType::tensor(present.dtype, {q->dims[0], Dim::known(kv_heads), dk, dv});
  }
  ctx.output_type(0) = std::move(out);
  if (ctx.num_outputs() > 1) ctx.output_type(1) = std::move(present);
  return ok_status();
}

constexpr OpSchema kLinearAttentionSchemas[] = {
    {"", "LinearAttention", 27, 3, 6, 1, 2, &infer_linear_attention},
};

}  // namespace

std::span<const OpSchema> linear_attention_schemas() { return kLinearAttentionSchemas; }

}  // namespace sy
