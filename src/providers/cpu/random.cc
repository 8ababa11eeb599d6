// The random generators: RandomNormal, RandomUniform, their Like forms,
// Bernoulli and Multinomial.
//
// The values come from numpy's legacy MT19937 draws (numpy_random.h), in
// element order, as ONNX's reference implementation makes them. With a
// `seed` attribute every run of a session gives the same values, and so
// does every session of the same model (as Dropout's mask, dropout.cc);
// without one each run draws afresh. The generator is sequential, so these
// kernels run on one thread: they make noise inputs and masks, not the
// heavy part of a model.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "providers/cpu/elementwise_common.h"
#include "providers/cpu/numpy_random.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

enum class Kind { kNormal, kUniform, kBernoulli, kMultinomial };

class RandomKernel final : public Kernel {
 public:
  RandomKernel(const KernelCreateContext& ctx, Status& status, Kind kind) : kind_(kind) {
    const Node& node = ctx.node();
    if (node.has_attr("seed")) {
      has_seed_ = true;
      // A float attribute; numpy seeds with its integer part, 32 bits.
      seed_ = static_cast<uint32_t>(static_cast<int64_t>(node.attr_float("seed", 0.0f)));
    } else {
      seed_base_ = std::random_device{}();
    }
    mean_ = node.attr_float("mean", 0.0f);
    scale_ = node.attr_float("scale", 1.0f);
    low_ = node.attr_float("low", 0.0f);
    high_ = node.attr_float("high", 1.0f);
    sample_size_ = node.attr_int("sample_size", 1);
    if (kind_ == Kind::kMultinomial && sample_size_ < 1)
      status = ctx.error("sample_size must be positive; got " + std::to_string(sample_size_));
    if (kind_ == Kind::kUniform && !(low_ <= high_))
      status = ctx.error("low " + std::to_string(low_) + " must not exceed high " + std::to_string(high_));
    if (node.has_attr("shape")) {
      const std::vector<int64_t> dims = node.attr_ints("shape");
      for (int64_t d : dims)
        if (d < 0) status = ctx.error("attribute shape has a negative dim");
      shape_ = Shape(dims);
    }
  }

