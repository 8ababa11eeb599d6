// LinearAttention (opset 27): the recurrent form of linear attention with a
// (d_k x d_v) state per key/value head, kept in float as ONNX's reference
// does. Per time step t and kv head:
//   gated rules:  S *= exp(decay_t)            (per key dim or per head)
//   delta rules:  v_t = beta_t (v_t - S^T k_t)
//   all rules:    S += k_t v_t^T
//   output:       o_t = scale q_t^T S          for each query head of the group
// Heads are independent, so (batch, kv head) pairs run in parallel, each over
// all time steps in order. chunk_size is a tuning hint and does not change the
// result; the recurrence is exact for any value.
#include <algorithm>
#include <cmath>
#include <string>

#include "core/checked_math.h"
#include "providers/cpu/elementwise_common.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

constexpr uint64_t kLinearAttentionTypes =
    type_bit(DataType::kFloat) | type_bit(DataType::kFloat16) | type_bit(DataType::kBfloat16);

class LinearAttentionKernel final : public Kernel {
 public:
  LinearAttentionKernel(const KernelCreateContext& ctx, Status& status)
      : q_heads_(ctx.node().attr_int("q_num_heads", 0)),
        kv_heads_(ctx.node().attr_int("kv_num_heads", 0)),
        scale_(ctx.node().attr_float("scale", 0.0f)) {
    const std::string rule = ctx.node().attr_string("update_rule", "gated_delta");
    if (rule == "linear") {
    } else if (rule == "gated") {
      gated_ = true;
    } else if (rule == "delta") {
      delta_ = true;
    } else if (rule == "gated_delta") {
      gated_ = delta_ = true;
    } else {
      status = ctx.error("update_rule must be 'linear', 'gated', 'delta' or 'gated_delta', got '" + rule + "'");
      return;
    }
    if (q_heads_ <= 0 || kv_heads_ <= 0 || q_heads_ % kv_heads_ != 0)
      status = ctx.error("q_num_heads (" + std::to_string(q_heads_) + ") must be a positive multiple of kv_num_heads (" +
                         std::to_string(kv_heads_) + ")");
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& q = *ctx.input(0);
    const Tensor& k = *ctx.input(1);
    const Tensor& v = *ctx.input(2);
    const Tensor* past = ctx.input(3);
    const Tensor* decay = ctx.input(4);
    const Tensor* beta = ctx.input(5);
    if (gated_ != (decay != nullptr))
      return kernel_error(ctx, gated_ ? "this update_rule requires input 4 (decay)"
                                      : "this update_rule does not take input 4 (decay)");
    if (delta_ != (beta != nullptr))
      return kernel_error(ctx, delta_ ? "this update_rule requires input 5 (beta)"
                                      : "this update_rule does not take input 5 (beta)");
    if (q.shape().rank() != 3) return kernel_error(ctx, "input 0 (query) must be [B, T, H_q * d_k], got " + q.describe());
    const int64_t batch = q.shape()[0];
    const int64_t steps = q.shape()[1];
    if (q.shape()[2] % q_heads_ != 0)
      return kernel_error(ctx, "input 0 (query)'s last dim is not a multiple of q_num_heads, got " + q.describe());
    const int64_t dk = q.shape()[2] / q_heads_;
    const DataType dt = q.dtype();
    if (k.dtype() != dt || k.shape() != Shape{batch, steps, kv_heads_ * dk})
      return kernel_error(ctx, "input 1 (key) must be [" + std::to_string(batch) + ", " + std::to_string(steps) +
                                   ", " + std::to_string(kv_heads_ * dk) + "] of query's type, got " + k.describe());
    if (v.dtype() != dt || v.shape().rank() != 3 || v.shape()[0] != batch || v.shape()[1] != steps ||
        v.shape()[2] % kv_heads_ != 0)
      return kernel_error(ctx, "input 2 (value) must be [B, T, kv_num_heads * d_v] of query's type, got " +
                                   v.describe());
    const int64_t dv = v.shape()[2] / kv_heads_;
    const Shape state_shape{batch, kv_heads_, dk, dv};
    if (past != nullptr && past->shape() != state_shape)
      return kernel_error(ctx, "input 3 (past_state) must be " + state_shape.to_string() + ", got " + past->describe());
    const bool decay_per_dim = decay != nullptr && decay->shape().rank() == 3 && decay->shape()[2] == kv_heads_ * dk;
    if (decay != nullptr && (decay->dtype() != dt || decay->shape().rank() != 3 || decay->shape()[0] != batch ||
                             decay->shape()[1] != steps || (!decay_per_dim && decay->shape()[2] != kv_heads_)))
      return kernel_error(ctx, "input 4 (decay) must be [B, T, kv_num_heads] or [B, T, kv_num_heads * d_k] of "
                               "query's type, got " + decay->describe());
    if (beta != nullptr && (beta->dtype() != dt || beta->shape().rank() != 3 || beta->shape()[0] != batch ||
                            beta->shape()[1] != steps || (beta->shape()[2] != kv_heads_ && beta->shape()[2] != 1)))
      return kernel_error(ctx, "input 5 (beta) must be [B, T, kv_num_heads] or [B, T, 1] of query's type, got " +
                                   beta->describe());
    const DataType state_type = past != nullptr ? past->dtype() : dt;
    if ((type_bit(state_type) & kLinearAttentionTypes) == 0)
      return kernel_error(ctx, "input 3 (past_state) must be float, float16 or bfloat16, got " + past->describe());
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, dt, Shape{batch, steps, q_heads_ * dv}));
    SY_ASSIGN_OR_RETURN(Tensor * present, ctx.allocate_output(1, state_type, state_shape));

    // Float scratch: each (batch, kv head) pair's state and one d_v vector.
    const int64_t pairs = batch * kv_heads_;
    int64_t per_pair = 0;
    int64_t total = 0;
    if (!checked_mul(dk, dv, per_pair) || !checked_add(per_pair, dv, per_pair) ||
        !checked_mul(per_pair, pairs, total) || !checked_mul(total, int64_t{sizeof(float)}, total))
      return kernel_error(ctx, "state size overflows");
    if (pairs == 0 || per_pair == 0) return ok_status();
    SY_ASSIGN_OR_RETURN(void* raw, ctx.scratch(static_cast<size_t>(total)));
    float* scratch = static_cast<float*>(raw);
    const int64_t state_size = dk * dv;

    const int64_t group = q_heads_ / kv_heads_;
    const float scale = scale_ != 0.0f ? scale_ : static_cast<float>(1.0 / std::sqrt(static_cast<double>(dk)));
    const int64_t q_heads = q_heads_;
    const int64_t kv_heads = kv_heads_;
    const bool gated = gated_;
    const bool delta = delta_;
    const int64_t beta_width = beta != nullptr ? beta->shape()[2] : 0;
    // The starting states, widened from past_state's type (which may differ
    // from query's) or zero.
    for (int64_t pair = 0; pair < pairs; ++pair) {
      float* s = scratch + pair * (state_size + dv);
      if (past == nullptr) {
        std::fill(s, s + state_size, 0.0f);
        continue;
      }
      visit_type(FloatTypes{}, state_type, [&]<typename S>(TypeTag<S>) {
        const S* ps = past->data<S>() + pair * state_size;
        for (int64_t i = 0; i < state_size; ++i) s[i] = static_cast<float>(load(ps[i]));
      });
    }
    Status status = not_implemented(ctx.node().describe() + ": element type " + std::string(data_type_name(dt)) +
                                    " is not supported");
    visit_type(FloatTypes{}, dt, [&]<typename T>(TypeTag<T>) {
      const T* pq = q.data<T>();
      const T* pk = k.data<T>();
      const T* pv = v.data<T>();
      const T* pd = decay != nullptr ? decay->data<T>() : nullptr;
      const T* pb = beta != nullptr ? beta->data<T>() : nullptr;
      T* po = out->data<T>();
      const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, steps * state_size * (group + 2)));
      ctx.thread_pool().parallel_for(pairs, grain, [&](int64_t begin, int64_t end) {
        for (int64_t pair = begin; pair < end; ++pair) {
          const int64_t b = pair / kv_heads;
          const int64_t h = pair % kv_heads;
          float* s = scratch + pair * (state_size + dv);
          float* vt = s + state_size;
          for (int64_t t = 0; t < steps; ++t) {
            const int64_t bt = b * steps + t;
            const T* kt = pk + (bt * kv_heads + h) * dk;
            const T* vsrc = pv + (bt * kv_heads + h) * dv;
            if (gated) {
              for (int64_t d = 0; d < dk; ++d) {
                const int64_t at = decay_per_dim ? (bt * kv_heads + h) * dk + d : bt * kv_heads + h;
                const float g = std::exp(static_cast<float>(load(pd[at])));
                for (int64_t m = 0; m < dv; ++m) s[d * dv + m] *= g;
              }
            }
            for (int64_t m = 0; m < dv; ++m) vt[m] = static_cast<float>(load(vsrc[m]));
            if (delta) {
              const float bv = static_cast<float>(load(pb[bt * beta_width + (beta_width == 1 ? 0 : h)]));
              for (int64_t m = 0; m < dv; ++m) {
                float retrieved = 0.0f;
                for (int64_t d = 0; d < dk; ++d) retrieved += s[d * dv + m] * static_cast<float>(load(kt[d]));
                vt[m] = bv * (vt[m] - retrieved);
              }
            }
            for (int64_t d = 0; d < dk; ++d) {
              const float kd = static_cast<float>(load(kt[d]));
              for (int64_t m = 0; m < dv; ++m) s[d * dv + m] += kd * vt[m];
            }
            // Query heads h * group .. h * group + group - 1 read this kv head.
            for (int64_t g = 0; g < group; ++g) {
              const int64_t qh = h * group + g;
              const T* qt = pq + (bt * q_heads + qh) * dk;
              T* ot = po + (bt * q_heads + qh) * dv;
              for (int64_t m = 0; m < dv; ++m) {
                float acc = 0.0f;
                for (int64_t d = 0; d < dk; ++d) acc += static_cast<float>(load(qt[d])) * s[d * dv + m];
                ot[m] = store<T>(static_cast<compute_t<T>>(scale * acc));
              }
            }
          }
        }
      });
      status = ok_status();
    });
    SY_RETURN_IF_ERROR(status);
    visit_type(FloatTypes{}, state_type, [&]<typename S>(TypeTag<S>) {
      S* ps = present->data<S>();
      for (int64_t pair = 0; pair < pairs; ++pair) {
        const float* s = scratch + pair * (state_size + dv);
        for (int64_t i = 0; i < state_size; ++i) ps[pair * state_size + i] = store<S>(static_cast<compute_t<S>>(s[i]));
      }
    });
    return ok_status();
  }

 private:
  int64_t q_heads_;
  int64_t kv_heads_;
  float scale_;
  bool gated_ = false;
  bool delta_ = false;
};

const KernelDef kLinearAttentionKernels[] = {
    {"", "LinearAttention", 27, kLatestVersion, 0, kLinearAttentionTypes, &make_kernel<LinearAttentionKernel>},
};

}  // namespace

std::span<const KernelDef> linear_attention_kernels() { return kLinearAttentionKernels; }

}  // namespace sy::cpu
