// ai.onnx.preview FlexAttention (version 1) over rank-4 Q (B, Hq, L, E),
// K (B, Hkv, S, E) and V (B, Hkv, S, Ev):
//   scores = (Q @ K^T) * scale            in the softmax precision C
//   scores = score_mod(scores)            the whole (B, Hq, L, S) tensor
//   probs  = softmax(scores, axis=-1)
//   probs  = prob_mod(probs)
//   Y      = probs @ V
// Query head h reads K/V head h / (Hq / Hkv) (grouped-query attention).
// The modifiers are subgraphs the session compiled, run like a control-flow
// body (control_flow/body.h) on a frame kept in the kernel's state. C is
// float or double (softmax_precision 1 or 11; the default is double for
// double inputs, float otherwise); the 16-bit precisions are not supported.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>

#include "core/checked_math.h"
#include "providers/cpu/control_flow/body.h"
#include "providers/cpu/elementwise_common.h"
#include "providers/cpu/softmax_simd.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

constexpr uint64_t kFlexAttentionTypes = type_bit(DataType::kFloat) | type_bit(DataType::kDouble) |
                                         type_bit(DataType::kFloat16) | type_bit(DataType::kBfloat16);

// Frames for the modifier bodies, used only by the step's own run() on the
// thread running the enclosing frame, hence mutable.
class FlexAttentionState final : public KernelState {
 public:
  mutable std::unique_ptr<ExecutionFrame> score_frame;
  mutable std::unique_ptr<ExecutionFrame> prob_frame;
};

class FlexAttentionKernel final : public Kernel {
 public:
  FlexAttentionKernel(const KernelCreateContext& ctx, Status& status) {
    const Node& n = ctx.node();
    if (n.has_attr("scale")) {
      has_scale_ = true;
      scale_ = n.attr_float("scale", 0.0f);
    }
    if (n.has_attr("softmax_precision")) {
      const int64_t p = n.attr_int("softmax_precision", 0);
      if (p == 10 || p == 16) {
        status = ctx.unsupported(n.describe() + ": softmax_precision " + std::to_string(p) +
                                 " (a 16-bit softmax) is not supported; use 1 (float) or 11 (double)");
        return;
      }
      if (p != 1 && p != 11) {
        status = ctx.error("attribute softmax_precision must be 1, 10, 11 or 16; got " + std::to_string(p));
        return;
      }
      precision_ = p == 11 ? DataType::kDouble : DataType::kFloat;
    }
    status = make_modifier(ctx, "score_mod", score_mod_, has_score_mod_);
    if (status.ok()) status = make_modifier(ctx, "prob_mod", prob_mod_, has_prob_mod_);
  }

  bool prepares() const override { return has_score_mod_ || has_prob_mod_; }

  Result<std::unique_ptr<KernelState>> prepare(const KernelContext&) const override {
    auto state = std::make_unique<FlexAttentionState>();
    if (has_score_mod_) state->score_frame = make_body_frame(score_mod_);
    if (has_prob_mod_) state->prob_frame = make_body_frame(prob_mod_);
    return std::unique_ptr<KernelState>(std::move(state));
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& q = *ctx.input(0);
    const DataType dt = q.dtype();
    const DataType c = precision_ != DataType::kUndefined ? precision_
                       : dt == DataType::kDouble          ? DataType::kDouble
                                                          : DataType::kFloat;
    switch (dt) {
      case DataType::kFloat: return c == DataType::kFloat ? run_typed<float, float>(ctx) : run_typed<float, double>(ctx);
      case DataType::kDouble:
        return c == DataType::kFloat ? run_typed<double, float>(ctx) : run_typed<double, double>(ctx);
      case DataType::kFloat16:
        return c == DataType::kFloat ? run_typed<Float16, float>(ctx) : run_typed<Float16, double>(ctx);
      case DataType::kBfloat16:
        return c == DataType::kFloat ? run_typed<BFloat16, float>(ctx) : run_typed<BFloat16, double>(ctx);
      default: return kernel_error(ctx, "unsupported element type " + q.describe());
    }
  }

