// The ai.onnx.preview.training optimizers Momentum, Adagrad and Adam: one
// update step per optimized tensor. Inputs are R (learning rate), T (step
// count), then the n X's, the n G's and the n of each state; the updates
// follow the ONNX reference, computed in double and rounded to the tensor
// type once.
#include <cmath>
#include <string>

#include "providers/kernel.h"

namespace sy::cpu {
namespace {

enum class Optimizer { kMomentum, kAdagrad, kAdam };

// Elements per parallel chunk: each element costs a handful of flops.
constexpr int64_t kChunk = 16384;

// Scalars shared by every element of one step.
struct Step {
  double r = 0;   // learning rate, already adjusted for Adagrad's decay and Adam's bias correction
  int64_t t = 0;  // step count
};

struct Params {
  double alpha = 0;
  double beta = 0;
  double epsilon = 0;
  double norm_coefficient = 0;
  double norm_coefficient_post = 0;
  double decay_factor = 0;
  bool nesterov = false;
};

size_t inputs_per_tensor(Optimizer op) { return op == Optimizer::kAdam ? 4 : 3; }
size_t outputs_per_tensor(Optimizer op) { return op == Optimizer::kAdam ? 3 : 2; }

template <Optimizer kOp>
class OptimizerKernel final : public Kernel {
 public:
  OptimizerKernel(const KernelCreateContext& ctx, Status& status) {
    const Node& node = ctx.node();
    const size_t in_groups = inputs_per_tensor(kOp);
    const size_t out_groups = outputs_per_tensor(kOp);
    const size_t tensors = ctx.num_inputs() - 2;
    if (ctx.num_inputs() < 2 + in_groups || tensors % in_groups != 0) {
      status = ctx.error("expects R, T and " + std::to_string(in_groups) + " equal groups of inputs, got " +
                         std::to_string(ctx.num_inputs()) + " inputs");
      return;
    }
    n_ = tensors / in_groups;
    if (node.outputs.size() != n_ * out_groups) {
      status = ctx.error("expects " + std::to_string(n_ * out_groups) + " outputs, got " +
                         std::to_string(node.outputs.size()));
      return;
    }
    if constexpr (kOp == Optimizer::kMomentum) {
      for (const char* name : {"alpha", "beta", "mode", "norm_coefficient"})
        if (!node.attr(name)) {
          status = ctx.error(std::string("attribute '") + name + "' is required");
          return;
        }
      p_.alpha = node.attr_float("alpha", 0);
      p_.beta = node.attr_float("beta", 0);
      p_.norm_coefficient = node.attr_float("norm_coefficient", 0);
      const std::string mode = node.attr_string("mode", "");
      if (mode != "standard" && mode != "nesterov") {
        status = ctx.error("attribute 'mode' must be 'standard' or 'nesterov', got '" + mode + "'");
        return;
      }
      p_.nesterov = mode == "nesterov";
    } else if constexpr (kOp == Optimizer::kAdagrad) {
      p_.decay_factor = node.attr_float("decay_factor", 0);
      p_.epsilon = node.attr_float("epsilon", 1e-6f);
      p_.norm_coefficient = node.attr_float("norm_coefficient", 0);
    } else {
      p_.alpha = node.attr_float("alpha", 0.9f);
      p_.beta = node.attr_float("beta", 0.999f);
      p_.epsilon = node.attr_float("epsilon", 1e-6f);
      p_.norm_coefficient = node.attr_float("norm_coefficient", 0);
      p_.norm_coefficient_post = node.attr_float("norm_coefficient_post", 0);
    }
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& rt = *ctx.input(0);
    const Tensor& tt = *ctx.input(1);
    if (rt.num_elements() != 1 || (rt.dtype() != DataType::kFloat && rt.dtype() != DataType::kDouble))
      return kernel_error(ctx, "input 0 (R) must be a float or double scalar, got " + rt.describe());
    if (tt.num_elements() != 1 || tt.dtype() != DataType::kInt64)
      return kernel_error(ctx, "input 1 (T) must be an int64 scalar, got " + tt.describe());
    Step step;
    step.r = rt.dtype() == DataType::kFloat ? rt.data<float>()[0] : rt.data<double>()[0];
    step.t = tt.data<int64_t>()[0];
    if constexpr (kOp == Optimizer::kAdagrad) {
      step.r = step.r / (1 + static_cast<double>(step.t) * p_.decay_factor);
    } else if constexpr (kOp == Optimizer::kAdam) {
      // Bias correction of both moments, from the second step on.
      if (step.t > 0) {
        const double td = static_cast<double>(step.t);
        step.r = step.r * std::sqrt(1 - std::pow(p_.beta, td)) / (1 - std::pow(p_.alpha, td));
      }
    }
    for (size_t j = 0; j < n_; ++j) SY_RETURN_IF_ERROR(update_one(ctx, j, step));
    return ok_status();
  }

