// SVMClassifier and SVMRegressor (ai.onnx.ml 1), computed in double.
//
// Semantics follow ONNX's reference implementation
// (onnx/reference/ops/aionnxml/op_svm_*.py), which follows libsvm and the
// runtimes: a classifier with support vectors votes one-against-one (a
// positive pairwise score is a vote for the first class of the pair) and,
// given prob_a/prob_b, turns the pairwise scores into probabilities with
// Platt's sigmoid and libsvm's iterative coupling; without support vectors
// it scores each class linearly. A lone score becomes two columns as the
// reference's write_scores does.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "providers/cpu/elementwise_common.h"
#include "providers/cpu/ml_common.h"
#include "providers/cpu/scratch_carver.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

using ml::PostTransform;

// The kernel function K(a, b) with its kernel_params (gamma, coef0,
// degree).
struct SvmKernel {
  enum Type { kLinear, kPoly, kRbf, kSigmoid };
  Type type = kLinear;
  double gamma = 0;
  double coef0 = 0;
  double degree = 0;

  Status read(const KernelCreateContext& ctx) {
    const Node& node = ctx.node();
    const std::string name = node.attr_string("kernel_type", "LINEAR");
    if (name == "LINEAR") type = kLinear;
    else if (name == "POLY") type = kPoly;
    else if (name == "RBF") type = kRbf;
    else if (name == "SIGMOID") type = kSigmoid;
    else return ctx.error("attribute kernel_type must be LINEAR, POLY, RBF or SIGMOID, got '" + name + "'");
    const std::vector<float> params = node.attr_floats("kernel_params");
    if (!params.empty() && params.size() != 3)
      return ctx.error("attribute kernel_params must hold gamma, coef0 and degree, got " +
                       std::to_string(params.size()) + " values");
    if (params.size() == 3) {
      gamma = params[0];
      coef0 = params[1];
      degree = std::trunc(params[2]);  // the reference reads it as an int
    }
    return ok_status();
  }

  template <typename In>
  double operator()(const In* a, const double* b, int64_t n) const {
    if (type == kRbf) {
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        const double d = static_cast<double>(a[i]) - b[i];
        sum += d * d;
      }
      return std::exp(-gamma * sum);
    }
    double dot = 0;
    for (int64_t i = 0; i < n; ++i) dot += static_cast<double>(a[i]) * b[i];
    switch (type) {
      case kPoly: return std::pow(dot * gamma + coef0, degree);
      case kSigmoid: return std::tanh(dot * gamma + coef0);
      default: return dot;
    }
  }
};

// Rows per task: enough kernel evaluations to be worth a thread.
int64_t rows_per_task(int64_t evaluations_per_row) {
  return std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(1, evaluations_per_row));
}

