#include "providers/cpu/ml_common.h"

namespace sy::cpu::ml {

Status read_post_transform(const KernelCreateContext& ctx, PostTransform& out) {
  const std::string name = ctx.node().attr_string("post_transform", "NONE");
  static constexpr std::pair<std::string_view, PostTransform> kNames[] = {
      {"NONE", PostTransform::kNone},
      {"SOFTMAX", PostTransform::kSoftmax},
      {"LOGISTIC", PostTransform::kLogistic},
      {"SOFTMAX_ZERO", PostTransform::kSoftmaxZero},
      {"PROBIT", PostTransform::kProbit},
  };
  for (const auto& [word, value] : kNames) {
    if (name != word) continue;
    out = value;
    return ok_status();
  }
  return ctx.error("attribute post_transform must be NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO or PROBIT, got '" + name +
                   "'");
}

bool tensor_as_doubles(const Tensor& t, std::vector<double>& out) {
  out.resize(static_cast<size_t>(t.num_elements()));
  return visit_type(FloatTypes{} + IntTypes{}, t.dtype(), [&]<typename T>(TypeTag<T>) {
    const T* d = t.data<T>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<double>(load(d[i]));
  });
}

Status read_floats_or_tensor(const KernelCreateContext& ctx, const std::string& name, const std::string& tensor_name,
                             std::vector<double>& out) {
  const Node& node = ctx.node();
  const Attribute* tensor = node.attr(tensor_name);
  const Attribute* floats = node.attr(name);
  if (tensor != nullptr && floats != nullptr)
    return ctx.error("attributes " + name + " and " + tensor_name + " are both given; give one");
  if (tensor != nullptr) {
    if (!tensor->t.is_tensor() || !tensor_as_doubles(tensor->t, out))
      return ctx.error("attribute " + tensor_name + " must be a numeric tensor, got " + tensor->t.describe());
    return ok_status();
  }
  out.clear();
  if (floats != nullptr) out.assign(floats->floats.begin(), floats->floats.end());
  return ok_status();
}

Status matrix_dims(const KernelContext& ctx, const Tensor& x, int64_t& rows, int64_t& cols) {
  const Shape& s = x.shape();
  if (s.rank() == 1) {
    rows = 1;
    cols = s[0];
    return ok_status();
  }
  if (s.rank() == 2) {
    rows = s[0];
    cols = s[1];
    return ok_status();
  }
  return kernel_error(ctx, describe_input(ctx, 0, "X") + " must have rank 1 or 2 ([N, C] or [C])");
}

Status feature_rows(const KernelContext& ctx, const Tensor& x, int64_t features, int64_t& rows) {
  int64_t cols = 0;
  SY_RETURN_IF_ERROR(matrix_dims(ctx, x, rows, cols));
  if (cols != features)
    return kernel_error(ctx, describe_input(ctx, 0, "X") + " has " + std::to_string(cols) +
                                 " features; the model has " + std::to_string(features));
  return ok_status();
}

Status ClassLabels::read(const KernelCreateContext& ctx, const std::string& ints_name, bool required) {
  const Node& node = ctx.node();
  ints = node.attr_ints(ints_name);
  if (const Attribute* s = node.attr("classlabels_strings")) strings = s->strings;
  if (!ints.empty() && !strings.empty())
    return ctx.error("give one of " + ints_name + " and classlabels_strings, not both");
  if (required && ints.empty() && strings.empty())
    return ctx.error("one of " + ints_name + " and classlabels_strings is required, non-empty");
  return ok_status();
}

}  // namespace sy::cpu::ml
