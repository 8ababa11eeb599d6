// The ai.onnx.ml feature transforms (all version 1): Normalizer, Scaler,
// Binarizer, Imputer, OneHotEncoder, ArrayFeatureExtractor,
// FeatureVectorizer and CategoryMapper.
//
// Semantics follow ONNX's reference implementation
// (onnx/reference/ops/aionnxml): Normalizer divides each row by its largest
// magnitude (MAX), its L1 or its L2 norm and leaves all-zero rows as they
// are; OneHotEncoder matches numbers to integer categories by value;
// ArrayFeatureExtractor reads a vector as one row; FeatureVectorizer reads
// a vector as a column and cuts or zero-pads each input to its
// inputdimensions.
#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>
#include <vector>

#include "providers/cpu/copy_util.h"
#include "providers/cpu/elementwise_common.h"
#include "providers/cpu/ml_common.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

using NumericInputs = ml::MlInputTypes;  // float, double, int64, int32

Status unsupported_type(const KernelContext& ctx) {
  return kernel_error(ctx, describe_input(ctx, 0, "X") + " has an unsupported type");
}

// Elements per chunk of an element-wise loop worth a thread.
constexpr int64_t kElementsPerChunk = 1 << 14;

// ---- Normalizer ---------------------------------------------------------------------

class NormalizerKernel final : public Kernel {
 public:
  NormalizerKernel(const KernelCreateContext& ctx, Status& status) {
    const std::string norm = ctx.node().attr_string("norm", "MAX");
    if (norm == "MAX") norm_ = Norm::kMax;
    else if (norm == "L1") norm_ = Norm::kL1;
    else if (norm == "L2") norm_ = Norm::kL2;
    else status = ctx.error("attribute norm must be MAX, L1 or L2, got '" + norm + "'");
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    int64_t rows = 0, cols = 0;
    SY_RETURN_IF_ERROR(ml::matrix_dims(ctx, x, rows, cols));
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat, x.shape()));
    float* out = y->data<float>();
    const bool known = visit_type(NumericInputs{}, x.dtype(), [&]<typename In>(TypeTag<In>) {
      const In* in = x.data<In>();
      ctx.thread_pool().parallel_for(rows, std::max<int64_t>(1, kElementsPerChunk / std::max<int64_t>(cols, 1)),
                                     [&](int64_t b, int64_t e) {
                                       for (int64_t r = b; r < e; ++r) normalize(in + r * cols, out + r * cols, cols);
                                     });
    });
    return known ? ok_status() : unsupported_type(ctx);
  }

 private:
  enum class Norm { kMax, kL1, kL2 };

  template <typename In>
  void normalize(const In* in, float* out, int64_t n) const {
    double norm = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double v = static_cast<double>(in[i]);
      switch (norm_) {
        case Norm::kMax: norm = std::max(norm, std::abs(v)); break;
        case Norm::kL1: norm += std::abs(v); break;
        case Norm::kL2: norm += v * v; break;
      }
    }
    if (norm_ == Norm::kL2) norm = std::sqrt(norm);
    const double divisor = norm == 0 ? 1.0 : norm;
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(static_cast<double>(in[i]) / divisor);
  }

  Norm norm_ = Norm::kMax;
};

// ---- Scaler ----------------------------------------------------------------------------

class ScalerKernel final : public Kernel {
 public:
  ScalerKernel(const KernelCreateContext& ctx, Status& status) {
    const std::vector<float> offset = ctx.node().attr_floats("offset");
    const std::vector<float> scale = ctx.node().attr_floats("scale");
    offset_.assign(offset.begin(), offset.end());
    scale_.assign(scale.begin(), scale.end());
    if (offset_.empty()) offset_.push_back(0.0);
    if (scale_.empty()) scale_.push_back(1.0);
    (void)status;
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const int64_t cols = x.shape().rank() == 0 ? 1 : x.shape()[x.shape().rank() - 1];
    for (const std::vector<double>* v : {&offset_, &scale_})
      if (v->size() != 1 && static_cast<int64_t>(v->size()) != cols)
        return kernel_error(ctx, describe_input(ctx, 0, "X") + " has " + std::to_string(cols) +
                                     " features; offset and scale must have 1 value or one per feature");
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat, x.shape()));
    float* out = y->data<float>();
    const bool known = visit_type(NumericInputs{}, x.dtype(), [&]<typename In>(TypeTag<In>) {
      const In* in = x.data<In>();
      ctx.thread_pool().parallel_for(x.num_elements(), kElementsPerChunk, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          const auto c = static_cast<size_t>(i % cols);
          const double offset = offset_.size() == 1 ? offset_[0] : offset_[c];
          const double scale = scale_.size() == 1 ? scale_[0] : scale_[c];
          out[i] = static_cast<float>((static_cast<double>(in[i]) - offset) * scale);
        }
      });
    });
    return known ? ok_status() : unsupported_type(ctx);
  }

 private:
  std::vector<double> offset_;
  std::vector<double> scale_;
};

