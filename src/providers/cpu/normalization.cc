// BatchNormalization (inference), LayerNormalization, InstanceNormalization.
//
// BatchNormalization folds scale, bias, mean and variance into one
// multiplier and one offset per channel: at creation when all four are
// constant (the usual case), otherwise per run in scratch memory.
// LayerNormalization and InstanceNormalization normalise contiguous rows:
// mean first, then the variance around it (two passes, no cancellation).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "providers/cpu/copy_util.h"
#include "providers/cpu/elementwise_common.h"
#include "providers/cpu/layer_norm_simd.h"
#include "providers/cpu/norm_attributes.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

bool is_float_param(const Tensor& t) {
  const DataType d = t.dtype();
  return d == DataType::kFloat || d == DataType::kDouble || d == DataType::kFloat16 || d == DataType::kBfloat16;
}

Status unsupported_input(const KernelContext& ctx, size_t i) {
  return kernel_error(ctx, "input " + std::to_string(i) + " has unsupported type " +
                               std::string(data_type_name(ctx.input(i)->dtype())));
}

// ---- BatchNormalization ---------------------------------------------------------

class BatchNormKernel final : public Kernel {
 public:
  BatchNormKernel(const KernelCreateContext& ctx, Status& status) {
    const Node& node = ctx.node();
    epsilon_ = node.attr_float("epsilon", 1e-5f);
    momentum_ = node.attr_float("momentum", 0.9f);
    // Training mode normalises with the batch's own statistics, so the
    // parameters cannot be folded ahead.
    training_ = ctx.opset() >= 14 && node.attr_int("training_mode", 0) != 0;
    if (ctx.opset() < 9 && node.attr_int("spatial", 1) == 0) {
      status = ctx.unsupported("BatchNormalization with spatial=0 is not implemented");
      return;
    }
    // Before opset 14 the extra outputs exist only in training.
    for (size_t i = 1; i < node.outputs.size(); ++i) {
      if (node.outputs[i] != kNoValue && ctx.opset() < 14) {
        status = ctx.unsupported("BatchNormalization with training outputs (mean, var, saved_mean, saved_var) is "
                                 "not implemented (inference only)");
        return;
      }
    }
    bool all_constant = !training_;
    for (size_t i = 1; i <= 4; ++i) all_constant = all_constant && ctx.constant_input(i) != nullptr;
    if (!all_constant) return;
    const Tensor* params[4] = {ctx.constant_input(1), ctx.constant_input(2), ctx.constant_input(3),
                               ctx.constant_input(4)};
    const int64_t c = params[0]->num_elements();
    for (const Tensor* p : params) {
      if (p->num_elements() != c || !is_float_param(*p)) {
        status = ctx.error("scale, B, mean and var must be float tensors of one length, got " +
                           params[0]->describe() + ", " + params[1]->describe() + ", " + params[2]->describe() +
                           ", " + params[3]->describe());
        return;
      }
    }
    multiplier_.resize(static_cast<size_t>(c));
    offset_.resize(static_cast<size_t>(c));
    fold(*params[0], *params[1], *params[2], *params[3], multiplier_.data(), offset_.data());
  }