 private:
  Status update_one(KernelContext& ctx, size_t j, const Step& step) const {
    const size_t in_groups = inputs_per_tensor(kOp);
    const size_t out_groups = outputs_per_tensor(kOp);
    const Tensor* in[4] = {};
    for (size_t g = 0; g < in_groups; ++g) {
      const size_t index = 2 + g * n_ + j;
      in[g] = ctx.input(index);
      if (!in[g]) return kernel_error(ctx, "input " + std::to_string(index) + " is missing");
      if (in[g]->dtype() != in[0]->dtype() || in[g]->shape() != in[0]->shape())
        return kernel_error(ctx, "input " + std::to_string(index) + " must match input " + std::to_string(2 + j) +
                                     " (" + in[0]->describe() + "), got " + in[g]->describe());
    }
    const DataType dtype = in[0]->dtype();
    if (dtype != DataType::kFloat && dtype != DataType::kDouble)
      return kernel_error(ctx, "input " + std::to_string(2 + j) + " must be float or double, got " +
                                   in[0]->describe());
    Tensor* out[3] = {};
    for (size_t o = 0; o < out_groups; ++o) {
      SY_ASSIGN_OR_RETURN(out[o], ctx.allocate_output(o * n_ + j, dtype, in[0]->shape()));
    }
    if (dtype == DataType::kFloat) {
      update<float>(ctx, in, out, step);
    } else {
      update<double>(ctx, in, out, step);
    }
    return ok_status();
  }

  template <typename T>
  void update(KernelContext& ctx, const Tensor* const* in, Tensor* const* out, const Step& step) const {
    const T* x = in[0]->data<T>();
    const T* g = in[1]->data<T>();
    const T* s1 = in[2]->data<T>();
    const T* s2 = kOp == Optimizer::kAdam ? in[3]->data<T>() : nullptr;
    T* x_new = out[0]->data<T>();
    T* s1_new = out[1]->data<T>();
    T* s2_new = kOp == Optimizer::kAdam ? out[2]->data<T>() : nullptr;
    const Params p = p_;
    ctx.thread_pool().parallel_for(in[0]->num_elements(), kChunk, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const double xi = static_cast<double>(x[i]);
        // Gradient of the L2 regularization term added to G.
        const double gr = p.norm_coefficient * xi + static_cast<double>(g[i]);
        if constexpr (kOp == Optimizer::kMomentum) {
          // The gradient's coefficient is 1 on the first step.
          const double beta = step.t > 0 ? p.beta : 1.0;
          const double v = p.alpha * static_cast<double>(s1[i]) + beta * gr;
          x_new[i] = static_cast<T>(p.nesterov ? xi - step.r * (gr + p.alpha * v) : xi - step.r * v);
          s1_new[i] = static_cast<T>(v);
        } else if constexpr (kOp == Optimizer::kAdagrad) {
          const double h = static_cast<double>(s1[i]) + gr * gr;
          x_new[i] = static_cast<T>(xi - step.r * gr / (std::sqrt(h) + p.epsilon));
          s1_new[i] = static_cast<T>(h);
        } else {
          const double v = p.alpha * static_cast<double>(s1[i]) + (1 - p.alpha) * gr;
          const double h = p.beta * static_cast<double>(s2[i]) + (1 - p.beta) * gr * gr;
          const double xn = xi - step.r * (v / (std::sqrt(h) + p.epsilon));
          x_new[i] = static_cast<T>((1 - p.norm_coefficient_post) * xn);
          s1_new[i] = static_cast<T>(v);
          s2_new[i] = static_cast<T>(h);
        }
      }
    });
  }

  size_t n_ = 0;
  Params p_;
};

constexpr uint64_t kFloatTypes = type_bit(DataType::kFloat) | type_bit(DataType::kDouble);

const KernelDef kTrainingKernels[] = {
    {"ai.onnx.preview.training", "Momentum", 1, kLatestVersion, 2, kFloatTypes,
     &make_kernel<OptimizerKernel<Optimizer::kMomentum>>},
    {"ai.onnx.preview.training", "Adagrad", 1, kLatestVersion, 2, kFloatTypes,
     &make_kernel<OptimizerKernel<Optimizer::kAdagrad>>},
    {"ai.onnx.preview.training", "Adam", 1, kLatestVersion, 2, kFloatTypes,
     &make_kernel<OptimizerKernel<Optimizer::kAdam>>},
};

}  // namespace

std::span<const KernelDef> training_kernels() { return kTrainingKernels; }

}  // namespace sy::cpu
