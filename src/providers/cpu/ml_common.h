// What the ai.onnx.ml kernels share: the post transforms their scores go
// through (ml_tree_ensemble.cc, ml_linear.cc, ml_svm.cc), and reading the
// attributes they give as float lists or as tensors. The transforms follow
// ONNX's reference implementation (onnx/reference/ops/aionnxml), including
// its approximate inverse erf for PROBIT and SOFTMAX_ZERO's handling of
// zero scores.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "providers/cpu/elementwise_common.h"
#include "providers/kernel.h"

namespace sy::cpu::ml {

// The numbering is TreeEnsemble-5's post_transform attribute's.
enum class PostTransform : uint8_t { kNone = 0, kSoftmax = 1, kLogistic = 2, kSoftmaxZero = 3, kProbit = 4 };

// The string attribute of the older ops ("NONE", "SOFTMAX", "LOGISTIC",
// "SOFTMAX_ZERO", "PROBIT"; absent means NONE); an error naming the value
// otherwise.
Status read_post_transform(const KernelCreateContext& ctx, PostTransform& out);

// 1 / (1 + e^-v), computed from |v| so that neither side overflows.
template <typename T>
T ml_logistic(T v) {
  const T e = T(1) / (T(1) + std::exp(-std::abs(v)));
  return v < 0 ? T(1) - e : e;
}

// sqrt(2) * erfinv(2v - 1) with Winitzki's approximation of erfinv (a =
// 0.147), as the reference and the runtimes computing these ops use; the
// exact inverse would differ from them in the third decimal.
template <typename T>
T ml_probit(T v) {
  const double x = 2.0 * static_cast<double>(v) - 1.0;
  const double sign = x < 0 ? -1.0 : 1.0;
  const double w = (1.0 - x) * (1.0 + x);
  if (w == 0) return T(0);
  const double l = std::log(w);
  const double a = 2.0 / (3.14159265358979323846 * 0.147) + 0.5 * l;
  const double b = l / 0.147;
  return static_cast<T>(1.41421356 * sign * std::sqrt(std::sqrt(a * a - b) - a));
}

// Applies `pt` to one row of `n` scores in place.
template <typename T>
void apply_post_transform(PostTransform pt, T* s, int64_t n) {
  switch (pt) {
    case PostTransform::kNone:
      return;
    case PostTransform::kLogistic:
      for (int64_t i = 0; i < n; ++i) s[i] = ml_logistic(s[i]);
      return;
    case PostTransform::kProbit:
      for (int64_t i = 0; i < n; ++i) s[i] = ml_probit(s[i]);
      return;
    case PostTransform::kSoftmax: {
      if (n == 0) return;
      const T top = *std::max_element(s, s + n);
      T sum = 0;
      for (int64_t i = 0; i < n; ++i) sum += s[i] = std::exp(s[i] - top);
      for (int64_t i = 0; i < n; ++i) s[i] /= sum;
      return;
    }
    case PostTransform::kSoftmaxZero: {
      // A score of (nearly) zero stands for "no score" and stays near zero
      // instead of taking e^0's share; all-zero rows become 0.5 each.
      if (n == 0) return;
      const T top = *std::max_element(s, s + n);
      const T scale = std::exp(-top);
      T sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        s[i] = (s[i] > T(1e-7) || s[i] < T(-1e-7)) ? std::exp(s[i] - top) : s[i] * scale;
        sum += s[i];
      }
      for (int64_t i = 0; i < n; ++i) s[i] = sum == 0 ? T(0.5) : s[i] / sum;
      return;
    }
  }
}

// The index of the first largest of n > 0 scores (numpy's argmax).
template <typename T>
int64_t first_max_index(const T* s, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i)
    if (s[i] > s[best]) best = i;
  return best;
}

// A numeric tensor's values as doubles (float, double, float16, bfloat16
// and integer types); false for other types.
bool tensor_as_doubles(const Tensor& t, std::vector<double>& out);

// The values of a floats attribute `name`, or of its tensor twin
// `tensor_name` (the "*_as_tensor" attributes, which carry double
// precision) when the model gives that instead; empty when neither is
// given. An error when both are, or the tensor is not numeric.
Status read_floats_or_tensor(const KernelCreateContext& ctx, const std::string& name, const std::string& tensor_name,
                             std::vector<double>& out);

// Rows and columns of a classifier's or regressor's X: [N, C], or [C] read
// as one row. An error naming the input for other ranks.
Status matrix_dims(const KernelContext& ctx, const Tensor& x, int64_t& rows, int64_t& cols);

// X as rows of exactly `features` columns ([N, C] or [C]); an error naming
// the input otherwise.
Status feature_rows(const KernelContext& ctx, const Tensor& x, int64_t features, int64_t& rows);

// A classifier's class labels: classlabels_strings, or the integer list
// named by the op (classlabels_ints, classlabels_int64s).
struct ClassLabels {
  std::vector<int64_t> ints;
  std::vector<std::string> strings;

  // An error when both lists are given, or (`required`) neither.
  Status read(const KernelCreateContext& ctx, const std::string& ints_name, bool required);
  int64_t size() const { return static_cast<int64_t>(strings.empty() ? ints.size() : strings.size()); }
  DataType type() const { return strings.empty() ? DataType::kInt64 : DataType::kString; }
  // y[r] = the label at `index` (in range).
  void write(Tensor& y, int64_t r, int64_t index) const {
    if (strings.empty()) y.data<int64_t>()[r] = ints[static_cast<size_t>(index)];
    else y.data<std::string>()[r] = strings[static_cast<size_t>(index)];
  }
};

// The numeric input types the older ml ops take (T1 of LinearClassifier,
// SVMClassifier, TreeEnsembleClassifier ...).
using MlInputTypes = TypeList<float, double, int64_t, int32_t>;

}  // namespace sy::cpu::ml