// ---- Binarizer --------------------------------------------------------------------------

class BinarizerKernel final : public Kernel {
 public:
  BinarizerKernel(const KernelCreateContext& ctx, Status& status)
      : threshold_(ctx.node().attr_float("threshold", 0.0f)) {
    (void)status;
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
    const bool known = visit_type(NumericInputs{}, x.dtype(), [&]<typename T>(TypeTag<T>) {
      const T* in = x.data<T>();
      T* out = y->data<T>();
      ctx.thread_pool().parallel_for(x.num_elements(), kElementsPerChunk, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) out[i] = static_cast<double>(in[i]) > threshold_ ? T(1) : T(0);
      });
    });
    return known ? ok_status() : unsupported_type(ctx);
  }

 private:
  double threshold_;
};

// ---- Imputer ------------------------------------------------------------------------------

class ImputerKernel final : public Kernel {
 public:
  ImputerKernel(const KernelCreateContext& ctx, Status& status) {
    const Node& node = ctx.node();
    const std::vector<float> floats = node.attr_floats("imputed_value_floats");
    const std::vector<int64_t> ints = node.attr_ints("imputed_value_int64s");
    // The float list wins when both are given, as in the reference.
    if (!floats.empty()) {
      values_.assign(floats.begin(), floats.end());
      replaced_ = node.attr_float("replaced_value_float", 0.0f);
    } else if (!ints.empty()) {
      values_.assign(ints.begin(), ints.end());
      replaced_ = static_cast<double>(node.attr_int("replaced_value_int64", 0));
    } else {
      status = ctx.error("one of imputed_value_floats and imputed_value_int64s is required");
    }
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    int64_t rows = 0, cols = 0;
    SY_RETURN_IF_ERROR(ml::matrix_dims(ctx, x, rows, cols));
    if (values_.size() != 1 && static_cast<int64_t>(values_.size()) != cols)
      return kernel_error(ctx, describe_input(ctx, 0, "X") + " has " + std::to_string(cols) + " features but " +
                                   std::to_string(values_.size()) + " imputed values are given");
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
    const bool replace_nan = std::isnan(replaced_);
    const bool known = visit_type(NumericInputs{}, x.dtype(), [&]<typename T>(TypeTag<T>) {
      const T* in = x.data<T>();
      T* out = y->data<T>();
      ctx.thread_pool().parallel_for(x.num_elements(), kElementsPerChunk, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          const double v = static_cast<double>(in[i]);
          const bool missing = replace_nan ? std::isnan(v) : v == replaced_;
          const double value = values_[values_.size() == 1 ? 0 : static_cast<size_t>(i % cols)];
          out[i] = missing ? static_cast<T>(value) : in[i];
        }
      });
    });
    return known ? ok_status() : unsupported_type(ctx);
  }

 private:
  std::vector<double> values_;
  double replaced_ = 0;
};

// ---- OneHotEncoder ---------------------------------------------------------------------------

