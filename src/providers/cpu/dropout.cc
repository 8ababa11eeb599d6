// Dropout, and Swish (opset 24), which has no better home among the CPU
// families and is as small.
//
// Dropout outside training is the identity with an all-true mask (versions
// 7 to 11 have no training mode at all; from 12 it is the training_mode
// input). The optimizer removes such nodes when nothing reads the mask, but
// the kernel must still be right where it runs.
//
// In training mode the keep mask comes from the same generator as ONNX's
// reference implementation: numpy's legacy MT19937 seeded with `seed`, one
// uniform double in [0, 1) per element in order, kept when >= ratio, and
// kept values scaled by 1 / (1 - ratio). So a model with a seed gives the
// reference's exact output, and every run of it gives the same mask. Without
// a seed each run draws a fresh one. The generator is sequential by nature;
// only the scaling runs in parallel.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <random>
#include <string>

#include "providers/cpu/copy_util.h"
#include "providers/cpu/elementwise_common.h"
#include "providers/cpu/numpy_random.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

using DropoutTypes = FloatTypes;  // float, double, float16, bfloat16

constexpr uint64_t kFloat8Types = type_bit(DataType::kFloat8E4M3FN) | type_bit(DataType::kFloat8E4M3FNUZ) |
                                  type_bit(DataType::kFloat8E5M2) | type_bit(DataType::kFloat8E5M2FNUZ);

// Fills `n` elements of type `dtype` at `dst` with 1 (bool true, or 1.0 for
// the float masks of Dropout 7 to 9).
Status fill_ones(const KernelContext& ctx, DataType dtype, void* dst, int64_t n) {
  if (dtype == DataType::kBool) {
    std::memset(dst, 1, static_cast<size_t>(n));
    return ok_status();
  }
  bool done = false;
  visit_type(DropoutTypes{}, dtype, [&]<typename T>(TypeTag<T>) {
    std::fill_n(static_cast<T*>(dst), n, store<T>(compute_t<T>{1}));
    done = true;
  });
  if (done) return ok_status();
  return kernel_error(ctx, "cannot fill a mask of type " + std::string(data_type_name(dtype)));
}

// A scalar of a float type as double; false for types it cannot read.
bool read_float_scalar(const Tensor& t, double& out) {
  bool done = false;
  visit_type(DropoutTypes{}, t.dtype(), [&]<typename T>(TypeTag<T>) {
    out = static_cast<double>(load(t.data<T>()[0]));
    done = true;
  });
  return done;
}

