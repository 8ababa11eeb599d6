// LinearClassifier and LinearRegressor (ai.onnx.ml 1): scores = X W^T + b,
// then the post transform, then (classifier) the label of the best score.
//
// Semantics follow ONNX's reference implementation
// (onnx/reference/ops/aionnxml/op_linear_*.py): a classifier with one row of
// coefficients and two labels is binary and scores [-s, s]; one with a
// single score column picks its one label when the score reaches 0 (NONE)
// or 0.5 (the transforms), else 0 or "". Scores are computed in double for
// double X and in float otherwise; the outputs are float as the spec says.
#include <algorithm>
#include <string>
#include <vector>

#include "providers/cpu/elementwise_common.h"
#include "providers/cpu/ml_common.h"
#include "providers/cpu/scratch_carver.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

using ml::PostTransform;

// Rows of X per chunk of work: enough dot products to be worth a thread.
int64_t rows_per_chunk_for(int64_t cols, int64_t outputs) {
  return std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(1, cols * outputs));
}

// scores[r * k + j] = sum_c x[r, c] * w[j * cols + c] + b[j] (b broadcast
// when it has one value, absent when empty), in S.
template <typename S, typename In>
void linear_scores(ThreadPool& pool, const In* x, int64_t rows, int64_t cols, const std::vector<S>& w,
                   const std::vector<S>& b, int64_t k, S* scores) {
  pool.parallel_for(rows, rows_per_chunk_for(cols, k), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const In* row = x + r * cols;
      for (int64_t j = 0; j < k; ++j) {
        const S* wj = w.data() + j * cols;
        S sum = 0;
        for (int64_t c = 0; c < cols; ++c) sum += static_cast<S>(row[c]) * wj[c];
        if (!b.empty()) sum += b.size() == 1 ? b[0] : b[static_cast<size_t>(j)];
        scores[r * k + j] = sum;
      }
    }
  });
}

// The attribute's floats in both precisions the kernels compute in.
struct Weights {
  std::vector<float> f32;
  std::vector<double> f64;
  void assign(const std::vector<float>& values) {
    f32 = values;
    f64.assign(values.begin(), values.end());
  }
  template <typename S>
  const std::vector<S>& as() const {
    if constexpr (std::is_same_v<S, double>) return f64;
    else return f32;
  }
};

// Calls fn(TypeTag<S>, TypeTag<In>) for X's type In and the score type S
// (double for double X, float otherwise).
template <typename Fn>
Status with_input_type(const KernelContext& ctx, const Tensor& x, Fn&& fn) {
  Status status = ok_status();
  const bool known = visit_type(ml::MlInputTypes{}, x.dtype(), [&]<typename In>(TypeTag<In> in) {
    if constexpr (std::is_same_v<In, double>) status = fn(TypeTag<double>{}, in);
    else status = fn(TypeTag<float>{}, in);
  });
  if (!known) return kernel_error(ctx, describe_input(ctx, 0, "X") + " has an unsupported type");
  return status;
}

// ---- LinearClassifier ------------------------------------------------------------

