// Schemas of the signal ops: DFT, STFT, HannWindow, HammingWindow,
// BlackmanWindow and MelWeightMatrix. Output shapes are static when the
// lengths they depend on are constants; a length that only comes with an
// input's value leaves its dim unknown.
#include <string>

#include "schema/schema.h"

namespace sy {
namespace {

// Input i's value when it is a constant integer of one element.
bool constant_int(const InferenceContext& ctx, size_t i, int64_t& out) {
  std::vector<int64_t> values;
  if (!constant_as_int64s(ctx.input_constant(i), values) || values.size() != 1) return false;
  out = values[0];
  return true;
}

Status check_flag(const InferenceContext& ctx, const char* name, int64_t default_value, bool& out) {
  const int64_t v = ctx.node().attr_int(name, default_value);
  if (v != 0 && v != 1) return ctx.error(std::string(name) + " must be 0 or 1, got " + std::to_string(v));
  out = v == 1;
  return ok_status();
}

Status infer_dft(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* x, required_input(ctx, 0));
  bool inverse = false;
  bool onesided = false;
  SY_RETURN_IF_ERROR(check_flag(ctx, "inverse", 0, inverse));
  SY_RETURN_IF_ERROR(check_flag(ctx, "onesided", 0, onesided));
  const bool irfft = inverse && onesided;
  ValueType out = ValueType::tensor(x->dtype);
  if (x->has_shape) {
    const auto rank = static_cast<int64_t>(x->rank());
    const Dim& last = x->dims.back();
    if (rank < 2 || (last.is_known() && last.value != 1 && last.value != 2))
      return ctx.error("input must be [..., signal, ..., 1] (real) or [..., 2] (complex), got rank " +
                       std::to_string(rank) + (rank > 0 ? " ending in " + last.to_string() : ""));
    out.has_shape = true;
    out.dims.assign(x->dims.size(), Dim::unknown());
    out.dims.back() = Dim::known(irfft ? 1 : 2);
    int64_t axis = ctx.node().attr_int("axis", 1);
    bool axis_known = true;
    if (ctx.opset() >= 20) axis = -2;
    if (ctx.opset() >= 20 && ctx.has_input(2)) axis_known = constant_int(ctx, 2, axis);
    if (axis_known) {
      if (axis < -rank || axis > rank - 2 || axis == -1)
        return ctx.error("axis " + std::to_string(axis) + " is out of range for input of rank " +
                         std::to_string(rank) + " (accepted: [-rank, -2] and [0, rank - 2])");
      if (axis < 0) axis += rank;
      out.dims = x->dims;
      out.dims.back() = Dim::known(irfft ? 1 : 2);
      const Dim& len = x->dims[static_cast<size_t>(axis)];
      int64_t n = -1;
      if (ctx.has_input(1)) {
        if (constant_int(ctx, 1, n) && n < 1)
          return ctx.error("dft_length must be positive, got " + std::to_string(n));
      } else if (len.is_known()) {
        n = irfft ? 2 * (len.value - 1) : len.value;
      }
      Dim& out_len = out.dims[static_cast<size_t>(axis)];
      out_len = Dim::unknown();
      if (n >= 1) out_len = Dim::known(onesided && !inverse ? n / 2 + 1 : n);
    }
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

Status infer_stft(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* signal, required_input(ctx, 0));
  bool onesided = true;
  SY_RETURN_IF_ERROR(check_flag(ctx, "onesided", 1, onesided));
  if (signal->has_shape && (signal->rank() != 3 || (signal->dims[2].is_known() && signal->dims[2].value != 1 &&
                                                     signal->dims[2].value != 2)))
    return ctx.error("signal must be [batch, length, 1] (real) or [batch, length, 2] (complex), got shape " +
                     signal->shape_string());
  const ValueType* window = ctx.input_type(2);
  if (window != nullptr && window->has_shape && window->rank() != 1)
    return ctx.error("window must be 1-D, got shape " + window->shape_string());
  int64_t step = -1;
  if (constant_int(ctx, 1, step) && step < 1)
    return ctx.error("frame_step must be positive, got " + std::to_string(step));
  // frame_length: the input, else the window's length, else the signal's.
  int64_t frame_length = -1;
  if (ctx.has_input(3)) {
    constant_int(ctx, 3, frame_length);
  } else if (window != nullptr) {
    if (window->has_shape && window->dims[0].is_known()) frame_length = window->dims[0].value;
  } else if (signal->has_shape && signal->dims[1].is_known()) {
    frame_length = signal->dims[1].value;
  }
  ValueType out = ValueType::tensor(signal->dtype, {Dim::unknown(), Dim::unknown(), Dim::unknown(), Dim::known(2)});
  if (signal->has_shape) out.dims[0] = signal->dims[0];
  if (frame_length >= 1) out.dims[2] = Dim::known(onesided ? frame_length / 2 + 1 : frame_length);
  if (signal->has_shape && signal->dims[1].is_known() && frame_length >= 1 && step >= 1 &&
      frame_length <= signal->dims[1].value)
    out.dims[1] = Dim::known(1 + (signal->dims[1].value - frame_length) / step);
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

// The output_datatype attribute of the generators: any numeric type.
Status output_datatype(const InferenceContext& ctx, DataType& out) {
  constexpr uint64_t kNumeric =
      type_bit(DataType::kUint8) | type_bit(DataType::kUint16) | type_bit(DataType::kUint32) |
      type_bit(DataType::kUint64) | type_bit(DataType::kInt8) | type_bit(DataType::kInt16) |
      type_bit(DataType::kInt32) | type_bit(DataType::kInt64) | type_bit(DataType::kFloat16) |
      type_bit(DataType::kFloat) | type_bit(DataType::kDouble) | type_bit(DataType::kBfloat16);
  const int64_t v = ctx.node().attr_int("output_datatype", static_cast<int64_t>(DataType::kFloat));
  if (v < 0 || v > kMaxDataTypeValue || (kNumeric & type_bit(static_cast<DataType>(v))) == 0)
    return ctx.error("output_datatype " + std::to_string(v) + " is not a numeric type");
  out = static_cast<DataType>(v);
  return ok_status();
}

Status infer_window(InferenceContext& ctx) {
  bool periodic = true;
  SY_RETURN_IF_ERROR(check_flag(ctx, "periodic", 1, periodic));
  DataType dtype = DataType::kFloat;
  SY_RETURN_IF_ERROR(output_datatype(ctx, dtype));
  int64_t size = -1;
  if (constant_int(ctx, 0, size) && size < 0)
    return ctx.error("size must not be negative, got " + std::to_string(size));
  ctx.output_type(0) = ValueType::tensor(dtype, {size >= 0 ? Dim::known(size) : Dim::unknown()});
  return ok_status();
}

Status infer_mel_weight_matrix(InferenceContext& ctx) {
  DataType dtype = DataType::kFloat;
  SY_RETURN_IF_ERROR(output_datatype(ctx, dtype));
  ValueType out = ValueType::tensor(dtype, {Dim::unknown(), Dim::unknown()});
  int64_t mel_bins = -1;
  int64_t dft_length = -1;
  if (constant_int(ctx, 0, mel_bins) && mel_bins >= 0) out.dims[1] = Dim::known(mel_bins);
  if (constant_int(ctx, 1, dft_length) && dft_length >= 1) out.dims[0] = Dim::known(dft_length / 2 + 1);
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

constexpr OpSchema kSignalSchemas[] = {
    {"", "DFT", 17, 1, 2, 1, 1, &infer_dft},
    {"", "DFT", 20, 1, 3, 1, 1, &infer_dft},
    {"", "STFT", 17, 2, 4, 1, 1, &infer_stft},
    {"", "HannWindow", 17, 1, 1, 1, 1, &infer_window},
    {"", "HammingWindow", 17, 1, 1, 1, 1, &infer_window},
    {"", "BlackmanWindow", 17, 1, 1, 1, 1, &infer_window},
    {"", "MelWeightMatrix", 17, 5, 5, 1, 1, &infer_mel_weight_matrix},
};

}  // namespace

std::span<const OpSchema> signal_schemas() { return kSignalSchemas; }

}  // namespace sy