class OneHotEncoderKernel final : public Kernel {
 public:
  OneHotEncoderKernel(const KernelCreateContext& ctx, Status& status) {
    const Node& node = ctx.node();
    const std::vector<int64_t> ints = node.attr_ints("cats_int64s");
    const Attribute* strings = node.attr("cats_strings");
    for (size_t i = 0; i < ints.size(); ++i) int_index_.emplace(ints[i], static_cast<int64_t>(i));
    if (strings != nullptr)
      for (size_t i = 0; i < strings->strings.size(); ++i)
        string_index_.emplace(strings->strings[i], static_cast<int64_t>(i));
    categories_ = static_cast<int64_t>(!ints.empty() ? ints.size() : strings ? strings->strings.size() : 0);
    if (categories_ == 0) status = ctx.error("one of cats_int64s and cats_strings is required, non-empty");
    zeros_ = node.attr_int("zeros", 1) != 0;
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    Shape dims = x.shape();  // Shape keeps its dims inline: no heap in run()
    dims.push_back(categories_);
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat, dims));
    float* out = y->data<float>();
    const int64_t n = x.num_elements();
    std::fill(out, out + n * categories_, 0.0f);
    int64_t unknown = -1;  // the first element without a category
    auto mark = [&](int64_t i, int64_t category) {
      if (category >= 0) out[i * categories_ + category] = 1.0f;
      else if (unknown < 0) unknown = i;
    };
    if (x.dtype() == DataType::kString) {
      const std::string* in = x.data<std::string>();
      for (int64_t i = 0; i < n; ++i) {
        const auto it = string_index_.find(in[i]);
        mark(i, it == string_index_.end() ? -1 : it->second);
      }
    } else {
      const bool known = visit_type(NumericInputs{}, x.dtype(), [&]<typename T>(TypeTag<T>) {
        const T* in = x.data<T>();
        for (int64_t i = 0; i < n; ++i) mark(i, int_category(static_cast<double>(in[i])));
      });
      if (!known) return unsupported_type(ctx);
    }
    if (!zeros_ && unknown >= 0)
      return kernel_error(ctx, "element " + std::to_string(unknown) + " of " + describe_input(ctx, 0, "X") +
                                   " is none of the categories (zeros=0 makes that an error)");
    return ok_status();
  }

 private:
  // The integer category equal to v, -1 when none is.
  int64_t int_category(double v) const {
    if (!(v >= -9.2e18 && v <= 9.2e18) || v != std::floor(v)) return -1;
    const auto it = int_index_.find(static_cast<int64_t>(v));
    return it == int_index_.end() ? -1 : it->second;
  }

  std::unordered_map<int64_t, int64_t> int_index_;
  std::unordered_map<std::string, int64_t> string_index_;
  int64_t categories_ = 0;
  bool zeros_ = true;
};

// ---- ArrayFeatureExtractor ----------------------------------------------------------------------

class ArrayFeatureExtractorKernel final : public Kernel {
 public:
  ArrayFeatureExtractorKernel(const KernelCreateContext& ctx, Status& status) { (void)ctx, (void)status; }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const Tensor& indices = *ctx.input(1);
    if (indices.dtype() != DataType::kInt64)
      return kernel_error(ctx, describe_input(ctx, 1, "Y") + " must be int64");
    const Shape& s = x.shape();
    if (s.rank() == 0) return kernel_error(ctx, describe_input(ctx, 0, "X") + " must have rank 1 or more");
    const int64_t last = s[s.rank() - 1];
    const int64_t count = indices.num_elements();
    const int64_t* index = indices.data<int64_t>();
    for (int64_t k = 0; k < count; ++k)
      if (index[k] < 0 || index[k] >= last)
        return kernel_error(ctx, "index " + std::to_string(index[k]) + " of " + describe_input(ctx, 1, "Y") +
                                     " is out of range [0, " + std::to_string(last) + ")");
    // A vector is one row: [C] -> [1, count].
    Shape dims;  // Shape keeps its dims inline: no heap in run()
    if (s.rank() == 1) dims.push_back(1);
    for (size_t d = 0; d + 1 < s.rank(); ++d) dims.push_back(s[d]);
    dims.push_back(count);
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), dims));
    const int64_t rows = last == 0 ? 0 : x.num_elements() / last;
    return dispatch_by_element(x.dtype(), [&]<typename T>() {
      const T* in = x.data<T>();
      T* out = y->data<T>();
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < count; ++k) out[r * count + k] = in[r * last + index[k]];
      return ok_status();
    });
  }
};

// ---- FeatureVectorizer -----------------------------------------------------------------------------

class FeatureVectorizerKernel final : public Kernel {
 public:
  FeatureVectorizerKernel(const KernelCreateContext& ctx, Status& status)
      : widths_(ctx.node().attr_ints("inputdimensions")) {
    if (widths_.size() != ctx.num_inputs())
      status = ctx.error("attribute inputdimensions has " + std::to_string(widths_.size()) + " values for " +
                         std::to_string(ctx.num_inputs()) + " inputs");
    for (int64_t w : widths_) {
      if (w < 0) status = ctx.error("attribute inputdimensions has a negative width");
      total_ += std::max<int64_t>(w, 0);
    }
  }

