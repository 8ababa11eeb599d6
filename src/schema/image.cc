// Schemas of Resize, Upsample, Einsum and Det.
//
// Resize's output shape follows from constant scales or sizes; the rules
// (floor(dim * scale); sizes with a keep_aspect_ratio_policy rounded half
// up) are the ones the kernel applies at run time, so a static shape here
// always matches what the kernel allocates.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "schema/schema.h"

namespace sy {
namespace {

bool one_of(const std::string& v, std::initializer_list<const char*> allowed) {
  return std::any_of(allowed.begin(), allowed.end(), [&](const char* a) { return v == a; });
}

std::string allowed_string(std::initializer_list<const char*> allowed) {
  std::string s;
  for (const char* a : allowed) s += (s.empty() ? "" : ", ") + std::string("'") + a + "'";
  return s;
}

Status check_string_attr(const InferenceContext& ctx, const char* name, const std::string& default_value,
                         std::initializer_list<const char*> allowed) {
  const std::string v = ctx.node().attr_string(name, default_value);
  if (one_of(v, allowed)) return ok_status();
  return ctx.error(std::string(name) + " '" + v + "' is not supported at opset " + std::to_string(ctx.opset()) +
                   " (expected one of " + allowed_string(allowed) + ")");
}

// A constant float tensor's values (float or double); false when absent
// or not constant.
bool constant_as_doubles(const Tensor* t, std::vector<double>& out) {
  if (t == nullptr) return false;
  const auto n = static_cast<size_t>(t->num_elements());
  out.resize(n);
  if (t->dtype() == DataType::kFloat) {
    for (size_t i = 0; i < n; ++i) out[i] = t->data<float>()[i];
    return true;
  }
  if (t->dtype() == DataType::kDouble) {
    for (size_t i = 0; i < n; ++i) out[i] = t->data<double>()[i];
    return true;
  }
  return false;
}

// ---- Resize / Upsample ------------------------------------------------------------

Status check_resize_attributes(const InferenceContext& ctx, bool is_upsample) {
  const int v = ctx.opset();
  if (is_upsample || v < 11) {
    const std::string mode = ctx.node().attr_string("mode", "nearest");
    if (!one_of(mode, {"nearest", "linear", "bilinear"}))
      return ctx.error("mode '" + mode + "' is not supported (expected 'nearest' or 'linear')");
    return ok_status();
  }
  SY_RETURN_IF_ERROR(check_string_attr(ctx, "mode", "nearest", {"nearest", "linear", "cubic"}));
  if (v < 13) {
    SY_RETURN_IF_ERROR(check_string_attr(ctx, "coordinate_transformation_mode", "half_pixel",
                                         {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                          "tf_half_pixel_for_nn", "tf_crop_and_resize"}));
  } else if (v < 19) {
    SY_RETURN_IF_ERROR(check_string_attr(
        ctx, "coordinate_transformation_mode", "half_pixel",
        {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_crop_and_resize"}));
  } else {
    SY_RETURN_IF_ERROR(check_string_attr(ctx, "coordinate_transformation_mode", "half_pixel",
                                         {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                          "asymmetric", "tf_crop_and_resize"}));
  }
  SY_RETURN_IF_ERROR(
      check_string_attr(ctx, "nearest_mode", "round_prefer_floor", {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}));
  if (v >= 18)
    SY_RETURN_IF_ERROR(
        check_string_attr(ctx, "keep_aspect_ratio_policy", "stretch", {"stretch", "not_larger", "not_smaller"}));
  return ok_status();
}

// An output length computed in double, checked before the conversion to
// int64, which is undefined for NaN, infinity or anything out of range.
Result<Dim> resized_dim(const InferenceContext& ctx, int64_t axis, double length) {
  if (length >= 0.0 && length < 9.2e18) return Dim::known(static_cast<int64_t>(length));
  return ctx.error("axis " + std::to_string(axis) + " of X would have " + std::to_string(length) +
                   " output elements, which is not a valid dimension");
}

Status infer_resize_common(InferenceContext& ctx, bool is_upsample) {
  const ValueType* in = ctx.input_type(0);
  if (in == nullptr) return ctx.error("input 0 (X) is required");
  SY_RETURN_IF_ERROR(check_resize_attributes(ctx, is_upsample));
  ValueType out = ValueType::tensor(in->dtype);
  const int v = ctx.opset();
  // Which input holds scales and sizes at this version (-1: none).
  int scales_input = -1;
  int sizes_input = -1;
  std::vector<double> scales;
  bool scales_known = false;
  if (is_upsample && v < 9) {
    const Attribute* a = ctx.node().attr("scales");
    if (a == nullptr) return ctx.error("attribute 'scales' is required");
    for (float f : a->floats) scales.push_back(f);
    scales_known = true;
  } else if (is_upsample || v < 11) {
    scales_input = 1;
  } else {
    scales_input = 2;
    sizes_input = 3;
  }
  if (scales_input >= 0 && ctx.has_input(static_cast<size_t>(scales_input)))
    scales_known = constant_as_doubles(ctx.input_constant(static_cast<size_t>(scales_input)), scales);
  std::vector<int64_t> sizes;
  bool sizes_known = false;
  const bool has_sizes = sizes_input >= 0 && ctx.has_input(static_cast<size_t>(sizes_input));
  if (has_sizes) sizes_known = constant_as_int64s(ctx.input_constant(static_cast<size_t>(sizes_input)), sizes);
  const bool has_scales = scales_input < 0 || ctx.has_input(static_cast<size_t>(scales_input));
  if (!has_scales && !has_sizes) return ctx.error("one of 'scales' and 'sizes' must be given");
  if (scales_known && sizes_known && !scales.empty() && !sizes.empty())
    return ctx.error("only one of 'scales' and 'sizes' may be given; got scales " + std::to_string(scales.size()) +
                     " values and sizes " + ints_string(sizes));
  // Opset 11 passes an empty scales tensor when sizes are meant.
  const bool use_sizes = has_sizes && (!has_scales || (scales_known && scales.empty()));
  if (!in->has_shape) {
    ctx.output_type(0) = std::move(out);
    return ok_status();
  }
  const auto rank = static_cast<int64_t>(in->rank());
  std::vector<int64_t> axes = v >= 18 ? ctx.node().attr_ints("axes") : std::vector<int64_t>{};
  if (axes.empty()) {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  } else {
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    for (int64_t& a : axes) {
      if (a < -rank || a >= rank)
        return ctx.error("axes " + ints_string(ctx.node().attr_ints("axes")) + " are out of range for rank " +
                         std::to_string(rank));
      if (a < 0) a += rank;
      if (seen[static_cast<size_t>(a)]) return ctx.error("axes " + ints_string(ctx.node().attr_ints("axes")) + " repeat an axis");
      seen[static_cast<size_t>(a)] = true;
    }
  }
  out.has_shape = true;
  out.dims = in->dims;
  const bool known = use_sizes ? sizes_known : scales_known;
  if (!known) {
    for (int64_t a : axes) out.dims[static_cast<size_t>(a)] = Dim::unknown();
    ctx.output_type(0) = std::move(out);
    return ok_status();
  }
  const size_t count = use_sizes ? sizes.size() : scales.size();
  if (count != axes.size())
    return ctx.error(std::string(use_sizes ? "sizes" : "scales") + " has " + std::to_string(count) +
                     " values, expected " + std::to_string(axes.size()) + " (the rank of X " + in->shape_string() +
                     " or the number of axes)");
  if (!use_sizes) {
    for (size_t i = 0; i < axes.size(); ++i) {
      if (!(scales[i] > 0))
        return ctx.error("scales must be positive; got " + std::to_string(scales[i]) + " at position " +
                         std::to_string(i));
      const Dim& d = in->dims[static_cast<size_t>(axes[i])];
      Dim& o = out.dims[static_cast<size_t>(axes[i])];
      if (d.is_known()) {
        SY_ASSIGN_OR_RETURN(o, resized_dim(ctx, axes[i], std::floor(static_cast<double>(d.value) * scales[i])));
      } else if (scales[i] != 1.0) {
        o = Dim::unknown();
      }
    }
    ctx.output_type(0) = std::move(out);
    return ok_status();
  }
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] < 0) return ctx.error("sizes " + ints_string(sizes) + " has a negative value");
  const std::string policy = v >= 18 ? ctx.node().attr_string("keep_aspect_ratio_policy", "stretch") : "stretch";
  if (policy == "stretch") {
    for (size_t i = 0; i < axes.size(); ++i) out.dims[static_cast<size_t>(axes[i])] = Dim::known(sizes[i]);
    ctx.output_type(0) = std::move(out);
    return ok_status();
  }
  double scale = policy == "not_larger" ? 1e300 : -1e300;
  for (size_t i = 0; i < axes.size(); ++i) {
    const Dim& d = in->dims[static_cast<size_t>(axes[i])];
    if (!d.is_known()) {
      for (int64_t a : axes) out.dims[static_cast<size_t>(a)] = Dim::unknown();
      ctx.output_type(0) = std::move(out);
      return ok_status();
    }
    const double s = static_cast<double>(sizes[i]) / static_cast<double>(d.value);
    scale = policy == "not_larger" ? std::min(scale, s) : std::max(scale, s);
  }
  for (int64_t a : axes) {
    const double d = static_cast<double>(in->dims[static_cast<size_t>(a)].value);
    SY_ASSIGN_OR_RETURN(out.dims[static_cast<size_t>(a)], resized_dim(ctx, a, scale * d + 0.5));
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

Status infer_resize(InferenceContext& ctx) { return infer_resize_common(ctx, false); }
Status infer_upsample(InferenceContext& ctx) { return infer_resize_common(ctx, true); }

Status infer_upsample_deprecated(InferenceContext& ctx) {
  return ctx.error("Upsample is deprecated from opset 10 on (the model imports opset " +
                   std::to_string(ctx.node().since_version) + " or later); use Resize instead");
}

// ---- Einsum -------------------------------------------------------------------------

// One term of an equation: its letters, and where "..." sits (-1: none).
struct EinsumTerm {
  std::string letters;
  int ellipsis_at = -1;
};

bool is_label(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

Status parse_term(const InferenceContext& ctx, const std::string& text, EinsumTerm& term) {
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (term.ellipsis_at >= 0 || text.compare(i, 3, "...") != 0)
        return ctx.error("equation term '" + text + "' has a misplaced '.' (only one '...' per term is allowed)");
      term.ellipsis_at = static_cast<int>(term.letters.size());
      i += 2;
      continue;
    }
    if (!is_label(c)) return ctx.error("equation term '" + text + "' has an invalid character '" + std::string(1, c) + "'");
    term.letters.push_back(c);
  }
  return ok_status();
}

// Labels shared by several inputs broadcast like numpy's einsum: equal, or 1.
Status merge_label_dim(const InferenceContext& ctx, char label, const Dim& d, bool seen, Dim& merged) {
  if (!seen) {
    merged = d;
  } else if (merged.is_known() && d.is_known()) {
    if (merged.value == 1) {
      merged = d;
    } else if (d.value != 1 && d.value != merged.value) {
      return ctx.error("label '" + std::string(1, label) + "' has dimension " + merged.to_string() +
                       " in one place and " + d.to_string() + " in another");
    }
  } else if (!merged.is_known() && d.is_known() && d.value != 1) {
    merged = d;
  }
  return ok_status();
}

Status infer_einsum(InferenceContext& ctx) {
  const Attribute* eq = ctx.node().attr("equation");
  if (eq == nullptr) return ctx.error("attribute 'equation' is required");
  const std::string& equation = eq->s;
  const size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  std::vector<EinsumTerm> terms;
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    EinsumTerm t;
    SY_RETURN_IF_ERROR(parse_term(ctx, lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start), t));
    terms.push_back(std::move(t));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != ctx.num_inputs())
    return ctx.error("equation '" + equation + "' has " + std::to_string(terms.size()) + " input terms but the node has " +
                     std::to_string(ctx.num_inputs()) + " inputs");
  const ValueType* first = ctx.input_type(0);
  if (first == nullptr) return ctx.error("input 0 is required");
  ValueType out = ValueType::tensor(first->dtype);
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const ValueType* t = ctx.input_type(i);
    if (t == nullptr) return ctx.error("input " + std::to_string(i) + " is required");
    if (t->dtype != DataType::kUndefined && first->dtype != DataType::kUndefined && t->dtype != first->dtype)
      return ctx.error("input " + std::to_string(i) + " has type " + t->type_string() + " but input 0 has " +
                       first->type_string() + "; all inputs must share one type");
  }
  EinsumTerm output;
  if (arrow != std::string::npos) {
    SY_RETURN_IF_ERROR(parse_term(ctx, equation.substr(arrow + 2), output));
    for (size_t i = 0; i < output.letters.size(); ++i) {
      const char c = output.letters[i];
      if (output.letters.find(c, i + 1) != std::string::npos)
        return ctx.error("equation '" + equation + "' repeats '" + std::string(1, c) + "' in its output");
      bool found = false;
      for (const EinsumTerm& t : terms) found = found || t.letters.find(c) != std::string::npos;
      if (!found)
        return ctx.error("equation '" + equation + "' has output label '" + std::string(1, c) +
                         "' that no input term has");
    }
  }
  // Dims per label, and the broadcast ellipsis dims (right-aligned).
  Dim label_dims[128];
  bool label_seen[128] = {};
  std::vector<Dim> ellipsis;
  bool shapes_known = true;
  bool any_ellipsis = false;
  for (size_t i = 0; i < terms.size(); ++i) {
    const EinsumTerm& term = terms[i];
    any_ellipsis = any_ellipsis || term.ellipsis_at >= 0;
    const ValueType* t = ctx.input_type(i);
    if (!t->has_shape) {
      shapes_known = false;
      continue;
    }
    const auto rank = static_cast<int64_t>(t->rank());
    const auto letters = static_cast<int64_t>(term.letters.size());
    if (term.ellipsis_at < 0 ? rank != letters : rank < letters)
      return ctx.error("input " + std::to_string(i) + " " + t->shape_string() + " does not match term '" +
                       term.letters + "' of equation '" + equation + "' (expected rank " +
                       (term.ellipsis_at < 0 ? "" : ">= ") + std::to_string(letters) + ")");
    const int64_t e = term.ellipsis_at < 0 ? 0 : rank - letters;
    for (int64_t k = 0; k < letters; ++k) {
      const int64_t axis = term.ellipsis_at >= 0 && k >= term.ellipsis_at ? k + e : k;
      const auto c = static_cast<unsigned char>(term.letters[static_cast<size_t>(k)]);
      const Dim& d = t->dims[static_cast<size_t>(axis)];
      SY_RETURN_IF_ERROR(merge_label_dim(ctx, static_cast<char>(c), d, label_seen[c], label_dims[c]));
      label_seen[c] = true;
    }
    if (e > 0) {
      std::vector<Dim> mine(t->dims.begin() + term.ellipsis_at, t->dims.begin() + term.ellipsis_at + e);
      ValueType a = ValueType::tensor(DataType::kFloat, ellipsis);
      ValueType b = ValueType::tensor(DataType::kFloat, mine);
      const ValueType* both[] = {&a, &b};
      SY_ASSIGN_OR_RETURN(ValueType joined, broadcast_types(ctx, both));
      ellipsis = joined.dims;
    }
  }
  if (arrow == std::string::npos) {
    // Implicit output: the ellipsis dims, then labels seen once, sorted.
    int counts[128] = {};
    for (const EinsumTerm& t : terms)
      for (char c : t.letters) ++counts[static_cast<unsigned char>(c)];
    if (any_ellipsis) output.ellipsis_at = 0;
    for (int c = 0; c < 128; ++c)
      if (counts[c] == 1) output.letters.push_back(static_cast<char>(c));
  }
  if (!shapes_known) {
    ctx.output_type(0) = std::move(out);
    return ok_status();
  }
  out.has_shape = true;
  for (size_t k = 0; k < output.letters.size(); ++k) {
    if (static_cast<int>(k) == output.ellipsis_at) out.dims.insert(out.dims.end(), ellipsis.begin(), ellipsis.end());
    out.dims.push_back(label_dims[static_cast<unsigned char>(output.letters[k])]);
  }
  if (output.ellipsis_at >= static_cast<int>(output.letters.size()))
    out.dims.insert(out.dims.end(), ellipsis.begin(), ellipsis.end());
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

// ---- Det --------------------------------------------------------------------------------

Status infer_det(InferenceContext& ctx) {
  const ValueType* in = ctx.input_type(0);
  if (in == nullptr) return ctx.error("input 0 (X) is required");
  ValueType out = ValueType::tensor(in->dtype);
  if (in->has_shape) {
    if (in->rank() < 2) return ctx.error("X must have rank >= 2 ([*, M, M]); got " + in->shape_string());
    const Dim& m = in->dims[in->rank() - 2];
    const Dim& n = in->dims[in->rank() - 1];
    if (m.is_known() && n.is_known() && m.value != n.value)
      return ctx.error("X must hold square matrices ([*, M, M]); got " + in->shape_string());
    out.has_shape = true;
    out.dims.assign(in->dims.begin(), in->dims.end() - 2);
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

const OpSchema kImageSchemas[] = {
    {"", "Upsample", 7, 1, 1, 1, 1, &infer_upsample},
    {"", "Upsample", 9, 2, 2, 1, 1, &infer_upsample},
    {"", "Upsample", 10, 2, 2, 1, 1, &infer_upsample_deprecated},
    {"", "Resize", 10, 2, 2, 1, 1, &infer_resize},
    {"", "Resize", 11, 3, 4, 1, 1, &infer_resize},
    {"", "Resize", 13, 1, 4, 1, 1, &infer_resize},
    {"", "Einsum", 12, 1, -1, 1, 1, &infer_einsum},
    {"", "Det", 11, 1, 1, 1, 1, &infer_det},
};

}  // namespace

std::span<const OpSchema> image_schemas() { return kImageSchemas; }

}  // namespace sy