class LinearClassifierKernel final : public Kernel {
 public:
  LinearClassifierKernel(const KernelCreateContext& ctx, Status& status) { status = init(ctx); }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    int64_t rows = 0, cols = 0;
    SY_RETURN_IF_ERROR(ml::matrix_dims(ctx, x, rows, cols));
    const auto n_coefficients = static_cast<int64_t>(weights_.f32.size());
    if (cols == 0 || n_coefficients % cols != 0)
      return kernel_error(ctx, describe_input(ctx, 0, "X") + " has " + std::to_string(cols) + " features, which do not divide the " +
                                   std::to_string(n_coefficients) + " coefficients into rows");
    const int64_t k = n_coefficients / cols;
    if (intercepts_.f32.size() > 1 && static_cast<int64_t>(intercepts_.f32.size()) != k)
      return kernel_error(ctx, "there are " + std::to_string(intercepts_.f32.size()) + " intercepts for " +
                                   std::to_string(k) + " rows of coefficients");
    const bool binary = k == 1 && labels_.size() == 2;
    const int64_t columns = binary ? 2 : k;
    if (columns > 1 && columns > labels_.size())
      return kernel_error(ctx, "the coefficients give " + std::to_string(columns) + " scores but there are only " +
                                   std::to_string(labels_.size()) + " class labels");
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, labels_.type(), Shape{rows}));
    SY_ASSIGN_OR_RETURN(Tensor * z, ctx.allocate_output(1, DataType::kFloat, Shape{rows, columns}));
    return with_input_type(ctx, x, [&]<typename S, typename In>(TypeTag<S>, TypeTag<In>) -> Status {
      ScratchCarver carver;
      const size_t at = carver.add<S>(rows * k);
      SY_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(carver.total()));
      S* scores = ScratchCarver::pointer<S>(scratch, at);
      linear_scores<S>(ctx.thread_pool(), x.data<In>(), rows, cols, weights_.as<S>(), intercepts_.as<S>(), k, scores);
      for (int64_t r = 0; r < rows; ++r) {
        float* row = z->data<float>() + r * columns;
        if (binary) {
          row[0] = static_cast<float>(-scores[r]);
          row[1] = static_cast<float>(scores[r]);
        } else {
          for (int64_t j = 0; j < k; ++j) row[j] = static_cast<float>(scores[r * k + j]);
        }
        ml::apply_post_transform(post_, row, columns);
        write_label(*y, r, row, columns);
      }
      return ok_status();
    });
  }

 private:
  Status init(const KernelCreateContext& ctx) {
    const Node& node = ctx.node();
    SY_RETURN_IF_ERROR(ml::read_post_transform(ctx, post_));
    weights_.assign(node.attr_floats("coefficients"));
    intercepts_.assign(node.attr_floats("intercepts"));
    if (weights_.f32.empty()) return ctx.error("attribute coefficients is required");
    return labels_.read(ctx, "classlabels_ints", true);
  }

  void write_label(Tensor& y, int64_t r, const float* row, int64_t columns) const {
    int64_t best = 0;
    bool negative = false;  // a single column's score below its threshold
    if (columns > 1) {
      best = ml::first_max_index(row, columns);
    } else {
      negative = row[0] < (post_ == PostTransform::kNone ? 0.0f : 0.5f);
    }
    if (!negative) labels_.write(y, r, best);
    else if (labels_.type() == DataType::kString) y.data<std::string>()[r].clear();
    else y.data<int64_t>()[r] = 0;
  }

  Weights weights_;
  Weights intercepts_;
  ml::ClassLabels labels_;
  PostTransform post_ = PostTransform::kNone;
};

// ---- LinearRegressor ---------------------------------------------------------------

class LinearRegressorKernel final : public Kernel {
 public:
  LinearRegressorKernel(const KernelCreateContext& ctx, Status& status) { status = init(ctx); }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    int64_t rows = 0;
    SY_RETURN_IF_ERROR(ml::feature_rows(ctx, x, features_, rows));
    const int64_t cols = features_;
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat, Shape{rows, targets_}));
    return with_input_type(ctx, x, [&]<typename S, typename In>(TypeTag<S>, TypeTag<In>) -> Status {
      ScratchCarver carver;
      const size_t at = carver.add<S>(rows * targets_);
      SY_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(carver.total()));
      S* scores = ScratchCarver::pointer<S>(scratch, at);
      linear_scores<S>(ctx.thread_pool(), x.data<In>(), rows, cols, weights_.as<S>(), intercepts_.as<S>(), targets_,
                       scores);
      float* out = y->data<float>();
      for (int64_t r = 0; r < rows; ++r) {
        S* row = scores + r * targets_;
        ml::apply_post_transform(post_, row, targets_);
        for (int64_t t = 0; t < targets_; ++t) out[r * targets_ + t] = static_cast<float>(row[t]);
      }
      return ok_status();
    });
  }

 private:
  Status init(const KernelCreateContext& ctx) {
    const Node& node = ctx.node();
    SY_RETURN_IF_ERROR(ml::read_post_transform(ctx, post_));
    weights_.assign(node.attr_floats("coefficients"));
    intercepts_.assign(node.attr_floats("intercepts"));
    targets_ = node.attr_int("targets", 1);
    const auto n = static_cast<int64_t>(weights_.f32.size());
    if (targets_ <= 0 || n == 0 || n % targets_ != 0)
      return ctx.error("the " + std::to_string(n) + " coefficients cannot be split among " + std::to_string(targets_) +
                       " targets");
    features_ = n / targets_;
    const auto b = static_cast<int64_t>(intercepts_.f32.size());
    if (b > 1 && b != targets_)
      return ctx.error("attribute intercepts has " + std::to_string(b) + " values for " + std::to_string(targets_) +
                       " targets");
    return ok_status();
  }

  Weights weights_;
  Weights intercepts_;
  int64_t targets_ = 1;
  int64_t features_ = 0;
  PostTransform post_ = PostTransform::kNone;
};

constexpr uint64_t kInputs = type_mask(ml::MlInputTypes{});

const KernelDef kLinearKernels[] = {
    {"ai.onnx.ml", "LinearClassifier", 1, kLatestVersion, 0, kInputs, &make_kernel<LinearClassifierKernel>},
    {"ai.onnx.ml", "LinearRegressor", 1, kLatestVersion, 0, kInputs, &make_kernel<LinearRegressorKernel>},
};

}  // namespace

std::span<const KernelDef> ml_linear_kernels() { return kLinearKernels; }

}  // namespace sy::cpu