  Status run(KernelContext& ctx) const override {
    std::mt19937 gen(has_seed_ ? seed_ : seed_base_ + run_counter_.fetch_add(1, std::memory_order_relaxed));
    const DataType out_type = ctx.node().outputs.empty() ? DataType::kUndefined : output_dtype(ctx);
    if (kind_ == Kind::kMultinomial) return run_multinomial(ctx, gen, out_type);
    Shape shape;
    if (ctx.num_inputs() > 0 && ctx.input(0) != nullptr) {
      shape = ctx.input(0)->shape();
    } else {
      shape = shape_;
    }
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out_type, shape));
    const int64_t n = y->num_elements();
    if (kind_ == Kind::kBernoulli) return run_bernoulli(ctx, gen, *y, n);
    NumpyGauss gauss;
    const bool handled = visit_type(FloatTypes{}, out_type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      T* yd = y->data<T>();
      for (int64_t i = 0; i < n; ++i) {
        const double v = kind_ == Kind::kNormal ? mean_ + scale_ * gauss.next(gen)
                                                : low_ + (high_ - low_) * numpy_uniform(gen);
        yd[i] = store<T>(static_cast<C>(v));
      }
    });
    if (!handled) return kernel_error(ctx, "cannot make values of type " + std::string(data_type_name(out_type)));
    return ok_status();
  }

 private:
  // The output type: the dtype attribute, else the input's (Like forms,
  // Bernoulli), else float (int32 for Multinomial).
  DataType output_dtype(const KernelContext& ctx) const {
    const Node& node = ctx.node();
    if (node.has_attr("dtype")) return static_cast<DataType>(node.attr_int("dtype", 1));
    if (kind_ == Kind::kMultinomial) return DataType::kInt32;
    if (ctx.num_inputs() > 0 && ctx.input(0) != nullptr) return ctx.input(0)->dtype();
    return DataType::kFloat;
  }

  // Each element is 1 with the probability the input holds there.
  Status run_bernoulli(KernelContext& ctx, std::mt19937& gen, Tensor& y, int64_t n) const {
    const Tensor& p = *ctx.input(0);
    const bool read = visit_type(FloatTypes{}, p.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* pd = p.data<T>();
      for (int64_t i = 0; i < n; ++i) {
        const double draw = numpy_uniform(gen);
        const bool one = draw < static_cast<double>(load(pd[i]));
        write_flag(y, i, one);
      }
    });
    if (!read) return kernel_error(ctx, "input must be float, double, float16 or bfloat16; got " + p.describe());
    return ok_status();
  }

  // y[i] = 1 or 0 in y's type.
  static void write_flag(Tensor& y, int64_t i, bool one) {
    if (y.dtype() == DataType::kBool) {
      y.data<uint8_t>()[i] = one ? 1 : 0;
      return;
    }
    visit_type(NumericTypes{}, y.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      y.data<T>()[i] = store<T>(static_cast<compute_t<T>>(one ? 1 : 0));
    });
  }

  // Each row of the input holds unnormalised log-probabilities of its
  // classes; sample_size classes are drawn from each row.
  Status run_multinomial(KernelContext& ctx, std::mt19937& gen, DataType out_type) const {
    const Tensor& x = *ctx.input(0);
    if (x.shape().rank() != 2) return kernel_error(ctx, "input must be [batch_size, class_size]; got " + x.describe());
    if (out_type != DataType::kInt32 && out_type != DataType::kInt64)
      return kernel_error(ctx, "dtype must be int32 or int64");
    const int64_t batch = x.shape()[0], classes = x.shape()[1];
    if (classes < 1) return kernel_error(ctx, "class_size must be positive; got " + x.describe());
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out_type, Shape{batch, sample_size_}));
    SY_ASSIGN_OR_RETURN(void* mem, ctx.scratch(static_cast<size_t>(classes) * sizeof(double)));
    auto* cumulative = static_cast<double*>(mem);
    bool handled = visit_type(FloatTypes{}, x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* xd = x.data<T>();
      for (int64_t b = 0; b < batch; ++b) {
        const T* row = xd + b * classes;
        double top = -INFINITY;
        for (int64_t c = 0; c < classes; ++c) top = std::max(top, static_cast<double>(load(row[c])));
        double total = 0.0;
        for (int64_t c = 0; c < classes; ++c) {
          total += std::isfinite(top) ? std::exp(static_cast<double>(load(row[c])) - top) : 1.0;
          cumulative[c] = total;
        }
        for (int64_t s = 0; s < sample_size_; ++s) {
          const double target = numpy_uniform(gen) * total;
          const int64_t c = std::min<int64_t>(
              classes - 1, std::upper_bound(cumulative, cumulative + classes, target) - cumulative);
          if (out_type == DataType::kInt32)
            y->data<int32_t>()[b * sample_size_ + s] = static_cast<int32_t>(c);
          else
            y->data<int64_t>()[b * sample_size_ + s] = c;
        }
      }
    });
    if (!handled) return kernel_error(ctx, "input must be a float type; got " + x.describe());
    return ok_status();
  }

  Kind kind_;
  bool has_seed_ = false;
  uint32_t seed_ = 0;
  uint32_t seed_base_ = 0;
  mutable std::atomic<uint32_t> run_counter_{0};
  double mean_ = 0.0, scale_ = 1.0, low_ = 0.0, high_ = 1.0;
  int64_t sample_size_ = 1;
  Shape shape_;  // RandomNormal's and RandomUniform's, read once
};

template <Kind kKind>
Result<std::unique_ptr<Kernel>> make_random(const KernelCreateContext& ctx) {
  Status status;
  auto k = std::make_unique<RandomKernel>(ctx, status, kKind);
  if (!status.ok()) return status;
  return std::unique_ptr<Kernel>(std::move(k));
}

constexpr uint64_t kFloatOutputs = type_bit(DataType::kFloat) | type_bit(DataType::kDouble) |
                                   type_bit(DataType::kFloat16) | type_bit(DataType::kBfloat16);

const KernelDef kRandomKernels[] = {
    {"", "RandomNormal", 1, kLatestVersion, -1, 0, &make_random<Kind::kNormal>},
    {"", "RandomUniform", 1, kLatestVersion, -1, 0, &make_random<Kind::kUniform>},
    {"", "RandomNormalLike", 1, kLatestVersion, -1, 0, &make_random<Kind::kNormal>},
    {"", "RandomUniformLike", 1, kLatestVersion, -1, 0, &make_random<Kind::kUniform>},
    {"", "Bernoulli", 15, kLatestVersion, 0, kFloatOutputs, &make_random<Kind::kBernoulli>},
    {"", "Multinomial", 7, kLatestVersion, 0, kFloatOutputs, &make_random<Kind::kMultinomial>},
};

}  // namespace

std::span<const KernelDef> random_kernels() { return kRandomKernels; }

}  // namespace sy::cpu
