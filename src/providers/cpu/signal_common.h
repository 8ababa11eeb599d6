// Helpers the signal kernels share (dft.cc, stft.cc, window.cc,
// mel_weight_matrix.cc): the FFT's compute type, their scalar integer
// inputs, and the output_datatype attribute and output conversion of the
// window and mel-matrix generators.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "providers/cpu/elementwise_common.h"
#include "providers/cpu/fft.h"
#include "providers/kernel.h"

namespace sy::cpu {

// The type the DFT and STFT kernels compute a T signal in: double for
// float and double (dft.cc says why), float for float16 and bfloat16.
template <typename T>
using FftComputeType = std::conditional_t<kIsHalf<T>, float, double>;

// The FFT plan state for a signal of type `dtype` and length n (none for
// a type the kernels do not take).
inline Result<std::unique_ptr<KernelState>> make_fft_state(DataType dtype, int64_t n) {
  Result<std::unique_ptr<KernelState>> state = std::unique_ptr<KernelState>();
  visit_type(FloatTypes{}, dtype, [&]<typename T>(TypeTag<T>) { state = make_fft_state<FftComputeType<T>>(n); });
  return state;
}

// Input i as an integer: an int32 or int64 tensor of one element (a scalar,
// or shape [1], which ONNX Runtime accepts too).
inline Status scalar_int_input(const KernelContext& ctx, size_t i, const std::string& name, int64_t& out) {
  const Tensor* t = ctx.input(i);
  if (t == nullptr) return kernel_error(ctx, "input " + std::to_string(i) + " (" + name + ") is missing");
  const bool int_type = t->dtype() == DataType::kInt32 || t->dtype() == DataType::kInt64;
  if (!int_type || t->num_elements() != 1 || t->shape().rank() > 1)
    return kernel_error(ctx, describe_input(ctx, i, name) + " must be an int32 or int64 scalar");
  out = t->dtype() == DataType::kInt32 ? t->data<int32_t>()[0] : t->data<int64_t>()[0];
  return ok_status();
}

// The output_datatype attribute (default float): any numeric type.
inline Status read_output_datatype(const KernelCreateContext& ctx, DataType& out) {
  const int64_t value = ctx.node().attr_int("output_datatype", static_cast<int64_t>(DataType::kFloat));
  const bool numeric = value >= 0 && value <= kMaxDataTypeValue &&
                       (type_mask(NumericTypes{}) & type_bit(static_cast<DataType>(value))) != 0;
  if (!numeric)
    return ctx.error("output_datatype " + std::to_string(value) +
                     " is not a numeric type (float, double, float16, bfloat16 or an integer type)");
  out = static_cast<DataType>(value);
  return ok_status();
}

// Element i of `out` (any numeric type, n elements) set to the double
// value_at(i), converted the way numpy's astype converts float64: rounded
// to the float types, truncated toward zero for the integer ones.
template <typename F>
void store_values(Tensor& out, int64_t n, F&& value_at) {
  visit_type(NumericTypes{}, out.dtype(), [&]<typename T>(TypeTag<T>) {
    T* dst = out.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      const double v = value_at(i);
      if constexpr (std::is_integral_v<T>) dst[i] = float_to_int<T>(v);
      else dst[i] = store<T>(static_cast<compute_t<T>>(v));
    }
  });
}

}  // namespace sy::cpu
