// MatMul and Gemm schemas.
#include <string>

#include "schema/schema.h"

namespace sy {
namespace {

bool dims_conflict(const Dim& a, const Dim& b) { return a.is_known() && b.is_known() && a.value != b.value; }

}  // namespace

// Declared in schema_tables.h: FusedMatMul (schema/fused.cc) reuses it.
Status infer_matmul(InferenceContext& ctx) {
  const ValueType* a = ctx.input_type(0);
  const ValueType* b = ctx.input_type(1);
  if (a == nullptr || b == nullptr) return ctx.error("inputs A and B are required");
  ValueType out = ValueType::tensor(a->dtype);
  SY_RETURN_IF_ERROR(infer_matmul_shape(ctx, *a, *b, out));
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

namespace {

Status infer_gemm(InferenceContext& ctx) {
  const ValueType* a = ctx.input_type(0);
  const ValueType* b = ctx.input_type(1);
  if (a == nullptr || b == nullptr) return ctx.error("inputs A and B are required");
  ValueType out = ValueType::tensor(a->dtype);
  if (a->has_shape && a->rank() != 2) return ctx.error("A must be 2-D; got " + a->shape_string());
  if (b->has_shape && b->rank() != 2) return ctx.error("B must be 2-D; got " + b->shape_string());
  const bool trans_a = ctx.node().attr_int("transA", 0) != 0;
  const bool trans_b = ctx.node().attr_int("transB", 0) != 0;
  if (a->has_shape && b->has_shape) {
    const Dim& k_a = a->dims[trans_a ? 0 : 1];
    const Dim& k_b = b->dims[trans_b ? 1 : 0];
    if (dims_conflict(k_a, k_b))
      return ctx.error("op(A) and op(B) have different inner dimensions (" + k_a.to_string() + " vs " +
                       k_b.to_string() + "); A " + a->shape_string() + ", B " + b->shape_string());
  }
  out.has_shape = true;
  out.dims = {a->has_shape ? a->dims[trans_a ? 1 : 0] : Dim::unknown(),
              b->has_shape ? b->dims[trans_b ? 0 : 1] : Dim::unknown()};
  if (const ValueType* c = ctx.input_type(2); c != nullptr && c->has_shape) {
    if (c->rank() > 2) return ctx.error("C must have rank <= 2; got " + c->shape_string());
    for (size_t i = 0; i < c->rank(); ++i) {
      const Dim& cd = c->dims[i];
      const Dim& od = out.dims[i + 2 - c->rank()];
      if (cd.is_known() && cd.value != 1 && dims_conflict(cd, od))
        return ctx.error("C " + c->shape_string() + " cannot be broadcast to [" + out.dims[0].to_string() + "," +
                         out.dims[1].to_string() + "]");
    }
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

const OpSchema kMatMulSchemas[] = {
    {"", "MatMul", 1, 2, 2, 1, 1, &infer_matmul},
    {"", "Gemm", 1, 3, 3, 1, 1, &infer_gemm},
    {"", "Gemm", 11, 2, 3, 1, 1, &infer_gemm},
};

}  // namespace

std::span<const OpSchema> matmul_schemas() { return kMatMulSchemas; }

}  // namespace sy