std::vector<double> doubles(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

// ---- SVMClassifier -----------------------------------------------------------------

// libsvm's multiclass_probability: the class probabilities p that best
// agree with the pairwise ones r (k x k), by its fixed-point iteration. q
// (k x k), qp and p (k each) are the caller's memory.
void couple_probabilities(int64_t k, const double* r, double* q, double* qp, double* p) {
  for (int64_t t = 0; t < k; ++t) {
    p[t] = 1.0 / static_cast<double>(k);
    q[t * k + t] = 0;
    for (int64_t j = 0; j < t; ++j) {
      q[t * k + t] += r[j * k + t] * r[j * k + t];
      q[t * k + j] = q[j * k + t];
    }
    for (int64_t j = t + 1; j < k; ++j) {
      q[t * k + t] += r[j * k + t] * r[j * k + t];
      q[t * k + j] = -r[j * k + t] * r[t * k + j];
    }
  }
  const int64_t max_iterations = std::max<int64_t>(100, k);
  const double eps = 0.005 / static_cast<double>(k);
  for (int64_t iteration = 0; iteration < max_iterations; ++iteration) {
    double pqp = 0;
    for (int64_t t = 0; t < k; ++t) {
      qp[t] = 0;
      for (int64_t j = 0; j < k; ++j) qp[t] += q[t * k + j] * p[j];
      pqp += p[t] * qp[t];
    }
    double max_error = 0;
    for (int64_t t = 0; t < k; ++t) max_error = std::max(max_error, std::abs(qp[t] - pqp));
    if (max_error < eps) break;
    for (int64_t t = 0; t < k; ++t) {
      const double diff = (-qp[t] + pqp) / q[t * k + t];
      p[t] += diff;
      pqp = (pqp + diff * (diff * q[t * k + t] + 2 * qp[t])) / (1 + diff) / (1 + diff);
      for (int64_t j = 0; j < k; ++j) {
        qp[j] = (qp[j] + diff * q[t * k + j]) / (1 + diff);
        p[j] /= 1 + diff;
      }
    }
  }
}

class SvmClassifierKernel final : public Kernel {
 public:
  SvmClassifierKernel(const KernelCreateContext& ctx, Status& status) { status = init(ctx); }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    int64_t rows = 0;
    SY_RETURN_IF_ERROR(ml::feature_rows(ctx, x, features_, rows));
    const int64_t cols = features_;
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, labels_.type(), Shape{rows}));
    SY_ASSIGN_OR_RETURN(Tensor * z, ctx.allocate_output(1, DataType::kFloat, Shape{rows, score_columns_}));
    const int64_t c = classes_;
    const int64_t lanes = ctx.thread_pool().num_threads();
    ScratchCarver carver;
    const size_t lane_doubles = static_cast<size_t>(vectors_ + 3 * c + pairs_ + 2 * c * c + 2);
    const size_t lanes_at = carver.add<double>(lanes * static_cast<int64_t>(lane_doubles));
    SY_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(carver.total()));
    double* lane_memory = ScratchCarver::pointer<double>(scratch, lanes_at);
    const bool known = visit_type(ml::MlInputTypes{}, x.dtype(), [&]<typename In>(TypeTag<In>) {
      const int64_t per_task = rows_per_task((vectors_ > 0 ? vectors_ : c) * cols);
      const int64_t tasks = (rows + per_task - 1) / per_task;
      ctx.thread_pool().run_tasks(lanes, tasks, [&](int64_t lane, int64_t task) {
        double* memory = lane_memory + lane * static_cast<int64_t>(lane_doubles);
        for (int64_t r = task * per_task; r < std::min(rows, (task + 1) * per_task); ++r)
          score_row(x.data<In>() + r * cols, memory, *y, r, z->data<float>() + r * score_columns_);
      });
    });
    if (!known) return kernel_error(ctx, describe_input(ctx, 0, "X") + " has an unsupported type");
    return ok_status();
  }

 private:
  Status init(const KernelCreateContext& ctx) {
    const Node& node = ctx.node();
    SY_RETURN_IF_ERROR(ml::read_post_transform(ctx, post_));
    SY_RETURN_IF_ERROR(kernel_.read(ctx));
    SY_RETURN_IF_ERROR(labels_.read(ctx, "classlabels_ints", false));
    classes_ = std::max<int64_t>(labels_.size(), 1);
    coefficients_ = doubles(node.attr_floats("coefficients"));
    rho_ = doubles(node.attr_floats("rho"));
    prob_a_ = doubles(node.attr_floats("prob_a"));
    prob_b_ = doubles(node.attr_floats("prob_b"));
    support_ = doubles(node.attr_floats("support_vectors"));
    if (coefficients_.empty()) return ctx.error("attribute coefficients is required");
    if (rho_.empty()) return ctx.error("attribute rho is required");
    weights_all_positive_ = *std::min_element(coefficients_.begin(), coefficients_.end()) >= 0;
    for (int64_t count : node.attr_ints("vectors_per_class")) {
      if (count < 0) return ctx.error("attribute vectors_per_class has a negative count");
      starts_.push_back(vectors_);
      counts_.push_back(count);
      vectors_ += count;
    }
    const auto n_coefficients = static_cast<int64_t>(coefficients_.size());
    if (vectors_ > 0) {
      if (static_cast<int64_t>(counts_.size()) != classes_)
        return ctx.error("attribute vectors_per_class has " + std::to_string(counts_.size()) + " counts for " +
                         std::to_string(classes_) + " classes");
      if (support_.size() % static_cast<size_t>(vectors_) != 0)
        return ctx.error("the support vectors do not divide into " + std::to_string(vectors_) + " vectors");
      features_ = static_cast<int64_t>(support_.size()) / vectors_;
      pairs_ = classes_ * (classes_ - 1) / 2;
      if (n_coefficients != (classes_ - 1) * vectors_)
        return ctx.error("attribute coefficients has " + std::to_string(n_coefficients) + " values; expected " +
                         std::to_string((classes_ - 1) * vectors_) + " ((classes - 1) x support vectors)");
      if (static_cast<int64_t>(rho_.size()) < pairs_)
        return ctx.error("attribute rho has " + std::to_string(rho_.size()) + " values for " + std::to_string(pairs_) +
                         " pairs of classes");
      probabilities_ = !prob_a_.empty();
      if (probabilities_ && (static_cast<int64_t>(prob_a_.size()) < pairs_ || prob_b_.size() < prob_a_.size()))
        return ctx.error("attributes prob_a and prob_b need a value for each of the " + std::to_string(pairs_) +
                         " pairs of classes");
    } else {
      // liblinear: one row of coefficients per class, a linear kernel.
      if (n_coefficients % classes_ != 0)
        return ctx.error("the " + std::to_string(n_coefficients) + " coefficients do not divide among " +
                         std::to_string(classes_) + " classes");
      features_ = n_coefficients / classes_;
      kernel_.type = SvmKernel::kLinear;
    }
    scores_ = probabilities_ ? classes_ : vectors_ > 0 ? pairs_ : classes_;
    // The reference's label rule for a single decision function.
    extra_column_ = rho_.size() == 1 && labels_.size() == 2;
    score_columns_ = scores_ >= 2 ? scores_ : (post_ == PostTransform::kProbit || !extra_column_ ? 1 : 2);
    return ok_status();
  }

  // Scores row r into z (score_columns_ floats) and its label into y;
  // memory holds lane_doubles doubles.
  template <typename In>
  void score_row(const In* x, double* memory, Tensor& y, int64_t r, float* z) const {
    const int64_t c = classes_;
    double* kernels = memory;
    double* votes = kernels + vectors_;
    double* scores = votes + c;  // pairs_ or c
    double* pairwise = scores + std::max(pairs_, c);
    double* q = pairwise + c * c;
    double* qp = q + c * c;
    double* p = qp + c;
    if (vectors_ == 0) {
      for (int64_t j = 0; j < c; ++j) scores[j] = rho_[0] + kernel_(x, coefficients_.data() + j * features_, features_);
    } else {
      for (int64_t v = 0; v < vectors_; ++v) kernels[v] = kernel_(x, support_.data() + v * features_, features_);
      std::fill(votes, votes + c, 0.0);
      int64_t pair = 0;
      for (int64_t i = 0; i < c; ++i) {
        for (int64_t j = i + 1; j < c; ++j, ++pair) {
          // Class i's vectors weighted by row j - 1, class j's by row i.
          double s = rho_[static_cast<size_t>(pair)];
          for (int64_t v = starts_[i]; v < starts_[i] + counts_[i]; ++v)
            s += coefficients_[static_cast<size_t>((j - 1) * vectors_ + v)] * kernels[v];
          for (int64_t v = starts_[j]; v < starts_[j] + counts_[j]; ++v)
            s += coefficients_[static_cast<size_t>(i * vectors_ + v)] * kernels[v];
          scores[pair] = s;
          votes[s > 0 ? i : j] += 1;
        }
      }
      if (probabilities_) {
        pair = 0;
        for (int64_t i = 0; i < c; ++i) {
          for (int64_t j = i + 1; j < c; ++j, ++pair) {
            const double platt = 1 - ml::ml_logistic(scores[pair] * prob_a_[static_cast<size_t>(pair)] +
                                                     prob_b_[static_cast<size_t>(pair)]);
            const double clamped = std::clamp(platt, 1e-7, 1 - 1e-7);
            pairwise[i * c + j] = clamped;
            pairwise[j * c + i] = 1 - clamped;
          }
        }
        couple_probabilities(c, pairwise, q, qp, p);
        std::copy(p, p + c, scores);
      }
    }
    // The winner: by votes with support vectors, else by score.
    const double* ranked = vectors_ > 0 ? votes : scores;
    const int64_t best = ml::first_max_index(ranked, vectors_ > 0 ? c : scores_);
    const double best_weight = ranked[best];
    int64_t label_index = best;
    bool raw_label = false;  // the label is the value 1 or 0, not an index
    if (rho_.size() == 1) {
      if (labels_.size() == 2) {
        if (!probabilities_ && weights_all_positive_ && best_weight >= 0.5) label_index = 1;
      } else {
        label_index = best_weight > 0 ? 1 : 0;
        raw_label = true;
      }
    }
    write_label(y, r, label_index, raw_label);
    write_scores(scores, z);
  }

  // A model without labels gives the class index; strings have no raw form
  // and take the label at the index.
  void write_label(Tensor& y, int64_t r, int64_t index, bool raw) const {
    if (labels_.type() == DataType::kString) labels_.write(y, r, std::min(index, labels_.size() - 1));
    else if (raw || index >= labels_.size()) y.data<int64_t>()[r] = index;
    else labels_.write(y, r, index);
  }

  void write_scores(const double* scores, float* z) const {
    if (scores_ >= 2) {
      for (int64_t j = 0; j < scores_; ++j) z[j] = static_cast<float>(scores[j]);
      ml::apply_post_transform(post_, z, scores_);
      return;
    }
    const double s = scores[0];
    if (post_ == PostTransform::kProbit) {
      z[0] = static_cast<float>(ml::ml_probit(s));
    } else if (!extra_column_) {
      z[0] = static_cast<float>(s);
    } else {
      // A lone decision function scores [-s, s], transformed.
      z[0] = static_cast<float>(-s);
      z[1] = static_cast<float>(s);
      ml::apply_post_transform(post_, z, 2);
    }
  }

  SvmKernel kernel_;
  ml::ClassLabels labels_;
  std::vector<double> coefficients_, rho_, prob_a_, prob_b_, support_;
  std::vector<int64_t> starts_, counts_;
  int64_t classes_ = 1;
  int64_t vectors_ = 0;
  int64_t features_ = 0;
  int64_t pairs_ = 0;
  int64_t scores_ = 0;
  int64_t score_columns_ = 0;
  bool probabilities_ = false;
  bool weights_all_positive_ = false;
  bool extra_column_ = false;
  PostTransform post_ = PostTransform::kNone;
};