class DropoutKernel final : public Kernel {
 public:
  DropoutKernel(const KernelCreateContext& ctx, Status&) : opset_(ctx.opset()) {
    const Node& node = ctx.node();
    if (opset_ >= 12 && node.has_attr("seed")) {
      has_seed_ = true;
      // numpy seeds with a 32-bit value; ONNX's reference passes the attribute through.
      seed_ = static_cast<uint32_t>(node.attr_int("seed", 0));
    } else {
      seed_base_ = std::random_device{}();
    }
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const int64_t n = x.num_elements();
    const bool want_mask = ctx.num_outputs() > 1 && ctx.output_requested(1);
    // Versions 7 to 9 give the mask the data's type; later ones bool.
    const DataType mask_type = opset_ < 10 ? x.dtype() : DataType::kBool;

    bool training = false;
    double ratio = 0.5;
    if (opset_ >= 12) {
      if (const Tensor* t = ctx.input(2)) {
        if (t->dtype() != DataType::kBool || t->num_elements() != 1)
          return kernel_error(ctx, "training_mode must be a bool scalar, got " + t->describe());
        training = t->data<bool>()[0];
      }
      if (const Tensor* r = ctx.input(1); training && r != nullptr) {
        if (r->num_elements() != 1) return kernel_error(ctx, "ratio must be a scalar, got " + r->describe());
        if (!read_float_scalar(*r, ratio))
          return not_implemented(ctx.node().describe() + ": a ratio of type " +
                                 std::string(data_type_name(r->dtype())) + " is not supported in training mode");
      }
    }
    if (training && !(ratio >= 0.0 && ratio < 1.0))
      return kernel_error(ctx, "ratio must be in [0, 1), got " + std::to_string(ratio));

    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
    if (!training || ratio == 0.0) {
      copy_tensor_data(x, *y, ctx.thread_pool());
      if (!want_mask) return ok_status();
      SY_ASSIGN_OR_RETURN(Tensor * mask, ctx.allocate_output(1, mask_type, x.shape()));
      return fill_ones(ctx, mask_type, mask->raw_data(), n);
    }

    // The mask goes to the mask output when requested, else to scratch.
    bool* keep = nullptr;
    if (want_mask) {
      SY_ASSIGN_OR_RETURN(Tensor * mask, ctx.allocate_output(1, DataType::kBool, x.shape()));
      keep = mask->data<bool>();
    } else {
      SY_ASSIGN_OR_RETURN(void* mem, ctx.scratch(static_cast<size_t>(std::max<int64_t>(n, 1))));
      keep = static_cast<bool*>(mem);
    }
    const uint32_t seed = has_seed_ ? seed_ : seed_base_ + run_counter_.fetch_add(1, std::memory_order_relaxed);
    std::mt19937 gen(seed);  // std::mt19937's seeding is MT19937's init_genrand, as numpy's
    for (int64_t i = 0; i < n; ++i) keep[i] = numpy_uniform(gen) >= ratio;

    Status status = not_implemented(ctx.node().describe() + ": training mode does not support data of type " +
                                    std::string(data_type_name(x.dtype())));
    visit_type(DropoutTypes{}, x.dtype(), [&]<typename T>(TypeTag<T>) {
      using C = compute_t<T>;
      // The reference multiplies in the data's type by a scale rounded to it.
      const auto scale = static_cast<C>(1.0 / (1.0 - ratio));
      const T* in = x.data<T>();
      T* out = y->data<T>();
      parallel_range(ctx.thread_pool(), n, kCheapChunk, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) out[i] = store<T>(load(in[i]) * select(keep[i], scale, C{0}));
      });
      status = ok_status();
    });
    return status;
  }

 private:
  int opset_;
  bool has_seed_ = false;
  uint32_t seed_ = 0;
  uint32_t seed_base_ = 0;
  mutable std::atomic<uint32_t> run_counter_{0};  // distinct unseeded masks across runs
};

// ---- Swish --------------------------------------------------------------------

class SwishKernel final : public Kernel {
 public:
  SwishKernel(const KernelCreateContext& ctx, Status&) : alpha_(ctx.node().attr_float("alpha", 1.0f)) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
    Status status = not_implemented(ctx.node().describe() + ": element type " +
                                    std::string(data_type_name(x.dtype())) + " is not supported");
    visit_type(FloatTypes{}, x.dtype(), [&]<typename T>(TypeTag<T>) {
      using C = compute_t<T>;
      const auto alpha = static_cast<C>(alpha_);
      const T* in = x.data<T>();
      T* out = y->data<T>();
      parallel_range(ctx.thread_pool(), x.num_elements(), kMathChunk, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          const C v = load(in[i]);
          out[i] = store<T>(v * fast_sigmoid(alpha * v));
        }
      });
      status = ok_status();
    });
    return status;
  }

 private:
  float alpha_;
};

constexpr uint64_t kDropout7Types =
    type_bit(DataType::kFloat16) | type_bit(DataType::kFloat) | type_bit(DataType::kDouble);
constexpr uint64_t kDropout13Types = kDropout7Types | type_bit(DataType::kBfloat16);
constexpr uint64_t kDropout22Types = kDropout13Types | kFloat8Types;

const KernelDef kDropoutKernels[] = {
    {"", "Dropout", 7, 12, 0, kDropout7Types, &make_kernel<DropoutKernel>},
    {"", "Dropout", 13, 21, 0, kDropout13Types, &make_kernel<DropoutKernel>},
    {"", "Dropout", 22, kLatestVersion, 0, kDropout22Types, &make_kernel<DropoutKernel>},
    {"", "Swish", 24, kLatestVersion, 0, type_mask(FloatTypes{}), &make_kernel<SwishKernel>},
};

}  // namespace

std::span<const KernelDef> dropout_kernels() { return kDropoutKernels; }

}  // namespace sy::cpu
