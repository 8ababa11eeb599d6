// com.switchyard QLinearAdd (schema/qlinear.cc): the residual Add of a
// quantized CNN on the 8-bit tensors, numpy broadcasting, per-tensor scales
// and zero points, an optional Relu as a floor at C's zero point. The
// arithmetic is qlinear_add_simd.h's, which rounds as the unfused
// DequantizeLinear -> Add -> QuantizeLinear does.
//
// The broadcast walker (elementwise_broadcast.h) hands out runs in which
// each input moves or stays; the loop takes A moving and B moving or
// staying, so a run with A staying swaps the two (float addition commutes
// exactly) and a run with both staying is one element repeated.
#include <algorithm>
#include <cmath>
#include <string>

#include "providers/cpu/elementwise_broadcast.h"
#include "providers/cpu/elementwise_common.h"
#include "providers/cpu/qlinear_add_simd.h"
#include "providers/kernel.h"
#include "schema/fused.h"
#include "switchyard/data_type.h"

namespace sy::cpu {
namespace {

constexpr const char* kNames[] = {"A", "A_scale", "A_zero_point", "B", "B_scale", "B_zero_point",
                                  "C_scale", "C_zero_point"};
constexpr size_t kA = 0, kAScale = 1, kAZp = 2, kB = 3, kBScale = 4, kBZp = 5, kCScale = 6, kCZp = 7;

// "input 4 (B_scale) [2] float", for messages.
std::string describe_input(const KernelContext& ctx, size_t i) { return sy::describe_input(ctx, i, kNames[i]); }

// Input i holds one value, of A's type (a zero point, B) or float (a scale).
Status check_parameter(const KernelContext& ctx, size_t i, DataType want) {
  const Tensor& t = *ctx.input(i);
  if (t.dtype() != want)
    return kernel_error(ctx, describe_input(ctx, i) + " must be " + std::string(data_type_name(want)) +
                                 (want == DataType::kFloat ? "" : ", A's type"));
  if (t.shape().rank() > 1 || t.num_elements() != 1)
    return kernel_invalid_argument(ctx, describe_input(ctx, i) + " must hold one value (per tensor)");
  if (want == DataType::kFloat) {
    const float v = t.data<float>()[0];
    if (v == 0.0f || !std::isfinite(v))
      return kernel_invalid_argument(ctx, describe_input(ctx, i) + " holds " + std::to_string(v) +
                                              "; scales must be finite and non-zero");
  }
  return ok_status();
}

int32_t zero_point(const Tensor& t) {
  return t.dtype() == DataType::kInt8 ? int32_t{t.data<int8_t>()[0]} : int32_t{t.data<uint8_t>()[0]};
}

// The same sum with A and B's roles exchanged.
QLinearAddParams swapped(const QLinearAddParams& p) {
  QLinearAddParams s = p;
  std::swap(s.a_scale, s.b_scale);
  std::swap(s.a_zero_point, s.b_zero_point);
  return s;
}

class QLinearAddKernel final : public Kernel {
 public:
  QLinearAddKernel(const KernelCreateContext& ctx, Status& status) {
    const std::string activation = ctx.node().attr_string(kActivationAttr, "");
    if (!activation.empty() && activation != "Relu") {
      status = ctx.error(std::string(kActivationAttr) + " must be \"\" or \"Relu\"; got \"" + activation + "\"");
      return;
    }
    relu_ = activation == "Relu";
  }

  Status run(KernelContext& ctx) const override {
    for (size_t i = 0; i < 8; ++i)
      if (ctx.input(i) == nullptr)
        return kernel_error(ctx, "input " + std::to_string(i) + " (" + kNames[i] + ") is required");
    const Tensor& a = *ctx.input(kA);
    const Tensor& b = *ctx.input(kB);
    const DataType t = a.dtype();
    if (t != DataType::kInt8 && t != DataType::kUint8)
      return kernel_error(ctx, describe_input(ctx, kA) + " must be int8 or uint8");
    if (b.dtype() != t) return kernel_error(ctx, describe_input(ctx, kB) + " must have A's type " +
                                                     std::string(data_type_name(t)));
    for (size_t i : {kAZp, kBZp, kCZp}) SY_RETURN_IF_ERROR(check_parameter(ctx, i, t));
    for (size_t i : {kAScale, kBScale, kCScale}) SY_RETURN_IF_ERROR(check_parameter(ctx, i, DataType::kFloat));

    QLinearAddParams p;
    p.a_scale = ctx.input(kAScale)->data<float>()[0];
    p.b_scale = ctx.input(kBScale)->data<float>()[0];
    p.c_scale = ctx.input(kCScale)->data<float>()[0];
    p.a_zero_point = zero_point(*ctx.input(kAZp));
    p.b_zero_point = zero_point(*ctx.input(kBZp));
    p.c_zero_point = zero_point(*ctx.input(kCZp));
    p.lo = t == DataType::kInt8 ? -128 : 0;
    p.hi = t == DataType::kInt8 ? 127 : 255;
    // Relu then QuantizeLinear: quantizing is monotone and maps 0 to the
    // zero point, so the Relu is a floor there.
    if (relu_) p.lo = std::max(p.lo, p.c_zero_point);
    const QLinearAddParams ps = swapped(p);

    const Shape* shapes[] = {&a.shape(), &b.shape()};
    Shape out_shape;
    BroadcastPlan plan;
    SY_RETURN_IF_ERROR(broadcast_shapes(ctx, shapes, out_shape));
    SY_RETURN_IF_ERROR(make_broadcast_plan(ctx, shapes, out_shape, plan));
    SY_ASSIGN_OR_RETURN(Tensor * c, ctx.allocate_output(0, t, out_shape));
    if (t == DataType::kUint8)
      add(ctx, plan, a.data<uint8_t>(), b.data<uint8_t>(), p, ps, qlinear_add_simd().add_u8, c->data<uint8_t>());
    else
      add(ctx, plan, a.data<int8_t>(), b.data<int8_t>(), p, ps, qlinear_add_simd().add_s8, c->data<int8_t>());
    return ok_status();
  }

 private:
  template <typename Q, typename Fn>
  static void add(const KernelContext& ctx, const BroadcastPlan& plan, const Q* a, const Q* b,
                  const QLinearAddParams& p, const QLinearAddParams& swapped_p, Fn fn, Q* c) {
    parallel_range(ctx.thread_pool(), plan.total, kCheapChunk, [&](int64_t begin, int64_t end) {
      for_each_run(plan, begin, end, [&](int64_t out, const int64_t* in, int64_t n) {
        const bool a_moves = plan.inner_moves[0], b_moves = plan.inner_moves[1];
        if (a_moves) {
          fn(a + in[0], b + in[1], b_moves, n, p, c + out);
        } else if (b_moves) {
          fn(b + in[1], a + in[0], false, n, swapped_p, c + out);
        } else {
          fn(a + in[0], b + in[1], false, 1, p, c + out);
          std::fill(c + out + 1, c + out + n, c[out]);
        }
      });
    });
  }

  bool relu_ = false;
};

constexpr uint64_t kInt8Types = type_bit(DataType::kInt8) | type_bit(DataType::kUint8);

const KernelDef kQLinearAddKernels[] = {
    {kSwitchyardDomain, kQLinearAddOp, 1, kLatestVersion, 0, kInt8Types, &make_kernel<QLinearAddKernel>},
};

}  // namespace

std::span<const KernelDef> qlinear_add_kernels() { return kQLinearAddKernels; }

}  // namespace sy::cpu