// ---- SVMRegressor ------------------------------------------------------------------

class SvmRegressorKernel final : public Kernel {
 public:
  SvmRegressorKernel(const KernelCreateContext& ctx, Status& status) { status = init(ctx); }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    int64_t rows = 0;
    SY_RETURN_IF_ERROR(ml::feature_rows(ctx, x, features_, rows));
    const int64_t cols = features_;
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat, Shape{rows, 1}));
    float* out = y->data<float>();
    const bool known = visit_type(ml::MlInputTypes{}, x.dtype(), [&]<typename In>(TypeTag<In>) {
      const In* data = x.data<In>();
      const int64_t evaluations = std::max<int64_t>(1, supports_) * cols;
      ctx.thread_pool().parallel_for(rows, rows_per_task(evaluations), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          const In* row = data + r * cols;
          double s = rho_;
          if (supports_ > 0) {
            for (int64_t v = 0; v < supports_; ++v)
              s += coefficients_[static_cast<size_t>(v)] * kernel_(row, support_.data() + v * features_, features_);
          } else {
            s += kernel_(row, coefficients_.data(), features_);
          }
          if (one_class_) s = s > 0 ? 1 : -1;
          double transformed = s;
          ml::apply_post_transform(post_, &transformed, 1);
          out[r] = static_cast<float>(transformed);
        }
      });
    });
    if (!known) return kernel_error(ctx, describe_input(ctx, 0, "X") + " has an unsupported type");
    return ok_status();
  }

 private:
  Status init(const KernelCreateContext& ctx) {
    const Node& node = ctx.node();
    SY_RETURN_IF_ERROR(ml::read_post_transform(ctx, post_));
    SY_RETURN_IF_ERROR(kernel_.read(ctx));
    coefficients_ = doubles(node.attr_floats("coefficients"));
    support_ = doubles(node.attr_floats("support_vectors"));
    const std::vector<float> rho = node.attr_floats("rho");
    if (rho.empty()) return ctx.error("attribute rho is required");
    rho_ = rho[0];
    one_class_ = node.attr_int("one_class", 0) != 0;
    supports_ = node.attr_int("n_supports", 0);
    if (supports_ < 0) return ctx.error("attribute n_supports is negative");
    if (supports_ > 0) {
      if (support_.size() % static_cast<size_t>(supports_) != 0 ||
          static_cast<int64_t>(coefficients_.size()) != supports_)
        return ctx.error("expected one coefficient per support vector and " + std::to_string(supports_) +
                         " equal support vectors; got " + std::to_string(coefficients_.size()) + " coefficients and " +
                         std::to_string(support_.size()) + " values");
      features_ = static_cast<int64_t>(support_.size()) / supports_;
    } else {
      // Linear: the coefficients are the weights of X's features.
      kernel_.type = SvmKernel::kLinear;
      features_ = static_cast<int64_t>(coefficients_.size());
    }
    return ok_status();
  }

  SvmKernel kernel_;
  std::vector<double> coefficients_, support_;
  double rho_ = 0;
  int64_t supports_ = 0;
  int64_t features_ = 0;
  bool one_class_ = false;
  PostTransform post_ = PostTransform::kNone;
};

constexpr uint64_t kInputs = type_mask(ml::MlInputTypes{});

const KernelDef kSvmKernels[] = {
    {"ai.onnx.ml", "SVMClassifier", 1, kLatestVersion, 0, kInputs, &make_kernel<SvmClassifierKernel>},
    {"ai.onnx.ml", "SVMRegressor", 1, kLatestVersion, 0, kInputs, &make_kernel<SvmRegressorKernel>},
};

}  // namespace

std::span<const KernelDef> ml_svm_kernels() { return kSvmKernels; }

}  // namespace sy::cpu