 private:
  static Status make_modifier(const KernelCreateContext& ctx, const char* name, Body& body, bool& present) {
    const Attribute* a = ctx.node().attr(name);
    present = a != nullptr && a->g != nullptr;
    if (!present) return ok_status();
    SY_RETURN_IF_ERROR(make_body(ctx, name, body));
    if (body.num_inputs() != 1 || body.num_outputs() != 1)
      return ctx.error(std::string(name) + " must have 1 input and 1 output, has " + std::to_string(body.num_inputs()) +
                       " and " + std::to_string(body.num_outputs()));
    return ok_status();
  }

  // Runs a modifier on `values` (the (B, Hq, L, S) tensor in C) and copies
  // its output back into it.
  template <typename C>
  static Status run_modifier(KernelContext& ctx, const Body& body, ExecutionFrame* kept, C* values, const Shape& shape) {
    std::unique_ptr<ExecutionFrame> own;  // without a prepare phase: a frame for this run only
    if (kept == nullptr) {
      own = make_body_frame(body);
      kept = own.get();
    }
    ExecutionFrame& frame = *kept;
    const Tensor in = Tensor::view(DataTypeOf<C>::value, shape, values);
    OuterBinding outer(ctx, body, frame);
    bind_body_input(body, frame, 0, in);
    Status st = execute_body(ctx, body, frame);
    if (st.ok()) {
      Result<const Tensor*> out = body_output(ctx, body, frame, 0);
      if (!out.ok()) {
        st = out.status();
      } else if (!(*out)->is_tensor() || (*out)->dtype() != DataTypeOf<C>::value || (*out)->shape() != shape) {
        st = kernel_error(ctx, body.attribute + " must give " + in.describe() + ", gave " + describe_value(*out));
      } else {
        const C* src = (*out)->template data<C>();
        const int64_t count = shape.num_elements();
        if (src != values)
          for (int64_t i = 0; i < count; ++i) values[i] = src[i];
      }
    }
    unbind_body_inputs(body, frame);
    return st;
  }

