// CausalConvWithState (opset 27): depthwise causal Conv1d over the input
// left-padded with past_state (zeros when absent), optional per-channel bias
// and fused SiLU; present_state is the last k - 1 positions of that padded
// sequence. The padded sequence is never built: position i reads past_state
// for i < k - 1 and the input after. Like ONNX's reference, the convolution
// result is rounded to the element type before the activation.
#include <cmath>
#include <string>

#include "core/checked_math.h"
#include "providers/cpu/elementwise_common.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

constexpr uint64_t kCausalConvTypes =
    type_bit(DataType::kFloat) | type_bit(DataType::kFloat16) | type_bit(DataType::kBfloat16);

class CausalConvWithStateKernel final : public Kernel {
 public:
  CausalConvWithStateKernel(const KernelCreateContext& ctx, Status& status) {
    const std::string activation = ctx.node().attr_string("activation", "none");
    if (activation == "silu" || activation == "swish")
      silu_ = true;
    else if (activation != "none")
      status = ctx.error("activation must be 'none', 'silu' or 'swish', got '" + activation + "'");
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const Tensor& w = *ctx.input(1);
    const Tensor* bias = ctx.input(2);
    const Tensor* past = ctx.input(3);
    if (x.shape().rank() != 3)
      return kernel_error(ctx, "input 0 (input) must be [batch, channels, length], got " + x.describe());
    const int64_t batch = x.shape()[0];
    const int64_t channels = x.shape()[1];
    const int64_t length = x.shape()[2];
    if (w.dtype() != x.dtype() || w.shape().rank() != 3 || w.shape()[0] != channels || w.shape()[1] != 1 ||
        w.shape()[2] < 1)
      return kernel_error(ctx, "input 1 (weight) must be [" + std::to_string(channels) + ", 1, k] with k >= 1 and " +
                                   "input's element type, got " + w.describe());
    const int64_t k = w.shape()[2];
    const int64_t carry = k - 1;
    if (bias != nullptr && (bias->dtype() != x.dtype() || bias->shape() != Shape{channels}))
      return kernel_error(ctx, "input 2 (bias) must be [" + std::to_string(channels) +
                                   "] of input's element type, got " + bias->describe());
    const Shape state_shape{batch, channels, carry};
    if (past != nullptr && (past->dtype() != x.dtype() || past->shape() != state_shape))
      return kernel_error(ctx, "input 3 (past_state) must be " + state_shape.to_string() +
                                   " of input's element type, got " + past->describe());
    int64_t padded = 0;
    if (!checked_add(length, carry, padded)) return kernel_error(ctx, "length + k - 1 overflows");
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
    SY_ASSIGN_OR_RETURN(Tensor * present, ctx.allocate_output(1, x.dtype(), state_shape));
    const int64_t rows = batch * channels;
    if (rows == 0) return ok_status();
    const bool silu = silu_;
    Status status = not_implemented(ctx.node().describe() + ": element type " +
                                    std::string(data_type_name(x.dtype())) + " is not supported");
    visit_type(FloatTypes{}, x.dtype(), [&]<typename T>(TypeTag<T>) {
      using C = compute_t<T>;
      const T* px = x.data<T>();
      const T* pw = w.data<T>();
      const T* pb = bias != nullptr ? bias->data<T>() : nullptr;
      const T* ps = past != nullptr ? past->data<T>() : nullptr;
      T* py = y->data<T>();
      T* pp = present->data<T>();
      const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, padded * k));
      ctx.thread_pool().parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          const int64_t c = row % channels;
          const T* xr = px + row * length;
          const T* sr = ps != nullptr ? ps + row * carry : nullptr;
          const T* wr = pw + c * k;
          // Position i of the padded sequence [past_state | input].
          auto at = [&](int64_t i) -> C {
            if (i >= carry) return load(xr[i - carry]);
            return sr != nullptr ? load(sr[i]) : C{0};
          };
          for (int64_t t = 0; t < length; ++t) {
            C acc = pb != nullptr ? load(pb[c]) : C{0};
            for (int64_t j = 0; j < k; ++j) acc += load(wr[j]) * at(t + j);
            T out = store<T>(acc);
            if (silu) {
              const C v = load(out);
              out = store<T>(v / (C{1} + std::exp(-v)));
            }
            py[row * length + t] = out;
          }
          for (int64_t i = 0; i < carry; ++i) {
            const int64_t src = length + i;
            pp[row * carry + i] = src >= carry ? xr[src - carry] : (sr != nullptr ? sr[src] : T{});
          }
        }
      });
      status = ok_status();
    });
    return status;
  }

 private:
  bool silu_ = false;
};

const KernelDef kCausalConvWithStateKernels[] = {
    {"", "CausalConvWithState", 27, kLatestVersion, 0, kCausalConvTypes, &make_kernel<CausalConvWithStateKernel>},
};

}  // namespace

std::span<const KernelDef> causal_conv_with_state_kernels() { return kCausalConvWithStateKernels; }

}  // namespace sy::cpu