  Status run(KernelContext& ctx) const override {
    for (size_t i = 0; i < 5; ++i)
      if (ctx.input(i) == nullptr) return kernel_error(ctx, "input " + std::to_string(i) + " is missing");
    const Tensor& x = *ctx.input(0);
    const Shape& shape = x.shape();
    if (shape.rank() < 1) return kernel_error(ctx, "X must have rank 1 or more, got a scalar");
    const int64_t channels = shape.rank() >= 2 ? shape[1] : 1;
    const int64_t batch = shape[0];
    const int64_t spatial = shape.rank() >= 2 ? shape.size_from(2) : 1;
    const double* mul = multiplier_.data();
    const double* off = offset_.data();
    if (multiplier_.empty()) {
      for (size_t i = 1; i <= 4; ++i) {
        const Tensor& p = *ctx.input(i);
        if (p.num_elements() != channels || !is_float_param(p))
          return kernel_error(ctx, "input " + std::to_string(i) + " must be a float tensor of " +
                                       std::to_string(channels) + " elements (the channels of X " +
                                       shape.to_string() + "), got " + p.describe());
      }
      SY_ASSIGN_OR_RETURN(void* mem, ctx.scratch(static_cast<size_t>(4 * channels) * sizeof(double)));
      auto* m = static_cast<double*>(mem);
      if (training_) {
        double* batch_mean = m + 2 * channels;
        double* batch_var = m + 3 * channels;
        if (!batch_statistics(x, batch, channels, spatial, batch_mean, batch_var)) return unsupported_input(ctx, 0);
        for (int64_t c = 0; c < channels; ++c) {
          m[c] = number_at(*ctx.input(1), c) / std::sqrt(batch_var[c] + static_cast<double>(epsilon_));
          m[channels + c] = number_at(*ctx.input(2), c) - batch_mean[c] * m[c];
        }
        // The running statistics move towards the batch's by 1 - momentum.
        for (size_t i = 1; i <= 2 && i < ctx.num_outputs(); ++i) {
          if (!ctx.output_requested(i)) continue;
          const Tensor& running = *ctx.input(i + 2);
          SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(i, running.dtype(), running.shape()));
          const double* batch_stat = i == 1 ? batch_mean : batch_var;
          const double keep = static_cast<double>(momentum_);
          visit_type(FloatTypes{}, running.dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            for (int64_t c = 0; c < channels; ++c)
              out->data<T>()[c] = store<T>(static_cast<compute_t<T>>(number_at(running, c) * keep +
                                                                    batch_stat[c] * (1.0 - keep)));
          });
        }
      } else {
        fold(*ctx.input(1), *ctx.input(2), *ctx.input(3), *ctx.input(4), m, m + channels);
      }
      mul = m;
      off = m + channels;
    } else if (static_cast<int64_t>(multiplier_.size()) != channels) {
      return kernel_error(ctx, "X " + shape.to_string() + " has " + std::to_string(channels) +
                                   " channels but the parameters have " + std::to_string(multiplier_.size()));
    }
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), shape));
    // Inference-mode running mean and var pass through when asked for.
    for (size_t i = 1; i <= 2 && i < ctx.num_outputs() && !training_; ++i) {
      if (!ctx.output_requested(i)) continue;
      const Tensor& src = *ctx.input(i + 2);
      SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(i, src.dtype(), src.shape()));
      std::copy_n(static_cast<const uint8_t*>(src.raw_data()), src.byte_size(), static_cast<uint8_t*>(out->raw_data()));
    }
    const bool handled = visit_type(FloatTypes{}, x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      const T* xd = x.data<T>();
      T* yd = y->data<T>();
      parallel_range(ctx.thread_pool(), batch * channels, std::max<int64_t>(1, kCheapChunk / std::max<int64_t>(spatial, 1)),
                     [&](int64_t b, int64_t e) {
                       for (int64_t plane = b; plane < e; ++plane) {
                         const int64_t c = plane % channels;
                         const auto a = static_cast<C>(mul[c]);
                         const auto o = static_cast<C>(off[c]);
                         const T* xp = xd + plane * spatial;
                         T* yp = yd + plane * spatial;
                         for (int64_t i = 0; i < spatial; ++i) yp[i] = store<T>(load(xp[i]) * a + o);
                       }
                     });
    });
    return handled ? ok_status() : unsupported_input(ctx, 0);
  }

 private:
  // The mean and (population) variance of each channel over the batch and
  // spatial dims, in double; false for a non-float X.
  static bool batch_statistics(const Tensor& x, int64_t batch, int64_t channels, int64_t spatial, double* mean,
                               double* var) {
    return visit_type(FloatTypes{}, x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* xd = x.data<T>();
      const double count = static_cast<double>(batch * spatial);
      for (int64_t c = 0; c < channels; ++c) {
        double sum = 0.0;
        for (int64_t n = 0; n < batch; ++n)
          for (int64_t i = 0; i < spatial; ++i) sum += static_cast<double>(load(xd[(n * channels + c) * spatial + i]));
        const double mu = count > 0 ? sum / count : 0.0;
        double squares = 0.0;
        for (int64_t n = 0; n < batch; ++n)
          for (int64_t i = 0; i < spatial; ++i) {
            const double d = static_cast<double>(load(xd[(n * channels + c) * spatial + i])) - mu;
            squares += d * d;
          }
        mean[c] = mu;
        var[c] = count > 0 ? squares / count : 0.0;
      }
    });
  }

  // y = (x - mean) / sqrt(var + eps) * scale + B = x * m + o.
  void fold(const Tensor& scale, const Tensor& bias, const Tensor& mean, const Tensor& var, double* m,
            double* o) const {
    for (int64_t c = 0; c < scale.num_elements(); ++c) {
      m[c] = number_at(scale, c) / std::sqrt(number_at(var, c) + static_cast<double>(epsilon_));
      o[c] = number_at(bias, c) - number_at(mean, c) * m[c];
    }
  }

  float epsilon_ = 1e-5f;
  float momentum_ = 0.9f;
  bool training_ = false;
  std::vector<double> multiplier_;
  std::vector<double> offset_;
};

// ---- LayerNormalization -------------------------------------------------------------