  Status run(KernelContext& ctx) const override {
    int64_t rows = -1;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor* in = ctx.input(i);
      if (in == nullptr) return kernel_error(ctx, "input " + std::to_string(i) + " is missing");
      const Shape& s = in->shape();
      if (s.rank() < 1 || s.rank() > 2)
        return kernel_error(ctx, describe_input(ctx, i, "X") + " must have rank 1 or 2");
      if (rows >= 0 && s[0] != rows)
        return kernel_error(ctx, describe_input(ctx, i, "X") + " has " + std::to_string(s[0]) +
                                     " rows; the inputs before it have " + std::to_string(rows));
      rows = s[0];
    }
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat, Shape{std::max<int64_t>(rows, 0), total_}));
    float* out = y->data<float>();
    std::fill(out, out + y->num_elements(), 0.0f);
    int64_t at = 0;  // the first output column of input i
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor& in = *ctx.input(i);
      // A vector is a column of one feature per row.
      const int64_t cols = in.shape().rank() == 1 ? 1 : in.shape()[1];
      const int64_t width = widths_[i];
      const bool known = visit_type(NumericInputs{}, in.dtype(), [&]<typename T>(TypeTag<T>) {
        const T* data = in.data<T>();
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < std::min(cols, width); ++c)
            out[r * total_ + at + c] = static_cast<float>(data[r * cols + c]);
      });
      if (!known) return kernel_error(ctx, describe_input(ctx, i, "X") + " has an unsupported type");
      at += width;
    }
    return ok_status();
  }

 private:
  std::vector<int64_t> widths_;
  int64_t total_ = 0;
};

// ---- CategoryMapper ------------------------------------------------------------------------------

class CategoryMapperKernel final : public Kernel {
 public:
  CategoryMapperKernel(const KernelCreateContext& ctx, Status& status) {
    const Node& node = ctx.node();
    ints_ = node.attr_ints("cats_int64s");
    if (const Attribute* s = node.attr("cats_strings")) strings_ = s->strings;
    if (ints_.size() != strings_.size()) {
      status = ctx.error("attributes cats_int64s and cats_strings must be as long; they have " +
                         std::to_string(ints_.size()) + " and " + std::to_string(strings_.size()) + " values");
      return;
    }
    for (size_t i = 0; i < ints_.size(); ++i) {
      to_int_.emplace(strings_[i], ints_[i]);
      to_string_.emplace(ints_[i], i);
    }
    default_int_ = node.attr_int("default_int64", -1);
    default_string_ = node.attr_string("default_string", "_Unused");
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const int64_t n = x.num_elements();
    if (x.dtype() == DataType::kString) {
      SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kInt64, x.shape()));
      const std::string* in = x.data<std::string>();
      int64_t* out = y->data<int64_t>();
      for (int64_t i = 0; i < n; ++i) {
        const auto it = to_int_.find(in[i]);
        out[i] = it == to_int_.end() ? default_int_ : it->second;
      }
      return ok_status();
    }
    if (x.dtype() != DataType::kInt64) return unsupported_type(ctx);
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kString, x.shape()));
    const int64_t* in = x.data<int64_t>();
    std::string* out = y->data<std::string>();
    for (int64_t i = 0; i < n; ++i) {
      const auto it = to_string_.find(in[i]);
      out[i] = it == to_string_.end() ? default_string_ : strings_[it->second];
    }
    return ok_status();
  }

 private:
  std::vector<int64_t> ints_;
  std::vector<std::string> strings_;
  std::unordered_map<std::string, int64_t> to_int_;
  std::unordered_map<int64_t, size_t> to_string_;
  int64_t default_int_ = -1;
  std::string default_string_;
};

constexpr uint64_t kNumeric = type_mask(NumericInputs{});
constexpr uint64_t kString = type_bit(DataType::kString);

const KernelDef kPreprocessKernels[] = {
    {"ai.onnx.ml", "Normalizer", 1, kLatestVersion, 0, kNumeric, &make_kernel<NormalizerKernel>},
    {"ai.onnx.ml", "Scaler", 1, kLatestVersion, 0, kNumeric, &make_kernel<ScalerKernel>},
    {"ai.onnx.ml", "Binarizer", 1, kLatestVersion, 0, kNumeric, &make_kernel<BinarizerKernel>},
    {"ai.onnx.ml", "Imputer", 1, kLatestVersion, 0, kNumeric, &make_kernel<ImputerKernel>},
    {"ai.onnx.ml", "OneHotEncoder", 1, kLatestVersion, 0, kNumeric | kString, &make_kernel<OneHotEncoderKernel>},
    {"ai.onnx.ml", "ArrayFeatureExtractor", 1, kLatestVersion, 0, kNumeric | kString,
     &make_kernel<ArrayFeatureExtractorKernel>},
    {"ai.onnx.ml", "FeatureVectorizer", 1, kLatestVersion, 0, kNumeric, &make_kernel<FeatureVectorizerKernel>},
    {"ai.onnx.ml", "CategoryMapper", 1, kLatestVersion, 0, type_bit(DataType::kInt64) | kString,
     &make_kernel<CategoryMapperKernel>},
};

}  // namespace

std::span<const KernelDef> ml_preprocess_kernels() { return kPreprocessKernels; }

}  // namespace sy::cpu
