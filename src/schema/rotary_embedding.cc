// Schema of RotaryEmbedding: Y has X's type and shape. X is 4-D
// [batch, heads, sequence, head_size] or 3-D [batch, sequence, hidden],
// which needs the num_heads attribute to be split into heads.
#include <string>

#include "schema/schema.h"

namespace sy {
namespace {

Status infer_rotary_embedding(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* x, required_input(ctx, 0));
  if (ctx.input_type(1) == nullptr || ctx.input_type(2) == nullptr)
    return ctx.error("inputs cos_cache and sin_cache are required");
  const Node& n = ctx.node();
  const int64_t num_heads = n.attr_int("num_heads", 0);
  const int64_t rotary_dim = n.attr_int("rotary_embedding_dim", 0);
  const int64_t interleaved = n.attr_int("interleaved", 0);
  if (num_heads < 0) return ctx.error("attribute num_heads must be positive, got " + std::to_string(num_heads));
  if (rotary_dim < 0 || rotary_dim % 2 != 0)
    return ctx.error("attribute rotary_embedding_dim must be 0 (the whole head) or a positive even number, got " +
                     std::to_string(rotary_dim));
  if (interleaved != 0 && interleaved != 1)
    return ctx.error("attribute interleaved must be 0 or 1, got " + std::to_string(interleaved));
  if (x->has_shape) {
    if (x->rank() != 3 && x->rank() != 4)
      return ctx.error("X must be 3-D [batch, sequence, hidden] or 4-D [batch, heads, sequence, head_size], got " +
                       x->shape_string());
    if (x->rank() == 3 && num_heads == 0)
      return ctx.error("X " + x->shape_string() + " is 3-D, so attribute num_heads is required");
    const Dim& last = x->dims.back();
    if (x->rank() == 3 && last.is_known() && last.value % num_heads != 0)
      return ctx.error("X " + x->shape_string() + ": hidden size " + last.to_string() +
                       " is not a multiple of num_heads " + std::to_string(num_heads));
  }
  const ValueType* position_ids = ctx.input_type(3);
  if (position_ids != nullptr && position_ids->has_shape && position_ids->rank() != 2)
    return ctx.error("position_ids must be 2-D [batch, sequence], got " + position_ids->shape_string());
  return infer_same_as_input0(ctx);
}

constexpr OpSchema kRotaryEmbeddingSchemas[] = {
    {"", "RotaryEmbedding", 23, 3, 4, 1, 1, &infer_rotary_embedding},
};

}  // namespace

std::span<const OpSchema> rotary_embedding_schemas() { return kRotaryEmbeddingSchemas; }

}  // namespace sy