  template <typename T, typename C>
  Status run_typed(KernelContext& ctx) const {
    const Tensor& q = *ctx.input(0);
    const Tensor& k = *ctx.input(1);
    const Tensor& v = *ctx.input(2);
    if (q.shape().rank() != 4) return kernel_error(ctx, "input 0 (Q) must be rank 4, got " + q.describe());
    if (k.shape().rank() != 4 || k.dtype() != q.dtype())
      return kernel_error(ctx, "input 1 (K) must be rank 4 of Q's type, got " + k.describe());
    if (v.shape().rank() != 4 || v.dtype() != q.dtype())
      return kernel_error(ctx, "input 2 (V) must be rank 4 of Q's type, got " + v.describe());
    const int64_t batch = q.shape()[0], hq = q.shape()[1], len = q.shape()[2], e = q.shape()[3];
    const int64_t hkv = k.shape()[1], s = k.shape()[2], ev = v.shape()[3];
    if (k.shape()[0] != batch || k.shape()[3] != e)
      return kernel_error(ctx, "input 1 (K) must be [" + std::to_string(batch) + ", kv_num_heads, S, " +
                                   std::to_string(e) + "] to match Q " + q.describe() + ", got " + k.describe());
    if (v.shape()[0] != batch || v.shape()[1] != hkv || v.shape()[2] != s)
      return kernel_error(ctx, "input 2 (V) must be [" + std::to_string(batch) + ", " + std::to_string(hkv) + ", " +
                                   std::to_string(s) + ", Ev] to match K " + k.describe() + ", got " + v.describe());
    if (hkv == 0 ? hq != 0 : hq % hkv != 0)
      return kernel_error(ctx, "Q's head count " + std::to_string(hq) + " is not a multiple of K's " + std::to_string(hkv));
    const int64_t group = hkv == 0 ? 1 : hq / hkv;
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, q.dtype(), Shape{batch, hq, len, ev}));

    const Shape score_shape{batch, hq, len, s};
    int64_t bytes = 0;
    SY_RETURN_IF_ERROR(checked_byte_size(score_shape.dims(), sizeof(C), bytes));
    SY_ASSIGN_OR_RETURN(void* mem, ctx.scratch(static_cast<size_t>(bytes)));
    C* scores = static_cast<C*>(mem);
    const C scale = has_scale_ ? static_cast<C>(scale_) : static_cast<C>(1.0 / std::sqrt(static_cast<double>(e)));
    const int64_t rows = batch * hq * len;
    const T* qd = q.data<T>();
    const T* kd = k.data<T>();
    const T* vd = v.data<T>();
    T* yd = y->data<T>();
    // The K/V head of score row r = ((b * hq + h) * len + l).
    auto kv_offset = [&](int64_t r) {
      const int64_t bh = r / (len == 0 ? 1 : len);
      const int64_t b = bh / hq, h = bh % hq;
      return (b * hkv + h / group) * s;
    };
    const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, s * std::max<int64_t>(e, ev)));

    ctx.thread_pool().parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const T* qr = qd + r * e;
        const T* kh = kd + kv_offset(r) * e;
        for (int64_t j = 0; j < s; ++j) {
          C acc = 0;
          for (int64_t d = 0; d < e; ++d) acc += static_cast<C>(load(qr[d])) * static_cast<C>(load(kh[j * e + d]));
          scores[r * s + j] = acc * scale;
        }
      }
    });

    const auto* state = static_cast<const FlexAttentionState*>(ctx.state());
    if (has_score_mod_)
      SY_RETURN_IF_ERROR(run_modifier<C>(ctx, score_mod_, state ? state->score_frame.get() : nullptr, scores, score_shape));

    // Softmax in place along S (a -inf score, a masked key, gets 0).
    // Float rows take the softmax family's vectorised row loop.
    ctx.thread_pool().parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        C* row = scores + r * s;
        if constexpr (std::is_same_v<C, float>) {
          softmax_row_f32(row, row, s);
        } else {
          C mx = -std::numeric_limits<C>::infinity();
          for (int64_t j = 0; j < s; ++j) mx = std::max(mx, row[j]);
          C sum = 0;
          for (int64_t j = 0; j < s; ++j) {
            row[j] = std::exp(row[j] - mx);
            sum += row[j];
          }
          for (int64_t j = 0; j < s; ++j) row[j] /= sum;
        }
      }
    });

    if (has_prob_mod_)
      SY_RETURN_IF_ERROR(run_modifier<C>(ctx, prob_mod_, state ? state->prob_frame.get() : nullptr, scores, score_shape));

    ctx.thread_pool().parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const C* p = scores + r * s;
        const T* vh = vd + kv_offset(r) * ev;
        for (int64_t d = 0; d < ev; ++d) {
          C acc = 0;
          for (int64_t j = 0; j < s; ++j) acc += p[j] * static_cast<C>(load(vh[j * ev + d]));
          yd[r * ev + d] = store<T>(static_cast<compute_t<T>>(acc));
        }
      }
    });
    return ok_status();
  }

  bool has_scale_ = false;
  float scale_ = 0.0f;
  DataType precision_ = DataType::kUndefined;  // kUndefined: by the input type
  bool has_score_mod_ = false;
  bool has_prob_mod_ = false;
  Body score_mod_;
  Body prob_mod_;
};

const KernelDef kFlexAttentionKernels[] = {
    {"ai.onnx.preview", "FlexAttention", 1, kLatestVersion, 0, kFlexAttentionTypes, &make_kernel<FlexAttentionKernel>},
};

}  // namespace

std::span<const KernelDef> flex_attention_kernels() { return kFlexAttentionKernels; }

}  // namespace sy::cpu
