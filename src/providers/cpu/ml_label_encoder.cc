// LabelEncoder (ai.onnx.ml 1, 2 and 4): a lookup from keys to values.
//
// Every version becomes one table at creation: keys (strings, integers
// widened to int64, or floats widened to double) to a position in a values
// tensor of the output type, plus a one-element default tensor. v1's
// classes_strings is the table string -> its index, or index -> string. A
// repeated key keeps its last value, and a NaN key matches every NaN input
// (the spec's v4 rules, applied to every version).
#include <cmath>
#include <string>
#include <unordered_map>
#include <vector>

#include "providers/cpu/copy_util.h"
#include "providers/cpu/elementwise_common.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

using IntKeyTypes = TypeList<int64_t, int32_t, int16_t>;
using FloatKeyTypes = TypeList<float, double>;

// The default for values of type `dtype` when no default_tensor is given:
// default_string, default_int64 for every integer type, default_float for
// float and double.
Result<Tensor> default_for(const KernelCreateContext& ctx, DataType dtype) {
  const Node& node = ctx.node();
  SY_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(dtype, Shape{1}));
  const bool known = visit_type(IntKeyTypes{} + FloatKeyTypes{}, dtype, [&]<typename T>(TypeTag<T>) {
    if constexpr (std::is_integral_v<T>) {
      t.data<T>()[0] = static_cast<T>(node.attr_int("default_int64", -1));
    } else {
      t.data<T>()[0] = static_cast<T>(node.attr_float("default_float", -0.0f));
    }
  });
  if (dtype == DataType::kString) {
    t.data<std::string>()[0] = node.attr_string("default_string", "_Unused");
  } else if (!known) {
    return ctx.error("values of type " + std::string(data_type_name(dtype)) + " are not supported");
  }
  return t;
}

// A list attribute as a 1-D tensor (keys_* and values_*), or the tensor of
// its *_tensor twin; an undefined tensor when neither is given.
Result<Tensor> list_attribute(const KernelCreateContext& ctx, const std::string& prefix) {
  const Node& node = ctx.node();
  Tensor out;
  int given = 0;
  if (const Attribute* a = node.attr(prefix + "_strings")) {
    SY_ASSIGN_OR_RETURN(out, Tensor::allocate(DataType::kString, Shape{static_cast<int64_t>(a->strings.size())}));
    for (size_t i = 0; i < a->strings.size(); ++i) out.data<std::string>()[i] = a->strings[i];
    ++given;
  }
  if (const Attribute* a = node.attr(prefix + "_int64s")) {
    SY_ASSIGN_OR_RETURN(out, Tensor::allocate(DataType::kInt64, Shape{static_cast<int64_t>(a->ints.size())}));
    std::copy(a->ints.begin(), a->ints.end(), out.data<int64_t>());
    ++given;
  }
  if (const Attribute* a = node.attr(prefix + "_floats")) {
    SY_ASSIGN_OR_RETURN(out, Tensor::allocate(DataType::kFloat, Shape{static_cast<int64_t>(a->floats.size())}));
    std::copy(a->floats.begin(), a->floats.end(), out.data<float>());
    ++given;
  }
  if (const Attribute* a = node.attr(prefix + "_tensor")) {
    if (!a->t.is_tensor()) return ctx.error("attribute " + prefix + "_tensor must be a tensor");
    SY_ASSIGN_OR_RETURN(out, a->t.clone());
    ++given;
  }
  if (given > 1) return ctx.error("give exactly one of the " + prefix + "_* attributes; " + std::to_string(given) +
                                  " are given");
  return out;
}