// Normalises rows of n elements. scale and bias have n elements, or 1
// (broadcast), or bias none. W is the accumulation type: float for float
// and 16-bit inputs, double for double.
template <typename T, typename TP, typename W>
void layer_norm_rows(const T* x, T* y, int64_t rows, int64_t n, const TP* scale, bool scale_scalar, const TP* bias,
                     bool bias_scalar, W epsilon, W* mean_out, W* inv_out, ThreadPool& pool) {
  parallel_range(pool, rows, std::max<int64_t>(1, kCheapChunk / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      if constexpr (std::is_same_v<T, float> && std::is_same_v<TP, float> && std::is_same_v<W, float>) {
        // Full-length scale and bias (the transformer case): the SIMD row.
        if (!scale_scalar && (bias == nullptr || !bias_scalar)) {
          float mean = 0.0f;
          float inv = 0.0f;
          layer_norm_row_f32(x + r * n, y + r * n, n, scale, bias, epsilon, &mean, &inv);
          if (mean_out != nullptr) mean_out[r] = mean;
          if (inv_out != nullptr) inv_out[r] = inv;
          continue;
        }
      }
      const T* xr = x + r * n;
      T* yr = y + r * n;
      const W mean = row_sum(xr, n, [](W v) { return v; }) / static_cast<W>(n);
      const W var = row_sum(xr, n, [mean](W v) { return (v - mean) * (v - mean); }) / static_cast<W>(n);
      const W inv = W{1} / std::sqrt(var + epsilon);
      if (mean_out != nullptr) mean_out[r] = mean;
      if (inv_out != nullptr) inv_out[r] = inv;
      for (int64_t j = 0; j < n; ++j) {
        const W s = static_cast<W>(load(scale[scale_scalar ? 0 : j]));
        W v = (static_cast<W>(load(xr[j])) - mean) * inv * s;
        if (bias != nullptr) v += static_cast<W>(load(bias[bias_scalar ? 0 : j]));
        yr[j] = store<T>(static_cast<compute_t<T>>(v));
      }
    }
  });
}

class LayerNormKernel final : public Kernel {
 public:
  LayerNormKernel(const KernelCreateContext& ctx, Status& status) {
    status = attrs_.read(ctx);
  }

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* scale = ctx.input(1);
    const Tensor* bias = ctx.input(2);
    if (x == nullptr || scale == nullptr) return kernel_error(ctx, "inputs X and Scale are required");
    const Shape& shape = x->shape();
    SY_ASSIGN_OR_RETURN(const size_t ax, attrs_.first_axis(ctx, shape));
    const int64_t rows = shape.size_to(ax);
    const int64_t n = shape.size_from(ax);
    for (const Tensor* p : {scale, bias}) {
      if (p == nullptr) continue;
      if (p->dtype() != x->dtype())
        return kernel_error(ctx, "Scale and B must have X's type " + std::string(data_type_name(x->dtype())) +
                                     ", got " + p->describe());
      if (p->num_elements() != n && p->num_elements() != 1)
        return kernel_error(ctx, "Scale and B must have the normalized shape (" + std::to_string(n) +
                                     " elements, X " + shape.to_string() + " from axis " + std::to_string(ax) +
                                     "), got " + p->describe());
    }
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), shape));
    // Mean and InvStdDev: X's leading dims, then ones.
    Shape stat_shape = shape;
    for (size_t d = ax; d < shape.rank(); ++d) stat_shape[d] = 1;
    Tensor* mean_t = nullptr;
    Tensor* inv_t = nullptr;
    if (ctx.num_outputs() > 1 && ctx.output_requested(1)) {
      SY_ASSIGN_OR_RETURN(mean_t, ctx.allocate_output(1, attrs_.stash, stat_shape));
    }
    if (ctx.num_outputs() > 2 && ctx.output_requested(2)) {
      SY_ASSIGN_OR_RETURN(inv_t, ctx.allocate_output(2, attrs_.stash, stat_shape));
    }
    if (x->num_elements() == 0) return ok_status();
    Status status;
    const bool handled = visit_type(FloatTypes{}, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using W = std::conditional_t<std::is_same_v<T, double>, double, float>;
      // Statistics are computed in W and written in the stash type; when
      // the two differ they go through scratch.
      W* mean_buf = nullptr;
      W* inv_buf = nullptr;
      const bool direct = attrs_.stash == DataTypeOf<W>::value;
      if (mean_t != nullptr || inv_t != nullptr) {
        if (direct) {
          mean_buf = mean_t ? mean_t->data<W>() : nullptr;
          inv_buf = inv_t ? inv_t->data<W>() : nullptr;
        } else {
          auto mem = ctx.scratch(static_cast<size_t>(2 * rows) * sizeof(W));
          if (!mem.ok()) {
            status = mem.status();
            return;
          }
          mean_buf = static_cast<W*>(*mem);
          inv_buf = mean_buf + rows;
        }
      }
      layer_norm_rows<T, T, W>(x->data<T>(), y->data<T>(), rows, n, scale->data<T>(), scale->num_elements() == 1,
                               bias ? bias->data<T>() : nullptr, bias && bias->num_elements() == 1,
                               static_cast<W>(attrs_.epsilon), mean_buf, inv_buf, ctx.thread_pool());
      if (!direct) {
        write_stats(mean_t, mean_buf, rows);
        write_stats(inv_t, inv_buf, rows);
      }
    });
    if (!handled) return unsupported_input(ctx, 0);
    return status;
  }

 private:
  template <typename W>
  void write_stats(Tensor* t, const W* buf, int64_t rows) const {
    if (t == nullptr || buf == nullptr) return;
    for (int64_t r = 0; r < rows; ++r) {
      if (attrs_.stash == DataType::kFloat) t->data<float>()[r] = static_cast<float>(buf[r]);
      if (attrs_.stash == DataType::kDouble) t->data<double>()[r] = static_cast<double>(buf[r]);
      if (attrs_.stash == DataType::kBfloat16) t->data<BFloat16>()[r] = store<BFloat16>(static_cast<float>(buf[r]));
    }
  }

  AxisNormAttributes attrs_;
};