class LabelEncoderKernel final : public Kernel {
 public:
  LabelEncoderKernel(const KernelCreateContext& ctx, Status& status) { status = init(ctx); }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    if (x.dtype() != key_type_)
      return kernel_error(ctx, describe_input(ctx, 0, "X") + " must have the keys' type, " +
                                   std::string(data_type_name(key_type_)));
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, values_.dtype(), x.shape()));
    return dispatch_by_element(values_.dtype(), [&]<typename V>() {
      // The key type is switched on once here, not per element.
      if (key_type_ == DataType::kString) {
        const std::string* keys = x.data<std::string>();
        fill<V>(ctx, x.num_elements(), y->data<V>(), [&](int64_t i) { return find(string_keys_, keys[i]); });
      }
      visit_type(IntKeyTypes{}, key_type_, [&]<typename K>(TypeTag<K>) {
        const K* keys = x.data<K>();
        fill<V>(ctx, x.num_elements(), y->data<V>(),
                [&](int64_t i) { return find(int_keys_, static_cast<int64_t>(keys[i])); });
      });
      visit_type(FloatKeyTypes{}, key_type_, [&]<typename K>(TypeTag<K>) {
        const K* keys = x.data<K>();
        fill<V>(ctx, x.num_elements(), y->data<V>(), [&](int64_t i) {
          const double k = static_cast<double>(keys[i]);
          return std::isnan(k) ? nan_position_ : find(float_keys_, k);
        });
      });
      return ok_status();
    });
  }

 private:
  Status init(const KernelCreateContext& ctx) {
    Tensor keys;
    if (ctx.opset() < 2) {
      SY_RETURN_IF_ERROR(init_v1(ctx, keys));
    } else {
      SY_ASSIGN_OR_RETURN(keys, list_attribute(ctx, "keys"));
      SY_ASSIGN_OR_RETURN(values_, list_attribute(ctx, "values"));
      if (!keys.defined() || !values_.defined()) return ctx.error("one keys_* and one values_* attribute are required");
      if (const Attribute* d = ctx.node().attr("default_tensor")) {
        if (!d->t.is_tensor() || d->t.dtype() != values_.dtype() || d->t.num_elements() != 1)
          return ctx.error("attribute default_tensor must hold one value of the values' type " +
                           std::string(data_type_name(values_.dtype())) + ", got " + d->t.describe());
        SY_ASSIGN_OR_RETURN(default_, d->t.clone());
      } else {
        SY_ASSIGN_OR_RETURN(default_, default_for(ctx, values_.dtype()));
      }
    }
    if (keys.num_elements() != values_.num_elements())
      return ctx.error("the keys (" + std::to_string(keys.num_elements()) + ") and values (" +
                       std::to_string(values_.num_elements()) + ") must be as many");
    key_type_ = keys.dtype();
    const DataType x = ctx.input_dtype(0);
    if (x != DataType::kUndefined && x != key_type_)
      return ctx.error("input X is " + std::string(data_type_name(x)) + " but the keys are " +
                       std::string(data_type_name(key_type_)));
    const int64_t n = keys.num_elements();
    if (key_type_ == DataType::kString) {
      for (int64_t i = 0; i < n; ++i) string_keys_[keys.data<std::string>()[i]] = i;
      return ok_status();
    }
    const bool ints = visit_type(IntKeyTypes{}, key_type_, [&]<typename K>(TypeTag<K>) {
      for (int64_t i = 0; i < n; ++i) int_keys_[static_cast<int64_t>(keys.data<K>()[i])] = i;
    });
    const bool floats = visit_type(FloatKeyTypes{}, key_type_, [&]<typename K>(TypeTag<K>) {
      for (int64_t i = 0; i < n; ++i) {
        const double k = static_cast<double>(keys.data<K>()[i]);
        if (std::isnan(k)) nan_position_ = i;
        else float_keys_[k] = i;
      }
    });
    if (!ints && !floats) return ctx.error("keys of type " + std::string(data_type_name(key_type_)) + " are not supported");
    return ok_status();
  }

  // v1: classes_strings maps strings to their index (X string, Y int64),
  // or indices to strings (X int64, Y string).
  Status init_v1(const KernelCreateContext& ctx, Tensor& keys) {
    const Node& node = ctx.node();
    const Attribute* classes = node.attr("classes_strings");
    const int64_t n = classes ? static_cast<int64_t>(classes->strings.size()) : 0;
    SY_ASSIGN_OR_RETURN(Tensor strings, Tensor::allocate(DataType::kString, Shape{n}));
    SY_ASSIGN_OR_RETURN(Tensor indices, Tensor::allocate(DataType::kInt64, Shape{n}));
    for (int64_t i = 0; i < n; ++i) {
      strings.data<std::string>()[i] = classes->strings[static_cast<size_t>(i)];
      indices.data<int64_t>()[i] = i;
    }
    const DataType x = ctx.input_dtype(0);
    if (x != DataType::kString && x != DataType::kInt64)
      return ctx.error("LabelEncoder-1 takes string or int64 input, got " + std::string(data_type_name(x)));
    const bool from_strings = x == DataType::kString;
    keys = from_strings ? strings : indices;
    values_ = from_strings ? indices : strings;
    SY_ASSIGN_OR_RETURN(default_, Tensor::allocate(values_.dtype(), Shape{1}));
    if (from_strings) default_.data<int64_t>()[0] = node.attr_int("default_int64", -1);
    else default_.data<std::string>()[0] = node.attr_string("default_string", "_Unused");
    return ok_status();
  }

  template <typename Map, typename Key>
  static int64_t find(const Map& map, const Key& key) {
    const auto it = map.find(key);
    return it == map.end() ? -1 : it->second;
  }

  // out[i] = the value at position_of(i), or the default where that is -1.
  template <typename V, typename PositionOf>
  void fill(const KernelContext& ctx, int64_t n, V* out, PositionOf&& position_of) const {
    const V* values = values_.data<V>();
    const V& fallback = default_.data<V>()[0];
    ctx.thread_pool().parallel_for(n, 4096, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const int64_t at = position_of(i);
        out[i] = at >= 0 ? values[at] : fallback;
      }
    });
  }

  DataType key_type_ = DataType::kUndefined;
  std::unordered_map<std::string, int64_t> string_keys_;
  std::unordered_map<int64_t, int64_t> int_keys_;
  std::unordered_map<double, int64_t> float_keys_;
  int64_t nan_position_ = -1;
  Tensor values_;
  Tensor default_;
};

constexpr uint64_t kKeyTypes = type_mask(IntKeyTypes{} + FloatKeyTypes{}) | type_bit(DataType::kString);

const KernelDef kLabelEncoderKernels[] = {
    {"ai.onnx.ml", "LabelEncoder", 1, kLatestVersion, 0, kKeyTypes, &make_kernel<LabelEncoderKernel>},
};

}  // namespace

std::span<const KernelDef> ml_label_encoder_kernels() { return kLabelEncoderKernels; }

}  // namespace sy::cpu