// ---- InstanceNormalization ----------------------------------------------------------

class InstanceNormKernel final : public Kernel {
 public:
  InstanceNormKernel(const KernelCreateContext& ctx, Status& /*status*/) {
    epsilon_ = ctx.node().attr_float("epsilon", 1e-5f);
  }

  Status run(KernelContext& ctx) const override {
    for (size_t i = 0; i < 3; ++i)
      if (ctx.input(i) == nullptr) return kernel_error(ctx, "input " + std::to_string(i) + " is missing");
    const Tensor& x = *ctx.input(0);
    const Tensor& scale = *ctx.input(1);
    const Tensor& bias = *ctx.input(2);
    const Shape& shape = x.shape();
    if (shape.rank() < 2) return kernel_error(ctx, "X must have rank 2 or more, got " + shape.to_string());
    const int64_t channels = shape[1];
    const int64_t spatial = shape.size_from(2);
    for (const Tensor* p : {&scale, &bias}) {
      if (p->num_elements() != channels || p->dtype() != x.dtype())
        return kernel_error(ctx, "scale and B must be " + std::string(data_type_name(x.dtype())) + " tensors of " +
                                     std::to_string(channels) + " elements (the channels of X " +
                                     shape.to_string() + "), got " + p->describe());
    }
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), shape));
    if (x.num_elements() == 0) return ok_status();
    const bool handled = visit_type(FloatTypes{}, x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using W = std::conditional_t<std::is_same_v<T, double>, double, float>;
      const T* xd = x.data<T>();
      T* yd = y->data<T>();
      const T* sd = scale.data<T>();
      const T* bd = bias.data<T>();
      const auto eps = static_cast<W>(epsilon_);
      parallel_range(ctx.thread_pool(), shape[0] * channels,
                     std::max<int64_t>(1, kCheapChunk / std::max<int64_t>(spatial, 1)), [&](int64_t b, int64_t e) {
                       for (int64_t plane = b; plane < e; ++plane) {
                         const int64_t c = plane % channels;
                         const T* xp = xd + plane * spatial;
                         T* yp = yd + plane * spatial;
                         const W mean = row_sum(xp, spatial, [](W v) { return v; }) / static_cast<W>(spatial);
                         const W var = row_sum(xp, spatial, [mean](W v) { return (v - mean) * (v - mean); }) /
                                       static_cast<W>(spatial);
                         const W a = static_cast<W>(load(sd[c])) / std::sqrt(var + eps);
                         const W o = static_cast<W>(load(bd[c])) - mean * a;
                         for (int64_t i = 0; i < spatial; ++i)
                           yp[i] = store<T>(static_cast<compute_t<T>>(static_cast<W>(load(xp[i])) * a + o));
                       }
                     });
    });
    return handled ? ok_status() : unsupported_input(ctx, 0);
  }

 private:
  float epsilon_ = 1e-5f;
};

constexpr uint64_t kFloatMask = type_mask(FloatTypes{});

constexpr KernelDef kNormalizationKernels[] = {
    {"", "BatchNormalization", 7, kLatestVersion, 0, kFloatMask, &make_kernel<BatchNormKernel>},
    {"", "LayerNormalization", 17, kLatestVersion, 0, kFloatMask, &make_kernel<LayerNormKernel>},
    {"", "InstanceNormalization", 6, kLatestVersion, 0, kFloatMask, &make_kernel<InstanceNormKernel>},
};

}  // namespace

std::span<const KernelDef> normalization_kernels() { return kNormalizationKernels; }

}  // namespace sy::cpu
